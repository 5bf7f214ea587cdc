"""Reading sessions back: a scope's episodes (its own, or with their lineage), the fork
tree, and the entry a verified fact came from.

Lineage flattens a session's ancestry into one stream: each ancestor's entries up to
the fork point its descendant started from, and the session's own, ordered by (time,
depth, session id, index): an ancestor's entry at the same microsecond as the session's
comes after it. One recursive query on both backends walks the ancestry (depth is capped
at 1,000 when a session is started). The tree keeps sibling branches apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from engram.core import limits
from engram.core.clock import to_us
from engram.core.errors import InvalidInput
from engram.core.models import Fact
from engram.core.records import Entry, Session
from engram.core.records import EntryPage as EntryPage  # re-exported
from engram.core.records import SessionNode as SessionNode
from engram.core.scopes import Scope
from engram.core.sessions import MAX_FORK_DEPTH, may_fork

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx

Branch = Literal["own", "lineage"]
MAX_QUERY_WORDS = 16


def recall(
    store: Store,
    ref: Scope,
    *,
    branch: Branch = "own",
    limit: int | None = None,
    after: datetime | None = None,
    query: str | None = None,
) -> EntryPage:
    """The scope's entries (``branch="own"``), or with every ancestor's up to its fork
    point (``"lineage"``), after ``after``, holding every word of ``query`` (substrings,
    ASCII letters in any case; at most 16 words). Raises InvalidInput (a naive ``after``,
    a bad branch, limit or query)."""
    if branch not in ("own", "lineage"):
        raise InvalidInput(f"branch must be own or lineage, got {branch!r}")
    size = limits.check_limit(limit)
    moment = limits.check_time(after, "after")
    words = [] if query is None else limits.check_query(query).split()
    if len(words) > MAX_QUERY_WORDS:
        raise InvalidInput(f"query has {len(words)} words; the limit is {MAX_QUERY_WORDS}")
    depth = MAX_FORK_DEPTH if branch == "lineage" else 0
    after_us = None if moment is None else to_us(moment)
    rows = store.run(
        lambda tx: store.sessions.episodes(
            tx, ref, depth=depth, after_us=after_us, words=words, limit=size + 1
        ),
        write=False,
    )
    return _page(rows, size)


def _page(rows: list[Entry], size: int) -> EntryPage:
    if len(rows) <= size:
        return EntryPage(rows, None)
    page = rows[:size]
    last = page[-1].at
    whole = [entry for entry in page if entry.at != last]
    # Cutting between two entries of one microsecond would lose the second: stop before.
    kept = whole if whole and rows[size].at == last else page
    return EntryPage(kept, kept[-1].at)


def tree(store: Store, ref: Scope) -> list[SessionNode]:
    """The fork trees that hold the scope's sessions, root first: each root (a session
    started from no other) with its entries and what was forked from it, in other
    scopes too where a fork may cross (agents of one team); empty without sessions."""

    def read(tx: Tx) -> tuple[list[Session], list[Entry]]:
        sessions = store.sessions.forest(tx, ref)
        return sessions, store.sessions.entries_of(tx, [s.id for s in sessions])

    sessions, entries = store.run(read, write=False)
    by_session: dict[str, list[Entry]] = {s.id: [] for s in sessions}
    for entry in entries:
        by_session[str(entry.session_id)].append(entry)
    nodes = {s.id: SessionNode(s, by_session[s.id]) for s in sessions}
    roots: list[SessionNode] = []
    for session in sessions:  # in order of start, so children are in that order too
        parent = None if session.fork_of is None else nodes.get(session.fork_of.sandbox_id)
        (roots if parent is None else parent.children).append(nodes[session.id])
    return roots


def source(store: Store, fact: Fact) -> Entry | None:
    """The entry a verified fact points at; None for an unverified fact, or when that
    entry is not there or belongs to a session the fact's scope could not fork from."""
    ref = fact.source_ref
    if ref is None:
        return None

    def read(tx: Tx) -> Entry | None:
        session = store.sessions.get(tx, ref.sandbox_id)
        if session is None or not may_fork(fact.scope, session.scope):
            return None
        found = store.sessions.entries(tx, session.id, ref.entry_index, ref.entry_index + 1)
        return found[0] if found else None

    return store.run(read, write=False)
