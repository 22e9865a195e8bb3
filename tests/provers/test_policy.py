"""Goals and repair policies (provers/refine/goal.py, policy.py), without a verifier: the goal
texts are what Coq 8.16 printed for these statements (after ``intros``), and the failures are
classified from the messages Coq gave for them.

The offline policy's order is tuned by hand; these tests hold what does not depend on it:
what is offered for a goal's shape, how a failure changes what comes next, and that the
fixed-order ablation can do exactly what the offline policy can.
"""

from __future__ import annotations

import pytest

from lemmata.provers.failure import classify_coq
from lemmata.provers.refine.goal import DOMAINS, parse_goal
from lemmata.provers.refine.policy import (
    Action,
    FixedOrderPolicy,
    NodeView,
    OfflinePolicy,
    action_set,
)
from lemmata.provers.result import FailureKind

# Printed by coqtop 8.16 (``Show.`` after ``intros``) for the statements in the comments.
REAL_NONLINEAR = "x : R\nH : 0 <= x\nH0 : x <= 1\n⊢ x * x <= 1"  # r1 of test_search
REAL_ABS = "x : R\nH : Rabs (x - 1) <= 2\n⊢ x <= 3"
REAL_DIV = "x, y : R\nH : 0 < x\nH0 : 0 < y\n⊢ x / y > 0"
REAL_FUN = "f : R -> R\nH : forall x : R, f x = 2 * x + 1\n⊢ f 1 = 3"
INT_LINEAR = "a, b : Z\nH : a < b\n⊢ a + 1 <= b"  # under Open Scope Z_scope
NAT_FALSE = "n : nat\n⊢ n * n = n + 1"
NAT_EXISTS = "n, m : nat\nH : n < m\n⊢ exists k : nat, m = n + k"
PROP_SWAP = "P, Q : Prop\nH : P /\\ Q\n⊢ Q /\\ P"
ROOT = "⊢ forall x : R, 0 < x -> x * x > 0"  # a statement's goal before intros
WITNESS = "⊢ exists n : nat, n + 2 = 5"
AFTER_INTRO = "x : R\n⊢ 0 < x -> x * x > 0"  # after ``intro x``

GOALS = [REAL_NONLINEAR, REAL_ABS, REAL_DIV, REAL_FUN, INT_LINEAR, NAT_FALSE, NAT_EXISTS]
GOALS += [PROP_SWAP, ROOT, WITNESS, AFTER_INTRO]


def view(text: str, scope: str | None = None, **kw: object) -> NodeView:
    return NodeView("coq", parse_goal(text, scope), automation=False, **kw)  # type: ignore[arg-type]


def tactics(actions: list[Action]) -> list[str]:
    return [a.tactic for a in actions]


# -- parse_goal -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "scope", "domain", "head", "variables", "hypotheses"),
    [
        (REAL_NONLINEAR, "R", "R", "<=", ("x",), ["H", "H0"]),
        (REAL_FUN, "R", "R", "=", (), ["f", "H"]),
        (INT_LINEAR, "Z", "Z", "<=", ("a", "b"), ["H"]),
        (NAT_FALSE, None, "nat", "=", ("n",), []),
        (NAT_EXISTS, None, "nat", "exists", ("n", "m"), ["H"]),
        (PROP_SWAP, None, "Prop", "/\\", (), ["P", "Q", "H"]),
        (ROOT, "R", "R", "forall", (), []),
        (AFTER_INTRO, "R", "R", "->", ("x",), []),
    ],
)
def test_parse_goal_reads_domain_head_variables_and_hypotheses(
    text: str,
    scope: str | None,
    domain: str,
    head: str,
    variables: tuple[str, ...],
    hypotheses: list[str],
) -> None:
    g = parse_goal(text, scope)
    assert (g.domain, g.head, g.variables) == (domain, head, variables)
    assert [h.name for h in g.hypotheses] == hypotheses
    assert g.conclusion == text.rpartition("⊢ ")[2]
    assert g.domain in DOMAINS


def test_goal_features_follow_its_shape() -> None:
    assert parse_goal(REAL_ABS, "R").features["abs"] == 1.0
    assert parse_goal(REAL_NONLINEAR, "R").features["nonlinear"] == 1.0
    assert parse_goal(INT_LINEAR, "Z").features["nonlinear"] == 0.0
    assert parse_goal(REAL_DIV, "R").features["division"] == 1.0
    assert parse_goal(PROP_SWAP).features["hyp_conj"] == 1.0
    assert parse_goal(WITNESS).features["exists"] == 1.0
    assert parse_goal("⊢ 2 + 2 = 4").features["numeric_only"] == 1.0


def test_the_headers_scope_decides_a_goal_that_names_no_type() -> None:
    assert parse_goal("⊢ 2 + 2 = 4", "Z").domain == "Z"
    assert parse_goal("⊢ 2 + 2 = 4", "R").domain == "R"
    assert parse_goal("⊢ 2 + 2 = 4").domain == "nat"
    # A type the goal does name wins over the scope.
    assert parse_goal(NAT_FALSE, "R").domain == "nat"


# -- action_set -----------------------------------------------------------------------------


def test_an_absolute_value_is_split_into_cases() -> None:
    acts = action_set("coq", parse_goal(REAL_ABS, "R"), automation=False)
    assert "split_Rabs; lra" in tactics(acts)
    assert "split_Rabs; lra" not in tactics(
        action_set("coq", parse_goal(REAL_NONLINEAR, "R"), automation=False)
    )


def test_a_hypothesis_that_defines_a_function_is_rewritten_with() -> None:
    acts = action_set("coq", parse_goal(REAL_FUN, "R"), automation=False)
    rewrites = [a.tactic for a in acts if a.family == "rewrite"]
    assert rewrites and all("rewrite" in t and "H" in t for t in rewrites)
    assert not [
        a for a in action_set("coq", parse_goal(REAL_NONLINEAR, "R")) if a.family == "rewrite"
    ]


def test_an_existential_is_offered_witnesses_including_the_right_one() -> None:
    acts = action_set("coq", parse_goal(WITNESS), automation=False)
    witnesses = [a.tactic for a in acts if a.family == "witness"]
    assert "exists 3" in witnesses  # 3 + 2 = 5
    assert all(t.startswith(("exists ", "eexists")) for t in witnesses)
    assert not [a for a in action_set("coq", parse_goal(NAT_FALSE)) if a.family == "witness"]


def test_automation_is_offered_only_when_it_is_loaded() -> None:
    goal = parse_goal(REAL_NONLINEAR, "R")
    with_hammer = {a.family for a in action_set("coq", goal, automation=True)}
    without = {a.family for a in action_set("coq", goal, automation=False)}
    assert "automation" in with_hammer and "automation" not in without


@pytest.mark.parametrize("text", GOALS)
def test_every_action_is_unique_and_has_a_prior_in_range(text: str) -> None:
    acts = action_set("coq", parse_goal(text, "R"), automation=True)
    assert acts and len(set(tactics(acts))) == len(acts)
    assert all(0 < a.prior <= 1 for a in acts)


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="no actions for backend 'isabelle'"):
        action_set("isabelle", parse_goal(NAT_FALSE))


# -- OfflinePolicy --------------------------------------------------------------------------


@pytest.mark.parametrize("text", GOALS)
def test_offline_proposals_come_from_the_action_set(text: str) -> None:
    node = view(text, "R")
    proposed = OfflinePolicy().propose(node)
    assert proposed
    assert set(tactics(proposed)) <= set(tactics(action_set("coq", node.goal, False)))


def test_a_product_is_introduced_first() -> None:
    proposed = OfflinePolicy().propose(view(ROOT, "R"))
    assert max(proposed, key=lambda a: a.prior).tactic == "intros"


def test_after_lra_fails_nra_is_among_the_follow_ups() -> None:
    node = view(REAL_NONLINEAR, "R", tried={"lra"})
    failure = classify_coq("No applicable tactic.", tactic="lra.")
    assert failure.kind is FailureKind.TACTIC_FAILED
    follow = OfflinePolicy().react(node, Action("lra", "close", 0.9), failure)
    assert "nra" in tactics(follow)
    assert "lra" not in tactics(follow)  # what failed is not proposed again
    assert all(a.reacting_to == "lra" for a in follow)
    assert set(tactics(follow)) <= set(tactics(action_set("coq", node.goal, False)))


def test_after_lia_fails_nia_is_among_the_follow_ups() -> None:
    node = view(NAT_FALSE, tried={"lia"})
    failure = classify_coq("Tactic failure: Cannot find witness.", tactic="lia.")
    follow = OfflinePolicy().react(node, Action("lia", "close", 0.9), failure)
    assert "nia" in tactics(follow)


def test_a_name_clash_is_answered_by_intros() -> None:
    node = view(AFTER_INTRO, "R", tried={"intro x"})
    failure = classify_coq("x is already used.", tactic="intro x.")
    assert failure.kind is FailureKind.NAME_CLASH
    follow = OfflinePolicy().react(node, Action("intro x", "intro", 0.9), failure)
    assert "intros" in tactics(follow)
    assert all(a.reacting_to == "intro x" for a in follow)


def test_a_timeout_is_answered_by_a_narrower_tactic() -> None:
    node = view(REAL_NONLINEAR, "R", tried={"nra"})
    failure = classify_coq("Timeout!", tactic="nra.")
    assert failure.kind is FailureKind.TIMEOUT
    follow = OfflinePolicy().react(node, Action("nra", "close", 0.6), failure)
    assert "lra" in tactics(follow)  # linear arithmetic: the narrower decision procedure
    assert "nra" not in tactics(follow)


def test_follow_ups_skip_what_was_already_tried_here() -> None:
    node = view(REAL_NONLINEAR, "R", tried={"lra", "nra"})
    failure = classify_coq("No applicable tactic.", tactic="lra.")
    follow = OfflinePolicy().react(node, Action("lra", "close", 0.9), failure)
    assert follow and not {"lra", "nra"} & set(tactics(follow))


# -- FixedOrderPolicy -----------------------------------------------------------------------


@pytest.mark.parametrize("text", GOALS)
def test_the_fixed_order_ablation_proposes_exactly_the_action_set(text: str) -> None:
    node = view(text, "R")
    fixed = FixedOrderPolicy().propose(node)
    assert sorted(tactics(fixed)) == sorted(tactics(action_set("coq", node.goal, False)))
    priors = [a.prior for a in fixed]
    assert priors == sorted(priors, reverse=True) and len(set(priors)) == len(priors)


def test_the_fixed_order_ablation_never_reacts() -> None:
    node = view(REAL_NONLINEAR, "R", tried={"lra"})
    for message, tactic in (("No applicable tactic.", "lra."), ("Timeout!", "nra.")):
        failure = classify_coq(message, tactic=tactic)
        assert FixedOrderPolicy().react(node, Action(tactic[:-1], "close"), failure) == []
