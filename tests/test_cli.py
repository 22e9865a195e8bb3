"""The ``lemmata`` command, run as a user runs it: a real process, its output and exit code."""

from __future__ import annotations

import json
import socket

from scripted_server import ScriptedOpenAIServer


def test_doctor_reports_and_succeeds(run_cli) -> None:
    out = run_cli("doctor", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] is True
    parts = {(c["section"], c["name"]): c for c in report["checks"]}
    assert parts[("core", "litellm")]["status"] == "ok"
    assert parts[("embedder", "minilm")]["status"] == "ok"
    for check in report["checks"]:
        if check["status"] == "missing":
            assert check["fix"], check  # every missing part says how to get it
    gui = parts[("extras", "gui")]
    assert gui["status"] == "ok" or gui["fix"] == "pip install 'lemmata[gui]'"


def test_doctor_table_shows_install_commands(run_cli) -> None:
    out = run_cli("doctor")
    assert out.returncode == 0
    assert "Everything required works" in out.stdout
    assert "lemmata[" in out.stdout or "extras" in out.stdout


def test_doctor_exits_1_when_the_data_dir_is_unusable(run_cli, tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = run_cli("doctor", "--json", env={"LEMMATA_DATA_DIR": str(blocker / "sub")})
    assert out.returncode == 1
    broken = [c for c in json.loads(out.stdout)["checks"] if c["status"] == "broken"]
    assert [c["name"] for c in broken] == ["data_dir"]
    assert "LEMMATA_DATA_DIR" in broken[0]["fix"]


def test_doctor_ping_reaches_the_model(run_cli) -> None:
    with ScriptedOpenAIServer([{"content": "ready"}]) as srv:
        out = run_cli(
            "--model",
            "openai/scripted-model",
            "--api-base",
            srv.base_url,
            "doctor",
            "--json",
            "--ping",
        )
    assert out.returncode == 0, out.stdout
    ping = [c for c in json.loads(out.stdout)["checks"] if c["name"] == "ping"][0]
    assert ping["status"] == "ok" and "ready" in ping["detail"]


def _one_line_error(out, code: str, setting: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"lemmata: error[{code}]") and setting in lines[0]


def test_chat_without_a_model(run_cli) -> None:
    _one_line_error(run_cli("chat", "hi"), "model_not_configured", "LEMMATA_MODEL")


def test_unknown_model_name(run_cli) -> None:
    _one_line_error(
        run_cli("--model", "no-such-model-xyz", "chat", "hi"), "unknown_model", "LEMMATA_MODEL"
    )


def test_model_the_server_does_not_have(run_cli) -> None:
    with ScriptedOpenAIServer([], models=("other",)) as srv:
        out = run_cli("--model", "openai/missing", "--api-base", srv.base_url, "chat", "hi")
    _one_line_error(out, "unknown_model", "LEMMATA_MODEL")


def test_unreachable_api_base(run_cli) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = run_cli(
        "--model",
        "openai/m",
        "--api-base",
        f"http://127.0.0.1:{port}/v1",
        "chat",
        "hi",
        env={"LEMMATA_LLM_BACKOFF_S": "0.01"},
    )
    _one_line_error(out, "model_unreachable", "LEMMATA_API_BASE")


def test_missing_api_key(run_cli) -> None:
    _one_line_error(
        run_cli("--model", "openai/gpt-4o-mini", "chat", "hi"), "missing_api_key", "LEMMATA_API_KEY"
    )


def test_broken_settings_file_names_file_and_line(run_cli, tmp_path) -> None:
    cfg = tmp_path / "lemmata.toml"
    cfg.write_text('model = "openai/x"\ntorch_threads = "two"\n')
    out = run_cli("--config", str(cfg), "doctor")
    _one_line_error(out, "settings_file", f"{cfg}:2")


def test_bad_variable_names_it(run_cli) -> None:
    out = run_cli("doctor", env={"LEMMATA_LLM_TIMEOUT_S": "-5"})
    _one_line_error(out, "config", "LEMMATA_LLM_TIMEOUT_S")


def test_chat_through_a_local_openai_compatible_server(run_cli) -> None:
    with ScriptedOpenAIServer(
        [{"content": "2 + 2 = 4", "usage": {"prompt_tokens": 5, "completion_tokens": 6}}]
    ) as srv:
        out = run_cli(
            "--model", "openai/scripted-model", "--api-base", srv.base_url, "chat", "--json", "2+2?"
        )
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    assert reply["content"] == "2 + 2 = 4" and reply["scripted"] is False
    assert reply["usage"]["prompt_tokens"] == 5 and reply["usage"]["attempts"] == 1


def test_embed_ranks_by_meaning(run_cli, tmp_path) -> None:
    texts = tmp_path / "texts.txt"
    texts.write_text("Coq checks proofs.\nThe weather is sunny today.\nLean 4 verifies theorems.\n")
    out = run_cli("embed", "--file", str(texts), "--query", "a proof assistant", "--json")
    assert out.returncode == 0, out.stderr
    ranked = [r["text"] for r in json.loads(out.stdout)]
    assert ranked[-1] == "The weather is sunny today."


def test_embed_without_texts_is_a_usage_error(run_cli) -> None:
    out = run_cli("embed")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--file" in out.stderr


def test_version(run_cli) -> None:
    from lemmata import __version__

    out = run_cli("version")
    assert out.returncode == 0 and out.stdout.strip() == __version__
