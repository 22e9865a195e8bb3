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


@pytest.fixture(scope="module")
def menu():  # type: ignore[no-untyped-def]
    """An application's open main menu (drawn here): commands with their shortcuts set right, a
    filter bar of card kinds above it; each label's box."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (900, 460), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 14)
    draw.rectangle((0, 0, 260, 460), fill=(236, 236, 236))
    boxes = {}
    rows = [
        ("Open...", "Ctrl+O"),
        ("Export as PNG", "Ctrl+Shift+E"),
        ("Export as SVG", "Ctrl+Alt+E"),
        ("Find...", "Ctrl+F"),
        ("Show Horizontal", "Ctrl+K"),
        ("Zoom In", "Shift+Up"),
        ("Report Issue", ""),
        ("About Viewer", ""),
    ]
    for i, (label, keys) in enumerate(rows):
        y = 20 + i * 34
        draw.text((14, y), label, fill=(20, 20, 20), font=font)
        draw.text(
            (250 - draw.textlength(keys, font=font), y), keys, fill=(120, 120, 120), font=font
        )
        boxes[label] = (0, y - 8, 260, y + 24)
    for i, label in enumerate(["All", "Scalars", "Image", "Histogram", "Text"]):
        x = 320 + i * 110
        draw.rectangle((x, 20, x + 100, 48), outline=(190, 190, 190), fill="white")
        draw.text(
            (x + 50 - draw.textlength(label, font=font) / 2, 26),
            label,
            fill=(20, 20, 20),
            font=font,
        )
        boxes[label] = (x, 20, x + 100, 48)
    return img, boxes


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        # menu conventions: the command that applications name alike
        ("search for a node", "Find..."),
        ("load a different model file", "Open..."),
        ("see which version of the viewer this is", "About Viewer"),
        ("report a bug in the viewer", "Report Issue"),
        ("lay the graph out from left to right", "Show Horizontal"),
        ("export the graph as a vector image", "Export as SVG"),
        ("save the graph as a PNG picture", "Export as PNG"),
        # a filter named by the kind of card it shows, and an object described by a clause
        ("show only the image cards", "Image"),
        ("read the text that the runs logged", "Text"),
    ],
)
def test_menu_commands_are_found_by_convention(text_grounder, menu, instruction, label) -> None:  # type: ignore[no-untyped-def]
    img, boxes = menu
    g = text_grounder.ground(img, instruction)
    box = boxes[label]
    assert not g.abstained and g.point is not None, g.anchors
    assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3], (g.point, g.anchors)


@pytest.mark.parametrize(
    "instruction", ["sign out of my account", "open the preferences", "quit the application"]
)
def test_a_convention_whose_command_is_absent_is_refused(text_grounder, menu, instruction) -> None:  # type: ignore[no-untyped-def]
    img, _ = menu
    assert text_grounder.ground(img, instruction).abstained


def test_a_convention_does_not_take_a_command_for_something_else(text_grounder, toolbar) -> None:  # type: ignore[no-untyped-def]
    """ "search for a node" on a screen with no Find or Search: refused, not the nearest label."""
    img, _ = toolbar
    assert text_grounder.ground(img, "search for a node").abstained


@pytest.fixture(scope="module")
def facets():  # type: ignore[no-untyped-def]
    """A database browser's page (drawn here): a title, a facet list of genres with their
    counts, and a list of tables; each label's box."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (900, 420), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 15)
    big = ImageFont.truetype("DejaVuSans-Bold.ttf", 26)
    draw.text((20, 14), "library", fill=(20, 20, 20), font=big)
    boxes = {}
    rows = [("genre", 70)] + [
        (g, 100 + 26 * i) for i, g in enumerate(["Crime", "Poetry", "Travel"])
    ]
    rows += [("Tables", 220)] + [(t, 250 + 30 * i) for i, t in enumerate(["members", "loans"])]
    for label, y in rows:
        heading = label in ("genre", "Tables")
        x = 20 if heading else 36
        draw.text((x, y), label, fill=(20, 20, 20) if heading else (30, 90, 160), font=font)
        w = draw.textlength(label, font=font)
        if not heading:
            draw.text((x + w + 8, y), str(len(label) * 3), fill=(20, 20, 20), font=font)
        boxes[label] = (x - 2, y - 2, x + w + 2, y + 20)
    return img, boxes


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        ("show only the crime novels", "Crime"),  # "novels" is said by nothing on the screen
        ("open the members table", "members"),  # "table" is the kind; going there is a click
    ],
)
def test_a_short_label_is_found_among_the_users_own_words(
    text_grounder, facets, instruction, label
) -> None:  # type: ignore[no-untyped-def]
    img, boxes = facets
    g = text_grounder.ground(img, instruction)
    box = boxes[label]
    assert not g.abstained and g.point is not None, g.anchors
    assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3], (g.point, g.anchors)


@pytest.mark.parametrize("instruction", ["delete the members table", "print the travel guides"])
def test_an_action_no_label_says_on_a_named_thing_is_refused(
    text_grounder, facets, instruction
) -> None:  # type: ignore[no-untyped-def]
    img, _ = facets
    assert text_grounder.ground(img, instruction).abstained


@pytest.fixture(scope="module")
def editor():  # type: ignore[no-untyped-def]
    """A query page (drawn here): a title, a heading with a 'hide' link, two buttons and a
    filter bar's two labels that open with the same verb; each label's box."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (900, 300), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 15)
    big = ImageFont.truetype("DejaVuSans-Bold.ttf", 26)
    draw.text((20, 14), "overdue", fill=(20, 20, 20), font=big)
    boxes = {}
    places = {
        "Custom SQL query returning 7 rows": (20, 70),
        "hide": (330, 70),
        "Run SQL": (20, 130),
        "Filter runs (regex)": (20, 220),
        "Filter tags (regex)": (420, 220),
    }
    for label, (x, y) in places.items():
        w = draw.textlength(label, font=font)
        draw.text((x, y), label, fill=(30, 30, 30), font=font)
        boxes[label] = (x - 4, y - 4, x + w + 4, y + 22)
    return img, boxes


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        ("run the overdue query", "Run SQL"),  # the button says the action, the title the object
        ("hide the SQL editor", "hide"),
        ("filter the charts by tag", "Filter tags (regex)"),  # not the other 'Filter ...'
    ],
)
def test_a_short_label_saying_the_action_is_its_control(
    text_grounder, editor, instruction, label
) -> None:  # type: ignore[no-untyped-def]
    img, boxes = editor
    g = text_grounder.ground(img, instruction)
    box = boxes[label]
    assert not g.abstained and g.point is not None, g.anchors
    assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3], (g.point, g.anchors)
