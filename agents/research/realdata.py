"""Real data sets that PyPI packages ship for offline use, with checklists of facts published
about them.

Each data set is loaded from its package (``statsmodels``, ``vega_datasets``' local files,
``scikit-learn``'s bundled files, ``palmerpenguins``) into SQLite as it comes: its own column
names, its own time columns (dates, years, decimal years, quarters), no cleaning. A panel (the
same firms or countries measured year after year) is split into its entities and their
measurements, linked by a declared foreign key, as a database would hold it. Each checklist
item states a fact documented elsewhere, and :attr:`Fact.source` says where; the facts were
taken from the documentation first and the agent measured on them afterwards. Items give a
direction, not a value: the facts are published as "rises", "is larger", "is correlated".

R's classic data sets (iris, the Nile, Mauna Loa CO2, longley, stackloss: the ``datasets``
package that ``pydataset`` ships) are held out for evaluation and are not used here, even where
a package below ships a copy.

All the data sets here are development data: misses may be looked into and fixed. Half of them
were held out once (:data:`HELD_OUT`, now empty); having been scored three times, that half
was released for development.

Get the packages with ``pip install 'lemmata[research]'``; a data set whose package is missing
is skipped by :func:`available`.

>>> sorted(DATASETS)[:3]
['barley', 'breast_cancer', 'cars']
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.agents.research.types import ChecklistItem
from lemmata.environments.database import quote_ident

if TYPE_CHECKING:
    import pandas as pd

    from lemmata.agents.research.evaluate import SuiteResult, TaskResult

__all__ = [
    "DATASETS",
    "DEVELOPMENT",
    "HELD_OUT",
    "Fact",
    "RealDataset",
    "available",
    "build",
    "evaluate_real",
]


@dataclass(frozen=True)
class Fact:
    """A checklist item and where the fact it states is published."""

    item: ChecklistItem
    source: str


@dataclass(frozen=True)
class RealDataset:
    """A data set a package ships: how to load its tables, and the facts to find in them.

    ``keys`` names each table's primary key; ``references`` maps ``(table, column)`` to the
    table whose key it refers to (declared as a foreign key in SQLite).
    """

    name: str
    package: str
    load: Callable[[], dict[str, pd.DataFrame]]
    facts: tuple[Fact, ...]
    keys: dict[str, str] = field(default_factory=dict)
    references: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def checklist(self) -> list[ChecklistItem]:
        return [f.item for f in self.facts]


def _fact(
    name: str,
    kind: str,
    table: str,
    columns: list[str],
    direction: str | None,
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


def _one(name: str, table: str | None = None) -> Callable[[], dict[str, pd.DataFrame]]:
    """A statsmodels data set as one table (its index, if named, kept as a column)."""

    def load() -> dict[str, pd.DataFrame]:
        frame = _statsmodels(name)
        if frame.index.name is not None:
            frame = frame.reset_index()
        return {table or name: frame}

    return load


def _macrodata() -> dict[str, pd.DataFrame]:
    frame = _statsmodels("macrodata")
    period = [f"{int(y)}Q{int(q)}" for y, q in zip(frame["year"], frame["quarter"], strict=True)]
    frame = frame.drop(columns=["year", "quarter"])
    frame.insert(0, "period", period)
    return {"macro": frame}


def _grunfeld() -> dict[str, pd.DataFrame]:
    """Eleven firms and their investment, 1935-1954: a firms table and a panel."""
    import pandas as pd

    frame = _statsmodels("grunfeld")
    names = list(dict.fromkeys(frame["firm"]))
    firms = pd.DataFrame({"firm_id": range(1, len(names) + 1), "firm": names})
    ids = {n: i for i, n in zip(firms["firm_id"], names, strict=True)}
    panel = pd.DataFrame(
        {
            "firm_id": [ids[n] for n in frame["firm"]],
            "year": frame["year"].astype(int),
            "invest": frame["invest"],
            "value": frame["value"],
            "capital": frame["capital"],
        }
    )
    return {"firms": firms, "investment": panel}


def _fertility() -> dict[str, pd.DataFrame]:
    """World Bank fertility rates, shipped wide (a column per year): countries (and the Bank's
    aggregates, as shipped) and one row per country and year."""
    frame = _statsmodels("fertility")
    countries = frame[["Country Code", "Country Name"]].rename(columns=_snake)
    years = [c for c in frame.columns if str(c).isdigit()]
    long = frame.melt(
        id_vars=["Country Code"], value_vars=years, var_name="year", value_name="fertility_rate"
    ).rename(columns=_snake)
    long["year"] = long["year"].astype(int)
    return {"countries": countries, "fertility": long}


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


# -- the data sets and their facts --------------------------------------------------------------

_SM = "statsmodels"
_VEGA = "vega_datasets"
_SK = "sklearn"

_MACRO = (
    "statsmodels.datasets.macrodata (US quarterly, 1959Q1-2009Q3, from the Federal Reserve Bank "
    "of St. Louis' FRED)"
)
_AUTO = (
    "vega_datasets cars = UCI Auto MPG, the 1983 ASA Data Exposition 'cars' data (StatLib; "
    "Quinlan 1993, 'Combining instance-based and model-based learning')"
)
_BLS = (
    "vega_datasets us_employment (BLS Current Employment Statistics, 2006-2015); BLS, 'The "
    "Recession of 2007-2009', Spotlight on Statistics, February 2012"
)
_PENGUINS = (
    "palmerpenguins documentation (Horst, Hill and Gorman 2020); Gorman, Williams and Fraser "
    "(2014), PLoS ONE 9(3): e90081"
)
_LARS = (
    "scikit-learn diabetes DESCR; Efron, Hastie, Johnstone and Tibshirani (2004), 'Least Angle "
    "Regression', Annals of Statistics 32(2): the LARS path enters bmi, then s5 (ltg), then bp"
)
_WDBC = (
    "scikit-learn breast_cancer DESCR (Wolberg, Street and Mangasarian 1995); Street, Wolberg "
    "and Mangasarian (1993), 'Nuclear feature extraction for breast tumor diagnosis'"
)
_FAIR = (
    "statsmodels.datasets.fair; Fair (1978), 'A Theory of Extramarital Affairs', Journal of "
    "Political Economy 86(1), tobit estimates"
)
_RAND = (
    "statsmodels.datasets.randhie (RAND Health Insurance Experiment); Manning et al. (1987), "
    "American Economic Review 77(3); Cameron and Trivedi (2005), Microeconometrics, ch. 20"
)
_CRIME = (
    "statsmodels.datasets.statecrime (US states, 2009); Agresti and Finlay, Statistical Methods "
    "for the Social Sciences, ch. 9-11 (state crime rates against poverty and single-parent "
    "families)"
)
_GRUNFELD = (
    "statsmodels.datasets.grunfeld; Grunfeld (1958), 'The Determinants of Corporate "
    "Investment'; Kleiber and Zeileis (2010), 'The Grunfeld Data at 50', German Economic Review"
)


def _facts(name: str, *rows: tuple[Any, ...]) -> tuple[Fact, ...]:
    """``(kind, table, columns, direction, source[, entities])`` rows as facts of ``name``."""
    return tuple(_fact(name, *row) for row in rows)


DATASETS: dict[str, RealDataset] = {
    d.name: d
    for d in (
        RealDataset(
            "macrodata",
            _SM,
            _macrodata,
            _facts(
                "macrodata",
                ("trend", "macro", ["realgdp", "period"], "increase", f"{_MACRO}: real GDP grows"),
                ("trend", "macro", ["cpi", "period"], "increase", f"{_MACRO}: prices rise"),
                ("trend", "macro", ["pop", "period"], "increase", f"{_MACRO}: population grows"),
                (
                    "correlation",
                    "macro",
                    ["realcons", "realgdp"],
                    "positive",
                    f"{_MACRO}; the consumption function of Greene, Econometric Analysis, "
                    "fitted to the same quarterly US series (his Table F5.2): consumption rises "
                    "with income",
                ),
            ),
        ),
        RealDataset(
            "grunfeld",
            _SM,
            _grunfeld,
            _facts(
                "grunfeld",
                (
                    "correlation",
                    "investment",
                    ["invest", "value"],
                    "positive",
                    f"{_GRUNFELD}: investment rises with the firm's market value",
                ),
                (
                    "correlation",
                    "investment",
                    ["invest", "capital"],
                    "positive",
                    f"{_GRUNFELD}: investment rises with the stock of plant and equipment",
                ),
                (
                    "relationship",
                    "investment",
                    ["invest", "firm"],
                    "higher",
                    f"{_GRUNFELD}: General Motors, by far the largest firm, invests the most",
                    ["firm=General Motors"],
                ),
            ),
            keys={"firms": "firm_id"},
            references={("investment", "firm_id"): "firms"},
        ),
        RealDataset(
            "fertility",
            _SM,
            _fertility,
            _facts(
                "fertility",
                (
                    "trend",
                    "fertility",
                    ["fertility_rate", "year"],
                    "decrease",
                    "statsmodels.datasets.fertility (World Bank WDI SP.DYN.TFRT.IN, 1960-2013); "
                    "UN World Population Prospects: fertility has fallen worldwide since the "
                    "1960s",
                ),
            ),
            keys={"countries": "country_code"},
            references={("fertility", "country_code"): "countries"},
        ),
        RealDataset(
            "fair",
            _SM,
            _one("fair"),
            _facts(
                "fair",
                (
                    "correlation",
                    "fair",
                    ["affairs", "rate_marriage"],
                    "negative",
                    f"{_FAIR}: the happier the marriage, the less time in affairs",
                ),
                (
                    "correlation",
                    "fair",
                    ["affairs", "religious"],
                    "negative",
                    f"{_FAIR}: the more religious, the less time in affairs",
                ),
                (
                    "correlation",
                    "fair",
                    ["affairs", "yrs_married"],
                    "positive",
                    f"{_FAIR}: time in affairs rises with years married",
                ),
            ),
        ),
        RealDataset(
            "randhie",
            _SM,
            _one("randhie"),
            _facts(
                "randhie",
                (
                    "correlation",
                    "randhie",
                    ["mdvis", "lncoins"],
                    "negative",
                    f"{_RAND}: the higher the coinsurance rate, the fewer doctor visits",
                ),
                (
                    "correlation",
                    "randhie",
                    ["mdvis", "disea"],
                    "positive",
                    f"{_RAND}: people with more chronic diseases visit doctors more",
                ),
                (
                    "group_difference",
                    "randhie",
                    ["mdvis", "physlm"],
                    "higher",
                    f"{_RAND}: people with a physical limitation visit doctors more",
                    ["physlm=1"],
                ),
                (
                    "group_difference",
                    "randhie",
                    ["mdvis", "idp"],
                    "lower",
                    f"{_RAND}: an individual deductible plan lowers the number of visits",
                    ["idp=1"],
                ),
            ),
        ),
        RealDataset(
            "statecrime",
            _SM,
            _one("statecrime"),
            _facts(
                "statecrime",
                (
                    "correlation",
                    "statecrime",
                    ["violent", "single"],
                    "positive",
                    f"{_CRIME}: violent crime is higher where more families have one parent",
                ),
                (
                    "correlation",
                    "statecrime",
                    ["murder", "single"],
                    "positive",
                    f"{_CRIME}: murder rates are higher where more families have one parent",
                ),
                (
                    "correlation",
                    "statecrime",
                    ["violent", "poverty"],
                    "positive",
                    f"{_CRIME}: violent crime is higher in poorer states",
                ),
            ),
        ),
        RealDataset(
            "engel",
            _SM,
            _one("engel"),
            _facts(
                "engel",
                (
                    "correlation",
                    "engel",
                    ["foodexp", "income"],
                    "positive",
                    "statsmodels.datasets.engel (235 Belgian households, 1857); Engel's law, "
                    "Koenker and Bassett (1982), Econometrica 50: food spending rises with "
                    "income (by less than income does)",
                ),
            ),
        ),
        RealDataset(
            "strikes",
            _SM,
            _one("strikes"),
            _facts(
                "strikes",
                (
                    "correlation",
                    "strikes",
                    ["duration", "iprod"],
                    "negative",
                    "statsmodels.datasets.strikes; Kennan (1985), 'The duration of contract "
                    "strikes in US manufacturing', Journal of Econometrics 28: strikes last "
                    "longer when industrial production is unexpectedly low",
                ),
            ),
        ),
        RealDataset(
            "cars",
            _VEGA,
            lambda: {"cars": _vega("cars")},
            _facts(
                "cars",
                (
                    "correlation",
                    "cars",
                    ["Miles_per_Gallon", "Weight_in_lbs"],
                    "negative",
                    f"{_AUTO}: heavier cars travel fewer miles per gallon",
                ),
                (
                    "correlation",
                    "cars",
                    ["Miles_per_Gallon", "Horsepower"],
                    "negative",
                    f"{_AUTO}: more powerful cars travel fewer miles per gallon",
                ),
                (
                    "group_difference",
                    "cars",
                    ["Horsepower", "Origin"],
                    "higher",
                    f"{_AUTO}: American cars have more horsepower than European and Japanese",
                    ["Origin=USA"],
                ),
                (
                    "group_difference",
                    "cars",
                    ["Miles_per_Gallon", "Origin"],
                    "lower",
                    f"{_AUTO}: American cars travel fewer miles per gallon",
                    ["Origin=USA"],
                ),
                (
                    "trend",
                    "cars",
                    ["Miles_per_Gallon", "Year"],
                    "increase",
                    f"{_AUTO}; US EPA, Automotive Trends Report: fuel economy rose over the "
                    "1970s, after the oil crisis and the 1978 CAFE standards",
                ),
                (
                    "share",
                    "cars",
                    ["Origin"],
                    None,
                    f"{_AUTO}: most of the cars are American (254 of 406)",
                    ["Origin=USA"],
                ),
            ),
        ),
        RealDataset(
            "us_employment",
            _VEGA,
            lambda: {"employment": _vega("us_employment")},
            _facts(
                "us_employment",
                (
                    "change",
                    "employment",
                    ["nonfarm", "month"],
                    "decrease",
                    f"{_BLS}: payroll employment fell by about 8.7 million jobs from its peak "
                    "in early 2008 and took years to recover",
                ),
                (
                    "change",
                    "employment",
                    ["construction", "month"],
                    "decrease",
                    f"{_BLS}: construction lost jobs through the recession and after",
                ),
                (
                    "change",
                    "employment",
                    ["manufacturing", "month"],
                    "decrease",
                    f"{_BLS}: manufacturing lost jobs in the recession",
                ),
                (
                    "trend",
                    "employment",
                    ["education_and_health_services", "month"],
                    "increase",
                    f"{_BLS}: health care (in education and health services) added jobs "
                    "throughout the recession",
                ),
            ),
        ),
        RealDataset(
            "driving",
            _VEGA,
            lambda: {"driving": _vega("driving")},
            _facts(
                "driving",
                (
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
            _facts(
                "wheat",
                *(
                    (
                        "trend",
                        "wheat",
                        [column, "year"],
                        "increase",
                        "vega_datasets wheat, from W. Playfair (1821), 'A Letter on our "
                        f"Agricultural Distresses': {what} from 1565 to 1821",
                    )
                    for column, what in (
                        ("wages", "weekly wages rose"),
                        ("wheat", "the price of wheat rose, by less than wages"),
                    )
                ),
            ),
        ),
        RealDataset(
            "seattle_weather",
            _VEGA,
            lambda: {"weather": _vega("seattle_weather")},
            _facts(
                "seattle_weather",
                (
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
            _facts(
                "barley",
                (
                    "group_difference",
                    "barley",
                    ["yield", "site"],
                    "higher",
                    "vega_datasets barley (Immer et al. 1934); W. S. Cleveland (1993), "
                    "Visualizing Data: Waseca has the highest yields of the six sites",
                    ["site=Waseca"],
                ),
                (
                    "group_difference",
                    "barley",
                    ["yield", "year"],
                    "higher",
                    "W. S. Cleveland (1993), Visualizing Data: yields were higher in 1931 than "
                    "in 1932 at every site but Morris",
                    ["year=1931"],
                ),
            ),
        ),
        RealDataset(
            "diabetes",
            _SK,
            lambda: {"diabetes": _sklearn("diabetes", "progression")},
            _facts(
                "diabetes",
                *(
                    ("correlation", "diabetes", [column, "progression"], "positive", _LARS)
                    for column in ("bmi", "s5", "bp")
                ),
            ),
        ),
        RealDataset(
            "breast_cancer",
            _SK,
            lambda: {"tumours": _sklearn("breast_cancer", "diagnosis", ["malignant", "benign"])},
            _facts(
                "breast_cancer",
                *(
                    (
                        "group_difference",
                        "tumours",
                        [column, "diagnosis"],
                        "higher",
                        f"{_WDBC}: malignant nuclei are {what}",
                        ["diagnosis=malignant"],
                    )
                    for column, what in (
                        ("mean_radius", "larger"),
                        ("mean_texture", "more varied in texture (a feature of the best model)"),
                        ("worst_area", "larger at their largest (a feature of the best model)"),
                    )
                ),
                (
                    "share",
                    "tumours",
                    ["diagnosis"],
                    None,
                    f"{_WDBC}: 'Class Distribution: 212 - Malignant, 357 - Benign'",
                    ["diagnosis=benign"],
                ),
            ),
        ),
        RealDataset(
            "penguins",
            "palmerpenguins",
            _penguins,
            _facts(
                "penguins",
                (
                    "group_difference",
                    "penguins",
                    ["body_mass_g", "species"],
                    "higher",
                    f"{_PENGUINS}: Gentoo penguins are the heaviest",
                    ["species=Gentoo"],
                ),
                (
                    "group_difference",
                    "penguins",
                    ["flipper_length_mm", "species"],
                    "higher",
                    f"{_PENGUINS}: Gentoo penguins have the longest flippers",
                    ["species=Gentoo"],
                ),
                (
                    "group_difference",
                    "penguins",
                    ["bill_length_mm", "species"],
                    "lower",
                    f"{_PENGUINS}, 'Bill length vs. depth': Adelie bills are the shortest",
                    ["species=Adelie"],
                ),
                (
                    "group_difference",
                    "penguins",
                    ["body_mass_g", "sex"],
                    "higher",
                    f"{_PENGUINS}: males are heavier than females in all three species",
                    ["sex=male"],
                ),
                (
                    "correlation",
                    "penguins",
                    ["flipper_length_mm", "body_mass_g"],
                    "positive",
                    f"{_PENGUINS}, 'Flipper length vs. body mass': heavier penguins have "
                    "longer flippers",
                ),
                (
                    "correlation",
                    "penguins",
                    ["bill_length_mm", "bill_depth_mm"],
                    "negative",
                    f"{_PENGUINS}, 'Bill length vs. depth': over all species the correlation "
                    "is negative (Simpson's paradox: within each species it is positive)",
                ),
                (
                    "share",
                    "penguins",
                    ["species"],
                    None,
                    f"{_PENGUINS}: Adelie is the most common species (152 of 344)",
                    ["species=Adelie"],
                ),
            ),
        ),
    )
}


#: Retired: the data sets once held out (every second name in alphabetical order, a rule set
#: before any miss was diagnosed). That half was scored three times with the misses sealed
#: (0.792 recall each time: group difference 0.600, change 0.667, share 0.000) and is
#: development data since; every data set here is now in-sample, and unseen real data are
#: measured elsewhere. Kept empty so that code reading the split still runs.
HELD_OUT: frozenset[str] = frozenset()
#: Every data set: all of them are development data (see :data:`HELD_OUT`).
DEVELOPMENT: frozenset[str] = frozenset(DATASETS) - HELD_OUT


def available(names: Sequence[str] | None = None) -> list[str]:
    """The data sets (of ``names``, default all) whose package is installed.

    Raises ``KeyError`` naming an unknown data set."""
    return _available_in(DATASETS, names or None, "real")


def _available_in(
    datasets: Mapping[str, RealDataset], names: Sequence[str] | None, what: str
) -> list[str]:
    """``available`` for any table of data sets (this module's and the sealed sets')."""
    from importlib.util import find_spec

    chosen = list(datasets) if names is None else list(names)
    unknown = [n for n in chosen if n not in datasets]
    if unknown:
        raise KeyError(f"unknown {what} data set(s) {unknown}; known: {sorted(datasets)}")
    return [n for n in chosen if find_spec(datasets[n].package) is not None]


def _sql_type(dtype: Any) -> str:
    kind = getattr(dtype, "kind", "O")
    return {"i": "INTEGER", "u": "INTEGER", "b": "INTEGER", "f": "REAL"}.get(kind, "TEXT")


def _create(con: sqlite3.Connection, data: RealDataset, table: str, frame: pd.DataFrame) -> None:
    """CREATE TABLE with the data set's declared primary and foreign keys."""
    key = data.keys.get(table)
    lines = [
        f"{quote_ident(str(c))} {_sql_type(t)}" + (" PRIMARY KEY" if c == key else "")
        for c, t in frame.dtypes.items()
    ]
    for (child, column), parent in data.references.items():
        if child == table:
            ref = quote_ident(data.keys[parent])
            lines.append(
                f"FOREIGN KEY ({quote_ident(column)}) REFERENCES {quote_ident(parent)}({ref})"
            )
    con.execute(f"CREATE TABLE {quote_ident(table)} ({', '.join(lines)})")


def build(name: str, dest: str | Path) -> Path:
    """Write data set ``name`` to the SQLite file ``dest`` (one table per frame), as shipped."""
    return _build_from(DATASETS, name, dest, "real")


def _build_from(
    datasets: Mapping[str, RealDataset], name: str, dest: str | Path, what: str
) -> Path:
    """``build`` for any table of data sets (this module's and the sealed sets')."""
    if name not in datasets:
        raise KeyError(f"unknown {what} data set {name!r}; known: {sorted(datasets)}")
    data = datasets[name]
    path = Path(dest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as con:
        for table, frame in data.load().items():
            _create(con, data, table, frame)
            frame.to_sql(table, con, index=False, if_exists="append")
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
