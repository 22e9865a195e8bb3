"""The operations registry: declarations, the envelope, time limits, scopes, and the
capabilities' declared operations."""

from __future__ import annotations

import json
import threading
import time

import pytest
from pydantic import BaseModel

from lemmata.errors import MissingDependency, UsageError
from lemmata.operations import (
    Envelope,
    OperationContext,
    Outcome,
    Registry,
    Scope,
    load_registry,
    operation,
)


class In(BaseModel):
    n: int
    seconds: float = 0.0


class Out(BaseModel):
    doubled: int

    def describe(self) -> str:
        return f"twice is {self.doubled}"


class ScopedIn(BaseModel):
    namespace: Scope | None = None
    text: str


class ScopedOut(BaseModel):
    user: str


@operation("demo", read_only=True, idempotent=True, time_limit_s=0.5)
def double(args: In, ctx: OperationContext) -> Out | Outcome:
    """Double a number (slowly when asked)."""
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        ctx.report("waiting", 0.5)
        time.sleep(0.01)
    if args.n < 0:
        return Outcome(
            Out(doubled=2 * args.n), "failed", "negative numbers are not welcome", "use n >= 0"
        )
    if args.n == 13:
        raise MissingDependency("the demo", "pip install demo")
    if args.n == 14:
        raise UsageError("14 is reserved")
    if args.n == 15:
        raise RuntimeError("boom")
    return Out(doubled=2 * args.n)


@operation("demo", scoped=True, destructive=True)
def whoami(args: ScopedIn, ctx: OperationContext) -> ScopedOut:
    """Say whose namespace the call ran in."""
    assert args.namespace is not None
    return ScopedOut(user=args.namespace.user)


@pytest.fixture
def ctx(settings) -> OperationContext:
    return OperationContext(settings=settings)


def test_a_call_returns_the_typed_payload_in_an_ok_envelope(ctx) -> None:
    env = double.invoke({"n": 21}, ctx)
    assert (env.ok, env.status, env.operation) == (True, "ok", "demo_double")
    assert isinstance(env.payload, Out) and env.payload.doubled == 42
    assert env.elapsed_ms >= 0
    assert env.text() == "twice is 42"
    # the same through the SDK call, with keyword arguments
    assert double(n=2, context=ctx).payload.doubled == 4


def test_bad_arguments_are_invalid_and_name_the_field(ctx) -> None:
    env = double.invoke({"n": "many"}, ctx)
    assert env.status == "invalid" and not env.ok
    assert "n: Input should be a valid integer" in env.reason and "'many'" in env.reason
    assert env.hint == "demo_double takes: n, seconds"
    missing = double.invoke({}, ctx)
    assert missing.status == "invalid" and "n: Field required" in missing.reason
    not_object = double.invoke(["n", 1], ctx)  # type: ignore[arg-type]
    assert not_object.status == "invalid" and "object of named fields" in not_object.reason


def test_a_timeout_is_a_status_with_a_reason_and_the_operation_is_told(ctx) -> None:
    seen: list[dict] = []
    ctx.progress = seen.append
    env = double.invoke({"n": 1, "seconds": 3}, ctx)
    assert env.status == "timeout" and not env.ok
    assert "time limit of 0.5 s" in env.reason and env.hint
    assert 400 <= env.elapsed_ms < 2500
    assert seen and seen[0]["operation"] == "demo_double" and seen[0]["fraction"] == 0.5
    time.sleep(0.1)  # the worker sees the cancel flag at its next report and stops
    count = len(seen)
    time.sleep(0.1)
    assert len(seen) == count


def test_outcomes_and_errors_map_to_statuses(ctx) -> None:
    failed = double.invoke({"n": -2}, ctx)
    assert (failed.status, failed.reason, failed.hint) == (
        "failed",
        "negative numbers are not welcome",
        "use n >= 0",
    )
    assert failed.payload.doubled == -4  # the payload survives a failure
    assert (
        "negative numbers are not welcome" in failed.text() and "hint: use n >= 0" in failed.text()
    )
    unavailable = double.invoke({"n": 13}, ctx)
    assert unavailable.status == "unavailable" and "pip install demo" in unavailable.reason
    assert double.invoke({"n": 14}, ctx).status == "invalid"
    bug = double.invoke({"n": 15}, ctx)
    assert bug.status == "error" and "RuntimeError: boom" in bug.reason and "bug" in bug.hint


def test_scoped_operations_need_a_namespace_and_keep_to_the_signed_in_user(ctx) -> None:
    env = whoami.invoke({"text": "x"}, ctx)
    assert env.status == "invalid" and "missing namespace" in env.reason
    assert whoami.invoke({"text": "x", "namespace": {"user": "ann"}}, ctx).payload.user == "ann"
    ctx.scope = Scope(user="bob")
    assert whoami.invoke({"text": "x"}, ctx).payload.user == "bob"
    denied = whoami.invoke({"text": "x", "namespace": {"user": "eve"}}, ctx)
    assert denied.status == "denied" and "'eve'" in denied.reason
    bad = whoami.invoke({"text": "x", "namespace": {"user": ""}}, ctx)
    assert bad.status == "invalid" and "namespace" in bad.reason


def test_cancelling_the_caller_cancels_its_calls(ctx) -> None:
    timer = threading.Timer(0.1, ctx.cancel.set)
    timer.start()
    slow = operation("demo", name="slow", time_limit_s=5)(double.function)
    env = slow.invoke({"n": 1, "seconds": 3}, ctx)
    assert env.status == "cancelled"
    assert env.elapsed_ms < 2000


def test_declarations_are_checked() -> None:
    with pytest.raises(TypeError, match="docstring"):

        @operation("demo")
        def nodoc(args: In, ctx: OperationContext) -> Out:
            return Out(doubled=0)

    with pytest.raises(TypeError, match="pydantic model"):

        @operation("demo")
        def untyped(args: dict, ctx: OperationContext) -> Out:
            """No model."""
            return Out(doubled=0)

    with pytest.raises(TypeError, match="namespace field"):

        @operation("demo", scoped=True)
        def unscoped(args: In, ctx: OperationContext) -> Out:
            """No namespace."""
            return Out(doubled=0)

    with pytest.raises(ValueError, match="read-only and destructive"):
        operation("demo", read_only=True, destructive=True)


def test_registry_finds_selects_and_refuses_duplicates(ctx) -> None:
    reg = Registry([double, whoami])
    assert reg.find("demo_double") is double
    assert reg.find("demo.double") is double and reg.find("double") is double
    assert "whoami" in reg and "nope" not in reg
    with pytest.raises(ValueError, match="declared twice"):
        reg.add(double)
    with pytest.raises(ValueError, match="choose from demo"):
        reg.select(["gui"])
    env = reg.invoke("nope", {}, ctx)
    assert env.status == "invalid" and "demo_double" in env.hint


def test_envelope_schema_and_json_round_trip(ctx) -> None:
    env = double.invoke({"n": 3}, ctx)
    data = json.loads(env.model_dump_json())
    assert set(data) == {"operation", "ok", "status", "reason", "hint", "elapsed_ms", "payload"}
    schema = double.envelope_type().model_json_schema()
    assert "payload" in schema["properties"]
    assert Envelope[Out].model_validate(data).payload.doubled == 6


def test_every_capability_declares_its_operations_once() -> None:
    warnings: list[str] = []
    reg = load_registry(warn=warnings.append)
    assert warnings == []
    assert {op.qualified_name for op in reg} == {
        "memory_remember",
        "memory_recall",
        "memory_forget",
        "memory_reason",
        "provers_check",
        "provers_prove",
        "gui_ground",
        "gui_act",
        "research_research",
    }
    for op in reg:
        assert op.summary and op.examples and op.extract is not None, op.qualified_name
        json.dumps(op.parameters())  # every schema is plain JSON
        assert op.time_limit_s > 0
    destructive = {op.qualified_name for op in reg if op.destructive}
    assert destructive == {"memory_forget", "gui_act"}
    assert all(op.scoped for op in reg if op.capability == "memory")
    assert [op.capability for op in load_registry(["provers"])] == ["provers", "provers"]


@pytest.mark.parametrize(
    ("name", "text", "loose", "want"),
    [
        # code marks around the statement and the proof
        (
            "provers_check",
            "Does Coq accept `Lemma t : 1 + 1 = 2.` with `Proof. reflexivity. Qed.`?",
            False,
            {"statement": "Lemma t : 1 + 1 = 2.", "proof": "Proof. reflexivity. Qed."},
        ),
        # the method named in words
        (
            "provers_prove",
            "auto-prove Theorem t : forall n : nat, n * 1 = n.",
            False,
            {"method": "auto"},
        ),
        # an entity with no word before it; a folder named after a preposition
        (
            "research_research",
            "Research region=north in orders.db.",
            False,
            {"source": "orders.db", "entity": "region=north"},
        ),
        (
            "research_research",
            "I keep a folder of csv files at exports/2023, find anything odd",
            False,
            {"source": "exports/2023"},
        ),
        # a Windows path with forward slashes, and a quoted path with a space in it
        (
            "research_research",
            "analyze db: 'C:/data/hr.sqlite'",
            False,
            {"source": "C:/data/hr.sqlite"},
        ),
        (
            "research_research",
            'Explore "my data/finance.db"',
            False,
            {"source": "my data/finance.db"},
        ),
        (
            "research_research",
            "look into Bob's shop.sqlite please",
            False,
            {"source": "shop.sqlite"},
        ),
        # text to type without quotes; a sentence that only says where the screenshot is
        (
            "gui_act",
            "on signup.html type 1987 into the birth year field",
            False,
            {"action": "type", "text": "1987", "instruction": "birth year field"},
        ),
        (
            "gui_ground",
            "I attached board.png. Where do I click to add a card?",
            False,
            {"image": "board.png", "instruction": "add a card"},
        ),
        # a fact stated in passing is read only when the task is known to ask to keep it
        ("memory_remember", "fyi my locker number is 214", False, None),
        (
            "memory_remember",
            "fyi my locker number is 214",
            True,
            {"text": "my locker number is 214"},
        ),
        (
            "memory_remember",
            "Log this for me: the car was serviced on 2 May.",
            True,
            {"text": "the car was serviced on 2 May"},
        ),
        (
            "memory_forget",
            "wipe the thing about the project codename",
            True,
            {"about": "the project codename"},
        ),
    ],
)
def test_operations_read_their_own_arguments_from_a_task(name, text, loose, want) -> None:
    op = load_registry().get(name)
    got = op.arguments(text, loose=loose)
    if want is None:
        assert got is None
        return
    assert got is not None, text
    for key, value in want.items():
        assert got.get(key) == value, (key, got)


def test_an_extractors_bug_reads_as_nothing_found() -> None:
    def broken(text: str) -> dict | None:
        raise RuntimeError("bug")

    @operation("demo", extract=broken, read=broken)
    def echo(args: In, ctx: OperationContext) -> Out:
        """Echo."""
        return Out(doubled=args.n)

    assert echo.arguments("anything", loose=True) is None


def test_the_provers_operations_check_and_prove(ctx, coqtop_path) -> None:
    reg = load_registry(["provers"])
    ok = reg.invoke(
        "provers_check",
        {"statement": "Theorem t : 2 + 2 = 4.", "proof": "Proof. reflexivity. Qed."},
        ctx,
    )
    assert ok.ok and ok.payload.verdict == "proved"
    wrong = reg.invoke(
        "provers_check",
        {"statement": "Theorem t : 2 + 2 = 5.", "proof": "Proof. reflexivity. Qed."},
        ctx,
    )
    assert wrong.status == "failed" and "Unable to unify" in wrong.reason
    assert wrong.payload.failure["kind"] == "type_mismatch"
    wz = reg.invoke("provers_prove", {"statement": "Sum(binomial(n, k), (k, 0, n)) = 2**n"}, ctx)
    assert wz.ok and wz.payload.method == "wz" and "theorem main" in wz.payload.proof
    refuted = reg.invoke(
        "provers_prove", {"statement": "Sum(binomial(n, k), (k, 0, n)) = 3**n"}, ctx
    )
    assert refuted.status == "failed" and refuted.payload.verdict == "refuted"
    found = reg.invoke(
        "provers_prove",
        {"statement": "Theorem t : forall n : nat, n + 0 = n.", "budget_calls": 8},
        ctx,
    )
    assert found.ok and found.payload.method == "refine" and found.payload.proof
    no_proof = reg.invoke(
        "provers_prove", {"statement": "Theorem t : True.", "method": "check"}, ctx
    )
    assert no_proof.status == "invalid" and "needs a proof" in no_proof.reason


def test_the_memory_operations_remember_recall_and_forget_per_user(ctx) -> None:
    reg = load_registry(["memory"])
    ann = {"user": "ann"}
    stored = reg.invoke(
        "memory_remember", {"namespace": ann, "text": "My sister Ana lives in Porto."}, ctx
    )
    assert stored.ok and stored.payload.episode.startswith("ep_")
    found = reg.invoke("memory_recall", {"namespace": ann, "query": "Where does Ana live?"}, ctx)
    assert found.ok and "Porto" in found.payload.items[0].text
    assert stored.payload.episode in found.payload.items[0].provenance
    other = reg.invoke("memory_recall", {"namespace": {"user": "bob"}, "query": "Ana"}, ctx)
    assert other.ok and other.payload.items == []
    gone = reg.invoke("memory_forget", {"namespace": ann, "about": "Ana in Porto", "limit": 1}, ctx)
    assert gone.ok and len(gone.payload.items) == 1
    after = reg.invoke("memory_recall", {"namespace": ann, "query": "Where does Ana live?"}, ctx)
    assert all("Porto" not in i.text for i in after.payload.items)
    nothing = reg.invoke("memory_forget", {"namespace": ann}, ctx)
    assert nothing.status == "invalid" and "ids or about" in nothing.reason
