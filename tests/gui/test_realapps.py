"""The real-application harvester on a tiny static page served by http.server on 127.0.0.1:
boxes as the DOM lays them out, accessible names, and the server stopped whatever happens."""

from __future__ import annotations

import os
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from lemmata.errors import UsageError
from lemmata.gui.datasets import load_annotations
from lemmata.gui.realapps import (
    DATA_FILE,
    App,
    AppServer,
    Item,
    Page,
    RealAppData,
    harvest,
    load_data,
)

SVG = '<svg viewBox="0 0 16 16" width="20" height="20"><path d="{d}" fill="#333"/></svg>'
PAGE = f"""<!doctype html><html><head><style>
body {{ margin: 0; font: 14px sans-serif; }}
button {{ position: absolute; padding: 0; border: 1px solid #999; background: #fff; }}
#trash {{ left: 100px; top: 50px; width: 32px; height: 32px; }}
#gear {{ left: 140px; top: 50px; width: 32px; height: 32px; }}
#save {{ left: 300px; top: 200px; width: 120px; height: 30px; }}
#below {{ left: 10px; top: 2000px; width: 40px; height: 20px; }}
</style></head><body>
<button id="trash" aria-label="Delete">{SVG.format(d="M3 4h10l-1 11H4z M6 1h4v2H6z")}</button>
<button id="gear" title="Settings">{SVG.format(d="M8 3a5 5 0 1 0 0 10A5 5 0 0 0 8 3z")}</button>
<button id="save">Save changes</button>
<button id="below">Far</button>
</body></html>"""


def _need_chromium() -> None:
    if shutil.which("chromium") is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: scripts/setup.sh should have installed it")
        pytest.skip("needs chromium: apt-get install chromium")


def _static_app() -> App:
    def prepare(root: Path) -> None:
        (root / "index.html").write_text(PAGE)

    command = (sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1")
    return App("static", command + ("--directory", "{dir}"), prepare=prepare)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except (urllib.error.URLError, OSError):
        return False


def _data() -> RealAppData:
    page = Page("static", "main", "/index.html", wait="#save", settle_ms=100)
    items = [
        Item("static", "main", "throw this away", "icon", name="delete"),
        Item("static", "main", "open the preferences", "icon", selector="#gear"),
        Item("static", "main", "keep my edits", "text", name="Save changes"),
        Item("static", "main", "scroll to the far button", "text", name="Far"),
        Item("static", "main", "print the page", "icon", negative=True),
    ]
    return RealAppData("nothing", [page], items)


def test_harvest_reads_boxes_and_names_from_the_dom_at_each_size(tmp_path: Path) -> None:
    _need_chromium()
    out = tmp_path / "out"
    report = harvest(
        _data(),
        out,
        apps={"static": _static_app()},
        sizes=((800, 600, 1.0), (640, 480, 2.0)),
    )
    # the button below the fold is on neither screen, and says so
    assert report.unresolved == [
        "static-main-800x600: scroll to the far button",
        "static-main-1280x960: scroll to the far button",
    ]
    items = load_annotations(out, "screenspot-pro")
    boxes = {(it.instruction, it.img_size): it.bbox for it in items}
    assert boxes[("throw this away", (800, 600))] == (100, 50, 132, 82)
    assert boxes[("open the preferences", (800, 600))] == (140, 50, 172, 82)
    assert boxes[("keep my edits", (800, 600))] == (300, 200, 420, 230)
    assert boxes[("throw this away", (1280, 960))] == (200, 100, 264, 164)  # device scale 2
    negatives = [it for it in items if it.negative]
    assert len(negatives) == 2 and all(it.bbox is None for it in negatives)
    assert all(it.extra["app"] == "static" and not it.extra["held_out"] for it in items)
    for it in items:
        assert (out / "images" / it.image.name).stat().st_size > 1000

    import json

    elements = json.loads((out / "elements.json").read_text())["static-main-800x600"]
    named = {e["name"]: e for e in elements}
    assert named["Delete"]["name_from"] == "aria-label" and named["Delete"]["icon_only"]
    assert named["Settings"]["name_from"] == "title" and named["Settings"]["icon_only"]
    assert named["Save changes"]["name_from"] == "text" and not named["Save changes"]["icon_only"]
    assert "Far" not in named  # outside the viewport


def test_the_app_is_stopped_when_harvesting_fails(tmp_path: Path) -> None:
    _need_chromium()
    seen: list[str] = []

    class Boom(Exception):
        pass

    def progress(tag: str) -> None:
        seen.append(tag)
        raise Boom(tag)

    pid_file = tmp_path / "server.pid"
    serve = (
        "import os, runpy, sys; open(sys.argv[3], 'w').write(str(os.getpid())); "
        "sys.argv = ['http.server', sys.argv[1], '--bind', '127.0.0.1', '--directory', sys.argv[2]]; "
        "runpy.run_module('http.server', run_name='__main__')"
    )
    app = App(
        "static",
        (sys.executable, "-c", serve, "{port}", "{dir}", str(pid_file)),
        prepare=_static_app().prepare,
    )
    with pytest.raises(Boom):
        harvest(
            _data(),
            tmp_path / "out",
            apps={"static": app},
            sizes=((800, 600, 1.0),),
            progress=progress,
        )
    assert seen == ["static-main-800x600"]
    with pytest.raises(ProcessLookupError):  # the server process has ended (and was reaped)
        os.kill(int(pid_file.read_text()), 0)


def test_app_server_stops_its_process_on_error_and_reports_an_early_exit(tmp_path: Path) -> None:
    app = _static_app()
    assert app.prepare is not None
    app.prepare(tmp_path)
    with pytest.raises(RuntimeError), AppServer(app.command, workdir=tmp_path) as server:
        assert server.process is not None
        pid = server.process.pid
        url = server.url
        assert _answers(url + "/index.html")
        raise RuntimeError("a page failed")
    assert server.process is None
    assert not _answers(url + "/index.html")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)

    failing = (sys.executable, "-c", "import sys; print('no model file'); sys.exit(3)")
    with pytest.raises(UsageError, match=r"(?s)code 3.*no model file"):
        AppServer(failing, workdir=tmp_path, timeout=30).__enter__()


def test_the_shipped_instructions_name_a_held_out_app_and_enough_icons() -> None:
    data = load_data(DATA_FILE)
    apps = {p.app for p in data.pages}
    held = set(data.held_out)
    assert len(held) >= 2 and held <= apps and len(apps - held) >= 3
    for app in held:  # each held-out application is a measure of its own
        assert (
            sum(it.app == app and it.ui_type == "icon" and not it.negative for it in data.items)
            >= 7
        )
    positives = [it for it in data.items if not it.negative]
    assert len(data.items) >= 60
    assert sum(it.ui_type == "icon" for it in positives) >= 30
    assert any(it.negative for it in data.items)


def test_a_data_file_with_an_item_on_an_unknown_page_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "apps.toml"
    bad.write_text(
        'held_out = "a"\n[[page]]\napp = "a"\nname = "p"\n'
        '[[item]]\napp = "a"\npage = "q"\nui_type = "icon"\nname = "X"\ninstruction = "do x"\n'
    )
    with pytest.raises(UsageError, match="no page 'q' of 'a'"):
        load_data(bad)


def test_held_out_is_one_application_or_several_each_with_pages(tmp_path: Path) -> None:
    page = '[[page]]\napp = "a"\nname = "p"\n[[page]]\napp = "b"\nname = "p"\n'
    one = tmp_path / "one.toml"
    one.write_text('held_out = "a"\n' + page)
    assert load_data(one).held_out == ("a",)
    two = tmp_path / "two.toml"
    two.write_text('held_out = ["a", "b"]\n' + page)
    assert load_data(two).held_out == ("a", "b")
    ghost = tmp_path / "ghost.toml"
    ghost.write_text('held_out = ["a", "c"]\n' + page)
    with pytest.raises(UsageError, match=r"held_out names \['c'\], which have no page"):
        load_data(ghost)
    empty = tmp_path / "empty.toml"
    empty.write_text("held_out = []\n" + page)
    with pytest.raises(UsageError, match="needs held_out"):
        load_data(empty)


def _bench() -> Any:
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "grounding_bench", root / "benchmarks" / "grounding.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_benchmark_adds_an_application_missing_from_a_kept_harvest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harvest kept from before an application was added to the data file gets only that
    application harvested and added; the screens already there are not captured again."""
    import argparse
    import json
    from types import SimpleNamespace

    import lemmata.gui.realapps as realapps

    bench = _bench()
    kept = tmp_path / "kept"
    (kept / "images").mkdir(parents=True)
    (kept / "images" / "old-p-10x10.png").write_bytes(b"old")
    (kept / "annotations.json").write_text(json.dumps([{"app": "old", "id": "o"}]))
    (kept / "elements.json").write_text(json.dumps({"old-p-10x10": []}))
    asked: list[Any] = []

    def fake_harvest(data: Any, out: Path, *, only: Any = None, **_: Any) -> Any:
        asked.append(only)
        (out / "images").mkdir(parents=True, exist_ok=True)
        (out / "images" / "new-p-10x10.png").write_bytes(b"new")
        (out / "annotations.json").write_text(json.dumps([{"app": "new", "id": "n"}]))
        (out / "elements.json").write_text(json.dumps({"new-p-10x10": []}))
        return realapps.HarvestReport(screens=1, items=1)

    pages = [SimpleNamespace(app="old"), SimpleNamespace(app="new")]
    monkeypatch.setattr(
        realapps, "load_data", lambda: SimpleNamespace(held_out=("new",), pages=pages)
    )
    monkeypatch.setattr(realapps, "harvest", fake_harvest)
    args = argparse.Namespace(realapp_dir=str(kept))
    assert bench._realapp_data(args, str(tmp_path)) == kept
    assert asked == [["new"]]
    rows = json.loads((kept / "annotations.json").read_text())
    assert [r["app"] for r in rows] == ["old", "new"]
    assert set(json.loads((kept / "elements.json").read_text())) == {"old-p-10x10", "new-p-10x10"}
    assert (kept / "images" / "old-p-10x10.png").read_bytes() == b"old"
    assert (kept / "images" / "new-p-10x10.png").is_file()
    # complete now: read as it is
    assert bench._realapp_data(args, str(tmp_path)) == kept and asked == [["new"]]


def test_the_benchmark_never_prints_a_held_out_instruction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A harvest that left out instructions of a development and of the held-out application
    (their targets not on the screen): the benchmark names the development one and only counts
    the held-out one."""
    import argparse
    from types import SimpleNamespace

    import lemmata.gui.realapps as realapps

    bench = _bench()
    report = realapps.HarvestReport(
        screens=2,
        items=2,
        unresolved=[
            "devapp-home-1920x1080: open the dev menu",
            "sealed-home-1920x1080: secret",
            "closed-home-1366x768: hidden",
        ],
    )
    monkeypatch.setattr(
        realapps,
        "load_data",
        lambda: SimpleNamespace(held_out=("sealed", "closed"), pages=[]),
    )
    monkeypatch.setattr(realapps, "harvest", lambda *a, **k: report)
    bench._realapp_data(argparse.Namespace(realapp_dir=str(tmp_path / "h")), str(tmp_path))
    err = capsys.readouterr().err
    assert "open the dev menu" in err
    assert "secret" not in err and "hidden" not in err
    assert "2 held-out instruction(s) left out" in err


def test_the_benchmark_can_ground_only_the_development_applications(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While iterating, --development-only leaves the held-out applications unground and
    --apps keeps only the named development applications."""
    import argparse
    from types import SimpleNamespace

    import lemmata.gui.realapps as realapps

    bench = _bench()
    items = [
        SimpleNamespace(extra={"app": app, "held_out": app == "sealed"})
        for app in ("devapp", "other", "sealed")
    ]
    grounded: list[list[str]] = []
    monkeypatch.setattr(bench, "_data", lambda *a: tmp_path)
    monkeypatch.setattr(bench, "load_annotations", lambda *a: items)
    monkeypatch.setattr(
        bench,
        "_run_items",
        lambda args, split, its, anchors: (
            grounded.append([it.extra["app"] for it in its]) or {"configs": {}}
        ),
    )
    monkeypatch.setattr(
        realapps, "load_data", lambda: SimpleNamespace(held_out=("sealed",), pages=[])
    )

    def run(**kw: Any) -> dict[str, Any]:
        grounded.clear()
        args = argparse.Namespace(format="x", calibrate=False, **kw)
        return dict(bench._run_split(args, str(tmp_path), "realapp", {}))

    assert list(run(development_only=True, apps=None)) == ["development"]
    assert grounded == [["devapp", "other"]]
    assert list(run(development_only=True, apps=["other"])) == ["development"]
    assert grounded == [["other"]]
    assert list(run(development_only=False, apps=None)) == ["development", "held out (sealed)"]
    assert grounded == [["devapp", "other"], ["sealed"]]
