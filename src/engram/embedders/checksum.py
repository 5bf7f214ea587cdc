"""A model file is loaded only when its sha256 is the one its embedder was measured with.

A model's name is what a store records about the vectors it holds, so the bytes behind
that name must not change under it: an upgraded or corrupted package is refused at load
instead of silently writing vectors that no longer compare with the stored ones. Each
file is hashed once per process.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from engram.core.errors import StorageFailure

_verified: set[Path] = set()
_verified_lock = threading.Lock()


def verify(path: Path, expected: str, *, hint: str) -> None:
    """Returns when ``path``'s sha256 is ``expected``; raises StorageFailure (with
    ``hint``) when it differs or the file cannot be read."""
    with _verified_lock:
        if path in _verified:
            return
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise StorageFailure(f"cannot read the model file {path}: {exc}") from exc
        if digest.hexdigest() != expected:
            raise StorageFailure(
                f"the model file {path} does not have the expected sha256 ({expected[:12]}…); "
                "refusing to load it",
                hint=hint,
            )
        _verified.add(path)
