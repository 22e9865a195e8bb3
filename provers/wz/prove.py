"""A proof of ``sum_k F(n, k) = rhs(n)`` from a Zeilberger recurrence, every step checked.

Verdicts:

- ``proved``: every check below holds, and each is listed;
- ``refuted``: the two sides differ at an integer ``n >= n_min`` (the counterexample is given);
- ``recurrence-only``: the sum satisfies a recurrence, but there is no closed form to prove
  (``rhs`` absent) or the closed form could not be shown to satisfy it;
- ``not-hypergeometric``: the summand's ratios are not rational, so Zeilberger does not apply;
- ``failed``: no recurrence up to the maximum order, or a check could not be made (with why).

The checks of a proof:

1. ``certificate``: ``sum_i a_i F(n+i,k)/F(n,k) = R(n,k+1) F(n,k+1)/F(n,k) - R(n,k)``, an
   identity of rational functions (``cancel``);
2. ``telescoping``: summing over ``lo(n) <= k <= hi(n)`` gives
   ``sum_i a_i S(n+i) = G(n, hi+1) - G(n, lo) + (terms where the ranges of n+i and n differ)``;
   ``G`` at the ends is evaluated in closed form, so a pole of ``R`` where ``F`` vanishes is no
   obstacle; no pole of ``R`` may fall inside the range at the spot-checked n;
3. ``rhs-recurrence``: the rhs satisfies the same (possibly inhomogeneous) recurrence;
4. ``initial-values``: lhs = rhs exactly for the first ``r`` values of n (more where ``a_r``
   vanishes);
5. ``spot-checks``: lhs = rhs exactly, in rationals, at further n (parameters set to small
   integers).

A false identity is never ``proved``: step 5 alone refutes most, and steps 1-4 are a proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from lemmata.provers.wz._ring import from_ratio, ring_for, shift
from lemmata.provers.wz.identity import N, WZIdentity
from lemmata.provers.wz.support import holds, vanish_outside_support
from lemmata.provers.wz.zeilberger import (
    NotHypergeometric,
    Recurrence,
    hypergeometric_quotient,
    normalise_powers,
    shift_ratio,
    wz_pair,
    zeilberger,
)

__all__ = ["Check", "WZResult", "prove_identity"]

_PARAMETER_VALUES = (7, 4, 5, 3, 6, 2, 8, 9)
_DEEP_CHECKS = 24  # further n tried when the rhs fails the recurrence


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class WZResult:
    id: str
    verdict: str
    checks: list[Check] = field(default_factory=list)
    recurrence: Recurrence | None = None
    counterexample: dict[str, int] | None = None
    reason: str = ""
    elapsed_s: float = 0.0
    inhomogeneous: sp.Expr | None = None

    def to_dict(self) -> dict[str, Any]:
        rec = self.recurrence
        return {
            "id": self.id,
            "verdict": self.verdict,
            "reason": self.reason,
            "order": rec.order if rec else None,
            "method": rec.method if rec else None,
            "recurrence": [str(c) for c in rec.coeffs] if rec else None,
            "recurrence_rhs": None if self.inhomogeneous is None else str(self.inhomogeneous),
            "certificate": str(sp.factor(rec.certificate)) if rec else None,
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
            "counterexample": self.counterexample,
            "elapsed_s": round(self.elapsed_s, 4),
        }


def _lhs_at(ident: WZIdentity, n0: int, params: dict[sp.Symbol, int]) -> sp.Expr:
    lo = int(ident.lo.subs(N, n0))
    hi = int(ident.hi.subs(N, n0))
    values = {N: n0, **params}
    terms = [ident.summand.subs(values).subs(ident.k, j) for j in range(lo, hi + 1)]
    return sp.Add(*terms) if terms else sp.Integer(0)  # exact: the terms are numbers


def _equal_at(
    ident: WZIdentity, n0: int, params: dict[sp.Symbol, int]
) -> tuple[bool, sp.Expr, sp.Expr]:
    assert ident.rhs is not None
    left = _lhs_at(ident, n0, params)
    right = ident.rhs.subs({N: n0, **params})
    return _same_number(left, right), left, right


def _same_number(left: sp.Expr, right: sp.Expr) -> bool:
    """Exact equality of two numbers; ``simplify`` only for what is not a rational."""
    if left.is_Rational and right.is_Rational:
        return bool(left == right)
    return bool(sp.simplify(left - right) == 0)


def _refute(ident: WZIdentity, ns: range, result: WZResult) -> int | None:
    """Look for an n in ``ns`` where the sides differ (parameters at small integers, two sets
    alternating); record it in ``result`` and return it (``None``: none found)."""
    for offset, n0 in enumerate(ns):
        params = _param_values(ident, offset % 2)
        same, left, right = _equal_at(ident, n0, params)
        if not same:
            result.counterexample = {"n": n0, **{str(p): v for p, v in params.items()}}
            result.checks.append(
                Check("spot-checks", False, f"n={n0}: lhs = {left}, rhs = {right}")
            )
            return n0
    return None


def _param_values(ident: WZIdentity, offset: int = 0) -> dict[sp.Symbol, int]:
    """Small integers for the parameters, each at least its assumed lower bound."""
    low = dict(ident.assumptions)
    values = {}
    for i, p in enumerate(ident.parameters):
        value = _PARAMETER_VALUES[(i + offset) % len(_PARAMETER_VALUES)]
        bound = low.get(p)
        values[p] = value if bound is None or value >= bound else bound + value
    return values


def prove_identity(
    ident: WZIdentity, *, max_order: int = 3, spot_checks: int = 8, timeout_s: float = 60.0
) -> WZResult:
    """Prove, refute or classify one identity; see the module docstring."""
    started = time.monotonic()
    result = WZResult(ident.id, "failed")

    def done(verdict: str, reason: str = "") -> WZResult:
        result.verdict = verdict
        result.reason = reason
        result.elapsed_s = time.monotonic() - started
        return result

    k, F = ident.k, ident.summand
    # 5. Spot checks first: they refute a false identity at once.
    if ident.rhs is not None:
        if (
            bad := _refute(ident, range(ident.n_min, ident.n_min + spot_checks), result)
        ) is not None:
            return done("refuted", f"the sides differ at n = {bad}")
        shown = f"n = {ident.n_min}..{ident.n_min + spot_checks - 1}"
        result.checks.append(Check("spot-checks", True, f"exact equality at {shown}"))
    recurrence = None
    if ident.rhs is not None and ident.rhs != 0:
        recurrence = wz_pair(F, ident.rhs, N, k)  # the first-order fast path
    try:
        if recurrence is None:
            recurrence = zeilberger(F, N, k, max_order=max_order, deadline=started + timeout_s)
    except NotHypergeometric as exc:
        return done("not-hypergeometric", str(exc))
    if recurrence is None:
        return done("failed", f"no recurrence of order <= {max_order} (or the time limit ran out)")
    result.recurrence = recurrence
    coeffs, R, r = recurrence.coeffs, recurrence.certificate, recurrence.order
    variables = tuple(sorted(F.free_symbols | {N, k}, key=str))
    rk = shift_ratio(F, k, variables)
    rn = shift_ratio(F, N, variables)

    # 1. The certificate, as an identity of rational functions (exact arithmetic in the field
    #    Q(k, n, parameters), independent of how the recurrence was found).
    ok = _certificate_holds(coeffs, R, rk, rn, k, variables)
    result.checks.append(
        Check("certificate", ok, "sum_i a_i F(n+i,k)/F(n,k) = R(n,k+1)F(n,k+1)/F(n,k) - R(n,k)")
    )
    if not ok:
        return done("failed", "the certificate does not verify (a bug: please report it)")

    # 2. Telescoping over the range, with G at the ends in closed form.
    lo, hi = ident.lo, ident.hi
    try:
        boundary = _g_at(R, F, rk, k, hi + 1, hi) - _g_at(R, F, rk, k, lo, lo)
    except ValueError as exc:
        return done("recurrence-only", f"the boundary terms could not be evaluated: {exc}")
    for i, c in enumerate(coeffs):
        if i == 0:
            continue
        grow_hi = sp.expand(hi.subs(N, N + i) - hi)
        grow_lo = sp.expand(lo.subs(N, N + i) - lo)
        if not (grow_hi.is_Integer and grow_lo.is_Integer):
            return done("recurrence-only", "the range's ends do not move by a fixed step with n")
        shifted = F.subs(N, N + i)
        # S(n+i) counts k in [lo(n+i), hi(n+i)]; the telescoped sum counts [lo(n), hi(n)].
        for j in range(1, int(grow_hi) + 1):
            boundary += c * shifted.subs(k, hi + j)
        for j in range(0, -int(grow_hi)):
            boundary -= c * shifted.subs(k, hi - j)
        for j in range(0, int(grow_lo)):
            boundary -= c * shifted.subs(k, lo + j)
        for j in range(1, -int(grow_lo) + 1):
            boundary += c * shifted.subs(k, lo - j)
    pole_free = _no_poles_inside(ident, R) and _relation_holds(ident, coeffs, boundary)
    result.checks.append(
        Check(
            "telescoping",
            pole_free,
            "sum_i a_i S(n+i) = G(n,hi+1) - G(n,lo) + boundary terms; R has no pole "
            "inside the range at the checked n"
            if pole_free
            else "R has a pole inside the range, or the relation fails at some checked n",
        )
    )
    if not pole_free:
        return done("recurrence-only", "the telescoped relation could not be established")

    bounds = ident.bounds
    boundary = vanish_outside_support(boundary, bounds)
    support_note = ""
    if boundary != 0 and not _nonzero_somewhere(ident, boundary):
        vanishes, cases = holds(boundary, bounds, lambda e: _is_zero(e, 0, bounded=True)[0])
        if vanishes:  # zero in every admissible case: the terms lie outside the support
            boundary = sp.Integer(0)
            support_note = "; the boundary terms vanish outside the natural support" + (
                f" (cases {', '.join(cases)})" if cases else ""
            )
    inhomogeneous = sp.factor(sp.combsimp(boundary))
    text = recurrence.as_text(rhs=inhomogeneous) + support_note
    result.inhomogeneous = inhomogeneous
    if ident.rhs is None:
        return done(
            "recurrence-only", f"the sum satisfies {text}; no closed form was given to prove"
        )

    # 3. The rhs satisfies the same recurrence, with the same inhomogeneous part.
    residue = sp.Add(*[c * ident.rhs.subs(N, N + i) for i, c in enumerate(coeffs)]) - boundary
    ok3, how = False, ""
    if boundary == 0 and ident.rhs != 0:
        ok3 = _homogeneous_holds(coeffs, ident.rhs, k, variables)
        how = "rhs(n+1)/rhs(n) is rational; the recurrence divided by rhs(n) cancels"
    if not ok3:
        ok3, how = _is_zero(residue, ident.rhs)
    if not ok3 and residue.has(sp.harmonic):
        ok3, how = sp.simplify(sp.expand_func(residue)) == 0, "by expanding harmonic numbers"
    if not ok3:
        ok3, cases = holds(residue, bounds, lambda e: _is_zero(e, 0, bounded=True)[0])
        how = "outside the natural support of its binomials" + (
            f", in the cases {', '.join(cases)}" if cases else ""
        )
    result.checks.append(Check("rhs-recurrence", ok3, f"the rhs satisfies {text} ({how})"))
    if not ok3:
        # Either the rhs is not what the sum is, or it is but we cannot show it: look further.
        deeper = range(ident.n_min + spot_checks, ident.n_min + spot_checks + _DEEP_CHECKS)
        if (bad := _refute(ident, deeper, result)) is not None:
            return done("refuted", f"the sides differ at n = {bad}")
        unstated = [p for p in ident.parameters if p not in dict(ident.assumptions)]
        hint = (
            f' (if {unstated[0]} is an integer, say so: "assume": '
            f'{{"{unstated[0]}": "integer >= 0"}})'
            if unstated and boundary.has(*unstated)
            else ""
        )
        return done(
            "recurrence-only",
            f"the sum satisfies {text}, but the rhs could not be shown to{hint}",
        )

    # 4. Initial values, including n where the leading coefficient vanishes.
    lead = sp.Poly(coeffs[-1], N) if coeffs[-1].has(N) else None
    bad_n = []
    if lead is not None and not (lead.free_symbols - {N}):
        bad_n = [int(z) for z in sp.roots(lead, N) if z.is_Integer and z >= ident.n_min]
    last = max([ident.n_min + r - 1, *[z + r for z in bad_n]])
    for n0 in range(ident.n_min, last + 1):
        if ident.parameters:
            gap = _symbolic_lhs(ident, n0) - ident.rhs.subs(N, n0)
            same = sp.simplify(gap) == 0 or (
                bool(ident.assumptions)
                and holds(gap, bounds, lambda e: sp.simplify(sp.expand_func(e)) == 0)[0]
            )
        else:
            same = _equal_at(ident, n0, {})[0]
        if not same:
            result.counterexample = {"n": n0}
            result.checks.append(Check("initial-values", False, f"n={n0}"))
            return done("refuted", f"the sides differ at n = {n0}")
    result.checks.append(
        Check(
            "initial-values",
            True,
            f"n = {ident.n_min}..{last}" + (" (parameters symbolic)" if ident.parameters else ""),
        )
    )
    return done("proved")


def _certificate_holds(
    coeffs: tuple[sp.Expr, ...],
    R: sp.Expr,
    rk: sp.Expr,
    rn: sp.Expr,
    k: sp.Symbol,
    variables: tuple[sp.Symbol, ...],
) -> bool:
    """``sum_i a_i F(n+i,k)/F(n,k) = R(n,k+1) F(n,k+1)/F(n,k) - R(n,k)`` in ``Q(k, n, ...)``."""
    fld, _ = ring_for((k, N, *(v for v in variables if v not in (k, N))))
    kr, nr = fld.ring.gens[:2]
    try:
        ratio_n, ratio_k = from_ratio(fld, rn), from_ratio(fld, rk)
        cert = from_ratio(fld, sp.together(R))
        a = [from_ratio(fld, sp.together(c)) for c in coeffs]
    except (ValueError, sp.PolynomialError, sp.polys.polyerrors.CoercionFailed):
        return False
    u, lhs = fld.one, a[0]
    for i in range(1, len(a)):
        u = u * shift(ratio_n, nr, i - 1)
        lhs += a[i] * u
    return lhs == shift(cert, kr, 1) * ratio_k - cert


def _homogeneous_holds(
    coeffs: tuple[sp.Expr, ...], rhs: sp.Expr, k: sp.Symbol, variables: tuple[sp.Symbol, ...]
) -> bool:
    """``sum_i a_i rhs(n+i) = 0`` for a hypergeometric ``rhs``, as ``sum_i a_i
    rhs(n+i)/rhs(n) = 0`` in ``Q(n, ...)``; ``False`` when the rhs is not hypergeometric."""
    names = tuple(sorted(set(variables) | rhs.free_symbols | {N}, key=str))
    try:
        ratio = shift_ratio(rhs, N, names)
        fld, _ = ring_for((k, N, *(v for v in names if v not in (k, N))))
        step = from_ratio(fld, ratio)
        a = [from_ratio(fld, sp.together(c)) for c in coeffs]
    except (NotHypergeometric, ValueError, sp.PolynomialError, sp.polys.polyerrors.CoercionFailed):
        return False
    nr = fld.ring.gens[1]
    u, total = fld.one, a[0]
    for i in range(1, len(a)):
        u = u * shift(step, nr, i - 1)
        total += a[i] * u
    return not total


def _nonzero_somewhere(ident: WZIdentity, expr: sp.Expr) -> bool:
    """Whether ``expr`` is a nonzero number at some admissible point (then it is not
    identically zero, and no proof of that need be tried)."""
    for offset in (2, 3):
        value = expr.subs({N: ident.n_min + offset, **_param_values(ident, offset)})
        if value.is_Number and _finite(value) and value != 0:
            return True
    return False


def _finite(value: sp.Expr) -> bool:
    return not value.has(sp.nan, sp.zoo, sp.oo, -sp.oo)


def _g_at(
    R: sp.Expr, F: sp.Expr, rk: sp.Expr, k: sp.Symbol, at: sp.Expr, inside: sp.Expr
) -> sp.Expr:
    """``G(n, at) = R F`` at ``k = at``, evaluating ``F`` at ``inside``, a point of the range
    next to ``at`` (``at`` itself or ``at - 1``), where ``F`` is what the sum adds. Where ``R``
    has a pole that a zero of ``F`` cancels, the closed form of ``R F`` gives the value."""
    step = sp.expand(at - inside)
    if step == 1:
        first = sp.cancel(R.subs(k, k + 1) * rk).subs(k, inside) * F.subs(k, inside)
    else:
        first = R.subs(k, at) * F.subs(k, at)
    if _finite(first):
        return first
    closed = sp.combsimp(sp.powsimp(R * F, force=True)).subs(k, at)
    if _finite(closed):
        return closed
    raise ValueError(f"G has no finite value at k = {at}")


def _symbolic_lhs(ident: WZIdentity, n0: int) -> sp.Expr:
    lo, hi = int(ident.lo.subs(N, n0)), int(ident.hi.subs(N, n0))
    return sp.expand_func(
        sp.Add(*[ident.summand.subs(N, n0).subs(ident.k, j) for j in range(lo, hi + 1)])
    )


def _relation_holds(ident: WZIdentity, coeffs: tuple[sp.Expr, ...], boundary: sp.Expr) -> bool:
    """``sum_i a_i S(n+i) = boundary(n)``, exactly, at the first few n (parameters fixed)."""
    params = _param_values(ident)
    for n0 in range(ident.n_min, ident.n_min + 4):
        left = sp.Add(
            *[
                c.subs({N: n0, **params}) * _lhs_at(ident, n0 + i, params)
                for i, c in enumerate(coeffs)
            ]
        )
        right = boundary.subs({N: n0, **params})
        if not _finite(right) or not _same_number(left, right):
            return False
    return True


def _no_poles_inside(ident: WZIdentity, R: sp.Expr) -> bool:
    den = sp.fraction(sp.cancel(R))[1]
    for n0 in range(ident.n_min, ident.n_min + 6):
        values = {N: n0, **_param_values(ident)}
        lo, hi = int(ident.lo.subs(N, n0)), int(ident.hi.subs(N, n0))
        for j in range(lo, hi + 1):
            if (
                den.subs(values).subs(ident.k, j) == 0
                and ident.summand.subs(values).subs(ident.k, j) != 0
            ):
                return False
    return True


def _is_zero(expr: sp.Expr, scale: sp.Expr, *, bounded: bool = False) -> tuple[bool, str]:
    """Whether ``expr`` vanishes identically: each term divided by ``scale`` is a rational
    function of n (hypergeometric terms), summed and cancelled; else a bounded simplify.
    ``bounded``: no ``simplify`` (inside a case split, where the cases do the work)."""
    expr = sp.expand(expr)
    if expr == 0:
        return True, "identically"
    base = scale if scale != 0 else next(iter(sp.Add.make_args(expr)))
    total = sp.Integer(0)
    for term in sp.Add.make_args(expr):
        q = hypergeometric_quotient(term, base)
        if q is None:
            q = sp.cancel(normalise_powers(sp.combsimp(normalise_powers(term / base))))
        if not q.is_rational_function(*sorted(q.free_symbols, key=str)):
            if bounded:
                return False, "a term ratio is not rational"
            simplified = sp.simplify(sp.combsimp(expr))
            return simplified == 0, "by simplification"
        total += q
    return sp.cancel(total) == 0, "term ratios are rational functions; their sum cancels"
