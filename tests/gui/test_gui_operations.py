"""The GUI operations' argument readers: the instruction a person gives, without the asking
and the asides around it, and with every word that names the target."""

from __future__ import annotations

import pytest

from lemmata.gui.instruction import parse_instruction
from lemmata.operations import load_registry


def _reads(instruction: str) -> tuple[object, ...]:
    """What the grounder looks for: its reading of the instruction (so "click the Save button"
    and "Save button" are one target, "please find Save" another)."""
    q = parse_instruction(instruction)
    return q.phrase.lower(), q.kind, q.relation


def _same(key: str, got: object, want: object) -> bool:
    if key == "instruction" and isinstance(got, str) and isinstance(want, str):
        return _reads(got) == _reads(want)
    return got == want


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
        assert _same(key, got.get(key), value), (key, got)


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
    assert got is not None and _same("instruction", got["instruction"], instruction), got


@pytest.mark.parametrize(
    ("op", "text", "want"),
    [
        # context first, the request in a later sentence; the words naming the file go with
        # its path
        (
            "gui_ground",
            "Our testers never notice the help link. The screenshot is at qa/step3.png, "
            "could you locate the Get support link?",
            {"image": "qa/step3.png", "instruction": "Get support link"},
        ),
        # a clause that says where the screenshot came from; another person cannot find it
        (
            "gui_ground",
            "My dad forwarded me this image, dad_phone.png, he cant find the flashlight toggle. "
            "Where is it?",
            {"image": "dad_phone.png", "instruction": "the flashlight toggle"},
        ),
        # labelled fields, one per line
        (
            "gui_ground",
            "image: shots/calendar.png\ninstruction: the Today button",
            {"image": "shots/calendar.png", "instruction": "the Today button"},
        ),
        ("gui_ground", "pls find the trash icon in inbox.png", {"instruction": "trash icon"}),
        # the page named as a page before its path
        (
            "gui_act",
            "web page at ./site/contact.html - press Send",
            {"page": "./site/contact.html", "instruction": "press Send"},
        ),
        # text to type, unquoted, after "fill ... with" or after the target
        (
            "gui_act",
            "fill the city field on forms/address.html with Lisbon",
            {"instruction": "city field", "action": "type", "text": "Lisbon"},
        ),
        (
            "gui_act",
            "Open notes.html and in the title box type: Groceries for Sunday",
            {"instruction": "title box", "action": "type", "text": "Groceries for Sunday"},
        ),
    ],
)
def test_instructions_are_read_from_context_labels_and_typed_text(
    op: str, text: str, want: dict[str, str]
) -> None:
    got = load_registry().get(op).arguments(text)
    assert got is not None, text
    for key, value in want.items():
        assert _same(key, got.get(key), value), (key, got)


def test_a_file_chore_on_a_screenshot_is_no_grounding() -> None:
    assert load_registry().get("gui_ground").arguments("screenshot the settings in app.png") is None
    assert load_registry().get("gui_ground").arguments("Resize shot.png to 800 px") is None


@pytest.mark.parametrize(
    ("op", "text", "want"),
    [
        # a Windows path, drive letter and backslashes, is the screenshot's whole path
        (
            "gui_ground",
            r"Can you check D:\shots\march\login.png and show me where the Sign up link is?",
            {"image": r"D:\shots\march\login.png", "instruction": "Sign up link"},
        ),
        # the person says they have the file, then what they cannot find; "Help?" is no target
        (
            "gui_ground",
            "I have a screenshot at out/shop.png and I really can't find the basket icon. Help?",
            {"image": "out/shop.png", "instruction": "the basket icon"},
        ),
        # the path as a keyword argument, the verb as a label
        (
            "gui_ground",
            "ground: 'the red Delete button' image=admin.png",
            {"image": "admin.png", "instruction": "'the red Delete button'"},
        ),
        # where an output goes is an argument, not part of what to find
        (
            "gui_ground",
            "make a heatmap for 'the search field' on home.png and save the heatmap to maps/h.png",
            {"image": "home.png", "instruction": "'the search field'", "heatmap": "maps/h.png"},
        ),
        (
            "gui_act",
            "press 'Continue' in flow/a.html and save a screenshot to shots/b.png",
            {"page": "flow/a.html", "instruction": "press 'Continue'", "screenshot": "shots/b.png"},
        ),
        # the page's HTML pasted into the request is the page
        (
            "gui_act",
            'Press the link on this page: <p><a href="#">More</a></p>',
            {"page": '<p><a href="#">More</a></p>', "instruction": "Press the link"},
        ),
        # "act on X:" labels the page; the typing after it is read as typing
        (
            "gui_act",
            "act on signup.html: type 1990 into the birth year field",
            {"instruction": "birth year field", "action": "type", "text": "1990"},
        ),
        # an aside after a comma: the person's guess, or why they ask
        (
            "gui_act",
            "click 'Dismiss' on the page at ./a/b.html, it blocks the whole screen",
            {"page": "./a/b.html", "instruction": "click 'Dismiss'"},
        ),
        (
            "gui_ground",
            "Here is the screen (x/y.png). The one I want is the blue cloud icon, sync I think",
            {"image": "x/y.png", "instruction": "the blue cloud icon"},
        ),
    ],
)
def test_instructions_in_the_forms_people_write_paths_and_outputs(
    op: str, text: str, want: dict[str, str]
) -> None:
    got = load_registry().get(op).arguments(text)
    assert got is not None, text
    for key, value in want.items():
        assert _same(key, got.get(key), value), (key, got)


@pytest.mark.parametrize(
    ("op", "text", "want"),
    [
        # the target is the phrase the pointing words point at, whatever asks around them
        (
            "gui_ground",
            "Hey, on my_shot.png could you tell me where the little bell icon for "
            "notifications is?",
            {"image": "my_shot.png", "instruction": "little bell icon for notifications"},
        ),
        (
            "gui_ground",
            "Looking at screens/cart.png: which element is the 'Proceed to checkout' button?",
            {"image": "screens/cart.png", "instruction": "'Proceed to checkout' button"},
        ),
        (
            "gui_ground",
            "I've been clicking around forever in admin.png, where do I go to change my password?",
            {"image": "admin.png", "instruction": "change my password"},
        ),
        (
            "gui_ground",
            "Point out the 'Unsubscribe' link near the bottom of newsletter.jpg",
            {"image": "newsletter.jpg", "instruction": "'Unsubscribe' link near the bottom"},
        ),
        (
            "gui_ground",
            "which pixel is the 'Help' badge at in E:/captures/app.webp",
            {"image": "E:/captures/app.webp", "instruction": "'Help' badge"},
        ),
        # no pointing words: the phrase headed by what the element is, or its quoted label
        (
            "gui_ground",
            "In bug/7.png the 'Save draft' button looks greyed out. Where is it exactly?",
            {"image": "bug/7.png", "instruction": "'Save draft' button"},
        ),
        (
            "gui_ground",
            'job: grounding | screenshot: ui/a.png | instruction="the gear icon"',
            {"image": "ui/a.png", "instruction": "gear icon"},
        ),
        (
            "gui_act",
            "On shop.html, would you mind hitting the 'Add to basket' button for me?",
            {"page": "shop.html", "instruction": "'Add to basket' button"},
        ),
        (
            "gui_act",
            "in settings/privacy.html turn off the 'Share usage data' switch",
            {"page": "settings/privacy.html", "instruction": "'Share usage data' switch"},
        ),
        (
            "gui_act",
            "Could you go to faq.html and expand the section about refunds?",
            {"page": "faq.html", "instruction": "section about refunds"},
        ),
        # the viewport asked for is an argument, not part of the target
        (
            "gui_act",
            "press Menu on m.html at 390x844",
            {"page": "m.html", "instruction": "Menu", "width": 390, "height": 844},
        ),
    ],
)
def test_the_target_is_read_as_the_phrase_pointed_at(
    op: str, text: str, want: dict[str, object]
) -> None:
    got = load_registry().get(op).arguments(text)
    assert got is not None, text
    for key, value in want.items():
        assert _same(key, got.get(key), value), (key, got)
