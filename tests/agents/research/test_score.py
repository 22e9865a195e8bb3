"""The scorer (lemmata.agents.research.score): a difference between the two levels of a column
matches whichever level the checklist tells it from."""

from __future__ import annotations

from lemmata.agents.research.score import matches
from lemmata.agents.research.types import ChecklistItem, Insight


def _insight(support: dict[str, object]) -> Insight:
    return Insight(
        statement="visits.cost is higher where sex = M: mean 120 against 100 for the other rows",
        kind="group_difference",
        table="visits",
        columns=["cost", "sex"],
        entities=["sex=M"],
        direction="higher",
        value=120.0,
        evidence_sql="SELECT 120.0",
        support=support,
    )


def _item(level: str, direction: str, value: float | None = None) -> ChecklistItem:
    return ChecklistItem(
        id=f"{level}{direction}",
        kind="group_difference",
        table="visits",
        columns=["cost", "sex"],
        entities=[f"sex={level}"],
        direction=direction,  # type: ignore[arg-type]
        value=value,
        tolerance=0.1,
    )


def test_lower_for_one_of_two_levels_is_higher_for_the_other() -> None:
    two = _insight({"other_level": "sex=F", "rest_mean": 100.0})
    assert matches(two, _item("M", "higher", 120.0))
    assert matches(two, _item("F", "lower", 100.0))  # the other level's mean is its value
    assert not matches(two, _item("F", "lower", 150.0))
    assert not matches(two, _item("F", "higher"))
    assert not matches(two, _item("M", "lower"))


def test_a_column_of_more_levels_is_not_mirrored() -> None:
    # "M" against the rest of three levels says nothing about "F" against its rest.
    many = _insight({"rest_mean": 100.0})
    assert not matches(many, _item("F", "lower"))
