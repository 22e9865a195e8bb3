"""lemmata.agents.experience: early experience (implicit world modelling and self-reflection
from the agent's own exploratory actions, with no reward)."""

__all__: list[str] = []
