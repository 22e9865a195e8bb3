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

No generic ``simplify`` runs here. The summand's term ratios are read off its factors
(:func:`shift_ratio`: binomials, factorials and powers give their ratios directly, and powers
of numbers are compared over prime bases, so ``4**k`` and ``2**(2*k)`` agree; ``combsimp``
only for other shapes) and cached; everything after is sparse polynomial arithmetic
(:mod:`lemmata.provers.wz._ring`), with the linear system solved fraction-free over
``Q[n, parameters]``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from lemmata.provers.wz import _ring

__all__ = [
    "NotHypergeometric",
    "Recurrence",
    "gosper",
    "hypergeometric_quotient",
    "normalise_powers",
    "shift_ratio",
    "wz_pair",
    "zeilberger",
]


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


class _NotStructural(ValueError):
    """A factor the structural ratio does not know; the generic path takes over."""


def _step(arg: sp.Expr, var: sp.Symbol) -> int:
    step = sp.expand(arg.subs(var, var + 1) - arg)
    if not step.is_Integer:
        raise _NotStructural(f"{arg} does not move by an integer step with {var}")
    return int(step)


def _gamma_shift(x: sp.Expr, s: int) -> sp.Expr:
    """``gamma(x + s) / gamma(x)`` for an integer ``s``, as a rational function of ``x``."""
    if s >= 0:
        return sp.Mul(*[x + j for j in range(s)])
    return 1 / sp.Mul(*[x - j for j in range(1, -s + 1)])


def _factor_ratio(f: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """``f(var+1) / f(var)`` for a product of powers, factorials, gammas, binomials, rising and
    falling factorials and rational functions, read off the structure (no ``combsimp``);
    every power of a number ``b**e(var)`` contributes ``b**(e(var+1) - e(var))``, so that
    ``4**k`` and ``2**(2*k)`` give the same ratio."""
    if not f.has(var):
        return sp.Integer(1)
    if f.is_Mul:
        return sp.Mul(*[_factor_ratio(g, var) for g in f.args])
    if f.is_Pow:
        base, exp = f.as_base_exp()
        if not base.has(var):
            diff = sp.expand(exp.subs(var, var + 1) - exp)
            if diff.has(var):
                raise _NotStructural(f"{f}: the exponent is not linear in {var}")
            return sp.Pow(base, diff)
        if exp.has(var) or not exp.is_Integer:
            raise _NotStructural(f"{f}: a power of {var} with a symbolic or fractional exponent")
        return sp.Pow(_factor_ratio(base, var), exp)
    if isinstance(f, sp.factorial):
        return _gamma_shift(f.args[0] + 1, _step(f.args[0], var))
    if isinstance(f, sp.gamma):
        return _gamma_shift(f.args[0], _step(f.args[0], var))
    if isinstance(f, sp.binomial):
        a, b = f.args
        sa, sb = _step(a, var), _step(b, var)
        return _gamma_shift(a + 1, sa) / (
            _gamma_shift(b + 1, sb) * _gamma_shift(a - b + 1, sa - sb)
        )
    if isinstance(f, sp.RisingFactorial):
        x, m = f.args
        sx, sm = _step(x, var), _step(m, var)
        return _gamma_shift(x + m, sx + sm) / _gamma_shift(x, sx)
    if isinstance(f, sp.FallingFactorial):
        x, m = f.args
        sx, sm = _step(x, var), _step(m, var)
        return _gamma_shift(x + 1, sx) / _gamma_shift(x - m + 1, sx - sm)
    polynomial = (f.is_Add or f.is_Symbol) and f.is_polynomial(var)
    if polynomial and not any(a.has(var) for a in f.atoms(sp.Function)):
        return f.subs(var, var + 1) / f
    raise _NotStructural(f"{f} is not a product of hypergeometric factors in {var}")


def _gamma_form(
    f: sp.Expr,
    e: int,
    gammas: dict[sp.Expr, int],
    powers: dict[sp.Expr, sp.Expr],
    rational: list[sp.Expr],
) -> None:
    """Add ``f**e`` to a product written as gamma functions of linear arguments, powers of
    primes (and -1) with symbolic exponents, and rational factors; raise when ``f`` is none."""
    if f.is_Mul:
        for g in f.args:
            _gamma_form(g, e, gammas, powers, rational)
        return
    if f.is_Pow:
        base, exp = f.as_base_exp()
        if base.is_Rational and exp.free_symbols:
            if base < 0:
                powers[sp.Integer(-1)] = powers.get(sp.Integer(-1), 0) + e * exp
                base = -base
            for prime, mult in (*sp.factorint(base.p).items(),):
                powers[sp.Integer(prime)] = powers.get(sp.Integer(prime), 0) + e * mult * exp
            for prime, mult in (*sp.factorint(base.q).items(),):
                powers[sp.Integer(prime)] = powers.get(sp.Integer(prime), 0) - e * mult * exp
            return
        if exp.is_Integer:
            _gamma_form(base, e * int(exp), gammas, powers, rational)
            return
        raise _NotStructural(f"{f}")

    def add(*pairs: tuple[sp.Expr, int]) -> None:
        for arg, times in pairs:
            arg = sp.expand(arg)
            gammas[arg] = gammas.get(arg, 0) + times * e

    if isinstance(f, sp.factorial):
        add((f.args[0] + 1, 1))
    elif isinstance(f, sp.gamma):
        add((f.args[0], 1))
    elif isinstance(f, sp.binomial):
        a, b = f.args
        add((a + 1, 1), (b + 1, -1), (a - b + 1, -1))
    elif isinstance(f, sp.RisingFactorial):
        x, m = f.args
        add((x + m, 1), (x, -1))
    elif isinstance(f, sp.FallingFactorial):
        x, m = f.args
        add((x + 1, 1), (x - m + 1, -1))
    elif f.is_Number or (
        (f.is_Add or f.is_Symbol) and f.is_polynomial(*f.free_symbols) and not f.atoms(sp.Function)
    ):
        rational.append(f**e)
    else:
        raise _NotStructural(f"{f}")


def hypergeometric_quotient(term: sp.Expr, base: sp.Expr) -> sp.Expr | None:
    """``term / base`` as a rational function when both are products of factorials,
    binomials, gammas, rising and falling factorials, powers of numbers and polynomials whose
    gamma arguments pair up at integer distances (``gamma(a + j) = gamma(a) * (a)_j``), or
    ``None``. No ``combsimp``: the arguments are compared directly.

    >>> n = sp.Symbol("n", integer=True)
    >>> hypergeometric_quotient(sp.binomial(2 * n + 2, n + 1) / 4 ** (n + 1), sp.binomial(2 * n, n) / 2 ** (2 * n))
    (2*n + 1)/(2*n + 2)
    """
    gammas: dict[sp.Expr, int] = {}
    powers: dict[sp.Expr, sp.Expr] = {}
    rational: list[sp.Expr] = []
    try:
        _gamma_form(term, 1, gammas, powers, rational)
        _gamma_form(base, -1, gammas, powers, rational)
    except _NotStructural:
        return None
    for prime, exp in powers.items():
        exp = sp.expand(exp)
        if not exp.is_Integer:
            return None
        rational.append(sp.Pow(prime, exp))
    classes: list[tuple[sp.Expr, list[tuple[int, int]]]] = []
    for arg, times in gammas.items():
        if times == 0:
            continue
        for rep, members in classes:
            offset = sp.expand(arg - rep)
            if offset.is_Integer:
                members.append((int(offset), times))
                break
        else:
            classes.append((arg, [(0, times)]))
    for rep, members in classes:
        if sum(times for _, times in members) != 0:
            return None
        low = min(offset for offset, _ in members)
        start = rep + low  # gamma(start + j) = gamma(start) * start (start+1) ... (start+j-1)
        for offset, times in members:
            rising = sp.Mul(*[start + i for i in range(offset - low)])
            rational.append(sp.Pow(rising, times))
    return sp.cancel(sp.Mul(*rational))


def normalise_powers(expr: sp.Expr) -> sp.Expr:
    """Every power of a rational number with a symbolic exponent over prime bases, combined:
    ``4**k / 2**(2*k)`` becomes 1 and ``(-4)**k`` becomes ``(-1)**k * 2**(2*k)``, so that
    quotients of such terms are recognised as rational.

    >>> k = sp.Symbol("k", integer=True)
    >>> normalise_powers(4**k * 2 ** (-2 * k))
    1
    """
    mapping: dict[sp.Expr, sp.Expr] = {}
    for power in expr.atoms(sp.Pow):
        base, exp = power.args
        if not (base.is_Rational and exp.free_symbols) or base in (0, 1, -1):
            continue
        parts = []
        if base < 0:
            parts.append(sp.Pow(-1, exp))
            base = -base
        for prime, mult in sp.factorint(base.p).items():
            parts.append(sp.Pow(prime, mult * exp))
        for prime, mult in sp.factorint(base.q).items():
            parts.append(sp.Pow(prime, -mult * exp))
        mapping[power] = sp.Mul(*parts)
    if mapping:
        expr = expr.xreplace(mapping)
    return sp.powsimp(expr, force=True) if expr.has(sp.Pow) else expr


@lru_cache(maxsize=4096)
def shift_ratio(expr: sp.Expr, var: sp.Symbol, variables: tuple[sp.Symbol, ...]) -> sp.Expr:
    """``expr(var+1) / expr(var)`` as a rational function of ``variables``, or raise.

    Read off the factors' structure where it can be (:func:`_factor_ratio`), else by
    ``combsimp`` on the quotient with powers over prime bases. Cached: the prover asks for the
    same ratios in several steps."""
    try:
        # A product of low-degree factors: callers cancel it in their own arithmetic.
        ratio = _factor_ratio(expr, var)
    except _NotStructural:
        quotient = normalise_powers(expr.subs(var, var + 1) / expr)
        ratio = sp.cancel(normalise_powers(sp.combsimp(quotient)))
    if not ratio.is_rational_function(*variables):
        raise NotHypergeometric(
            f"{expr} is not hypergeometric in {var}: the ratio {ratio} is not rational"
        )
    return ratio


def gosper(term: sp.Expr, k: sp.Symbol) -> sp.Expr | None:
    """Gosper's algorithm: a rational ``R`` such that ``T = R * term`` satisfies
    ``T(k+1) - T(k) = term(k)``, or ``None`` when ``term`` has no hypergeometric
    antidifference. For example ``gosper(k * factorial(k), k) == 1/k``: ``T = k!``."""
    variables = tuple(sorted(term.free_symbols | {k}, key=str))
    ratio = shift_ratio(term, k, variables)
    field, coeff = _ring.ring_for((k, *(v for v in variables if v != k)))
    found = _ring.solve(_ring.from_ratio(field, ratio), [field.ring.one], [1], coeff)
    if found is None:
        return None
    _, b1, x, c = found
    kr = field.ring.gens[0]
    x_k = sum((_ring.lift(v, coeff, field) * field(kr**j) for j, v in enumerate(x)), field.zero)
    return sp.cancel((field(b1) * x_k / field(c)).as_expr())


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
    rk_expr = shift_ratio(summand, k, variables)
    rn_expr = shift_ratio(summand, n, variables)
    field, coeff = _ring.ring_for((k, n, *(v for v in variables if v not in (k, n))))
    kr, nr = field.ring.gens[:2]
    rk, rn = _ring.from_ratio(field, rk_expr), _ring.from_ratio(field, rn_expr)
    # Gosper's normal form needs the irreducible factors of s(k+1)/s(k) = rk L(k)/L(k+1): they
    # are among rk's and the n-shifts of rn's denominator's, read off the product forms.
    parts_k = _ring.irreducible_parts(rk_expr, field.ring)
    parts_n = _ring.irreducible_parts(rn_expr, field.ring)
    us = [field.one]  # u_i = F(n+i, k) / F(n, k), rational
    for order in range(1, max_order + 1):
        if deadline is not None and time.monotonic() > deadline:
            return None
        started = time.monotonic()
        us.append(us[-1] * _ring.shift(rn, nr, order - 1))
        lcm = field.ring.one
        for u in us:
            lcm = lcm.lcm(u.denom)
        pieces = [u.numer * lcm.exquo(u.denom) for u in us]
        # s(k) = F(n, k) / L(k): its ratio in k.
        ratio_s = rk * field(lcm) / field(_ring.shift(lcm, kr, 1))
        candidates = None
        if parts_k is not None and parts_n is not None:
            in_l = [_ring.shift(q, nr, j) for q in parts_n[1] for j in range(order)]
            candidates = (
                parts_k[0] + in_l,
                parts_k[1] + [_ring.shift(q, kr, 1) for q in in_l],
            )
        found = _ring.solve(ratio_s, pieces, None, coeff, candidates)
        if found is None:
            continue
        values, b1, x, c = found
        # Clear denominators so that the a_i are polynomials in n (and the parameters).
        polys, scale = _ring.clear_denominators(values, coeff)
        x_k = sum(
            (_ring.lift(v * scale, coeff, field) * field(kr**j) for j, v in enumerate(x)),
            field.zero,
        )
        certificate = field(b1) * x_k / (field(c) * field(lcm))
        coeffs = tuple(_ring.factored(p) for p in polys)
        return Recurrence(coeffs, certificate.as_expr(), order, time.monotonic() - started)
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
    others = (v for v in variables if v not in (k, n))
    field, coeff = _ring.ring_for((k, n, *others))
    kr = field.ring.gens[0]
    rk_f = _ring.from_ratio(field, rk)
    rr = _ring.from_ratio(field, rhs_ratio)
    u1 = _ring.from_ratio(field, rn) / rr  # F(n+1, k) / F(n, k) for the normalised F
    lcm = u1.denom
    ratio_s = rk_f * field(lcm) / field(_ring.shift(lcm, kr, 1))
    found = _ring.solve(ratio_s, [-lcm, u1.numer], [1, 1], coeff)
    if found is None:
        return None
    _, b1, x, c = found
    x_k = sum((_ring.lift(v, coeff, field) * field(kr**j) for j, v in enumerate(x)), field.zero)
    r_wz = field(b1) * x_k / (field(c) * field(lcm))
    # Back to the summand: a_1 S(n+1) + a_0 S(n), with a_1 = 1, a_0 = -rhs(n+1)/rhs(n).
    a0 = -rr
    coeffs = (_ring.factored(a0.numer), _ring.factored(a0.denom))
    certificate = r_wz * rr * field(a0.denom)
    return Recurrence(
        coeffs, certificate.as_expr(), 1, time.monotonic() - started, method="wz-pair"
    )
