"""The PostgreSQL implementation of the core's Store port, for many processes at once.

Every change to a scope's facts first takes the scope's transaction-level advisory lock,
so checks and writes of one scope (forget-all's count, caps, fork, dedup) never
interleave across processes; scopes never wait for one another.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from engram.core.agents import Agent
from engram.core.clock import from_us, to_us
from engram.core.errors import Conflict, EmbedderMismatch, NotFound
from engram.core.models import Caps, Compaction, Fact, Filters, WorkingEntry
from engram.core.ports import ModelRecord, NewFact, Vectors
from engram.core.ranking import Candidate
from engram.core.scopes import ResourceRef, Scope, parse_key
from engram.core.sharing import Share
from engram.storage import rules
from engram.storage.postgres import fulltext, vectors, working
from engram.storage.postgres.database import Conn, Database
from engram.storage.rows import AGENT_COLUMNS, FACT_COLUMNS, to_agent, to_fact

_SELECT_FACT = f"SELECT {FACT_COLUMNS} FROM facts"
_MODEL_LOCK = 0x6D6F64656C  # "model": serialises the first recording of the model


class PostgresStore:
    """Working memory and facts in one PostgreSQL database with pgvector."""

    def __init__(self, url: str, *, apply_migrations: bool = True) -> None:
        self.db = Database(url, apply_migrations=apply_migrations)
        self.ann_above = vectors.ANN_ABOVE

    @property
    def path(self) -> str:
        """Where the store is, as it may be shown (no password)."""
        return self.db.name

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
        for new in facts:
            if new.vector.shape != (model.dimension,):
                raise EmbedderMismatch(
                    f"the embedder returned {new.vector.shape[-1]} dimensions; "
                    f"it declares {model.dimension}"
                )

        def work(conn: Conn) -> tuple[list[tuple[str, Fact]], bool]:
            _lock_scopes(conn, scope.key)
            _check_model(conn, model)
            first = {f.content_hash: f for f in reversed(facts)}
            rows = conn.execute(
                "INSERT INTO facts (id, scope, content, content_hash, context, source_sandbox, "
                "source_entry, type, tags, metadata, created_at, updated_at) "
                "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::text[], %s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], "
                "%s::bigint[], %s::bigint[]) "
                "ON CONFLICT (scope, content_hash) DO NOTHING RETURNING seq, content_hash",
                _columns(scope.key, list(first.values()), now_us),
            ).fetchall()
            if rows:
                with conn.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO fact_vectors (fact, scope, vector) VALUES (%s, %s, %s)",
                        [(seq, scope.key, first[h].vector.astype(np.float32)) for seq, h in rows],
                    )
                    tags = [(seq, scope.key, t) for seq, h in rows for t in first[h].tags]
                    if tags:
                        cursor.executemany(
                            "INSERT INTO fact_tags (fact, scope, tag) VALUES (%s, %s, %s) "
                            "ON CONFLICT DO NOTHING",
                            tags,
                        )
                _count(conn, scope.key, len(rows))
            stored = _by_hashes(conn, scope.key, [f.content_hash for f in facts])
            _apply_caps(conn, scope.key, caps, now_us)
            return stored, _wants_index(conn, scope.key, self.ann_above)

        stored, wants_index = self.db.write(work)
        if wants_index:
            self.db.autocommit(lambda conn: vectors.build_index(conn, scope.key, model.dimension))
        return stored

    def fact_get(self, scope: Scope, fact_id: str) -> Fact | None:
        row = self.db.read(
            lambda c: c.execute(
                f"{_SELECT_FACT} WHERE id = %s AND scope = %s", (fact_id, scope.key)
            ).fetchone()
        )
        return None if row is None else to_fact(row)

    def facts_by_ids(self, scope: Scope, ids: Sequence[str]) -> dict[str, Fact]:
        if not ids:
            return {}
        rows = self.db.read(
            lambda c: c.execute(
                f"{_SELECT_FACT} WHERE id = ANY(%s) AND scope = %s", (list(ids), scope.key)
            ).fetchall()
        )
        return {str(r[0]): to_fact(r) for r in rows}

    def facts_page(
        self, scope: Scope, before: tuple[int, int] | None, limit: int
    ) -> list[tuple[Fact, tuple[int, int]]]:
        created, seq = before if before is not None else (1 << 62, 1 << 62)
        rows = self.db.read(
            lambda c: c.execute(
                f"{_SELECT_FACT} WHERE scope = %s AND (created_at, seq) < (%s, %s) "
                "ORDER BY created_at DESC, seq DESC LIMIT %s",
                (scope.key, created, seq, limit),
            ).fetchall()
        )
        return [(to_fact(r), (int(r[3]), int(r[-1]))) for r in rows]

    def facts_count(self, scope: Scope) -> int:
        return self.db.read(lambda c: _count_rows(c, scope.key))

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
        def work(conn: Conn) -> Fact:
            _lock_scopes(conn, scope.key)
            if model is not None:
                _check_model(conn, model)
            other = conn.execute(
                "SELECT id FROM facts WHERE scope = %s AND content_hash = %s AND id != %s",
                (scope.key, content_hash, fact_id),
            ).fetchone()
            if other is not None:
                raise Conflict(f"this scope already holds that text as fact {other[0]}")
            row = conn.execute(
                "UPDATE facts SET content = %s, content_hash = %s, updated_at = %s, "
                "corrected_by = %s, corrected_at = %s WHERE id = %s AND scope = %s "
                f"RETURNING {FACT_COLUMNS}",
                (content, content_hash, now_us, by, now_us, fact_id, scope.key),
            ).fetchone()
            if row is None:
                raise NotFound(f"no fact {fact_id!r} in this scope")
            if vector is not None:  # without an embedder the fact keeps its old vector
                conn.execute(
                    "UPDATE fact_vectors SET vector = %s WHERE fact = %s",
                    (np.asarray(vector, dtype=np.float32), row[-1]),
                )
            return to_fact(row)

        return self.db.write(work)

    def fact_scope(self, fact_id: str) -> Scope | None:
        row = self.db.read(
            lambda c: c.execute("SELECT scope FROM facts WHERE id = %s", (fact_id,)).fetchone()
        )
        return None if row is None else parse_key(str(row[0]))

    def fact_delete(self, scope: Scope, fact_id: str) -> bool:
        def work(conn: Conn) -> bool:
            _lock_scopes(conn, scope.key)
            gone = conn.execute(
                "DELETE FROM facts WHERE id = %s AND scope = %s", (fact_id, scope.key)
            ).rowcount
            _count(conn, scope.key, -gone)
            return gone > 0

        return self.db.write(work)

    def facts_delete_all(self, scope: Scope, expected_count: int) -> int:
        def work(conn: Conn) -> int:
            _lock_scopes(conn, scope.key)
            count = _count_rows(conn, scope.key)
            rules.confirm_count(count, expected_count)
            conn.execute("DELETE FROM facts WHERE scope = %s", (scope.key,))
            _count(conn, scope.key, -count)
            vectors.drop_indexes(conn, scope.key)
            return count

        return self.db.write(work)

    def compact(self, scope: Scope, caps: Caps, now_us: int) -> Compaction:
        def work(conn: Conn) -> Compaction:
            _lock_scopes(conn, scope.key)
            return _apply_caps(conn, scope.key, caps, now_us)

        return self.db.write(work)

    def fork(
        self, parent: Scope, child: Scope, now_us: int, *, into_existing: bool
    ) -> tuple[int, int]:
        return self.db.write(lambda conn: _fork(conn, parent, child, now_us, into_existing))

    # -- allowances --------------------------------------------------------------
    def share_put(self, person: str, source: str, reader: str, now_us: int) -> Share:
        def work(conn: Conn) -> Share:
            conn.execute(
                "INSERT INTO shares (person, source, reader, allowed_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (person, source, reader) DO NOTHING",
                (person, source, reader, now_us),
            )
            row = conn.execute(
                "SELECT allowed_at FROM shares WHERE person = %s AND source = %s AND reader = %s",
                (person, source, reader),
            ).fetchone()
            assert row is not None
            return Share(person, source, reader, from_us(int(row[0])))

        return self.db.write(work)

    def share_delete(self, person: str, source: str, reader: str) -> bool:
        return self.db.write(
            lambda conn: (
                conn.execute(
                    "DELETE FROM shares WHERE person = %s AND source = %s AND reader = %s",
                    (person, source, reader),
                ).rowcount
                > 0
            )
        )

    def shares_list(self, person: str, *, source: str | None, reader: str | None) -> list[Share]:
        column = "source" if source is not None else "reader"
        value = source if source is not None else reader
        rows = self.db.read(
            lambda conn: conn.execute(
                "SELECT source, reader, allowed_at FROM shares WHERE person = %s "
                f"AND (%s::text IS NULL OR {column} = %s) ORDER BY allowed_at, source, reader",
                (person, value, value),
            ).fetchall()
        )
        return [Share(person, str(s), str(r), from_us(int(str(at)))) for s, r, at in rows]

    # -- agents ------------------------------------------------------------------
    def agent_insert(
        self,
        agent: Agent,
        fork_from: ResourceRef | None,
        now_us: int,
        *,
        into_existing: bool = False,
    ) -> tuple[int, int]:
        def work(conn: Conn) -> tuple[int, int]:
            conn.execute(
                f"INSERT INTO agents ({AGENT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, NULL)",
                (agent.id, agent.name, agent.ref.key, agent.parent_id, to_us(agent.created_at)),
            )
            if fork_from is None:
                return (0, 0)
            return _fork(conn, fork_from, agent.ref, now_us, into_existing)

        return self.db.write(work)

    def agent_get(self, agent_id: str) -> Agent | None:
        return self.db.read(lambda conn: _agent(conn, agent_id))

    def agent_end(self, agent_id: str, now_us: int) -> Agent | None:
        def work(conn: Conn) -> Agent | None:
            conn.execute(
                "UPDATE agents SET ended_at = %s WHERE id = %s AND ended_at IS NULL",
                (now_us, agent_id),
            )
            return _agent(conn, agent_id)

        return self.db.write(work)

    def agents_page(self, after: str | None, limit: int, name: str | None) -> list[Agent]:
        rows = self.db.read(
            lambda conn: conn.execute(
                f"SELECT {AGENT_COLUMNS} FROM agents WHERE id > %s "
                "AND (%s::text IS NULL OR name = %s) ORDER BY id LIMIT %s",
                (after or "", name, name, limit),
            ).fetchall()
        )
        return [to_agent(row) for row in rows]

    # -- recall candidates -------------------------------------------------------
    def text_candidates(
        self, scope: Scope, terms: Sequence[str], filters: Filters, limit: int
    ) -> list[Candidate]:
        if not terms:
            return []
        return self.db.read(
            lambda conn: fulltext.candidates(conn, scope.key, terms, filters, limit)
        )

    def vector_candidates(
        self, scope: Scope, vector: Vectors, filters: Filters, limit: int
    ) -> list[Candidate]:
        return self.db.read(lambda conn: vectors.search(conn, scope.key, vector, filters, limit))

    # -- the embedding model -----------------------------------------------------
    def model_record(self) -> ModelRecord | None:
        return self.db.read(_read_model)

    def record_model(self, record: ModelRecord) -> None:
        def work(conn: Conn) -> None:
            stored = _read_model(conn)
            if stored is not None and stored.dimension != record.dimension:
                vectors.drop_indexes(conn)  # their expression names the old dimension
            _write_model(conn, record)

        self.db.write(work)

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
            yield [(int(str(r[0])), str(r[1])) for r in rows]
            last = int(str(rows[-1][0]))

    def replace_vectors(self, rows: Sequence[tuple[int, Vectors]]) -> None:
        def work(conn: Conn) -> None:
            stored = _read_model(conn)
            if rows and stored is not None and stored.dimension != rows[0][1].shape[0]:
                vectors.drop_indexes(conn)  # the new vectors would not fit their cast
            with conn.cursor() as cursor:
                cursor.executemany(
                    "UPDATE fact_vectors SET vector = %s WHERE fact = %s",
                    [(np.asarray(v, dtype=np.float32), seq) for seq, v in rows],
                )

        if rows:
            self.db.write(work)


def _texts_after(last: int, batch: int) -> Callable[[Conn], list[Any]]:
    def work(conn: Conn) -> list[Any]:
        return conn.execute(
            "SELECT seq, content FROM facts WHERE seq > %s ORDER BY seq LIMIT %s", (last, batch)
        ).fetchall()

    return work


def _new_id() -> str:
    return "f_" + secrets.token_hex(12)


def _columns(scope: str, facts: Sequence[NewFact], now_us: int) -> tuple[list[Any], ...]:
    """The new facts as one array per column, for ``unnest``."""
    return (
        [_new_id() for _ in facts],
        [scope] * len(facts),
        [f.content for f in facts],
        [f.content_hash for f in facts],
        [f.context for f in facts],
        [f.source_ref.sandbox_id if f.source_ref else None for f in facts],
        [f.source_ref.entry_index if f.source_ref else None for f in facts],
        [f.type for f in facts],
        [json.dumps(list(f.tags)) for f in facts],
        [f.metadata_json for f in facts],
        [f.created_at_us for f in facts],
        [now_us] * len(facts),
    )


def _lock_scopes(conn: Conn, *scopes: str) -> None:
    """Takes the scopes' locks until the transaction ends, always in the same order (so
    two forks in opposite directions cannot deadlock)."""
    for scope in sorted(set(scopes)):
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (scope,))


def _check_model(conn: Conn, model: ModelRecord) -> None:
    """Raises EmbedderMismatch when the store holds vectors of another model; records
    ``model`` when it holds none."""
    stored = _read_model(conn)
    if stored == model:
        return
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MODEL_LOCK,))
    stored = _read_model(conn)  # another process may have recorded it meanwhile
    if stored == model:
        return
    if stored is not None and conn.execute("SELECT 1 FROM facts LIMIT 1").fetchone():
        raise EmbedderMismatch(stored.mismatch(model))
    _write_model(conn, model)


def _read_model(conn: Conn) -> ModelRecord | None:
    rows: dict[str, str] = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dimension')"
        ).fetchall()
    )
    if "embedding_model" not in rows:
        return None
    return ModelRecord(str(rows["embedding_model"]), int(str(rows["embedding_dimension"])))


def _write_model(conn: Conn, record: ModelRecord) -> None:
    with conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [("embedding_model", record.model), ("embedding_dimension", str(record.dimension))],
        )


def _count(conn: Conn, scope: str, delta: int) -> None:
    """Adds ``delta`` to the scope's fact count."""
    if delta:
        conn.execute(
            "INSERT INTO scope_state (scope, facts) VALUES (%s, %s) "
            "ON CONFLICT (scope) DO UPDATE SET facts = scope_state.facts + excluded.facts",
            (scope, delta),
        )


def _wants_index(conn: Conn, scope: str, above: int) -> bool:
    """Whether the scope has grown past ``above`` facts without an HNSW index yet."""
    row = conn.execute(
        "SELECT facts > %s AND ann_index IS NULL FROM scope_state WHERE scope = %s",
        (above, scope),
    ).fetchone()
    return bool(row and row[0])


def _count_rows(conn: Conn, scope: str) -> int:
    row = conn.execute("SELECT count(*) FROM facts WHERE scope = %s", (scope,)).fetchone()
    return 0 if row is None else int(str(row[0]))


def _agent(conn: Conn, agent_id: str) -> Agent | None:
    row = conn.execute(f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = %s", (agent_id,)).fetchone()
    return None if row is None else to_agent(row)


def _by_hashes(conn: Conn, scope: str, hashes: Sequence[str]) -> list[tuple[str, Fact]]:
    """The scope's facts with these content hashes, each with its hash."""
    rows = conn.execute(
        f"SELECT content_hash, {FACT_COLUMNS} FROM facts "
        "WHERE scope = %s AND content_hash = ANY(%s)",
        (scope, list(dict.fromkeys(hashes))),
    ).fetchall()
    return [(str(r[0]), to_fact(r[1:])) for r in rows]


def _apply_caps(conn: Conn, scope: str, caps: Caps, now_us: int) -> Compaction:
    done = rules.apply_caps(conn, scope, caps, now_us, "%s")
    _count(conn, scope, -done.removed)
    return done


def _fork(
    conn: Conn, parent: Scope, child: Scope, now_us: int, into_existing: bool
) -> tuple[int, int]:
    """Copies the parent's working memory and facts (vectors, tags) into the child's scope
    (see :func:`rules.refuse_occupied`)."""
    _lock_scopes(conn, parent.key, child.key)
    rules.refuse_occupied(conn, child, now_us, "%s", into_existing=into_existing)
    keys = conn.execute(
        "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
        "SELECT %s, key, value, 1, %s, expires_at FROM working WHERE scope = %s "
        "AND (expires_at IS NULL OR expires_at > %s) "
        "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
        "version = working.version + 1, updated_at = excluded.updated_at, "
        "expires_at = excluded.expires_at",
        (child.key, now_us, parent.key, now_us),
    ).rowcount
    # Set-based: copies get new ids; vectors and tags follow them by content hash
    # (unique in a scope) from the rows this statement returns.
    conn.execute("CREATE TEMPORARY TABLE fork_copies (parent bigint, child bigint) ON COMMIT DROP")
    conn.execute(
        "WITH copied AS ("
        " INSERT INTO facts (id, scope, content, content_hash, context, source_sandbox, "
        " source_entry, type, tags, metadata, created_at, updated_at, corrected_by, "
        " corrected_at) "
        " SELECT 'f_' || left(replace(gen_random_uuid()::text, '-', ''), 24), %s, content, "
        " content_hash, context, source_sandbox, source_entry, type, tags, metadata, created_at, "
        " updated_at, corrected_by, corrected_at FROM facts WHERE scope = %s ORDER BY seq "
        " ON CONFLICT (scope, content_hash) DO NOTHING RETURNING seq, content_hash) "
        "INSERT INTO fork_copies (parent, child) SELECT p.seq, c.seq FROM copied c "
        "JOIN facts p ON p.scope = %s AND p.content_hash = c.content_hash",
        (child.key, parent.key, parent.key),
    )
    conn.execute(
        "INSERT INTO fact_vectors (fact, scope, vector) SELECT k.child, %s, v.vector "
        "FROM fork_copies k JOIN fact_vectors v ON v.fact = k.parent",
        (child.key,),
    )
    conn.execute(
        "INSERT INTO fact_tags (fact, scope, tag) SELECT k.child, %s, t.tag "
        "FROM fork_copies k JOIN fact_tags t ON t.fact = k.parent",
        (child.key,),
    )
    copied = conn.execute("SELECT count(*) FROM fork_copies").fetchone()
    count = 0 if copied is None else int(str(copied[0]))
    conn.execute("DROP TABLE fork_copies")
    _count(conn, child.key, count)
    return int(keys), count
