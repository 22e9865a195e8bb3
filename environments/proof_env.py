"""Coq tactic sessions as a :class:`~lemmata.environments.text.TextEnvironment` (``coq-tactics``):
the state is the goals, an action is one tactic sentence, the next state is the new goals or
the failure.

The session is the provers' own (:meth:`lemmata.provers.coq.CoqTop.open`, one reused coqtop
with ``BackTo`` to any state reached); nothing here speaks to Coq directly except the final
``Qed.``.

**Tasks.** Coq theorems with a known tactic proof, so that expert actions exist, listed in
``coq_tactics.json`` beside this module:

- ``coq_basic``: the 46 theorems of ``provers/suites/coq_basic.jsonl`` (header and statement
  read from the suite; the suite's proof where it has one, else a proof written for this
  environment), in five families: ``arith``, ``order``, ``lists``, ``logic``, ``bool``;
- ``coq_extra``: 37 more textbook lemmas of the same five families, header and style, written
  for this environment (statement and proof in the file), so that the in-distribution test
  holds enough theorems for one of them to weigh about 2 points;
- ``minif2f-rocq``: 34 competition problems of the *valid* split of miniF2F-rocq
  (LLM4Rocq/miniF2F-rocq, MIT; statement and header copied, licence kept in the file), whose
  proofs Coq's standard library closes: ``mathd-algebra`` (12; reals and rationals: ``field``,
  ``ring``, ``lra``, rewriting with the given functions' definitions, square roots of squares)
  and ``mathd-numbertheory`` (22; closed computations: ``vm_compute``). They are the
  ``mathd`` problems of the split that a menu closer closes after at most ``intros`` and
  ``subst`` (found by trying such combinations) and seven algebra problems whose proofs were
  written for this file: enough for one of them to weigh under 3 points.

A task's ``name`` is its family, ``variation`` its index within the family (data order), and
``params`` the theorem's id in its source (checked on :meth:`~ProofEnvironment.reset`, so
that a stale task record never silently opens another theorem).

**Splits.** ``train`` and ``test-id`` divide ``coq_basic`` by a fixed hash of the theorem's name
(:func:`split_of`: one in four is ``test-id``), so both hold the same families and style;
``test-id`` also holds every ``coq_extra`` lemma (never trained on);
``test-ood`` is all of ``minif2f-rocq``: another source, other number domains (R, Q, Z) and
other proof moves (computation, field arithmetic) than the textbook lemmas trained on.

**Observations.** The goals as the provers print them (hypotheses one a line, the conclusion
after ``⊢``, the first goal in full, the others by conclusion), headed ``N goals``; ``No more
goals.`` once the proof is done. A tactic that fails leaves the state as it was (Coq never
applied it) and answers ``Error (<failure class>): <Coq's message>`` followed by the unchanged
goals, with ``invalid`` set; the class is the one :func:`lemmata.provers.failure.classify_coq`
gives. Besides the payload keys every text environment carries, the payload holds ``theorem``
(its id), ``goals`` (a list), ``error`` (``{"kind", "message"}`` or ``None``), ``state``
(coqtop's state number) and ``view`` (the goals' text, without the error: a failed tactic
leaves the view as it was).

**Success and score.** ``success`` when no goal is left and ``Qed.`` is accepted; ``score`` is
then 1.0 and 0.0 before (the number of goals rises and falls as a proof goes, so a fraction of
goals closed would read as progress where there is none). ``failure`` when ``max_steps`` actions
(valid or not) were taken without success, or when ``Qed.`` refuses a proof with no goals left.

**Actions.** Coq's tactic space is open, so :meth:`~ProofEnvironment.admissible_actions` is
``None`` by default (collection then asks a model for alternatives). ``menu=True`` offers
:data:`TACTIC_MENU` instead, the generic tactics of the provers' portfolio, the same at every
state: enough for offline collection with no model, where the alternatives' outcomes (mostly
failures, each with its class) are what a world model learns from. A menu tactic that needs a
library the theorem's header does not load (``lra`` under ``Arith``) fails like any other.

**Branching.** :meth:`~ProofEnvironment.snapshot` records the task, the tactics accepted so far,
coqtop's state number and the goals; :meth:`~ProofEnvironment.restore` jumps back to that state
in the same session when it still holds it (the next tactic sends ``BackTo``), and otherwise
reopens the theorem and replays the tactics; either way the goals must equal the snapshot's
(:class:`~lemmata.errors.SnapshotError` if not). A tactic that runs past ``tactic_timeout_s``
costs the coqtop process: the environment reopens the theorem and replays, and the step answers
``invalid`` with the ``timeout`` class.

>>> with ProofEnvironment() as env:                                       # doctest: +SKIP
...     obs = env.reset(env.tasks("train", names=["arith"], limit=1)[0])
...     print(obs.text)
1 goal
⊢ forall n : nat, n + 0 = n
>>> env.step("lia2.").text.splitlines()[0]                                # doctest: +SKIP
'Error (unknown_identifier): The reference lia2 was not found in the current environment.'
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from lemmata.environments.base import Observation
from lemmata.environments.text import SPLITS, Split, Task, TextEnvironment
from lemmata.errors import DataSourceError, SnapshotError, UnknownTask, UsageError
from lemmata.provers.coq import CoqCrashed, CoqSession, CoqTimeout, CoqTop, parse_output
from lemmata.provers.refine.backend import split_draft
from lemmata.provers.result import FailureKind, FailureMode

__all__ = ["TACTIC_MENU", "ProofEnvironment", "Theorem", "load_theorems", "split_of"]

#: The tactics ``menu=True`` offers at every state: the closers and preparations of the
#: provers' portfolio (:mod:`lemmata.provers.portfolio`, :mod:`lemmata.provers.refine.policy`).
TACTIC_MENU: tuple[str, ...] = (
    "intros.",
    "simpl.",
    "reflexivity.",
    "assumption.",
    "split.",
    "left.",
    "right.",
    "constructor.",
    "subst.",
    "trivial.",
    "auto.",
    "easy.",
    "tauto.",
    "intuition.",
    "congruence.",
    "discriminate.",
    "firstorder.",
    "lia.",
    "nia.",
    "lra.",
    "nra.",
    "ring.",
    "field.",
    "vm_compute.",
)

_DATA = "coq_tactics.json"
_SUITE_SOURCE = "coq_basic"
_EXTRA_SOURCE = "coq_extra"


@dataclass(frozen=True)
class Theorem:
    """One theorem with its expert proof: ``header`` (imports), ``statement``
    (``Theorem name : ... .``) and ``proof`` (tactic sentences, without ``Proof.``/``Qed.``)."""

    id: str
    source: str
    family: str
    header: str
    statement: str
    proof: str
    split: Split


def split_of(theorem_id: str, source: str) -> Split:
    """The split a theorem belongs to: every ``minif2f-rocq`` theorem is ``test-ood`` and every
    ``coq_extra`` one ``test-id``; of the ``coq_basic`` ones, those whose SHA-256 of the name is
    0 modulo 4 are ``test-id``.

    >>> split_of("add_comm", "coq_basic"), split_of("mul_0_r", "coq_basic")
    ('train', 'test-id')
    >>> split_of("mathd_algebra_55", "minif2f-rocq"), split_of("lt_succ", "coq_extra")
    ('test-ood', 'test-id')
    """
    if source == _EXTRA_SOURCE:
        return "test-id"
    if source != _SUITE_SOURCE:
        return "test-ood"
    digest = int(hashlib.sha256(theorem_id.encode("utf-8")).hexdigest(), 16)
    return "test-id" if digest % 4 == 0 else "train"


def _read_json(package: str, *parts: str) -> Any:
    node = resources.files(package).joinpath(*parts)
    try:
        text = node.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataSourceError(f"cannot read {package}/{'/'.join(parts)}: {exc}") from None
    try:
        if parts[-1].endswith(".jsonl"):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataSourceError(f"{package}/{'/'.join(parts)} is not valid JSON: {exc}") from None


@cache
def load_theorems() -> tuple[Theorem, ...]:
    """Every theorem of the environment, in data order (see the module's documentation)."""
    data = _read_json("lemmata.environments", _DATA)
    suite = {row["id"]: row for row in _read_json("lemmata.provers", "suites", "coq_basic.jsonl")}
    out = []
    for row in data["tasks"]:
        source = row["source"]
        if source == _SUITE_SOURCE:
            try:
                base = suite[row["id"]]
            except KeyError:
                raise DataSourceError(
                    f"{_DATA} names {row['id']!r}, which provers/suites/coq_basic.jsonl lacks"
                ) from None
            header, statement = base["header"], base["statement"]
            proof = base.get("proof") or row.get("proof")
        else:
            header, statement, proof = row["header"], row["statement"], row.get("proof")
        if not proof:
            raise DataSourceError(f"{_DATA}: {row['id']!r} has no proof")
        split = split_of(row["id"], source)
        out.append(Theorem(row["id"], source, row["family"], header, statement, proof, split))
    return tuple(out)


def _goals_text(goals: tuple[str, ...]) -> str:
    """Goals as the observation shows them: ``N goals``, the first in full, then the others."""
    if not goals:
        return "No more goals."
    head = f"{len(goals)} goal{'s' if len(goals) > 1 else ''}\n{goals[0]}"
    rest = [f"goal {i} is:\n{g}" for i, g in enumerate(goals[1:], start=2)]
    return "\n\n".join([head, *rest])


class ProofEnvironment(TextEnvironment):
    """Coq proofs, one tactic at a time; see the module's documentation.

    ``menu`` offers :data:`TACTIC_MENU` as the admissible actions (default: ``None``, an open
    action space); ``coqtop`` names the executable (default: the one on PATH; a missing one
    raises :class:`~lemmata.errors.ToolNotFound`); ``tactic_timeout_s`` bounds each tactic;
    ``max_steps`` ends an episode without success as a failure.
    """

    name: ClassVar[str] = "coq-tactics"
    install: ClassVar[str] = "apt-get install coq"

    def __init__(
        self,
        *,
        menu: bool = False,
        coqtop: str | None = None,
        tactic_timeout_s: float = 5.0,
        max_steps: int = 50,
    ) -> None:
        if max_steps < 1:
            raise UsageError(f"max_steps must be at least 1, not {max_steps}")
        self.menu = menu
        self.tactic_timeout_s = tactic_timeout_s
        self.max_steps = max_steps
        self._theorems = load_theorems()
        self._coq = CoqTop(coqtop, timeout_s=max(10.0, tactic_timeout_s))
        self._task: Task | None = None
        self._theorem: Theorem | None = None
        self._session: CoqSession | None = None
        self._token = ""
        self._starts = 0
        self._tactics: list[str] = []
        self._steps = 0
        self._success = False
        self._failure = False
        self._closed = False

    # -- tasks --------------------------------------------------------------------------------
    def task_names(self) -> list[str]:
        return list(dict.fromkeys(t.family for t in self._theorems))

    def tasks(
        self, split: Split, names: list[str] | None = None, limit: int | None = None
    ) -> list[Task]:
        if split not in SPLITS:
            raise UnknownTask(f"no split {split!r}: choose one of {', '.join(SPLITS)}")
        known = self.task_names()
        for n in names or []:
            if n not in known:
                raise UnknownTask(
                    f"{self.name} has no task {n!r}: choose one of {', '.join(known)}"
                )
        out = []
        for family in names or known:
            members = [t for t in self._theorems if t.family == family]
            chosen = [
                Task(self.name, family, i, split, t.id)
                for i, t in enumerate(members)
                if t.split == split
            ]
            out += chosen[:limit] if limit is not None else chosen
        return out

    def theorem(self, task: Task) -> Theorem:
        """The theorem ``task`` stands for; :class:`UnknownTask` when there is none."""
        if task.env != self.name:
            raise UnknownTask(f"{task.id} is a task of {task.env!r}, not of {self.name!r}")
        members = [t for t in self._theorems if t.family == task.name]
        if not members:
            raise UnknownTask(
                f"{self.name} has no task {task.name!r}: choose one of {', '.join(self.task_names())}"
            )
        if not 0 <= task.variation < len(members):
            raise UnknownTask(
                f"{self.name}/{task.name} has variations 0..{len(members) - 1}, not {task.variation}"
            )
        found = members[task.variation]
        if task.params and task.params != found.id:
            raise UnknownTask(
                f"{task.id}: variation {task.variation} of {task.name} is {found.id!r}, "
                f"not {task.params!r}"
            )
        return found

    @property
    def task(self) -> Task | None:
        return self._task

    # -- episodes -----------------------------------------------------------------------------
    def reset(self, task: Task | None = None) -> Observation:
        if task is None:
            task = self._task or self.tasks("train")[0]
        theorem = self.theorem(task)
        self._open(theorem)
        self._task, self._theorem = task, theorem
        self._steps = 0
        return self._observe()

    def _open(self, theorem: Theorem) -> None:
        self._check_open()
        if self._session is not None:
            self._session.close()
            self._session = None
        try:
            self._session = self._coq.open(theorem.header, theorem.statement, timeout=60.0)
        except (ValueError, CoqTimeout, CoqCrashed) as exc:
            raise DataSourceError(f"{theorem.id} does not open in Coq: {exc}") from None
        self._token = uuid.uuid4().hex
        self._starts = self._coq.process.starts
        self._tactics = []
        self._success = self._failure = False

    def step(self, action: str | dict[str, Any]) -> Observation:
        session = self._revived()
        tactic = self.action_text(action)
        self._steps += 1
        if self._success or self._failure:
            return self._observe(
                FailureMode(
                    kind=FailureKind.STRUCTURE, message="the episode is over: reset() to go on"
                )
            )
        if not tactic:
            return self._finish_step(
                FailureMode(kind=FailureKind.SYNTAX_ERROR, message="an empty tactic")
            )
        result = session.run(tactic, timeout=self.tactic_timeout_s)
        if result.failed:
            failure = result.failure_mode or FailureMode(
                kind=FailureKind.OTHER, message=result.status
            )
            self._revived()  # a tactic past its hard deadline costs the process
            return self._finish_step(failure)
        self._tactics.append(result.tactic or tactic)
        if result.finished:
            self._qed()
        return self._finish_step(None)

    def _revived(self) -> CoqSession:
        """The session, rebuilt by replay when its coqtop was killed (a tactic past its hard
        deadline) or died: the states it numbered are gone with the process."""
        session = self._live_session()
        if not self._lost(session):
            return session
        assert self._theorem is not None
        self._replay(self._theorem, list(self._tactics))
        return self._live_session()

    def _lost(self, session: CoqSession) -> bool:
        process = self._coq.process
        return session.lost is not None or not process.alive or process.starts != self._starts

    def _finish_step(self, error: FailureMode | None) -> Observation:
        if not self._success and self._steps >= self.max_steps:
            self._failure = True
        return self._observe(error)

    def _qed(self) -> None:
        """Close the theorem; the session's states stay reachable (``BackTo`` reopens it)."""
        session = self._live_session()
        process = self._coq.process
        try:
            answer = process.send("Qed.", self.tactic_timeout_s + 5)
        except (CoqTimeout, CoqCrashed) as exc:
            session.lost = f"Qed did not answer ({type(exc).__name__})"
            self._failure = True
            return
        if parse_output(answer.output).errors or answer.proof is not None:
            if answer.proof is not None:
                process.send("Abort.", 10)  # leave no open proof behind the session's back
            self._failure = True
        else:
            self._success = True

    def admissible_actions(self) -> list[str] | None:
        return list(TACTIC_MENU) if self.menu else None

    def gold_actions(self) -> list[str] | None:
        if self._theorem is None:
            return None
        return list(split_draft("coq", self._theorem.proof))

    # -- branching ----------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        session = self._live_session()
        assert self._task is not None
        return {
            "env": self.name,
            "task": self._task.to_dict(),
            "tactics": list(self._tactics),
            "steps": self._steps,
            "session": self._token,
            "state": session.current,
            "goals": list(session.states[session.current].goals),
            "success": self._success,
            "failure": self._failure,
        }

    def restore(self, state: dict[str, Any]) -> Observation:
        self._check_open()
        try:
            if state.get("env") != self.name:
                raise SnapshotError(f"not a snapshot of {self.name}: {state.get('env')!r}")
            task = Task.from_dict(state["task"])
            tactics = [str(t) for t in state["tactics"]]
            goals = tuple(str(g) for g in state["goals"])
            steps, number = int(state["steps"]), int(state["state"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SnapshotError(f"not a {self.name} snapshot: {exc!r}") from None
        theorem = self.theorem(task)
        session = self._session
        cheap = (
            session is not None
            and not self._lost(session)
            and state.get("session") == self._token
            and number in session.states
            and session.proof_of(number) == tactics
        )
        if cheap:
            assert session is not None
            session.current = number  # the next tactic sends BackTo
            self._tactics = list(tactics)
        else:
            self._replay(theorem, tactics)
            session = self._live_session()
        reached = session.states[session.current].goals
        if reached != goals:
            raise SnapshotError(
                f"restoring {task.id} after {len(tactics)} tactics reached other goals: "
                f"{_goals_text(reached)!r} instead of {_goals_text(goals)!r}"
            )
        self._task, self._theorem = task, theorem
        self._steps = steps
        self._success, self._failure = bool(state.get("success")), bool(state.get("failure"))
        return self._observe()

    def _replay(self, theorem: Theorem, tactics: list[str]) -> None:
        """Reopen ``theorem`` and run ``tactics`` again from its start."""
        success, failure = self._success, self._failure
        self._open(theorem)
        session = self._live_session()
        for i, tactic in enumerate(tactics):
            result = session.run(tactic, timeout=self.tactic_timeout_s)
            if result.failed:
                message = result.failure_mode.message if result.failure_mode else result.status
                raise SnapshotError(
                    f"replaying {theorem.id}: tactic {i + 1} {tactic!r} now fails: {message}"
                )
            self._tactics.append(tactic)
        self._success, self._failure = success, failure

    # -- observations -------------------------------------------------------------------------
    def _observe(self, error: FailureMode | None = None) -> Observation:
        session = self._live_session()
        assert self._theorem is not None
        goals = session.states[session.current].goals
        text = _goals_text(goals)
        if error is not None:
            text = f"Error ({error.kind.value}): {error.message}\n\n{text}"
        return Observation(
            text=text,
            payload={
                "task": f"Prove this Coq theorem, one tactic at a time.\n"
                f"{self._theorem.header}\n{self._theorem.statement}",
                "admissible": self.admissible_actions(),
                "score": 1.0 if self._success else 0.0,
                "success": self._success,
                "failure": self._failure,
                "invalid": error is not None,
                "steps": self._steps,
                "theorem": self._theorem.id,
                "goals": list(goals),
                "error": None
                if error is None
                else {"kind": error.kind.value, "message": error.message},
                "state": session.current,
                "view": _goals_text(goals),
            },
            done=self._success or self._failure,
        )

    def _live_session(self) -> CoqSession:
        self._check_open()
        if self._session is None:
            raise UsageError(f"{self.name}: call reset() before stepping")
        return self._session

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError(f"{self.name} was closed: open a new environment")

    def __enter__(self) -> ProofEnvironment:
        return self

    def close(self) -> None:
        """Stop coqtop; the environment cannot be used afterwards."""
        if self._closed:
            return
        self._closed = True
        self._session = None
        self._coq.close()
