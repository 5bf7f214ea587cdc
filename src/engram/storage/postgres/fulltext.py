"""Full-text candidates on PostgreSQL: English-stemmed ``tsvector`` matches, ranked BM25-style.

``ts_rank`` weighs how often and where a term occurs in a fact but not how rare the term
is, so a common word counts as much as a name. Here each matching term contributes its
``ts_rank`` (length-normalised frequency) times its inverse document frequency in the
scope, as BM25 does; the scores stay comparable within one query, which is all the
fusion needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from engram.core.models import Filters
from engram.core.ranking import Candidate
from engram.storage.filters import filter_sql


def candidates(
    conn: psycopg.Connection[Any],
    scope: str,
    terms: Sequence[str],
    filters: Filters,
    limit: int,
) -> list[Candidate]:
    """The best ``limit`` facts of ``scope`` matching any of ``terms`` after ``filters``.

    Document frequencies count the scope's matches before filtering (a filter narrows
    which facts may answer, not how rare a word is)."""
    where, params = filter_sql(filters, mark="%s")
    any_term = " || ".join("plainto_tsquery('english', %s)" for _ in terms)
    statement = f"""
        WITH terms AS (
            SELECT i, plainto_tsquery('english', t) AS q
            FROM unnest(%s::text[]) WITH ORDINALITY AS u (t, i)
            WHERE numnode(plainto_tsquery('english', t)) > 0
        ),
        matched AS (
            SELECT f.seq, f.id, f.words, (TRUE{where}) AS kept
            FROM facts f WHERE f.scope = %s AND f.words @@ ({any_term})
        ),
        hits AS (
            SELECT m.seq, m.id, m.kept, t.i, ts_rank(m.words, t.q, 1) AS tf
            FROM matched m JOIN terms t ON m.words @@ t.q
        ),
        df AS (SELECT i, count(*) AS n FROM hits GROUP BY i),
        total AS (
            SELECT greatest(coalesce((SELECT facts FROM scope_state WHERE scope = %s), 0),
                            (SELECT count(*) FROM matched)) AS n
        )
        SELECT h.id, sum(h.tf * ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5))) AS score
        FROM hits h JOIN df USING (i) CROSS JOIN total
        WHERE h.kept
        GROUP BY h.seq, h.id
        ORDER BY score DESC, h.seq
        LIMIT %s
    """
    rows = conn.execute(statement, (list(terms), *params, scope, *terms, scope, limit)).fetchall()
    return [Candidate(str(r[0]), float(r[1])) for r in rows]
