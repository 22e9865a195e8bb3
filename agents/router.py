"""The offline router: which operation a task asks for, and its arguments, with no model.

Two signals, both declared by the operations themselves (:mod:`lemmata.operations`):

- **form**: each operation's extractor reads its arguments out of the text (a Coq statement, a
  sum identity, a screenshot's path, a database file, "remember that ..."); an operation whose
  extractor finds nothing cannot be run, however similar the words are;
- **words**: the embedding similarity of the task to the operation's description and example
  tasks, which ranks the operations whose extractors fired and names the likely operation when
  none did (so the decline can say what is missing).

Questions that no extractor claims go to memory only when memory has something on them (the
agent recalls before routing and passes the best match's similarity as ``evidence``), or when
they ask for memory in so many words ("what did I tell you about ..."). Anything else is
declined, plainly.

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

__all__ = ["Route", "Router"]

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
    the task resembles.
    """

    def __init__(
        self,
        registry: Registry,
        embedder: Embedder,
        *,
        evidence_at: float = 0.5,
        hint_at: float = 0.45,
    ) -> None:
        self.registry = registry
        self.embedder = embedder
        self.evidence_at = evidence_at
        self.hint_at = hint_at
        self._ops: list[Operation] = list(registry)
        texts: list[str] = []
        owner: list[int] = []
        for i, op in enumerate(self._ops):
            for t in (op.summary, *op.examples):
                texts.append(t)
                owner.append(i)
        self._owner = np.asarray(owner)
        self._vectors = embedder.embed(texts) if texts else np.zeros((0, 1), np.float32)

    def similarities(self, text: str) -> dict[str, float]:
        """The best cosine similarity of ``text`` to each operation's description and examples."""
        if not self._ops:
            return {}
        v = self.embedder.embed([text])[0]
        sims = self._vectors @ v
        best = np.full(len(self._ops), -1.0)
        np.maximum.at(best, self._owner, sims)
        return {
            op.qualified_name: round(float(s), 4) for op, s in zip(self._ops, best, strict=True)
        }

    def route(self, text: str, *, evidence: float | None = None) -> Route:
        """Route one task; ``evidence`` is how well memory matched it (None: not looked)."""
        text = text.strip()
        if not text:
            return Route(None, reason="the task is empty: say what you want done")
        scores = self.similarities(text)
        fired: list[tuple[float, Operation, dict[str, Any]]] = []
        for op in self._ops:
            if op.extract is None or op.qualified_name in _MEMORY_QUESTIONS:
                continue
            try:
                args = op.extract(text)
            except Exception:  # an extractor's bug must not stop routing
                args = None
            if args:
                fired.append((scores.get(op.qualified_name, 0.0), op, args))
        if fired:
            fired.sort(key=lambda f: -f[0])
            sim, op, args = fired[0]
            return Route(
                op.qualified_name,
                args,
                sim,
                f"the task's form matches {op.qualified_name}",
                scores,
            )
        asks_memory = bool(_ASKS_MEMORY.search(text)) or bool(_RECALL_COMMAND.match(text))
        question = bool(_QUESTION.search(text)) or bool(_WHY.match(text))
        personal = question and bool(_PERSONAL.search(text))
        if _RECALL_COMMAND.match(text) or _FROM_MEMORY.search(text):
            question = True
        if question and (
            asks_memory or personal or (evidence is not None and evidence >= self.evidence_at)
        ):
            name = (
                "memory_reason"
                if _WHY.match(text) or _FROM_MEMORY.search(text)
                else "memory_recall"
            )
            op_found = self.registry.find(name) or self.registry.find("memory_recall")
            if op_found is not None and op_found.extract is not None:
                args = op_found.extract(text) or {"query": text}
                why = (
                    "it asks what memory holds"
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
        if best_name is not None and best >= self.hint_at:
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
        known = ", ".join(sorted({op.capability for op in self._ops}))
        return Route(None, {}, best, f"no operation serves this task (I can do: {known})", scores)
