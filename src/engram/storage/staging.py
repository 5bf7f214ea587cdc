"""Backups built whole in a hidden staging directory, then renamed into place.

Both backends' backups are a directory ``engram-<UTC time>`` holding the copy and
``manifest.json``. A failure never leaves a directory that looks like a backup, and
rotation keeps the newest complete ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from engram.core.errors import InvalidInput

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
PREFIX = "engram-"


def staged_backup(
    dest_dir: str | os.PathLike[str],
    keep: int | None,
    build: Callable[[Path], dict[str, object]],
) -> Path:
    """Runs ``build`` (which writes the copy into the staging directory it is given and
    returns the manifest), then publishes the backup and keeps the ``keep`` newest."""
    if keep is not None and keep < 1:
        raise InvalidInput(f"keep must be at least 1, got {keep}")
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    staging = dest / f".staging-{secrets.token_hex(6)}"
    try:
        staging.mkdir()
        manifest = build(staging)
        created = now()
        manifest["created_at"] = created
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
        for written in [*staging.iterdir(), staging]:
            fsync(written)
        final = dest / f"{PREFIX}{created.replace(':', '')}"
        staging.rename(final)
        fsync(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if keep is not None:
        for old in complete_backups(dest)[:-keep]:
            shutil.rmtree(old)
    return final


def complete_backups(dest_dir: Path) -> list[Path]:
    """The complete backups under ``dest_dir``, oldest first."""
    return sorted(p for p in dest_dir.glob(f"{PREFIX}*") if p.is_dir() and (p / MANIFEST).is_file())


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
