"""Every notebook in notebooks/ runs top to bottom on the offline defaults (nbclient)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, coqtop_path: str, tmp_path: Path) -> None:
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the notebooks extra is missing in CI")
        pytest.skip("needs the notebooks extra: pip install 'lemmata[notebooks]'")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any(
        o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for o in outputs
    )


@pytest.mark.parametrize(
    "capability", ["provers", "memory", "research", "gui", "experience", "agent"]
)
def test_there_is_a_notebook_for_each_capability(capability: str) -> None:
    assert any(p.name == f"{capability}.ipynb" for p in NOTEBOOKS)
