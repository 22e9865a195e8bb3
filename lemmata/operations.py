"""One declaration per operation: typed functions that every surface is generated from.

A capability declares each user-facing operation once, with :func:`operation`: a function
from a pydantic input to a pydantic output, a description (its docstring), hints (read-only,
destructive, idempotent), a time limit, example tasks in users' words, and optionally an
offline argument extractor (text -> arguments) for the agent's router, with a looser reader
for tasks that the router recognises by their words when their form is not the expected one
(:meth:`Operation.arguments`). The capability lists its
operations under the entry-point group ``lemmata.operations``::

    [project.entry-points."lemmata.operations"]
    provers = "lemmata.provers.operations:OPERATIONS"

and :func:`load_registry` collects them. The SDK (calling an :class:`Operation`), the agent's
tools (:mod:`lemmata.agents.agent`), the MCP server (:mod:`lemmata.mcp_server`) and the shell
are all generated from that registry, so adding an operation adds it everywhere.

Every call returns one :class:`Envelope`: ``ok``, ``status``, ``reason``, ``hint``,
``elapsed_ms`` and the typed ``payload``. Arguments are validated first (``invalid``, naming
the fields to fix); the function runs under its time limit (``timeout`` is a status, never
"no errors"); a missing program or package is ``unavailable``; an outcome that did not succeed
(a proof that fails, a grounding that abstains) is ``failed`` with the payload still there.

>>> from pydantic import BaseModel
>>> class AddIn(BaseModel):
...     a: int
...     b: int
>>> class AddOut(BaseModel):
...     total: int
>>> @operation("math", read_only=True, idempotent=True, time_limit_s=1)
... def add(args: AddIn, ctx: OperationContext) -> AddOut:
...     '''Add two integers.'''
...     return AddOut(total=args.a + args.b)
>>> add(a=2, b=3).payload.total
5
>>> env = add(a="two", b=3)
>>> env.status, env.reason
('invalid', "math_add: a: Input should be a valid integer, unable to parse string as an integer (got 'two')")
"""

from __future__ import annotations

import contextvars
import importlib.metadata
import inspect
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lemmata.errors import LemmataError

if TYPE_CHECKING:
    from lemmata.llm.base import ChatModel
    from lemmata.settings import Settings

__all__ = [
    "ENTRY_POINT_GROUP",
    "STATUSES",
    "Cancelled",
    "Envelope",
    "Operation",
    "OperationContext",
    "Outcome",
    "ProgressSink",
    "Registry",
    "Scope",
    "format_validation_error",
    "load_registry",
    "operation",
]

ENTRY_POINT_GROUP = "lemmata.operations"

Status = Literal[
    "ok", "failed", "timeout", "invalid", "denied", "unavailable", "cancelled", "error"
]
STATUSES: tuple[str, ...] = (
    "ok",
    "failed",
    "timeout",
    "invalid",
    "denied",
    "unavailable",
    "cancelled",
    "error",
)

P = TypeVar("P")


class Envelope(BaseModel, Generic[P]):
    """The result of one operation call, the same on every surface.

    ``status``: ``ok`` (done), ``failed`` (ran; the outcome did not succeed, see ``reason``),
    ``timeout`` (the time limit passed), ``invalid`` (bad arguments, an unknown operation, a
    missing namespace), ``denied`` (not approved, not authorised), ``unavailable`` (a program,
    package or model it needs is missing), ``cancelled`` (stopped by the caller), ``error``
    (anything else; ``reason`` names it).
    """

    operation: str
    ok: bool
    status: Status
    reason: str = ""
    hint: str = ""
    elapsed_ms: float = 0.0
    payload: P | None = None

    def summary(self) -> str:
        """One line: ``provers_check: ok (812 ms)`` or the status with its reason."""
        head = f"{self.operation}: {self.status} ({self.elapsed_ms:.0f} ms)"
        return head if self.ok or not self.reason else f"{head}: {self.reason}"

    def text(self) -> str:
        """The result for people: the payload's own ``describe()`` when it has one (a proof,
        the recalled items, a click point), with the reason and hint when it did not succeed."""
        body = ""
        describe = getattr(self.payload, "describe", None)
        if callable(describe):
            body = str(describe())
        elif self.payload is not None:
            import json

            dumped = (
                self.payload.model_dump(mode="json")
                if isinstance(self.payload, BaseModel)
                else self.payload
            )
            body = json.dumps(dumped, ensure_ascii=False, default=str)[:2000]
        if self.ok:
            return body or self.summary()
        lines = []
        if not body or (self.reason and self.reason not in body):
            lines.append(
                f"{self.operation} {self.status}: {self.reason}" if self.reason else self.summary()
            )
        if body:
            lines.append(body)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Outcome:
    """What an operation returns when its work ran but did not succeed (or succeeded only in
    part): the payload, the status (``failed`` by default) and a reason and hint for people."""

    payload: BaseModel
    status: Status = "failed"
    reason: str = ""
    hint: str = ""


class Scope(BaseModel):
    """Whose memory an operation reads or writes: a ``user``, an ``agent`` and optionally one
    ``session`` (the same fields as :class:`lemmata.memory.Namespace`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: str = Field(min_length=1, max_length=200, description="whose memory")
    agent: str = Field("default", min_length=1, max_length=200)
    session: str | None = Field(None, min_length=1, max_length=200)


class Cancelled(LemmataError):
    """The caller cancelled the operation (Ctrl-C, a closed connection, a spent budget)."""

    code = "cancelled"


class ProgressSink(Protocol):
    """Receives progress events (``{"operation", "message", "fraction"?}``)."""

    def __call__(self, event: dict[str, Any]) -> None: ...


@dataclass
class OperationContext:
    """What an operation may use besides its arguments.

    ``settings`` and ``model`` (None offline); ``scope`` is the namespace memory operations
    use when set (the authenticated user, the agent's user), overriding the arguments';
    ``resources`` is a cache shared across calls (open memories, verifiers, grounders: see
    :meth:`resource`); ``progress`` receives progress events; ``cancel`` is set when the caller
    gives up (a timeout, Ctrl-C), and long operations look at it between steps.
    """

    settings: Settings
    model: ChatModel | None = None
    scope: Scope | None = None
    resources: dict[Any, Any] = field(default_factory=dict)
    progress: ProgressSink | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    deadline: float | None = None
    operation: str = ""
    # Re-entrant: a resource's factory may itself ask for another (memory -> embedder).
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _parents: tuple[threading.Event, ...] = field(default=(), repr=False)

    @classmethod
    def default(cls, **kwargs: Any) -> OperationContext:
        """A context from the settings in effect (``Settings.load()``), offline."""
        from lemmata.settings import Settings

        return cls(settings=kwargs.pop("settings", None) or Settings.load(), **kwargs)

    @property
    def cancelled(self) -> bool:
        """Whether this call, or the caller it was made for, was cancelled."""
        return self.cancel.is_set() or any(p.is_set() for p in self._parents)

    def resource(self, key: Any, factory: Callable[[], Any]) -> Any:
        """The cached object under ``key``, made by ``factory()`` on first use."""
        with self._lock:
            if key not in self.resources:
                self.resources[key] = factory()
            return self.resources[key]

    def remaining(self) -> float | None:
        """Seconds left before the call's deadline (None: no deadline)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def report(self, message: str, fraction: float | None = None, **data: Any) -> None:
        """Tell whoever streams the call how far it got."""
        if self.cancelled:
            raise Cancelled(f"{self.operation or 'the operation'} was cancelled")
        if self.progress is not None:
            event: dict[str, Any] = {"operation": self.operation, "message": message}
            if fraction is not None:
                event["fraction"] = round(min(1.0, max(0.0, fraction)), 4)
            event.update(data)
            self.progress(event)

    def for_call(self, operation: str, time_limit_s: float) -> OperationContext:
        """A copy for one call: its own cancel flag and deadline, the same caches."""
        limit = time_limit_s
        left = self.remaining()
        if left is not None:
            limit = min(limit, left)
        return OperationContext(
            settings=self.settings,
            model=self.model,
            scope=self.scope,
            resources=self.resources,
            progress=self.progress,
            deadline=time.monotonic() + limit,
            operation=operation,
            _lock=self._lock,
            _parents=(self.cancel, *self._parents),
        )


_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)\n?```", re.S)
_TICKS = re.compile(r"`([^`\n]+)`")


def _call(reader: Callable[[str], dict[str, Any] | None], text: str) -> dict[str, Any] | None:
    try:
        return reader(text)
    except Exception:  # an extractor's bug must not stop a surface
        return None


def _marked(
    reader: Callable[[str], dict[str, Any] | None] | None, text: str
) -> dict[str, Any] | None:
    """``reader`` on ``text``, then without its code marks, then on the marked code alone."""
    if reader is None:
        return None
    args = _call(reader, text)
    plain = _TICKS.sub(r"\1", _FENCE.sub(r"\n\1\n", text)).strip()

    def ticked(a: dict[str, Any] | None) -> bool:
        return not a or any("`" in str(v) for v in a.values())

    if plain != text and ticked(args):
        args = _call(reader, plain) or args
        pieces = [m.group(1) for m in _FENCE.finditer(text)]
        pieces += [m.group(1) for m in _TICKS.finditer(_FENCE.sub(" ", text))]
        code = "\n".join(p.strip() for p in pieces if p.strip())
        if code and ticked(args):
            args = _call(reader, code) or args
    return args


def format_validation_error(exc: ValidationError, prefix: str = "") -> str:
    """``field: message (got value)`` for each error, joined by ``; ``."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        got = err.get("input")
        shown = ""
        if err.get("type") not in ("missing", "extra_forbidden") and got is not None:
            text = repr(got)
            shown = f" (got {text[:60]}{'...' if len(text) > 60 else ''})"
        parts.append(f"{where}: {err.get('msg', 'invalid')}{shown}")
    return (f"{prefix}: " if prefix else "") + "; ".join(parts)


_UNAVAILABLE = ("missing_dependency", "tool_not_found", "model_not_configured")
_INVALID = ("usage", "image", "data_source", "config")


@dataclass(frozen=True)
class Operation:
    """One declared operation; see the module docstring. Call it with keyword arguments (or
    an input model) to run it in the SDK: ``check(statement=..., proof=...)`` returns an
    :class:`Envelope`."""

    capability: str
    name: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    function: Callable[[Any, OperationContext], BaseModel | Outcome]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    time_limit_s: float = 60.0
    scoped: bool = False
    examples: tuple[str, ...] = ()
    extract: Callable[[str], dict[str, Any] | None] | None = field(default=None, compare=False)
    read: Callable[[str], dict[str, Any] | None] | None = field(default=None, compare=False)

    def arguments(self, text: str, *, loose: bool = False) -> dict[str, Any] | None:
        """The arguments a task in words gives this operation, or None when it gives none.

        ``extract`` reads the form it expects (a Coq statement, "remember that ..."); where
        Markdown code marks got in its way (nothing found, or a backtick inside an argument) it
        reads the text without them, then the marked code alone. With ``loose`` (the task is
        known to ask for this operation, by its words), ``read`` takes what ``extract`` did not
        ("fyi my locker number is 214"). An extractor's bug reads as nothing found.
        """
        args = _marked(self.extract, text)
        if not args and loose and self.read is not None:
            args = _marked(self.read, text)
        return args

    @property
    def qualified_name(self) -> str:
        """``capability_name``: the name on every surface (tools, MCP, the router)."""
        return f"{self.capability}_{self.name}"

    @property
    def summary(self) -> str:
        """The description's first paragraph."""
        return self.description.split("\n\n")[0].strip()

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        schema = self.input.model_json_schema()
        schema.pop("title", None)
        return schema

    def envelope_type(self) -> type[Envelope[Any]]:
        """``Envelope[output]``, for surfaces that publish an output schema."""
        return Envelope[self.output]  # type: ignore[name-defined]

    def __call__(
        self, args: BaseModel | Mapping[str, Any] | None = None, /, **kwargs: Any
    ) -> Envelope[Any]:
        context = kwargs.pop("context", None) or OperationContext.default()
        given: Any = args if args is not None else kwargs
        return self.invoke(given, context)

    def invoke(
        self, args: BaseModel | Mapping[str, Any], context: OperationContext
    ) -> Envelope[Any]:
        """Validate ``args``, run under the time limit, and wrap the result in an envelope.

        Ctrl-C (``KeyboardInterrupt``) cancels the call and is raised again for the caller.
        With tracing on (:mod:`lemmata.tracing`) the call is an ``operation NAME`` span.
        """
        from lemmata import tracing

        attributes = {
            "lemmata.operation": self.qualified_name,
            "lemmata.capability": self.capability,
        }
        with tracing.span(f"operation {self.qualified_name}", attributes) as span:
            if tracing.content_enabled():
                span.content(
                    "lemmata.arguments", args.model_dump() if isinstance(args, BaseModel) else args
                )
            envelope = self._invoke(args, context)
            span.set("lemmata.status", envelope.status)
            span.set("lemmata.elapsed_ms", envelope.elapsed_ms)
            if envelope.status not in ("ok", "failed"):
                span.error(envelope.reason)
            return envelope

    def _invoke(
        self, args: BaseModel | Mapping[str, Any], context: OperationContext
    ) -> Envelope[Any]:
        started = time.perf_counter()
        name = self.qualified_name

        def done(
            status: Status, reason: str = "", hint: str = "", payload: Any = None
        ) -> Envelope[Any]:
            return Envelope[Any](
                operation=name,
                ok=status == "ok",
                status=status,
                reason=reason,
                hint=hint,
                elapsed_ms=round((time.perf_counter() - started) * 1000, 2),
                payload=payload,
            )

        try:
            data = args.model_dump() if isinstance(args, BaseModel) else dict(args)
        except (TypeError, ValueError):
            return done("invalid", f"{name}: the arguments must be an object of named fields")
        if self.scoped:
            problem = _apply_scope(data, context.scope)
            if problem:
                return done(*problem)
        try:
            parsed = self.input.model_validate(data)
        except ValidationError as exc:
            fields = ", ".join(self.input.model_fields)
            return done(
                "invalid",
                format_validation_error(exc, name),
                f"{name} takes: {fields}",
            )
        call = context.for_call(name, self.time_limit_s)
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = self.function(parsed, call)
            except BaseException as exc:  # carried back to the caller's thread
                box["error"] = exc

        # The copy of the context variables carries LangGraph's stream writer and config
        # into the worker thread, so progress reaches the stream from inside the operation.
        runner = threading.Thread(
            target=contextvars.copy_context().run, args=(target,), daemon=True, name=name
        )
        runner.start()
        limit = call.remaining()
        end = time.monotonic() + (limit or 0.0)
        try:
            # in slices, so that a caller's cancel (Ctrl-C in another thread) ends the wait
            while runner.is_alive() and time.monotonic() < end and not call.cancelled:
                runner.join(min(0.05, max(0.0, end - time.monotonic())))
        except KeyboardInterrupt:
            call.cancel.set()
            raise
        if runner.is_alive() and call.cancelled:
            call.cancel.set()
            return done("cancelled", f"{name} was cancelled", "")
        if runner.is_alive():
            call.cancel.set()
            return done(
                "timeout",
                f"{name} did not finish within its time limit of {limit:.1f} s",
                "give it more time (a larger budget or time limit) or a smaller task",
            )
        if "error" in box:
            return done(*_describe_error(name, box["error"]))
        value = box.get("value")
        if isinstance(value, Outcome):
            return done(value.status, value.reason, value.hint, value.payload)
        if not isinstance(value, self.output):
            return done(
                "error",
                f"{name} returned {type(value).__name__}, not {self.output.__name__}",
                "this is a bug in the operation; please report it",
            )
        return done("ok", payload=value)


def _apply_scope(data: dict[str, Any], scope: Scope | None) -> tuple[Status, str, str] | None:
    """Put the context's namespace into the arguments (or check the one given)."""
    given = data.get("namespace")
    if scope is None:
        if not given:
            return (
                "invalid",
                "missing namespace: memory operations need namespace.user "
                "(and optionally agent and session)",
                'pass "namespace": {"user": "alice"}',
            )
        return None
    if given:
        try:
            asked = Scope.model_validate(given)
        except ValidationError as exc:
            return ("invalid", format_validation_error(exc, "namespace"), "")
        if asked.user != scope.user:
            return (
                "denied",
                f"namespace user {asked.user!r} is not the authenticated user {scope.user!r}",
                "leave the namespace out to use your own",
            )
        data["namespace"] = asked.model_dump()
        return None
    data["namespace"] = scope.model_dump()
    return None


def _describe_error(name: str, exc: BaseException) -> tuple[Status, str, str]:
    if isinstance(exc, Cancelled):
        return ("cancelled", str(exc), "")
    if isinstance(exc, ValidationError):
        return ("invalid", format_validation_error(exc, name), "")
    if isinstance(exc, LemmataError):
        code = getattr(exc, "code", "lemmata_error")
        status: Status = (
            "unavailable" if code in _UNAVAILABLE else "invalid" if code in _INVALID else "error"
        )
        return (status, f"{name}: [{code}] {exc}", "")
    if isinstance(exc, KeyboardInterrupt):
        return ("cancelled", f"{name} was interrupted", "")
    return (
        "error",
        f"{name}: internal error: {type(exc).__name__}: {exc}",
        "this is a bug in Lemmata; please report it with the arguments",
    )


def _model_of(annotation: Any) -> Any:
    """The pydantic model of a return annotation (``Out`` or ``Out | Outcome``)."""
    import types
    import typing

    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        models = [
            a
            for a in typing.get_args(annotation)
            if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        return models[0] if len(models) == 1 else None
    return annotation


def operation(
    capability: str,
    *,
    name: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    time_limit_s: float = 60.0,
    scoped: bool = False,
    examples: Iterable[str] = (),
    extract: Callable[[str], dict[str, Any] | None] | None = None,
    read: Callable[[str], dict[str, Any] | None] | None = None,
) -> Callable[[Callable[[Any, OperationContext], Any]], Operation]:
    """Declare ``fn(args: Input, ctx: OperationContext) -> Output`` as an :class:`Operation`;
    the input and output types come from its annotations, the description from its
    docstring."""
    if read_only and destructive:
        raise ValueError("an operation cannot be both read-only and destructive")
    if time_limit_s <= 0:
        raise ValueError(f"time_limit_s must be positive, not {time_limit_s}")

    def wrap(fn: Callable[[Any, OperationContext], Any]) -> Operation:
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters)
        if len(params) != 2:
            raise TypeError(f"{fn.__name__} must take (args, ctx)")
        arg_type, out_type = hints.get(params[0]), _model_of(hints.get("return"))
        for what, t in (("argument", arg_type), ("return", out_type)):
            if not (isinstance(t, type) and issubclass(t, BaseModel)):
                raise TypeError(f"{fn.__name__}'s {what} type must be a pydantic model")
        assert isinstance(arg_type, type) and issubclass(arg_type, BaseModel)
        assert isinstance(out_type, type)
        if scoped and "namespace" not in arg_type.model_fields:
            raise TypeError(f"{fn.__name__} is scoped, so its input needs a namespace field")
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"{fn.__name__} needs a docstring: it is the tool's description")
        return Operation(
            capability=capability,
            name=name or fn.__name__,
            description=doc,
            input=arg_type,
            output=out_type,
            function=fn,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            time_limit_s=time_limit_s,
            scoped=scoped,
            examples=tuple(examples),
            extract=extract,
            read=read,
        )

    return wrap


class Registry:
    """The operations every surface is generated from, by qualified name."""

    def __init__(self, operations: Iterable[Operation] = ()) -> None:
        self._ops: dict[str, Operation] = {}
        for op in operations:
            self.add(op)

    def add(self, op: Operation) -> None:
        if op.qualified_name in self._ops:
            raise ValueError(f"operation {op.qualified_name!r} is declared twice")
        self._ops[op.qualified_name] = op

    def __iter__(self) -> Iterator[Operation]:
        return iter(self._ops.values())

    def __len__(self) -> int:
        return len(self._ops)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    @property
    def capabilities(self) -> list[str]:
        return sorted({op.capability for op in self})

    def find(self, name: str) -> Operation | None:
        """By qualified name (``provers_check``), dotted (``provers.check``) or bare
        (``check``) when only one capability has it."""
        key = name.strip().replace(".", "_")
        if key in self._ops:
            return self._ops[key]
        bare = [op for op in self if op.name == key]
        return bare[0] if len(bare) == 1 else None

    def get(self, name: str) -> Operation:
        """Like :meth:`find`, raising ``KeyError`` with the known names."""
        op = self.find(name)
        if op is None:
            raise KeyError(f"no operation {name!r}; known: {', '.join(self._ops)}")
        return op

    def select(self, capabilities: Iterable[str] | None) -> Registry:
        """Only the operations of these capabilities (all for None); an unknown capability
        raises ``ValueError`` naming the known ones."""
        if capabilities is None:
            return Registry(self)
        wanted = [c.strip() for c in capabilities if c.strip()]
        unknown = [c for c in wanted if c not in self.capabilities]
        if unknown:
            raise ValueError(
                f"unknown capability {', '.join(map(repr, unknown))}; "
                f"choose from {', '.join(self.capabilities)}"
            )
        return Registry(op for op in self if op.capability in wanted)

    def invoke(
        self, name: str, args: BaseModel | Mapping[str, Any] | None, context: OperationContext
    ) -> Envelope[Any]:
        """Run the named operation; an unknown name is an ``invalid`` envelope."""
        op = self.find(name)
        if op is None:
            return Envelope[Any](
                operation=name,
                ok=False,
                status="invalid",
                reason=f"no operation named {name!r}",
                hint=f"known operations: {', '.join(self._ops)}",
            )
        return op.invoke(args if args is not None else {}, context)


def load_registry(
    capabilities: Iterable[str] | None = None, warn: Callable[[str], None] | None = None
) -> Registry:
    """Every operation that installed packages declare under ``lemmata.operations``; a broken
    declaration is reported through ``warn`` and skipped."""
    registry = Registry()
    for ep in sorted(
        importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name
    ):
        try:
            ops = list(ep.load())
            if not all(isinstance(op, Operation) for op in ops):
                raise TypeError("expected a list of lemmata.operations.Operation")
            for op in ops:
                registry.add(op)
        except Exception as exc:  # a broken plug-in must not take the others down
            if warn is not None:
                warn(f"operations {ep.name!r} ({ep.value}) not loaded: {type(exc).__name__}: {exc}")
    return registry.select(capabilities)
