"""The SQLite implementation of the core's Store port."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from engram.core.agents import Agent
from engram.core.errors import Conflict, EmbedderMismatch, NotFound
from engram.core.models import Caps, Compaction, Fact, Filters, WorkingEntry
from engram.core.ports import ModelRecord, NewFact, Vectors
from engram.core.ranking import Candidate
from engram.core.scopes import ResourceRef, Scope, parse_key
from engram.core.sharing import Share
from engram.storage import rules
from engram.storage.filters import filter_sql
from engram.storage.rows import FACT_COLUMNS, to_fact
from engram.storage.sqlite import agents, forgetting, model_record, shares, working
from engram.storage.sqlite.database import Database
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import scope_token, text_candidates_sql
from engram.storage.sqlite.schema import LOG_FLOOR, change_mark

if TYPE_CHECKING:
    from engram.storage.sqlite.textindex import TextIndex
    from engram.storage.sqlite.vectors import VectorIndex

_SELECT_FACT = f"SELECT {FACT_COLUMNS} FROM facts"
# Lookups by id go through the id index; the unary + keeps the planner from choosing
# the scope index instead (which walks the whole scope), while still checking scope.
_IN_SCOPE = "+scope = ?"


class SQLiteStore:
    """Working memory and facts in one SQLite file (see :class:`engram.core.ports.Store`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.db = Database(path)

    # The in-memory copies (and numpy) load on the first recall, so working memory and
    # listing (the CLI's working commands) never import them.
    @cached_property
    def vectors(self) -> VectorIndex:
        from engram.storage.sqlite.vectors import VectorIndex

        return VectorIndex()

    @cached_property
    def texts(self) -> TextIndex:
        from engram.storage.sqlite.textindex import TextIndex

        return TextIndex()

    @property
    def path(self) -> str:
        return self.db.path

    @property
    def schema_version(self) -> int:
        return self.db.schema_version

    def close(self) -> None:
        self.db.close()

    # -- working memory ----------------------------------------------------------
    def working_get(self, scope: Scope, key: str, now_us: int) -> WorkingEntry | None:
        return self.db.read(lambda conn: working.get(conn, scope.key, key, now_us))

    def working_set(
        self,
        scope: Scope,
        key: str,
        value_json: str,
        *,
        expected_version: int | None,
        expires_at_us: int | None,
        now_us: int,
    ) -> WorkingEntry:
        return self.db.write(
            lambda conn: working.put(
                conn, scope.key, key, value_json, expected_version, expires_at_us, now_us
            )
        )

    def working_delete(self, scope: Scope, key: str) -> bool:
        return self.db.write(lambda conn: working.delete(conn, scope.key, key))

    def working_list(
        self, scope: Scope, after: str | None, limit: int, now_us: int
    ) -> list[WorkingEntry]:
        return self.db.read(lambda conn: working.page(conn, scope.key, after, limit, now_us))

    # -- facts -------------------------------------------------------------------
    def existing_hashes(self, scope: Scope, hashes: Sequence[str]) -> dict[str, Fact]:
        return dict(self.db.read(lambda conn: _by_hashes(conn, scope.key, hashes)))

    def facts_insert(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        caps: Caps,
        now_us: int,
        model: ModelRecord,
    ) -> list[tuple[str, Fact]]:
        token = scope_token(scope.key)

        def work(conn: sqlite3.Connection) -> list[tuple[str, Fact]]:
            model_record.check(conn, model)
            seqs = []
            for new in facts:
                if new.vector.shape != (model.dimension,):
                    raise EmbedderMismatch(
                        f"the embedder returned {new.vector.shape[-1]} dimensions; "
                        f"it declares {model.dimension}"
                    )
                cursor = conn.execute(
                    "INSERT INTO facts (id, scope, scope_token, content, content_hash, context, "
                    "source_sandbox, source_entry, type, tags, metadata, created_at, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (scope, content_hash) DO NOTHING",
                    (
                        _new_id(),
                        scope.key,
                        token,
                        new.content,
                        new.content_hash,
                        new.context,
                        new.source_ref.sandbox_id if new.source_ref else None,
                        new.source_ref.entry_index if new.source_ref else None,
                        new.type,
                        json.dumps(list(new.tags)),
                        new.metadata_json,
                        new.created_at_us,
                        now_us,
                    ),
                )
                if cursor.rowcount:
                    seqs.append(cursor.lastrowid)
                    conn.execute(
                        "INSERT INTO fact_vectors (fact, vector) VALUES (?, ?)",
                        (cursor.lastrowid, new.vector.astype("<f4").tobytes()),
                    )
                    conn.executemany(
                        "INSERT INTO fact_tags (fact, scope, tag) VALUES (?, ?, ?)",
                        [(cursor.lastrowid, scope.key, tag) for tag in new.tags],
                    )
            if seqs:
                _bump(conn, scope.key, added=len(seqs))
            stored = _by_hashes(conn, scope.key, [f.content_hash for f in facts])
            _apply_caps(conn, scope.key, caps, now_us)
            return stored

        return self.db.write(work)

    def fact_get(self, scope: Scope, fact_id: str) -> Fact | None:
        row = self.db.read(
            lambda c: c.execute(
                f"{_SELECT_FACT} WHERE id = ? AND {_IN_SCOPE}", (fact_id, scope.key)
            ).fetchone()
        )
        return None if row is None else to_fact(row)

    def facts_by_ids(self, scope: Scope, ids: Sequence[str]) -> dict[str, Fact]:
        if not ids:
            return {}
        marks = ", ".join("?" for _ in ids)
        rows = self.db.read(
            lambda c: c.execute(
                f"{_SELECT_FACT} WHERE id IN ({marks}) AND {_IN_SCOPE}", (*ids, scope.key)
            ).fetchall()
        )
        return {r[0]: to_fact(r) for r in rows}

    def facts_page(
        self, scope: Scope, before: tuple[int, int] | None, limit: int
    ) -> list[tuple[Fact, tuple[int, int]]]:
        created, seq = before if before is not None else (1 << 62, 1 << 62)
        rows = self.db.read(
            lambda c: c.execute(
                f"{_SELECT_FACT} WHERE scope = ? AND (created_at, seq) < (?, ?) "
                "ORDER BY created_at DESC, seq DESC LIMIT ?",
                (scope.key, created, seq, limit),
            ).fetchall()
        )
        return [(to_fact(r), (r[3], r[-1])) for r in rows]

    def facts_count(self, scope: Scope) -> int:
        return int(
            self.db.read(
                lambda c: c.execute(
                    "SELECT count(*) FROM facts WHERE scope = ?", (scope.key,)
                ).fetchone()[0]
            )
        )

    def fact_correct(
        self,
        scope: Scope,
        fact_id: str,
        content: str,
        content_hash: str,
        vector: Vectors | None,
        by: str | None,
        now_us: int,
        model: ModelRecord | None,
    ) -> Fact:
        def work(conn: sqlite3.Connection) -> Fact:
            if model is not None:
                model_record.check(conn, model)
            other = conn.execute(
                "SELECT id FROM facts WHERE scope = ? AND content_hash = ? AND id != ?",
                (scope.key, content_hash, fact_id),
            ).fetchone()
            if other is not None:
                raise Conflict(f"this scope already holds that text as fact {other[0]}")
            row = conn.execute(
                f"UPDATE facts SET content = ?, content_hash = ?, updated_at = ?, "
                f"corrected_by = ?, corrected_at = ? WHERE id = ? AND {_IN_SCOPE} RETURNING seq",
                (content, content_hash, now_us, by, now_us, fact_id, scope.key),
            ).fetchone()
            if row is None:
                raise NotFound(f"no fact {fact_id!r} in this scope")
            if vector is not None:  # without an embedder the fact keeps its old vector
                conn.execute(
                    "UPDATE fact_vectors SET vector = ? WHERE fact = ?",
                    (vector.astype("<f4").tobytes(), row[0]),
                )
            _bump(conn, scope.key, rewrote=1)
            return to_fact(conn.execute(f"{_SELECT_FACT} WHERE id = ?", (fact_id,)).fetchone())

        return self.db.write(work)

    def fact_scope(self, fact_id: str) -> Scope | None:
        row = self.db.read(
            lambda conn: conn.execute("SELECT scope FROM facts WHERE id = ?", (fact_id,)).fetchone()
        )
        return None if row is None else parse_key(str(row[0]))

    def fact_delete(self, scope: Scope, fact_id: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            gone = (
                conn.execute(
                    f"DELETE FROM facts WHERE id = ? AND {_IN_SCOPE}", (fact_id, scope.key)
                ).rowcount
                > 0
            )
            if gone:
                _bump(conn, scope.key, removed=1)
            return gone

        return self.db.write(work)

    def facts_delete_all(self, scope: Scope, expected_count: int) -> int:
        def work(conn: sqlite3.Connection) -> int:
            count = conn.execute(
                "SELECT count(*) FROM facts WHERE scope = ?", (scope.key,)
            ).fetchone()[0]
            rules.confirm_count(count, expected_count)
            with forgetting.deleting(conn, count):
                conn.execute("DELETE FROM facts WHERE scope = ?", (scope.key,))
            _bump(conn, scope.key, removed=count)
            return int(count)

        forgotten = self.db.write(work)
        self.vectors.forget(scope.key)
        self.texts.forget(scope.key)
        return forgotten

    def compact(self, scope: Scope, caps: Caps, now_us: int) -> Compaction:
        return self.db.write(lambda conn: _apply_caps(conn, scope.key, caps, now_us))

    def fork(
        self, parent: Scope, child: Scope, now_us: int, *, into_existing: bool
    ) -> tuple[int, int]:
        return self.db.write(lambda conn: _fork(conn, parent, child, now_us, into_existing))

    # -- allowances --------------------------------------------------------------
    def share_put(self, person: str, source: str, reader: str, now_us: int) -> Share:
        return self.db.write(lambda conn: shares.put(conn, person, source, reader, now_us))

    def share_delete(self, person: str, source: str, reader: str) -> bool:
        return self.db.write(lambda conn: shares.delete(conn, person, source, reader))

    def shares_list(self, person: str, *, source: str | None, reader: str | None) -> list[Share]:
        return self.db.read(lambda conn: shares.listed(conn, person, source, reader))

    # -- agents ------------------------------------------------------------------
    def agent_insert(
        self,
        agent: Agent,
        fork_from: ResourceRef | None,
        now_us: int,
        *,
        into_existing: bool = False,
    ) -> tuple[int, int]:
        def work(conn: sqlite3.Connection) -> tuple[int, int]:
            agents.insert(conn, agent)
            if fork_from is None:
                return (0, 0)
            return _fork(conn, fork_from, agent.ref, now_us, into_existing)

        return self.db.write(work)

    def agent_get(self, agent_id: str) -> Agent | None:
        return self.db.read(lambda conn: agents.get(conn, agent_id))

    def agent_end(self, agent_id: str, now_us: int) -> Agent | None:
        return self.db.write(lambda conn: agents.end(conn, agent_id, now_us))

    def agents_page(self, after: str | None, limit: int, name: str | None) -> list[Agent]:
        return self.db.read(lambda conn: agents.page(conn, after, limit, name))

    # -- recall candidates -------------------------------------------------------
    def text_candidates(
        self, scope: Scope, terms: Sequence[str], filters: Filters, limit: int
    ) -> list[Candidate]:
        if not terms:
            return []

        def work(conn: sqlite3.Connection) -> list[Candidate]:
            if filters.empty:  # large scopes rank from memory, exactly as the statement
                ranked = self.texts.search(conn, scope.key, terms, limit)
                if ranked is not None:
                    return ranked
            outside = _facts_outside(conn, scope.key)
            sql, params = text_candidates_sql(terms, scope.key, filters, limit, outside)
            rows = conn.execute(sql, params).fetchall()
            return [Candidate(r[0], -float(r[1])) for r in rows]  # bm25(): lower is better

        return self.db.read(work)

    def vector_candidates(
        self, scope: Scope, vector: Vectors, filters: Filters, limit: int
    ) -> list[Candidate]:
        def work(conn: sqlite3.Connection) -> list[Candidate]:
            allowed = None
            if not filters.empty:
                where, params = filter_sql(filters)
                allowed = {
                    r[0]
                    for r in conn.execute(
                        f"SELECT f.seq FROM facts f WHERE f.scope = ?{where}", (scope.key, *params)
                    )
                }
            return self.vectors.search(conn, scope.key, vector, allowed, limit)

        return self.db.read(work)

    # -- the embedding model -----------------------------------------------------
    def model_record(self) -> ModelRecord | None:
        return self.db.read(model_record.read)

    def record_model(self, record: ModelRecord) -> None:
        self.db.write(lambda conn: model_record.write(conn, record))

    def has_facts(self) -> bool:
        return self.db.read(
            lambda c: c.execute("SELECT 1 FROM facts LIMIT 1").fetchone() is not None
        )

    def iter_fact_texts(self, batch: int) -> Iterator[list[tuple[int, str]]]:
        last = 0
        while True:
            rows = self.db.read(_texts_after(last, batch))
            if not rows:
                return
            yield [(int(r[0]), str(r[1])) for r in rows]
            last = rows[-1][0]

    def replace_vectors(self, rows: Sequence[tuple[int, Vectors]]) -> None:
        def work(conn: sqlite3.Connection) -> None:
            scopes = set()
            for seq, vector in rows:
                conn.execute(
                    "UPDATE fact_vectors SET vector = ? WHERE fact = ?",
                    (vector.astype("<f4").tobytes(), seq),
                )
            for (scope,) in conn.execute(
                f"SELECT DISTINCT scope FROM facts WHERE seq IN "
                f"({', '.join(str(int(s)) for s, _ in rows)})"
            ):
                scopes.add(scope)
            for scope in scopes:
                _bump(conn, scope, vectors_replaced=True)

        if rows:
            self.db.write(work)


def _texts_after(last: int, batch: int) -> Callable[[sqlite3.Connection], list[Any]]:
    def work(conn: sqlite3.Connection) -> list[Any]:
        return conn.execute(
            "SELECT seq, content FROM facts WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch)
        ).fetchall()

    return work


def _new_id() -> str:
    return "f_" + secrets.token_hex(12)


def _bump(
    conn: sqlite3.Connection,
    scope: str,
    *,
    added: int = 0,
    removed: int = 0,
    rewrote: int = 0,
    vectors_replaced: bool = False,
) -> None:
    """Records a change of the scope's facts: ``added`` appended, ``removed`` deleted,
    ``rewrote`` given new words, or every vector replaced in place. Anything but an
    append starts a new epoch; deletes and rewrites are in the change log (migration 5),
    which is cleared once it holds more rows than half the scope, or the scope is empty."""
    logged, facts = conn.execute(
        "INSERT INTO scope_state (scope, version, epoch, facts, logged) VALUES (?, 1, 0, ?, ?) "
        "ON CONFLICT (scope) DO UPDATE SET version = version + 1, epoch = epoch + ?, "
        "facts = facts + excluded.facts, logged = logged + excluded.logged, "
        "rewritten = rewritten + ? RETURNING logged, facts",
        (
            scope,
            added - removed,
            removed + rewrote,
            int(bool(removed or rewrote or vectors_replaced)),
            int(vectors_replaced),
        ),
    ).fetchone()
    if logged and (facts == 0 or logged > max(LOG_FLOOR, facts // 2)):
        conn.execute("DELETE FROM fact_changes WHERE scope = ?", (scope,))
        conn.execute(
            "UPDATE scope_state SET logged = 0, changes_from = ? WHERE scope = ?",
            (change_mark(conn), scope),
        )


def _facts_outside(conn: sqlite3.Connection, scope: str) -> int:
    """How many facts of the store lie outside ``scope``."""
    row = conn.execute(
        "SELECT coalesce(sum(facts), 0), coalesce(sum(facts) FILTER (WHERE scope = ?), 0) "
        "FROM scope_state",
        (scope,),
    ).fetchone()
    return int(row[0]) - int(row[1])


def _by_hashes(
    conn: sqlite3.Connection, scope: str, hashes: Sequence[str]
) -> list[tuple[str, Fact]]:
    """The scope's facts with these content hashes, each with its hash."""
    unique = list(dict.fromkeys(hashes))
    found: list[tuple[str, Fact]] = []
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        found.extend(
            (r[0], to_fact(r[1:]))
            for r in conn.execute(
                f"SELECT content_hash, {FACT_COLUMNS} FROM facts "
                f"WHERE scope = ? AND content_hash IN ({marks})",
                (scope, *chunk),
            )
        )
    return found


def _apply_caps(conn: sqlite3.Connection, scope: str, caps: Caps, now_us: int) -> Compaction:
    done = rules.apply_caps(conn, scope, caps, now_us, "?")
    if done.removed:
        _bump(conn, scope, removed=done.removed)
    return done


def _fork(
    conn: sqlite3.Connection, parent: Scope, child: Scope, now_us: int, into_existing: bool
) -> tuple[int, int]:
    """Copies the parent's working memory and facts (vectors, tags) into the child's scope
    (see :func:`rules.refuse_occupied`)."""
    rules.refuse_occupied(conn, child, now_us, "?", into_existing=into_existing)
    keys = conn.execute(
        "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
        "SELECT ?, key, value, 1, ?, expires_at FROM working WHERE scope = ? "
        "AND (expires_at IS NULL OR expires_at > ?) "
        "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
        "version = working.version + 1, updated_at = excluded.updated_at, "
        "expires_at = excluded.expires_at",
        (child.key, now_us, parent.key, now_us),
    ).rowcount
    # Set-based: the copies get new ids and row numbers above every existing one,
    # then vectors and tags follow them by content hash (unique in a scope).
    before = conn.execute("SELECT coalesce(max(seq), 0) FROM facts").fetchone()[0]
    copied = conn.execute(
        "INSERT INTO facts (id, scope, scope_token, content, content_hash, context, "
        "source_sandbox, source_entry, type, tags, metadata, created_at, updated_at, "
        "corrected_by, corrected_at) "
        "SELECT 'f_' || lower(hex(randomblob(12))), ?, ?, content, content_hash, "
        "context, source_sandbox, source_entry, type, tags, metadata, created_at, "
        "updated_at, corrected_by, corrected_at FROM facts WHERE scope = ? ORDER BY seq "
        "ON CONFLICT (scope, content_hash) DO NOTHING",
        (child.key, scope_token(child.key), parent.key),
    ).rowcount
    copy_of = (
        "FROM facts c JOIN facts p ON p.scope = ? AND p.content_hash = c.content_hash "
        "JOIN {table} x ON x.fact = p.seq WHERE c.scope = ? AND c.seq > ?"
    )
    conn.execute(
        "INSERT INTO fact_vectors (fact, vector) SELECT c.seq, x.vector "
        + copy_of.format(table="fact_vectors"),
        (parent.key, child.key, before),
    )
    conn.execute(
        "INSERT INTO fact_tags (fact, scope, tag) SELECT c.seq, c.scope, x.tag "
        + copy_of.format(table="fact_tags"),
        (parent.key, child.key, before),
    )
    if copied:
        _bump(conn, child.key, added=copied)
    return int(keys), copied
