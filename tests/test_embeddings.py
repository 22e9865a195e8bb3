"""The bundled MiniLM (real weights, offline) and the disk cache."""

from __future__ import annotations

import numpy as np
import pytest
from scripted_server import ScriptedOpenAIServer

from lemmata.embeddings import CachedEmbedder, LiteLLMEmbedder, get_embedder


@pytest.fixture(scope="module")
def minilm():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


class Counting:
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.seen = inner, inner.name, []

    @property
    def dim(self):
        return self.inner.dim

    def embed(self, texts):
        self.seen.extend(texts)
        return self.inner.embed(texts)


def test_minilm_embeds_meaning(minilm) -> None:
    v = minilm.embed(
        [
            "The cat sat on the mat.",
            "A kitten is sitting on a rug.",
            "Quarterly revenue fell by ten percent.",
        ]
    )
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > 0.5 > sims[0, 2]


def test_cache_computes_each_text_once_and_persists(minilm, tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    inner = Counting(minilm)
    cached = CachedEmbedder(inner, path)
    first = cached.embed(["alpha", "beta", "alpha"])
    assert inner.seen == ["alpha", "beta"]  # duplicates within a call computed once
    again = cached.embed(["beta", "gamma"])
    assert inner.seen == ["alpha", "beta", "gamma"]
    assert np.allclose(first[1], again[0]) and np.allclose(first[0], first[2])
    assert (cached.hits, cached.misses) == (2, 3)
    cached.close()
    reopened_inner = Counting(minilm)
    reopened = CachedEmbedder(reopened_inner, path)
    assert np.allclose(reopened.embed(["alpha"])[0], first[0], atol=1e-6)
    assert reopened_inner.seen == []  # served from disk


def test_cache_is_keyed_by_embedder(minilm, tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    CachedEmbedder(minilm, path).embed(["same text"])
    other = Counting(minilm)
    other.name = "another-model"
    CachedEmbedder(other, path).embed(["same text"])
    assert other.seen == ["same text"]


def test_input_is_checked(minilm) -> None:
    with pytest.raises(TypeError, match="list of texts"):
        minilm.embed("just a string")
    with pytest.raises(TypeError, match="text 1"):
        minilm.embed(["ok", 3])
    assert minilm.embed([]).shape == (0, 384)


def test_get_embedder_caches_under_data_dir(settings) -> None:
    emb = get_embedder(settings)
    assert isinstance(emb, CachedEmbedder)
    assert emb.path.parent == settings.data_dir / "cache"
    assert get_embedder(settings.with_overrides(embed_cache=False)).name == "minilm"


def test_litellm_embedder_against_scripted_server() -> None:
    with ScriptedOpenAIServer([]) as srv:
        emb = LiteLLMEmbedder("openai/scripted-embed", api_base=srv.base_url, batch_size=2)
        v = emb.embed(["a", "b", "c"])
    assert v.shape == (3, 16)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    batches = [r["input"] for r in srv.requests]
    assert batches == [["a", "b"], ["c"]]
