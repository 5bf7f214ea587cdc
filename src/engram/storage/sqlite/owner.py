"""One owner for maintenance: whether another process has a store file open, and who.

Work that changes what every reader of the file relies on (a restore replacing the file,
a re-embedding replacing every vector and the model record, a migration changing the
schema) is refused while any other process has the file open. The test is SQLite's own:
every connection to a WAL store holds a lock that bars an exclusive one, so a running
service is found whatever it is doing, even idle, and wherever it runs (another
container on the same file included). ``/proc`` then names it (Linux).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from engram.core.errors import Conflict, StorageFailure
from engram.storage.sqlite.driver import sqlite3

LOCK_WAIT_S = 2.0  # a writer's transaction ends in milliseconds; an open store never does


@contextlib.contextmanager
def exclusive(target: Path, *, done: str, then: str) -> Iterator[sqlite3.Connection]:
    """A connection holding the store's exclusive lock, or Conflict naming who has the
    store open ("…; nothing was ``done``", hint "stop … , then ``then``"). The file must
    exist: connecting creates it otherwise."""
    conn = sqlite3.connect(target, isolation_level=None, timeout=LOCK_WAIT_S)
    try:
        try:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")  # the lock outlives the transaction in this mode
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise StorageFailure(
                    f"cannot open the store at {target}: {exc}",
                    hint=f"move {target} (and any -wal/-shm beside it) aside, then {then}",
                ) from exc
            conn.close()  # before looking: this connection is not a holder
            raise Conflict(
                f"the store at {target} is in use by {holders(target)}; nothing was {done}",
                hint=f"stop the service (and every other engram process on this file), then {then}",
            ) from exc
        except sqlite3.DatabaseError as exc:
            raise StorageFailure(
                f"{target} is not a readable SQLite store: {exc}",
                hint=f"move {target} (and any -wal/-shm beside it) aside, then {then}",
            ) from exc
        yield conn
    finally:
        conn.close()


def check_sole(target: Path, *, done: str, then: str) -> None:
    """Raises Conflict naming the processes that have the store at ``target`` open, if
    any does (see :func:`exclusive`); a missing file has none. This process must hold no
    connection to it: its own would count."""
    if not target.exists():
        return
    with exclusive(target, done=done, then=then):
        pass


def holders(target: Path) -> str:
    """The processes that have the store open, as far as /proc tells (Linux); this one
    when only another of its own connections has."""
    names = {str(target.resolve()) + suffix for suffix in ("", "-wal", "-shm")}
    found: list[str] = []
    mine = False
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        pid = fd_dir.parent.name
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in names for fd in fd_dir.iterdir()):
                if pid == str(os.getpid()):
                    mine = True
                    continue
                command = (fd_dir.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                found.append(f"pid {pid} ({command.decode(errors='replace').strip()[:120]})")
    if found:
        return ", ".join(found)
    if mine:
        return f"another connection of this process (pid {os.getpid()})"
    return "another process"
