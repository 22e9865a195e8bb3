"""The refinement search with a model: local repairs from a :class:`~lemmata.llm.ChatModel`,
and the best-of-N whole-proof baseline it is compared with.

:class:`ModelPolicy` wraps an offline policy (default :class:`OfflinePolicy`). At every node
it proposes the offline actions plus one ``Action(ASK, "model", 0.15)``; the search calls
:meth:`ModelPolicy.ask` only when that action comes to its turn, so the automation ranked
above it has run (and failed) first. An ask sends the model one position of one proof and
nothing else: the backend, up to three steps before it, the failing sentence (when a draft
failed there), up to three steps after it, the failure (kind and message), the goals there,
the statement, and the tactics already tried at that node ("do not repeat"). No history of
attempts at other nodes ever reaches the prompt. The reply is read as
``{"tactics": [{"tactic": ..., "why": ...}]}`` (one retry with the validation error, then a
tolerant reading of code blocks); each tactic must be one step and must not give up, end the
proof or declare anything: those are refused before they reach the verifier. A reply that
still does not parse yields no actions (counted in :attr:`ModelPolicy.stats`), never an
exception out of the search.

:meth:`ModelPolicy.draft` asks once for a whole proof, the search's ``draft=``: the search
then repairs its failing sentences in place. :func:`best_of_n` is the baseline at the same
budget: whole proofs sampled one model call each, each checked whole (one verifier call),
with the same :class:`SearchResult` and the same trace records.

Budgets: one :class:`ModelPolicy` serves one search. Its model-call budget
(``max_model_calls``, counting every chat request, the retry included, and the draft) is reset
by :meth:`ModelPolicy.reset`, and automatically when a node of another statement arrives.

>>> from lemmata.llm import LiteLLMModel                                  # doctest: +SKIP
>>> from lemmata.provers import CoqTop
>>> from lemmata.provers.refine import search
>>> model = LiteLLMModel("openai/gpt-4o-mini")                            # doctest: +SKIP
>>> stmt, header = "Theorem t : forall x : R, x * x >= 0.", "Require Import Reals."
>>> policy = ModelPolicy(model)                                           # doctest: +SKIP
>>> with CoqTop() as coq:                                                 # doctest: +SKIP
...     r = search(coq, stmt, header, policy=policy,
...                draft=policy.draft(stmt, header, "coq"))
"""

from __future__ import annotations

import re
import time
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from lemmata.errors import ModelError, ModelOutputError
from lemmata.llm.base import ChatModel
from lemmata.llm.json_extract import JSONNotFound, extract_json
from lemmata.llm.types import Message
from lemmata.provers.base import Verifier
from lemmata.provers.process import stage_of
from lemmata.provers.refine.backend import header_for, probe_proofs, proof_text, statement_for
from lemmata.provers.refine.policy import ASK, Action, NodeView, OfflinePolicy, Policy
from lemmata.provers.refine.search import SearchResult
from lemmata.provers.refine.trace import TraceWriter, check_fields
from lemmata.provers.result import FailureKind, FailureMode, Status

__all__ = [
    "DraftReply",
    "ModelPolicy",
    "ModelStats",
    "RepairReply",
    "TacticIdea",
    "best_of_n",
    "screen_proof",
    "screen_tactic",
]

S = TypeVar("S", bound=BaseModel)

# A second ask at a node that was asked once already: distinct from ASK, because the search
# skips a tactic already tried at a node. The search must treat every tactic that starts
# with ASK as an ask.
ASK_AGAIN = ASK + ":2"
_MAX_CALL_ERRORS = 3  # a model that fails this many calls in a row is not asked again


class TacticIdea(BaseModel):
    """One proposed step and the model's reason for it."""

    tactic: str = Field(min_length=1, description="one tactic step, run at this position")
    why: str = Field(default="", description="one short sentence: why this step")


class RepairReply(BaseModel):
    """The repair prompt's answer: candidate steps, best first."""

    tactics: list[TacticIdea] = Field(description="different single-step tactics, best first")


class DraftReply(BaseModel):
    """The draft prompt's answer: a whole proof."""

    proof: str = Field(min_length=1, description="the proof's tactic steps, without Proof/Qed")


@dataclass
class ModelStats:
    """What a :class:`ModelPolicy` spent and what became of the replies.

    ``calls`` counts chat requests (a retry is one more); ``asks`` and ``drafts`` the
    requests for repairs and whole proofs; ``proposed`` the tactics handed to the search;
    ``refused`` the tactics or proofs that gave up or declared things; ``repeats`` those
    already tried at the node; ``unparseable`` the replies that did not parse even after the
    retry; ``errors`` the calls that failed (network, rate limits, ...).
    """

    calls: int = 0
    asks: int = 0
    drafts: int = 0
    proposed: int = 0
    refused: int = 0
    repeats: int = 0
    unparseable: int = 0
    errors: int = 0
    last_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- screening --------------------------------------------------------------------------------

# Sentences that end, abort or restart the theorem, or change the environment: the heads the
# Coq verifier refuses too (it screens whole proofs; this screens before any call is spent).
# fmt: off
_COQ_COMMANDS = frozenset({
    "Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Example", "Proof",
    "Qed", "Defined", "Admitted", "Abort", "Save", "Restart", "Undo", "Back", "BackTo",
    "Reset", "Definition", "Fixpoint", "CoFixpoint", "Inductive", "CoInductive", "Axiom",
    "Axioms", "Parameter", "Parameters", "Hypothesis", "Hypotheses", "Variable", "Variables",
    "Conjecture", "Require", "Import", "Export", "Module", "Section", "End", "Drop", "Quit",
    "Load", "Declare", "Set", "Unset", "Local", "Global", "Program", "Instance", "Existing",
    "Opaque", "Transparent", "Goal", "Notation", "Ltac", "Hint", "Arguments", "Let",
    "Canonical", "Coercion", "Extraction", "Redirect", "Time", "Timeout",
})
# fmt: on
_GIVES_UP = re.compile(r"\b(admit|Admitted|give_up|sorry)\b")
_CONTROL = re.compile(r"^\s*(?:(?:Fail|Succeed)\s+)+")
_BULLET = re.compile(r"[-+*]+|[{}]")
_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)```", re.DOTALL)


def _coq_sentences(text: str) -> list[str] | None:
    from lemmata.provers.coq.sentences import SentenceError, split_sentences

    body = text.strip()
    if body and not body.endswith(".") and not _BULLET.fullmatch(body):
        body += "."
    try:
        return [s.text for s in split_sentences(body)]
    except SentenceError:
        return None


def _coq_refusal(sentences: list[str]) -> str | None:
    from lemmata.provers.coq.sentences import head_word

    for s in sentences:
        inner = _CONTROL.sub("", s)
        if _GIVES_UP.search(inner):
            return f"gives up: {s!r}"
        word = head_word(inner)
        if word in _COQ_COMMANDS:
            return f"{word} may not appear in a proof step: {s!r}"
    return None


def screen_tactic(backend: str, tactic: str) -> tuple[str | None, str | None]:
    """``(tactic, None)`` for an acceptable single step, normalised (Coq: no final period,
    no leading bullet); ``(None, reason)`` for a step that gives up (``admit``, ``sorry``),
    ends or restarts the proof, declares something, or is more than one step.

    >>> screen_tactic("coq", "- nra.")
    ('nra', None)
    >>> screen_tactic("coq", "admit.")[1]
    "gives up: 'admit.'"
    """
    text = tactic.strip()
    if not text:
        return None, "empty"
    if backend == "coq":
        sentences = _coq_sentences(text)
        if sentences is None:
            return None, f"not a Coq sentence: {text[:60]!r}"
        while sentences and _BULLET.fullmatch(sentences[0]):
            sentences.pop(0)
        if not sentences:
            return None, "only a bullet"
        refusal = _coq_refusal(sentences)
        if refusal is not None:
            return None, refusal
        if len(sentences) > 1:
            return None, f"{len(sentences)} steps, not one: {text[:60]!r}"
        return sentences[0][:-1].strip(), None
    from lemmata.provers.lean.repl import screen_lean_proof

    if "\n" in text:
        return None, f"several lines, not one step: {text[:60]!r}"
    refused = screen_lean_proof(text)
    if refused is not None or _GIVES_UP.search(text):
        return None, refused.message if refused is not None else "gives up"
    return text, None


def screen_proof(backend: str, proof: str) -> tuple[str | None, str | None]:
    """A whole proof from a model, cleaned (code fences, a restated theorem, ``Proof.`` and
    ``Qed.`` removed), or ``(None, reason)`` when it gives up or declares things."""
    text = proof.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return None, "empty"
    if backend != "coq":
        from lemmata.provers.lean.repl import screen_lean_proof

        text = re.sub(r"^.*?:=\s*(?=by\b)", "", text, count=1, flags=re.DOTALL)
        refused = screen_lean_proof(text)
        if refused is not None:
            return None, refused.message
        return text, None
    from lemmata.provers.coq.sentences import head_word

    sentences = _coq_sentences(text)
    if sentences is None:
        return text, None  # the verifier will say where it breaks
    heads = [head_word(s) for s in sentences]
    if "Proof" in heads:  # the model restated the theorem: keep what follows Proof.
        sentences = sentences[heads.index("Proof") + 1 :]
    while sentences and head_word(sentences[-1]) in ("Qed", "Defined"):
        sentences.pop()
    if not sentences:
        return None, "no proof steps"
    refusal = _coq_refusal(sentences)
    if refusal is not None:
        return None, refusal
    return "\n".join(sentences), None


# -- prompts ----------------------------------------------------------------------------------


@cache
def _prompt(name: str) -> Mapping[str, Any]:
    text = files("lemmata.provers.refine").joinpath(f"prompts/{name}.toml").read_text("utf-8")
    return tomllib.loads(text)


_LANGUAGE = {"coq": "Coq", "lean": "Lean 4"}
_FORBIDDEN_WORDS = {
    "coq": "no admit, Admitted, give_up, Qed, Abort",
    "lean": "no sorry, admit",
}
_WHERE = {"coq": "between `Proof.` and `Qed.` (without them)", "lean": "after `:= by`"}


def _messages(name: str, **fields: Any) -> list[Message]:
    p = _prompt(name)
    return [
        {"role": "system", "content": p["system"].strip().format(**fields)},
        {"role": "user", "content": p["user"].strip().format(**fields)},
    ]


def _steps(backend: str, steps: tuple[str, ...], none: str) -> str:
    if not steps:
        return none
    if backend == "coq":
        return proof_text("coq", steps)
    return "\n".join(steps)


def _goals(goals: tuple[str, ...], limit: int = 4, chars: int = 1500) -> str:
    if not goals:
        return "(none)"
    shown = [g if len(g) <= chars else g[:chars] + " ..." for g in goals[:limit]]
    out = "\n\n".join(f"Goal {i + 1}:\n{g}" for i, g in enumerate(shown))
    if len(goals) > limit:
        out += f"\n\n({len(goals) - limit} more goals)"
    return out


def _usage_calls(model: ChatModel) -> int:
    usage = getattr(model, "usage", None)
    return int(getattr(usage, "calls", 0) or 0)


# -- one model call ---------------------------------------------------------------------------


@dataclass
class _Reply:
    value: BaseModel | None
    raw: str
    error: str | None  # the call failed (not the parsing)
    calls: int


def _call(
    model: ChatModel,
    messages: list[Message],
    schema: type[S],
    *,
    retries: int,
    temperature: float | None,
) -> _Reply:
    """One structured request (``retries`` more on a reply that does not validate)."""
    before = _usage_calls(model)
    value: BaseModel | None = None
    raw, error = "", None
    try:
        value = model.structured(messages, schema, retries=retries, temperature=temperature)
    except ModelOutputError as exc:
        raw = exc.raw or ""
    except ModelError as exc:
        error = f"{type(exc).__name__}: {exc}"
    spent = max(1, _usage_calls(model) - before)
    return _Reply(value, raw, error, spent)


def _tolerant_tactics(raw: str, backend: str) -> list[str]:
    """What a reply that failed the schema still says: a ``tactics`` list of strings, or
    the sentences of a code block. Plain prose yields nothing."""
    try:
        data = extract_json(raw, want=dict)
    except JSONNotFound:
        data = None
    if isinstance(data, dict) and isinstance(data.get("tactics"), list):
        out = []
        for item in data["tactics"]:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("tactic"), str):
                out.append(item["tactic"])
        return out
    blocks = [m.group(1) for m in _FENCE.finditer(raw)]
    out = []
    for block in blocks:
        sentences = _coq_sentences(block) if backend == "coq" else None
        out.extend(sentences if sentences is not None else block.splitlines())
    return [t for t in out if t.strip() and not _BULLET.fullmatch(t.strip())]


def _sample_proof(
    model: ChatModel,
    statement: str,
    header: str,
    backend: str,
    *,
    retries: int,
    temperature: float | None,
) -> tuple[str | None, str | None, int]:
    """``(proof, None, calls)``, or ``(None, why, calls)`` with ``why`` one of
    ``unparseable``, ``refused: ...``, ``error: ...``."""
    messages = _messages(
        "draft",
        language=_LANGUAGE.get(backend, backend),
        where=_WHERE.get(backend, ""),
        forbidden=_FORBIDDEN_WORDS.get(backend, "no placeholders"),
        header=header.strip() or "(none)",
        statement=statement.strip(),
    )
    reply = _call(model, messages, DraftReply, retries=retries, temperature=temperature)
    if reply.error is not None:
        return None, "error: " + reply.error, reply.calls
    text: str | None = reply.value.proof if isinstance(reply.value, DraftReply) else None
    if text is None:
        # The tolerant fallback: a proof in a code block, or a reply that spells out
        # ``Proof. ... Qed.`` without the JSON around it. Prose is not a proof.
        fenced = _FENCE.search(reply.raw)
        if fenced:
            text = fenced.group(1)
        elif re.search(r"\bProof\.|\bQed\.|:=\s*by\b", reply.raw):
            text = reply.raw
    if not text or not text.strip():
        return None, "unparseable", reply.calls
    proof, why = screen_proof(backend, text)
    if proof is None:
        return None, f"refused: {why}", reply.calls
    return proof, None, reply.calls


# -- the policy -------------------------------------------------------------------------------


class ModelPolicy:
    """Offline actions first, then the model's local repairs; see the module docstring.

    ``offline`` is the policy whose proposals and reactions come first (default
    :class:`OfflinePolicy`); ``candidates`` is how many distinct tactics one ask may return;
    ``max_model_calls`` bounds the chat requests of one search (draft and retries
    included). ``prior`` is the ask's prior among the offline actions at a node,
    ``react_prior`` that of the ask a failed (non-model) action adds; ``reask`` allows one
    second ask at a node already asked (it needs the search to treat every tactic starting
    with :data:`ASK` as an ask). ``temperature`` is passed to the model when given.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        offline: Policy | None = None,
        candidates: int = 4,
        max_model_calls: int = 16,
        prior: float = 0.15,
        react_prior: float = 0.1,
        reask: bool = True,
        temperature: float | None = None,
    ) -> None:
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1, got {candidates}")
        if max_model_calls < 0:
            raise ValueError(f"max_model_calls must be 0 or more, got {max_model_calls}")
        self.model = model
        self.offline: Policy = offline or OfflinePolicy()
        self.candidates = candidates
        self.max_model_calls = max_model_calls
        self.prior = prior
        self.react_prior = react_prior
        self.reask = reask
        self.temperature = temperature
        self.name = f"model:{model.name}+{self.offline.name}"
        self.prompt_versions = {n: int(_prompt(n)["version"]) for n in ("repair", "draft")}
        self.stats = ModelStats()
        self._statement: str | None = None
        self._failed_here: dict[tuple[str, ...], tuple[str, FailureMode]] = {}
        self._errors_in_a_row = 0

    def __repr__(self) -> str:
        return f"ModelPolicy({self.model.name!r}, offline={self.offline.name!r}, {self.stats})"

    # -- budget ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Start a new search: the counters, the budget and what failed where."""
        self.stats = ModelStats()
        self._failed_here.clear()
        self._errors_in_a_row = 0

    def _sync(self, statement: str) -> None:
        if statement and statement != self._statement:
            if self._statement is not None:
                self.reset()
            self._statement = statement

    def can_ask(self) -> bool:
        """Whether the budget and the model's health allow another request."""
        return self.stats.calls < self.max_model_calls and self._errors_in_a_row < _MAX_CALL_ERRORS

    # -- the Policy protocol --------------------------------------------------------------

    def propose(self, node: NodeView) -> list[Action]:
        """The offline proposals, then one ask at :attr:`prior`."""
        self._sync(node.statement)
        acts = list(self.offline.propose(node))
        if self.can_ask() and ASK not in node.tried:
            acts.append(Action(ASK, "model", self.prior))
        return acts

    def react(self, node: NodeView, action: Action, failure: FailureMode) -> list[Action]:
        """The offline reactions; after a failed action that was not the model's, one more
        ask at :attr:`react_prior` (a second one at a node asked before, if :attr:`reask`)."""
        self._sync(node.statement)
        acts = list(self.offline.react(node, action, failure))
        self._failed_here[node.goals] = (action.tactic, failure)
        if action.family == "model" or action.tactic.startswith(ASK) or not self.can_ask():
            return acts
        tag = ASK if ASK not in node.tried else ASK_AGAIN if self.reask else None
        if tag is not None and tag not in node.tried:
            acts.append(Action(tag, "model", self.react_prior, reacting_to=action.tactic))
        return acts

    # -- asking ---------------------------------------------------------------------------

    def repair_messages(self, node: NodeView) -> list[Message]:
        """The repair prompt for ``node``: this position only (see the module docstring)."""
        backend = node.backend
        failing = node.failing
        failure = node.failure
        kind = failure.kind.value if failure else "none"
        message = failure.message if failure else "(no message)"
        if failing is None and node.goals in self._failed_here:
            # No draft sentence failed here: the latest step that failed at this node and
            # the verifier's word on it (this node's own failure, no other node's).
            tactic, fm = self._failed_here[node.goals]
            if not tactic.startswith("<"):
                kind, message = fm.kind.value, f"`{tactic}` failed here: {fm.message}"
        tried = sorted(t for t in node.tried | node.failed_here if not t.startswith("<"))
        return _messages(
            "repair",
            language=_LANGUAGE.get(backend, backend),
            candidates=self.candidates,
            forbidden=_FORBIDDEN_WORDS.get(backend, "no placeholders"),
            statement=node.statement.strip() or "(not given)",
            before=_steps(backend, node.before, "(none: this is the start of the proof)"),
            failing=node.failing or "(none: no step failed here; the goals are open)",
            after=_steps(backend, node.after, "(none)"),
            kind=kind,
            message=message[:1500],
            goals=_goals(node.goals),
            tried="\n".join(f"- {t}" for t in tried) or "(nothing yet)",
        )

    def ask(self, node: NodeView) -> list[Action]:
        """Ask the model for up to :attr:`candidates` local repairs at ``node``.

        Returns model actions (family ``"model"``, decreasing priors, ``reacting_to`` the
        failing sentence); ``[]`` when the budget is spent, the call fails or the reply does
        not parse, each counted in :attr:`stats`.
        """
        self._sync(node.statement)
        if not self.can_ask():
            return []
        self.stats.asks += 1
        reply = _call(
            self.model,
            self.repair_messages(node),
            RepairReply,
            retries=1,
            temperature=self.temperature,
        )
        self.stats.calls += reply.calls
        if reply.error is not None:
            self._failed_call(reply.error)
            return []
        self._errors_in_a_row = 0
        if isinstance(reply.value, RepairReply):
            raw_tactics = [t.tactic for t in reply.value.tactics]
        else:
            raw_tactics = _tolerant_tactics(reply.raw, node.backend)
            if not raw_tactics:
                self.stats.unparseable += 1
                return []
        return self._actions(node, raw_tactics)

    def _actions(self, node: NodeView, raw_tactics: list[str]) -> list[Action]:
        tried = {_norm(t) for t in node.tried | node.failed_here}
        answering = node.failing or (
            self._failed_here[node.goals][0] if node.goals in self._failed_here else None
        )
        out: list[Action] = []
        seen: set[str] = set()
        for raw in raw_tactics:
            tactic, why = screen_tactic(node.backend, raw)
            if tactic is None:
                self.stats.refused += 1
                continue
            key = _norm(tactic)
            if key in tried:
                self.stats.repeats += 1
                continue
            if key in seen:
                continue
            seen.add(key)
            prior = 0.6 * 0.85 ** len(out)
            out.append(Action(tactic, "model", prior, reacting_to=answering))
            if len(out) >= self.candidates:
                break
        self.stats.proposed += len(out)
        return out

    def _failed_call(self, error: str) -> None:
        self.stats.errors += 1
        self.stats.last_error = error[:300]
        self._errors_in_a_row += 1

    def draft(self, statement: str, header: str, backend: str = "coq") -> str | None:
        """One request for a whole proof of ``statement`` (the search's ``draft=``);
        ``None`` when the budget is spent, the call fails, the reply does not parse or the
        proof gives up or declares things."""
        self._sync(statement)
        if not self.can_ask():
            return None
        self.stats.drafts += 1
        proof, why, calls = _sample_proof(
            self.model, statement, header, backend, retries=1, temperature=self.temperature
        )
        self.stats.calls += calls
        if proof is None:
            assert why is not None
            if why.startswith("error"):
                self._failed_call(why)
            elif why.startswith("refused"):
                self.stats.refused += 1
            else:
                self.stats.unparseable += 1
        else:
            self._errors_in_a_row = 0
        return proof


def _norm(tactic: str) -> str:
    return " ".join(tactic.strip().rstrip(".").split())


# -- the baseline -----------------------------------------------------------------------------


def best_of_n(
    verifier: Verifier,
    model: ChatModel,
    statement: str,
    header: str = "",
    *,
    id: str = "theorem",
    budget_calls: int = 64,
    budget_seconds: float = 60.0,
    temperature: float | None = 0.8,
    check_timeout_s: float = 12.0,
    imports: bool = True,
    automation: bool = True,
    vacuity_probe: bool = True,
    trace: str | Path | TraceWriter | None = None,
) -> SearchResult:
    """The whole-proof baseline: sample a proof (one model call, at ``temperature``), check
    it whole (one verifier call), until one passes or the budget is spent.

    ``budget_calls`` counts verifier calls, as the search does, and also bounds the samples
    (a refused or unparseable sample costs a model call but no verifier call). The header
    gets the search's additions (:func:`~lemmata.provers.refine.backend.header_for`). The
    result is a :class:`SearchResult`; ``trace`` gets the search's record types: one
    ``problem``, one ``attempt`` per sample (family ``sample``; status ``check`` when it
    passed, ``error`` or ``timeout`` when not, ``refused``/``unparseable``/``model_error``
    when nothing was checked) and one ``result``, each with ``model_calls``.
    """
    if budget_calls < 1:
        raise ValueError(f"budget_calls must be at least 1, got {budget_calls}")
    backend = verifier.backend
    full_header, additions = header_for(backend, header, imports, automation)
    checked = statement_for(backend, statement)
    own = not isinstance(trace, TraceWriter)
    writer = trace if isinstance(trace, TraceWriter) else TraceWriter(trace)
    started = time.monotonic()
    calls = model_calls = samples = attempts = errors_in_a_row = 0
    kinds: Counter[str] = Counter()
    last_failure: FailureMode | None = None

    def elapsed() -> float:
        return time.monotonic() - started

    def finish(
        status: str,
        proof: str | None,
        failure: FailureMode | None,
        vacuous: bool | None = None,
        path: list[int] | None = None,
    ) -> SearchResult:
        result = SearchResult(
            id=id,
            status=status,
            proof=proof,
            calls=calls,
            elapsed_s=elapsed(),
            backend=backend,
            failure=failure,
            vacuous=vacuous,
            header_additions=additions if proof else "",
            nodes=0,
            attempts=attempts,
            failure_counts=dict(kinds),
        )
        writer.write(
            {"type": "result", **result.to_dict(), "path": path or [], "model_calls": model_calls}
        )
        return result

    try:
        writer.write(
            {
                "type": "problem",
                "id": id,
                "backend": backend,
                "statement": statement,
                "header": header,
                "header_additions": additions,
                "policy": f"best_of_n:{model.name}",
                "scorer": None,
                "config": {
                    "budget_calls": budget_calls,
                    "budget_seconds": budget_seconds,
                    "temperature": temperature,
                    "check_timeout_s": check_timeout_s,
                    "imports": imports,
                    "automation": automation,
                    "vacuity_probe": vacuity_probe,
                    "prompt_version": int(_prompt("draft")["version"]),
                },
            }
        )
        while calls < budget_calls and samples < budget_calls and elapsed() < budget_seconds:
            samples += 1
            proof, why, spent = _sample_proof(
                model, statement, header, backend, retries=0, temperature=temperature
            )
            model_calls += spent
            record: dict[str, Any] = {
                "type": "attempt",
                "problem": id,
                "node": 0,
                "child": None,
                "tactic": proof,
                "family": "sample",
                "prior": None,
                "reacting_to": None,
                "condition": None,
                "depth": 0,
            }
            if proof is None:
                assert why is not None
                status = why.split(":")[0]
                status = {"error": "model_error"}.get(status, status)
                errors_in_a_row = errors_in_a_row + 1 if status == "model_error" else 0
                writer.write(
                    {
                        **record,
                        "status": status,
                        "failure": {"kind": FailureKind.OTHER.value, "message": why[:300]},
                        "calls": calls,
                        "model_calls": model_calls,
                        "t": round(elapsed(), 3),
                    }
                )
                attempts += 1
                if errors_in_a_row >= _MAX_CALL_ERRORS:
                    return finish("error", None, FailureMode(FailureKind.OTHER, why))
                continue
            errors_in_a_row = 0
            calls += 1
            r = verifier.check(full_header, checked, proof, check_timeout_s)
            fm = r.failure_mode
            writer.write(
                {
                    **record,
                    **check_fields(r),
                    "calls": calls,
                    "model_calls": model_calls,
                    "t": round(elapsed(), 3),
                }
            )
            index = attempts
            attempts += 1
            if r.ok:
                vacuous = (
                    _vacuous(verifier, full_header, checked, check_timeout_s / 4)
                    if vacuity_probe
                    else None
                )
                return finish("proved", proof, None, vacuous, [index])
            # a header or statement that cannot be proved as written
            if r.status is Status.UNAVAILABLE or stage_of(r) in ("header", "statement"):
                return finish("error", None, fm)
            if fm is not None:
                kinds[fm.kind.value] += 1
                last_failure = fm
        status = "timeout" if elapsed() >= budget_seconds else "failed"
        failure = last_failure
        if kinds:
            common = kinds.most_common(1)[0][0]
            failure = FailureMode(
                FailureKind(common),
                f"no proof within {calls} verifier calls; most common failure: {common}",
            )
        return finish(status, None, failure)
    finally:
        if own:
            writer.close()


def _vacuous(verifier: Verifier, header: str, statement: str, timeout: float) -> bool:
    """The search's vacuity probe: the hypotheses alone prove anything. Outside the budget."""
    return any(
        verifier.check(header, statement, proof, timeout).ok
        for proof in probe_proofs(verifier.backend, statement)
    )
