"""Pictures of a proof search: one problem's tree of nodes and attempts, drawn to PNG.

Each search node (the ``node``/``child`` ids of the trace's attempt records) is a box with its
first goal's conclusion; an edge into a node carries the tactic that made it. The attempts that
made no node hang below their node as a column of small chips: failures coloured by their
:class:`~lemmata.provers.result.FailureKind` (:data:`FAILURE_COLOURS`, one fixed colour per
kind, with a legend), duplicates and repairs in grey, the final whole-proof check last. The
proof found is drawn in :data:`HIGHLIGHT` green: thick edges, green boxes. A node with more than
``collapse_above`` chips shows them as one chip per class (``"12 failed"`` with the counts by
kind); a tree still larger than ``max_nodes`` boxes keeps the proof and the nodes nearest the
root, and says below each cut how much it left out.

The layout is computed here (:func:`layout_tree`, pure and testable): a layered top-down tree,
one column per leaf, a parent centred over its children, because a search tree is a tree and
needs nothing more general. Drawing uses matplotlib's Agg backend and never opens a window.

>>> from lemmata.provers.refine import read_trace                         # doctest: +SKIP
>>> draw_tree(read_trace(Path("t1.jsonl"))[0], Path("t1.png"))            # doctest: +SKIP
PosixPath('t1.png')
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.provers.refine.trace import ProblemTrace, read_trace
from lemmata.provers.result import FailureKind

__all__ = [
    "FAILURE_COLOURS",
    "HIGHLIGHT",
    "Box",
    "TreeLayout",
    "draw_tree",
    "draw_trees",
    "layout_tree",
    "select_traces",
]

# The solved path. No failure colour is green, so this colour in a picture means a proof.
HIGHLIGHT = "#1a9850"
_PATH_FACE = "#c7e9c0"
GREY = "#9e9e9e"

FAILURE_COLOURS: dict[FailureKind, str] = {
    FailureKind.TACTIC_FAILED: "#d62728",
    FailureKind.UNSOLVED_GOALS: "#e6c229",
    FailureKind.TYPE_MISMATCH: "#ff7f0e",
    FailureKind.UNKNOWN_IDENTIFIER: "#9467bd",
    FailureKind.SYNTAX_ERROR: "#8c564b",
    FailureKind.TIMEOUT: "#1f77b4",
    FailureKind.USES_SORRY: "#e377c2",
    FailureKind.BAD_AXIOM: "#4a148c",
    FailureKind.STATEMENT_CHANGED: "#00838f",
    FailureKind.HEADER_ERROR: "#5d4037",
    FailureKind.STRUCTURE: "#17becf",
    FailureKind.NAME_CLASH: "#bcbd22",
    FailureKind.NOT_A_PRODUCT: "#f4a582",
    FailureKind.VACUOUS: "#263238",
    FailureKind.CRASH: "#880e4f",
    FailureKind.ASSUMED_GUARDED: "#b71c1c",
    FailureKind.ASSUMED_POSITIVE: "#3949ab",
    FailureKind.UNSAFE_UNIVERSES: "#6a1b9a",
    FailureKind.UNSAFE_INPUT: "#212121",
    FailureKind.OTHER: "#a6761d",
}

_FAILED = ("error", "timeout", "crash")

# Geometry in inches (the axes are scaled so that one data unit is one inch).
_SLOT = 1.6
_BOX_W, _BOX_H = 1.45, 0.42
_LAYER = 1.05
_CHIP_W, _CHIP_LINE, _CHIP_PAD, _CHIP_GAP = 1.4, 0.12, 0.07, 0.05
_MAX_PIXELS = 30000  # per side; Agg's hard limit is 65536


@dataclass
class Box:
    """One thing in the picture: a search ``node`` box or a ``chip`` (one attempt that made no
    node, several of them collapsed, or a note of what was left out)."""

    key: str
    kind: str  # "node" | "chip"
    label: str
    parent: str | None
    colour: str  # face colour
    edge: str = ""  # the tactic on the edge into a node
    style: str = "plain"  # "path", "repair", "finished", "root", "failed", "quiet", "more"
    attempts: list[int] = field(default_factory=list)  # the trace indices it stands for
    counts: dict[str, int] = field(default_factory=dict)  # collapsed chips: by class
    lines: float = 1
    x: float = 0.0
    y: float = 0.0

    @property
    def height(self) -> float:
        if self.kind == "node":
            return _BOX_H
        return _CHIP_PAD + self.lines * _CHIP_LINE

    @property
    def bottom(self) -> float:
        # a node's y is its centre, a chip's its top (chips hang in columns)
        return self.y - (self.height / 2 if self.kind == "node" else self.height)


@dataclass
class TreeLayout:
    """What :func:`draw_tree` draws, with positions in inches (y grows upwards, the root at 0).
    ``hidden_nodes`` search nodes (and their attempts) were left out to keep ``max_nodes``."""

    boxes: list[Box]
    kinds: list[FailureKind]  # the failure classes shown, for the legend
    hidden_nodes: int = 0
    hidden_attempts: int = 0

    def nodes(self) -> list[Box]:
        return [b for b in self.boxes if b.kind == "node"]

    def chips(self) -> list[Box]:
        return [b for b in self.boxes if b.kind == "chip"]

    @property
    def width(self) -> float:
        return max((b.x for b in self.boxes), default=0.0) + _SLOT

    @property
    def depth(self) -> float:
        """How far below the root's centre the lowest box ends."""
        return -min((b.bottom for b in self.boxes), default=-_BOX_H / 2)


def _short(text: Any, n: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _kind(rec: dict[str, Any]) -> FailureKind:
    failure = rec.get("failure")
    name = failure.get("kind") if isinstance(failure, dict) else None
    if name is None:
        name = {"timeout": "timeout", "crash": "crash"}.get(str(rec.get("status")), "other")
    try:
        return FailureKind(name)
    except ValueError:
        return FailureKind.OTHER


def _conclusion(goal: Any) -> str:
    text = str(goal or "")
    for turnstile in ("⊢", "|-"):
        if turnstile in text:
            return text.rsplit(turnstile, 1)[1].strip()
    return text.strip()


def _ink(face: str) -> str:
    """Black or white text, whichever reads better on ``face``."""
    r, g, b = (int(face[i : i + 2], 16) for i in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "white"


@dataclass
class _Node:
    id: int
    parent: int | None
    made_by: int | None  # attempt index
    children: list[int] = field(default_factory=list)
    leaves: list[int] = field(default_factory=list)  # attempts that made no node here
    goal: str | None = None
    goals: int | None = None


def _tree(trace: ProblemTrace) -> dict[int, _Node]:
    nodes: dict[int, _Node] = {0: _Node(0, None, None)}

    def node(nid: int) -> _Node:
        if nid not in nodes:  # referenced before any attempt made it: hang it on the root
            nodes[nid] = _Node(nid, 0, None)
            nodes[0].children.append(nid)
        return nodes[nid]

    for i, rec in enumerate(trace.attempts):
        here = node(int(rec.get("node") or 0))
        if here.goal is None and rec.get("goal") is not None:
            here.goal, here.goals = str(rec["goal"]), rec.get("goals_before")
        child = rec.get("child")
        if child is not None and int(child) not in nodes and int(child) != here.id:
            nodes[int(child)] = _Node(int(child), here.id, i)
            here.children.append(int(child))
            if rec.get("status") == "finished":
                nodes[int(child)].goals = 0
        else:
            here.leaves.append(i)
    return nodes


def _chips(trace: ProblemTrace, n: _Node, collapse_above: int, on_path: set[int]) -> list[Box]:
    checks = [i for i in n.leaves if trace.attempts[i].get("family") == "check"]
    failed = [i for i in n.leaves if i not in checks and trace.attempts[i].get("status") in _FAILED]
    quiet = [i for i in n.leaves if i not in checks and i not in failed]  # duplicates, replays
    out: list[Box] = []
    key = f"n{n.id}"
    if len(failed) + len(quiet) > collapse_above:
        if failed:
            counts = Counter(_kind(trace.attempts[i]).value for i in failed)
            top = counts.most_common()
            shown = [f"{k} {c}" for k, c in top[:3]]
            if len(top) > 3:
                shown.append(f"+{len(top) - 3} more kinds")
            out.append(
                Box(
                    f"{key}.f",
                    "chip",
                    "\n".join([f"{len(failed)} failed:", *shown]),
                    key,
                    FAILURE_COLOURS[FailureKind(top[0][0])],
                    style="failed",
                    attempts=failed,
                    counts=dict(counts),
                    lines=1.5 + len(shown),  # half a line for the mix strip
                )
            )
        if quiet:
            counts = Counter(str(trace.attempts[i].get("status")) for i in quiet)
            label = ", ".join(f"{c} {k}" for k, c in counts.most_common())
            out.append(
                Box(
                    f"{key}.q",
                    "chip",
                    label,
                    key,
                    GREY,
                    style="quiet",
                    attempts=quiet,
                    counts=dict(counts),
                )
            )
    else:
        for i in sorted(failed + quiet):
            rec = trace.attempts[i]
            if i not in failed:
                out.append(
                    Box(
                        f"a{i}",
                        "chip",
                        f"{_short(rec.get('tactic'), 20)} ({rec.get('status')})",
                        key,
                        GREY,
                        style="quiet",
                        attempts=[i],
                    )
                )
            else:
                out.append(
                    Box(
                        f"a{i}",
                        "chip",
                        _short(rec.get("tactic"), 24),
                        key,
                        FAILURE_COLOURS[_kind(rec)],
                        style="failed",
                        attempts=[i],
                    )
                )
    for i in checks:
        rec = trace.attempts[i]
        if rec.get("status") == "check":
            good = n.id in on_path
            out.append(
                Box(
                    f"a{i}",
                    "chip",
                    "whole proof checked ✓",
                    key,
                    HIGHLIGHT if good else "#ffffff",
                    style="path" if good else "plain",
                    attempts=[i],
                )
            )
        else:
            kind = _kind(rec)
            out.append(
                Box(
                    f"a{i}",
                    "chip",
                    f"whole proof: {kind.value}",
                    key,
                    FAILURE_COLOURS[kind],
                    style="failed",
                    attempts=[i],
                )
            )
    return out


def layout_tree(
    trace: ProblemTrace, *, max_nodes: int = 400, collapse_above: int = 8
) -> TreeLayout:
    """The boxes of ``trace``'s search tree, placed. At most ``max_nodes`` boxes (unless the
    proof alone needs more): chips are collapsed per node past ``collapse_above``, then per
    node past one, then the nodes farthest from the root and off the proof are left out."""
    tree = _tree(trace)
    path_attempts = trace.on_path()
    on_path: set[int] = set()
    if trace.solved:
        on_path = {0} | {n.id for n in tree.values() if n.made_by in path_attempts}

    chips = {nid: _chips(trace, n, collapse_above, on_path) for nid, n in tree.items()}
    if len(tree) + sum(map(len, chips.values())) > max_nodes:
        chips = {nid: _chips(trace, n, 1, on_path) for nid, n in tree.items()}

    # Keep the proof, then the nodes nearest the root, while the boxes fit; each kept node
    # keeps a place for the note of what was cut below it.
    order: list[int] = []
    frontier = [0]
    while frontier:
        order.extend(frontier)
        frontier = [c for nid in frontier for c in tree[nid].children]
    kept: set[int] = set()
    used = 0
    for forced in (True, False):
        for nid in order:
            if nid in kept or (forced and nid not in on_path and nid != 0):
                continue
            parent = tree[nid].parent
            if not forced and parent is not None and parent not in kept:
                continue
            cost = 1 + len(chips[nid]) + 1
            if forced or used + cost <= max_nodes:
                kept.add(nid)
                used += cost

    def cut_below(nid: int) -> tuple[int, int]:
        nodes = attempts = 0
        stack = [c for c in tree[nid].children if c not in kept]
        while stack:
            c = stack.pop()
            nodes += 1
            attempts += len(tree[c].leaves) + 1
            stack.extend(tree[c].children)
        return nodes, attempts

    boxes: dict[str, Box] = {}
    hidden_nodes = hidden_attempts = 0
    kinds: set[FailureKind] = set()
    for nid in order:
        if nid not in kept:
            continue
        n = tree[nid]
        rec = trace.attempts[n.made_by] if n.made_by is not None else {}
        status = rec.get("status")
        if nid == 0:
            title, style, face = "#0 start", "root", "#e3f2fd"
        elif status == "finished":
            title, style, face = f"#{nid} no goals", "finished", "#fff8e1"
        elif status == "repair":
            title, style, face = f"#{nid} (repair)", "repair", "#eeeeee"
        else:
            title, style, face = f"#{nid}", "plain", "#ffffff"
        if n.goals and n.goals > 1:
            title += f" · {n.goals} goals"
        if nid in on_path:
            style, face = "path", _PATH_FACE
        label = title if n.goals == 0 else f"{title}\n{_short(_conclusion(n.goal), 26)}"
        boxes[f"n{nid}"] = Box(
            f"n{nid}",
            "node",
            label,
            f"n{n.parent}" if n.parent is not None else None,
            face,
            edge=_short(rec.get("tactic"), 26),
            style=style,
            attempts=[n.made_by] if n.made_by is not None else [],
            lines=2,
        )
        for chip in chips[nid]:
            boxes[chip.key] = chip
            if chip.style == "failed":
                kinds.update(_kind(trace.attempts[i]) for i in chip.attempts)
        cut_nodes, cut_attempts = cut_below(nid)
        if cut_nodes:
            hidden_nodes += cut_nodes
            hidden_attempts += cut_attempts
            boxes[f"n{nid}.more"] = Box(
                f"n{nid}.more",
                "chip",
                f"+{cut_nodes} nodes not drawn\n({cut_attempts} attempts)",
                f"n{nid}",
                "#ffffff",
                style="more",
                lines=2,
            )

    _place(boxes, tree, kept)
    ordered_kinds = [k for k in FailureKind if k in kinds]
    return TreeLayout(list(boxes.values()), ordered_kinds, hidden_nodes, hidden_attempts)


def _place(boxes: dict[str, Box], tree: dict[int, _Node], kept: set[int]) -> None:
    """A layered tidy layout: leaves take consecutive columns, a parent sits over the middle of
    its children, and a node's chips form one more column of their own."""
    stacks: dict[str, list[Box]] = {}
    for b in boxes.values():
        if b.kind == "chip" and b.parent is not None:
            stacks.setdefault(b.parent, []).append(b)
    column = 0

    def place(nid: int, depth: int) -> float:
        nonlocal column
        key = f"n{nid}"
        box = boxes[key]
        box.y = -depth * _LAYER
        xs = [place(c, depth + 1) for c in tree[nid].children if c in kept]
        chips = stacks.get(key, [])
        if chips:
            x = column * _SLOT
            column += 1
            top = box.y - _BOX_H / 2 - 0.32
            for chip in chips:
                chip.x, chip.y = x, top
                top -= chip.height + _CHIP_GAP
            xs.append(x)
        if xs:
            box.x = (min(xs) + max(xs)) / 2
        else:
            box.x = column * _SLOT
            column += 1
        return box.x

    # Depth is bounded by the search's max_depth, so recursion stays shallow.
    place(0, 0)


def _status_line(trace: ProblemTrace) -> str:
    r = trace.result
    if r is None:
        return f"{trace.id}: unfinished (no result record), {len(trace.attempts)} attempts"
    line = (
        f"{trace.id}: {r.get('status')} in {r.get('calls')} calls, {len(trace.attempts)} attempts"
    )
    failure = r.get("failure_mode")
    if isinstance(failure, dict) and failure.get("kind"):
        line += f" ({failure['kind']})"
    if r.get("vacuous"):
        line += " (vacuous: the hypotheses contradict each other)"
    return line


def draw_tree(trace: ProblemTrace, out: Path, *, max_nodes: int = 400) -> Path:
    """Draw ``trace``'s search tree to the PNG ``out`` (its folder is created); see the module
    docstring for what the picture shows. Returns ``out``."""
    try:  # the Agg canvas directly: no pyplot, no global backend switch, never a window
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
        from matplotlib.patches import FancyBboxPatch, Patch, Rectangle
    except ImportError:
        from lemmata.errors import MissingDependency

        raise MissingDependency("drawing search trees", "pip install matplotlib") from None

    layout = layout_tree(trace, max_nodes=max_nodes)
    margin = 0.4
    legend: list[Any] = [
        Patch(facecolor=FAILURE_COLOURS[k], edgecolor="none", label=k.value) for k in layout.kinds
    ]
    legend.append(Patch(facecolor=GREY, edgecolor="none", label="duplicate / repair"))
    if trace.solved:
        legend.append(Line2D([0], [0], color=HIGHLIGHT, lw=3, label="proof found"))
    width = max(layout.width + 2 * margin, 7.0)
    columns = max(1, min(len(legend), int(width / 1.7)))
    top = 0.75 + 0.22 * (-(-len(legend) // columns)) + 0.25
    height = layout.depth + _BOX_H / 2 + top + margin
    dpi = min(110.0, _MAX_PIXELS / max(width, height))

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    left = -_SLOT / 2 - (width - layout.width) / 2  # the tree centred
    ax.set_xlim(left, left + width)
    ax.set_ylim(-layout.depth - margin, _BOX_H / 2 + top)
    ax.axis("off")

    byk = {b.key: b for b in layout.boxes}
    text: dict[str, Any] = {"parse_math": False, "ha": "center", "va": "center", "zorder": 4}
    for b in layout.boxes:
        if b.kind != "node" or b.parent is None or b.parent not in byk:
            continue
        p = byk[b.parent]
        x0, y0, x1, y1 = p.x, p.y - _BOX_H / 2, b.x, b.y + _BOX_H / 2
        if b.style == "path":
            kw: dict[str, Any] = {"color": HIGHLIGHT, "lw": 3.0}
        elif b.style == "repair":
            kw = {"color": GREY, "lw": 1.0, "ls": "--"}
        else:
            kw = {"color": "#555555", "lw": 0.9}
        ax.plot([x0, x1], [y0, y1], zorder=1, solid_capstyle="butt", **kw)
        if b.edge:
            ax.text(
                x0 + 0.62 * (x1 - x0),
                y0 + 0.62 * (y1 - y0),
                b.edge,
                fontsize=5.5,
                color="#222222" if b.style != "repair" else "#666666",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.9},
                **text,
            )
    stacks: dict[str, list[Box]] = {}
    for b in layout.chips():
        if b.parent is not None:
            stacks.setdefault(b.parent, []).append(b)
    for parent, chips in stacks.items():
        p = byk[parent]
        first, last = chips[0], chips[-1]
        ax.plot([p.x, first.x], [p.y - _BOX_H / 2, first.y], color="#777777", lw=0.7, zorder=1)
        ax.plot(
            [first.x, last.x],
            [first.y, last.y - last.height / 2],
            color="#777777",
            lw=0.7,
            zorder=1,
        )

    for b in layout.boxes:
        if b.kind == "node":
            w, h = _BOX_W, _BOX_H
            lw = 2.2 if b.style == "path" else 0.9
            ec = HIGHLIGHT if b.style == "path" else GREY if b.style == "repair" else "#333333"
            ls = "--" if b.style in ("repair", "finished") else "-"
            y_top = b.y + h / 2
            size = 6.0
        else:
            w, h = _CHIP_W, b.height
            lw, ec, ls = (1.2, HIGHLIGHT, "-") if b.style == "path" else (0.5, "#555555", "-")
            if b.style == "more":
                ls = ":"
            y_top = b.y
            size = 5.2
        ax.add_patch(
            FancyBboxPatch(
                (b.x - w / 2, y_top - h),
                w,
                h,
                boxstyle="round,pad=0,rounding_size=0.05",
                fc=b.colour,
                ec=ec,
                lw=lw,
                ls=ls,
                zorder=3,
            )
        )
        strip = 0.06 if b.style == "failed" and len(b.counts) > 1 else 0.0
        ax.text(
            b.x,
            y_top - (h - strip) / 2,
            b.label,
            fontsize=size,
            color=_ink(b.colour),
            style="italic" if b.style in ("more", "quiet") else "normal",
            linespacing=1.15,
            **text,
        )
        if strip:
            # a collapsed chip wears its majority's colour; a strip shows the whole mix
            x, total = b.x - w / 2 + 0.06, sum(b.counts.values())
            for name, count in sorted(b.counts.items(), key=lambda kv: -kv[1]):
                part = (w - 0.12) * count / total
                colour = FAILURE_COLOURS.get(FailureKind(name), FAILURE_COLOURS[FailureKind.OTHER])
                ax.add_patch(
                    Rectangle(
                        (x, y_top - h + 0.03), part, 0.035, fc=colour, ec="white", lw=0.3, zorder=5
                    )
                )
                x += part

    title = _status_line(trace)
    fig.text(
        0.5,
        1 - 0.22 / height,
        title,
        ha="center",
        va="top",
        fontsize=11,
        weight="bold",
        parse_math=False,
    )
    sub = _short(trace.problem.get("statement"), 150)
    if layout.hidden_nodes:
        sub += (
            f"\n({layout.hidden_nodes} search nodes and {layout.hidden_attempts} attempts "
            f"not drawn: more than {max_nodes} boxes)"
        )
    fig.text(
        0.5,
        1 - 0.5 / height,
        sub,
        ha="center",
        va="top",
        fontsize=7.5,
        color="#333333",
        parse_math=False,
    )
    fig.legend(
        handles=legend,
        loc="upper center",
        ncol=columns,
        fontsize=7,
        frameon=False,
        bbox_to_anchor=(0.5, 1 - (0.62 + (0.22 if layout.hidden_nodes else 0)) / height),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", facecolor="white")
    return out


def select_traces(
    traces: list[ProblemTrace], ids: Iterable[str] | None, source: Path | str = "the trace"
) -> list[ProblemTrace]:
    """The searches in ``traces`` with the given ids (all when ``ids`` is empty or ``None``),
    in the order given; an id that is not there raises ``ValueError`` naming a few known."""
    wanted = list(ids or [])
    if not wanted:
        return traces
    by_id: dict[str, ProblemTrace] = {}
    for t in traces:
        by_id.setdefault(t.id, t)
    missing = [i for i in wanted if i not in by_id]
    if missing:
        known = list(by_id)
        shown = ", ".join(known[:8]) + (f", … ({len(known)} in all)" if len(known) > 8 else "")
        raise ValueError(
            f"no search with id {', '.join(missing)} in {source}; known ids: {shown or 'none'}"
        )
    return [by_id[i] for i in wanted]


def _file_name(pid: str, taken: set[str]) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", pid).strip("._") or "problem"
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}"
    taken.add(name)
    return f"{name}.png"


def draw_trees(
    path: Path, out_dir: Path, ids: list[str] | None = None, *, max_nodes: int = 400
) -> list[Path]:
    """Draw every search in the trace file (or folder of ``*.jsonl``) ``path``, or those
    named by ``ids``, to ``out_dir/<id>.png``; returns the files written. A file that is not a
    trace, or an unknown id, raises ``ValueError`` saying which."""
    traces = select_traces(read_trace(path), ids, path)
    taken: set[str] = set()
    return [draw_tree(t, out_dir / _file_name(t.id, taken), max_nodes=max_nodes) for t in traces]
