"""What the namespaces of one memory directory share: the log, the vector index, the
embedder, and the lock that keeps one consolidation per namespace at a time.

:meth:`Memory.scoped <lemmata.memory.Memory.scoped>` views share one of these; the index and
the embedder are made on first use, so opening a memory loads no model.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from lemmata.errors import UsageError
from lemmata.memory.log import MemoryLog

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.memory.index import VectorIndex
    from lemmata.settings import Settings

__all__ = ["Shared"]


class Shared:
    """What namespaces of one memory directory share: the log, the index, the embedder."""

    def __init__(
        self,
        path: Path,
        settings: Settings,
        embedder: Embedder | None,
        index: VectorIndex | str | None,
    ) -> None:
        self.path = path
        self.settings = settings
        self.log = MemoryLog(path / "memory.sqlite3")
        self._embedder = embedder
        self._index_spec = index
        self._index: VectorIndex | None = index if not isinstance(index, str | None) else None
        self.lock = threading.RLock()
        self._consolidating: dict[tuple[str, str], threading.Lock] = {}

    def close(self) -> None:
        """Close the log, and the vector index if it was opened here (an index given as an
        object belongs to its giver)."""
        self.log.close()
        with self.lock:
            index = self._index
            if index is None or index is self._index_spec:
                return
            self._index = None
        close = getattr(index, "close", None)
        if close is not None:
            close()

    def consolidation_lock(self, space: tuple[str, str]) -> threading.Lock:
        """One lock per (user, agent) space, whichever :meth:`Memory.scoped` view asks: two
        views structuring the same pending episodes at once would derive their facts twice."""
        with self.lock:
            return self._consolidating.setdefault(space, threading.Lock())

    @contextmanager
    def consolidating(self, space: tuple[str, str]) -> Iterator[None]:
        """Hold the space's consolidation lock: the thread lock of this process, then an
        exclusive ``flock`` on ``locks/consolidate-<digest>.lock`` beside the log, which another
        process opening the same directory waits for as well (the kernel drops it if the
        holder dies). Where ``fcntl`` is missing (Windows) only the thread lock is held."""
        with self.consolidation_lock(space):
            try:
                import fcntl
            except ImportError:  # pragma: no cover - not POSIX
                yield
                return
            digest = hashlib.sha256(f"{space[0]}\x1f{space[1]}".encode()).hexdigest()[:32]
            folder = self.path / "locks"
            folder.mkdir(exist_ok=True)
            with open(folder / f"consolidate-{digest}.lock", "a+b") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from lemmata.embeddings import get_embedder

            self._embedder = get_embedder(self.settings)
        return self._embedder

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            from lemmata.memory.index import ChromaIndex

            spec = self._index_spec
            name, dim = self.embedder.name, self.embedder.dim
            if isinstance(spec, str) and spec.startswith(("http://", "https://")):
                from urllib.parse import urlparse

                url = urlparse(spec)
                self._index = ChromaIndex.http(
                    url.hostname or "127.0.0.1", url.port or 8000, embedder=name, dim=dim
                )
            elif spec is None or spec == "chroma":
                self._index = ChromaIndex.local(self.path / "chroma", embedder=name, dim=dim)
            else:
                raise UsageError(
                    f"index {spec!r}: give 'chroma' (embedded), a Chroma server URL "
                    "(http://HOST:PORT) or a VectorIndex"
                )
        return self._index
