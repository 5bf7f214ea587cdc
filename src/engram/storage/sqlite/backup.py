"""Backups of the SQLite store: consistent while the service runs, verified, all or nothing.

A backup is a directory ``engram-<UTC time>`` holding ``engram.db`` and ``manifest.json``
(row counts and the copy's sha256). It is built in a hidden staging directory beside the
others and renamed into place only once the copy is complete and verified, so a failure
never leaves a directory that looks like a backup.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

from engram.core.errors import InvalidInput, StorageFailure
from engram.storage.staging import MANIFEST, TABLES, now, sha256, staged_backup

DB_NAME = "engram.db"


def backup(
    db_path: str | os.PathLike[str], dest_dir: str | os.PathLike[str], *, keep: int | None = None
) -> Path:
    """Copies the store at ``db_path`` into a new backup under ``dest_dir``; returns it.

    With ``keep``, only the ``keep`` newest backups stay afterwards. Raises
    StorageFailure (nothing left behind) when the copy cannot be made or verified.
    """
    source = Path(db_path)
    if not source.is_file():
        raise StorageFailure(f"no store at {source} to back up")

    def build(staging: Path) -> dict[str, object]:
        counts = _copy(source, staging / DB_NAME)
        manifest = _verify(staging / DB_NAME, counts)
        manifest.update(source=str(source.resolve()))
        return manifest

    return staged_backup(dest_dir, keep, build)


def restore(backup_dir: str | os.PathLike[str], db_path: str | os.PathLike[str]) -> Path | None:
    """Puts a verified backup at ``db_path`` (the service must be stopped). The store it
    replaces is kept beside it as ``<name>.before-restore-<time>``; that path is returned."""
    backup_path = Path(backup_dir)
    manifest = _read_manifest(backup_path)
    _verify(backup_path / DB_NAME, manifest["counts"])
    target = Path(db_path)
    incoming = target.with_name(f".{target.name}.restoring")
    shutil.copyfile(backup_path / DB_NAME, incoming)
    kept = None
    if target.exists():
        kept = target.with_name(f"{target.name}.before-restore-{now()}")
        target.rename(kept)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    incoming.rename(target)
    return kept


def _copy(source: Path, copy: Path) -> dict[str, int]:
    """One snapshot of the source: counted and copied in the same read transaction."""
    try:
        conn = sqlite3.connect(source, isolation_level=None, timeout=30)
        target = sqlite3.connect(copy)
        try:
            conn.execute("BEGIN")
            counts = _counts(conn)
            conn.backup(target)
            conn.execute("COMMIT")
        finally:
            target.close()
            conn.close()
    except sqlite3.Error as exc:
        raise StorageFailure(f"cannot copy the store at {source}: {exc}") from exc
    return counts


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


def _read_manifest(backup_path: Path) -> dict[str, dict[str, int]]:
    try:
        manifest: dict[str, dict[str, int]] = json.loads((backup_path / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{backup_path} is not a complete engram backup: {exc}") from exc
    return manifest
