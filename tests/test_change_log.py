"""The change log: in-memory copies of a scope revise themselves by the facts a forget or
correction touched, are rebuilt when the log was cleared past them, and the log stays
bounded."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

import engram
import stores
from engram import Memory, ResourceRef
from engram.core import query
from engram.core.models import Filters
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.schema import LOG_FLOOR, MIGRATIONS
from engram.storage.sqlite.store import SQLiteStore
from stores import UNDO_CHANGE_LOG, all_facts, as_schema_18

BIG = ResourceRef("big")
WORDS = "camera flight hotel budget garden server ticket party repair phone".split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(2, 6))) + f" n{rng.randint(0, 10**9)}"


def both_halves(mem: Memory, fast: SQLiteStore, slow: SQLiteStore) -> None:
    """Asks both copies, and checks them against the statement and an exact search."""
    for text in ("camera flight", "budget", "party repair phone"):
        every = stores.text_candidates(slow, BIG, query.terms(text), Filters(), 1000)
        assert stores.text_candidates(fast, BIG, query.terms(text), Filters(), 1000) == every
        hits = mem.recall(BIG, text, top_k=5, mode="vector")
        assert [h.fact.id for h in hits] == exact_vector_ids(mem, text, 5)


def exact_vector_ids(mem: Memory, text: str, k: int) -> list[str]:
    assert mem.embedder is not None
    q = mem.embedder.embed([text], "query")[0]
    facts = all_facts(mem, BIG)
    vectors = mem.embedder.embed([f.content for f in facts], "passage")
    scored = sorted(
        zip(facts, vectors @ q, strict=True), key=lambda p: (-float(p[1]), p[0].created_at)
    )
    return [f.id for f, _ in scored[:k]]


def test_a_forget_revises_both_copies_from_the_log_alone(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(1)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    both_halves(mem, fast, slow)
    text_copy, vector_copy = fast.texts.held(BIG.key), fast.vectors.held(BIG.key)
    assert text_copy is not None and vector_copy is not None

    mem.forget(BIG, facts[7].id)
    mem.correct(BIG, facts[8].id, "camera camera flight hotel")
    statements: list[str] = []
    fast.db.connection().set_trace_callback(statements.append)
    both_halves(mem, fast, slow)
    fast.db.connection().set_trace_callback(None)

    assert any("FROM fact_changes" in s for s in statements)
    assert fast.texts.held(BIG.key) is text_copy  # revised, not rebuilt
    assert fast.vectors.held(BIG.key) is vector_copy
    assert mem.recall(BIG, "camera camera flight hotel", top_k=1)[0].fact.id == facts[8].id


def test_a_copy_behind_a_cleared_log_is_rebuilt(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(2)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(2 * LOG_FLOOR)])
    both_halves(mem, fast, slow)
    text_copy, vector_copy = fast.texts.held(BIG.key), fast.vectors.held(BIG.key)

    # Another process corrects one fact until the scope's log is cleared, then forgets
    # one more: the log now starts after this process's copies' mark.
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as elsewhere:
        for i in range(LOG_FLOOR + 1):
            elsewhere.correct(BIG, facts[0].id, f"garden server n{i}")
        elsewhere.forget(BIG, facts[1].id)
    conn = fast.db.connection()
    cleared_at, logged = conn.execute(
        "SELECT changes_from, logged FROM scope_state WHERE scope = ?", (BIG.key,)
    ).fetchone()
    assert cleared_at > 0 and logged == 1
    assert conn.execute("SELECT count(*) FROM fact_changes").fetchone()[0] == 1

    both_halves(mem, fast, slow)
    assert fast.texts.held(BIG.key) is not text_copy  # the log could not tell: rebuilt
    assert fast.vectors.held(BIG.key) is not vector_copy
    assert mem.fact(BIG, facts[0].id).content == f"garden server n{LOG_FLOOR}"


def test_the_log_stays_bounded(indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore]) -> None:
    mem, fast, _ = indexed_and_plain
    rng = random.Random(3)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(4 * LOG_FLOOR)])
    conn = fast.db.connection()

    def logged() -> int:
        return int(
            conn.execute(
                "SELECT count(*) FROM fact_changes WHERE scope = ?", (BIG.key,)
            ).fetchone()[0]
        )

    for fact in facts[: 3 * LOG_FLOOR]:
        mem.forget(BIG, fact.id)
        assert logged() <= max(LOG_FLOOR, mem.count(BIG) // 2)
    mem.forget_all(BIG, expected_count=mem.count(BIG))
    assert logged() == 0
    assert mem.recall(BIG, "camera", top_k=5) == []


def test_an_emptied_scope_keeps_no_log(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, _ = indexed_and_plain
    small = ResourceRef("small")
    facts = mem.remember_many(small, [f"camera note {i}" for i in range(20)])
    mem.forget(small, facts[0].id)
    conn = fast.db.connection()
    count = "SELECT count(*) FROM fact_changes WHERE scope = ?"
    assert conn.execute(count, (small.key,)).fetchone()[0] == 1  # under the floor: kept
    mem.forget_all(small, expected_count=19)
    assert conn.execute(count, (small.key,)).fetchone()[0] == 0


def test_a_file_from_before_the_log_is_migrated_and_logs_from_then_on(db_path: Path) -> None:
    rng = random.Random(4)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        facts = mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
        mem.forget(BIG, facts[0].id)
    conn = sqlite3.connect(db_path)
    as_schema_18(conn)
    conn.executescript(UNDO_CHANGE_LOG)
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        store = mem._store
        assert isinstance(store, SQLiteStore)
        store.texts.index_above = 100
        store.texts.load_inline = True
        conn = store.db.connection()
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert mem.recall(BIG, facts[1].content, top_k=3, mode="text")  # copies load
        hit = mem.recall(BIG, facts[1].content, top_k=1, mode="vector")[0]
        assert hit.fact.id == facts[1].id and hit.score == pytest.approx(1.0, abs=1e-3)
        seq = conn.execute("SELECT seq FROM facts WHERE id = ?", (facts[1].id,)).fetchone()[0]
        mem.forget(BIG, facts[1].id)
        assert conn.execute("SELECT scope, seq FROM fact_changes").fetchall() == [(BIG.key, seq)]
        found = [h.fact.id for h in mem.recall(BIG, facts[1].content, top_k=100, mode="text")]
        assert facts[1].id not in found and found  # the rest of its words still match


def test_copies_stay_exact_while_another_store_forgets_and_corrects(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    # The writer is a store of its own (its own connection and copies), as another
    # process would be; the reader revises its copies between the writer's commits.
    mem, fast, slow = indexed_and_plain
    rng = random.Random(5)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(400)])
    both_halves(mem, fast, slow)
    done = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as writer:
                for i, fact in enumerate(facts[:150]):
                    if i % 3 == 0:
                        writer.correct(BIG, fact.id, f"camera hotel n{i}")
                    else:
                        writer.forget(BIG, fact.id)
                    if i % 10 == 0:
                        writer.remember(BIG, f"flight budget n{i}")
        except BaseException as error:  # reported below, in the test's thread
            failures.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    while not done.is_set():
        mem.recall(BIG, "camera hotel flight", top_k=10)
    thread.join()
    assert not failures
    both_halves(mem, fast, slow)
    assert fast.texts.held(BIG.key) is not None
