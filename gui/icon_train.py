"""``lemmata gui train-icons``: build the icon library, train the encoder on the sets not held
out, measure it on the held-out sets, and write the weights.

:func:`train_icons` is the whole run; :func:`zero_shot` is the measurement it prints: each glyph
of a set, degraded as on a screen, classified among the functional concepts of
``data/icon_concepts.json`` by the text of each concept alone (top-1 accuracy). The held-out
sets' figure is the one that says how the encoder does on icons it never saw.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lemmata.gui.icon_library import HELD_OUT, SETS, Library, build_library, concepts, icon_text
from lemmata.gui.icon_model import WEIGHTS, IconEncoder, TrainConfig, augment, train

__all__ = ["concept_vectors", "prototypes", "refresh_prototypes", "train_icons", "zero_shot"]


def concept_vectors(embedder: Any, texts: list[str], cache: Path | None = None) -> np.ndarray:
    """MiniLM vectors of ``texts`` (kept in ``cache`` by content, since 10,000 texts take a
    minute on two cores)."""
    import hashlib

    key = hashlib.blake2b("\n".join(texts).encode(), digest_size=10).hexdigest()
    path = cache / f"concept-vectors-{key}.npy" if cache else None
    if path is not None and path.is_file():
        return np.load(path)
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    return vecs


def prototypes(
    encoder: IconEncoder, library: Library, names: list[str], *, views: int = 4, seed: int = 0
) -> tuple[list[str], np.ndarray]:
    """Each of ``names`` (concepts) with a glyph in ``library``: the mean embedding of its
    glyphs, each degraded ``views`` times as in training, as a unit vector."""
    import torch

    keep = np.array([c in set(names) for c in library.concepts])
    if not keep.any():
        return [], np.zeros((0, encoder.net.head.out_features), np.float32)
    sub = library.subset(keep)
    gen = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(sub.images.astype(np.float32) / 255.0)[:, None]
    emb = np.mean([encoder.images(augment(x, gen)[:, 0].numpy()) for _ in range(views)], axis=0)
    found = [c for c in names if c in set(sub.concepts)]
    of = np.array(sub.concepts)
    vecs = np.stack([emb[of == c].mean(0) for c in found]).astype(np.float32)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    return found, vecs


def refresh_prototypes(
    encoder: IconEncoder, library: Library, held_out: tuple[str, ...] = HELD_OUT
) -> IconEncoder:
    """Give ``encoder`` the prototypes of every functional concept of ``data/icon_concepts.json``
    from the glyphs of ``library`` not in ``held_out``: after concepts are added to the table
    (or names move between concepts) the encoder reads them without training again, since it
    was trained on every name of the seen sets as a concept of its own."""
    seen = library.relabel().subset(np.array([s not in held_out for s in library.sets]))
    encoder.prototypes = prototypes(encoder, seen, sorted(concepts().gloss))
    return encoder


def zero_shot(
    encoder: IconEncoder, library: Library, embedder: Any, *, seed: int = 0
) -> dict[str, float]:
    """Top-1 accuracy per set of classifying each glyph whose concept is a functional one among
    all functional concepts, from their texts; each glyph degraded once as in training."""
    import torch

    table = concepts()
    names = sorted(table.gloss)
    text = encoder.texts(embedder.embed([icon_text(c, table.names[c], table=table) for c in names]))
    keep = np.array([c in table.gloss for c in library.concepts])
    if not keep.any():
        return {}
    sub = library.subset(keep)
    gen = torch.Generator().manual_seed(seed)
    x = augment(torch.from_numpy(sub.images.astype(np.float32) / 255.0)[:, None], gen)
    emb = encoder.images(x[:, 0].numpy())
    pred = (emb @ text.T).argmax(1)
    truth = np.array([names.index(c) for c in sub.concepts])
    out: dict[str, float] = {}
    for s in sorted(set(sub.sets)):
        m = np.array([x == s for x in sub.sets])
        out[s] = float((pred[m] == truth[m]).mean())
    return out


def train_icons(
    cache_dir: Path,
    out: Path = WEIGHTS,
    *,
    embedder: Any,
    sets: tuple[str, ...] = tuple(SETS),
    held_out: tuple[str, ...] = HELD_OUT,
    config: TrainConfig | None = None,
    library: Library | None = None,
    progress: Callable[[str], None] | None = None,
    start: IconEncoder | None = None,
) -> dict[str, Any]:
    """Train on ``sets`` less ``held_out`` and write the encoder to ``out``; returns the run's
    figures (zero-shot accuracy on seen and held-out sets, time, sizes). ``start`` is an
    encoder to train on from (the shipped one, say), instead of from scratch."""
    say = progress or (lambda _m: None)
    lib = library if library is not None else build_library(cache_dir, sets, progress=say)
    seen_mask = np.array([s not in held_out for s in lib.sets])
    seen = lib.subset(seen_mask)
    if not len(seen.concepts):
        raise ValueError(f"every set is held out ({', '.join(held_out)}): nothing to train on")
    names = sorted(set(seen.concepts))
    text_of = dict(zip(seen.concepts, seen.texts, strict=True))
    # the functional concepts train on the very text the icon anchor scores them with
    table = concepts()
    text_of.update({c: icon_text(c, table.names[c], table=table) for c in table.gloss})
    vectors = concept_vectors(embedder, [text_of[c] for c in names], Path(cache_dir))
    say(
        f"training on {len(seen.concepts)} glyphs, {len(names)} concepts of {sorted(set(seen.sets))}"
    )
    encoder = train(
        seen,
        vectors,
        config,
        focus=sorted(table.gloss),
        progress=lambda step, loss, s: say(f"step {step}: loss {loss:.3f} ({s:.0f} s)"),
        start=start,
    )
    refresh_prototypes(encoder, seen)
    encoder.meta["held_out"] = list(held_out)
    encoder.meta["licences"] = seen.licences
    encoder.save(Path(out))
    report = {
        "weights": str(out),
        "zero_shot_seen": zero_shot(encoder, seen, embedder),
        "zero_shot_held_out": zero_shot(encoder, lib.subset(~seen_mask), embedder)
        if (~seen_mask).any()
        else {},
        **encoder.meta,
    }
    return report
