"""The vector index: derived from the SQLite log, rebuildable, one collection per namespace.

:class:`ChromaIndex` runs chromadb embedded (``PersistentClient``, the default) or against a
Chroma server over HTTP (``chroma run``) for users who outgrow one machine. Both are always
given Lemmata's own embedding function (chromadb's default would download a model), with
telemetry off. Vectors are computed by the memory and passed in, so the embedding function is
there to keep chromadb from reaching for its default, and to refuse a collection built with a
different embedder.

Isolation: each (user, agent) pair gets its own collection (a hash of the pair names it), and
a session is a metadata filter inside it; the SQLite log checks every hit again.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from lemmata.errors import ConfigError, MissingDependency

__all__ = ["ChromaIndex", "VectorIndex", "collection_name"]


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest neighbours by cosine distance, per namespace key ``(user, agent)``."""

    name: str

    def add(
        self,
        space: tuple[str, str],
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, Any]],
    ) -> None: ...

    def query(
        self,
        space: tuple[str, str],
        vectors: np.ndarray,
        k: int,
        where: dict[str, Any] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """For each row of ``vectors``, up to ``k`` (id, cosine distance) pairs, nearest first."""
        ...

    def delete(self, space: tuple[str, str], ids: Sequence[str]) -> None: ...

    def count(self, space: tuple[str, str]) -> int: ...

    def drop(self, space: tuple[str, str]) -> None: ...


def collection_name(space: tuple[str, str]) -> str:
    """The collection of a (user, agent) pair: ``lm_`` and 40 hex digits of its hash."""
    digest = hashlib.sha256(f"{space[0]}\x1f{space[1]}".encode()).hexdigest()[:40]
    return f"lm_{digest}"


def _embedding_function(embedder_name: str, dim: int) -> Any:
    from chromadb.api.types import EmbeddingFunction

    class LemmataEmbeddingFunction(EmbeddingFunction[Any]):
        """Stands in for chromadb's default: vectors always come from Lemmata's embedder."""

        def __init__(self, embedder: str, dim: int) -> None:
            self.embedder = embedder
            self.dim = dim

        def __call__(self, input: Any) -> Any:
            raise ConfigError(
                "the memory passes vectors to chromadb itself; embedding text inside chromadb "
                "is not used"
            )

        @staticmethod
        def name() -> str:
            return "lemmata"

        def get_config(self) -> dict[str, Any]:
            return {"embedder": self.embedder, "dim": self.dim}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> LemmataEmbeddingFunction:
            return LemmataEmbeddingFunction(str(config.get("embedder")), int(config.get("dim", 0)))

        def default_space(self) -> Any:
            return "cosine"

    return LemmataEmbeddingFunction(embedder_name, dim)


class ChromaIndex:
    """chromadb as the vector index, embedded or over HTTP.

    >>> ChromaIndex.local("/tmp/mem/chroma", embedder="minilm", dim=384)   # doctest: +SKIP
    >>> ChromaIndex.http("127.0.0.1", 8000, embedder="minilm", dim=384)    # doctest: +SKIP
    """

    def __init__(self, client: Any, *, embedder: str, dim: int, where: str) -> None:
        self._client = client
        self._ef = _embedding_function(embedder, dim)
        self._collections: dict[tuple[str, str], Any] = {}
        self._lock = threading.RLock()
        self.embedder = embedder
        self.dim = dim
        self.name = f"chroma ({where})"

    @staticmethod
    def _settings() -> Any:
        try:
            from chromadb.config import Settings as ChromaSettings
        except ImportError:
            raise MissingDependency("the vector index", "pip install chromadb") from None
        return ChromaSettings(anonymized_telemetry=False, allow_reset=False)

    @classmethod
    def local(cls, path: str | Path, *, embedder: str, dim: int) -> ChromaIndex:
        """An embedded index stored under ``path``."""
        import chromadb

        Path(path).mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(path=str(path), settings=cls._settings())
        return cls(client, embedder=embedder, dim=dim, where=str(path))

    @classmethod
    def http(cls, host: str, port: int, *, embedder: str, dim: int) -> ChromaIndex:
        """An index on a Chroma server (``chroma run --host HOST --port PORT``)."""
        import chromadb

        try:
            client = chromadb.HttpClient(host=host, port=port, settings=cls._settings())
            client.heartbeat()
        except Exception as exc:  # chromadb raises plain exceptions for connection problems
            raise ConfigError(
                f"no Chroma server answers at http://{host}:{port} ({type(exc).__name__}): "
                "start one with `chroma run --host HOST --port PORT --path DIR`"
            ) from exc
        return cls(client, embedder=embedder, dim=dim, where=f"http://{host}:{port}")

    def _collection(self, space: tuple[str, str]) -> Any:
        with self._lock:
            coll = self._collections.get(space)
            if coll is None:
                coll = self._client.get_or_create_collection(
                    collection_name(space),
                    embedding_function=self._ef,
                    metadata={"hnsw:space": "cosine", "embedder": self.embedder},
                )
                stored = (coll.metadata or {}).get("embedder")
                if stored not in (None, self.embedder):
                    raise ConfigError(
                        f"the vector index was built with the embedder {stored!r}, not "
                        f"{self.embedder!r}: run `lemmata memory reindex` to rebuild it"
                    )
                self._collections[space] = coll
            return coll

    def add(
        self,
        space: tuple[str, str],
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        if not ids:
            return
        coll = self._collection(space)
        # Chroma caps one call's size; stay well under it.
        step = 2000
        for i in range(0, len(ids), step):
            coll.upsert(
                ids=list(ids[i : i + step]),
                embeddings=np.asarray(vectors[i : i + step], dtype=np.float32),
                metadatas=list(metadatas[i : i + step]),
            )

    def query(
        self,
        space: tuple[str, str],
        vectors: np.ndarray,
        k: int,
        where: dict[str, Any] | None = None,
    ) -> list[list[tuple[str, float]]]:
        rows = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim or vectors.shape[-1])
        if k <= 0 or len(rows) == 0:
            return [[] for _ in range(len(rows))]
        coll = self._collection(space)
        # no count() first: chromadb returns fewer than k when it holds fewer, and counting
        # costs as much as the query at 100k items
        res = coll.query(
            query_embeddings=rows,
            n_results=k,
            where=where or None,
            include=["distances"],
        )
        out = []
        for ids, dists in zip(res["ids"], res["distances"] or [], strict=True):
            out.append([(i, float(d)) for i, d in zip(ids, dists, strict=True)])
        return out

    def delete(self, space: tuple[str, str], ids: Sequence[str]) -> None:
        if ids:
            self._collection(space).delete(ids=list(ids))

    def count(self, space: tuple[str, str]) -> int:
        return int(self._collection(space).count())

    def close(self) -> None:
        """Release the client: an embedded index's files are closed once no other client of
        the same folder is open (chromadb keeps them open for the life of the process
        otherwise)."""
        with self._lock:
            self._collections.clear()
            close = getattr(self._client, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
        # chromadb's closed connections can sit in reference cycles (cursors) that keep the
        # SQLite file open until the collector runs; collect them now (outside the lock, since
        # finalisers run), so that a closed memory really holds none of its folder's files
        gc.collect()

    def drop(self, space: tuple[str, str]) -> None:
        with self._lock:
            self._collections.pop(space, None)
            # chromadb raises NotFoundError or ValueError (by version) for a missing one
            with contextlib.suppress(Exception):
                self._client.delete_collection(collection_name(space))
