"""lemmata.agents.experience: early experience, learning from the outcomes of the agent's own
exploratory actions with no reward (implicit world modelling and self-reflection).

The whole method, offline, in four calls::

    from lemmata.agents import experience as ee

    run = ee.collect("textworld-express", "runs/coin", names=["coin"], demos=40, k=4)
    files = ee.export_sft(run.rollouts, "runs/coin")        # expert, IWM, reflection JSONL
    steps = ee.read_rollouts(run.rollouts)
    policies = {m: ee.train_policy(steps, m, seed=0) for m in ee.METHODS}
    with ee.open_environment("textworld-express") as env:
        tasks = env.tasks("test-id", names=["coin"], limit=20)
        print({m: ee.evaluate(p, env, tasks).success_rate for m, p in policies.items()})

With a model (litellm), :class:`ModelPolicy` acts, :func:`propose_alternatives` supplies the
alternatives where the environment does not enumerate its actions, and :func:`export_sft`
has the model write the reflections. :func:`check_reflections` flags leaks in any reflection
file. The modules: :mod:`~lemmata.agents.experience.rollouts` (one task's rollout),
:mod:`~lemmata.agents.experience.collection` (the checkpointed graph over many),
:mod:`~lemmata.agents.experience.data` and :mod:`~lemmata.agents.experience.reflect` (the
training files), :mod:`~lemmata.agents.experience.policy` (the local torch policy) and
:mod:`~lemmata.agents.experience.llm` (the model path).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "METHODS",
    "Branch",
    "CollectResult",
    "EvalResult",
    "ExpertStep",
    "ExportResult",
    "ModelPolicy",
    "Outcome",
    "Policy",
    "check_reflections",
    "collect",
    "evaluate",
    "export_sft",
    "open_environment",
    "propose_alternatives",
    "read_rollouts",
    "roll_out",
    "train_policy",
    "write_reflections",
]

_WHERE = {
    "METHODS": "policy",
    "Branch": "records",
    "CollectResult": "collection",
    "EvalResult": "policy",
    "ExpertStep": "records",
    "ExportResult": "data",
    "ModelPolicy": "llm",
    "Outcome": "records",
    "Policy": "policy",
    "check_reflections": "reflect",
    "collect": "collection",
    "evaluate": "policy",
    "export_sft": "data",
    "propose_alternatives": "llm",
    "read_rollouts": "data",
    "roll_out": "rollouts",
    "train_policy": "policy",
    "write_reflections": "reflect",
}


def __getattr__(name: str) -> Any:
    # Imported on first use: torch, litellm and LangGraph load only when needed.
    if name == "open_environment":
        from lemmata.environments.text import open_environment

        return open_environment
    if name in _WHERE:
        module = importlib.import_module(f"lemmata.agents.experience.{_WHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'lemmata.agents.experience' has no attribute {name!r}")
