"""Repairs that only a failure calls for (provers/refine/policy.py ``repairs``, and the goal
lemma search in provers/refine/search.py): case analysis on a remainder, bounded enumeration
in nat, the laws of ``ln``, completed squares, lemmas retrieved by a stuck goal's shape, a
variable being zero, a function witness read off its defining equation, ``sqrt E = c`` as
``c * c = E``, ``Rpower`` of literals and its injectivity, and the bounds of ``PI``.

They are not in the shared action set, so the fixed-order ablation (and the one-shot
portfolio) cannot reach them: each real-Coq test below proves a small problem with the
failure-conditioned search and shows that the fixed-order search, at the same budget of
verifier calls, does not. The goal texts of the unit tests are what coqtop 8.16 printed.
"""

from __future__ import annotations

from typing import Any

import pytest

from lemmata.provers import CoqTop
from lemmata.provers.failure import classify_coq
from lemmata.provers.refine.goal import parse_goal
from lemmata.provers.refine.policy import (
    GOAL_LEMMAS,
    Action,
    FixedOrderPolicy,
    NodeView,
    OfflinePolicy,
    action_set,
)
from lemmata.provers.refine.search import SearchConfig, search

SQMOD3 = "a : Z\n⊢ a ^ 2 mod 3 = 0 \\/ a ^ 2 mod 3 = 1"  # under Open Scope Z_scope
NAT_MOD = "a, b : nat\nH : (a + b) mod 10 = 2\nH0 : (2 * a + b) mod 10 = 1\n⊢ (a - b) mod 10 = 6"
BOUNDED = "x, y : nat\nh0 : 0 < y\nh1 : y < x\nh2 : x + y + x * y = 80\n⊢ x = 26"
SMALL_BOUND = "n : nat\nH : n < 5\n⊢ n * n * n < 100"
INT_LINEAR = "a, b : Z\nH : a < b\n⊢ a + 1 <= b"
REAL = "x : R\nH : 0 <= x\nH0 : x <= 1\n⊢ x * x <= 1"
GCD = "a, b : nat\n⊢ Nat.gcd a (a * b) = a"
QUADRATIC = "x, c : R\nH : 2 * x ^ 2 + 3 * x + c <= 0\n⊢ c <= 9 / 8"
LOGS = "x, y : R\nH : 0 < x\nH0 : 0 < y\nH1 : ln (x * y) = 2\nH2 : ln (x / y) = 0\n⊢ ln x = 1"
PRODUCT = "x, y : R\nH : x * y + x = 0\nH0 : x <> 0\n⊢ y = -1"
LINEAR_EQ = "x, y : R\nH : x + y = 0\nH0 : x - y = 2\n⊢ y = -1"
FUNCTION = "c : R\n⊢ exists g : R -> R, (forall x : R, g x = x * x + c) -> g 2 = 4 + c"
ROOT = "x : R\nH : x = 3\n⊢ sqrt (x ^ 2 + 16) = 5"
RPOWER = "b : R\nH : Rpower 4 b + Rpower 2 3 = 12\n⊢ b = 1"
RPOWER_FIXED = "x, y : R\nH : x = 5\nH0 : y = 2\n⊢ x ^ 3 - Rpower 2 y = 121"
CIRCLE = "r : R\nH : 0 < r\n⊢ 0 < PI * r ^ 2"
FLOOR = "⊢ floor (9 / 160 * 100) = 5%Z"  # Coquelicot's floor

LIA_FAILED = classify_coq("Tactic failure: Cannot find witness.", tactic="lia.")
BUDGET = SearchConfig(budget_calls=30, budget_seconds=40, automation=False)


def view(text: str, scope: str | None = None) -> NodeView:
    return NodeView("coq", parse_goal(text, scope), automation=False, tried={"lia"})


def after_lia(text: str, scope: str | None = None) -> list[str]:
    return [
        a.tactic
        for a in OfflinePolicy().react(view(text, scope), Action("lia", "close"), LIA_FAILED)
    ]


def shared(text: str, scope: str | None = None) -> set[str]:
    return {a.tactic for a in action_set("coq", parse_goal(text, scope), False)}


# -- proposed on the right failure, and only there ---------------------------------------------


def test_a_failed_lia_on_a_remainder_goal_is_answered_by_case_analysis_on_it() -> None:
    follow = after_lia(SQMOD3, "Z")
    cases = [t for t in follow if "Z.div_mod a 3%Z" in t]
    assert cases, follow
    assert "(rm0 = 0 \\/ rm0 = 1 \\/ rm0 = 2)%Z" in cases[0]  # the three residues
    assert not set(follow) & {"lia"}
    assert not set(cases) & shared(SQMOD3, "Z")  # the baselines cannot reach it


def test_nat_remainders_become_equations_after_lia_fails() -> None:
    follow = after_lia(NAT_MOD)
    assert any("Nat.div_mod x m" in t and t.endswith("; lia") for t in follow), follow


def test_no_remainder_repair_without_a_remainder_or_on_another_failure() -> None:
    assert not [t for t in after_lia(INT_LINEAR, "Z") if "mod" in t]
    clash = classify_coq("a is already used.", tactic="intro a.")
    follow = OfflinePolicy().react(view(SQMOD3, "Z"), Action("intro a", "intro"), clash)
    assert not [a for a in follow if "div_mod" in a.tactic]


def test_a_bounded_nat_variable_is_enumerated_up_to_its_bound() -> None:
    follow = after_lia(SMALL_BOUND)
    assert any(t.startswith("assert (Hbd0 : (n <= 4)%nat)") and "do 5" in t for t in follow)
    # a bound that nia can prove from the numbers: the square root of 80 for y
    assert any(t.startswith("assert (Hbd0 : (y <= 8)%nat)") for t in after_lia(BOUNDED))
    assert not [t for t in after_lia(REAL, "R") if "Hbd0" in t]  # nat only


def test_a_stuck_goal_with_a_function_symbol_asks_for_lemmas_of_its_shape() -> None:
    follow = after_lia(GCD)
    assert GOAL_LEMMAS + "SearchPattern (Nat.gcd _ (_ * _) = _)." in follow
    # pure arithmetic has no symbol to search by
    assert not [t for t in after_lia(INT_LINEAR, "Z") if t.startswith(GOAL_LEMMAS)]


def test_logarithms_are_taken_apart_after_lra_fails_on_them_only() -> None:
    lra = classify_coq("Tactic failure: Cannot find witness.", tactic="lra.")
    node = NodeView("coq", parse_goal(LOGS, "R"), automation=False, tried={"lra"})
    follow = [a.tactic for a in OfflinePolicy().react(node, Action("lra", "close"), lra)]
    assert any("rewrite ln_mult in *" in t and "ln_Rinv" in t for t in follow), follow
    assert not [t for t in after_lia(REAL, "R") if "ln_" in t]


def test_a_quadratic_gets_the_square_it_completes_to_after_nra_fails() -> None:
    nra = classify_coq("No applicable tactic.", tactic="nra.")
    node = NodeView("coq", parse_goal(QUADRATIC, "R"), automation=False, tried={"nra"})
    follow = [a.tactic for a in OfflinePolicy().react(node, Action("nra", "close"), nra)]
    assert any("pow2_ge_0 (2 * 2 * x + 3)" in t and t.endswith("nra") for t in follow), follow
    assert not [t for t in after_lia(SMALL_BOUND) if "pow2_ge_0" in t]  # nat: no squares


def after(text: str, tactic: str, message: str = "No applicable tactic.") -> list[str]:
    """The follow-ups to ``tactic`` failing with ``message`` on the R goal ``text``."""
    failure = classify_coq(message, tactic=tactic + ".")
    node = NodeView("coq", parse_goal(text, "R"), automation=False, tried={tactic})
    return [a.tactic for a in OfflinePolicy().react(node, Action(tactic, "close"), failure)]


def test_a_polynomial_equation_is_split_on_a_variable_being_zero_after_nra_fails() -> None:
    follow = after(PRODUCT, "nra")
    cases = [t for t in follow if t.startswith("destruct (Req_dec x 0)")]
    assert cases and "Rmult_eq_reg_l x" in cases[0], follow
    assert not [t for t in after(LINEAR_EQ, "nra") if "Req_dec" in t]  # nothing to cancel
    clash = classify_coq("H is already used.", tactic="intro H.")
    node = NodeView("coq", parse_goal(PRODUCT, "R"), automation=False)
    assert not [
        a
        for a in OfflinePolicy().react(node, Action("intro H", "intro"), clash)
        if "Req_dec" in a.tactic
    ]


def test_a_function_asked_for_by_its_equation_is_given_after_a_number_fails() -> None:
    mismatch = 'The term "2" has type "R" while it is expected to have type "R -> R".'
    follow = after(FUNCTION, "exists 2", mismatch)
    assert "exists (fun x : R => x * x + c)" in follow, follow
    assert not [t for t in after(ROOT, "exists 2", mismatch) if "fun" in t]


def test_a_square_root_equation_becomes_a_square_after_lra_fails() -> None:
    assert "apply sqrt_lem_1; nra" in after(ROOT, "lra")
    assert not [t for t in after(LINEAR_EQ, "lra") if "sqrt_lem" in t]


def test_rpower_of_literals_is_computed_and_inverted_after_lra_fails() -> None:
    follow = after(RPOWER, "lra")
    assert any(
        t.startswith("replace (Rpower 2 3) with (2 ^ 3) in *") and "Rpower 4 1" in t for t in follow
    ), follow
    fixed = after(RPOWER_FIXED, "lra")
    assert any(t.startswith("subst y; replace (Rpower 2 2) with (2 ^ 2)") for t in fixed), fixed
    assert not [t for t in after(LINEAR_EQ, "lra") if "Rpower" in t]


def test_pi_gets_its_bounds_after_lra_fails_on_it_only() -> None:
    assert any(t.startswith("pose proof PI_RGT_0") for t in after(CIRCLE, "lra"))
    assert not [t for t in after(REAL, "lra") if "PI" in t]


def test_a_floor_is_taken_apart_and_pinned_after_lia_fails_on_it_only() -> None:
    follow = after_lia(FLOOR)
    assert any(t.startswith("unfold floor;") and "Z.le_antisymm" in t for t in follow), follow
    assert not [t for t in after_lia(INT_LINEAR, "Z") if "floor" in t]


def test_the_fixed_order_ablation_gets_none_of_these_repairs() -> None:
    for text, scope in (
        (SQMOD3, "Z"),
        (BOUNDED, None),
        (GCD, None),
        (LOGS, "R"),
        (QUADRATIC, "R"),
        (PRODUCT, "R"),
        (FUNCTION, "R"),
        (ROOT, "R"),
        (RPOWER, "R"),
        (CIRCLE, "R"),
        (FLOOR, None),
    ):
        node = view(text, scope)
        assert FixedOrderPolicy().react(node, Action("lia", "close"), LIA_FAILED) == []
        fixed = {a.tactic for a in FixedOrderPolicy().propose(node)}
        assert not fixed & set(after_lia(text, scope)) - shared(text, scope)
        assert not any(
            "Hbd0" in t or "rm0" in t or "ln_mult" in t or t.startswith(GOAL_LEMMAS) for t in fixed
        )
        assert not any(
            w in t
            for t in fixed
            for w in ("Req_dec", "sqrt_lem_1", "Rpower_pow", "PI_RGT_0", "exists (fun", "floor_ex")
        )


# -- on real Coq: proved by the failure-conditioned search, not by the fixed order ----------------


@pytest.fixture(scope="module")
def coq(coqtop_path: str) -> Any:
    with CoqTop(coqtop_path, timeout_s=20) as verifier:
        yield verifier


PROBLEMS = {
    "remainder cases (Z)": (
        "Theorem sq3 (a : Z) : (a^2 mod 3 = 0) \\/ (a^2 mod 3 = 1).",
        "Require Import ZArith. Open Scope Z_scope.",
    ),
    "remainder equations (nat)": (
        "Theorem m110 : forall a b : nat, (0 < a)%nat -> (0 < b)%nat -> (b <= a)%nat -> "
        "(a + b) mod 10 = 2 -> (2 * a + b) mod 10 = 1 -> (a - b) mod 10 = 6.",
        "Require Import Arith.",
    ),
    "bounded enumeration (nat)": (
        "Theorem p10 (x y : nat) (h0 : (0 < y)%nat) (h1 : (y < x)%nat) "
        "(h2 : (x + y + x * y = 80)%nat) : x = 26%nat.",
        "Require Import Arith.",
    ),
    "laws of ln": (
        "Theorem l : forall x y : R, 0 < x -> 0 < y -> ln (x * y) = 2 -> ln (x / y) = 0 -> "
        "ln x = 1.",
        "Require Import Reals. Open Scope R_scope.",
    ),
    "completed square": (
        "Theorem q : forall x c : R, 2 * x^2 + 3 * x + c <= 0 -> c <= 9 / 8.",
        "Require Import Reals. Open Scope R_scope.",
    ),
    "lemma of the goal's shape": (
        "Theorem g : forall a b : nat, Nat.gcd a (a * b) = a.",
        "Require Import Arith.",
    ),
    "a variable is zero or cancels": (
        "Theorem z : forall a b : R, 6 * a ^ 2 + b = 0 -> b ^ 2 + a * b + b = 0 -> "
        "2 * a <> b -> a + b = -1.",
        "Require Import Reals. Open Scope R_scope.",
    ),
    "a function witness": (
        "Theorem w : forall c : R, exists g : R -> R, (forall x, g x = x * x + c) -> g 2 = 4 + c.",
        "Require Import Reals. Open Scope R_scope.",
    ),
    "a square root equation": (
        "Theorem s : forall x : R, x = 3 -> sqrt (x ^ 2 + 16) = 5.",
        "Require Import Reals. Open Scope R_scope.",
    ),
    "Rpower of literals, inverted": (
        "Theorem e : forall b : R, Rpower 3 b + Rpower 2 3 = 17 -> b = 2.",
        "Require Import Reals. Open Scope R_scope.",
    ),
}


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_only_the_failure_conditioned_search_proves_it(coq: Any, name: str) -> None:
    statement, header = PROBLEMS[name]
    fixed = search(coq, statement, header, policy=FixedOrderPolicy(), config=BUDGET)
    assert not fixed.proved and fixed.calls <= BUDGET.budget_calls
    refined = search(coq, statement, header, policy=OfflinePolicy(), config=BUDGET)
    assert refined.proved, (refined.status, refined.failure)
    assert refined.calls <= BUDGET.budget_calls
    assert refined.vacuous is False
    full = f"{refined.header_additions}\n{header}"
    assert coq.check(full, statement, refined.proof).ok  # the proof stands on its own
