"""WZ: the three classes of identities that used to be missed (issue 22, item 1).

- a free parameter in a binomial's lower index (``sum_k binomial(k, m)``): the boundary terms
  carry ``binomial(0, m)``, zero only for an integer ``m >= 1`` and harmless at ``m = 0``;
- powers in different bases (``binomial(2k, k) / 4**k`` beside ``2**(2n)``);
- ``binomial(n, 2k)``, whose natural support ends at ``k = n/2`` inside the range.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sympy as sp

from lemmata.provers.wz.identity import (
    IdentityError,
    N,
    WZIdentity,
    parse_identity,
    read_identities,
)
from lemmata.provers.wz.prove import prove_identity
from lemmata.provers.wz.support import holds, lower_bound, vanish_outside_support
from lemmata.provers.wz.zeilberger import normalise_powers, shift_ratio

SUITE = Path(__file__).resolve().parents[2] / "provers" / "suites" / "wz_identities.jsonl"
IDENTITIES, _ = read_identities(SUITE)
CLASSES = ("lower-index parameter", "mixed power bases", "support ends inside the range")
K = sp.Symbol("k", integer=True)


def test_each_class_has_three_literature_identities_and_a_false_neighbour() -> None:
    counts = Counter((i.text.get("class"), i.text["expect"]) for i in IDENTITIES)
    for name in CLASSES:
        assert counts[(name, "proved")] >= 3, name
        assert counts[(name, "refuted")] >= 1, name
    assert all(
        i.text.get("source")
        for i in IDENTITIES
        if i.text.get("class") and i.text["expect"] == "proved"
    )


@pytest.mark.parametrize(
    "ident", [i for i in IDENTITIES if i.text.get("class")], ids=lambda i: i.id
)
def test_class_identities_are_proved_with_a_clean_recurrence(ident: WZIdentity) -> None:
    result = prove_identity(ident)
    assert result.verdict == ident.text["expect"], result.reason
    if result.verdict == "proved":
        assert all(c.ok for c in result.checks) and len(result.checks) == 5
        # The boundary terms are recognised as zero, not left as sin(pi*m)/pi or 1/(-n)!.
        rhs = result.to_dict()["recurrence_rhs"]
        assert not any(bad in rhs for bad in ("sin", "pi", "factorial(-", "gamma"))
    else:
        assert result.counterexample is not None


def test_mixed_bases_give_a_rational_term_ratio() -> None:
    n = N
    summand = (-1) ** K * sp.binomial(n, K) * sp.binomial(2 * K, K) / 4**K
    ratio = shift_ratio(summand, K, (K, n))
    assert ratio.is_rational_function(K, n)
    for n0, k0 in [(5, 0), (5, 2), (7, 3), (9, 8)]:
        here = summand.subs({n: n0, K: k0})
        there = summand.subs({n: n0, K: k0 + 1})
        assert ratio.subs({n: n0, K: k0}) == there / here
    assert normalise_powers(4**K / 2 ** (2 * K)) == 1
    assert normalise_powers((-4) ** K / 2 ** (2 * K)) == (-1) ** K


def test_terms_outside_the_natural_support_vanish_only_when_they_must() -> None:
    n = N
    m = sp.Symbol("m", integer=True, nonnegative=True)
    assert vanish_outside_support(sp.binomial(n, 2 * n + 2), {n: 0}) == 0
    assert vanish_outside_support(sp.binomial(n, 2 * n), {n: 0}) != 0  # 1 at n = 0
    assert vanish_outside_support(sp.binomial(n, 2 * n), {n: 1}) == 0
    assert vanish_outside_support(sp.binomial(0, m), {m: 1}) == 0
    assert vanish_outside_support(sp.binomial(0, m), {m: 0}) != 0
    assert vanish_outside_support(1 / sp.factorial(-n - 1), {n: 0}) == 0
    x = sp.Symbol("x")  # not known to be an integer: nothing may vanish
    assert vanish_outside_support(sp.binomial(0, x), {n: 0}) != 0
    assert lower_bound(3 * n - m + 2, {n: 0, m: 0}) is None  # m unbounded above


def test_a_borderline_case_is_split_off() -> None:
    m = sp.Symbol("m", integer=True, nonnegative=True)
    ok, cases = holds(m * sp.binomial(0, m), {m: 0}, lambda e: sp.simplify(e) == 0)
    assert ok and cases == ["m = 0", "m >= 1"]
    ok, _ = holds((m + 1) * sp.binomial(0, m), {m: 0}, lambda e: sp.simplify(e) == 0)
    assert not ok  # 1 at m = 0


def test_without_the_integrality_assumption_the_hockey_stick_is_not_proved() -> None:
    line = {
        "id": "hockey",
        "lhs": "Sum(binomial(k, m), (k, 0, n))",
        "rhs": "binomial(n + 1, m + 1)",
        "n_min": 0,
    }
    result = prove_identity(parse_identity(line))
    assert result.verdict == "recurrence-only"
    assert '"assume"' in result.reason and "integer" in result.reason
    assumed = prove_identity(parse_identity({**line, "assume": {"m": "integer >= 0"}}))
    assert assumed.verdict == "proved"


@pytest.mark.parametrize(
    ("assume", "message"),
    [
        ({"m": "real"}, 'write "integer"'),
        ({"m": "integer >= x"}, 'write "integer"'),
        ({"q": "integer"}, "does not use"),
        ({"n": "integer"}, "not a parameter"),
        ("m integer", "must be an object"),
    ],
)
def test_bad_assumptions_name_the_field(assume: object, message: str) -> None:
    line = {"id": "h", "lhs": "Sum(binomial(k, m), (k, 0, n))", "rhs": "1", "n_min": 0}
    with pytest.raises(IdentityError, match=message) as info:
        parse_identity({**line, "assume": assume})
    assert "'h'" in str(info.value) and "assume" in str(info.value)


def test_an_assumed_parameter_is_an_integer_with_its_bound() -> None:
    ident = parse_identity(
        {
            "id": "h",
            "lhs": "Sum(binomial(k, m), (k, 0, n))",
            "rhs": "binomial(n + 1, m + 1)",
            "n_min": 0,
            "assume": {"m": "integer >= 2"},
        }
    )
    (m,) = ident.parameters
    assert m.is_integer and ident.bounds == {N: 0, m: 2}
