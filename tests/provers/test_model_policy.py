"""The refinement search with a model (provers/refine/model_policy.py): local repairs and the
best-of-N baseline, against the scripted OpenAI-compatible server on 127.0.0.1 (through
``LiteLLMModel``) and ``ScriptedModel``, with real Coq."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ScriptedOpenAIServer

from lemmata.llm import LiteLLMModel, ScriptedModel
from lemmata.provers.refine.goal import parse_goal
from lemmata.provers.refine.model_policy import (
    ASK_AGAIN,
    ModelPolicy,
    best_of_n,
    screen_proof,
    screen_tactic,
)
from lemmata.provers.refine.policy import ASK, Action, NodeView
from lemmata.provers.refine.search import search
from lemmata.provers.refine.trace import read_trace
from lemmata.provers.result import FailureKind, FailureMode

REALS = "Require Import Reals. Open Scope R_scope."
# ``g`` hides its body from lra/nra: only a step that unfolds it (the model's) closes goals.
G = REALS + "\nDefinition g (x : R) : R := x * x + 1."


def litellm(server: ScriptedOpenAIServer) -> LiteLLMModel:
    return LiteLLMModel("openai/scripted-model", api_base=server.base_url, backoff_s=0.01)


def draft_reply(proof: str) -> dict[str, str]:
    return {"content": json.dumps({"proof": proof})}


def tactics_reply(*tactics: str) -> dict[str, str]:
    return {
        "content": json.dumps({"tactics": [{"tactic": t, "why": "it should"} for t in tactics]})
    }


def user_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


# -- (a) a model's draft repaired in place ----------------------------------------------------


def test_a_drafts_wrong_sentence_is_repaired_and_its_good_sentences_kept(coq) -> None:
    stmt = "Theorem sq1 : forall x : R, x * x + 1 > 0."
    with ScriptedOpenAIServer([draft_reply("intros. lia.")]) as srv:
        policy = ModelPolicy(litellm(srv))
        draft = policy.draft(stmt, REALS, "coq")
        assert draft == "intros.\nlia."
        assert coq.check(REALS, stmt, draft).ok is False  # the draft as written fails
        result = search(coq, stmt, REALS, draft=draft, policy=policy)
    assert result.proved, result
    steps = result.proof.splitlines()
    assert steps[0] == "intros."  # the draft's good sentence, kept
    assert "lia." not in steps  # its wrong one, replaced
    assert coq.check(result.header_additions + "\n" + REALS, stmt, result.proof).ok
    assert policy.stats.drafts == 1 and policy.stats.calls == len(srv.chat_requests())


# -- (b) the repair prompt: this position only ------------------------------------------------


def test_b_model_repairs_locally_from_the_failure_without_history(coq) -> None:
    stmt = "Theorem gg : forall x : R, g x > 0 /\\ g x >= 1."
    steps = [
        draft_reply("intros x. split. lia. lia."),
        tactics_reply("unfold g; nlra_zz", "unfold g; nra"),  # the first is wrong
        tactics_reply("unfold g; nra"),
    ]
    attempts: list[dict[str, Any]] = []
    with ScriptedOpenAIServer(steps) as srv:
        policy = ModelPolicy(litellm(srv))
        draft = policy.draft(stmt, G, "coq")
        result = search(coq, stmt, G, draft=draft, policy=policy, on_attempt=attempts.append)
        requests = srv.chat_requests()
    assert result.proved, result
    # The draft's good sentences stay; each failing `lia.` was replaced by the model's repair.
    assert result.proof == "intros x.\nsplit.\nunfold g; nra.\nunfold g; nra."
    assert policy.stats.asks == 2 and policy.stats.proposed == 3
    assert len(requests) == 3

    # Offline automation ran at the failing position before the model was asked there.
    first_ask = next(i for i, a in enumerate(attempts) if a["status"] == "ask")
    assert any(a["family"] == "close" for a in attempts[:first_ask])
    lia_failures = [
        a for a in attempts if a["tactic"] == "lia." and a["family"] == "draft" and a["failure"]
    ]
    assert len(lia_failures) == 2

    first, second = user_text(requests[1]), user_text(requests[2])
    for prompt, failed in zip((first, second), lia_failures, strict=True):
        assert "The step that failed here:\nlia." in prompt  # the failing sentence
        assert failed["failure"]["message"][:60] in prompt  # the verifier's message
    assert "⊢ g x > 0" in first and "intros x.\nsplit." in first
    assert "x : R\n⊢ g x >= 1" in second  # the goal at the second failure, with hypotheses
    # No history: the wrong tactic tried at the other node, and what Coq said about it, are
    # absent from the second prompt; each request is one system+user turn, no assistant turns.
    assert "nlra_zz" not in second
    assert "unfold g; nlra_zz" not in json.dumps(requests[2]["messages"])
    for request in requests[1:]:
        roles = [m["role"] for m in request["messages"]]
        assert roles.count("user") == 1 and "assistant" not in roles
    # The tactics already tried at the node are listed as not to repeat.
    assert "Already tried here (do not repeat):" in first and "- lra" in first


# -- (c) automation first ---------------------------------------------------------------------


def test_c_the_model_is_not_called_when_automation_closes_the_goal(coq) -> None:
    stmt = "Theorem lin : forall x y : R, x < y -> x < y + 1."
    with ScriptedOpenAIServer([]) as srv:
        policy = ModelPolicy(litellm(srv))
        result = search(coq, stmt, REALS, policy=policy)
        assert srv.chat_requests() == []
    assert result.proved and result.proof == "intros.\nlra."
    assert policy.stats.calls == 0 and policy.stats.asks == 0


# -- (d) a reply that never parses --------------------------------------------------------------


def test_d_unparseable_replies_give_no_actions_and_the_search_goes_on(coq) -> None:
    stmt = "Theorem lin2 : forall x y : R, x < y -> x < y + 1."
    steps = [{"content": "I would use lra here."}, {"content": "Honestly, lra."}]
    attempts: list[dict[str, Any]] = []
    with ScriptedOpenAIServer(steps) as srv:
        # Asked before anything else (prior 0.99), and only once (two chat calls: the retry).
        policy = ModelPolicy(litellm(srv), prior=0.99, max_model_calls=2)
        result = search(coq, stmt, REALS, policy=policy, on_attempt=attempts.append)
        requests = srv.chat_requests()
    assert attempts[0]["status"] == "ask"  # the model was asked first ...
    assert result.proved and result.proof == "intros.\nlra."  # ... and offline still proved it
    assert len(requests) == 2  # the reply, and the one retry with the validation error
    assert "did not validate" in json.dumps(requests[1]["messages"])
    assert policy.stats.unparseable == 1 and policy.stats.proposed == 0
    assert policy.stats.calls == 2 and policy.stats.errors == 0


def test_d_a_failing_model_call_is_counted_not_raised() -> None:
    from lemmata.errors import ModelCallFailed

    policy = ModelPolicy(ScriptedModel([ModelCallFailed("provider down")]))
    assert policy.ask(_view()) == []
    assert policy.stats.errors == 1 and "provider down" in (policy.stats.last_error or "")


def test_tolerant_fallback_reads_a_code_block_or_a_list_of_strings() -> None:
    fenced = "Sure:\n```coq\nunfold g. nra.\n```"
    policy = ModelPolicy(ScriptedModel([fenced, fenced]))
    assert [a.tactic for a in policy.ask(_view())] == ["unfold g", "nra"]
    # A list of strings fails the schema twice but still says what to try; "lra" was tried.
    view = _view(tried={"lra"})
    policy2 = ModelPolicy(ScriptedModel(['{"tactics": ["nra", "lra."]}'] * 2))
    acts = policy2.ask(view)
    assert [a.tactic for a in acts] == ["nra"]
    assert policy2.stats.repeats == 1 and policy2.stats.unparseable == 0


# -- (e) forbidden steps never reach Coq --------------------------------------------------------


def test_e_admit_is_refused_before_the_verifier(coq) -> None:
    stmt = "Theorem gpos : forall x : R, g x > 0."
    reply = json.dumps(
        {
            "tactics": [
                {"tactic": "admit", "why": "give up"},
                {"tactic": "Admitted.", "why": "give up"},
                {"tactic": "Qed.", "why": "end"},
                {"tactic": "intros x; unfold g; nra", "why": "unfold then arithmetic"},
            ]
        }
    )
    model = ScriptedModel([reply])
    policy = ModelPolicy(model, prior=0.99)
    attempts: list[dict[str, Any]] = []
    result = search(coq, stmt, G, policy=policy, on_attempt=attempts.append)
    assert result.proved and result.proof == "intros x; unfold g; nra."
    assert policy.stats.refused == 3 and policy.stats.proposed == 1
    sent = [a["tactic"] for a in attempts if a["status"] not in ("ask", "repair")]
    assert not any(w in t for t in sent for w in ("admit", "Admitted", "Qed"))


@pytest.mark.parametrize(
    ("tactic", "ok"),
    [
        ("nra", "nra"),
        ("- nra.", "nra"),
        ("unfold g; nra.", "unfold g; nra"),
        ("try admit.", None),
        ("Admitted.", None),
        ("Qed.", None),
        ("Theorem x : True.", None),
        ("Axiom cheat : False.", None),
        ("Fail Qed.", None),
        ("intros. nra.", None),  # two steps
        ("", None),
    ],
)
def test_screen_tactic_coq(tactic: str, ok: str | None) -> None:
    assert screen_tactic("coq", tactic)[0] == ok


def test_screen_proof_strips_the_frame_and_refuses_giving_up() -> None:
    framed = "```coq\nTheorem t : 1 = 1.\nProof.\n  reflexivity.\nQed.\n```"
    assert screen_proof("coq", framed) == ("reflexivity.", None)
    assert screen_proof("coq", "intros. admit.")[0] is None
    assert screen_proof("lean", "by\n  sorry")[0] is None


# -- the policy's bookkeeping ---------------------------------------------------------------------


def _view(
    tried: set[str] | None = None, statement: str = "Theorem t : forall x, g x > 0."
) -> NodeView:
    goal = "x : R\n⊢ g x > 0"
    return NodeView(
        "coq",
        parse_goal(goal, "R"),
        goals=(goal,),
        failure=FailureMode(FailureKind.UNSOLVED_GOALS, "goals left"),
        tried=set(tried or ()),
        statement=statement,
    )


def test_propose_appends_one_ask_and_react_asks_again_once() -> None:
    policy = ModelPolicy(ScriptedModel([]))
    view = _view()
    proposed = policy.propose(view)
    assert proposed[-1] == Action(ASK, "model", 0.15)
    assert all(a.tactic != ASK for a in proposed[:-1])
    fm = FailureMode(FailureKind.TACTIC_FAILED, "Cannot find witness")
    lra = Action("lra", "close", 0.9)
    assert [a.tactic for a in policy.react(view, lra, fm) if a.family == "model"] == [ASK]
    view.tried |= {ASK}
    again = [a for a in policy.react(view, lra, fm) if a.family == "model"]
    assert [a.tactic for a in again] == [ASK_AGAIN] and again[0].reacting_to == "lra"
    view.tried |= {ASK_AGAIN}
    assert not [a for a in policy.react(view, lra, fm) if a.family == "model"]
    # A failed model action does not call for another ask.
    view2 = _view()
    model_act = Action("unfold g; nra", "model", 0.6)
    assert not [a for a in policy.react(view2, model_act, fm) if a.family == "model"]


def test_the_budget_stops_asking_and_resets_per_statement() -> None:
    reply = json.dumps({"tactics": [{"tactic": "nra", "why": ""}]})
    policy = ModelPolicy(ScriptedModel([reply] * 4), max_model_calls=1)
    assert [a.tactic for a in policy.ask(_view())] == ["nra"]
    assert policy.ask(_view()) == [] and policy.stats.calls == 1
    assert all(a.tactic != ASK for a in policy.propose(_view()))
    # Another statement: another search, a fresh budget.
    assert [a.tactic for a in policy.ask(_view(statement="Theorem u : g 0 > 0."))] == ["nra"]
    assert policy.stats.calls == 1 and policy.stats.asks == 1


# -- (f) best of N ------------------------------------------------------------------------------

SQ = "Theorem sq : forall x : R, x * x + 1 > 0."


def test_f_best_of_n_stops_at_the_first_proof_that_passes(coq, tmp_path: Path) -> None:
    steps = [draft_reply("intros. lia."), draft_reply("intros. ring."), draft_reply("intros. nra.")]
    trace = tmp_path / "bon.jsonl"
    with ScriptedOpenAIServer([*steps, draft_reply("intros. lra.")]) as srv:
        result = best_of_n(coq, litellm(srv), SQ, REALS, id="sq", budget_calls=8, trace=trace)
        requests = srv.chat_requests()
    assert result.proved and result.calls == 3 and result.proof == "intros.\nnra."
    assert len(requests) == 3  # one model call per sample, none after the proof
    assert all(r.get("temperature") == 0.8 for r in requests)
    assert result.header_additions  # the search's header additions, used and reported
    (problem,) = read_trace(trace)
    assert problem.id == "sq" and problem.solved
    assert [a["status"] for a in problem.attempts] == ["error", "error", "check"]
    assert [a["calls"] for a in problem.attempts] == [1, 2, 3]
    assert problem.on_path() == {2}


def test_f_best_of_n_spends_the_budget_when_every_sample_fails(coq, tmp_path: Path) -> None:
    with ScriptedOpenAIServer([draft_reply("intros. lia.")] * 5) as srv:
        result = best_of_n(coq, litellm(srv), SQ, REALS, budget_calls=4, trace=tmp_path / "t.jsonl")
        assert len(srv.chat_requests()) == 4
    assert result.status == "failed" and result.calls == 4 and result.proof is None
    assert result.failure is not None and result.failure_counts
    (problem,) = read_trace(tmp_path / "t.jsonl")
    assert len(problem.attempts) == 4 and problem.result["status"] == "failed"


def test_best_of_n_never_checks_a_proof_that_gives_up(coq) -> None:
    model = ScriptedModel(
        [json.dumps({"proof": "intros. admit."}), "no idea", json.dumps({"proof": "intros. nra."})]
    )
    result = best_of_n(coq, model, SQ, REALS, budget_calls=4)
    assert result.proved and result.calls == 1 and result.attempts == 3
