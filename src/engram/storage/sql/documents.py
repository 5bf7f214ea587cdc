"""Documents and their chunks on both backends (see :class:`engram.core.ports.DocumentRows`
for each method's contract). Writes go through ``recorded()``: a document's write belongs
to a ledger entry. A fact deleted for good stops being named by its chunks when the
write settles what was derived from it (:mod:`engram.core.derived`)."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from engram.core.clock import from_us, to_us
from engram.core.documents.models import Document, Provenance, StoredChunk
from engram.core.ports import Tx
from engram.core.scopes import Scope
from engram.storage.sql.tx import SQLTx, sql

COLUMNS = "id, source, media_type, title, sha256, bytes, chunker, metadata, created_at, updated_at"


class DocumentTable:
    def get(self, tx: Tx, scope: Scope, document_id: str) -> Document | None:
        return self._one(sql(tx), "id = ?", document_id, scope)

    def by_source(self, tx: Tx, scope: Scope, source: str) -> Document | None:
        return self._one(sql(tx), "source = ?", source, scope)

    def list(self, tx: Tx, scope: Scope, *, after: str | None, limit: int) -> list[Document]:
        rows = sql(tx).rows(
            f"SELECT {COLUMNS} FROM documents WHERE scope = ? AND source > ? "
            "ORDER BY source LIMIT ?",
            (scope.key, after or "", limit),
        )
        return [_document(r, ()) for r in rows]

    def put(self, tx: Tx, scope: Scope, document: Document) -> None:
        t = sql(tx).recorded()
        d = document
        t.execute("DELETE FROM document_chunks WHERE document = ?", (d.id,))
        t.execute("DELETE FROM documents WHERE id = ? AND scope = ?", (d.id, scope.key))
        t.execute(
            f"INSERT INTO documents (scope, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                scope.key,
                d.id,
                d.source,
                d.media_type,
                d.title,
                d.sha256,
                d.bytes,
                d.chunker,
                json.dumps(d.metadata, sort_keys=True),
                to_us(d.created_at),
                to_us(d.updated_at),
            ),
        )
        t.executemany(
            'INSERT INTO document_chunks (document, idx, start, "end", heading, fact_id, page) '
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(d.id, c.idx, c.start, c.end, c.heading, c.fact_id, c.page) for c in d.chunks],
        )

    def delete(self, tx: Tx, scope: Scope, document_id: str) -> None:
        t = sql(tx).recorded().erasing()
        found = t.rows(
            "SELECT id FROM documents WHERE id = ? AND scope = ?", (document_id, scope.key)
        )
        if found:
            t.execute("DELETE FROM document_chunks WHERE document = ?", (document_id,))
            t.execute("DELETE FROM documents WHERE id = ?", (document_id,))

    def naming(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> set[str]:
        if not fact_ids:
            return set()
        t = sql(tx)
        member, params = t.dialect.in_list("c.fact_id", fact_ids)
        rows = t.rows(
            "SELECT DISTINCT c.fact_id FROM document_chunks c "
            f"JOIN documents d ON d.id = c.document WHERE {member} AND d.scope = ?",
            (*params, scope.key),
        )
        return {str(r[0]) for r in rows}

    def holding(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> builtins.list[str]:
        if not fact_ids:
            return []
        t = sql(tx)
        member, params = t.dialect.in_list("c.fact_id", fact_ids)
        rows = t.rows(
            "SELECT DISTINCT d.id FROM document_chunks c "
            f"JOIN documents d ON d.id = c.document WHERE {member} AND d.scope = ? "
            "ORDER BY d.id",
            (*params, scope.key),
        )
        return [str(r[0]) for r in rows]

    def unname(self, tx: Tx, fact_ids: Sequence[str]) -> None:
        if not fact_ids:
            return
        t = sql(tx).recorded()
        member, params = t.dialect.in_list("fact_id", fact_ids)
        t.execute(f"UPDATE document_chunks SET fact_id = NULL WHERE {member}", params)

    def provenance(self, tx: Tx, scope: Scope, fact_id: str) -> builtins.list[Provenance]:
        rows = sql(tx).rows(
            'SELECT d.id, d.source, d.media_type, c.idx, c.start, c."end", c.heading, c.page '
            "FROM document_chunks c JOIN documents d ON d.id = c.document "
            "WHERE c.fact_id = ? AND d.scope = ? ORDER BY d.source, c.idx",
            (fact_id, scope.key),
        )
        return [
            Provenance(
                str(r[0]),
                str(r[1]),
                str(r[2]),
                int(r[3]),
                int(r[4]),
                int(r[5]),
                str(r[6]),
                None if r[7] is None else int(r[7]),
            )
            for r in rows
        ]

    def _one(self, t: SQLTx, where: str, value: str, scope: Scope) -> Document | None:
        rows = t.rows(
            f"SELECT {COLUMNS} FROM documents WHERE {where} AND scope = ?", (value, scope.key)
        )
        if not rows:
            return None
        chunks = t.rows(
            'SELECT idx, start, "end", heading, fact_id, page FROM document_chunks '
            "WHERE document = ? ORDER BY idx",
            (rows[0][0],),
        )
        return _document(rows[0], tuple(_chunk(c) for c in chunks))


def _document(row: Sequence[Any], chunks: tuple[StoredChunk, ...]) -> Document:
    return Document(
        id=str(row[0]),
        source=str(row[1]),
        media_type=str(row[2]),
        title=str(row[3]),
        sha256=str(row[4]),
        bytes=int(row[5]),
        chunker=str(row[6]),
        metadata=dict(json.loads(row[7])),
        created_at=from_us(int(row[8])),
        updated_at=from_us(int(row[9])),
        chunks=chunks,
    )


def _chunk(row: Sequence[Any]) -> StoredChunk:
    fact, page = row[4], row[5]
    return StoredChunk(
        int(row[0]),
        int(row[1]),
        int(row[2]),
        str(row[3]),
        fact and str(fact),
        None if page is None else int(page),
    )
