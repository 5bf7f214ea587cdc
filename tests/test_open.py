from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import engram
import stores
from engram import InvalidInput, StorageFailure


def test_open_creates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with engram.open(path, embedder=None):
        pass
    assert path.exists()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing-dir" / "e.db", "does not exist"),
        (lambda p: p, "is a directory"),
        (lambda p: p / "file.txt" / "e.db", "not a directory"),
    ],
)
def test_bad_paths_fail_at_open_naming_the_path(tmp_path: Path, make: object, message: str) -> None:
    (tmp_path / "file.txt").write_text("x")
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(StorageFailure, match=message) as caught:
        engram.open(path, embedder=None)
    assert str(path) in caught.value.message


def test_a_file_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(StorageFailure, match=str(path)):
        engram.open(path, embedder=None)
    assert path.read_bytes().startswith(b"this is not a database")


def test_an_unwritable_directory_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    with stores.unwritable(locked), pytest.raises(StorageFailure, match="not writable"):
        engram.open(locked / "e.db", embedder=None)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    from engram.storage.sqlite.driver import sqlite3

    path = tmp_path / "future.db"
    with engram.open(path, embedder=None):
        pass
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    with pytest.raises(StorageFailure, match="schema version 999"):
        engram.open(path, embedder=None)


def test_a_path_must_be_a_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="path"):
        engram.open(42, embedder=None)  # type: ignore[arg-type]


def test_unknown_embedder_name(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="embedder"):
        engram.open(tmp_path / "e.db", embedder="openai")  # type: ignore[arg-type]


def test_closed_store_refuses(tmp_path: Path) -> None:
    memory = engram.open(tmp_path / "e.db", embedder=None)
    memory.close()
    with pytest.raises(StorageFailure, match="closed"):
        memory.working.list(engram.ResourceRef("x"))


def _foreign(path: Path, journal: str, *pragmas: str) -> None:
    """Another application's SQLite database: its own table, its own settings."""
    from engram.storage.sqlite.driver import sqlite3

    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    for pragma in pragmas:
        conn.execute(pragma)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me as I am')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("journal", "pragmas"),
    [
        ("delete", ()),
        ("wal", ()),
        ("delete", ("PRAGMA user_version = 7",)),  # an application that versions its schema
        ("delete", ("PRAGMA application_id = 42",)),  # one that marks its files
    ],
)
def test_another_applications_sqlite_file_is_refused_unchanged(
    tmp_path: Path, journal: str, pragmas: tuple[str, ...]
) -> None:
    from engram.storage.sqlite.driver import sqlite3

    (tmp_path / "theirs").mkdir()
    path = tmp_path / "theirs" / "theirs.db"
    _foreign(path, journal, *pragmas)
    before = path.read_bytes()
    with pytest.raises(StorageFailure, match="another application's SQLite database") as caught:
        engram.open(path, embedder=None)
    assert str(path) in caught.value.message
    assert path.read_bytes() == before
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == journal
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        assert tables == ["notes"]
    finally:
        conn.close()
    if journal != "wal":  # a reader of a WAL database makes its -wal and -shm; no other does
        assert sorted(p.name for p in path.parent.iterdir()) == ["theirs.db"]


def test_a_store_is_stamped_and_one_from_before_the_stamp_still_opens(tmp_path: Path) -> None:
    from engram.storage.sqlite.driver import sqlite3
    from engram.storage.sqlite.schema import APPLICATION_ID

    path = tmp_path / "e.db"
    with engram.open(path, embedder=None) as memory:
        memory.working.set(engram.ResourceRef("r"), "k", 1)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.execute("PRAGMA application_id = 0")  # as stores made before the stamp are
    conn.commit()
    conn.close()
    with engram.open(path, embedder=None) as memory:
        assert memory.working.get(engram.ResourceRef("r"), "k") == 1
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "touched.db"
    path.touch()
    with engram.open(path, embedder=None) as memory:
        memory.working.set(engram.ResourceRef("r"), "k", 1)


HOLDER = """
import sys
from engram.storage.sqlite.driver import sqlite3
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT count(*) FROM facts").fetchone()  # open, as a running service has it
print("ready", flush=True)
sys.stdin.read()  # holds the file until stdin closes
"""


def test_a_migration_refuses_while_another_process_has_the_store_open(tmp_path: Path) -> None:
    from engram.storage.sqlite.driver import sqlite3
    from engram.storage.sqlite.schema import APPLICATION_ID, MIGRATIONS, _statements, functions

    path = tmp_path / "older.db"  # a store one migration behind this engram
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    functions(conn)
    for script in MIGRATIONS[:-1]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        with pytest.raises(engram.Conflict, match=f"in use by pid {holder.pid}") as caught:
            engram.open(path, embedder=None)
        assert f"schema version {len(MIGRATIONS) - 1} to {len(MIGRATIONS)}" in caught.value.message
        assert stores.rows(path, "PRAGMA user_version") == [(len(MIGRATIONS) - 1,)]
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=120)
    with engram.open(path, embedder=None):  # alone now: migrated
        pass
    assert stores.rows(path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
