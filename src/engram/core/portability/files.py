"""Export files: the format a path asks for, and a file that appears whole or not at all.

A target that exists is refused (Conflict): an export never overwrites. The file is
written beside its target under a hidden staging name, then linked into place (a link
fails if the target appeared meanwhile) and the staging name removed, so a reader never
sees half a file and a crash leaves at most the staging file. A target the system will
not let be written (:func:`writing`) is InvalidInput naming it, or StorageFailure when
the disk is full or failing; so is a file to import it will not let be read
(:func:`reading`).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.core.errors import Conflict, InvalidInput, NotFound, StorageFailure
from engram.core.paths import file_kind

EXPORT_FORMATS = ("json", "jsonl", "sqlite", "mcp-memory", "mem0", "markdown", "obsidian")
SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".sqlite": "sqlite", ".db": "sqlite"}


def export_format(path: Path, format: str | None) -> str:
    if format is not None:
        if format not in EXPORT_FORMATS:
            raise InvalidInput(f"format must be one of {', '.join(EXPORT_FORMATS)}, got {format!r}")
        return format
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise InvalidInput(
            f"cannot tell the format of {path.name!r}: name it .json, .jsonl, .sqlite or .db, "
            "or pass format= (mcp-memory for the MCP memory server's JSONL)"
        )
    return found


def target(path: str | os.PathLike[str], *, update: bool = False) -> Path:
    """The path to export to: one that does not exist, unless ``update`` (a folder's)."""
    found = Path(path)
    if os.path.lexists(found) and not update:
        raise Conflict(
            f"{found} exists; an export never overwrites",
            hint="choose a new path, or update=True to update a folder export",
        )
    if not found.parent.is_dir():
        raise InvalidInput(f"{found.parent} is not a directory")
    return found


def source(path: str | os.PathLike[str]) -> Path:
    """The file to import: NotFound when nothing is there, InvalidInput naming what is
    there when it is not a regular file (a device such as /dev/zero has no end, a pipe
    waits for a writer: neither is read)."""
    found = Path(path)
    try:
        mode = found.stat().st_mode
    except FileNotFoundError:
        raise NotFound(f"no file {found}") from None
    except OSError as exc:
        raise InvalidInput(f"{found} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        raise InvalidInput(
            f"{found} is {file_kind(mode)}, not a regular file: engram imports regular files only",
            hint="save what it gives into a file, then import that",
        )
    return found


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Runs the writing of ``path`` (its staging files included): an OSError it raises
    is InvalidInput naming ``path`` and why (a folder one cannot create files in, such
    as /proc, or no permission), or StorageFailure for a full or failing disk."""
    try:
        yield
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise StorageFailure(f"cannot write {path}: {why}") from exc
        raise InvalidInput(f"cannot write {path}: {why}") from exc


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Runs the reading of ``path``: an OSError it raises (no permission, a file the
    system will not read, such as /proc/self/mem) is InvalidInput naming it and why."""
    try:
        yield
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from exc


def staging(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")


def write_text(path: Path, chunks: Iterable[str]) -> int:
    """Writes the chunks to ``path`` whole or not at all; the bytes written."""
    return place(path, lambda staged: write_new(staged, chunks))


def place(path: Path, make: Callable[[Path], int]) -> int:
    """Runs ``make`` on a staging path beside ``path``, then links it into place."""
    staged = staging(path)
    try:
        size = make(staged)
        try:
            os.link(staged, path)
        except FileExistsError as exc:
            raise Conflict(f"{path} appeared while it was exported; nothing replaced") from exc
    finally:
        for leftover in (staged, Path(f"{staged}-wal"), Path(f"{staged}-shm")):
            leftover.unlink(missing_ok=True)
    return size


def write_new(path: Path, chunks: Iterable[str]) -> int:
    size = 0
    with open(path, "x", encoding="utf-8") as out:
        for chunk in chunks:
            size += out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    return size
