"""Gosper's algorithm and Zeilberger's creative telescoping, over polynomial arithmetic.

For a summand ``F(n, k)`` hypergeometric in both ``n`` and ``k``, :func:`zeilberger` looks for
polynomials ``a_0(n), ..., a_r(n)`` and a rational certificate ``R(n, k)`` with

    sum_i a_i(n) F(n+i, k) = G(n, k+1) - G(n, k),      G = R F,

trying r = 1, 2, ... . Each order is one parametrised Gosper problem: write
``sum_i a_i F(n+i, k) = p(k) s(k)`` with ``p`` a polynomial in ``k`` whose coefficients are
linear in the unknown ``a_i`` and ``s`` hypergeometric in ``k``; put the ratio ``s(k+1)/s(k)``
in Gosper's normal form ``A(k)/B(k) * C(k+1)/C(k)``; solve
``A(k) x(k+1) - B(k-1) x(k) = p(k) C(k)`` for a polynomial ``x`` of bounded degree together
with the ``a_i``, one linear system over the field Q(n, parameters)
(:class:`~sympy.polys.matrices.DomainMatrix`). Then ``R = B(k-1) x(k) / (C(k) L(k))``.

No generic ``simplify`` runs here: ratios of the summand are rational functions (found with
``combsimp`` once), and everything after is ``Poly`` arithmetic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sympy as sp
from sympy.concrete.gosper import gosper_normal
from sympy.polys.matrices import DomainMatrix

__all__ = ["NotHypergeometric", "Recurrence", "gosper", "shift_ratio", "wz_pair", "zeilberger"]


class NotHypergeometric(ValueError):
    """A ratio of consecutive terms is not a rational function."""


@dataclass(frozen=True)
class Recurrence:
    """``sum_i coeffs[i] * F(n+i, k) = G(n, k+1) - G(n, k)`` with ``G = certificate * F``."""

    coeffs: tuple[sp.Expr, ...]
    certificate: sp.Expr
    order: int
    seconds: float
    method: str = "zeilberger"

    def as_text(self, name: str = "S", rhs: sp.Expr | int = 0) -> str:
        """``(a_0)*S(n) + (a_1)*S(n+1) + ... = rhs``."""
        terms = [
            f"({sp.factor(c)})*{name}({'n' if i == 0 else f'n+{i}'})"
            for i, c in enumerate(self.coeffs)
        ]
        return " + ".join(terms) + f" = {rhs}"


def shift_ratio(expr: sp.Expr, var: sp.Symbol, variables: tuple[sp.Symbol, ...]) -> sp.Expr:
    """``expr(var+1) / expr(var)`` as a rational function of ``variables``, or raise."""
    ratio = sp.cancel(sp.combsimp(sp.powsimp(expr.subs(var, var + 1) / expr, force=True)))
    if not ratio.is_rational_function(*variables):
        raise NotHypergeometric(
            f"{expr} is not hypergeometric in {var}: the ratio {ratio} is not rational"
        )
    return ratio


def _degree_bound(a: sp.Poly, b1: sp.Poly, deg_c: int) -> int | None:
    """Gosper's bound on deg x in ``a(k) x(k+1) - b1(k) x(k) = c(k)``; ``None``: no solution."""
    na, nb = a.degree(), b1.degree()
    candidates = []
    if na != nb or a.LC() != b1.LC():
        candidates.append(deg_c - max(na, nb))
    elif na == 0:
        candidates += [deg_c - na + 1, 0]
    else:
        candidates.append(deg_c - na + 1)
        extra = sp.nsimplify((b1.nth(na - 1) - a.nth(na - 1)) / a.LC())
        if extra.is_Integer:
            candidates.append(int(extra))
    ok = [d for d in candidates if d >= 0]
    return max(ok) if ok else None


def _solve(
    k: sp.Symbol,
    domain: sp.polys.domains.Domain,
    ratio_s: sp.Expr,
    pieces: list[sp.Expr],
    fixed: list[sp.Expr] | None,
) -> tuple[list[sp.Expr], sp.Expr] | None:
    """Find ``x`` and coefficients ``c_j`` (or use ``fixed``) with
    ``A x(k+1) - B(k-1) x(k) = (sum_j c_j pieces_j) C``; return (c, B(k-1) x / C)."""
    num, den = sp.fraction(sp.cancel(ratio_s))
    A, B, C = gosper_normal(num, den, k)
    A, B, C = (sp.Poly(P.as_expr(), k, domain=domain) for P in (A, B, C))
    B1 = B.shift(-1)
    polys = [sp.Poly(p, k, domain=domain) for p in pieces]
    if fixed is not None:
        polys = [
            sum((c * p for c, p in zip(fixed, polys, strict=True)), sp.Poly(0, k, domain=domain))
        ]
    deg_c = max(p.degree() for p in polys) + C.degree()
    d = _degree_bound(A, B1, deg_c)
    if d is None:
        return None
    # Columns: x_0..x_d, then one per piece (its unknown coefficient).
    columns: list[sp.Poly] = []
    for j in range(d + 1):
        kj = sp.Poly(k**j, k, domain=domain)
        columns.append(A * kj.shift(1) - B1 * kj)
    columns += [-(p * C) for p in polys]
    rows = max(col.degree() for col in columns) + 1
    matrix = [[domain.zero] * len(columns) for _ in range(rows)]
    for c, col in enumerate(columns):
        for (power,), coeff in col.terms():
            matrix[power][c] = domain.convert(coeff)
    space = DomainMatrix(matrix, (rows, len(columns)), domain).nullspace()
    for vector in space.to_Matrix().tolist():
        tail = vector[d + 1 :]
        # The leading coefficient a_r must not vanish: else this is a lower order's solution.
        if fixed is None and tail[-1] == 0:
            continue
        if fixed is not None and tail[0] == 0:
            continue
        scale = 1 if fixed is None else 1 / tail[0]
        x = sum(
            (sp.sympify(v) * scale * k**j for j, v in enumerate(vector[: d + 1])), sp.Integer(0)
        )
        coeffs = [sp.sympify(v) * scale for v in tail] if fixed is None else list(fixed)
        return coeffs, sp.cancel(B1.as_expr() * x / C.as_expr())
    return None


def _domain(expr: sp.Expr, k: sp.Symbol) -> sp.polys.domains.Domain:
    others = sorted(expr.free_symbols - {k}, key=str)
    return sp.QQ.frac_field(*others) if others else sp.QQ


def gosper(term: sp.Expr, k: sp.Symbol) -> sp.Expr | None:
    """Gosper's algorithm: a rational ``R`` such that ``T = R * term`` satisfies
    ``T(k+1) - T(k) = term(k)``, or ``None`` when ``term`` has no hypergeometric
    antidifference. For example ``gosper(k * factorial(k), k) == 1/k``: ``T = k!``."""
    variables = tuple(sorted(term.free_symbols, key=str))
    ratio = shift_ratio(term, k, variables)
    found = _solve(k, _domain(ratio, k), ratio, [sp.Integer(1)], [sp.Integer(1)])
    return None if found is None else found[1]


def zeilberger(
    summand: sp.Expr,
    n: sp.Symbol,
    k: sp.Symbol,
    *,
    max_order: int = 3,
    deadline: float | None = None,
) -> Recurrence | None:
    """The first recurrence of order 1..``max_order`` that creative telescoping finds; see
    the module docstring. Raises :class:`NotHypergeometric` for summands it cannot treat."""
    variables = tuple(sorted(summand.free_symbols | {n, k}, key=str))
    rk = shift_ratio(summand, k, variables)
    rn = shift_ratio(summand, n, variables)
    for order in range(1, max_order + 1):
        if deadline is not None and time.monotonic() > deadline:
            return None
        started = time.monotonic()
        # u_i = F(n+i, k) / F(n, k), rational.
        us = [sp.Integer(1)]
        for i in range(1, order + 1):
            us.append(sp.cancel(us[-1] * rn.subs(n, n + i - 1)))
        nums, dens = zip(*(sp.fraction(u) for u in us), strict=True)
        lcm = sp.Integer(1)
        for dnm in dens:
            lcm = sp.lcm(lcm, sp.Poly(dnm, k).as_expr()) if dnm.has(k) else lcm
        lcm = sp.factor(lcm)
        pieces = [sp.cancel(nums[i] * lcm / dens[i]) for i in range(order + 1)]
        # s(k) = F(n, k) / L(k): its ratio in k.
        ratio_s = sp.cancel(rk * lcm / lcm.subs(k, k + 1))
        domain = _domain(sp.Add(ratio_s, *pieces), k)
        found = _solve(k, domain, ratio_s, pieces, None)
        if found is None:
            continue
        coeffs, part = found
        # Clear denominators so that the a_i are polynomials in n (and the parameters).
        common = sp.Integer(1)
        for c in coeffs:
            common = sp.lcm(common, sp.fraction(sp.cancel(c))[1])
        coeffs = [sp.cancel(c * common) for c in coeffs]
        content = sp.Integer(0)
        for c in coeffs:
            content = sp.gcd(content, c)
        if content != 0:
            common = common / content
            coeffs = [sp.cancel(c / content) for c in coeffs]
        coeffs = [sp.factor(c) for c in coeffs]
        certificate = sp.cancel(part * common / lcm)
        return Recurrence(tuple(coeffs), certificate, order, time.monotonic() - started)
    return None


def wz_pair(summand: sp.Expr, rhs: sp.Expr, n: sp.Symbol, k: sp.Symbol) -> Recurrence | None:
    """The first-order fast path: a WZ pair for ``F = summand / rhs``.

    Gosper on ``F(n+1, k) - F(n, k)`` (one fixed-coefficient problem, no unknown ``a_i``); if
    it succeeds, ``sum_k F(n, k)`` is constant. Returned in the summand's own terms:
    ``rhs(n+1)/rhs(n) * S(n) - S(n+1) = ...``, cleared of denominators, with the certificate
    ``R = R_wz * rhs(n+1) / rhs(n)``. ``None`` when there is no such pair (or the rhs is not
    hypergeometric in ``n``).
    """
    started = time.monotonic()
    variables = tuple(sorted(summand.free_symbols | rhs.free_symbols | {n, k}, key=str))
    try:
        rk = shift_ratio(summand, k, variables)
        rn = shift_ratio(summand, n, variables)
        rhs_ratio = shift_ratio(rhs, n, variables)
    except NotHypergeometric:
        return None
    if rhs_ratio == 0:
        return None
    u1 = sp.cancel(rn / rhs_ratio)  # F(n+1, k) / F(n, k) for the normalised F
    num, den = sp.fraction(u1)
    lcm = den if den.has(k) else sp.Integer(1)
    pieces = [sp.cancel(-lcm), sp.cancel(num * lcm / den)]
    ratio_s = sp.cancel(rk * lcm / lcm.subs(k, k + 1))
    found = _solve(
        k, _domain(sp.Add(ratio_s, *pieces), k), ratio_s, pieces, [sp.Integer(1), sp.Integer(1)]
    )
    if found is None:
        return None
    _, part = found
    r_wz = sp.cancel(part / lcm)
    # Back to the summand: a_1 S(n+1) + a_0 S(n), with a_1 = 1, a_0 = -rhs(n+1)/rhs(n).
    a0, a1 = sp.cancel(-rhs_ratio), sp.Integer(1)
    common = sp.lcm(sp.fraction(a0)[1], sp.Integer(1))
    coeffs = (sp.factor(sp.cancel(a0 * common)), sp.factor(sp.cancel(a1 * common)))
    certificate = sp.cancel(r_wz * rhs_ratio * common)
    return Recurrence(coeffs, certificate, 1, time.monotonic() - started, method="wz-pair")
