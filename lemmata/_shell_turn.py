"""Helpers for the shell's agent turns: the status line, approval questions, thread ids, and
Ctrl-C reaching the running operation."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["describe_calls", "describe_event", "new_thread_id", "stop_on_sigint"]

# What runs after each step of the agent's graph, for the status line.
_NEXT = {
    "recall": "choosing an operation",
    "plan": "about to run",
    "approve": "running",
    "act": "answering",
    "answer": "recording the turn",
    "record": "done",
}


def new_thread_id() -> str:
    """A fresh thread id, in the form the agent uses for its own."""
    return f"t-{uuid.uuid4().hex[:10]}"


def describe_event(event: dict[str, Any], thinking: str = "") -> str | None:
    """The status line for one event of :meth:`lemmata.Agent.stream` (None: keep the line).

    >>> describe_event({"type": "progress", "operation": "provers_prove",
    ...                 "message": "refine: lia", "fraction": 0.25})
    'provers_prove: refine: lia (25%)'
    """
    if event.get("type") == "progress":
        text = f"{event.get('operation') or 'working'}: {event.get('message', '')}".strip()
        fraction = event.get("fraction")
        if isinstance(fraction, int | float) and 0 <= fraction <= 1:
            text += f" ({fraction:.0%})"
        return text
    if event.get("type") == "step":
        node = str(event.get("node", ""))
        if node == "recall" and thinking:
            return thinking
        if node == "act" and thinking:
            return thinking  # with a model, it reads the results and answers or goes on
        return _NEXT.get(node, node)
    return None


def describe_calls(calls: Iterable[dict[str, Any]]) -> str:
    """Operation calls as people read them: ``memory_forget(about='my sister')``."""
    parts = []
    for call in calls:
        args = ", ".join(f"{k}={v!r}" for k, v in (call.get("args") or {}).items())
        parts.append(f"{call.get('tool')}({args})")
    return "; ".join(parts)


@contextlib.contextmanager
def stop_on_sigint(agent: Any) -> Iterator[None]:
    """While a turn runs, Ctrl-C also tells the agent's running operation to stop.

    LangGraph runs a node in a worker thread and, when the main thread gets Ctrl-C, waits for
    the node to finish before the interrupt reaches the agent; so the operation must hear of it
    at once, from the signal handler, or Ctrl-C would wait for it (a long research run)."""
    import signal
    import threading

    def stop() -> None:
        cancel = getattr(agent, "cancel", None)
        if callable(cancel):
            cancel()
            return
        event = getattr(agent, "_run_cancel", None)  # until the agent has a public cancel()
        if isinstance(event, threading.Event):
            event.set()

    def on_sigint(_signum: int, _frame: Any) -> None:
        stop()
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
