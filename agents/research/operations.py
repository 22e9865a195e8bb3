"""The research operation (see :mod:`lemmata.operations`): explore a database or a folder of
CSV/Parquet files on its own and report verifiable insights (DDR).

>>> from lemmata.agents.research.operations import research          # doctest: +SKIP
>>> research(source="shop.sqlite").payload.insights[0]["statement"]   # doctest: +SKIP
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from lemmata.operations import Operation, OperationContext, Outcome, operation

__all__ = ["OPERATIONS", "ResearchInput", "ResearchOutput", "research"]


class ResearchInput(BaseModel):
    source: str = Field(min_length=1, description="a SQLite file, or a folder of CSV/Parquet files")
    out_dir: str | None = Field(
        None, description="where to write the report (default: data_dir/research/NAME-TIME)"
    )
    entity: str | None = Field(None, description="focus on one entity: column=value")
    budget_turns: int = Field(40, ge=1, le=10_000)
    budget_seconds: float = Field(120.0, gt=0, le=3600)
    top: int = Field(10, ge=1, le=200, description="how many insights to return")


class ResearchOutput(BaseModel):
    insights: list[dict[str, Any]] = Field(description="the best insights, each with its evidence")
    total: int = Field(description="how many insights the run found")
    report: str = Field(description="the report's folder")
    stats: dict[str, Any]

    def describe(self) -> str:
        lines = [f"{self.total} insights (report in {self.report}); the best:"]
        lines += [f"- {i.get('statement', i)}" for i in self.insights[:5]]
        return "\n".join(lines)


_SOURCE = re.compile(
    r"(?P<path>(?:[A-Za-z]:[\\/])?(?:[\w./~-]|\\(?=[\w.]))+\.(?:sqlite3?|db|csv|parquet))\b", re.I
)
# a quoted file, spaces and all: "my data/finance.db", 'C:/data/hr.sqlite'
_QUOTED_SOURCE = re.compile(
    r"[\"'\u201c\u2018](?P<path>[^\"'\u201d\u2019\n]*?\.(?:sqlite3?|db|csv|parquet))[\"'\u201d\u2019]",
    re.I,
)
# a file in code marks, spaces and all: `~/work/crm export.db` (before the quotes: "I've" has one)
_CODE_SOURCE = re.compile(r"`(?P<path>[^`\n]*?\.(?:sqlite3?|db|csv|parquet))`", re.I)
# where the report goes: "write the report to reports/hr", "save the results in out/"
_OUT_DIR = re.compile(
    # (and in French, Spanish, Portuguese and German: "écris le rapport dans rapports/prod",
    # "guarda el informe en out/", "schreib den Bericht nach berichte/")
    r"\s*,?\s*(?:and\s+|et\s+|y\s+|e\s+|und\s+)?(?:write|save|put|store|output|écris|écrivez|"
    r"enregistre|enregistrez|mets|mettez|sauvegarde|escribe|escriba|guarda|guarde|pon|ponga|"
    r"escreve|escreva|grava|grave|salva|salve|coloca|schreib|schreibe|speicher|speichere|leg|lege)\s+"
    r"(?:the\s+|my\s+|le\s+|les\s+|el\s+|los\s+|o\s+|os\s+|den\s+|die\s+)?"
    r"(?:report|results?|output|rapport|résultats|informe|resultados|relatório|bericht|ergebnisse)"
    r"\s+(?:to|in|into|under|at|dans|sous|en|em|no|na|nach|in\s+den|unter)\s+"
    r"(?:the\s+)?(?:folder\s+|directory\s+)?"
    r"(?P<path>(?:[A-Za-z]:\\)?(?:[\w./~-]|\\(?=[\w.]))+)",
    re.I,
)
# how many insights: "top 5 insights", "3 interesting things", "the 10 best findings", "the 4
# strongest findings" (any superlative)
_TOP = re.compile(
    r"\btop[\s-]+(?P<a>\d{1,3})\b|\b(?P<b>\d{1,3})\s+(?:(?:most|more|really|very)\s+)?"
    r"(?:interesting|important|key|best|main|surprising|notable|useful|top|[a-z]{2,}est)?\s*"
    r"(?:insights?|things|findings|facts|patterns|observations|takeaways|"
    # (the same said in French, Spanish, Portuguese and German: "dame las 4 conclusiones")
    r"conclusions?|conclusiones|conclusões|hallazgos|descobertas|constatations|enseignements|"
    r"erkenntnisse|befunde)\b",
    re.I,
)
# a folder named and quoted, spaces and all: the CSV folder "Q4 exports/raw"
_QUOTED_FOLDER = re.compile(
    r"\b(?:folder|directory|dir|data ?set)\s+[\"'\u201c\u2018](?P<path>[^\"'\u201d\u2019\n]+?)[\"'\u201d\u2019]",
    re.I,
)
_FOLDER = re.compile(
    r"\b(?:folder|directory|dir|data ?set)\s+(?:(?:of\s+\w+(?:\s+files)?\s+)?(?:at|in|under|called|named)\s+)?"
    r"(?P<path>(?=[\w.~-]*[/._\d])[\w./~-]+/?)",
    re.I,
)
# a path named as a folder after it, or described by its files: "the metrics/ folder",
# "data/energy (CSV files)"
_PATH_THEN_FOLDER = re.compile(
    r"(?<![\w/:.])(?P<path>~?[\w.-]+(?:/[\w.-]+)*/|~?[\w.-]*(?:/[\w.-]+)+/?)\s*"
    r"(?:folder|directory|dir\b|\(\s*(?:csvs?|parquet|data|tsv)(?:\s+(?:files?|dumps?|tables?|exports?))?\s*\))",
    re.I,
)
# what says a folder holds data to study, not files to open or move
_DATA_WORDS = re.compile(
    r"\b(?:data|csvs?|parquet|tables?|data\s?sets?|insights?|trends?|findings|patterns?|"
    r"analy[sz]e|analysis|explore|statistics|outliers?)\b",
    re.I,
)
_FILES_UNDER = re.compile(
    r"\b(?:csvs?|parquets?|data|data\s?sets?|files|tables|spreadsheets)\b[^.?!]{0,30}?\s(?:in|under|at|from|inside)\s+"
    r"(?P<path>[\w.~-]*/[\w./~-]*)",
    re.I,
)
# File chores on a database are not research: nothing is to be explored.
_CHORE = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:e-?mail|send|open\s+\S+\s+in|rename|delete|"
    r"copy|move|upload|download|back\s?up|compress|zip|share|attach|print|convert|encrypt|merge|"
    r"combine|join|concatenate|split|dedupe|sort|import)\b",
    re.I,
)
_ENTITY = re.compile(
    r"\b(?:about|for|focus(?:ing)? on|specifically|only|just|where|with|on)\s+(?P<e>[A-Za-z_]\w*\s*=\s*[\w.-]+)"
)


def _extract(text: str) -> dict[str, Any] | None:
    if _CHORE.match(text):
        return None
    extra: dict[str, Any] = {}
    out = _OUT_DIR.search(text)
    if out:
        extra["out_dir"] = out["path"].rstrip(".,;:?!")
        text = text[: out.start()] + text[out.end() :]
    top = _TOP.search(text)
    if top and 1 <= int(top["a"] or top["b"]) <= 200:
        extra["top"] = int(top["a"] or top["b"])
    m = (
        _CODE_SOURCE.search(text)
        or _QUOTED_SOURCE.search(text)
        or _SOURCE.search(text)
        or _QUOTED_FOLDER.search(text)
        or _FOLDER.search(text)
        or _FILES_UNDER.search(text)
        or (_PATH_THEN_FOLDER.search(text) if _DATA_WORDS.search(text) else None)
    )
    if not m:
        return None
    path = m["path"].rstrip(".,;:?!") or m["path"]
    if path.lower().endswith((".csv", ".parquet")):
        path = str(Path(path).parent) if "/" in path else "."
    return _with_entity(text, {"source": path, **extra})


# a bare ``key=value`` anywhere, quoted or not: the entity to focus on
_BARE_ENTITY = re.compile(r"\b(?P<k>[A-Za-z_]\w*)\s*=\s*(?P<v>\"[^\"]+\"|'[^']+'|[\w.-]*\w)")
_FOLDER_PATH = re.compile(r"(?<![\w:/])(?P<path>~?[\w.-]*(?:/[\w.-]+)+)/?")


def _with_entity(text: str, out: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the entity the task focuses on ("about region=north", "meter_id=A-17")."""
    e = _ENTITY.search(text)
    if e:
        out["entity"] = re.sub(r"\s+", "", e["e"])
    else:
        m = _BARE_ENTITY.search(text)
        if m:
            out["entity"] = f"{m['k']}={m['v'].strip(chr(34) + chr(39))}"
    if out.get("entity"):
        out["entity"] = str(out["entity"]).rstrip(".,;:!?")
    return out


def _read(text: str) -> dict[str, Any] | None:
    """A folder of data files named by its path alone, read loosely (the task is known to ask
    for research): "explore data/energy (CSV files)"."""
    m = _FOLDER_PATH.search(text)
    if not m or "://" in text or _CHORE.match(text):
        return None
    # a proof, code or document file is no folder of data: "run the checker on theories/A.v"
    if re.search(
        r"\.(?:v|lean|py|js|ts|rs|c|cpp|h|java|txt|md|pdf|docx?|html?|png|jpe?g)$", m["path"], re.I
    ):
        return None
    return _with_entity(text, {"source": m["path"]})


@operation(
    "research",
    read_only=True,
    time_limit_s=3700,
    examples=(
        "Explore the database shop.sqlite and tell me what stands out.",
        "What insights are in data/clinic.db?",
        "Research the CSV files in the folder data/sales/",
        "Analyse hospital.sqlite for patient_id=42",
        "Look for patterns in the CSV files in the folder logs/2024.",
        "Analyse the data in exports/customers (CSV dumps) and report anything odd.",
        "Investigate orders.db, especially region=north.",
        "Poke around the SQLite file finance.sqlite3 and tell me what you find.",
        "What trends are there in the parquet tables under lake/sales/?",
        "Give me an exploratory report on the dataset in data/traffic.",
    ),
    extract=_extract,
    read=_read,
)
def research(args: ResearchInput, ctx: OperationContext) -> ResearchOutput | Outcome:
    """Explore a database (SQLite, or a folder of CSV/Parquet files) on its own and report
    insights (trends, outliers, correlations, differences), each checked against the data with
    the query that shows it; the source is never modified."""
    from lemmata.agents.research.run import research as run_research

    source = Path(args.source).expanduser()
    out = (
        Path(args.out_dir)
        if args.out_dir
        else ctx.settings.data_dir
        / "research"
        / f"{source.stem or 'data'}-{time.strftime('%Y%m%d-%H%M%S')}"
    )

    def on_step(state: Any) -> None:
        turns = state.get("turns", 0)
        ctx.report(f"research: turn {turns}", turns / max(1, args.budget_turns))

    report = run_research(
        source,
        out,
        entity=args.entity,
        budget_turns=args.budget_turns,
        budget_seconds=min(args.budget_seconds, (ctx.remaining() or args.budget_seconds) * 0.9),
        model=ctx.model,
        figures=False,
        on_step=on_step,
    )
    payload = ResearchOutput(
        insights=[i.public() for i in report.insights[: args.top]],
        total=len(report.insights),
        report=str(report.out_dir),
        stats=report.stats,
    )
    if not report.insights:
        return Outcome(
            payload, "failed", "no insight held up against the data", "give it more turns"
        )
    return payload


OPERATIONS: list[Operation] = [research]
