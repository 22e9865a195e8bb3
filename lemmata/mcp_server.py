"""The MCP server: one tool per registered operation, over stdio or streamable HTTP.

Nothing here declares an argument: every tool is generated from the operations registry
(:mod:`lemmata.operations`). A tool's name is the operation's ``qualified_name``
(``provers_check``), its description the operation's description, its input schema the
operation's JSON schema, its annotations the operation's hints (``readOnlyHint``,
``destructiveHint``, ``idempotentHint``) and its output schema the operation's
:class:`~lemmata.operations.Envelope`. A call runs ``op.invoke`` on a worker thread and answers
with the envelope as structured content, plus two text blocks for clients that read only text:
the one-line ``envelope.summary()`` and the envelope as JSON. An envelope that is not ``ok`` is
sent with ``isError`` set; a failure is always an envelope with a reason (an unknown tool, bad
arguments, a crash in an operation), never a protocol error, so the model can correct itself
and the server keeps serving.

Memory tools need a namespace (whose memory):

- stdio: the arguments carry ``"namespace": {"user": ...}``, or the server was started with
  ``--user NAME``; then every memory call is confined to that user and a namespace naming
  another user is ``denied``.
- HTTP: every request needs ``Authorization: Bearer <token>`` (the ``mcp_token`` setting,
  ``LEMMATA_MCP_TOKEN``); a missing or wrong token is refused with 401 before any MCP message
  is read. One token stands for one user (``--user NAME`` or the ``mcp_user`` setting,
  ``LEMMATA_MCP_USER``): memory tools take the namespace from the token's user and deny any
  other. The verifier maps tokens to users (:class:`StaticTokenVerifier`), so more tokens can
  be added without touching the tools. The HTTP transport is stateless: each request stands
  alone, and no per-connection state is kept between calls (caches of opened memories and
  verifiers are shared by all calls, not tied to a connection).

In stdio mode the protocol owns the real standard output: :func:`stdout_reserved` points file
descriptor 1 and ``sys.stdout`` at standard error before anything else is loaded, so a stray
``print`` (ours, a library's, a C extension's or a child process's) lands on stderr and never
between two JSON-RPC messages. Logs go to stderr in both modes.

The ``mcp`` package is an optional extra: ``pip install 'lemmata[mcp]'``. From the shell::

    lemmata mcp                                      # stdio, for a client that starts it
    lemmata mcp --user alice --tools memory,provers  # bound to alice, six tools
    LEMMATA_MCP_TOKEN=... lemmata mcp --transport http --user alice --port 8765

and in a client's configuration (Claude Desktop, an IDE)::

    {"mcpServers": {"lemmata": {"command": "lemmata", "args": ["mcp", "--user", "alice"]}}}
"""

from __future__ import annotations

import dataclasses
import hmac
import io
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from pydantic import ValidationError

from lemmata.errors import ConfigError, MissingDependency, UsageError
from lemmata.operations import Envelope, Operation, OperationContext, Registry, Scope

if TYPE_CHECKING:
    import mcp_types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.auth.provider import AccessToken
    from starlette.applications import Starlette

    from lemmata.settings import Settings

__all__ = [
    "INSTALL",
    "MCP_PATH",
    "StaticTokenVerifier",
    "build_server",
    "call_result",
    "configure_logging",
    "http_app",
    "serve",
    "serve_stdio",
    "stdout_reserved",
    "tool_definitions",
]

INSTALL = "pip install 'lemmata[mcp]'"
MCP_PATH = "/mcp"

log = logging.getLogger("lemmata.mcp")


def _require_mcp(feature: str = "lemmata mcp") -> None:
    try:
        import mcp  # noqa: F401
        import mcp_types  # noqa: F401
    except ImportError:
        raise MissingDependency(feature, INSTALL) from None


def tool_definitions(registry: Registry) -> list[mcp_types.Tool]:
    """One MCP tool per operation, generated from its declaration (never written by hand)."""
    _require_mcp()
    import mcp_types

    return [
        mcp_types.Tool(
            name=op.qualified_name,
            title=f"{op.capability}: {op.name}",
            description=op.description,
            input_schema=op.parameters(),
            output_schema=_output_schema(op),
            annotations=mcp_types.ToolAnnotations(
                title=f"{op.capability}: {op.name}",
                read_only_hint=op.read_only,
                destructive_hint=op.destructive,
                idempotent_hint=op.idempotent,
                # Operations read local files, databases and provers, not the web.
                open_world_hint=False,
            ),
        )
        for op in registry
    ]


def _output_schema(op: Operation) -> dict[str, Any]:
    schema = op.envelope_type().model_json_schema(mode="serialization")
    schema["title"] = f"{op.qualified_name} result"
    return schema


def call_result(envelope: Envelope[Any]) -> mcp_types.CallToolResult:
    """The MCP answer for an envelope: the envelope as structured content, its summary line
    and its JSON as text, ``isError`` unless it is ok."""
    import mcp_types

    data = envelope.model_dump(mode="json")
    return mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(type="text", text=envelope.summary()),
            mcp_types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False)),
        ],
        structured_content=data,
        is_error=not envelope.ok,
    )


def _failure(name: str, status: Any, reason: str, hint: str = "") -> Envelope[Any]:
    return Envelope[Any](operation=name, ok=False, status=status, reason=reason, hint=hint)


def _token_user(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The user the request's bearer token stands for (HTTP), or None (stdio)."""
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    token: AccessToken | None = None
    scope = getattr(ctx.request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    if isinstance(user, AuthenticatedUser):
        token = user.access_token
    if token is None:
        token = get_access_token()
    if token is None:
        return None
    return token.subject or token.client_id


def _progress_sink(ctx: ServerRequestContext[Any, Any]) -> Any:
    """Forward an operation's progress events, from whatever thread reports them, to the
    client as ``notifications/progress`` (a no-op when the call asked for none). Progress only
    rises, as the protocol requires: percent done when the operation knows it, else a count."""
    import anyio.from_thread
    import anyio.lowlevel

    token = anyio.lowlevel.current_token()
    lock = threading.Lock()
    last = [0.0]

    def sink(event: Mapping[str, Any]) -> None:
        fraction = event.get("fraction")
        with lock:
            if (
                isinstance(fraction, int | float)
                and 0 <= fraction <= 1
                and fraction * 100 > last[0]
            ):
                value, total = float(fraction) * 100, 100.0
            else:
                value, total = last[0] + 0.01, None
            last[0] = value
        message = str(event.get("message") or "") or None
        try:
            anyio.from_thread.run(ctx.session.report_progress, value, total, message, token=token)
        except Exception:  # a client that went away must not fail the operation
            log.debug("progress notification not sent", exc_info=True)

    return sink


def build_server(
    registry: Registry,
    context: OperationContext,
    *,
    user: str | None = None,
    require_token: bool = False,
    name: str = "lemmata",
) -> Server[Any]:
    """An MCP server whose tools are the operations of ``registry``.

    ``context`` supplies the settings, the model and the caches shared by all calls (its
    ``scope`` is replaced per call); input from clients is untrusted unless the settings'
    ``untrusted_input`` is false, so verifiers run confined. ``user`` confines memory tools
    to that user (stdio ``--user``). With ``require_token`` (HTTP) memory tools take the
    user of the request's bearer token and are denied without one. The server is the SDK's
    low-level ``Server``: its tools come from the registry at run time rather than from
    Python signatures, so the operation's own JSON schema is published as it is.
    """
    _require_mcp()
    import anyio.to_thread
    import mcp_types
    from mcp.server import Server

    from lemmata._version import __version__

    # What clients send is untrusted: their statements and proofs run confined, unless the
    # settings decide otherwise (untrusted_input).
    settings = context.settings.for_input_from_others()
    if settings is not context.settings:
        context = dataclasses.replace(context, settings=settings)
    tools = tool_definitions(registry)
    listing = mcp_types.ListToolsResult(tools=tools)
    operations = {op.qualified_name: op for op in registry}
    schemas = {tool.name: tool.input_schema for tool in tools}
    fixed = Scope.model_validate({"user": user}) if user else None

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return listing

    def run(
        op: Operation, arguments: dict[str, Any], scope: Scope | None, progress: Any
    ) -> Envelope[Any]:
        call = dataclasses.replace(
            context, scope=scope, cancel=threading.Event(), progress=progress
        )
        try:
            return op.invoke(arguments, call)
        except Exception as exc:  # nothing may escape as a protocol error
            log.exception("%s failed", op.qualified_name)
            return _failure(
                op.qualified_name,
                "error",
                f"{op.qualified_name}: internal error: {type(exc).__name__}: {exc}",
                "this is a bug in Lemmata; please report it with the arguments",
            )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        started = time.perf_counter()
        op = operations.get(params.name)
        if op is None:
            envelope = _failure(
                params.name,
                "invalid",
                f"no tool named {params.name!r}",
                f"known tools: {', '.join(operations) or 'none (see --tools)'}",
            )
        else:
            scope = fixed
            token_user = _token_user(ctx)
            if token_user is not None:
                scope = Scope.model_validate({"user": token_user})
            if op.scoped and require_token and token_user is None:
                envelope = _failure(
                    op.qualified_name,
                    "denied",
                    "memory tools need an authenticated user over HTTP",
                    "send Authorization: Bearer <LEMMATA_MCP_TOKEN>",
                )
            else:
                # The operation blocks (provers, OCR, embeddings): off the event loop. On
                # cancellation the worker is left to reach its own time limit.
                envelope = await anyio.to_thread.run_sync(
                    run,
                    op,
                    dict(params.arguments or {}),
                    scope,
                    _progress_sink(ctx),
                    abandon_on_cancel=True,
                )
        log.info("%s (%.0f ms)", envelope.summary(), (time.perf_counter() - started) * 1000)
        return call_result(envelope)

    capabilities = ", ".join(registry.capabilities) or "none"
    return Server(
        name,
        version=__version__,
        title="Lemmata",
        instructions=(
            f"Lemmata's operations ({capabilities}). Every tool answers with an envelope: ok, "
            "status, reason, hint, elapsed_ms and the payload. Memory tools (memory_*) work in "
            'one namespace: pass "namespace": {"user": "..."} unless the server is bound to a '
            "user."
        ),
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class StaticTokenVerifier:
    """Bearer tokens known in advance, each standing for one user (``token -> user``).

    Tokens are compared in constant time; an unknown token is refused (the SDK answers 401).
    The accepted token's ``subject`` and ``client_id`` are the user's name.
    """

    def __init__(self, tokens: Mapping[str, str]) -> None:
        if not tokens or not all(t and u for t, u in tokens.items()):
            raise ConfigError("the MCP server needs at least one non-empty token and its user")
        self._tokens = [(t.encode(), u) for t, u in tokens.items()]

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access granted to ``token``, or None when it is not one of ours."""
        from mcp.server.auth.provider import AccessToken

        given = token.encode()
        found = None
        for known, user in self._tokens:  # no early exit: the time does not tell which matched
            if hmac.compare_digest(given, known):
                found = user
        if found is None:
            return None
        return AccessToken(token=token, client_id=found, subject=found, scopes=[])


def http_app(
    server: Server[Any], tokens: Mapping[str, str], *, host: str = "127.0.0.1", port: int = 8765
) -> Starlette:
    """The streamable-HTTP ASGI app at ``/mcp``: stateless, every request authenticated by a
    bearer token from ``tokens`` (``token -> user``)."""
    _require_mcp()
    from mcp.server.auth.settings import AuthSettings
    from pydantic import AnyHttpUrl

    # Only the bearer check is used; the issuer URL is required by the SDK's settings.
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        host=host,
        auth=AuthSettings(issuer_url=AnyHttpUrl(f"http://{netloc}"), resource_server_url=None),
        token_verifier=StaticTokenVerifier(tokens),
    )


@contextmanager
def stdout_reserved() -> Iterator[BinaryIO]:
    """Keep the process's standard output for the protocol alone.

    Yields a private binary stream on the original stdout; meanwhile file descriptor 1 and
    ``sys.stdout`` point at stderr, so prints from Python, C libraries and child processes
    (which inherit descriptor 1) go to stderr. Both are restored on exit.
    """
    sys.stdout.flush()
    wire_fd = os.dup(1)  # not inheritable: children never see the wire
    saved = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    wire = os.fdopen(wire_fd, "wb", closefd=False)
    try:
        yield wire
    finally:
        sys.stdout = saved
        with suppress(OSError, ValueError):  # closed with the text layer over it
            wire.flush()
        os.dup2(wire_fd, 1)
        os.close(wire_fd)


def serve_stdio(server: Server[Any], wire: BinaryIO) -> None:
    """Serve MCP on stdin and ``wire`` (the reserved stdout) until stdin closes."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        # Given a stdout stream the SDK leaves descriptor 1 alone (stdout_reserved already
        # moved it); stdin it still claims, pointing descriptor 0 at /dev/null meanwhile.
        text = io.TextIOWrapper(wire, encoding="utf-8", newline="\n", write_through=True)
        async with stdio_server(stdout=anyio.wrap_file(text)) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def configure_logging(level: int = logging.INFO) -> None:
    """Logs and warnings to stderr only: our messages at ``level``, libraries' from WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("lemmata").setLevel(level)
    logging.captureWarnings(True)


def _parse_tools(tools: str | Iterable[str] | None) -> list[str] | None:
    if tools is None:
        return None
    items = tools.split(",") if isinstance(tools, str) else list(tools)
    wanted = [t.strip() for t in items if t.strip()]
    return wanted or None


def serve(
    settings: Settings,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    tools: str | Iterable[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    user: str | None = None,
) -> None:
    """Run ``lemmata mcp``: load the registry, select ``tools`` (capabilities, comma
    separated), and serve until the client goes away (stdio) or the process is stopped (HTTP).

    Raises :class:`~lemmata.errors.UsageError` for an unknown capability or transport,
    :class:`~lemmata.errors.ConfigError` for HTTP without ``LEMMATA_MCP_TOKEN`` or a user,
    and :class:`~lemmata.errors.MissingDependency` without the ``mcp`` extra.
    """
    if transport not in ("stdio", "http"):
        raise UsageError(f"unknown transport {transport!r}: choose stdio or http")
    _require_mcp()
    wanted = _parse_tools(tools)
    user = (user or "").strip() or None
    if user is not None:
        try:
            Scope.model_validate({"user": user})
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            raise UsageError(f"--user {user[:40]!r}: {problem}") from None
    if transport == "http":
        token = settings.mcp_token
        if token is None:
            raise ConfigError(
                "lemmata mcp --transport http needs a bearer token: set LEMMATA_MCP_TOKEN "
                "(or mcp_token in the settings file); clients then send "
                "`Authorization: Bearer <token>`"
            )
        user = user or settings.mcp_user
        if user is None:
            raise ConfigError(
                "lemmata mcp --transport http needs the user its token stands for: pass "
                "--user NAME or set LEMMATA_MCP_USER"
            )
    configure_logging()
    if transport == "stdio":
        with stdout_reserved() as wire:
            server = _server_for(settings, wanted, user=user, require_token=False)
            serve_stdio(server, wire)
        return

    import uvicorn

    assert settings.mcp_token is not None and user is not None
    server = _server_for(settings, wanted, user=None, require_token=True)
    app = http_app(server, {settings.mcp_token.get_secret_value(): user}, host=host, port=port)
    log.info("serving on http://%s:%d%s for user %r", host, port, MCP_PATH, user)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _server_for(
    settings: Settings, wanted: list[str] | None, *, user: str | None, require_token: bool
) -> Server[Any]:
    from lemmata.llm import get_model
    from lemmata.operations import load_registry

    registry = load_registry(warn=lambda message: log.warning("%s", message))
    try:
        registry = registry.select(wanted)
    except ValueError as exc:
        raise UsageError(f"--tools: {exc}") from None
    if not len(registry):
        raise UsageError("no operations are installed: reinstall lemmata")
    context = OperationContext(settings=settings, model=get_model(settings))
    log.info(
        "lemmata mcp: %d tools (%s)%s",
        len(registry),
        ", ".join(registry.capabilities),
        f" for user {user!r}" if user else "",
    )
    return build_server(registry, context, user=user, require_token=require_token)
