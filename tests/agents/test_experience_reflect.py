"""Reflections: the checker over strings and files, the offline templates, and reflections
written by a model on the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experience_steps import coin_step, walk
from scripted_server import ScriptedOpenAIServer

from lemmata.agents.experience.data import export_sft
from lemmata.agents.experience.records import Branch, Outcome
from lemmata.agents.experience.reflect import (
    check_reflections,
    check_text,
    reflection_messages,
    template_reflection,
    write_reflections,
)
from lemmata.errors import DataSourceError
from lemmata.llm import LiteLLMModel, ScriptedModel

CLEAN = [
    # Anticipatory reasoning, the current observation stated as fact, natural wording.
    "The observation shows I am in the kitchen and a coin lies on the table. My task is to "
    "take the coin, so taking it should complete the task. I could move west, but I doubt the "
    "corridor holds anything I need. Another option is to look around, though I already know "
    "what is here. My best move is to take the coin now.",
    "I expect that opening the door will let me reach the kitchen; the door is closed, so "
    "nothing behind it is visible yet. Going there should let me find the coin if it is in "
    "the kitchen. This should result in progress, and I would rather not waste a turn.",
    "Earlier I opened the door and the hall became visible. Heating the water should "
    "demonstrate that it boils at this temperature. An option a bit riskier is to wait, but "
    "waiting would probably change nothing. My first choice is to turn on the stove.",
    "I expect the next observation will show the box open. If the result was what I hope, "
    "I can continue; to check whether the lid is locked I will try opening it.",
]

LEAKY = [
    ("Action 1 would waste a turn, so I take the coin.", "label", "Action 1"),
    ("Compared with option B, taking the coin is better.", "label", "option B"),
    ("Alternative (b) would fail here.", "label", "Alternative (b)"),
    ("I prefer this over choice #2 since it wins.", "label", "choice #2"),
    ("Among the alternatives listed, taking the coin wins.", "label", "alternatives listed"),
    ("The expert action is to take the coin.", "expert", "expert"),
    ("As in the demonstration, I take the coin.", "expert", "demonstration"),
    ("The correct action here is to take the coin.", "expert", "The correct action"),
    (
        "After taking the coin, the observation showed that I won.",
        "outcome",
        "After taking the coin, the observation showed",
    ),
    ("Moving west resulted in a dark corridor.", "outcome", "resulted in"),
    ("Moving west, which results in a corridor, is useless.", "outcome", "which results in"),
    ("We saw that the corridor is dark.", "outcome", "We saw"),
    ("The resulting state shows a dark corridor.", "outcome", "The resulting state shows"),
    ("When I tried eating the table it was refused.", "outcome", "When I tried"),
    ("Trying to eat the table gave an error.", "outcome", "Trying to eat the table gave"),
    ("It turned out the corridor was empty.", "outcome", "It turned out"),
]


@pytest.mark.parametrize(("text", "kind", "span"), LEAKY)
def test_checker_flags_each_kind_of_leak_with_its_span(text: str, kind: str, span: str) -> None:
    findings = check_text(text)
    assert [(f.kind, f.span) for f in findings] == [(kind, span)]
    assert findings[0].line is None and findings[0].message


@pytest.mark.parametrize("text", CLEAN)
def test_checker_raises_no_false_alarm_on_anticipatory_reasoning(text: str) -> None:
    assert check_text(text) == []


def test_checker_flags_doubled_text_and_a_different_conclusion() -> None:
    once = CLEAN[0]
    assert [f.kind for f in check_text(once + once)] == ["doubled"]
    paragraphs = f"{CLEAN[1]}\n\n{CLEAN[0]}\n\n{CLEAN[1]}"
    assert [f.kind for f in check_text(paragraphs)] == ["doubled"]
    wrong = check_text(once, action="move west", expected="Take coin")
    assert [(f.kind, f.span) for f in wrong] == [("mismatch", "move west")]
    assert check_text(once, action="take  coin.", expected="Take coin") == []


def test_templates_reason_anticipatorily_and_pass_the_checker() -> None:
    steps = [*walk(), coin_step(alternatives=())]
    refls = write_reflections(steps, None)
    assert [r.source for r in refls] == ["template"] * 3
    assert all(r.ok and r.writer == "template:v1" for r in refls)
    for step, r in zip(steps, refls, strict=True):
        assert (
            r.text is not None and check_text(r.text, action=r.action, expected=step.action) == []
        )
        # the outcomes judge the options but are never revealed
        for branch in step.alternatives:
            if branch.outcome.observation != step.observation:
                assert branch.outcome.observation not in r.text
        assert step.expert.observation not in r.text
    text = refls[1].text or ""
    assert "I could move west" in text and "refused" in text and "complete the task" in text
    assert template_reflection(steps[1], 1) == refls[1]


def _write_lines(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path


def _chat(thought: str, action: str = "take coin", user: str = "Task:\nFind the coin.") -> dict:
    return {
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": user},
            {"role": "assistant", "content": f"Thought:\n{thought}\n\nAction:\n{action}"},
        ]
    }


def _pc(thought: str, action: str = "take coin") -> dict:
    reply = {"role": "assistant", "content": f"Thought:\n{thought}\n\nAction:\n{action}"}
    return {"prompt": [{"role": "user", "content": "Task:\nFind the coin."}], "completion": [reply]}


@pytest.mark.parametrize("shape", [_chat, _pc])
def test_checker_names_the_lines_of_a_leaky_file(tmp_path: Path, shape) -> None:
    path = _write_lines(
        tmp_path / "reflection.jsonl",
        [
            shape(CLEAN[0]),
            shape("Action 2 is worse, so I take the coin."),
            "{not json",
            shape(CLEAN[1]),
            shape("After moving west, the observation showed a dark corridor. The expert agrees."),
            {"text": "no messages here"},
        ],
    )
    found = [(f.line, f.kind, f.span) for f in check_reflections(path)]
    assert found[0] == (2, "label", "Action 2")
    assert found[1][:2] == (3, "format")
    assert found[2:4] == [
        (5, "expert", "expert"),
        (5, "outcome", "After moving west, the observation showed"),
    ]
    assert found[4][:2] == (6, "format")
    assert len(found) == 5


def test_checker_passes_a_clean_file_and_checks_actions_against_the_records(tmp_path: Path) -> None:
    steps = walk()
    result = export_sft(steps, tmp_path / "run")
    assert check_reflections(result.files["reflection"], rollouts=steps) == []
    # a user's file whose reflection concludes on another action than the record's
    rows = [json.loads(line) for line in result.files["reflection"].read_text().splitlines()]
    rows[1]["messages"][2]["content"] = rows[1]["messages"][2]["content"].replace(
        "Action:\ntake coin", "Action:\nmove west"
    )
    rows[0]["messages"][2]["content"] = "Thought:\nI open it.\n\nAction:\nfly away"
    path = _write_lines(tmp_path / "mine.jsonl", rows)
    with_records = check_reflections(path, rollouts=steps)
    assert [(f.line, f.kind, f.span) for f in with_records] == [
        (1, "mismatch", "fly away"),
        (2, "mismatch", "move west"),
    ]
    # without the records, only the action that is not admissible at all is caught
    assert [(f.line, f.kind) for f in check_reflections(path)] == [(1, "mismatch")]


def test_checker_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataSourceError, match="cannot read the reflection file"):
        check_reflections(tmp_path / "nope.jsonl")


def test_the_prompt_explains_the_principle_and_hides_labels() -> None:
    system, user = reflection_messages(coin_step())
    principle = " ".join(system["content"].split())
    assert "will stand exactly where this monologue stands" in principle
    assert "no label" in principle and "no knowledge of what any action will return" in principle
    text = " ".join(user["content"].split())
    assert "200 to 400 words" in text
    # the input slots carry no privileged label and no numbered menu to echo
    assert "expert" not in text.split("Reference outcomes")[0].lower()
    assert "1. move west" not in text and "Action 1: move west" not in text
    # grounded: the outcomes are given to the writer, for its judgement only
    assert "You are in the corridor. It is dark." in text and "private judgment" in text
    assert "- move west" in user["content"] and text.endswith("Action: take coin")


GOOD = f"{CLEAN[0]}\n\nAction: take coin"


def test_model_reflections_are_filtered_with_their_reasons() -> None:
    steps = [coin_step(i) for i in range(6)]
    script = [
        {"content": GOOD},
        {"content": "Action 1 leads nowhere, so I take the coin.\nAction: take coin"},
        {"content": f"{CLEAN[0]}\nAction: move west"},
        {"content": f"{CLEAN[0]}{CLEAN[0]}\nAction: take coin"},
        {"content": "I would rather not say."},
        {
            "status": 400,
            "body": {"error": {"message": "bad request", "type": "invalid_request_error"}},
        },
    ]
    seen: list[tuple[int, int]] = []
    with ScriptedOpenAIServer(script) as server:
        model = LiteLLMModel(
            "openai/scripted-model", api_base=server.base_url, backoff_s=0.01, max_retries=0
        )
        refls = write_reflections(
            steps, model, concurrency=1, progress=lambda d, t: seen.append((d, t))
        )
        sent = server.chat_requests()
    assert refls[0].ok and refls[0].text == CLEAN[0] and refls[0].source == "model"
    assert refls[0].writer == "openai/scripted-model"
    reasons = [r.reason or "" for r in refls[1:]]
    assert reasons[0] == "leak: label 'Action 1'"
    assert reasons[1].startswith("mismatch: concludes on 'move west'")
    assert reasons[2].startswith("doubled:")
    assert reasons[3].startswith("unparseable:")
    assert reasons[4].startswith("model-error: model_call_failed")
    assert all(not r.ok for r in refls[1:])
    assert seen[-1] == (6, 6) and len(seen) == 6
    # frequency_penalty where the provider supports it; length asked in the prompt, not capped
    assert all(req.get("frequency_penalty") == 0.3 for req in sent)
    assert all("max_tokens" not in req for req in sent)


def test_many_reflections_in_parallel_stay_in_order() -> None:
    steps = [coin_step(i, observation=f"Room {i}. A coin lies here.") for i in range(8)]

    def reply(messages, tools):
        room = messages[-1]["content"].split("Current observation:\n", 1)[1].split(".", 1)[0]
        return f"I am in {room}. Taking the coin should finish the task.\nAction: take coin"

    model = ScriptedModel(reply)
    refls = write_reflections(steps, model, concurrency=4)
    assert [r.step for r in refls] == list(range(8))
    assert [r.text.split(".")[0] for r in refls if r.text] == [
        f"I am in Room {i}" for i in range(8)
    ]


def test_an_alternative_that_also_wins_is_still_reasoned_about() -> None:
    step = coin_step(alternatives=(Branch("look", Outcome("You win!", success=True)),))
    r = template_reflection(step)
    assert r.ok and "I could look" in (r.text or "") and "You win" not in (r.text or "")
