"""Reverting a ledger entry: each object it changed goes back to its state before, as a
new entry, inside one transaction.

An entry can be reverted only while every object it changed is still as it left it
(:mod:`engram.core.ledger`: the object's newest item carries the entry's token);
otherwise the later entries that changed them are named and nothing changes. A revert's
own items carry the tokens the objects had before the reverted entry, so reverting the
revert redoes it, and reverting every entry newest first gives back the first state.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from engram.core import ledger, recording, rules
from engram.core.clock import from_us, to_us
from engram.core.consolidation import strength_state
from engram.core.documents import history
from engram.core.errors import Conflict, NotFound, RevertBlocked
from engram.core.graph import assertions
from engram.core.models import Change, LedgerEntry, Writer
from engram.core.records import Share
from engram.core.sharing import share_parts

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx
    from engram.core.scopes import Scope

REVERTIBLE = ("document", "entity", "fact", "relation", "relation_type", "share", "working")


def revert(
    store: Store, tx: Tx, scope: Scope, seq: int, writer: Writer, now_us: int
) -> LedgerEntry:
    """Reverts entry ``seq`` of the scope's ledger; the new entry (its first changes, as
    a listing shows them). Raises NotFound, and Conflict (changing nothing) for an entry
    whose before-states were erased, one that cannot be undone, or one blocked by later
    changes (RevertBlocked names them).

    The entry's items are read a page at a time, twice: once to check them all, once to
    undo them, so memory holds a page however many objects the entry changed."""
    entry = store.ledger.entry(tx, scope, seq)
    if entry is None:
        raise NotFound(f"no ledger entry {seq} in this scope")
    if entry.scrubbed:
        raise Conflict(
            f"entry {seq} cannot be reverted: its before-state was erased by a deletion for good"
        )
    fixed: set[str] = set()
    erased = False
    blocked: list[tuple[str, str]] = []
    for page in _pages(store, tx, seq):
        fixed.update(c.kind for c in page if not _revertible(c))
        erased = erased or any(c.action == "erase" for c in page)
        if fixed or erased:
            continue
        for kind, changes in _by_kind(page).items():
            now = store.ledger.tokens(tx, scope, kind, [c.object_id for c in changes])
            for change in changes:
                newest = now.get(change.object_id)
                if newest is None or newest[1] != change.token:
                    blocked.append((kind, change.object_id))
    if fixed or erased:
        what = ", ".join(sorted(fixed)) if fixed else "a deletion for good"
        raise Conflict(f"entry {seq} ({entry.op}) cannot be reverted: it changed {what}")
    if blocked:
        later = store.ledger.later(tx, scope, blocked, seq)
        shown = ", ".join(str(n) for n in later) or "none left in the ledger"
        raise RevertBlocked(
            f"entry {seq} cannot be reverted: later entries changed what it changed "
            f"({shown}); nothing was changed",
            later=tuple(later),
            hint="revert the later entries first, newest first",
        )

    def undo(rec: ledger.Entry) -> int:
        restoring: list[tuple[Change, int | None]] = []  # facts back from the trash, in order
        for page in _pages(store, tx, seq):
            prior: dict[tuple[str, str], int | None] = {}
            for kind, changes in _by_kind(page).items():
                ids = [c.object_id for c in changes]
                before = store.ledger.tokens(tx, scope, kind, ids, before_entry=seq)
                for object_id in ids:
                    found = before.get(object_id)
                    prior[(kind, object_id)] = None if found is None else found[1]
            for change in page:
                token = prior[(change.kind, change.object_id)]
                if _restores(change):
                    restoring.append((change, token))
                    if len(restoring) == RESTORED_AT_ONCE:
                        _restore(store, tx, scope, restoring, rec)
                    continue
                _restore(store, tx, scope, restoring, rec)
                UNDO[change.kind](store, tx, scope, change, rec, token)
        _restore(store, tx, scope, restoring, rec)
        return rec.seq

    new = recording.write(store, tx, scope, "revert", writer, now_us, undo, reverts=seq)
    store.ledger.mark_reverted(tx, seq, new)
    if entry.reverts is not None:  # reverting a revert redoes what it had undone
        store.ledger.mark_reverted(tx, entry.reverts, None)
    reverted = store.ledger.entry(tx, scope, new)
    assert reverted is not None
    return reverted


# An entry's items read at once: reverting the soft forget of a 1.15M-fact scope held
# every one of its items, their tokens and before-states in memory (1.7 GB at its peak).
PAGE = 10_000


def _pages(store: Store, tx: Tx, seq: int) -> Iterator[list[Change]]:
    """Entry ``seq``'s items but the derived copies' (written again, not undone), a
    page at a time, in (kind, object) order."""
    after: tuple[str, str] | None = None
    while page := store.ledger.items(tx, seq, after, PAGE):
        after = (page[-1].kind, page[-1].object_id)
        yield [c for c in page if c.action != ledger.DROP]


def _by_kind(changes: list[Change]) -> dict[str, list[Change]]:
    by_kind: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        by_kind[change.kind].append(change)
    return by_kind


def _revertible(change: Change) -> bool:
    # A feedback row is only added; consolidation applying it to a strength is undone.
    return change.kind in REVERTIBLE or (change.kind, change.action) == ("feedback", "apply")


# Facts brought back from the trash by one read and one write each, rather than one
# fact at a time: the revert of a 100k-fact soft forget spent 18.5 of its 40 s
# (profiled) restoring its facts one by one.
RESTORED_AT_ONCE = 1_000


def _restores(change: Change) -> bool:
    """Whether undoing ``change`` brings a fact back from the trash as it is there."""
    if change.kind != "fact":
        return False
    target = ledger.decode(change.before)
    return target.get("state") == "live" and not {"strength", "context", "words"} & set(target)


def _restore(
    store: Store,
    tx: Tx,
    scope: Scope,
    run: list[tuple[Change, int | None]],
    rec: ledger.Entry,
) -> None:
    """Undoes the changes of ``run`` (each :func:`_restores`, with the token its object
    had before), then empties it: the facts not live come back at once."""
    if not run:
        return
    ids = [change.object_id for change, _ in run]
    live = store.facts.by_ids(tx, scope, ids)
    rules.restore_many(store, tx, scope, [i for i in ids if i not in live])
    for fact_id, (_, token) in zip(ids, run, strict=True):
        before = ledger.LIVE if fact_id in live else ledger.TRASHED
        rec.record("fact", fact_id, "restore", before, token)
    run.clear()


def _fact(
    store: Store, tx: Tx, scope: Scope, change: Change, rec: ledger.Entry, token: int | None
) -> None:
    target = ledger.decode(change.before)
    fact_id = change.object_id
    live = store.facts.get(tx, scope, fact_id)
    if target.get("state") != "live":  # it did not exist, or was in the trash: trash it
        if live is not None:
            store.facts.trash(tx, scope, [fact_id], rec.now)
        rec.record("fact", fact_id, "trash", ledger.LIVE if live else ledger.TRASHED, token)
        return
    if "strength" in target:  # consolidation moved its strength
        if live is None:
            raise Conflict(f"fact {fact_id} is no longer live; nothing was changed")
        store.facts.set_strength(tx, scope, fact_id, float(target["strength"]))
        rec.record("fact", fact_id, "strength", strength_state(live.strength), token)
        return
    if "context" in target:  # a conversation's later turns completed its context
        if live is None:
            raise Conflict(f"fact {fact_id} is no longer live; nothing was changed")
        store.facts.set_context(tx, scope, fact_id, target["context"], rec.now)
        before = json.dumps({"state": "live", "context": live.context})
        rec.record("fact", fact_id, "context", before, token)
        return
    words = target["words"]  # it was live with other words (a restore is _restore's)
    if live is None:
        raise Conflict(f"fact {fact_id} is no longer live; nothing was changed")
    other = store.facts.by_hashes(tx, scope, [words["content_hash"]]).get(words["content_hash"])
    if other is not None and other.id != fact_id:
        raise Conflict(
            f"fact {fact_id} cannot take back its old words: fact {other.id} holds them now"
        )
    current = ledger.words(
        live, rules.content_hash(live.content), store.facts.vector_of(tx, scope, fact_id)
    )
    store.facts.rewrite(
        tx,
        scope,
        fact_id,
        words["content"],
        words["content_hash"],
        ledger.vector_of(words),
        words["corrected_by"],
        words["corrected_at"],
        rec.now,
    )
    rec.record("fact", fact_id, "correct", current, token)


def _working(
    store: Store, tx: Tx, scope: Scope, change: Change, rec: ledger.Entry, token: int | None
) -> None:
    target = ledger.decode(change.before)
    key = change.object_id
    stored = store.working.claim(tx, scope, key)
    current = store.working.raw(tx, scope, [key]).get(key)
    if target.get("unset"):
        store.working.delete(tx, scope, key)
        rec.record("working", key, "delete", ledger.working_value(current), token)
        return
    version = (stored[0] if stored is not None else 0) + 1
    store.working.put(tx, scope, key, target["value"], version, rec.now, target["expires_at"])
    rec.record("working", key, "set", ledger.working_value(current), token)


def _share(
    store: Store, tx: Tx, scope: Scope, change: Change, rec: ledger.Entry, token: int | None
) -> None:
    target = ledger.decode(change.before)
    person, source, reader = share_parts(change.object_id)
    current = store.shares.get(tx, person, source, reader)
    before = ledger.allowance(None if current is None else to_us(current.allowed_at))
    if target.get("allowed"):
        store.shares.put(tx, Share(person, source, reader, from_us(int(target["allowed_at"]))))
        rec.record("share", change.object_id, "allow", before, token)
    else:
        store.shares.delete(tx, person, source, reader)
        rec.record("share", change.object_id, "stop", before, token)


def _feedback(
    store: Store, tx: Tx, scope: Scope, change: Change, rec: ledger.Entry, token: int | None
) -> None:
    applied = bool(ledger.decode(change.before)["applied"])
    store.usage.mark_applied(tx, scope, [change.object_id], applied)
    rec.record("feedback", change.object_id, "apply", json.dumps({"applied": not applied}), token)


def _graph(
    undo: Callable[[ledger.Entry, Change, int | None], None],
) -> Callable[[Store, Tx, Scope, Change, ledger.Entry, int | None], None]:
    def run(
        store: Store, tx: Tx, scope: Scope, change: Change, rec: ledger.Entry, token: int | None
    ) -> None:
        undo(rec, change, token)

    return run


UNDO = {
    "fact": _fact,
    "working": _working,
    "document": history.undo,
    "share": _share,
    "feedback": _feedback,
    "entity": _graph(assertions.undo_entity),
    "relation": _graph(assertions.undo_relation),
    "relation_type": _graph(assertions.undo_relation_type),
}
