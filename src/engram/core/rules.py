"""The rules every write obeys, on any backend, inside the caller's transaction: the caps,
forget-all's confirmed count, compare-and-set versions, a fork's refusal to land on
memory that is already there, the embedding model's check, the ids of new facts, what a
soft forget, a restore and a deletion for good do, and the trash's retention. Each write
records what it changes in its ledger entry (:mod:`engram.core.ledger`)."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Sequence
from typing import Any

from engram.core import ledger, limits
from engram.core.errors import Conflict, EmbedderMismatch, NotFound
from engram.core.models import Caps, Compaction, DeletionReceipt, Fact
from engram.core.ports import ModelRecord, Store, Tx
from engram.core.scopes import ResourceRef, Scope


def new_fact_id() -> str:
    """``f_``, the microsecond it was made (48 bits, hex) and 48 random bits: a fact's id
    is unique and tells nothing of its words, and ids made later sort after, so every
    index keyed by a fact's id (its row's, its mentions', its ledger items') grows at its
    end. With wholly random ids, each write of a batch landed on a page of its own, and a
    batch into a large scope rewrote most of those indexes."""
    return new_fact_ids(1)[0]


def new_fact_ids(count: int) -> list[str]:
    """``count`` ids as :func:`new_fact_id` makes them, in the order they sort: one
    microsecond, and random bits read from the system at once (a read a fact was 3.5% of
    a large batch's write), sorted."""
    stamp = "f_" + format(time.time_ns() // 1000 & 0xFFFF_FFFF_FFFF, "012x")
    raw = secrets.token_bytes(6 * count)
    bits = sorted(int.from_bytes(raw[6 * i : 6 * (i + 1)], "big") for i in range(count))
    return [stamp + format(b, "012x") for b in bits]


def content_hash(text: str) -> str:
    return hashlib.sha256(limits.normalize_for_hash(text).encode("utf-8")).hexdigest()


def apply_caps(rec: ledger.Entry, caps: Caps) -> Compaction:
    """Moves the scope's facts whose ``expires_at`` has come and those older than
    ``caps.max_age_us``, then its oldest beyond ``caps.max_facts``, to the trash."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    expired = trash(rec, store.facts.expired(tx, scope, rec.now))
    over: list[str] = []
    if caps.max_age_us:
        expired += trash(rec, store.facts.created_before(tx, scope, rec.now - caps.max_age_us))
    if caps.max_facts:
        count = store.facts.count(tx, scope)
        if count > caps.max_facts:
            over = trash(rec, store.facts.oldest(tx, scope, count - caps.max_facts))
    return Compaction(expired, over)


def trash(rec: ledger.Entry, ids: Sequence[str] | None) -> list[str]:
    """Soft forget: the scope's live facts among ``ids`` (every one, for None) go to the
    trash; the ids moved."""
    moved = rec.store.facts.trash(rec.tx, rec.scope, ids, rec.now)
    for fact_id in moved:
        rec.record("fact", fact_id, "trash", ledger.LIVE)
    return moved


def restore(store: Store, tx: Tx, scope: Scope, fact_id: str) -> Fact:
    """Brings a trashed fact back. Raises NotFound (not in the scope's trash) and
    Conflict (the scope holds its words again, as another fact)."""
    return restore_many(store, tx, scope, [fact_id])[0]


def restore_many(store: Store, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
    """Brings trashed facts back (distinct ids), in the order given, each in a new
    position after the scope's others. Raises NotFound (one not in the scope's trash)
    and Conflict (the scope holds one's words again, as another fact, or two of them
    hold the same words), before any comes back."""
    if not ids:
        return []
    found = store.facts.trashed(tx, scope, ids)
    for fact_id in ids:
        if fact_id not in found:
            raise NotFound(f"no fact {fact_id!r} in this scope's trash")
    digests = {fact_id: content_hash(found[fact_id][0].content) for fact_id in ids}
    held = store.facts.by_hashes(tx, scope, list(dict.fromkeys(digests.values())))
    coming: dict[str, str] = {}
    for fact_id, digest in digests.items():
        other = held.get(digest)
        if other is not None:
            raise Conflict(
                f"fact {fact_id} cannot come back: this scope holds its words again as "
                f"fact {other.id}"
            )
        if digest in coming:
            raise Conflict(
                f"fact {fact_id} cannot come back with fact {coming[digest]}: they hold "
                "the same words"
            )
        coming[digest] = fact_id
    restored = store.facts.restore(tx, scope, ids)
    assert [f.id for f in restored] == list(ids)
    return restored


def erase(rec: ledger.Entry, ids: Sequence[str], *, action: str = "erase") -> DeletionReceipt:
    """Deletion for good of the scope's facts among ``ids``, live or trashed: the rows
    go, and every before-state the ledger holds of them is erased. Each is an item of
    the entry with ``action`` (:data:`engram.core.ledger.DROP` for a derived copy)."""
    live, trashed = rec.store.facts.erase(rec.tx, rec.scope, ids)
    gone = [*live, *trashed]
    scrubbed = rec.store.ledger.scrub(rec.tx, rec.scope, gone, sparing=rec.seq)
    for fact_id in gone:
        rec.record("fact", fact_id, action)
    return DeletionReceipt(len(live), len(trashed), scrubbed)


def erase_scope(rec: ledger.Entry, turn_user: str | None) -> DeletionReceipt:
    """Deletion for good of every fact of the scope (only those written for
    ``turn_user``, if given), with the ledger's before-states of them; each fact's
    history ends with its deletion."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    ids = [
        *store.facts.ids(tx, scope, turn_user=turn_user),
        *store.facts.trash_ids(tx, scope, turn_user=turn_user),
    ]
    if turn_user is not None:
        return erase(rec, ids)
    live, trashed = store.facts.erase_scope(tx, scope)
    # Its sessions' entries, its documents and its graph (what callers asserted too)
    # hold the scope's words as well.
    store.sessions.erase_scope(tx, scope)
    _erase_documents(rec)
    store.graph.erase_scope(tx, scope)
    scrubbed = store.ledger.scrub(tx, scope, None, sparing=rec.seq)
    for fact_id in ids:
        rec.record("fact", fact_id, "erase")
    return DeletionReceipt(live, trashed, scrubbed)


def _erase_documents(rec: ledger.Entry) -> None:
    """The scope's documents go with its facts: their titles and spans are its words too."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    while found := store.documents.list(tx, scope, after=None, limit=1000):
        for document in found:
            store.documents.delete(tx, scope, document.id)
            rec.record("document", document.id, "erase")


def purge_trash(rec: ledger.Entry, retention_us: int) -> int:
    """Deletes for good the scope's facts trashed more than ``retention_us`` ago."""
    if not retention_us:
        return 0
    expired = rec.store.facts.trash_expired(rec.tx, rec.scope, rec.now - retention_us)
    return erase(rec, expired).trashed if expired else 0


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


def fork(rec: ledger.Entry, parent: Scope, *, into_existing: bool) -> tuple[int, int]:
    """Copies the parent's live working keys and facts (vectors too) into the entry's
    scope, the child; (working keys, facts) copied. Raises Conflict, copying nothing,
    when the child holds a live working key or a fact and the caller did not ask to fork
    into existing memory. The caller holds both scopes' locks."""
    store, tx, child, now_us = rec.store, rec.tx, rec.scope, rec.now
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
    copied = [
        key
        for key, (_, _, expires) in store.working.raw(tx, parent).items()
        if expires is None or expires > now_us
    ]
    before = store.working.raw(tx, child, copied) if copied else {}
    keys = store.working.copy_scope(tx, parent, child, now_us)
    for key in copied:
        rec.record("working", key, "set", ledger.working_value(before.get(key)))
    ids = new_fact_ids(store.facts.count(tx, parent))
    added = store.facts.copy_scope(tx, parent, child, ids)
    for fact_id in added:
        rec.record("fact", fact_id, "add", ledger.ABSENT)
    return keys, len(added)


# The largest value a stored vector may hold: an L2-normalised vector's values lie in
# [-1, 1], with room for float32 rounding. Stores may keep vectors at a precision made for
# that range (SQLite's float16).
UNIT_BOUND = 1.001


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
        if vector.size and not float(abs(vector).max()) <= UNIT_BOUND:  # NaN fails too
            raise EmbedderMismatch(
                f"a vector holds the value {float(abs(vector).max()):g}: vectors are "
                "L2-normalised, so every value lies in [-1, 1]"
            )
    if store.models.get(tx) == model:
        return
    stored = store.models.get(tx, hold=True)  # another writer may be recording it
    if stored == model:
        return
    if stored is not None and store.facts.any(tx):
        raise EmbedderMismatch(stored.mismatch(model))
    store.models.put(tx, model)


def check_query_model(store: Store, tx: Tx, model: ModelRecord) -> None:
    """Inside a read that compares a query's vector with the stored ones: raises
    EmbedderMismatch when the store's vectors are another model's than the query's (the
    store was re-embedded, or is being re-embedded, since this process opened it), as a
    write would: a ranking by incomparable vectors would be noise that looks like an
    answer."""
    stored = store.models.get(tx)
    if stored is not None and stored != model and store.facts.any(tx):
        raise EmbedderMismatch(
            f"this store's vectors are now model {stored.model!r} ({stored.dimension} "
            f"dimensions), and this process embeds queries with {model.model!r} "
            f"({model.dimension}): they are not comparable, so nothing was recalled",
            hint="the store was re-embedded while this process had it open: restart it "
            "with the store's model",
        )


def require_fact(store: Store, tx: Tx, scope: Scope, fact_id: str) -> None:
    """Raises NotFound unless the scope holds the fact, live or in the trash: a read
    about one fact (its history, its feedback) answers for the scope's facts only, never
    an empty answer that looks like "nothing happened to it"."""
    if store.facts.get(tx, scope, fact_id) is None and not store.facts.trashed(
        tx, scope, [fact_id]
    ):
        raise NotFound(f"no fact {fact_id!r} in this scope")
