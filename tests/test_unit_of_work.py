"""The unit of work every capability stands on: one transaction for many writes, nested
ones as savepoints, work after the commit, one snapshot for a read, and recall's copies
following any write path."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

import engram
from engram import ResourceRef
from engram.core.agents import Agent
from engram.core.clock import from_us, now_us
from engram.core.errors import StorageFailure
from engram.core.models import LIBRARY
from engram.core.ports import Store, Tx
from engram.storage.sql.dialect import SQLITE
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import scope_token
from engram.storage.sqlite.store import SQLiteStore
from stores import Target

REF = ResourceRef("unit")


class Boom(Exception):
    pass


def _agent(name: str) -> Agent:
    return Agent(f"a_{name}", name, ResourceRef(name), None, from_us(now_us()))


def _keys(store: Store) -> list[str]:
    page = store.run(lambda tx: store.working.page(tx, REF, None, 100, now_us()), write=False)
    return [entry.key for entry in page]


def _put(store: Store, tx: Tx, key: str) -> None:
    """A working key written as the core writes: inside a ledger entry."""
    store.ledger.begin(tx, REF, "test", LIBRARY, now_us())
    store.working.put(tx, REF, key, '"v"', 1, now_us(), None)


def test_writes_in_one_transaction_commit_together_or_not_at_all(mem: engram.Memory) -> None:
    store = mem._store
    with pytest.raises(Boom), store.transaction() as tx:
        _put(store, tx, "a")
        store.agents.insert(tx, _agent("one"))
        raise Boom
    assert _keys(store) == []
    assert store.run(lambda tx: store.agents.get(tx, "a_one"), write=False) is None
    with store.transaction() as tx:
        _put(store, tx, "a")
        store.agents.insert(tx, _agent("one"))
    assert _keys(store) == ["a"]
    assert store.run(lambda tx: store.agents.get(tx, "a_one"), write=False) is not None


def test_a_nested_transaction_is_a_savepoint_undone_alone(mem: engram.Memory) -> None:
    store = mem._store
    ran: list[str] = []
    with store.transaction() as outer:
        _put(store, outer, "kept")
        outer.after_commit(lambda: ran.append("outer"))
        with pytest.raises(Boom), store.transaction() as inner:
            assert inner is outer  # the same connection, one transaction
            _put(store, inner, "undone")
            inner.after_commit(lambda: ran.append("undone"))
            raise Boom
        with store.transaction() as inner:
            _put(store, inner, "nested")
            inner.after_commit(lambda: ran.append("nested"))
        # A run inside a transaction is part of it, run once.
        store.run(lambda tx: _put(store, tx, "ran"))
        assert ran == []  # nothing runs before the outermost commit
    assert _keys(store) == ["kept", "nested", "ran"]
    assert ran == ["outer", "nested"]  # the undone savepoint's work went with it


def test_work_after_commit_never_runs_after_a_rollback(mem: engram.Memory) -> None:
    store = mem._store
    ran: list[str] = []
    with pytest.raises(Boom), store.transaction() as tx:
        tx.after_commit(lambda: ran.append("x"))
        raise Boom
    assert ran == []


def test_work_before_commit_runs_inside_the_outermost_transaction_once_it_is_done(
    mem: engram.Memory,
) -> None:
    """What settles a transaction's writes (the graph reading the facts they queued)
    runs in it, just before it commits: after all its work, in order, including what
    that work adds; a rolled-back savepoint's goes with it; one that raises rolls the
    whole transaction back."""
    store = mem._store
    ran: list[str] = []
    with store.transaction() as tx:
        _put(store, tx, "work")
        tx.before_commit(lambda: ran.append("first"))
        with pytest.raises(Boom), store.transaction() as inner:
            inner.before_commit(lambda: ran.append("undone"))
            raise Boom

        def settles() -> None:
            _put(store, tx, "settled")  # it may still write: the transaction is open
            tx.before_commit(lambda: ran.append("added"))

        tx.before_commit(settles)
        assert ran == []  # not before the work is done
    assert ran == ["first", "added"]
    assert _keys(store) == ["settled", "work"]

    def fails() -> None:
        raise Boom

    with pytest.raises(Boom), store.transaction() as tx:
        _put(store, tx, "never")
        tx.before_commit(fails)
    assert "never" not in _keys(store)


def test_a_read_transaction_sees_one_snapshot(mem: engram.Memory, target: Target) -> None:
    store = mem._store
    mem.remember(REF, "first fact")
    with (
        engram.open(target, embedder=engram.HashingEmbedder(64)) as other,
        store.transaction(write=False) as tx,
    ):
        assert store.facts.count(tx, REF) == 1
        other.remember(REF, "second fact")  # committed by another connection
        assert store.facts.count(tx, REF) == 1
        with pytest.raises(StorageFailure, match="read-only"), store.transaction():
            pass
    assert mem.count(REF) == 2


def test_recall_reads_one_snapshot_while_facts_are_forgotten(
    mem: engram.Memory, target: Target
) -> None:
    """Recall's candidates and rows come from one snapshot: a fact forgotten between them
    can never leave a hit without its row, so recall gives ``top_k`` while enough facts
    remain."""
    kept = mem.remember_many(REF, [f"kept fact about apples {i}" for i in range(40)])
    doomed = mem.remember_many(REF, [f"doomed fact about apples {i}" for i in range(160)])
    assert len(kept) == 40
    failures: list[BaseException] = []

    def forget() -> None:
        try:
            with engram.open(target, embedder=engram.HashingEmbedder(64)) as other:
                for fact in doomed:
                    other.forget(REF, fact.id)
        except BaseException as exc:  # surfaced below
            failures.append(exc)

    forgetter = threading.Thread(target=forget)
    forgetter.start()
    recalls = 0
    while forgetter.is_alive() or recalls < 10:
        for mode in ("hybrid", "vector", "text"):
            hits = mem.recall(REF, "fact about apples", top_k=30, mode=mode)  # type: ignore[arg-type]
            assert len(hits) == 30, (mode, len(hits))
        recalls += 1
    forgetter.join()
    assert not failures
    assert mem.count(REF) == 40


def _raw(db_path: object) -> sqlite3.Connection:
    return sqlite3.connect(str(db_path), isolation_level=None)


def test_recall_follows_a_write_path_it_was_never_told_of(db_path: object) -> None:
    """The copies a SQLite store recalls from follow what the file records of its own
    changes: facts written, rewritten and deleted by plain SQL are recalled as they are."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(db_path, embedder=embedder) as mem:  # type: ignore[arg-type]
        store = mem._store
        assert isinstance(store, SQLiteStore)
        store.texts.index_above = 1  # rank full text from memory from the first fact
        store.texts.load_inline = True
        mem.remember_many(REF, [f"ordinary note {i}" for i in range(20)])
        assert len(mem.recall(REF, "note", top_k=50, mode="text")) == 20  # copies loaded
        assert len(mem.recall(REF, "note", top_k=50, mode="vector")) == 20
        assert store.texts.held(REF.key) is not None
        assert store.vectors.held(REF.key) is not None

        conn = _raw(db_path)
        vector = embedder.embed(["zeppelin hangar"], "passage")[0]
        conn.execute("BEGIN IMMEDIATE")
        seq = conn.execute(
            "INSERT INTO facts (id, scope, scope_token, content, content_hash, created_at, "
            "updated_at) VALUES ('f_raw', ?, ?, 'zeppelin hangar', 'h', ?, ?) RETURNING seq",
            (REF.key, scope_token(REF.key), now_us(), now_us()),
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO fact_vectors (fact, vector) VALUES (?, ?)",
            (seq, SQLITE.vector(vector)),
        )
        conn.execute("COMMIT")
        assert [h.fact.id for h in mem.recall(REF, "zeppelin", top_k=1, mode="text")] == ["f_raw"]
        query = "zeppelin hangar"
        assert mem.recall(REF, query, top_k=1, mode="vector")[0].fact.id == "f_raw"

        conn.execute("UPDATE facts SET content = 'airship dock' WHERE id = 'f_raw'")
        assert mem.recall(REF, "zeppelin", top_k=5, mode="text") == []
        assert [h.fact.id for h in mem.recall(REF, "airship", top_k=5, mode="text")] == ["f_raw"]
        other = embedder.embed(["completely different"], "passage")[0]
        conn.execute(
            "UPDATE fact_vectors SET vector = ? WHERE fact = ?",
            (SQLITE.vector(other), seq),
        )
        hit = mem.recall(REF, "completely different", top_k=1, mode="vector")[0]
        assert hit.fact.id == "f_raw" and hit.score == pytest.approx(1.0, abs=1e-5)

        conn.execute("DELETE FROM facts WHERE id = 'f_raw'")
        assert mem.recall(REF, "airship", top_k=5, mode="text") == []
        found = mem.recall(REF, "completely different", top_k=50, mode="vector")
        assert "f_raw" not in {h.fact.id for h in found} and len(found) == 20
        conn.close()


def test_the_clock_is_the_memory_s_own(target: Target, clock: object) -> None:
    from stores import ManualClock

    assert isinstance(clock, ManualClock)
    with engram.open(target, embedder=engram.HashingEmbedder(8), clock=clock) as mem:
        clock.advance(timedelta(days=400))
        fact = mem.remember(REF, "from the future")
        assert fact.created_at == from_us(clock.now)
        assert mem.compact(REF, max_age=timedelta(days=1)).removed == 0
        clock.advance(timedelta(days=2))
        assert mem.compact(REF, max_age=timedelta(days=1)).expired == [fact.id]
