"""Each package's ``__all__`` lists exactly its public names, and every one resolves."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest


def _modules() -> list[str]:
    """Every module of the package, walked rather than listed, so a new one is checked too;
    private modules (a ``_`` name) keep no ``__all__``."""
    import lemmata

    names = ["lemmata"]
    for info in pkgutil.walk_packages(lemmata.__path__, "lemmata."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(set(names))


PACKAGES = _modules()


def test_the_walk_finds_every_capability() -> None:
    # the capability folders are symbolic links: a walk that stopped at them would check nothing
    for prefix in ("agents.research", "memory", "provers.wz", "gui", "environments"):
        assert sum(p.startswith(f"lemmata.{prefix}.") for p in PACKAGES) >= 3, prefix


@pytest.mark.parametrize("name", PACKAGES)
def test_all_resolves(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list)
    for member in module.__all__:
        assert getattr(module, member) is not None, f"{name}.{member}"


def _defined_in(value: object, name: str) -> bool:
    # a module's own definitions, or its subpackage's (``lemmata.cli_kit`` is not ``lemmata.cli``'s)
    home = getattr(value, "__module__", "") or ""
    return home == name or home.startswith(name + ".")


@pytest.mark.parametrize("name", [p for p in PACKAGES if p != "lemmata"])
def test_all_lists_every_public_definition(name: str) -> None:
    module = importlib.import_module(name)
    defined = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(v) or inspect.isfunction(v))
        and _defined_in(v, name)
    }
    assert defined <= set(module.__all__), (
        f"{name}: not in __all__: {defined - set(module.__all__)}"
    )


def test_capability_folders_are_subpackages() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for folder in ("agents", "memory", "provers", "environments", "gui"):
        module = importlib.import_module(f"lemmata.{folder}")
        assert Path(module.__file__).resolve().parent == root / folder
