"""The approximate index files a backup holds: copied as its snapshot names them, and
put back under new names as it is restored.

A file is changed in place after it is installed: the vector of a fact that leaves it is
overwritten with zeros after the commit (``approximate.scrub``), under the folder's lock,
as a file is installed or swept. A backup takes that lock before its read transaction
starts and copies the files its rows name before letting go: every overwrite done by then
belongs to a commit its snapshot holds, and one still to do is listed in its
``vector_scrubs``, done in the copy before it is kept. A forget that commits meanwhile
waits to overwrite until the copy is made, so the backup never holds zeros for a fact its
rows hold, nor an erased fact's vector.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from engram.core.errors import InvalidInput, StorageFailure
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import vectorfiles
from engram.storage.staging import attempt, check_digest, fsync, sha256

FOLDER = "vectors"  # in a backup, beside its copy of the database


def snapshot_with_files(conn: sqlite3.Connection, database: str, into: Path) -> dict[str, str]:
    """Begins a read transaction on ``conn`` whose snapshot the index files copied into
    ``into`` match, and returns their sha256 by name; the caller reads the rest of the
    snapshot and ends the transaction. A file that is missing or whose erased vectors
    cannot be overwritten in the copy is left out (the restored store builds its own)."""
    directory = vectorfiles.directory_of(database)
    while True:
        with _locked(directory) as locked:
            conn.execute("BEGIN")
            named = _named(conn)
            if not named or directory is None:
                return {}
            if locked:
                return {name: digest for name, digest in _copies(conn, directory, named, into)}
            if not directory.exists():  # the rows name files deleted with their folder
                return {}
            conn.execute("ROLLBACK")  # a build made the folder since: copy under its lock


@contextlib.contextmanager
def _locked(directory: Path | None) -> Iterator[bool]:
    """The folder's lock where the folder is (True), without making one where it is not."""
    if directory is None or not directory.is_dir():
        yield False
        return
    with vectorfiles.files_lock(directory):
        yield True


def _named(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    tables = _tables(conn)
    if "vector_indexes" not in tables:  # a store from before migration 18
        return []
    rows = conn.execute("SELECT file, size FROM vector_indexes ORDER BY file").fetchall()
    return [(str(file), int(size)) for file, size in rows]


def _copies(
    conn: sqlite3.Connection, directory: Path, named: list[tuple[str, int]], into: Path
) -> Iterator[tuple[str, str]]:
    from engram.storage.neighbours import usearch_module
    from engram.storage.sqlite.index import approximate

    if usearch_module() is None:  # no process here can read them, nor overwrite in them
        return
    scrubbing = "vector_scrubs" in _tables(conn)
    for name, size in named:
        source = directory / name
        if not source.is_file():
            continue
        into.mkdir(exist_ok=True)
        copy = into / name
        attempt(partial(shutil.copyfile, source, copy), f"cannot copy {source}")
        pending = (
            [
                int(r[0])
                for r in conn.execute("SELECT seq FROM vector_scrubs WHERE file = ?", (name,))
            ]
            if scrubbing
            else []
        )
        if pending and not approximate.overwrite(copy, pending, size):
            copy.unlink()
            continue
        fsync(copy)
        yield name, sha256(copy)


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def adopt(store: Path, files: dict[str, str]) -> dict[str, str]:
    """In ``store``, a restored copy: gives each index file the backup holds (``files``,
    by name) a new name, unlike any file of the store it replaces, and drops the rows of
    any other file (a backup from before files were kept holds none). Returns the new
    name of each file by its name in the backup."""
    renamed = {
        name: vectorfiles.file_name(vectorfiles.scope_of(name))
        for name in files
        if vectorfiles.NAME.fullmatch(name)
    }
    try:
        conn = sqlite3.connect(store, isolation_level=None)
        try:
            tables = _tables(conn)
            conn.execute("BEGIN IMMEDIATE")
            for table in ("vector_indexes", "vector_scrubs"):
                if table not in tables:  # a backup from before migration 18 (25) has none
                    continue
                for old, new in renamed.items():
                    conn.execute(f"UPDATE {table} SET file = ? WHERE file = ?", (new, old))
                conn.execute(
                    f"DELETE FROM {table} WHERE file NOT IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(renamed.values())),),
                )
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StorageFailure(f"cannot prepare the restored copy {store}: {exc}") from exc
    return renamed


@contextlib.contextmanager
def staged(
    backup: Path, renamed: dict[str, str], files: dict[str, str], database: Path
) -> Iterator[Path | None]:
    """The backup's index files (``renamed``: their new names) copied into a hidden folder
    in the folder of the store at ``database``, each checked against its sha256 in
    ``files``, until :func:`install` renames them in; None when there are none. The
    folder's lock is held meanwhile, and the folder removed after: one a restore cut
    short leaves is removed by the next sweep (:func:`vectorfiles.sweep`). Raises
    InvalidInput when a file is missing or changed since the backup was made,
    StorageFailure when one cannot be written."""
    directory = vectorfiles.directory_of(str(database))
    if not renamed or directory is None:
        yield None
        return
    made = not directory.exists()
    folder = directory / f"{vectorfiles.RESTORING}{secrets.token_hex(4)}"
    attempt(partial(directory.mkdir, parents=True, exist_ok=True), f"cannot write {directory}")
    try:
        with vectorfiles.held(vectorfiles.lock_of(folder)) as taken:
            assert taken  # a name of its own
            attempt(folder.mkdir, f"cannot write in {directory}")
            for name, new in renamed.items():
                _staged_copy(backup, name, folder / new, files[name])
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        vectorfiles.lock_of(folder).unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):  # left where anything else is in it now
                directory.rmdir()


def _staged_copy(backup: Path, name: str, copy: Path, digest: str) -> None:
    source = backup / FOLDER / name
    if not source.is_file():
        raise InvalidInput(f"{backup} is not a complete engram backup: it holds no {FOLDER}/{name}")
    attempt(partial(shutil.copyfile, source, copy), f"cannot copy {source}")
    check_digest(backup, f"{FOLDER}/{name}", copy, digest)
    fsync(copy)


def install(folder: Path) -> list[Path]:
    """Renames the files :func:`staged` put in ``folder`` into the store's folder (its
    parent); returns where they are. The store's rows name them once it is renamed in."""
    placed = []
    for path in sorted(folder.iterdir()):
        target = folder.parent / path.name
        attempt(partial(path.replace, target), f"cannot write {target}")
        placed.append(target)
    fsync(folder.parent)
    return placed


def keep(conn: sqlite3.Connection, database: Path, kept: Path) -> list[tuple[Path, Path]]:
    """Moves the index files the rows ``conn`` reads name from the folder of the store at
    ``database`` to that of ``kept``, its copy, whose rows name the same: a store being
    replaced, held under its exclusive lock. Returns each move, for :func:`put_back`."""
    source = vectorfiles.directory_of(str(database))
    target = vectorfiles.directory_of(str(kept))
    if source is None or target is None or not source.is_dir():
        return []
    moved: list[tuple[Path, Path]] = []
    try:
        for name, _ in _named(conn):
            if (source / name).is_file():
                attempt(partial(target.mkdir, exist_ok=True), f"cannot write {target}")
                attempt(partial((source / name).replace, target / name), f"cannot move {name}")
                moved.append((source / name, target / name))
    except BaseException:
        put_back(moved)
        raise
    if moved:
        fsync(target)
        fsync(source)
    return moved


def put_back(moved: list[tuple[Path, Path]]) -> None:
    """Undoes :func:`keep`'s moves (the store was not replaced after all)."""
    for origin, path in reversed(moved):
        path.replace(origin)
    if moved:
        with contextlib.suppress(OSError):  # left where anything else is in it
            moved[0][1].parent.rmdir()
