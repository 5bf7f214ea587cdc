"""Backups built whole in a hidden staging directory, then renamed into place.

Both backends' backups are a directory ``engram-<UTC time>`` holding the copy and
``manifest.json``. A failure never leaves a directory that looks like a backup, and
rotation keeps the newest complete ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engram.core.errors import InvalidInput, NotFound, StorageFailure

# The tables a backup counts, on either backend (PostgreSQL adds its engram_schema).
TABLES = (
    "meta",
    "working",
    "facts",
    "fact_vectors",
    "fact_tags",
    "scope_state",
    "agents",
    "shares",
)
MANIFEST = "manifest.json"
FILES = "vector_files"  # the manifest's key for the files a backup holds beside its copy
PREFIX = "engram-"


def staged_backup(
    dest_dir: str | os.PathLike[str],
    keep: int | None,
    build: Callable[[Path], dict[str, object]],
    *,
    prefix: str = PREFIX,
) -> Path:
    """Runs ``build`` (which writes the copy into the staging directory it is given and
    returns the manifest), then publishes the backup as ``<prefix><UTC time>`` and keeps
    the ``keep`` newest."""
    if keep is not None and keep < 1:
        raise InvalidInput(f"keep must be at least 1, got {keep}")
    dest = Path(dest_dir)
    if dest.exists() and not dest.is_dir():
        raise InvalidInput(f"{dest} is not a directory: backups go in a directory")
    staging = dest / f".staging-{secrets.token_hex(6)}"
    try:
        try:
            dest.mkdir(parents=True, exist_ok=True)
            staging.mkdir()
        except (FileExistsError, NotADirectoryError) as exc:
            raise InvalidInput(f"cannot make the directory {dest}: {exc.strerror}") from exc
        except OSError as exc:
            raise StorageFailure(f"cannot write a backup in {dest}: {exc.strerror or exc}") from exc
        manifest = build(staging)
        created = now()
        manifest["created_at"] = created
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
        for written in [*staging.iterdir(), staging]:
            fsync(written)
        final = dest / f"{prefix}{created.replace(':', '')}"
        staging.rename(final)
        fsync(dest)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise StorageFailure(f"cannot write a backup in {dest}: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if keep is not None:
        for old in complete_backups(dest)[:-keep]:
            shutil.rmtree(old)
    return final


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a backup says of itself: rows per table, the sha256 of its copy, and that of
    each file it holds beside it (``files``, by name: a SQLite store's index files)."""

    counts: dict[str, int]
    sha256: str
    files: dict[str, str]


def read_manifest(backup_dir: Path, copy_name: str) -> Manifest:
    """The backup's manifest, checked field by field. Raises NotFound (no such directory)
    or InvalidInput naming what is missing or malformed."""
    if not backup_dir.is_dir():
        raise NotFound(f"no backup directory {backup_dir}")
    incomplete = f"{backup_dir} is not a complete engram backup"
    if not (backup_dir / copy_name).is_file():
        raise InvalidInput(f"{incomplete}: it holds no {copy_name}")
    try:
        raw = json.loads((backup_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{incomplete}: {MANIFEST} cannot be read: {exc}") from exc
    counts = raw.get("counts") if isinstance(raw, dict) else None
    if not isinstance(counts, dict) or not set(TABLES) <= set(counts):
        raise InvalidInput(f"{incomplete}: {MANIFEST} has no row count of every table")
    for table, count in counts.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise InvalidInput(f"{incomplete}: counts.{table} in {MANIFEST} is not a count")
    digest = raw.get("sha256")
    if not _digest(digest):
        raise InvalidInput(f"{incomplete}: {MANIFEST} has no sha256 of {copy_name}")
    files = raw.get(FILES, {})  # none in a backup from before they were kept
    if not isinstance(files, dict):
        raise InvalidInput(f"{incomplete}: {FILES} in {MANIFEST} is not an object")
    for name, file_digest in files.items():
        if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z._-]*", name) or not _digest(file_digest):
            raise InvalidInput(
                f"{incomplete}: {FILES} in {MANIFEST} names {name!r}, which is not a file "
                "name with its sha256"
            )
    return Manifest(dict(counts), digest, dict(files))


def check_digest(backup_dir: Path, name: str, copy: Path, digest: str) -> None:
    """Raises InvalidInput unless ``copy`` (the backup's ``name``, or a copy of it just
    made) has the sha256 ``digest`` its manifest gives."""
    if sha256(copy) != digest:
        raise InvalidInput(
            f"{backup_dir} does not match its manifest: {name} was changed after the "
            "backup was made (sha256 differs); it is not restored"
        )


def _digest(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def complete_backups(dest_dir: Path) -> list[Path]:
    """The complete backups under ``dest_dir``, oldest first."""
    return sorted(p for p in dest_dir.glob(f"{PREFIX}*") if p.is_dir() and (p / MANIFEST).is_file())


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def attempt(action: Callable[[], object], what: str) -> None:
    """Runs ``action``; an OSError it raises is a StorageFailure saying ``what`` failed."""
    try:
        action()
    except OSError as exc:
        raise StorageFailure(f"{what}: {exc.strerror or exc}") from exc


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
