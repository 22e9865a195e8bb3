"""The background worker: structures pending episodes off the caller's thread.

>>> with mem.background(interval_s=0.5) as worker:                 # doctest: +SKIP
...     mem.add_episode("I moved to Lisbon last month.", speaker="Alice")
>>> worker.reports[-1].episodes                                     # doctest: +SKIP
1

:meth:`Memory.background <lemmata.memory.Memory.background>` starts one. It consolidates only
while something is due (a pending episode whose session is not backing off after a failure),
and keeps what each pass reported, and any error it met, for its owner to read.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lemmata.memory.core import ConsolidationReport, Memory

__all__ = ["BackgroundConsolidator"]


class BackgroundConsolidator:
    """A daemon thread running :meth:`Memory.consolidate` while episodes are pending."""

    def __init__(self, memory: Memory, interval_s: float) -> None:
        self.memory = memory
        self.interval_s = interval_s
        self.errors: list[BaseException] = []
        self.reports: list[ConsolidationReport] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lemmata-memory", daemon=True)

    def start(self) -> None:
        """Start the thread (:meth:`Memory.background` does)."""
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._once()
        self._once()

    def _once(self) -> None:
        try:
            if self.memory._due():
                self.reports.append(self.memory.consolidate())
        except BaseException as exc:  # kept for the owner to see; the thread goes on
            self.errors.append(exc)

    def stop(self) -> None:
        """Stop after one last pass, and wait for it."""
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> BackgroundConsolidator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
