"""The memory's interfaces as users touch them: ``lemmata memory ...``, the shell commands, and
the LangGraph tools, nodes and chat graph (real SQLite, real chromadb, the bundled MiniLM)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lemmata.memory import Memory

EPISODES = [
    {
        "content": "I adopted a cat named Miso yesterday.",
        "speaker": "Alice",
        "timestamp": "2024-05-02T10:00",
        "session": "s1",
        "id": "e1",
    },
    {
        "content": "I moved to Lisbon last month for a job at a bakery.",
        "speaker": "Alice",
        "timestamp": "2024-05-02T10:01",
        "session": "s1",
        "id": "e2",
    },
    {
        "content": "My brother Tom plays the cello in an orchestra.",
        "speaker": "Alice",
        "timestamp": "2024-05-03T09:00",
        "session": "s2",
        "id": "e3",
    },
]


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _locomo(path: Path) -> Path:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:1",
                    "text": "I went to a LGBTQ support group yesterday.",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:2",
                    "text": "I painted a sunrise over the lake last week.",
                },
            ],
        },
        "qa": [
            {
                "question": "What did Melanie paint?",
                "answer": "a sunrise",
                "evidence": ["D1:2"],
                "category": 1,
            }
        ],
    }
    path.write_text(json.dumps(sample), encoding="utf-8")
    return path


# -- the command line -----------------------------------------------------------------------


def test_cli_ingest_query_inspect_reindex(run_cli, tmp_path):
    mem_dir = tmp_path / "mem"
    file = _jsonl(tmp_path / "eps.jsonl", EPISODES)
    r = run_cli("memory", "ingest", str(file), "--path", str(mem_dir), "--user", "alice", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["namespaces"][0]["episodes"] == 3 and out["namespaces"][0]["facts"] >= 3

    r = run_cli(
        "memory",
        "query",
        "What instrument does Tom play?",
        "--path",
        str(mem_dir),
        "--user",
        "alice",
        "--k",
        "2",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)["items"][0]
    assert "cello" in top["text"] and top["provenance"] == ["e3"]

    # another user sees nothing of alice's
    r = run_cli("memory", "query", "cello", "--path", str(mem_dir), "--user", "bob", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["items"] == []

    r = run_cli("memory", "inspect", "--path", str(mem_dir), "--user", "alice", "--json")
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen["stats"]["episodes"] == 3 and seen["stats"]["pending_episodes"] == 0
    assert {s for node in seen["graph"] for s in node["sources"]} == {"e1", "e2", "e3"}
    assert "consolidate" in [a["op"] for a in seen["audit"]]

    # the vector index is derived: delete it, rebuild it from the log, and search again
    shutil.rmtree(mem_dir / "chroma")
    r = run_cli("memory", "reindex", "--path", str(mem_dir), "--user", "alice", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["indexed"] == out["namespaces"][0]["facts"]
    r = run_cli(
        "memory",
        "query",
        "Which city did Alice move to?",
        "--path",
        str(mem_dir),
        "--user",
        "alice",
        "--k",
        "1",
    )
    assert r.returncode == 0 and "Lisbon" in r.stdout and "e2" in r.stdout


def test_cli_ingest_locomo_goes_to_the_sample_user(run_cli, tmp_path):
    mem_dir = tmp_path / "mem"
    r = run_cli(
        "memory",
        "ingest",
        str(_locomo(tmp_path / "c.json")),
        "--format",
        "locomo",
        "--path",
        str(mem_dir),
    )
    assert r.returncode == 0, r.stderr
    assert "conv-x/default: stored 2 episodes" in r.stdout
    r = run_cli(
        "memory",
        "query",
        "What did Melanie paint?",
        "--path",
        str(mem_dir),
        "--user",
        "conv-x",
        "--k",
        "1",
        "--json",
    )
    item = json.loads(r.stdout)["items"][0]
    assert "sunrise" in item["text"] and item["provenance"] == ["D1:2"]
    # "last week" is resolved against the session's date
    assert "May 2023" in item["text"]


def test_cli_bad_file_is_named_and_nothing_is_stored(run_cli, tmp_path):
    mem_dir = tmp_path / "mem"
    good = _jsonl(tmp_path / "good.jsonl", EPISODES[:1])
    assert run_cli("memory", "ingest", str(good), "--path", str(mem_dir)).returncode == 0
    bad = _jsonl(tmp_path / "bad.jsonl", [EPISODES[1], {"content": "x", "timestamp": "soon"}])
    r = run_cli("memory", "ingest", str(bad), "--path", str(mem_dir), "--json")
    assert r.returncode == 2
    assert "bad.jsonl:2: timestamp" in r.stderr and "nothing was stored" in r.stderr
    # re-ingesting an episode id that is stored refuses the whole file
    r = run_cli("memory", "ingest", str(good), "--path", str(mem_dir))
    assert r.returncode == 2 and "e1" in r.stderr
    r = run_cli("memory", "inspect", "--path", str(mem_dir), "--json")
    assert json.loads(r.stdout)["stats"]["episodes"] == 1
    r = run_cli("memory", "ingest", str(tmp_path / "missing.jsonl"), "--path", str(mem_dir))
    assert r.returncode == 2 and "no such file" in r.stderr
    r = run_cli("memory", "query", "  ", "--path", str(mem_dir))
    assert r.returncode == 2 and "query is empty" in r.stderr


def test_cli_forget_and_reason_without_a_model(run_cli, tmp_path):
    mem_dir = tmp_path / "mem"
    run_cli("memory", "ingest", str(_jsonl(tmp_path / "e.jsonl", EPISODES)), "--path", str(mem_dir))
    r = run_cli("memory", "forget", "--episode", "e3", "--path", str(mem_dir), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["episodes"] == ["e3"] and json.loads(r.stdout)["items"]
    r = run_cli("memory", "query", "cello orchestra", "--path", str(mem_dir), "--json")
    assert all("e3" not in i["provenance"] for i in json.loads(r.stdout)["items"])
    r = run_cli("memory", "query", "cat", "--reason", "--path", str(mem_dir))
    assert r.returncode == 2 and "needs a model" in r.stderr


# -- the shell ----------------------------------------------------------------------------------


def test_shell_remember_recall_forget(settings):
    from rich.console import Console

    from lemmata.memory.shell import COMMANDS
    from lemmata.shell import Shell

    console = Console(record=True, width=200, color_system=None)
    shell = Shell(settings, console=console, commands=COMMANDS)
    shell.handle("remember --speaker Dana My dentist appointment is on Friday at 9am.")
    shell.handle("recall -k 1 When is the dentist appointment?")
    text = console.export_text()
    assert "stored ep_" in text and "1 new facts" in text
    assert "Dana" in text and "dentist appointment is on Friday" in text
    shell.handle("memory facts")
    fact_id = console.export_text().split("fa_", 1)[1].split(":", 1)[0]
    shell.handle(f"forget fa_{fact_id}")
    shell.handle("recall dentist appointment")
    shell.handle("recall -k nope x")
    text = console.export_text()
    assert "forgot 1 items" in text and "nothing remembered matches" in text
    assert "invalid int value: 'nope'" in text and "usage: recall" in text


# -- LangGraph ------------------------------------------------------------------------------


def test_tools_through_a_langgraph_tool_node(tmp_path, embedder):
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from lemmata.agents import memory_tools

    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools(mem, k=2)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    node = builder.compile()
    calls = AIMessage(
        "",
        tool_calls=[
            {
                "name": "remember",
                "args": {"text": "The wifi password is kettle42.", "speaker": "Eve"},
                "id": "c1",
            }
        ],
    )
    stored = node.invoke({"messages": [calls]})["messages"][-1].content
    assert stored.startswith("stored as episode ep_")
    ask = AIMessage(
        "", tool_calls=[{"name": "recall", "args": {"query": "wifi password"}, "id": "c2"}]
    )
    answer = node.invoke({"messages": [ask]})["messages"][-1].content
    episode = stored.rsplit(" ", 1)[1]
    assert "kettle42" in answer and f"(from: {episode})" in answer
    item = answer.split("]", 1)[0].lstrip("[")
    drop = AIMessage("", tool_calls=[{"name": "forget", "args": {"item_id": item}, "id": "c3"}])
    assert node.invoke({"messages": [drop]})["messages"][-1].content == f"forgot {item}"
    assert "kettle42" not in node.invoke({"messages": [ask]})["messages"][-1].content


def test_memory_agent_recalls_records_and_resumes_a_thread(tmp_path, embedder):
    from langgraph.checkpoint.memory import InMemorySaver

    from lemmata.agents import memory_agent
    from lemmata.llm import ScriptedModel

    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    mem.add_episodes(EPISODES)
    graph = memory_agent(mem, k=3, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "chat-1"}}
    out = graph.invoke({"messages": [("user", "What is the name of the cat?")]}, cfg)
    assert out["memory"]["items"][0]["provenance"] == ["e1"]
    assert "Miso" in out["messages"][-1].content and "offline" in out["messages"][-1].content
    # the user's turn became an episode in the thread's session; the reply did not
    recorded = [e for e in mem.episodes() if e.session == "chat-1"]
    assert [e.content for e in recorded] == ["What is the name of the cat?"]
    out = graph.invoke({"messages": [("user", "And my brother?")]}, cfg)
    assert out["recorded"] == 4 and len(mem.episodes()) == 5

    model = ScriptedModel(["Your cat is Miso."])
    graph = memory_agent(mem, model, k=3)
    out = graph.invoke({"messages": [("user", "What is the name of the cat?")]})
    assert out["messages"][-1].content == "[scripted] Your cat is Miso."
    system = model.requests[0][0]["content"]
    assert "Miso" in system and out["memory"]["items"][0]["id"] in system


def test_locomo_evidence_written_as_one_string_is_split(tmp_path: Path) -> None:
    from lemmata.memory.ingest import read_locomo

    path = _locomo(tmp_path / "c.json")
    sample = json.loads(path.read_text())
    sample["qa"][0]["evidence"] = ["D1:1; D1:2"]
    path.write_text(json.dumps(sample))
    (conv,) = read_locomo(path)
    assert conv.questions[0].evidence == ("D1:1", "D1:2")
