"""The SQLite library the embedded store runs on.

A forget must leave no trace of the forgotten words in the file (spec 003). Deleted rows
are zeroed by ``PRAGMA secure_delete``, but FTS5 keeps a deleted fact's terms in its
index segments until they are merged again, unless the index has FTS5's ``secure-delete``
option, which needs SQLite 3.44. Python's own SQLite is often older (3.40.1 here), so
where a wheel ships a current one (``pysqlite3-binary``: SQLite 3.51 for Linux x86_64)
the store runs on it; its API is the standard library's. Elsewhere the standard library's
SQLite is used: at 3.44 or newer it has the option too; below, each forgetting write
merges the whole full-text index instead (``optimize``), which costs what the index
holds (BENCHMARKS.md).

Every module of this backend imports ``sqlite3`` from here, so one driver's connections
and exceptions are used throughout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
else:
    try:
        from pysqlite3 import dbapi2 as sqlite3
    except ImportError:  # no wheel for this platform: the standard library's SQLite
        import sqlite3

__all__ = ["SECURE_FTS", "sqlite3"]

# FTS5's secure-delete option: deleted facts' terms leave the index with them.
SECURE_FTS: bool = sqlite3.sqlite_version_info >= (3, 44, 0)
