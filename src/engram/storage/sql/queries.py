"""Every statement the shared rows run, built once: each function returns ``(sql, params)``
with ``?`` placeholders, which the transaction spells for its driver (:mod:`.dialect`).
The few that differ by backend take the dialect."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.storage.rows import (
    AGENT_COLUMNS,
    ENTRY_COLUMNS,
    FACT_COLUMNS,
    FACT_FIELDS,
    PLAIN_COLUMNS,
    SESSION_COLUMNS,
    WORKING_COLUMNS,
    stored_digest,
)
from engram.storage.sql.dialect import Dialect

Query = tuple[str, tuple[Any, ...]]

SELECT_FACT = f"SELECT {FACT_COLUMNS} FROM facts"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


# -- working memory --------------------------------------------------------------
def working_live(scope: str, key: str, now_us: int) -> Query:
    return (
        f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = ? AND key = ? AND {_LIVE}",
        (scope, key, now_us),
    )


def working_version(scope: str, key: str) -> Query:
    return "SELECT version, expires_at FROM working WHERE scope = ? AND key = ?", (scope, key)


def working_put(
    scope: str, key: str, value: str, version: int, now_us: int, expires_us: int | None
) -> Query:
    return (
        "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET "
        "value = excluded.value, version = excluded.version, "
        "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
        (scope, key, value, version, now_us, expires_us),
    )


def working_delete(scope: str, key: str) -> Query:
    return "DELETE FROM working WHERE scope = ? AND key = ?", (scope, key)


def working_page(scope: str, after: str, limit: int, now_us: int) -> Query:
    # Both order keys by their UTF-8 bytes: SQLite's BINARY collation, PostgreSQL's "C".
    return (
        f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = ? AND key > ? AND {_LIVE} "
        "ORDER BY key LIMIT ?",
        (scope, after, now_us, limit),
    )


def working_live_count(scope: str, now_us: int) -> Query:
    return f"SELECT count(*) FROM working WHERE scope = ? AND {_LIVE}", (scope, now_us)


def working_scopes(starting: str, now_us: int) -> Query:
    # substr, not a range or LIKE: equality needs no collation order and no escaping.
    return (
        f"SELECT DISTINCT scope FROM working WHERE substr(scope, 1, ?) = ? AND {_LIVE}",
        (len(starting), starting, now_us),
    )


def working_expired_keys(starting: str, now_us: int) -> Query:
    """The (scope, key) of every key expired at ``now_us`` whose scope's storage key
    starts with ``starting`` (a scan: a sweep's)."""
    return (
        "SELECT scope, key FROM working WHERE substr(scope, 1, ?) = ? "
        "AND expires_at IS NOT NULL AND expires_at <= ?",
        (len(starting), starting, now_us),
    )


def working_expired_in(scope: str, now_us: int) -> Query:
    """The (scope, key) of every key of one scope expired at ``now_us`` (its index)."""
    return (
        "SELECT scope, key FROM working WHERE scope = ? "
        "AND expires_at IS NOT NULL AND expires_at <= ?",
        (scope, now_us),
    )


def working_copy(parent: str, child: str, now_us: int) -> Query:
    return (
        "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
        f"SELECT ?, key, value, 1, ?, expires_at FROM working WHERE scope = ? AND {_LIVE} "
        "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
        "version = working.version + 1, updated_at = excluded.updated_at, "
        "expires_at = excluded.expires_at",
        (child, now_us, parent, now_us),
    )


def working_raw(d: Dialect, scope: str, keys: Sequence[str] | None) -> Query:
    """Every row of the scope (or those of ``keys``), expired or not."""
    if keys is None:
        return "SELECT key, value, version, expires_at FROM working WHERE scope = ?", (scope,)
    member, params = d.in_list("key", keys)
    return (
        f"SELECT key, value, version, expires_at FROM working WHERE scope = ? AND {member}",
        (scope, *params),
    )


# -- facts -----------------------------------------------------------------------
def fact_by_id(d: Dialect, scope: str, fact_id: str) -> Query:
    return f"{SELECT_FACT} WHERE id = ? AND {d.scope_by_id}", (fact_id, scope)


def facts_by_ids(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    member, params = d.in_list("id", ids)
    return f"{SELECT_FACT} WHERE {member} AND {d.scope_by_id}", (*params, scope)


def facts_words(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    member, params = d.in_list("id", ids)
    return (
        f"SELECT id, content, metadata, type, created_at FROM facts "
        f"WHERE {member} AND {d.scope_by_id}",
        (*params, scope),
    )


def ids_taken(d: Dialect, ids: Sequence[str]) -> Query:
    """Those of ``ids`` a fact has, live or in the trash."""
    member, params = d.in_list("id", ids)
    return (
        f"SELECT id FROM facts WHERE {member} UNION SELECT id FROM fact_trash WHERE {member}",
        (*params, *params),
    )


def facts_by_hashes(d: Dialect, scope: str, hashes: Sequence[str]) -> Query:
    """Each row led by its content hash as stored (``hashes`` are so too)."""
    member, params = d.in_list("content_hash", hashes)
    return (
        f"SELECT content_hash, {FACT_COLUMNS} FROM facts WHERE scope = ? AND {member}",
        (scope, *params),
    )


def facts_strengths(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    # every strength, the default too: stating ``strength <> 1.0`` let PostgreSQL's
    # planner walk the scope's facts of other strengths (``facts_by_strength``)
    member, params = d.in_list("id", ids)
    return f"SELECT id, strength FROM facts WHERE {member} AND {d.scope_by_id}", (*params, scope)


def facts_page(scope: str, before: tuple[int, int], limit: int) -> Query:
    return (
        f"{SELECT_FACT} WHERE scope = ? AND (created_at, seq) < (?, ?) "
        "ORDER BY created_at DESC, seq DESC LIMIT ?",
        (scope, *before, limit),
    )


def scope_keys(under: str, limit: int) -> Query:
    """The keys of the scopes holding facts that start with ``under``, in order (compared
    as text, so the escapes a key holds are no pattern)."""
    return (
        "SELECT DISTINCT scope FROM facts WHERE substr(scope, 1, length(?)) = ? "
        "ORDER BY scope LIMIT ?",
        (under, under, limit),
    )


def facts_count(scope: str) -> Query:
    return "SELECT count(*) FROM facts WHERE scope = ?", (scope,)


def facts_any(scope: str | None) -> Query:
    if scope is None:
        return "SELECT 1 FROM facts LIMIT 1", ()
    return "SELECT 1 FROM facts WHERE scope = ? LIMIT 1", (scope,)


def fact_scope(fact_id: str) -> Query:
    return "SELECT scope FROM facts WHERE id = ?", (fact_id,)


def fact_rewrite(
    d: Dialect,
    scope: str,
    fact_id: str,
    content: str,
    content_hash: str,
    by: str | None,
    by_at_us: int | None,
    now_us: int,
) -> Query:
    """The rewritten row, as :data:`SELECT_FACT` reads it."""
    return (
        "UPDATE facts SET content = ?, content_hash = ?, updated_at = ?, corrected_by = ?, "
        f"corrected_at = ? WHERE id = ? AND {d.scope_by_id} RETURNING {FACT_COLUMNS}",
        (content, stored_digest(content_hash), now_us, by, by_at_us, fact_id, scope),
    )


def vector_set(d: Dialect, seq: int, vector: Any) -> Query:
    return "UPDATE fact_vectors SET vector = ? WHERE fact = ?", (d.vector(vector), seq)


def vectors_of(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    """Each fact of ``ids`` with its vector (NULL where it has none)."""
    member, params = d.in_list("id", ids)
    return (  # the rows found by the ids' index, never by a walk of the scope
        "SELECT id, (SELECT vector FROM fact_vectors WHERE fact = facts.seq) FROM facts "
        f"WHERE {member} AND {d.scope_by_id}",
        (*params, scope),
    )


def facts_by_source(d: Dialect, scope: str, sandbox: str, entries: Sequence[int]) -> Query:
    member, params = d.in_list("source_entry", entries)
    return (
        f"{SELECT_FACT} WHERE source_sandbox = ? AND {member} AND scope = ?",
        (sandbox, *params, scope),
    )


def fact_set_context(
    d: Dialect, scope: str, fact_id: str, context: str | None, now_us: int
) -> Query:
    return (
        f"UPDATE facts SET context = ?, updated_at = ? WHERE id = ? AND {d.scope_by_id}",
        (context, now_us, fact_id, scope),
    )


def fact_set_strength(d: Dialect, scope: str, fact_id: str, strength: float) -> Query:
    return (
        f"UPDATE facts SET strength = ? WHERE id = ? AND {d.scope_by_id}",
        (strength, fact_id, scope),
    )


def facts_weak(scope: str, below: float, cutoff_us: int) -> Query:
    return (
        "SELECT id FROM facts WHERE scope = ? AND strength < ? AND created_at < ? "
        "AND source_sandbox IS NULL ORDER BY created_at, seq",
        (scope, below, cutoff_us),
    )


def facts_without_vector(scope: str, limit: int) -> Query:
    return (
        "SELECT f.seq, f.id, f.content FROM facts f WHERE f.scope = ? AND NOT EXISTS "
        "(SELECT 1 FROM fact_vectors v WHERE v.fact = f.seq) ORDER BY f.seq LIMIT ?",
        (scope, limit),
    )


def facts_ids(scope: str, turn_user: str | None) -> Query:
    return (
        "SELECT id FROM facts WHERE scope = ? AND (CAST(? AS TEXT) IS NULL OR turn_user = ?) "
        "ORDER BY seq",
        (scope, turn_user, turn_user),
    )


def facts_created_before(scope: str, cutoff_us: int) -> Query:
    return (
        "SELECT id FROM facts WHERE scope = ? AND created_at < ? ORDER BY created_at, seq",
        (scope, cutoff_us),
    )


def facts_expired(scope: str, at_us: int) -> Query:
    return (
        "SELECT id FROM facts WHERE scope = ? AND expires_at IS NOT NULL AND expires_at <= ? "
        "ORDER BY expires_at, seq",
        (scope, at_us),
    )


def facts_oldest(scope: str, count: int) -> Query:
    return (
        "SELECT id FROM facts WHERE scope = ? ORDER BY created_at, seq LIMIT ?",
        (scope, count),
    )


def facts_erase(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    member, params = d.in_list("id", ids)
    return f"DELETE FROM facts WHERE {member} AND {d.scope_by_id} RETURNING id", (*params, scope)


# A scope's rows are deleted or moved to the trash this many at a time, each time by its
# own statement until none is left. SQLite keeps a statement's journal (the pages it
# changed, as they were) until the statement ends, and the driver's SQLite keeps every
# temporary file in memory (TEMP_STORE=3): one statement over a 1.15M-fact scope held
# 1.8 GB. At 100k facts, one DELETE peaked at 181 MiB, statements of 10k at 70 MiB.
SCOPE_CHUNK = 10_000


def facts_erase_scope(scope: str, turn_user: str | None) -> Query:
    """Deletes the scope's first SCOPE_CHUNK facts (those written for ``turn_user``, if
    given), by seq; run again until it deletes none."""
    return (
        "DELETE FROM facts WHERE seq IN (SELECT seq FROM facts WHERE scope = ? "
        "AND (CAST(? AS TEXT) IS NULL OR turn_user = ?) ORDER BY seq LIMIT ?)",
        (scope, turn_user, turn_user, SCOPE_CHUNK),
    )


def facts_first(scope: str) -> Query:
    """The ids of the scope's first SCOPE_CHUNK facts, by seq."""
    return "SELECT id FROM facts WHERE scope = ? ORDER BY seq LIMIT ?", (scope, SCOPE_CHUNK)


# -- the trash: rows as they were, with their vectors -------------------------------
TRASH_COLUMNS = f"id, scope, {PLAIN_COLUMNS}"
# As FACT_COLUMNS reads a fact (no seq: 0), then the time it was forgotten.
TRASHED_FACT = f"{FACT_FIELDS}, 0, deleted_at"


def trash_move(d: Dialect, scope: str, ids: Sequence[str], now_us: int) -> Query:
    """Copies the scope's facts among ``ids`` into the trash (a whole scope's go a chunk
    of :func:`facts_first` at a time)."""
    member, listed = d.in_list("id", ids)
    return (
        f"INSERT INTO fact_trash ({TRASH_COLUMNS}, vector, deleted_at) "
        f"SELECT {TRASH_COLUMNS}, (SELECT v.vector FROM fact_vectors v WHERE v.fact = f.seq), "
        f"? FROM facts f WHERE {member} AND {d.scope_by_id} ORDER BY seq",
        (now_us, *listed, scope),
    )


def trash_get(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    member, params = d.in_list("id", ids)
    return (
        f"SELECT {TRASHED_FACT} FROM fact_trash WHERE {member} AND {d.scope_by_id}",
        (*params, scope),
    )


def trash_page(scope: str, before: tuple[int, str], limit: int) -> Query:
    return (
        f"SELECT {TRASHED_FACT} FROM fact_trash WHERE scope = ? AND (deleted_at, id) < (?, ?) "
        "ORDER BY deleted_at DESC, id DESC LIMIT ?",
        (scope, *before, limit),
    )


def trash_ids(scope: str, turn_user: str | None) -> Query:
    return (
        "SELECT id FROM fact_trash WHERE scope = ? AND (CAST(? AS TEXT) IS NULL OR turn_user = ?)",
        (scope, turn_user, turn_user),
    )


def trash_expired(scope: str, cutoff_us: int) -> Query:
    return (
        "SELECT id FROM fact_trash WHERE scope = ? AND deleted_at < ? ORDER BY deleted_at, id",
        (scope, cutoff_us),
    )


def trash_erase(d: Dialect, scope: str, ids: Sequence[str]) -> Query:
    member, params = d.in_list("id", ids)
    return (
        f"DELETE FROM fact_trash WHERE {member} AND {d.scope_by_id} RETURNING id",
        (*params, scope),
    )


def trash_erase_scope(scope: str, turn_user: str | None) -> Query:
    """Deletes SCOPE_CHUNK of the scope's trashed facts; run again until it deletes none."""
    return (
        "DELETE FROM fact_trash WHERE id IN (SELECT id FROM fact_trash WHERE scope = ? "
        "AND (CAST(? AS TEXT) IS NULL OR turn_user = ?) LIMIT ?)",
        (scope, turn_user, turn_user, SCOPE_CHUNK),
    )


def trash_by_source(d: Dialect, scope: str, sandbox: str, entries: Sequence[int]) -> Query:
    member, params = d.in_list("source_entry", entries)
    return (
        f"SELECT {TRASHED_FACT} FROM fact_trash WHERE source_sandbox = ? AND {member} "
        "AND scope = ?",
        (sandbox, *params, scope),
    )


def trash_set_context(scope: str, fact_id: str, context: str | None) -> Query:
    return (
        "UPDATE fact_trash SET context = ? WHERE id = ? AND scope = ?",
        (context, fact_id, scope),
    )


def trash_count(scope: str) -> Query:
    return "SELECT count(*) FROM fact_trash WHERE scope = ?", (scope,)


def texts_after(after_seq: int, limit: int) -> Query:
    return (
        "SELECT seq, content, metadata FROM facts WHERE seq > ? ORDER BY seq LIMIT ?",
        (after_seq, limit),
    )


def count_after(after_seq: int) -> Query:
    return "SELECT count(*) FROM facts WHERE seq > ?", (after_seq,)


# -- the model record --------------------------------------------------------------
MODEL_KEYS = ("embedding_model", "embedding_dimension")
REEMBEDDED_KEY = "reembedded_to"  # the last seq a re-embedding under way has replaced


def meta_get(keys: Sequence[str]) -> Query:
    marks = ", ".join("?" for _ in keys)
    return f"SELECT key, value FROM meta WHERE key IN ({marks})", tuple(keys)


def meta_put(key: str, value: str) -> Query:
    return (
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


# -- agents ------------------------------------------------------------------------
def agent_insert(
    agent_id: str, name: str, scope: str, parent_id: str | None, created_us: int
) -> Query:
    return (
        f"INSERT INTO agents ({AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)",
        (agent_id, name, scope, parent_id, created_us),
    )


def agent_get(agent_id: str) -> Query:
    return f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?", (agent_id,)


def agent_end(agent_id: str, now_us: int) -> Query:
    return "UPDATE agents SET ended_at = ? WHERE id = ? AND ended_at IS NULL", (now_us, agent_id)


def agents_page(after: str, limit: int, name: str | None) -> Query:
    """Ascending id order from the primary key; ``name`` filters the same walk."""
    return (
        f"SELECT {AGENT_COLUMNS} FROM agents WHERE id > ? "
        "AND (CAST(? AS TEXT) IS NULL OR name = ?) ORDER BY id LIMIT ?",
        (after, name, name, limit),
    )


# -- allowances --------------------------------------------------------------------
def share_put(person: str, source: str, reader: str, allowed_us: int) -> Query:
    return (
        "INSERT INTO shares (person, source, reader, allowed_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (person, source, reader) DO NOTHING",
        (person, source, reader, allowed_us),
    )


def share_get(person: str, source: str, reader: str) -> Query:
    return (
        "SELECT allowed_at FROM shares WHERE person = ? AND source = ? AND reader = ?",
        (person, source, reader),
    )


def share_delete(person: str, source: str, reader: str) -> Query:
    return (
        "DELETE FROM shares WHERE person = ? AND source = ? AND reader = ?",
        (person, source, reader),
    )


def shares_listed(person: str, source: str | None, reader: str | None) -> Query:
    column, value = ("source", source) if source is not None else ("reader", reader)
    return (
        "SELECT source, reader, allowed_at FROM shares WHERE person = ? "
        f"AND (CAST(? AS TEXT) IS NULL OR {column} = ?) ORDER BY allowed_at, source, reader",
        (person, value, value),
    )


# -- sessions ----------------------------------------------------------------------
def session_get(session_id: str) -> Query:
    return f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)


def session_latest(scope: str) -> Query:
    return (
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE scope = ? "
        "ORDER BY created_at DESC, id DESC LIMIT 1",
        (scope,),
    )


def session_insert(row: tuple[Any, ...]) -> Query:
    return f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row


ENTRY_INSERT = f"INSERT INTO session_entries ({ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"


def session_advance(session_id: str, next_index: int) -> Query:
    return "UPDATE sessions SET next_index = ? WHERE id = ?", (next_index, session_id)


def session_entries(session_id: str, start: int, stop: int, *, hidden: bool = False) -> Query:
    """The session's entries in [start, stop); those hidden too (with ``hidden``, each
    row then ends with its hidden flag, its context's width and the fact it repeats)."""
    shown = ", hidden, width, repeats" if hidden else ""
    which = "" if hidden else " AND hidden = 0"
    return (
        f"SELECT {ENTRY_COLUMNS}{shown} FROM session_entries WHERE session_id = ? "
        f"AND idx >= ? AND idx < ?{which} ORDER BY idx",
        (session_id, start, stop),
    )


def entries_of(d: Dialect, session_ids: Sequence[str]) -> Query:
    member, params = d.in_list("session_id", session_ids)
    return (
        f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE {member} AND hidden = 0 "
        "ORDER BY session_id, idx",
        tuple(params),
    )


def entry_hide(session_id: str, idx: int, hidden: bool) -> Query:
    return (
        "UPDATE session_entries SET hidden = ? WHERE session_id = ? AND idx = ?",
        (int(hidden), session_id, idx),
    )


def entries_width(session_id: str, start: int, stop: int, width: int) -> Query:
    return (
        "UPDATE session_entries SET width = ? WHERE session_id = ? AND idx >= ? AND idx < ?",
        (width, session_id, start, stop),
    )


ENTRY_REPEATS = "UPDATE session_entries SET repeats = ? WHERE session_id = ? AND idx = ?"


def entries_repeating(d: Dialect, fact_ids: Sequence[str]) -> Query:
    member, params = d.in_list("repeats", fact_ids)
    return f"SELECT session_id, idx, repeats FROM session_entries WHERE {member}", tuple(params)


def entry_reword(session_id: str, idx: int, content: str) -> Query:
    return (
        "UPDATE session_entries SET content = ? WHERE session_id = ? AND idx = ?",
        (content, session_id, idx),
    )


def entry_delete(session_id: str, idx: int) -> Query:
    return "DELETE FROM session_entries WHERE session_id = ? AND idx = ?", (session_id, idx)


def derived_dirty(limit: int) -> Query:
    return (
        "SELECT scope, fact_id, session_id, idx FROM derived_dirty ORDER BY scope, fact_id LIMIT ?",
        (limit,),
    )


DERIVED_SETTLED = "DELETE FROM derived_dirty WHERE scope = ? AND fact_id = ?"


def wiki_trash(scope: str) -> Query:
    return "SELECT id, metadata FROM fact_trash WHERE scope = ? AND type = 'wiki'", (scope,)


def wiki_texts(scope: str) -> Query:
    """Every wiki fact of the scope, live and in the trash, with its metadata (the page
    it is a chunk of), its words and its context."""
    return (
        " UNION ALL ".join(
            f"SELECT id, metadata, content, context FROM {table} WHERE scope = ? AND type = 'wiki'"
            for table in ("facts", "fact_trash")
        ),
        (scope, scope),
    )


def wiki_listing(d: Dialect, scope: str, fact_ids: Sequence[str], trash: bool) -> Query:
    """The scope's wiki facts (live, or in the trash) whose words or context (a
    neighbouring chunk's words) name any of these facts, as a wiki page lists one:
    ``[<id>]``; with their metadata."""
    table = "fact_trash" if trash else "facts"
    names = " OR ".join("content LIKE ? ESCAPE '!' OR context LIKE ? ESCAPE '!'" for _ in fact_ids)
    patterns = [_pattern(f"[{i}]") for i in fact_ids]
    return (
        f"SELECT id, metadata FROM {table} WHERE scope = ? AND type = 'wiki' AND ({names})",
        (scope, *(p for pattern in patterns for p in (pattern, pattern))),
    )


def sessions_of(scope: str) -> Query:
    return "SELECT id FROM sessions WHERE scope = ?", (scope,)


def sessions_erase(d: Dialect, session_ids: Sequence[str]) -> list[Query]:
    """Deletes these sessions and their entries; a session forked from one of them
    becomes a root (what it started from is gone)."""
    member, params = d.in_list("session_id", session_ids)
    sessions, same = d.in_list("id", session_ids)
    parents, again = d.in_list("parent_id", session_ids)
    return [
        (f"DELETE FROM session_entries WHERE {member}", tuple(params)),
        (f"UPDATE sessions SET parent_id = NULL, fork_entry = NULL WHERE {parents}", tuple(again)),
        (f"DELETE FROM sessions WHERE {sessions}", tuple(same)),
    ]


def episodes(
    scope: str, depth: int, after_us: int | None, words: Sequence[str], limit: int
) -> Query:
    """The scope's sessions and their ancestors (``walk``: one row per path, with the
    fork point that cuts the ancestor; NULL for the scope's own, which keep every
    entry), merged per session (``reach``: the furthest cut, the nearest depth), then
    their entries in (at, depth, session, index) order. ``words`` are matched as
    substrings of the content, both lower-cased by the database (ASCII letters on both
    backends), through LIKE with its wildcards escaped."""
    matches = "".join(" AND lower(e.content) LIKE lower(?) ESCAPE '!'" for _ in words)
    return (
        "WITH RECURSIVE walk (id, parent_id, fork_entry, upto, depth) AS ("
        " SELECT id, parent_id, fork_entry, CAST(NULL AS BIGINT), 0 FROM sessions"
        " WHERE scope = ?"
        " UNION ALL"
        " SELECT s.id, s.parent_id, s.fork_entry, w.fork_entry, w.depth + 1"
        " FROM sessions s JOIN walk w ON s.id = w.parent_id WHERE w.depth < ?"
        "), reach (id, upto, depth) AS ("
        " SELECT id, CASE WHEN count(upto) < count(*) THEN NULL ELSE max(upto) END,"
        " min(depth) FROM walk GROUP BY id"
        ") "
        f"SELECT {', '.join('e.' + c for c in ENTRY_COLUMNS.split(', '))}"
        " FROM reach r JOIN session_entries e ON e.session_id = r.id"
        " WHERE e.hidden = 0 AND (r.upto IS NULL OR e.idx <= r.upto)"
        " AND (CAST(? AS BIGINT) IS NULL OR e.at > ?)"
        f"{matches} ORDER BY e.at, r.depth, e.session_id, e.idx LIMIT ?",
        (scope, depth, after_us, after_us, *(_pattern(w) for w in words), limit),
    )


def like_pattern(word: str) -> str:
    """``word`` anywhere in a text, for ``LIKE ... ESCAPE '!'``."""
    return _pattern(word)


def _pattern(word: str) -> str:
    escaped = word.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f"%{escaped}%"


def session_forest(scope: str, max_depth: int) -> Query:
    """The roots above the scope's sessions, then everything below those roots."""
    return (
        "WITH RECURSIVE up (id, parent_id, depth) AS ("
        " SELECT id, parent_id, 0 FROM sessions WHERE scope = ?"
        " UNION"
        " SELECT s.id, s.parent_id, u.depth + 1 FROM sessions s JOIN up u ON s.id = u.parent_id"
        " WHERE u.depth < ?"
        "), down (id, depth) AS ("
        " SELECT id, 0 FROM up WHERE parent_id IS NULL"
        " UNION"
        " SELECT s.id, d.depth + 1 FROM sessions s JOIN down d ON s.parent_id = d.id"
        " WHERE d.depth < ?"
        ") "
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id IN (SELECT id FROM down)"
        " ORDER BY created_at, id",
        (scope, max_depth, max_depth),
    )
