"""Kept for old imports: the process layer is :mod:`lemmata.provers.process`."""

from __future__ import annotations

from lemmata.provers.process import ReadClosed, ReadTimeout, kill_process, read_some, rss_mb

__all__ = ["ReadClosed", "ReadTimeout", "kill_process", "read_some", "rss_mb"]
