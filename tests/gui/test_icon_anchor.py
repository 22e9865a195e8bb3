"""The encoder-based icon anchor on screenshots drawn here with a hand-drawn icon set that no
training saw, with the shipped weights; and the anchor's behaviour when weights are bad."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from _icons import write_package

from lemmata.gui.icon_library import IconSetSource, rasterise, read_set

ORDER = ["search", "x", "plus", "home"]
SHAPES_X = '<path d="M5 5l14 14M19 5L5 19"/>'


def _screen(tmp_path: Path, *, dark: bool, px: int = 24) -> tuple:
    """A 900 x 260 screenshot: a title, and the four outline icons on a toolbar; their boxes."""
    from PIL import Image, ImageDraw, ImageFont

    entries = {e.name: e for e in read_set(IconSetSource("tiny", "tiny"), write_package(tmp_path))}
    bg, fg = ((24, 26, 32), (230, 230, 230)) if dark else ((246, 247, 249), (30, 30, 30))
    img = Image.new("RGB", (900, 260), bg)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 18)
    draw.text((20, 20), "Quarterly report", fill=fg, font=font)
    draw.text((20, 200), "Numbers were reviewed by the board.", fill=fg, font=font)
    boxes = {}
    for i, name in enumerate(ORDER):
        alpha = rasterise([entries[name]], px=px, pad=0)[0]
        x, y = 300 + i * 70, 100
        ink = Image.fromarray(alpha)
        img.paste(Image.new("RGB", ink.size, fg), (x, y), ink)
        boxes[name] = (x, y, x + px, y + px)
    return img, boxes


@pytest.fixture(scope="module")
def grounder():  # type: ignore[no-untyped-def]
    if shutil.which("tesseract") is None:
        pytest.skip("needs tesseract: apt-get install tesseract-ocr")
    from lemmata.gui.ground import Grounder

    return Grounder(Grounder.offline_anchors())


def _inside(point, box) -> bool:  # type: ignore[no-untyped-def]
    return (
        point is not None
        and box[0] - 2 <= point[0] <= box[2] + 2
        and box[1] - 2 <= point[1] <= box[3] + 2
    )


@pytest.mark.parametrize("dark", [False, True])
def test_functional_instructions_find_icons_of_an_unseen_set(
    grounder, tmp_path: Path, dark: bool
) -> None:  # type: ignore[no-untyped-def]
    img, boxes = _screen(tmp_path, dark=dark)
    asks = {"search": "start a search", "x": "close this panel", "plus": "add a new item"}
    hits = 0
    for name, instruction in asks.items():
        g = grounder.ground(img, instruction)
        hits += _inside(g.point, boxes[name])
    assert hits >= 2, f"{hits} of {len(asks)} found"


@pytest.mark.parametrize("gap", [8, 30])
def test_the_icon_left_of_a_label_is_found_among_icons_of_an_unseen_set(
    grounder, tmp_path: Path, gap: int
) -> None:  # type: ignore[no-untyped-def]
    """ "the icon left of Publish" names no concept: the nearest icon-like element on that side,
    even one drawn right against the label (tesseract's box for the word may cover it)."""
    from PIL import Image, ImageDraw, ImageFont

    entries = {e.name: e for e in read_set(IconSetSource("tiny", "tiny"), write_package(tmp_path))}
    img = Image.new("RGB", (900, 200), (246, 247, 249))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 16)
    boxes = {}
    for name, x in (("search", 120), ("home", 400)):
        alpha = rasterise([entries[name]], px=18, pad=0)[0]
        img.paste(Image.new("RGB", (18, 18), (40, 40, 40)), (x, 90), Image.fromarray(alpha))
        boxes[name] = (x, 90, x + 18, 108)
    draw.text((418 + gap, 90), "Publish", fill=(40, 40, 40), font=font)
    draw.text((20, 20), "Quarterly report", fill=(40, 40, 40), font=font)
    g = grounder.ground(img, "the icon left of Publish")
    assert _inside(g.point, boxes["home"]), (g.point, g.anchors)


def test_an_icon_the_screen_lacks_is_refused(grounder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    img, _ = _screen(tmp_path, dark=False)
    for instruction in ("click the rocket icon", "click the printer icon"):
        g = grounder.ground(img, instruction)
        assert g.abstained, (instruction, g.anchors)


def test_damaged_weights_make_the_anchor_inactive_and_grounding_goes_on(tmp_path: Path) -> None:
    if shutil.which("tesseract") is None:
        pytest.skip("needs tesseract: apt-get install tesseract-ocr")
    from lemmata.gui.ground import Grounder

    bad = tmp_path / "enc.pt"
    bad.write_bytes(b"\x00not weights")
    text, icons = Grounder.offline_anchors(weights=bad)
    assert icons.inactive is not None and "train-icons" in icons.inactive
    img, _ = _screen(tmp_path, dark=False)
    g = Grounder([text, icons]).ground(img, "click Quarterly report")
    assert not g.abstained and g.point is not None and g.point[1] < 60


def test_elements_without_ink_give_no_candidates(tmp_path: Path) -> None:
    from PIL import Image

    from lemmata.embeddings import get_embedder
    from lemmata.gui.anchors import Screen
    from lemmata.gui.icon_anchor import EncodedIconAnchor
    from lemmata.gui.instruction import parse_instruction
    from lemmata.settings import Settings

    anchor = EncodedIconAnchor.load(get_embedder(Settings.load()))
    assert anchor.inactive is None
    blank = Screen(Image.new("RGB", (400, 200), "white"))
    assert anchor.candidates(blank, parse_instruction("open the settings")) == []
    assert np.asarray(anchor.heatmap(blank, "open the settings")).max() == 0


def test_an_instruction_matches_the_concepts_it_comes_nearest() -> None:
    from lemmata.gui.icon_anchor import RELATIVE, concept_match

    # "like this post": nearest "like" at a low cosine, still asked for; far concepts are not
    match = concept_match(np.array([0.29, 0.275, 0.10, 0.20]))
    assert match[0] == RELATIVE and match[1] == RELATIVE
    assert match[2] == 0.0 and match[3] == 0.0
    # a close cosine is a sure match whatever the others; nothing near is nothing asked for
    assert concept_match(np.array([0.8, 0.79]))[0] == 1.0
    assert concept_match(np.array([0.2, 0.1])).max() == 0.0
    # a bare label ("click the Export button") is matched by its cosine alone
    assert concept_match(np.array([0.29, 0.275]), relative=False).max() == 0.0


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        ("click the Export button", True),  # a label the user expects to read
        ("click Publish", True),
        ("Export", True),
        ("select Save As", True),
        ('type into the "email" field', True),  # quoted: read as written
        ("open the settings", False),  # asked for by what it does
        ("Close this panel", False),  # a capital that only starts the sentence
        ("like this post", False),
        ("show that I like it", False),  # the pronoun is no label
        ("search", False),
        ("click the Settings icon", False),  # an icon asked for by name: a concept
        ("get help with TensorBoard", False),  # the name says what the help concerns
        ("learn more about Bokeh", False),
        ("go to Settings", True),
    ],
)
def test_an_instruction_naming_a_label_is_told_apart(instruction: str, label: bool) -> None:
    from lemmata.gui.icon_anchor import names_a_label
    from lemmata.gui.instruction import parse_instruction

    assert names_a_label(parse_instruction(instruction)) is label


def test_the_icon_side_reads_the_bare_action_too() -> None:
    from lemmata.gui.icon_anchor import query_texts
    from lemmata.gui.instruction import parse_instruction

    # the icon draws "reload"; "the runs" is what it acts on
    assert query_texts(parse_instruction("reload the runs")) == [
        "reload runs",
        "reload the runs",
        "reload",
    ]
    assert query_texts(parse_instruction("select the max pooling node")) == [
        "max pooling node",
        "select the max pooling node",
    ]
    texts = query_texts(parse_instruction("expand the chart to full screen"))
    assert texts[texts.index("expand") + 1] == "expand to full screen"


def test_the_icon_side_reads_the_instruction_without_owners_and_names() -> None:
    from lemmata.gui.icon_anchor import query_texts
    from lemmata.gui.instruction import parse_instruction

    # "menu" is a role word to the parser, but the icon draws the menu
    assert "open the main menu" in query_texts(parse_instruction("open the main menu"))
    # the chart owns the menu; the icon draws the overflow menu
    texts = query_texts(parse_instruction("open the eval loss chart's overflow menu"))
    assert "open the overflow menu" in texts
    # the product the help is about is no part of the help icon
    assert "get help" in query_texts(parse_instruction("get help with TensorBoard"))
    # "the icon left of Save" names no concept: no wording at all
    assert query_texts(parse_instruction("the icon left of Save")) == []


PUSHPIN = '<path d="M9 3h6"/><path d="M10 3v6l-3 4h10l-3-4V3"/><path d="M12 13v8"/>'
PALETTE = (
    '<path d="M12 3a9 9 0 1 0 0 18c1.5 0 2-1 2-2s-1-1.5-1-2.5 1-1.5 2-1.5h2a4 4 0 0 0 4-4c0-4.5'
    '-4-8-9-8z"/><circle cx="7.5" cy="11" r="1"/><circle cx="10" cy="7" r="1"/>'
    '<circle cx="15" cy="7" r="1"/>'
)
REDO = '<path d="M15 5l4 4-4 4"/><path d="M19 9H9a5 5 0 0 0 0 10h3"/>'


def test_concepts_added_after_training_are_found_by_their_prototypes(grounder) -> None:  # type: ignore[no-untyped-def]
    """A pushpin, a palette and a redo arrow (hand-drawn here; concepts the table gained after
    the encoder was trained) are found by what they do, beside a cross."""
    from _icons import OUTLINE
    from PIL import Image, ImageDraw, ImageFont

    from lemmata.gui.icon_library import IconEntry

    img = Image.new("RGB", (900, 260), (246, 247, 249))
    ImageDraw.Draw(img).text(
        (20, 20), "Training loss", fill=(30, 30, 30), font=ImageFont.truetype("DejaVuSans.ttf", 18)
    )
    boxes = {}
    for i, (name, svg) in enumerate(
        (("pin", PUSHPIN), ("palette", PALETTE), ("redo", REDO), ("x", SHAPES_X))
    ):
        alpha = rasterise([IconEntry("t", name, "outline", name, svg=OUTLINE.format(svg))], 22, 0)
        x = 300 + 70 * i
        img.paste(Image.new("RGB", (22, 22), (60, 60, 60)), (x, 100), Image.fromarray(alpha[0]))
        boxes[name] = (x, 100, x + 22, 122)
    asks = {
        "pin": "pin this card to the top",
        "palette": "change the colours",
        "redo": "redo the change",
    }
    found = [n for n, ask in asks.items() if _inside(grounder.ground(img, ask).point, boxes[n])]
    assert len(found) >= 2, found
    assert grounder.ground(img, "click the rocket icon").abstained


def test_without_a_list_of_trained_texts_every_concept_reads_as_before() -> None:
    from lemmata.embeddings import get_embedder
    from lemmata.gui.icon_anchor import EncodedIconAnchor
    from lemmata.settings import Settings

    anchor = EncodedIconAnchor.load(get_embedder(Settings.load()))
    assert anchor.encoder is not None
    untrained = dict(zip(anchor._concept_vectors()[0], anchor._untrained_text(), strict=True))
    assert untrained["pin"] and untrained["palette"] and not untrained["settings"]
    anchor.encoder.meta.pop("text_concepts")
    anchor2 = EncodedIconAnchor(anchor.encoder, anchor.embedder)
    assert not anchor2._untrained_text().any()


def test_numbers_in_a_table_are_not_taken_for_icons(tmp_path: Path, grounder) -> None:  # type: ignore[no-untyped-def]
    """A table's id column (bold two- and three-digit numbers) beside a toolbar of glyphs: the
    numbers are read as text, so no icon candidate stands on them."""
    from PIL import ImageDraw, ImageFont

    img, boxes = _screen(tmp_path, dark=False)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans-Bold.ttf", 15)
    numbers = []
    for i, n in enumerate(["14", "52", "61", "107"]):
        draw.text((40, 80 + 28 * i), n, fill=(30, 90, 160), font=font)
        numbers.append(draw.textbbox((40, 80 + 28 * i), n, font=font))
    anchor = grounder.anchors[1]
    elements = anchor.elements(grounder.screen(img))
    on_numbers = [
        e
        for e in elements
        if any(_inside(((e.box[0] + e.box[2]) / 2, (e.box[1] + e.box[3]) / 2), b) for b in numbers)
    ]
    assert not on_numbers, on_numbers
    on_icons = [
        e
        for e in elements
        if any(
            _inside(((e.box[0] + e.box[2]) / 2, (e.box[1] + e.box[3]) / 2), b)
            for b in boxes.values()
        )
    ]
    assert len(on_icons) >= 3
