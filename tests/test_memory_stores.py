"""One conformance suite for the memory's vector stores: chromadb embedded, and a real Chroma
server (``chroma run``) started on 127.0.0.1 by this module. Plus durability: a real child
process killed mid-ingestion loses nothing that ``add_episode`` acknowledged."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from lemmata.errors import ConfigError
from lemmata.memory import ChromaIndex, Memory, StoreError


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    exe = Path(sys.executable).with_name("chroma")
    if not exe.exists():
        pytest.fail("the chroma CLI is missing from the environment (it comes with chromadb)")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [str(exe), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"chroma run did not start: {err[-2000:]}")
            time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(params=["embedded", "http"])
def index_spec(request):
    return "chroma" if request.param == "embedded" else request.getfixturevalue("chroma_server")


@pytest.fixture
def memory(tmp_path, embedder, index_spec, request):
    # each test gets its own user so that tests sharing the server never see each other
    user = f"u-{request.node.name}"[:60]
    mem = Memory(tmp_path / "m", user=user, embedder=embedder, index=index_spec)
    yield mem
    mem.index.drop(mem._space)
    mem.close()


FACTS = [
    "Priya keeps bees on the roof of her apartment.",
    "Priya's sister Anjali teaches chemistry in Pune.",
    "The community garden meets every Sunday at 8am.",
]


def test_index_holds_exactly_the_current_items(memory):
    ids = memory.add_facts(FACTS)
    assert memory.index.count(memory._space) == 3
    top = memory.retrieve("Who keeps bees?", k=1).items[0]
    assert top.id == ids[0]
    memory.forget([ids[0]])
    assert memory.index.count(memory._space) == 2
    assert all(i.id != ids[0] for i in memory.retrieve("Who keeps bees?", k=3).items)


def test_namespaces_are_separate_in_the_index(memory):
    memory.add_facts(FACTS)
    other = memory.scoped(user=memory.namespace.user + "-other")
    try:
        assert other.index.count(other._space) == 0
        assert other.retrieve("bees on the roof").items == ()
    finally:
        other.index.drop(other._space)


def test_reindex_rebuilds_the_same_answers(memory):
    memory.add_facts(FACTS)
    before = [i.id for i in memory.retrieve("chemistry teacher in Pune", k=3).items]
    memory.index.drop(memory._space)
    assert memory.index.count(memory._space) == 0
    assert memory.reindex() == 3
    assert memory.index.count(memory._space) == 3
    assert [i.id for i in memory.retrieve("chemistry teacher in Pune", k=3).items] == before
    assert memory.audit()[-1].op == "reindex"


def test_missing_vectors_are_filled_in_from_the_log(memory):
    # a crash between the SQLite commit and the index write leaves items unindexed
    ids = memory.add_facts(FACTS)
    memory.index.delete(memory._space, ids[1:])
    memory.log.mark_all_unindexed(memory.namespace)
    assert memory.sync_index() == 3
    assert memory.index.count(memory._space) == 3


def test_vector_index_protocol(memory):
    index, space = memory.index, memory._space
    vecs = np.eye(4, memory.embedder.dim, dtype=np.float32)
    index.add(space, ["a", "b", "c", "d"], vecs, [{"session": s} for s in "xxyy"])
    hits = index.query(space, vecs[:1], k=2)[0]
    assert hits[0][0] == "a" and hits[0][1] == pytest.approx(0.0, abs=1e-5)
    assert hits[1][1] == pytest.approx(1.0, abs=1e-5)  # orthogonal: cosine distance 1
    only_y = index.query(space, vecs[:1], k=4, where={"session": "y"})[0]
    assert {i for i, _ in only_y} == {"c", "d"}
    index.delete(space, ["c", "missing"])
    assert index.count(space) == 3
    index.drop(space)
    assert index.count(space) == 0
    assert index.query(space, vecs[:1], k=2) == [[]]


def test_an_index_built_by_another_embedder_is_refused(tmp_path, chroma_server, embedder):
    mem = Memory(tmp_path / "m", user="refuse", embedder=embedder, index=chroma_server)
    mem.add_facts(FACTS[:1])
    other = ChromaIndex.http(
        "127.0.0.1", int(chroma_server.rsplit(":", 1)[1]), embedder="other-model", dim=384
    )
    try:
        with pytest.raises(ConfigError, match="built with the embedder"):
            other.count(mem._space)
    finally:
        mem.index.drop(mem._space)


# -- durability -------------------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys
    from lemmata.memory import Memory

    mem = Memory(sys.argv[1], user="crash")
    for i in range(100000):
        eid = mem.add_episode(f"turn {i}: the parcel number is {i * 7919}", speaker="Ann")
        print(eid, flush=True)
    """
)


def test_killed_writer_loses_no_acknowledged_episode(tmp_path):
    path = tmp_path / "m"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acked: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        acked.append(line.strip())
        if len(acked) >= 300:
            break
    proc.send_signal(signal.SIGKILL)  # no clean-up of any kind
    proc.wait(10)
    assert len(acked) >= 300, proc.stderr.read() if proc.stderr else ""
    mem = Memory(path, user="crash")
    stored = {e.id for e in mem.episodes()}
    assert set(acked) <= stored
    # and the file is whole: it reads, and takes new writes
    assert mem.log.integrity() == "ok"
    mem.add_episode("after the crash", speaker="Ann")
    assert len(mem.episodes()) == len(stored) + 1


def test_a_damaged_file_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "m"
    path.mkdir()
    (path / "memory.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable memory file.*move it aside"):
        Memory(path, user="u")
    assert (path / "memory.sqlite3").read_bytes().startswith(b"this is not")
