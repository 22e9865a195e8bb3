"""Hand-built early-experience records for the tests of lemmata.agents.experience (no
simulator needed): a small coin-finding game."""

from __future__ import annotations

from lemmata.agents.experience.records import Branch, ExpertStep, Outcome
from lemmata.environments.text import Task

TASK = Task("textworld-express", "coin", 3, "train")
KITCHEN = "You are in the kitchen. A coin lies on the table. A door leads west."


def coin_step(
    index: int = 0,
    *,
    alternatives: tuple[Branch, ...] | None = None,
    history: tuple[tuple[str, str], ...] = (),
    action: str = "take coin",
    observation: str = KITCHEN,
) -> ExpertStep:
    """An expert state where taking the coin wins; by default moving west leads to a corridor
    and eating the table is refused."""
    if alternatives is None:
        alternatives = (
            Branch("move west", Outcome("You are in the corridor. It is dark.")),
            Branch("eat table", Outcome("That is not something you can eat.", invalid=True)),
        )
    return ExpertStep(
        task=TASK,
        index=index,
        instruction="Find the coin and take it.",
        observation=observation,
        history=history,
        admissible=("take coin", "move west", "look", "eat table", "open door"),
        action=action,
        expert=Outcome("You take the coin. You win!", score=1.0, success=True, done=True),
        alternatives=alternatives,
    )


def walk() -> list[ExpertStep]:
    """Two states of one trajectory: open the door, then take the coin."""
    first = coin_step(
        0,
        action="open door",
        observation="You are in the hall. A closed door leads to the kitchen.",
        alternatives=(
            Branch("look", Outcome("You are in the hall. A closed door leads to the kitchen.")),
            Branch("take coin", Outcome("You see no coin here.", invalid=True)),
        ),
    )
    first = ExpertStep(
        **{**first.__dict__, "expert": Outcome("The door opens onto the kitchen.", score=0.5)}
    )
    second = coin_step(1, history=(("open door", "The door opens onto the kitchen."),))
    return [first, second]
