"""Words erased for good, out of the database's files (``engram scrub``).

A row deleted for good is gone from every query at once, but PostgreSQL keeps its bytes:
in its table's page until the page is pruned, and often after that too, in the space the
pruning freed, which it does not clear; a GIN index keeps a word as a key of its tree
for good, and a B-tree's inner pages keep keys as the bounds of their children. Measured
(BENCHMARKS.md, "PostgreSQL: erased words out of the database's files"): a fact
forgotten for good, then ``VACUUM`` of every table and a ``CHECKPOINT``, and its word's
bytes were still in three files (``facts_words``, ``scope_terms``,
``fact_terms_by_impact``). ``VACUUM FULL`` writes a table and its indexes into new files
and empties the old ones at its commit: none was left. The planner's statistics keep
words too: ``ANALYZE`` (autovacuum's, or a graph's build) stores samples of a column's
values (its most common ones, its histogram's bounds) in the ``pg_statistic`` catalog,
where after a forget for good 180 erased words of a test's facts stayed until the tables
were sampled again and that catalog written anew.

Each write that erased words records so in its transaction (a row of ``erasures``,
:data:`engram.storage.postgres.database.ERASED`). :func:`scrub` writes every table of
the store's schema anew but ``fact_vectors``, which holds no words, and whose rewrite
builds every scope's graph again (minutes for a scope of 100k facts): it is written anew
only when asked (``vectors``). A plain ``VACUUM`` took an erased fact's vector out of
its graph but, for the newest row of a page, not out of the table's page (the space
pruning freed). Then the scrub asks the server for a new WAL file and a checkpoint,
twice, so that the WAL files written before are recycled or removed; then it forgets
the erasures it covered, those committed before it began (one committed meanwhile keeps
a scrub due).

Each table is written anew in a transaction of its own, holding it exclusively: reads
and writes of that table wait for it (5.2 s in all at 100k facts, 193 s with the
vectors' table: BENCHMARKS.md). A lock not granted within :data:`LOCK_WAIT` (a long
transaction holds the table) ends the scrub with Unavailable; the tables before stay
written anew and the scrub stays due.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from engram.core.errors import StorageFailure, Unavailable
from engram.core.health import Scrubbed
from engram.storage.postgres.database import CONNECT_TIMEOUT_S, HAS_SCHEMA, failure, redact
from engram.storage.postgres.schema import migrate
from engram.storage.postgres.vectors import BUILDING

LOCK_WAIT = "10s"
# Its words are none, and writing it anew builds every scope's HNSW graph again.
KEPT = "fact_vectors"
VECTORS_LEFT = (
    "the vectors of erased facts, in fact_vectors' pages: `engram scrub --vectors` writes "
    "it anew too, building every scope's vector graph again (its vector recall waits)"
)
# Switched and checkpointed twice: the files before the first switch are then behind
# the redo point of a checkpoint that followed it, which is when the server recycles or
# removes them (measured: once a word was erased, no WAL file held it after two rounds
# with wal_recycle off).
ROUNDS = 2
# Each table written anew and sampled again: the planner's statistics of a column
# (pg_statistic: its most common values, its histogram's bounds) are rows of it, which
# held the vectors of erased facts until the table was analysed again, and the catalog
# itself is then written anew (STATISTICS), as the database's owner or a superuser may.
REWRITE = "VACUUM (FULL, ANALYZE) {}"
STATISTICS = "pg_statistic"
# Whether this role may VACUUM FULL every table of the database, the catalogs' too: a
# superuser or the database's owner may (PostgreSQL 16).
_OWNS_DATABASE = (
    "SELECT rolsuper OR pg_has_role((SELECT datdba FROM pg_database "
    "WHERE datname = current_database()), 'USAGE') FROM pg_roles WHERE rolname = current_user"
)
STATISTICS_LEFT = (
    "the planner's statistics before this scrub (pg_statistic, samples of the tables' "
    "values): writing that catalog anew needs the database's owner or a superuser"
)
# Whether a write erased words for good since the last scrub.
DUE = "SELECT EXISTS (SELECT 1 FROM erasures)"
# The schema's tables but one, and whether this role is a member of each one's owner,
# who may VACUUM FULL it too (a table this role may not is passed over with a warning
# only, which would leave its bytes).
_TABLES = (
    "SELECT tablename, pg_has_role(tableowner, 'USAGE') FROM pg_tables "
    "WHERE schemaname = current_schema() AND tablename <> %s ORDER BY 1"
)


def scrub(url: str, *, vectors: bool = False) -> Scrubbed:
    """Writes the store's tables anew (``fact_vectors`` too with ``vectors``), whether or
    not a write erased words since the last scrub, then rounds the server's WAL; what it
    did and what it could not."""
    name = redact(url)
    started = time.perf_counter()
    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
            if not _one(conn, HAS_SCHEMA):
                raise StorageFailure(f"there is no engram store at {name}", hint="check the URL")
            owner = bool(_one(conn, _OWNS_DATABASE))
            kept = "" if vectors else KEPT
            tables = {
                str(table): owner or bool(mine)
                for table, mine in conn.execute(_TABLES, (kept,)).fetchall()
            }
            if not all(tables.values()):
                others = ", ".join(t for t, mine in tables.items() if not mine)
                raise StorageFailure(
                    f"the store at {name} was not scrubbed: this role may not write anew "
                    f"its tables {others} (VACUUM FULL needs their owner)",
                    hint="run `engram scrub` as the role that owns the store's tables (the "
                    "one that migrated it) or a superuser",
                )
            migrate(conn, name)  # as opening it would
            covered = int(_one(conn, "SELECT coalesce(max(id), 0) FROM erasures"))
            conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(LOCK_WAIT)))
            for setting in BUILDING if vectors else ():  # its graphs are built again
                conn.execute(setting)
            rewrites = [(t, sql.SQL(REWRITE).format(sql.Identifier(t))) for t in tables]
            if owner:
                rewrites.append((STATISTICS, sql.SQL("VACUUM FULL {}").format(sql.SQL(STATISTICS))))
            for table, rewrite in rewrites:
                try:
                    conn.execute(rewrite)
                except pg_errors.LockNotAvailable as exc:
                    raise Unavailable(
                        f"the store at {name} was not scrubbed: its table {table} was in use "
                        f"past {LOCK_WAIT} (the tables before it were written anew)",
                        hint="run `engram scrub` again, when no long transaction holds it",
                    ) from exc
            conn.execute("DELETE FROM erasures WHERE id <= %s", (covered,))
            left = [
                *([] if vectors else [VECTORS_LEFT]),
                *([] if owner else [STATISTICS_LEFT]),
                *_rounded(conn),
                *_kept(conn),
            ]
            still = bool(_one(conn, DUE))
    except psycopg.Error as exc:
        raise failure(exc, f"the store at {name}") from exc
    return Scrubbed(
        was_due=covered > 0,
        still_due=still,
        rewritten=tuple(tables),
        seconds=time.perf_counter() - started,
        left=tuple(left),
    )


def _rounded(conn: psycopg.Connection[Any]) -> list[str]:
    """Asks for a new WAL file and a checkpoint, :data:`ROUNDS` times; what is left where
    this role may not."""
    try:
        for _ in range(ROUNDS):
            conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
    except pg_errors.InsufficientPrivilege:
        return [
            "the server's WAL files: this role may not start a new one or checkpoint (a "
            "superuser may, or a role with pg_checkpoint and EXECUTE on pg_switch_wal); "
            "they are recycled as the server writes on"
        ]
    return []


def _kept(conn: psycopg.Connection[Any]) -> list[str]:
    """What the server's settings keep of the WAL after it is rounded."""
    left = []
    if _one(conn, "SELECT current_setting('wal_recycle')") == "on":
        left.append(
            "recycled WAL files: the server reuses them (wal_recycle is on) and their "
            "old records stay in them until it writes over them; with wal_recycle off "
            "it removes them"
        )
    if _one(conn, "SELECT current_setting('archive_mode')") != "off":
        left.append("the WAL archive (archive_mode is on): what was archived stays there")
    return left


def _one(conn: psycopg.Connection[Any], statement: str) -> Any:
    row = conn.execute(statement).fetchone()
    assert row is not None
    return row[0]
