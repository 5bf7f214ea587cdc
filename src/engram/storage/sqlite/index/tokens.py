"""FTS5's own tokenizer, run in memory: the tokens FTS5 indexes for a fact, and for a word.

A small in-memory FTS5 table with the store's tokenizer settings turns text into exactly
the tokens ``facts_fts`` holds (read back through ``fts5vocab``), so anything built from
them agrees with the file's index token for token.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import COLUMNS, TOKENIZE, WEIGHTS

WORDS_CACHED = 10_000
# A token's weighted count is a count of its instances in the columns of weight one.
if set(WEIGHTS.values()) - {0.0, 1.0}:
    raise ValueError("the in-memory ranking counts instances: column weights must be 0 or 1")


Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
# Each token's instances, and for each whether its column has weight one (else zero).
# fts5vocab yields instances in token order, so grouping by token sorts nothing: one
# scan. A query per token, as before, took 4.3-5.5 s to tokenize 100k facts holding 58k
# distinct tokens; one scan, parsed by numpy in one pass, 2.2-2.9 s.
_INSTANCES = (
    "SELECT term, count(*), group_concat(doc), group_concat(col IN ({})) FROM v "
    "GROUP BY term".format(", ".join(f"'{c}'" for c, w in WEIGHTS.items() if w == 1.0))
)


@dataclass
class Tokenized:
    """Facts as FTS5 indexes them: per token, the row numbers holding it and its
    weighted count in each; per row, its length in tokens over every column (what
    FTS5's ``bm25()`` calls the row's size)."""

    postings: dict[str, tuple[Ints, Floats]]
    lengths: tuple[Ints, Ints]


class Tokenizer:
    """Thread-safe; one in-memory connection behind a lock."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._words: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._created = False

    def facts(self, rows: Sequence[tuple[int, str, str, str | None]]) -> Tokenized:
        """``rows`` are (row number, content, scope token, context)."""
        with self._lock:
            self._index(rows)
            grouped = self._conn.execute(_INSTANCES).fetchall()
        if not grouped:
            empty = np.empty(0, np.int64)
            return Tokenized({}, (empty, empty))
        terms = [g[0] for g in grouped]
        sizes = np.fromiter((g[1] for g in grouped), np.int64, len(grouped))
        # Every instance at once: one parse and one pass of numpy, not one per token.
        docs = _numbers(",".join(g[2] for g in grouped), np.int64)
        weighted = _numbers(",".join(g[3] for g in grouped), np.int64) == 1
        term_of = np.repeat(np.arange(len(terms)), sizes)
        held, lengths = np.unique(docs, return_counts=True)  # a row's size: every instance
        docs, term_of = docs[weighted], term_of[weighted]
        order = np.lexsort((docs, term_of))  # by token, then row
        docs, term_of = docs[order], term_of[order]
        starts = np.flatnonzero(
            np.concatenate(([True], (term_of[1:] != term_of[:-1]) | (docs[1:] != docs[:-1])))
        )
        counts = np.diff(np.append(starts, docs.shape[0])).astype(np.float64)
        run_docs, run_terms = docs[starts], term_of[starts]
        bounds = np.searchsorted(run_terms, np.arange(len(terms) + 1))
        postings: dict[str, tuple[Ints, Floats]] = {
            terms[i]: (run_docs[a:b], counts[a:b])
            for i, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
            if b > a
        }
        return Tokenized(postings, (held, lengths.astype(np.int64)))

    def words(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """The tokens of each word, in order (most words are one token)."""
        with self._lock:
            missing = list(dict.fromkeys(w for w in words if w not in self._words))
            if missing:
                rows = [(i, w, "", None) for i, w in enumerate(missing)]
                found: dict[int, list[tuple[int, str]]] = defaultdict(list)
                self._index(rows)
                sql = "SELECT term, doc, offset FROM v WHERE col = 'content'"
                for term, doc, offset in self._conn.execute(sql):
                    found[doc].append((offset, term))
                for i, word in enumerate(missing):
                    self._words[word] = tuple(term for _, term in sorted(found.get(i, [])))
            out = []
            for word in words:
                self._words.move_to_end(word)
                out.append(self._words[word])
            while len(self._words) > WORDS_CACHED:
                self._words.popitem(last=False)
            return out

    def _index(self, rows: Sequence[tuple[int, str, str, str | None]]) -> None:
        """Indexes ``rows`` alone, readable through ``v`` (their token instances)."""
        conn = self._conn
        if not self._created:  # contentless: emptied by one command, no DDL per call
            conn.execute(
                f"CREATE VIRTUAL TABLE t USING fts5({', '.join(COLUMNS)}, content='', "
                f"tokenize='{TOKENIZE}')"
            )
            conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
            self._created = True
        # One transaction: FTS5 flushes its pending terms at every commit, and one commit
        # per row would build (and merge) a segment per row.
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t (t) VALUES ('delete-all')")
        conn.executemany(
            "INSERT INTO t (rowid, content, scope_token, context) VALUES (?, ?, ?, ?)", rows
        )
        conn.execute("COMMIT")


def _numbers(joined: str | None, dtype: type[np.int64] | type[np.float64]) -> npt.NDArray[Any]:
    """group_concat()'s comma-separated numbers as an array."""
    if not joined:
        return np.empty(0, dtype)
    return np.array(joined.split(","), dtype=dtype)
