"""The icon encoder: training on a tiny set (fast, 1 thread), inference, and its weights file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _icons import write_package

from lemmata.gui.icon_library import IconSetSource, library_from_entries, read_set
from lemmata.gui.icon_model import (
    INPUT,
    IconModelError,
    TrainConfig,
    augment,
    ink_square,
    load_encoder,
    prepare_crops,
    train,
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    from lemmata.embeddings import get_embedder
    from lemmata.settings import Settings

    root = tmp_path_factory.mktemp("tiny")
    lib = library_from_entries(read_set(IconSetSource("tiny", "tiny"), write_package(root)), {}, 48)
    names = sorted(set(lib.concepts))
    text_of = dict(zip(lib.concepts, lib.texts, strict=True))
    embedder = get_embedder(Settings.load())
    vectors = np.asarray(embedder.embed([text_of[c] for c in names]), dtype=np.float32)
    return lib, names, vectors


def _accuracy(encoder, lib, names, vectors, seed: int) -> float:  # type: ignore[no-untyped-def]
    import torch

    x = augment(
        torch.from_numpy(np.repeat(lib.images, 4, axis=0).astype(np.float32) / 255)[:, None],
        torch.Generator().manual_seed(seed),
    )
    pred = (encoder.images(x[:, 0].numpy()) @ encoder.texts(vectors).T).argmax(1)
    truth = np.repeat([names.index(c) for c in lib.concepts], 4)
    return float((pred == truth).mean())


def test_training_brings_each_glyph_to_its_concept_text(tiny: tuple, tmp_path: Path) -> None:
    lib, names, vectors = tiny
    before = train(lib, vectors, TrainConfig(steps=1, concepts_per_batch=4, lr=1e-9))
    encoder = train(lib, vectors, TrainConfig(steps=80, concepts_per_batch=4, lr=3e-3))
    assert encoder.meta["steps"] == 80 and encoder.meta["concepts"] == len(names)
    acc = _accuracy(encoder, lib, names, vectors, seed=7)  # degraded views it never drew
    assert acc >= 0.75, acc
    assert acc > _accuracy(before, lib, names, vectors, seed=7)
    # the weights round-trip through the file (float16 on disk: close, not bit-equal)
    path = tmp_path / "enc.pt"
    encoder.save(path)
    loaded = load_encoder(path)
    squares = lib.images[:3].astype(np.float32) / 255
    squares = np.stack([ink_square(s) for s in squares])
    assert np.allclose(loaded.images(squares), encoder.images(squares), atol=0.02)
    assert path.stat().st_size < 3_000_000
    assert loaded.prototypes is None  # none were computed for this one


def test_prototypes_classify_degraded_glyphs_and_travel_with_the_weights(
    tiny: tuple, tmp_path: Path
) -> None:
    import torch

    from lemmata.gui.icon_train import prototypes

    lib, names, vectors = tiny
    encoder = train(lib, vectors, TrainConfig(steps=60, concepts_per_batch=4, lr=3e-3))
    found, protos = prototypes(encoder, lib, [*names, "not-in-the-library"])
    assert found == names and protos.shape == (len(names), encoder.net.head.out_features)
    assert np.allclose(np.linalg.norm(protos, axis=1), 1.0, atol=1e-4)
    x = augment(
        torch.from_numpy(np.repeat(lib.images, 4, axis=0).astype(np.float32) / 255)[:, None],
        torch.Generator().manual_seed(11),
    )
    pred = (encoder.images(x[:, 0].numpy()) @ protos.T).argmax(1)
    truth = np.repeat([names.index(c) for c in lib.concepts], 4)
    assert (pred == truth).mean() >= 0.75
    encoder.prototypes = (found, protos)
    path = tmp_path / "enc.pt"
    encoder.save(path)
    loaded = load_encoder(path)
    assert loaded.prototypes is not None and loaded.prototypes[0] == names
    assert np.allclose(loaded.prototypes[1], protos, atol=0.01)


def test_training_refuses_mismatched_text_vectors(tiny: tuple) -> None:
    lib, _, vectors = tiny
    with pytest.raises(ValueError, match="text vectors"):
        train(lib, vectors[:2], TrainConfig(steps=1))


def test_missing_or_damaged_weights_say_how_to_rebuild(tmp_path: Path) -> None:
    with pytest.raises(IconModelError, match="missing.*train-icons"):
        load_encoder(tmp_path / "none.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00garbage")
    with pytest.raises(IconModelError, match="cannot be read.*train-icons"):
        load_encoder(bad)


def test_crops_are_read_in_either_polarity() -> None:
    from PIL import Image, ImageDraw

    def plus(fg: str, bg: str) -> Image.Image:
        img = Image.new("RGB", (20, 20), bg)
        d = ImageDraw.Draw(img)
        d.rectangle((9, 3, 11, 16), fill=fg)
        d.rectangle((3, 9, 16, 11), fill=fg)
        return img

    blank = Image.new("RGB", (20, 20), "#888888")
    squares, ok = prepare_crops([plus("black", "white"), plus("white", "#202020"), blank])
    assert squares.shape == (3, INPUT, INPUT)
    assert ok.tolist() == [True, True, False]
    assert np.abs(squares[0] - squares[1]).mean() < 0.05  # dark-on-light = light-on-dark


def test_the_shipped_encoder_loads() -> None:
    from lemmata.gui.icon_library import concepts

    encoder = load_encoder()
    assert set(encoder.meta["held_out"]) >= {"lucide", "feather"}
    assert not set(encoder.meta["sets"]) & set(encoder.meta["held_out"])
    # prototypes of the functional concepts, from the training sets only
    assert encoder.prototypes is not None
    assert set(encoder.prototypes[0]) == set(concepts().gloss)
    # concepts added after training (chart toolbars: pin, palette, reset, pan, ...) have
    # prototypes; the texts it was trained on are listed apart
    assert {"pin", "palette", "reset", "redo", "pan", "crosshair"} <= set(encoder.prototypes[0])
    assert set(encoder.meta["text_concepts"]) < set(encoder.prototypes[0])
    assert "pin" not in encoder.meta["text_concepts"]


def test_prototypes_are_refreshed_from_the_seen_sets_only(tiny: tuple) -> None:
    from lemmata.gui.icon_library import Library
    from lemmata.gui.icon_train import refresh_prototypes

    lib, _, vectors = tiny
    encoder = train(
        lib, vectors, TrainConfig(steps=5, concepts_per_batch=4), focus=["search", "close"]
    )
    assert encoder.meta["text_concepts"] == ["close", "search"]
    # the same glyphs again as another set, flipped and held out: no part of the prototypes
    flipped = lib.images[:, ::-1].copy()
    both = Library(
        np.concatenate([lib.images, flipped]),
        lib.sets + ["other"] * len(lib.sets),
        lib.names * 2,
        lib.styles * 2,
        lib.concepts * 2,
        lib.texts * 2,
        {},
    )
    refresh_prototypes(encoder, both, held_out=("other",))
    assert encoder.prototypes is not None
    assert encoder.prototypes[0] == ["add", "close", "home", "search"]
    with_held_out = encoder.prototypes[1]
    refresh_prototypes(encoder, lib)
    assert np.allclose(encoder.prototypes[1], with_held_out, atol=1e-5)


def test_toolbar_views_are_read_as_the_anchor_reads_a_crop(tiny: tuple) -> None:
    """A glyph drawn as a toolbar draws it (a plate, a border, a neighbour's edge, off centre)
    comes out cut to its ink and fitted, as the anchor prepares a screen crop (plate, border and
    neighbour inside the cut, not around it); without ``toolbar`` the views are the plain ones."""
    import torch

    lib, _, _ = tiny
    base = torch.from_numpy(np.repeat(lib.images, 8, axis=0).astype(np.float32) / 255)[:, None]
    plain = augment(base, torch.Generator().manual_seed(5))
    assert torch.equal(plain, augment(base, torch.Generator().manual_seed(5), toolbar=0.0))
    bar = augment(base, torch.Generator().manual_seed(5), toolbar=1.0)
    assert bar.shape == plain.shape and float(bar.min()) >= 0 and float(bar.max()) <= 1

    def spans(views: torch.Tensor) -> float:
        # the ink's box reaches the 1 px margin across the width or the height
        ink = views[:, 0] > 0.1
        rows, cols = ink.any(2), ink.any(1)
        full = lambda m: m[:, 1] & m[:, INPUT - 2]  # noqa: E731
        return float((full(rows) | full(cols)).float().mean())

    assert spans(bar) >= 0.9
    # they differ from the plain views: more ink around the glyph, on average
    assert float((bar > 0.2).float().mean()) > float((plain > 0.2).float().mean())


def test_training_goes_on_from_a_given_encoder(tiny: tuple) -> None:
    lib, names, vectors = tiny
    first = train(lib, vectors, TrainConfig(steps=60, concepts_per_batch=4, lr=3e-3))
    acc = _accuracy(first, lib, names, vectors, seed=7)
    # a few more steps with a tiny rate, toolbar views among them: what it knew is kept
    more = train(
        lib,
        vectors,
        TrainConfig(steps=3, concepts_per_batch=4, lr=1e-7, toolbar_share=0.5),
        start=first,
    )
    assert more.meta["steps"] == 63 and more.meta["toolbar_share"] == 0.5
    assert _accuracy(more, lib, names, vectors, seed=7) >= acc - 0.1
    scratch = train(lib, vectors, TrainConfig(steps=3, concepts_per_batch=4, lr=1e-7))
    assert _accuracy(scratch, lib, names, vectors, seed=7) < acc
    wider = train(lib, vectors, TrainConfig(steps=1, concepts_per_batch=4, width=8))
    with pytest.raises(ValueError, match="does not fit"):
        train(lib, vectors, TrainConfig(steps=1, concepts_per_batch=4), start=wider)
