"""Vectors as SQLite stores them: float16, half float32's bytes, read back within its
rounding; a store of float32 vectors is rewritten once, in place; a vector no
L2-normalised embedding could be (a value past 1, not a number) is refused before a
byte is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import engram
import stores
from engram import ResourceRef
from engram.core.errors import EmbedderMismatch
from engram.core.ports import EmbedKind, Vectors
from engram.storage.sql.dialect import SQLITE
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.schema import MIGRATIONS
from engram.storage.sqlite.store import SQLiteStore

REF = ResourceRef("vectors")
TEXTS = [f"note {i}: {w}" for i, w in enumerate("camera flight hotel budget garden".split())]


def _rows(path: Path) -> dict[int, bytes]:
    return dict(stores.rows(path, "SELECT fact, vector FROM fact_vectors ORDER BY fact"))


def test_a_vector_is_stored_as_float16_and_read_back_within_its_rounding(db_path: Path) -> None:
    embedder = engram.HashingEmbedder(64)
    with engram.open(db_path, embedder=embedder) as mem:
        facts = mem.remember_many(REF, TEXTS)
        assert mem.recall(REF, TEXTS[2], top_k=1, mode="vector")[0].fact.id == facts[2].id
    expected = embedder.embed(TEXTS, "passage")
    stored = list(_rows(db_path).values())
    assert [len(raw) for raw in stored] == [64 * 2] * len(TEXTS)
    assert stored == [v.astype("<f2").tobytes() for v in expected]
    np.testing.assert_allclose(np.stack([SQLITE.unvector(r) for r in stored]), expected, atol=1e-3)


def test_a_store_of_float32_vectors_is_rewritten_once_and_answers_as_before(
    db_path: Path,
) -> None:
    embedder = engram.HashingEmbedder(64)
    with engram.open(db_path, embedder=embedder, vector_index_above=3) as mem:
        facts = mem.remember_many(REF, TEXTS)
        mem.forget(REF, facts[0].id)  # into the trash, its vector with it
        before = [h.fact.id for h in mem.recall(REF, "camera hotel", top_k=4, mode="vector")]
        store = mem._store
        assert isinstance(store, SQLiteStore) and store.index.approximate.settle(timeout=120)
    half, trashed = _rows(db_path), stores.rows(db_path, "SELECT vector FROM fact_trash")
    logged = stores.rows(db_path, "SELECT count(*) FROM fact_changes")
    indexes = stores.rows(db_path, "SELECT * FROM vector_indexes")
    assert len(indexes) == 1  # the search asked for one, built from float16 rows
    conn = sqlite3.connect(db_path)
    stores.single_vectors(conn)  # as schema 18 stored them
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
    conn.commit()
    conn.close()
    assert {len(raw) for raw in _rows(db_path).values()} == {64 * 4}

    with engram.open(db_path, embedder=embedder) as mem:
        assert stores.rows(db_path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
        assert _rows(db_path) == half  # the same bytes as written at float16
        assert stores.rows(db_path, "SELECT vector FROM fact_trash") == trashed
        # The same vectors: nothing logged as changed, no index file dropped.
        assert stores.rows(db_path, "SELECT count(*) FROM fact_changes") == logged
        assert stores.rows(db_path, "SELECT * FROM vector_indexes") == indexes
        assert [h.fact.id for h in mem.recall(REF, "camera hotel", top_k=4, mode="vector")] == (
            before
        )
        mem.restore(REF, facts[0].id)
        assert mem.recall(REF, TEXTS[0], top_k=1, mode="vector")[0].fact.id == facts[0].id


class Scaled(engram.HashingEmbedder):
    """Hashing vectors times ``factor`` in one value: not L2-normalised."""

    def __init__(self, dimension: int, factor: float) -> None:
        super().__init__(dimension)
        self.factor = factor

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        vectors = super().embed(texts, kind).copy()
        vectors[:, 0] = self.factor
        return vectors


@pytest.mark.parametrize("value", [1.5, 70000.0, float("nan"), float("-inf")])
def test_a_vector_no_normalised_embedding_has_is_refused_and_nothing_is_written(
    target: stores.Target, value: float
) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        kept = mem.remember(REF, "kept")
    with engram.open(target, embedder=Scaled(16, value)) as mem:
        with pytest.raises(EmbedderMismatch, match="L2-normalised"):
            mem.remember_many(REF, ["one", "two"])
        with pytest.raises(EmbedderMismatch, match="L2-normalised"):
            mem.correct(REF, kept.id, "changed")
        assert [f.content for f in mem.facts(REF).facts] == ["kept"]
    assert len(stores.vectors(target)) == 1
