"""Drawing proof-search trees, replaying recorded proofs, and ``lemmata prove-draw``.

The traces come from the real refinement search on real Coq; only the layout's bound on a
large tree is checked on a synthetic trace (a search that large would take minutes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from lemmata.provers.refine.cli_draw import register
from lemmata.provers.refine.draw import (
    FAILURE_COLOURS,
    HIGHLIGHT,
    draw_tree,
    draw_trees,
    layout_tree,
)
from lemmata.provers.refine.replay import replay, replay_path
from lemmata.provers.refine.search import SearchConfig, search
from lemmata.provers.refine.trace import ProblemTrace, read_trace
from lemmata.provers.result import FailureKind

HEADER = "Require Import Reals. Open Scope R_scope."
SOLVED = "Theorem t1 : forall x : R, 0 <= x -> x <= 1 -> x * x <= 1."
UNSOLVED = "Theorem f : forall x : R, x * x <= x."  # false: nothing proves it
CONFIG = SearchConfig(budget_calls=20, automation=False, tactic_timeout_s=5)


@pytest.fixture(scope="module")
def trace_file(coqtop_path: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One JSONL file holding a solved and an unsolved search, as a user's run writes it."""
    from lemmata.provers import CoqTop

    path = tmp_path_factory.mktemp("traces") / "run.jsonl"
    for pid, statement in (("solved", SOLVED), ("unsolved", UNSOLVED)):
        # One coqtop per search, as the `coq` fixture gives each test its own.
        with CoqTop(coqtop_path, timeout_s=20) as coq:
            search(coq, statement, HEADER, id=pid, config=CONFIG, trace=path)
    return path


@pytest.fixture(scope="module")
def traces(trace_file: Path) -> dict[str, ProblemTrace]:
    got = {t.id: t for t in read_trace(trace_file)}
    assert got["solved"].solved and not got["unsolved"].solved
    return got


def _highlight_pixels(png: Path) -> int:
    target = tuple(int(HIGHLIGHT[i : i + 2], 16) for i in (1, 3, 5))
    with Image.open(png) as im:
        rgb = im.convert("RGB")
        return sum(count for count, colour in rgb.getcolors(maxcolors=1 << 24) if colour == target)


def test_solved_tree_is_an_image_with_the_proof_in_green(
    traces: dict[str, ProblemTrace], tmp_path: Path
) -> None:
    png = draw_tree(traces["solved"], tmp_path / "pics" / "solved.png")
    assert png == tmp_path / "pics" / "solved.png"
    with Image.open(png) as im:
        assert im.format == "PNG"
        assert 500 <= im.width <= 30000 and 300 <= im.height <= 30000
    assert _highlight_pixels(png) > 500


def test_unsolved_tree_has_no_green(traces: dict[str, ProblemTrace], tmp_path: Path) -> None:
    png = draw_tree(traces["unsolved"], tmp_path / "unsolved.png")
    with Image.open(png) as im:
        im.verify()
    assert _highlight_pixels(png) == 0


def test_layout_of_real_search(traces: dict[str, ProblemTrace]) -> None:
    solved = traces["solved"]
    layout = layout_tree(solved)
    node_ids = {a["node"] for a in solved.attempts} | {
        a["child"] for a in solved.attempts if a.get("child") is not None
    }
    assert {b.key for b in layout.nodes()} == {f"n{i}" for i in node_ids}
    # every attempt is drawn exactly once: as the edge into a node or as a chip
    drawn = sorted(i for b in layout.boxes for i in b.attempts)
    assert drawn == list(range(len(solved.attempts)))
    path_boxes = [b for b in layout.nodes() if b.style == "path"]
    assert len(path_boxes) == len(solved.on_path()) + 1  # the root as well
    unsolved = layout_tree(traces["unsolved"])
    assert not [b for b in unsolved.boxes if b.style == "path"]
    assert unsolved.kinds  # its failures are coloured and named in the legend


def test_every_failure_kind_has_its_own_colour_and_none_is_the_highlight() -> None:
    assert set(FAILURE_COLOURS) == set(FailureKind)
    colours = [c.lower() for c in FAILURE_COLOURS.values()]
    assert len(set(colours)) == len(colours)
    assert HIGHLIGHT.lower() not in colours


def test_replay_passes_and_the_path_ends_finished(
    traces: dict[str, ProblemTrace], coq: Any
) -> None:
    solved = traces["solved"]
    assert replay(solved, coq).ok
    steps = replay_path(solved)
    assert [s["index"] for s in steps] == sorted(solved.on_path())
    assert steps[0]["node"] == 0 and steps[-1]["status"] == "finished"
    assert all(s["status"] == "open" for s in steps[:-1])
    assert all(s["goals_before"] >= 1 for s in steps)
    assert replay_path(traces["unsolved"]) == []
    with pytest.raises(ValueError, match="no proof to replay"):
        replay(traces["unsolved"], coq)


def test_replay_reports_a_proof_that_no_longer_holds(
    traces: dict[str, ProblemTrace], coq: Any
) -> None:
    solved = traces["solved"]
    assert solved.result is not None
    tampered = ProblemTrace(solved.problem, solved.attempts, {**solved.result, "proof": "lra."})
    assert not replay(tampered, coq).ok


# -- the layout on a large synthetic trace (a unit of the layout, not a search) ------------


def _synthetic(nodes: int, fails_per_node: int) -> ProblemTrace:
    """A chain of ``nodes`` nodes plus side branches, each with ``fails_per_node`` failed
    attempts of two kinds and a duplicate, and a proof along the chain's first three nodes."""
    attempts: list[dict[str, Any]] = []
    path: list[int] = []

    def attempt(node: int, child: int | None, tactic: str, status: str, kind: str | None = None):
        attempts.append(
            {
                "type": "attempt",
                "node": node,
                "child": child,
                "tactic": tactic,
                "family": "close",
                "status": status,
                "failure": {"kind": kind, "message": "m", "sentence": None} if kind else None,
                "goals_before": 1,
                "goal": f"x : R\n⊢ goal {node}",
            }
        )
        return len(attempts) - 1

    for n in range(1, nodes):
        # a short spine to the proof (node 3 has no goals), then a bushy tree off node 1
        parent = n - 1 if n < 4 else 1 if (n - 1) // 2 == 3 else (n - 1) // 2
        index = attempt(parent, n, f"step {n}", "finished" if n == 3 else "open")
        if n <= 3:
            path.append(index)
        if n == 3:
            continue
        for k in range(fails_per_node):
            kind = "tactic_failed" if k % 3 else "timeout"
            attempt(n, None, f"try {k}", "error" if kind != "timeout" else "timeout", kind)
        attempt(n, None, "auto", "duplicate")
    attempts.append(
        {
            "type": "attempt",
            "node": 3,
            "child": None,
            "tactic": "step 1.\nstep 2.",
            "family": "check",
            "status": "check",
            "failure": None,
        }
    )
    return ProblemTrace(
        {"type": "problem", "id": "synthetic", "statement": "Theorem s : True."},
        attempts,
        {"type": "result", "status": "proved", "calls": len(attempts), "path": path},
    )


def test_collapsing_keeps_many_failures_to_one_chip_per_class() -> None:
    trace = _synthetic(nodes=30, fails_per_node=12)
    assert len(trace.attempts) > 350
    layout = layout_tree(trace)
    assert len(layout.nodes()) == 30 and layout.hidden_nodes == 0
    failed = [b for b in layout.chips() if b.style == "failed"]
    assert len(failed) == 28  # one per node with failures (not the root, not the proof's end)
    assert all(b.label.startswith("12 failed:") for b in failed)
    assert all(b.counts == {"tactic_failed": 8, "timeout": 4} for b in failed)
    assert len(layout.boxes) <= 100


def test_a_tree_too_large_is_cut_to_max_nodes_and_keeps_the_proof(tmp_path: Path) -> None:
    trace = _synthetic(nodes=300, fails_per_node=2)
    layout = layout_tree(trace, max_nodes=80)
    assert len(layout.boxes) <= 80
    drawn = {b.key for b in layout.nodes()}
    assert {"n0", "n1", "n2", "n3"} <= drawn
    assert layout.hidden_nodes == 300 - len(drawn)
    assert any(b.style == "more" and "nodes not drawn" in b.label for b in layout.chips())
    # no two boxes overlap
    rects = [(b.x - 0.725, b.x + 0.725, b.bottom, b.bottom + b.height) for b in layout.boxes]
    for i, (a0, a1, b0, b1) in enumerate(rects):
        for c0, c1, d0, d1 in rects[i + 1 :]:
            assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0
    png = draw_tree(trace, tmp_path / "big.png", max_nodes=80)
    with Image.open(png) as im:
        assert max(im.size) <= 30000
    assert _highlight_pixels(png) > 0


def test_draw_trees_names_files_by_id(trace_file: Path, tmp_path: Path) -> None:
    out = draw_trees(trace_file, tmp_path / "out")
    assert [p.name for p in out] == ["solved.png", "unsolved.png"]
    assert [p.name for p in draw_trees(trace_file, tmp_path / "one", ["unsolved"])] == [
        "unsolved.png"
    ]
    with pytest.raises(ValueError, match="known ids: solved, unsolved"):
        draw_trees(trace_file, tmp_path / "none", ["nope"])


# -- lemmata prove-draw -----------------------------------------------------------------------


@pytest.fixture
def cli() -> Any:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The lemmata app stands here until prove-draw is registered there."""

    register(app)

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(app, list(args), env={"COLUMNS": "250", "NO_COLOR": "1"})

    return invoke


def test_prove_draw_prints_the_pngs(cli: Any, trace_file: Path, tmp_path: Path) -> None:
    res = cli("prove-draw", str(trace_file), "--id", "solved", "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    lines = res.output.split()
    assert lines == [str(tmp_path / "o" / "solved.png")]
    with Image.open(lines[0]) as im:
        im.verify()


def test_prove_draw_rejects_a_file_that_is_not_a_trace(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    problem = {"type": "problem", "id": "x", "statement": "Theorem x : True."}
    bad.write_text(json.dumps(problem) + "\nthis is not json\n", encoding="utf-8")
    res = cli("prove-draw", str(bad), "--out", str(tmp_path / "o"))
    assert res.exit_code == 2
    assert f"{bad}:2" in res.output
    assert not (tmp_path / "o").exists()
    missing = cli("prove-draw", str(tmp_path / "missing.jsonl"))
    assert missing.exit_code == 2 and "no such file" in missing.output


def test_prove_draw_names_known_ids_for_an_unknown_one(
    cli: Any, trace_file: Path, tmp_path: Path
) -> None:
    res = cli("prove-draw", str(trace_file), "--id", "nope", "--out", str(tmp_path / "o"))
    assert res.exit_code == 2
    assert "nope" in res.output and "solved, unsolved" in res.output
