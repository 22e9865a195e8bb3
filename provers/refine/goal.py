"""What a search needs to know about a goal: its domain, shape and size, from the goal text.

Goals arrive as the verifiers print them: hypotheses one a line (Coq ``x, y : R``, Lean
``x y : ℝ``; ``h0 : 0 < x``), then the conclusion after ``⊢``. Lean adds what Coq does not
print: a ``case`` tag on the first line, hypotheses wrapped onto indented lines, ``let``
values (``n : ℕ := 5``), and inaccessible names (``n✝``, ``a✝¹``), which count for the domain
but are not :attr:`Goal.variables`, since no tactic can name them. Nothing here asks the
verifier; the features are cheap enough to compute for every node and feed the repair policy
and the value model alike.

>>> g = parse_goal("x, y : R\\nh0 : 0 < x\\n⊢ x * y <= x ^ 2 + y ^ 2")
>>> g.domain, g.variables, g.hypotheses[0].name
('R', ('x', 'y'), 'h0')
>>> parse_goal("⊢ forall n : nat, n + 0 = n").head
'forall'
>>> g = parse_goal("case h\\nx y : ℝ\\nh₀ : 0 < x\\n⊢ x * y ≤ x ^ 2 + y ^ 2")
>>> g.domain, g.head, g.variables, [h.name for h in g.hypotheses]
('R', '<=', ('x', 'y'), ['h₀'])
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["DOMAINS", "Goal", "Hypothesis", "parse_goal"]

DOMAINS = ("nat", "Z", "R", "Q", "Prop")

_BINDER = re.compile(
    r"([A-Za-z_][\w' ,]*?)\s*:\s*(nat|Z|R|Q|Prop|ℕ|ℤ|ℝ|ℚ|Nat|Int|Real|Rat)\b(?!\.)"
)
# Lean's spellings of the number types: Mathlib's notation, and core's names (no Mathlib).
_LEAN_TYPES = {
    "ℕ": "nat",
    "Nat": "nat",
    "ℤ": "Z",
    "Int": "Z",
    "ℝ": "R",
    "Real": "R",
    "ℚ": "Q",
    "Rat": "Q",
    "Prop": "Prop",
}
# A context line's names: Coq's ``x, y``, Lean's ``x y``, Lean's ``n✝``, ``a✝¹``, ``«x y»``.
_NAMES = re.compile(r"[\w'✝«», ]+")
_INACCESSIBLE = "✝"
_CASE_TAG = re.compile(r"case \S+")
_IDENT = re.compile(r"[A-Za-z_][\w']*")
_REAL_WORDS = re.compile(
    r"\b(Rabs|sqrt|PI|sin|cos|tan|exp|ln|Rpower|IZR|INR|Rsqr|Real\.)|[√π]|\brexp\b"
)
_INT_SCOPE = re.compile(r"%Z|\bZ\.\w+|\bIZR\b")
_TRANSCENDENTAL = re.compile(r"\b(sqrt|sin|cos|tan|exp|ln|PI|Rpower|atan|Real\.\w+)|[√π]|\brexp\b")
_RELATIONS = ("<=", ">=", "<>", "≤", "≥", "≠", "<", ">", "=")


@dataclass(frozen=True)
class Hypothesis:
    name: str
    type: str


@dataclass(frozen=True)
class Goal:
    """One goal: hypotheses, conclusion, and the features derived from them."""

    text: str
    hypotheses: tuple[Hypothesis, ...]
    conclusion: str
    variables: tuple[str, ...]  # bound in the context with a number type, in order; nameable
    domain: str  # one of DOMAINS
    head: str  # forall, ->, /\\, \\/, exists, <->, ~, =, <=, <, <>, False, other
    features: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def size(self) -> int:
        return len(self.text)

    def hypotheses_with(self, pattern: str) -> list[Hypothesis]:
        rx = re.compile(pattern)
        return [h for h in self.hypotheses if rx.search(h.type)]


def _split_context(text: str) -> tuple[list[tuple[str, str]], str]:
    """``[(names, type)]`` and the conclusion of a printed goal."""
    if "⊢" in text:
        before, _, concl = text.rpartition("⊢")
    else:
        before, concl = "", text
    context: list[tuple[str, str]] = []
    for line in before.splitlines():
        if not line.strip():
            continue
        if not context and _CASE_TAG.fullmatch(line.strip()):
            continue  # Lean's ``case succ``: the goal's tag, not a hypothesis
        names, sep, typ = line.partition(" : ")
        # Lean indents a hypothesis that runs over several lines; Coq's lines come flush.
        wrapped = line[:1].isspace()
        if sep and not (context and wrapped) and _NAMES.fullmatch(names.strip()):
            context.append((names.strip(), typ.strip()))
        elif context:  # a hypothesis printed over several lines
            n, t = context[-1]
            context[-1] = (n, f"{t} {line.strip()}")
    return context, " ".join(concl.split())


def _head(concl: str) -> str:
    c = concl.strip()
    for word in ("forall", "exists", "∀", "∃"):
        if c.startswith(word):
            return {"∀": "forall", "∃": "exists"}.get(word, word)
    if c in ("False", "True"):
        return c
    if c.startswith("~") or c.startswith("¬"):
        return "~"
    depth = 0
    # The loosest top-level connective decides the head: -> then <-> then \/ then /\.
    tops: list[str] = []
    i = 0
    while i < len(c):
        ch = c[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            for op in ("<->", "->", "→", "↔", "\\/", "/\\", "∨", "∧"):
                if c.startswith(op, i):
                    tops.append(op)
                    i += len(op) - 1
                    break
        i += 1
    norm = {"→": "->", "↔": "<->", "∨": "\\/", "∧": "/\\"}
    for op in ("->", "<->", "\\/", "/\\"):
        if op in [norm.get(t, t) for t in tops]:
            return op
    for rel in _RELATIONS:
        if f" {rel} " in f" {c} ":
            return {"≤": "<=", "≥": ">=", "≠": "<>"}.get(rel, rel)
    return "other"


def parse_goal(text: str, scope: str | None = None) -> Goal:
    """Parse a printed goal; ``scope`` (``"R"``, ``"Z"``, ``"nat"``) is the open scope of the
    header, used when the goal itself names no type."""
    context, concl = _split_context(text)
    hyps: list[Hypothesis] = []
    variables: list[str] = []
    types: Counter[str] = Counter()
    for names, typ in context:
        # Lean shows a ``let`` as ``n : ℕ := 5``: the type is before the value.
        base = typ.split(" := ", 1)[0].strip()
        domain = _LEAN_TYPES.get(base, base)
        split_names = [n for n in re.split(r"[\s,]+", names) if n]
        if domain in ("nat", "Z", "R", "Q"):
            for n in split_names:
                types[domain] += 1
                if _INACCESSIBLE not in n:
                    variables.append(n)
        else:
            for n in split_names:
                hyps.append(Hypothesis(n, typ))
    for m in _BINDER.finditer(concl):
        domain = _LEAN_TYPES.get(m.group(2), m.group(2))
        if domain != "Prop":
            types[domain] += len(m.group(1).replace(",", " ").split())
    everything = " ".join([concl, *(h.type for h in hyps)])
    if _REAL_WORDS.search(everything):
        types["R"] += 1
    if _INT_SCOPE.search(everything):
        types["Z"] += 1
    if types:
        domain = types.most_common(1)[0][0]
    elif (
        any(f" {r} " in f" {everything} " for r in _RELATIONS if r != "=")
        or re.search(r"\d", everything)
        or re.search(r"[+*^-]", everything)
    ):
        domain = scope or "nat"
    else:
        domain = "Prop"
    head = _head(concl)
    bound = bool(_BINDER.search(concl))
    features = {
        "n_hyps": float(len(hyps)),
        "n_vars": float(len(variables)),
        "size": float(len(text)),
        "transcendental": float(bool(_TRANSCENDENTAL.search(everything))),
        "abs": float("Rabs" in everything or "|" in concl),
        "division": float("/" in everything),
        "power": float("^" in everything),
        "exists": float("exists" in concl or "∃" in concl),
        "conj": float("/\\" in concl or "∧" in concl),
        "disj": float("\\/" in concl or "∨" in concl),
        "hyp_conj": float(any("/\\" in h.type or "∧" in h.type for h in hyps)),
        "hyp_disj": float(any("\\/" in h.type or "∨" in h.type for h in hyps)),
        "hyp_exists": float(any("exists" in h.type or "∃" in h.type for h in hyps)),
        "hyp_eq_var": float(any(re.fullmatch(r"[A-Za-z_][\w'✝]*\s*=.*", h.type) for h in hyps)),
        "neq": float("<>" in concl or "≠" in concl),
        "nonlinear": float(bool(re.search(r"[A-Za-z_]\w*\s*\*\s*[A-Za-z_(]|\^", everything))),
        "numeric_only": float(
            not variables and not hyps and head not in ("forall", "->", "exists") and not bound
        ),
    }
    return Goal(text, tuple(hyps), concl, tuple(variables), domain, head, features)
