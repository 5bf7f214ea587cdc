"""Backups of the SQLite store: consistent while the service runs, verified, all or nothing.

A backup is a directory ``engram-<UTC time>`` holding ``engram.db`` and ``manifest.json``
(row counts and the copy's sha256). It is built in a hidden staging directory beside the
others and renamed into place only once the copy is complete and verified, so a failure
never leaves a directory that looks like a backup.

A backup also holds the approximate vector index files its snapshot names
(``vectors/``, each file's sha256 in the manifest), copied as that snapshot has them
(:mod:`.index.snapshots`): a restored million-fact store searches its graph at once rather
than exactly until a new one is built (17 minutes on two cores). Restored, they take new
names, so the restored store never searches a file of the store it replaced (where a
fact erased since the backup has its vector overwritten); those go beside the copy kept
of that store, whose rows name them.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from engram.core.errors import Conflict, InvalidInput, NotFound, StorageFailure
from engram.storage import staging
from engram.storage.sqlite import owner
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import snapshots
from engram.storage.staging import (
    FILES,
    TABLES,
    attempt,
    check_digest,
    fsync,
    now,
    sha256,
    staged_backup,
)

DB_NAME = "engram.db"


def backup(
    db_path: str | os.PathLike[str], dest_dir: str | os.PathLike[str], *, keep: int | None = None
) -> Path:
    """Copies the store at ``db_path`` into a new backup under ``dest_dir``; returns it.

    With ``keep``, only the ``keep`` newest backups stay afterwards. Raises NotFound (no
    store), InvalidInput (``dest_dir`` is not a directory), StorageFailure (nothing left
    behind) when the copy cannot be written or verified.
    """
    source = Path(db_path)
    if not source.is_file():
        raise NotFound(f"no store at {source} to back up")

    def build(staging: Path) -> dict[str, object]:
        counts, files = _copy(source, staging)
        manifest = _verify(staging / DB_NAME, counts)
        manifest.update({"source": str(source.resolve()), FILES: files})
        return manifest

    return staged_backup(dest_dir, keep, build)


def restore(backup_dir: str | os.PathLike[str], db_path: str | os.PathLike[str]) -> Path | None:
    """Puts a verified backup at ``db_path``; returns where the store it replaced is kept
    (``<name>.before-restore-<time>``), or None when there was none.

    The backup must match its manifest byte for byte (sha256), pass an integrity check
    and hold the counted rows. The replaced store is copied whole, including what its
    write-ahead log held after an unclean stop, and the copy verified, before anything is
    replaced. Raises NotFound (no backup, no directory to restore into), InvalidInput (not
    a backup, or one changed since it was made), Conflict (another process has the store
    open: stop it first), StorageFailure (I/O); in every case the store is untouched.
    """
    backup_path = Path(backup_dir)
    manifest = staging.read_manifest(backup_path, DB_NAME)
    target = Path(db_path)
    if not target.parent.is_dir():
        raise NotFound(f"no directory {target.parent} to restore into")
    if target.is_dir():
        raise InvalidInput(f"{target} is a directory, not a store file")
    incoming = target.with_name(f".{target.name}.restoring-{secrets.token_hex(4)}")
    placed: list[Path] = []
    try:
        attempt(
            lambda: shutil.copyfile(backup_path / DB_NAME, incoming), f"cannot copy {backup_path}"
        )
        check_digest(backup_path, DB_NAME, incoming, manifest.sha256)
        _verify(incoming, manifest.counts)
        renamed = snapshots.adopt(incoming, manifest.files)
        with snapshots.staged(backup_path, renamed, manifest.files, target) as staged:

            def put_in() -> None:
                if staged is not None:
                    placed.extend(snapshots.install(staged))
                attempt(lambda: os.replace(incoming, target), f"cannot write {target}")
                placed.clear()  # the store names them now

            if not target.exists():
                _refuse_orphan_log(target)
                put_in()
                return None
            return _replace(target, put_in)
    finally:
        for leftover in (incoming, Path(f"{incoming}-wal"), Path(f"{incoming}-shm"), *placed):
            leftover.unlink(missing_ok=True)  # the -wal/-shm of a backup made in WAL mode


def _refuse_orphan_log(target: Path) -> None:
    """A log left without its store would be replayed into the restored one."""
    for suffix in ("-wal", "-journal"):
        orphan = Path(f"{target}{suffix}")
        if orphan.exists():
            raise Conflict(
                f"{orphan} is left beside a missing store; SQLite would replay it into "
                "the restored one, so nothing was restored",
                hint=f"move {orphan} (and {target}-shm) aside, then restore",
            )


def _replace(target: Path, put_in: Callable[[], None]) -> Path:
    """Keeps a verified copy of the store at ``target`` (its index files moved beside
    it), then puts the restored one in its place (``put_in``), holding an exclusive lock
    on the store throughout."""
    kept = target.with_name(f"{target.name}.before-restore-{now()}")
    with owner.exclusive(target, done="restored", then="restore") as conn:
        try:
            counts = _counts(conn)
            _snapshot(conn, kept)
        except sqlite3.Error as exc:
            kept.unlink(missing_ok=True)
            raise StorageFailure(f"cannot keep a copy of the store at {target}: {exc}") from exc
        try:
            _verify(kept, counts)
        except StorageFailure:
            kept.unlink(missing_ok=True)
            raise
        fsync(kept)
        # Folds the log into the old file and deletes it, so no log of the old store can
        # ever be replayed into the new one; the exclusive lock stays held.
        conn.execute("PRAGMA journal_mode=DELETE")
        Path(f"{target}-shm").unlink(missing_ok=True)
        moved = snapshots.keep(conn, target, kept)  # the copy kept whole, its index too
        try:
            put_in()
        except BaseException:
            snapshots.put_back(moved)
            kept.unlink(missing_ok=True)  # a copy of a store that was not replaced
            raise
        fsync(target.parent)
    return kept


def _copy(source: Path, staging: Path) -> tuple[dict[str, int], dict[str, str]]:
    """One snapshot of the source, counted and copied into ``staging`` in the same read
    transaction, with the index files it names (their sha256 by name)."""
    try:
        conn = sqlite3.connect(source, isolation_level=None, timeout=30)
        try:
            files = snapshots.snapshot_with_files(conn, str(source), staging / snapshots.FOLDER)
            counts = _counts(conn)
            _snapshot(conn, staging / DB_NAME)
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StorageFailure(f"cannot copy the store at {source}: {exc}") from exc
    return counts, files


def _snapshot(conn: sqlite3.Connection, copy: Path) -> None:
    """Copies what ``conn`` sees into the new file ``copy`` as one file: a rollback
    journal store, so reading it later leaves no log or index files beside it."""
    target = sqlite3.connect(copy, isolation_level=None)
    try:
        conn.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()


def _verify(copy: Path, counts: dict[str, int]) -> dict[str, object]:
    try:
        conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
        try:
            check = conn.execute("PRAGMA integrity_check").fetchone()[0]
            copied = _counts(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StorageFailure(f"the backup copy {copy} cannot be read: {exc}") from exc
    if check != "ok":
        raise StorageFailure(f"the backup copy {copy} failed its integrity check: {check}")
    if copied != counts:
        raise StorageFailure(f"the backup copy {copy} holds {copied} rows, not {counts}")
    return {"counts": counts, "sha256": sha256(copy)}


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}
