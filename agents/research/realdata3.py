"""A third batch of real data sets with published facts, development data.

The two earlier batches (:mod:`~lemmata.agents.research.realdata` and
:mod:`~lemmata.agents.research.realdata_sealed`) are in-sample. This batch comes from packages
neither of them reads, and leans towards the kinds of fact that real data make hard: dated level
shifts in long series (the annotated series of the TCPDBench change-point benchmark that
``river`` ships, a century of US marriages and divorces), trends in a wide table with a column
per field of study, outliers documented as events (a trading day, a post-war year), shares,
group differences in designed studies and clinical cohorts, correlations that are one pair
among many columns, and group differences across a link (order lines and their product
categories, flight routes and their airports).

Sources: ``bokeh_sampledata`` (Bokeh's sample data, shipped in the wheel), ``river`` (its
bundled data sets and change-point series), ``scikit-survival`` (its bundled clinical data
sets), ``pingouin`` (its bundled CSV files). Each data set is loaded through its package's own
loader into SQLite as it comes: its own column names (spaces and all), its own time columns
(``MM/DD/YYYY`` text for the oil price, a bare year, ISO dates and datetimes) and its own
codings (``'0'``/``'1'`` text categories in the survival data, booleans as 0/1). A
denormalised table is split where the data has a natural parent (the product sub-categories of
the Superstore order lines), and a child table is linked to its parent by a declared foreign key.

Each item states a fact documented elsewhere (``Fact.source`` says where) as a direction, not
a value; the facts were written from the documentation first and then checked on the data as
shipped with pandas (the comment beside each item gives the check). None of these data sets is
one of R's classic data sets (:data:`~lemmata.agents.research.realdata_sealed.RESERVED`) nor a
copy of any data set that ``pydataset`` ships from other R packages; data sets that other
batches hold in another package's copy (Gapminder, the BLS unemployment series) are left out.

>>> len(DATASETS) >= 15 and sum(len(d.facts) for d in DATASETS.values()) >= 45
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lemmata.agents.research.realdata import RealDataset, _available_in, _build_from, _facts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DATASETS", "available", "build"]


# -- loaders ------------------------------------------------------------------------------------


def _bokeh(module: str, attribute: str, table: str) -> Callable[[], dict[str, pd.DataFrame]]:
    """A ``bokeh_sampledata`` frame as its module loads it."""

    def load() -> dict[str, pd.DataFrame]:
        frame = getattr(importlib.import_module(f"bokeh_sampledata.{module}"), attribute)
        return {table: frame.copy()}

    return load


def _superstore() -> dict[str, pd.DataFrame]:
    """Tableau's Superstore order lines, with each sub-category's category in its own table."""
    from bokeh_sampledata.sample_superstore import data

    subcategories = data[["Sub-Category", "Category"]].drop_duplicates("Sub-Category")
    return {
        "subcategories": subcategories.reset_index(drop=True),
        "orders": data.drop(columns=["Category"]).copy(),
    }


def _airport_routes() -> dict[str, pd.DataFrame]:
    """US airports and the routes flown between them (source and destination by IATA code)."""
    from bokeh_sampledata.airport_routes import airports, routes

    return {"airports": airports.copy(), "routes": routes.copy()}


def _river_drift(cls: str, table: str) -> Callable[[], dict[str, pd.DataFrame]]:
    """One of the change-point series of ``river.drift.datasets``, read from its CSV file."""

    def load() -> dict[str, pd.DataFrame]:
        import pandas as pd

        dataset = getattr(importlib.import_module("river.drift.datasets"), cls)()
        return {table: pd.read_csv(dataset.path)}

    return load


def _sksurv(name: str) -> Callable[[], dict[str, pd.DataFrame]]:
    """A ``scikit-survival`` data set: its features and its (event, time) outcome, one table."""

    def load() -> dict[str, pd.DataFrame]:
        import pandas as pd

        features, outcome = getattr(importlib.import_module("sksurv.datasets"), f"load_{name}")()
        frame = pd.concat([features.reset_index(drop=True), pd.DataFrame(outcome)], axis=1)
        return {"patients": frame}

    return load


def _pingouin(name: str, table: str) -> Callable[[], dict[str, pd.DataFrame]]:
    def load() -> dict[str, pd.DataFrame]:
        import pingouin

        return {table: pingouin.read_dataset(name)}

    return load


# -- sources ------------------------------------------------------------------------------------

_BOKEH = "bokeh_sampledata"
_RIVER = "river"
_SKSURV = "sksurv"
_PINGOUIN = "pingouin"

_DEGREES = (
    "bokeh_sampledata degrees (percentage of US bachelor's degrees conferred to women, by "
    "major, 1970-2011, from the NCES Digest of Education Statistics; the data of R. S. Olson's "
    "2014 chart 'Percentage of Bachelor's degrees conferred to women, by major')"
)
_NSF = (
    "NSF, Science and Engineering Indicators / Women, Minorities, and Persons with "
    "Disabilities in Science and Engineering: women's share of bachelor's degrees"
)
_MARRIAGE = (
    "bokeh_sampledata us_marriages_divorces (CDC NCHS, 1867-2011); NCHS (1973), '100 Years of "
    "Marriage and Divorce Statistics, United States, 1867-1967', Vital and Health Statistics "
    "Series 21 No. 24"
)
_SPRINT = (
    "bokeh_sampledata sprint (the medallists of the men's Olympic 100 metres, 1896-2012); K. "
    "Quealy and G. Roberts, 'One Race, Every Medalist Ever', The New York Times, 5 August 2012"
)
_SUPERSTORE = (
    "bokeh_sampledata sample_superstore (Tableau's 'Sample - Superstore' data, 9,994 order "
    "lines); Tableau's 'Get Started with Tableau Desktop' tutorial, which explores this data"
)
_ROUTES = (
    "bokeh_sampledata airport_routes (OurAirports' US airports and the routes of the US BTS "
    "on-time reporting carriers)"
)
_COWS = (
    "bokeh_sampledata cows (butterfat percentage in the milk of 20 cows of each of five "
    "breeds); Council on Dairy Cattle Breeding (CDCB) / USDA Dairy Herd Improvement breed "
    "averages: Jersey milk has the highest fat percentage, Guernsey next, Holstein the lowest"
)
_ELEMENTS = (
    "bokeh_sampledata periodic_table (the 118 elements); Housecroft and Sharpe, Inorganic "
    "Chemistry, ch. 1 (ionisation energies, Pauling electronegativities and atomic radii "
    "across the periodic table)"
)
_TCPD = (
    "van den Burg and Williams (2020), 'An Evaluation of Change Point Detection Algorithms', "
    "arXiv:2003.06222 (TCPDBench, whose annotated series river.drift.datasets ships)"
)
_WHAS = (
    "scikit-survival whas500 (Worcester Heart Attack Study, 500 patients; fstat = 1 for a "
    "death); Hosmer, Lemeshow and May (2008), Applied Survival Analysis, 2nd ed., ch. 1 and 5: "
    "age, heart rate and congestive heart complications (chf) raise the hazard of death"
)
_GBSG = (
    "scikit-survival GBSG2 (German Breast Cancer Study Group 2, 686 node-positive patients; "
    "cens = 1 for a recurrence or death); Schumacher et al. (1994), 'Randomized 2 x 2 trial "
    "evaluating hormonal treatment and the duration of chemotherapy in node-positive breast "
    "cancer patients', Journal of Clinical Oncology 12(10)"
)
_ACTG = (
    "scikit-survival aids (the ACTG 320 trial, 1,151 patients; tx = 1 with indinavir, censor "
    "= 1 for AIDS or death); Hammer et al. (1997), 'A controlled trial of two nucleoside "
    "analogues plus indinavir in persons with HIV infection and CD4 cell counts of 200 per "
    "cubic millimeter or less', New England Journal of Medicine 337(11)"
)
_BIG5 = (
    "pingouin pairwise_corr (Big Five scores of 500 people; Dolan, Oort, Stoel and Wicherts "
    "(2009), Structural Equation Modeling 16(2)); Digman (1997), 'Higher-order factors of the "
    "Big Five', Journal of Personality and Social Psychology 73(6); van der Linden, te "
    "Nijenhuis and Bakker (2010), 'The General Factor of Personality: a meta-analysis of Big "
    "Five intercorrelations', Journal of Research in Personality 44(3)"
)


# -- the data sets and their facts --------------------------------------------------------------

DATASETS: dict[str, RealDataset] = {
    d.name: d
    for d in (
        RealDataset(
            "degrees_women",
            _BOKEH,
            _bokeh("degrees", "data", "degrees"),
            _facts(
                "degrees_women",
                # 13.6 (1970) -> 37.1 (1983, the peak) -> 29.4 (1990) -> 18.2 (2011).
                (
                    "change",
                    "degrees",
                    ["Computer Science", "Year"],
                    "decrease",
                    f"{_DEGREES}; S. Henn, 'When Women Stopped Coding', NPR Planet Money, 21 "
                    "October 2014: the share of women among computer science graduates rose "
                    "until the mid-1980s and fell from then on",
                ),
                # 0.8 -> 17.5, Mann-Kendall tau 0.83 (p 1e-14).
                (
                    "trend",
                    "degrees",
                    ["Engineering", "Year"],
                    "increase",
                    f"{_DEGREES}; {_NSF}: women earned under 1% of engineering degrees in 1970 "
                    "and close to a fifth by the 2000s",
                ),
                # 4.2 -> 50.0, tau 0.92 (p 1e-17).
                (
                    "trend",
                    "degrees",
                    ["Agriculture", "Year"],
                    "increase",
                    f"{_DEGREES}; {_NSF}: agricultural sciences went from a few per cent women "
                    "to about half",
                ),
                # 9.1 -> 48.2, tau 0.81 (p 3e-14).
                (
                    "trend",
                    "degrees",
                    ["Business", "Year"],
                    "increase",
                    f"{_DEGREES}; NCES, Digest of Education Statistics (bachelor's degrees by "
                    "sex and field): business went from under a tenth women in 1970 to about "
                    "half",
                ),
                # 44.4 -> 76.7, tau 0.86.
                (
                    "trend",
                    "degrees",
                    ["Psychology", "Year"],
                    "increase",
                    f"{_DEGREES}; J. Cynkar (2007), 'The changing gender composition of "
                    "psychology', APA Monitor on Psychology 38(6): psychology became a mostly "
                    "female field after 1970",
                ),
                # 13.8 -> 40.1, tau 0.86.
                (
                    "trend",
                    "degrees",
                    ["Physical Sciences", "Year"],
                    "increase",
                    f"{_DEGREES}; {_NSF}: women's share of physical sciences degrees rose from "
                    "about one in seven to about two in five",
                ),
            ),
        ),
        RealDataset(
            "marriages_divorces",
            _BOKEH,
            _bokeh("us_marriages_divorces", "data", "marriages"),
            _facts(
                "marriages_divorces",
                # 16.2 in 1946 (the series' maximum; 11.5 in 1945, 13.8 in 1947); robust z 5.6
                # over the whole series.
                (
                    "outlier",
                    "marriages",
                    ["Marriages_per_1000"],
                    "higher",
                    f"{_MARRIAGE}: the marriage rate reached its all-time peak in 1946, as the "
                    "servicemen came home",
                    ["Year=1946"],
                ),
                # 4.3 in 1946 against 3.5 (1945) and 3.4 (1947), 2.5-2.9 in 1944 and 1948-1952;
                # a local spike (robust z over the whole series only 1.5: the 1970s were higher).
                (
                    "outlier",
                    "marriages",
                    ["Divorces_per_1000"],
                    "higher",
                    f"{_MARRIAGE}: the divorce rate jumped to a post-war peak of 4.3 per 1,000 "
                    "in 1946 and fell back within a few years",
                    ["Year=1946"],
                ),
                # 0.3 (1867) -> 2.8 (2011), Mann-Kendall tau 0.79 (p 2e-44).
                (
                    "trend",
                    "marriages",
                    ["Divorces_per_1000", "Year"],
                    "increase",
                    f"{_MARRIAGE}: the divorce rate rose more or less steadily over the century "
                    "from 1867",
                ),
                # 5.3 (1979) -> 4.7 (1991) -> 2.8 (2007-2011).
                (
                    "change",
                    "marriages",
                    ["Divorces_per_1000", "Year"],
                    "decrease",
                    f"{_MARRIAGE}; CDC NCHS, National Vital Statistics System, marriage and "
                    "divorce rate trends: the divorce rate peaked around 1979-1981 and has "
                    "fallen since",
                ),
                # Mean 9.9 in 1960-1982, 8.1 in 1990-2011; 10.5 (1983) -> 6.8 (2009-2011).
                (
                    "change",
                    "marriages",
                    ["Marriages_per_1000", "Year"],
                    "decrease",
                    f"{_MARRIAGE}; CDC NCHS, National Vital Statistics System: the marriage "
                    "rate fell from about 10.6 per 1,000 in the early 1980s to 6.8 by 2009",
                ),
            ),
        ),
        RealDataset(
            "olympic_sprint",
            _BOKEH,
            _bokeh("sprint", "sprint", "sprint"),
            _facts(
                "olympic_sprint",
                # 12.0-12.6 s (1896) -> 9.63-9.79 s (2012); Mann-Kendall tau -0.83 (p 3e-28).
                (
                    "trend",
                    "sprint",
                    ["Time", "Year"],
                    "decrease",
                    f"{_SPRINT}: the medal-winning times fell from 12 seconds in 1896 to Usain "
                    "Bolt's 9.63 in 2012",
                ),
                # 40 of 85 medals (GBR 8, JAM 7, CAN 5).
                (
                    "share",
                    "sprint",
                    ["Country"],
                    None,
                    f"{_SPRINT}: American sprinters have won far more of the medals than any "
                    "other country",
                    ["Country=USA"],
                ),
            ),
        ),
        RealDataset(
            "superstore",
            _BOKEH,
            _superstore,
            _facts(
                "superstore",
                # Mean profit per line: Tables -55.6 (319 lines, total -17,725), Bookcases -15.2,
                # Supplies -6.3, all others positive; Mann-Whitney p 3e-29.
                (
                    "group_difference",
                    "orders",
                    ["Profit", "Sub-Category"],
                    "lower",
                    f"{_SUPERSTORE}: tables are the sub-category that loses the most money",
                    ["Sub-Category=Tables"],
                ),
                # Spearman -0.54 (Pearson -0.22), n=9994.
                (
                    "correlation",
                    "orders",
                    ["Discount", "Profit"],
                    "negative",
                    f"{_SUPERSTORE}: the deeper the discount, the lower the profit (the "
                    "losses come from heavily discounted lines)",
                ),
                # 51.9% of lines (Corporate 30.2%, Home Office 17.8%).
                (
                    "share",
                    "orders",
                    ["Segment"],
                    None,
                    f"{_SUPERSTORE}: the consumer segment makes about half of the business",
                    ["Segment=Consumer"],
                ),
                # 59.7% of lines (Second Class 19.5%, First Class 15.4%, Same Day 5.4%).
                (
                    "share",
                    "orders",
                    ["Ship Mode"],
                    None,
                    f"{_SUPERSTORE}: most orders go by standard class",
                    ["Ship Mode=Standard Class"],
                ),
                # Mean profit per line: Furniture 8.7, Office Supplies 20.3, Technology 78.8.
                (
                    "relationship",
                    "orders",
                    ["Profit", "Category"],
                    "lower",
                    f"{_SUPERSTORE}: furniture is the least profitable category",
                    ["Category=Furniture"],
                ),
                # Mean sales per line: Technology 452.7, Furniture 349.8, Office Supplies 119.3.
                (
                    "relationship",
                    "orders",
                    ["Sales", "Category"],
                    "higher",
                    f"{_SUPERSTORE}: technology brings the largest sales per order line (and "
                    "the most profit)",
                    ["Category=Technology"],
                ),
            ),
            keys={"subcategories": "Sub-Category"},
            references={("orders", "Sub-Category"): "subcategories"},
        ),
        RealDataset(
            "airport_routes",
            _BOKEH,
            _airport_routes,
            _facts(
                "airport_routes",
                # Routes out of each airport: mean 78.1 for the 98 large airports, 3.6 for the
                # 413 medium ones (ORD 409, DEN 374, DFW 317, ATL 221).
                (
                    "relationship",
                    "routes",
                    ["Source", "Type"],
                    "higher",
                    f"{_ROUTES}; OurAirports data dictionary: a 'large_airport' is a major "
                    "airport with scheduled airline service (the hubs), a 'medium_airport' a "
                    "regional one",
                    ["Type=large_airport"],
                ),
                # WN 17.8% of the routes (OO 13.1%, G4 10.8%, DL 10.0%, AA 9.7%).
                (
                    "share",
                    "routes",
                    ["Airline"],
                    None,
                    f"{_ROUTES}; US Bureau of Transportation Statistics, airline rankings: "
                    "Southwest (WN) flies the most domestic passengers and routes of any US "
                    "carrier",
                    ["Airline=WN"],
                ),
            ),
            keys={"airports": "IATA"},
            references={("routes", "Source"): "airports", ("routes", "Destination"): "airports"},
        ),
        RealDataset(
            "cows",
            _BOKEH,
            _bokeh("cows", "data", "cows"),
            _facts(
                "cows",
                # Means: Jersey 5.29, Guernsey 4.95, Canadian 4.44, Ayrshire 4.06,
                # Holstein-Friesian 3.67 (20 each); Kruskal p 6e-15.
                (
                    "group_difference",
                    "cows",
                    ["butterfat", "breed"],
                    "higher",
                    _COWS,
                    ["breed=Jersey"],
                ),
                (
                    "group_difference",
                    "cows",
                    ["butterfat", "breed"],
                    "lower",
                    _COWS,
                    ["breed=Holstein-Friesian"],
                ),
            ),
        ),
        RealDataset(
            "periodic_table",
            _BOKEH,
            _bokeh("periodic_table", "elements", "elements"),
            _facts(
                "periodic_table",
                # Mean Pauling electronegativity: halogens 2.99, nonmetals 2.65, metalloids 2.04,
                # ... alkali metals 0.84 (noble gases have none).
                (
                    "group_difference",
                    "elements",
                    ["electronegativity", "metal"],
                    "higher",
                    f"{_ELEMENTS}: the halogens are the most electronegative group (fluorine "
                    "the most electronegative element)",
                    ["metal=halogen"],
                ),
                # Mean first ionisation energy: alkali metals 432 kJ/mol, lanthanoids 562,
                # actinoids 595, ... noble gases 1589.
                (
                    "group_difference",
                    "elements",
                    ["IE-1", "metal"],
                    "lower",
                    f"{_ELEMENTS}: the alkali metals have the lowest first ionisation energies",
                    ["metal=alkali metal"],
                ),
                # Spearman -0.72, n=71 with both.
                (
                    "correlation",
                    "elements",
                    ["atomic radius", "IE-1"],
                    "negative",
                    f"{_ELEMENTS}: the larger the atom, the more easily its outer electron is "
                    "removed",
                ),
                # Spearman 0.89.
                (
                    "correlation",
                    "elements",
                    ["IE-1", "electronegativity"],
                    "positive",
                    f"{_ELEMENTS}; Mulliken (1934): electronegativity rises with ionisation energy",
                ),
            ),
        ),
        RealDataset(
            "uk_coal",
            _RIVER,
            _river_drift("UKCoalEmploy", "coal"),
            _facts(
                "uk_coal",
                # 1,107,000 (1913) -> 620 (2017); Mann-Kendall tau -0.92 (p 2e-44).
                (
                    "trend",
                    "coal",
                    ["Employment", "Year"],
                    "decrease",
                    "river.drift.datasets.UKCoalEmploy (employment in UK coal mines, "
                    "1913-2017; UK government, Historical coal data): employment fell from "
                    "over a million before the First World War to a few hundred",
                ),
                # 251,800 (1973) -> 172,000 (1981) -> 10,000 (1993); the annotators of TCPDBench
                # mark changes at 1981 and 1993 (indices 68 and 80).
                (
                    "change",
                    "coal",
                    ["Employment", "Year"],
                    "decrease",
                    f"river.drift.datasets.UKCoalEmploy; {_TCPD}: its annotators mark level "
                    "shifts, the last ones in the early 1980s and early 1990s (the pit "
                    "closures after the 1984-85 miners' strike and of 1992-94)",
                ),
            ),
        ),
        RealDataset(
            "brent_oil",
            _RIVER,
            _river_drift("BrentSpotPrice", "brent"),
            _facts(
                "brent_oil",
                # Monthly means 132.7 (Jul 2008) -> 39.9 (Dec 2008); 111.8 (Jun 2014) -> 47.8
                # (Jan 2015).
                (
                    "change",
                    "brent",
                    ["DPB", "day"],
                    "decrease",
                    "river.drift.datasets.BrentSpotPrice (US EIA, Brent spot price in dollars "
                    f"a barrel, daily, 1987-2019); {_TCPD}: annotated changes at the 2008 "
                    "collapse; US EIA, 'Today in Energy': Brent fell from $144 in July 2008 to "
                    "under $40 in December 2008, and by half again in the second half of 2014",
                ),
                # 18.63 (May 1987) -> 58.64 (Aug 2019); Mann-Kendall tau 0.60 over 8195 days.
                (
                    "trend",
                    "brent",
                    ["DPB", "day"],
                    "increase",
                    "river.drift.datasets.BrentSpotPrice (US EIA); US EIA, Brent spot price "
                    "history: under $20 a barrel in the late 1980s and 1990s, $50-$110 in most "
                    "years since 2005",
                ),
            ),
        ),
        RealDataset(
            "bitcoin",
            _RIVER,
            _river_drift("Bitcoin", "bitcoin"),
            _facts(
                "bitcoin",
                # 24.2 (Feb 2013) -> 8896 (Nov 2019).
                (
                    "trend",
                    "bitcoin",
                    ["price", "date"],
                    "increase",
                    "river.drift.datasets.Bitcoin (Blockchain.com, average USD market price, "
                    "every third day, 2013-2019): from about $24 in February 2013 to "
                    "thousands of dollars from 2017 on",
                ),
                # 1029 (Mar 2017) -> 7787 (Nov 2017) -> 11181 (Jan 2018); annotated changes at
                # indices 502-597 (2017-2018).
                (
                    "change",
                    "bitcoin",
                    ["price", "date"],
                    "increase",
                    f"river.drift.datasets.Bitcoin; {_TCPD}: annotated changes in 2017, the "
                    "boom in which the price rose from about $1,000 to nearly $20,000 in a year",
                ),
            ),
        ),
        RealDataset(
            "apple_2000",
            _RIVER,
            _river_drift("Apple", "apple"),
            _facts(
                "apple_2000",
                # Close 3.82 (28 Sep 2000) -> 1.84 (29 Sep) -> 1.59 (3 Oct), split-adjusted; every
                # annotator of TCPDBench marks this one point (index 319 of the series sampled
                # every third day).
                (
                    "change",
                    "apple",
                    ["Close", "Date"],
                    "decrease",
                    "river.drift.datasets.Apple (Yahoo Finance, daily AAPL, December "
                    f"1996-May 2004); {_TCPD}: all five annotators mark a change at the end of "
                    "September 2000, when Apple's profit warning halved its share price",
                ),
                # 1,855 million shares on 29 Sep 2000 against a median of 76 million:
                # the largest volume of the series (robust z 5.8 on the log scale).
                (
                    "outlier",
                    "apple",
                    ["Volume"],
                    "higher",
                    "river.drift.datasets.Apple; CNN Money, 'Apple bruises tech sector', 29 "
                    "September 2000: the shares fell by more than half on the day after the "
                    "profit warning, in record trading",
                    ["Date=2000-09-29"],
                ),
            ),
        ),
        RealDataset(
            "whas500",
            _SKSURV,
            _sksurv("whas500"),
            _facts(
                "whas500",
                # Mean age 77.9 of the 215 who died, 63.7 of the 285 others.
                (
                    "group_difference",
                    "patients",
                    ["age", "fstat"],
                    "higher",
                    _WHAS,
                    ["fstat=1"],
                ),
                # Mean heart rate 94.1 against 81.7.
                (
                    "group_difference",
                    "patients",
                    ["hr", "fstat"],
                    "higher",
                    _WHAS,
                    ["fstat=1"],
                ),
                # Mean follow-up 594 days with congestive heart complications, 1012 without.
                (
                    "group_difference",
                    "patients",
                    ["lenfol", "chf"],
                    "lower",
                    _WHAS,
                    ["chf=1"],
                ),
            ),
        ),
        RealDataset(
            "gbsg2",
            _SKSURV,
            _sksurv("gbsg2"),
            _facts(
                "gbsg2",
                # Mean 6.5 positive nodes with an event, 3.8 without.
                (
                    "group_difference",
                    "patients",
                    ["pnodes", "cens"],
                    "higher",
                    f"{_GBSG}; Sauerbrei and Royston (1999), 'Building multivariable "
                    "prognostic and diagnostic models', JRSS A 162(1): the number of positive "
                    "lymph nodes is the strongest prognostic factor",
                    ["cens=1"],
                ),
                # Events in 38.2% with hormonal treatment, 46.6% without.
                (
                    "group_difference",
                    "patients",
                    ["cens", "horTh"],
                    "lower",
                    f"{_GBSG}: hormonal treatment with tamoxifen improved recurrence-free survival",
                    ["horTh=yes"],
                ),
            ),
        ),
        RealDataset(
            "actg320",
            _SKSURV,
            _sksurv("aids"),
            _facts(
                "actg320",
                # AIDS or death in 5.7% with indinavir, 10.9% without.
                (
                    "group_difference",
                    "patients",
                    ["censor", "tx"],
                    "lower",
                    f"{_ACTG}: adding indinavir halved the rate of AIDS or death (6% against 11%)",
                    ["tx=1"],
                ),
                # Mean CD4 count 37.1 of those with an event, 91.0 of the others.
                (
                    "group_difference",
                    "patients",
                    ["cd4", "censor"],
                    "lower",
                    f"{_ACTG}; Hosmer, Lemeshow and May (2008), Applied Survival Analysis, the "
                    "ACTG 320 analysis: the lower the CD4 count, the higher the risk",
                    ["censor=1"],
                ),
            ),
        ),
        RealDataset(
            "pain_threshold",
            _PINGOUIN,
            _pingouin("anova", "pain"),
            _facts(
                "pain_threshold",
                # Means: Light Blond 59.2, Dark Blond 51.2, Light Brunette 42.5, Dark Brunette
                # 37.4 (19 people).
                (
                    "group_difference",
                    "pain",
                    ["Pain threshold", "Hair color"],
                    "higher",
                    "pingouin anova (pain threshold of 19 people by hair colour); McClave and "
                    "Dietrich (1991), Statistics, the University of Melbourne study of hair "
                    "colour and pain: light blondes had the highest pain threshold",
                    ["Hair color=Light Blond"],
                ),
            ),
        ),
        RealDataset(
            "big_five",
            _PINGOUIN,
            _pingouin("pairwise_corr", "personality"),
            _facts(
                "big_five",
                # Spearman -0.36, n=500 (one pair of ten).
                (
                    "correlation",
                    "personality",
                    ["Neuroticism", "Conscientiousness"],
                    "negative",
                    f"{_BIG5}: neuroticism runs against conscientiousness (Digman's alpha)",
                ),
                # Spearman -0.33.
                (
                    "correlation",
                    "personality",
                    ["Neuroticism", "Extraversion"],
                    "negative",
                    f"{_BIG5}: neuroticism and extraversion are negatively related",
                ),
                # Spearman 0.24.
                (
                    "correlation",
                    "personality",
                    ["Extraversion", "Openness"],
                    "positive",
                    f"{_BIG5}: extraversion goes with openness (Digman's beta)",
                ),
            ),
        ),
        RealDataset(
            "heart_disease",
            _PINGOUIN,
            _pingouin("chi2_independence", "heart"),
            _facts(
                "heart_disease",
                # 207 of 303 (sex = 1).
                (
                    "share",
                    "heart",
                    ["sex"],
                    None,
                    "pingouin chi2_independence (the UCI Cleveland heart disease data, 303 "
                    "patients; sex = 1 for men); Detrano et al. (1989), 'International "
                    "application of a new probability algorithm for the diagnosis of coronary "
                    "artery disease', American Journal of Cardiology 64(5): about two thirds "
                    "of the Cleveland patients were men",
                    ["sex=1"],
                ),
            ),
        ),
    )
}


def available(names: Sequence[str] | None = None) -> list[str]:
    """The data sets (of ``names``, default all) whose package is installed.

    Raises ``KeyError`` naming an unknown data set."""
    return _available_in(DATASETS, names, "third-batch")


def build(name: str, dest: str | Path) -> Path:
    """Write data set ``name`` to the SQLite file ``dest`` (one table per frame), as shipped."""
    return _build_from(DATASETS, name, dest, "third-batch")
