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

from lemmata.provers.wz.identity import N, WZIdentity
from lemmata.provers.wz.zeilberger import (
    NotHypergeometric,
    Recurrence,
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
    return sp.nsimplify(sp.Add(*terms)) if terms else sp.Integer(0)


def _equal_at(
    ident: WZIdentity, n0: int, params: dict[sp.Symbol, int]
) -> tuple[bool, sp.Expr, sp.Expr]:
    assert ident.rhs is not None
    left = _lhs_at(ident, n0, params)
    right = ident.rhs.subs({N: n0, **params})
    return sp.simplify(left - right) == 0, left, right


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
    return {
        p: _PARAMETER_VALUES[(i + offset) % len(_PARAMETER_VALUES)]
        for i, p in enumerate(ident.parameters)
    }


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

    # 1. The certificate, as an identity of rational functions.
    us = [sp.Integer(1)]
    for i in range(1, r + 1):
        us.append(sp.cancel(us[-1] * rn.subs(N, N + i - 1)))
    lhs_ratio = sp.Add(*[c * u for c, u in zip(coeffs, us, strict=True)])
    rhs_ratio = R.subs(k, k + 1) * rk - R
    ok = sp.cancel(lhs_ratio - rhs_ratio) == 0
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

    inhomogeneous = sp.factor(sp.combsimp(boundary))
    text = recurrence.as_text(rhs=inhomogeneous)
    result.inhomogeneous = inhomogeneous
    if ident.rhs is None:
        return done(
            "recurrence-only", f"the sum satisfies {text}; no closed form was given to prove"
        )

    # 3. The rhs satisfies the same recurrence, with the same inhomogeneous part.
    residue = sp.Add(*[c * ident.rhs.subs(N, N + i) for i, c in enumerate(coeffs)]) - boundary
    ok3, how = _is_zero(residue, ident.rhs)
    if not ok3 and residue.has(sp.harmonic):
        ok3, how = sp.simplify(sp.expand_func(residue)) == 0, "by expanding harmonic numbers"
    result.checks.append(Check("rhs-recurrence", ok3, f"the rhs satisfies {text} ({how})"))
    if not ok3:
        # Either the rhs is not what the sum is, or it is but we cannot show it: look further.
        deeper = range(ident.n_min + spot_checks, ident.n_min + spot_checks + _DEEP_CHECKS)
        if (bad := _refute(ident, deeper, result)) is not None:
            return done("refuted", f"the sides differ at n = {bad}")
        return done(
            "recurrence-only", f"the sum satisfies {text}, but the rhs could not be shown to"
        )

    # 4. Initial values, including n where the leading coefficient vanishes.
    lead = sp.Poly(coeffs[-1], N) if coeffs[-1].has(N) else None
    bad_n = []
    if lead is not None and not (lead.free_symbols - {N}):
        bad_n = [int(z) for z in sp.roots(lead, N) if z.is_Integer and z >= ident.n_min]
    last = max([ident.n_min + r - 1, *[z + r for z in bad_n]])
    for n0 in range(ident.n_min, last + 1):
        if ident.parameters:
            same = sp.simplify(_symbolic_lhs(ident, n0) - ident.rhs.subs(N, n0)) == 0
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
        if not _finite(right) or sp.simplify(left - right) != 0:
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


def _is_zero(expr: sp.Expr, scale: sp.Expr) -> tuple[bool, str]:
    """Whether ``expr`` vanishes identically: each term divided by ``scale`` is a rational
    function of n (hypergeometric terms), summed and cancelled; else a bounded simplify."""
    expr = sp.expand(expr)
    if expr == 0:
        return True, "identically"
    base = scale if scale != 0 else next(iter(sp.Add.make_args(expr)))
    total = sp.Integer(0)
    for term in sp.Add.make_args(expr):
        q = sp.cancel(sp.combsimp(sp.powsimp(term / base, force=True)))
        if not q.is_rational_function(*sorted(q.free_symbols, key=str)):
            simplified = sp.simplify(sp.combsimp(expr))
            return simplified == 0, "by simplification"
        total += q
    return sp.cancel(total) == 0, "term ratios are rational functions; their sum cancels"
