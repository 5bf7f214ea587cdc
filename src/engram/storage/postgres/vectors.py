"""Vector candidates on pgvector: exact per scope, or a scope's own HNSW index.

An HNSW index over every scope filtered by ``WHERE scope = …`` walks the graph for the
nearest vectors of *all* scopes and drops the others afterwards, so a scope holding a
small share of the rows loses most of its true neighbours. Here a scope is searched
exactly (its rows only, through the scope index) until it holds ``ANN_ABOVE`` facts;
then it gets a partial HNSW index of its own, in which every neighbour is the scope's.
A filtered query stays exact: the graph cannot honour a filter without losing rows the
filter keeps.

The index covers the scope's vectors up to one fact (``WHERE scope = '<scope>' AND fact
<= <through>``), so a write adds nothing to it: pgvector inserting into a 100k-vector
graph cost 4 ms a vector here, building one 0.34 ms. Vectors after ``through`` are
searched beside the graph and the lists merged; once they pass ``DELTA_SHARE`` of
those covered, a background build makes the next index, covering them too, and drops
the last. Until then, once they pass the threshold a scope gets a graph at, a second,
small graph of them (the scope's *recent* graph, ``recent_index`` up to
``recent_through``) is built in the background and searched beside the first, and
built again as the vectors after it pass the threshold and ``RECENT_SHARE`` of those in
it: so a recall scores exactly about as many vectors as a scope under the threshold
holds, however many were written since the big graph's build (20,000 of them took
24.9 ms p50 searched exactly, a graph of them 5.8, in a slow hour: BENCHMARKS.md).
The next big graph drops it. A scope's index from before this scheme covers every row
(``ann_through`` NULL): it is searched alone and rebuilt so at the scope's next write.

Where pgvector is 0.7 or later, the vectors are stored at half precision (``halfvec``,
schema migration 21, as SQLite stores them) and the graph holds them so (``HALF`` in its
name): half the pages for a search to read, 8.3 against 12.8 ms p50 at the same recall on
100k vectors (BENCHMARKS.md). It only orders the candidates: their scores are
the stored vectors' cosines with the query as given (``vector::vector``: in float32,
the query not rounded), as exact search and SQLite give them. Exact search orders such
rows as stored too, then a shortlist of them by that cosine (:data:`SHORTLIST`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import psycopg
from pgvector import HalfVector
from psycopg import sql

from engram.core.errors import EmbedderMismatch
from engram.core.models import Filters
from engram.core.ports import Vectors
from engram.core.ranking import Candidate
from engram.storage.filters import filter_sql, floor_alone
from engram.storage.rows import fact_columns, to_traits
from engram.storage.sql.passing import counted, selected

# A scope above this many facts gets its own HNSW index (built once, after the write
# that crossed it). Below it, exact search over the scope's rows costs under ~10 ms
# (about 1 µs a row at 384 dimensions, measured here).
ANN_ABOVE = 10_000
# A filter that at most one in this many of a scope's facts pass has their vectors read
# by key and ordered exactly; a wider one is searched through the scope's graph, which
# tests the filter on each fact it gives (or, with no graph, on every vector of the
# scope). At 100k facts a vector read by key cost about 18 us and one read in the
# scope's scan about 1 (a filter passing 10,000: 206 ms by key, 125 by the scan); the
# graph with the filter, half the scope passing: 13.7 ms, recall@10 0.97 against exact.
FILTER_BY_KEY_SHARE = 20
# The graph: 16 links a node, 400 candidates explored a node added, 200 a query
# (pgvector's hnsw.ef_search). On 100k hashed 384-dimension vectors (the hardest case: no
# clusters), half-precision graphs, recall@10 against exact (BENCHMARKS.md): built
# exploring 200, 0.960 at 200 explored (4.4 ms) and 0.976 at 300 (6.4 ms); built
# exploring 400, 0.978 at 200 (3.9 ms), for a build of 151 s against 86 (in the
# background; a write adds nothing to a graph). A graph's name ends in how wide it was
# built (``_e400``); one built before, exploring 200, is searched 300 wide.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 400
EF_SEARCH = 200  # for a graph built exploring HNSW_EF_CONSTRUCTION or more
NARROW_EF_SEARCH = 300  # for one built narrower, as graphs were before
OLDER_BUILD = 200  # what a graph named without how it was built explored a node added
# How wide a graph was built, read off its name (``_<through>[_half]_e<width>``), in
# Python and in the server's statements alike.
BUILT = r"_[0-9]+(?:_half)?_e([0-9]+)$"
# A scope's index is built again once its vectors outside it pass this share of those in
# it: each vector is built into about five graphs in all as the scope grows, and a query
# scores at most a fifth of the scope exactly.
DELTA_SHARE = 0.25
# The vectors after a scope's graph get a small graph of their own once they pass the
# threshold, as a scope does. A smaller graph saves little or nothing: after a 100k
# scope's graph, the newest 5,000 vectors' graph was passed over by the planner (it
# sorted the range: 10.2 ms p50, against 7.1 exactly), the newest 10,000's searched in
# 5.0 ms against 13.0 exactly (BENCHMARKS.md). It is built again, covering them all,
# once those after it pass the threshold and RECENT_SHARE of those in it: it grows by
# half or more each build, so the vectors after the big graph are built into it at
# most about three times over in all.
RECENT_SHARE = 0.5
RECENT = "_r"  # follows the scope's part of a recent graph's name
HALF = "_half"  # ends the name of an index of half-precision copies
HALVES_FROM = (0, 7)  # the pgvector version that brought halfvec
ITERATES_FROM = (0, 8)  # ... and the one that brought iterative scans
# How a graph is built: one process builds, so a write meanwhile keeps the other core.
BUILD_MEMORY = "1GB"
BUILDING = (
    f"SET maintenance_work_mem = '{BUILD_MEMORY}'",
    "SET max_parallel_maintenance_workers = 0",
)
# The widest vectors pgvector's graph holds, of float32 and of half precision: a scope of
# wider ones stays searched exactly (a build would fail on every write past the line).
WIDEST = {False: 2_000, True: 4_000}


def index_name(
    scope: str, through: int | None = None, *, half: bool = False, recent: bool = False
) -> str:
    """The name of ``scope``'s index covering its vectors up to ``through`` (None: every
    one, as indexes were named before), unique to the scope and the build; ``half``: of
    half-precision copies; ``recent``: its recent graph, of the vectors after its big
    one. It ends in how wide graphs are built (:data:`BUILT`)."""
    name = "fact_ann_" + hashlib.blake2b(scope.encode("utf-8"), digest_size=12).hexdigest()
    if through is None:
        return name
    marked = RECENT if recent else ""
    return f"{name}{marked}_{through}{HALF if half else ''}_e{HNSW_EF_CONSTRUCTION}"


def built_with(name: str) -> int:
    """How many candidates the index ``name`` explored a node added (200, as graphs were
    built before their names said)."""
    found = re.search(BUILT, name)
    return OLDER_BUILD if found is None else int(found.group(1))


def is_half(name: str) -> bool:
    """Whether the index ``name`` is a graph of half-precision copies."""
    return name.endswith(HALF) or f"{HALF}_e" in name


def halves(conn: psycopg.Connection[Any]) -> bool:
    """Whether this database's pgvector indexes half-precision vectors (0.7 and later)."""
    return _pgvector_from(conn, HALVES_FROM)


# pgvector's version as this database installed it (NULL without the extension).
_EXTVERSION = "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
# Whether the rows' vectors are of half precision, as the table's column is typed.
_HALF_ROWS = (
    "(SELECT format_type(atttypid, NULL) = 'halfvec' FROM pg_attribute "
    "WHERE attrelid = 'fact_vectors'::regclass AND attname = 'vector')"
)


def _pgvector_from(conn: psycopg.Connection[Any], version: tuple[int, ...]) -> bool:
    row = conn.execute(f"SELECT {_EXTVERSION}").fetchone()
    return _at_least(None if row is None else row[0], version)


def _at_least(installed: object, version: tuple[int, ...]) -> bool:
    """Whether pgvector's ``installed`` version (None: no extension) is ``version`` or
    later."""
    if installed is None:
        return False
    parts = []
    for part in str(installed).split("."):
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts) >= version


# Whether the scope ``s`` (a ``scope_state`` row) wants its next index: past ``above``
# facts, with none, one from before, or more vectors outside it than ``share`` of those in it.
_OUTGROWN = (
    "(s.facts > %(above)s AND (s.ann_index IS NULL OR s.ann_through IS NULL "
    "OR s.facts - s.ann_rows > s.ann_rows * %(share)s))"
)
# Whether it wants its next recent graph: past ``above`` facts with a big graph of this
# scheme, and more vectors after both graphs than ``above`` and than ``recent_share`` of
# those in the recent one.
_RECENT_OUTGROWN = (
    "(s.facts > %(above)s AND s.ann_through IS NOT NULL "
    "AND s.facts - s.ann_rows - coalesce(s.recent_rows, 0) > greatest(%(above)s, "
    "coalesce(s.recent_rows, 0) * %(recent_share)s))"
)
# The parameters of both, but for ``above``.
_SHARES = {"share": DELTA_SHARE, "recent_share": RECENT_SHARE}

# What a scope wants built: its next (big) graph, covering every vector it has, or its
# next recent graph, of the vectors after the big one.
Due = Literal["graph", "recent"]


def due(
    conn: psycopg.Connection[Any], scope: str, above: int, *, current: bool = False
) -> Due | None:
    """What ``scope`` wants built, of vectors a graph holds, past ``above`` facts: its
    next graph where it has none, one from before, or too many vectors outside it (more
    than ``DELTA_SHARE`` of those in it; with ``current``, any, or a graph built narrower
    than graphs are built now: :func:`build_index` then covers every vector the scope
    has); else, but for ``current``, its next recent graph where the vectors after both
    graphs are too many (more than ``above``, and than :data:`RECENT_SHARE` of those in
    the recent one). None: neither."""
    row = conn.execute(
        "SELECT w.graph, w.recent, CASE WHEN w.graph OR w.recent THEN (SELECT "
        "vector_dims(vector) FROM fact_vectors WHERE scope = %(scope)s LIMIT 1) END FROM ("
        "SELECT CASE WHEN %(current)s THEN s.facts > %(above)s AND (s.ann_index IS NULL "
        "OR s.ann_through IS NULL OR EXISTS (SELECT 1 FROM fact_vectors v "
        "WHERE v.scope = s.scope AND v.fact > s.ann_through) "
        "OR coalesce(substring(s.ann_index FROM %(pattern)s)::int, 0) < %(built)s) "
        f"ELSE {_OUTGROWN} END AS graph, NOT %(current)s AND {_RECENT_OUTGROWN} AS recent "
        "FROM scope_state s WHERE s.scope = %(scope)s) AS w",
        {
            "above": above,
            "current": current,
            "built": HNSW_EF_CONSTRUCTION,
            "pattern": BUILT,
            "scope": scope,
            **_SHARES,
        },
    ).fetchone()
    if row is None or row[2] is None or int(row[2]) > WIDEST[halves(conn)]:
        return None
    return "graph" if row[0] else "recent"


@dataclass(frozen=True)
class Plan:
    """How a search of a scope's vectors goes, read in one statement: the width of its
    vectors (None: it has none), its index where the search takes it, the last fact the
    index covers, whether the scope wants its next index (as :func:`due` reads it, but
    for the vectors' width), and, where asked for, the transaction's snapshot exported by
    the same statement (for work beside it: one round trip less before the graph's
    search); for a filtered search, the scope's count of facts (``facts``) and whether
    pgvector searches a graph on past its width while a filter lets too few through
    (``iterates``: 0.8 and later's iterative scans); whether the rows hold their vectors
    at half precision (``half_rows``: migration 21 made them so where pgvector had
    halfvec then); its recent graph, searched beside the index, and the last fact that
    covers (``recent``, ``recent_through``: None where there is none)."""

    dimension: int | None
    index: str | None
    through: int | None
    recent: str | None
    recent_through: int | None
    facts: int
    iterates: bool
    half_rows: bool
    due: bool = False
    snapshot: str | None = None


def plan(
    conn: psycopg.Connection[Any],
    scope: str,
    limit: int,
    above: int = ANN_ABOVE,
    *,
    export: bool = False,
) -> Plan:
    """How :func:`search` will search ``scope`` for ``limit`` candidates; the graph's
    search width is set for the transaction here too (it only bears on a search through
    an index): as wide as its build asks. ``export``: the snapshot too, which a
    subtransaction cannot export."""
    row = conn.execute(
        "SELECT (SELECT vector_dims(vector) FROM fact_vectors WHERE scope = %(scope)s LIMIT 1), "
        "CASE WHEN s.facts > %(above)s THEN s.ann_index END, s.ann_through, "
        "CASE WHEN s.facts > %(above)s AND s.ann_through IS NOT NULL THEN s.recent_index END, "
        "s.recent_through, "
        "set_config('hnsw.ef_search', greatest(%(limit)s, CASE WHEN coalesce(substring("
        "s.ann_index FROM %(pattern)s)::int, 0) >= %(built)s THEN %(wide)s ELSE %(wider)s END)"
        f"::text, true), coalesce({_OUTGROWN} OR {_RECENT_OUTGROWN}, false), "
        f"coalesce(s.facts, 0), {_EXTVERSION}, {_HALF_ROWS}"
        + (", pg_export_snapshot() " if export else " ")
        + "FROM (SELECT 1) AS one LEFT JOIN scope_state s ON s.scope = %(scope)s",
        {
            "scope": scope,
            "above": above,
            "limit": limit,
            "pattern": BUILT,
            "built": HNSW_EF_CONSTRUCTION,
            "wide": EF_SEARCH,
            "wider": NARROW_EF_SEARCH,
            **_SHARES,
        },
    ).fetchone()
    assert row is not None  # one row, from the one-row join
    dimension, index, through, recent, recent_through, _width, outgrown, facts, *more = row
    version, half_rows, *exported = more
    return Plan(
        None if dimension is None else int(dimension),
        None if index is None else str(index),
        None if through is None else int(through),
        None if recent is None else str(recent),
        None if recent is None else int(recent_through),
        int(facts),
        _at_least(version, ITERATES_FROM),
        bool(half_rows),
        bool(outgrown),
        str(exported[0]) if exported else None,
    )


def search(
    conn: psycopg.Connection[Any],
    scope: str,
    vector: Vectors,
    filters: Filters,
    limit: int,
    above: int = ANN_ABOVE,
    planned: Plan | None = None,
) -> list[Candidate]:
    """The ``limit`` nearest of ``scope``'s vectors: through its index where it has one
    and holds more than ``above`` facts (this store's threshold; another process may
    have built it under a lower one), else exactly; ``planned``: :func:`plan`'s for the
    same scope, limit and threshold, read in this transaction already."""
    query = np.asarray(vector, dtype=np.float32)
    ready = planned or plan(conn, scope, limit, above)
    dimension, ann_index = ready.dimension, ready.index
    if dimension is None:
        return []
    if int(dimension) != query.shape[-1]:
        raise EmbedderMismatch(
            f"this scope's vectors have {dimension} dimensions; the query's has {query.shape[-1]}"
        )
    stored = _as_stored(query, ready.half_rows)
    if filters.empty and ann_index is not None:
        return _approximate(conn, scope, query, stored, limit, ready)
    if filters.empty:  # the scope's vectors alone, then only the nearest rows are joined
        return _exactly(conn, query, stored, limit, "fact_vectors v", "v.scope = %s", (scope,))
    where, params = filter_sql(filters, scope, mark="%s")
    by_key = ready.facts // FILTER_BY_KEY_SHARE
    statement, selecting = selected(filters, scope, mark="%s")
    passing: list[Any] = []
    # a strength floor alone is counted: most facts pass it, each read with its row
    wide = floor_alone(filters) is not None and _more_pass(conn, filters, scope, by_key)
    if not wide:
        passing = conn.execute(f"{statement} LIMIT %s", (*selecting, by_key + 1)).fetchall()
        wide = len(passing) > by_key
    if wide and ann_index is not None and ready.iterates:
        tested = filter_sql(filters, scope, mark="%s", per_row=True)  # each fact it gives
        return _approximate(conn, scope, query, stored, limit, ready, tested)
    among: tuple[object, ...]
    if not wide:  # the filter's own vectors, each read by its key
        if not passing:
            return []
        # Joined from the list: ``v.fact = ANY(list)`` was tested row by row against a
        # scan of the scope (3.0 s for 10,000 of 100,000 facts).
        source = "unnest(%s::bigint[]) AS p (fact) JOIN fact_vectors v ON v.fact = p.fact"
        chosen, among = "v.scope = %s", ([r[0] for r in passing], scope)
    else:  # every vector of the scope, the filter tested on each
        source = "fact_vectors v JOIN facts f ON f.seq = v.fact"
        chosen, among = f"v.scope = %s{where}", (scope, *params)
    return _exactly(conn, query, stored, limit, source, chosen, among)


# Where the rows are of half precision, exact search orders them by their distance as
# stored (the query rounded as they are: no row converted), then the best SHORTLIST
# times as many as asked by their cosine with the query as given. On 20,000 random
# half-precision vectors, 40 queries: 15 to 21 ms p50 against 36 to 45 converting each
# row, the same best 50 for every query (BENCHMARKS.md).
SHORTLIST = 2


def _as_stored(query: Vectors, half: bool) -> object:
    """``query`` as the rows hold their vectors (``half``: at half precision, from
    :func:`_unit`)."""
    return HalfVector(_unit(query)) if half else query


def _unit(query: Vectors) -> Vectors:
    """``query`` at unit length, to be ordered by (as by cosine, and so as it was) at half
    precision: an embedder need not give unit vectors, and a value past half precision's
    largest is refused by the server."""
    length = float(np.linalg.norm(query))
    return query / length if length > 0 else query


def _shortlist(limit: int, stored: object) -> int:
    """How many :func:`_nearest` finds for ``limit`` by the query as stored: as many,
    or :data:`SHORTLIST` times as many where it is of half precision."""
    return limit * SHORTLIST if isinstance(stored, HalfVector) else limit


def _nearest(source: str, chosen: str) -> str:
    """The vectors ``v`` that ``source`` and ``chosen`` (its test) give, nearest first by
    the distance as stored, as many as asked (parameters: ``source``'s and ``chosen``'s,
    the query as stored, how many), each with its fact's ``seq``; ties by age."""
    return (
        f"SELECT v.fact, v.vector FROM {source} WHERE {chosen} "
        "ORDER BY v.vector <=> %s, v.fact LIMIT %s"
    )


def _exactly(
    conn: psycopg.Connection[Any],
    query: Vectors,
    stored: object,
    limit: int,
    source: str,
    chosen: str,
    among: tuple[object, ...],
) -> list[Candidate]:
    """The ``limit`` nearest of the vectors ``v`` that ``source`` and ``chosen`` give
    (``among``: their parameters), by their cosine with ``query``, each with its row;
    ``stored``: the query as the rows hold their vectors (:func:`_as_stored`), by which
    a shortlist is found first (:func:`_shortlist`)."""
    shortlist = _shortlist(limit, stored)
    rows = conn.execute(
        f"SELECT 1 - n.distance, {_ROW} FROM (SELECT s.fact, s.vector::vector <=> %s "
        f"AS distance FROM ({_nearest(source, chosen)}) AS s ORDER BY distance, s.fact "
        "LIMIT %s) AS n JOIN facts f ON f.seq = n.fact ORDER BY n.distance, f.seq",
        (query, *among, stored, shortlist, limit),
    ).fetchall()
    return _candidates(rows)


def _more_pass(conn: psycopg.Connection[Any], filters: Filters, scope: str, than: int) -> bool:
    """Whether more than ``than`` of ``scope``'s facts pass ``filters``, counted."""
    row = conn.execute(*counted(filters, scope, than, mark="%s")).fetchone()
    return row is not None and int(row[0]) > than


def _approximate(
    conn: psycopg.Connection[Any],
    scope: str,
    query: Vectors,
    stored: object,
    limit: int,
    ready: Plan,
    filtered: tuple[str, list[object]] | None = None,
) -> list[Candidate]:
    """Through the scope's partial index (``ready``'s, searched as wide as :func:`plan`
    set) and its recent graph where it has one: the scope (and the facts each covers)
    are literals, so the planner can prove each index's predicate, and the order is the
    indexed expression's (of half-precision copies where its name says so), each
    candidate scored exactly; the vectors after both exactly, beside them, found by
    ``stored`` (the query as the rows hold theirs: :func:`_exactly`). Only the best
    ``limit`` of the parts are joined to their facts: joined to all of them (three
    times as many), a 13,000-fact store's statement read every fact to join them (7.7
    of its 16.8 ms). ``filtered``: a filter's SQL (of facts ``f``) and its parameters,
    tested on each fact the graphs give, each searched on until ``limit`` pass."""
    dim = sql.SQL(str(int(query.shape[0])))
    where, kept = filtered or ("", [])
    if filtered is not None:  # pgvector 0.8's iterative scan: on past ef_search
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
    # The facts each part reads, a filter's tested on each.
    tables = "fact_vectors v" + (" JOIN facts f ON f.seq = v.fact" if filtered else "")
    ordered = _unit(query)  # a graph's order, at half precision where it is of halves
    if ready.through is None:  # an index from before, covering every row
        statement = sql.SQL(
            "SELECT 1 - (v.vector::vector({dim}) <=> %s::vector({dim})) AS score, "
            "{row} FROM fact_vectors v JOIN facts f ON f.seq = v.fact "
            "WHERE v.scope = {scope}{where} "
            "ORDER BY v.vector::vector({dim}) <=> %s::vector({dim}) LIMIT %s"
        ).format(dim=dim, scope=_literal(scope), row=sql.SQL(_ROW), where=sql.SQL(where))
        rows = conn.execute(statement, (query, *kept, ordered, limit)).fetchall()
        return _candidates(rows)
    # Each graph: its name, and the facts it covers (after one, None: from the first).
    graphs: list[tuple[str, int | None, int]] = [(str(ready.index), None, ready.through)]
    if ready.recent is not None and ready.recent_through is not None:
        graphs.append((ready.recent, ready.through, ready.recent_through))
    parts, params = [], list[object]()
    for name, after, through in graphs:
        since = (
            sql.SQL("") if after is None else sql.SQL(" AND v.fact > {}").format(sql.Literal(after))
        )
        parts.append(
            sql.SQL(
                " (SELECT v.fact, 1 - (v.vector::vector <=> %s) AS score"
                "  FROM {facts} WHERE v.scope = {scope}{since} AND v.fact <= {through}{where}"
                "  ORDER BY v.vector::{kind}({dim}) <=> %s::{kind}({dim}) LIMIT %s)"
            ).format(
                facts=sql.SQL(tables),
                scope=_literal(scope),
                since=since,
                through=sql.Literal(through),
                where=sql.SQL(where),
                kind=sql.SQL("halfvec" if is_half(name) else "vector"),
                dim=dim,
            )
        )
        params += (query, *kept, ordered, limit)
    beyond = graphs[-1][2]  # the last fact a graph covers: those after it exactly
    nearest = sql.SQL(_nearest(tables, f"v.scope = %s AND v.fact > %s{where}"))
    parts.append(
        sql.SQL(" (SELECT s.fact, 1 - (s.vector::vector <=> %s) AS score FROM ({}) AS s)").format(
            nearest
        )
    )
    params += (query, scope, beyond, *kept, stored, _shortlist(limit, stored))
    statement = sql.SQL(
        "SELECT n.score, {row} FROM (SELECT * FROM ({parts}) AS p "
        "ORDER BY p.score DESC, p.fact LIMIT %s) AS n "
        "JOIN facts f ON f.seq = n.fact ORDER BY n.score DESC, f.seq"
    ).format(row=sql.SQL(_ROW), parts=sql.SQL(" UNION ALL").join(parts))
    rows = conn.execute(statement, (*params, limit)).fetchall()
    return _candidates(rows)


def _literal(value: str) -> sql.Composable:
    """``value`` as a literal of a statement run with parameters (where a partial index's
    predicate must be proved, which a parameter cannot do): quoted, and each ``%`` doubled,
    as psycopg reads every ``%`` of such a statement as a placeholder's, inside quotes too
    (a scope's key holds one for each ``:`` or ``%`` of its names: ``p:ana:app%3Anotes``)."""
    return sql.SQL(sql.Literal(value).as_string().replace("%", "%%"))


# Each candidate's whole row is read with it, from the row its id is read from: recall
# reads its traits for the lists beside the two halves, and a hit's fact, and would read
# them again otherwise.
_ROW = fact_columns("f.")


def _candidates(rows: list[Any]) -> list[Candidate]:
    """Rows of a score and the :data:`~engram.storage.rows.FACT_COLUMNS` (led by the
    id) as candidates."""
    return [Candidate(str(r[1]), float(r[0]), to_traits(r[1:])) for r in rows]


def build_lock(scope: str) -> int:
    """The session advisory lock a build of ``scope``'s index holds."""
    digest = hashlib.blake2b(index_name(scope).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def build_index(conn: psycopg.Connection[Any], scope: str) -> bool | None:
    """On an autocommit connection: builds the scope's next HNSW index, covering its
    vectors up to the newest, unless another process is building one of its graphs;
    then records it and drops the one it replaces and the recent graph. Returns whether
    this call built one, None where another process holds the build's lock."""
    return _build(conn, scope, recent=False)


def build_recent(conn: psycopg.Connection[Any], scope: str) -> bool | None:
    """On an autocommit connection: builds the scope's next recent graph, of its vectors
    after its big one up to the newest, unless another process is building one of its
    graphs; then records it and drops the one it replaces. Returns as
    :func:`build_index` does."""
    return _build(conn, scope, recent=True)


# What a build records: the graph and the last fact it covers, and how many vectors it
# holds (those of the scope after %(after)s, NULL: from the first, up to %(through)s).
_HOLDS = (
    "(SELECT count(*) FROM fact_vectors WHERE scope = %(scope)s "
    "AND (%(after)s::bigint IS NULL OR fact > %(after)s) AND fact <= %(through)s)"
)
_RECORDED = {
    False: "UPDATE scope_state SET ann_index = %(name)s, ann_through = %(through)s, "
    f"ann_rows = {_HOLDS}, recent_index = NULL, recent_through = NULL, recent_rows = NULL "
    "WHERE scope = %(scope)s",
    True: "UPDATE scope_state SET recent_index = %(name)s, recent_through = %(through)s, "
    f"recent_rows = {_HOLDS} WHERE scope = %(scope)s",
}


def _build(conn: psycopg.Connection[Any], scope: str, *, recent: bool) -> bool | None:
    """:func:`build_index` or, ``recent``, :func:`build_recent`."""
    with _locked(conn, scope) as held:
        if not held:
            return None
        state = _State.read(conn, scope)
        after, through = (state.through if recent else None), state.newest
        if through is None or not state.wants(recent):
            return False
        half = halves(conn)
        if state.dimension > WIDEST[half]:
            return False
        name = index_name(scope, through, half=half, recent=recent)
        _create(conn, scope, name, state, after, through, half=half)
        # The planner searches a graph only where it knows the rows it covers: in a
        # table never analysed, it took the 12,000 a graph held for 20, and sorted them
        # all by their distance instead (the scope's recall 20 to 26 ms p50, against
        # 5.5 analysed). Where the table is being analysed already, that is enough.
        conn.execute("ANALYZE (SKIP_LOCKED) fact_vectors")
        names = {"name": name, "scope": scope, "after": after, "through": through}
        conn.execute(_RECORDED[recent], names)
        replaced = (state.recent,) if recent else (state.index, state.recent)
        _drop(conn, *(n for n in replaced if n is not None and n != name))
        return True


@dataclass(frozen=True)
class _State:
    """A scope's vectors and graphs as a build finds them: its newest vector (None: it
    has none) and their width, its graph and the last fact it covers, and its recent
    graph and the last fact that covers."""

    newest: int | None
    dimension: int
    index: str | None
    through: int | None
    recent: str | None
    recent_through: int | None

    def wants(self, recent: bool) -> bool:
        """Whether a build (``recent``: of the recent graph) would cover vectors the
        scope's graph (or recent graph) does not, or build wider than it was built."""
        if self.newest is None:
            return False
        if recent:
            past_graph = self.through is not None and self.newest > self.through
            return past_graph and self.recent_through != self.newest
        narrower = self.index is None or built_with(self.index) < HNSW_EF_CONSTRUCTION
        return narrower or self.through != self.newest

    @classmethod
    def read(cls, conn: psycopg.Connection[Any], scope: str) -> _State:
        row = conn.execute(
            "SELECT (SELECT max(fact) FROM fact_vectors WHERE scope = %(scope)s), "
            "(SELECT vector_dims(vector) FROM fact_vectors WHERE scope = %(scope)s LIMIT 1), "
            "s.ann_index, s.ann_through, s.recent_index, s.recent_through "
            "FROM (SELECT 1) AS one LEFT JOIN scope_state s ON s.scope = %(scope)s",
            {"scope": scope},
        ).fetchone()
        assert row is not None  # one row, from the one-row join
        newest, dimension, index, through, recent, recent_through = row
        return cls(
            None if newest is None else int(newest),
            0 if dimension is None else int(dimension),
            None if index is None else str(index),
            None if through is None else int(through),
            None if recent is None else str(recent),
            None if recent_through is None else int(recent_through),
        )


@contextmanager
def _locked(conn: psycopg.Connection[Any], scope: str) -> Iterator[bool]:
    """Holds the lock a build of ``scope``'s graphs takes, where no other process holds
    it; gives whether it is held."""
    lock = build_lock(scope)
    got = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock,)).fetchone()
    if not got or not got[0]:
        yield False
        return
    try:
        yield True
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))


def _create(
    conn: psycopg.Connection[Any],
    scope: str,
    name: str,
    state: _State,
    after: int | None,
    through: int,
    *,
    half: bool,
) -> None:
    """Builds the graph ``name`` of ``scope``'s vectors after ``after`` (None: from the
    first) up to ``through``, first dropping what builds before left: an interrupted
    concurrent build leaves an invalid index behind, and one stopped after its index was
    built (a close cancels every statement until it ends) an index the scope does not
    name. The graphs ``state`` names stay, searched until this one replaces one."""
    kept = [n for n in (state.index, state.recent) if n is not None]
    left = conn.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE (NOT i.indisvalid OR NOT c.relname = ANY(%s)) AND starts_with(c.relname, %s)",
        (kept, index_name(scope)),
    ).fetchall()
    _drop(conn, *(str(r[0]) for r in left))
    for setting in BUILDING:
        conn.execute(setting)
    since = sql.SQL("") if after is None else sql.SQL(" AND fact > {}").format(sql.Literal(after))
    conn.execute(
        sql.SQL(
            "CREATE INDEX CONCURRENTLY {name} ON fact_vectors USING hnsw "
            "((vector::{kind}({dim})) {kind}_cosine_ops) "
            "WITH (m = {m}, ef_construction = {ef}) "
            "WHERE scope = {scope}{since} AND fact <= {through}"
        ).format(
            name=sql.Identifier(name),
            kind=sql.SQL("halfvec" if half else "vector"),
            dim=sql.SQL(str(state.dimension)),
            m=sql.SQL(str(HNSW_M)),
            ef=sql.SQL(str(HNSW_EF_CONSTRUCTION)),
            scope=sql.Literal(scope),
            since=since,
            through=sql.Literal(through),
        )
    )


def _drop(conn: psycopg.Connection[Any], *names: str) -> None:
    """Drops the indexes ``names``, each without holding up the table's writes."""
    for name in names:
        conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))


def cancel_builds(conn: psycopg.Connection[Any], scope: str) -> None:
    """Cancels a build of ``scope``'s index in progress (this role's, on this database):
    an erase would otherwise wait for it to finish (a 100k-vector scope's takes minutes),
    and it waits for the erase's transaction in turn. Its invalid index is dropped after."""
    conn.execute(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
        "AND datname = current_database() AND usename = current_user "
        "AND starts_with(query, 'CREATE INDEX CONCURRENTLY \"' || %s)",  # as build_index names it
        (index_name(scope),),
    ).fetchall()


def drop_indexes(conn: psycopg.Connection[Any], scope: str | None = None) -> None:
    """Inside a transaction: drops the HNSW indexes of ``scope`` (or of every scope)."""
    conn.execute(
        "UPDATE scope_state SET ann_index = NULL, ann_through = NULL, ann_rows = NULL, "
        "recent_index = NULL, recent_through = NULL, recent_rows = NULL "
        "WHERE ann_index IS NOT NULL AND (%s::text IS NULL OR scope = %s)",
        (scope, scope),
    )
    names = [
        str(r[0])
        for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'fact_vectors' "
            "AND starts_with(indexname, %s)",
            ("fact_ann_" if scope is None else index_name(scope),),
        )
    ]
    for name in names:
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
