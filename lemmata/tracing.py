"""OpenTelemetry spans for agent steps, operations, model calls and verifier calls.

Off by default. Switch it on with ``LEMMATA_TRACE=true`` (or ``trace = true`` in
``lemmata.toml``, or :func:`configure`); it needs the ``otel`` extra
(``pip install 'lemmata[otel]'``). Spans go to the tracer provider you set up with the
OpenTelemetry SDK (an OTLP exporter to your collector, say); when none is set, Lemmata installs
one that writes each finished span as a JSON line to ``trace_file`` (default
``data_dir/traces.jsonl``), so tracing works offline with nothing else installed.

What a span carries: its name (``agent.step plan``, ``operation provers_prove``, ``llm.chat``,
``verify coq``), timings, and attributes that never hold what a person wrote: operation,
capability, status, model, token counts, backend, failure class. Prompt text, tool arguments,
statements and replies are added only with ``LEMMATA_TRACE_CONTENT=true``
(``trace_content``), following OpenTelemetry's GenAI convention that message content is
opt-in.

>>> with span("operation memory_recall", {"lemmata.capability": "memory"}) as s:
...     s.set("lemmata.status", "ok")      # a no-op while tracing is off
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.errors import MissingDependency

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = ["Span", "configure", "configure_from", "content_enabled", "enabled", "span"]

_LOCK = threading.Lock()
_TRUE = {"1", "true", "yes", "on"}
_MAX_CONTENT = 4000


class _Config:
    enabled: bool | None = None  # None: not configured yet, read the environment
    content = False
    tracer: Any = None


def _from_env() -> None:
    if _Config.enabled is None:
        on = os.environ.get("LEMMATA_TRACE", "").strip().lower() in _TRUE
        content = os.environ.get("LEMMATA_TRACE_CONTENT", "").strip().lower() in _TRUE
        file = os.environ.get("LEMMATA_TRACE_FILE")
        configure(on, content=content, file=Path(file) if file else None)


def enabled() -> bool:
    """Whether spans are being made."""
    _from_env()
    return bool(_Config.enabled)


def content_enabled() -> bool:
    """Whether spans may carry prompt text, arguments and replies."""
    return enabled() and _Config.content


def configure(
    enabled: bool,
    *,
    content: bool = False,
    provider: Any = None,
    file: Path | None = None,
) -> None:
    """Switch tracing on or off. ``provider``: an OpenTelemetry ``TracerProvider`` to use
    (default: the global one, or, when none is set, one writing JSON lines to ``file``)."""
    with _LOCK:
        if not enabled:
            _Config.enabled, _Config.content, _Config.tracer = False, False, None
            return
        try:
            from opentelemetry import trace
        except ImportError:
            raise MissingDependency(
                "tracing (LEMMATA_TRACE)", "pip install 'lemmata[otel]'"
            ) from None
        if provider is None:
            provider = _global_or_file(trace, file)
        _Config.tracer = provider.get_tracer("lemmata")
        _Config.enabled, _Config.content = True, content


def configure_from(settings: Settings) -> None:
    """Apply the ``trace``, ``trace_content`` and ``trace_file`` settings."""
    if settings.trace or _Config.enabled is None:
        file = settings.trace_file or settings.data_dir / "traces.jsonl"
        configure(settings.trace, content=settings.trace_content, file=file)


def _global_or_file(trace: Any, file: Path | None) -> Any:
    current = trace.get_tracer_provider()
    if type(current).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return current  # the application set up its own exporters
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    path = (
        file or Path(os.environ.get("LEMMATA_DATA_DIR", Path.home() / ".lemmata")) / "traces.jsonl"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    out = path.open("a", encoding="utf-8")  # kept open for the life of the process
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(
            ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
        )
    )
    return provider


class Span:
    """A span being recorded (or nothing, when tracing is off)."""

    def __init__(self, inner: Any = None) -> None:
        self._inner = inner

    def set(self, key: str, value: Any) -> None:
        """Set an attribute (strings, numbers, booleans; None is skipped)."""
        if self._inner is not None and value is not None:
            self._inner.set_attribute(
                key, value if isinstance(value, str | bool | int | float) else str(value)
            )

    def content(self, key: str, value: Any) -> None:
        """Set an attribute that holds what a person or a model wrote: only when
        ``trace_content`` allows it, and cut to a few thousand characters."""
        if self._inner is not None and _Config.content and value is not None:
            text = (
                value
                if isinstance(value, str)
                else json.dumps(value, default=str, ensure_ascii=False)
            )
            self._inner.set_attribute(key, text[:_MAX_CONTENT])

    def error(self, message: str) -> None:
        """Mark the span as failed."""
        if self._inner is not None:
            from opentelemetry.trace import Status, StatusCode

            self._inner.set_status(Status(StatusCode.ERROR, message[:500]))


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Span]:
    """A span around the block (the current span's child); exceptions are recorded on it."""
    if not enabled():
        yield Span()
        return
    with _Config.tracer.start_as_current_span(name, record_exception=True) as inner:
        s = Span(inner)
        for key, value in (attributes or {}).items():
            s.set(key, value)
        try:
            yield s
        except BaseException as exc:
            s.error(f"{type(exc).__name__}: {exc}")
            raise
