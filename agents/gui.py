"""The GUI agent step: ground an instruction on the current screen, then act on it.

:class:`GroundAndAct` is a LangGraph node: it takes a screenshot of the environment, grounds
the state's next instruction with a :class:`~lemmata.gui.ground.Grounder`, clicks the point (or,
when the grounder abstains, records that and does not click: a wrong click is worse than
none), and appends what happened to ``state["log"]``. :func:`gui_agent` runs a list of
instructions one after another.

>>> from lemmata.environments.screen import ScreenEnvironment  # doctest: +SKIP
>>> with ScreenEnvironment(html) as env:  # doctest: +SKIP
...     env.reset()
...     out = gui_agent(env).invoke({"instructions": ["click Save", "open the settings"]})
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from lemmata.environments.screen import ScreenEnvironment
    from lemmata.gui.ground import Grounder

__all__ = ["GroundAndAct", "GuiState", "gui_agent"]


class GuiState(TypedDict, total=False):
    instructions: list[str]
    step: int
    log: Annotated[list[dict[str, Any]], operator.add]


class GroundAndAct:
    """Ground ``state["instructions"][state["step"]]`` on the screen and click it."""

    def __init__(self, env: ScreenEnvironment, grounder: Grounder | None = None) -> None:
        from lemmata.gui.ground import Grounder

        self.env = env
        self.grounder = grounder or Grounder()

    def __call__(self, state: GuiState) -> dict[str, Any]:
        step = state.get("step", 0)
        instruction = state["instructions"][step]
        screen = self.env.observe()
        g = self.grounder.ground(screen.payload["image"], instruction)
        entry: dict[str, Any] = {
            "instruction": instruction,
            "score": round(g.score, 4),
            "abstained": g.abstained,
            "point": list(g.point) if g.point else None,
        }
        if not g.abstained and g.point is not None:
            obs = self.env.step({"type": "click", "x": g.point[0], "y": g.point[1]})
            entry["hit"] = obs.payload.get("hit")
            entry["observation"] = obs.text
        else:
            entry["observation"] = "abstained: no click"
        return {"step": step + 1, "log": [entry]}


def gui_agent(
    env: ScreenEnvironment, grounder: Grounder | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A graph that grounds and acts on each instruction in turn."""
    node = GroundAndAct(env, grounder)
    graph = StateGraph(GuiState)
    graph.add_node("ground_and_act", node)
    graph.add_edge(START, "ground_and_act")

    def more(state: GuiState) -> str:
        return "ground_and_act" if state.get("step", 0) < len(state["instructions"]) else END

    graph.add_conditional_edges("ground_and_act", more, ["ground_and_act", END])
    return graph.compile()
