"""What PlugMem's model path costs: calls, prompt and completion tokens per session, turn, query.

    python benchmarks/memory_llm_cost.py [--data ../shared/data/locomo] [--conversations 26 30]
        [--sessions 3] [--queries 10] [--price-in 0.15 2.5] [--price-out 0.6 10]
        [--batch-episodes 8] [--json]

No model is reachable: the memory's real LLM path (``Memory(model=LiteLLMModel(...))``, through
litellm and HTTP) talks to the scripted OpenAI-compatible server of ``tests/scripted_server.py``,
started in-process, and every request it records is counted. The server's replies are written
here, valid for each call's schema and made of the conversation's own words: an extraction
reply holds the facts the offline extractor draws from the numbered episodes in the prompt
(third-person sentences of the session, each citing its episode), a relation verdict says
"compatible", an answer quotes the first retrieved item. Prompt figures are what the memory
really sends; completion figures depend on these scripted replies and are an estimate.

Where memory calls a model: ``ModelExtractor.extract`` (one call per session segment of at
most 80 episodes, at each ``consolidate``), the write planner's ambiguous pairs (``memory.write_plan``, judged by ``Memory._judge``: one ``relate`` call per new
fact that sits at cosine >= 0.92 of a stored fact, shares an entity and no rule decides) and
``Memory.reason`` (one call per question). ``structured`` feeds a reply that fails validation
back once (``retries=1``): a retry is one more call that resends the whole conversation.

Measured, each in a fresh memory per conversation (bundled MiniLM embedder, as a user gets):

- *per session*: the session's turns added, then one ``consolidate`` (a batch import);
- *per turn*: one exchange (a message and its reply) added, then ``consolidate``, turn after
  turn: what an agent pays when each turn's retrieval (``fresh=True``) structures the last one;
  and the same with ``Memory(batch_episodes=N)`` (``--batch-episodes``, default 8), where a
  session's pending turns wait for a fuller call (the last ones flushed at the session's end);
- *per query*: ``reason`` on LoCoMo questions whose evidence lies in the ingested sessions;
- *retry*: one session whose first extraction reply fails validation (a fact citing no
  episode), then the valid reply.

Tokens are counted with ``litellm.token_counter`` (tiktoken's ``cl100k_base``, bundled with
litellm, so offline; with the per-message overhead of OpenAI's chat format). A hosted model
with JSON-schema output would also be sent the schema as ``response_format``; a local model
(``json_mode="auto"`` with a name litellm does not know) gets it only in the system prompt, as
here. Costs use example prices per 1M tokens (``--price-in``/``--price-out``), not quotes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from lemmata.embeddings import Embedder  # noqa: E402
from lemmata.llm.litellm_model import LiteLLMModel, import_litellm  # noqa: E402
from lemmata.memory import Episode, Memory  # noqa: E402
from lemmata.memory.dates import parse_timestamp  # noqa: E402
from lemmata.memory.extract import OfflineExtractor, StoredEpisode  # noqa: E402
from lemmata.memory.ingest import Conversation, Question, read_locomo  # noqa: E402
from lemmata.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SERVER_FILE = ROOT / "tests" / "scripted_server.py"
DEV_SPLIT = ROOT.parent / "shared" / "data" / "locomo"
MODEL = "scripted-model"
TOKENIZER = "litellm.token_counter (tiktoken cl100k_base, bundled with litellm)"
# the model name the counter is asked about: an OpenAI chat model, so that the per-message
# overhead of the chat format is counted too
_COUNT_AS = "gpt-4o-mini"


def load_server_module() -> Any:
    """``tests/scripted_server.py``, imported by path (tests/ is no package)."""
    spec = importlib.util.spec_from_file_location("lemmata_scripted_server", SERVER_FILE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import the scripted server from {SERVER_FILE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prompt_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Tokens of one request's messages (see :data:`TOKENIZER`)."""
    clean = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
    return int(import_litellm().token_counter(model=_COUNT_AS, messages=clean))


def text_tokens(text: str) -> int:
    return int(import_litellm().token_counter(model=_COUNT_AS, text=text)) if text else 0


# -- the scripted replies -------------------------------------------------------------------

_EPISODE_LINE = re.compile(r"^(\d+)\. \(([^)]*)\) ([^:\n]*): ", re.M)


def parse_episodes(user: str) -> list[StoredEpisode]:
    """The numbered episodes of an extraction prompt, read back."""
    block = user.split("Episodes:", 1)[-1]
    heads: list[re.Match[str]] = []
    for m in _EPISODE_LINE.finditer(block):
        if int(m.group(1)) == len(heads) + 1:  # a number inside a message is no new episode
            heads.append(m)
    out = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(block)
        try:
            when = parse_timestamp(m.group(2)) if m.group(2) != "unknown" else None
        except ValueError:
            when = None
        out.append(
            StoredEpisode(
                id=m.group(1),
                session="scripted",
                kind="message",
                speaker=m.group(3),
                content=block[m.end() : end].strip(),
                timestamp=when,
            )
        )
    return out


def extraction_reply(user: str) -> dict[str, Any]:
    """A valid ``SegmentKnowledge`` made of the segment's own sentences."""
    episodes = parse_episodes(user)
    facts = []
    for f in OfflineExtractor().extract(episodes).facts:
        facts.append(
            {
                "statement": f.statement,
                "sources": [int(s) for s in f.sources],
                "tags": f.tags[:5],
                "entities": [e for e in f.entities if not e.startswith("date:")][:5],
                "when": f.event_dates[0] if f.event_dates else None,
            }
        )
    return {"facts": facts, "procedures": []}


def answer_reply(user: str) -> dict[str, Any]:
    """A valid ``_Answer`` quoting the first retrieved item."""
    first = re.search(r"^\[([^\]]+)\] (.*)$", user, re.M)
    if first is None:
        return {"answer": "The knowledge given does not answer the question.", "cited": []}
    return {"answer": first.group(2), "cited": [first.group(1)]}


def kind_of(messages: Sequence[dict[str, Any]]) -> str:
    """Which memory call a request is, by the schema its first system message asks for."""
    schema = str(messages[0].get("content") or "") if messages else ""
    for title, kind in (
        ('"title":"SegmentKnowledge"', "extract"),
        ('"title":"RelationVerdict"', "relate"),
        ('"title":"_Answer"', "reason"),
    ):
        if title in schema:
            return kind
    return "other"


def is_retry(messages: Sequence[dict[str, Any]]) -> bool:
    return any(m.get("role") == "assistant" for m in messages)


def scripted_reply(messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    user = str(messages[-1].get("content") or "") if messages else ""
    if is_retry(messages):  # the validation error fed back: answer the original prompt again
        user = next(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    kind = kind_of(messages)
    if kind == "extract":
        return extraction_reply(user)
    if kind == "relate":
        return {"relation": "compatible"}
    if kind == "reason":
        return answer_reply(user)
    return {}


# -- counting -------------------------------------------------------------------------------


@dataclass
class Call:
    """One request the server recorded, and the reply it gave."""

    kind: str
    retry: bool
    prompt_tokens: int
    completion_tokens: int
    chars: int
    valid: bool


@dataclass
class Cost:
    """The calls one unit of work (a session, a turn, a query) made."""

    label: str
    calls: list[Call] = field(default_factory=list)
    reported_calls: int = 0  # what memory's own report counted (ConsolidationReport.model_calls)

    @property
    def n_calls(self) -> int:
        return len(self.calls)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def chars(self) -> int:
        return sum(c.chars for c in self.calls)

    @property
    def largest_prompt(self) -> int:
        return max((c.prompt_tokens for c in self.calls), default=0)

    @property
    def retries(self) -> int:
        return sum(c.retry for c in self.calls)

    def row(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "calls": self.n_calls,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "chars": self.chars,
            "largest_prompt": self.largest_prompt,
            "reported_calls": self.reported_calls,
            "by_kind": {
                k: sum(c.kind == k for c in self.calls) for k in ("extract", "relate", "reason")
            },
        }


class Meter:
    """The scripted server, answering each request from its content, and a cursor over what
    it recorded. ``fail_next`` makes the next extraction replies invalid (one fact cites no
    episode), to measure a retry."""

    def __init__(self, server_module: Any | None = None) -> None:
        module = server_module or load_server_module()
        self.server = module.ScriptedOpenAIServer([], models=(MODEL,))
        self.replies: list[tuple[str, bool]] = []  # (content, valid), one per chat request
        self.fail_next = 0
        self._lock = threading.Lock()
        self._seen = 0
        self.server._next_step = self._step  # the handler asks its server for the next step

    def _step(self) -> dict[str, Any]:
        with self._lock:
            messages = self.server.chat_requests()[-1].get("messages") or []
            reply = scripted_reply(messages)
            valid = True
            if self.fail_next and kind_of(messages) == "extract" and reply.get("facts"):
                self.fail_next -= 1
                reply["facts"][0]["sources"] = []  # fails SegmentKnowledge: min_length=1
                valid = False
            content = json.dumps(reply, ensure_ascii=False)
            self.replies.append((content, valid))
            usage = {
                "prompt_tokens": prompt_tokens(messages),
                "completion_tokens": text_tokens(content),
            }
            return {"content": content, "usage": usage}

    def __enter__(self) -> Meter:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    @property
    def base_url(self) -> str:
        return str(self.server.base_url)

    def model(self) -> LiteLLMModel:
        return LiteLLMModel(f"openai/{MODEL}", api_base=self.base_url, max_retries=0)

    def take(self, label: str) -> Cost:
        """The calls recorded since the last ``take``."""
        with self._lock:
            requests = self.server.chat_requests()
            new, replies = requests[self._seen :], self.replies[self._seen :]
            self._seen = len(requests)
        cost = Cost(label)
        for req, (content, valid) in zip(new, replies, strict=True):
            messages = req.get("messages") or []
            cost.calls.append(
                Call(
                    kind=kind_of(messages),
                    retry=is_retry(messages),
                    prompt_tokens=prompt_tokens(messages),
                    completion_tokens=text_tokens(content),
                    chars=sum(len(str(m.get("content") or "")) for m in messages),
                    valid=valid,
                )
            )
        return cost


def sessions_of(conv: Conversation) -> list[tuple[str, list[Episode]]]:
    """The conversation's episodes by session, in order."""
    out: dict[str, list[Episode]] = {}
    for ep in conv.episodes:
        out.setdefault(ep.session or "", []).append(ep)
    return list(out.items())


def exchanges(episodes: Sequence[Episode]) -> list[list[Episode]]:
    """Turns of one session: a message and the reply to it (a change of speaker)."""
    out: list[list[Episode]] = []
    for ep in episodes:
        if out and len(out[-1]) == 1 and out[-1][0].speaker != ep.speaker:
            out[-1].append(ep)
        else:
            out.append([ep])
    return out


def ingest_session(mem: Memory, meter: Meter, name: str, episodes: Sequence[Episode]) -> Cost:
    """A batch import: the session's turns, then one ``consolidate``."""
    meter.take("discard")
    mem.add_episodes(list(episodes))
    report = mem.consolidate()
    cost = meter.take(name)
    cost.reported_calls = report.model_calls
    if report.failed:
        raise RuntimeError(f"{name}: extraction failed: {report.errors}")
    return cost


def ingest_by_turn(mem: Memory, meter: Meter, name: str, episodes: Sequence[Episode]) -> list[Cost]:
    """Turn after turn: each exchange added, then ``consolidate`` (as a fresh retrieve does).
    With the memory's ``batch_episodes`` above 1, the session's last turns are flushed at its
    end (as the waiting time would), and that call counts in the last turn."""
    meter.take("discard")
    out = []
    turns = exchanges(episodes)
    for i, turn in enumerate(turns, 1):
        mem.add_episodes(turn)
        report = mem.consolidate(flush=i == len(turns))
        cost = meter.take(f"{name} turn {i}")
        cost.reported_calls = report.model_calls
        out.append(cost)
    return out


def ask(mem: Memory, meter: Meter, question: str) -> Cost:
    meter.take("discard")
    mem.reason(question)
    return meter.take(question)


def measure_retry(mem: Memory, meter: Meter, name: str, episodes: Sequence[Episode]) -> Cost:
    """One session whose first extraction reply does not validate."""
    meter.fail_next = 1
    try:
        return ingest_session(mem, meter, f"{name} (one invalid reply)", episodes)
    finally:
        meter.fail_next = 0


# -- figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    xs = sorted(values)
    i = min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))
    return float(xs[i])


STATS: tuple[tuple[str, Callable[[Cost], float]], ...] = (
    ("calls", lambda c: c.n_calls),
    ("prompt tok", lambda c: c.prompt_tokens),
    ("completion tok*", lambda c: c.completion_tokens),
    ("chars sent", lambda c: c.chars),
    ("largest prompt", lambda c: c.largest_prompt),
)


def values(costs: Sequence[Cost]) -> list[dict[str, float]]:
    return [{name: float(get(c)) for name, get in STATS} for c in costs]


def summary(costs: Sequence[Cost] | list[dict[str, float]]) -> dict[str, dict[str, float]]:
    rows = [c if isinstance(c, dict) else values([c])[0] for c in costs]
    out = {}
    for name, _ in STATS:
        if not all(name in r for r in rows):
            continue
        xs = [r[name] for r in rows]
        out[name] = {
            "median": statistics.median(xs) if xs else 0.0,
            "p90": percentile(xs, 0.9),
            "max": max(xs, default=0.0),
            "mean": statistics.fmean(xs) if xs else 0.0,
            "total": sum(xs),
        }
    return out


def _num(v: float) -> str:
    return f"{v:>10.0f}" if v >= 10 or v == int(v) else f"{v:>10.2f}"


def print_table(title: str, costs: Sequence[Cost] | list[dict[str, float]]) -> None:
    s = summary(costs)
    print(f"\n{title} (n={len(costs)})")
    print(f"  {'':<16}{'median':>10}{'p90':>10}{'max':>10}{'mean':>10}")
    for name, row in s.items():
        print(
            f"  {name:<16}{_num(row['median'])}{_num(row['p90'])}{_num(row['max'])}"
            f"{row['mean']:>10.2f}"
        )


def dollars(prompt: float, completion: float, price_in: float, price_out: float) -> float:
    return (prompt * price_in + completion * price_out) / 1e6


# -- the run ---------------------------------------------------------------------------------


@contextlib.contextmanager
def fresh_memory(
    meter: Meter,
    user: str,
    settings: Settings,
    embedder: Embedder | None,
    batch_episodes: int = 1,
) -> Iterator[Memory]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(
            tmp,
            user=user,
            settings=settings,
            embedder=embedder,
            model=meter.model(),
            batch_episodes=batch_episodes,
        )
        try:
            yield mem
        finally:
            mem.close()


def in_sessions(q: Question, names: set[str]) -> bool:
    """Whether every evidence turn ("D3:5") lies in the ingested sessions."""
    sessions = {f"session_{e.split(':')[0].lstrip('D')}" for e in q.evidence}
    return bool(q.evidence) and sessions <= names


def hosted_schema_cost(messages: Sequence[dict[str, Any]]) -> dict[str, int]:
    """What the schema instruction of one recorded call costs, three ways.

    ``local``: the schema written into the system prompt, the only way a local server's model
    learns it (what was recorded here). ``hosted_twice``: that prompt and the schema again as
    the ``response_format`` (what a hosted model that takes schemas was sent before the schema
    left its prompt). ``hosted_once``: the response format and a one-line instruction (what it
    is sent now). The response format's tokens are counted as the schema's JSON text: each
    provider renders it to the model its own way, so that part is an estimate.
    """
    from pydantic import create_model

    from lemmata.llm import schema_instruction

    system = str(messages[0].get("content") or "")
    schema_json = system.split("schema:\n", 1)[1] if "schema:\n" in system else "{}"
    title = str(json.loads(schema_json).get("title") or "Reply")
    short = schema_instruction(create_model(title), in_prompt=False)
    as_format = text_tokens(schema_json)
    local = prompt_tokens(messages[:1])
    return {
        "local": local,
        "hosted_twice": local + as_format,
        "hosted_once": prompt_tokens([{"role": "system", "content": short}]) + as_format,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEV_SPLIT, help="folder of LoCoMo JSON files")
    ap.add_argument(
        "--conversations", nargs="+", default=["26", "30"], help="file stems (default: 26 30)"
    )
    ap.add_argument("--sessions", type=int, default=3, help="sessions per conversation")
    ap.add_argument("--queries", type=int, default=10, help="questions per conversation")
    ap.add_argument(
        "--price-in",
        type=float,
        nargs="+",
        default=[0.15, 2.50],
        help="example input prices, $ per 1M tokens (not quotes)",
    )
    ap.add_argument(
        "--price-out",
        type=float,
        nargs="+",
        default=[0.60, 10.00],
        help="example output prices, $ per 1M tokens, paired with --price-in",
    )
    ap.add_argument(
        "--batch-episodes",
        type=int,
        default=8,
        help="also structure turn by turn with Memory(batch_episodes=N) (default 8; 1: skip)",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if len(args.price_in) != len(args.price_out):
        sys.exit("give as many --price-out as --price-in values")
    convs = []
    for stem in args.conversations:
        path = args.data / f"{stem}.json"
        if not path.is_file():
            sys.exit(f"no {path}: give --data DIR and --conversations STEM ...")
        convs += read_locomo(path)

    settings = Settings.load(config_file=None)
    sessions: list[Cost] = []
    turns: list[Cost] = []
    batched: list[Cost] = []
    queries: list[Cost] = []
    retries: list[tuple[Cost, Cost]] = []
    n_turns = 0
    embedder: Embedder | None = None
    t0 = time.perf_counter()
    with Meter() as meter:
        for conv in convs:
            chosen = sessions_of(conv)[: args.sessions]
            names = {name for name, _ in chosen}
            with fresh_memory(meter, conv.sample_id, settings, embedder) as mem:
                embedder = mem.embedder
                for name, eps in chosen:
                    cost = ingest_session(mem, meter, f"{conv.sample_id} {name}", eps)
                    sessions.append(cost)
                    n_turns += len(exchanges(eps))
                    print(
                        f"[{time.perf_counter() - t0:6.1f}s] {conv.sample_id} {name}: "
                        f"{len(eps)} episodes, {cost.n_calls} calls, {cost.prompt_tokens} "
                        "prompt tokens",
                        file=sys.stderr,
                    )
                asked = [q for q in conv.questions if q.category != 5 and in_sessions(q, names)]
                for i, q in enumerate(asked[: args.queries], 1):
                    queries.append(ask(mem, meter, q.question))
                    if i % 5 == 0:
                        print(f"  {conv.sample_id}: {i} questions", file=sys.stderr)
            with fresh_memory(meter, conv.sample_id, settings, embedder) as mem:
                for name, eps in chosen:
                    turns += ingest_by_turn(mem, meter, f"{conv.sample_id} {name}", eps)
                    print(
                        f"[{time.perf_counter() - t0:6.1f}s] {conv.sample_id} {name} turn by "
                        f"turn: {len(exchanges(eps))} turns",
                        file=sys.stderr,
                    )
            if args.batch_episodes > 1:
                with fresh_memory(
                    meter, conv.sample_id, settings, embedder, args.batch_episodes
                ) as mem:
                    for name, eps in chosen:
                        batched += ingest_by_turn(mem, meter, f"{conv.sample_id} {name}", eps)
                print(
                    f"[{time.perf_counter() - t0:6.1f}s] {conv.sample_id} turn by turn, "
                    f"batch_episodes={args.batch_episodes}",
                    file=sys.stderr,
                )
            name, eps = chosen[0]
            with fresh_memory(meter, conv.sample_id, settings, embedder) as mem:
                ok = ingest_session(mem, meter, f"{conv.sample_id} {name}", eps)
            with fresh_memory(meter, conv.sample_id, settings, embedder) as mem:
                bad = measure_retry(mem, meter, f"{conv.sample_id} {name}", eps)
            retries.append((ok, bad))

    # a batch session's cost shared among its turns
    per_turn_batch = [
        {name: get(c) / max(1, len(exchanges(eps))) for name, get in STATS[:4]}
        for c, (_, eps) in zip(
            sessions, [s for conv in convs for s in sessions_of(conv)[: args.sessions]], strict=True
        )
    ]
    prices = list(zip(args.price_in, args.price_out, strict=True))
    s_sum, t_sum, q_sum = summary(sessions), summary(turns), summary(queries)
    b_sum = summary(batched) if batched else None
    budget = {
        f"${pin}/${pout}": {
            "per session (batch)": dollars(
                s_sum["prompt tok"]["mean"], s_sum["completion tok*"]["mean"], pin, pout
            ),
            "per 1000 turns (batch)": 1000
            * dollars(
                s_sum["prompt tok"]["total"] / max(1, n_turns),
                s_sum["completion tok*"]["total"] / max(1, n_turns),
                pin,
                pout,
            ),
            "per 1000 turns (turn by turn)": 1000
            * dollars(t_sum["prompt tok"]["mean"], t_sum["completion tok*"]["mean"], pin, pout),
            **(
                {
                    f"per 1000 turns (turn by turn, batch {args.batch_episodes})": 1000
                    * dollars(
                        b_sum["prompt tok"]["mean"], b_sum["completion tok*"]["mean"], pin, pout
                    )
                }
                if b_sum
                else {}
            ),
            "per 1000 queries": 1000
            * dollars(q_sum["prompt tok"]["mean"], q_sum["completion tok*"]["mean"], pin, pout),
        }
        for pin, pout in prices
    }
    firsts = {kind_of(r["messages"]): r["messages"] for r in meter.server.chat_requests()}
    overhead = {
        kind: {"schema": prompt_tokens(msgs[:1]), "schema+system": prompt_tokens(msgs[:2])}
        for kind, msgs in firsts.items()
    }
    hosted = {kind: hosted_schema_cost(msgs) for kind, msgs in firsts.items()}
    by_kind = {
        label: {
            kind: {
                "calls": sum(c.kind == kind for x in costs for c in x.calls),
                "prompt_tokens": sum(
                    c.prompt_tokens for x in costs for c in x.calls if c.kind == kind
                ),
            }
            for kind in ("extract", "relate", "reason")
        }
        for label, costs in (("batch", sessions), ("turn by turn", turns), ("queries", queries))
    }
    result: dict[str, Any] = {
        "tokenizer": TOKENIZER,
        "conversations": [c.sample_id for c in convs],
        "sessions": len(sessions),
        "turns": n_turns,
        "per_session": s_sum,
        "per_turn_batch": summary(per_turn_batch),
        "per_turn_turn_by_turn": t_sum,
        "batch_episodes": args.batch_episodes,
        "per_turn_turn_by_turn_batched": b_sum,
        "per_query": q_sum,
        "retry": [{"valid": ok.row(), "one_invalid": bad.row()} for ok, bad in retries],
        "fixed_prompt_tokens_per_call": overhead,
        "hosted_schema_tokens_per_call": hosted,
        "by_kind": by_kind,
        "relate_calls": sum(c.kind == "relate" for s in sessions + turns for c in s.calls),
        "calls_memory_reported_vs_recorded": [
            sum(c.reported_calls for c in sessions),
            sum(c.n_calls for c in sessions),
        ],
        "example_cost_usd": budget,
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"tokens counted with {TOKENIZER}")
    print(
        "* completion tokens are those of the scripted replies (facts written from the "
        "session's own sentences by the offline extractor, a quoted item as the answer): an "
        "estimate, not a model's output"
    )
    print(
        f"conversations {', '.join(result['conversations'])}: {len(sessions)} sessions, "
        f"{n_turns} turns, {len(queries)} queries"
    )
    print_table("per session, batch (add the session, one consolidate)", sessions)
    print_table("per turn, batch (the session's cost / its turns)", per_turn_batch)
    print_table("per turn, turn by turn (add one exchange, consolidate)", turns)
    if batched:
        print_table(
            f"per turn, turn by turn with Memory(batch_episodes={args.batch_episodes}) (a "
            "session's last turns flushed at its end; read the mean: most turns make no call)",
            batched,
        )
    print_table("per query (reason: retrieve + one answer call)", queries)
    print(
        "\nfixed prompt tokens per call, sent whatever the content (schema instruction / "
        "with the system prompt): "
        + ", ".join(f"{k} {v['schema']} / {v['schema+system']}" for k, v in overhead.items())
    )
    print(
        "the schema on a hosted model that takes it as the response format (tokens per call: "
        "local server, prompt only / hosted, prompt + response format, as before / hosted, "
        "response format + a short instruction, now): "
        + ", ".join(
            f"{k} {v['local']} / {v['hosted_twice']} / {v['hosted_once']}"
            for k, v in hosted.items()
        )
    )
    print("calls and prompt tokens by kind:")
    for label, kinds in by_kind.items():
        print(
            f"  {label}: "
            + "; ".join(
                f"{k} {v['calls']} calls, {v['prompt_tokens']} tokens"
                for k, v in kinds.items()
                if v["calls"]
            )
        )
    print(f"relate calls (ambiguous near-duplicates): {result['relate_calls']}")
    print(
        "calls counted by ConsolidationReport.model_calls vs requests recorded (batch "
        f"sessions): {result['calls_memory_reported_vs_recorded'][0]} vs "
        f"{result['calls_memory_reported_vs_recorded'][1]}"
    )
    print("\nretry: the same session with a valid first reply, and with one invalid reply")
    for ok, bad in retries:
        print(
            f"  {ok.label}: {ok.n_calls} call(s), {ok.prompt_tokens} prompt + "
            f"{ok.completion_tokens} completion tokens -> {bad.n_calls} calls, "
            f"{bad.prompt_tokens} + {bad.completion_tokens} (a retry costs "
            f"+{bad.prompt_tokens - ok.prompt_tokens} prompt, "
            f"+{bad.completion_tokens - ok.completion_tokens} completion; memory counted "
            f"{bad.reported_calls} call(s))"
        )
    print("\nexample cost in $ (example prices per 1M tokens in/out, not quotes)")
    for label, rows in budget.items():
        print(f"  at {label}: " + "; ".join(f"{k} {v:.4f}" for k, v in rows.items()))


if __name__ == "__main__":
    main()
