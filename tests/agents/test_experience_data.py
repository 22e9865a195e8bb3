"""The three training files (expert, IWM, reflection) built from hand-made records: their
shape, the method's filters, atomic writing and reading rollouts files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experience_steps import coin_step, walk
from scripted_server import ScriptedOpenAIServer

from lemmata.agents.experience import data
from lemmata.agents.experience.data import RolloutWarning, export_sft, read_rollouts
from lemmata.agents.experience.records import Branch, Outcome
from lemmata.agents.experience.reflect import check_reflections
from lemmata.errors import DataSourceError, UsageError
from lemmata.llm import LiteLLMModel


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_three_files_hold_chat_samples_in_the_methods_formats(tmp_path: Path) -> None:
    steps = walk()
    result = export_sft(steps, tmp_path / "run", max_invalid_share=1)
    assert result.counts == {"expert": 2, "iwm": 6, "reflection": 2}
    assert result.dropped == {}
    assert result.reflections_by == "template:v1"
    expert, iwm, refl = (rows(result.files[n]) for n in ("expert", "iwm", "reflection"))
    for line in expert + iwm + refl:
        assert list(line) == ["messages"]
        assert [m["role"] for m in line["messages"]] == ["system", "user", "assistant"]
    # expert: the state, with history and the admissible actions -> the action
    user = expert[1]["messages"][1]["content"]
    assert user.startswith("Task:\nFind the coin and take it.")
    assert "Action:\nopen door\nObservation:\nThe door opens onto the kitchen." in user
    assert "Current observation:\nYou are in the kitchen." in user
    assert "Admissible actions:\n- take coin\n- move west" in user
    assert expert[1]["messages"][2]["content"] == "Action:\ntake coin"
    # IWM: its own world-model system prompt; state + action -> next observation
    assert iwm[0]["messages"][0]["content"] != expert[0]["messages"][0]["content"]
    assert "world model" in iwm[0]["messages"][0]["content"]
    pairs = [
        (r["messages"][1]["content"].rsplit("Action:\n", 1)[1], r["messages"][2]["content"])
        for r in iwm
    ]
    assert ("move west", "Observation:\nYou are in the corridor. It is dark.") in pairs
    assert ("take coin", "Observation:\nYou take the coin. You win!") in pairs
    assert ("take coin", "Observation:\nYou see no coin here.") in pairs
    # reflection: the state -> Thought then the expert's action
    reply = refl[1]["messages"][2]["content"]
    assert reply.startswith("Thought:\n") and reply.endswith("\n\nAction:\ntake coin")
    assert refl[1]["messages"][1]["content"] == user
    # the companions say where each sample came from, and that these reflections are templated
    meta = rows(tmp_path / "run" / "reflection.meta.jsonl")
    assert [m["source"] for m in meta] == ["template", "template"]
    assert [m["index"] for m in meta] == [0, 1]
    assert len(rows(tmp_path / "run" / "iwm.meta.jsonl")) == 6
    assert check_reflections(result.files["reflection"], rollouts=steps) == []


def test_prompt_completion_form_for_trl(tmp_path: Path) -> None:
    result = export_sft(walk(), tmp_path, fmt="prompt-completion")
    for name in ("expert", "iwm", "reflection"):
        for line in rows(result.files[name]):
            assert sorted(line) == ["completion", "prompt"]
            assert [m["role"] for m in line["prompt"]] == ["system", "user"]
            assert [m["role"] for m in line["completion"]] == ["assistant"]
    with pytest.raises(UsageError, match="prompt-completion"):
        export_sft(walk(), tmp_path, fmt="sharegpt")  # type: ignore[arg-type]


def _invalid_heavy() -> list:
    """Four states, each with one valid and three invalid alternatives: 8 valid transitions
    (expert's and one alternative's per state) and 12 invalid ones."""
    steps = []
    for i in range(4):
        alts = (Branch("move west", Outcome(f"Corridor {i}.")),) + tuple(
            Branch(f"eat thing {j}", Outcome(f"You cannot eat thing {j} ({i}).", invalid=True))
            for j in range(3)
        )
        steps.append(coin_step(i, alternatives=alts, observation=f"Kitchen {i}."))
    return steps


def test_invalid_transitions_are_capped_and_kept_aside(tmp_path: Path) -> None:
    result = export_sft(_invalid_heavy(), tmp_path, max_invalid_share=0.2)
    # 8 valid; at most 20% invalid: n / (8 + n) <= 0.2 -> n = 2
    assert result.counts["iwm"] == 10
    meta = rows(tmp_path / "iwm.meta.jsonl")
    assert sum(m["invalid"] for m in meta) == 2
    assert result.dropped == {"iwm": {"invalid-cap": 10}}
    dropped = rows(result.files["dropped"])
    assert len(dropped) == 10 and all(d["file"] == "iwm" for d in dropped)
    assert all(d["reason"].startswith("invalid-cap:") and d["invalid"] for d in dropped)
    assert dropped[0]["sample"]["messages"][2]["content"].startswith("Observation:\nYou cannot")
    # the cap is a setting: 1 keeps every error transition, 0 none
    assert export_sft(_invalid_heavy(), tmp_path / "all", max_invalid_share=1).counts["iwm"] == 20
    assert export_sft(_invalid_heavy(), tmp_path / "none", max_invalid_share=0).counts["iwm"] == 8
    with pytest.raises(UsageError, match="max_invalid_share"):
        export_sft(_invalid_heavy(), tmp_path, max_invalid_share=1.5)


def test_identical_transitions_are_kept_once(tmp_path: Path) -> None:
    step = coin_step()
    result = export_sft([step, step], tmp_path, max_invalid_share=1)
    assert result.counts == {"expert": 2, "iwm": 3, "reflection": 2}
    assert result.dropped == {"iwm": {"duplicate": 3}}


def test_a_crash_while_writing_leaves_the_earlier_files_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    export_sft(walk(), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = {"n": 0}
    real_fsync = data.os.fsync

    def failing_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(data.os, "fsync", failing_fsync)
    with pytest.raises(DataSourceError, match="No space left on device"):
        export_sft(_invalid_heavy(), out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temp file left either


def test_export_with_a_model_writes_and_filters_reflections(tmp_path: Path) -> None:
    good = (
        "I am in the kitchen and the coin is on the table, so taking it should finish the task. "
        "I could move west, but I doubt the corridor helps.\nAction: take coin"
    )
    leaky = "The expert takes the coin here.\nAction: take coin"
    with ScriptedOpenAIServer([{"content": good}, {"content": leaky}]) as server:
        model = LiteLLMModel("openai/scripted-model", api_base=server.base_url, backoff_s=0.01)
        result = export_sft([coin_step(0), coin_step(1)], tmp_path, model=model, concurrency=1)
    assert result.counts["reflection"] == 1
    assert result.reflections_by == "model:openai/scripted-model"
    assert result.dropped["reflection"] == {"leak": 1}
    (kept,) = rows(result.files["reflection"])
    assert kept["messages"][2]["content"].startswith("Thought:\nI am in the kitchen")
    (gone,) = [d for d in rows(result.files["dropped"]) if d["file"] == "reflection"]
    assert gone["reason"] == "leak: expert 'expert'" and gone["index"] == 1
    assert gone["sample"]["reply"] == leaky
    meta = rows(tmp_path / "reflection.meta.jsonl")
    assert meta == [
        {
            "task": "textworld-express/coin/3",
            "split": "train",
            "index": 0,
            "source": "model",
            "writer": "openai/scripted-model",
        }
    ]
    assert "dropped from reflection: leak 1" in result.summary()


def test_read_rollouts_skips_bad_lines_naming_them(tmp_path: Path) -> None:
    good = json.dumps(coin_step().to_dict())
    no_action = coin_step().to_dict()
    del no_action["action"]
    path = tmp_path / "rollouts.jsonl"
    path.write_text(
        "\n".join([good, "{oops", "", json.dumps(no_action), "[1, 2]", good]) + "\n",
        encoding="utf-8",
    )
    with pytest.warns(RolloutWarning, match=r"3 bad record line\(s\): line 2: not JSON") as rec:
        steps = read_rollouts(path)
    assert steps == [coin_step(), coin_step()]
    message = str(rec[0].message)
    assert "line 4: rollout record lacks the field 'action'" in message
    assert "line 5: not a JSON object" in message
    with pytest.raises(DataSourceError, match="line 2"):
        read_rollouts(path, strict=True)
    with pytest.raises(DataSourceError, match="cannot read the rollouts file"):
        read_rollouts(tmp_path / "missing.jsonl")
    # the export reads a rollouts file too
    with pytest.warns(RolloutWarning):
        assert export_sft(path, tmp_path / "run").counts["expert"] == 2
