"""An action done in a titled card finds the control in that card (real tesseract for the
titles; the icons are read by a stand-in anchor that, like the icon encoder on identical glyphs,
scores every card's button alike)."""

from __future__ import annotations

import shutil

import pytest

from lemmata.gui.anchors import Candidate, Screen
from lemmata.gui.instruction import Query, parse_instruction

TITLES = ("train loss", "eval loss", "learning rate")


class _SameIcons:
    """Every card's pin and expand buttons, each scored alike for the action it draws."""

    name = "icons"

    def __init__(self, buttons: dict[str, list[tuple[float, float, float, float]]]) -> None:
        self.buttons = buttons

    def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
        verb = query.verb.split()[0] if query.verb else ""
        return [Candidate(b, 0.88, verb, self.name, "icon") for b in self.buttons.get(verb, [])]

    def heatmap(self, image, instruction):  # type: ignore[no-untyped-def]
        raise AssertionError("the grounder draws the candidates itself")


@pytest.fixture(scope="module")
def dashboard():  # type: ignore[no-untyped-def]
    """Three chart cards (drawn here), each titled on the left with pin and expand buttons on
    the right of its title row; the buttons' boxes per action, per card."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (1300, 420), (245, 245, 245))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 15)
    buttons: dict[str, list[tuple[float, float, float, float]]] = {"pin": [], "expand": []}
    cards = {}
    for i, title in enumerate(TITLES):
        x = 20 + i * 420
        draw.rectangle((x, 20, x + 400, 400), outline=(200, 200, 200), fill="white")
        draw.text((x + 14, 34), title, fill=(30, 30, 30), font=font)
        pin = (x + 320.0, 30.0, x + 344.0, 54.0)
        expand = (x + 356.0, 30.0, x + 380.0, 54.0)
        draw.ellipse(pin, outline=(90, 90, 90), width=2)
        draw.rectangle(expand, outline=(90, 90, 90), width=2)
        buttons["pin"].append(pin)
        buttons["expand"].append(expand)
        cards[title] = {"pin": pin, "expand": expand}
    return img, buttons, cards


@pytest.fixture(scope="module")
def grounder(dashboard):  # type: ignore[no-untyped-def]
    if shutil.which("tesseract") is None:
        pytest.skip("needs tesseract: apt-get install tesseract-ocr")
    from lemmata.gui.ground import Grounder

    text, _ = Grounder.offline_anchors(icons="glyphs")
    return Grounder([text, _SameIcons(dashboard[1])])


@pytest.mark.parametrize(
    ("instruction", "title", "button"),
    [
        ("pin the eval loss chart to the top", "eval loss", "pin"),
        ("expand the learning rate chart to full screen", "learning rate", "expand"),
        ("pin the train loss card", "train loss", "pin"),
    ],
)
def test_the_button_in_the_titled_card_is_chosen(
    grounder, dashboard, instruction, title, button
) -> None:  # type: ignore[no-untyped-def]
    img, _, cards = dashboard
    assert parse_instruction(instruction).card == title
    g = grounder.ground(img, instruction)
    box = cards[title][button]
    assert not g.abstained and g.point is not None, g.anchors
    assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3], (g.point, g.anchors)


def test_a_card_not_on_the_screen_changes_nothing(grounder, dashboard) -> None:  # type: ignore[no-untyped-def]
    """No "accuracy" card: the title is not found, and every card's pin stays alike (no card's
    button is taken for the absent one's)."""
    img, _, _ = dashboard
    g = grounder.ground(img, "pin the accuracy chart to the top")
    assert g.anchors["icons"]["score"] == pytest.approx(0.88, abs=0.01)
    assert not g.anchors["icons"]["single_peak"]
