"""``Memory``'s write path: a segment the model cannot structure, and the check for pending
episodes that runs before every default retrieve."""

from __future__ import annotations

import json

import pytest

from lemmata.llm import ScriptedModel
from lemmata.memory import Memory


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def _knowledge(statement: str) -> str:
    return json.dumps({"facts": [{"statement": statement, "sources": [1], "tags": ["t"]}]})


def test_an_unparseable_reply_costs_its_segment_only_and_is_retried_with_backoff(
    tmp_path, embedder, monkeypatch
):
    import lemmata.memory.core as core

    now = [1_000_000.0]
    monkeypatch.setattr(core, "_clock", lambda: now[0], raising=False)
    broken = [False]

    def script(messages, tools):
        if any("pottery" in str(m.get("content")) for m in messages):
            return "no JSON here" if broken[0] else _knowledge("Bob takes a pottery class.")
        return _knowledge("Alice adopted a cat named Miso.")

    model = ScriptedModel(script, label="extract")
    mem = Memory(tmp_path / "m", user="u", embedder=embedder, model=model)
    mem.add_episode("I adopted a cat named Miso.", speaker="Alice", session="a")
    assert mem.consolidate().facts_added == 1
    broken[0] = True
    mem.add_episode("I started a pottery class.", speaker="Bob", session="b")

    # the garbage reply (and its one retry) costs segment b; retrieval still answers
    top = mem.retrieve("What is Alice's cat called?", k=1).items
    assert [i.text for i in top] == ["Alice adopted a cat named Miso."]
    assert mem.pending() == 1
    calls = len(model.requests)
    assert calls == 3  # a's reply, b's garbage and the retry with the error fed back

    # backing off: neither the next retrieves nor an explicit consolidate call the model
    for _ in range(3):
        assert mem.retrieve("Miso", k=1).items[0].text == "Alice adopted a cat named Miso."
    report = mem.consolidate()
    assert len(model.requests) == calls
    assert report.deferred == 1 and report.failed == 0 and report.episodes == 0

    # due again: it fails again, and the report counts it; the next wait is longer
    now[0] += 31
    report = mem.consolidate()
    assert report.failed == 1 and report.failed_episodes == 1 and report.episodes == 0
    assert "model_output" in report.errors[0]
    calls = len(model.requests)
    now[0] += 31
    assert mem.consolidate().deferred == 1 and len(model.requests) == calls

    # the model answers properly: the segment is structured on a later retrieve
    broken[0] = False
    now[0] += 31
    hits = mem.retrieve("Who takes a pottery class?", k=1).items
    assert hits[0].text == "Bob takes a pottery class."
    assert mem.pending() == 0
    report = mem.consolidate()
    assert report.deferred == 0 and report.failed == 0


def test_the_pending_check_before_a_retrieve_is_one_indexed_query(tmp_path, embedder, monkeypatch):
    import lemmata.memory.core as core

    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    mem.add_facts([f"Room {n} has a green door." for n in range(20)])
    mem.add_episodes([{"content": f"Hello {n}.", "speaker": "Ann"} for n in range(5)])
    mem.consolidate()
    monkeypatch.setattr(core, "retrieve", lambda *a, **k: None)  # the check alone
    db = mem.log._db
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    try:
        mem.retrieve("green door")
    finally:
        db.set_trace_callback(None)
    checks = [s for s in seen if "indexed = 0" not in s]  # sync_index's look for unindexed
    assert len(checks) == 1, checks
    assert "FROM episodes" in checks[0]
    plan = " ".join(str(r[-1]) for r in db.execute("EXPLAIN QUERY PLAN " + checks[0]).fetchall())
    assert "USING INDEX episodes_pending" in plan or "USING COVERING INDEX episodes_pending" in plan


class Hashing:
    """A tiny deterministic embedder, for processes that should not load a model."""

    name = "hashing-test"
    dim = 16

    def embed(self, texts):
        import hashlib

        import numpy as np

        out = np.zeros((len(texts), 16), np.float32)
        for i, t in enumerate(texts):
            out[i] = np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8) + 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class NoIndex:
    """A vector index that keeps nothing (the test is about the log)."""

    name = "none"

    def add(self, space, ids, vectors, metadatas):
        pass

    def query(self, space, vectors, k, where=None):
        return [[] for _ in vectors]

    def delete(self, space, ids):
        pass

    def count(self, space):
        return 0

    def drop(self, space):
        pass


_WORKER = """
import json, sys, time
sys.path.insert(0, sys.argv[2])
from test_core import Hashing, NoIndex
from lemmata.memory import Memory
from lemmata.memory.extract import OfflineExtractor

slow = OfflineExtractor()
extract = slow.extract
slow.extract = lambda segment: (time.sleep(1.0), extract(segment))[1]
mem = Memory(sys.argv[1], user="u", embedder=Hashing(), index=NoIndex(), extractor=slow)
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps(mem.consolidate().episodes), flush=True)
"""


def test_two_processes_never_structure_the_same_episodes_twice(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "m"
    mem = Memory(path, user="u", embedder=Hashing(), index=NoIndex())
    mem.add_episodes(
        [{"content": f"Room {n} has a green door.", "speaker": "Ann"} for n in range(3)]
    )
    here = str(Path(__file__).parent)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), here],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for w in workers:  # both started and imported: let them go at once
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    for w in workers:
        assert w.stdin is not None
        w.stdin.write("\n")
        w.stdin.flush()
    outs = [w.communicate(timeout=120)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers)
    assert sorted(json.loads(o) for o in outs) == [0, 3]
    assert mem.pending() == 0
    assert len([a for a in mem.audit(200) if a.op == "consolidate"]) == 1


def _open_under(folder) -> list[str]:
    import os

    prefix = str(folder.resolve())
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(prefix):
            held.append(target)
    return held


def test_a_closed_memory_holds_no_file_of_its_folder_open(tmp_path, embedder):
    """The vector index keeps its files open until every memory on the folder is closed, and
    then releases them (it used to hold them for the life of the process)."""
    first = Memory(tmp_path / "m", user="u", embedder=embedder)
    first.add_episode("Bob plays the violin in a quartet.", speaker="Bob")
    assert first.retrieve("What does Bob play?").items
    second = Memory(tmp_path / "m", user="u", embedder=embedder)
    assert _open_under(tmp_path / "m")
    first.close()
    found = second.retrieve("What does Bob play?").items  # the other memory still works
    assert found and "violin" in found[0].text
    second.close()
    assert _open_under(tmp_path / "m") == []
