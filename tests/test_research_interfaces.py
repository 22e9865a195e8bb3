"""The research agent's sandbox, CLI, shell command, evaluation suite, and its LLM path through
litellm against the scripted OpenAI-compatible server on 127.0.0.1 (tests/scripted_server.py):
a test device that replies from a script, not a model."""

from __future__ import annotations

import json

import pytest
from scripted_server import ScriptedOpenAIServer

from lemmata.agents.research import research
from lemmata.agents.research.synthetic import generate
from lemmata.environments.sandbox import SandboxLimits, run_python
from lemmata.llm import LiteLLMModel


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("gen") / "clinic.sqlite", seed=9)


# -- the sandbox ---------------------------------------------------------------------------------


def test_sandbox_reads_the_database_and_writes_only_its_output(gen, tmp_path):
    table = gen.checklist[0].table
    out = tmp_path / "out"
    code = (
        f"df = query('SELECT COUNT(*) AS n FROM {table}')\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2]); plt.savefig(OUTPUT_DIR + '/plot.png')\n"
        "print('rows', int(df.n[0]))\n"
        "result({'n': int(df.n[0])})\n"
    )
    r = run_python(code, database=gen.path, output_dir=out)
    assert r.status == "ok", r.stderr
    assert r.value["n"] > 100 and "rows" in r.stdout and r.files == ["plot.png"]
    forbidden = {
        "write outside": f"open({str(tmp_path / 'evil.txt')!r}, 'w').write('x')",
        "delete": f"import os; os.remove({str(gen.path)!r})",
        "network": "import socket; socket.create_connection(('127.0.0.1', 80), timeout=1)",
        "process": "import subprocess; subprocess.run(['true'])",
        "other database": f"import sqlite3; sqlite3.connect({str(tmp_path / 'x.db')!r})",
        "write the database": f"db.execute('DELETE FROM {table}')",
    }
    for name, snippet in forbidden.items():
        r = run_python(snippet, database=gen.path, output_dir=out)
        assert r.status in {"forbidden", "error"} and r.status != "ok", name
        if name != "write the database":
            assert r.status == "forbidden", (name, r.stderr)
    assert not (tmp_path / "evil.txt").exists() and gen.path.exists()
    assert "readonly" in run_python(f"db.execute('DELETE FROM {table}')", database=gen.path).stderr


def test_sandbox_limits_are_outcomes(tmp_path):
    # Each case leaves the other limits far away, so that a loaded machine (a slow start, CPU
    # time accruing slowly) cannot make one limit's outcome another's.
    fast = SandboxLimits(cpu_s=2, wall_s=4, memory_mb=1024)
    roomy = SandboxLimits(cpu_s=2, wall_s=300, memory_mb=1024)
    assert run_python("while True: pass", limits=roomy).status == "cpu"
    assert run_python("import time; time.sleep(30)", limits=fast).status == "timeout"
    assert run_python("x = bytearray(4 * 1024 ** 3)", limits=roomy).status == "memory"
    r = run_python("1 / 0", limits=roomy)
    assert r.status == "error" and "ZeroDivisionError" in r.observation()


# -- CLI and shell --------------------------------------------------------------------------------


def test_cli_research_json_and_bad_input(run_cli, gen, tmp_path):
    before = gen.path.read_bytes()
    r = run_cli("research", str(gen.path), "--out", str(tmp_path / "o"), "--json", "--no-figures")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["stats"]["explorer"] == "statistical (offline)" and len(data["insights"]) >= 8
    assert gen.path.read_bytes() == before
    r = run_cli("research", str(gen.path), "--out", str(tmp_path / "o"), "--entity", "42")
    assert r.returncode == 2 and "column=value" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "junk.sqlite").write_text("junk")
    r = run_cli("research", str(tmp_path / "junk.sqlite"), "--out", str(tmp_path / "o2"))
    assert r.returncode == 2 and "not a readable SQLite database" in r.stderr


def test_cli_research_eval(run_cli):
    r = run_cli("research-eval", "--seeds", "9", "--json", "--offline")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["tasks"] == 2 and data["recall"] >= 0.8
    assert set(data["by_kind"]) >= {"trend", "outlier", "share", "change"}
    assert data["null_insights_per_db"] is not None
    r = run_cli("research-eval", "--seeds", "x-y")
    assert r.returncode == 2 and "--seeds" in r.stderr


def test_shell_research(settings, gen, tmp_path):
    from rich.console import Console

    from lemmata.agents.research.shell import COMMANDS
    from lemmata.shell import Shell

    console = Console(record=True, width=200, color_system=None)
    shell = Shell(settings, console=console, commands=COMMANDS)
    shell.handle(f"research {gen.path} --out {tmp_path / 'o'} --entity {gen.entity} -n 3")
    text = console.export_text()
    assert "insights in" in text and "report:" in text and gen.entity in text
    shell.handle("research")
    assert "required: db, --out" in console.export_text()


# -- the LLM path -------------------------------------------------------------------------------


def _reply(obj: dict) -> dict:
    return {"content": json.dumps(obj)}


def test_model_proposals_are_checked_tested_and_labelled(gen, tmp_path):
    table = gen.checklist[0].table
    column = gen.checklist[0].columns[0]
    proposals = {
        "hypotheses": [
            {
                "kind": "distribution",
                "table": table,
                "columns": [column],
                "sql": f"SELECT MAX({column}) FROM {table}",
                "claim": f"The largest {column} is {{value}}.",
                "rationale": "extremes matter",
            },
            {"kind": "trend", "table": "no_such_table", "columns": ["x"]},
            {"kind": "vibes", "table": table, "columns": [column]},
            {
                "kind": "other",
                "table": table,
                "columns": [column],
                "python": f"print('mean', float(query('SELECT AVG({column}) AS m FROM {table}').m[0]))",
            },
            {"kind": "other", "table": table, "columns": [column], "sql": f"DELETE FROM {table}"},
        ]
    }
    with ScriptedOpenAIServer([_reply(proposals)]) as srv:
        model = LiteLLMModel("openai/scripted-model", api_base=srv.base_url, backoff_s=0.01)
        report = research(gen.path, tmp_path / "o", model=model, budget_turns=60, figures=False)
        first_prompt = srv.chat_requests()[0]["messages"][-1]["content"]
    assert table in first_prompt and "Schema" in first_prompt
    assert report.stats["explorer"].startswith("model openai/scripted-model")
    mine = [i for i in report.insights if i.support.get("origin") == "model"]
    assert len(mine) == 1 and mine[0].evidence_sql == f"SELECT MAX({column}) FROM {table}"
    assert mine[0].statement.startswith(f"The largest {column} is ")
    notes = "\n".join(report.observations)
    assert "no_such_table" in notes and "'vibes' is not one of" in notes
    assert "the script ran" in notes and "mean" in notes
    assert "only reading statements" in notes
    # The statistical explorer still ran all its own hypotheses.
    assert len(report.insights) >= 9


def test_model_rewrites_statements_only_when_the_value_is_kept(gen, tmp_path):
    base = research(gen.path, tmp_path / "base", budget_turns=60, figures=False)
    n = len(base.insights)
    sentences = ["Rewritten finding, with no number." for _ in range(n)]
    sentences[0] = f"Clearly put: the value is {base.insights[0].value:.4g}."
    script = [_reply({"hypotheses": []}), _reply({"statements": sentences})]
    with ScriptedOpenAIServer(script) as srv:
        model = LiteLLMModel("openai/scripted-model", api_base=srv.base_url, backoff_s=0.01)
        report = research(gen.path, tmp_path / "o", model=model, budget_turns=60, figures=False)
    by_key = {i.key(): i for i in report.insights}
    first = by_key[base.insights[0].key()]
    assert first.statement.startswith("Clearly put")
    assert first.support["original_statement"] == base.insights[0].statement
    kept = [i for i in report.insights if i.key() != first.key() and i.value is not None]
    assert all(not i.statement.startswith("Rewritten") for i in kept)
