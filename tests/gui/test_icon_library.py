"""The icon library: concepts aligned across sets, licences, reading a package, rasterising."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from _icons import SHAPES, write_package

from lemmata.gui.icon_library import (
    HELD_OUT,
    SETS,
    IconSetSource,
    Library,
    LibraryError,
    concept_of,
    library_from_entries,
    licence_of,
    rasterise,
    read_set,
)

TINY = IconSetSource("tiny", "tiny-icons")


@pytest.mark.parametrize(
    ("name", "concept"),
    [
        ("gear", "settings"),
        ("cog-outline", "settings"),
        ("gear-fill", "settings"),
        ("gear-six", "settings"),
        ("magnifying-glass", "search"),
        ("search", "search"),
        ("x-lg", "close"),
        ("xmark", "close"),
        ("trash-2", "delete"),
        ("house-door-fill", "home"),
        ("some-unknown-glyph", "some-unknown-glyph"),
        # a pushpin pins (a card to the top); a map pin marks a place
        ("pin", "pin"),
        ("pin-outline", "pin"),
        ("push-pin", "pin"),
        ("thumbtack", "pin"),
        ("map-pin", "location"),
        # chart and viewer toolbars: colours, theme, fit, reset, redo, pan, crosshair, tooltips
        ("palette-outline", "palette"),
        ("circle-half-stroke", "theme"),
        ("theme-light-dark", "theme"),
        ("fit-to-screen-outline", "fit"),
        ("backup-restore", "reset"),
        ("redo-variant", "redo"),
        ("arrow-forward-up", "redo"),
        ("arrows-move", "pan"),
        ("crosshairs", "crosshair"),
        ("tooltip-text-outline", "tooltip"),
        ("lasso", "lasso"),
    ],
)
def test_concepts_align_names_across_sets(name: str, concept: str) -> None:
    assert concept_of(name) == concept


def test_held_out_sets_are_known_and_not_all() -> None:
    assert set(HELD_OUT) < set(SETS)
    # a fork and its origin are held out together, or the held-out figure would flatter
    assert {"lucide", "feather"} <= set(HELD_OUT)


def test_a_package_reads_with_concepts_and_licence(tmp_path: Path) -> None:
    pkg = write_package(tmp_path)
    entries = read_set(TINY, pkg)
    assert len(entries) == 2 * len(SHAPES)
    by_concept = Counter(e.concept for e in entries)
    assert by_concept == {"search": 2, "close": 2, "add": 2, "home": 2}
    assert licence_of(pkg, TINY)["license"] == "MIT"


def test_a_set_without_licence_is_refused_by_name(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, licence=None)
    with pytest.raises(LibraryError, match="tiny.*no licence"):
        licence_of(pkg, TINY)


def test_an_empty_package_is_refused(tmp_path: Path) -> None:
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "package.json").write_text('{"license": "MIT"}')
    with pytest.raises(LibraryError, match="no SVG icons"):
        read_set(TINY, tmp_path / "package")


def test_rasterised_glyphs_have_ink_and_differ(tmp_path: Path) -> None:
    entries = read_set(TINY, write_package(tmp_path))
    images = rasterise(entries, px=32)
    assert images.shape == (len(entries), 32, 32)
    assert (images.reshape(len(entries), -1).max(axis=1) > 200).all()
    flat = images.reshape(len(entries), -1).astype(np.float32)
    # no two glyphs rasterise to the same picture
    dist = ((flat[:, None] - flat[None]) ** 2).sum(-1) + np.eye(len(entries)) * 1e9
    assert dist.min() > 0


def test_a_broken_svg_gives_an_empty_map_not_a_crash(tmp_path: Path) -> None:
    pkg = write_package(tmp_path)
    (pkg / "icons" / "broken.svg").write_text("<svg><path d=")
    entries = read_set(TINY, pkg)
    images = rasterise(entries, px=24)
    broken = [i for i, e in enumerate(entries) if e.name == "broken"][0]
    assert images[broken].max() == 0


def test_library_round_trips_and_a_damaged_file_is_named(tmp_path: Path) -> None:
    entries = read_set(TINY, write_package(tmp_path))
    lib = library_from_entries(entries, {"tiny": {"license": "MIT"}}, px=24)
    assert "search: " in lib.texts[lib.concepts.index("search")]  # the gloss is in the text
    path = tmp_path / "lib.npz"
    lib.save(path)
    again = Library.load(path)
    assert again.concepts == lib.concepts and (again.images == lib.images).all()
    path.write_bytes(b"not a zip")
    with pytest.raises(LibraryError, match="build_icon_library"):
        Library.load(path)


def test_a_cached_library_reads_its_concepts_from_the_table_as_it_is_now(tmp_path: Path) -> None:
    pkg = write_package(tmp_path)
    lib = library_from_entries(read_set(TINY, pkg), {}, 24)
    # as if cached when the table called a magnifier something else
    stale = Library(
        lib.images,
        lib.sets,
        lib.names,
        lib.styles,
        ["old-name" if c == "search" else c for c in lib.concepts],
        ["old text" if c == "search" else t for c, t in zip(lib.concepts, lib.texts, strict=True)],
        lib.licences,
    )
    fresh = stale.relabel()
    assert fresh.concepts == lib.concepts
    searched = [t for c, t in zip(fresh.concepts, fresh.texts, strict=True) if c == "search"]
    assert searched and all(t.startswith("search: start a search") for t in searched)
    assert lib.relabel() is lib  # nothing changed, nothing copied
