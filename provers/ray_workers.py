"""Proof workers on a Ray cluster: ``lemmata prove --ray local|auto|ADDRESS``.

Each worker is a Ray actor that owns one verifier (a coqtop or a Lean REPL on the node that
runs it) and proves one theorem at a time; the batch runner hands theorems to the actors
exactly as it does to local verifiers. ``local`` starts a Ray instance on this machine
(no dashboard, no usage statistics); ``auto`` joins the cluster this machine belongs to;
anything else is a cluster address. Nodes need lemmata and the backend's prover installed.

Needs the ``ray`` extra: ``pip install 'lemmata[ray]'``.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from lemmata.deps import require_extra
from lemmata.provers.runner import Theorem, TheoremResult

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = ["RayCluster", "RayWorker"]

# The settings a verifier needs on a remote node (never the API key).
_VERIFIER_SETTINGS = ("coqtop", "lean_repl", "lean_project", "verifier_timeout_s")


class _ProverActor:
    """The actor's body: one verifier, built on the node from the settings it was given."""

    def __init__(self, backend: str, settings: dict[str, Any], timeout_s: float) -> None:
        from lemmata.provers import make_verifier
        from lemmata.settings import Settings

        self.verifier = make_verifier(
            backend, Settings.load(config_file=None, **settings), timeout_s=timeout_s
        )

    def prove(self, theorem: dict[str, Any], timeout: float) -> dict[str, Any]:
        from lemmata.provers.runner import prove_one

        return dict(prove_one(self.verifier, Theorem(**theorem), timeout).__dict__)

    def close(self) -> None:
        self.verifier.close()


class RayWorker:
    """A :class:`~lemmata.provers.runner.Worker` whose verifier lives in a Ray actor."""

    def __init__(self, actor: Any, backend: str) -> None:
        self.actor = actor
        self.backend = backend

    def prove(self, theorem: Theorem, timeout: float) -> TheoremResult:
        import ray

        ref = self.actor.prove.remote(dict(theorem.__dict__), timeout)
        try:
            # The verifier enforces the limit; the margin covers scheduling and a restart.
            data = ray.get(ref, timeout=timeout + 60)
        except (ray.exceptions.GetTimeoutError, ray.exceptions.RayActorError) as exc:
            return TheoremResult(
                theorem.id,
                "error",
                None,
                {
                    "kind": "crash",
                    "message": f"Ray worker failed: {type(exc).__name__}",
                    "line": None,
                    "column": None,
                    "tactic": None,
                },
                timeout,
                0,
                self.backend,
            )
        return TheoremResult(**data)

    def close(self) -> None:
        import ray

        # The actor may be gone already; killing it is what matters.
        with contextlib.suppress(Exception):
            ray.get(self.actor.close.remote(), timeout=10)
        ray.kill(self.actor)


class RayCluster:
    """Connects to (or starts) Ray and makes :class:`RayWorker` s; use as a context manager."""

    def __init__(self, address: str, backend: str, settings: Settings, timeout_s: float) -> None:
        require_extra("ray", "lemmata prove --ray")
        self.address = address
        self.backend = backend
        self.settings = {k: getattr(settings, k) for k in _VERIFIER_SETTINGS}
        self.settings = {
            k: (str(v) if k == "lean_project" and v is not None else v)
            for k, v in self.settings.items()
        }
        self.timeout_s = timeout_s

    def __enter__(self) -> RayCluster:
        import ray

        from lemmata.ray_session import RaySession

        self._session = RaySession(self.address).open()
        self._actor_cls = ray.remote(num_cpus=1)(_ProverActor)
        return self

    def make_worker(self) -> RayWorker:
        actor = self._actor_cls.remote(self.backend, self.settings, self.timeout_s)
        return RayWorker(actor, self.backend)

    def __exit__(self, *exc: object) -> None:
        self._session.close()
