"""Proof workers on a real local Ray instance (traffic stays on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lemmata.provers.runner import Theorem, run_batch
from lemmata.settings import Settings

ARITH = "From Coq Require Import Arith Lia."


@pytest.fixture(scope="module")
def ray_module():
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is missing in CI: the set-up should install lemmata[ray]")
        pytest.skip("needs the ray extra: pip install 'lemmata[ray]'")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    return ray


def theorems() -> list[Theorem]:
    good = [
        Theorem(f"g{i}", f"Theorem g{i} : forall n : nat, n + {i} = {i} + n.", ARITH)
        for i in range(4)
    ]
    return [*good, Theorem("bad", "Theorem bad : 1 = 2.", ARITH, "reflexivity.")]


def test_workers_on_a_local_ray_instance(ray_module, coqtop_path, tmp_path: Path) -> None:
    """run_batch over Ray workers; the instance is started for the run and gone after it."""
    import functools

    from lemmata.provers.ray_workers import RayCluster, check_worker, remote_settings

    out = tmp_path / "ray.jsonl"
    settings = remote_settings(Settings.load(config_file=None))
    with RayCluster("local", workers=2) as cluster:
        build = functools.partial(check_worker, "coq", settings, 20)
        summary = run_batch(
            theorems(), cluster.factory(build, "coq"), out=out, workers=2, timeout=20
        )
        actors = set(cluster.actor_ids)
        node = ray_module.get_runtime_context().get_node_id()
    assert not ray_module.is_initialized()
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert summary.counts == {"proved": 4, "failed": 1}
    assert rows["bad"]["failure_mode"]["kind"] == "type_mismatch"
    assert all(r["backend"] == "coq" for r in rows.values())
    assert {r["ray_node_id"] for r in rows.values()} == {node}
    assert {r["ray_actor_id"] for r in rows.values()} <= actors and len(actors) == 2


def test_cli_joins_a_running_cluster_by_address(ray_module, coqtop_path, tmp_path: Path) -> None:
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray_cli, "the ray extra installs the `ray` command"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # A cluster of our own, with its own token under this test's HOME (Ray's token auth).
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    subprocess.run(
        [ray_cli, "get-auth-token", "--generate"], capture_output=True, env=env, timeout=60
    )
    # Leftovers of the local instance of the test before can make `ray start` fail.
    subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
    started = subprocess.run(
        [
            ray_cli,
            "start",
            "--head",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--include-dashboard=false",
            "--num-cpus=2",
            "--disable-usage-stats",
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert started.returncode == 0, (started.stdout + started.stderr)[-3000:]
    try:
        path = tmp_path / "in.jsonl"
        path.write_text("".join(json.dumps(t.__dict__) + "\n" for t in theorems()))
        out = tmp_path / "r.jsonl"
        # As Ray asks of every client of a cluster with token authentication.
        run = subprocess.run(
            [
                str(Path(sys.executable).with_name("lemmata")),
                "prove",
                str(path),
                "--ray",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--out",
                str(out),
                "--json",
            ],
            capture_output=True,
            text=True,
            env=env | {"RAY_AUTH_MODE": "token"},
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        summary = json.loads(run.stdout)
        assert (summary["proved"], summary["failed"], summary["ray"]) == (4, 1, f"127.0.0.1:{port}")
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        # Node and actor ids as the cluster's actors read them from Ray's runtime context.
        assert all(re.fullmatch("[0-9a-f]{56}", r["ray_node_id"]) for r in rows)
        assert len({r["ray_node_id"] for r in rows}) == 1
        assert 1 <= len({r["ray_actor_id"] for r in rows}) <= 2
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)


def test_ray_missing_says_how_to_install(monkeypatch) -> None:
    import lemmata.deps as deps
    from lemmata.errors import MissingDependency
    from lemmata.provers.ray_workers import RayCluster

    monkeypatch.setattr(deps, "missing_modules", lambda pairs: ["ray"])
    monkeypatch.setattr("lemmata.provers.ray_workers.require_extra", deps.require_extra)
    with pytest.raises(MissingDependency, match=r"lemmata\[ray\]"):
        RayCluster("local")
