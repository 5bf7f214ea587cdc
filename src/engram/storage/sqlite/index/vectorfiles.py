"""The folder of a SQLite store's approximate vector indexes, and what keeps it clean.

Each large scope's index is one file, ``<scope hash>-<random>.usearch``, named by the
scope's ``vector_indexes`` row (migration 18); a build writes ``<file>.part`` first while
holding ``<scope hash>.lock``. Numpy-free, so a process that only writes can still delete,
at each commit that forgot something, every file no row names.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SUFFIX = ".usearch"
PARTIAL = ".part"
NAME = re.compile(r"[0-9a-f]{24}-[0-9a-f]{12}\.usearch")  # what file_name gives
RESTORING = ".restoring-"  # a restore's folder of the files it puts in (snapshots.staged)


def directory_of(database: str) -> Path | None:
    """Where a database's index files live; None for a store with no file."""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(f"{database}-vectors")


def scope_name(scope: str) -> str:
    """The part of a scope's file names that says whose they are."""
    return hashlib.sha256(scope.encode("utf-8")).hexdigest()[:24]


def file_name(scope_name: str) -> str:
    """A new file name for the scope whose :func:`scope_name` is given, unlike any other."""
    return f"{scope_name}-{uuid.uuid4().hex[:12]}{SUFFIX}"


def scope_of(file: str) -> str:
    """The :func:`scope_name` a file name starts with."""
    return file.split("-", 1)[0]


def sweep(directory: Path | None, run: Callable[..., Any]) -> set[str]:
    """Deletes every index file of ``directory`` that no row names (a dropped index, an
    interrupted build's), so an erased fact's vector leaves the disk at its commit, and
    what a restore cut short left. Returns the names the rows hold."""
    if directory is None or not directory.exists():
        return set()
    with files_lock(directory):
        named = {
            str(r[0])
            for r in run(
                lambda tx: tx.conn.execute("SELECT file FROM vector_indexes").fetchall(),
                write=False,
            )
        }
        for path in list(directory.iterdir()):
            if path.name.endswith(SUFFIX) and path.name not in named:
                path.unlink(missing_ok=True)
            elif path.name.endswith(PARTIAL):
                with held(directory / f"{scope_of(path.name)}.lock") as idle:
                    if idle:  # no process is building it: an interrupted build's
                        path.unlink(missing_ok=True)
            elif path.name.startswith(RESTORING):
                folder = path.with_name(path.name.removesuffix(".lock"))
                with held(lock_of(folder)) as idle:
                    if idle:  # no process is restoring with it: a restore cut short's
                        shutil.rmtree(folder, ignore_errors=True)
                        lock_of(folder).unlink(missing_ok=True)
    return named


def lock_of(folder: Path) -> Path:
    """The lock a restore holds on its folder of files to put in."""
    return folder.with_name(f"{folder.name}.lock")


def scrubbing(run: Callable[..., Any]) -> bool:
    """Whether an erased fact's vector is still to be overwritten in an index file
    (``vector_scrubs``, migration 25)."""
    return bool(
        run(
            lambda tx: tx.conn.execute("SELECT EXISTS (SELECT 1 FROM vector_scrubs)").fetchone()[0],
            write=False,
        )
    )


@contextlib.contextmanager
def files_lock(directory: Path) -> Iterator[None]:
    """The folder's lock, between processes: a file is renamed into place and its row
    committed with no sweep in between."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def held(path: Path) -> Iterator[bool]:
    """Takes the lock file ``path`` without waiting: True when taken (and held until the
    block ends), False when another process or thread holds it."""
    with open(path, "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
