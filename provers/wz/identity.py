"""Identities to prove: ``{"id", "lhs", "rhs", "n_min"}`` lines, read and checked.

``lhs`` is a SymPy sum ``Sum(summand, (k, lo, hi))`` over an integer ``k``; ``rhs`` a SymPy
expression (or ``null`` when no closed form is claimed); the claim is lhs = rhs for every
integer ``n >= n_min``. Other symbols are free parameters. Text is parsed with SymPy's parser
over a table of SymPy's functions only: no attribute access, no dunder names, no lambdas.

An optional ``"assume"`` object states what the identity assumes of a parameter:
``{"m": "integer >= 0"}`` (or ``"integer"``, ``"integer >= -1"``...). Such a parameter is an
integer symbol, and a binomial or factorial whose arguments leave their natural support for
every admissible value is zero in the boundary terms of the proof
(:mod:`lemmata.provers.wz.support`). ``sum_k binomial(k, m)`` needs it: for a non-integer
``m``, ``binomial(0, m)`` is not zero and the hockey stick identity is false.

>>> ident = parse_identity({"id": "binomial-sum", "lhs": "Sum(binomial(n, k), (k, 0, n))",
...                         "rhs": "2**n", "n_min": 0})
>>> ident.summand, ident.lo, ident.hi
(binomial(n, k), 0, n)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from tokenize import TokenError
from typing import Any

import sympy as sp
from sympy.parsing.sympy_parser import parse_expr, standard_transformations

__all__ = ["IdentityError", "WZIdentity", "N", "parse_identity", "read_identities"]

N = sp.Symbol("n", integer=True, nonnegative=True)
_K = sp.Symbol("k", integer=True)
_FORBIDDEN = re.compile(r"__|\blambda\b|\bimport\b|\.\s*[A-Za-z_]|\bexec\b|\beval\b|\bopen\b")
_NAMES = {
    name: getattr(sp, name)
    for name in (
        "Sum",
        "binomial",
        "factorial",
        "ff",
        "rf",
        "gamma",
        "Rational",
        "Integer",
        "sqrt",
        "pi",
        "catalan",
        "fibonacci",
        "harmonic",
        "Abs",
        "sign",
        "exp",
        "log",
        "sin",
        "cos",
        "Product",
        "FallingFactorial",
        "RisingFactorial",
        "Symbol",
        "oo",
        "S",
    )
}


_ASSUMPTION = re.compile(r"^\s*integer\s*(?:>=\s*([+-]?\d+))?\s*$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class IdentityError(ValueError):
    """An identity line is malformed; the message names the identity and the field."""


@dataclass(frozen=True)
class WZIdentity:
    id: str
    summand: sp.Expr
    k: sp.Symbol
    lo: sp.Expr
    hi: sp.Expr
    rhs: sp.Expr | None
    n_min: int
    parameters: tuple[sp.Symbol, ...]
    text: dict[str, Any]
    #: parameters assumed to be integers, each with its lower bound (``None``: unbounded)
    assumptions: tuple[tuple[sp.Symbol, int | None], ...] = ()

    @property
    def bounds(self) -> dict[sp.Symbol, int | None]:
        """The integer variables and their lower bounds: ``n >= n_min`` and the assumed
        parameters."""
        return {N: self.n_min, **dict(self.assumptions)}

    @property
    def lhs(self) -> sp.Expr:
        return sp.Sum(self.summand, (self.k, self.lo, self.hi))


def _parse(text: str, ident: str, field: str, local: dict[str, Any]) -> sp.Expr:
    if not isinstance(text, str) or not text.strip():
        raise IdentityError(
            f"identity {ident!r}: field {field!r} must be a non-empty SymPy expression"
        )
    if _FORBIDDEN.search(text):
        raise IdentityError(f"identity {ident!r}: field {field!r} uses syntax that is not allowed")
    try:
        return parse_expr(
            text,
            local_dict=dict(local),
            global_dict={"Integer": sp.Integer, "Float": sp.Float, "Symbol": sp.Symbol, **_NAMES},
            transformations=standard_transformations,
            evaluate=True,
        )
    except (
        SyntaxError,
        TypeError,
        ValueError,
        AttributeError,
        NameError,
        TokenError,
        sp.SympifyError,
    ) as exc:
        raise IdentityError(f"identity {ident!r}: field {field!r} does not parse: {exc}") from None


def _integer_expression(expr: sp.Expr, ident: str, field: str) -> sp.Expr:
    expr = sp.expand(expr)
    extra = expr.free_symbols - {N}
    if extra:
        raise IdentityError(
            f"identity {ident!r}: {field} may depend on n only, not {sorted(map(str, extra))}"
        )
    poly = sp.Poly(expr, N) if expr.free_symbols else None
    coeffs = poly.all_coeffs() if poly is not None else [expr]
    if not all(sp.sympify(c).is_Integer for c in coeffs) or (
        poly is not None and poly.degree() > 1
    ):
        raise IdentityError(
            f"identity {ident!r}: {field} must be an integer expression a*n + b, got {expr}"
        )
    return expr


def _assumptions(data: dict[str, Any], ident: str) -> dict[str, int | None]:
    raw = data.get("assume")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise IdentityError(
            f"identity {ident!r}: field 'assume' must be an object such as "
            '{"m": "integer >= 0"}'
        )
    out: dict[str, int | None] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not _NAME.match(name) or name in ("n", "k"):
            raise IdentityError(
                f"identity {ident!r}: field 'assume' names {name!r}, which is not a parameter"
            )
        match = _ASSUMPTION.match(spec) if isinstance(spec, str) else None
        if match is None:
            raise IdentityError(
                f"identity {ident!r}: field 'assume' says {spec!r} of {name!r}; write "
                '"integer" or "integer >= c" with an integer c'
            )
        out[name] = int(match.group(1)) if match.group(1) is not None else None
    return out


def parse_identity(data: Any, line: int | None = None) -> WZIdentity:
    """Check one decoded line and return the identity; :class:`IdentityError` otherwise."""
    where = f"line {line}: " if line is not None else ""
    if not isinstance(data, dict):
        raise IdentityError(f"{where}expected a JSON object")
    ident = str(data.get("id") or "").strip()
    if not ident:
        raise IdentityError(f"{where}field 'id' is missing")
    for field in ("lhs", "n_min"):
        if field not in data:
            raise IdentityError(f"identity {ident!r}: field {field!r} is missing")
    n_min = data["n_min"]
    if isinstance(n_min, bool) or not isinstance(n_min, int):
        raise IdentityError(f"identity {ident!r}: field 'n_min' must be an integer")
    if n_min < 0:
        raise IdentityError(
            f"identity {ident!r}: field 'n_min' must be 0 or more (n ranges over naturals)"
        )
    assumed = _assumptions(data, ident)
    local: dict[str, Any] = {"n": N}
    for name, low in assumed.items():
        local[name] = sp.Symbol(name, integer=True, nonnegative=low is not None and low >= 0)
    lhs = _parse(data["lhs"], ident, "lhs", local)
    if not isinstance(lhs, sp.Sum) or len(lhs.limits) != 1:
        raise IdentityError(
            f"identity {ident!r}: field 'lhs' must be Sum(summand, (k, lo, hi)) with one index"
        )
    var, lo, hi = lhs.limits[0]
    if not isinstance(var, sp.Symbol) or var == N:
        raise IdentityError(
            f"identity {ident!r}: field 'lhs' must sum over an integer variable other than n"
        )
    lo = _integer_expression(lo, ident, "the lower bound")
    hi = _integer_expression(hi, ident, "the upper bound")
    summand = lhs.function.subs(var, _K)
    rhs = None
    if data.get("rhs") is not None:
        rhs = _parse(data["rhs"], ident, "rhs", local)
        if rhs.has(_K):
            raise IdentityError(f"identity {ident!r}: field 'rhs' uses the summation variable")
    params = tuple(
        sorted(
            (summand.free_symbols | (rhs.free_symbols if rhs is not None else set())) - {N, _K},
            key=str,
        )
    )
    unknown = sorted(set(assumed) - {str(p) for p in params})
    if unknown:
        raise IdentityError(
            f"identity {ident!r}: field 'assume' names {unknown}, which the identity does not use"
        )
    assumptions = tuple((p, assumed[str(p)]) for p in params if str(p) in assumed)
    return WZIdentity(
        ident, summand, _K, lo, hi, rhs, n_min, params, dict(data), assumptions=assumptions
    )


def read_identities(path: Path) -> tuple[list[WZIdentity], list[tuple[int, str]]]:
    """Every identity of a JSONL file, and ``(line, message)`` for each bad line."""
    out: list[WZIdentity] = []
    problems: list[tuple[int, str]] = []
    seen: set[str] = set()
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append((number, f"not JSON ({exc.msg} at column {exc.colno})"))
            continue
        try:
            identity = parse_identity(data, number)
        except IdentityError as exc:
            problems.append((number, str(exc)))
            continue
        if identity.id in seen:
            problems.append((number, f"identity {identity.id!r} appears again; ids must be unique"))
            continue
        seen.add(identity.id)
        out.append(identity)
    return out, problems
