"""A local Ray instance started by Lemmata leaves the process as it found it."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")


def test_signal_handlers_and_ray_variables_are_given_back(tmp_path: Path, monkeypatch) -> None:
    from lemmata.ray_session import RaySession

    for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(key, raising=False)
    before = signal.getsignal(signal.SIGTERM)
    for n in range(2):  # a second instance, under another HOME, must start as the first did
        monkeypatch.setenv("HOME", str(tmp_path / f"home{n}"))
        with RaySession("local", num_cpus=1):
            assert ray.get(ray.remote(lambda: 41 + 1).remote()) == 42
        assert not ray.is_initialized()
        assert signal.getsignal(signal.SIGTERM) is before
        assert "RAY_AUTH_MODE" not in os.environ and "RAY_AUTH_TOKEN" not in os.environ
        assert not (tmp_path / f"home{n}" / ".ray" / "auth_token").exists()  # no secret on disk


def test_a_stopped_fork_does_not_stop_its_parent_after_ray() -> None:
    from lemmata.ray_session import RaySession

    with RaySession("local", num_cpus=1):
        pass
    child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
    child.start()
    child.terminate()
    child.join(10)
    assert child.exitcode == -signal.SIGTERM


def test_a_running_ray_of_the_callers_is_left_running() -> None:
    from lemmata.ray_session import RaySession

    outer = RaySession("local", num_cpus=1).open()  # stands for the caller's own ray.init
    try:
        with RaySession("local"):
            assert ray.is_initialized()
        assert ray.is_initialized()
    finally:
        outer.close()
