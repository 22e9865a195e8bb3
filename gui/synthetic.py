"""Generated GUI screens with ground truth, written in ScreenSpot-Pro format.

``generate(out_dir, n=40, seed=0)`` writes ``out_dir/images/*.png`` and
``out_dir/annotations.json``: a list of ``{"id", "img_filename", "instruction", "bbox": [x1, y1,
x2, y2] | null, "ui_type": "text" | "icon", "gt_type": "positive" | "negative", "img_size",
"layout", "relation"}``. Each screen is HTML rendered by headless Chromium
(:mod:`~lemmata.gui.render`); boxes are read from the DOM, in screenshot pixels.

Layouts: ``form`` (fields with placeholders, check boxes, buttons, a header of icon buttons),
``toolbar`` (a menu bar, a toolbar of icon buttons, some with labels, a document), ``dense``
(a sidebar of small items and a table with per-row action icons: tiny targets and duplicate
icons, told apart by relations), ``dialog`` (a modal over a dimmed page); any of them at 4K,
with device scale 1 or 2. Per screen: text targets, icon targets named by a label or search
term of their glyph ("open the settings" for a gear), relational instructions ("the icon left
of Save", "the trash icon right of Invoices"), and negative instructions naming something the
screen does not have. Icons are Font Awesome Free glyphs by default; with ``icon_sets`` they
are SVG icons of other sets (:mod:`~lemmata.gui.icon_library`; the benchmark's seen and held-out
splits) in mixed styles, sizes, stroke widths and colours, asked for by what they do ("open the
settings", ``data/icon_instructions.json``).
"""

from __future__ import annotations

import html
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.gui.icons import _package_dir

__all__ = ["LAYOUTS", "ScreenSpec", "generate", "icon_vocabulary", "screen_spec", "set_vocabulary"]

LAYOUTS = ("form", "toolbar", "dense", "dialog")

# Common UI glyphs of Font Awesome Free (solid).
UI_ICONS = [
    "gear",
    "magnifying-glass",
    "house",
    "user",
    "bell",
    "trash",
    "pen",
    "floppy-disk",
    "download",
    "upload",
    "print",
    "envelope",
    "star",
    "heart",
    "share-nodes",
    "plus",
    "minus",
    "xmark",
    "check",
    "bars",
    "ellipsis-vertical",
    "arrow-left",
    "arrow-right",
    "rotate-right",
    "filter",
    "calendar",
    "lock",
    "unlock",
    "camera",
    "image",
    "folder",
    "file",
    "paperclip",
    "link",
    "copy",
    "scissors",
    "paste",
    "bold",
    "italic",
    "underline",
    "list",
    "table-cells",
    "chart-bar",
    "cloud",
    "wifi",
    "battery-full",
    "volume-high",
    "microphone",
    "play",
    "pause",
    "stop",
    "forward",
    "backward",
    "circle-info",
    "circle-question",
    "triangle-exclamation",
    "location-dot",
    "phone",
    "comment",
    "thumbs-up",
    "bookmark",
    "tag",
    "cart-shopping",
    "credit-card",
    "globe",
    "sun",
    "moon",
    "power-off",
    "right-from-bracket",
    "eye",
    "eye-slash",
    "expand",
    "compress",
    "sliders",
    "wrench",
    "shield",
    "key",
    "flag",
    "clock",
    "rss",
    "code",
    "terminal",
    "database",
    "server",
]

BUTTONS = [
    "Save",
    "Cancel",
    "Submit",
    "Apply",
    "Delete",
    "Export",
    "Import",
    "Share",
    "Print",
    "Upload",
    "Download",
    "Next",
    "Back",
    "Continue",
    "Sign in",
    "Sign up",
    "Log out",
    "Refresh",
    "Search",
    "Filter",
    "Sort",
    "Edit",
    "Rename",
    "Duplicate",
    "Archive",
    "Publish",
    "Preview",
    "Undo",
    "Redo",
    "Close",
    "Help",
    "Invite members",
    "Add item",
    "New folder",
    "Send",
    "Reply",
    "Forward",
    "Attach file",
    "Schedule",
    "Confirm",
    "Discard changes",
    "Keep editing",
    "Create project",
    "Run report",
    "Merge",
    "Approve",
    "Reject",
    "Subscribe",
    "Unsubscribe",
    "Checkout",
    "Add to cart",
    "Book now",
    "Start trial",
    "Learn more",
    "View details",
    "Mark as read",
    "Select all",
    "Clear filters",
]
FIELDS = [
    "First name",
    "Last name",
    "Email address",
    "Password",
    "Phone number",
    "Street address",
    "City",
    "Postal code",
    "Country",
    "Company",
    "Job title",
    "Date of birth",
    "Card number",
    "Notes",
    "Username",
    "Website",
    "Search orders",
    "Promo code",
    "Project name",
    "Team name",
]
MENUS = [
    "File",
    "Edit",
    "View",
    "Insert",
    "Format",
    "Tools",
    "Window",
    "Help",
    "Project",
    "Run",
    "Debug",
    "Selection",
    "Go",
]
ITEMS = [
    "Notifications",
    "Privacy",
    "Appearance",
    "Language",
    "Accessibility",
    "Storage",
    "Battery",
    "Bluetooth",
    "Display",
    "Sound",
    "Keyboard",
    "Mouse",
    "Updates",
    "Security",
    "Accounts",
    "Backups",
    "Network",
    "Printers",
    "Invoices",
    "Payments",
    "Customers",
    "Products",
    "Reports",
    "Analytics",
    "Campaigns",
    "Inventory",
    "Shipping",
    "Returns",
    "Suppliers",
    "Employees",
    "Payroll",
    "Calendar",
    "Contacts",
    "Documents",
    "Projects",
    "Tasks",
    "Messages",
    "Billing",
    "Integrations",
    "Audit log",
    "Domains",
    "Webhooks",
    "API keys",
    "Members",
    "Roles",
    "Quotas",
    "Regions",
    "Releases",
    "Pipelines",
]
WORDS = [
    "the",
    "quarterly",
    "figures",
    "were",
    "reviewed",
    "by",
    "the",
    "board",
    "and",
    "the",
    "results",
    "will",
    "be",
    "shared",
    "with",
    "all",
    "teams",
    "after",
    "the",
    "next",
    "planning",
    "meeting",
    "while",
    "the",
    "roadmap",
    "remains",
    "under",
    "discussion",
    "for",
    "now",
]
THEMES = (
    {"bg": "#ffffff", "fg": "#1f2328", "panel": "#f6f8fa", "accent": "#0969da", "btn": "#f3f4f6"},
    {"bg": "#0d1117", "fg": "#e6edf3", "panel": "#161b22", "accent": "#2f81f7", "btn": "#21262d"},
    {"bg": "#fbfaf7", "fg": "#2b2b2b", "panel": "#efe9dd", "accent": "#b35c00", "btn": "#e7e1d3"},
    {"bg": "#f0f4ff", "fg": "#14213d", "panel": "#dde6ff", "accent": "#3a0ca3", "btn": "#c9d6ff"},
)
FONTS = ("DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono", "DejaVu Sans Condensed")


@dataclass(frozen=True)
class _Icon:
    name: str
    codepoint: int  # a Font Awesome glyph, or 0 for an SVG icon
    phrases: tuple[str, ...]  # what an instruction may call it
    vocabulary: frozenset[str]  # every word it answers to
    svgs: tuple[str, ...] = ()  # an SVG icon's variants (sets, styles): one is drawn at random
    label: str = ""  # a name for "the ... icon right of X" when the phrases are actions


_STOPWORDS = frozenset({"the", "a", "an", "to", "of", "it", "this", "my", "me", "on", "in", "up"})


def _content(phrase: str) -> set[str]:
    return {w for w in phrase.lower().replace("-", " ").split() if w not in _STOPWORDS}


def set_vocabulary(icon_sets: tuple[str, ...], cache_dir: Path) -> dict[str, _Icon]:
    """The UI glyphs (keyed like :data:`UI_ICONS`) drawn from other icon sets: each the glyphs of
    the same concept in ``icon_sets`` (fetched into ``cache_dir`` when missing), asked for by what
    they do ("open the settings"; ``data/icon_instructions.json``). A concept the sets lack, or
    one with no such wording, is left out."""
    from lemmata.gui.icon_library import SETS, concept_of, concepts, fetch_set, read_set

    table = concepts()
    wording = json.loads((Path(__file__).parent / "data" / "icon_instructions.json").read_text())
    by_concept: dict[str, list[str]] = {}
    for name in icon_sets:
        if name not in SETS:
            raise ValueError(f"unknown icon set {name!r}: known are {sorted(SETS)}")
        root = fetch_set(SETS[name], Path(cache_dir) / "packages")
        for e in read_set(SETS[name], root, table):
            if e.path is not None and e.concept in wording:
                by_concept.setdefault(e.concept, []).append(_svg_root(e.path.read_text()))
    out = {}
    for n in UI_ICONS:
        c = concept_of(n, table)
        if c not in by_concept:
            continue
        phrases = tuple(wording[c])
        vocab = set().union(*(_content(p) for p in [c, *table.names.get(c, []), *phrases]))
        out[n] = _Icon(n, 0, phrases, frozenset(vocab), tuple(by_concept[c]), c.replace("-", " "))
    return out


def _svg_root(svg: str) -> str:
    """An SVG's markup from its root element on, drawing in the current colour."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    head = svg[: svg.find(">")]
    if "fill=" not in head:  # filled sets leave the colour to the default black
        svg = svg.replace("<svg", '<svg fill="currentColor"', 1)
    return svg


def icon_vocabulary() -> dict[str, _Icon]:
    """The UI glyphs with their names, labels and short search terms."""
    meta = json.loads((_package_dir() / "metadata" / "icons.json").read_text())
    out = {}
    for name in UI_ICONS:
        e = meta[name]
        terms = [*e.get("aliases", {}).get("names", []), *e.get("search", {}).get("terms", [])]
        label = e.get("label", name).lower()
        phrases = [label] + [t for t in terms if len(t.split()) <= 2 and "-" not in t][:6]
        vocab = {w for p in [name.replace("-", " "), label, *terms] for w in p.lower().split()}
        out[name] = _Icon(
            name, int(e["unicode"], 16), tuple(dict.fromkeys(phrases)), frozenset(vocab)
        )
    return out


@dataclass
class ScreenSpec:
    """One screen before rendering: its HTML and the instructions about it."""

    html: str
    width: int
    height: int
    scale: float
    layout: str
    items: list[dict[str, Any]]  # instruction, target (data-target id or None), ui_type, relation
    names: dict[str, str]  # data-target id -> its label or glyph name


class _Builder:
    def __init__(self, rng: random.Random, icons: dict[str, _Icon]) -> None:
        self.rng, self.icons = rng, icons
        self.pool = [n for n in UI_ICONS if n in icons]  # the glyphs this screen may draw
        self.n = 0
        self.texts: list[tuple[str, str]] = []  # (target id, label) of text targets
        self.icon_targets: list[tuple[str, str]] = []  # (target id, glyph name)
        self.items: list[dict[str, Any]] = []
        self.labels: set[str] = set()
        self.relational: list[dict[str, Any]] = []

    def tid(self) -> str:
        self.n += 1
        return f"t{self.n}"

    def button(self, label: str, cls: str = "btn") -> str:
        t = self.tid()
        self.texts.append((t, label))
        self.labels.add(label.lower())
        return f'<button class="{cls}" data-target="{t}">{html.escape(label)}</button>'

    def icon(self, name: str, cls: str = "ib", with_label: str | None = None) -> str:
        t = self.tid()
        self.icon_targets.append((t, name))
        icon = self.icons[name]
        if icon.svgs:
            glyph = self._svg(icon, t)
        else:
            glyph = f'<span class="fa" data-target="{t}">&#x{icon.codepoint:x};</span>'
        if with_label:
            lt = self.tid()
            self.texts.append((lt, with_label))
            self.labels.add(with_label.lower())
            return f'<span class="{cls}">{glyph}<span data-target="{lt}">{html.escape(with_label)}</span></span>'
        return f'<span class="{cls}">{glyph}</span>'

    def _svg(self, icon: _Icon, t: str) -> str:
        """One of the icon's SVGs at a random size, colour and (for outline sets) stroke."""
        rng = self.rng
        svg = rng.choice(icon.svgs)
        if 'stroke-width="2"' in svg:
            svg = svg.replace('stroke-width="2"', f'stroke-width="{rng.choice([1.5, 2, 2.5])}"')
        px = rng.choice([14, 16, 18, 20, 24, 28, 32])
        colour = rng.choice(["inherit", "inherit", "var(--accent)", "#6e7781"])
        return (
            f'<span class="svgi" data-target="{t}" style="width:{px}px;height:{px}px;'
            f'color:{colour}">{svg}</span>'
        )

    def field(self, placeholder: str) -> str:
        t = self.tid()
        self.texts.append((t, placeholder))
        self.labels.add(placeholder.lower())
        return f'<input class="in" data-target="{t}" placeholder="{html.escape(placeholder)}">'

    def plain(self, label: str, cls: str = "item") -> str:
        t = self.tid()
        self.texts.append((t, label))
        self.labels.add(label.lower())
        return f'<div class="{cls}" data-target="{t}">{html.escape(label)}</div>'

    def sentence(self, k: int) -> str:
        start = self.rng.randrange(len(WORDS))
        words = [WORDS[(start + i) % len(WORDS)] for i in range(k)]
        for w in words:
            self.labels.add(w)
        return " ".join(words).capitalize() + "."


def _icon_phrase(b: _Builder, name: str) -> str | None:
    """A phrase for icon ``name`` that no other icon on the screen answers to and that is not
    a text on the screen."""
    others = [b.icons[n].vocabulary for _, n in b.icon_targets if n != name]
    for phrase in b.rng.sample(list(b.icons[name].phrases), len(b.icons[name].phrases)):
        words = _content(phrase)
        if any(words & o for o in others) or phrase in b.labels:
            continue
        return phrase
    return None


def _css(theme: dict[str, str], font: str, size: int, fa: Path) -> str:
    return f"""
@font-face {{ font-family: FA; src: url('{fa.as_uri()}'); }}
* {{ box-sizing: border-box; }}
body {{ --accent: {theme["accent"]}; margin: 0; background: {theme["bg"]}; color: {theme["fg"]}; font-family: '{font}';
  font-size: {size}px; }}
.fa {{ font-family: FA; font-weight: 900; display: inline-block; line-height: 1; }}
.bar {{ display: flex; align-items: center; gap: 14px; padding: 10px 18px;
  background: {theme["panel"]}; }}
.btn {{ font: inherit; color: {theme["fg"]}; background: {theme["btn"]}; border: 1px solid #8888;
  border-radius: 6px; padding: 6px 14px; margin: 4px; }}
.primary {{ font: inherit; color: #fff; background: {theme["accent"]}; border: 0;
  border-radius: 6px; padding: 7px 16px; margin: 4px; }}
.ib {{ display: inline-flex; align-items: center; gap: 6px; padding: 6px; font-size: 1.15em; }}
.ib .fa {{ font-size: 1.2em; }}
.svgi {{ display: inline-block; line-height: 0; }}
.svgi svg {{ width: 100%; height: 100%; }}
.in {{ font: inherit; color: {theme["fg"]}; background: {theme["bg"]}; border: 1px solid #8889;
  border-radius: 4px; padding: 7px 10px; width: 280px; margin: 6px 0; display: block; }}
.item {{ padding: 5px 10px; }}
.menu {{ padding: 4px 10px; }}
.side {{ width: 210px; background: {theme["panel"]}; padding: 8px; }}
.row {{ display: flex; align-items: center; gap: 18px; padding: 3px 10px;
  border-bottom: 1px solid #8883; }}
.cell {{ width: 150px; }}
.doc {{ padding: 24px 48px; line-height: 1.6; max-width: 900px; }}
.dim {{ position: fixed; inset: 0; background: #0008; }}
.modal {{ position: fixed; background: {theme["bg"]}; border-radius: 10px; padding: 22px 26px;
  box-shadow: 0 10px 40px #0009; width: 460px; }}
"""


def _form(b: _Builder) -> str:
    rng = b.rng
    header_icons = rng.sample(b.pool, rng.randint(3, 5))
    fields = rng.sample(FIELDS, rng.randint(3, 6))
    buttons = rng.sample(BUTTONS, rng.randint(2, 4))
    head = "".join(b.icon(n) for n in header_icons)
    title = rng.choice(["Create account", "Checkout", "New project", "Profile", "Contact us"])
    body = "".join(b.field(f) for f in fields)
    checks = "".join(
        f'<label class="item"><input type="checkbox"> {html.escape(b.sentence(4))}</label>'
        for _ in range(rng.randint(1, 2))
    )
    btns = b.button(buttons[0], "primary") + "".join(b.button(x) for x in buttons[1:])
    return (
        f'<div class="bar"><b>{title}</b><span style="flex:1"></span>{head}</div>'
        f'<div style="padding:{rng.randint(20, 60)}px {rng.randint(30, 200)}px">'
        f"<p>{b.sentence(rng.randint(8, 14))}</p>{body}{checks}<div>{btns}</div></div>"
    )


def _toolbar(b: _Builder) -> str:
    rng = b.rng
    menus = "".join(b.plain(m, "menu") for m in rng.sample(MENUS, rng.randint(4, 8)))
    tools = []
    labelled = rng.sample(BUTTONS, 3)
    for i, n in enumerate(rng.sample(b.pool, rng.randint(8, 14))):
        tools.append(b.icon(n, with_label=labelled[i] if i < 3 and rng.random() < 0.6 else None))
    rng.shuffle(tools)
    doc = "".join(f"<p>{b.sentence(rng.randint(10, 20))}</p>" for _ in range(rng.randint(3, 6)))
    return (
        f'<div class="bar" style="gap:4px">{menus}</div>'
        f'<div class="bar" style="gap:2px;flex-wrap:wrap">{"".join(tools)}</div>'
        f'<div class="doc">{doc}</div>'
    )


def _dense(b: _Builder) -> str:
    rng = b.rng
    chosen = rng.sample(ITEMS, rng.randint(16, 30))
    cut = len(chosen) * 3 // 5
    side = "".join(b.plain(x) for x in chosen[:cut])
    rows = []
    names = chosen[cut:]
    actions = rng.sample(
        [a for a in ("pen", "trash", "eye", "copy", "download", "share-nodes") if a in b.icons], 2
    )
    for name in names:
        cells = b.plain(name, "cell") + "".join(
            f'<span class="cell">{rng.randint(10, 9999)}</span>' for _ in range(2)
        )
        icons = "".join(b.icon(a) for a in actions)
        rows.append(f'<div class="row">{cells}{icons}</div>')
        b.items.append({"_row": (name, [b.icon_targets[-2], b.icon_targets[-1]])})
    return (
        f'<div style="display:flex"><div class="side">{side}</div>'
        f'<div style="flex:1;padding:12px">{"".join(rows)}</div></div>'
    )


def _dialog(b: _Builder) -> str:
    rng = b.rng
    page = f'<div class="doc">{"".join(f"<p>{b.sentence(14)}</p>" for _ in range(5))}</div>'
    title = rng.choice(["Unsaved changes", "Delete project?", "Share document", "Session expired"])
    buttons = rng.sample(BUTTONS, rng.randint(2, 3))
    btns = "".join(b.button(x) for x in buttons[:-1]) + b.button(buttons[-1], "primary")
    close = b.icon("xmark")
    return (
        f'{page}<div class="dim"></div><div class="modal" style="left:{rng.randint(15, 45)}%;'
        f'top:{rng.randint(15, 40)}%"><div style="display:flex"><b style="flex:1">{title}</b>'
        f'{close}</div><p>{b.sentence(rng.randint(10, 18))}</p><div style="text-align:right">'
        f"{btns}</div></div>"
    )


_LAYOUT_FNS = {"form": _form, "toolbar": _toolbar, "dense": _dense, "dialog": _dialog}


def _instructions(b: _Builder, layout: str) -> list[dict[str, Any]]:
    rng = b.rng
    out: list[dict[str, Any]] = []
    rows = [i["_row"] for i in b.items if "_row" in i]
    # text targets whose label is unique on the screen
    counts: dict[str, int] = {}
    for _, label in b.texts:
        counts[label.lower()] = counts.get(label.lower(), 0) + 1
    unique_texts = [(t, label) for t, label in b.texts if counts[label.lower()] == 1]
    for t, label in rng.sample(unique_texts, min(3, len(unique_texts))):
        verb = rng.choice(["click", "click the", "select", "press", "open", ""])
        role = rng.choice(["", " button", ""]) if layout != "dense" else ""
        out.append({"instruction": f"{verb} {label}{role}".strip(), "target": t, "ui_type": "text"})
    # icon targets (not the duplicated row actions)
    row_targets = {t for _, pair in rows for t, _ in pair}
    singles = [(t, n) for t, n in b.icon_targets if t not in row_targets]
    for t, n in rng.sample(singles, min(3, len(singles))):
        phrase = _icon_phrase(b, n)
        if phrase is None:
            continue
        if b.icons[n].svgs:  # asked for by what it does: the wording is the instruction
            form = rng.choice(["{p}", "{p}", "click to {p}"])
        else:
            form = rng.choice(["click the {p} icon", "{p}", "open {p}", "tap the {p} button"])
        out.append({"instruction": form.format(p=phrase), "target": t, "ui_type": "icon"})
    # relations
    if rows:
        name, pair = rng.choice(rows)
        t, n = rng.choice(pair)
        phrase = b.icons[n].label or b.icons[n].phrases[0]
        out.append(
            {
                "instruction": f"click the {phrase} icon right of {name}",
                "target": t,
                "ui_type": "icon",
                "relation": "right",
            }
        )
    # negatives: a label and an icon the screen does not have
    present = (
        set().union(*(b.icons[n].vocabulary for _, n in b.icon_targets))
        if b.icon_targets
        else set()
    )
    absent = [x for x in BUTTONS if x.lower() not in b.labels and not _content(x) & present]
    out.append(
        {
            "instruction": f"click the {rng.choice(absent)} button",
            "target": None,
            "ui_type": "text",
        }
    )
    for n in rng.sample(b.pool, len(b.pool)):
        phrase = b.icons[n].phrases[0]
        if n in {m for _, m in b.icon_targets} or _content(phrase) & present:
            continue
        if phrase in b.labels:
            continue
        neg = phrase if b.icons[n].svgs else f"click the {phrase} icon"
        out.append({"instruction": neg, "target": None, "ui_type": "icon"})
        break
    return out


def screen_spec(
    rng: random.Random, icons: dict[str, _Icon], layout: str | None = None
) -> ScreenSpec:
    """One random screen and its instructions."""
    layout = layout or rng.choice(LAYOUTS)
    b = _Builder(rng, icons)
    body = _LAYOUT_FNS[layout](b)
    if layout == "toolbar":
        _relational_toolbar(b)
    four_k = rng.random() < 0.2
    if four_k:
        scale = rng.choice([1.0, 2.0])
        width, height = (3840, 2160) if scale == 1.0 else (1920, 1080)
    else:
        scale = 1.0
        width, height = rng.choice([(1280, 800), (1366, 768), (1920, 1080), (1440, 900)])
    size = rng.choice([12, 13, 14, 15]) if layout != "dense" else rng.choice([10, 11, 12])
    fa = _package_dir() / "webfonts" / "fa-solid-900.woff2"
    css = _css(rng.choice(THEMES), rng.choice(FONTS), size, fa)
    page = f"<!doctype html><html><head><style>{css}</style></head><body>{body}</body></html>"
    items = _instructions(b, layout) + b.relational
    names = dict(b.texts) | dict(b.icon_targets)
    return ScreenSpec(page, width, height, scale, layout + ("-4k" if four_k else ""), items, names)


def _relational_toolbar(b: _Builder) -> None:
    """'the icon left of Save' for a labelled tool: the glyph that sits left of its label."""
    # labelled tools were added as icon, then its label: consecutive target ids
    rel = []
    icon_ids = {t: n for t, n in b.icon_targets}
    for t, label in b.texts:
        prev = f"t{int(t[1:]) - 1}"
        if prev in icon_ids:
            rel.append(
                {
                    "instruction": f"the icon left of {label}",
                    "target": prev,
                    "ui_type": "icon",
                    "relation": "left",
                }
            )
    b.relational = rel[:1]


def generate(
    out_dir: str | Path,
    n: int = 40,
    seed: int = 0,
    *,
    layouts: tuple[str, ...] = LAYOUTS,
    progress: Any = None,
    overwrite: bool = False,
    icon_sets: tuple[str, ...] | None = None,
    cache_dir: str | Path | None = None,
) -> Path:
    """Render ``n`` screens into ``out_dir`` (ScreenSpot-Pro format) and return the path of
    ``annotations.json``. ``progress(i, n)`` is called after each screen. A folder that
    already holds an ``annotations.json`` is refused unless ``overwrite``.

    Icons are Font Awesome glyphs asked for by name, or with ``icon_sets`` (names of
    :data:`~lemmata.gui.icon_library.SETS`, fetched into ``cache_dir``) SVG icons of those sets
    in mixed styles, sizes and colours, asked for by what they do."""
    from lemmata.errors import UsageError
    from lemmata.gui.render import Browser

    out = Path(out_dir)
    if n < 1:
        raise UsageError(f"n must be at least 1, not {n}")
    if (out / "annotations.json").exists() and not overwrite:
        raise UsageError(
            f"{out} already holds a data set (annotations.json): choose another folder, "
            "or overwrite it (--overwrite)"
        )
    (out / "images").mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    if icon_sets:
        if cache_dir is None:
            raise UsageError("icon_sets needs a cache_dir to fetch the sets into")
        icons = set_vocabulary(tuple(icon_sets), Path(cache_dir))
    else:
        icons = icon_vocabulary()
    annotations: list[dict[str, Any]] = []
    with Browser() as browser:
        for i in range(n):
            spec = screen_spec(rng, icons, layouts[i % len(layouts)])
            shot = browser.render(
                spec.html, width=spec.width, height=spec.height, scale=spec.scale, workdir=out
            )
            name = f"screen_{seed}_{i:04d}.png"
            (out / "images" / name).write_bytes(shot.png)
            for j, item in enumerate(spec.items):
                target = item["target"]
                if target is not None and target not in shot.boxes:
                    continue  # laid out off screen
                bbox = [round(v, 1) for v in shot.boxes[target]] if target else None
                annotations.append(
                    {
                        "id": f"{seed}-{i}-{j}",
                        "img_filename": name,
                        "instruction": item["instruction"],
                        "bbox": bbox,
                        "ui_type": item["ui_type"],
                        "gt_type": "positive" if target else "negative",
                        "img_size": list(shot.size),
                        "layout": spec.layout,
                        "relation": item.get("relation"),
                        "target_name": spec.names.get(target) if target else None,
                    }
                )
            if progress is not None:
                progress(i + 1, n)
    (out / "page.html").unlink(missing_ok=True)
    path = out / "annotations.json"
    tmp = out / "annotations.json.part"
    tmp.write_text(json.dumps(annotations, indent=1))
    tmp.replace(path)
    return path
