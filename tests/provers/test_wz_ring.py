"""WZ: the sparse-polynomial core of Zeilberger's algorithm and the structural term ratios."""

from __future__ import annotations

import pytest
import sympy as sp

from lemmata.provers.wz import _ring
from lemmata.provers.wz.identity import N
from lemmata.provers.wz.zeilberger import hypergeometric_quotient, shift_ratio, zeilberger

K = sp.Symbol("k", integer=True)
M = sp.Symbol("m", integer=True)
SUMMANDS = [
    sp.binomial(N, K) ** 3,
    sp.binomial(N, K) ** 2 * sp.binomial(N + K, K) ** 2,
    (-1) ** K * sp.binomial(N, K) * sp.binomial(2 * K, K) / 4**K,
    sp.binomial(N, 2 * K) * sp.binomial(2 * K, K) * 2 ** (N - 2 * K),
    sp.binomial(K, M) * sp.binomial(N - K, 3),
    sp.factorial(K) * K,
]


@pytest.mark.parametrize("summand", SUMMANDS, ids=str)
@pytest.mark.parametrize("with_candidates", [True, False])
def test_gosper_normal_form(summand: sp.Expr, with_candidates: bool) -> None:
    variables = tuple(sorted(summand.free_symbols | {N, K}, key=str))
    ratio = shift_ratio(summand, K, variables)
    field, _ = _ring.ring_for((K, N, *(v for v in variables if v not in (K, N))))
    kr = field.ring.gens[0]
    element = _ring.from_ratio(field, ratio)
    candidates = _ring.irreducible_parts(ratio, field.ring) if with_candidates else None
    A, B, C = _ring.gosper_normal(element.numer, element.denom, candidates)
    # num/den = A/B * C(k+1)/C(k) ...
    assert element.numer * B * C == element.denom * A * C.compose(kr, kr + 1)
    # ... and A(k), B(k+h) share no factor for any h >= 1.
    for h in range(1, 12):
        assert A.gcd(B.compose(kr, kr + h)).degree(kr) <= 0


@pytest.mark.parametrize("summand", SUMMANDS, ids=str)
def test_term_ratios_agree_with_the_numbers(summand: sp.Expr) -> None:
    variables = tuple(sorted(summand.free_symbols | {N, K}, key=str))
    rk = shift_ratio(summand, K, variables)
    values = {N: 9, M: 2}
    for k0 in (2, 3):
        here = summand.subs(values).subs(K, k0)
        if here != 0:
            assert rk.subs(values).subs(K, k0) == summand.subs(values).subs(K, k0 + 1) / here


def test_quotients_of_hypergeometric_terms() -> None:
    term = sp.binomial(2 * N + 2, N + 1) * sp.factorial(N + 3) / 4 ** (N + 1)
    base = sp.binomial(2 * N, N) * sp.factorial(N) / 2 ** (2 * N)
    q = hypergeometric_quotient(term, base)
    assert q is not None and q.is_rational_function(N)
    for n0 in (0, 1, 5):
        assert q.subs(N, n0) == (term / base).subs(N, n0)
    assert hypergeometric_quotient(2**N * sp.factorial(N), sp.factorial(N)) is None
    assert hypergeometric_quotient(sp.factorial(2 * N), sp.factorial(N)) is None
    assert hypergeometric_quotient(sp.harmonic(N), sp.Integer(1)) is None


def test_every_certificate_found_verifies() -> None:
    for summand in SUMMANDS[:5]:
        rec = zeilberger(summand, N, K)
        assert rec is not None
        variables = tuple(sorted(summand.free_symbols | {N, K}, key=str))
        rk = shift_ratio(summand, K, variables)
        rn = shift_ratio(summand, N, variables)
        u, lhs = sp.Integer(1), rec.coeffs[0]
        for i in range(1, rec.order + 1):
            u = u * rn.subs(N, N + i - 1)
            lhs += rec.coeffs[i] * u
        R = rec.certificate
        assert sp.cancel(lhs - (R.subs(K, K + 1) * rk - R)) == 0, summand
