"""Starting and stopping Ray from inside a user's process without leaving traces behind.

``ray.init`` changes the calling process for good: it installs a SIGTERM handler that turns
the signal into ``sys.exit`` (so a forked helper that is stopped later can take its parent down
with it) and sets ``RAY_AUTH_MODE=token`` in ``os.environ`` after writing a token under
``~/.ray`` (so the next local instance, started where that file no longer lies, refuses to
start). :class:`RaySession` connects to a cluster, or starts a local instance, and on
:meth:`close` shuts down what it started and gives the signal handlers and those environment
variables back as they were.

A local instance keeps Ray's token authentication on, but with a token held in this process's
environment (``RAY_AUTH_TOKEN``, which Ray reads before any file) rather than written to the
user's home: nothing is left on disk, and a changed ``HOME`` cannot strand the instance. A user
who set ``RAY_AUTH_MODE``, ``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH`` keeps their choice.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from typing import Any

__all__ = ["RaySession"]

#: Variables ``ray.init`` sets in this process; restored on close.
_RAY_SETS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_CLIENT_MODE", "RAY_USAGE_STATS_ENABLED")
_USER_AUTH = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
#: The token of the local instances this process starts (held in memory, never written out).
_LOCAL_TOKEN = secrets.token_hex(32)
_SIGNALS = tuple(s for s in (signal.SIGTERM, signal.SIGINT) if s is not None)


class RaySession:
    """Ray, joined (``address`` a cluster's ``host:port`` or ``auto``) or started (``local``)."""

    def __init__(self, address: str = "local", **init_kwargs: Any) -> None:
        self.address = address
        self._kwargs = init_kwargs
        self._started = False
        self._env: dict[str, str | None] = {}
        self._handlers: dict[int, Any] = {}

    def open(self) -> RaySession:
        import ray

        if ray.is_initialized():  # the caller's own Ray: use it, leave it running
            return self
        self._env = {k: os.environ.get(k) for k in _RAY_SETS}
        self._handlers = {int(s): signal.getsignal(s) for s in _SIGNALS}
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        kwargs = {"include_dashboard": False, "log_to_driver": False, **self._kwargs}
        try:
            if self.address == "local":
                kwargs.setdefault("_node_ip_address", "127.0.0.1")
                if not any(os.environ.get(k) for k in _USER_AUTH):
                    os.environ["RAY_AUTH_MODE"] = "token"
                    os.environ["RAY_AUTH_TOKEN"] = _LOCAL_TOKEN
                    _reread_ray_auth()
                ray.init(**kwargs)
            else:
                ray.init(address=self.address, **kwargs)
        except BaseException:
            with contextlib.suppress(Exception):
                ray.shutdown()
            self._restore()
            raise
        self._started = True
        return self

    def close(self) -> None:
        if not self._started:
            return
        import ray

        self._started = False
        try:
            ray.shutdown()
        finally:
            self._restore()

    def _restore(self) -> None:
        changed = any(os.environ.get(k) != v for k, v in self._env.items())
        for key, value in self._env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if changed:
            _reread_ray_auth()
        for signum, handler in self._handlers.items():
            if handler is not None:
                with contextlib.suppress(ValueError, OSError):  # not on the main thread
                    signal.signal(signum, handler)
        self._env, self._handlers = {}, {}

    def __enter__(self) -> RaySession:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reread_ray_auth() -> None:
    """Make this process's Ray see the authentication variables as they now stand.

    Ray caches its configuration and the token it loaded for the life of the process; this is
    what ``ray.init`` itself does after it changes ``RAY_AUTH_MODE``.
    """
    try:
        from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]
    except ImportError:  # a Ray without token authentication: nothing cached
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()
