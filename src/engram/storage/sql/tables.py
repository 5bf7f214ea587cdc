"""The rows of every table, in the SQL both backends speak (see :mod:`engram.core.ports`
for each method's contract; the statements are built in :mod:`.queries`). A backend
subclasses only what it does its own way: how facts are inserted and copied, their
vectors, and recall's candidates."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engram.core.clock import from_us, to_us
from engram.core.models import Fact, SourceRef, WorkingEntry
from engram.core.ports import Departure, ModelRecord, NewFact, Tx
from engram.core.ranking import Traits
from engram.core.records import Agent, Entry, Session, Share
from engram.core.scopes import Scope, parse_key
from engram.core.sessions import MAX_FORK_DEPTH
from engram.storage.filters import DEFAULT_STRENGTH
from engram.storage.rows import (
    CREATED_AT,
    stored_digest,
    to_agent,
    to_entry,
    to_fact,
    to_session,
    to_session_entry,
    to_traits,
)
from engram.storage.sql import queries as q
from engram.storage.sql.tx import KEYS, MODEL, SESSIONS, SQLTx, sql

if TYPE_CHECKING:
    from engram.core.ports import NewEntry, Vectors

_NEVER = (1 << 62, 1 << 62)  # a position after every fact
VECTORS_AT_ONCE = 2_000  # vectors read in one statement when many are read


class WorkingTable:
    def get(self, tx: Tx, scope: Scope, key: str, now_us: int) -> WorkingEntry | None:
        row = sql(tx).execute(*q.working_live(scope.key, key, now_us)).fetchone()
        return None if row is None else to_entry(row)

    def claim(self, tx: Tx, scope: Scope, key: str) -> tuple[int, int | None] | None:
        t = sql(tx)
        # A hash collision between two keys only makes them wait for each other.
        t.hold(KEYS, f"{scope.key}\x1f{key}")
        row = t.execute(*q.working_version(scope.key, key)).fetchone()
        return None if row is None else (int(row[0]), None if row[1] is None else int(row[1]))

    def put(
        self,
        tx: Tx,
        scope: Scope,
        key: str,
        value_json: str,
        version: int,
        now_us: int,
        expires_at_us: int | None,
    ) -> None:
        sql(tx).recorded().execute(
            *q.working_put(scope.key, key, value_json, version, now_us, expires_at_us)
        )

    def delete(self, tx: Tx, scope: Scope, key: str) -> bool:
        t = sql(tx).recorded().erasing()
        return t.execute(*q.working_delete(scope.key, key)).rowcount > 0

    def page(
        self, tx: Tx, scope: Scope, after: str | None, limit: int, now_us: int
    ) -> list[WorkingEntry]:
        rows = sql(tx).rows(*q.working_page(scope.key, after or "", limit, now_us))
        return [to_entry(r) for r in rows]

    def live_count(self, tx: Tx, scope: Scope, now_us: int) -> int:
        return int(sql(tx).one(*q.working_live_count(scope.key, now_us)))

    def scopes(self, tx: Tx, starting: str, now_us: int) -> list[Scope]:
        return [parse_key(str(r[0])) for r in sql(tx).rows(*q.working_scopes(starting, now_us))]

    def expired(self, tx: Tx, under: Scope | str, now_us: int) -> list[tuple[Scope, str]]:
        if isinstance(under, str):
            rows = sql(tx).rows(*q.working_expired_keys(under, now_us))
        else:
            rows = sql(tx).rows(*q.working_expired_in(under.key, now_us))
        return [(parse_key(str(scope)), str(key)) for scope, key in rows]

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, now_us: int) -> int:
        copied = sql(tx).recorded().execute(*q.working_copy(parent.key, child.key, now_us))
        return int(copied.rowcount)

    def raw(
        self, tx: Tx, scope: Scope, keys: Sequence[str] | None = None
    ) -> dict[str, tuple[str, int, int | None]]:
        t = sql(tx)
        rows = t.rows(*q.working_raw(t.dialect, scope.key, keys))
        return {str(k): (str(v), int(n), None if e is None else int(e)) for k, v, n, e in rows}


class FactTable:
    """Facts as both backends keep them; the insert paths, a fork's copy and vectors
    are each backend's own."""

    def get(self, tx: Tx, scope: Scope, fact_id: str) -> Fact | None:
        t = sql(tx)
        row = t.execute(*q.fact_by_id(t.dialect, scope.key, fact_id)).fetchone()
        return None if row is None else to_fact(row)

    def by_ids(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Fact]:
        if not ids:
            return {}
        t = sql(tx)
        rows = t.rows(*q.facts_by_ids(t.dialect, scope.key, ids))
        return {str(r[0]): to_fact(r) for r in rows}

    def words(
        self, tx: Tx, scope: Scope, ids: Sequence[str]
    ) -> dict[str, tuple[str, str, str | None, datetime]]:
        if not ids:
            return {}
        t = sql(tx)
        rows = t.rows(*q.facts_words(t.dialect, scope.key, ids))
        return {
            str(r[0]): (
                str(r[1]),
                str(r[2]),
                None if r[3] is None else str(r[3]),
                from_us(int(r[4])),
            )
            for r in rows
        }

    def by_hashes(self, tx: Tx, scope: Scope, hashes: Sequence[str]) -> dict[str, Fact]:
        if not hashes:
            return {}
        t = sql(tx)
        stored = {stored_digest(h): h for h in hashes}
        rows = t.rows(*q.facts_by_hashes(t.dialect, scope.key, list(stored)))
        return {stored[str(r[0])]: to_fact(r[1:]) for r in rows}

    def strengths(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, float]:
        if not ids:
            return {}
        t = sql(tx)
        found = t.rows(*q.facts_strengths(t.dialect, scope.key, ids))
        return {str(i): float(s) for i, s in found if s != DEFAULT_STRENGTH}

    def page(
        self, tx: Tx, scope: Scope, before: tuple[int, int] | None, limit: int
    ) -> list[tuple[Fact, tuple[int, int]]]:
        rows = sql(tx).rows(*q.facts_page(scope.key, before or _NEVER, limit))
        return [(to_fact(r), (int(r[CREATED_AT]), int(r[-1]))) for r in rows]

    def count(self, tx: Tx, scope: Scope) -> int:
        return int(sql(tx).one(*q.facts_count(scope.key)))

    def any(self, tx: Tx, scope: Scope | None = None) -> bool:
        found = sql(tx).execute(*q.facts_any(None if scope is None else scope.key))
        return found.fetchone() is not None

    def scope_of(self, tx: Tx, fact_id: str) -> Scope | None:
        row = sql(tx).execute(*q.fact_scope(fact_id)).fetchone()
        return None if row is None else parse_key(str(row[0]))

    def taken(self, tx: Tx, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        t = sql(tx)
        return {str(r[0]) for r in t.rows(*q.ids_taken(t.dialect, ids))}

    def insert(self, tx: Tx, scope: Scope, facts: Sequence[NewFact]) -> set[str]:
        raise NotImplementedError

    def rewrite(
        self,
        tx: Tx,
        scope: Scope,
        fact_id: str,
        content: str,
        content_hash: str,
        vector: Vectors | bytes | None,
        by: str | None,
        by_at_us: int | None,
        now_us: int,
    ) -> Fact | None:
        t = sql(tx).recorded()
        if isinstance(vector, bytes):
            vector = t.dialect.unvector_bytes(vector)
        rewrite = q.fact_rewrite(
            t.dialect, scope.key, fact_id, content, content_hash, by, by_at_us, now_us
        )
        row = t.execute(*rewrite).fetchone()
        if row is None:
            return None
        if vector is not None:  # without one the fact keeps the vector of its old words
            t.execute(*q.vector_set(t.dialect, row[-1], vector))
        return to_fact(row)

    def by_source(
        self, tx: Tx, scope: Scope, sandbox_id: str, entries: Sequence[int]
    ) -> dict[int, Fact]:
        if not entries:
            return {}
        t = sql(tx)
        rows = t.rows(*q.facts_by_source(t.dialect, scope.key, sandbox_id, entries))
        found = [to_fact(r) for r in rows]
        return {f.source_ref.entry_index: f for f in found if f.source_ref is not None}

    def set_context(
        self, tx: Tx, scope: Scope, fact_id: str, context: str | None, now_us: int
    ) -> bool:
        t = sql(tx).recorded()
        return (
            t.execute(*q.fact_set_context(t.dialect, scope.key, fact_id, context, now_us)).rowcount
            > 0
        )

    def trashed_by_source(
        self, tx: Tx, scope: Scope, sandbox_id: str, entries: Sequence[int]
    ) -> dict[int, Fact]:
        if not entries:
            return {}
        t = sql(tx)
        rows = t.rows(*q.trash_by_source(t.dialect, scope.key, sandbox_id, entries))
        found = [to_fact(r[:-1]) for r in rows]
        return {f.source_ref.entry_index: f for f in found if f.source_ref is not None}

    def set_trashed_context(self, tx: Tx, scope: Scope, fact_id: str, context: str | None) -> bool:
        t = sql(tx).recorded()
        return t.execute(*q.trash_set_context(scope.key, fact_id, context)).rowcount > 0

    def departed(self, tx: Tx, limit: int) -> list[Departure]:
        rows = sql(tx).rows(*q.derived_dirty(limit))
        return [
            Departure(
                str(scope),
                str(fact_id),
                None if sid is None else SourceRef(str(sid), int(idx)),
            )
            for scope, fact_id, sid, idx in rows
        ]

    def settled(self, tx: Tx, departures: Sequence[Departure]) -> None:
        sql(tx).executemany(q.DERIVED_SETTLED, [(d.scope, d.fact_id) for d in departures])

    def wiki_listing(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> dict[str, str]:
        t = sql(tx)
        found: dict[str, str] = {}
        for trash in (False, True):
            found |= _pages(t.rows(*q.wiki_listing(t.dialect, scope.key, fact_ids, trash)))
        return found

    def wiki_trash(self, tx: Tx, scope: Scope) -> dict[str, str]:
        return _pages(sql(tx).rows(*q.wiki_trash(scope.key)))

    def wiki_texts(self, tx: Tx, scope: Scope) -> list[tuple[str, str, str]]:
        rows = sql(tx).rows(*q.wiki_texts(scope.key))
        pages = _pages([(r[0], r[1]) for r in rows])
        return [
            (str(r[0]), pages[str(r[0])], f"{r[2]}\n{r[3] or ''}")
            for r in rows
            if str(r[0]) in pages
        ]

    def set_strength(self, tx: Tx, scope: Scope, fact_id: str, strength: float) -> bool:
        t = sql(tx).recorded()
        return t.execute(*q.fact_set_strength(t.dialect, scope.key, fact_id, strength)).rowcount > 0

    def weak(self, tx: Tx, scope: Scope, below: float, cutoff_us: int) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.facts_weak(scope.key, below, cutoff_us))]

    def without_vector(self, tx: Tx, scope: Scope, limit: int) -> list[tuple[int, str, str]]:
        rows = sql(tx).rows(*q.facts_without_vector(scope.key, limit))
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def scope_keys(self, tx: Tx, limit: int, under: str = "") -> list[str]:
        rows = sql(tx).rows(*q.scope_keys(under, limit))
        return [str(r[0]) for r in rows]

    def vector_from_bytes(self, raw: bytes) -> Vectors:
        import numpy as np

        # A read-only view of the bytes, not a copy: an import holds 100k of them at once.
        vector: Vectors = np.frombuffer(raw, dtype="<f4")
        return vector

    def add_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        t = sql(tx).recorded()
        for seq, vector in rows:
            row = (seq, t.dialect.vector(vector))
            t.execute("INSERT INTO fact_vectors (fact, vector) VALUES (?, ?)", row)
            t.execute(*q.vector_set(t.dialect, seq, vector))  # as an update: copies refresh

    def fulltext_sound(self, tx: Tx) -> bool:
        return True  # a generated column, never out of step with its row

    def rebuild_fulltext(self, tx: Tx) -> None:
        sql(tx).recorded()  # nothing to rebuild, but a write all the same

    def traits(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Traits]:
        if not ids:
            return {}
        t = sql(tx)
        return {str(r[0]): to_traits(r) for r in t.rows(*q.facts_by_ids(t.dialect, scope.key, ids))}

    def vectors(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Vectors]:
        if not ids:
            return {}
        t = sql(tx)
        rows = t.rows(*q.vectors_of(t.dialect, scope.key, ids), binary=True)
        return {str(i): t.dialect.unvector(raw) for i, raw in rows if raw is not None}

    def near_pairs(
        self, tx: Tx, scope: Scope, ids: Sequence[str], count: int, at_least: float
    ) -> list[tuple[str, str]] | None:
        import numpy as np  # only vector reads need it

        from engram.storage import neighbours

        def pages() -> Iterator[tuple[list[str], Any]]:
            for start in range(0, len(ids), VECTORS_AT_ONCE):
                found = self.vectors(tx, scope, ids[start : start + VECTORS_AT_ONCE])
                if found:
                    yield list(found), np.vstack(list(found.values()))

        return neighbours.near_pairs(pages(), count, at_least)

    def vector_of(self, tx: Tx, scope: Scope, fact_id: str) -> Vectors | None:
        return self.vectors(tx, scope, [fact_id]).get(fact_id)

    def ids(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.facts_ids(scope.key, turn_user))]

    def created_before(self, tx: Tx, scope: Scope, cutoff_us: int) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.facts_created_before(scope.key, cutoff_us))]

    def oldest(self, tx: Tx, scope: Scope, count: int) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.facts_oldest(scope.key, count))]

    def expired(self, tx: Tx, scope: Scope, at_us: int) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.facts_expired(scope.key, at_us))]

    def trash(self, tx: Tx, scope: Scope, ids: Sequence[str] | None, now_us: int) -> list[str]:
        t = sql(tx).recorded()
        if ids is not None and not ids:
            return []
        if ids is not None:
            return _moved(t, scope, ids, now_us)
        moved: list[str] = []  # the whole scope, a chunk at a time (q.SCOPE_CHUNK)
        while chunk := [str(r[0]) for r in t.rows(*q.facts_first(scope.key))]:
            moved += _moved(t, scope, chunk, now_us)
        return moved

    def trashed(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[Fact, int]]:
        if not ids:
            return {}
        t = sql(tx)
        rows = t.rows(*q.trash_get(t.dialect, scope.key, ids))
        return {str(r[0]): (to_fact(r[:-1]), int(r[-1])) for r in rows}

    def trash_page(
        self, tx: Tx, scope: Scope, before: tuple[int, str] | None, limit: int
    ) -> list[tuple[Fact, int]]:
        rows = sql(tx).rows(*q.trash_page(scope.key, before or (1 << 62, ""), limit))
        return [(to_fact(r[:-1]), int(r[-1])) for r in rows]

    def trash_ids(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.trash_ids(scope.key, turn_user))]

    def trash_expired(self, tx: Tx, scope: Scope, cutoff_us: int) -> list[str]:
        return [str(r[0]) for r in sql(tx).rows(*q.trash_expired(scope.key, cutoff_us))]

    def trash_count(self, tx: Tx, scope: Scope) -> int:
        return int(sql(tx).one(*q.trash_count(scope.key)))

    def restore(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        raise NotImplementedError

    def erase(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> tuple[list[str], list[str]]:
        t = sql(tx).recorded()
        if not ids:
            return [], []
        live = [str(r[0]) for r in t.rows(*q.facts_erase(t.dialect, scope.key, ids))]
        trashed = [str(r[0]) for r in t.rows(*q.trash_erase(t.dialect, scope.key, ids))]
        return live, trashed

    def erase_scope(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> tuple[int, int]:
        t = sql(tx).recorded()
        counts = []
        for erase in (q.facts_erase_scope, q.trash_erase_scope):  # a chunk at a time
            count = 0
            while (gone := t.execute(*erase(scope.key, turn_user)).rowcount) > 0:
                count += gone
            counts.append(count)
        return counts[0], counts[1]

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, ids: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def texts_after(self, tx: Tx, after_seq: int, limit: int) -> list[tuple[int, str, str]]:
        rows = sql(tx).rows(*q.texts_after(after_seq, limit))
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def count_after(self, tx: Tx, after_seq: int) -> int:
        return int(sql(tx).rows(*q.count_after(after_seq))[0][0])

    def replace_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        t = sql(tx)
        for seq, vector in rows:
            t.execute(*q.vector_set(t.dialect, seq, vector))


class ModelTable:
    def get(self, tx: Tx, *, hold: bool = False) -> ModelRecord | None:
        t = sql(tx)
        if hold:
            t.hold(MODEL, "embedding model")
        rows = dict(t.rows(*q.meta_get(q.MODEL_KEYS)))
        if "embedding_model" not in rows:
            return None
        return ModelRecord(str(rows["embedding_model"]), int(str(rows["embedding_dimension"])))

    def put(self, tx: Tx, record: ModelRecord) -> None:
        t = sql(tx)
        t.execute(*q.meta_put("embedding_model", record.model))
        t.execute(*q.meta_put("embedding_dimension", str(record.dimension)))

    def reembedded(self, tx: Tx) -> int:
        rows = dict(sql(tx).rows(*q.meta_get((q.REEMBEDDED_KEY,))))
        return int(str(rows.get(q.REEMBEDDED_KEY, 0)))

    def put_reembedded(self, tx: Tx, seq: int) -> None:
        sql(tx).execute(*q.meta_put(q.REEMBEDDED_KEY, str(seq)))


class AgentTable:
    def insert(self, tx: Tx, agent: Agent) -> None:
        created = to_us(agent.created_at)
        sql(tx).recorded().execute(
            *q.agent_insert(agent.id, agent.name, agent.ref.key, agent.parent_id, created)
        )

    def get(self, tx: Tx, agent_id: str) -> Agent | None:
        row = sql(tx).execute(*q.agent_get(agent_id)).fetchone()
        return None if row is None else to_agent(row)

    def end(self, tx: Tx, agent_id: str, now_us: int) -> None:
        sql(tx).recorded().execute(*q.agent_end(agent_id, now_us))

    def page(self, tx: Tx, after: str | None, limit: int, name: str | None) -> list[Agent]:
        return [to_agent(row) for row in sql(tx).rows(*q.agents_page(after or "", limit, name))]


class ShareTable:
    def put(self, tx: Tx, share: Share) -> None:
        allowed = to_us(share.allowed_at)
        sql(tx).recorded().execute(*q.share_put(share.person, share.source, share.reader, allowed))

    def get(self, tx: Tx, person: str, source: str, reader: str) -> Share | None:
        row = sql(tx).execute(*q.share_get(person, source, reader)).fetchone()
        return None if row is None else Share(person, source, reader, from_us(int(row[0])))

    def delete(self, tx: Tx, person: str, source: str, reader: str) -> bool:
        return sql(tx).recorded().execute(*q.share_delete(person, source, reader)).rowcount > 0

    def listed(self, tx: Tx, person: str, source: str | None, reader: str | None) -> list[Share]:
        rows = sql(tx).rows(*q.shares_listed(person, source, reader))
        return [Share(person, str(s), str(r), from_us(int(at))) for s, r, at in rows]


class SessionTable:
    def get(self, tx: Tx, session_id: str, *, hold: bool = False) -> Session | None:
        t = sql(tx)
        if hold:
            t.hold(SESSIONS, session_id)
        row = t.execute(*q.session_get(session_id)).fetchone()
        return None if row is None else to_session(row)

    def latest(self, tx: Tx, scope: Scope) -> Session | None:
        row = sql(tx).execute(*q.session_latest(scope.key)).fetchone()
        return None if row is None else to_session(row)

    def insert(self, tx: Tx, session: Session) -> None:
        fork = session.fork_of
        row = (
            session.id,
            session.scope.key,
            session.name,
            None if fork is None else fork.sandbox_id,
            None if fork is None else fork.entry_index,
            session.depth,
            to_us(session.created_at),
            session.next_index,
        )
        sql(tx).execute(*q.session_insert(row))

    def append(self, tx: Tx, session_id: str, start: int, entries: Sequence[NewEntry]) -> None:
        t = sql(tx)
        rows = [_entry_row(new) for new in entries]
        t.executemany(q.ENTRY_INSERT, rows)
        t.execute(*q.session_advance(session_id, start + len(rows)))

    def entries(self, tx: Tx, session_id: str, start: int, stop: int) -> list[Entry]:
        rows = sql(tx).rows(*q.session_entries(session_id, start, stop))
        return [to_session_entry(r) for r in rows]

    def episodes(
        self,
        tx: Tx,
        scope: Scope,
        *,
        depth: int,
        after_us: int | None,
        words: Sequence[str],
        limit: int,
    ) -> list[Entry]:
        rows = sql(tx).rows(*q.episodes(scope.key, depth, after_us, words, limit))
        return [to_session_entry(r) for r in rows]

    def forest(self, tx: Tx, scope: Scope) -> list[Session]:
        rows = sql(tx).rows(*q.session_forest(scope.key, MAX_FORK_DEPTH))
        return [to_session(r) for r in rows]

    def entries_of(self, tx: Tx, session_ids: Sequence[str]) -> list[Entry]:
        if not session_ids:
            return []
        t = sql(tx)
        return [to_session_entry(r) for r in t.rows(*q.entries_of(t.dialect, session_ids))]

    def window(
        self, tx: Tx, session_id: str, start: int, stop: int
    ) -> list[tuple[Entry, bool, int | None, str | None]]:
        rows = sql(tx).rows(*q.session_entries(session_id, start, stop, hidden=True))
        return [
            (
                to_session_entry(r[:-3]),
                bool(r[-3]),
                None if r[-2] is None else int(r[-2]),
                None if r[-1] is None else str(r[-1]),
            )
            for r in rows
        ]

    def set_width(self, tx: Tx, session_id: str, start: int, stop: int, width: int) -> None:
        sql(tx).execute(*q.entries_width(session_id, start, stop, width))

    def set_repeats(self, tx: Tx, session_id: str, repeats: Sequence[tuple[int, str]]) -> None:
        rows = [(fact_id, session_id, index) for index, fact_id in repeats]
        sql(tx).executemany(q.ENTRY_REPEATS, rows)

    def repeating(self, tx: Tx, fact_ids: Sequence[str]) -> list[tuple[str, int, str]]:
        if not fact_ids:
            return []
        t = sql(tx)
        rows = t.rows(*q.entries_repeating(t.dialect, fact_ids))
        return [(str(s), int(i), str(f)) for s, i, f in rows]

    def hide(self, tx: Tx, session_id: str, index: int, hidden: bool) -> None:
        sql(tx).recorded().execute(*q.entry_hide(session_id, index, hidden))

    def reword(self, tx: Tx, session_id: str, index: int, content: str) -> None:
        sql(tx).recorded().execute(*q.entry_reword(session_id, index, content))

    def erase_entry(self, tx: Tx, session_id: str, index: int) -> None:
        sql(tx).recorded().erasing().execute(*q.entry_delete(session_id, index))

    def erase_scope(self, tx: Tx, scope: Scope) -> int:
        t = sql(tx).recorded().erasing()
        ids = [str(r[0]) for r in t.rows(*q.sessions_of(scope.key))]
        for start in range(0, len(ids), 500):
            for query in q.sessions_erase(t.dialect, ids[start : start + 500]):
                t.execute(*query)
        return len(ids)


def _moved(t: SQLTx, scope: Scope, ids: Sequence[str], now_us: int) -> list[str]:
    """Moves the scope's live facts among ``ids`` to the trash; those moved, in order."""
    t.execute(*q.trash_move(t.dialect, scope.key, ids, now_us))
    gone = {str(r[0]) for r in t.rows(*q.facts_erase(t.dialect, scope.key, ids))}
    return [i for i in dict.fromkeys(ids) if i in gone]


def _pages(rows: Sequence[Any]) -> dict[str, str]:
    """Wiki facts' ids by the page (document) their metadata names."""
    found: dict[str, str] = {}
    for fact_id, metadata in rows:
        document = json.loads(str(metadata)).get("document")
        if isinstance(document, str):
            found[str(fact_id)] = document
    return found


def _entry_row(new: NewEntry) -> tuple[Any, ...]:
    entry = new.entry
    assert entry.at is not None and entry.index is not None  # the core sets both
    at = to_us(entry.at)
    return (entry.session_id, entry.index, at, entry.kind, entry.role, entry.content, new.data_json)
