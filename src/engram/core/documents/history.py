"""A document in the ledger: its before-state as an item records it, a forget that
records it, and a revert that puts it back (:mod:`engram.core.undo`)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from engram.core import ledger, rules
from engram.core.clock import from_us, to_us
from engram.core.documents.models import Document, StoredChunk
from engram.core.errors import Conflict
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope


def state(doc: Document | None) -> str:
    """A document's before-state for the ledger: absent, or all it holds."""
    if doc is None:
        return ledger.ABSENT
    fields = asdict(doc)
    fields["created_at"] = to_us(doc.created_at)
    fields["updated_at"] = to_us(doc.updated_at)
    fields["chunks"] = [[c.idx, c.start, c.end, c.heading, c.fact_id, c.page] for c in doc.chunks]
    return json.dumps({"state": "live", "document": fields})


def from_state(before: dict[str, Any]) -> Document | None:
    """The document a before-state holds (None: it was absent)."""
    fields = before.get("document")
    if fields is None:
        return None
    chunks = tuple(StoredChunk(*c) for c in fields.pop("chunks"))
    fields["created_at"] = from_us(fields["created_at"])
    fields["updated_at"] = from_us(fields["updated_at"])
    return Document(**fields, chunks=chunks)


def undo(
    store: Store, tx: Tx, scope: Scope, change: Any, rec: ledger.Entry, token: int | None
) -> None:
    """Puts a document back as a ledger item's before-state holds it."""
    target = from_state(ledger.decode(change.before))
    current = store.documents.get(tx, scope, change.object_id)
    if target is None:
        store.documents.delete(tx, scope, change.object_id)
        rec.record("document", change.object_id, "forget", state(current), token)
    else:
        holder = store.documents.by_source(tx, scope, target.source)
        if holder is not None and holder.id != target.id:
            # Written again since under the same name (an ingest, or the wiki's next
            # compile): two documents never share one; the whole revert changes nothing.
            raise Conflict(
                f"the revert would put back document {target.id} as {target.source!r}, "
                f"which document {holder.id} holds now; nothing was changed",
                hint="forget or revert what wrote it first",
            )
        store.documents.put(tx, scope, target)
        rec.record("document", change.object_id, "ingest", state(current), token)


def forget(rec: ledger.Entry, document: Document, *, hard: bool, action: str = "erase") -> None:
    """Forgets the document and the facts only its chunks name, in the entry: softly (the
    facts to the trash, the document's before-state kept for a revert), or for good (the
    facts deleted, and no before-state keeps its title or front matter; each an item of
    the entry with ``action``)."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    store.documents.delete(tx, scope, document.id)
    ids = sorted({c.fact_id for c in document.chunks if c.fact_id is not None})
    named = store.documents.naming(tx, scope, ids)
    unnamed = [i for i in ids if i not in named]
    if hard:
        store.ledger.scrub(tx, scope, [document.id], kind="document", sparing=rec.seq)
        rec.record("document", document.id, action)
        rules.erase(rec, unnamed, action=action)
    else:
        rec.record("document", document.id, "forget", state(document))
        rules.trash(rec, unnamed)
