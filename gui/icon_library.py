"""The icon library: several openly licensed icon sets, their names, tags and licences, concepts
aligned across sets, and every glyph rasterised for the icon encoder (:mod:`~lemmata.gui.icon_model`).

Sets come from the npm registry (``npm pack``: the package tarball, nothing else) and from PyPI
(``fontawesomefree``, already a dependency of the ``gui`` extra), into a cache folder outside the
repository; ``scripts/build_icon_library.py`` (or :func:`build_library`) rebuilds everything from
the registries. What the package ships is small: the trained weights, the concept index and the
attributions (``gui/data/``), never the SVG files.

Concepts: an icon's name loses its style suffix (``gear-fill``, ``cog-outline``, ``gear-16``)
and is looked up among the names of ``data/icon_concepts.json`` (``search`` ~
``magnifying-glass`` ~ ``zoom``), which also gives a functional gloss ("settings: open settings,
preferences, configure options"); a name not listed there is its own concept, shared by every
set that uses the same name. An icon's text is its concept, its own name, its tags and the gloss.

SVGs are rasterised with ``resvg-py`` (a self-contained wheel of the Rust resvg renderer: no
system library, no network, and about 1 ms an icon); the alpha channel is the icon's ink, so the
colour an SVG asks for does not matter.

Held-out sets (:data:`HELD_OUT`) never enter training or the index: they are the evaluation's.
Lucide is a fork of Feather, so the two are held out together.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lemmata.errors import DataSourceError, MissingDependency, ToolNotFound

__all__ = [
    "HELD_OUT",
    "SETS",
    "IconEntry",
    "IconSetSource",
    "Library",
    "LibraryError",
    "build_library",
    "concept_of",
    "concepts",
    "fetch_set",
    "icon_text",
    "library_from_entries",
    "licence_of",
    "rasterise",
    "read_set",
    "square_ink",
]


class LibraryError(DataSourceError):
    """An icon set cannot be used: no licence, no icons, a damaged package."""

    code = "icon_library"


@dataclass(frozen=True)
class IconSetSource:
    """Where a set comes from and how its package is laid out."""

    name: str
    package: str  # npm package, or the PyPI distribution for ``fontawesomefree``
    registry: str = "npm"
    licence: str = ""  # expected SPDX id (the package's own metadata is what is recorded)
    url: str = ""


SETS: dict[str, IconSetSource] = {
    s.name: s
    for s in (
        IconSetSource(
            "fontawesome", "fontawesomefree", "pypi", "CC-BY-4.0", "https://fontawesome.com"
        ),
        IconSetSource("tabler", "@tabler/icons", licence="MIT", url="https://tabler.io/icons"),
        IconSetSource("mdi", "@mdi/svg", licence="Apache-2.0", url="https://pictogrammers.com"),
        IconSetSource(
            "phosphor", "@phosphor-icons/core", licence="MIT", url="https://phosphoricons.com"
        ),
        IconSetSource(
            "bootstrap", "bootstrap-icons", licence="MIT", url="https://icons.getbootstrap.com"
        ),
        IconSetSource("lucide", "lucide-static", licence="ISC", url="https://lucide.dev"),
        IconSetSource("feather", "feather-icons", licence="MIT", url="https://feathericons.com"),
        IconSetSource(
            "octicons", "@primer/octicons", licence="MIT", url="https://primer.style/octicons"
        ),
    )
}
HELD_OUT = ("lucide", "feather", "octicons")


@dataclass(frozen=True)
class IconEntry:
    """One glyph of one set in one style."""

    set: str
    name: str
    style: str
    concept: str
    tags: tuple[str, ...] = ()
    path: Path | None = None  # the SVG file
    svg: str | None = None  # or its text


@dataclass
class _Concepts:
    by_name: dict[str, str]
    gloss: dict[str, str]
    names: dict[str, list[str]] = field(default_factory=dict)


_DATA = Path(__file__).parent / "data"


def concepts(path: Path | None = None) -> _Concepts:
    """The hand-written concept table: name -> concept, and each concept's gloss."""
    raw = json.loads((path or _DATA / "icon_concepts.json").read_text())
    by_name: dict[str, str] = {}
    gloss: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    for key, entry in raw.items():
        if key.startswith("_"):
            continue
        gloss[key] = entry["gloss"]
        names[key] = list(entry["names"])
        for n in [key, *entry["names"]]:
            by_name.setdefault(n, key)
    return _Concepts(by_name, gloss, names)


_SUFFIX = re.compile(
    r"-(fill|filled|outline|outlined|bold|thin|light|duotone|regular|solid|line|sharp|"
    r"12|16|24|32|48|lg|sm|alt|o)$"
)


def concept_of(name: str, table: _Concepts | None = None) -> str:
    """The concept of an icon name: its style suffixes stripped, then the concept table."""
    table = table or concepts()
    base = name.lower()
    if base in table.by_name:
        return table.by_name[base]
    while True:
        stripped = _SUFFIX.sub("", base)
        if stripped == base or not stripped:
            break
        base = stripped
        if base in table.by_name:
            return table.by_name[base]
    return base


def icon_text(
    concept: str,
    names: Iterable[str] = (),
    tags: Iterable[str] = (),
    *,
    table: _Concepts | None = None,
) -> str:
    """The text an icon is aligned with: "concept: gloss; other names, tags"."""
    table = table or concepts()
    head = concept.replace("-", " ")
    gloss = table.gloss.get(concept)
    words = [n.replace("-", " ") for n in names]
    words += [t.lower() for t in tags if t and not t.startswith("*")]
    extra = ", ".join(w for w in dict.fromkeys(words) if w != head)[:160]
    text = f"{head}: {gloss}" if gloss else head
    return f"{text}; {extra}" if extra else text


# ---------------------------------------------------------------------------------------------
# Fetching


def fetch_set(source: IconSetSource, cache_dir: Path, *, version: str | None = None) -> Path:
    """The unpacked package of ``source`` under ``cache_dir`` (fetched with ``npm pack`` once);
    for ``fontawesomefree`` the installed distribution's folder."""
    if source.registry == "pypi":
        from lemmata.gui.icons import _package_dir

        return _package_dir()
    cache_dir = Path(cache_dir)
    target = cache_dir / source.name
    if (target / "package" / "package.json").is_file():
        return target / "package"
    if shutil.which("npm") is None:
        raise ToolNotFound("npm", "apt-get install npm (the icon library fetches sets with it)")
    cache_dir.mkdir(parents=True, exist_ok=True)
    spec = f"{source.package}@{version}" if version else source.package
    proc = subprocess.run(
        ["npm", "pack", spec, "--silent", "--pack-destination", str(cache_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    tarballs = [cache_dir / line.strip() for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not tarballs or not tarballs[-1].is_file():
        raise LibraryError(
            f"npm pack {spec} failed ({proc.returncode}): {proc.stderr.strip()[-300:]}; "
            "check that the npm registry is reachable"
        )
    part = cache_dir / f"{source.name}.part"
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir()
    with tarfile.open(tarballs[-1]) as tar:
        tar.extractall(part, filter="data")
    shutil.rmtree(target, ignore_errors=True)
    part.rename(target)
    tarballs[-1].unlink()
    return target / "package"


# ---------------------------------------------------------------------------------------------
# Reading a package


def licence_of(root: Path, source: IconSetSource) -> dict[str, str]:
    """The set's licence as its package states it, with the licence text's first line;
    a package with neither a licence field nor a licence file is refused."""
    meta: dict[str, Any] = {}
    pkg = root / "package.json"
    if pkg.is_file():
        meta = json.loads(pkg.read_text())
    files = [p for p in root.glob("LICEN[CS]E*") if p.is_file()]
    spdx = str(meta.get("license") or "").strip()
    if not spdx and not files:
        raise LibraryError(
            f"icon set {source.name!r} ({root}) states no licence (no 'license' in package.json, "
            "no LICENSE file): it cannot be used; remove it from the sets or add its licence"
        )
    first = files[0].read_text(errors="replace").strip().splitlines()[0] if files else ""
    return {
        "set": source.name,
        "package": source.package,
        "registry": source.registry,
        "version": str(meta.get("version", "")),
        "license": spdx or first,
        "notice": first[:200],
        "url": source.url,
    }


def _svgs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.svg")) if folder.is_dir() else []


def read_set(source: IconSetSource, root: Path, table: _Concepts | None = None) -> list[IconEntry]:
    """Every glyph of the set at ``root`` (an unpacked package) with its concept and tags."""
    table = table or concepts()
    name = source.name
    out: list[IconEntry] = []

    def add(icon: str, style: str, path: Path, tags: Iterable[str] = ()) -> None:
        out.append(
            IconEntry(name, icon, style, concept_of(icon, table), tuple(map(str, tags)), path)
        )

    if name == "fontawesome":
        meta = json.loads((root / "metadata" / "icons.json").read_text())
        for style in ("solid", "regular"):
            for p in _svgs(root / "svgs" / style):
                entry = meta.get(p.stem, {})
                terms = entry.get("search", {}).get("terms", [])
                add(p.stem, style, p, [*entry.get("aliases", {}).get("names", []), *terms])
    elif name == "tabler":
        meta = json.loads((root / "icons.json").read_text())
        for style in ("outline", "filled"):
            for p in _svgs(root / "icons" / style):
                add(p.stem, style, p, meta.get(p.stem, {}).get("tags", []))
    elif name == "mdi":
        meta = {m["name"]: m for m in json.loads((root / "meta.json").read_text())}
        for p in _svgs(root / "svg"):
            m = meta.get(p.stem, {})
            if m.get("deprecated"):
                continue
            style = "outline" if p.stem.endswith("-outline") else "filled"
            add(p.stem, style, p, [*m.get("aliases", []), *m.get("tags", [])])
    elif name == "phosphor":
        tags = _phosphor_tags(root / "dist" / "index.mjs")
        for style in ("regular", "bold", "fill", "duotone", "thin", "light"):
            for p in _svgs(root / "assets" / style):
                icon = p.stem.removesuffix(f"-{style}")
                add(icon, style, p, tags.get(icon, []))
    elif name == "bootstrap":
        for p in _svgs(root / "icons"):
            style = "filled" if "-fill" in p.stem else "outline"
            add(p.stem.replace("-fill", ""), style, p)
    elif name == "lucide":
        meta = (
            json.loads((root / "tags.json").read_text()) if (root / "tags.json").is_file() else {}
        )
        for p in _svgs(root / "icons"):
            add(p.stem, "outline", p, meta.get(p.stem, []))
    elif name == "feather":
        for p in _svgs(root / "dist" / "icons"):
            add(p.stem, "outline", p)
    elif name == "octicons":
        meta = json.loads((root / "build" / "data.json").read_text())
        for p in _svgs(root / "build" / "svg"):
            if not p.stem.endswith("-24"):
                continue
            icon = p.stem.removesuffix("-24")
            add(icon, "octicon", p, meta.get(icon, {}).get("keywords", []))
    else:  # a set in the generic layout: package.json and svg files under icons/ or svg/
        for sub in ("icons", "svg", "svgs", "."):
            for p in _svgs(root / sub):
                add(p.stem, "default", p)
            if out:
                break
    if not out:
        raise LibraryError(f"icon set {name!r} at {root} has no SVG icons where expected")
    return out


def _phosphor_tags(path: Path) -> dict[str, list[str]]:
    """Names and tags from Phosphor's catalogue module (a JavaScript array of objects)."""
    if not path.is_file():
        return {}
    text = path.read_text()
    out: dict[str, list[str]] = {}
    for m in re.finditer(r'name: "([^"]+)",.*?tags: \[([^\]]*)\]', text, re.S):
        out[m.group(1)] = re.findall(r'"([^"]+)"', m.group(2))
    return out


# ---------------------------------------------------------------------------------------------
# Rasterising


def rasterise(entries: list[IconEntry], px: int = 48, pad: int = 2) -> np.ndarray:
    """(N, px, px) uint8 ink maps: each glyph's alpha, cut to its ink, padded square, centred.
    A glyph that fails to render or has no ink gets an all-zero map."""
    try:
        import resvg_py
    except ImportError as exc:
        raise MissingDependency("rasterising icon sets", "pip install 'lemmata[gui]'") from exc
    import io

    from PIL import Image

    out = np.zeros((len(entries), px, px), dtype=np.uint8)
    for i, e in enumerate(entries):
        svg = e.svg if e.svg is not None else (e.path.read_text() if e.path else "")
        try:
            png = resvg_py.svg_to_bytes(svg_string=svg, width=px * 2, height=px * 2)
        except (ValueError, OSError):
            continue
        img = Image.open(io.BytesIO(bytes(png))).convert("RGBA")
        out[i] = square_ink(np.asarray(img)[:, :, 3].astype(np.float32) / 255.0, px, pad)
    return out


def square_ink(ink: np.ndarray, px: int, pad: int = 2) -> np.ndarray:
    """An ink map (floats in [0, 1]) cut to its ink, padded square and resized to ``px``."""
    from PIL import Image

    ys, xs = np.nonzero(ink > 0.1)
    if len(xs) < 2:
        return np.zeros((px, px), dtype=np.uint8)
    cut = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    h, w = cut.shape
    side = max(h, w)
    sq = np.zeros((side, side), dtype=np.float32)
    sq[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = cut
    inner = px - 2 * pad
    small = Image.fromarray((sq * 255).astype(np.uint8)).resize(
        (inner, inner), Image.Resampling.BOX
    )
    res = np.zeros((px, px), dtype=np.uint8)
    res[pad : pad + inner, pad : pad + inner] = np.asarray(small)
    return res


# ---------------------------------------------------------------------------------------------
# The library


@dataclass
class Library:
    """Rasterised glyphs of some sets: ``images`` (N, px, px) uint8, and per glyph its set,
    name, style, concept and text; ``licences`` per set."""

    images: np.ndarray
    sets: list[str]
    names: list[str]
    styles: list[str]
    concepts: list[str]
    texts: list[str]
    licences: dict[str, dict[str, str]]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".part.npz")
        np.savez_compressed(
            part,
            images=self.images,
            meta=np.array(
                json.dumps(
                    {
                        "sets": self.sets,
                        "names": self.names,
                        "styles": self.styles,
                        "concepts": self.concepts,
                        "texts": self.texts,
                        "licences": self.licences,
                    }
                )
            ),
        )
        part.replace(path)

    @classmethod
    def load(cls, path: Path) -> Library:
        try:
            with np.load(path) as data:
                images = data["images"]
                meta = json.loads(str(data["meta"]))
        except (OSError, ValueError, KeyError) as exc:
            raise LibraryError(
                f"the icon library {path} cannot be read ({exc}): rebuild it with "
                "scripts/build_icon_library.py"
            ) from exc
        return cls(images, **meta)

    def relabel(self, table: _Concepts | None = None) -> Library:
        """The library with each glyph's concept read again from its name by the concept table
        (a library cached before the table changed keeps its images); a glyph whose concept
        changes gets that concept's text from the names of its glyphs (the tags are not kept)."""
        table = table or concepts()
        fresh = [concept_of(n, table) for n in self.names]
        changed = {c for c, old in zip(fresh, self.concepts, strict=True) if c != old}
        if not changed:
            return self
        names: dict[str, list[str]] = {}
        for c, n in zip(fresh, self.names, strict=True):
            if c in changed:
                names.setdefault(c, []).append(n)
        texts = {
            c: icon_text(c, [*table.names.get(c, []), *dict.fromkeys(names[c])][:8], table=table)
            for c in changed
        }
        return Library(
            self.images,
            list(self.sets),
            list(self.names),
            list(self.styles),
            fresh,
            [texts[c] if c in changed else t for c, t in zip(fresh, self.texts, strict=True)],
            dict(self.licences),
        )

    def subset(self, keep: np.ndarray) -> Library:
        idx = np.nonzero(keep)[0]
        return Library(
            self.images[idx],
            [self.sets[i] for i in idx],
            [self.names[i] for i in idx],
            [self.styles[i] for i in idx],
            [self.concepts[i] for i in idx],
            [self.texts[i] for i in idx],
            {s: v for s, v in self.licences.items() if s in {self.sets[i] for i in idx}},
        )


def library_from_entries(
    entries: list[IconEntry], licences: dict[str, dict[str, str]], px: int = 48
) -> Library:
    """Rasterise ``entries`` and give each its concept text (the names and tags of every glyph
    of the same concept, across sets, make that concept's text)."""
    table = concepts()
    names: dict[str, list[str]] = {}
    tags: dict[str, list[str]] = {}
    for e in entries:
        names.setdefault(e.concept, []).append(e.name)
        tags.setdefault(e.concept, []).extend(e.tags)
    texts = {
        c: icon_text(c, [*table.names.get(c, []), *names[c]][:8], _common(tags[c]), table=table)
        for c in names
    }
    images = rasterise(entries, px)
    has_ink = images.reshape(len(entries), -1).max(axis=1) > 0
    lib = Library(
        images,
        [e.set for e in entries],
        [e.name for e in entries],
        [e.style for e in entries],
        [e.concept for e in entries],
        [texts[e.concept] for e in entries],
        licences,
    )
    return lib.subset(has_ink)


def _common(tags: list[str], k: int = 8) -> list[str]:
    counts: dict[str, int] = {}
    for t in tags:
        t = t.lower().strip()
        if t and not t.startswith("*"):
            counts[t] = counts.get(t, 0) + 1
    return [t for t, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:k]]


def build_library(
    cache_dir: Path,
    sets: Iterable[str] = tuple(SETS),
    *,
    px: int = 48,
    progress: Callable[[str], None] | None = None,
) -> Library:
    """Fetch (once) and rasterise ``sets`` into ``cache_dir/library-{px}.npz``: the training
    and evaluation data of the icon encoder. Kept on disk; rebuilt when missing."""
    cache_dir = Path(cache_dir)
    chosen = list(sets)
    unknown = [s for s in chosen if s not in SETS]
    if unknown:
        raise LibraryError(f"unknown icon sets {unknown}: known are {sorted(SETS)}")
    key = "-".join(sorted(chosen))
    path = cache_dir / f"library-{px}-{key}.npz"
    if path.is_file():  # concepts as the table says now, though cached before it changed
        return Library.load(path).relabel()
    entries: list[IconEntry] = []
    licences: dict[str, dict[str, str]] = {}
    for s in chosen:
        root = fetch_set(SETS[s], cache_dir / "packages")
        licences[s] = licence_of(root, SETS[s]) if s != "fontawesome" else _fa_licence(root)
        got = read_set(SETS[s], root)
        if progress:
            progress(f"{s}: {len(got)} glyphs ({licences[s]['license']})")
        entries.extend(got)
    lib = library_from_entries(entries, licences, px)
    lib.save(path)
    return lib


def _fa_licence(root: Path) -> dict[str, str]:
    from importlib.metadata import version

    return {
        "set": "fontawesome",
        "package": "fontawesomefree",
        "registry": "pypi",
        "version": version("fontawesomefree"),
        "license": "CC-BY-4.0 (icons), SIL OFL 1.1 (fonts), MIT (code)",
        "notice": (root / "LICENSE.txt").read_text().strip().splitlines()[0][:200]
        if (root / "LICENSE.txt").is_file()
        else "",
        "url": "https://fontawesome.com",
    }
