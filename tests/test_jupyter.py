"""``%%lemmata`` in a real IPython shell: the extension, interpolation and the rich view."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from IPython.core.interactiveshell import InteractiveShell

from lemmata.agents.agent import AgentResult
from lemmata.jupyter import interpolate


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lemmata")
    yield shell
    # the shell is a singleton: close the agents, so the next test gets its own data dir
    magics = shell.magics_manager.registry.get("LemmataMagics")
    if magics is not None:
        magics.close()


def cell(ip: InteractiveShell, text: str):
    """Run a cell; its value, and the HTML and markdown that a notebook would show."""
    run = ip.run_cell(text)
    run.raise_error()
    data, _ = ip.display_formatter.format(run.result)
    return run.result, data.get("text/html", ""), data.get("text/markdown", "")


def test_importing_lemmata_does_not_import_ipython() -> None:
    code = (
        "import sys, lemmata; before = 'IPython' in sys.modules;"
        "print(before, callable(lemmata.load_ipython_extension))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True
    )
    assert out.stdout.split() == ["False", "True"]


def test_a_coq_theorem_cell_is_proved_and_shown(ip, coqtop_path) -> None:
    ip.user_ns["goal"] = "forall n : nat, n + 0 = n"
    result, page, md = cell(ip, "%%lemmata\nProve in Coq: {goal}\n")
    assert isinstance(result, AgentResult)  # the cell's value, so Out and _ hold it
    assert result.status == "answered" and result.results[0].operation == "provers_prove"
    assert result.route is not None
    assert result.route["args"]["statement"] == "Theorem goal : forall n : nat, n + 0 = n."
    proof = result.results[0].payload["proof"]
    assert proof and "lia" in proof
    assert ">proved</span>" in page and "<pre><code>intros." in page
    assert "**proved**" in md and f"```coq\n{proof}\n```" in md


def test_a_failed_proof_shows_the_failure_class_and_message(ip, coqtop_path) -> None:
    result, page, md = cell(
        ip, "%%lemmata\nCheck this Coq proof: Theorem t : 1 = 2. Proof. reflexivity. Qed.\n"
    )
    assert result.status == "failed"
    assert ">failed</span>" in page and "failure: <code>type_mismatch</code>" in page
    assert "failure: `type_mismatch`" in md and "Unable to unify" in md
    assert "⊢ 1 = 2" in page and "⊢ 1 = 2" in md  # the goal where it failed


def test_placeholders_not_in_the_namespace_are_kept() -> None:
    text = "Prove {goal} with {x : nat}, {unknown} and {{goal}}"
    assert (
        interpolate(text, {"goal": "1 = 1"}) == "Prove 1 = 1 with {x : nat}, {unknown} and {{goal}}"
    )


def test_memory_cells_show_items_with_their_source_episodes(ip) -> None:
    stored, page, _ = cell(ip, "%%lemmata\nRemember that my sister Ana lives in Porto.\n")
    episode = stored.results[0].payload["episode"]
    assert f"<code>{episode}</code>" in page
    result, page, md = cell(ip, "%%lemmata\nWhere does Ana live?\n")
    assert result.results[0].operation == "memory_recall"
    assert "My sister Ana lives in Porto." in page
    assert re.search(rf"<code>fa_[0-9a-f]+</code> from {episode}", page)
    assert f"from {episode})" in md


def test_a_decline_shows_its_reason_and_threads_are_listed(ip) -> None:
    result, page, _ = cell(ip, "%%lemmata\nWrite a poem about the sea\n")
    assert result.status == "declined" and "I cannot route this task" in page
    magics = ip.magics_manager.registry["LemmataMagics"]
    threads = ip.run_line_magic("lemmata_threads", "")
    assert magics.thread in repr(threads) and "Write a poem about the sea" in repr(threads)
    assert f"<code>{magics.thread}</code>" in threads._repr_html_()


def test_forget_waits_for_approval_and_allow_runs_it(ip) -> None:
    cell(ip, "%%lemmata\nRemember that my sister Ana lives in Porto.\n")
    paused, page, _ = cell(ip, "%%lemmata\nForget what I said about my sister.\n")
    assert paused.status == "needs_approval"
    assert f"%lemmata_approve {paused.thread}" in page
    denied = ip.run_line_magic("lemmata_approve", f"--deny {paused.thread}")
    assert denied.status == "failed" and "not approved" in denied._repr_html_()
    done, _, md = cell(ip, "%%lemmata --allow forget\nForget what I said about my sister.\n")
    assert done.status == "answered" and "memory_forget" in md
    recalled, _, _ = cell(ip, "%%lemmata --thread other\nWhere does Ana live?\n")
    assert recalled.thread == "other" and "Porto" not in recalled.answer


def test_grounding_shows_its_heatmap_and_research_its_insights(tmp_path) -> None:
    from PIL import Image

    from lemmata.jupyter import NotebookResult
    from lemmata.operations import Envelope

    heatmap = tmp_path / "heat.png"
    Image.new("RGB", (8, 8), (255, 0, 0)).save(heatmap)
    ground = {
        "instruction": "click Submit",
        "point": [120.0, 48.0],
        "bbox": [100.0, 40.0, 140.0, 56.0],
        "score": 0.91,
        "abstained": False,
        "size": [320, 200],
        "heatmap": str(heatmap),
    }
    research = {
        "insights": [{"statement": "sales peak on Fridays"}, {"statement": "returns rose in May"}],
        "total": 2,
        "report": str(tmp_path / "report"),
        "stats": {},
    }
    result = NotebookResult(
        thread="t",
        status="answered",
        answer="",
        results=[
            Envelope[dict](operation="gui_ground", ok=True, status="ok", payload=ground),
            Envelope[dict](operation="research_research", ok=True, status="ok", payload=research),
        ],
    )
    page, md = result._repr_html_(), result._repr_markdown_()
    assert "click Submit&#x27; is at (120, 48)" in page and 'src="data:image/png;base64,' in page
    assert f"heatmap: `{heatmap}`" in md
    assert "<li>sales peak on Fridays</li>" in page and "2. returns rose in May" in md
