"""What a fact's row holds, kept small. Vectors as SQLite stores them: float16, half
float32's bytes, read back within its rounding; a store of float32 vectors is rewritten
once, in place; a vector no L2-normalised embedding could be (a value past 1, not a
number) is refused before a byte is written. A content hash as both stores keep it: 22
characters that still tell a scope's duplicates apart, and a store of full hashes
rewritten once. A fact's id: made later, it sorts after."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import engram
import stores
from engram import ResourceRef
from engram.core.errors import EmbedderMismatch
from engram.core.graph.models import Difference, GraphDrift
from engram.core.ports import EmbedKind, Vectors
from engram.core.rules import content_hash
from engram.storage.rows import stored_digest
from engram.storage.sql.dialect import SQLITE
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.schema import MIGRATIONS
from engram.storage.sqlite.store import SQLiteStore

REF = ResourceRef("vectors")
NOTHING = Difference(0, 0)
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
    files = "SELECT scope, file, mark, last_seq, size, dimension FROM vector_indexes"
    indexes = stores.rows(db_path, files)
    assert len(indexes) == 1  # the search asked for one, built from float16 rows
    conn = sqlite3.connect(db_path)
    stores.as_schema_18(conn)
    conn.execute("PRAGMA user_version = 18")
    conn.commit()
    conn.close()
    assert {len(raw) for raw in _rows(db_path).values()} == {64 * 4}

    with engram.open(db_path, embedder=embedder) as mem:
        assert stores.rows(db_path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
        assert _rows(db_path) == half  # the same bytes as written at float16
        assert stores.rows(db_path, "SELECT vector FROM fact_trash") == trashed
        # The same vectors: nothing logged as changed, no index file dropped.
        assert stores.rows(db_path, "SELECT count(*) FROM fact_changes") == logged
        assert stores.rows(db_path, files) == indexes
        # built before the column: taken as the narrower build it was, searched wider
        assert stores.rows(db_path, "SELECT built_with FROM vector_indexes") == [(128,)]
        assert [h.fact.id for h in mem.recall(REF, "camera hotel", top_k=4, mode="vector")] == (
            before
        )
        mem.restore(REF, facts[0].id)
        assert mem.recall(REF, TEXTS[0], top_k=1, mode="vector")[0].fact.id == facts[0].id


def test_the_extracted_relations_of_a_store_from_before_are_the_llm_s(db_path: Path) -> None:
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        fact = mem.remember(REF, "Ana met Bo at the market.")
        mem.graph.upsert_entity(REF, "Ana")
        asserted = mem.graph.upsert_relation(REF, "Ana", "Bo", "knows", facts=[fact.id])
        modelled = mem.graph.upsert_relation(REF, "Bo", "Ana", "knows", facts=[fact.id])
    stores.before_grounding_flags(db_path)  # 24's
    conn = sqlite3.connect(db_path)
    conn.execute("ALTER TABLE relations DROP COLUMN extractor")
    # Before migration 23 only the llm extractor extracted relations.
    conn.execute("UPDATE relations SET origin = 'extracted' WHERE id = ?", (modelled.id,))
    conn.execute("PRAGMA user_version = 22")
    conn.commit()
    conn.close()
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        by_id = {r.id: r.extractor for r in mem.graph.relations(REF)}
        assert by_id == {asserted.id: None, modelled.id: "llm"}


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


def test_a_content_hash_is_kept_in_22_characters_and_still_tells_duplicates_apart(
    target: stores.Target,
) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        first, second = mem.remember_many(REF, ["the cat sleeps", "the dog barks"])
        assert mem.remember(REF, "the  cat sleeps").id == first.id  # the same words, once
        with pytest.raises(engram.Conflict):
            mem.correct(REF, second.id, "the cat sleeps")  # another fact holds these words
        changed = mem.correct(REF, second.id, "the dog sleeps")
        assert mem.remember(REF, "the dog sleeps").id == changed.id
        assert mem.remember(REF, "the dog barks").id != second.id  # its old words are free
    held = stores.rows(target, "SELECT content, content_hash FROM facts ORDER BY seq")
    assert [digest for _, digest in held] == [stored_digest(content_hash(text)) for text, _ in held]
    assert {len(digest) for _, digest in held} == {22}


def test_fact_ids_made_later_sort_after(target: stores.Target) -> None:
    """So the indexes keyed by a fact's id grow at their end (a write into a large scope
    rewrote most of their pages when ids were wholly random); each still unique, and
    nothing of the words in it."""
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        written = [f.id for f in mem.remember_many(REF, [f"first batch {i}" for i in range(300)])]
        written += [f.id for f in mem.remember_many(REF, [f"second batch {i}" for i in range(300)])]
        written.append(mem.remember(REF, "one more").id)
        copy = mem.fork(REF, "copy").ref
        copied = [f.id for f in mem.facts(copy, limit=1000).facts]
    assert written == sorted(written) and len(set(written)) == len(written)
    assert all(re.fullmatch(r"f_[0-9a-f]{24}", i) for i in written)
    assert min(copied) > written[-1]
    seq_order = stores.rows(target, "SELECT id FROM facts WHERE scope = ? ORDER BY seq", (REF.key,))
    assert [r[0] for r in seq_order] == written


def test_a_batch_s_ids_are_made_at_once_in_the_order_they_sort() -> None:
    from engram.core import rules

    ids = rules.new_fact_ids(2_000)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"f_[0-9a-f]{24}", i) for i in ids)
    assert len({i[:14] for i in ids}) == 1  # one microsecond's, random bits after it
    assert len({i[14:] for i in ids}) == len(ids)
    assert rules.new_fact_ids(0) == []


def test_a_store_of_full_content_hashes_is_rewritten_once(target: stores.Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        kept, trashed = mem.remember_many(REF, ["the cat sleeps", "the dog barks"])
        mem.forget(REF, trashed.id)
    for table in ("facts", "fact_trash"):  # as every store before this one kept them
        for fact_id, text in stores.rows(target, f"SELECT id, content FROM {table}"):
            full = content_hash(text)
            stores.rows(
                target, f"UPDATE {table} SET content_hash = ? WHERE id = ?", (full, fact_id)
            )
    if stores.is_postgres(target):
        stores.as_postgres_schema_14(str(target))
        stores.rows(target, "DELETE FROM engram_schema WHERE version = 14")
    else:
        stores.before_grounding_flags(target)  # 24's
        stores.rows(target, "ALTER TABLE vector_indexes DROP COLUMN built_with")  # 21's
        stores.rows(target, "ALTER TABLE mentions DROP COLUMN type")  # 22's
        stores.rows(target, "ALTER TABLE relations DROP COLUMN extractor")  # 23's
        stores.rows(target, "PRAGMA user_version = 19")
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        assert mem.remember(REF, "the cat sleeps").id == kept.id
        restored = mem.restore(REF, trashed.id)
        assert mem.remember(REF, "the dog barks").id == restored.id
    for table in ("facts", "fact_trash"):
        held = stores.rows(target, f"SELECT content, content_hash FROM {table}")
        assert [d for _, d in held] == [stored_digest(content_hash(t)) for t, _ in held]


def full_hashes(target: stores.Target) -> None:
    """Rewrites the store's content hashes whole, as every store before 22 characters
    kept them."""
    for table in ("facts", "fact_trash"):
        for fact_id, text in stores.rows(target, f"SELECT id, content FROM {table}"):
            update = f"UPDATE {table} SET content_hash = ? WHERE id = ?"
            stores.rows(target, update, (content_hash(text), fact_id))


def test_the_rules_groundings_of_a_store_from_before_become_flags_when_read_again(
    target: stores.Target,
) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        fact = mem.remember(REF, "Ana Lima flew to Porto.")
    stores.before_grounding_flags(target)  # the rules' groundings as rows, as before
    if stores.is_postgres(target):
        stores.rows(target, "DELETE FROM engram_schema WHERE version >= 20")
    else:
        stores.rows(target, "PRAGMA user_version = 23")
    rules_rows = "SELECT count(*) FROM groundings WHERE extractor = 'rules'"
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        ana, porto = mem.graph.entity(REF, "Ana Lima"), mem.graph.entity(REF, "Porto")
        assert stores.rows(target, rules_rows) == [(2,)]  # kept as they were
        assert mem.health(REF, graph_drift=True).graph.drift == GraphDrift(
            facts_read=1, entities=NOTHING, mentions=NOTHING, groundings=NOTHING
        )
        mem.graph.extract(REF)  # read again: the rows become flags
        assert stores.rows(target, rules_rows) == [(0,)]
        assert stores.groundings(target, "rules") == {(fact.id, ana.id), (fact.id, porto.id)}
        assert mem.graph.entity(REF, "Ana Lima").id == ana.id
        mem.forget(REF, fact.id, hard=True)  # no grounding left: both go
        assert mem.graph.search(REF, "Ana Lima") == [] and mem.graph.search(REF, "Porto") == []
