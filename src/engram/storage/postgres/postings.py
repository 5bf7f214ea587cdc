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

from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg

from engram.storage import summed
from engram.storage.copies import ScopeCopies
from engram.storage.summed import Floats, Ints

# What the postings held may take, over every scope (16 bytes a posting: 4M of them):
# past it, the words, then the scopes, asked least lately go first. Weights stay float64,
# as the server sums them.
BUDGET_BYTES = 64 << 20


@dataclass(slots=True)
class _Words:
    """A scope's postings held, at one ``words_version``: each word's facts and impacts."""

    version: int
    words: OrderedDict[str, tuple[Ints, Floats]] = field(default_factory=OrderedDict)
    nbytes: int = 0

    def put(self, word: str, posting: tuple[Ints, Floats]) -> None:
        if word not in self.words:
            self.nbytes += posting[0].nbytes + posting[1].nbytes
        self.words[word] = posting

    def get(self, word: str) -> tuple[Ints, Floats]:
        self.words.move_to_end(word)
        return self.words[word]

    def trim(self, budget: int) -> None:
        """Drops the words asked least lately past ``budget`` bytes (the newest stays)."""
        while self.nbytes > budget and len(self.words) > 1:
            _, (seqs, impacts) = self.words.popitem(last=False)
            self.nbytes -= seqs.nbytes + impacts.nbytes


class Postings:
    """The postings this process has read, by scope and word (see the module)."""

    def __init__(self, budget_bytes: int = BUDGET_BYTES) -> None:
        self._copies: ScopeCopies[_Words] = ScopeCopies(budget_bytes)

    def best(
        self,
        conn: psycopg.Connection[Any],
        scope: str,
        version: int,
        weights: dict[str, float],
        limit: int,
        among: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``limit`` facts (sequence numbers) scoring most over ``weights``' words
        (each fact's sum of its postings' impacts times their word's weight), best first,
        ties by sequence number; ``version``: the scope's ``words_version`` in ``conn``'s
        snapshot; ``among``: only these facts (a filter's: it narrows which facts answer,
        not their scores)."""

        def read(held: _Words) -> dict[str, tuple[Ints, Floats]]:
            missing = [w for w in weights if w not in held.words]
            for word, posting in _read(conn, scope, missing).items() if missing else ():
                held.put(word, posting)
            found = {w: held.get(w) for w in weights}
            held.trim(self._copies.budget_bytes)
            return found

        held = self._copies.use(
            scope, lambda copy: copy.version == version, lambda _: _Words(version), read
        )
        self._copies.evict()
        parts = [(held[w][0], held[w][1] * weights[w]) for w in weights if held[w][0].shape[0]]
        if among is not None:
            parts = summed.among(parts, among)
        seqs, scores = summed.best(parts, limit)
        return list(zip(seqs.tolist(), scores.tolist(), strict=True))

    def forget(self, scope: str) -> None:
        self._copies.forget(scope)

    def clear(self) -> None:
        self._copies.clear()


def _read(
    conn: psycopg.Connection[Any], scope: str, words: Sequence[str]
) -> dict[str, tuple[Ints, Floats]]:
    """The postings of ``words`` in ``scope``: each word's facts and impacts, in its
    index's order (both in the same one), each sent as one string of their binary forms
    (big-endian int8 and float4), read by numpy without a Python object a posting."""
    rows = conn.execute(_READ, (list(words), scope), binary=True).fetchall()
    read = {
        str(term): (
            np.frombuffer(facts, ">i8").astype(np.int64),
            np.frombuffer(impacts, ">f4").astype(np.float64),
        )
        for term, facts, impacts in rows
        if facts is not None
    }
    empty = (np.empty(0, np.int64), np.empty(0, np.float64))
    return {w: read.get(w, empty) for w in words}


# Each word's postings aggregated from its own scan of the index, in the index's order:
# grouping every word's rows by word instead sorted them all first (at 100k facts, a
# question's three words' 8,408 postings in 4.1 ms against 1.8; BENCHMARKS.md).
_READ = """
    SELECT u.term, p.facts, p.impacts
    FROM unnest(%s::text[]) AS u (term)
    CROSS JOIN LATERAL (
        SELECT string_agg(int8send(fact), ''::bytea) AS facts,
            string_agg(float4send(impact), ''::bytea) AS impacts
        FROM fact_terms WHERE scope = %s AND term = u.term
    ) AS p
"""
