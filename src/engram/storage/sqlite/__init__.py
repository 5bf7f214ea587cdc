"""The embedded backend: one SQLite file holds rows, the full-text index and vectors."""

from engram.storage.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
