"""The natural support of binomials and factorials: which boundary terms are zero.

A WZ proof telescopes ``sum_i a_i F(n+i, k) = G(n, k+1) - G(n, k)`` over the summation range
and is left with ``F`` and ``G`` at points just outside it, such as ``binomial(n, 2*n + 2)``
for ``sum_k binomial(n, 2*k)`` or ``binomial(0, m)`` for ``sum_k binomial(k, m)``. SymPy
cannot tell that these vanish (for a symbolic ``n`` it leaves ``binomial(n, 2*n)``, which is
1 at ``n = 0``), and its gamma-function forms turn them into ``1/factorial(-n)`` or
``sin(pi*m)/pi``. Here the integer variables carry lower bounds (``n >= n_min`` and the
identity's ``"assume"``), and:

- :func:`vanish_outside_support` sets to zero each ``binomial(a, b)`` with integer-valued
  arguments and ``b < 0``, or ``a >= 0`` and ``b > a``, for every admissible value, and each
  ``1/factorial(c)`` (``1/gamma(c + 1)``) with ``c < 0``;
- :func:`holds` decides ``expr == 0`` with a zero test, splitting a variable's smallest value
  off as a case of its own (``m = 0`` and ``m >= 1``) where the generic case is borderline.

Bounds are proved by linear reasoning only: an expression ``c0 + sum_i c_i x_i`` is at least
``c0 + sum_i c_i lo_i`` when every ``c_i >= 0``; anything else is "not known" and nothing is
set to zero.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

__all__ = ["Bounds", "holds", "lower_bound", "vanish_outside_support"]

#: integer variables and their lower bounds (``None``: integer, no bound)
Bounds = dict[sp.Symbol, int | None]


def _linear(expr: sp.Expr, bounds: Bounds) -> dict[sp.Expr, sp.Expr] | None:
    """``expr`` as ``{1: c0, x: c_x}`` with integer coefficients over the bounded integer
    variables, or ``None``."""
    expr = sp.expand(expr)
    if not expr.free_symbols <= set(bounds):
        return None
    poly = sp.Poly(expr, *bounds) if expr.free_symbols else None
    if poly is None:
        return {sp.Integer(1): expr} if expr.is_Integer else None
    if poly.total_degree() > 1 or not all(c.is_Integer for c in poly.coeffs()):
        return None
    out: dict[sp.Expr, sp.Expr] = {sp.Integer(1): poly.nth(*([0] * len(bounds)))}
    for i, var in enumerate(bounds):
        exps = [0] * len(bounds)
        exps[i] = 1
        out[var] = poly.nth(*exps)
    return out


def lower_bound(expr: sp.Expr, bounds: Bounds) -> sp.Integer | None:
    """A lower bound of the integer-valued ``expr`` over the admissible values, or ``None``.

    >>> n = sp.Symbol("n", integer=True)
    >>> lower_bound(2 * n + 2 - n, {n: 0})
    2
    """
    form = _linear(expr, bounds)
    if form is None:
        return None
    total = form[sp.Integer(1)]
    for var, coeff in form.items():
        if var == 1 or coeff == 0:
            continue
        low = bounds[var]
        if coeff < 0 or low is None:
            return None
        total += coeff * low
    return sp.Integer(total)


def _negative(expr: sp.Expr, bounds: Bounds) -> bool:
    low = lower_bound(-expr, bounds)
    return low is not None and low > 0


def _binomial_vanishes(a: sp.Expr, b: sp.Expr, bounds: Bounds) -> bool:
    if _linear(a, bounds) is None or _linear(b, bounds) is None:
        return False  # not integer-valued as far as we know
    if _negative(b, bounds):
        return True
    low_a = lower_bound(a, bounds)
    return low_a is not None and low_a >= 0 and _negative(a - b, bounds)


def vanish_outside_support(expr: sp.Expr, bounds: Bounds) -> sp.Expr:
    """``expr`` with the binomials and reciprocal factorials that are zero for every admissible
    value set to zero (see the module docstring).

    >>> n = sp.Symbol("n", integer=True, nonnegative=True)
    >>> vanish_outside_support(3 * sp.binomial(n, 2 * n + 2) + 1, {n: 0})
    1
    """
    mapping: dict[sp.Expr, sp.Expr] = {}
    for atom in expr.atoms(sp.binomial):
        if _binomial_vanishes(atom.args[0], atom.args[1], bounds):
            mapping[atom] = sp.Integer(0)
    for power in expr.atoms(sp.Pow):
        base, exp = power.args
        if not (exp.is_Integer and exp < 0):
            continue
        if isinstance(base, sp.factorial):
            arg = base.args[0]
        elif isinstance(base, sp.gamma):
            arg = base.args[0] - 1
        else:
            continue
        if _linear(arg, bounds) is not None and _negative(arg, bounds):
            mapping[power] = sp.Integer(0)
    return expr.xreplace(mapping) if mapping else expr


def holds(
    expr: sp.Expr,
    bounds: Bounds,
    is_zero: Callable[[sp.Expr], bool],
    *,
    splits: int = 2,
) -> tuple[bool, list[str]]:
    """Whether ``expr`` is zero for every admissible value: ``is_zero`` of the expression with
    the terms outside the support removed; where that fails, the smallest value of a bounded
    variable is split off (at most ``splits`` times along a branch). Returns the verdict and
    the cases it took (``["m = 0", "m >= 1"]``; empty when no split was needed)."""
    if is_zero(vanish_outside_support(expr, bounds)):
        return True, []
    if splits <= 0:
        return False, []
    for var, low in bounds.items():
        if low is None or not expr.has(var):
            continue
        rest = {v: b for v, b in bounds.items() if v != var}
        first, cases_first = holds(expr.subs(var, low), rest, is_zero, splits=splits - 1)
        if not first:
            continue
        beyond = {**bounds, var: low + 1}
        second, cases_second = holds(expr, beyond, is_zero, splits=splits - 1)
        if second:
            return True, [f"{var} = {low}", *cases_first, f"{var} >= {low + 1}", *cases_second]
    return False, []
