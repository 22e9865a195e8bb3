from __future__ import annotations

import pytest

from lemmata.llm.json_extract import JSONNotFound, extract_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Here you go:\n```json\n{"a": [1, 2], "b": "x"}\n```\nDone.', {"a": [1, 2], "b": "x"}),
        ('The answer is {"a": 1, "b": {"c": 2}} as requested.', {"a": 1, "b": {"c": 2}}),
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ("{'a': 'single', 'ok': True, 'none': None}", {"a": "single", "ok": True, "none": None}),
        ('noise {"s": "a } inside a string {"} tail', {"s": "a } inside a string {"}),
        ('first is not json {oops} then {"real": 1}', {"real": 1}),
        ("\u201c\u201d" + "{\u201ckey\u201d: 1}", {"key": 1}),
    ],
)
def test_extracts_the_json_object(text: str, expected: object) -> None:
    assert extract_json(text, want=dict) == expected


def test_arrays_when_asked() -> None:
    assert extract_json("list: [1, 2, 3]", want=list) == [1, 2, 3]
    # An object is skipped when an array is wanted.
    assert extract_json('{"a": 1} and [4]', want=list) == [4]


@pytest.mark.parametrize("text", ["", "   ", "no json here", '{"a": 1', "[1, 2"])
def test_reports_missing_json(text: str) -> None:
    with pytest.raises(JSONNotFound):
        extract_json(text, want=dict)


def test_never_evaluates_code() -> None:
    with pytest.raises(JSONNotFound):
        extract_json("{__import__('os').system('echo hi'): 1}", want=dict)
