"""FTS5 query text: the scope token, the match expression, the candidate query."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from engram.core.models import Filters
from engram.storage.filters import filter_sql

# facts_fts as schema migration 1 made it (a test checks the two agree): its columns in
# order with their weights in the ranking (the scope-token column weighs nothing), and
# its tokenizer.
WEIGHTS = {"content": 1.0, "scope_token": 0.0, "context": 1.0}
COLUMNS = tuple(WEIGHTS)
TOKENIZE = "porter unicode61 remove_diacritics 2"
_BM25 = f"bm25(facts_fts, {', '.join(repr(w) for w in WEIGHTS.values())})"
# What scope_token() makes, and so what no word of a query can be ranked as.
SCOPE_TOKEN = re.compile(r"s[0-9a-f]{20}x")


def scope_token(scope_key: str) -> str:
    """One full-text token naming the scope, so FTS5 narrows to it inside its index.

    Digits and letters only (unicode61 keeps it one token); the join on ``facts.scope``
    stays the authority, so a collision could only cost time, never leak a row.
    """
    return "s" + hashlib.blake2b(scope_key.encode("utf-8"), digest_size=10).hexdigest() + "x"


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``; each term quoted, so none is syntax."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


# FTS5's own index read as tables (the in-process postings load from them): made on each
# connection when it opens (storage/sqlite/database.py), not on a first query's error: the
# full-text half may run on a thread beside another statement on the same connection,
# where an error's class is read after the other statement ran, and was misread.
VOCABULARIES = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.facts_fts_instances "
    "USING fts5vocab(main, facts_fts, instance)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.facts_fts_rows USING fts5vocab(main, facts_fts, row)",
)


# Up to this many facts outside the scope, an unfiltered full-text query skips the
# scope token: ranking the whole index and cutting at limit + outside keeps every row the
# scope-narrowed query would have kept (at most `outside` foreign rows can rank above
# them), and spares FTS5 the scope token's posting list, as long as the scope itself.
SCOPE_TOKEN_ABOVE = 1000


def text_candidates_sql(
    terms: Sequence[str], scope: str, filters: Filters, limit: int, outside: int
) -> tuple[str, list[object]]:
    """The best ``limit`` full-text matches of any of ``terms`` in ``scope``: BM25 over a
    fact's content and its context as one document (the scope-token column weighs nothing).

    Unfiltered, FTS5 ranks and cuts inside its own index and only the cut rows are
    joined; the scope token narrows the match to the scope unless ``outside`` (facts of
    other scopes) is small. The join on ``facts.scope`` is the authority either way.
    Filtered, every match is joined and filtered before the cut, so a filter never loses
    a row that the cut would have dropped.
    """
    words = f"{{content context}} : ({fts_query(terms)})"
    narrowed = f'scope_token : "{scope_token(scope)}" AND {words}'
    if filters.empty:
        match, cut = (words, limit + outside) if outside <= SCOPE_TOKEN_ABOVE else (narrowed, limit)
        sql = (
            f"SELECT f.id, m.score FROM (SELECT rowid, {_BM25} AS score "
            "FROM facts_fts WHERE facts_fts MATCH ? ORDER BY score, rowid LIMIT ?) AS m "
            "JOIN facts f ON f.seq = m.rowid WHERE f.scope = ? ORDER BY m.score, f.seq LIMIT ?"
        )
        return sql, [match, cut, scope, limit]
    where, params = filter_sql(filters, scope)
    # CROSS JOIN keeps the match as the outer loop: SQLite's planner would otherwise walk
    # the filter's facts (a time range, a type) and run the match again for each one, a
    # whole doclist read a fact (a type filter at 1.15M facts did not end in 20 s; 0.66 s
    # with the match run once).
    sql = (
        f"SELECT f.id, {_BM25} AS score "
        "FROM facts_fts CROSS JOIN facts f ON f.seq = facts_fts.rowid "
        f"WHERE facts_fts MATCH ? AND f.scope = ?{where} ORDER BY score, f.seq LIMIT ?"
    )
    return sql, [narrowed, scope, *params, limit]


def holding_sql(terms: Sequence[str], scope: str) -> tuple[str, list[object]]:
    """Every fact of ``scope`` matching any of ``terms`` in its content or context,
    unranked."""
    match = f'scope_token : "{scope_token(scope)}" AND {{content context}} : ({fts_query(terms)})'
    # The match runs once, first: joined, the planner may walk the scope's facts and
    # run it again for each one.
    sql = (
        "SELECT f.id FROM facts f WHERE f.seq IN "
        "(SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?) AND f.scope = ?"
    )
    return sql, [match, scope]
