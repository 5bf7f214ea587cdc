"""A store held by someone else past its timeouts answers Unavailable (503, retryable),
never a storage failure (500): SQLite's lock held by another connection, PostgreSQL's
pool with no free connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.settings import Settings
from engram.storage.postgres import database as pg_database
from engram.storage.sqlite import database as sqlite_database
from stores import Target

REF = engram.ResourceRef("user-42")


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Timeouts of a fraction of a second, and a PostgreSQL pool of one connection."""
    monkeypatch.setattr(sqlite_database, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(sqlite_database, "RETRY_FOR_S", 0.2)
    monkeypatch.setattr(pg_database, "POOL_SIZE", 1)
    monkeypatch.setattr(pg_database, "POOL_TIMEOUT_S", 0.2)


@contextmanager
def held(target: Target, memory: engram.Memory) -> Iterator[None]:
    """The SQLite file's write lock held by another connection, or the store's only
    pooled PostgreSQL connection taken."""
    if stores.is_postgres(target):
        with memory._store.db._pool.connection():  # type: ignore[attr-defined]
            yield
        return
    # through the store's own SQLite library: two copies of SQLite in one process do not
    # see each other's locks
    other = sqlite_database.Database(str(target))
    conn = other.connection()
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        other.close()


def test_a_held_store_is_unavailable_then_serves_again(target: Target, short_waits: None) -> None:
    with engram.open(target, embedder=None) as memory:
        memory.working.set(REF, "plan", 1)
        with held(target, memory), pytest.raises(engram.Unavailable) as caught:
            memory.working.set(REF, "plan", 2)
        assert caught.value.code == "unavailable" and caught.value.hint
        assert "retry" in caught.value.hint
        assert memory.working.get(REF, "plan") == 1  # nothing was written
        memory.working.set(REF, "plan", 3)
        assert memory.working.get(REF, "plan") == 3


def test_a_held_store_answers_503_over_http(target: Target, short_waits: None) -> None:
    memory = engram.open(target, embedder=None)
    settings = Settings(db_path=str(target), embedder="none")
    with TestClient(create_app(settings, memory_store=memory)) as client:
        agent = client.post("/agents", json={"name": "planner"}).json()["id"]
        with held(target, memory):
            answer = client.put(f"/agents/{agent}/memory/goal", json={"value": "ship"})
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "unavailable"
        assert client.get(f"/agents/{agent}/memory/goal").status_code == 404
        assert client.put(f"/agents/{agent}/memory/goal", json={"value": "ship"}).is_success
    memory.close()


def test_a_write_of_this_process_held_past_the_timeouts_is_unavailable(
    db_path: Path, short_waits: None
) -> None:
    """The writers of one process take turns on a mutex before SQLite's lock: a turn not
    given within the waits answers Unavailable too, and the next turn is served."""
    with engram.open(db_path, embedder=None) as memory:
        holding, release = threading.Event(), threading.Event()

        def hold() -> None:
            with memory._store.transaction():  # type: ignore[attr-defined]
                holding.set()
                assert release.wait(60)

        holder = threading.Thread(target=hold)
        holder.start()
        assert holding.wait(60)
        try:
            with pytest.raises(engram.Unavailable, match="another write of this process"):
                memory.working.set(REF, "plan", 1)
        finally:
            release.set()
            holder.join(60)
        memory.working.set(REF, "plan", 2)
        assert memory.working.get(REF, "plan") == 2
