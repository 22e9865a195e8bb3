"""A litellm model as the policy and as the proposer of alternatives, against the scripted
OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import pytest
from scripted_server import ScriptedOpenAIServer

from lemmata.agents.experience.llm import ModelPolicy, propose_alternatives, proposer
from lemmata.errors import ModelCallFailed, UsageError
from lemmata.llm import LiteLLMModel

TASK = "Find the coin and take it."
OBS = "You are in the kitchen. A coin lies on the table."
HISTORY = [("open door", "The door opens onto the kitchen.")]
ADMISSIBLE = ["take coin", "move west", "look"]


def model(server: ScriptedOpenAIServer) -> LiteLLMModel:
    return LiteLLMModel(
        "openai/scripted-model", api_base=server.base_url, backoff_s=0.01, max_retries=0
    )


def test_policy_picks_an_admissible_action_by_react() -> None:
    reply = "Thought: the coin is right here, taking it should finish.\nAction: **Take Coin.**"
    with ScriptedOpenAIServer([{"content": reply}]) as server:
        policy = ModelPolicy(model(server))
        action = policy.act(TASK, OBS, HISTORY, ADMISSIBLE)
        (sent,) = server.chat_requests()
    assert action == "take coin"  # the admissible action's own text
    assert policy.invalid == 0 and policy.stats.calls == 1
    assert policy.stats.last_thought == "the coin is right here, taking it should finish."
    system, user = sent["messages"]
    assert "copied exactly from the admissible actions" in system["content"]
    assert "Action:\nopen door\nObservation:\nThe door opens onto the kitchen." in user["content"]
    assert user["content"].endswith("Admissible actions:\n- take coin\n- move west\n- look")


def test_an_inadmissible_reply_is_asked_again_once() -> None:
    steps = [{"content": "Thought: dance!\nAction: dance"}, {"content": "Action:\nmove west"}]
    with ScriptedOpenAIServer(steps) as server:
        policy = ModelPolicy(model(server))
        action = policy.act(TASK, OBS, HISTORY, ADMISSIBLE)
        retry = server.chat_requests()[1]["messages"]
    assert action == "move west"
    assert policy.stats.retries == 1 and policy.invalid == 0
    assert retry[-2] == {"role": "assistant", "content": "Thought: dance!\nAction: dance"}
    assert '"dance" is not one of the admissible actions' in retry[-1]["content"]


def test_an_action_still_inadmissible_after_the_retry_is_counted_invalid() -> None:
    steps = [{"content": "Action: dance"}, {"content": "I refuse to say."}]
    with ScriptedOpenAIServer(steps) as server:
        policy = ModelPolicy(model(server))
        action = policy.act(TASK, OBS, [], ADMISSIBLE)
    assert action == "dance"  # returned as written: the environment refuses it
    assert policy.invalid == 1 and policy.stats.calls == 2


def test_free_text_actions_when_the_environment_does_not_enumerate() -> None:
    steps = [
        {"content": "I said nothing useful."},
        {"content": "Thought: search.\nAction: `search coin`"},
    ]
    with ScriptedOpenAIServer(steps) as server:
        policy = ModelPolicy(model(server))
        action = policy.act(TASK, OBS, [], None)
        follow_up = server.chat_requests()[1]["messages"][-1]["content"]
    assert action == "search coin"
    assert "did not end with an action" in follow_up
    assert "Admissible actions" not in server.chat_requests()[0]["messages"][1]["content"]


def test_a_model_that_fails_stops_the_policy_with_a_typed_error() -> None:
    fail = {"status": 400, "body": {"error": {"message": "nope", "type": "invalid_request_error"}}}
    with ScriptedOpenAIServer([fail]) as server, pytest.raises(ModelCallFailed):
        ModelPolicy(model(server)).act(TASK, OBS, [], ADMISSIBLE)


def test_alternatives_come_from_one_call_deduplicated_without_the_experts() -> None:
    reply = (
        "Here you go:\n```json\n"
        '["Move West", "move  west!", "Take the coin", "take coin", "open the fridge", "look"]\n```'
    )
    with ScriptedOpenAIServer([{"content": reply}]) as server:
        alts = propose_alternatives(model(server), TASK, OBS, HISTORY, "Take coin", k=3)
        (sent,) = server.chat_requests()
    assert alts == ["Move West", "Take the coin", "open the fridge"]
    assert "Propose 5 distinct alternative actions" in sent["messages"][1]["content"]
    assert 'Already planned (do not propose it): "Take coin"' in sent["messages"][1]["content"]


def test_a_malformed_reply_is_refilled_from_the_admissible_actions() -> None:
    with ScriptedOpenAIServer([{"content": "Go north, I think."}] * 2) as server:
        m = model(server)
        refilled = propose_alternatives(
            m, TASK, OBS, [], "take coin", k=2, admissible=ADMISSIBLE + ["eat table"]
        )
        nothing = propose_alternatives(m, TASK, OBS, [], "take coin", k=2)
    assert len(refilled) == 2 and set(refilled) <= {"move west", "look", "eat table"}
    assert nothing == []


def test_short_lists_are_topped_up_and_k_is_checked() -> None:
    with ScriptedOpenAIServer(
        [{"content": '{"actions": ["take coin", {"action": "look"}, 3]}'}]
    ) as s:
        alts = propose_alternatives(
            model(s), TASK, OBS, [], "take coin", k=3, admissible=ADMISSIBLE
        )
        assert len(s.chat_requests()) == 1
    assert alts == ["look", "move west"]  # all that is left besides the expert's
    assert propose_alternatives(model(s), TASK, OBS, [], "take coin", k=0) == []
    with pytest.raises(UsageError, match="K"):
        propose_alternatives(model(s), TASK, OBS, [], "take coin", k=-1)


def test_proposer_fits_the_rollouts_interface() -> None:
    with ScriptedOpenAIServer([{"content": '["look", "move west"]'}]) as server:
        propose = proposer(model(server))
        assert propose(TASK, OBS, HISTORY, "take coin", 1) == ["look"]
