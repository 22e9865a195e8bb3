"""The text anchor reads instructions worded as actions (real tesseract)."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="module")
def launcher():  # type: ignore[no-untyped-def]
    """A launcher of cards with labels (drawn here), and each label's box."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (1000, 320), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 17)
    boxes = {}
    for i, label in enumerate(["Notebook", "Console", "Text File", "Markdown File", "Terminal"]):
        x = 30 + i * 190
        draw.rectangle((x, 80, x + 160, 240), outline=(200, 200, 200), fill="white")
        w = draw.textlength(label, font=font)
        draw.text((x + 80 - w / 2, 200), label, fill=(20, 20, 20), font=font)
        boxes[label] = (x, 80, x + 160, 240)
    return img, boxes


@pytest.fixture(scope="module")
def text_grounder():  # type: ignore[no-untyped-def]
    if shutil.which("tesseract") is None:
        pytest.skip("needs tesseract: apt-get install tesseract-ocr")
    from lemmata.gui.ground import Grounder

    text, _ = Grounder.offline_anchors()
    return Grounder([text])


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        ("create a new text file", "Text File"),
        ("start a terminal", "Terminal"),
        ("open a new notebook", "Notebook"),
        ("create a markdown file", "Markdown File"),
    ],
)
def test_actions_find_the_card_their_object_names(
    text_grounder, launcher, instruction, label
) -> None:  # type: ignore[no-untyped-def]
    img, boxes = launcher
    g = text_grounder.ground(img, instruction)
    box = boxes[label]
    assert not g.abstained and g.point is not None, g.anchors
    assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3], (g.point, g.anchors)


def test_an_action_on_something_absent_is_refused(text_grounder, launcher) -> None:  # type: ignore[no-untyped-def]
    img, _ = launcher
    assert text_grounder.ground(img, "create a new spreadsheet").abstained


@pytest.mark.parametrize(
    ("width", "box"), [(3840, (1260.0, 785.0, 1272.0, 797.0)), (1280, (90.0, 69.0, 104.0, 83.0))]
)
def test_a_small_box_keeps_its_score_on_the_grid(width: int, box: tuple) -> None:
    """A 12-14 px icon spans two or three grid cells, none at its exact centre: the map still
    peaks at the candidate's score (the grounder abstains below its threshold on that peak)."""
    from PIL import Image

    from lemmata.gui.anchors import Candidate, Screen, draw_candidates

    screen = Screen(Image.new("RGB", (width, width * 9 // 16), "white"))
    heat = draw_candidates(screen, [Candidate(box, 0.675, "close", "icons", "icon")])
    assert abs(float(heat.max()) - 0.675) < 1e-6
    assert float(heat[heat > 0].min()) >= 0.7 * 0.675 - 1e-6


@pytest.fixture(scope="module")
def toolbar():  # type: ignore[no-untyped-def]
    """A dashboard's filters, tabs and graph nodes (drawn here), and each label's box."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (1200, 300), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 14)
    boxes = {}
    places = {
        "Filter runs (regex)": (20, 20),
        "Filter tags (regex)": (420, 20),
        "Runs": (20, 120),
        "Settings": (1000, 20),
        "batch_norm": (420, 200),
        "Resample noise": (820, 120),
        "View": (820, 20),
    }
    for label, (x, y) in places.items():
        w = draw.textlength(label, font=font)
        draw.text((x, y), label, fill=(30, 30, 30), font=font)
        boxes[label] = (x - 4, y - 4, x + w + 4, y + 22)
    return img, boxes


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        ("filter the runs by name", "Filter runs (regex)"),
        ("filter the charts by tag", "Filter tags (regex)"),
        ("inspect the batch normalisation layer", "batch_norm"),
    ],
)
def test_a_label_sharing_the_instructions_words_is_found(
    text_grounder, toolbar, instruction, label
) -> None:  # type: ignore[no-untyped-def]
    img, boxes = toolbar
    g = text_grounder.ground(img, instruction)
    box = boxes[label]
    assert not g.abstained and g.point is not None, g.anchors
    assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3], (g.point, g.anchors)


@pytest.mark.parametrize(
    "instruction",
    [
        "delete the selected run",
        "share the dashboard by email",
        "print the plot",
        "see which version of the viewer this is",  # "View" is not short for "viewer"
    ],
)
def test_one_shared_word_is_not_enough(text_grounder, toolbar, instruction) -> None:  # type: ignore[no-untyped-def]
    img, _ = toolbar
    assert text_grounder.ground(img, instruction).abstained
