"""Which control the grounder takes when the instruction names its label or only its object:
one glyph drawn beside several labels (a reset arrow under each slider), an action that is the
name of an icon ("reload the runs") against a label that names only what it acts on, and a name
the action concerns ("get help with TensorBoard"). Real tesseract reads the labels; the icons
are read by a stand-in anchor that, like the icon encoder on identical glyphs, scores every
instance of a glyph alike."""

from __future__ import annotations

import shutil

import pytest

from lemmata.gui.anchors import Candidate, Screen, names_an_icon
from lemmata.gui.instruction import Query, concerned_name, parse_instruction

Box = tuple[float, float, float, float]


class _Glyphs:
    """Each glyph's instances, scored alike for an instruction that mentions its concept."""

    name = "icons"

    def __init__(self, glyphs: dict[str, list[Box]], score: float = 0.675) -> None:
        self.glyphs, self.score = glyphs, score

    def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
        words = query.instruction.lower()
        return [
            Candidate(b, self.score, concept, self.name, "icon")
            for concept, boxes in self.glyphs.items()
            if any(w in words for w in concept.split("|"))
            for b in boxes
        ]

    def heatmap(self, image, instruction):  # type: ignore[no-untyped-def]
        raise AssertionError("the grounder draws the candidates itself")


def _inside(point: tuple[float, float] | None, box: Box) -> bool:
    return point is not None and box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


@pytest.fixture(scope="module")
def text_anchor():  # type: ignore[no-untyped-def]
    if shutil.which("tesseract") is None:
        pytest.skip("needs tesseract: apt-get install tesseract-ocr")
    from lemmata.gui.ground import Grounder

    text, _ = Grounder.offline_anchors(icons="glyphs")
    return text


@pytest.fixture(scope="module")
def settings_pane():  # type: ignore[no-untyped-def]
    """A settings pane drawn here: a header row with the app's name on the left and help,
    reload buttons on the right, a "Runs" column header, and three sliders, each labelled
    above and with a reset arrow at its right end."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (900, 520), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 15)
    draw.rectangle((0, 0, 900, 48), fill=(245, 124, 0))
    draw.text((20, 14), "TensorBoard", fill="white", font=font)
    help_top, reload_top = (830.0, 12.0, 854.0, 36.0), (790.0, 12.0, 814.0, 36.0)
    draw.ellipse(help_top, outline="white", width=2)
    draw.arc(reload_top, 30, 330, fill="white", width=2)
    draw.text((20, 70), "Runs", fill=(30, 30, 30), font=font)
    resets: dict[str, Box] = {}
    for i, label in enumerate(("Card Width", "Brightness", "Contrast")):
        y = 150 + i * 110
        draw.text((500, y), label, fill=(30, 30, 30), font=font)
        draw.line((500, y + 40, 780, y + 40), fill=(245, 124, 0), width=3)
        box = (800.0, y + 28.0, 824.0, y + 52.0)
        draw.arc(box, 60, 360, fill=(90, 90, 90), width=2)
        resets[label] = box
    # a help mark beside an option lower down, as settings panes have
    help_option = (860.0, 470.0, 880.0, 490.0)
    draw.ellipse(help_option, outline=(90, 90, 90), width=2)
    draw.text((500, 470), "Enable saving pins", fill=(30, 30, 30), font=font)
    glyphs = {
        "reset|restore|back to normal": list(resets.values()),
        "help": [help_top, help_option],
        "reload": [reload_top],
    }
    return img, glyphs, {"resets": resets, "help": help_top, "reload": reload_top}


@pytest.fixture(scope="module")
def grounder(text_anchor, settings_pane):  # type: ignore[no-untyped-def]
    from lemmata.gui.ground import Grounder

    return Grounder([text_anchor, _Glyphs(settings_pane[1])])


@pytest.mark.parametrize(
    ("instruction", "label"),
    [
        ("restore the default brightness", "Brightness"),
        # the arrow above "Contrast" (Brightness's) is nearer by a straight gap, not by rows
        ("put the contrast back to normal", "Contrast"),
    ],
)
def test_a_repeated_glyph_is_taken_beside_the_label_the_instruction_names(
    grounder, settings_pane, instruction, label
) -> None:  # type: ignore[no-untyped-def]
    img, _, boxes = settings_pane
    g = grounder.ground(img, instruction)
    assert not g.abstained, g.anchors
    assert _inside(g.point, boxes["resets"][label]), (g.point, g.anchors)


def test_a_repeated_glyph_with_no_label_named_stays_undecided(grounder, settings_pane) -> None:  # type: ignore[no-untyped-def]
    """ "reset everything" names no label on the screen: no arrow is preferred over another."""
    img, _, _ = settings_pane
    g = grounder.ground(img, "reset everything")
    assert not g.anchors["icons"]["single_peak"]


def test_an_action_named_by_an_icon_beats_the_label_of_its_object(grounder, settings_pane) -> None:  # type: ignore[no-untyped-def]
    """ "reload the runs": the "Runs" header is what is reloaded; the reload button does it."""
    img, _, boxes = settings_pane
    g = grounder.ground(img, "reload the runs")
    assert _inside(g.point, boxes["reload"]), (g.point, g.anchors)


def test_an_action_no_glyph_draws_still_takes_the_label_of_its_object(text_anchor) -> None:  # type: ignore[no-untyped-def]
    """ "create a new text file" on a launcher card labelled "Text File", beside a plus button
    that the icon side scores alike: "create" is no icon's name, so the card wins."""
    from PIL import Image, ImageDraw, ImageFont

    from lemmata.gui.ground import Grounder

    img = Image.new("RGB", (700, 300), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 16)
    draw.rectangle((300, 100, 460, 220), outline=(160, 160, 160), width=2)
    draw.text((335, 190), "Text File", fill=(30, 30, 30), font=font)
    plus = (20.0, 20.0, 44.0, 44.0)
    draw.line((32, 22, 32, 42), fill=(60, 60, 60), width=2)
    draw.line((22, 32, 42, 32), fill=(60, 60, 60), width=2)
    g = Grounder([text_anchor, _Glyphs({"create": [plus]})]).ground(img, "create a new text file")
    assert g.point is not None and 300 <= g.point[0] <= 460 and 100 <= g.point[1] <= 220, g.anchors


def test_the_name_an_action_concerns_is_not_where_to_click(grounder, settings_pane) -> None:  # type: ignore[no-untyped-def]
    """ "get help with TensorBoard": the help mark in TensorBoard's header row, not the app's
    title and not the help mark beside an option."""
    img, _, boxes = settings_pane
    g = grounder.ground(img, "get help with TensorBoard")
    assert _inside(g.point, boxes["help"]), (g.point, g.anchors)


def test_what_an_instruction_concerns_and_which_verbs_are_icons() -> None:
    assert concerned_name("get help with TensorBoard") == "TensorBoard"
    assert concerned_name("learn more about Bokeh") == "Bokeh"
    assert concerned_name("reload the runs") == ""
    assert parse_instruction("get help with TensorBoard").concerns == "TensorBoard"
    assert names_an_icon("reload") and names_an_icon("undo") and names_an_icon("zoom in")
    assert not names_an_icon("create") and not names_an_icon("go to") and not names_an_icon("")


def test_zooming_in_rereads_the_label_found_and_does_not_move_to_its_neighbour() -> None:
    """The 3x re-read of a small label ("Export as ..." in a menu) that reads the row below
    ("Export as SVG") better keeps the label it was asked to re-read."""
    from PIL import Image

    from lemmata.gui.anchors import TextAnchor
    from lemmata.gui.ground import Grounder

    found: Box = (13.0, 93.0, 52.0, 105.0)
    x0, y0 = 0.0, (found[1] + found[3]) / 2 - 60  # the zoomed region's corner

    class _Reread(TextAnchor):
        """At 3x, the row below reads better than the label found."""

        def __init__(self) -> None:
            super().__init__(None)  # type: ignore[arg-type]

        def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
            def at3(box: Box, dy: float) -> Box:
                return (
                    3 * (box[0] - x0),
                    3 * (box[1] + dy - y0),
                    3 * (box[2] - x0),
                    3 * (box[3] + dy - y0),
                )

            return [
                Candidate(at3(found, 23), 0.9, "export as svg", self.name, "text"),
                Candidate(at3(found, 0), 0.72, "export as", self.name, "text"),
            ]

    g = Grounder([_Reread()])
    img = Image.new("RGB", (1366, 768), "white")
    best = Candidate(found, 0.69, "export", "ocr", "text")
    z = g._zoom(g.screen(img), parse_instruction("save the graph as a PNG picture"), best)
    assert z is not None and z.score == pytest.approx(0.72)
    assert abs(z.box[1] - found[1]) < 1 and abs(z.box[3] - found[3]) < 1, z
