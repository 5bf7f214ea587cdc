"""The two ways the full-text half reaches a scope must agree, and the counts that choose
between them must stay exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import engram
import stores
from engram import Note, ResourceRef
from engram.core.models import Filters
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import text_candidates_sql
from stores import Target


def _ranked(db_path: Path, scope: ResourceRef, terms: list[str], outside: int) -> list[str]:
    sql, params = text_candidates_sql(terms, scope.key, Filters(), 10, outside)
    conn = sqlite3.connect(db_path)
    try:
        return [row[0] for row in conn.execute(sql, params)]
    finally:
        conn.close()


def test_without_the_scope_token_the_same_rows_come_back(db_path: Path) -> None:
    """SQLite's FTS5 scope token (PostgreSQL filters its GIN matches by scope instead)."""
    with engram.open(db_path, embedder=engram.HashingEmbedder(64)) as mem:
        _scope_token_paths_agree(mem, db_path)


def _scope_token_paths_agree(mem: engram.Memory, db_path: Path) -> None:
    big, small = ResourceRef("big"), ResourceRef("small")
    mem.remember_many(big, [f"apple note number {i}" for i in range(40)])
    # the other scope's facts rank above every one of big's for this query
    mem.remember_many(small, [f"apple apple apple {i}" for i in range(5)])
    narrowed = _ranked(db_path, big, ["apple"], outside=10**9)
    whole = _ranked(db_path, big, ["apple"], outside=5)
    assert whole == narrowed and len(whole) == 10
    stored = {f.id for f in mem.facts(big, limit=1000).facts}
    assert set(whole) <= stored
    hits = mem.recall(small, "apple", mode="text", top_k=10)
    assert {h.fact.scope for h in hits} == {small}


def _counts(target: Target) -> tuple[dict[str, int], dict[str, int]]:
    kept = dict(stores.rows(target, "SELECT scope, facts FROM scope_state WHERE facts != 0"))
    real = dict(stores.rows(target, "SELECT scope, count(*) FROM facts GROUP BY scope"))
    return kept, real


def test_fact_counts_follow_every_change(mem: engram.Memory, target: Target) -> None:
    ref = ResourceRef("counted")
    old = datetime.now(UTC) - timedelta(days=90)
    facts = mem.remember_many(ref, [Note(f"fact {i}", created_at=old) for i in range(3)])
    mem.remember_many(ref, ["fresh one", "fresh two", "fresh one"])  # a duplicate too
    mem.forget(ref, facts[0].id)
    mem.forget(ref, facts[0].id)  # already gone
    mem.correct(ref, facts[1].id, "fact one, corrected")
    child = mem.fork(ref, "child").ref
    mem.remember(child, "only in the child")
    assert mem.compact(ref, max_age=timedelta(days=30)).removed == 2
    assert mem.compact(child, max_facts=2).removed == 3
    kept, real = _counts(target)
    assert kept == real
    mem.forget_all(child, expected_count=2)
    kept, real = _counts(target)
    assert kept == real == {ref.key: 2}
