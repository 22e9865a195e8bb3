"""The retrieval channels' queries over the log: BM25 text, shared terms, graph hops.

:class:`SearchQueries` is mixed into :class:`~lemmata.memory.log.MemoryLog`, which gives it
the log's locked reads and its namespace filter; :mod:`~lemmata.memory.retrieve` calls them as
the log's methods (``log.search_text``, ``log.siblings``, ...). Each keeps its cost bounded
however large the memory grows (a budget of postings, a limit on hops), and each names the
namespace in its ``WHERE`` clause.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from lemmata.memory.rows import chunks
from lemmata.memory.types import Namespace

__all__ = ["SearchQueries"]


class SearchQueries:
    """The retrieval channels' SQL, as methods of the log."""

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        raise NotImplementedError  # the log's locked read

    @staticmethod
    def _scope(ns: Namespace, alias: str = "") -> tuple[str, list[Any]]:
        raise NotImplementedError  # the log's namespace filter

    def search_text(
        self, ns: Namespace, words: Sequence[str], limit: int, *, max_postings: int = 2000
    ) -> list[tuple[str, float]]:
        """BM25 over the FTS5 index, best first, within the namespace.

        Ranking scores every document a word occurs in, so the words go in rarest first
        within a budget of postings (a word's postings are counted up to the budget, which
        is cheap). When frequent words are left out, the items holding *all* the words come
        first (FTS5 intersects posting lists without scoring them), then the best of the words
        within the budget: the cost stays bounded at any size, and a query whose words are each
        common but together specific still finds its item. Only when every word is over the
        budget and no item holds them all is the rarest word ranked on its own.
        """
        if not words:
            return []
        # (postings, place in the query, word): equally frequent words (all counts stop at
        # the budget) go in the order the query gives them
        counted: list[tuple[int, int, str]] = []
        try:
            for w in words:
                n = self._read(
                    "SELECT count(*) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ? "
                    "LIMIT ?)",
                    [f'"{w}"', max_postings + 1],
                )[0][0]
                if n:
                    counted.append((int(n), len(counted), w))
            if not counted:
                return []
            chosen: list[str] = []
            postings = 0
            for n, _, w in sorted(counted):
                if postings + n > max_postings:
                    break
                chosen.append(w)
                postings += n
            ranked = []
            if len(chosen) < len(counted):
                every = " AND ".join(f'"{w}"' for _, _, w in counted)
                ranked = self._rank_text(ns, every, limit)
            if chosen:
                ranked += self._rank_text(ns, " OR ".join(f'"{w}"' for w in chosen), limit)
            elif not ranked:
                # every word is frequent and no item holds them all: the rarest word's best,
                # the one case that scores more than the budget
                ranked = self._rank_text(ns, f'"{min(counted)[2]}"', limit)
        except sqlite3.OperationalError:
            return []
        out: dict[str, float] = {}
        for item_id, score in ranked:
            out.setdefault(item_id, score)
        return list(out.items())[:limit]

    def _rank_text(self, ns: Namespace, match: str, limit: int) -> list[tuple[str, float]]:
        scope, args = self._scope(ns, "i")
        # FTS5 ranks its own matches fast (ORDER BY rank LIMIT); joining every match to the
        # items table first is what grows with the memory. So rank a generous head, keep the
        # namespace's share of it, and only when that share falls short (other namespaces fill
        # the head) rank with the join, which is exact.
        head = 8 * limit
        rows = self._read(
            "SELECT i.id, h.score FROM (SELECT rowid, rank AS score FROM items_fts "
            "WHERE items_fts MATCH ? ORDER BY rank LIMIT ?) h JOIN items i "
            f"ON i.rowid = h.rowid WHERE {scope} ORDER BY h.score LIMIT ?",
            [match, head, *args, limit],
        )
        if len(rows) < limit:
            total = self._read(
                "SELECT count(*) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ? "
                "LIMIT ?)",
                [match, head],
            )[0][0]
            if total >= head:
                rows = self._read(
                    "SELECT i.id, bm25(items_fts) AS score FROM items_fts JOIN items i "
                    f"ON i.rowid = items_fts.rowid WHERE items_fts MATCH ? AND {scope} "
                    "ORDER BY score LIMIT ?",
                    [match, *args, limit],
                )
        return [(r[0], -float(r[1])) for r in rows]

    def search_terms(
        self,
        ns: Namespace,
        terms: Sequence[str],
        limit: int,
        *,
        max_df: int,
        max_postings: int = 1000,
    ) -> list[tuple[str, float]]:
        """Items sharing tags or entities with the query, weighted by rarity (IDF).

        Terms on more than ``max_df`` items, or more than ``max_postings``, are left out: they
        do not discriminate at retrieval depth, and their posting lists are what would make
        this slow. The rest go in rarest first within ``max_postings`` postings, so the cost
        stays bounded however large the memory grows. Frequencies are counted up to the cap.
        """
        if not terms:
            return []
        cap = min(max_df, max_postings)
        df: dict[str, int] = {}
        for t in dict.fromkeys(terms):
            n = self._read(
                "SELECT count(*) FROM (SELECT 1 FROM item_terms WHERE user=? AND agent=? "
                "AND term=? LIMIT ?)",
                [ns.user, ns.agent, t, cap + 1],
            )[0][0]
            if 0 < n <= cap:
                df[t] = int(n)
        use: list[str] = []
        postings = 0
        for t in sorted(df, key=lambda t: df[t]):
            if postings + df[t] > max_postings:
                break
            use.append(t)
            postings += df[t]
        if not use:
            return []
        weights = {t: 1.0 / math.log(2 + df[t]) for t in use}
        scores: dict[str, float] = {}
        marks = ",".join("?" * len(use))
        sess = " AND i.session = ?" if ns.session else ""
        for r in self._read(
            f"SELECT t.item_id, t.term FROM item_terms t JOIN items i ON i.user=t.user AND "
            f"i.agent=t.agent AND i.id=t.item_id WHERE t.user=? AND t.agent=? "
            f"AND t.term IN ({marks}){sess}",
            [ns.user, ns.agent, *use, *([ns.session] if ns.session else [])],
        ):
            scores[r[0]] = scores.get(r[0], 0.0) + weights[r[1]]
        return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]

    def items_of_terms(
        self, ns: Namespace, terms: Sequence[str], *, max_df: int, max_postings: int = 1000
    ) -> list[tuple[str, str]]:
        """(item, term) pairs for the items tagged with ``terms``, the terms taken in the
        order given. A term on more than ``max_df`` items is left out (it names no instance),
        and reading stops at ``max_postings`` pairs, so the cost is bounded at any size."""
        out: list[tuple[str, str]] = []
        sess = " AND i.session = ?" if ns.session else ""
        for t in dict.fromkeys(terms):
            room = max_postings - len(out)
            if room <= 0:
                break
            rows = self._read(
                "SELECT t.item_id FROM item_terms t JOIN items i ON i.user=t.user AND "
                "i.agent=t.agent AND i.id=t.item_id WHERE t.user=? AND t.agent=? AND t.term=?"
                f"{sess} LIMIT ?",
                [ns.user, ns.agent, t, *([ns.session] if ns.session else []), max_df + 1],
            )
            if len(rows) <= min(max_df, room):
                out += [(r[0], t) for r in rows]
        return out

    def concept_count(self, ns: Namespace) -> int:
        """How many of the pair's graph nodes are not people (the concepts that
        :mod:`~lemmata.memory.kinds` embeds)."""
        return int(
            self._read(
                "SELECT count(*) FROM entities WHERE user=? AND agent=? AND kind != 'person'",
                [ns.user, ns.agent],
            )[0][0]
        )

    def last_concept_rowid(self, ns: Namespace) -> int:
        """The highest ``entities`` rowid of the pair (0 for none)."""
        row = self._read(
            "SELECT max(rowid) FROM entities WHERE user=? AND agent=?", [ns.user, ns.agent]
        )[0][0]
        return int(row or 0)

    def concepts_since(self, ns: Namespace, rowid: int, limit: int) -> list[tuple[int, str]]:
        """(rowid, name) of the pair's non-person graph nodes stored after ``rowid``, the
        first ``limit`` of them."""
        return [
            (int(r[0]), str(r[1]))
            for r in self._read(
                "SELECT rowid, id FROM entities WHERE rowid > ? AND user=? AND agent=? "
                "AND kind != 'person' ORDER BY rowid LIMIT ?",
                [rowid, ns.user, ns.agent, limit],
            )
        ]

    def siblings(self, ns: Namespace, item_ids: Sequence[str], limit: int) -> list[tuple[str, str]]:
        """(sibling, seed) pairs: items that share a source episode with a seed item."""
        return self._hop(
            ns,
            item_ids,
            limit,
            "JOIN item_sources b ON b.user=a.user AND b.agent=a.agent "
            "AND b.episode_id=a.episode_id AND b.item_id != a.item_id",
        )

    def adjacent(self, ns: Namespace, item_ids: Sequence[str], limit: int) -> list[tuple[str, str]]:
        """(neighbour, seed) pairs: items derived from the turns just before and after a seed's
        source episodes in the same session (an answer often spans a turn and its reply)."""
        return self._hop(
            ns,
            item_ids,
            limit,
            "JOIN episodes e ON e.user=a.user AND e.agent=a.agent AND e.id=a.episode_id "
            "JOIN episodes n ON n.user=e.user AND n.agent=e.agent AND n.session=e.session "
            "AND n.rowid BETWEEN e.rowid - 1 AND e.rowid + 1 AND n.rowid != e.rowid "
            "JOIN item_sources b ON b.user=n.user AND b.agent=n.agent AND b.episode_id=n.id",
        )

    def _hop(
        self, ns: Namespace, item_ids: Sequence[str], limit: int, joins: str
    ) -> list[tuple[str, str]]:
        """(reached item ``b``, seed ``a``) pairs along ``joins`` from the seeds' sources,
        within the namespace."""
        if not item_ids:
            return []
        marks = ",".join("?" * len(item_ids))
        scope, args = self._scope(ns, "i")
        return [
            (r[0], r[1])
            for r in self._read(
                f"SELECT DISTINCT b.item_id, a.item_id FROM item_sources a {joins} "
                "JOIN items i ON i.user=b.user AND i.agent=b.agent AND i.id=b.item_id "
                f"WHERE a.user=? AND a.agent=? AND a.item_id IN ({marks}) AND {scope} LIMIT ?",
                [ns.user, ns.agent, *item_ids, *args, limit],
            )
        ]

    def procedures_under(self, ns: Namespace, subgoal_ids: Sequence[str]) -> list[str]:
        """The procedures under the subgoals ``subgoal_ids``, best outcome first."""
        if not subgoal_ids:
            return []
        marks = ",".join("?" * len(subgoal_ids))
        scope, args = self._scope(ns)
        return [
            r[0]
            for r in self._read(
                f"SELECT id FROM items WHERE {scope} AND kind='procedure' AND subgoal_id IN ({marks}) "
                "ORDER BY COALESCE(outcome, 0) DESC",
                [*args, *subgoal_ids],
            )
        ]

    def speakers_named(self, ns: Namespace, names: Sequence[str]) -> list[str]:
        """Which of ``names`` (any case) speak in the (user, agent) pair's episodes, as stored.

        An index lookup per name, so asking costs the same at any size."""
        if not names:
            return []
        marks = ",".join("?" * len(names))
        return [
            r[0]
            for r in self._read(
                f"SELECT DISTINCT speaker FROM episodes WHERE user=? AND agent=? "
                f"AND speaker COLLATE NOCASE IN ({marks})",
                [ns.user, ns.agent, *names],
            )
        ]

    def speakers_of(self, ns: Namespace, item_ids: Sequence[str]) -> dict[str, set[str]]:
        """item id -> the speakers of the episodes it came from (items with none are absent)."""
        out: dict[str, set[str]] = {}
        for chunk in chunks(list(item_ids)):
            marks = ",".join("?" * len(chunk))
            for r in self._read(
                "SELECT DISTINCT x.item_id, e.speaker FROM item_sources x JOIN episodes e "
                "ON e.user=x.user AND e.agent=x.agent AND e.id=x.episode_id "
                f"WHERE x.user=? AND x.agent=? AND x.item_id IN ({marks}) "
                "AND e.speaker IS NOT NULL",
                [ns.user, ns.agent, *chunk],
            ):
                out.setdefault(r[0], set()).add(r[1])
        return out
