"""`lemmata mcp`, driven as MCP clients drive it: the SDK's own client over stdio (the server a
subprocess, as Claude Desktop or an IDE starts it), raw JSON-RPC lines over pipes, and
streamable HTTP with a bearer token. Real operations run behind it: SQLite memory, coqtop,
Zeilberger, tesseract, the research agent."""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from anyio.from_thread import BlockingPortal, start_blocking_portal  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp_types import CallToolResult  # noqa: E402

from lemmata.operations import load_registry  # noqa: E402

LEMMATA = Path(sys.executable).with_name("lemmata")
EXPECTED_TOOLS = {
    "gui_ground",
    "gui_act",
    "memory_remember",
    "memory_recall",
    "memory_forget",
    "memory_reason",
    "provers_check",
    "provers_prove",
    "research_research",
}
GOOD = {"statement": "Theorem t : 2 + 2 = 4.", "proof": "Proof. reflexivity. Qed."}
WRONG = {"statement": "Theorem t : 2 + 2 = 5.", "proof": "Proof. reflexivity. Qed."}


def _server_env(home: Path, **extra: str) -> dict[str, str]:
    """What the server process sees: a fresh HOME and data folder, offline switches, and no
    settings file of the caller's."""
    keep = (
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "TOKENIZERS_PARALLELISM",
        "PYTHONPATH",
        "PATH",
    )
    env = {k: os.environ[k] for k in keep if k in os.environ}
    (home / "home").mkdir(exist_ok=True)
    env.update(HOME=str(home / "home"), LEMMATA_DATA_DIR=str(home / "data"), **extra)
    return env


@dataclass
class Session:
    """An MCP client session on a server subprocess, used from synchronous tests."""

    portal: BlockingPortal
    client: Client
    stderr: Path

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.client.call_tool, name, arguments)
        return result

    def tools(self) -> list[Any]:
        return list(self.portal.call(self.client.list_tools).tools)


def envelope(result: CallToolResult) -> dict[str, Any]:
    """The envelope a tool answered with; its text blocks must say the same."""
    data = result.structured_content
    assert isinstance(data, dict), result
    assert result.is_error is (not data["ok"])
    texts = [block.text for block in result.content if block.type == "text"]
    assert texts[0].startswith(f"{data['operation']}: {data['status']}")
    assert json.loads(texts[1]) == data
    return data


def _ok(data: dict[str, Any]) -> dict[str, Any]:
    assert data["ok"], data
    return data


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """One `lemmata mcp` over stdio for the module's tests, as a client application runs it."""
    tmp = tmp_path_factory.mktemp("mcp_stdio")
    params = StdioServerParameters(
        command=str(LEMMATA), args=["mcp", "--transport", "stdio"], env=_server_env(tmp), cwd=tmp
    )
    log = tmp / "server.stderr"
    with (
        log.open("w") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(
            Client(stdio_client(params, errlog=errlog), read_timeout_seconds=180)
        ) as client,
    ):
        yield Session(portal, client, log)


def test_tools_are_generated_from_the_registry(stdio: Session) -> None:
    tools = {t.name: t for t in stdio.tools()}
    assert set(tools) == EXPECTED_TOOLS
    for op in load_registry():
        tool = tools[op.qualified_name]
        assert tool.description == op.description
        assert tool.input_schema == op.parameters()
        assert tool.input_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
            op.read_only,
            op.destructive,
            op.idempotent,
        )
        assert tool.output_schema is not None
        assert {"ok", "status", "reason", "payload"} <= set(tool.output_schema["properties"])
    assert tools["memory_recall"].annotations.read_only_hint is True
    assert tools["memory_forget"].annotations.destructive_hint is True
    assert "namespace" in tools["memory_remember"].input_schema["properties"]
    assert "proof" in tools["provers_check"].input_schema["required"]
    # Logs went to stderr, never onto the protocol stream.
    assert "lemmata mcp: 9 tools" in stdio.stderr.read_text()


def test_memory_is_kept_per_namespace(stdio: Session) -> None:
    alice = {"user": "alice"}
    stored = envelope(
        stdio.call("memory_remember", {"namespace": alice, "text": "Alice's cat is called Miso."})
    )
    assert stored["ok"] and stored["payload"]["episode"], stored

    found = envelope(stdio.call("memory_recall", {"namespace": alice, "query": "cat's name"}))
    assert found["ok"], found
    assert any("Miso" in item["text"] for item in found["payload"]["items"])

    other = envelope(
        stdio.call("memory_recall", {"namespace": {"user": "bob"}, "query": "cat's name"})
    )
    assert other["ok"] and other["payload"]["items"] == []

    missing = envelope(stdio.call("memory_recall", {"query": "cat's name"}))
    assert missing["status"] == "invalid"
    assert "namespace" in missing["reason"] and "user" in missing["hint"]


def test_progress_reaches_a_client_that_asks_for_it(stdio: Session) -> None:
    import functools

    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    call = functools.partial(
        stdio.client.call_tool,
        "memory_remember",
        {"namespace": {"user": "erin"}, "text": "Erin's bike is the red one."},
        progress_callback=on_progress,
    )
    _ok(envelope(stdio.portal.call(call)))
    assert seen, "no progress notification arrived"
    values = [p for p, _, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values)  # only rises
    assert any(m and "structuring" in m for _, _, m in seen)
    assert any(total == 100.0 for _, total, _ in seen)


def _confined_coqtops(data_dir: Path) -> list[str]:
    """The command lines of bubblewrap processes running coqtop under the server whose data
    lives in ``data_dir`` (read from /proc: a confined program gets a minimal environment,
    so the server is found among its ancestors)."""

    def read(pid: str, name: str) -> bytes:
        try:
            return (Path("/proc") / pid / name).read_bytes()
        except OSError:
            return b""

    def parent(pid: str) -> str:
        stat = read(pid, "stat")
        return stat.rsplit(b")", 1)[-1].split()[1].decode() if stat else "0"

    marker = f"LEMMATA_DATA_DIR={data_dir}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        argv = read(proc.name, "cmdline").split(b"\0") if proc.name.isdigit() else [b""]
        if Path(argv[0].decode()).name != "bwrap" or not any(b"coqtop" in a for a in argv):
            continue
        pid = proc.name
        for _ in range(6):
            pid = parent(pid)
            if pid in ("0", "1"):
                break
            if marker in read(pid, "environ").split(b"\0"):
                found.append(" ".join(a.decode() for a in argv))
                break
    return found


def test_coq_proofs_are_checked(stdio: Session) -> None:
    good = envelope(stdio.call("provers_check", GOOD))
    assert good["ok"] and good["payload"]["verdict"] == "proved", good
    # Clients' statements are untrusted: the server's coqtop runs under bubblewrap.
    assert _confined_coqtops(stdio.stderr.parent / "data"), "coqtop is not confined"

    wrong = envelope(stdio.call("provers_check", WRONG))
    assert wrong["ok"] is False and wrong["status"] == "failed"
    assert wrong["reason"] and wrong["payload"]["verdict"] == "failed"


def test_wz_proves_a_binomial_identity(stdio: Session) -> None:
    proved = envelope(
        stdio.call(
            "provers_prove",
            {"statement": "Sum(binomial(n, k), (k, 0, n)) = 2**n", "method": "wz"},
        )
    )
    assert proved["ok"], proved
    assert proved["payload"]["verdict"] == "proved" and proved["payload"]["method"] == "wz"


def test_gui_grounding_finds_a_button_on_a_screenshot(stdio: Session, tmp_path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    shot = tmp_path / "screen.png"
    image = Image.new("RGB", (480, 240), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype("DejaVuSans.ttf", 28)
    boxes = {"Cancel": (40, 90, 200, 150), "Submit": (280, 90, 440, 150)}
    for label, (x0, y0, x1, y1) in boxes.items():
        draw.rectangle((x0, y0, x1, y1), outline="black", fill="#e0e0e0")
        draw.text((x0 + 30, y0 + 14), label, fill="black", font=font)
    image.save(shot)

    hit = envelope(stdio.call("gui_ground", {"image": str(shot), "instruction": "click Submit"}))
    assert hit["ok"], hit
    x, y = hit["payload"]["point"]
    x0, y0, x1, y1 = boxes["Submit"]
    assert x0 <= x <= x1 and y0 <= y <= y1

    missing = envelope(
        stdio.call("gui_ground", {"image": str(tmp_path / "nope.png"), "instruction": "Submit"})
    )
    assert missing["status"] == "invalid" and "nope.png" in missing["reason"]


def test_research_runs_on_a_small_database(stdio: Session, tmp_path: Path) -> None:
    from lemmata.agents.research.synthetic import generate

    db = tmp_path / "shop.sqlite"
    generate(db, seed=1, domain="retail")
    done = envelope(
        stdio.call(
            "research_research",
            {"source": str(db), "budget_turns": 3, "out_dir": str(tmp_path / "report")},
        )
    )
    assert done["ok"], done
    assert done["payload"]["total"] >= len(done["payload"]["insights"])
    assert Path(done["payload"]["report"]).is_dir()


def test_bad_calls_are_error_results_and_the_server_keeps_serving(stdio: Session) -> None:
    unknown = envelope(stdio.call("provers_disprove", {"statement": "x"}))
    assert unknown["status"] == "invalid"
    assert "provers_disprove" in unknown["reason"] and "provers_check" in unknown["hint"]

    no_proof = envelope(stdio.call("provers_check", {"statement": "Theorem t : True."}))
    assert no_proof["status"] == "invalid" and "proof" in no_proof["reason"]

    bad_type = envelope(stdio.call("provers_check", {**GOOD, "timeout_s": "soon"}))
    assert bad_type["status"] == "invalid" and "timeout_s" in bad_type["reason"]

    bad_namespace = envelope(
        stdio.call("memory_recall", {"namespace": {"agent": "x"}, "query": "anything"})
    )
    assert bad_namespace["status"] == "invalid" and "user" in bad_namespace["reason"]

    # Still serving, and still right.
    again = envelope(stdio.call("provers_check", GOOD))
    assert again["ok"], again


# -- raw JSON-RPC over pipes: stdout carries protocol messages and nothing else --------------

# A "library" that prints to stdout, from Python and from C (straight to descriptor 1),
# whenever a child process is started (coqtop, for provers_check).
_NOISY_SERVER = """
import os, sys
def hook(event, args):
    if event == "subprocess.Popen":
        print("stray print from a library")
        sys.stdout.flush()
        os.write(1, b"stray write to fd 1\\n")
sys.addaudithook(hook)
from lemmata.cli import main
main()
"""


def _request(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


class _Pipe:
    """A server subprocess spoken to in raw JSON-RPC lines; every stdout line is kept."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self._err = stderr.open("w")
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
            cwd=cwd,
        )
        assert self.proc.stdout is not None
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.lines: list[bytes] = []
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def _read_line(self, deadline: float) -> bytes | None:
        assert self.proc.stdout is not None
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                raise TimeoutError(f"no answer from the server; read so far: {self.lines}")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(line)
        return line

    def answer(self, id_: int, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            line = self._read_line(deadline)
            if line is None:
                raise AssertionError(f"the server closed stdout; it wrote: {self.lines}")
            message = json.loads(line)  # every line must be JSON-RPC
            if message.get("id") == id_:
                return message

    def close(self, timeout: float = 60) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        deadline = time.monotonic() + timeout
        while self._read_line(deadline) is not None:
            pass
        code = self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        self._err.close()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


def test_stdout_carries_only_json_rpc_and_user_binding(tmp_path: Path) -> None:
    """Bound to --user alice, with only memory and provers, and a library that prints."""
    stderr = tmp_path / "server.stderr"
    args = [sys.executable, "-c", _NOISY_SERVER, "mcp", "--user", "alice"]
    pipe = _Pipe([*args, "--tools", "memory,provers"], _server_env(tmp_path), tmp_path, stderr)
    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        pipe.send(_request(1, "initialize", init))
        assert pipe.answer(1)["result"]["serverInfo"]["name"] == "lemmata"
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        pipe.send(_request(2, "tools/list"))
        names = {t["name"] for t in pipe.answer(2)["result"]["tools"]}
        assert names == {n for n in EXPECTED_TOOLS if n.split("_")[0] in ("memory", "provers")}

        def call(id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            pipe.send(_request(id_, "tools/call", {"name": name, "arguments": arguments}))
            result = pipe.answer(id_)["result"]
            assert result["isError"] is (not result["structuredContent"]["ok"])
            data: dict[str, Any] = result["structuredContent"]
            return data

        # Coq is a child process: the hook prints while the call runs.
        _ok(call(3, "provers_check", GOOD))
        # No namespace needed: the server is bound to alice (loading the embedder logs).
        _ok(call(4, "memory_remember", {"text": "Alice takes the 8:15 train."}))
        mine = call(5, "memory_recall", {"query": "which train"})
        assert any("8:15" in i["text"] for i in mine["payload"]["items"])
        _ok(call(6, "memory_recall", {"namespace": {"user": "alice"}, "query": "train"}))
        other = call(7, "memory_recall", {"namespace": {"user": "bob"}, "query": "train"})
        assert other["status"] == "denied" and "alice" in other["reason"]
        assert call(8, "gui_ground", {"image": "x.png", "instruction": "OK"})["status"] == "invalid"

        assert pipe.close() == 0
    finally:
        pipe.kill()
    assert pipe.lines, "the server wrote nothing"
    for line in pipe.lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    log = stderr.read_text()
    assert "stray print from a library" in log and "stray write to fd 1" in log


def test_cli_refuses_http_without_a_token_and_unknown_capabilities(tmp_path: Path) -> None:
    env = _server_env(tmp_path)
    http = subprocess.run(
        [str(LEMMATA), "mcp", "--transport", "http", "--user", "carol"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert http.returncode == 2 and "LEMMATA_MCP_TOKEN" in http.stderr and not http.stdout

    unknown = subprocess.run(
        [str(LEMMATA), "mcp", "--tools", "memory,telepathy"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert unknown.returncode == 2 and not unknown.stdout
    assert "telepathy" in unknown.stderr and "provers" in unknown.stderr


# -- streamable HTTP with a bearer token ----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = _server_env(tmp_path, LEMMATA_MCP_TOKEN="s3cret-token-for-tests")
    log = (tmp_path / "server.stderr").open("w")
    proc = subprocess.Popen(
        [str(LEMMATA), "mcp", "--transport", "http", "--port", str(port), "--user", "carol"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env=env,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "server.stderr").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_http_needs_the_token_and_memory_uses_its_user(http_server: str) -> None:
    import anyio
    import httpx
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    init = _request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    accept = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": "Basic x"}):
        refused = httpx.post(http_server, json=init, headers={**accept, **headers}, timeout=30)
        assert refused.status_code == 401, (headers, refused.text)

    async def session() -> None:
        headers = {"Authorization": "Bearer s3cret-token-for-tests"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(http_server, http_client=http)) as client,
        ):
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == EXPECTED_TOOLS
            _ok(envelope(await client.call_tool("provers_check", GOOD)))

            text = "Carol's locker code is 4711."
            _ok(envelope(await client.call_tool("memory_remember", {"text": text})))
            mine = envelope(await client.call_tool("memory_recall", {"query": "locker code"}))
            assert any("4711" in i["text"] for i in mine["payload"]["items"])
            theirs = envelope(
                await client.call_tool(
                    "memory_recall", {"namespace": {"user": "dave"}, "query": "locker code"}
                )
            )
            assert theirs["status"] == "denied" and "carol" in theirs["reason"]

    anyio.run(session)
