"""``CoqTop``: Coq as a :class:`~lemmata.provers.base.Verifier`, over one reused coqtop.

The header (``Require Import ...``) is loaded once and the state after it remembered; each
check goes back there with ``BackTo`` instead of starting Coq again. A check sends the
statement, then the proof one sentence at a time, then ``Qed.``, then ``Print Assumptions``:

- the proof may not close, abort or restart the theorem, nor declare anything (those
  sentences fail the check as ``statement_changed`` before they reach Coq), and the prompt must
  name the theorem after every proof sentence;
- ``admit``/``Admitted``/``give_up`` fail as ``uses_sorry``;
- ``Fail tac.`` (it succeeds exactly when ``tac`` fails) and ``Succeed tac.`` are proof steps:
  Coq reverts what they run, and the command under them is screened as above;
- every axiom it depends on must come from Coq's standard library (``Locate`` says where),
  and ``Print Assumptions`` must not say that a checker was off: a fixpoint "assumed to be
  guarded" fails as ``assumed_guarded``, an inductive type "assumed to be positive" as
  ``assumed_positive``, anything that "relies on an unsafe hierarchy" (universe checking off,
  type-in-type) as ``unsafe_universes``; a line this reader does not know fails as
  ``bad_axiom`` (see :func:`~lemmata.provers.coq.output.read_assumptions`).

What may be sent is screened first (:mod:`lemmata.provers.coq.screen`): the proof against an
allowlist (tactics, bullets, braces, ``Proof``/``Qed``/``Defined``, read-only queries), the
header against commands that write or load files or switch a checker off (``unsafe_input``),
unless the verifier is built with ``trusted_header=True``. With ``untrusted=True`` coqtop
itself runs confined (:mod:`lemmata.confine`): a scratch folder, no network, the file system
read-only and limited to what Coq needs, memory and CPU limits.

A failed check says where (:class:`~lemmata.provers.result.FailureMode`): the failing
sentence, its index among the proof's sentences and the goals just before it; for goals left
at ``Qed``, no sentence and the goals left.

A sentence that runs past the time limit kills the process (``TIMEOUT``); a dead process is a
``CRASH``. Either way the next check starts a fresh coqtop and loads the header again.

>>> coq = CoqTop()                                                        # doctest: +SKIP
>>> coq.check("", "Theorem t : forall n : nat, n + 0 = n.", "induction n; simpl; auto.").ok
... # doctest: +SKIP
True
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import replace

from lemmata.errors import (
    HeaderFailed,
    InputRefused,
    ProverError,
    StatementFailed,
)
from lemmata.provers.base import SessionStates, StepResult, StepStatus, failed_step, position_of
from lemmata.provers.coq.output import CoqMessage, ParsedOutput, parse_output, read_assumptions
from lemmata.provers.coq.process import (
    QUIET_OPTIONS,
    CoqAnswer,
    CoqCrashed,
    CoqProcess,
    CoqTimeout,
    coq_version,
)
from lemmata.provers.coq.screen import ENDS, THEOREM_KEYWORDS, screen_header, screen_proof
from lemmata.provers.coq.sentences import Sentence, SentenceError, head_word, split_sentences
from lemmata.provers.failure import classify_coq, tactic_name
from lemmata.provers.process import Verdict, error_verdict
from lemmata.provers.result import (
    FailureKind,
    FailureMode,
    Message,
    Status,
    VerifyResult,
    traced_check,
)

__all__ = ["CoqSession", "CoqTop", "THEOREM_KEYWORDS"]

# Bullets, braces and goal selectors with a brace: sentences that take no ``Timeout``.
_STRUCTURAL = re.compile(r"[-+*]+|[{}]|(\d+|all|par|!)\s*:\s*\{")
_HARD_GRACE_S = 5.0
_QUERIES = frozenset({"Search", "SearchPattern", "SearchRewrite", "About", "Check", "Locate"})
_NAME = re.compile(r"^\s*\w+\s+([A-Za-z_][\w']*)")
# What each switched-off checker means for the theorem, by failure kind.
_UNSAFE = {
    "assumed_guarded": "{subject} is assumed to be guarded: its recursion was never checked to "
    "terminate (Guard Checking off or bypass_check), so {name} is not proved",
    "assumed_positive": "{subject} is assumed to be positive: the inductive type was never "
    "checked for positivity (Positivity Checking off or bypass_check), so {name} is not proved",
    "unsafe_universes": "{subject} relies on an unsafe hierarchy (Universe Checking off or "
    "type-in-type), so {name} is not proved",
}


class CoqTop:
    """The Coq verifier; see the module docstring.

    ``reuse=False`` starts a fresh coqtop for every check (for comparison; much slower).
    ``recycle_after`` checks, or a process above ``memory_cap_mb``, and coqtop is restarted.
    ``trusted_header=True`` skips the header screen (for headers the caller wrote);
    ``untrusted=True`` runs coqtop confined (:class:`~lemmata.confine.Confinement`, with
    ``memory_cap_mb`` as its memory limit) and raises
    :class:`~lemmata.errors.ConfinementUnavailable` here when confinement cannot work.
    """

    backend = "coq"

    def __init__(
        self,
        coqtop: str | None = None,
        *,
        args: tuple[str, ...] = (),
        timeout_s: float = 60.0,
        reuse: bool = True,
        recycle_after: int = 1000,
        memory_cap_mb: int = 2048,
        trusted_header: bool = False,
        untrusted: bool = False,
    ) -> None:
        confinement = None
        if untrusted:
            from lemmata.confine import Confinement

            confinement = Confinement(memory_mb=memory_cap_mb + 512)
            confinement.require()
        self.process = CoqProcess(coqtop, args, confinement=confinement)
        self.trusted_header = trusted_header
        self.untrusted = untrusted
        self.timeout_s = timeout_s
        self.reuse = reuse
        self.recycle_after = recycle_after
        self.memory_cap_mb = memory_cap_mb
        self._header: str | None = None
        self._header_state = 0
        self._checks = 0
        self._version: str | None = None

    def version(self) -> str:
        if self._version is None:
            self._version = coq_version(self.process.executable)
        return self._version

    def close(self) -> None:
        self.process.close()
        self._header = None

    def __enter__(self) -> CoqTop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- header and state -----------------------------------------------------------------

    def _ready(self, header: str, deadline: float) -> None:
        """Put coqtop in the state just after ``header``, loading it if need be."""
        fresh = (
            not self.reuse
            or not self.process.alive
            or self._header != header
            or self.process.worn(self._checks, self.recycle_after, self.memory_cap_mb)
        )
        if fresh:
            self._header = None
            self.process.start(timeout=max(1.0, deadline - time.monotonic()))
            self._checks = 0
            try:
                sentences = split_sentences(header)
            except SentenceError as exc:
                raise HeaderFailed(f"the header does not parse: {exc}") from None
            for s in sentences:
                answer = self.process.send(s.text, max(0.1, deadline - time.monotonic()))
                errors = parse_output(answer.output).errors
                if errors:
                    raise HeaderFailed(
                        f"the header fails at {s.text!r}: {errors[0].text}", sentence=s.text
                    )
            if self.process.proof is not None:
                raise HeaderFailed("the header leaves a proof open")
            for option in QUIET_OPTIONS:  # unknown (no lia loaded) is only a warning
                self.process.send(option, max(0.1, deadline - time.monotonic()))
            self._header_state = self.process.state
            self._header = header
        elif self.process.state != self._header_state:
            self.process.send(
                f"BackTo {self._header_state}.", max(0.1, deadline - time.monotonic())
            )
        self._checks += 1

    # -- whole-proof checks ---------------------------------------------------------------

    @traced_check
    def check(
        self, header: str, statement: str, proof: str, timeout: float | None = None
    ) -> VerifyResult:
        """Check ``proof`` of ``statement`` under ``header``; see the module docstring."""
        limit = timeout or self.timeout_s
        messages: list[Message] = []
        result = Verdict(self.backend, self.version, messages=messages)
        deadline = result.started + limit
        try:
            name, stmt = _parse_statement(statement)
        except StatementFailed as exc:
            return error_verdict(result, exc, limit)
        try:
            sentences = split_sentences(proof)
        except SentenceError as exc:
            return result(Status.FAIL, FailureMode(FailureKind.SYNTAX_ERROR, str(exc)))
        refused = self._screen_header(header)
        if refused is not None:
            return result(Status.FAIL, refused, stage="header")
        problem = screen_proof(sentences, proof)
        if problem is not None:
            return result(Status.FAIL, problem)
        terminator = "Qed."
        if sentences and head_word(sentences[-1].text) in ENDS:
            terminator = sentences.pop().text
        goals: list[str] = []
        at: tuple[str | None, int | None] = (None, None)  # the sentence running, and its index
        try:
            self._ready(header, deadline)
            answer = self._send(stmt.text, deadline)
            parsed = parse_output(answer.output)
            if parsed.errors:
                messages.extend(_messages(parsed.errors, statement, stmt))
                failure = classify_coq(parsed.errors[0].text)
                return result(
                    Status.FAIL,
                    replace(
                        failure, message="the statement does not elaborate: " + failure.message
                    ),
                    stage="statement",
                )
            goals = parsed.goals or []
            for i, s in enumerate(sentences):
                at = (s.text, i)
                # Coq's own Timeout stops a slow sentence and keeps coqtop (and the loaded
                # header) alive; the hard deadline a little later is for a coqtop that hangs.
                prefix = ""
                remaining = deadline - time.monotonic()
                if not _STRUCTURAL.fullmatch(s.text) and remaining >= 1:
                    prefix = f"Timeout {math.floor(remaining)} "
                answer = self._send(prefix + s.text, deadline + (_HARD_GRACE_S if prefix else 0))
                parsed = _unprefixed(parse_output(answer.output), len(prefix))
                messages.extend(_messages(parsed.warnings, proof, s))
                if parsed.errors:
                    messages.extend(_messages(parsed.errors, proof, s))
                    err = parsed.errors[0]
                    line, col = position_of(proof, s.start + _char_offset(s.text, err.start))
                    failure = classify_coq(
                        err.text, line, col, s.text, sentence=s.text, index=i, goals=goals
                    )
                    if failure.kind is FailureKind.TIMEOUT:
                        return result(Status.TIMEOUT, failure, goals=tuple(goals))
                    return result(Status.FAIL, failure, goals=tuple(goals))
                if answer.proof != name:
                    return result(
                        Status.FAIL,
                        FailureMode(
                            FailureKind.STATEMENT_CHANGED,
                            f"the proof left theorem {name} at {s.text!r}",
                            *position_of(proof, s.start),
                            tactic=s.text,
                            sentence=s.text,
                            index=i,
                            goals=tuple(goals),
                        ),
                    )
                if parsed.goals is not None:
                    goals = parsed.goals
            at = (None, None)
            answer = self._send(terminator, deadline)
            parsed = parse_output(answer.output)
            if parsed.errors or answer.proof is not None:
                messages.extend(_messages(parsed.errors, proof, None))
                text = parsed.errors[0].text if parsed.errors else "the proof is not complete"
                failure = classify_coq(text, goals=goals)
                if failure.kind in (FailureKind.OTHER, FailureKind.TACTIC_FAILED):
                    failure = replace(failure, kind=FailureKind.UNSOLVED_GOALS)
                return result(Status.FAIL, failure, goals=tuple(goals))
            axioms, unsafe = self._assumptions(name, deadline)
            if unsafe is not None:
                return result(Status.FAIL, unsafe, axioms=tuple(axioms))
            bad = [a for a in axioms if not a.startswith("Coq.")]
            if bad:
                return result(
                    Status.FAIL,
                    FailureMode(
                        FailureKind.BAD_AXIOM,
                        f"depends on axioms outside the standard library: {', '.join(bad)}",
                    ),
                    axioms=tuple(axioms),
                )
            return result(Status.PASS, axioms=tuple(axioms))
        except ProverError as exc:
            self._header = None
            sentence, index = at
            return error_verdict(
                result,
                exc,
                limit,
                goals=tuple(goals),
                tactic=tactic_name(sentence),
                sentence=sentence,
                index=index,
            )
        finally:
            if not self.reuse:
                self.process.kill()
                self._header = None

    def _send(self, sentence: str, deadline: float) -> CoqAnswer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            self.process.kill()
            raise CoqTimeout("no time left for coqtop's answer; give it a longer time limit")
        return self.process.send(sentence, remaining)

    def _screen_header(self, header: str) -> FailureMode | None:
        return None if self.trusted_header else screen_header(header)

    def _assumptions(self, name: str, deadline: float) -> tuple[list[str], FailureMode | None]:
        """The axioms ``name`` depends on, qualified, and the failure when ``Print
        Assumptions`` says a checker was off or says something unknown."""
        read = read_assumptions(self._send(f"Print Assumptions {name}.", deadline).output)
        qualified = []
        for short in read.axioms:
            located = self._send(f"Locate {short}.", deadline).output
            m = re.search(r"Constant (\S+)", located)
            qualified.append(m.group(1) if m else short)
        if read.unsafe:
            subject, kind = read.unsafe[0]
            return qualified, FailureMode(
                FailureKind(kind), _UNSAFE[kind].format(subject=subject or name, name=name)
            )
        if read.unknown:
            return qualified, FailureMode(
                FailureKind.BAD_AXIOM,
                f"Print Assumptions {name} says what this checker cannot vouch for: "
                f"{read.unknown[0]!r}",
            )
        return qualified, None

    # -- incremental sessions -------------------------------------------------------------

    def open(self, header: str, statement: str, timeout: float | None = None) -> CoqSession:
        """Open ``statement`` for tactic-by-tactic work (this verifier's process is used).

        A header that does not load raises :class:`~lemmata.errors.HeaderFailed`, a
        statement that does not parse or elaborate :class:`~lemmata.errors.StatementFailed`,
        a header the screen refuses :class:`~lemmata.errors.InputRefused` (each a
        ``ValueError`` too); a coqtop that times out or dies, the process layer's
        :class:`~lemmata.errors.ProverTimeout` / :class:`~lemmata.errors.ProverCrashed`.
        """
        limit = timeout or self.timeout_s
        deadline = time.monotonic() + limit
        name, stmt = _parse_statement(statement)
        refused = self._screen_header(header)
        if refused is not None:
            raise InputRefused(refused.message, "header")
        self._ready(header, deadline)
        answer = self._send(stmt.text, deadline)
        parsed = parse_output(answer.output)
        if parsed.errors:
            text = parsed.errors[0].text
            raise StatementFailed(
                f"the statement does not elaborate: {text}", classify_coq(text).kind.value
            )
        if parsed.goals is None:
            # After a BackTo out of an unfinished proof coqtop opens the next statement
            # without printing its goals; Show prints them and changes no state.
            parsed = parse_output(self._send("Show.", deadline).output)
        root = StepResult(state=answer.state, goals=tuple(parsed.goals or ()), status="open")
        return CoqSession(self, name, root, limit)


class CoqSession(SessionStates):
    """Tactic-level work on one Coq goal; states are coqtop's own state numbers."""

    def __init__(self, verifier: CoqTop, name: str, root: StepResult, timeout_s: float) -> None:
        super().__init__(root)
        self.verifier = verifier
        self.name = name
        self.timeout_s = timeout_s
        self.lost: str | None = None

    def run(
        self, tactic: str, state: int | None = None, timeout: float | None = None
    ) -> StepResult:
        """Run one tactic sentence from ``state`` (default: the latest).

        A failure's ``sentence`` is the sentence that failed, its ``index`` the position of
        that sentence in the proof from the root, and its ``goals`` the goals it met: those
        of ``state`` unless an earlier sentence of the same ``tactic`` changed them.
        """
        here = self._start(state)
        start = here.state
        offset = sum(len(split_sentences(t)) for t in self.proof_of(start))
        met = here.goals

        def at(failure: FailureMode, sentence: str, part: int = 0) -> FailureMode:
            return replace(failure, sentence=sentence, index=offset + part, goals=met)

        if self.lost is not None:
            failure = FailureMode(
                FailureKind.CRASH, f"the session was lost ({self.lost}): open a new one"
            )
            return failed_step(here, "crash", at(failure, tactic.strip()), tactic)
        process = self.verifier.process
        sentence = tactic.strip()
        if (
            not sentence.endswith(".")
            and sentence not in {"{", "}"}
            and not re.fullmatch(r"[-+*]+", sentence)
        ):
            sentence += "."
        try:
            parts = split_sentences(sentence)
        except SentenceError as exc:
            failure = FailureMode(FailureKind.SYNTAX_ERROR, str(exc), tactic=tactic_name(sentence))
            return failed_step(here, "error", at(failure, sentence), sentence)
        bad = screen_proof(parts, sentence) or next(
            (
                FailureMode(
                    FailureKind.STATEMENT_CHANGED,
                    f"{head_word(p.text)} is not a tactic",
                    tactic=tactic_name(p.text),
                    sentence=p.text,
                    index=i,
                )
                for i, p in enumerate(parts)
                if head_word(p.text) in ENDS
            ),
            None,
        )
        if bad is not None:
            bad = at(bad, bad.sentence or sentence, bad.index or 0)
            return failed_step(here, "error", bad, sentence)
        # Coq's own ``Timeout n`` stops a slow tactic and keeps the process (and every saved
        # state) alive; the read deadline a few seconds later is the fallback for a coqtop
        # that does not answer at all, and that one costs the session.
        limit = timeout or self.timeout_s
        soft = max(1, math.ceil(limit))
        deadline = time.monotonic() + soft + _HARD_GRACE_S
        part = 0
        try:
            if process.state != start:
                process.send(f"BackTo {start}.", max(0.1, deadline - time.monotonic()))
            parsed = None
            for part in range(len(parts)):
                text = parts[part].text
                if not _STRUCTURAL.fullmatch(text):
                    text = f"Timeout {soft} {text}"
                answer = process.send(text, max(0.1, deadline - time.monotonic()))
                parsed = parse_output(answer.output)
                if parsed.errors:
                    break
                if parsed.goals is not None:
                    met = tuple(parsed.goals)
        except CoqTimeout:
            self.verifier._header = None
            self.lost = "a tactic timed out and coqtop was restarted"
            failure = FailureMode(
                FailureKind.TIMEOUT, "tactic timed out", tactic=tactic_name(parts[part].text)
            )
            return failed_step(here, "timeout", at(failure, parts[part].text, part), sentence)
        except CoqCrashed as exc:
            self.verifier._header = None
            self.lost = "coqtop crashed"
            failure = at(FailureMode(FailureKind.CRASH, str(exc)), parts[part].text, part)
            return failed_step(here, "crash", failure, sentence)
        assert parsed is not None
        if parsed.errors:
            err = parsed.errors[0]
            msgs = tuple(Message("error", e.text) for e in parsed.errors)
            failure = classify_coq(err.text, tactic=parts[part].text)
            status: StepStatus = "timeout" if failure.kind is FailureKind.TIMEOUT else "error"
            return failed_step(here, status, at(failure, parts[part].text, part), sentence, msgs)
        if parsed.goals is None and process.proof is not None:
            # After a BackTo, coqtop does not print goals whose id it printed last (another
            # witness for the same existential, say); Show prints them and changes nothing.
            try:
                parsed = parse_output(process.send("Show.", soft + _HARD_GRACE_S).output)
            except (CoqTimeout, CoqCrashed) as exc:
                self.verifier._header = None
                self.lost = f"coqtop stopped answering ({type(exc).__name__})"
                failure = FailureMode(FailureKind.CRASH, str(exc) or "no answer to Show")
                return failed_step(here, "crash", failure, sentence)
        goals = tuple(parsed.goals) if parsed.goals is not None else self.states[start].goals
        status = (
            "finished"
            if parsed.goals == [] and "unfocused" not in " ".join(parsed.info)
            else "open"
        )
        step = StepResult(answer.state, goals, status, tactic=sentence, parent=start)
        return self._record(step)

    def query(self, command: str, state: int | None = None, timeout: float | None = None) -> str:
        """What Coq prints for a query (``Search``, ``SearchPattern``, ``About``, ``Check``)
        at ``state``; the proof is not changed. ``""`` when the query fails or times out."""
        word = head_word(command)
        if word not in _QUERIES:
            raise InputRefused(f"{word or command!r} is not a query; use one of {sorted(_QUERIES)}")
        text = command.strip() if command.strip().endswith(".") else command.strip() + "."
        try:
            parts = split_sentences(text)
        except SentenceError as exc:
            raise InputRefused(f"the query does not parse: {exc}") from None
        # One sentence only: coqtop would run a second one sent on the same line.
        if len(parts) != 1 or screen_proof(parts, text) is not None:
            raise InputRefused(f"{text[:60]!r} is not one read-only query")
        start = self._start(state).state
        if self.lost is not None:
            return ""
        process = self.verifier.process
        soft = max(1, math.ceil(timeout or self.timeout_s))
        try:
            if process.state != start:
                process.send(f"BackTo {start}.", soft + _HARD_GRACE_S)
            answer = process.send(f"Timeout {soft} {text}", soft + _HARD_GRACE_S)
        except (CoqTimeout, CoqCrashed) as exc:
            self.verifier._header = None
            self.lost = f"a query failed ({type(exc).__name__})"
            return ""
        parsed = parse_output(answer.output)
        return "" if parsed.errors else re.sub(r"</?\w+>", "", answer.output)

    def close(self) -> None:
        process = self.verifier.process
        if process.alive and process.proof is not None:
            try:
                process.send(f"BackTo {self.verifier._header_state}.", 10)
            except (CoqTimeout, CoqCrashed):
                self.verifier._header = None


def _parse_statement(statement: str) -> tuple[str, Sentence]:
    """The theorem's name and its one sentence; :class:`StatementFailed` if it is not one
    named theorem sentence."""
    try:
        sentences = split_sentences(statement)
    except SentenceError as exc:
        raise StatementFailed(f"the statement does not parse: {exc}") from None
    if len(sentences) != 1:
        raise StatementFailed(
            f"the statement must be one sentence ending in '.', got {len(sentences)}"
        )
    s = sentences[0]
    if head_word(s.text) not in THEOREM_KEYWORDS:
        raise StatementFailed(
            f"the statement must start with one of {', '.join(sorted(THEOREM_KEYWORDS))}"
        )
    m = _NAME.match(s.text)
    if not m:
        raise StatementFailed("the statement has no name")
    return m.group(1), s


def _unprefixed(parsed: ParsedOutput, n: int) -> ParsedOutput:
    """Positions in a sentence sent with ``n`` characters of ``Timeout k `` before it."""
    if not n:
        return parsed

    def shift(ms: list[CoqMessage]) -> list[CoqMessage]:
        return [
            replace(
                m,
                start=None if m.start is None else max(0, m.start - n),
                end=None if m.end is None else max(0, m.end - n),
            )
            for m in ms
        ]

    parsed.errors = shift(parsed.errors)
    parsed.warnings = shift(parsed.warnings)
    return parsed


def _char_offset(sentence: str, byte_offset: int | None) -> int:
    """Coq counts bytes; turn a byte offset in the sentence into a character offset."""
    if byte_offset is None:
        return 0
    return len(sentence.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


def _messages(errors: list[CoqMessage], text: str, sentence: Sentence | None) -> list[Message]:
    out = []
    for e in errors:
        if sentence is not None and e.start is not None:
            line, col = position_of(text, sentence.start + _char_offset(sentence.text, e.start))
            out.append(Message(e.severity, e.text, line, col))
        else:
            out.append(Message(e.severity, e.text))
    return out
