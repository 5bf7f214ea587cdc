"""Which embedding model wrote a store's vectors, kept in the meta table."""

from __future__ import annotations

from engram.core.errors import EmbedderMismatch
from engram.core.ports import ModelRecord
from engram.storage.sqlite.driver import sqlite3


def read(conn: sqlite3.Connection) -> ModelRecord | None:
    rows = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dimension')"
        )
    )
    if "embedding_model" not in rows:
        return None
    return ModelRecord(rows["embedding_model"], int(rows["embedding_dimension"]))


def write(conn: sqlite3.Connection, record: ModelRecord) -> None:
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [("embedding_model", record.model), ("embedding_dimension", str(record.dimension))],
    )


def check(conn: sqlite3.Connection, model: ModelRecord) -> None:
    """Inside a write: raises EmbedderMismatch when the store holds vectors of another
    model; records ``model`` when it holds none."""
    stored = read(conn)
    if stored == model:
        return
    if stored is not None and conn.execute("SELECT 1 FROM facts LIMIT 1").fetchone():
        raise EmbedderMismatch(stored.mismatch(model))
    write(conn, model)  # the first vectors of this store (or of an emptied one)
