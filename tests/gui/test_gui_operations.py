"""The GUI operations' argument readers: the instruction a person gives, without the asking
and the asides around it, and with every word that names the target."""

from __future__ import annotations

import pytest

from lemmata.operations import load_registry


@pytest.mark.parametrize(
    ("op", "text", "want"),
    [
        # leading request clauses: "could you please", a click-like verb the grounder does not
        # read itself ("tick"; it reads "click", "press", "select" and drops them)
        (
            "gui_act",
            "Could you please tick the 'Remember me' checkbox on login.html?",
            {"page": "login.html", "instruction": "the 'Remember me' checkbox"},
        ),
        (
            "gui_act",
            "please select the Dark theme option on prefs.html for me",
            {"page": "prefs.html", "instruction": "select the Dark theme option"},
        ),
        # the person's situation before the target, a question that only points back after it
        (
            "gui_ground",
            "I'm staring at mail.png and can't find the archive icon. Where is it?",
            {"image": "mail.png", "instruction": "the archive icon"},
        ),
        # a later sentence that gives the person's reasons
        (
            "gui_ground",
            "Locate the blue Export button in report.png. I need it before the demo.",
            {"image": "report.png", "instruction": "blue Export button"},
        ),
        # trailing asides
        (
            "gui_act",
            "On form.html, type 'Porto' in the town field and nothing else.",
            {
                "page": "form.html",
                "instruction": "the town field",
                "action": "type",
                "text": "Porto",
            },
        ),
        (
            "gui_act",
            "Expand the 'Shipping' section on faq.html by clicking it",
            {"page": "faq.html", "instruction": "the 'Shipping' section"},
        ),
        (
            "gui_act",
            "Click 'Check out' on cart.html, thanks",
            {"page": "cart.html", "instruction": "Click 'Check out'"},
        ),
        # "Screenshot:" labels the path; it is not a request to take one
        (
            "gui_ground",
            "Screenshot: app/home.webp. Where's the search icon?",
            {"image": "app/home.webp", "instruction": "search icon"},
        ),
    ],
)
def test_instructions_lose_the_asking_and_the_asides(
    op: str, text: str, want: dict[str, str]
) -> None:
    got = load_registry().get(op).arguments(text)
    assert got is not None, text
    for key, value in want.items():
        assert got.get(key) == value, (key, got)


@pytest.mark.parametrize(
    ("op", "text", "instruction"),
    [
        # words that look like asides or verbs but are the target's own
        ("gui_act", "Press Sign up now on landing.html please", "Press Sign up now"),
        ("gui_ground", "Where is the Thanks button in shot.png?", "Thanks button"),
        (
            "gui_act",
            "Could you click the button labelled Help me choose on shop.html?",
            "click the button labelled Help me choose",
        ),
    ],
)
def test_the_target_words_are_kept(op: str, text: str, instruction: str) -> None:
    got = load_registry().get(op).arguments(text)
    assert got is not None and got["instruction"] == instruction, got


def test_a_file_chore_on_a_screenshot_is_no_grounding() -> None:
    assert load_registry().get("gui_ground").arguments("screenshot the settings in app.png") is None
    assert load_registry().get("gui_ground").arguments("Resize shot.png to 800 px") is None
