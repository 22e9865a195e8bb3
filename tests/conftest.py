"""Test set-up: every test runs with a fresh HOME, data directory and working directory, and
none of the caller's LEMMATA_* variables, so that nothing outside the test changes a result."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(Path(__file__).parent))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def lean_toolchain() -> str | None:
    return shutil.which("lake") or shutil.which("repl")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    no_lean = pytest.mark.skip(reason="needs a Lean 4 toolchain: no `lake` or `repl` on PATH")
    no_llm = pytest.mark.skip(reason="needs a live model: set LEMMATA_TEST_MODEL to run")
    for item in items:
        if "lean" in item.keywords and lean_toolchain() is None:
            item.add_marker(no_lean)
        if "llm" in item.keywords and not os.environ.get("LEMMATA_TEST_MODEL"):
            item.add_marker(no_llm)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("LEMMATA_") and name != "LEMMATA_TEST_MODEL":
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LEMMATA_DATA_DIR", str(tmp_path / "data"))
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture
def settings():
    from lemmata.settings import Settings

    return Settings.load(config_file=None)


@pytest.fixture
def run_cli(tmp_path: Path):
    """Run the installed ``lemmata`` script in a subprocess, as a user would."""
    import subprocess

    exe = Path(sys.executable).with_name("lemmata")

    def run(
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {}), "COLUMNS": "200", "NO_COLOR": "1"}
        return subprocess.run(
            [str(exe), *args],
            capture_output=True,
            text=True,
            input=input,
            env=full_env,
            timeout=timeout,
        )

    return run


@pytest.fixture(scope="session")
def coqtop_path() -> str:
    """Real Coq. CI installs it (system-packages.txt); elsewhere its absence skips, with why."""
    path = shutil.which("coqtop")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("coqtop is missing in CI: scripts/setup.sh should have installed `coq`")
        pytest.skip("needs Coq: apt-get install coq")
    return path


@pytest.fixture
def coq(coqtop_path: str):
    from lemmata.provers import CoqTop

    verifier = CoqTop(coqtop_path, timeout_s=20)
    yield verifier
    verifier.close()
