"""Finding the documents of a file or a directory, and every limit checked before the
first is read for ingesting, so a refusal writes nothing.

A walk never follows a link to a directory, takes a linked file only when it resolves
inside the root, skips hidden files and directories (a name starting with ``.``) and
descends at most MAX_DEPTH directories. A file's media type is what its first bytes
announce (``%PDF-``, ``<html``: :func:`engram.core.documents.loading.sniff`), else what
its suffix says; neither, it is not read (``skipped``). Globs match a file's path
relative to the root (``*`` crosses ``/``, as :func:`fnmatch.fnmatch` does); one naming
a parent (``..``) or an absolute path is refused.

Only regular files are read. A path that is a device, a pipe (FIFO) or a socket is
refused, never read (``/dev/zero`` has no end, a FIFO waits for a writer); inside a
directory such entries are passed over. A file is opened without blocking and checked
again on the open descriptor (something else may have taken its place since the walk),
and read no further than the byte limit: a file that grows while it is read, or one
whose size says 0 while it holds more (``/proc``), stops there.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engram.core.documents.loading import MEDIA_BY_SUFFIX, SNIFF_BYTES, media_type
from engram.core.errors import InvalidInput, NotFound, TooLarge, Unprocessable
from engram.core.paths import file_kind

DEFAULT_INCLUDE = ("*.md", "*.markdown", "*.txt", "*.html", "*.htm", "*.pdf")
MAX_DEPTH = 32
MAX_BYTES = 500_000_000
MAX_GLOBS = 64


@dataclass(frozen=True, slots=True)
class Found:
    """A file to ingest: its path, its name as a document (its absolute path), its
    media type (None: unsupported, skipped), its size."""

    path: Path
    source: str
    media_type: str | None
    size: int


def check_limits(max_files: object, max_bytes: object) -> tuple[int, int]:
    for value, name, top in (
        (max_files, "max_files", 1_000_000),
        (max_bytes, "max_bytes", MAX_BYTES),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise InvalidInput(f"{name} must be an integer from 1 to {top}, got {value!r}")
    return int(max_files), int(max_bytes)  # type: ignore[call-overload]


def check_globs(globs: object, name: str) -> tuple[str, ...]:
    if isinstance(globs, str) or not isinstance(globs, Sequence):
        raise InvalidInput(f"{name} must be a list of globs")
    if len(globs) > MAX_GLOBS:
        raise InvalidInput(f"{len(globs)} {name} globs given; the limit is {MAX_GLOBS}")
    for glob in globs:
        if not isinstance(glob, str) or not glob or len(glob) > 1024:
            raise InvalidInput(f"each of {name} must be a glob of 1 to 1024 characters")
        if glob.startswith(("/", "\\")) or ".." in PurePosixPath(glob).parts:
            raise InvalidInput(f"{name} glob {glob!r} leaves the root")
    return tuple(globs)


def find(
    path: str | os.PathLike[str],
    include: Sequence[str],
    exclude: Sequence[str],
    max_files: int,
    max_bytes: int,
) -> list[Found]:
    """The files to ingest under ``path`` in path order (a file alone: itself). Raises
    NotFound (no such file or directory), InvalidInput (a single file of a type engram
    does not read) and TooLarge (more than ``max_files`` files or ``max_bytes`` bytes)."""
    root = Path(path)
    if not root.exists():
        raise NotFound(f"no file or directory at {os.fspath(path)!r}")
    if not root.is_file() and not root.is_dir():
        raise InvalidInput(
            f"{os.fspath(path)!r} is {file_kind(root.stat().st_mode)}, not a file or a directory: "
            "engram reads regular files only",
            hint="save what it gives into a file, then ingest that",
        )
    if root.is_file():
        found = _file(root.resolve(), root.resolve())
        if found is None or found.media_type is None:
            raise InvalidInput(
                f"{root.name!r} is not a type engram reads: {', '.join(MEDIA_BY_SUFFIX)}"
            )
        files = [found]
    else:
        files = list(_walk(root.resolve(), include, exclude))
    if len(files) > max_files:
        raise TooLarge(f"{len(files)} files found; the limit is max_files={max_files}")
    total = sum(f.size for f in files if f.media_type is not None)
    if total > max_bytes:
        raise TooLarge(f"{total} bytes found; the limit is max_bytes={max_bytes}")
    return files


def _walk(root: Path, include: Sequence[str], exclude: Sequence[str]) -> list[Found]:
    kept: list[Found] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < MAX_DEPTH)
        for name in sorted(names):
            relative = (here / name).relative_to(root).as_posix()
            if name.startswith(".") or not _matches(relative, include, exclude):
                continue
            found = _file(here / name, root)
            if found is not None:
                kept.append(found)
    return sorted(kept, key=lambda f: f.source)


def _matches(relative: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(relative, g) for g in include) and not any(
        fnmatch.fnmatch(relative, g) for g in exclude
    )


def _file(path: Path, root: Path) -> Found | None:
    """The file, or None: a link that leads outside the root or nowhere, not a file."""
    target = path.resolve()
    if not target.is_file() or (not target.is_relative_to(root) and path.is_symlink()):
        return None
    return Found(path, path.as_posix(), media_of(path), target.stat().st_size)


def media_of(path: Path) -> str | None:
    """The media type of the file at ``path``: sniffed, else by suffix, else None."""
    try:
        head = read(path, SNIFF_BYTES, whole=False)
    except (OSError, InvalidInput):
        head = b""
    return media_type(head, path.name)


def read(path: Path, max_bytes: int, *, whole: bool = True) -> bytes:
    """The bytes of the regular file at ``path``: all of them (TooLarge past
    ``max_bytes``), or with ``whole=False`` its first ``max_bytes``. Opened without
    blocking and checked on the open descriptor: anything but a regular file is
    InvalidInput, never waited on or read. Raises Unprocessable naming the path when
    the system will not read it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Unprocessable(f"cannot read {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{path} is {file_kind(mode)}, not a regular file: it is not read")
        try:
            data = file.read(max_bytes + 1 if whole else max_bytes)
        except OSError as exc:
            raise Unprocessable(f"cannot read {path}: {exc.strerror or exc}") from exc
    if whole and len(data) > max_bytes:
        raise TooLarge(
            f"{path} holds more than max_bytes={max_bytes} bytes (read up to the limit, no further)"
        )
    return data
