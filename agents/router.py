"""The offline router: which operation a task asks for, and its arguments, with no model.

Three signals, the first two declared by the operations themselves (:mod:`lemmata.operations`):

- **form**: each operation's extractor reads its arguments out of the text (a Coq statement, a
  sum identity, a screenshot's path, a database file, "remember that ..."); an operation whose
  extractor finds nothing cannot be run, however similar the words are;
- **nearest examples**: the task's vector (the one the agent computes once per turn) against
  every operation's description and example tasks, and against examples of requests that no
  operation serves (:data:`DECLINE_EXAMPLES`). The best similarity per operation ranks the
  operations whose extractors fired; when none fired, an operation whose examples are nearest,
  by at least ``near_at`` and ``near_margin`` above the nearest decline, is taken with the
  general argument readers below (a memory question, a note to keep, a subject to forget, a
  folder to explore);
- **memory**: questions that no extractor claims go to memory when memory has something on
  them (the agent recalls before routing and passes the best match's similarity as
  ``evidence``), or when they ask for memory in so many words ("what did I tell you about
  ..."), unless they are much nearer to a request no operation serves.

Anything else is declined, plainly. The thresholds were calibrated on the development tasks of
``benchmarks/agent_routing.py`` (its generated templates and the seen hand-written set).

>>> router = Router(load_registry(), embedder)                          # doctest: +SKIP
>>> route = router.route("Prove in Coq: forall n : nat, n + 0 = n")    # doctest: +SKIP
>>> route.operation, route.args["statement"]                            # doctest: +SKIP
('provers_prove', 'Theorem goal : forall n : nat, n + 0 = n.')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.operations import Operation, Registry

__all__ = ["DECLINE_EXAMPLES", "Route", "Router"]

#: Requests that no operation serves, one or two per kind (reminders and alarms, messages,
#: bookings and purchases, the web and general knowledge, arithmetic and school maths, writing
#: and translation, programming help, chores on files, devices), including those that share
#: words with the capabilities ("remember to", "prove", "check", "sum", a file's path). They
#: are the decline class of the nearest-example vote.
DECLINE_EXAMPLES: tuple[str, ...] = (
    "Remind me on Friday to call the bank.",
    "Set an alarm for 7 am.",
    "Start a 25 minute timer.",
    "Remember to pick up the dry cleaning after work.",
    "Don't let me forget to pay the electricity bill.",
    "Never mind, forget about it.",
    "Send a message to Dad saying happy birthday.",
    "Email the slides to my boss.",
    "Call the pharmacy and ask if my prescription is ready.",
    "Book a flight to Berlin for next Monday.",
    "Order more printer ink online.",
    "Reserve a hotel room in Madrid for two nights.",
    "Search the web for vegan lasagne recipes.",
    "What is the capital of Peru?",
    "Who painted the Mona Lisa?",
    "What's the latest news about the elections?",
    "Will it rain in London tomorrow?",
    "What time is it in Sydney right now?",
    "Do you know the words to a famous song?",
    "I can't recall which film that famous quote comes from, do you know?",
    "What is 15% of 240?",
    "Solve x^2 - 5x + 6 = 0.",
    "Differentiate cos(x) times x squared.",
    "Add up 345 and 982.",
    "Is 97 a prime number?",
    "Prove you are not a bot.",
    "What does the Pythagorean theorem say?",
    "Write a limerick about a frog.",
    "Draft a thank-you note to my teacher.",
    "Translate 'thank you very much' into Italian.",
    "Summarise the plot of a famous novel.",
    "Explain how vaccines work.",
    "Why is the ocean salty?",
    "How do I sort a dictionary by value in Python?",
    "How do I center a div with CSS on my site?",
    "Write a regex that matches email addresses.",
    "Convert photo.png to a JPEG.",
    "Rename data.csv to old_data.csv.",
    "Zip the logs folder and upload it.",
    "Delete the file temp.db from my desktop.",
    "Print the invoice.",
    "Turn up the volume.",
    "Switch off the kitchen lights.",
    "Check the tyre pressure on my car.",
    "Recommend a good podcast about history.",
    "How many calories are in an apple?",
)

# Operations whose extractor accepts any question: they are chosen by the rules below.
_MEMORY_QUESTIONS = ("memory_recall", "memory_reason")
_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:who|whom|whose|what|when|where|which|why|how|did|does|do|is|are|was|were|"
    r"has|have|had|can|could|tell me|remind me)\b",
    re.I,
)
_ASKS_MEMORY = re.compile(
    r"\b(?:remember|recall|remind me(?! to\b)|did i (?:say|tell|mention)|have i (?:said|told|mentioned)|"
    r"i (?:told|said to|mentioned to) you|you know about|in (?:your |my )?memory|"
    r"we (?:talked|spoke|discussed)|(?:based on|from|given) what you know|you know of|"
    r"what you (?:have|know|remember|stored|saved) (?:on|about)|(?:i've|i have) (?:told|said|mentioned)"
    r"(?: to)?(?: you)?)\b|\bagain\s*\?\s*$",
    re.I,
)
# Questions about the user's own life: no capability but memory can answer them.
_PERSONAL = re.compile(r"\bmy\b|\bwhy\s+(?:\w+\s+){0,2}I\b|\bshould I\b", re.I)
# Commands to search memory, whatever their grammar.
_RECALL_COMMAND = re.compile(
    r"^\s*(?:please\s+)?(?:recall|search (?:my |your )?memory|look (?:it )?up in (?:your |my )?memory|"
    r"look up\b.*\bmy\b|look up what you (?:have|know)|check (?:your |my )?memory|"
    r"what do you (?:remember|know) about)",
    re.I,
)
# Requests that say they are to be answered from memory, whatever their grammar.
_FROM_MEMORY = re.compile(
    r"\b(?:(?:based on|from|given|using) what (?:you know|you remember|i(?:'ve| have) told you)|"
    r"(?:what|everything|all) (?:i(?:'ve| have)|i) (?:told|said to|mentioned to) you)\b",
    re.I,
)
_WHY = re.compile(r"^\s*(?:please\s+)?(?:explain|why|summari[sz]e|reason about)\b", re.I)


@dataclass(frozen=True)
class Route:
    """The router's decision: ``operation`` (None when declined) and its ``args``;
    ``reason`` says why, in words a user can act on; ``scores`` are the word similarities."""

    operation: str | None
    args: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def declined(self) -> bool:
        return self.operation is None


class Router:
    """Routes tasks over ``registry`` with ``embedder`` (the offline MiniLM by default).

    ``evidence_at`` is the similarity a recalled item needs for a plain question to count as a
    memory question; ``hint_at`` the word similarity above which a decline names the operation
    the task resembles; ``near_at`` the similarity to an operation's nearest example that takes
    a task no extractor claimed, when it is at least ``near_margin`` above the nearest request
    no operation serves; ``veto_margin`` how much nearer to such a request a question must be
    for a memory cue alone ("do you remember ...") not to send it to memory, when memory's
    best match is under ``veto_below``.
    """

    def __init__(
        self,
        registry: Registry,
        embedder: Embedder,
        *,
        evidence_at: float = 0.5,
        hint_at: float = 0.45,
        near_at: float = 0.25,
        near_margin: float = 0.05,
        veto_margin: float = 0.06,
        veto_below: float = 0.3,
    ) -> None:
        self.registry = registry
        self.embedder = embedder
        self.evidence_at = evidence_at
        self.hint_at = hint_at
        self.near_at = near_at
        self.near_margin = near_margin
        self.veto_margin = veto_margin
        self.veto_below = veto_below
        self._ops: list[Operation] = list(registry)
        texts: list[str] = []
        owner: list[int] = []
        for i, op in enumerate(self._ops):
            for t in (op.summary, *op.examples):
                texts.append(t)
                owner.append(i)
        self._owner = np.asarray(owner)
        # embedded once per router (the agent keeps one); a task costs one product with them
        self._vectors = embedder.embed(texts) if texts else np.zeros((0, 1), np.float32)
        # the decline examples are embedded when first needed: the form settles most tasks
        self._decline_vectors: np.ndarray | None = None

    def similarities(self, text: str) -> dict[str, float]:
        """The best cosine similarity of ``text`` to each operation's description and examples."""
        return self._similarities(self._vector(text)) if self._ops else {}

    def decline_similarity(self, text: str) -> float:
        """The best cosine similarity of ``text`` to the requests no operation serves."""
        return self._decline(self._vector(text))

    def _vector(self, text: str) -> np.ndarray:
        # the agent embedded the task already: its embedder answers from that vector
        return np.asarray(self.embedder.embed([text])[0])

    def _similarities(self, v: np.ndarray) -> dict[str, float]:
        best = np.full(len(self._ops), -1.0)
        np.maximum.at(best, self._owner, self._vectors @ v)
        return {
            op.qualified_name: round(float(s), 4) for op, s in zip(self._ops, best, strict=True)
        }

    def _decline(self, v: np.ndarray) -> float:
        if self._decline_vectors is None:  # embedded when first needed
            self._decline_vectors = self.embedder.embed(list(DECLINE_EXAMPLES))
        return round(float(np.max(self._decline_vectors @ v)), 4)

    def route(self, text: str, *, evidence: float | None = None) -> Route:
        """Route one task; ``evidence`` is how well memory matched it (None: not looked)."""
        text = text.strip()
        if not text:
            return Route(None, reason="the task is empty: say what you want done")
        v = self._vector(text) if self._ops else None
        scores = self._similarities(v) if v is not None else {}

        def clear(name: str) -> bool:
            """The nearest examples name ``name``'s capability (its operations tell apart by
            form: a note to keep, a subject to forget, a question), well above any request
            that no operation serves."""
            capability = name.split("_", 1)[0]
            s = max((v for k, v in scores.items() if k.split("_", 1)[0] == capability), default=-1)
            return s >= self.near_at and s - decline_near >= self.near_margin

        plain = _plain(text)
        fired: list[tuple[float, Operation, dict[str, Any]]] = []
        for op in self._ops:
            if op.extract is None or op.qualified_name in _MEMORY_QUESTIONS:
                continue
            args = _extract(op, text, plain)
            if args:
                fired.append((scores.get(op.qualified_name, 0.0), op, args))
        if fired:
            fired.sort(key=lambda f: -f[0])
            sim, op, args = fired[0]
            return Route(
                op.qualified_name,
                _refine(op.qualified_name, text, args),
                sim,
                f"the task's form matches {op.qualified_name}",
                scores,
            )
        decline_near = self._decline(v) if v is not None else -1.0
        asks_memory = bool(_ASKS_MEMORY.search(text)) or bool(_RECALL_COMMAND.match(text))
        question = bool(_QUESTION.search(text)) or bool(_WHY.match(text))
        personal = question and bool(_PERSONAL.search(text))
        if _RECALL_COMMAND.match(text) or _FROM_MEMORY.search(text):
            question = True
        known = evidence is not None and evidence >= self.evidence_at
        memory_near = max(scores.get(n, -1.0) for n in _MEMORY_QUESTIONS)
        # a cue alone ("do you remember the lyrics ...") on a request no operation serves
        vetoed = (evidence is None or evidence < self.veto_below) and (
            decline_near - memory_near >= self.veto_margin
        )
        ruled = question and (asks_memory or personal or known) and not vetoed
        if not ruled:
            # a request whose form the operations' extractors did not expect, read in general
            for name in sorted(set(_READERS) & set(scores), key=lambda n: -scores[n]):
                read = _READERS[name](text) if clear(name) else None
                if read:
                    why = f"the task reads like the examples of {name}"
                    return Route(name, read, scores[name], why, scores)
        # no rule took it ("give me a rundown of what you know about ..."), but it asks for
        # memory in words and the nearest examples, of all, are memory questions
        best_near = max(scores, key=lambda k: scores[k], default=None)
        by_examples = (
            [best_near]
            if asks_memory and best_near in _MEMORY_QUESTIONS and clear(best_near)
            else []
        )
        if ruled or by_examples:
            if _WHY.match(text) or _FROM_MEMORY.search(text):
                name = "memory_reason"
            elif ruled:
                name = "memory_recall"
            else:
                name = max(by_examples, key=lambda n: scores[n])
            op_found = self.registry.find(name) or self.registry.find("memory_recall")
            if op_found is not None and op_found.extract is not None:
                args = op_found.extract(text) or {"query": text}
                why = (
                    "it reads like a question to memory"
                    if not ruled
                    else "it asks what memory holds"
                    if asks_memory
                    else "it asks about you, which only memory can answer"
                    if personal
                    else "memory knows about it"
                )
                return Route(op_found.qualified_name, args, scores.get(name, 0.0), why, scores)
        best_name, best = max(scores.items(), key=lambda kv: kv[1], default=(None, 0.0))
        if question and best_name in _MEMORY_QUESTIONS:
            return Route(
                None,
                {},
                best,
                "memory holds nothing about this question, and no other operation serves it",
                scores,
            )
        if best_name is not None and best >= self.hint_at and best > decline_near:
            op = self.registry.get(best_name)
            needs = ", ".join(
                n for n, f in op.input.model_fields.items() if f.is_required() and n != "namespace"
            )
            example = f"; for example: {op.examples[0]}" if op.examples else ""
            return Route(
                None,
                {},
                best,
                f"this looks like {best_name}, but I could not find its {needs} in the text"
                + example,
                scores,
            )
        capabilities = ", ".join(sorted({op.capability for op in self._ops}))
        return Route(
            None, {}, best, f"no operation serves this task (I can do: {capabilities})", scores
        )


# -- reading arguments: general fixes around the operations' own extractors -------------------

_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)\n?```", re.S)
_TICKS = re.compile(r"`([^`\n]+)`")


def _plain(text: str) -> str:
    """The text without Markdown code marks: fences and inline backticks around code."""
    return _TICKS.sub(r"\1", _FENCE.sub(r"\n\1\n", text)).strip()


def _code(text: str) -> str:
    """The code a request marks as code (fenced blocks, inline spans), one piece a line."""
    pieces = [m.group(1) for m in _FENCE.finditer(text)]
    pieces += [m.group(1) for m in _TICKS.finditer(_FENCE.sub(" ", text))]
    return "\n".join(p.strip() for p in pieces if p.strip())


def _extract(op: Operation, text: str, plain: str) -> dict[str, Any] | None:
    """The operation's own extractor, on the text as written and, where code marks got in
    its way (nothing found, or a backtick inside an argument), on the text without them, then
    on the marked code alone (its request words are read again by :func:`_refine`)."""
    assert op.extract is not None
    args = _run(op, text)
    if plain != text and (not args or any("`" in str(v) for v in args.values())):
        args = _run(op, plain) or args
        code = _code(text)
        if code and (not args or any("`" in str(v) for v in args.values())):
            args = _run(op, code) or args
    return args


def _run(op: Operation, text: str) -> dict[str, Any] | None:
    assert op.extract is not None
    try:
        return op.extract(text)
    except Exception:  # an extractor's bug must not stop routing
        return None


_POLITE = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|"
    r"i(?:'d| would)?\s+(?:want|need|like)\s+you\s+to\s+)?(?:please\s+)?",
    re.I,
)
_ENTITY = re.compile(r"\b(?P<k>[A-Za-z_]\w*)\s*=\s*(?P<v>\"[^\"]+\"|'[^']+'|[\w.-]*\w)")
_TYPED = re.compile(
    r"^(?:type|enter|write|put|input|fill\s+in)\s+(?P<text>.+?)\s+(?:into|in|in to|inside)\s+"
    r"(?P<target>.+)$",
    re.I,
)
# a sentence that only says where the screenshot is ("I attached it.", "Here is the image.")
_ABOUT_FILE = re.compile(
    r"^(?:i(?:'ve| have)?\s+(?:attached|uploaded|added|took|sent)|here(?:'s| is)|this is|see|"
    r"(?:the\s+)?(?:screenshot|image|picture|file)\s+is)\b[^.?!]*$",
    re.I,
)


def _refine(name: str, text: str, args: dict[str, Any]) -> dict[str, Any]:
    """General fixes to what an extractor read, for requests phrased in ways it did not
    expect; each fix reads the text's form, never a task's words."""
    out = dict(args)
    if name == "research_research":
        entity = out.get("entity")
        if not entity:
            m = _ENTITY.search(text)
            if m:
                entity = f"{m['k']}={m['v'].strip(chr(34) + chr(39))}"
        if entity:
            out["entity"] = str(entity).rstrip(".,;:!?")
    elif name in ("gui_ground", "gui_act") and isinstance(out.get("instruction"), str):
        out["instruction"] = _instruction(out["instruction"])
        if name == "gui_act" and not out.get("action"):
            m = _TYPED.match(out["instruction"])
            if m:
                typed = m["text"].strip(" ,")
                if "," in typed:  # "my username, kmorales," names what it types
                    typed = typed.split(",")[-1].strip() or typed
                elif re.match(r"(?:my|our|the|your)\s+\S+\s+\S", typed, re.I):
                    typed = typed.split()[-1]  # "my gift card number GC-7781"
                out.update(
                    instruction=re.sub(r"^(?:the|my|our)\s+", "", m["target"].strip(), flags=re.I),
                    action="type",
                    text=typed.strip("'\""),
                )
    elif name == "memory_remember" and isinstance(out.get("text"), str):
        out["text"] = re.sub(
            r"^(?:the\s+following|as\s+follows|this|these)\s*[:-]\s*", "", out["text"], flags=re.I
        )
    elif name == "provers_prove" and out.get("method") not in (None, "wz"):
        # a theorem's method, named in words; a sum identity keeps the WZ prover
        named = _method_named(text)
        if named in ("auto", "refine", "portfolio"):
            out["method"] = named
    return out


def _method_named(text: str) -> str | None:
    """The proving method a request names in words ("auto-prove", "with the portfolio")."""
    for method, words in (
        ("portfolio", r"portfolio"),
        ("refine", r"refine|refinement|repair"),
        ("wz", r"zeilberger|wz|wilf"),
        ("auto", r"auto|automatic(?:ally)?"),
    ):
        if re.search(rf"\b(?:{words})\b", text, re.I):
            return method
    return None


def _instruction(instruction: str) -> str:
    """An instruction without the asking around it and without the sentences that only say
    where the screenshot is."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", instruction) if s.strip(" .!?")]
    kept = [s for s in sentences if not _ABOUT_FILE.match(s.strip(" .!?"))] or sentences
    rest = " ".join(kept)
    rest = _POLITE.sub("", rest)
    rest = re.sub(r"^(?:this|the)\s+instruction\s*:?\s*", "", rest, flags=re.I)
    return rest.strip(" ,:;.?") or instruction


# -- readers for tasks that the nearest examples route and no extractor claimed ---------------

_REQUEST_WORDS = re.compile(
    r"\b(?:remember|memori[sz]e|memory|note|notes|save|saved|store|stored|keep|record|file|mind|"
    r"jot|log)\b",
    re.I,
)
_INTERJECTION = re.compile(
    r"^\s*(?:(?:hey|hi|hello|ok(?:ay)?|so|also|oh|btw|fyi)\b[\s!,.:]*)+", re.I
)


def _read_remember(text: str) -> dict[str, Any] | None:
    """What to keep: the part of the request that is not the asking to keep it
    ("Can you save a note: X", "Store this please - X", "X. Keep that in mind.")."""
    body = _INTERJECTION.sub("", text).strip()
    parts = [p.strip() for p in re.split(r"\s*[:\u2014]\s+|\s+-\s+|(?<=[.!?])\s+", body)]
    parts = [p for p in parts if p.strip(" .!?")]
    if len(parts) < 2:
        return None
    content = [p for p in parts if not (_REQUEST_WORDS.search(p) and len(p.split()) <= 8)]
    if not content or len(content) == len(parts):
        return None
    said = " ".join(content).strip().rstrip(".!?").strip()
    return {"text": said} if len(said.split()) >= 2 else None


_FORGET_VERB = re.compile(
    r"\b(?:forget|delete|erase|remove|wipe|drop|clear(?:\s+out)?|scrap|purge|get\s+rid\s+of|"
    r"discard|stop\s+remembering)\b\s*(?P<rest>.+)$",
    re.I | re.S,
)
_FORGET_LEAD = re.compile(
    r"^(?:(?:what|whatever|anything|everything|all)\s+(?:(?:you|i)\s+(?:\w+\s+){0,2}?)?"
    r"(?:about|on|regarding|concerning|mentioning|of)\s+|(?:the\s+)?(?:notes?|facts?|memor(?:y|ies)|"
    r"entry|entries|items?)\s+(?:about|on|of|regarding)\s+|about\s+)",
    re.I,
)


def _read_forget(text: str) -> dict[str, Any] | None:
    """What to forget: the subject after the verb ("delete what you know about X, ...")."""
    m = _FORGET_VERB.search(text)
    if not m:
        return None
    about = _FORGET_LEAD.sub("", m["rest"].strip())
    about = re.split(r",\s*|\s+(?:since|because|as)\s+", about, maxsplit=1)[0]
    about = re.sub(
        r"\s*(?:(?:from|in)\s+(?:your\s+|my\s+|the\s+)?memory|any\s?more|please)\b", "", about
    )
    about = about.strip().rstrip(".!?").strip()
    if not about or about.lower() in {"it", "that", "this", "everything", "all", "them"}:
        return None
    return {"about": about}


_FOLDER_PATH = re.compile(r"(?<![\w:/])(?P<path>~?[\w.-]*(?:/[\w.-]+)+)/?")


def _read_research(text: str) -> dict[str, Any] | None:
    """A folder of data files named by its path ("explore data/energy (CSV files)")."""
    m = _FOLDER_PATH.search(text)
    if not m or "://" in text:
        return None
    out: dict[str, Any] = {"source": m["path"]}
    return _refine("research_research", text, out)


_READERS = {
    "memory_remember": _read_remember,
    "memory_forget": _read_forget,
    "research_research": _read_research,
}
