"""Writing a research run out: ``report.json``, ``report.md`` and ``figures/*.png``.

Each insight gets the figure that shows it (a histogram for a distribution, bars for shares
and group means, a scatter for a correlation, the monthly series for a trend or a change, the
outlying point against the rest), drawn with matplotlib from the database itself.
Files are written to temporary names and moved into place, so a report on disk is never half
written.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.types import Insight
from lemmata.environments.database import quote_ident

if TYPE_CHECKING:
    from lemmata.agents.research.profile import Survey
    from lemmata.environments.database import Database

__all__ = ["draw_insight", "write_report"]

MAX_FIGURES = 40


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_")[:60] or "figure"


def _values(db: Database, sql: str) -> list[tuple[Any, ...]]:
    result = db.query(sql, max_rows=20_000)
    return result.rows if result.ok else []


def draw_insight(insight: Insight, db: Database, survey: Survey, path: Path) -> bool:
    """Draw the figure of ``insight`` into ``path`` (PNG); False when it has none."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = quote_ident(insight.table)
    cols = insight.columns
    entity = next(
        (e for e in insight.entities if e.split("=")[0] in _entity_columns(survey, insight)), None
    )
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    try:
        drawn = _draw(ax, insight, db, survey, t, cols, entity)
        if not drawn:
            return False
        ax.set_title(_wrap(insight.statement), fontsize=8)
        fig.tight_layout()
        tmp = path.with_name(path.stem + ".part.png")
        fig.savefig(tmp)
        os.replace(tmp, path)
        return True
    finally:
        plt.close(fig)


def _entity_columns(survey: Survey, insight: Insight) -> set[str]:
    table = survey.tables.get(insight.table)
    if table is None:
        return set()
    keys = {link.column for link in survey.links if link.child == insight.table}
    return keys | ({table.key} if table.key else set())


def _wrap(text: str, width: int = 95) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)[:3])


def _draw(
    ax: Any, ins: Insight, db: Database, survey: Survey, t: str, cols: list[str], entity: str | None
) -> bool:
    kind = ins.kind
    ent_where = []
    if entity is not None:
        column, _, value = entity.partition("=")
        ent_where = [ev.equals(column, _typed(db, ins.table, column, value))]
    if kind == "distribution":
        rows = _values(
            db,
            f"SELECT {quote_ident(cols[0])} FROM {t} WHERE typeof({quote_ident(cols[0])}) IN ('integer','real')",
        )
        ax.hist([r[0] for r in rows], bins=50, color="#4c72b0")
        ax.set_xlabel(cols[0])
        ax.set_ylabel("rows")
        return bool(rows)
    if kind in {"share", "group_difference"} and cols:
        cat = cols[-1]
        if kind == "share":
            sql = (
                f"SELECT {quote_ident(cat)}, COUNT(*) FROM {t} WHERE {quote_ident(cat)} IS NOT NULL"
                f"{' AND ' + ent_where[0] if ent_where else ''} GROUP BY 1 ORDER BY 2 DESC LIMIT 20"
            )
            rows = _values(db, sql)
            total = sum(r[1] for r in rows) or 1
            labels, heights = [str(r[0]) for r in rows], [r[1] / total for r in rows]
            ax.set_ylabel("share of rows" + (f" ({entity})" if entity else ""))
        else:
            num = cols[0]
            sql = (
                f"SELECT {quote_ident(cat)}, AVG({quote_ident(num)}) FROM {t} WHERE "
                f"{quote_ident(cat)} IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 20"
            )
            rows = _values(db, sql)
            labels, heights = [str(r[0]) for r in rows], [r[1] or 0 for r in rows]
            ax.set_ylabel(f"mean {num}")
        marked = {e.split("=", 1)[1] for e in ins.entities if e.split("=")[0] == cat}
        colors = ["#dd8452" if lab in marked else "#4c72b0" for lab in labels]
        ax.bar(labels, heights, color=colors)
        ax.set_xlabel(cat)
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
        return bool(rows)
    if kind == "relationship" and len(cols) == 2:
        link = next((lk for lk in survey.links if lk.child == ins.table), None)
        if link is None:
            return False
        num, pcat = cols
        p, c = quote_ident(link.parent), t
        if num == link.column:
            sql = (
                f"SELECT g, AVG(n) FROM (SELECT p.{quote_ident(pcat)} AS g, COUNT(c.{quote_ident(link.column)}) AS n "
                f"FROM {p} AS p LEFT JOIN {c} AS c ON c.{quote_ident(link.column)} = p.{quote_ident(link.parent_column)} "
                f"GROUP BY p.{quote_ident(link.parent_column)}) GROUP BY g ORDER BY 2 DESC"
            )
            ax.set_ylabel(f"{ins.table} rows per {link.parent} row")
        else:
            sql = (
                f"SELECT p.{quote_ident(pcat)}, AVG(c.{quote_ident(num)}) FROM {c} AS c JOIN {p} AS p "
                f"ON c.{quote_ident(link.column)} = p.{quote_ident(link.parent_column)} GROUP BY 1 ORDER BY 2 DESC"
            )
            ax.set_ylabel(f"mean {num}")
        rows = [r for r in _values(db, sql) if r[0] is not None]
        marked = {e.split("=", 1)[1] for e in ins.entities}
        labels = [str(r[0]) for r in rows]
        ax.bar(
            labels,
            [r[1] or 0 for r in rows],
            color=["#dd8452" if lab in marked else "#4c72b0" for lab in labels],
        )
        ax.set_xlabel(f"{link.parent}.{pcat}")
        return bool(rows)
    if kind == "correlation" and len(cols) == 2:
        a, b = (quote_ident(c) for c in cols)
        rows = _values(
            db, f"SELECT {a}, {b} FROM {t} WHERE {a} IS NOT NULL AND {b} IS NOT NULL LIMIT 5000"
        )
        ax.scatter([r[0] for r in rows], [r[1] for r in rows], s=4, alpha=0.4)
        ax.set_xlabel(cols[0])
        ax.set_ylabel(cols[1])
        return bool(rows)
    if kind in {"trend", "change"} and cols:
        date_col = quote_ident(cols[-1])
        if entity is not None and len(cols) == 2:
            rows = _values(
                db,
                f"SELECT julianday({date_col}), {quote_ident(cols[0])}, {date_col} FROM {t} WHERE "
                f"{ent_where[0]} AND {quote_ident(cols[0])} IS NOT NULL ORDER BY 1",
            )
            ax.plot([r[2][:10] for r in rows], [r[1] for r in rows], "o-", ms=3)
            ax.set_ylabel(f"{cols[0]} ({entity})")
        else:
            agg = f"AVG({quote_ident(cols[0])})" if len(cols) == 2 else "COUNT(*)"
            rows = _values(
                db,
                f"SELECT strftime('%Y-%m', {date_col}) AS m, {agg} FROM {t} WHERE date({date_col}) "
                "IS NOT NULL GROUP BY m ORDER BY m",
            )
            ax.plot([r[0] for r in rows], [r[1] for r in rows], "o-", ms=3)
            ax.set_ylabel(f"monthly mean {cols[0]}" if len(cols) == 2 else "rows per month")
            since = ins.support.get("since")
            if kind == "change" and since:
                labels = [r[0] for r in rows]
                if since[:7] in labels:
                    ax.axvline(labels.index(since[:7]), color="#c44e52", ls="--")
        ax.tick_params(axis="x", labelrotation=60, labelsize=6)
        step = max(1, len(rows) // 12)
        ax.set_xticks(range(0, len(rows), step))
        ax.set_xlabel(cols[-1])
        return bool(rows)
    if kind == "outlier" and cols and ins.value is not None:
        rows = _values(
            db,
            f"SELECT {quote_ident(cols[0])} FROM {t} WHERE typeof({quote_ident(cols[0])}) IN ('integer','real')",
        )
        if not rows:
            return False
        ax.hist([r[0] for r in rows], bins=60, color="#4c72b0", label="all rows")
        ax.axvline(ins.value, color="#c44e52", ls="--", label=", ".join(ins.entities) or "outlier")
        ax.set_xlabel(cols[0])
        ax.set_ylabel("rows")
        ax.legend(fontsize=7)
        return True
    return False


def _typed(db: Database, table: str, column: str, value: str) -> Any:
    kind = db.scalar(
        f"SELECT typeof({quote_ident(column)}) FROM {quote_ident(table)} "
        f"WHERE {quote_ident(column)} IS NOT NULL LIMIT 1"
    )
    if kind in ("integer", "real"):
        try:
            f = float(value)
            return int(f) if kind == "integer" and f.is_integer() else f
        except ValueError:
            return value
    return value


def write_report(
    out_dir: Path,
    insights: Sequence[Insight],
    stats: dict[str, Any],
    observations: Sequence[str],
    *,
    db: Database | None = None,
    survey: Survey | None = None,
    figures: bool = True,
) -> dict[str, Path]:
    """Write report.json, report.md and (with ``db``) the figures into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fig_dir = out_dir / "figures"
    drawn: dict[int, str] = {}
    if figures and db is not None and survey is not None:
        fig_dir.mkdir(exist_ok=True)
        for old in fig_dir.glob("*.png"):
            old.unlink()
        for i, ins in enumerate(insights[:MAX_FIGURES]):
            name = f"{i + 1:02d}_{ins.kind}_{_slug('_'.join([ins.table, *ins.columns]))}.png"
            if draw_insight(ins, db, survey, fig_dir / name):
                drawn[i] = f"figures/{name}"
    records = []
    for i, ins in enumerate(insights):
        record = ins.public()
        record["figure"] = drawn.get(i)
        records.append(record)
    payload = {"insights": records, "stats": stats, "observations": list(observations)}
    json_path = out_dir / "report.json"
    _atomic_write(json_path, json.dumps(payload, indent=2, default=str) + "\n")
    md_path = out_dir / "report.md"
    _atomic_write(md_path, _markdown(insights, stats, observations, drawn))
    return {"json": json_path, "markdown": md_path, "figures": fig_dir}


def _markdown(
    insights: Sequence[Insight],
    stats: dict[str, Any],
    observations: Sequence[str],
    drawn: dict[int, str],
) -> str:
    focus = stats.get("entity") or "the whole database"
    lines = [
        f"# Research report: {stats.get('source', '')}",
        "",
        f"Focus: {focus}. {len(insights)} insights from {stats.get('hypotheses_tested', 0)} "
        f"hypotheses tested in {stats.get('turns', 0)} turns ({stats.get('elapsed_s', 0):.1f} s; "
        f"stopped: {stats.get('stopped')}). Explorer: {stats.get('explorer')}.",
        "",
        "Every value below is reproduced by its evidence query "
        f'(`sqlite3 {stats.get("evidence_database", "DB")} "<query>"`).',
        "",
    ]
    by_kind = stats.get("insights_by_kind") or {}
    if by_kind:
        lines += ["| kind | insights |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in by_kind.items()]
        lines.append("")
    for i, ins in enumerate(insights):
        lines.append(f"## {i + 1}. {ins.statement}")
        lines.append("")
        meta = [f"kind `{ins.kind}`", f"table `{ins.table}`"]
        if ins.columns:
            meta.append("columns " + ", ".join(f"`{c}`" for c in ins.columns))
        if ins.entities:
            meta.append("entities " + ", ".join(f"`{e}`" for e in ins.entities))
        if ins.direction:
            meta.append(f"direction `{ins.direction}`")
        if ins.value is not None:
            meta.append(f"value `{ins.value:.6g}`")
        lines.append("; ".join(meta))
        lines.append("")
        if i in drawn:
            lines += [f"![{ins.kind}]({drawn[i]})", ""]
        lines += ["```sql", ins.evidence_sql, "```", ""]
    if observations:
        lines += ["## Observations", ""]
        lines += [f"- {o}" for o in observations]
        lines.append("")
    return "\n".join(lines)
