"""A new store's file, written as a copy of an empty store this process made once.

Migrating a new file runs every migration's statements, and SQLite reads its schema
again after each that changes it: 24 to 37 ms of a core a new store, against 4 to 5 for
a copy. The copy is the same bytes that migrating leaves: the first new store of a
process is made by migrating a file of its own (:func:`image`), and each new store after
it is written from those bytes. The copy is placed by a hard link, which fails rather
than replace a file that another process or thread created at that path meanwhile; that
file is then opened as it is, and so is any path where a copy cannot be placed (a file
system without hard links): migrating it makes the same store.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Protocol

from engram.core.errors import EngramError


class Closes(Protocol):
    def close(self) -> None: ...


Opens = Callable[[str], Closes]  # makes a store at a path, migrating it (``Database``)

_made: list[bytes | None] = []  # once made, the image (None: none could be made)
_making = threading.Lock()


def image(opens: Opens, beside: Path) -> bytes | None:
    """The bytes of an empty, migrated store, made once a process by ``opens`` in a
    folder of its own made in ``beside`` (the first new store's, so nothing is written
    where no store is) and removed; None where none could be made (then no store is
    copied, and each is migrated)."""
    with _making:
        if not _made:
            try:
                with tempfile.TemporaryDirectory(prefix=".engram-new-", dir=beside) as folder:
                    path = os.path.join(folder, "engram.db")
                    opens(path).close()
                    whole = not os.path.exists(path + "-wal")
                    _made.append(Path(path).read_bytes() if whole else None)
            except (OSError, EngramError):
                _made.append(None)
        return _made[0]


def place(path: str, opens: Opens) -> bool:
    """Writes a new store's file at ``path`` from :func:`image`; False, with nothing
    written there, where a file or its write-ahead log already is, or where the copy
    cannot be placed. The copy reaches the disk before it takes the path."""
    target = Path(path)
    if os.path.lexists(path) or os.path.lexists(path + "-wal"):
        return False
    made = image(opens, target.parent)
    if made is None:
        return False
    copy = target.with_name(f"{target.name}.{secrets.token_hex(4)}.new")
    try:
        # SQLite's own mode for a file it creates, under this process's umask.
        out = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return False
    try:
        with os.fdopen(out, "wb") as written:
            written.write(made)
            written.flush()
            os.fsync(written.fileno())
        os.link(copy, path)
    except OSError:  # FileExistsError among them: another made the store meanwhile
        return False
    finally:
        with suppress(OSError):
            os.unlink(copy)
    _sync(target.parent)
    return True


def _sync(folder: Path) -> None:
    """The new name reaches the disk with its folder (where the platform allows it)."""
    with suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
