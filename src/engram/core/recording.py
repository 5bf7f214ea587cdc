"""A write to memory, recorded: the one way every write path changes a scope.

:func:`write` opens the write's ledger entry (:mod:`engram.core.ledger`) in the
transaction, runs the work, lets the copies of what it changed follow their source
(:mod:`engram.core.derived`: a turn's neighbours' context, a session's entries, the wiki's
pages) so that their changes are items of the same entry, closes the entry, and leaves
the graph to read the facts the transaction queued (added, restored or reworded, or
naming an entity that went) just before it commits (:mod:`engram.core.graph.indexing`),
once however many entries it holds. All of it commits together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from engram.core import derived, ledger
from engram.core.graph import indexing
from engram.core.models import Writer
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

T = TypeVar("T")


def write(
    store: Store,
    tx: Tx,
    scope: Scope,
    op: str,
    writer: Writer,
    now_us: int,
    work: Callable[[ledger.Entry], T],
    *,
    reverts: int | None = None,
) -> T:
    """Runs ``work`` with a new entry of the scope's ledger, in ``tx``, and records what
    it changed: the change and its record commit together or not at all."""
    entry = ledger.Entry(store, tx, scope, op, writer, now_us, reverts)
    result = work(entry)
    derived.settle(entry)
    entry.close()
    tx.before_commit(lambda: indexing.settle(store, tx, now_us))
    return result
