"""A scan of a scope's stored vectors (a filter's rows where they are fewer than the graph
would be asked for, or a scope too large for its in-process copy) scores exactly only the
rows a search of their stored half-precision values shortlists: it answers what scoring
every row answers, ties by row number included."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engram
from engram import ResourceRef
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import vectors

REF = ResourceRef("scanned")
WORDS = [f"w{i}" for i in range(14)]


def test_a_shortlisted_scan_answers_as_scoring_every_row(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight facts share each bag of words (the same vector, so exact ties), so a tie
    straddles the tenth place: a shortlist that kept only the best it found, or broke
    ties as the search found them, would answer other facts."""
    rng = random.Random(11)
    bags = [rng.sample(WORDS, rng.randint(2, 5)) for _ in range(90)]
    orders = (itertools.islice(itertools.permutations(bag), 8) for bag in bags)
    texts = sorted({" ".join(order) for each in orders for order in each})
    rng.shuffle(texts)
    embedder = engram.HashingEmbedder(32)
    with engram.open(db_path, embedder=embedder) as mem:
        mem.remember_many(REF, texts)
    searched: list[int] = []
    module = vectors.usearch_module()
    assert module is not None

    class Counted:
        MetricKind = module.MetricKind

        @staticmethod
        def search(*args: Any, **kwargs: Any) -> Any:
            searched.append(args[2])
            return module.search(*args, **kwargs)

    class Strayed(Counted):  # a search whose scores are further off than the slack
        @staticmethod
        def search(*args: Any, **kwargs: Any) -> Any:
            found = module.search(*args, **kwargs)
            noise = np.random.default_rng(len(searched)).uniform(-0.05, 0.05, len(found.keys))
            searched.append(args[2])
            return type("Found", (), {"keys": found.keys, "distances": found.distances + noise})

    conn = sqlite3.connect(db_path)
    conn.execute("BEGIN")
    seqs = [r[0] for r in conn.execute("SELECT seq FROM facts ORDER BY seq")]
    assert len(seqs) > 300
    answered = 0
    for query in [" ".join(rng.sample(WORDS, 3)) for _ in range(12)]:
        vector = np.asarray(embedder.embed([query], "query")[0], np.float32)
        for among in (None, seqs[::2]):
            monkeypatch.setattr(vectors, "usearch_module", lambda: None)  # every row scored
            want = [(c.id, c.score) for c in vectors.scanned(conn, REF.key, vector, 10, among)]
            for search in (Counted, Strayed):  # a stray search's shortlist is not trusted
                monkeypatch.setattr(vectors, "usearch_module", lambda s=search: s)
                got = vectors.scanned(conn, REF.key, vector, 10, among)
                assert [(c.id, c.score) for c in got] == want, (query, search)
            answered += len(want) == 10
    assert answered == 24
    assert len(searched) >= 48  # each scan was shortlisted


def test_a_shortlist_holds_every_row_of_the_exact_best_however_close_they_score() -> None:
    """Rows whose cosines with the query lie within a thousandth of each other, where the
    query rounded to half precision orders them otherwise: the shortlist still holds the
    exact best ten, for each of 30 queries."""
    from engram.storage.sql.dialect import cosines, sqlite_matrix, sqlite_vector

    rng = np.random.default_rng(3)
    orders_differ = 0
    for _ in range(30):
        query = rng.standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        noise = rng.standard_normal((400, 384)).astype(np.float32)
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        rows = query + noise * rng.uniform(0.03, 0.045, (400, 1)).astype(np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        blobs = [sqlite_vector(row) for row in rows]
        exact = cosines(sqlite_matrix(blobs), query)
        best = set(np.lexsort((np.arange(400), -exact))[:10].tolist())
        near = vectors._shortlist(blobs, query, 10)
        assert near is not None and best <= set(near[0].tolist())
        assert np.max(np.abs(exact[near[0]] - near[1])) <= vectors.SLACK
        rounded = cosines(sqlite_matrix(blobs), query.astype(np.float16).astype(np.float32))
        orders_differ += best != set(np.lexsort((np.arange(400), -rounded))[:10].tolist())
    assert orders_differ  # the rounded query alone would have missed some
