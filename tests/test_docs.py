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
