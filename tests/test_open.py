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


def _everything(path: Path) -> dict[str, object]:
    """A SQLite file's schema, settings and every table's rows (FTS5's own among them)."""
    from engram.storage.sqlite.driver import sqlite3

    conn = sqlite3.connect(path)
    try:
        schema = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        found: dict[str, object] = {"schema": schema}
        for setting in ("user_version", "application_id", "page_size", "journal_mode"):
            found[setting] = conn.execute(f"PRAGMA {setting}").fetchone()[0]
        found["integrity"] = conn.execute("PRAGMA integrity_check").fetchall()
        for _, name, _, sql in schema:
            if sql and sql.startswith("CREATE TABLE"):
                found[name] = sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall())
        return found
    finally:
        conn.close()


def test_a_new_store_is_a_copy_of_what_its_migrations_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.storage.sqlite import schema
    from engram.storage.sqlite.database import Database

    Database(tmp_path / "first.db").close()  # this process's image made, if not yet
    run: list[str] = []
    statements = schema._statements
    monkeypatch.setattr(schema, "_statements", lambda s: run.append(s) or statements(s))
    copied, migrated = tmp_path / "copied.db", tmp_path / "migrated.db"
    Database(copied).close()
    assert run == []  # no migration ran for it
    Database(migrated, copied=False).close()
    assert len(run) == len(schema.MIGRATIONS)
    assert _everything(copied) == _everything(migrated)
    assert copied.stat().st_mode == migrated.stat().st_mode  # the mode SQLite gives
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copied.db", "first.db", "migrated.db"]
    with engram.open(copied, embedder=engram.HashingEmbedder(64)) as memory:
        ref = engram.ResourceRef("r")
        fact = memory.remember(ref, "the copy holds facts")
        assert [h.fact.id for h in memory.recall(ref, "copy holds")] == [fact.id]
        memory.forget(ref, fact.id, hard=True)
        assert memory.recall(ref, "copy holds") == []


def test_a_copy_never_takes_a_path_that_another_filled_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.storage.sqlite import newfile
    from engram.storage.sqlite.database import Database

    target = tmp_path / "e.db"

    def another_makes_it_meanwhile(path: str) -> Database:
        made = Database(path, copied=False)
        Database(target, copied=False).close()  # as another process would, and writes
        stores.rows(target, "INSERT INTO meta (key, value) VALUES ('whose', 'theirs')")
        return made

    monkeypatch.setattr(newfile, "_made", [])  # this process makes its image now, beside
    assert not newfile.place(str(target), another_makes_it_meanwhile)
    assert stores.rows(target, "SELECT value FROM meta WHERE key = 'whose'") == [("theirs",)]
    with engram.open(target, embedder=None):
        pass
    (tmp_path / "w.db-wal").write_bytes(b"")  # a log left of a store once there
    assert not newfile.place(str(tmp_path / "w.db"), another_makes_it_meanwhile)
    assert not (tmp_path / "w.db").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.db", "w.db-wal"]  # no copy left
