"""A screen environment: an HTML page in headless Chromium that an agent sees and clicks.

Observations carry the screenshot (PNG bytes and a PIL image) and a one-line text (the page's
title and what the last action hit); actions are ``{"type": "click", "x": .., "y": ..}`` in
screenshot pixels, ``{"type": "type", "text": ..}`` into the focused element and
``{"type": "key", "key": "Enter"}``. ``snapshot()`` is the page's HTML with the values of its
inputs written in; ``restore(state)`` loads it again. Clicks land on the element the browser
finds at that point (``document.elementFromPoint``), exactly as a user's would.

>>> with ScreenEnvironment("<button onclick=\\"this.textContent='Saved'\\">Save</button>") as env:  # doctest: +SKIP
...     obs = env.reset()
...     obs = env.step({"type": "click", "x": 30, "y": 18})
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

from lemmata.environments.base import Observation
from lemmata.errors import UsageError

__all__ = ["ScreenEnvironment"]

_HIT_JS = """([x, y]) => {
  const e = document.elementFromPoint(x, y);
  if (!e) return null;
  return {tag: e.tagName.toLowerCase(), text: (e.innerText || e.value || e.placeholder || '').trim().slice(0, 80),
          id: e.id || null, target: e.dataset ? (e.dataset.target || null) : null};
}"""

_SNAPSHOT_JS = """() => {
  for (const e of document.querySelectorAll('input, textarea')) {
    if (e.type === 'checkbox' || e.type === 'radio') { if (e.checked) e.setAttribute('checked', ''); else e.removeAttribute('checked'); }
    else e.setAttribute('value', e.value);
  }
  return document.documentElement.outerHTML;
}"""


class ScreenEnvironment:
    """One page of ``html`` at ``width`` x ``height`` (device scale ``scale``)."""

    def __init__(
        self,
        html: str,
        *,
        width: int = 1280,
        height: int = 800,
        scale: float = 1.0,
        executable: str | None = None,
    ) -> None:
        if not isinstance(html, str) or not html.strip():
            raise UsageError("ScreenEnvironment needs the HTML of a page")
        self.html, self.width, self.height, self.scale = html, width, height, scale
        self._executable = executable
        self._browser: Any = None
        self._context: Any = None
        self._page: Any = None
        self._dir = tempfile.TemporaryDirectory(prefix="lemmata-screen-")
        self.actions: list[dict[str, Any]] = []

    def __enter__(self) -> ScreenEnvironment:
        from lemmata.gui.render import Browser

        self._browser = Browser(self._executable).__enter__()

        def open_page() -> None:
            self._context = self._browser.browser.new_context(
                viewport={"width": self.width, "height": self.height},
                device_scale_factor=self.scale,
            )
            self._page = self._context.new_page()

        self._browser.call(open_page)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._context is not None and self._browser is not None:
            self._browser.call(self._context.close)
            self._context = None
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        self._dir.cleanup()

    def _require(self) -> Any:
        if self._page is None:
            raise RuntimeError(
                "use ScreenEnvironment as a context manager: with ScreenEnvironment(html) as env"
            )
        return self._page

    def _on_page(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(page, *args)`` on the browser's thread (see :class:`~lemmata.gui.render.Browser`)."""
        page = self._require()
        return self._browser.call(fn, page, *args)

    def _load(self, html: str) -> Observation:
        path = Path(self._dir.name) / "page.html"
        path.write_text(html, encoding="utf-8")

        def load(page: Any) -> None:
            page.goto(path.as_uri())
            page.evaluate("() => document.fonts.ready")

        self._on_page(load)
        return self.observe("loaded")

    def observe(self, what: str = "") -> Observation:
        from PIL import Image

        png, title = self._on_page(lambda page: (page.screenshot(), page.title()))
        image = Image.open(io.BytesIO(png)).convert("RGB")
        title = title or "untitled page"
        text = f"{title}: {what}" if what else title
        return Observation(text, {"png": png, "image": image, "size": image.size})

    def reset(self) -> Observation:
        self.actions = []
        return self._load(self.html)

    def step(self, action: dict[str, Any]) -> Observation:
        kind = action.get("type") if isinstance(action, dict) else None
        if kind == "click":
            try:
                x, y = float(action["x"]), float(action["y"])
            except (KeyError, TypeError, ValueError):
                raise UsageError("a click needs numeric x and y (screenshot pixels)") from None
            w, h = self.width * self.scale, self.height * self.scale
            if not (0 <= x < w and 0 <= y < h):
                raise UsageError(
                    f"click ({x:.0f}, {y:.0f}) is outside the {w:.0f} x {h:.0f} screen"
                )
            cx, cy = x / self.scale, y / self.scale

            def click(page: Any) -> Any:
                hit = page.evaluate(_HIT_JS, [cx, cy])
                page.mouse.click(cx, cy)
                return hit

            hit = self._on_page(click)
            what = f"clicked {hit['tag']} {hit['text']!r}" if hit else "clicked nothing"
            self.actions.append({**action, "hit": hit})
            obs = self.observe(what)
            obs.payload["hit"] = hit
            return obs
        if kind == "type":
            text = action.get("text")
            if not isinstance(text, str):
                raise UsageError("a type action needs text")
            self._on_page(lambda page: page.keyboard.type(text))
            self.actions.append(dict(action))
            return self.observe(f"typed {text!r}")
        if kind == "key":
            key = action.get("key")
            if not isinstance(key, str) or not key:
                raise UsageError("a key action needs a key, e.g. Enter")
            self._on_page(lambda page: page.keyboard.press(key))
            self.actions.append(dict(action))
            return self.observe(f"pressed {key}")
        raise UsageError(f"unknown action {action!r}: use type click, type or key")

    def snapshot(self) -> str:
        result: str = self._on_page(lambda page: page.evaluate(_SNAPSHOT_JS))
        return result

    def restore(self, state: Any) -> Observation:
        if not isinstance(state, str):
            raise UsageError("a screen snapshot is the page's HTML (from snapshot())")
        return self._load(state)

    def query(self, selector: str) -> str | None:
        """The text of the first element matching ``selector`` (for checks and tests)."""

        def text(page: Any) -> str | None:
            el = page.query_selector(selector)
            return None if el is None else el.inner_text()

        result: str | None = self._on_page(text)
        return result
