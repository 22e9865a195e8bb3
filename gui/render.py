"""Headless Chromium (Debian's ``chromium``) through Playwright: HTML in, screenshot and element
boxes out.

Chromium runs with the flags a closed, root-run machine needs (``--no-sandbox``, no background
networking, no component updates, no sync, no first-run) and a fresh profile per browser (Playwright's own temporary one);
Playwright is only the driver (``executable_path`` points at the system browser, nothing is
downloaded). :meth:`Browser.render` loads a page, waits for its fonts, and returns the PNG and
the boxes, in screenshot pixels, of every element carrying ``data-target``.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lemmata.deps import require_extra, require_tool
from lemmata.errors import MissingDependency

__all__ = ["CHROMIUM_FLAGS", "Browser", "Rendered"]

T = TypeVar("T")

CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)

_BOXES_JS = """() => [...document.querySelectorAll('[data-target]')].map(e => {
  const r = e.getBoundingClientRect();
  return [e.dataset.target, r.left, r.top, r.right, r.bottom,
          getComputedStyle(e).visibility !== 'hidden' && r.width > 0 && r.height > 0];
})"""


@dataclass
class Rendered:
    png: bytes
    size: tuple[int, int]
    boxes: dict[str, tuple[float, float, float, float]]  # data-target -> x1, y1, x2, y2


class Browser:
    """One headless Chromium; use as a context manager, render many pages.

    Every Playwright call runs on one thread of the browser's own (:meth:`call`): Playwright's
    synchronous API refuses to run where an asyncio loop is running (Jupyter, async apps), and
    on its own thread it never sees that loop.
    """

    def __init__(self, executable: str | None = None) -> None:
        require_extra("gui", "rendering screens")
        self.executable = require_tool("chromium", executable)
        self._pw: Any = None
        self._browser: Any = None
        self._thread: ThreadPoolExecutor | None = None

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the browser's thread and return its result."""
        if self._thread is None:
            raise RuntimeError("use Browser as a context manager: with Browser() as b: ...")
        return self._thread.submit(fn, *args).result()

    @property
    def browser(self) -> Any:
        """The Playwright browser (use it only inside :meth:`call`)."""
        if self._browser is None:
            raise RuntimeError("use Browser as a context manager: with Browser() as b: ...")
        return self._browser

    def __enter__(self) -> Browser:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise MissingDependency("rendering screens", "pip install 'lemmata[gui]'") from None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lemmata-chromium")

        def start() -> None:
            self._pw = sync_playwright().start()
            # Playwright starts each browser with a new, empty temporary profile
            # (--user-data-dir) and removes it on close.
            self._browser = self._pw.chromium.launch(
                executable_path=self.executable, headless=True, args=list(CHROMIUM_FLAGS)
            )

        try:
            self.call(start)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread is None:
            return

        def stop() -> None:
            if self._browser is not None:
                self._browser.close()
                self._browser = None
            if self._pw is not None:
                self._pw.stop()
                self._pw = None

        try:
            self.call(stop)
        finally:
            self._thread.shutdown(wait=True)
            self._thread = None

    def render(
        self, html: str, *, width: int, height: int, scale: float = 1.0, workdir: str | Path
    ) -> Rendered:
        """Render ``html`` at ``width`` x ``height`` CSS pixels and device scale ``scale``."""
        page_file = Path(workdir) / "page.html"
        page_file.write_text(html)

        def run() -> tuple[bytes, list[Any]]:
            context = self.browser.new_context(
                viewport={"width": width, "height": height}, device_scale_factor=scale
            )
            try:
                page = context.new_page()
                page.goto(page_file.as_uri())
                page.evaluate("() => document.fonts.ready")
                return page.screenshot(full_page=False), page.evaluate(_BOXES_JS)
            finally:
                context.close()

        png, rows = self.call(run)
        boxes = {
            str(t): (x1 * scale, y1 * scale, x2 * scale, y2 * scale)
            for t, x1, y1, x2, y2, visible in rows
            if visible
        }
        return Rendered(png, (round(width * scale), round(height * scale)), boxes)
