from __future__ import annotations

import os
from pathlib import Path

import pytest

import engram
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


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_directory_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(StorageFailure, match="not writable"):
        engram.open(locked / "e.db", embedder=None)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    import sqlite3

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
