"""A tiny hand-drawn icon set for the icon tests: four concepts, each drawn in two styles
(outline strokes and filled shapes), written as an npm-style package."""

from __future__ import annotations

import json
from pathlib import Path

OUTLINE = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#000" '
    'stroke-width="2" stroke-linecap="round" stroke-linejoin="round">{}</svg>'
)
FILLED = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="#000">{}</svg>'

SHAPES = {
    "search": (
        '<circle cx="10" cy="10" r="6"/><path d="M15 15l6 6"/>',
        '<path d="M10 2a8 8 0 1 0 4.9 14.3l5.4 5.4 1.4-1.4-5.4-5.4A8 8 0 0 0 10 2zm0 3a5 5 0 1 1 0 '
        '10 5 5 0 0 1 0-10z"/>',
    ),
    "x": (
        '<path d="M5 5l14 14M19 5L5 19"/>',
        '<path d="M4 6l2-2 6 6 6-6 2 2-6 6 6 6-2 2-6-6-6 6-2-2 6-6z"/>',
    ),
    "plus": (
        '<path d="M12 4v16M4 12h16"/>',
        '<path d="M10 3h4v7h7v4h-7v7h-4v-7H3v-4h7z"/>',
    ),
    "home": (
        '<path d="M3 11l9-8 9 8"/><path d="M5 10v10h14V10"/><path d="M10 20v-6h4v6"/>',
        '<path d="M12 2l10 9h-3v10h-5v-6h-4v6H5V11H2z"/>',
    ),
}


def write_package(root: Path, *, licence: str | None = "MIT", name: str = "tiny-icons") -> Path:
    """An npm-style package at ``root/package`` with ``icons/NAME.svg`` and ``NAME-fill.svg``."""
    pkg = root / "package"
    (pkg / "icons").mkdir(parents=True, exist_ok=True)
    meta: dict[str, str] = {"name": name, "version": "1.0.0"}
    if licence is not None:
        meta["license"] = licence
    (pkg / "package.json").write_text(json.dumps(meta))
    for icon, (outline, filled) in SHAPES.items():
        (pkg / "icons" / f"{icon}.svg").write_text(OUTLINE.format(outline))
        (pkg / "icons" / f"{icon}-fill.svg").write_text(FILLED.format(filled))
    return pkg
