"""Episodic sessions: what an agent did, as append-only entries numbered from 0.

A session lives in one scope. It may start from an entry of an earlier session (a fork
point), which makes the fork tree and each session's lineage (:mod:`engram.core.episodes`).
Session writes are the episodic record itself: they are not entries of any write ledger.

Who may fork from whom: a session of a person in an application (``PersonAppRef``) only
from a session of the same scope; an agent's session from a session of any agent
resource of the same team (resources without a team form one team of their own), which
is how a spawned child continues its parent's session. A fork point anywhere else reads
as an unknown session (NotFound), so a scope learns nothing of others' sessions.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.core import limits
from engram.core.clock import Clock, from_us, now_us, to_us
from engram.core.errors import Conflict, InvalidInput, NotFound
from engram.core.models import SourceRef
from engram.core.ports import NewEntry
from engram.core.records import Entry as Entry  # re-exported
from engram.core.records import Session as Session
from engram.core.scopes import PersonAppRef, Scope
from engram.core.text import check_text

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx

MAX_ENTRY_BYTES = 64 * 1024  # an entry's content, UTF-8 encoded
MAX_APPEND = 1000  # entries in one append
MAX_FORK_DEPTH = 1000  # forks between a session and its root
MAX_SESSION_NAME_CHARS = limits.MAX_SESSION_NAME_CHARS


class Sessions:
    """Starting sessions and appending to them (``mem.sessions``)."""

    def __init__(self, store: Store, *, clock: Clock = now_us) -> None:
        self._store = store
        self._now = clock

    def start(
        self,
        ref: Scope,
        *,
        session_id: str | None = None,
        name: str | None = None,
        fork_of: SourceRef | None = None,
    ) -> Session:
        """A new session in the scope, empty, perhaps forked from an entry of another.

        Starting again with the same ``session_id``, name and fork point returns the
        session as it is (a retry); the id taken otherwise is Conflict. Raises
        InvalidInput (bad id, name or fork point), NotFound (the fork point is not an
        entry of a session this scope may fork from), InvalidInput past 1,000 forks.
        """
        sid = check_session_id(session_id) if session_id is not None else new_session_id()
        title = (
            None
            if name is None
            else check_text(name, "name", max_chars=MAX_SESSION_NAME_CHARS, strip=True)
        )
        point = limits.check_source_ref(fork_of)
        now, store = self._now(), self._store

        def write(tx: Tx) -> Session:
            existing = store.sessions.get(tx, sid, hold=True)  # two starts take turns
            wanted = (ref, title, point)
            if existing is not None:
                if (existing.scope, existing.name, existing.fork_of) == wanted:
                    return existing
                raise Conflict(f"session id {sid!r} is taken")
            depth = 0 if point is None else fork_depth(store, tx, ref, point)
            session = Session(sid, ref, title, point, depth, from_us(now), 0)
            store.sessions.insert(tx, session)
            return session

        return store.run(write)

    def get(self, ref: Scope, session_id: str) -> Session:
        """The scope's session. Raises NotFound (also for another scope's session)."""
        sid, store = check_session_id(session_id), self._store
        found = store.run(lambda tx: store.sessions.get(tx, sid), write=False)
        if found is None or found.scope != ref:
            raise NotFound(f"no session {session_id!r} in this scope")
        return found

    def latest(self, ref: Scope) -> Session:
        """The scope's newest session. Raises NotFound when it has none."""
        store = self._store
        found = store.run(lambda tx: store.sessions.latest(tx, ref), write=False)
        if found is None:
            raise NotFound("this scope has no session yet", hint="start one first")
        return found

    def find(self, session_id: str) -> Session:
        """A session by id alone, whatever its scope (for an edge that checks the scope
        itself). Raises NotFound."""
        sid, store = check_session_id(session_id), self._store
        found = store.run(lambda tx: store.sessions.get(tx, sid), write=False)
        if found is None:
            raise NotFound(f"no session {session_id!r}")
        return found

    def append(
        self,
        ref_or_session: Scope | Session,
        entries: Sequence[Entry],
        *,
        session_id: str | None = None,
        expected_next: int | None = None,
    ) -> range:
        """Appends ``entries`` in order; the indexes written.

        The session is ``ref_or_session`` itself, or the scope's session ``session_id``,
        or, with a scope alone, the scope's newest session. ``expected_next`` says where
        the caller believes the session ends: a retry whose entries are already there
        from that index returns the same range and writes nothing; any other stale
        value is Conflict. All or nothing: InvalidInput (a kind or role over 128
        characters, content over 64 KiB, a naive time, data that is not JSON, more than
        1,000 entries) and NotFound (no such session in the scope) write nothing.
        """
        checked = check_entries(entries)
        if expected_next is not None:
            limits.check_count(expected_next, "expected_next")
        scope, sid = _target(ref_or_session, session_id)
        now, store = self._now(), self._store

        def write(tx: Tx) -> range:
            session = _session_for(store, tx, scope, sid)
            start = session.next_index
            if expected_next is not None and expected_next != start:
                return _retried(store, tx, session, checked, expected_next)
            rows = [
                _stored(entry, data, session.id, start + n, now)
                for n, (entry, data) in enumerate(checked)
            ]
            if rows:
                store.sessions.append(tx, session.id, start, rows)
            return range(start, start + len(rows))

        return store.run(write)


def write_entries(
    store: Store, tx: Tx, session: Session, entries: Sequence[Entry], now_us: int
) -> range:
    """Appends checked ``entries`` to a session held in ``tx``; the indexes written."""
    start = session.next_index
    rows = [
        _stored(entry, data, session.id, start + n, now_us)
        for n, (entry, data) in enumerate(check_entries(entries))
    ]
    if rows:
        store.sessions.append(tx, session.id, start, rows)
    return range(start, start + len(rows))


def retried(
    store: Store, tx: Tx, session: Session, entries: Sequence[Entry], expected: int
) -> range:
    """The range of a retry whose ``entries`` are stored already from ``expected``; else
    Conflict."""
    return _retried(store, tx, session, check_entries(entries), expected)


def new_session_id() -> str:
    return "s_" + secrets.token_hex(12)


def check_session_id(value: object) -> str:
    """A session id: the text a SourceRef's ``sandbox_id`` may hold (1 to 128 characters)."""
    return limits.check_label(value, "session id")


def check_entries(entries: object) -> list[tuple[Entry, str | None]]:
    """Each entry checked, with its data as stored JSON (None without data)."""
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        raise InvalidInput("entries must be a list of Entry")
    if len(entries) > MAX_APPEND:
        raise InvalidInput(f"{len(entries)} entries given; one append takes at most {MAX_APPEND}")
    return [_check_entry(entry, n) for n, entry in enumerate(entries)]


def _check_entry(entry: object, n: int) -> tuple[Entry, str | None]:
    if not isinstance(entry, Entry):
        raise InvalidInput(f"entries[{n}] must be an Entry(kind, content, role, at, data)")
    kind = limits.check_label(entry.kind, f"entries[{n}].kind")
    role = None if entry.role is None else limits.check_label(entry.role, f"entries[{n}].role")
    content = check_text(
        entry.content, f"entries[{n}].content", max_chars=MAX_ENTRY_BYTES, empty=True
    )
    size = len(content.encode("utf-8"))
    if size > MAX_ENTRY_BYTES:
        raise InvalidInput(
            f"entries[{n}].content is {size} bytes encoded; the limit is {MAX_ENTRY_BYTES} (64 KiB)"
        )
    at = limits.check_time(entry.at, f"entries[{n}].at")
    data = None if entry.data is None else limits.encode_value(entry.data, f"entries[{n}].data")
    return Entry(kind, content, role, at, entry.data), data


def may_fork(child: Scope, parent: Scope) -> bool:
    """Whether a session of ``child`` may start from a session of ``parent``."""
    if isinstance(child, PersonAppRef) or isinstance(parent, PersonAppRef):
        return child == parent
    return child.team_id == parent.team_id


def fork_depth(store: Store, tx: Tx, ref: Scope, point: SourceRef) -> int:
    """The depth of a session forked at ``point``; NotFound unless ``point`` is an entry
    of a session ``ref`` may fork from, InvalidInput past the depth cap."""
    parent = store.sessions.get(tx, point.sandbox_id)
    if parent is None or not may_fork(ref, parent.scope):
        raise NotFound(f"no session {point.sandbox_id!r} to fork from")
    if point.entry_index >= parent.next_index:
        raise NotFound(
            f"session {parent.id!r} has no entry {point.entry_index} (it has {parent.next_index})"
        )
    if parent.depth + 1 > MAX_FORK_DEPTH:
        raise InvalidInput(f"a session may be at most {MAX_FORK_DEPTH} forks from its root")
    return parent.depth + 1


def fork_latest(store: Store, tx: Tx, parent: Scope, child: Scope, now_us: int) -> Session | None:
    """Inside a spawn: a session of ``child`` forked from the last entry of ``parent``'s
    newest session; None (nothing started) when the parent has no session or its newest
    has no entries yet, since a fork point must be an entry."""
    latest = store.sessions.latest(tx, parent)
    if latest is None or latest.next_index == 0:
        return None
    point = SourceRef(latest.id, latest.next_index - 1)
    session = Session(
        new_session_id(),
        child,
        None,
        point,
        fork_depth(store, tx, child, point),
        from_us(now_us),
        0,
    )
    store.sessions.insert(tx, session)
    return session


def _target(ref_or_session: Scope | Session, session_id: str | None) -> tuple[Scope, str | None]:
    if isinstance(ref_or_session, Session):
        if session_id is not None and session_id != ref_or_session.id:
            raise InvalidInput("give a session or a session_id, not two different ones")
        return ref_or_session.scope, ref_or_session.id
    return ref_or_session, None if session_id is None else check_session_id(session_id)


def _session_for(store: Store, tx: Tx, scope: Scope, sid: str | None) -> Session:
    """The session, held against other appends until ``tx`` ends."""
    if sid is None:
        latest = store.sessions.latest(tx, scope)
        if latest is None:
            raise NotFound("this scope has no session yet", hint="start one first")
        sid = latest.id
    session = store.sessions.get(tx, sid, hold=True)
    if session is None or session.scope != scope:
        raise NotFound(f"no session {sid!r} in this scope")
    return session


def _retried(
    store: Store, tx: Tx, session: Session, checked: list[tuple[Entry, str | None]], expected: int
) -> range:
    """The range of a retry whose entries are already stored from ``expected``; else
    Conflict."""
    stop = expected + len(checked)
    if expected < session.next_index and stop <= session.next_index:
        stored = store.sessions.entries(tx, session.id, expected, stop)
        if all(_same(entry, data, old) for (entry, data), old in zip(checked, stored, strict=True)):
            return range(expected, stop)
    raise Conflict(
        f"session {session.id!r} has {session.next_index} entries, not {expected}; "
        "nothing was written",
        hint=f"read the session again, or append with expected_next={session.next_index}",
    )


def _same(entry: Entry, data: str | None, stored: Entry) -> bool:
    """Whether a retried entry is the stored one (its time only when it gave one)."""
    return (
        (entry.kind, entry.role, entry.content) == (stored.kind, stored.role, stored.content)
        and (None if data is None else json.loads(data)) == stored.data
        and (entry.at is None or entry.at == stored.at)
    )


def _stored(entry: Entry, data: str | None, session_id: str, index: int, now: int) -> NewEntry:
    at = from_us(to_us(entry.at) if entry.at is not None else now)
    return NewEntry(replace(entry, at=at, session_id=session_id, index=index), data)
