"""Tactic portfolios: the proofs tried, cheapest first, for a theorem given without one.

Each backend has closers (tactics that finish a goal), prefixes that prepare it (``intros``,
``simpl``), and induction on the statement's obviously inductive variables (the ``nat`` and
``list`` binders). The search stops at the first candidate the verifier accepts.

>>> candidates("coq", "Theorem t : forall n m : nat, n + m = m + n.")[:3]
['reflexivity.', 'trivial.', 'auto.']
>>> any(c.startswith("intros; induction n") for c in candidates("coq", "Theorem t : forall n : nat, n + 0 = n."))
True
"""

from __future__ import annotations

import re

__all__ = ["candidates", "inductive_variables"]

_COQ_CLOSERS = (
    "reflexivity",
    "trivial",
    "auto",
    "easy",
    "tauto",
    "intuition",
    "congruence",
    "lia",
    "discriminate",
    "firstorder",
    "auto with arith",
    "ring",
    "nia",
    "constructor",
    "eexists; reflexivity",
    "eauto",
)
_COQ_PREFIXES = ("", "intros; ", "intros; simpl; ", "simpl; ", "split; ")
_COQ_AFTER_INDUCTION = (
    "auto",
    "lia",
    "congruence",
    "intuition",
    "try rewrite {ih}; auto",
    "try rewrite {ih}; lia",
    "try rewrite <- {ih}; auto",
    "try rewrite {ih}; reflexivity",
)

_LEAN_CLOSERS = (
    "rfl",
    "trivial",
    "decide",
    "simp",
    "omega",
    "norm_num",
    "linarith",
    "tauto",
    "simp_all",
    "aesop",
    "ring",
    "positivity",
    "exact?",
)
_LEAN_PREFIXES = ("", "intro; ", "intros; ", "constructor <;> ")
_LEAN_AFTER_INDUCTION = (
    "simp",
    "simp [*]",
    "simp_all",
    "omega",
    "simp [*] <;> omega",
    "simp_all <;> ring",
)

_INDUCTIVE_TYPES = r"(nat|list\s+\w+|Nat|List\s+\w+|ℕ)"


def inductive_variables(statement: str) -> list[str]:
    """Names bound with an inductive type (``nat``, ``list A``, ``Nat``, ``List α``, ``ℕ``),
    in the order they appear: ``forall (n m : nat)``, ``(l : list nat)``, ``∀ n : ℕ``."""
    names: list[str] = []
    for group in re.finditer(rf"([\w' ]+?)\s*:\s*{_INDUCTIVE_TYPES}\b", statement):
        words = re.sub(r"^.*(forall|∀|\(|\{)", "", group.group(1)).split()
        for word in words:
            if (
                re.fullmatch(r"[A-Za-z_][\w']*", word)
                and word not in names
                and word not in {"forall", "fun"}
            ):
                names.append(word)
    return names


def candidates(backend: str, statement: str) -> list[str]:
    """The proofs to try for ``statement``, cheapest first, each a complete proof text."""
    variables = inductive_variables(statement)
    out: list[str] = []
    if backend == "coq":
        for prefix in _COQ_PREFIXES:
            out += [f"{prefix}{c}." for c in _COQ_CLOSERS]
        for v in variables:
            for after in _COQ_AFTER_INDUCTION:
                out.append(f"intros; induction {v}; simpl; {after.format(ih='IH' + v)}.")
    elif backend == "lean":
        for prefix in _LEAN_PREFIXES:
            out += [f"by\n  {prefix}{c}" for c in _LEAN_CLOSERS]
        for v in variables:
            for after in _LEAN_AFTER_INDUCTION:
                out.append(f"by\n  induction {v} <;> {after}")
    else:
        raise ValueError(f"no portfolio for backend {backend!r}")
    return list(dict.fromkeys(out))
