"""Screens of real web applications for the grounding benchmark: start an application on
127.0.0.1, open its pages in headless Chromium, read every visible interactive element's box and
accessible name from the DOM, and write screens and annotations (ScreenSpot-Pro format, read by
:func:`lemmata.gui.datasets.load_annotations`).

An :class:`App` is a command that serves on a free port (``{port}`` and ``{dir}`` are filled in)
and an optional ``prepare`` step that writes what it serves (event files, a model, a docs
folder). :class:`AppServer` starts it as a subprocess in a session of its own, waits until it
answers HTTP, and always stops it (the whole process group) on leaving, error or not.

:func:`capture` opens one page state (a path, a selector to wait for, clicks) at a viewport
size and device scale in the project's Chromium (:class:`lemmata.gui.render.Browser`, its
flags; requests that leave 127.0.0.1 are refused, so a screen never waits on the network) and
returns the PNG and the :class:`Element` list: boxes in screenshot pixels, the accessible name
(``aria-label``, ``aria-labelledby``, the ``<label>``, ``title``, text, ``alt``, placeholder;
the first present) and whether the element shows no text of its own (an icon).

:func:`harvest` runs the hand-written instructions of a data file (``gui/data/realapps.toml``:
pages per application, and items naming their target by accessible name or CSS selector) over
every page at every size and writes ``annotations.json`` and ``images/``. The data file names
the held-out applications; :func:`harvest` writes ``"held_out": true`` on their items so a
report can keep them apart.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.errors import MissingDependency, UsageError

__all__ = [
    "APPS",
    "DATA_FILE",
    "SIZES",
    "App",
    "AppServer",
    "Element",
    "HarvestReport",
    "Item",
    "Page",
    "RealAppData",
    "Shot",
    "capture",
    "free_port",
    "harvest",
    "load_data",
    "main",
    "resolve",
]

DATA_FILE = Path(__file__).parent / "data" / "realapps.toml"
# (width, height, device scale) of the screenshots: a full-HD screen and a smaller laptop one
SIZES: tuple[tuple[int, int, float], ...] = ((1920, 1080, 1.0), (1366, 768, 1.0))
INSTALL = "pip install 'lemmata[realapps]'"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class App:
    """A web application: ``command`` serves it on ``{port}`` from ``{dir}`` (a fresh folder
    that ``prepare`` filled first); ``modules`` are the Python modules it needs."""

    name: str
    command: tuple[str, ...]
    prepare: Callable[[Path], None] | None = None
    modules: tuple[str, ...] = ()
    ready_path: str = "/"
    start_timeout: float = 90.0

    def missing(self) -> list[str]:
        import importlib.util

        return [m for m in self.modules if importlib.util.find_spec(m) is None]


class AppServer:
    """A running application on 127.0.0.1; a context manager that always stops it.

    ``url`` is ``http://127.0.0.1:{port}``. Entering starts ``command`` (with ``{port}`` and
    ``{dir}`` filled in) in a new session, its output going to ``log``, and waits until
    ``ready_path`` answers (any HTTP status) or raises, with the log's tail, if the process ends
    or ``timeout`` passes first; the process group is stopped in every case.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        workdir: str | Path,
        port: int | None = None,
        ready_path: str = "/",
        timeout: float = 90.0,
    ) -> None:
        self.port = port or free_port()
        self.workdir = Path(workdir)
        self.command = [c.format(port=self.port, dir=self.workdir) for c in command]
        self.ready_path = ready_path
        self.timeout = timeout
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.workdir / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> AppServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-1500:]
        except OSError:
            return ""

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.timeout
        while True:
            if self.process.poll() is not None:
                raise UsageError(
                    f"{self.command[0]} ... ended with code {self.process.returncode} before "
                    f"answering on {self.url}:\n{self._tail()}"
                )
            try:
                with urllib.request.urlopen(self.url + self.ready_path, timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # it answers: a status is an answer
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise UsageError(
                    f"{' '.join(self.command)} did not answer on {self.url} within "
                    f"{self.timeout:.0f} s:\n{self._tail()}"
                )
            time.sleep(0.25)

    def stop(self) -> None:
        """Stop the process group: SIGTERM, then SIGKILL after 5 s."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@dataclass(frozen=True)
class Page:
    """A state of an application: ``path`` opened, ``wait`` (a CSS selector) visible, then each
    step run: ``("click", selector)``, ``("hover", selector)``, ``("press", key)``,
    ``("wait", selector)``, ``("sleep", milliseconds)``."""

    app: str
    name: str
    path: str = "/"
    wait: str | None = None
    steps: tuple[tuple[str, str], ...] = ()
    settle_ms: int = 800


@dataclass(frozen=True)
class Element:
    tag: str
    role: str
    name: str  # accessible name, whitespace collapsed
    name_from: str  # aria-label | aria-labelledby | label | title | text | alt | placeholder | ''
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in screenshot pixels
    icon_only: bool  # shows no text of its own (a glyph, an SVG, an image)


@dataclass(frozen=True)
class Item:
    """A hand-written instruction on a page: the target named by accessible ``name`` or CSS
    ``selector`` (``nth`` of the matches), or none (``negative``)."""

    app: str
    page: str
    instruction: str
    ui_type: str  # text | icon
    name: str | None = None
    selector: str | None = None
    nth: int = 0
    negative: bool = False


@dataclass
class RealAppData:
    held_out: tuple[str, ...]  # applications reported as totals only, never tuned on
    pages: list[Page]
    items: list[Item]
    path: Path = field(default=DATA_FILE)


def load_data(path: str | Path = DATA_FILE) -> RealAppData:
    """The pages and instructions of a data file (see ``gui/data/realapps.toml``)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    held = raw.get("held_out")
    if isinstance(held, str):
        held = [held]
    if not isinstance(held, list) or not held or not all(isinstance(h, str) for h in held):
        raise UsageError(f"{path}: needs held_out = ['<application>', ...]")
    held_out = tuple(held)
    pages = []
    for i, p in enumerate(raw.get("page", [])):
        try:
            pages.append(
                Page(
                    app=p["app"],
                    name=p["name"],
                    path=p.get("path", "/"),
                    wait=p.get("wait"),
                    steps=tuple((str(a), str(b)) for a, b in p.get("steps", [])),
                    settle_ms=int(p.get("settle_ms", 800)),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"{path}: page {i}: {exc!r}") from None
    known = {(p.app, p.name) for p in pages}
    unknown = sorted(set(held_out) - {p.app for p in pages})
    if unknown:
        raise UsageError(f"{path}: held_out names {unknown}, which have no page")
    items = []
    for i, it in enumerate(raw.get("item", [])):
        negative = bool(it.get("negative", False))
        item = Item(
            app=it.get("app", ""),
            page=it.get("page", ""),
            instruction=it.get("instruction", ""),
            ui_type=it.get("ui_type", "icon"),
            name=it.get("name"),
            selector=it.get("selector"),
            nth=int(it.get("nth", 0)),
            negative=negative,
        )
        where = f"{path}: item {i} ({item.instruction!r})"
        if (item.app, item.page) not in known:
            raise UsageError(f"{where}: no page {item.page!r} of {item.app!r}")
        if not item.instruction.strip() or item.ui_type not in ("text", "icon"):
            raise UsageError(f"{where}: needs an instruction and ui_type text or icon")
        if negative == (item.name is not None or item.selector is not None):
            raise UsageError(f"{where}: a positive item names its target (name or selector)")
        items.append(item)
    return RealAppData(held_out, pages, items, path)


_ELEMENTS_JS = r"""(targets) => {
  const SEL = 'a[href], button, label[for], input:not([type=hidden]), select, textarea, summary, ' +
    '[role=button], [role=link], [role=tab], [role=menuitem], [role=checkbox], [role=switch], ' +
    '[role=radio], [role=option], [role=treeitem], [onclick], [tabindex]:not([tabindex="-1"])';
  const ICONISH = 'svg, img, canvas, mat-icon, i, [class*="icon" i], [class*="glyph" i]';
  const clean = s => (s || '').replace(/\s+/g, ' ').trim();
  const W = innerWidth, H = innerHeight;
  // querySelectorAll that also looks inside open shadow roots
  const deep = (root, sel) => {
    const out = [...root.querySelectorAll(sel)];
    for (const n of root.querySelectorAll('*')) if (n.shadowRoot) out.push(...deep(n.shadowRoot, sel));
    return out;
  };
  const up = n => n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const within = (a, b) => { for (let n = a; n; n = up(n)) if (n === b) return true; return false; };
  const hitAt = (x, y) => {
    let h = document.elementFromPoint(x, y);
    while (h && h.shadowRoot) {
      const inner = h.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === h) break;
      h = inner;
    }
    return h;
  };
  const visible = e => {
    const r = e.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return null;
    const x1 = Math.max(0, r.left), y1 = Math.max(0, r.top);
    const x2 = Math.min(W, r.right), y2 = Math.min(H, r.bottom);
    if (x2 - x1 < 2 || y2 - y1 < 2) return null;
    for (let n = e; n && n.nodeType === 1; n = up(n)) {
      const s = getComputedStyle(n);
      if (s.visibility === 'hidden' || s.display === 'none' || +s.opacity === 0) return null;
    }
    const hit = hitAt((x1 + x2) / 2, (y1 + y2) / 2);
    if (hit && !within(hit, e) && !within(e, hit)) return null;
    return [x1, y1, x2, y2];
  };
  const ownText = e => {
    const c = e.cloneNode(true);
    c.querySelectorAll(ICONISH + ', style, script').forEach(n => n.remove());
    return clean(c.textContent);
  };
  const name = e => {
    const a = e.getAttribute('aria-label');
    if (clean(a)) return [clean(a), 'aria-label'];
    const lb = e.getAttribute('aria-labelledby');
    if (lb) {
      const root = e.getRootNode();
      const t = clean(lb.split(/\s+/).map(id => {
        const n = root.getElementById ? root.getElementById(id) : null;
        return n ? n.textContent : '';
      }).join(' '));
      if (t) return [t, 'aria-labelledby'];
    }
    if (e.labels && e.labels.length) {
      const t = clean([...e.labels].map(l => l.textContent).join(' '));
      if (t) return [t, 'label'];
    }
    const t = e.getAttribute('title');
    if (clean(t)) return [clean(t), 'title'];
    const txt = clean(e.innerText);
    if (txt) return [txt, 'text'];
    const img = e.querySelector('img[alt], svg title, [title]');
    if (img) {
      const v = clean(img.getAttribute('alt') || img.getAttribute('title') || img.textContent);
      if (v) return [v, 'alt'];
    }
    const ph = e.getAttribute('placeholder');
    if (clean(ph)) return [clean(ph), 'placeholder'];
    return ['', ''];
  };
  const classOf = e => typeof e.className === 'string' ? e.className :
    (e.className && e.className.baseVal) || '';
  const out = [];
  const seen = new Set();
  for (const e of deep(document, SEL)) {
    const box = visible(e);
    if (!box) continue;
    const [n, from] = name(e);
    const own = ownText(e);
    const icon = !own && (!!e.querySelector(ICONISH) || /icon|glyph/i.test(classOf(e)) ||
      !e.children.length);
    const key = box.join(',') + '|' + n;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({tag: e.tagName.toLowerCase(), role: e.getAttribute('role') || '', name: n,
              name_from: from, box, icon_only: icon});
  }
  const resolved = targets.map(sel => deep(document, sel).map(visible).filter(b => b));
  return [out, resolved];
}"""


@dataclass
class Shot:
    png: bytes
    size: tuple[int, int]
    elements: list[Element]
    selected: dict[str, list[tuple[float, float, float, float]]]  # selector -> visible boxes


def _local_only(route: Any) -> None:
    url = route.request.url
    if url.startswith(("http://127.0.0.1", "data:", "blob:", "about:")):
        route.continue_()
    else:
        route.abort()


def _evaluate(cdp: Any, expression: str) -> Any:
    """``expression``'s value, evaluated through the DevTools protocol (Playwright's own
    evaluate calls ``window.eval``, which some applications replace)."""
    res = cdp.send(
        "Runtime.evaluate",
        {"expression": expression, "returnByValue": True, "awaitPromise": True},
    )
    if "exceptionDetails" in res:
        raise UsageError(f"reading the page failed: {res['exceptionDetails'].get('text')}")
    return res["result"].get("value")


def capture(
    browser: Any,
    url: str,
    page: Page,
    *,
    width: int,
    height: int,
    scale: float = 1.0,
    selectors: Sequence[str] = (),
    timeout_ms: int = 30_000,
) -> Shot:
    """Open ``page`` of the application at ``url`` in ``browser`` (a
    :class:`lemmata.gui.render.Browser`), run its steps, and read the screen: the PNG, the
    interactive elements and the visible boxes of each CSS selector in ``selectors``."""

    def run() -> tuple[bytes, list[Any]]:
        context = browser.browser.new_context(
            viewport={"width": width, "height": height}, device_scale_factor=scale
        )
        try:
            context.route("**/*", _local_only)
            tab = context.new_page()
            tab.set_default_timeout(timeout_ms)
            tab.goto(url + page.path, wait_until="load")
            if page.wait:
                tab.wait_for_selector(page.wait, state="visible")
            for kind, arg in page.steps:
                if kind == "click":
                    tab.click(arg)
                elif kind == "hover":
                    tab.hover(arg)
                elif kind == "press":
                    tab.keyboard.press(arg)
                elif kind == "wait":
                    tab.wait_for_selector(arg, state="visible")
                elif kind == "sleep":
                    tab.wait_for_timeout(int(arg))
                else:
                    raise UsageError(f"page {page.app}/{page.name}: unknown step {kind!r}")
            cdp = context.new_cdp_session(tab)
            _evaluate(cdp, "document.fonts.ready.then(() => true)")
            tab.mouse.move(0, height - 1)  # no hover state left on a target
            tab.wait_for_timeout(page.settle_ms)
            png = tab.screenshot(full_page=False)
            return png, _evaluate(cdp, f"({_ELEMENTS_JS})({json.dumps(list(selectors))})")
        finally:
            context.close()

    png, (rows, resolved) = browser.call(run)

    def px(b: Sequence[float]) -> tuple[float, float, float, float]:
        return (b[0] * scale, b[1] * scale, b[2] * scale, b[3] * scale)

    elements = [
        Element(r["tag"], r["role"], r["name"], r["name_from"], px(r["box"]), bool(r["icon_only"]))
        for r in rows
    ]
    selected = {s: [px(b) for b in boxes] for s, boxes in zip(selectors, resolved, strict=True)}
    return Shot(png, (round(width * scale), round(height * scale)), elements, selected)


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def resolve(item: Item, shot: Shot) -> tuple[float, float, float, float] | None:
    """The box of ``item``'s target on ``shot``, or None when it is not on the screen."""
    if item.selector is not None:
        boxes = shot.selected.get(item.selector, [])
    else:
        assert item.name is not None
        boxes = [e.box for e in shot.elements if _norm(e.name) == _norm(item.name)]
    return boxes[item.nth] if item.nth < len(boxes) else None


@dataclass
class HarvestReport:
    screens: int = 0
    items: int = 0
    unresolved: list[str] = field(default_factory=list)  # app/page@size: instruction


def harvest(
    data: RealAppData,
    out_dir: str | Path,
    *,
    apps: dict[str, App] | None = None,
    only: Sequence[str] | None = None,
    sizes: Sequence[tuple[int, int, float]] = SIZES,
    browser: Any = None,
    progress: Callable[[str], None] | None = None,
) -> HarvestReport:
    """Start each application of ``data`` (or of ``only``), capture its pages at each size,
    and write ``out_dir/annotations.json``, ``out_dir/images/`` and ``out_dir/elements.json``
    (every screen's interactive elements). An item whose target is not on a screen is left out
    and named in the report's ``unresolved``."""
    from lemmata.gui.render import Browser

    apps = APPS if apps is None else apps
    wanted = list(dict.fromkeys(p.app for p in data.pages))
    if only is not None:
        wanted = [a for a in wanted if a in only]
    unknown = [a for a in wanted if a not in apps]
    if unknown:
        raise UsageError(f"no application named {unknown}: known are {sorted(apps)}")
    missing = sorted({m for a in wanted for m in apps[a].missing()})
    if missing:
        raise MissingDependency(
            f"the real applications ({', '.join(wanted)}; missing {', '.join(missing)})", INSTALL
        )
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    screens: dict[str, Any] = {}
    report = HarvestReport()
    own_browser = browser is None
    if own_browser:
        browser = Browser().__enter__()
    try:
        for app_name in wanted:
            app = apps[app_name]
            with tempfile.TemporaryDirectory(prefix=f"realapp-{app_name}-") as tmp:
                if app.prepare is not None:
                    app.prepare(Path(tmp))
                with AppServer(
                    app.command, workdir=tmp, ready_path=app.ready_path, timeout=app.start_timeout
                ) as server:
                    for page in [p for p in data.pages if p.app == app_name]:
                        items = [
                            it for it in data.items if it.app == app_name and it.page == page.name
                        ]
                        selectors = sorted({it.selector for it in items if it.selector})
                        for w, h, scale in sizes:
                            shot = capture(
                                browser,
                                server.url,
                                page,
                                width=w,
                                height=h,
                                scale=scale,
                                selectors=selectors,
                            )
                            tag = f"{app_name}-{page.name}-{shot.size[0]}x{shot.size[1]}"
                            (out / "images" / f"{tag}.png").write_bytes(shot.png)
                            screens[tag] = [e.__dict__ for e in shot.elements]
                            report.screens += 1
                            if progress is not None:
                                progress(tag)
                            for k, it in enumerate(items):
                                box = None if it.negative else resolve(it, shot)
                                if not it.negative and box is None:
                                    report.unresolved.append(f"{tag}: {it.instruction}")
                                    continue
                                rows.append(
                                    {
                                        "id": f"{tag}-{k}",
                                        "img_filename": f"{tag}.png",
                                        "instruction": it.instruction,
                                        "bbox": [round(v, 1) for v in box] if box else None,
                                        "ui_type": it.ui_type,
                                        "gt_type": "negative" if it.negative else "positive",
                                        "img_size": list(shot.size),
                                        "app": app_name,
                                        "page": page.name,
                                        "target": it.name or it.selector,
                                        "held_out": app_name in data.held_out,
                                    }
                                )
    finally:
        if own_browser:
            browser.close()
    report.items = len(rows)
    (out / "annotations.json").write_text(json.dumps(rows, indent=1))
    (out / "elements.json").write_text(json.dumps(screens, indent=1))
    return report


# ---------------------------------------------------------------------------------------------
# The applications: each installs from PyPI (the ``realapps`` extra) and serves offline.


def _tensorboard_logs(root: Path) -> None:
    """Two training runs' event files (scalars, histograms, an image, text), written by torch."""
    import math

    import torch
    from torch.utils.tensorboard import SummaryWriter

    gen = torch.Generator().manual_seed(0)
    for run, width in (("baseline", 1.0), ("wide-lr", 1.6)):
        with SummaryWriter(str(root / "logs" / run)) as w:
            for step in range(0, 200, 5):
                loss = 2.0 * math.exp(-step / (60 * width)) + 0.05 * float(
                    torch.rand(1, generator=gen)
                )
                w.add_scalar("train/loss", loss, step)
                w.add_scalar("train/accuracy", 1 - loss / 2.2, step)
                w.add_scalar("eval/loss", loss * 1.1, step)
                w.add_scalar("optim/learning_rate", 1e-3 * width * 0.98 ** (step / 5), step)
                if step % 40 == 0:
                    w.add_histogram("weights/conv1", torch.randn(500, generator=gen) * width, step)
            w.add_image("samples/input", torch.rand(3, 32, 32, generator=gen), 0)
            w.add_text("notes", f"run {run}: lr x{width}", 0)


def _netron_model(root: Path) -> None:
    import torch
    from torch import nn

    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    ).eval()
    torch.jit.save(torch.jit.trace(model, torch.zeros(1, 3, 32, 32)), str(root / "classifier.pt"))


_BOKEH_APP = """
import numpy as np
from bokeh.io import curdoc
from bokeh.layouts import column, row
from bokeh.models import Button, ColumnDataSource, DataTable, Select, TableColumn
from bokeh.plotting import figure

rng = np.random.default_rng(0)
x = np.linspace(0, 10, 200)
source = ColumnDataSource(dict(x=x, y=np.sin(x) + 0.1 * rng.standard_normal(200)))
plot = figure(title="Sensor readings", width=900, height=500,
              tools="pan,box_zoom,wheel_zoom,lasso_select,crosshair,hover,undo,redo,save,reset,help")
plot.line("x", "y", source=source, line_width=2)
plot.scatter("x", "y", source=source, size=4)
plot.xaxis.axis_label = "time (s)"
plot.yaxis.axis_label = "value"
signal = Select(title="Signal", value="sine", options=["sine", "cosine", "square"])
button = Button(label="Resample noise", button_type="primary")
table = DataTable(source=source, columns=[TableColumn(field="x", title="time"),
                  TableColumn(field="y", title="value")], width=400, height=500)

def resample():
    source.data = dict(x=x, y=np.sin(x) + 0.1 * rng.standard_normal(200))

button.on_click(resample)
curdoc().add_root(row(column(row(signal, button), plot), table))
curdoc().title = "Sensors"
"""


def _bokeh_app(root: Path) -> None:
    (root / "sensors.py").write_text(_BOKEH_APP)


_MKDOCS_YML = """site_name: Tidepool
site_description: A small tide-table service
repo_url: http://127.0.0.1/tidepool/tidepool
repo_name: tidepool/tidepool
edit_uri: edit/main/docs/
theme:
  name: material
  font: false
  features:
    - navigation.tabs
    - navigation.top
    - navigation.footer
    - search.suggest
    - search.share
    - content.code.copy
    - content.action.edit
    - content.action.view
    - content.tabs.link
  palette:
    - scheme: default
      toggle:
        icon: material/brightness-7
        name: Switch to dark mode
    - scheme: slate
      toggle:
        icon: material/brightness-4
        name: Switch to light mode
markdown_extensions:
  - admonition
  - pymdownx.details
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
nav:
  - Home: index.md
  - Guide:
      - Installation: guide/install.md
      - Configuration: guide/config.md
  - Reference: reference.md
"""

_MKDOCS_PAGES = {
    "index.md": "# Tidepool\n\nTidepool serves tide tables for harbours.\n\n"
    '!!! note "Offline"\n    The tables are computed locally.\n\n'
    "```bash\npip install tidepool\ntidepool serve --port 8000\n```\n",
    "guide/install.md": '# Installation\n\n=== "pip"\n\n    ```\n    pip install tidepool\n'
    '    ```\n\n=== "conda"\n\n    ```\n    conda install tidepool\n    ```\n',
    "guide/config.md": "# Configuration\n\nSet `TIDEPOOL_HARBOUR` to the harbour's code.\n\n"
    '```toml\n[harbour]\ncode = "BRS"\n```\n',
    "reference.md": "# Reference\n\n## tidepool.table(harbour, day)\n\nThe tide table.\n",
}


def _mkdocs_site(root: Path) -> None:
    (root / "mkdocs.yml").write_text(_MKDOCS_YML)
    for rel, text in _MKDOCS_PAGES.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


_STREAMLIT_APP = """
import datetime as dt

import numpy as np
import pandas as pd
import streamlit as st

st.set_page_config(page_title="Tide log", layout="wide")
rng = np.random.default_rng(0)
hours = pd.date_range("2024-05-01", periods=96, freq="h")
frame = pd.DataFrame(
    {"time": hours, "height_m": 2 + 1.4 * np.sin(np.arange(96) / 12.4 * 2 * np.pi)
     + 0.05 * rng.standard_normal(96), "wind_kn": 8 + 3 * rng.standard_normal(96)}
)
with st.sidebar:
    st.header("Station")
    st.selectbox("Harbour", ["Brest", "Saint-Malo", "Cherbourg"])
    st.slider("Days shown", 1, 4, 2)
    st.date_input("Start date", dt.date(2024, 5, 1))
    st.radio("Units", ["metres", "feet"], horizontal=True)
    st.toggle("Show wind", value=True)
st.title("Tide log")
left, right = st.columns([3, 2])
with left:
    tab_chart, tab_table, tab_notes = st.tabs(["Chart", "Table", "Notes"])
    with tab_chart:
        st.line_chart(frame, x="time", y="height_m", height=300)
    with tab_table:
        st.dataframe(frame)
    with tab_notes:
        st.write("Notes")
    st.segmented_control("Text style", [":material/format_bold:", ":material/format_italic:",
                         ":material/format_underlined:"], selection_mode="multi")
    st.text_area("Observer's note", "Calm sea, light swell.")
    st.feedback("thumbs")
with right:
    st.text_input("Station API key", type="password", value="secret-key")
    st.number_input("Alert threshold (m)", value=3.5, step=0.1)
    st.multiselect("Tide gauges", ["North pier", "South pier", "Lock gate"],
                   default=["North pier", "South pier"])
    st.file_uploader("Upload a gauge log")
    st.download_button("Download CSV", frame.to_csv(index=False), "tides.csv")
    st.feedback("stars")
    with st.expander("About this station"):
        st.write("Readings every hour.")
    st.code("tidepool fetch --harbour BRS --days 2", language="bash")
st.chat_input("Ask about the tides")
"""


def _streamlit_app(root: Path) -> None:
    (root / "tides.py").write_text(_STREAMLIT_APP)


_LIBRARY_METADATA = {
    "title": "Harbour Street Library",
    "description": "Books, members and loans of a small lending library.",
    "license": "CC BY 4.0",
    "license_url": "http://127.0.0.1/licence",
    "databases": {
        "library": {
            "queries": {
                "overdue": {
                    "title": "Overdue loans",
                    "description": "Loans past their due date on a given day.",
                    "sql": "select loans.id, books.title, members.name, loans.due from loans "
                    "join books on books.id = loans.book_id "
                    "join members on members.id = loans.member_id where loans.due < :day "
                    "and loans.returned is null order by loans.due",
                }
            }
        }
    },
}


def _library_db(root: Path) -> None:
    """A lending library's SQLite database (books, members, loans) and Datasette metadata with a
    canned query."""
    import random
    import sqlite3

    rng = random.Random(0)
    genres = ["Poetry", "History", "Science", "Travel", "Cookery", "Crime", "Children"]
    words = [
        "Salt",
        "Harbour",
        "Winter",
        "Lantern",
        "Tide",
        "Orchard",
        "Granite",
        "Heron",
        "Copper",
        "Meadow",
        "Signal",
        "Ember",
        "Quarry",
        "Willow",
        "Compass",
        "Ferry",
    ]
    nouns = ["Atlas", "Letters", "Kitchen", "Notebook", "Almanac", "Voyage", "Garden", "Ledger"]
    db = sqlite3.connect(root / "library.db")
    db.executescript(
        "create table books (id integer primary key, title text, author text, genre text, "
        "year integer, pages integer, shelf text);"
        "create table members (id integer primary key, name text, joined text, postcode text);"
        "create table loans (id integer primary key, book_id integer references books(id), "
        "member_id integer references members(id), borrowed text, due text, returned text);"
    )
    first = ["Ada", "Bram", "Cleo", "Dev", "Esme", "Finn", "Greta", "Hugo", "Iris", "Jonah"]
    last = ["Marsh", "Okafor", "Lind", "Petrov", "Quinn", "Rowe", "Sato", "Tran"]
    for i in range(1, 121):
        db.execute(
            "insert into books values (?, ?, ?, ?, ?, ?, ?)",
            (
                i,
                f"The {rng.choice(words)} {rng.choice(nouns)}",
                f"{rng.choice(first)} {rng.choice(last)}",
                rng.choice(genres),
                rng.randint(1950, 2024),
                rng.randint(90, 620),
                f"{rng.choice('ABCDEF')}{rng.randint(1, 9)}",
            ),
        )
    for i in range(1, 41):
        db.execute(
            "insert into members values (?, ?, ?, ?)",
            (
                i,
                f"{rng.choice(first)} {rng.choice(last)}",
                f"20{rng.randint(15, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                f"HS{rng.randint(1, 9)} {rng.randint(1, 9)}{rng.choice('ABDEF')}{rng.choice('GHJLN')}",
            ),
        )
    for i in range(1, 301):
        day = rng.randint(1, 28)
        returned = None if rng.random() < 0.3 else f"2024-0{rng.randint(2, 4)}-{day:02d}"
        db.execute(
            "insert into loans values (?, ?, ?, ?, ?, ?)",
            (
                i,
                rng.randint(1, 120),
                rng.randint(1, 40),
                f"2024-01-{day:02d}",
                f"2024-02-{day:02d}",
                returned,
            ),
        )
    db.commit()
    db.close()
    (root / "metadata.json").write_text(json.dumps(_LIBRARY_METADATA, indent=1))


_PY = sys.executable
APPS: dict[str, App] = {
    "tensorboard": App(
        "tensorboard",
        (_PY, "-m", "tensorboard.main", "--logdir", "{dir}/logs", "--host", "127.0.0.1",
         "--port", "{port}", "--load_fast", "false"),
        prepare=_tensorboard_logs,
        modules=("tensorboard",),
    ),
    "netron": App(
        "netron",
        (_PY, "-c", "import sys, netron; sys.exit(netron.main())", "{dir}/classifier.pt",
         "--host", "127.0.0.1", "--port", "{port}"),
        prepare=_netron_model,
        modules=("netron",),
    ),
    "bokeh": App(
        "bokeh",
        (_PY, "-m", "bokeh", "serve", "{dir}/sensors.py", "--address", "127.0.0.1",
         "--port", "{port}", "--allow-websocket-origin", "127.0.0.1:{port}"),
        prepare=_bokeh_app,
        modules=("bokeh",),
        ready_path="/sensors",
    ),
    "mkdocs-material": App(
        "mkdocs-material",
        (_PY, "-m", "mkdocs", "serve", "--no-livereload", "-a", "127.0.0.1:{port}",
         "-f", "{dir}/mkdocs.yml"),
        prepare=_mkdocs_site,
        modules=("mkdocs", "material"),
    ),
    "streamlit": App(
        "streamlit",
        (_PY, "-m", "streamlit", "run", "{dir}/tides.py", "--server.address", "127.0.0.1",
         "--server.port", "{port}", "--server.headless", "true",
         "--browser.gatherUsageStats", "false", "--global.developmentMode", "false"),
        prepare=_streamlit_app,
        modules=("streamlit",),
        ready_path="/_stcore/health",
    ),
    "datasette": App(
        "datasette",
        (_PY, "-m", "datasette", "serve", "{dir}/library.db", "--metadata", "{dir}/metadata.json",
         "--host", "127.0.0.1", "--port", "{port}", "--setting", "default_page_size", "25"),
        prepare=_library_db,
        modules=("datasette",),
    ),
}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lemmata.gui.realapps OUT [--apps a,b] [--data FILE]``: harvest to OUT."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("out")
    ap.add_argument("--apps", help="comma-separated applications (default: all in the data file)")
    ap.add_argument("--data", default=str(DATA_FILE))
    args = ap.parse_args(argv)
    data = load_data(args.data)
    only = args.apps.split(",") if args.apps else None
    report = harvest(data, args.out, only=only, progress=lambda t: print(t, file=sys.stderr))
    print(f"{report.screens} screens, {report.items} items in {args.out}")
    for line in report.unresolved:
        print(f"not on the screen: {line}")
    return 1 if report.unresolved else 0


if __name__ == "__main__":
    sys.exit(main())
