"""Backups of the SQLite store: consistent while the service runs, verified, all or nothing.

A backup is a directory ``engram-<UTC time>`` holding ``engram.db`` and ``manifest.json``
(row counts and the copy's sha256). It is built in a hidden staging directory beside the
others and renamed into place only once the copy is complete and verified, so a failure
never leaves a directory that looks like a backup.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from engram.core.errors import InvalidInput, StorageFailure

TABLES = ("meta", "working", "facts", "fact_vectors", "fact_tags", "scope_state", "agents")
DB_NAME = "engram.db"
MANIFEST = "manifest.json"
PREFIX = "engram-"


def backup(
    db_path: str | os.PathLike[str], dest_dir: str | os.PathLike[str], *, keep: int | None = None
) -> Path:
    """Copies the store at ``db_path`` into a new backup under ``dest_dir``; returns it.

    With ``keep``, only the ``keep`` newest backups stay afterwards. Raises
    StorageFailure (nothing left behind) when the copy cannot be made or verified.
    """
    if keep is not None and keep < 1:
        raise InvalidInput(f"keep must be at least 1, got {keep}")
    source = Path(db_path)
    if not source.is_file():
        raise StorageFailure(f"no store at {source} to back up")
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    staging = dest / f".staging-{secrets.token_hex(6)}"
    try:
        staging.mkdir()
        counts = _copy(source, staging / DB_NAME)
        manifest = _verify(staging / DB_NAME, counts)
        created = _now()
        manifest.update(created_at=created, source=str(source.resolve()))
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
        for written in (staging / DB_NAME, staging / MANIFEST, staging):
            _fsync(written)
        final = dest / f"{PREFIX}{created.replace(':', '')}"
        staging.rename(final)
        _fsync(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if keep is not None:
        for old in complete_backups(dest)[:-keep]:
            shutil.rmtree(old)
    return final


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
        kept = target.with_name(f"{target.name}.before-restore-{_now()}")
        target.rename(kept)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    incoming.rename(target)
    return kept


def complete_backups(dest_dir: Path) -> list[Path]:
    """The complete backups under ``dest_dir``, oldest first."""
    return sorted(p for p in dest_dir.glob(f"{PREFIX}*") if p.is_dir() and (p / MANIFEST).is_file())


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
    return {"counts": counts, "sha256": _sha256(copy)}


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}


def _read_manifest(backup_path: Path) -> dict[str, dict[str, int]]:
    try:
        manifest: dict[str, dict[str, int]] = json.loads((backup_path / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{backup_path} is not a complete engram backup: {exc}") from exc
    return manifest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
