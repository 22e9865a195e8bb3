"""The wheel holds one ordinary tree: the linked capability folders, data files and prompts."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tracked_copy(dest: Path) -> Path:
    """The repository's tracked files (links kept as links) copied to ``dest``: a wheel built
    in the working tree would reuse ``build/``, whose stale copies hide a data file that the
    package data no longer (or never) names."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, timeout=60
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source, target = ROOT / name, dest / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet committed
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return dest


@pytest.mark.slow
def test_wheel_contains_the_capabilities_and_their_data(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout (it builds from the tracked files)")
    source = _tracked_copy(tmp_path / "src")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = (tmp_path / "dist").glob("lemmata-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (
        "lemmata/__init__.py",
        "lemmata/py.typed",
        "lemmata/memory/__init__.py",
        "lemmata/agents/__init__.py",
        "lemmata/gui/__init__.py",
        "lemmata/environments/__init__.py",
        "lemmata/provers/coq/verifier.py",
        "lemmata/provers/wz/zeilberger.py",
        "lemmata/provers/suites/coq_basic.jsonl",
        "lemmata/provers/suites/wz_identities.jsonl",
        "lemmata/provers/wz/prompts/discharge.toml",
        "lemmata/agents/prompts/agent.toml",
        "lemmata/agents/experience/prompts/reflection.toml",
        "lemmata/environments/coq_tactics.json",
        "lemmata/agents/router_weights.json",  # the offline router's fitted memory gate
        "lemmata/provers/refine/value_model.pt",
        "lemmata/gui/data/realapps.toml",  # the real-application grounding instructions
        "lemmata/memory/data/wordnet_nouns.json.gz",  # WordNet's noun types, with its licence
        "lemmata/memory/data/WORDNET_LICENSE",
    ):
        assert path in names, path
    assert not any(
        n.startswith(("memory/", "provers/", "tests/")) for n in names
    )  # no top-level packages
