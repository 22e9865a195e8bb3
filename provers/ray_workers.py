"""Proof workers on a Ray cluster: ``lemmata prove --ray local|auto|ADDRESS``.

Each worker is a Ray actor that builds its own worker on the node that runs it (a verifier for
``--method check``, a refinement search for ``--method refine``, Zeilberger's algorithm for
``--method wz``) and proves one item at a time; the batch runner hands theorems to the actors
exactly as it does to local workers, so resuming, bad lines, Ctrl-C, progress and ``--json``
behave the same. Every result an actor returns carries where it ran: ``ray_node_id`` and
``ray_actor_id``, read from Ray's runtime context inside the actor.

``local`` starts a Ray instance on this machine (no dashboard, no usage statistics; see
:class:`~lemmata.ray_session.RaySession`); ``auto`` joins the cluster this machine belongs to;
anything else is a cluster address (``HOST:PORT`` or ``ray://HOST:PORT``). Nodes need lemmata
and the backend's prover installed. Settings travel to the actors without their secrets (the
API key, the MCP token): a node reads those from its own environment or settings file.

Needs the ``ray`` extra: ``pip install 'lemmata[ray]'``.

>>> with RayCluster("local", workers=2) as cluster:                      # doctest: +SKIP
...     make = cluster.factory(functools.partial(check_worker, "coq", remote_settings(s), 20))
...     run_batch(theorems, make, out=Path("r.jsonl"), workers=2)
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lemmata.deps import require_extra
from lemmata.errors import LemmataError, UsageError
from lemmata.provers.runner import LocalWorker, Theorem, TheoremResult, Worker

if TYPE_CHECKING:
    from lemmata.provers.wz.identity import WZIdentity
    from lemmata.provers.wz.prove import WZResult
    from lemmata.settings import Settings

__all__ = [
    "RayCluster",
    "RayWZProver",
    "RayWorker",
    "check_address",
    "check_worker",
    "node_settings",
    "remote_settings",
]

#: How long a new actor may take to be placed and to build its worker.
_READY_S = 300.0
#: The margin over a theorem's limit before the actor is judged stuck (scheduling, restarts).
_MARGIN_S = 60.0
_ADDRESS = re.compile(r"^(ray://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5}$")


def check_address(address: str) -> str:
    """``address`` if it is ``local``, ``auto`` or ``[ray://]HOST:PORT``; else a
    :class:`~lemmata.errors.UsageError` that says what to give.

    >>> check_address("127.0.0.1:6379")
    '127.0.0.1:6379'
    """
    if address in ("local", "auto") or _ADDRESS.match(address):
        return address
    raise UsageError(
        f"--ray {address!r}: give 'local' (start Ray here), 'auto' (the cluster this machine "
        "belongs to) or a cluster address HOST:PORT"
    )


def remote_settings(settings: Settings) -> dict[str, Any]:
    """The settings as keyword overrides for the nodes, without the secret ones."""
    from pydantic import SecretStr

    return {
        name: value
        for name, value in settings.model_dump().items()
        if "SecretStr" not in str(type(settings).model_fields[name].annotation)
        and not isinstance(value, SecretStr)
    }


def node_settings(values: dict[str, Any]) -> Settings:
    """The settings on a node: ``values`` over the node's own environment and settings file
    (where its secrets come from)."""
    from lemmata.settings import Settings

    return Settings.load(**values)


def check_worker(backend: str, settings: dict[str, Any], timeout_s: float) -> Worker:
    """The ``--method check`` worker, built on the node: the backend's verifier."""
    from lemmata.provers import make_verifier

    return LocalWorker(make_verifier(backend, node_settings(settings), timeout_s=timeout_s))


def _placement() -> dict[str, str]:
    import ray

    context = ray.get_runtime_context()
    return {"ray_node_id": context.get_node_id(), "ray_actor_id": context.get_actor_id() or ""}


class _ProverActor:
    """The actor's body: the worker ``build`` makes, on the node that runs the actor."""

    def __init__(self, build: Callable[[], Worker]) -> None:
        self.error: BaseException | None = None
        self.worker: Worker | None = None
        try:
            self.worker = build()
        except Exception as exc:  # reported by ready(), where the driver can raise it
            self.error = exc
        self.placement = _placement()

    def ready(self) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        return self.placement | {"pid": os.getpid()}

    def prove(self, theorem: Theorem, timeout: float) -> TheoremResult:
        assert self.worker is not None
        result = self.worker.prove(theorem, timeout)
        return replace(result, details=result.details | self.placement)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


class _WZActor:
    """The actor's body for ``--method wz``: Zeilberger's algorithm on the node."""

    def __init__(self) -> None:
        self.placement = _placement()

    def ready(self) -> dict[str, Any]:
        return self.placement | {"pid": os.getpid()}

    def prove(
        self, ident: WZIdentity, max_order: int, timeout_s: float
    ) -> tuple[WZResult, dict[str, str]]:
        from lemmata.provers.wz.prove import prove_identity

        return prove_identity(ident, max_order=max_order, timeout_s=timeout_s), self.placement


def _ready(actor: Any) -> dict[str, Any]:
    """Wait until ``actor`` is placed and built; its build error is raised here, as itself
    when it is one of ours."""
    import ray

    try:
        return dict(ray.get(actor.ready.remote(), timeout=_READY_S))
    except ray.exceptions.GetTimeoutError:
        ray.kill(actor)
        raise UsageError(
            f"Ray could not start a worker within {_READY_S:g}s: the cluster has fewer free "
            "CPUs than --workers asks for; lower --workers or add nodes"
        ) from None
    except ray.exceptions.RayTaskError as exc:
        ray.kill(actor)
        if isinstance(exc.cause, LemmataError):
            raise exc.cause from None
        raise


def _crash(theorem: Theorem, timeout: float, backend: str, why: str) -> TheoremResult:
    failure = {"kind": "crash", "message": why, "line": None, "column": None, "tactic": None}
    return TheoremResult(theorem.id, "error", None, failure, timeout, 0, backend)


class RayWorker:
    """A :class:`~lemmata.provers.runner.Worker` whose worker lives in a Ray actor.

    An actor that runs past a theorem's limit (plus a margin) or dies is killed and replaced;
    that theorem is an ``error`` saying so, and the batch goes on.
    """

    def __init__(self, spawn: Callable[[], Any], backend: str) -> None:
        self._spawn = spawn
        self.backend = backend
        self.actor = spawn()
        self.info = _ready(self.actor)

    def prove(self, theorem: Theorem, timeout: float) -> TheoremResult:
        import ray

        try:
            result = ray.get(self.actor.prove.remote(theorem, timeout), timeout=timeout + _MARGIN_S)
        except (ray.exceptions.GetTimeoutError, ray.exceptions.RayActorError) as exc:
            self._replace()
            return _crash(
                theorem, timeout, self.backend, f"Ray worker failed: {type(exc).__name__}"
            )
        assert isinstance(result, TheoremResult)
        return result

    def _replace(self) -> None:
        import ray

        with contextlib.suppress(Exception):
            ray.kill(self.actor)
        self.actor = self._spawn()
        self.info = _ready(self.actor)

    def close(self) -> None:
        import ray

        # The actor may be busy or gone; stopping it is what matters.
        with contextlib.suppress(Exception):
            ray.wait([self.actor.close.remote()], timeout=5)
        with contextlib.suppress(Exception):
            ray.kill(self.actor)


class RayWZProver:
    """Proves identities in a Ray actor, for :func:`~lemmata.provers.wz.runner.run_wz`
    (``prover=``). An actor that runs past the limit is killed and replaced, as the local
    worker process is."""

    def __init__(
        self, cluster: RayCluster, max_order: int, timeout_s: float, grace_s: float = 5.0
    ) -> None:
        self.cluster = cluster
        self.max_order, self.timeout_s, self.grace_s = max_order, timeout_s, grace_s
        self._where: dict[str, dict[str, str]] = {}
        self.actor: Any = None

    def __enter__(self) -> RayWZProver:
        self._start()
        return self

    def _start(self) -> None:
        self.actor = self.cluster.spawn(_WZActor)
        _ready(self.actor)

    def prove(self, ident: WZIdentity) -> WZResult:
        import ray

        from lemmata.provers.wz.prove import WZResult

        ref = self.actor.prove.remote(ident, self.max_order, self.timeout_s)
        try:
            result, where = ray.get(ref, timeout=self.timeout_s + self.grace_s)
        except (ray.exceptions.GetTimeoutError, ray.exceptions.RayActorError) as exc:
            with contextlib.suppress(Exception):
                ray.kill(self.actor)
            self._start()
            stopped = isinstance(exc, ray.exceptions.GetTimeoutError)
            return WZResult(
                ident.id,
                "failed",
                reason=f"no verdict within {self.timeout_s:g}s (worker stopped)"
                if stopped
                else f"the Ray worker died ({type(exc).__name__})",
                elapsed_s=self.timeout_s + self.grace_s,
            )
        self._where[ident.id] = where
        assert isinstance(result, WZResult)
        return result

    def placement(self, ident_id: str) -> dict[str, str]:
        """Where ``ident_id`` was proved: ``ray_node_id`` and ``ray_actor_id``."""
        return self._where.get(ident_id, {})

    def __exit__(self, *exc: object) -> None:
        import ray

        with contextlib.suppress(Exception):
            ray.kill(self.actor)


class RayCluster:
    """Connects to (or starts) Ray and makes actors; use as a context manager.

    ``workers`` is how many actors the run will use: a ``local`` instance gets at least that
    many CPUs, so that every actor can be placed.
    """

    def __init__(self, address: str, *, workers: int = 1) -> None:
        require_extra("ray", "lemmata prove --ray")
        self.address = check_address(address)
        self.workers = max(1, workers)
        self.actor_ids: list[str] = []

    def __enter__(self) -> RayCluster:
        from lemmata.ray_session import RaySession

        extra: dict[str, Any] = {}
        if self.address == "local":
            extra["num_cpus"] = max(self.workers, os.cpu_count() or 1)
        try:
            self._session = RaySession(self.address, **extra).open()
        except (ConnectionError, TimeoutError, ValueError) as exc:
            raise UsageError(
                f"--ray {self.address}: cannot join a Ray cluster there ({exc}); check the "
                "address (a cluster with token authentication also needs RAY_AUTH_MODE=token "
                "and its token in RAY_AUTH_TOKEN or ~/.ray/auth_token), or use --ray local"
            ) from None
        return self

    def spawn(self, body: type, *args: Any) -> Any:
        """A new actor running ``body(*args)``, one CPU."""
        import ray

        actor: Any = ray.remote(num_cpus=1)(body).remote(*args)
        self.actor_ids.append(actor._actor_id.hex())
        return actor

    def make_worker(self, build: Callable[[], Worker], backend: str) -> RayWorker:
        """A worker whose ``build()`` runs in a new actor on the cluster."""
        return RayWorker(lambda: self.spawn(_ProverActor, build), backend)

    def factory(self, build: Callable[[], Worker], backend: str) -> Callable[[], RayWorker]:
        """``make_worker`` for :func:`~lemmata.provers.runner.run_batch`."""
        return lambda: self.make_worker(build, backend)

    def wz_prover(self, max_order: int, timeout_s: float, grace_s: float = 5.0) -> RayWZProver:
        """The prover for :func:`~lemmata.provers.wz.runner.run_wz`, on the cluster."""
        return RayWZProver(self, max_order, timeout_s, grace_s)

    def __exit__(self, *exc: object) -> None:
        self._session.close()
