"""Shared fixtures: real stores (a SQLite file in a temporary directory, a fresh database
on a real PostgreSQL server started for the session) and real embedders.

``target`` is the contract fixture: every test that takes it (or ``mem``/``local_mem``)
runs once per backend.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import engram
import postgres_server
from engram.embedders import packaged
from engram.embedders.local import LocalEmbedder
from engram.storage.sqlite.store import SQLiteStore
from stores import ManualClock, Target


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the machine has cores. Much of the suite waits
    (on services it starts, on PostgreSQL's round trips, on child processes), and a third
    worker fills those waits: 459 s against 490-497 s on two cores."""
    return (os.cpu_count() or 1) + 1


# Examples write to real files with fsync: their time follows the machine's load, so a
# per-example deadline would only measure the neighbours.
settings.register_profile("engram", deadline=None)
settings.load_profile("engram")


@pytest.fixture(autouse=True)
def _own_working_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test runs in a directory of its own (beside its tmp_path, not in it), so a
    relative path (the CLI's default store, ./engram.db) lands there, never in the
    checkout that parallel runs share."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The packaged model, as every store of the process shares it (loading costs ~0.4 s)."""
    loaded = packaged.load("local")
    assert isinstance(loaded, LocalEmbedder)
    return loaded


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A SQLite file, for tests of what only the SQLite backend has."""
    return tmp_path / "engram.db"


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[str]:
    """A superuser URL of a PostgreSQL 16 + pgvector server, started on first use."""
    with postgres_server.running_server() as url:
        yield url
        postgres_server.drop_spares(url)


@pytest.fixture
def postgres_url(postgres_admin: str) -> Iterator[str]:
    """A fresh, empty database on the session's server; dropped afterwards."""
    url = postgres_server.create_database(postgres_admin)
    yield url
    postgres_server.drop_database(postgres_admin, url)


@pytest.fixture
def postgres_store_url(postgres_admin: str) -> Iterator[str]:
    """A database holding engram's schema and no row: a copy of a migrated template, or
    one an earlier test of this process gave back emptied (its shape unchanged);
    emptied or dropped afterwards. (Opening it migrates nothing: ``postgres_url`` is the
    empty one, for tests of migrating.)"""
    url = postgres_server.store_database(postgres_admin)
    yield url
    postgres_server.give_back(postgres_admin, url)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def target(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    """Where a store lives on this backend: a SQLite file, or a PostgreSQL URL."""
    if backend == "postgres":
        return str(request.getfixturevalue("postgres_store_url"))
    return tmp_path / "engram.db"


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves, for anything that expires: no test sleeps for a TTL."""
    return ManualClock()


@pytest.fixture
def hashing() -> engram.HashingEmbedder:
    return engram.HashingEmbedder(64)


@pytest.fixture
def mem(target: Target, hashing: engram.HashingEmbedder) -> Iterator[engram.Memory]:
    """A store with the deterministic embedder, for tests that assert exact order."""
    with engram.open(target, embedder=hashing) as memory:
        yield memory


@pytest.fixture
def local_mem(target: Target, local_embedder: LocalEmbedder) -> Iterator[engram.Memory]:
    """A store with the real local model, for tests about meaning."""
    with engram.open(target, embedder=local_embedder) as memory:
        yield memory


@pytest.fixture
def ref() -> engram.ResourceRef:
    return engram.ResourceRef("user-42")


@pytest.fixture
def indexed_and_plain(
    db_path: Path,
) -> Iterator[tuple[engram.Memory, SQLiteStore, SQLiteStore]]:
    """Two stores on one SQLite file: the first keeps its in-memory copies (postings from
    100 facts on), the second always runs the full-text statement."""
    with (
        engram.open(db_path, embedder=engram.HashingEmbedder(16)) as indexed,
        engram.open(db_path, embedder=engram.HashingEmbedder(16)) as plain,
    ):
        fast, slow = indexed._store, plain._store
        assert isinstance(fast, SQLiteStore) and isinstance(slow, SQLiteStore)
        fast.texts.index_above = 100
        fast.texts.load_inline = True  # the first search loads them: tests see it answer
        slow.texts.index_above = 1 << 62
        yield indexed, fast, slow


@pytest.fixture
def based(
    indexed_and_plain: tuple[engram.Memory, SQLiteStore, SQLiteStore],
) -> tuple[engram.Memory, SQLiteStore, SQLiteStore]:
    """:func:`indexed_and_plain`, the first store saving a base for scopes from 100 facts
    on (every term ten of them hold)."""
    fast = indexed_and_plain[1]
    assert fast.texts.bases is not None
    fast.texts.bases.above, fast.texts.bases.term_rows = 100, 10
    return indexed_and_plain
