"""Instructions worded as actions: the subject a label would show, and the action an icon means."""

from __future__ import annotations

import pytest

from lemmata.gui.instruction import parse_instruction


@pytest.mark.parametrize(
    ("instruction", "subject"),
    [
        ("create a new text file", "text file"),
        ("start a terminal", "terminal"),
        ("open a new notebook", "notebook"),
        ("add a new row", "row"),
        ("switch the kernel", "kernel"),
        # a phrasal action's particle is no part of the label, nor is where the label leads
        ("go to the checkout", "checkout"),
        ("go to the scalars dashboard", "scalars"),
        ("click to leave full screen", "full screen"),
        # what a filter shows is named by its kind: the label says the kind's name
        ("show only the image cards", "image"),
        # a relative clause describes the object; looking at a thing names it
        ("read the text that the runs logged", "text"),
        ("look at the final linear layer", "final linear layer"),
        # nothing of substance, or only the current thing: no subject
        ("click Sign in", ""),
        ("close this panel", ""),
        ("delete the selection", ""),
        ("read this text", ""),
        ("click Save", ""),
    ],
)
def test_actions_name_the_subject_a_label_shows(instruction: str, subject: str) -> None:
    assert parse_instruction(instruction).subject == subject


def test_the_action_is_kept_for_icons_without_clicking_words() -> None:
    q = parse_instruction("click to delete the selection")
    assert q.phrase == "delete selection"
    assert q.action_text == "delete the selection"
    assert parse_instruction("open the settings").action_text == "open the settings"
    # "the gear icon": the phrase says it all
    assert parse_instruction("click the gear icon").action_text == ""


def test_quoted_labels_stay_literal() -> None:
    q = parse_instruction('click the "Create new file" button')
    assert (q.phrase, q.kind, q.subject, q.action_text) == ("Create new file", "text", "", "")


def test_relations_are_unchanged() -> None:
    q = parse_instruction("click the icon left of Save")
    assert q.relation == ("left", "Save") and q.kind == "icon" and q.phrase == ""


@pytest.mark.parametrize(
    ("instruction", "verb"),
    [
        ("reload the runs", "reload"),
        ("zoom in on the graph", "zoom in"),
        ("turn the tooltips on hover off", "turn off"),
        ("switch to the dark theme", "switch to"),
        ("undo my change to the card width", "undo"),
        ("click to delete the selection", "delete"),
        # not surely a verb, or nothing but the verb: no bare action
        ("select the max pooling node", ""),
        ("click Save", ""),
        ("refresh", ""),
    ],
)
def test_the_bare_action_drops_its_object(instruction: str, verb: str) -> None:
    assert parse_instruction(instruction).verb == verb


@pytest.mark.parametrize(
    ("instruction", "verb_phrase"),
    [
        ("expand the eval loss chart to full screen", "expand to full screen"),
        ("download the plot as an image", "download as an image"),
        # nothing after the object, no object, or a verb that took the closing particle
        ("reload the runs", ""),
        ("zoom in on the graph", ""),
        ("turn the tooltips on hover off", ""),
    ],
)
def test_the_action_keeps_what_follows_its_object(instruction: str, verb_phrase: str) -> None:
    assert parse_instruction(instruction).verb_phrase == verb_phrase
