"""Lean 4 proof sketches of WZ proofs, in Mathlib style, and what Lean said of them.

For a ``proved`` identity the sketch defines ``F`` (the summand), ``R`` (the certificate),
``G = R * F`` and the recurrence's coefficients, then states each obligation as a lemma:

- ``wz_step``: the pointwise equation ``sum_i a_i F(n+i,k) = G(n,k+1) - G(n,k)`` on the range;
- ``telescope``: its sum over the range (``Finset.sum_range_sub``);
- ``rhs_recurrence``: the closed form satisfies the same recurrence;
- ``initial_values``: the first values agree;
- ``main``: the identity, by induction on ``n`` from the recurrence.

Every proof is a tactic attempt with ``sorry`` as its last resort
(``first | (field_simp; ring) | ... | sorry``), so the file always elaborates and Lean's
``declaration uses 'sorry'`` warnings say which obligations are still open:
:func:`obligation_report` reads them from the REPL's reply. Natural subtraction and
``x / 0 = 0`` are why the range hypotheses (``k ≤ n``...) are stated.
"""

from __future__ import annotations

import re
from typing import Any

import sympy as sp

from lemmata.provers.wz.identity import WZIdentity
from lemmata.provers.wz.prove import WZResult

__all__ = ["OBLIGATIONS", "lean_expr", "lean_sketch", "obligation_report"]

OBLIGATIONS = ("wz_step", "telescope", "rhs_recurrence", "initial_values", "main")
_ATTEMPT = "first | (field_simp; ring) | (simp [Nat.choose_succ_succ, Nat.factorial_succ]; ring) | omega | positivity | sorry"


class _Unsupported(ValueError):
    pass


def _nat(e: sp.Expr) -> str:
    """An integer-valued expression in ℕ arithmetic (binomial and factorial arguments)."""
    if e.is_Integer:
        if e < 0:
            raise _Unsupported(f"negative natural {e}")
        return str(e)
    if e.is_Symbol:
        return str(e)
    if e.is_Add:
        pos = [t for t in e.args if not (t.could_extract_minus_sign())]
        neg = [-t for t in e.args if t.could_extract_minus_sign()]
        text = " + ".join(_nat(t) for t in pos) or "0"
        for t in neg:
            text = f"({text} - {_nat(t)})"
        return f"({text})"
    if e.is_Mul:
        return "(" + " * ".join(_nat(t) for t in e.args) + ")"
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        return f"({_nat(e.base)} ^ {e.exp})"
    raise _Unsupported(f"{e} is not a natural-number expression")


def lean_expr(e: sp.Expr) -> str:
    """A SymPy expression as a Lean term of type ℚ (ℕ variables cast)."""
    e = sp.sympify(e)
    if e.is_Integer:
        return f"({e} : ℚ)"
    if e.is_Rational:
        return f"(({e.p} : ℚ) / {e.q})"
    if e.is_Symbol:
        return f"({e} : ℚ)"
    if isinstance(e, sp.binomial):
        return f"(Nat.choose {_nat(e.args[0])} {_nat(e.args[1])} : ℚ)"
    if isinstance(e, sp.factorial):
        return f"(Nat.factorial {_nat(e.args[0])} : ℚ)"
    if isinstance(e, sp.harmonic):
        return f"(∑ i ∈ Finset.range {_nat(e.args[0])}, (1 : ℚ) / (i + 1))"
    if isinstance(e, sp.fibonacci):
        return f"(Nat.fib {_nat(e.args[0])} : ℚ)"
    if e.is_Add:
        return "(" + " + ".join(lean_expr(t) for t in e.args) + ")"
    if e.is_Mul:
        num, den = sp.fraction(e)
        if den != 1:
            return f"({lean_expr(num)} / {lean_expr(den)})"
        return "(" + " * ".join(lean_expr(t) for t in e.args) + ")"
    if e.is_Pow:
        base, exp = e.args
        if exp.is_Integer and exp < 0:
            return f"(1 / {lean_expr(base**-exp)})"
        if exp.is_Integer:
            return f"({lean_expr(base)} ^ {exp})"
        return f"({lean_expr(base)} ^ {_nat(exp)})"
    raise _Unsupported(f"no Lean rendering for {type(e).__name__}: {e}")


def _binders(ident: WZIdentity) -> tuple[str, str]:
    """Lean binders and arguments for the parameters (ℕ: they appear in binomials)."""
    names = [str(p) for p in ident.parameters]
    return ("".join(f" ({p} : ℕ)" for p in names), "".join(f" {p}" for p in names))


def lean_sketch(ident: WZIdentity, result: WZResult) -> str:
    """The Lean 4 file for a proved identity; see the module docstring."""
    rec = result.recurrence
    assert rec is not None and ident.rhs is not None, "sketches are written for proved identities"
    k = ident.k
    kn = sp.Symbol("k", integer=True, nonnegative=True)
    try:
        F = lean_expr(ident.summand.subs(k, kn))
        R = lean_expr(sp.factor(rec.certificate).subs(k, kn))
        rhs = lean_expr(ident.rhs)
        coeffs = [lean_expr(c) for c in rec.coeffs]
        lo, hi = _nat(ident.lo), _nat(ident.hi)
        inhom = lean_expr(result.inhomogeneous if result.inhomogeneous is not None else 0)
    except _Unsupported as exc:
        return f"-- {ident.id}: no Lean sketch: {exc}\n"
    binders, args = _binders(ident)
    r = rec.order
    name = re.sub(r"\W", "_", ident.id)
    step_lhs = " + ".join(f"a{i} n{args} * F (n + {i}){args} k" for i in range(r + 1))
    rec_lhs = " + ".join(f"a{i} n{args} * rhs (n + {i}){args}" for i in range(r + 1))
    lines = [
        "import Mathlib",
        "",
        "/-!",
        f"# {ident.id}",
        "",
        f"`∑ k ∈ Finset.Icc {lo} {hi}, F n k = rhs n` for `n ≥ {ident.n_min}`: a WZ proof plan written by",
        f"lemmata (Zeilberger's algorithm, a recurrence of order {r}). Checked symbolically already:",
        *[f"- {c.name}: {c.detail}" for c in result.checks],
        "Each obligation below tries tactics and falls back to `sorry`; Lean's",
        "`declaration uses 'sorry'` warnings name the ones still open.",
        "-/",
        "",
        "open Finset BigOperators",
        "",
        f"namespace Lemmata.WZ.{name}",
        "",
        f"/-- The summand `{ident.summand}`. -/",
        f"noncomputable def F (n : ℕ){binders} (k : ℕ) : ℚ := {F}",
        "",
        f"/-- The certificate `R(n, k) = {sp.factor(rec.certificate)}`; `x / 0 = 0` off the range. -/",
        f"noncomputable def R (n : ℕ){binders} (k : ℕ) : ℚ := {R}",
        "",
        f"noncomputable def G (n : ℕ){binders} (k : ℕ) : ℚ := R n{args} k * F n{args} k",
        "",
        f"/-- The closed form `{ident.rhs}`. -/",
        f"noncomputable def rhs (n : ℕ){binders} : ℚ := {rhs}",
        "",
        *[f"noncomputable def a{i} (n : ℕ){binders} : ℚ := {c}" for i, c in enumerate(coeffs)],
        "",
        "/-- The pointwise WZ equation on the range. -/",
        f"lemma wz_step (n : ℕ){binders} (k : ℕ) (hk : {lo} ≤ k ∧ k ≤ {hi}) :",
        f"    {step_lhs} = G n{args} (k + 1) - G n{args} k := by",
        f"  simp only [F, G, R, {', '.join(f'a{i}' for i in range(r + 1))}]",
        f"  {_ATTEMPT}",
        "",
        "/-- Summed over the range, the right side telescopes. -/",
        f"lemma telescope (n : ℕ){binders} :",
        f"    ∑ k ∈ Finset.Icc {lo} {hi}, ({step_lhs}) = G n{args} ({hi} + 1) - G n{args} {lo} := by",
        f"  rw [Finset.sum_congr rfl (fun k hk => wz_step n{args} k (Finset.mem_Icc.mp hk))]",
        "  first | (rw [← Nat.Ico_succ_right, Finset.sum_Ico_eq_sum_range]; simp [Finset.sum_range_sub]) | sorry",
        "",
        "/-- The closed form satisfies the same recurrence (with its boundary terms). -/",
        f"lemma rhs_recurrence (n : ℕ){binders} (hn : {ident.n_min} ≤ n) :",
        f"    {rec_lhs} = {inhom} := by",
        f"  simp only [rhs, {', '.join(f'a{i}' for i in range(r + 1))}]",
        f"  {_ATTEMPT}",
        "",
        "/-- The first values agree. -/",
        f"lemma initial_values{binders} : ∀ n, {ident.n_min} ≤ n → n < {ident.n_min + r} →",
        f"    ∑ k ∈ Finset.Icc {lo} {hi}, F n{args} k = rhs n{args} := by",
        "  intro n h1 h2",
        "  first | (interval_cases n <;> simp [F, rhs, Finset.sum_Icc_succ_top] <;> norm_num) | sorry",
        "",
        "/-- The identity. -/",
        f"theorem main (n : ℕ){binders} (hn : {ident.n_min} ≤ n) :",
        f"    ∑ k ∈ Finset.Icc {lo} {hi}, F n{args} k = rhs n{args} := by",
        "  induction n using Nat.strong_induction_on with",
        "  | _ n ih =>",
        f"    first | exact initial_values{args} n hn (by omega) | sorry",
        "",
        f"end Lemmata.WZ.{name}",
        "",
    ]
    return "\n".join(lines)


def obligation_report(sketch: str, messages: list[Any]) -> dict[str, str]:
    """Which obligations of a sketch Lean closed: ``{"wz_step": "closed" | "sorry" | "error"}``.

    ``messages`` are the REPL's messages for the file (anything with ``severity``, ``text`` and
    ``line``); each is assigned to the declaration whose lines hold it.
    """
    starts: list[tuple[int, str]] = []
    for number, line in enumerate(sketch.splitlines(), start=1):
        m = re.match(r"^(?:lemma|theorem)\s+(\w+)", line)
        if m:
            starts.append((number, m.group(1)))
    report = {name: "closed" for _, name in starts}
    for msg in messages:
        at = getattr(msg, "line", None)
        if not isinstance(at, int):
            continue
        owner = next((name for start, name in reversed(starts) if start <= at), None)
        if owner is None:
            continue
        text = getattr(msg, "text", "")
        if getattr(msg, "severity", "") == "error":
            report[owner] = "error"
        elif "sorry" in text and report[owner] != "error":
            report[owner] = "sorry"
    return report
