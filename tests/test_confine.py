"""lemmata.confine: a confined program writes only its scratch folder, reads no secrets, reaches
no network, and keeps to its limits; the verifiers and the research sandbox use it.

These run bubblewrap for real; where it cannot work here the tests say why and skip (the
project lists it in system-packages.txt, so CI has it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lemmata.confine import Confinement, exit_status
from lemmata.errors import ConfinementUnavailable

WHY_NOT = Confinement().unavailable()
needs_bwrap = pytest.mark.skipif(WHY_NOT is not None, reason=f"no confinement here: {WHY_NOT}")
REPLAY = Path(__file__).with_name("lean_replay.py")


def run_confined(
    code: str, scratch: Path, conf: Confinement | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    conf = conf or Confinement(memory_mb=1024, cpu_s=20)
    argv = conf.command([sys.executable, "-I", "-c", code], scratch, **kw)
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=60, env=conf.environment(scratch)
    )


@needs_bwrap
def test_a_confined_process_writes_only_its_scratch_folder(tmp_path: Path) -> None:
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    scratch.mkdir()
    outside.mkdir()
    venv_probe = Path(sys.prefix) / "lemmata-confine-probe"  # visible, read-only
    code = f"""
import json, os
tried = {{}}
for path in ["inside.txt", {str(outside / "x.txt")!r}, {str(venv_probe)!r}, "/tmp/host.txt",
             "/usr/lemmata-probe"]:
    try:
        with open(path, "w") as fh:
            fh.write("x")
        tried[path] = "written"
    except OSError as exc:
        tried[path] = type(exc).__name__
print(json.dumps(tried))
"""
    try:
        done = run_confined(code, scratch)
        tried = json.loads(done.stdout)
        assert tried["inside.txt"] == "written" and (scratch / "inside.txt").read_text() == "x"
        assert not (outside / "x.txt").exists() and tried[str(outside / "x.txt")] != "written"
        assert not venv_probe.exists() and tried[str(venv_probe)] != "written"
        assert not Path("/usr/lemmata-probe").exists()
        # /tmp is the confinement's own: a write there never reaches the host's /tmp.
        assert not Path("/tmp/host.txt").exists()
    finally:
        venv_probe.unlink(missing_ok=True)


@needs_bwrap
def test_a_confined_process_reads_no_secrets(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret")
    data = tmp_path / "data.txt"
    data.write_text("the data it was given")
    (tmp_path / "scratch").mkdir()
    code = f"""
import json
out = {{}}
for path in ["/etc/shadow", "/etc/gshadow", {str(secret)!r}, {str(data)!r}, "/root/.bashrc"]:
    try:
        out[path] = open(path).read()
    except OSError as exc:
        out[path] = "refused: " + type(exc).__name__
print(json.dumps(out))
"""
    done = run_confined(code, tmp_path / "scratch", read_only=[data])
    seen = json.loads(done.stdout)
    assert "root:" not in seen["/etc/shadow"] and "root:" not in seen["/etc/gshadow"]
    assert seen[str(secret)].startswith("refused")
    assert seen[str(data)] == "the data it was given"
    assert seen["/root/.bashrc"].startswith("refused")
    assert "OPENAI_API_KEY" not in Confinement().environment(tmp_path)  # no secrets passed


@needs_bwrap
def test_a_confined_process_cannot_reach_the_network(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    code = f"""
import socket
for target in [("127.0.0.1", {port}), ("1.1.1.1", 53)]:
    s = socket.socket()
    s.settimeout(3)
    print(target[0], s.connect_ex(target))
"""
    (tmp_path / "s").mkdir()
    try:
        # The control: with the network kept, the same program reaches the host's socket.
        allowed = run_confined(
            code.replace("1.1.1.1", "127.0.0.1"), tmp_path / "s", Confinement(network=True)
        )
        assert allowed.stdout.split("\n")[0] == "127.0.0.1 0", allowed
        server.accept()[0].close()
        done = run_confined(code, tmp_path / "s")
        codes = dict(line.split() for line in done.stdout.split("\n") if line)
        assert codes["127.0.0.1"] != "0" and codes["1.1.1.1"] != "0", done.stdout
        with pytest.raises(OSError):  # nothing reached the host's listening socket
            server.accept()
    finally:
        server.close()


@needs_bwrap
def test_memory_and_cpu_limits_hold(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    big = run_confined("x = bytearray(2 * 1024 ** 3)", tmp_path / "s", Confinement(memory_mb=512))
    assert big.returncode != 0 and "MemoryError" in big.stderr
    spin = run_confined("while True: pass", tmp_path / "s", Confinement(cpu_s=1))
    assert exit_status(spin.returncode) in (-24, -9)  # SIGXCPU, then SIGKILL at the hard limit


def test_without_bubblewrap_it_says_how_to_get_it() -> None:
    missing = Confinement(bwrap="no-such-bwrap")
    assert "apt-get install bubblewrap" in (missing.unavailable() or "")
    with pytest.raises(ConfinementUnavailable, match="apt-get install bubblewrap") as info:
        missing.require()
    assert info.value.code == "confinement_unavailable"
    with pytest.raises(ValueError, match="memory_mb"):
        Confinement(memory_mb=0)
    assert exit_status(128 + 9) == -9 and exit_status(1) == 1


@needs_bwrap
def test_the_research_sandbox_cannot_read_outside_its_data(tmp_path: Path) -> None:
    from lemmata.environments.sandbox import run_python

    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret")
    for path in ("/etc/shadow", str(secret)):
        r = run_python(f"print(open({path!r}).read())")
        assert (
            r.confined
            and r.status == "error"
            and "PermissionError" in r.stderr
            or ("FileNotFoundError" in r.stderr)
        ), r
        assert "root:" not in r.stdout and "secret" not in r.stdout
    ok = run_python("import numpy as np; result(int(np.arange(4).sum()))")
    assert ok.confined and ok.value == 6


def _namespaces(pid: int) -> tuple[str, str]:
    return os.readlink(f"/proc/{pid}/ns/mnt"), os.readlink(f"/proc/{pid}/ns/net")


@needs_bwrap
def test_an_untrusted_coqtop_runs_confined(coqtop_path: str) -> None:
    from lemmata.provers import CoqTop

    with CoqTop(coqtop_path, untrusted=True, timeout_s=30) as coq:
        assert coq.check("From Coq Require Import Lia.", "Theorem t : 2 + 2 = 4.", "lia.").ok
        pid, proc = coq.process.pid, coq.process._proc
        assert pid is not None and proc is not None and pid != proc.pid
        assert _namespaces(pid) != _namespaces(os.getpid())


@needs_bwrap
def test_an_untrusted_lean_repl_runs_confined(tmp_path: Path) -> None:
    from lemmata.provers import LeanRepl

    script = tmp_path / "t.expected.out"
    info = {"severity": "info", "pos": {"line": 3, "column": 0}}
    script.write_text(
        json.dumps({"messages": [{**info, "data": "'t' does not depend on any axioms"}], "env": 0})
        + "\n"
    )
    repl = LeanRepl([sys.executable, str(REPLAY), str(script)], untrusted=True)
    assert repl.check("", "theorem t : True", "by trivial").ok
    pid = repl.process.pid
    assert pid is not None and _namespaces(pid) != _namespaces(os.getpid())
    repl.close()


@needs_bwrap
def test_make_verifier_confines_when_the_settings_say_input_is_untrusted(
    coqtop_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lemmata.provers import make_verifier
    from lemmata.settings import Settings

    monkeypatch.setenv("LEMMATA_COQTOP", coqtop_path)
    untrusted = make_verifier("coq", Settings.load(config_file=None, untrusted_input=True))
    trusted = make_verifier("coq", Settings.load(config_file=None))
    try:
        assert untrusted.process.confinement is not None  # type: ignore[attr-defined]
        assert trusted.process.confinement is None  # type: ignore[attr-defined]
        assert untrusted.check("", "Theorem t : True.", "exact I.").ok
    finally:
        untrusted.close()
        trusted.close()


def test_input_from_others_is_untrusted_unless_the_settings_decide() -> None:
    from lemmata.settings import Settings

    unset = Settings.load(config_file=None)
    assert unset.untrusted_input is None
    assert unset.for_input_from_others().untrusted_input is True
    for decided in (True, False):
        chosen = Settings.load(config_file=None, untrusted_input=decided)
        assert chosen.for_input_from_others().untrusted_input is decided


@needs_bwrap
def test_the_agent_checks_proofs_confined_by_default(
    coqtop_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lemmata import Agent
    from lemmata.provers.operations import _verifier
    from lemmata.settings import Settings

    monkeypatch.setenv("LEMMATA_COQTOP", coqtop_path)
    monkeypatch.setenv("LEMMATA_DATA_DIR", str(tmp_path / "data"))
    for decided, confined in ((None, True), (False, False)):
        settings = Settings.load(config_file=None, untrusted_input=decided)
        with Agent(settings=settings, checkpoint=tmp_path / f"{decided}.sqlite") as agent:
            verifier, _ = _verifier(agent.context, "coq")
            try:
                assert (verifier.process.confinement is not None) is confined  # type: ignore[attr-defined]
                assert verifier.check("", "Theorem t : True.", "exact I.").ok
            finally:
                verifier.close()


@needs_bwrap
@pytest.mark.parametrize("start", ["popen", "subprocess"])
def test_a_confined_program_outlives_the_thread_that_started_it(start: str, tmp_path: Path) -> None:
    """Verifier sessions are started in one request's thread and used by the next: the
    sandbox must not die with that thread (``--die-with-parent`` counts threads)."""
    import threading
    import time

    from lemmata.confine import popen

    conf = Confinement()
    argv = conf.command(["/bin/sleep", "30"], tmp_path)
    started: list[subprocess.Popen[bytes]] = []

    def request() -> None:
        launch = popen if start == "popen" else subprocess.Popen
        started.append(launch(argv, env=conf.environment(tmp_path), start_new_session=True))
        time.sleep(0.5)  # the request's work: the sandbox is set up meanwhile

    worker = threading.Thread(target=request)
    worker.start()
    worker.join()
    time.sleep(0.5)
    proc = started[0]
    try:
        alive = proc.poll() is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the orphaned sandbox too
        proc.wait()
    # Started from the request's own thread, the sandbox dies with it (why popen exists).
    assert alive is (start == "popen")
