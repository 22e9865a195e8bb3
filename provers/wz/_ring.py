"""Creative telescoping in sparse polynomial arithmetic (the hot path of :mod:`.zeilberger`).

Everything between the summand's two term ratios and the recurrence is done on SymPy's
sparse ``PolyElement`` / ``FracElement`` over ``QQ[k, n, parameters]``, never on ``Expr``
(``Expr``-level ``cancel`` was most of the time): shifts are ``compose``, Gosper's normal
form takes its shifts from the factors of the ratio's numerator and denominator (which are
products of a few low-degree factors for hypergeometric terms; SymPy's ``gosper_normal``
computes a resultant over ``Q(n, ...)`` instead, a hundred times slower here), and the
parametrised Gosper system is one :class:`~sympy.polys.matrices.DomainMatrix` over
``Q(n, parameters)``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import sympy as sp
from sympy.polys.fields import FracField
from sympy.polys.matrices import DomainMatrix

Poly = Any  # sympy.polys.rings.PolyElement (untyped in SymPy)


@lru_cache(maxsize=64)
def ring_for(gens: tuple[sp.Symbol, ...]) -> tuple[FracField, Any]:
    """The field ``QQ(k, n, ...)`` over ``gens`` (``k`` first) and the coefficient domain
    ``Q(n, ...)`` of the linear system (``QQ`` when there is nothing but ``k``)."""
    field = FracField(gens, sp.QQ)
    coeff = sp.QQ.frac_field(*gens[1:]) if len(gens) > 1 else sp.QQ
    return field, coeff


def shift(p: Any, gen: Any, by: int) -> Any:
    """``p(gen + by)`` for a polynomial or a rational function."""
    if by == 0:
        return p
    if hasattr(p, "numer"):
        return p.new(p.numer.compose(gen, gen + by), p.denom.compose(gen, gen + by))
    return p.compose(gen, gen + by)


def _by_power(p: Poly) -> dict[int, dict[tuple[int, ...], Any]]:
    """The coefficients of ``p`` as a polynomial in the first generator: ``{e: {rest: c}}``."""
    out: dict[int, dict[tuple[int, ...], Any]] = {}
    for monom, c in p.terms():
        out.setdefault(monom[0], {})[monom[1:]] = c
    return out


def _degree(p: Poly) -> int:
    return max((m[0] for m in p.monoms()), default=-1) if p else -1


def _shift_between(p: Poly, q: Poly) -> int | None:
    """The ``h >= 1`` with ``q(k + h)`` a multiple of ``p`` (factors of equal degree in k)."""
    d = _degree(p)
    if d < 1 or d != _degree(q):
        return None
    cp, cq = _by_power(p), _by_power(q)
    try:
        ring = p.ring
        lead_p = ring.from_dict({(0, *m): c for m, c in cp[d].items()})
        lead_q = ring.from_dict({(0, *m): c for m, c in cq[d].items()})
        next_p = ring.from_dict({(0, *m): c for m, c in cp.get(d - 1, {}).items()})
        next_q = ring.from_dict({(0, *m): c for m, c in cq.get(d - 1, {}).items()})
        # q(k+h) = lq k^d + (nq + d h lq) k^(d-1) + ...; proportional to p: h from the ratio.
        num = next_p * lead_q - next_q * lead_p
        den = lead_p * lead_q * d
        quotient, rest = num.div(den)
    except (ZeroDivisionError, ValueError):
        return None
    if rest or not quotient.is_ground:
        return None
    value = quotient.LC if quotient else sp.QQ(0)
    if value <= 0 or value.denominator != 1:
        return None
    h = int(value)
    shifted = q.compose(p.ring.gens[0], p.ring.gens[0] + h)
    return h if _degree(p.gcd(shifted)) == d else None


def irreducible_parts(ratio: sp.Expr, ring: Any) -> tuple[list[Poly], list[Poly]] | None:
    """The irreducible factors involving ``k`` of a ratio's numerator and denominator, read
    from its product form (what :func:`shift_ratio` returns) without factoring the expanded
    polynomials; ``None`` when the ratio is not such a product."""
    num: list[Poly] = []
    den: list[Poly] = []
    for factor in sp.Mul.make_args(ratio):
        base, exp = factor.as_base_exp()
        if not exp.is_Integer:
            return None
        if base.is_Number:
            continue
        try:
            poly = ring.from_expr(base)
        except ValueError:
            return None
        if _degree(poly) < 1:
            continue
        parts = [poly] if _degree(poly) == 1 else [q for q, _ in poly.factor_list()[1]]
        (num if exp > 0 else den).extend(q for q in parts if _degree(q) > 0)
    return num, den


def gosper_normal(
    num: Poly, den: Poly, candidates: tuple[list[Poly], list[Poly]] | None = None
) -> tuple[Poly, Poly, Poly]:
    """``(A, B, C)`` with ``num/den = A/B * C(k+1)/C(k)`` and ``gcd(A(k), B(k+h)) = 1`` for
    every ``h >= 1`` (Gosper's normal form, in the first generator ``k``). ``candidates``:
    polynomials among whose irreducible factors are all of ``num``'s and all of ``den``'s
    (a superset is harmless: every shift is confirmed by a gcd); without them, both are
    factored."""
    k = num.ring.gens[0]
    shifts = set()
    if candidates is None:
        factors_a = [p for p, _ in num.factor_list()[1] if _degree(p) > 0]
        factors_b = [q for q, _ in den.factor_list()[1] if _degree(q) > 0]
    else:
        factors_a, factors_b = candidates
    for p in factors_a:
        for q in factors_b:
            h = _shift_between(p, q)
            if h is not None:
                shifts.add(h)
    A, B, C = num, den, num.ring.one
    for h in sorted(shifts):
        d = A.gcd(B.compose(k, k + h))
        if _degree(d) < 1:
            continue
        A = A.exquo(d)
        B = B.exquo(d.compose(k, k - h))
        for j in range(1, h + 1):
            C = C * d.compose(k, k - j)
    return A, B, C


def _coefficient(part: dict[tuple[int, ...], Any], coeff: Any, ring: Any) -> Any:
    """A ``k``-free coefficient as an element of the system's domain ``Q(n, ...)``."""
    if coeff == sp.QQ:
        return sp.QQ(part.get((), 0)) if part else sp.QQ(0)
    poly = coeff.field.ring.from_dict(part) if part else coeff.field.ring.zero
    return coeff.field(poly)


def _degree_bound(a: Poly, b1: Poly, deg_c: int, coeff: Any) -> int | None:
    """Gosper's bound on deg x in ``a(k) x(k+1) - b1(k) x(k) = c(k)``; ``None``: none."""
    na, nb = _degree(a), _degree(b1)
    ca, cb = _by_power(a), _by_power(b1)
    lead_a = _coefficient(ca[na], coeff, a.ring)
    lead_b = _coefficient(cb[nb], coeff, a.ring)
    candidates = []
    if na != nb or lead_a != lead_b:
        candidates.append(deg_c - max(na, nb))
    elif na == 0:
        candidates += [deg_c - na + 1, 0]
    else:
        candidates.append(deg_c - na + 1)
        extra = (
            _coefficient(cb.get(na - 1, {}), coeff, a.ring)
            - _coefficient(ca.get(na - 1, {}), coeff, a.ring)
        ) / lead_a
        value = coeff.to_sympy(extra)
        if value.is_Integer:
            candidates.append(int(value))
    ok = [d for d in candidates if d >= 0]
    return max(ok) if ok else None


def solve(
    ratio_s: Any,
    pieces: list[Poly],
    fixed: list[int] | None,
    coeff: Any,
    candidates: tuple[list[Poly], list[Poly]] | None = None,
) -> tuple[list[Any], Poly, Any, Poly] | None:
    """Find ``x`` and ``c_j`` (or use ``fixed``) with
    ``A x(k+1) - B(k-1) x(k) = (sum_j c_j pieces_j) C``. Returns ``(c, B(k-1), x, C)`` with
    ``c`` and the coefficients of ``x`` (lowest power first) in ``Q(n, ...)``."""
    A, B, C = gosper_normal(ratio_s.numer, ratio_s.denom, candidates)
    ring = A.ring
    k = ring.gens[0]
    B1 = B.compose(k, k - 1)
    if fixed is not None:
        pieces = [sum((c * p for c, p in zip(fixed, pieces, strict=True)), ring.zero)]
    deg_c = max(_degree(p) for p in pieces) + _degree(C)
    d = _degree_bound(A, B1, deg_c, coeff)
    if d is None:
        return None
    columns = []
    for j in range(d + 1):
        kj = k**j
        columns.append(A * shift(kj, k, 1) - B1 * kj)
    columns += [-(p * C) for p in pieces]
    rows = max(_degree(col) for col in columns) + 1
    matrix = [[coeff.zero] * len(columns) for _ in range(rows)]
    for c, col in enumerate(columns):
        for power, part in _by_power(col).items():
            matrix[power][c] = _coefficient(part, coeff, ring)
    # Fraction-free elimination over the polynomial ring Q[n, ...]: the entries are
    # polynomials, and the ring's arithmetic avoids a gcd per operation.
    system = DomainMatrix(matrix, (rows, len(columns)), coeff)
    if coeff != sp.QQ:
        system = system.convert_to(coeff.get_ring())
    space = system.nullspace().convert_to(coeff)
    for vector in space.to_list():
        tail = vector[d + 1 :]
        if fixed is None and not tail[-1]:
            continue  # a_r = 0: a lower order's solution
        if fixed is not None and not tail[0]:
            continue
        scale = coeff.one if fixed is None else coeff.one / tail[0]
        x = [v * scale for v in vector[: d + 1]]
        coeffs = [v * scale for v in tail] if fixed is None else [coeff.one]
        return coeffs, B1, x, C
    return None


def lift(value: Any, coeff: Any, field: FracField) -> Any:
    """An element of ``Q(n, ...)`` as an element of ``QQ(k, n, ...)``."""
    if coeff == sp.QQ:
        return field(value)
    ring = field.ring

    def up(poly: Poly) -> Poly:
        return ring.from_dict({(0, *m): c for m, c in poly.terms()})

    return field.new(up(value.numer), up(value.denom))


def clear_denominators(values: list[Any], coeff: Any) -> tuple[list[Poly], Any]:
    """Polynomials ``p_i = s * values_i`` without common content, and the scale ``s``."""
    ring = coeff.field.ring
    common = ring.one
    for v in values:
        common = common.lcm(v.denom)
    polys = [v.numer * common.exquo(v.denom) for v in values]
    content = ring.zero
    for p in polys:
        content = content.gcd(p)
    if content:
        polys = [p.exquo(content) for p in polys]
    else:
        content = ring.one
    return polys, coeff.field.new(common, content)


def from_ratio(field: FracField, ratio: sp.Expr) -> Any:
    """A rational ``Expr`` (a product of low-degree factors, as :func:`shift_ratio` gives it)
    as a field element: numerator and denominator expanded in the ring, one cancellation."""
    num, den = sp.fraction(ratio)
    return field.new(field.ring.from_expr(num), field.ring.from_expr(den))


def factored(poly: Poly) -> sp.Expr:
    """A polynomial as a product of its irreducible factors (an ``Expr``), for display."""
    unit, factors = poly.factor_list()
    return sp.Mul(poly.ring.domain.to_sympy(unit), *[sp.Pow(f.as_expr(), e) for f, e in factors])
