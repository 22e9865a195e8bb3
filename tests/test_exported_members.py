"""Each package's ``__all__`` lists exactly its public names, and every one resolves."""

from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = [
    "lemmata",
    "lemmata.llm",
    "lemmata.errors",
    "lemmata.settings",
    "lemmata.embeddings",
    "lemmata.deps",
    "lemmata.commands",
    "lemmata.operations",
    "lemmata.mcp_server",
    "lemmata.jupyter",
    "lemmata.tracing",
    "lemmata.agents.agent",
    "lemmata.agents.router",
    "lemmata.agents.research.operations",
    "lemmata.memory.operations",
    "lemmata.memory.store",
    "lemmata.provers.operations",
    "lemmata.provers.tasks",
    "lemmata.provers.identity_text",
    "lemmata.gui.operations",
    "lemmata.doctor",
    "lemmata.shell",
    "lemmata.agents",
    "lemmata.agents.memory",
    "lemmata.agents.research",
    "lemmata.agents.research.types",
    "lemmata.agents.research.profile",
    "lemmata.agents.research.explore",
    "lemmata.agents.research.evidence",
    "lemmata.agents.research.graph",
    "lemmata.agents.research.model",
    "lemmata.agents.research.report",
    "lemmata.agents.research.run",
    "lemmata.agents.research.synthetic",
    "lemmata.agents.research.score",
    "lemmata.agents.research.ddrbench",
    "lemmata.agents.research.evaluate",
    "lemmata.agents.research.realdata_sealed",
    "lemmata.agents.research.realdata_sealed2",
    "lemmata.agents.research.realdata3",
    "lemmata.agents.research.cli",
    "lemmata.agents.research.shell",
    "lemmata.agents.experience",
    "lemmata.agents.experience.records",
    "lemmata.agents.experience.rollouts",
    "lemmata.agents.experience.collection",
    "lemmata.agents.experience.data",
    "lemmata.agents.experience.reflect",
    "lemmata.agents.experience.llm",
    "lemmata.agents.experience.policy",
    "lemmata.agents.experience.cli",
    "lemmata.agents.experience.shell",
    "lemmata.environments.text",
    "lemmata.environments.textworld_express",
    "lemmata.environments.scienceworld",
    "lemmata.environments.proof_env",
    "lemmata.environments.database",
    "lemmata.environments.sandbox",
    "lemmata.memory.cli",
    "lemmata.memory.hypernyms",
    "lemmata.memory.shell",
    "lemmata.memory.write_plan",
    "lemmata.memory.rows",
    "lemmata.memory.schema",
    "lemmata.memory.search_sql",
    "lemmata.memory.background",
    "lemmata.memory.commit",
    "lemmata.memory.kinds",
    "lemmata.memory",
    "lemmata.provers",
    "lemmata.provers.coq.files",
    "lemmata.provers.refine",
    "lemmata.provers.refine.backend",
    "lemmata.provers.refine.baselines",
    "lemmata.provers.refine.cli",
    "lemmata.provers.refine.cli_draw",
    "lemmata.provers.refine.draw",
    "lemmata.provers.refine.goal",
    "lemmata.provers.refine.model_policy",
    "lemmata.provers.refine.policy",
    "lemmata.provers.refine.replay",
    "lemmata.provers.refine.search",
    "lemmata.provers.refine.trace",
    "lemmata.provers.refine.value",
    "lemmata.environments",
    "lemmata.gui",
    "lemmata.gui.boxes",
    "lemmata.gui.image",
    "lemmata.gui.instruction",
    "lemmata.gui.ocr",
    "lemmata.gui.icons",
    "lemmata.gui.anchors",
    "lemmata.gui.attention",
    "lemmata.gui.fusion",
    "lemmata.gui.ground",
    "lemmata.gui.datasets",
    "lemmata.gui.synthetic",
    "lemmata.gui.render",
    "lemmata.gui.realapps",
    "lemmata.gui.draw",
    "lemmata.gui.cli",
    "lemmata.gui.shell",
    "lemmata.agents.gui",
    "lemmata.environments.base",
    "lemmata.environments.screen",
    "lemmata.provers.coq",
    "lemmata.provers.lean",
    "lemmata.provers.result",
    "lemmata.provers.base",
    "lemmata.provers.failure",
    "lemmata.provers.portfolio",
    "lemmata.provers.runner",
    "lemmata.provers.convert",
    "lemmata.provers.report",
    "lemmata.provers.shell",
    "lemmata.provers.ray_workers",
    "lemmata.provers.lean.dojo",
    "lemmata.provers.wz",
    "lemmata.provers.wz.identity",
    "lemmata.provers.wz.prove",
    "lemmata.provers.wz.zeilberger",
    "lemmata.provers.wz.lean_sketch",
    "lemmata.provers.wz.runner",
    "lemmata.provers.wz.discharge",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_resolves(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list)
    for member in module.__all__:
        assert getattr(module, member) is not None, f"{name}.{member}"


@pytest.mark.parametrize("name", [p for p in PACKAGES if p != "lemmata"])
def test_all_lists_every_public_definition(name: str) -> None:
    module = importlib.import_module(name)
    defined = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(v) or inspect.isfunction(v))
        and getattr(v, "__module__", "").startswith(name)
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
