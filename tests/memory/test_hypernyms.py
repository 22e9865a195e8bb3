"""Type knowledge for list questions: the package's WordNet nouns (senses, hypernyms, how
likely each sense is), the ``kinds`` channel finding a type's instances through them in a
real memory (SQLite, chromadb, the bundled MiniLM), what happens when the lexicon file is
missing or corrupt, and the script that builds the file from WordNet's database files."""

from __future__ import annotations

import gzip
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from lemmata.embeddings import Embedder
from lemmata.errors import ConfigError, DataSourceError
from lemmata.memory import Memory, hypernyms
from lemmata.memory.hypernyms import (
    DEFAULT_LEXICON,
    TypeIndex,
    file_concepts,
    lexicon,
    lexicon_status,
    load_lexicon,
)
from lemmata.memory.kinds import type_senses
from lemmata.memory.retrieve import DEFAULT_WEIGHTS, RetrievalConfig

ROOT = Path(__file__).resolve().parents[2]
WORDNET = RetrievalConfig(weights={**DEFAULT_WEIGHTS, "kinds": 0.5}, kinds_source="wordnet")
BOTH = RetrievalConfig(weights={**DEFAULT_WEIGHTS, "kinds": 0.5}, kinds_source="both")
QUESTION = "What activities does Melanie do?"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def test_the_shipped_lexicon_knows_that_pottery_and_swimming_are_activities() -> None:
    lx = lexicon()
    assert lx is not None, lexicon_status()
    assert lexicon_status().startswith("active: ")
    activity = type_senses("activities", lx)
    first = max(activity, key=lambda s: activity[s])
    assert lx.lexname(first) == "noun.act"
    for concept in ("pottery", "swimm", "paint"):  # stored concepts are stemmed
        under = [s for s, _ in lx.concept_senses(concept) if first in lx.ancestors(s)]
        assert under, concept
    # "musical artists" is one lemma; "instruments" reaches the violin through a later sense
    assert type_senses("musical artists", lx)
    violin = [s for s, _ in lx.concept_senses("violin")]
    assert any(t in lx.ancestors(v) for t in type_senses("instruments", lx) for v in violin)
    # a lamp is no activity
    assert not any(first in lx.ancestors(s) for s, _ in lx.concept_senses("lamp"))


def test_a_word_used_mostly_as_a_verb_weighs_little_as_a_noun() -> None:
    lx = lexicon()
    assert lx is not None
    start = max(p for _, p in lx.concept_senses("start"))
    pottery = max(p for _, p in lx.concept_senses("pottery"))
    assert start < 0.2 < pottery
    assert "child" in lx.base_forms("Children")
    assert lx.senses("boxes") == lx.senses("box")
    assert lx.specificity(type_senses("activity", lx).popitem()[0]) < lx.specificity(
        lx.concept_senses("pottery")[0][0]
    )


def test_a_broad_type_keeps_only_its_best_concepts() -> None:
    lx = lexicon()
    assert lx is not None
    by_type: dict[int, dict[str, float]] = {}
    words = ["pottery", "camping", "swimming", "hiking", "painting", "bowling", "chess", "golf"]
    file_concepts(by_type, words, lx, keep=2)
    entity = next(s for s, _ in lx.senses("entity"))
    assert 2 <= len(by_type[entity]) <= 4
    with pytest.raises(ValueError, match="keep"):
        TypeIndex(keep=0)


def _activity_memory(tmp_path: Path, embedder: Embedder) -> tuple[Memory, dict[str, str]]:
    mem = Memory(tmp_path / "m", user="u", embedder=embedder, retrieval=WORDNET)
    said = {
        "pottery": mem.add_episode("I took up pottery.", speaker="Melanie", session="a"),
        "camping": mem.add_episode("I went camping with the kids.", speaker="Melanie", session="b"),
    }
    things = ["vase", "lamp", "kettle", "sofa", "mirror", "carpet", "teapot", "blanket"]
    for i in range(24):
        mem.add_episode(
            f"On day {i} the {things[i % len(things)]} in the hall was blue.",
            speaker="Melanie",
            session=f"d{i % 4}",
        )
    mem.consolidate()
    return mem, said


def test_a_list_question_finds_the_instances_of_its_type(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, said = _activity_memory(tmp_path, embedder)
    # WordNet's types and the concepts' embeddings, fused
    mem.retrieval = BOTH
    found = mem.retrieve(QUESTION, k=10).items
    for activity in ("pottery", "camping"):
        hit = [i for i in found if said[activity] in i.provenance]
        assert hit, (activity, [i.text for i in found])
        assert "kinds" in hit[0].channels, (activity, hit[0].channels)
    # WordNet alone: pottery (a craft, a kind of activity) and none of the furniture
    # (WordNet files camping under residence, an act but no activity)
    mem.retrieval = WORDNET
    found = mem.retrieve(QUESTION, k=10).items
    kinds = [i for i in found if "kinds" in i.channels]
    assert [i.provenance for i in kinds] == [(said["pottery"],)], [i.text for i in kinds]
    mem.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is missing"),
        (b"not gzip at all", "cannot be read"),
        (gzip.compress(b"{not json"), "cannot be read"),
        (gzip.compress(b"[1, 2]"), "not in the expected form"),
        (gzip.compress(json.dumps({"format": 1, "synsets": []}).encode()), "expected form"),
        (
            gzip.compress(
                json.dumps(
                    {
                        "format": 1,
                        "lexnames": ["noun.Tops"],
                        "synsets": [[0, [7]]],
                        "lemmas": {},
                        "exceptions": {},
                        "counts": {},
                    }
                ).encode()
            ),
            "out of range",
        ),
    ],
)
def test_a_missing_or_corrupt_lexicon_is_named_with_the_way_to_rebuild_it(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "wordnet_nouns.json.gz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DataSourceError, match=message) as err:
        load_lexicon(path)
    assert str(path) in str(err.value)
    assert "scripts/build_wordnet_types.py" in str(err.value)


def test_without_its_lexicon_the_channel_says_it_is_inactive_and_retrieval_goes_on(
    tmp_path: Path,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b garbage")
    monkeypatch.setattr(hypernyms, "DEFAULT_LEXICON", broken)
    monkeypatch.setattr(hypernyms, "_LOADED", {})
    mem, said = _activity_memory(tmp_path, embedder)
    with caplog.at_level(logging.WARNING, logger="lemmata.memory.hypernyms"):
        found = mem.retrieve(QUESTION, k=10).items
    assert found  # the other channels still answer
    assert all("kinds" not in i.channels for i in found)
    assert "inactive" in caplog.text and str(broken) in caplog.text
    status = lexicon_status()
    assert status.startswith("inactive: ") and str(broken) in status
    # with both sources, the embeddings' half of the channel still works
    mem.retrieval = BOTH
    assert mem.retrieve(QUESTION, k=10).items
    mem.close()


def test_kinds_source_is_checked() -> None:
    with pytest.raises(ConfigError, match="kinds_source"):
        RetrievalConfig(kinds_source="thesaurus")
    with pytest.raises(ConfigError, match="kinds_max_concepts"):
        RetrievalConfig(kinds_max_concepts=0)


_DATA_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by
  2 Princeton University under the following license.
00001740 03 n 01 entity 0 000 | that which exists
00002000 04 n 01 activity 0 001 @ 00001740 n 0000 | any specific behavior
00003000 04 n 02 pottery 0 ceramics 0 001 @ 00002000 n 0000 | the craft of making earthenware
00004000 06 n 01 pottery 0 001 @ 00001740 n 0000 | ceramic ware
"""
_INDEX_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by
activity n 1 1 @ 1 1 00002000
ceramics n 1 1 @ 1 0 00003000
entity n 1 0 1 0 00001740
pottery n 2 1 @ 2 2 00004000 00003000
"""


def test_the_build_script_reads_wordnets_files(tmp_path: Path) -> None:
    src = tmp_path / "dict"
    src.mkdir()
    (src / "data.noun").write_text(_DATA_NOUN)
    (src / "index.noun").write_text(_INDEX_NOUN)
    (src / "noun.exc").write_text("potteries pottery\n")
    (src / "lexnames").write_text("03\tnoun.Tops\t1\n04\tnoun.act\t1\n06\tnoun.artifact\t1\n")
    (src / "cntlist.rev").write_text("pottery%1:06:00:: 1 10\npottery%1:04:00:: 2 1\n")
    out = tmp_path / "out" / "nouns.json.gz"
    script = ROOT / "scripts" / "build_wordnet_types.py"
    run = subprocess.run(
        [sys.executable, str(script), "--source", str(src), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    lx = load_lexicon(out)
    assert len(lx) == 4
    craft = [s for s, _ in lx.senses("potteries") if lx.lexname(s) == "noun.act"]
    assert craft and lx.senses("activity")[0][0] in lx.ancestors(craft[0])
    ware, craft_p = (p for _, p in sorted(lx.concept_senses("pottery"), key=lambda sp: -sp[1]))
    assert ware > craft_p  # the ware was tagged ten times, the craft once
    assert "Princeton University" in (out.parent / "WORDNET_LICENSE").read_text()
    # the same files give the same bytes
    first = out.read_bytes()
    subprocess.run(
        [sys.executable, str(script), "--source", str(src), "--out", str(out)],
        capture_output=True,
        check=True,
    )
    assert out.read_bytes() == first
    # a folder without WordNet's files is named
    bad = subprocess.run(
        [sys.executable, str(script), "--source", str(tmp_path), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0 and "data.noun is missing" in bad.stderr


def test_the_shipped_lexicon_is_small_and_ships_its_licence() -> None:
    assert DEFAULT_LEXICON.stat().st_size < 3_000_000
    licence = (DEFAULT_LEXICON.parent / "WORDNET_LICENSE").read_text()
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in licence
