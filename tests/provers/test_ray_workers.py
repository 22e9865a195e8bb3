"""``lemmata prove --ray local`` for the check, refine and wz methods, on one real local Ray
instance shared by the module (traffic stays on 127.0.0.1).

Each result must name the Ray node and actor that produced it, and the test looks both up in
Ray's own actor table: a run on local threads writes no such fields and fails here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from lemmata.cli import main

ARITH = "From Coq Require Import Arith Lia."


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray for the module: RaySession leaves a caller's Ray running, so every
    `lemmata prove --ray local` below joins this one instead of starting its own."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is missing in CI: the set-up should install lemmata[ray]")
        pytest.skip("needs the ray extra: pip install 'lemmata[ray]'")
    from lemmata.ray_session import RaySession

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    session = RaySession("local", num_cpus=2).open()
    yield ray
    session.close()


def lemmata(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rows_of(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def assert_ran_in_ray_actors(ray: Any, rows: list[dict[str, Any]], actor_class: str) -> set[str]:
    """Every row names a live node and an actor of ``actor_class`` that Ray ran in another
    process; returns the actor ids."""
    from ray._private.state import state

    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    table = state.actor_table(None)
    actors = set()
    for row in rows:
        assert row["ray_node_id"] in nodes, row
        info = table[row["ray_actor_id"]]
        assert info["ActorClassName"] == actor_class
        assert info["Address"]["NodeID"] == row["ray_node_id"]
        assert info["Pid"] != os.getpid()
        actors.add(row["ray_actor_id"])
    return actors


def test_check_runs_in_ray_actors_and_resumes_there(
    ray_instance, coqtop_path, tmp_path: Path, capsys
) -> None:
    good = [
        {
            "id": f"g{i}",
            "header": ARITH,
            "statement": f"Theorem g{i} : forall n, n + {i} = {i} + n.",
        }
        for i in range(3)
    ]
    bad = {"id": "bad", "header": ARITH, "statement": "Theorem bad : 1 = 2.", "proof": "lia."}
    path = write_jsonl(tmp_path / "in.jsonl", [*good, bad])
    with path.open("a") as fh:
        fh.write("{not json\n")
    out = tmp_path / "r.jsonl"
    args = ["prove", str(path), "--ray", "local", "--workers", "2", "--out", str(out), "--json"]
    code, stdout, stderr = lemmata(capsys, *args)
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert (summary["proved"], summary["failed"], summary["ray"]) == (3, 1, "local")
    assert [p.split(" (")[0] for p in summary["input_problems"]] == ["line 5: not JSON"]
    rows = rows_of(out)
    assert rows["bad"]["status"] == "failed" and rows["g0"]["proof"]
    first = assert_ran_in_ray_actors(ray_instance, list(rows.values()), "_ProverActor")
    assert 1 <= len(first) <= 2

    # --resume on Ray: only the new theorem runs, in a new actor, and is appended.
    write_jsonl(
        path,
        [*good, bad, {"id": "new", "header": ARITH, "statement": "Theorem new : 2 + 2 = 4."}],
    )
    code, stdout, stderr = lemmata(capsys, *args, "--resume")
    assert code == 0, stderr
    again = json.loads(stdout)
    assert (again["skipped_already_done"], again["proved"]) == (4, 1)
    rows = rows_of(out)
    assert len(rows) == 5
    assert not assert_ran_in_ray_actors(ray_instance, [rows["new"]], "_ProverActor") & first


def test_refine_runs_in_ray_actors(ray_instance, coqtop_path, tmp_path: Path, capsys) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [{"id": "add0", "header": ARITH, "statement": "Theorem add0 : forall n, n + 0 = n."}],
    )
    out, traces = tmp_path / "r.jsonl", tmp_path / "traces"
    code, stdout, stderr = lemmata(
        capsys,
        "prove", str(path), "--method", "refine", "--ray", "local", "--budget-calls", "16",
        "--budget-seconds", "60", "--no-value", "--trace-dir", str(traces), "--out", str(out),
        "--json",
    )  # fmt: skip
    assert code == 0, stderr
    assert json.loads(stdout)["proved"] == 1
    row = rows_of(out)["add0"]
    assert row["method"] == "refine" and row["calls"] >= 1
    assert_ran_in_ray_actors(ray_instance, [row], "_ProverActor")
    assert Path(row["trace"]).is_file()  # the local node wrote it where the driver asked


def test_wz_runs_in_a_ray_actor(ray_instance, tmp_path: Path, capsys) -> None:
    path = write_jsonl(
        tmp_path / "ids.jsonl",
        [
            {"id": "row", "lhs": "Sum(binomial(n, k), (k, 0, n))", "rhs": "2**n", "n_min": 0},
            {"id": "wrong", "lhs": "Sum(k, (k, 0, n))", "rhs": "n**2", "n_min": 0},
        ],
    )
    out = tmp_path / "wz"
    code, stdout, stderr = lemmata(
        capsys, "prove", str(path), "--method", "wz", "--ray", "local", "--out-dir", str(out),
        "--json",
    )  # fmt: skip
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert (summary["proved"], summary["refuted"], summary["ray"]) == (1, 1, "local")
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in rows] == ["proved", "refuted"]
    assert len(assert_ran_in_ray_actors(ray_instance, rows, "_WZActor")) == 1


def test_a_bad_ray_address_is_a_usage_error(tmp_path: Path, capsys) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "statement": "Theorem a : True."}])
    out = tmp_path / "r.jsonl"
    code, _, stderr = lemmata(
        capsys, "prove", str(path), "--ray", "not an address", "--out", str(out)
    )
    assert code == 2
    assert re.search(r"--ray 'not an address': give 'local'.*HOST:PORT", stderr)
    assert not out.exists()
