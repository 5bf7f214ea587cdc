"""Looking inside a store on either backend, for tests that check what was written."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram import Note
from engram.core.models import Filters
from engram.storage.sql.dialect import SQLITE, postgres_dialect

POSTGRES = postgres_dialect(lambda v: v)  # only its reading of stored vectors is used

Target = str | Path

# Takes a SQLite store back to schema 4, for migration tests (after ``as_schema_18``):
# migration 18's vector indexes, 17's expiry, 16's derived copies, 13's documents,
# 12's feedback, 11's graph, 10's index, 9's sessions, 8's history, 7's strength, 6's
# triggers, then 5's change log.
UNDO_CHANGE_LOG = """
DROP TRIGGER facts_ad_erased;
DROP TRIGGER facts_au_erased;
DROP TRIGGER fact_vectors_au_erased;
DROP TRIGGER fact_trash_ad_erased;
DROP TABLE vector_indexes;
ALTER TABLE scope_state DROP COLUMN erasures;
DROP INDEX facts_by_expiry;
ALTER TABLE facts DROP COLUMN expires_at;
DROP TRIGGER facts_ad_derived;
DROP TRIGGER facts_au_derived;
DROP TABLE derived_dirty;
DROP TABLE graph_gone;
DROP INDEX facts_wiki;
DROP TRIGGER facts_ad_documents;
DROP TABLE document_chunks;
DROP TABLE documents;
DROP TRIGGER facts_ad_feedback;
DROP TABLE retrieval_feedback;
DROP TRIGGER facts_ai_graph;
DROP TRIGGER facts_ad_graph;
DROP TRIGGER facts_au_graph;
DROP TABLE relation_types;
DROP TABLE relation_support;
DROP TABLE relations;
DROP TABLE graph_dirty;
DROP TABLE graph_reads;
DROP TABLE groundings;
DROP TABLE mentions;
DROP TABLE entity_aliases;
DROP TABLE entities;
DROP INDEX facts_by_source;
DROP TABLE fact_trash;
DROP TABLE ledger;
DROP TABLE ledger_items;
DROP INDEX facts_by_turn_user;
ALTER TABLE facts DROP COLUMN turn_user;
DROP TABLE session_entries;
DROP TABLE sessions;
ALTER TABLE facts DROP COLUMN strength;
DROP TRIGGER facts_ai_state;
DROP TRIGGER facts_ad_state;
DROP TRIGGER facts_au_state;
DROP TRIGGER fact_vectors_au_state;
DROP TRIGGER scope_state_log_full;
DROP TABLE fact_changes;
ALTER TABLE scope_state DROP COLUMN changes_from;
ALTER TABLE scope_state DROP COLUMN logged;
"""


# Takes a store back to before the rules' groundings were flags on their mentions
# (SQLite migration 24, PostgreSQL 20): each flag a row again, the column and the
# triggers that read it gone (SQLite's grounding trigger as it was; PostgreSQL's function
# is replaced by its migration again).
_FLAGS_TO_ROWS = (
    "INSERT INTO groundings (fact_id, entity, extractor) "
    "SELECT fact_id, entity, 'rules' FROM mentions WHERE grounds = 1 ON CONFLICT DO NOTHING"
)
_ERASED = "UPDATE scope_state SET erasures = erasures + 1 WHERE scope = {scope}; "
# PostgreSQL's migrations 27 and 26 undone: a fact's coming queues it for the graph, and
# its leaving the table or the trash takes its feedback and queues what is derived from
# it, row by row.
_POSTGRES_ROW_LEFT = "AFTER DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {function}()"
# SQLite's migration 34 and PostgreSQL's 28 undone: no index of facts by strength (on
# PostgreSQL every chain starts with it, and some include it twice, hence IF EXISTS).
BEFORE_STRENGTH_INDEX = ("DROP INDEX IF EXISTS facts_by_strength",)
# PostgreSQL's migrations 30 and 29 undone: no record of erasures, no recent graphs (the
# chains below include them twice, hence IF EXISTS).
POSTGRES_BEFORE_RECENT_GRAPHS = (
    "DROP TABLE IF EXISTS erasures",
    *(
        f"ALTER TABLE scope_state DROP COLUMN IF EXISTS recent_{column}"
        for column in ("index", "through", "rows")
    ),
)
POSTGRES_BEFORE_FACT_TRIGGERS = (
    *POSTGRES_BEFORE_RECENT_GRAPHS,  # migrations 30 and 29 undone first
    *BEFORE_STRENGTH_INDEX,  # then 28
    # then 27: a fact that comes is queued for the graph row by row
    "DROP TRIGGER facts_ai_graph ON facts",
    "DROP FUNCTION engram_facts_came()",
    "CREATE TRIGGER facts_ai_graph AFTER INSERT ON facts "
    "FOR EACH ROW EXECUTE FUNCTION engram_fact_came()",
    "DROP TRIGGER facts_ad_left ON facts",
    "DROP TRIGGER fact_trash_ad_left ON fact_trash",
    "DROP FUNCTION engram_facts_left()",
    "CREATE FUNCTION engram_fact_left_feedback() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF NOT EXISTS (SELECT 1 FROM facts WHERE id = OLD.id) "
    "AND NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = OLD.id) THEN "
    "DELETE FROM retrieval_feedback WHERE fact_id = OLD.id; END IF; RETURN NULL; END $$",
    "CREATE FUNCTION engram_fact_left_documents() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF TG_TABLE_NAME = 'fact_trash' AND EXISTS (SELECT 1 FROM facts WHERE id = OLD.id) "
    "OR NOT EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = OLD.id) THEN RETURN NULL; "
    "END IF; INSERT INTO derived_dirty (scope, fact_id, session_id, idx) "
    "VALUES (OLD.scope, OLD.id, OLD.source_sandbox, OLD.source_entry) "
    "ON CONFLICT DO NOTHING; RETURN NULL; END $$",
    *(
        f"CREATE TRIGGER {prefix}_ad_{what} "
        + _POSTGRES_ROW_LEFT.format(table=table, function=function)
        for prefix, table in (("facts", "facts"), ("fact_trash", "fact_trash"))
        for what, function in (
            ("feedback", "engram_fact_left_feedback"),
            ("derived", "engram_fact_derived"),
            ("documents", "engram_fact_left_documents"),
        )
    ),
)
# PostgreSQL's migration 25 undone (and 26 before it): a fact's leaving takes its graph
# rows, and each mention's its entity, row by row.
POSTGRES_BEFORE_GRAPH_STATEMENTS = (
    *POSTGRES_BEFORE_FACT_TRIGGERS,
    "DROP TRIGGER facts_ad_graph ON facts",
    "DROP FUNCTION engram_facts_left_graph()",
    "CREATE FUNCTION engram_fact_left_graph() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "DELETE FROM mentions WHERE fact_id = OLD.id; "
    "DELETE FROM groundings WHERE fact_id = OLD.id; "
    "DELETE FROM relation_support WHERE fact_id = OLD.id; "
    "DELETE FROM graph_reads WHERE fact_id = OLD.id; "
    "DELETE FROM graph_dirty WHERE scope = OLD.scope AND fact_id = OLD.id; "
    "RETURN NULL; END $$",
    "CREATE TRIGGER facts_ad_graph AFTER DELETE ON facts "
    "FOR EACH ROW EXECUTE FUNCTION engram_fact_left_graph()",
    "DROP TRIGGER mentions_ad_graph ON mentions",
    "DROP FUNCTION engram_mentions_left()",
    "CREATE TRIGGER mentions_ad_graph AFTER DELETE ON mentions "
    "FOR EACH ROW WHEN (OLD.grounds = 1) EXECUTE FUNCTION engram_grounding_left()",
)
# SQLite's migration 32 and PostgreSQL's 24 undone: no index of a type or of verified facts.
BEFORE_FILTER_INDEXES = (
    *BEFORE_STRENGTH_INDEX,
    "DROP INDEX facts_by_type",
    "DROP INDEX facts_verified",
)
# SQLite's migration 31 and PostgreSQL's 23 undone: mentions indexed by entity alone.
BEFORE_TYPED_MENTION_INDEX = (
    *BEFORE_FILTER_INDEXES,
    "DROP INDEX mentions_by_entity",
    "CREATE INDEX mentions_by_entity ON mentions (entity)",
)
# Migration 30 undone (SQLite): an erasure drops its scope's text base whole.
BEFORE_BASE_STRIPS = (
    *BEFORE_TYPED_MENTION_INDEX,
    "DROP TRIGGER scope_state_au_text_base",
    "ALTER TABLE text_bases DROP COLUMN strip_due",
    "CREATE TRIGGER scope_state_au_text_base AFTER UPDATE OF words_erased ON scope_state "
    "BEGIN DELETE FROM text_base_terms WHERE scope = new.scope; "
    "DELETE FROM text_bases WHERE scope = new.scope; END",
)
# Migration 29 undone (SQLite): no row telling whether a scrub of the pages is due.
BEFORE_PAGE_SCRUBS = (*BEFORE_BASE_STRIPS, "DELETE FROM meta WHERE key = 'scrub_due'")
# Migration 28 undone (SQLite): no text bases, nor the triggers that drop them.
BEFORE_TEXT_BASES = (
    *BEFORE_PAGE_SCRUBS,
    "DROP TRIGGER facts_ad_text_base",
    "DROP TRIGGER facts_au_text_base",
    "DROP TRIGGER fact_trash_ad_text_base",
    "DROP TRIGGER ledger_items_au_text_base",
    "DROP TRIGGER ledger_items_ad_text_base",
    "DROP TRIGGER scope_state_au_text_base",
    "DROP TABLE text_base_terms",
    "DROP TABLE text_bases",
    "ALTER TABLE scope_state DROP COLUMN words_erased",
)
# Migrations 28 and 27 undone (SQLite, to schema 26): the facts in the trash that may be
# in their scope's index file are named in ``vector_trash_held``, and their purge drops
# the file.
BEFORE_TRASH_SCRUBS = (
    *BEFORE_TEXT_BASES,
    "CREATE TABLE vector_trash_held (id TEXT PRIMARY KEY) WITHOUT ROWID",
    "DROP TRIGGER fact_trash_ad_erased",
    "CREATE TRIGGER fact_trash_ad_erased AFTER DELETE ON fact_trash "
    "WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN "
    + _ERASED.format(scope="old.scope")
    + "DELETE FROM vector_indexes WHERE scope = old.scope "
    "AND EXISTS (SELECT 1 FROM vector_trash_held WHERE id = old.id); "
    "DELETE FROM vector_trash_held WHERE id = old.id; END",
    "CREATE TRIGGER fact_trash_ad_vector_held AFTER DELETE ON fact_trash "
    "WHEN EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN "
    "DELETE FROM vector_trash_held WHERE id = old.id; END",
)
# Migrations 25 and 26's overwrites of erased and trashed vectors in their index files
# (SQLite), undone before going further back (28's text bases first): the erasing
# triggers drop the file's row again, and a fact moved to the trash stays in it.
BEFORE_SCRUBS = (
    *BEFORE_TEXT_BASES,
    "DROP TRIGGER fact_trash_ad_erased",
    "CREATE TRIGGER fact_trash_ad_erased AFTER DELETE ON fact_trash "
    "WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN "
    + _ERASED.format(scope="old.scope")
    + "DELETE FROM vector_indexes WHERE scope = old.scope; END",
    "DROP TRIGGER facts_ad_vectors",
    "DROP TABLE vector_scrubs",
    "DROP TRIGGER facts_au_erased",
    "DROP TRIGGER fact_vectors_au_erased",
    "CREATE TRIGGER facts_ad_erased AFTER DELETE ON facts "
    "WHEN NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = old.id) BEGIN "
    + _ERASED.format(scope="old.scope")
    + "DELETE FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq; END",
    "CREATE TRIGGER facts_au_erased AFTER UPDATE OF content, context ON facts BEGIN "
    + _ERASED.format(scope="old.scope")
    + "DELETE FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq; END",
    "CREATE TRIGGER fact_vectors_au_erased AFTER UPDATE OF vector ON fact_vectors BEGIN "
    + _ERASED.format(scope="(SELECT scope FROM facts WHERE seq = new.fact)")
    + "DELETE FROM vector_indexes WHERE scope = (SELECT scope FROM facts WHERE seq = new.fact) "
    "AND last_seq >= new.fact; END",
)
BEFORE_GROUNDING_FLAGS = (
    *BEFORE_SCRUBS,
    _FLAGS_TO_ROWS,
    "DROP TRIGGER mentions_ad_graph",
    "DROP TRIGGER mentions_au_graph",
    "DROP TRIGGER groundings_ad_graph",
    "CREATE TRIGGER groundings_ad_graph AFTER DELETE ON groundings BEGIN "
    "DELETE FROM entities WHERE id = old.entity AND origin = 'extracted' "
    "AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = old.entity); END",
    "ALTER TABLE mentions DROP COLUMN grounds",
)
# Migration 22's words versions (PostgreSQL), undone before going further back.
POSTGRES_BEFORE_WORDS_VERSIONS = (
    *POSTGRES_BEFORE_GRAPH_STATEMENTS,
    *BEFORE_TYPED_MENTION_INDEX,
    "DROP TRIGGER facts_words_in ON facts",
    "DROP TRIGGER facts_words_out ON facts",
    "DROP TRIGGER facts_words_rewritten ON facts",
    "DROP FUNCTION engram_words_changed, engram_words_rewritten, engram_words_version",
    "ALTER TABLE scope_state DROP COLUMN words_version",
)
_POSTGRES_BEFORE_GROUNDING_FLAGS = (
    *POSTGRES_BEFORE_WORDS_VERSIONS,
    _FLAGS_TO_ROWS,
    "DROP TRIGGER mentions_ad_graph ON mentions",
    "DROP TRIGGER mentions_au_graph ON mentions",
    "ALTER TABLE mentions DROP COLUMN grounds",
)


def before_grounding_flags(target: Target) -> None:
    """Takes a store back to before migration 24 (SQLite, and so before 25 too) or 20
    (PostgreSQL, and so before 22 too)."""
    postgres = is_postgres(target)
    for statement in _POSTGRES_BEFORE_GROUNDING_FLAGS if postgres else BEFORE_GROUNDING_FLAGS:
        rows(target, statement)


def as_schema_18(conn: Any) -> None:
    """Rewrites a SQLite store's rows as schema 18 kept them: vectors as float32 (REPLACE,
    so no trigger takes it for a change), content hashes whole, index files without how
    their graph was built, mentions without their type or grounding flags, relations
    without their extractor."""
    from engram.core.rules import content_hash

    conn.create_function("single", 1, lambda raw: SQLITE.unvector(raw).astype("<f4").tobytes())
    conn.create_function("whole", 1, content_hash)
    conn.execute("REPLACE INTO fact_vectors SELECT fact, single(vector) FROM fact_vectors")
    conn.execute("UPDATE fact_trash SET vector = single(vector) WHERE vector IS NOT NULL")
    for table in ("facts", "fact_trash"):
        conn.execute(f"UPDATE {table} SET content_hash = whole(content)")
    conn.execute("ALTER TABLE vector_indexes DROP COLUMN built_with")
    for statement in BEFORE_GROUNDING_FLAGS:
        conn.execute(statement)
    conn.execute("ALTER TABLE mentions DROP COLUMN type")
    conn.execute("ALTER TABLE relations DROP COLUMN extractor")


def as_postgres_schema_14(url: str) -> None:
    """Takes a PostgreSQL store back to schema 14: without migration 15's postings (and
    17's index of them by fact), 16's indexes over a range of a scope's facts, 18's
    mention types, 19's relation extractors and 20's grounding flags (and 22's words
    versions)."""
    before_grounding_flags(url)
    rows(
        url,
        "DELETE FROM engram_schema WHERE version >= 15",
        setup=(
            "ALTER TABLE scope_state DROP COLUMN ann_through, DROP COLUMN ann_rows",
            "CREATE INDEX fact_vectors_by_scope ON fact_vectors (scope)",
            "DROP INDEX fact_vectors_by_scope_seq",
            "DROP TRIGGER facts_terms_in ON facts",
            "DROP TRIGGER facts_terms_out ON facts",
            "DROP TRIGGER facts_terms_changed ON facts",
            "DROP FUNCTION engram_terms_in, engram_terms_out, engram_terms_changed",
            "DROP TABLE fact_terms, scope_terms",
            "DROP FUNCTION engram_term_query",
            "ALTER TABLE mentions DROP COLUMN type",
            "ALTER TABLE relations DROP COLUMN extractor",
        ),
    )


def is_postgres(target: Target) -> bool:
    return isinstance(target, str) and target.startswith("postgresql://")


def rows(
    target: Target, sql: str, params: tuple[Any, ...] = (), *, setup: tuple[str, ...] = ()
) -> list[tuple[Any, ...]]:
    """Runs ``sql`` (with ``?`` placeholders) straight against the store's database,
    after the PostgreSQL statements ``setup`` on the same connection."""
    if is_postgres(target):
        import psycopg

        with psycopg.connect(str(target)) as conn:
            for statement in setup:
                conn.execute(statement.encode())
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return list(cursor.fetchall()) if cursor.description else []
    from engram.storage.sqlite.driver import sqlite3

    conn = sqlite3.connect(target)
    try:
        found = list(conn.execute(sql, params).fetchall())
        conn.commit()  # a write lands, as on PostgreSQL
        return found
    finally:
        conn.close()


def plan(
    target: Target, sql: str, params: tuple[Any, ...] = (), *, without: Sequence[str] = ()
) -> str:
    """The query plan of ``sql`` as one line of text; on PostgreSQL, ``without`` the
    plan nodes named (``enable_<name>``: "sort", …) beside a sequential scan."""
    if is_postgres(target):
        # Plans follow statistics, as they do in service; on tiny test tables a
        # sequential scan always wins, so it is ruled out to show which index serves.
        ruled_out = ("seqscan", *without)
        setup = ("ANALYZE", *(f"SET enable_{name} = off" for name in ruled_out))
        return " ".join(str(r[0]) for r in rows(target, f"EXPLAIN {sql}", params, setup=setup))
    return " ".join(str(r[-1]) for r in rows(target, f"EXPLAIN QUERY PLAN {sql}", params))


def vectors(target: Target) -> list[np.ndarray[Any, np.dtype[np.float32]]]:
    """Every stored vector, in the order the facts were written."""
    if is_postgres(target):
        import psycopg
        from pgvector.psycopg import register_vector

        with psycopg.connect(str(target)) as conn:  # read as the store reads them
            register_vector(conn)
            found = conn.execute("SELECT vector FROM fact_vectors ORDER BY fact").fetchall()
        return [POSTGRES.unvector(r[0]) for r in found]
    found = rows(target, "SELECT vector FROM fact_vectors ORDER BY fact")
    return [SQLITE.unvector(r[0]) for r in found]


def env(target: Target) -> dict[str, str]:
    """The environment variable that points engram (CLI, service) at the store."""
    if is_postgres(target):
        return {"ENGRAM_DB_URL": str(target)}
    return {"ENGRAM_DB_PATH": str(target)}


FreshStore = Callable[[], tuple[Target, Callable[[], None]]]


def fresh_stores(backend: str, postgres_admin: Callable[[], str]) -> FreshStore:
    """For tests that make many stores in one test (state machines): a function that
    makes a new, empty one and returns it with what removes it."""
    if backend == "postgres":
        import postgres_server

        admin = postgres_admin()
        template = postgres_server.migrated_template(admin)

        def database() -> tuple[Target, Callable[[], None]]:
            url = postgres_server.create_database(admin, template=template)
            return url, lambda: postgres_server.drop_database(admin, url)

        return database

    def file() -> tuple[Target, Callable[[], None]]:
        folder = tempfile.TemporaryDirectory()
        return Path(folder.name) / "e.db", folder.cleanup

    return file


@contextmanager
def writing_meanwhile(memory: Any, ref: Any) -> Iterator[None]:
    """Keeps remembering facts and setting keys in ``ref`` on another thread while the
    block runs."""
    stop = threading.Event()

    def keep_writing() -> None:
        i = 0
        while not stop.is_set():
            memory.remember(ref, f"during {i}")
            memory.working.set(ref, f"k{i}", i)
            i += 1

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        yield
    finally:
        stop.set()
        writer.join()


def same_hits(found: Any, expected: Any, *, within: float = 1e-5) -> None:
    """Two rankings agree: the same scores (to ``within``: float32 products of one row
    may differ in their last bit with the rows around it), each fact both hold with the
    same score, and the same facts above the last score (a tie there may be cut either
    way)."""
    got = [(h.fact.id, h.score) for h in found]
    want = [(h.fact.id, h.score) for h in expected]
    assert len(got) == len(want), (got, want)
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert abs(a - b) <= within, (got, want)
    mine, theirs = dict(got), dict(want)
    for fact in mine.keys() & theirs.keys():
        assert abs(mine[fact] - theirs[fact]) <= within, (got, want)
    floor = want[-1][1] + within if want else 0.0
    assert {i for i, s in got if s > floor} == {i for i, s in want if s > floor}, (got, want)


def all_facts(memory: Any, ref: Any) -> list[Any]:
    """Every fact of ``ref``, newest first, page by page."""
    out: list[Any] = []
    before = None
    while True:
        page = memory.facts(ref, limit=1000, before=before)
        out.extend(page.facts)
        if page.next_before is None:
            return out
        before = page.next_before


@contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """A directory nobody may write in: mode 0500, or for root (who ignores modes) the
    immutable attribute, which binds root too."""
    directory.mkdir(mode=0o500)
    if os.geteuid() != 0:
        yield
        return
    made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"root cannot make a directory unwritable here: {made.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def text_candidates(store: Any, scope: Any, terms: Any, filters: Any, limit: int) -> list[Any]:
    """A store's full-text candidates, read in a transaction of their own."""
    return store.run(  # type: ignore[no-any-return]
        lambda tx: store.candidates.text(tx, scope, terms, filters, limit), write=False
    )


def vector_candidates(store: Any, scope: Any, vector: Any, filters: Any, limit: int) -> list[Any]:
    """A store's vector candidates, read in a transaction of their own."""
    return store.run(  # type: ignore[no-any-return]
        lambda tx: store.candidates.vector(tx, scope, vector, filters, limit), write=False
    )


class ManualClock:
    """A clock a test moves: it starts at the real time and moves one microsecond a
    reading (so every write still gets its own time), and ``advance`` jumps ahead."""

    def __init__(self) -> None:
        self.now = time.time_ns() // 1000

    def __call__(self) -> int:
        self.now += 1
        return self.now

    def advance(self, by: timedelta) -> None:
        self.now += by // timedelta(microseconds=1)


class WatchedStore:
    """A store that counts the transactions open through it (every call delegated): for
    tests that a model (a reranker, a chat model) is asked with none open."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.open = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def run(self, work: Callable[[Any], Any], **options: Any) -> Any:
        with self.transaction(**options) as tx:
            return work(tx)

    def transaction(self, **options: Any) -> Any:
        @contextmanager
        def counted() -> Iterator[Any]:
            with self._store.transaction(**options) as tx:
                self.open += 1
                try:
                    yield tx
                finally:
                    self.open -= 1

        return counted()


def rows_through(memory: Any, text: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """``text`` (``?`` placeholders) read through the store's own connection, in one
    snapshot: no connection made per read, as :func:`rows` makes."""
    from engram.storage.sql.tx import sql

    return list(memory._store.run(lambda tx: sql(tx).rows(text, params), write=False))


def groundings(target: Target, extractor: str) -> set[tuple[str, str]]:
    """The (fact id, entity id) groundings ``extractor`` made, read straight from the
    database: its rows, and for the rules also the flags on the mentions carrying them."""
    found = rows(
        target,
        "SELECT fact_id, entity FROM groundings WHERE extractor = ? "
        "UNION SELECT fact_id, entity FROM mentions WHERE grounds = 1 AND ? = 'rules'",
        (extractor, extractor),
    )
    return {(str(f), str(e)) for f, e in found}


def undo(target: Target, statements: Sequence[str]) -> None:
    """Runs ``statements`` (a chain above, shared by both backends) to take a store back
    to an older schema; on PostgreSQL, after undoing its migrations past them."""
    for statement in (
        (*POSTGRES_BEFORE_GRAPH_STATEMENTS, *statements) if is_postgres(target) else statements
    ):
        rows(target, statement)


# Notes and filters the filtered full-text tests of both backends rank under.
FILTERED_FROM = datetime(2026, 1, 1, tzinfo=UTC)


def filtered_notes(texts: Sequence[str]) -> list[Note]:
    """``texts`` as notes an hour apart from FILTERED_FROM: every third tagged "x", every
    fourth of type "plan", every fifth of strength 0.5."""
    return [
        Note(
            text,
            tags=("x",) if i % 3 == 0 else (),
            type="plan" if i % 4 == 0 else None,
            created_at=FILTERED_FROM + timedelta(hours=i),
            strength=0.5 if i % 5 == 0 else 1.0,
        )
        for i, text in enumerate(texts)
    ]


def six_filters() -> list[Filters]:
    """A tag, a type, after a time, before a time with a tag, a strength floor, and a
    tag no note has, over :func:`filtered_notes`."""
    return [
        Filters(tags=("x",)),
        Filters(type="plan"),
        Filters(created_after=FILTERED_FROM + timedelta(hours=100)),
        Filters(created_before=FILTERED_FROM + timedelta(hours=50), tags=("x",)),
        Filters(min_strength=0.8),
        Filters(tags=("none such",)),
    ]


# With FEW at 50, over :func:`filtered_notes` and 30 tagged "camera report" notes: each
# filter and how often it reads every passing row number for the best ten of "camera",
# with the best asked FIRST_BEST (4) times as many and then wider (ASKS 2), and asked
# once (ASKS 1): a strength floor most pass (never), a type none of the best 30 have
# (never: enough of a wider best have it; once where the best 40 are the only ask), 40
# before a time (never: they are few, the set).
FEW_CASES = (
    (Filters(min_strength=0.8), 0, 0),
    (Filters(type="plan"), 0, 1),
    (Filters(created_before=FILTERED_FROM + timedelta(hours=40)), 0, 0),
)


# Every note holds "camera" at one score, so a full-text half's best are the oldest;
# every twentieth is a plan (50: more than a FEW of 10).
TWENTIETH = [Note(f"camera note {i}", type="plan" if i % 20 == 0 else None) for i in range(1000)]


def a_twentieth_found_as_wide_as_its_share_says(
    monkeypatch: pytest.MonkeyPatch,
    target: Target,
    store: Any,
    scope: Any,
    expected: list[Any],
    read: list[int],
) -> None:
    """Over :data:`TWENTIETH`, the best ten plans of "camera": of the best 40, 2 are
    plans; four times as wide, 160, hold 8 of the 10 wanted, and every passing row number
    is read (MARGIN 0); as wide as 2 in 40 says holds 10 and half as many again, 300,
    hold 15: none is. Each time the answer is ``expected`` (the statement's), and
    ``read`` (the rows whose traits the half reads, as the caller records them) holds
    plans only."""
    from engram.storage.sql import passing

    plans = Filters(type="plan")
    assert len(expected) == 10
    reads = count_passing_rows(monkeypatch, 10)
    kept = passing.MARGIN
    for margin, every_row in ((kept, 0), (0.0, 1)):
        monkeypatch.setattr(passing, "MARGIN", margin)
        reads.clear()
        found = text_candidates(store, scope, ["camera"], plans, 10)
        assert [c.id for c in found] == [c.id for c in expected], margin
        assert all(c.traits is not None for c in found)  # the half's, not the statement's
        assert len(reads) == every_row, margin
    monkeypatch.setattr(passing, "MARGIN", kept)
    read.clear()
    text_candidates(store, scope, ["camera"], plans, 10)
    typed = "SELECT seq FROM facts WHERE type = 'plan'"
    assert read and set(read) <= {r[0] for r in rows(target, typed)}


def count_passing_rows(monkeypatch: pytest.MonkeyPatch, few: int) -> list[object]:
    """Sets the filters' FEW to ``few``; each read of every passing row number is then
    appended to the list returned."""
    from engram.storage.sql import passing

    reads: list[object] = []
    whole = passing.Passing.rows

    def counted(self: Any) -> Any:
        reads.append(self)
        return whole.func(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(passing.Passing, "rows", property(counted))
    monkeypatch.setattr(passing, "FEW", few)
    return reads


def held_vector(file: Path, target: Target, fact_id: str) -> bytes:
    """The fact's vector as the SQLite index file ``file`` holds it (int8)."""
    from usearch.index import Index

    ((seq,),) = rows(target, "SELECT seq FROM facts WHERE id = ?", (fact_id,))
    return bytes(np.asarray(Index.restore(str(file), view=True).get(seq), np.int8).tobytes())


def graph_file(mem: Any, ref: Any, query: str) -> Path:
    """Asks for the SQLite scope's approximate index (a search by meaning), waits for it,
    and returns its file."""
    store = mem._store
    approximate = store.index.approximate
    mem.recall(ref, query, top_k=5, mode="vector")
    assert approximate.settle(timeout=120)
    named = store.db.run(
        lambda tx: tx.conn.execute("SELECT file FROM vector_indexes").fetchall(), write=False
    )
    assert len(named) == 1, named
    assert approximate.directory is not None
    return Path(approximate.directory, named[0][0])
