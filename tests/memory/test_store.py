"""PlugMemStore against LangGraph's InMemoryStore: one conformance suite run on both (real
SQLite, the bundled MiniLM as both stores' embedder), then what only the durable store does:
reopening, user isolation, refusing bad input, TTL, and a compiled graph using it."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from lemmata.errors import LemmataError, UsageError
from lemmata.memory import Memory, NamespaceOutOfScope, PlugMemStore, StoreInputError


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


class Counting:
    """The same embedder, counting the texts it is asked to embed (under another name when
    ``name`` is given, as a changed model would be)."""

    def __init__(self, inner: Any, name: str | None = None) -> None:
        self.inner = inner
        self.name = name or inner.name
        self.texts = 0

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: list[str]) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(params=["InMemoryStore", "PlugMemStore"])
def store(request, tmp_path, embedder):
    if request.param == "InMemoryStore":
        yield InMemoryStore(
            index={
                "dims": embedder.dim,
                "embed": lambda texts: embedder.embed(list(texts)).tolist(),
                "fields": ["$"],
            }
        )
    else:
        s = PlugMemStore(Memory(tmp_path / "m", embedder=embedder))
        yield s
        s.close()


def _keys(items) -> list[str]:
    return [i.key for i in items]


# -- conformance: both stores ------------------------------------------------------------


def test_put_get_overwrite_delete(store: BaseStore) -> None:
    ns = ("alice", "assistant", "s1")
    assert store.get(ns, "diet") is None
    store.put(ns, "diet", {"text": "vegetarian", "since": 2019})
    first = store.get(ns, "diet")
    assert first is not None
    assert (first.namespace, first.key, first.value) == (
        ns,
        "diet",
        {"text": "vegetarian", "since": 2019},
    )
    assert isinstance(first.created_at, datetime) and first.created_at.tzinfo is not None
    assert first.created_at <= first.updated_at

    time.sleep(0.01)
    store.put(ns, "diet", {"text": "vegan"})
    second = store.get(ns, "diet")
    assert second is not None and second.value == {"text": "vegan"}
    assert second.updated_at > first.updated_at

    store.delete(ns, "diet")
    assert store.get(ns, "diet") is None
    assert store.search(ns) == []


def test_search_by_namespace_prefix_matches_whole_labels(store: BaseStore) -> None:
    store.put(("alice",), "root", {"n": 0})
    store.put(("alice", "a1", "s1"), "k1", {"n": 1})
    store.put(("alice", "a1", "s2", "notes"), "k2", {"n": 2})
    store.put(("alice", "a10"), "k3", {"n": 3})
    store.put(("bob", "a1"), "k4", {"n": 4})
    store.put(("alice", "a1", "s10"), "k5", {"n": 5})

    assert sorted(_keys(store.search(("alice", "a1")))) == ["k1", "k2", "k5"]
    assert _keys(store.search(("alice", "a1", "s1"))) == ["k1"]
    assert sorted(_keys(store.search(("alice",)))) == ["k1", "k2", "k3", "k5", "root"]
    assert _keys(store.search(("alice", "a1", "s2", "notes"))) == ["k2"]
    assert sorted(_keys(store.search(()))) == ["k1", "k2", "k3", "k4", "k5", "root"]
    hit = store.search(("alice", "a1", "s2"))[0]
    assert hit.namespace == ("alice", "a1", "s2", "notes") and hit.score is None


def test_filter_by_equality_nested_values_and_operators(store: BaseStore) -> None:
    ns = ("alice", "docs")
    store.put(ns, "a", {"kind": "note", "stars": 1, "meta": {"lang": "en"}, "tags": ["x", "y"]})
    store.put(ns, "b", {"kind": "note", "stars": 4, "meta": {"lang": "fr"}, "tags": ["x"]})
    store.put(ns, "c", {"kind": "task", "stars": 5, "meta": {"lang": "en"}, "tags": []})

    def keys(flt: dict) -> list[str]:
        return sorted(_keys(store.search(ns, filter=flt)))

    assert keys({"kind": "note"}) == ["a", "b"]
    assert keys({"kind": "note", "stars": 4}) == ["b"]
    assert keys({"meta": {"lang": "en"}}) == ["a", "c"]
    assert keys({"tags": ["x", "y"]}) == ["a"]
    assert keys({"stars": {"$gt": 1}}) == ["b", "c"]
    assert keys({"stars": {"$gte": 4, "$lt": 5}}) == ["b"]
    assert keys({"stars": {"$lte": 1}}) == ["a"]
    assert keys({"kind": {"$ne": "note"}}) == ["c"]
    assert keys({"kind": {"$eq": "task"}}) == ["c"]
    assert keys({"kind": "nothing"}) == []


def test_limit_and_offset_page_in_insertion_order(store: BaseStore) -> None:
    ns = ("alice", "log")
    for i in range(5):
        store.put(ns, f"k{i}", {"i": i})
    store.put(ns, "k1", {"i": 10})  # an overwrite keeps its place
    assert _keys(store.search(ns, limit=2)) == ["k0", "k1"]
    assert _keys(store.search(ns, limit=2, offset=2)) == ["k2", "k3"]
    assert _keys(store.search(ns, limit=10, offset=4)) == ["k4"]


def test_query_ranks_the_relevant_document_first(store: BaseStore) -> None:
    ns = ("alice", "docs")
    store.put(ns, "pasta", {"text": "Boil the spaghetti for nine minutes, then add tomato sauce."})
    store.put(ns, "cat", {"text": "My cat Miso sleeps on the windowsill all afternoon."})
    store.put(ns, "tax", {"text": "The quarterly tax return is due at the end of April."})
    store.put(ns, "hidden", {"text": "How to cook spaghetti"}, index=False)
    store.put(ns, "titled", {"title": "feline care", "body": "zzz"}, index=["title"])

    hits = store.search(ns, query="how long do I cook noodles?", limit=3)
    assert hits[0].key == "pasta"
    assert all(h.score is not None for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert store.search(ns, query="looking after a kitten", limit=2)[0].key in {"cat", "titled"}
    assert store.search(ns, query="my pet", filter={"title": "feline care"})[0].key == "titled"

    everything = store.search(ns, query="spaghetti", limit=10)
    assert everything[-1].key == "hidden" and everything[-1].score is None
    assert len(everything) == 5
    assert _keys(store.search(ns, query="spaghetti", limit=2, offset=1)) == _keys(everything[1:3])


def test_list_namespaces_with_prefix_suffix_depth_and_paging(store: BaseStore) -> None:
    for ns in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("x", "y"),
    ]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("*", "i")) == [("a", "b", "d", "i")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("x",)]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
    assert store.batch(
        [ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("x",)),))]
    ) == [[("x", "y")]]


def test_abatch_and_async_methods(store: BaseStore) -> None:
    ns = ("alice", "async")

    async def run() -> list[Any]:
        await store.aput(ns, "a", {"text": "apples are red"})
        results = await store.abatch(
            [
                PutOp(ns, "b", {"text": "bananas are yellow"}),
                GetOp(ns, "a"),
                GetOp(ns, "b"),  # reads see the store as it was before the batch
                SearchOp(ns, query="a yellow fruit", limit=1),
            ]
        )
        return [*results, await store.aget(ns, "b"), await store.asearch(ns, query="red fruit")]

    put, got_a, got_b, searched, after, ranked = asyncio.run(run())
    assert put is None and got_a.value == {"text": "apples are red"} and got_b is None
    assert _keys(searched) == ["a"]
    assert after.value == {"text": "bananas are yellow"}
    assert ranked[0].key == "a"


@pytest.mark.parametrize(
    "namespace", [(), ("a.b",), ("alice", ""), ("langgraph", "x"), ("alice", 3)]
)
def test_bad_namespaces_are_refused(store: BaseStore, namespace: tuple) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"v": 1})
    assert store.search(()) == []


# -- PlugMemStore only -------------------------------------------------------------------


def test_values_vectors_and_created_at_survive_reopening(tmp_path: Path, embedder) -> None:
    ns = ("alice", "assistant")
    with PlugMemStore(tmp_path / "m", embedder=embedder) as store:
        store.put(ns, "pasta", {"text": "Boil the spaghetti for nine minutes."})
        store.put(ns, "cat", {"text": "My cat Miso sleeps all afternoon."})
        first = store.get(ns, "pasta")
        time.sleep(0.01)
        store.put(ns, "pasta", {"text": "Boil the spaghetti for ten minutes."})

    counting = Counting(embedder)
    with PlugMemStore(tmp_path / "m", embedder=counting) as store:
        again = store.get(ns, "pasta")
        assert again is not None and first is not None
        assert again.value == {"text": "Boil the spaghetti for ten minutes."}
        assert again.created_at == first.created_at and again.updated_at > first.updated_at
        assert store.search(ns, query="cooking noodles")[0].key == "pasta"
        assert counting.texts == 1  # the query; the documents' vectors were stored


def test_vectors_of_another_embedder_are_recomputed_once(tmp_path: Path, embedder) -> None:
    ns = ("alice", "assistant")
    with PlugMemStore(tmp_path / "m", embedder=embedder) as store:
        store.put(ns, "pasta", {"text": "Boil the spaghetti."})
        store.put(ns, "cat", {"text": "My cat sleeps."})
    other = Counting(embedder, name="another-model")
    with PlugMemStore(tmp_path / "m", embedder=other) as store:
        assert store.search(ns, query="noodles")[0].key == "pasta"
        assert other.texts == 3
        store.search(ns, query="noodles")
        assert other.texts == 4


def test_a_memory_file_from_before_the_store_is_upgraded(tmp_path: Path, embedder) -> None:
    mem = Memory(tmp_path / "m", user="alice", embedder=embedder)
    mem.add_episode("I adopted a cat named Miso.", speaker="Alice")
    mem.close()
    with sqlite3.connect(tmp_path / "m" / "memory.sqlite3") as db:
        db.execute("DROP TABLE documents")
    with PlugMemStore(tmp_path / "m", embedder=embedder) as store:
        store.put(("alice",), "k", {"v": 1})
        assert store.get(("alice",), "k").value == {"v": 1}
        assert len(store.memory.scoped(user="alice").episodes()) == 1


def test_a_pinned_store_cannot_reach_another_user(tmp_path: Path, embedder) -> None:
    mem = Memory(tmp_path / "m", embedder=embedder)
    admin = PlugMemStore(mem)
    admin.put(("bob", "bot"), "secret", {"text": "bob's secret"})
    admin.put(("alice", "bot"), "secret", {"text": "alice's note"})
    alice = PlugMemStore(mem, user="alice")

    assert alice.get(("alice", "bot"), "secret").value == {"text": "alice's note"}
    assert admin.get(("bob", "bot"), "secret").value == {"text": "bob's secret"}
    for attempt in [
        lambda: alice.get(("bob", "bot"), "secret"),
        lambda: alice.put(("bob", "bot"), "secret", {"text": "overwritten"}),
        lambda: alice.delete(("bob", "bot"), "secret"),
        lambda: alice.search(("bob",)),
        lambda: alice.list_namespaces(prefix=("bob",)),
    ]:
        with pytest.raises(NamespaceOutOfScope, match="pinned to user 'alice'"):
            attempt()
    # an out-of-scope op runs nothing of its batch
    with pytest.raises(NamespaceOutOfScope) as info:
        alice.batch(
            [PutOp(("alice", "bot"), "new", {"v": 1}), PutOp(("bob", "bot"), "new", {"v": 1})]
        )
    assert info.value.code == "namespace_out_of_scope" and isinstance(info.value, UsageError)
    assert alice.get(("alice", "bot"), "new") is None
    assert admin.get(("bob", "bot"), "secret").value == {"text": "bob's secret"}

    # without a prefix, a pinned store sees its own user only
    assert [i.namespace for i in alice.search((), query="secret")] == [("alice", "bot")]
    assert alice.list_namespaces() == [("alice", "bot")]
    assert alice.list_namespaces(prefix=("*", "bot")) == [("alice", "bot")]
    assert admin.list_namespaces(prefix=("*", "bot")) == [("alice", "bot"), ("bob", "bot")]


def test_bad_input_is_refused_with_what_to_fix_and_nothing_written(tmp_path, embedder) -> None:
    store = PlugMemStore(Memory(tmp_path / "m", embedder=embedder))
    ns = ("alice", "bot")
    cases: list[tuple[list, str]] = [
        ([PutOp(ns, "k", "just text")], "give a dict"),  # type: ignore[arg-type]
        ([PutOp(ns, 7, {"v": 1})], "keys are strings"),  # type: ignore[arg-type]
        ([PutOp(ns, "k", {"v": {1, 2}})], "not JSON"),
        ([PutOp(ns, "k", {1: "v"})], "not a str"),
        ([PutOp(ns, "k", {"v": 1}, index="text")], "list of field paths"),  # type: ignore[arg-type]
        ([PutOp(("a.b",), "k", {"v": 1})], "holds '.'"),
        ([PutOp((), "k", {"v": 1})], "at least one label"),
        ([PutOp(("u" * 201,), "k", {"v": 1})], "at most 200"),
        ([SearchOp(ns, filter={"v": {"$regex": "x"}})], "not supported"),
    ]
    for ops, message in cases:
        with pytest.raises(LemmataError, match=message):
            store.batch([PutOp(ns, "good", {"v": 1}), *ops])
    assert store.get(ns, "good") is None
    assert store.list_namespaces() == []
    with pytest.raises(StoreInputError, match="index\\['embed'\\]"):
        PlugMemStore(store.memory, index={"dims": 384, "embed": lambda t: t})


class _Clock:
    """The store's wall clock, moved by hand: a TTL test then does not depend on how long a
    loaded machine takes between two calls."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now


def test_ttl_expires_refreshes_and_sweeps(
    tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lemmata.memory.store as store_module

    clock = _Clock()
    monkeypatch.setattr(store_module, "time", clock)
    store = PlugMemStore(Memory(tmp_path / "m", embedder=embedder))
    ns = ("alice", "bot")
    store.put(ns, "brief", {"v": 1}, ttl=1 / 60)  # one second
    store.put(ns, "kept", {"v": 2})
    clock.now += 0.9
    assert store.get(ns, "brief").value == {"v": 1}
    clock.now += 1.1  # a second after that read
    assert store.get(ns, "brief") is None
    assert _keys(store.search(ns)) == ["kept"]
    assert store.sweep_ttl() == 1
    store.put(ns, "brief", {"v": 3}, ttl=1 / 60)
    clock.now += 0.6
    assert store.get(ns, "brief") is not None  # a read restarts the timer...
    clock.now += 0.6
    assert store.get(ns, "brief").value == {"v": 3}  # ...so it outlives its first second
    clock.now += 1.1
    assert store.get(ns, "brief") is None


def test_a_compiled_graph_reads_and_writes_through_the_store(tmp_path: Path, embedder) -> None:
    from langgraph.config import get_store
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        user: str
        text: str
        recalled: list[str]

    def remember(state: State, *, store: BaseStore) -> dict:
        store.put((state["user"], "assistant", "notes"), "latest", {"text": state["text"]})
        return {}

    def recall(state: State) -> dict:
        hits = get_store().search((state["user"],), query="what pet do I have?")
        return {"recalled": [h.value["text"] for h in hits]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    store = PlugMemStore(tmp_path / "m", embedder=embedder, user="alice")
    app = graph.compile(store=store)

    out = app.invoke({"user": "alice", "text": "I have a cat named Miso", "recalled": []})
    assert out["recalled"] == ["I have a cat named Miso"]
    with pytest.raises(NamespaceOutOfScope):
        app.invoke({"user": "bob", "text": "hello", "recalled": []})
    store.close()
    with PlugMemStore(tmp_path / "m", embedder=embedder) as reopened:
        item = reopened.get(("alice", "assistant", "notes"), "latest")
        assert item is not None and item.value == {"text": "I have a cat named Miso"}
        assert reopened.list_namespaces() == [("alice", "assistant", "notes")]
