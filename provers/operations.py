"""The provers' operations (see :mod:`lemmata.operations`): ``check`` a proof, and ``prove`` a
statement by a method: ``check`` (the proof given), ``portfolio`` (the tactic portfolio),
``refine`` (the learning-to-refine tree search) or ``wz`` (a sum identity, by Zeilberger's
algorithm, with a Lean 4 sketch).

>>> from lemmata.provers.operations import check                     # doctest: +SKIP
>>> check(statement="Theorem t : 2 + 2 = 4.", proof="Proof. reflexivity. Qed.").ok  # doctest: +SKIP
True
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from lemmata.operations import Operation, OperationContext, Outcome, operation
from lemmata.provers.tasks import coq_from_text, identity_from_text, lean_from_text, split_identity

if TYPE_CHECKING:
    from lemmata.provers.base import Verifier
    from lemmata.provers.result import VerifyResult

__all__ = ["CheckInput", "OPERATIONS", "ProofOutput", "ProveInput", "check", "prove"]

Backend = Literal["coq", "lean"]


class CheckInput(BaseModel):
    statement: str = Field(
        min_length=1,
        max_length=20_000,
        description="the theorem, e.g. 'Theorem t : 2 + 2 = 4.' (Coq) or "
        "'theorem t : 2 + 2 = 4 :=' (Lean 4)",
    )
    proof: str = Field(min_length=1, max_length=100_000, description="the proof to check")
    header: str = Field("", max_length=100_000, description="imports and definitions before it")
    backend: Backend = "coq"
    timeout_s: float = Field(30.0, gt=0, le=600, description="seconds for the verifier")


class ProveInput(BaseModel):
    statement: str = Field(
        min_length=1,
        max_length=20_000,
        description="a Coq or Lean 4 theorem, or (method wz) a sum identity "
        "'Sum(binomial(n, k), (k, 0, n)) = 2**n'",
    )
    method: Literal["auto", "check", "portfolio", "refine", "wz"] = Field(
        "auto",
        description="auto: wz for a sum identity, check when a proof is given, refine otherwise",
    )
    proof: str | None = Field(
        None, max_length=100_000, description="a proof (method check) or a draft to repair (refine)"
    )
    header: str = Field("", max_length=100_000)
    backend: Backend = "coq"
    n_min: int = Field(0, ge=0, le=1000, description="wz: the identity holds for n >= n_min")
    budget_calls: int = Field(32, ge=1, le=1000, description="refine: verifier calls")
    timeout_s: float = Field(60.0, gt=0, le=1800, description="seconds for the whole attempt")


class ProofOutput(BaseModel):
    verdict: Literal["proved", "failed", "timeout", "refuted", "unavailable", "error"]
    method: str
    backend: str
    proof: str | None = None
    failure: dict[str, Any] | None = Field(
        default=None, description="the failure mode, when it failed"
    )
    messages: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    elapsed_s: float = 0.0

    def describe(self) -> str:
        where = f"{self.method}, {self.backend}, {self.elapsed_s:.1f} s"
        if self.verdict == "proved":
            kind = "Lean 4 sketch" if self.method == "wz" else "proof"
            body = f"\n{kind}:\n{self.proof}" if self.proof else ""
            if self.method == "wz" and self.details.get("certificate"):
                body = f"\ncertificate R(n, k) = {self.details['certificate']}" + body
            return f"Proved ({where}).{body}"
        failure = self.failure or {}
        what = failure.get("message") or "; ".join(self.messages[:2])
        return f"Not proved: {self.verdict} ({where}){': ' + what if what else ''}"


def _verifier(ctx: OperationContext, backend: str) -> tuple[Verifier, threading.Lock]:
    from lemmata.provers import make_verifier

    def make() -> tuple[Verifier, threading.Lock]:
        return make_verifier(backend, ctx.settings), threading.Lock()

    pair: tuple[Verifier, threading.Lock] = ctx.resource(("verifier", backend), make)
    return pair


def _from_verify(r: VerifyResult, method: str, proof: str | None) -> ProofOutput | Outcome:
    from lemmata.provers.result import Status

    verdict = {
        Status.PASS: "proved",
        Status.FAIL: "failed",
        Status.TIMEOUT: "timeout",
        Status.UNAVAILABLE: "unavailable",
    }.get(r.status, "error")
    out = ProofOutput(
        verdict=verdict,  # type: ignore[arg-type]
        method=method,
        backend=r.backend,
        proof=proof if r.ok else None,
        failure=r.failure_mode.to_dict() if r.failure_mode else None,
        messages=[m.text for m in r.errors()][:20],
        details={"version": r.version, "axioms": list(r.axioms)},
        elapsed_s=round(r.elapsed_s, 3),
    )
    if r.ok:
        return out
    reason = r.failure_mode.message if r.failure_mode else f"the verifier says {r.status.value}"
    status = {"timeout": "timeout", "unavailable": "unavailable"}.get(verdict, "failed")
    return Outcome(out, status, reason, _hint(r))  # type: ignore[arg-type]


def _hint(r: VerifyResult) -> str:
    fm = r.failure_mode
    if fm is None:
        return ""
    where = f" at sentence {fm.index + 1}" if fm.index is not None else ""
    return f"{fm.kind.value}{where}; try method refine to repair it locally"


def _extract_check(text: str) -> dict[str, Any] | None:
    found = coq_from_text(text) or lean_from_text(text)
    if found and found.get("proof") and not _asks_repair(text, found):
        return found
    return None


def _extract_prove(text: str) -> dict[str, Any] | None:
    found = identity_from_text(text)
    if found:
        return found
    found = coq_from_text(text) or lean_from_text(text)
    if found is None:
        return None
    if found.get("proof"):
        if not _asks_repair(text, found):
            return None  # a statement with its proof is a task for provers_check
        return {**found, "method": "refine"}  # the proof is the draft refine repairs
    found["method"] = _method_named(text) or "refine"
    prose = text
    for part in (found.get("statement"), found.get("header")):
        if part:
            prose = prose.replace(part, " ")
    budget = _BUDGET.search(prose)
    if budget:
        found["budget_calls"] = int(budget["n"] or budget["m"])
    return found


# how many verifier calls the search may spend: "a 64 call budget", "budget of 100 calls"
_BUDGET = re.compile(
    r"\b(?P<n>\d{1,4})[\s-]*(?:verifier\s+|prover\s+)?calls?\b|"
    r"\bbudget\s*(?:of|:|=)?\s*(?P<m>\d{1,4})\b(?!\s*(?:s|sec|seconds?|min|minutes?)\b)",
    re.I,
)


_REPAIR = re.compile(
    r"\b(?:repair|fix|patch|mend|refine|salvage|rescue|finish|complete\s+(?:it|this|the\s+proof)|"
    r"partial\s+proof)\b",
    re.I,
)


def _asks_repair(text: str, found: dict[str, Any]) -> bool:
    """Whether the words around a statement and its proof ask for the proof to be repaired
    ("my draft doesn't work, can you repair it?"), not checked; the statement and the proof
    themselves are not read (a lemma may be named plus_fix, a proof may use fix)."""
    prose = text
    for part in (found.get("statement"), found.get("proof"), found.get("header")):
        if part:
            prose = prose.replace(part, " ")
    return bool(_REPAIR.search(prose))


def _method_named(text: str) -> str | None:
    """The proving method a task names in words, if any; the portfolio and refinement named
    together ("refine it if the portfolio can't") are what ``auto`` does."""
    portfolio = re.search(r"\bportfolio\b", text, re.I)
    if portfolio and re.search(r"\b(?:refine|repair|refinement)\b", text, re.I):
        return "auto"
    if portfolio:
        return "portfolio"
    if re.search(r"\b(?:refine|repair|refinement)\b", text, re.I):
        return "refine"
    if re.search(r"\b(?:zeilberger|wz|wilf)\b", text, re.I):
        return "wz"
    if re.search(r"\b(?:auto|automatic(?:ally)?)\b", text, re.I):
        return "auto"
    return None


@operation(
    "provers",
    read_only=True,
    idempotent=True,
    time_limit_s=620,
    examples=(
        "Check this Coq proof: Theorem t : 2 + 2 = 4. Proof. reflexivity. Qed.",
        "Does this Lean proof go through? theorem t : 1 + 1 = 2 := by norm_num",
        "Verify my proof of Lemma plus_0 : forall n, n + 0 = n. Proof. induction n; auto. Qed.",
        "Is this proof correct? Lemma l : 1 + 1 = 2. Proof. reflexivity. Qed.",
        "Run this through Coq: Theorem t : True. Proof. exact I. Qed.",
        "```coq\nLemma id : forall P : Prop, P -> P.\nProof. auto. Qed.\n```\nDoes it compile?",
        "Here is my Lean proof, tell me if it checks: theorem t : 2 + 2 = 4 := by decide",
    ),
    extract=_extract_check,
)
def check(args: CheckInput, ctx: OperationContext) -> ProofOutput | Outcome:
    """Check a proof of a theorem with Coq or the Lean 4 REPL; a failure comes with its
    class, the failing sentence and the goals there."""
    verifier, lock = _verifier(ctx, args.backend)
    with lock:
        r = verifier.check(args.header, args.statement, args.proof, args.timeout_s)
    return _from_verify(r, "check", args.proof)


@operation(
    "provers",
    read_only=True,
    idempotent=True,
    time_limit_s=1830,
    examples=(
        "Prove in Coq: forall n : nat, n + 0 = n",
        "Theorem add_comm' : forall a b : nat, a + b = b + a.",
        "Prove that the sum of binomial(n, k) for k from 0 to n is 2^n.",
        "Show sum_{k=0}^{n} k = n(n+1)/2",
        "Find a proof of this Lean theorem: theorem t (n : ℕ) : n * 1 = n :=",
        "Prove that the square root of two is irrational.",
        "Find a Coq proof for: forall n : nat, n * 0 = 0",
        "Prove this lemma: Lemma l : forall a b : nat, a + b = b + a.",
        "Can you prove in Lean 4 that theorem t (a : \u2115) : a + 0 = a :=",
        "Prove the identity sum_{k=0}^{n} binomial(n,k) = 2^n with the WZ method.",
        "Use the tactic portfolio on Theorem t : forall n : nat, n - n = 0.",
        "Show that the sum of k for k from 1 to n equals n(n+1)/2.",
    ),
    extract=_extract_prove,
)
def prove(args: ProveInput, ctx: OperationContext) -> ProofOutput | Outcome:
    """Prove a theorem (Coq or Lean 4) or a sum identity: check a given proof, search the
    tactic portfolio, repair proofs locally from the verifier's failures (refine), or find a
    Zeilberger certificate (wz)."""
    method = args.method
    if method == "auto":
        method = "wz" if split_identity(args.statement) else "check" if args.proof else "refine"
    if method == "wz":
        return _prove_wz(args, ctx)
    if method == "check":
        if not args.proof:
            return Outcome(
                ProofOutput(verdict="error", method="check", backend=args.backend),
                "invalid",
                "method check needs a proof",
                "pass proof, or use method refine to search for one",
            )
        result: ProofOutput | Outcome = check.function(  # type: ignore[assignment]
            CheckInput(
                statement=args.statement,
                proof=args.proof,
                header=args.header,
                backend=args.backend,
                timeout_s=min(args.timeout_s, 600),
            ),
            ctx,
        )
        return result
    if method == "portfolio":
        return _prove_portfolio(args, ctx)
    return _prove_refine(args, ctx)


def _prove_portfolio(args: ProveInput, ctx: OperationContext) -> ProofOutput | Outcome:
    from lemmata.provers.runner import Theorem, prove_one

    verifier, lock = _verifier(ctx, args.backend)
    theorem = Theorem("goal", args.statement, args.header, None)
    with lock:
        r = prove_one(verifier, theorem, args.timeout_s)
    verdict = "proved" if r.status == "proved" else "timeout" if r.status == "timeout" else "failed"
    out = ProofOutput(
        verdict=verdict,  # type: ignore[arg-type]
        method="portfolio",
        backend=r.backend,
        proof=r.proof,
        failure=r.failure_mode,
        details={"attempts": r.attempts},
        elapsed_s=r.elapsed_s,
    )
    if verdict == "proved":
        return out
    reason = (r.failure_mode or {}).get("message", "no proof found")
    return Outcome(
        out, "timeout" if verdict == "timeout" else "failed", reason, "try method refine"
    )


def _prove_refine(args: ProveInput, ctx: OperationContext) -> ProofOutput | Outcome:
    from lemmata.provers.refine.search import SearchConfig, search

    verifier, lock = _verifier(ctx, args.backend)
    config = SearchConfig(budget_calls=args.budget_calls, budget_seconds=args.timeout_s)

    def on_attempt(record: dict[str, Any]) -> None:
        calls = record.get("calls")
        fraction = calls / args.budget_calls if isinstance(calls, int) else None
        ctx.report(f"refine: {record.get('tactic', record.get('kind', 'step'))}", fraction)

    with lock:
        r = search(
            verifier,
            args.statement,
            args.header,
            draft=args.proof,
            config=config,
            on_attempt=on_attempt,
        )
    verdict = {"proved": "proved", "timeout": "timeout", "error": "error"}.get(r.status, "failed")
    details = r.to_dict()
    out = ProofOutput(
        verdict=verdict,  # type: ignore[arg-type]
        method="refine",
        backend=r.backend,
        proof=r.proof,
        failure=details.pop("failure_mode"),
        details={k: v for k, v in details.items() if k not in ("id", "status", "proof", "backend")},
        elapsed_s=round(r.elapsed_s, 3),
    )
    if r.proved:
        return out
    reason = r.failure.message if r.failure else f"no proof within {r.calls} verifier calls"
    status = {"timeout": "timeout", "error": "invalid"}.get(r.status, "failed")
    return Outcome(out, status, reason, "raise budget_calls or timeout_s")  # type: ignore[arg-type]


def _prove_wz(args: ProveInput, ctx: OperationContext) -> ProofOutput | Outcome:
    from lemmata.errors import UsageError
    from lemmata.provers.wz import IdentityError, lean_sketch, parse_identity, prove_identity

    parts = split_identity(args.statement)
    if parts is None:
        raise UsageError(
            "method wz needs a sum identity 'Sum(summand, (k, lo, hi)) = rhs', "
            f"not {args.statement[:80]!r}"
        )
    try:
        ident = parse_identity(
            {"id": "identity", "lhs": parts[0], "rhs": parts[1], "n_min": args.n_min}
        )
    except IdentityError as exc:
        raise UsageError(str(exc)) from None
    ctx.report("searching for a recurrence (Zeilberger)", 0.1)
    r = prove_identity(ident, timeout_s=args.timeout_s)
    details = r.to_dict()
    verdict = r.verdict if r.verdict in ("proved", "refuted", "timeout") else "failed"
    sketch = lean_sketch(ident, r) if r.verdict == "proved" else None
    out = ProofOutput(
        verdict=verdict,  # type: ignore[arg-type]
        method="wz",
        backend="sympy",
        proof=sketch,
        details={k: v for k, v in details.items() if k not in ("id", "verdict", "elapsed_s")},
        elapsed_s=round(r.elapsed_s, 3),
    )
    if r.verdict == "proved":
        return out
    status = "timeout" if verdict == "timeout" else "failed"
    return Outcome(out, status, r.reason or f"the identity is {r.verdict}", "")  # type: ignore[arg-type]


OPERATIONS: list[Operation] = [check, prove]
