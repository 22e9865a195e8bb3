"""Word boxes that tesseract stretched over an icon beside the word are cut back to the text."""

from __future__ import annotations

import pytest


def _label(icon: str, *, mono: bool = False) -> tuple:
    """A 260 x 40 white strip: an icon (a filled star, or none) 9 px before or after the word
    "Publish"; the word's box as tesseract gives it (icon included) and the text's own extent."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (260, 40), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSansMono.ttf" if mono else "DejaVuSans.ttf", 14)
    text_x = 60 if icon == "before" else 30
    draw.text((text_x, 12), "Publish", fill=(30, 30, 30), font=font)
    left, _, right, _ = draw.textbbox((text_x, 12), "Publish", font=font)
    star = [(7, 0), (9, 5), (14, 5), (10, 8), (12, 14), (7, 10), (2, 14), (4, 8), (0, 5), (5, 5)]
    if icon == "before":
        x0 = left - 9 - 14
        draw.polygon([(x0 + x, 13 + y) for x, y in star], fill=(200, 120, 0))
        box = (float(x0), 12.0, float(right), 28.0)
    elif icon == "after":
        x0 = right + 9
        draw.polygon([(x0 + x, 13 + y) for x, y in star], fill=(200, 120, 0))
        box = (float(left), 12.0, float(x0 + 15), 28.0)
    else:
        box = (float(left), 12.0, float(right), 28.0)
    return img, box, (left, right)


@pytest.mark.parametrize("icon", ["before", "after"])
def test_an_icon_glued_to_a_word_leaves_its_box(icon: str) -> None:
    from lemmata.gui.ocr import OcrResult, Word, trim_glued_icons

    img, box, (left, right) = _label(icon)
    (word,) = trim_glued_icons(img, OcrResult([Word("Publish", box, 0.9, 0)])).words
    assert word.text == "Publish" and word.box[1] == box[1] and word.box[3] == box[3]
    assert abs(word.box[0] - left) <= 2 and abs(word.box[2] - right) <= 2, (word.box, left, right)


@pytest.mark.parametrize("mono", [False, True])
def test_a_plain_word_keeps_its_box(mono: bool) -> None:
    from lemmata.gui.ocr import OcrResult, Word, trim_glued_icons

    img, box, _ = _label("none", mono=mono)
    words = [Word("Publish", box, 0.9, 0), Word("blank", (200.0, 5.0, 250.0, 20.0), 0.5, 0)]
    assert trim_glued_icons(img, OcrResult(words)).words == words


def test_a_label_read_in_two_lines_is_one_line() -> None:
    """Tesseract may put "View ... SQL" in one line and "and edit" in another (two passes or
    blocks): on one row and meeting there, they are one line, left to right; a line on the
    next row, or far along the same row, stays apart."""
    from lemmata.gui.ocr import OcrResult, Word

    words = [
        Word("View", (35.0, 278.0, 72.0, 290.0), 0.95, 4),
        Word("SQL", (150.0, 278.0, 180.0, 292.0), 0.96, 4),
        Word("and", (78.0, 278.0, 106.0, 290.0), 0.95, 9),
        Word("edit", (114.0, 278.0, 144.0, 290.0), 0.95, 9),
        Word("Apply", (25.0, 240.0, 69.0, 254.0), 0.9, 2),
        Word("Poetry", (600.0, 278.0, 650.0, 290.0), 0.9, 7),
    ]
    lines = [" ".join(w.text for w in line) for line in OcrResult(words).lines()]
    assert "View and edit SQL" in lines
    assert "Apply" in lines and "Poetry" in lines and len(lines) == 3


def test_a_button_label_lost_by_the_sparse_reading_is_read_again() -> None:
    """Small white labels on coloured plates and an outlined button ("Run SQL", "Apply",
    "Format SQL"): after reading, each button's label is there, whole, inside its button."""
    import shutil

    from PIL import Image, ImageDraw, ImageFont

    from lemmata.gui.ocr import OcrEngine

    if shutil.which("tesseract") is None:
        pytest.skip("needs tesseract: apt-get install tesseract-ocr")
    img = Image.new("RGB", (700, 120), (248, 249, 250))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans.ttf", 11)
    buttons = {"Format SQL": (16, 40, 125, 70), "Run SQL": (130, 40, 216, 70)}
    draw.rounded_rectangle(buttons["Format SQL"], 3, outline=(0, 123, 255), fill="white")
    draw.rounded_rectangle(buttons["Run SQL"], 3, fill=(0, 123, 255))
    draw.text((30, 49), "Format SQL", fill=(0, 123, 255), font=font)
    draw.text((146, 49), "Run SQL", fill="white", font=font)
    draw.text((260, 49), "This data as json, CSV", fill=(20, 20, 20), font=font)
    words = OcrEngine().read(img).words
    for label, (x1, y1, x2, y2) in buttons.items():
        inside = [
            w.text
            for w in words
            if x1 <= w.box[0] and w.box[2] <= x2 and y1 <= w.box[1] and w.box[3] <= y2
        ]
        assert " ".join(inside) == label, (label, [(w.text, w.box) for w in words])
