"""The refinement tree search: local repairs at the failing position, chosen by the failure.

A node is a point in a proof: the tactics that lead there from the statement, the goals
there, the failure that stopped the proof at that point (goals left unsolved, or a sentence of
a draft that failed), and what is left of the draft. Its children are *local* edits at that
position, proposed by a :class:`~lemmata.provers.refine.policy.Policy`: replace the failing
sentence, insert a step before it, split the goal, drop the sentence, or cut the rest of the
draft off and close the goal on its own. Goals left after a split are closed one by one
(each is its own subproblem: the first goal is always the one worked on). There is no history
of earlier attempts in any decision: only the node, its failure and its goals.

Every edit is run from the node's saved verifier state (coqtop's ``BackTo``, the Lean REPL's
proof states), never by checking the whole file again. A node whose state was discarded by
work on another branch is rebuilt by replaying its tactics in one request. Every request
counts against ``budget_calls``: tactic runs, replays, re-opening a session and the final
whole-proof check. Nodes are deduplicated by goal state; a tactic that failed on a goal is
never run on that goal again. The search stops at the first proof the verifier accepts whole,
or when the calls or the seconds run out. Each request is one line of the trace
(:mod:`lemmata.provers.refine.trace`).

>>> from lemmata.provers import CoqTop                                    # doctest: +SKIP
>>> with CoqTop() as coq:                                                 # doctest: +SKIP
...     r = search(coq, "Theorem t : forall x : R, 0 < x -> x * x > 0.",
...                header="Require Import Reals. Open Scope R_scope.")
>>> r.status, r.proof                                                     # doctest: +SKIP
('proved', 'intros.\\nnra.')
"""

from __future__ import annotations

import contextlib
import heapq
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.errors import (
    HeaderFailed,
    InputRefused,
    ProverCrashed,
    ProverError,
    ProverTimeout,
    StatementFailed,
)
from lemmata.provers.base import ProofSession, StepResult, Verifier
from lemmata.provers.refine.backend import (
    header_for,
    probe_proofs,
    proof_text,
    scope_of,
    session_lost,
    split_draft,
    statement_for,
)
from lemmata.provers.refine.goal import Goal, parse_goal
from lemmata.provers.refine.lemmas import (
    parse_names,
    rank,
    search_command,
    shape_words,
    uses,
)
from lemmata.provers.refine.policy import (
    ASK,
    GOAL_LEMMAS,
    LEMMAS,
    Action,
    Asking,
    NodeView,
    OfflinePolicy,
    Policy,
)
from lemmata.provers.refine.trace import TraceWriter
from lemmata.provers.result import FailureKind, FailureMode

__all__ = [
    "Node",
    "Scorer",
    "SearchConfig",
    "SearchResult",
    "search",
]

# A scorer rates an action at a node in (0, 1): the learned value model's interface.
Scorer = Callable[[NodeView, Action, int], float]


@dataclass(frozen=True)
class SearchConfig:
    """Budgets and switches. ``budget_calls`` counts verifier requests of every kind."""

    budget_calls: int = 64
    budget_seconds: float = 60.0
    tactic_timeout_s: float = 3.0
    open_timeout_s: float = 120.0  # loading the header (Hammer and Interval take seconds)
    max_depth: int = 10
    imports: bool = True  # Coq: COQ_IMPORTS before the header
    automation: bool = True  # Coq: Hammer and Interval as well (when installed)
    vacuity_probe: bool = True
    progress_bonus: float = 0.7  # log-score credit for closing a goal
    value_weight: float = 0.75  # with a scorer: its share of an action's prior

    def __post_init__(self) -> None:
        if self.budget_calls < 1:
            raise ValueError(f"budget_calls must be at least 1, got {self.budget_calls}")
        if self.budget_seconds <= 0:
            raise ValueError(f"budget_seconds must be positive, got {self.budget_seconds}")

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Node:
    id: int
    parent: int | None
    tactics: tuple[str, ...]  # from the root
    state: int
    goals: tuple[str, ...]
    depth: int
    logp: float
    draft: tuple[str, ...] = ()
    failure: FailureMode | None = None
    goal: Goal | None = None
    attempt: int | None = None  # the trace index of the attempt that made it
    generation: int = 0  # the opening of the session its state belongs to
    tried: set[str] = field(default_factory=set)


@dataclass
class SearchResult:
    """The outcome of one search. ``status``: ``proved``, ``failed`` (the budget ran out
    first), ``timeout`` (the seconds did), ``error`` (the header or the statement)."""

    id: str
    status: str
    proof: str | None
    calls: int
    elapsed_s: float
    backend: str
    failure: FailureMode | None = None
    vacuous: bool | None = None
    header_additions: str = ""
    nodes: int = 0
    attempts: int = 0
    failure_counts: dict[str, int] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "proof": self.proof,
            "calls": self.calls,
            "elapsed_s": round(self.elapsed_s, 3),
            "backend": self.backend,
            "failure_mode": self.failure.to_dict() if self.failure else None,
            "vacuous": self.vacuous,
            "header_additions": self.header_additions,
            "nodes": self.nodes,
            "failure_counts": self.failure_counts,
        }


def _normal(tactic: str) -> str:
    """A tactic as run: ``"lia."`` and ``"lia"`` and ``"  lia"`` are one tactic."""
    text = " ".join(tactic.split())
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


class _Search:
    def __init__(
        self,
        verifier: Verifier,
        statement: str,
        header: str,
        pid: str,
        policy: Policy,
        config: SearchConfig,
        scorer: Scorer | None,
        trace: TraceWriter,
        on_attempt: Callable[[dict[str, Any]], None] | None,
    ) -> None:
        self.verifier = verifier
        self.backend = verifier.backend
        self.statement = statement_for(verifier.backend, statement)
        self.original_header = header
        self.header, self.additions = header_for(
            verifier.backend, header, config.imports, config.automation
        )
        self.scope = scope_of(header)
        self.pid = pid
        self.policy = policy
        self.config = config
        self.scorer = scorer
        self.trace = trace
        self.on_attempt = on_attempt
        self.started = time.monotonic()
        self.calls = 0
        self.attempts = 0
        self.nodes: dict[int, Node] = {}
        self.seen: set[tuple[str, ...]] = set()
        self.failed: set[tuple[tuple[str, ...], str]] = set()
        self.failed_on: dict[tuple[str, ...], set[str]] = {}
        self.frontier: list[tuple[float, int, int, Action]] = []
        self.seq = 0
        self.session: ProofSession | None = None
        self.spine: list[int] = []
        self.generation = 0  # how many times the session was opened
        self.kinds: Counter[str] = Counter()
        self.last_failure: FailureMode | None = None

    # -- bookkeeping ---------------------------------------------------------------------

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def out_of_budget(self, needed: int = 1) -> bool:
        """Whether ``needed`` more calls would pass the budget; one call is always kept for
        the whole-proof check that a finished state calls for."""
        return (
            self.calls + needed + 1 > self.config.budget_calls
            or self.elapsed() >= self.config.budget_seconds
        )

    def view(self, node: Node) -> NodeView:
        assert node.goal is not None
        return NodeView(
            self.backend,
            node.goal,
            len(node.goals),
            node.failure,
            set(node.tried),
            self.config.automation and "Hammer" in self.additions,
            before=node.tactics[-3:],
            failing=node.draft[0]
            if node.draft and node.failure and node.failure.sentence
            else None,
            after=node.draft[1:4],
            goals=node.goals,
            statement=self.statement,
            failed_here=frozenset(self.failed_on.get(node.goals, ())),
        )

    def record(
        self,
        node: Node,
        action: Action,
        priority: float,
        step: StepResult | None,
        status: str,
        child: Node | None,
    ) -> int:
        failure = step.failure_mode if step is not None else None
        rec = {
            "type": "attempt",
            "problem": self.pid,
            "node": node.id,
            "child": child.id if child else None,
            "tactic": action.tactic,
            "family": action.family,
            "prior": round(action.prior, 4),
            "priority": round(priority, 4) if math.isfinite(priority) else None,
            "reacting_to": action.reacting_to,
            "condition": node.failure.kind.value if node.failure else None,
            "status": status,
            "failure": (
                {
                    "kind": failure.kind.value,
                    "message": failure.message[:300],
                    "sentence": failure.sentence,
                }
                if failure
                else None
            ),
            "goals_before": len(node.goals),
            "goals_after": len(step.goals) if step is not None and not step.failed else None,
            "goal": (node.goals[0] if node.goals else "")[:2000],
            "domain": node.goal.domain if node.goal else None,
            "head": node.goal.head if node.goal else None,
            "features": node.goal.features if node.goal else {},
            "depth": node.depth,
            "calls": self.calls,
            "t": round(self.elapsed(), 3),
        }
        self.trace.write(rec)
        if self.on_attempt is not None:
            self.on_attempt(rec)
        index = self.attempts
        self.attempts += 1
        return index

    def add_node(
        self,
        parent: Node | None,
        tactics: tuple[str, ...],
        step: StepResult,
        logp: float,
        draft: tuple[str, ...],
        failure: FailureMode | None,
    ) -> Node:
        node = Node(
            id=len(self.nodes),
            parent=parent.id if parent else None,
            tactics=tactics,
            state=step.state,
            goals=step.goals,
            depth=parent.depth + 1 if parent else 0,
            logp=logp,
            draft=draft,
            failure=failure
            or FailureMode(FailureKind.UNSOLVED_GOALS, "goals left", goals=step.goals[:1]),
            goal=parse_goal(step.goals[0], self.scope) if step.goals else None,
            generation=self.generation,
        )
        if node.goal is None and parent is None:
            # Coq printed the goal in a shape we could not read (a large nat literal's
            # warning, say): the statement itself tells the goal's shape.
            body = self.statement.split(":", 1)[-1].rstrip(". \n")
            node.goal = parse_goal("⊢ " + body, self.scope)
        self.nodes[node.id] = node
        return node

    def push(self, node: Node, actions: list[Action]) -> None:
        if node.goal is None or node.depth >= self.config.max_depth:
            return
        view = self.view(node) if self.scorer else None
        for a in actions:
            prior = a.prior
            if self.scorer is not None and view is not None and a.family not in ("draft", "repair"):
                value = self.scorer(view, a, node.depth)
                w = self.config.value_weight
                prior = (1 - w) * prior + w * value
            priority = node.logp + math.log(max(prior, 1e-4))
            self.seq += 1
            heapq.heappush(self.frontier, (-priority, self.seq, node.id, a))

    def expand(self, node: Node) -> None:
        if node.goal is None:
            return
        if node.draft:
            self.push(node, [Action(node.draft[0], "draft", 0.97)])
        else:
            self.push(node, self.policy.propose(self.view(node)))

    # -- talking to the verifier -----------------------------------------------------------

    def open_session(self) -> StepResult:
        self.calls += 1
        if self.session is not None:
            with contextlib.suppress(Exception):  # a lost session may fail to close
                self.session.close()
        self.session = self.verifier.open(self.header, self.statement, self.config.open_timeout_s)
        self.generation += 1
        return self.session.root

    def persistent(self) -> bool:
        from lemmata.provers.coq.verifier import CoqSession

        return not isinstance(self.session, CoqSession)

    def live(self, node: Node) -> bool:
        """Bring ``node``'s state back if work elsewhere discarded it (one request)."""
        if self.session is None:
            return False
        if self.persistent():
            return self.revive(node)
        if node.id in self.spine:
            del self.spine[self.spine.index(node.id) + 1 :]
            return True
        chain = []
        n: Node | None = node
        while n is not None and n.id not in self.spine:
            chain.append(n)
            n = self.nodes[n.parent] if n.parent is not None else None
        if self.out_of_budget(2):  # the replay and the tactic after it
            return False
        if n is None:  # not even the root: the session was reset
            try:
                root = self.open_session()
            except ProverError:  # the statement no longer loads: nothing to run on
                return False
            self.nodes[0].state = root.state
            self.spine = [0]
            n = self.nodes[0]
        else:
            self.calls += 1
            del self.spine[self.spine.index(n.id) + 1 :]
        for m in reversed(chain):
            if m.id == 0:
                continue
            if len(m.tactics) == len(n.tactics):  # a repair node shares its parent's state
                m.state = n.state
                self.spine.append(m.id)
                n = m
                continue
            step = self.session.run(
                m.tactics[-1], state=n.state, timeout=self.config.tactic_timeout_s
            )
            if step.failed:
                return False
            m.state = step.state
            self.spine.append(m.id)
            n = m
        return True

    def revive(self, node: Node) -> bool:
        """A persistent session keeps every state, unless the process behind it was restarted
        (a Lean tactic past its time kills the REPL, and its proof states with it): then the
        statement is opened again and the node's tactics replayed from the root, one request
        each (a node made by a repair shares its parent's state)."""
        assert self.session is not None
        if session_lost(self.session):
            try:
                root = self.open_session()
            except ProverError:  # the header or the statement no longer loads: nothing to run on
                return False
            self.nodes[0].state, self.nodes[0].generation = root.state, self.generation
        chain: list[Node] = []
        n = node
        while n.generation != self.generation and n.parent is not None:
            chain.append(n)
            n = self.nodes[n.parent]
        if n.generation != self.generation:
            return False
        for m in reversed(chain):
            if len(m.tactics) > len(n.tactics):
                self.calls += 1
                step = self.session.run(
                    m.tactics[-1], state=n.state, timeout=self.config.tactic_timeout_s
                )
                if step.failed:
                    return False
                m.state = step.state
            else:
                m.state = n.state
            m.generation = self.generation
            n = m
        return True

    def lemmas(self, node: Node, action: Action, priority: float) -> None:
        """Ask the verifier for names near an unknown one and try each in the sentence."""
        query = getattr(self.session, "query", None)
        missing = action.tactic[len(LEMMAS) :]
        sentence = action.reacting_to or ""
        if query is None or not sentence or self.out_of_budget() or not self.live(node):
            return
        self.calls += 1
        output = query(search_command(missing), state=node.state)
        found = rank(parse_names(output), missing, node.goals[0] if node.goals else "")
        self.record(node, action, priority, None, "search", None)
        pattern = re.compile(rf"(?<![\w.']){re.escape(missing)}(?![\w'])")
        self.push(
            node,
            [
                Action(pattern.sub(name, sentence), "search", 0.8 * 0.85**i, sentence)
                for i, name in enumerate(found)
            ],
        )

    def goal_lemmas(self, node: Node, action: Action, priority: float) -> None:
        """Ask the verifier for lemmas whose conclusion has the stuck goal's shape (the
        ``SearchPattern`` the policy wrote) and try the best ones on the goal."""
        query = getattr(self.session, "query", None)
        if query is None or self.out_of_budget() or not self.live(node):
            return
        self.calls += 1
        output = query(action.tactic[len(GOAL_LEMMAS) :], state=node.state)
        goal = node.goal.conclusion if node.goal else ""
        found = rank(parse_names(output), "", shape_words(goal), k=4)
        self.record(node, action, priority, None, "search", None)
        head = node.goal.head if node.goal else ""
        self.push(
            node,
            [Action(t, "search", p, action.reacting_to) for t, p in uses(found, head)],
        )

    # -- the search ------------------------------------------------------------------------

    def run(self, draft: str | None) -> SearchResult:
        cfg = self.config
        self.trace.write(
            {
                "type": "problem",
                "id": self.pid,
                "backend": self.backend,
                "statement": self.statement,
                "header": self.original_header,
                "header_additions": self.additions,
                "policy": self.policy.name,
                "scorer": getattr(self.scorer, "name", None) if self.scorer else None,
                "config": cfg.to_dict(),
            }
        )
        try:
            try:
                root_step = self.open_session()
            except HeaderFailed:
                if not (cfg.automation and self.additions):
                    raise
                # Hammer or Interval missing (libcoq-hammer, libcoq-interval): go on without.
                self.header, self.additions = header_for(
                    self.backend, self.original_header, cfg.imports, False
                )
                root_step = self.open_session()
        except (HeaderFailed, StatementFailed, InputRefused) as exc:
            return self.finish("error", None, _open_failure(exc))
        except (ProverTimeout, ProverCrashed) as exc:
            failure = FailureMode(
                FailureKind.HEADER_ERROR,
                f"the header and statement did not load within {cfg.open_timeout_s:g}s "
                f"({exc.code}: {exc})",
            )
            return self.finish("error", None, failure)
        root = self.add_node(None, (), root_step, 0.0, split_draft(self.backend, draft), None)
        self.spine = [0]
        self.seen.add(root.goals)
        self.expand(root)
        while self.frontier and not self.out_of_budget():
            negp, _, nid, action = heapq.heappop(self.frontier)
            node = self.nodes[nid]
            said = _normal(action.tactic)
            key = (node.goals, said)
            if key in self.failed or said in node.tried:
                continue
            node.tried.add(said)
            if action.tactic.startswith(ASK):  # a model is asked only when its turn comes
                asked = self.policy.ask(self.view(node)) if isinstance(self.policy, Asking) else []
                self.record(node, action, -negp, None, "ask", None)
                self.push(node, asked)
                continue
            if action.tactic.startswith(LEMMAS):
                self.lemmas(node, action, -negp)
                continue
            if action.tactic.startswith(GOAL_LEMMAS):
                self.goal_lemmas(node, action, -negp)
                continue
            if action.tactic in ("<drop>", "<cut>"):  # drop the failing draft step, or the rest
                draft_left = node.draft[1:] if action.tactic == "<drop>" else ()
                child = Node(
                    len(self.nodes),
                    node.id,
                    node.tactics,
                    node.state,
                    node.goals,
                    node.depth,
                    node.logp + math.log(action.prior),
                    draft_left,
                    node.failure,
                    node.goal,
                    generation=node.generation,
                )
                self.nodes[child.id] = child
                if node.id in self.spine:
                    self.spine.append(child.id)
                self.record(node, action, -negp, None, "repair", child)
                self.expand(child)
                continue
            if not self.live(node):
                continue
            assert self.session is not None
            self.calls += 1
            step = self.session.run(action.tactic, state=node.state, timeout=cfg.tactic_timeout_s)
            if step.status == "crash":
                self.record(node, action, -negp, step, "crash", None)
                self.spine = []
                self.last_failure = step.failure_mode
                continue
            if step.failed:
                self.failed.add(key)
                self.failed_on.setdefault(node.goals, set()).add(said)
                fm = step.failure_mode or FailureMode(FailureKind.OTHER, "failed")
                self.kinds[fm.kind.value] += 1
                self.last_failure = fm
                self.record(node, action, -negp, step, step.status, None)
                if action.family == "draft":  # the draft fails here: this is the node's failure
                    node.failure = fm
                    repairs = [Action("<drop>", "repair", 0.5)]
                    if len(node.draft) > 1:  # else dropping the last step is cutting the rest
                        repairs.append(Action("<cut>", "repair", 0.35))
                    self.push(node, repairs)
                self.push(node, self.policy.react(self.view(node), action, fm))
                continue
            # It ran: a new point in the proof.
            replaces = action.family not in ("intro", "split", "destruct", "subst", "simplify")
            draft_left = (
                node.draft[1:]
                if node.draft and (action.family == "draft" or replaces)
                else node.draft
            )
            tactics = (*node.tactics, action.tactic)
            closed = len(step.goals) < len(node.goals)
            logp = (
                node.logp
                + math.log(max(action.prior, 1e-4))
                + (cfg.progress_bonus if closed else 0.0)
            )
            if step.finished:
                child = self.add_node(node, tactics, step, logp, (), None)
                self.spine.append(child.id)
                index = self.record(node, action, -negp, step, "finished", child)
                child.attempt = index
                proved = self.final_check(child)
                if proved is not None:
                    return proved
                continue
            if action.family != "draft" and (step.goals in self.seen or step.goals == node.goals):
                self.record(node, action, -negp, step, "duplicate", None)
                continue
            self.seen.add(step.goals)
            child = self.add_node(node, tactics, step, logp, draft_left, None)
            self.spine.append(child.id)
            child.attempt = self.record(node, action, -negp, step, "open", child)
            self.expand(child)
        status = "timeout" if self.elapsed() >= cfg.budget_seconds else "failed"
        summary: FailureMode | None = self.last_failure
        if self.kinds:
            common = self.kinds.most_common(1)[0][0]
            summary = FailureMode(
                FailureKind(common),
                f"no proof within {self.calls} verifier calls; most common failure: {common}",
            )
        return self.finish(status, None, summary)

    def final_check(self, node: Node) -> SearchResult | None:
        proof = proof_text(self.backend, node.tactics)
        self.calls += 1
        r = self.verifier.check(
            self.header, self.statement, proof, self.config.tactic_timeout_s * 4
        )
        self.spine = []  # a whole check starts from the header: every state is gone
        self.trace.write(
            {
                "type": "attempt",
                "problem": self.pid,
                "node": node.id,
                "child": None,
                "tactic": proof,
                "family": "check",
                "status": "check" if r.ok else "error",
                "failure": r.failure_mode.to_dict() if r.failure_mode else None,
                "calls": self.calls,
                "t": round(self.elapsed(), 3),
            }
        )
        self.attempts += 1
        if not r.ok:
            self.last_failure = r.failure_mode
            return None
        vacuous = self.probe() if self.config.vacuity_probe else None
        return self.finish("proved", proof, None, vacuous=vacuous, solved=node)

    def probe(self) -> bool:
        """Whether the hypotheses contradict each other: ``False`` follows from them by
        arithmetic or logic. Outside the budget: it judges the statement, not the search."""
        tries = probe_proofs(self.backend, self.statement)
        for proof in tries:
            r = self.verifier.check(
                self.header, self.statement, proof, self.config.tactic_timeout_s
            )
            if r.ok:
                return True
        return False

    def finish(
        self,
        status: str,
        proof: str | None,
        failure: FailureMode | None,
        vacuous: bool | None = None,
        solved: Node | None = None,
    ) -> SearchResult:
        path: list[int] = []
        n = solved
        while n is not None:  # a node made by a repair has no attempt of its own
            if n.attempt is not None:
                path.append(n.attempt)
            n = self.nodes[n.parent] if n.parent is not None else None
        result = SearchResult(
            id=self.pid,
            status=status,
            proof=proof,
            calls=self.calls,
            elapsed_s=self.elapsed(),
            backend=self.backend,
            failure=failure,
            vacuous=vacuous,
            header_additions=self.additions if proof else "",
            nodes=len(self.nodes),
            attempts=self.attempts,
            failure_counts=dict(self.kinds),
        )
        self.trace.write({"type": "result", **result.to_dict(), "path": sorted(path)})
        if self.session is not None:
            with contextlib.suppress(Exception):  # a lost session may fail to close
                self.session.close()
        return result


def search(
    verifier: Verifier,
    statement: str,
    header: str = "",
    *,
    id: str = "theorem",
    draft: str | None = None,
    policy: Policy | None = None,
    config: SearchConfig | None = None,
    scorer: Scorer | None = None,
    trace: str | Path | TraceWriter | None = None,
    on_attempt: Callable[[dict[str, Any]], None] | None = None,
) -> SearchResult:
    """Search for a proof of ``statement`` by local repairs; see the module docstring.

    ``draft`` is a proof to start from (its failing sentences are repaired in place);
    ``policy`` proposes the repairs (default :class:`OfflinePolicy`); ``scorer`` (the value
    model, :mod:`lemmata.provers.refine.value`) reorders them; ``trace`` is a JSONL file or an
    open :class:`TraceWriter`; ``on_attempt`` sees each trace record as it is written.
    """
    cfg = config or SearchConfig()
    own = not isinstance(trace, TraceWriter)
    writer = trace if isinstance(trace, TraceWriter) else TraceWriter(trace)
    try:
        return _Search(
            verifier,
            statement,
            header,
            id,
            policy or OfflinePolicy(),
            cfg,
            scorer,
            writer,
            on_attempt,
        ).run(draft)
    finally:
        if own:
            writer.close()


def _open_failure(exc: HeaderFailed | StatementFailed | InputRefused) -> FailureMode:
    """The failure of a search whose theorem did not open, by the error's type."""
    if isinstance(exc, HeaderFailed):
        return FailureMode(FailureKind.HEADER_ERROR, exc.message, sentence=exc.sentence)
    if isinstance(exc, InputRefused):
        return FailureMode(FailureKind.UNSAFE_INPUT, exc.message)
    try:
        kind = FailureKind(exc.kind)
    except ValueError:
        kind = FailureKind.SYNTAX_ERROR
    return FailureMode(kind, exc.message)
