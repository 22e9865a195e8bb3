"""The examples in the docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lemmata

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(lemmata.__path__, "lemmata.") if m.name != "lemmata.cli"
) + ["lemmata"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring examples failed in {name}"


def test_readme_python_example_runs(coqtop_path, capsys) -> None:
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "the README shows the SDK"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "scripted:script" in out and "pass None ()" in out
