"""A process's copy of the postings its full-text questions read (PostgreSQL).

Full text sums the postings of a question's words (``fact_terms``: a word's ts_rank in
each fact holding it). Summed in SQL, a 100k-fact scope's question reads and groups
about 8k postings in the server, 5 to 7 ms of the hybrid recall's time. Words repeat from
question to question, so a process keeps the postings it has read, by scope and word,
and sums them itself.

A copy is good while the scope's words are as they were: every statement that adds,
removes or rewrites a fact's words bumps its scope's ``words_version`` (migration 22) in
the same transaction, so a question reading the version its copies were read at, in its
own snapshot, finds the same postings the server holds there. Any other version drops
the scope's copies. The copies hold facts' sequence numbers and weights, keyed by the
questions' own words (stemmed); the scope's next change, an erase included, drops them
at its next question.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

# Postings held in all, over every scope (16 bytes each, so at most 64 MB): past it, the
# scopes asked least lately go first. Weights stay float64, as the server sums them.
HELD = 4_000_000

Seqs = npt.NDArray[np.int64]
Weights = npt.NDArray[np.float64]


@dataclass(slots=True)
class _Scope:
    version: int
    words: dict[str, tuple[Seqs, Weights]] = field(default_factory=dict)
    size: int = 0


class Postings:
    """The postings this process has read, by scope and word (see the module)."""

    def __init__(self, held: int = HELD) -> None:
        self._held = held
        self._lock = threading.Lock()
        self._scopes: OrderedDict[str, _Scope] = OrderedDict()
        self._size = 0

    def best(
        self,
        conn: psycopg.Connection[Any],
        scope: str,
        version: int,
        weights: dict[str, float],
        limit: int,
    ) -> list[tuple[int, float]]:
        """The ``limit`` facts (sequence numbers) scoring most over ``weights``' words
        (each fact's sum of its postings' impacts times their word's weight), best first,
        ties by sequence number; ``version``: the scope's ``words_version`` in ``conn``'s
        snapshot."""
        held = self._of(conn, scope, version, list(weights))
        parts = [(held[w][0], held[w][1] * weights[w]) for w in weights if len(held[w][0])]
        if not parts:
            return []
        seqs = np.concatenate([p[0] for p in parts])
        scored = np.concatenate([p[1] for p in parts])
        facts, at = np.unique(seqs, return_inverse=True)
        sums = np.bincount(at, weights=scored, minlength=len(facts))
        if len(facts) > limit:  # the best, and any tied with the last of them
            cut = np.partition(sums, len(sums) - limit)[len(sums) - limit]
            keep = sums >= cut
            facts, sums = facts[keep], sums[keep]
        order = np.lexsort((facts, -sums))[:limit]
        return [(int(facts[i]), float(sums[i])) for i in order]

    def _of(
        self, conn: psycopg.Connection[Any], scope: str, version: int, words: Sequence[str]
    ) -> dict[str, tuple[Seqs, Weights]]:
        with self._lock:
            held = self._scopes.get(scope)
            if held is None or held.version != version:
                if held is not None:
                    self._size -= held.size
                held = self._scopes[scope] = _Scope(version)
            self._scopes.move_to_end(scope)
            found = {w: held.words[w] for w in words if w in held.words}
        missing = [w for w in dict.fromkeys(words) if w not in found]
        if missing:
            read = _read(conn, scope, missing)
            found.update(read)
            with self._lock:
                if self._scopes.get(scope) is held:  # not dropped meanwhile
                    for word, posting in read.items():
                        if word not in held.words:
                            held.words[word] = posting
                            held.size += len(posting[0])
                            self._size += len(posting[0])
                    self._trim()
        return found

    def _trim(self) -> None:
        """Drops the scopes asked least lately while more than ``held`` are held (under
        ``_lock``); where the one just read holds more alone, its copies too (the
        question being answered has read what it needs)."""
        while self._size > self._held and self._scopes:
            _, gone = self._scopes.popitem(last=False)
            self._size -= gone.size

    def clear(self) -> None:
        with self._lock:
            self._scopes.clear()
            self._size = 0


def _read(
    conn: psycopg.Connection[Any], scope: str, words: Sequence[str]
) -> dict[str, tuple[Seqs, Weights]]:
    """The postings of ``words`` in ``scope``: each word's facts and impacts, in any
    order (both arrays in the same one), sent in binary: 6.8 ms p50 for a question's
    words at 100k facts, against 12.4 sorted by fact and sent as text."""
    rows = conn.execute(
        "SELECT term, array_agg(fact), array_agg(impact) "
        "FROM fact_terms WHERE scope = %s AND term = ANY(%s::text[]) GROUP BY term",
        (scope, list(words)),
        binary=True,
    ).fetchall()
    read = {
        str(term): (np.asarray(facts, np.int64), np.asarray(impacts, np.float32).astype(np.float64))
        for term, facts, impacts in rows
    }
    empty = (np.empty(0, np.int64), np.empty(0, np.float64))
    return {w: read.get(w, empty) for w in words}
