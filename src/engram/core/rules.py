"""The rules every write obeys, on any backend, inside the caller's transaction: the caps,
forget-all's confirmed count, compare-and-set versions, a fork's refusal to land on
memory that is already there, the embedding model's check, and the ids of new facts."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from engram.core.errors import Conflict, EmbedderMismatch
from engram.core.models import Caps, Compaction
from engram.core.ports import ModelRecord, Store, Tx
from engram.core.scopes import ResourceRef, Scope


def new_fact_id() -> str:
    return "f_" + secrets.token_hex(12)


def apply_caps(store: Store, tx: Tx, scope: Scope, caps: Caps, now_us: int) -> Compaction:
    """Drops the scope's facts older than ``caps.max_age_us``, then its oldest beyond
    ``caps.max_facts``."""
    expired: list[str] = []
    over: list[str] = []
    if caps.max_age_us:
        expired = store.facts.delete_created_before(tx, scope, now_us - caps.max_age_us)
    if caps.max_facts:
        count = store.facts.count(tx, scope)
        if count > caps.max_facts:
            over = store.facts.delete_oldest(tx, scope, count - caps.max_facts)
    return Compaction(expired, over)


def confirm_count(count: int, expected_count: int) -> None:
    """forget-all's guard: Conflict (nothing forgotten) when the scope holds more facts
    than the caller confirmed."""
    if count > expected_count:
        raise Conflict(
            f"this scope holds {count} facts, more than the {expected_count} confirmed; "
            "nothing was forgotten",
            hint="read the count again and confirm it",
        )


def next_version(
    key: str, stored: tuple[int, int | None] | None, expected_version: int | None, now_us: int
) -> int:
    """The version a set of ``key`` writes, given its stored (version, expires_at): a
    compare-and-set must name the live version (0: unset or expired), else Conflict.
    Versions keep growing across expiry."""
    live = stored is not None and (stored[1] is None or stored[1] > now_us)
    current = stored[0] if stored is not None and live else 0
    if expected_version is not None and expected_version != current:
        raise Conflict(f"key {key!r} is at version {current}, not {expected_version}")
    return (stored[0] if stored is not None else 0) + 1


def fork(
    store: Store, tx: Tx, parent: Scope, child: Scope, now_us: int, *, into_existing: bool
) -> tuple[int, int]:
    """Copies the parent's live working keys and facts (vectors too) into the child;
    (working keys, facts) copied. Raises Conflict, copying nothing, when the child holds
    a live working key or a fact and the caller did not ask to fork into existing memory.
    The caller holds both scopes' locks."""
    if not into_existing:
        keys = store.working.live_count(tx, child, now_us)
        facts = store.facts.any(tx, child)
        if keys or facts:
            shown = child.resource_id if isinstance(child, ResourceRef) else child.key
            raise Conflict(
                f"resource {shown!r} already holds memory ({keys} working keys"
                f"{', and facts' if facts else ''}); a fork would overwrite and merge into it",
                hint="fork into an unused resource, or ask for it explicitly "
                '(into_existing=True, --into-existing, "intoExisting": true)',
            )
    keys = store.working.copy_scope(tx, parent, child, now_us)
    ids = [new_fact_id() for _ in range(store.facts.count(tx, parent))]
    return keys, store.facts.copy_scope(tx, parent, child, ids)


def check_model(store: Store, tx: Tx, model: ModelRecord, vectors: Sequence[Any] = ()) -> None:
    """Inside a write: raises EmbedderMismatch, writing nothing, when ``vectors`` do not
    have the model's width or the store holds vectors of another model; records
    ``model`` when the store holds none (its first vectors, or an emptied store's)."""
    for vector in vectors:
        if vector.shape != (model.dimension,):
            raise EmbedderMismatch(
                f"the embedder returned {vector.shape[-1]} dimensions; "
                f"it declares {model.dimension}"
            )
    if store.models.get(tx) == model:
        return
    stored = store.models.get(tx, hold=True)  # another writer may be recording it
    if stored == model:
        return
    if stored is not None and store.facts.any(tx):
        raise EmbedderMismatch(stored.mismatch(model))
    store.models.put(tx, model)
