"""What :class:`~lemmata.agents.agent.Agent` keeps between the nodes of a turn and after it.

- :class:`TurnVectors`: the task is embedded once per turn, in the recall node; the vector
  serves the memory's dense channel there, the router's similarities in the plan node (the
  router asks its embedder, which this wraps, for the same text), and the turn's operations
  and record wherever they embed the task's own words; it is let go when the turn ends.
- :class:`Consolidator`: structures recorded turns (episodes into facts and procedures) in one
  background thread, so that the answer does not wait for it. The episodes themselves are
  written before the turn ends (one SQLite transaction), so a process that dies before the
  structuring loses nothing: pending episodes are structured by the next ``retrieve``, which
  also waits for a structuring under way (one lock per memory space), so the next turn's recall
  always finds what the last turn recorded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.memory.core import Memory

__all__ = ["Consolidator", "TurnVectors"]

log = logging.getLogger("lemmata.agents")


class TurnVectors:
    """An :class:`~lemmata.embeddings.Embedder` that answers the texts of the current turn
    from the vectors already computed for them, and asks ``inner`` for anything else.

    >>> class Count:
    ...     name, dim, calls = "count", 2, 0
    ...     def embed(self, texts):
    ...         Count.calls += 1
    ...         return np.ones((len(texts), 2), np.float32)
    >>> vectors = TurnVectors(Count())
    >>> _ = vectors.start("a task"); _ = vectors.embed(["a task"]); Count.calls
    1
    >>> vectors.end(); _ = vectors.embed(["a task"]); Count.calls
    2
    """

    def __init__(self, inner: Embedder | Callable[[], Embedder]) -> None:
        # ``inner`` may be a function that loads the embedder on first use (the agent
        # installs this wrapper before anything has loaded a model)
        self._inner: Embedder | None = None
        self._load: Callable[[], Embedder] | None = None
        if hasattr(type(inner), "embed"):  # an embedder (not isinstance: that reads .dim)
            self._inner = cast("Embedder", inner)
        else:
            self._load = cast("Callable[[], Embedder]", inner)
        self._known: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def inner(self) -> Embedder:
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    assert self._load is not None
                    self._inner = self._load()
        return self._inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def start(self, text: str) -> np.ndarray:
        """Begin a turn about ``text``: embed it (once) and keep its vector until :meth:`end`."""
        vector = self.inner.embed([text])[0]
        with self._lock:
            self._known = {text: vector}
        return vector

    def end(self) -> None:
        """Forget the turn's vectors (a later turn embeds its text afresh)."""
        with self._lock:
            self._known = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            known = self._known
        if not texts or not any(t in known for t in texts):
            return self.inner.embed(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        computed = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        return np.stack([known[t] if t in known else computed[t] for t in texts])


class Consolidator:
    """One background thread that structures a memory's pending episodes, a request at a
    time (a request that finds nothing pending costs one count query). :meth:`wait` and
    :meth:`close` wait for the requests made so far."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._last: Future[None] | None = None
        self._lock = threading.Lock()

    def submit(self, memory: Memory) -> None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="lemmata-consolidate")
            self._last = self._pool.submit(_consolidate, memory)

    def wait(self) -> None:
        """Until the requests made so far are done (one worker: the last is done last)."""
        with self._lock:
            last = self._last
        if last is not None:
            last.result()  # _consolidate keeps its own errors

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


def _consolidate(memory: Memory) -> None:
    try:
        if memory.pending():
            memory.consolidate()
    except Exception:  # the episodes stay pending: the next retrieve structures them
        log.warning("structuring the recorded turn failed; it stays pending", exc_info=True)
