"""Full-text candidates on PostgreSQL: English-stemmed ``tsvector`` matches, ranked BM25-style.

``ts_rank`` weighs how often and where a term occurs in a fact but not how rare the term
is, so a common word counts as much as a name. Here each matching term contributes its
``ts_rank`` (length-normalised frequency) times its inverse document frequency in the
scope, as BM25 does; the scores stay comparable within one query, which is all the
fusion needs.

The terms are parsed once, in a materialised CTE (inlined, PostgreSQL parsed and stemmed
every term again for every matching fact), and the arithmetic is float8, not numeric:
together 91 to 38 ms per query in a 100k-fact scope whose queries match ~8k facts.

That statement reads and ranks every matching fact's tsvector, and walks the GIN posting
lists of the whole store, every scope's. An unfiltered query whose words are each one
lexeme is answered from the scope's own postings instead (``fact_terms``, migration 15):
each holds a word's ts_rank in one fact, computed when the fact was written, and its
count of facts is kept beside it, so a query sums the postings of its words from the
index alone (4.3 times faster at 100k facts, measured in BENCHMARKS.md). Scores and order
are the statement's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import numpy as np
import psycopg

from engram.core.models import Filters
from engram.core.ranking import Candidate
from engram.storage.filters import filter_sql
from engram.storage.postgres.postings import Postings
from engram.storage.rows import FACT_COLUMNS, SEQ, to_traits
from engram.storage.sql.passing import Passing, Sifted
from engram.storage.sql.tx import SQLTx
from engram.storage.summed import Ints

WALK_SCOPES_UP_TO = 5_000


def candidates(
    conn: psycopg.Connection[Any],
    scope: str,
    terms: Sequence[str],
    filters: Filters,
    limit: int,
    postings: Postings | None = None,
    passing: Passing[Ints] | None = None,
) -> list[Candidate]:
    """The best ``limit`` facts of ``scope`` matching any of ``terms`` after ``filters``;
    ``postings``: this process's copies of the postings it has read, summed here instead
    of in the server; ``passing``: the filters' facts, read as :mod:`~engram.storage.sql.
    passing` reads them (a filter's facts ranked from the copies, as the statement ranks
    them).

    Document frequencies count the scope's matches before filtering (a filter narrows
    which facts may answer, not how rare a word is)."""
    ranked: list[Candidate] | None = None
    if filters.empty:
        ranked = _from_postings(conn, scope, terms, limit, postings)
    elif passing is not None and postings is not None:
        ranked = passing.ranked(
            lambda n, among: _from_postings(conn, scope, terms, n, postings, among),
            limit,
            lambda n: _passing_of_best(conn, scope, terms, n, postings, passing.among),
        )
    if ranked is not None:
        return ranked
    # A small scope is walked through its own index, each fact tested against the query:
    # cheaper than intersecting the GIN posting lists of common words, which grow with
    # the whole store (1.9 against 5.9 ms per query for a 1,000-fact scope in 300k rows).
    conn.execute(
        "SELECT set_config('enable_bitmapscan', CASE WHEN facts <= %s THEN 'off' ELSE 'on' END,"
        " true) FROM scope_state WHERE scope = %s",
        (WALK_SCOPES_UP_TO, scope),
    )
    where, params = filter_sql(filters, scope, mark="%s")
    any_term = _any_term(terms)
    statement = f"""
        WITH terms AS MATERIALIZED (
            SELECT i, plainto_tsquery('english', t) AS q
            FROM unnest(%s::text[]) WITH ORDINALITY AS u (t, i)
            WHERE numnode(plainto_tsquery('english', t)) > 0
        ),
        matched AS MATERIALIZED (
            SELECT f.seq, f.id, f.words, (TRUE{where}) AS kept
            FROM facts f WHERE f.scope = %s AND f.words @@ ({any_term})
        ),
        hits AS MATERIALIZED (
            SELECT m.seq, m.id, m.kept, t.i, ts_rank(m.words, t.q, 1) AS tf
            FROM matched m JOIN terms t ON m.words @@ t.q
        ),
        total AS (
            SELECT greatest(coalesce((SELECT facts FROM scope_state WHERE scope = %s), 0),
                            (SELECT count(*) FROM matched))::float8 AS n
        ),
        idf AS (
            SELECT i, ln(1 + (total.n - count(*) + 0.5) / (count(*) + 0.5)) AS weight
            FROM hits CROSS JOIN total GROUP BY i, total.n
        )
        SELECT h.id, sum(h.tf * idf.weight) AS score
        FROM hits h JOIN idf USING (i)
        WHERE h.kept
        GROUP BY h.seq, h.id
        ORDER BY score DESC, h.seq
        LIMIT %s
    """
    rows = conn.execute(statement, (list(terms), *params, scope, *terms, scope, limit)).fetchall()
    return [Candidate(str(r[0]), float(r[1])) for r in rows]


def _from_postings(
    conn: psycopg.Connection[Any],
    scope: str,
    terms: Sequence[str],
    limit: int,
    postings: Postings | None = None,
    among: Ints | None = None,
) -> list[Candidate] | None:
    """Ranked from the scope's postings (summed by ``postings`` where given; ``among``:
    only these facts, by sequence number, with ``postings``), or None where a word is
    more than one lexeme."""
    weighed = _weights(conn, scope, terms)
    if weighed is None:
        return None
    weights, version = weighed
    if not weights:
        return []
    if postings is not None:
        return _candidates(conn, postings.best(conn, scope, version, weights, limit, among))
    words = list(weights)
    rows = conn.execute(_RANKED, (words, [weights[w] for w in words], scope, limit)).fetchall()
    return [Candidate(str(r[0]), float(r[1])) for r in rows]


def _weights(
    conn: psycopg.Connection[Any], scope: str, terms: Sequence[str]
) -> tuple[dict[str, float], int] | None:
    """Each word of ``terms`` the scope holds with its weight (its count in the query
    times the statement's BM25 inverse document frequency), and the scope's words'
    version in this snapshot; None where a word is more than one lexeme."""
    parsed = _counted(conn, scope, terms)
    weights = _lexemes(parsed)
    if weights is None:
        return None
    if not weights:
        return {}, 0
    total = float(parsed[0][0])
    held = {lexemes[0]: int(counts[0]) for _, nodes, lexemes, counts, _ in parsed if nodes}
    for word in list(weights):
        facts = held[word]
        if facts == 0:
            del weights[word]
        else:  # the statement's BM25 inverse document frequency, in float8 as there
            weights[word] *= math.log(1 + (max(total, facts) - facts + 0.5) / (facts + 0.5))
    return weights, int(parsed[0][4])


def _passing_of_best(
    conn: psycopg.Connection[Any],
    scope: str,
    terms: Sequence[str],
    asked: int,
    postings: Postings,
    passes: Callable[[list[int]], Collection[int]],
) -> Sifted | None:
    """Those of the ``asked`` best facts for ``terms`` (ranked from ``postings``) that
    pass a filter (``passes``: of given row numbers, those that do), only their rows
    read; None as :func:`_from_postings`."""
    weighed = _weights(conn, scope, terms)
    if weighed is None:
        return None
    weights, version = weighed
    best = postings.best(conn, scope, version, weights, asked) if weights else []
    kept = passes([seq for seq, _ in best]) if best else set()
    return Sifted(_candidates(conn, [b for b in best if b[0] in kept]), len(best) < asked)


def _candidates(conn: psycopg.Connection[Any], best: list[tuple[int, float]]) -> list[Candidate]:
    """The facts ``best`` (row numbers and scores, in order) as candidates with their
    traits, read from the rows their ids are read from (whole: a hit's fact is built from
    it)."""
    if not best:
        return []
    rows = conn.execute(
        f"SELECT {FACT_COLUMNS} FROM facts WHERE seq = ANY(%s::bigint[])",
        ([s for s, _ in best],),
    ).fetchall()
    read = {r[SEQ]: r for r in rows}  # each row by its seq
    return [
        Candidate(str(read[seq][0]), score, to_traits(read[seq]))
        for seq, score in best
        if seq in read
    ]


def seqs(t: SQLTx, statement: str, params: Sequence[object]) -> Ints:
    """The row numbers ``statement`` (of one column, ``seq``) selects, sent as one string
    of their binary forms: 20,001 of them in 2.8 ms, against 6.8 as rows."""
    sent = f"SELECT string_agg(int8send(seq), ''::bytea) FROM ({statement}) AS passing"
    raw = t.conn.execute(t.dialect.sql(sent), params, binary=True).fetchone()[0]
    return np.frombuffer(raw or b"", ">i8").astype(np.int64)


def _counted(conn: psycopg.Connection[Any], scope: str, terms: Sequence[str]) -> list[Any]:
    """Each term's count of tsquery nodes and its lexemes, with the scope's count of
    facts holding each lexeme, of all its facts and its words' version
    (:data:`_COUNTED`), in the terms' order."""
    return conn.execute(_COUNTED, (scope, list(terms), scope)).fetchall()


def _lexemes(parsed: Iterable[tuple[Any, int, list[str], Any, Any]]) -> dict[str, float] | None:
    """Each term's lexeme, with how many terms ask for it (stop words left out), from
    :func:`_counted`'s rows; None where a term is more than one lexeme (``e-mail`` asks
    for 'e-mail' & 'e' & 'mail', which no single posting answers)."""
    asked: dict[str, float] = {}  # a lexeme asked twice counts twice, as in the statement
    for _, nodes, lexemes, _, _ in parsed:
        if nodes == 0:
            continue  # a stop word
        if nodes != 1 or len(lexemes) != 1:
            return None
        asked[lexemes[0]] = asked.get(lexemes[0], 0.0) + 1.0
    return asked


# Each term's tsquery nodes and lexemes, with the scope's count of facts holding each
# lexeme, of all its facts and its words' version (one round trip for what ranking needs
# beside the postings).
_COUNTED = """
    SELECT coalesce(st.facts, 0),
        numnode(plainto_tsquery('english', u.t)), l.lexemes,
        array(SELECT coalesce(s.facts, 0) FROM unnest(l.lexemes) WITH ORDINALITY AS x (w, j)
              LEFT JOIN scope_terms s ON s.scope = %s AND s.term = x.w ORDER BY x.j),
        coalesce(st.words_version, 0)
    FROM unnest(%s::text[]) WITH ORDINALITY AS u (t, i)
    CROSS JOIN LATERAL (SELECT tsvector_to_array(to_tsvector('english', u.t)) AS lexemes) AS l
    LEFT JOIN scope_state st ON st.scope = %s
    ORDER BY u.i
"""

# Each fact's score summed from its postings of the query's words (a word's ts_rank in it
# times the word's weight), read from the index alone; the best joined to their ids.
_RANKED = """
    SELECT f.id, p.score FROM (
        SELECT t.fact, sum(t.impact * w.weight) AS score
        FROM unnest(%s::text[], %s::float8[]) AS w (t, weight)
        JOIN fact_terms t ON t.scope = %s AND t.term = w.t
        GROUP BY t.fact ORDER BY score DESC, t.fact LIMIT %s
    ) AS p JOIN facts f ON f.seq = p.fact
    ORDER BY p.score DESC, p.fact
"""


def holding(
    conn: psycopg.Connection[Any], scope: str, terms: Sequence[str]
) -> tuple[str, list[Any]]:
    """The statement selecting the ``id`` of every fact of ``scope`` matching any of
    ``terms``, unranked, with its parameters: from the scope's postings where each word
    is one lexeme, else through the GIN index."""
    words = _lexemes(_counted(conn, scope, terms))  # its counts unread: one parse for both
    if words is not None:
        # Each matching row number looks up its fact, in that order whatever the planner
        # believes: the LIMIT keeps the lookup a subquery it cannot turn round. As a join,
        # a revert bringing back a scope its statistics last saw empty was planned as a
        # scan of every fact, each scanning the terms' postings (100k facts: minutes).
        return (
            "SELECT f.id FROM (SELECT DISTINCT fact FROM fact_terms "
            "WHERE scope = %s AND term = ANY(%s::text[])) AS t "
            "CROSS JOIN LATERAL (SELECT id FROM facts WHERE seq = t.fact LIMIT 1) AS f",
            [scope, list(words)],
        )
    matched = f"SELECT id FROM facts WHERE scope = %s AND words @@ ({_any_term(terms)})"
    return matched, [scope, *terms]


def _any_term(terms: Sequence[str]) -> str:
    """A tsquery matching any of ``terms`` (each a ``%s`` parameter)."""
    return " || ".join("plainto_tsquery('english', %s)" for _ in terms)
