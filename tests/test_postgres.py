"""What only the PostgreSQL backend has: its schema versions, per-scope ANN indexes,
pg_dump backups, and how it refuses a database it cannot use."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg import sql

import engram
import postgres_server
import stores
from engram import Note, ResourceRef, StorageFailure
from engram.cli.main import main
from engram.core.models import Filters
from engram.core.ranking import Candidate
from engram.storage import staging
from engram.storage.postgres import PostgresStore, fulltext, vectors
from engram.storage.postgres import backup as pg_backups
from engram.storage.postgres.database import Database
from engram.storage.postgres.schema import MIGRATIONS
from engram.storage.postgres.vectors import index_name

REF = ResourceRef("pg")
ENGRAM = str(Path(sys.executable).parent / "engram")
TOOLS = str(postgres_server.bin_dir())  # pg_dump and pg_restore of the test server's version


@pytest.fixture(autouse=True)
def _pg_bin(monkeypatch: pytest.MonkeyPatch) -> None:
    """pg_dump and pg_restore of the test server's own version."""
    monkeypatch.setenv("ENGRAM_PG_BIN", TOOLS)


# -- schema -----------------------------------------------------------------------------
def test_each_migration_is_recorded_once_even_when_processes_open_at_once(
    postgres_url: str,
) -> None:
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            engram.open(postgres_url, embedder=None).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    versions = stores.rows(postgres_url, "SELECT version FROM engram_schema ORDER BY version")
    assert versions == [(n,) for n in range(1, len(MIGRATIONS) + 1)]


def test_a_schema_newer_than_this_engram_is_refused(postgres_url: str) -> None:
    engram.open(postgres_url, embedder=None).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO engram_schema (version) VALUES (99)")
    with pytest.raises(StorageFailure, match="schema version 99, newer than this engram"):
        engram.open(postgres_url, embedder=None)


def test_without_migrating_an_old_schema_is_refused_until_engram_migrate(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(StorageFailure, match="schema version 0") as refused:
        PostgresStore(postgres_url, apply_migrations=False)
    assert refused.value.hint == "run `engram migrate`"
    assert main(["--db", postgres_url, "--json", "migrate"]) == 0
    assert json.loads(capsys.readouterr().out)["schema_version"] == len(MIGRATIONS)
    PostgresStore(postgres_url, apply_migrations=False).close()


def test_an_unreachable_server_is_named_without_its_password() -> None:
    url = "postgresql://engram:s3cret@127.0.0.1:1/nowhere"
    with pytest.raises(StorageFailure) as refused:
        engram.open(url, embedder=None)
    assert "postgresql://engram@127.0.0.1:1/nowhere" in str(refused.value)
    assert "s3cret" not in str(refused.value)


def test_a_database_that_is_not_utf8_is_refused(postgres_admin: str) -> None:
    name = "latin_store"
    with psycopg.connect(postgres_admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' TEMPLATE template0")
    url = postgres_server.database_url(postgres_admin, name)
    try:
        with pytest.raises(StorageFailure, match="not UTF8-encoded"):
            engram.open(url, embedder=None)
    finally:
        postgres_server.drop_database(postgres_admin, url)


# -- vectors: exact per scope, then the scope's own HNSW index ----------------------------
# The scopes' graphs (and recent graphs) the database holds, by name.
GRAPHS = "SELECT indexname FROM pg_indexes WHERE starts_with(indexname, 'fact_ann_')"


def _sentences(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    return [" ".join(rng.choice(words, size=8)) for _ in range(n)]


def test_a_text_base_threshold_is_taken_and_keeps_no_copy(postgres_url: str) -> None:
    # The setting is SQLite's (a copy of common words' postings in the file): a
    # PostgreSQL store opened with it answers as any other and writes no such copy.
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(16), text_base_above=5) as mem:
        ref = ResourceRef("text-base")
        mem.remember_many(ref, [f"camera report {i}" for i in range(20)])
        assert len(mem.recall(ref, "camera", mode="text", top_k=20)) == 20
    tables = stores.rows(
        postgres_url, "SELECT tablename FROM pg_tables WHERE tablename LIKE ?", ("text_base%",)
    )
    assert tables == []


def test_a_large_scope_gets_its_own_index_and_keeps_recall(postgres_url: str) -> None:
    embedder = engram.HashingEmbedder(64)
    # From 400 facts (small, so the test stays quick; the default is 10,000), as
    # ENGRAM_VECTOR_INDEX_ABOVE sets it.
    memory = engram.open(postgres_url, embedder=embedder, vector_index_above=400)
    store = memory._store
    assert isinstance(store, PostgresStore) and store.ann_above == 400
    small = ResourceRef("small")
    try:
        memory.remember_many(small, _sentences(50, 1))
        texts = _sentences(2000, 2)
        covered = "SELECT ann_rows, recent_rows FROM scope_state WHERE scope = ?"
        grown = []
        for start in range(0, len(texts), 250):
            memory.remember_many(REF, texts[start : start + 250])
            assert store.builder.settle(timeout=120)
            grown.append(stores.rows(postgres_url, covered, (REF.key,))[0])
        # a graph built at 500 facts, then at 750 and 1000 (past a quarter more each),
        # not at 1250 (a quarter exactly), at 1500, not at 1750, and at 2000; none of
        # those after a graph passed the threshold, so none got a recent graph
        graphs = [(500, None), (750, None), (1000, None), (1000, None), (1500, None)]
        assert grown == [(None, None), *graphs, (1500, None), (2000, None)]
        state = (
            "SELECT scope, ann_index, ann_through, ann_rows, recent_index, recent_through, "
            "recent_rows FROM scope_state"
        )
        (through,) = stores.rows(postgres_url, "SELECT max(fact) FROM fact_vectors")[0]
        built = index_name(REF.key, through, half=True)  # pgvector 0.8: half precision
        expected = [(small.key, None, None, None, None, None, None)]
        expected.append((REF.key, built, through, 2000, None, None, None))
        assert sorted(stores.rows(postgres_url, state)) == sorted(expected)
        # 450 more: past the threshold, under a quarter: a recent graph of them
        memory.remember_many(REF, _sentences(450, 4))
        assert store.builder.settle(timeout=120)
        (last,) = stores.rows(postgres_url, "SELECT max(fact) FROM fact_vectors")[0]
        recent = index_name(REF.key, last, half=True, recent=True)
        expected[1] = (REF.key, built, through, 2000, recent, last, 450)
        assert sorted(stores.rows(postgres_url, state)) == sorted(expected)
        # the graph before it dropped
        assert sorted(stores.rows(postgres_url, GRAPHS)) == sorted([(built,), (recent,)])
        query = embedder.embed(["w1 w2 w3"], "query")[0]
        literal = "[" + ",".join(f"{x:.6f}" for x in query) + "]"
        shown = stores.plan(
            postgres_url,
            f"SELECT v.fact FROM fact_vectors v WHERE v.scope = '{REF.key}' "
            f"AND v.fact <= {through} "
            f"ORDER BY v.vector::halfvec(64) <=> '{literal}'::halfvec(64) LIMIT 10",
        )
        assert built in shown
        shown = stores.plan(
            postgres_url,
            f"SELECT v.fact FROM fact_vectors v WHERE v.scope = '{REF.key}' "
            f"AND v.fact > {through} AND v.fact <= {last} "
            f"ORDER BY v.vector::halfvec(64) <=> '{literal}'::halfvec(64) LIMIT 10",
            without=("sort",),  # 450 rows: sorting them is cheaper than any graph
        )
        assert recent in shown

        stored, before = {}, None
        while True:
            page = memory.facts(REF, limit=1000, before=before)
            stored.update({f.content: f.id for f in page.facts})
            if (before := page.next_before) is None:
                break
        contents = list(stored)
        assert len(contents) == 2450
        matrix = embedder.embed(contents, "passage")
        found = 0
        queries = _sentences(40, 3)
        for text in queries:
            vector = embedder.embed([text], "query")[0]
            exact = {stored[contents[i]] for i in np.argsort(-(matrix @ vector))[:10]}
            hits = memory.recall(REF, text, top_k=10, mode="vector")
            found += len(exact & {h.fact.id for h in hits})
        assert found / (10 * len(queries)) >= 0.95

        # a filtered query stays exact: the graph cannot honour a filter
        tagged = memory.remember(REF, "w1 w2 w3 tagged", tags=["rare"])
        hits = memory.recall(REF, "w1 w2 w3", top_k=5, mode="vector", tags=["rare"])
        assert [h.fact.id for h in hits] == [tagged.id]

        # the vectors after both graphs are searched exactly beside them; each part
        # follows forgets
        newest, in_recent = memory.facts(REF, limit=5).facts[::4]  # the tagged one, then
        for fact in (newest, in_recent):
            hits = memory.recall(REF, fact.content, top_k=1, mode="vector")
            assert [h.fact.id for h in hits] == [fact.id]
            memory.forget(REF, fact.id)
            hits = memory.recall(REF, fact.content, top_k=3, mode="vector")
            assert fact.id not in {h.fact.id for h in hits}

        memory.forget_all(REF, expected_count=memory.count(REF), hard=True)
        assert stores.rows(postgres_url, GRAPHS) == []
    finally:
        memory.close()


def test_a_scope_whose_key_holds_a_percent_sign_is_searched_through_its_graphs(
    postgres_url: str,
) -> None:
    """A scope's key is written into the graphs' search as a literal, in a statement run
    with parameters, where psycopg reads every ``%`` as a placeholder's: a person's
    memory in an application (``p:ana:app%3Anotes``), or a resource named with a colon,
    failed every vector recall once past the threshold."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        for ref in (engram.PersonAppRef("ana", "app:notes"), ResourceRef("t:100%")):
            assert "%" in ref.key
            notes = [Note(t, tags=("t",) * (i % 2)) for i, t in enumerate(_sentences(701, 41))]
            facts = memory.remember_many(ref, notes[:600])
            assert store.builder.settle(timeout=120)
            memory.remember_many(ref, notes[600:])  # past the threshold: a recent graph
            assert store.builder.settle(timeout=120)
            graphs = "SELECT ann_index, recent_index FROM scope_state WHERE scope = ?"
            big, recent = stores.rows(postgres_url, graphs, (ref.key,))[0]
            query = np.asarray(embedder.embed(["w1 w2"], "query")[0], np.float32)
            shown = _searched_through(postgres_url, query, 100, sorting=False, scope=ref.key)
            assert f"Index Scan using {big} " in shown and f"Index Scan using {recent} " in shown
            for fact in (facts[7], facts[8]):  # tagged, untagged
                hits = memory.recall(ref, fact.content, top_k=1, mode="vector")
                assert [h.fact.id for h in hits] == [fact.id]
            tagged = memory.recall(ref, facts[9].content, top_k=1, mode="vector", tags=["t"])
            assert [h.fact.id for h in tagged] == [facts[9].id]


def test_a_graph_is_searched_once_it_is_recorded(postgres_url: str) -> None:
    """The build analyses the vectors' table before it records the graph: the planner,
    never told how many rows the scope has, took the 4,000 the graph holds for a
    handful and sorted them all rather than search it."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        memory.remember_many(REF, _sentences(4000, 3))
        assert store.builder.settle(timeout=120)
        (name,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        query = np.asarray(embedder.embed(["w1 w2 w3"], "query")[0], np.float32)
        assert f"Index Scan using {name} " in _searched_through(postgres_url, query, 100)


@pytest.mark.parametrize("half", [True, False], ids=["halfvec", "vector"])
def test_the_index_and_its_newer_vectors_answer_as_exact_search(
    postgres_url: str, half: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores on one database, one searching the scope's index (from 100 facts) and
    the vectors after it, the other always exactly: the same answers, to the score,
    through writes covered by the index and after it, forgets on both sides of its end, a
    correction, a restore and a rebuild; with a graph of half-precision copies (pgvector
    0.7 and later) and with one of the vectors as stored (as before 0.7)."""
    monkeypatch.setattr(vectors, "halves", lambda conn: half)
    embedder = engram.HashingEmbedder(64)
    queries = _sentences(6, 9)

    def same(indexed: engram.Memory, exact: engram.Memory) -> None:
        for text in queries:
            got, want = (
                [
                    (h.fact.id, round(h.score, 5))
                    for h in m.recall(REF, text, top_k=10, mode="vector")
                ]
                for m in (indexed, exact)
            )
            assert got == want, text

    with (
        engram.open(postgres_url, embedder=embedder, vector_index_above=100) as indexed,
        engram.open(postgres_url, embedder=embedder, vector_index_above=1 << 52) as exact,
    ):
        store = indexed._store
        assert isinstance(store, PostgresStore)
        first = indexed.remember_many(REF, _sentences(500, 7))
        assert store.builder.settle(timeout=120)
        assert stores.rows(postgres_url, "SELECT ann_rows FROM scope_state") == [(500,)]
        (made_as,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        kind = "halfvec" if half else "vector"
        (made,) = stores.rows(
            postgres_url, "SELECT indexdef FROM pg_indexes WHERE indexname = ?", (made_as,)
        )[0]
        assert vectors.is_half(made_as) == half and f"{kind}_cosine_ops" in made
        assert made_as.endswith(f"_e{vectors.HNSW_EF_CONSTRUCTION}")  # how wide it was built
        later = indexed.remember_many(REF, _sentences(110, 8))  # outside the index
        same(indexed, exact)
        assert store.builder.settle(timeout=120)  # past the threshold: a recent graph
        recent = "SELECT ann_rows, recent_index, recent_rows FROM scope_state"
        (rows, name, held) = stores.rows(postgres_url, recent)[0]
        assert (rows, held) == (500, 110) and vectors.is_half(name) == half
        query = np.asarray(embedder.embed([queries[0]], "query")[0], np.float32)
        shown = _searched_through(postgres_url, query, 100, sorting=False)
        assert f"Index Scan using {made_as} " in shown and f"Index Scan using {name} " in shown
        same(indexed, exact)
        for fact in (*first[:20], *later[:10]):  # in the graph, and in the recent one
            indexed.forget(REF, fact.id)
        indexed.correct(REF, first[30].id, "w1 w2 w3 w4 w5 corrected")
        indexed.correct(REF, later[30].id, "w1 w2 w3 w4 corrected after")
        indexed.restore(REF, first[0].id)
        indexed.restore(REF, later[0].id)
        same(indexed, exact)
        indexed.remember_many(REF, _sentences(120, 10))  # past a quarter: rebuilt
        assert store.builder.settle(timeout=120)
        (covered, gone, _) = stores.rows(postgres_url, recent)[0]
        assert covered == indexed.count(REF) and gone is None
        same(indexed, exact)
        indexed.remember_many(REF, _sentences(110, 11))
        assert store.builder.settle(timeout=120)
        indexed.remember_many(REF, _sentences(10, 12))  # after both: too few for the next
        assert store.builder.settle(timeout=120)
        assert stores.rows(postgres_url, recent)[0][::2] == (covered, 110)
        same(indexed, exact)


def test_a_wide_filter_is_searched_through_the_graph_and_a_narrow_one_by_its_facts(
    postgres_url: str,
) -> None:
    """A filter that more than one in FILTER_BY_KEY_SHARE facts pass is searched through
    the scope's graph, on past its width until enough pass (pgvector's iterative scan);
    a narrower one reads the passing facts' vectors (a strength floor counted apart,
    as most facts pass it): both answer as exact search does
    (a graph of 480 vectors searched 200 wide finds what exact search finds), facts
    written after the graph (in its recent graph, and after both) and another scope's
    tagged facts included."""
    embedder = engram.HashingEmbedder(64)
    tagged = [  # one in 40 of the default strength
        Note(text, tags=("t",) if i % 3 == 0 else (), strength=0.5 if i % 40 else 1.0)
        for i, text in enumerate(_sentences(480, 21))
    ]
    with (
        engram.open(postgres_url, embedder=embedder, vector_index_above=100) as indexed,
        engram.open(postgres_url, embedder=embedder, vector_index_above=1 << 52) as exact,
    ):
        store = indexed._store
        assert isinstance(store, PostgresStore)
        indexed.remember_many(REF, tagged)
        assert store.builder.settle(timeout=120)
        later = [
            Note(t, tags=("t",) if i % 2 else (), strength=0.5)
            for i, t in enumerate(_sentences(122, 22))
        ]
        indexed.remember_many(REF, later[:110])  # outside the graph: a recent graph of them
        assert store.builder.settle(timeout=120)
        indexed.remember_many(REF, later[110:])  # and after both
        indexed.remember_many(
            ResourceRef("other"), [Note(t, tags=("t",)) for t in _sentences(5, 23)]
        )
        graphs = "SELECT ann_index, recent_rows FROM scope_state WHERE scope = ?"
        assert stores.rows(postgres_url, graphs, (REF.key,))[0][1] == 110
        wide, narrow = Filters(tags=("t",)), Filters(tags=("t",), type="none such")
        for text in _sentences(8, 24):
            got, want = (
                [
                    (h.fact.id, round(h.score, 5))
                    for h in m.recall(REF, text, top_k=20, mode="vector", tags=["t"])
                ]
                for m in (indexed, exact)
            )
            assert got == want and len(got) == 20, text
        query = np.asarray(embedder.embed(["w1 w2 w3"], "query")[0], np.float32)

        def iterated(filters: Filters) -> str:
            with psycopg.connect(postgres_url) as conn, conn.transaction():
                register_vector(conn)
                recorded = _Recording(conn)
                vectors.search(cast(Any, recorded), REF.key, query, filters, 10, above=100)
                # the scope's count and pgvector's version come with the plan's statement
                apart = ("SELECT facts FROM scope_state", "SELECT extversion", "SELECT (SELECT ext")
                read = [s for s in recorded.statements if s.startswith(apart)]
                assert not read and "extversion" in recorded.statements[0], read
                (shown,) = conn.execute("SHOW hnsw.iterative_scan").fetchone() or ("",)
                return str(shown)

        assert iterated(wide) == "strict_order"
        assert iterated(narrow) == "off"
        # a floor at or under the default strength is counted apart (the scope's facts
        # less those of other strengths under it): all 602 pass one, 12 the other
        assert iterated(Filters(min_strength=0.5)) == "strict_order"
        assert iterated(Filters(min_strength=0.9)) == "off"


def test_exact_search_orders_by_the_cosine_with_the_query_as_given(postgres_url: str) -> None:
    """Exact search finds the nearest by their distance as stored (half precision), then
    orders a shortlist by their cosine with the query as given: the same facts and scores
    as every stored vector's cosine computed here, ties (30 facts of one vector) by age;
    unfiltered, among a narrow filter's facts (read by key), a wide filter's (the scope
    scanned), and beside a graph, among the vectors written after it (the tied ones)."""
    embedder = engram.HashingEmbedder(64)
    words = "w1 w2 w3 w4 w5".split()
    rng = np.random.default_rng(5)
    alike = [" ".join(rng.permutation(words)) for _ in range(200)]  # one vector
    notes = [
        Note(text, tags=("wide",) * (i % 3 == 0) + ("narrow",) * (i % 25 == 0))
        for i, text in enumerate(_sentences(300, 31) + list(dict.fromkeys(alike))[:30])
    ]
    questions = [" ".join(words), *_sentences(5, 32)]

    def nearest(filters: Filters, above: int, scale: float = 1.0) -> list[list[tuple[str, float]]]:
        with psycopg.connect(postgres_url) as conn, conn.transaction():
            register_vector(conn)
            found = []
            for text in questions:
                query = np.asarray(embedder.embed([text], "query")[0], np.float32) * scale
                got = vectors.search(conn, REF.key, query, filters, 10, above=above)
                found.append([(c.id, round(c.score, 5)) for c in got])
            return found

    def cosines(tag: str | None) -> list[list[tuple[str, float]]]:
        with psycopg.connect(postgres_url) as conn:
            register_vector(conn)
            held = conn.execute(
                "SELECT f.id, f.seq, v.vector::vector FROM fact_vectors v "
                "JOIN facts f ON f.seq = v.fact WHERE f.scope = %s AND (%s::text IS NULL "
                "OR EXISTS (SELECT 1 FROM fact_tags t WHERE t.fact = f.seq AND t.tag = %s))",
                (REF.key, tag, tag),
            ).fetchall()
        stored = np.array([np.asarray(r[2].to_numpy(), np.float32) for r in held])
        stored /= np.linalg.norm(stored, axis=1, keepdims=True)
        found = []
        for text in questions:
            query = np.asarray(embedder.embed([text], "query")[0], np.float64)
            scores = stored.astype(np.float64) @ (query / np.linalg.norm(query))
            order = sorted(range(len(held)), key=lambda i: (-round(scores[i], 9), held[i][1]))
            found.append([(str(held[i][0]), round(float(scores[i]), 5)) for i in order[:10]])
        return found

    exactly, above = 1 << 52, 100
    with engram.open(postgres_url, embedder=embedder, vector_index_above=above) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        memory.remember_many(REF, notes[:300])
        assert store.builder.settle(timeout=120)
        # after the graph, too few for the next or a recent graph (a graph's order among
        # ties is its own)
        made = memory.remember_many(REF, notes[300:])
        assert store.builder.settle(timeout=120)
        # the oldest of one vector's facts written again: a scan meets them last
        oldest = [f"{fact.id}" for fact in made[:10]]
        stores.rows(
            postgres_url,
            "UPDATE fact_vectors SET vector = vector "
            "WHERE fact IN (SELECT seq FROM facts WHERE id = ANY(?))",
            (oldest,),
        )
        with psycopg.connect(postgres_url) as conn:
            planned = vectors.plan(conn, REF.key, 10, above)
        assert planned.half_rows and planned.through is not None  # 30 facts after it
        assert planned.recent is None
        everything = cosines(None)
        assert [score for _, score in everything[0]] == [1.0] * 10  # ties, the oldest first
        for filters, tag in (
            (Filters(), None),
            (Filters(tags=("narrow",)), "narrow"),
            (Filters(tags=("wide",)), "wide"),
        ):
            assert nearest(filters, exactly) == cosines(tag), filters
        assert nearest(Filters(), above) == everything  # the graph and the vectors after it
        # a query far from unit length (past half precision's largest value) as one at it
        for searched in (exactly, above):
            assert nearest(Filters(), searched, scale=1e6) == everything


class _Recording:
    """A connection that records the statements it is given, and their parameters."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn, self.statements, self.params = conn, list[str](), list[Any]()

    def execute(self, query: Any, params: Any = None) -> Any:
        text = query.as_string(self.conn) if isinstance(query, sql.Composable) else str(query)
        self.statements.append(text)
        self.params.append(params)
        return self.conn.execute(query, params)


def _searched_through(
    url: str, query: Any, above: int, *, sorting: bool = True, scope: str = REF.key
) -> str:
    """The plan of the statement an unfiltered search of ``scope``'s vectors ends in; without
    ``sorting``, a sort costed as one the planner cannot do without: a part of a few
    hundred rows is sorted rather than searched through its graph, which the plan shows
    it can be then."""
    with psycopg.connect(url) as conn, conn.transaction():
        register_vector(conn)
        recorded = _Recording(conn)
        vectors.search(cast(Any, recorded), scope, query, Filters(), 10, above=above)
        last, params = recorded.statements[-1], recorded.params[-1]
        if not sorting:
            conn.execute("SET LOCAL enable_sort = off")
        shown = conn.execute(cast(Any, f"EXPLAIN {last}"), params).fetchall()
        return " ".join(str(r[0]) for r in shown)


def test_a_graph_is_searched_as_wide_as_its_build_asks(postgres_url: str) -> None:
    """A graph built exploring HNSW_EF_CONSTRUCTION is searched EF_SEARCH wide; one built
    before, exploring 200 (named without ``_e``), NARROW_EF_SEARCH wide, as it was; a
    search asked for more than either explores as many as it asks."""
    embedder = engram.HashingEmbedder(64)
    query = np.asarray(embedder.embed(["w1 w2 w3"], "query")[0], np.float32)

    def width(limit: int = 10) -> int:
        with psycopg.connect(postgres_url) as conn, conn.transaction():
            register_vector(conn)
            found = vectors.search(conn, REF.key, query, Filters(), limit, above=100)
            assert len(found) == limit
            (shown,) = conn.execute("SHOW hnsw.ef_search").fetchone() or ("",)
            return int(shown)

    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        memory.remember_many(REF, _sentences(400, 21))
        assert store.builder.settle(timeout=120)
        store.builder.close()
    (name,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
    assert name.endswith(f"_e{vectors.HNSW_EF_CONSTRUCTION}")
    assert (width(), width(350)) == (vectors.EF_SEARCH, 350)
    older = name.removesuffix(f"_e{vectors.HNSW_EF_CONSTRUCTION}")  # as graphs were named
    stores.rows(postgres_url, f'ALTER INDEX "{name}" RENAME TO "{older}"')
    stores.rows(postgres_url, "UPDATE scope_state SET ann_index = ?", (older,))
    assert width() == vectors.NARROW_EF_SEARCH > vectors.EF_SEARCH
    # a write leaves it until the scope grows; a reindex builds it as graphs are built now
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert not vectors.due(conn, REF.key, 100)
        assert vectors.due(conn, REF.key, 100, current=True)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        report = memory.consolidate(REF, steps=["reindex"]).step("reindex")
        assert report is not None and report.counts["vector_index_built"] == 1
    assert stores.rows(postgres_url, "SELECT ann_index FROM scope_state") == [(name,)]
    assert stores.rows(postgres_url, GRAPHS) == [(name,)]
    assert width() == vectors.EF_SEARCH


def test_candidates_carry_the_traits_their_rows_hold(postgres_url: str) -> None:
    """Each half reads a candidate's traits with its id: the graph's statement with the
    rows after the graph, exact search, a filtered search and the postings' copies give
    what the facts' own read gives (words, a correction's, context, time, speaker,
    strength), so recall does not read them again."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        first = memory.remember_many(REF, _sentences(300, 31))
        assert store.builder.settle(timeout=120)
        said = {"speaker": "Ana"}
        notes = [Note(s, strength=2.5, metadata=said, context="c") for s in _sentences(40, 32)]
        later = {f.id for f in memory.remember_many(REF, notes)}  # after the graph's rows
        memory.correct(REF, first[5].id, "w1 w2 w3 corrected words")
        query = np.asarray(embedder.embed(["w1 w2 w3"], "query")[0], np.float32)

        def check(found: list[Candidate]) -> set[str]:
            assert found and all(c.traits is not None for c in found)
            ids = [c.id for c in found]
            held = store.run(lambda tx: store.facts.traits(tx, REF, ids), write=False)
            assert {c.id: c.traits for c in found} == held
            return set(ids)

        with psycopg.connect(postgres_url) as conn, conn.transaction():
            register_vector(conn)
            every = check(vectors.search(conn, REF.key, query, Filters(), 400, above=100))
            assert later <= every and first[5].id in every  # both sides of the graph's rows
            check(vectors.search(conn, REF.key, query, Filters(), 60, above=1 << 52))
            strong = check(vectors.search(conn, REF.key, query, Filters(min_strength=2), 60))
            assert strong == later
            terms = ["w1", "w2", "corrected"]
            check(fulltext.candidates(conn, REF.key, terms, Filters(), 60, store.postings))


def test_vectors_are_stored_at_half_precision_and_an_older_store_is_migrated(
    postgres_url: str,
) -> None:
    """Where pgvector has ``halfvec`` (0.7 and later), a vector takes half the bytes, as on
    SQLite. A store from before (float32 vectors, a graph over them) is migrated: its
    vectors kept at half precision, its graph dropped, the same facts found, and the graph
    built again by a reindex."""
    embedder = engram.HashingEmbedder(64)
    kind = "SELECT pg_typeof(vector)::text, pg_column_size(vector) FROM {} LIMIT 1"
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        facts = memory.remember_many(REF, _sentences(300, 16))
        memory.forget(REF, facts[0].id)  # one in the trash, with its vector
        assert stores.rows(postgres_url, kind.format("fact_vectors")) == [("halfvec", 2 * 64 + 8)]
        assert stores.rows(postgres_url, kind.format("fact_trash")) == [("halfvec", 2 * 64 + 8)]
        store = memory._store
        assert isinstance(store, PostgresStore)
        store.builder.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # as schema 20 left it
        vectors.drop_indexes(conn)
        for table in ("fact_vectors", "fact_trash"):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN vector TYPE vector")
        assert vectors.build_index(conn, REF.key)
        for statement in stores.POSTGRES_BEFORE_WORDS_VERSIONS:
            conn.execute(statement)
        conn.execute("DELETE FROM engram_schema WHERE version >= 21")
    assert stores.rows(postgres_url, kind.format("fact_vectors")) == [("vector", 4 * 64 + 8)]
    questions = _sentences(5, 17)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=1 << 52) as exact:
        before = [[h.fact.id for h in exact.recall(REF, q, mode="vector")] for q in questions]
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        store.builder.close()
        assert stores.rows(postgres_url, kind.format("fact_vectors")) == [("halfvec", 2 * 64 + 8)]
        assert stores.rows(postgres_url, kind.format("fact_trash")) == [("halfvec", 2 * 64 + 8)]
        assert stores.rows(postgres_url, "SELECT ann_index FROM scope_state") == [(None,)]
        indexes = "SELECT count(*) FROM pg_indexes WHERE starts_with(indexname, 'fact_ann_')"
        assert stores.rows(postgres_url, indexes) == [(0,)]
        after = [[h.fact.id for h in memory.recall(REF, q, mode="vector")] for q in questions]
        assert after == before
        report = memory.consolidate(REF, steps=["reindex"]).step("reindex")
        assert report is not None and report.counts["vector_index_built"] == 1
        assert memory.restore(REF, facts[0].id) is not None  # back from the trash, found
        assert memory.recall(REF, facts[0].content, top_k=1)[0].fact.id == facts[0].id


def test_stored_vectors_are_read_back_in_binary(
    postgres_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as text, each stored vector was parsed number by number in Python (50 took
    4.9 ms, an export of 100k facts 15 s); in binary they come as the stored halves. The
    same values either way."""
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as memory:
        facts = memory.remember_many(REF, _sentences(40, 18))
        store = memory._store
        assert isinstance(store, PostgresStore)
        reads: list[bool] = []
        real = psycopg.Connection.execute

        def spied(self: Any, statement: Any, params: Any = None, **kw: Any) -> Any:
            if "vector FROM fact_vectors" in str(statement):
                reads.append(bool(kw.get("binary")))
            return real(self, statement, params, **kw)

        monkeypatch.setattr(psycopg.Connection, "execute", spied)
        ids = [f.id for f in facts]
        found = store.run(lambda tx: store.facts.vectors(tx, REF, ids), write=False)
        one = store.run(lambda tx: store.facts.vector_of(tx, REF, ids[0]), write=False)
        monkeypatch.undo()
        assert reads == [True, True]
    as_text = stores.rows(
        postgres_store_url,
        "SELECT f.id, v.vector::text FROM facts f JOIN fact_vectors v ON v.fact = f.seq",
    )
    assert len(as_text) == len(found) == 40
    for fact_id, text in as_text:
        written = np.array(json.loads(text), dtype=np.float32)
        written /= np.linalg.norm(written)
        assert np.allclose(found[fact_id], written, atol=1e-6)
    assert one is not None and np.allclose(one, found[ids[0]])


def test_a_scope_of_wider_vectors_than_a_graph_of_float32_holds_is_indexed(
    postgres_url: str,
) -> None:
    """pgvector's graph holds float32 vectors of at most 2,000 dimensions, and half
    precision ones of up to 4,000: a scope of 3,072-wide vectors (a large remote model's)
    gets its own graph, and answers as exact search does."""
    embedder = engram.HashingEmbedder(3072)
    with (
        engram.open(postgres_url, embedder=embedder, vector_index_above=100) as indexed,
        engram.open(postgres_url, embedder=embedder, vector_index_above=1 << 52) as exact,
    ):
        store = indexed._store
        assert isinstance(store, PostgresStore)
        indexed.remember_many(REF, _sentences(200, 11))
        assert store.builder.settle(timeout=120)
        (name,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        assert name is not None and vectors.is_half(name)
        for text in _sentences(4, 12):
            got, want = (
                [(h.fact.id, round(h.score, 5)) for h in m.recall(REF, text, mode="vector")]
                for m in (indexed, exact)
            )
            assert got == want, text


def test_a_scope_of_vectors_wider_than_any_graph_holds_stays_exact(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = engram.HashingEmbedder(4096)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        facts = memory.remember_many(REF, _sentences(150, 13))
        assert store.builder.settle(timeout=120)
        assert stores.rows(postgres_url, "SELECT ann_index FROM scope_state") == [(None,)]
        # neither a write nor a reindex wants a build it would not make
        with psycopg.connect(postgres_url) as conn:
            assert not vectors.due(conn, REF.key, 100)
            assert not vectors.due(conn, REF.key, 100, current=True)
        report = memory.consolidate(REF, steps=["reindex"], dry_run=True).step("reindex")
        assert report is not None and report.counts["vector_index_built"] == 0
        hits = memory.recall(REF, facts[3].content, top_k=1, mode="vector")
        assert [h.fact.id for h in hits] == [facts[3].id]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_reindex_builds_the_scope_s_index_and_brings_it_up_to_date(postgres_url: str) -> None:
    embedder = engram.HashingEmbedder(64)
    # a threshold no background build reaches: only the reindex builds
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        store.builder.close()

        def built(**kw: bool) -> int:
            report = memory.consolidate(REF, steps=["reindex"], **kw).step("reindex")
            assert report is not None
            return report.counts["vector_index_built"]

        state = "SELECT ann_index IS NOT NULL, ann_rows FROM scope_state"
        memory.remember_many(REF, _sentences(150, 14))
        assert built(dry_run=True) == 1 and stores.rows(postgres_url, state) == [(False, None)]
        assert built() == 1 and stores.rows(postgres_url, state) == [(True, 150)]
        assert built() == 0
        memory.remember_many(REF, _sentences(10, 15))
        with psycopg.connect(postgres_url) as conn:  # too few outside for a write's build
            assert not vectors.due(conn, REF.key, 100)
            assert vectors.due(conn, REF.key, 100, current=True)
        assert built() == 1 and stores.rows(postgres_url, state) == [(True, 160)]


def test_an_index_from_before_and_a_broken_build_are_replaced(postgres_url: str) -> None:
    """An index covering every row (as built before indexes covered a range) is searched
    alone, then replaced once the scope is next searched (or written); an invalid index
    an interrupted build left behind is dropped by the next build."""
    embedder = engram.HashingEmbedder(64)
    memory = engram.open(postgres_url, embedder=embedder, vector_index_above=100)
    store = memory._store
    assert isinstance(store, PostgresStore)
    try:
        memory.remember_many(REF, _sentences(300, 5))
        assert store.builder.settle(timeout=120)
        old, broken = index_name(REF.key), index_name(REF.key, 10**9)
        (built,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        stores.rows(
            postgres_url,
            "UPDATE scope_state SET ann_index = ?, ann_through = NULL, ann_rows = NULL",
            (old,),
            setup=(
                f'DROP INDEX "{built}"',
                f'CREATE INDEX "{old}" ON fact_vectors USING hnsw '
                f"((vector::vector(64)) vector_cosine_ops) WHERE scope = '{REF.key}'",
            ),
        )
        with (
            psycopg.connect(postgres_url, autocommit=True) as conn,
            pytest.raises(psycopg.errors.UniqueViolation),  # leaves it invalid
        ):
            conn.execute(f'CREATE UNIQUE INDEX CONCURRENTLY "{broken}" ON fact_vectors (scope)')
        text = _sentences(300, 5)[7]
        (through,) = stores.rows(postgres_url, "SELECT max(fact) FROM fact_vectors")[0]
        assert memory.recall(REF, text, top_k=1, mode="vector")[0].fact.content == text
        assert store.builder.settle(timeout=120)
        memory.remember(REF, "one more fact")  # searched exactly beside the new index
        assert stores.rows(postgres_url, GRAPHS) == [(index_name(REF.key, through, half=True),)]
        assert memory.recall(REF, text, top_k=1, mode="vector")[0].fact.content == text
    finally:
        memory.close()


def test_statements_are_prepared_and_still_planned_for_their_values(postgres_url: str) -> None:
    """A statement run often is prepared on its connection, and planned for each run's
    values and settings: a small scope walks its rows where a large one reads bitmaps, so
    no plan made for one scope may serve another."""
    from engram.storage.postgres.database import PREPARE_AFTER

    with engram.open(postgres_url, embedder=engram.HashingEmbedder(64)) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        with store.pg.transaction(write=False) as tx:
            assert tx.conn.prepare_threshold == PREPARE_AFTER
            shown = tx.conn.execute("SHOW plan_cache_mode").fetchone()
            assert shown == ("force_custom_plan",)


@pytest.fixture
def pinged(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The connections the pool's check pings (the driver's own ping, counted)."""
    from engram.storage.postgres import database

    seen: list[object] = []
    ping = database.ConnectionPool.check_connection

    def counted(conn: Any) -> None:
        seen.append(conn)
        ping(conn)

    monkeypatch.setattr(database.ConnectionPool, "check_connection", staticmethod(counted))
    return seen


def _until_none(postgres_url: str, where: str, params: tuple[Any, ...]) -> None:
    """Until the server lists no backend ``where`` says (a terminated one ends a moment
    after it is told to)."""
    deadline = time.monotonic() + 30
    while stores.rows(
        postgres_url, f"SELECT count(*) FROM pg_stat_activity WHERE {where}", params
    ) != [(0,)]:
        assert time.monotonic() < deadline, "the terminated backends did not end"
        time.sleep(0.01)


def test_a_pooled_connection_is_pinged_only_once_the_server_ended_or_wrote_to_it(
    postgres_url: str, pinged: list[object]
) -> None:
    """Handing out an idle pooled connection costs no round trip; one whose backend the
    server ended is found so before it is used, and replaced: the next call answers."""
    from engram.storage.postgres import database

    ours = database.APPLICATION.format(pid=os.getpid())
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(64)) as memory:
        texts = _sentences(60, 6)
        memory.remember_many(REF, texts)
        for text in texts[:5]:  # hybrid: two connections each
            assert memory.recall(REF, text, top_k=1)[0].fact.content == text
        assert pinged == []
        ended = stores.rows(
            postgres_url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?",
            (ours,),
        )
        assert ended and all(done for (done,) in ended)
        _until_none(postgres_url, "application_name = ?", (ours,))
        assert memory.recall(REF, texts[7], top_k=1)[0].fact.content == texts[7]
        assert pinged  # the ended ones, pinged and given up
        mine = "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
        assert stores.rows(postgres_url, mine, (ours,))[0][0] >= 1  # new ones


def test_a_connection_past_the_thousandth_descriptor_is_checked_as_well(
    postgres_url: str, pinged: list[object]
) -> None:
    """A process holding many files gets connections whose descriptors ``select`` cannot
    watch (past 1023): the pool's check still answers without a round trip, and still
    finds one the server ended."""
    import resource

    from engram.storage.postgres import database

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2048, hard), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            assert conn.fileno() > 1023
            database._alive(conn)
            assert pinged == []
            stores.rows(postgres_url, "SELECT pg_terminate_backend(?)", (conn.info.backend_pid,))
            _until_none(postgres_url, "pid = ?", (conn.info.backend_pid,))
            with pytest.raises(psycopg.OperationalError):
                database._alive(conn)
            assert pinged == [conn]
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _wait_for_a_free_connection(store: PostgresStore, timeout_s: float = 30.0) -> None:
    """Until the store's pool holds an idle connection (one given back by work started
    beside a transaction, after its answer)."""
    _wait_for_a_free_connection_in(store.pg, timeout_s)


def _wait_for_a_free_connection_in(db: Database, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while db._pool.get_stats().get("pool_available", 0) < 1:
        assert time.monotonic() < deadline, "no pooled connection was given back"
        time.sleep(0.001)


def test_the_halves_of_a_hybrid_recall_run_at_once_from_one_snapshot(postgres_url: str) -> None:
    """The vector half on another pooled connection sharing the transaction's snapshot:
    the same lists as one after the other, nothing written after the snapshot, and one
    after the other where no connection is free."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(postgres_url, embedder=embedder) as memory:
        memory.remember_many(REF, _sentences(200, 6))
        store = memory._store
        assert isinstance(store, PostgresStore)
        text = "w1 w2 w3 w4 late"
        terms, vector = ["w1", "w2", "w3", "w4", "late"], embedder.embed([text], "query")[0]
        with store.pg.transaction(write=False) as tx:
            tx.conn.execute("SELECT 1")  # the snapshot is taken here
            with engram.open(postgres_url, embedder=embedder) as other:
                late = other.remember(REF, text)
            started = store.pg.beside(tx, lambda conn: conn.execute("SELECT 1").fetchone())
            assert started is not None and store.pg.joined(started) == (1,)
            # answered before its transaction ends, and its connection given back after:
            # the next one waits for it to be free, as beside() itself does not
            _wait_for_a_free_connection(store)
            # an error in it is still the caller's
            failed = store.pg.beside(tx, lambda conn: conn.execute("SELECT 1/0").fetchone())
            assert failed is not None
            with pytest.raises(engram.EngramError, match="division by zero"):
                store.pg.joined(failed)
            _wait_for_a_free_connection(store)  # else the halves run one after the other
            told: list[list[Candidate]] = []

            def then(on: Any, found: list[Candidate]) -> None:
                assert on is not tx and on.conn is not tx.conn  # the other connection's
                (same,) = on.conn.execute("SELECT count(*) FROM facts").fetchone() or (0,)
                assert same == 200  # its snapshot is tx's: the late fact unseen
                told.append(found)

            lexical, semantic = store.candidates.both(
                tx, REF, terms, vector, Filters(), 20, then=then
            )
            assert told == [lexical] and lexical  # the text half, given as soon as found
            assert lexical == store.candidates.text(tx, REF, terms, Filters(), 20)
            assert semantic == store.candidates.vector(tx, REF, vector, Filters(), 20)
            assert late.id not in {c.id for c in lexical + semantic}
        assert memory.recall(REF, text, top_k=1)[0].fact.id == late.id
    one = Database(postgres_url, pool_size=1)
    try:
        with one.transaction(write=False) as tx:
            assert one.beside(tx, lambda conn: None) is None  # its one connection is tx's
        with one.transaction(write=True) as tx:
            assert one.beside(tx, lambda conn: None) is None  # a write keeps to itself
    finally:
        one.close()


def test_work_beside_takes_a_free_connection_though_its_thread_was_descheduled(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread descheduled between asking the pool and taking from it (a busy machine,
    another thread holding the interpreter) still gets the connection that waits there:
    the pool's clock here moves 10 ms each time it is read."""
    import psycopg_pool.pool

    db = Database(postgres_url, pool_size=2)
    try:
        with db.transaction(write=False) as tx:
            tx.conn.execute("SELECT 1")
            _wait_for_a_free_connection_in(db)
            clock = [time.monotonic()]

            def descheduled() -> float:
                clock[0] += 0.01
                return clock[0]

            monkeypatch.setattr(psycopg_pool.pool, "monotonic", descheduled)
            started = db.beside(tx, lambda conn: conn.execute("SELECT 2").fetchone())
            monkeypatch.undo()
            assert started is not None and db.joined(started) == (2,)
    finally:
        db.close()


def test_the_vector_half_s_first_statement_exports_the_snapshot_beside_it(
    postgres_url: str,
) -> None:
    """The statement that reads how a scope's vectors are searched also exports the
    transaction's snapshot, which work beside it imports (no round trip of its own); a
    savepoint, which cannot export one, plans without it and runs the halves in turn."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(postgres_url, embedder=embedder) as memory:
        memory.remember_many(REF, _sentences(50, 6))
        store = memory._store
        assert isinstance(store, PostgresStore)
        with store.pg.transaction(write=False) as tx:
            planned = vectors.plan(tx.conn, REF.key, 10, export=True)
            assert planned.dimension == 64 and planned.snapshot
            with engram.open(postgres_url, embedder=embedder) as other:
                other.remember(REF, "written after the snapshot")
            _wait_for_a_free_connection(store)
            started = store.pg.beside(
                tx,
                lambda conn: conn.execute("SELECT count(*) FROM facts").fetchone(),
                planned.snapshot,
            )
            assert started is not None and store.pg.joined(started) == (50,)
            assert vectors.plan(tx.conn, REF.key, 10).snapshot is None
        text = "w1 w2 w3 late"
        vector = embedder.embed([text], "query")[0]
        with store.pg.transaction(write=False) as tx, tx.nested(write=False):
            assert not store.pg.may_beside(tx)
            lexical, semantic = store.candidates.both(tx, REF, text.split(), vector, Filters(), 10)
            assert semantic == store.candidates.vector(tx, REF, vector, Filters(), 10)
            assert lexical == store.candidates.text(tx, REF, text.split(), Filters(), 10)


# -- backups ------------------------------------------------------------------------------
def test_a_pg_dump_backup_under_concurrent_writes_is_one_verified_snapshot(
    postgres_url: str, tmp_path: Path
) -> None:
    memory = engram.open(postgres_url, embedder=engram.HashingEmbedder(16))
    memory.remember_many(REF, [f"before {i}" for i in range(300)])
    try:
        with stores.writing_meanwhile(memory, REF):
            made = [
                pg_backups.backup(postgres_url, tmp_path / "backups", tools_dir=TOOLS)
                for _ in range(2)
            ]
    finally:
        memory.close()
    for backup_dir in made:
        manifest = json.loads((backup_dir / "manifest.json").read_text())
        counts = manifest["counts"]
        assert counts["facts"] >= 300 and counts["facts"] == counts["fact_vectors"]
        assert manifest["sha256"] == staging.sha256(backup_dir / "engram.dump")
        assert "s3cret" not in json.dumps(manifest)
    assert staging.complete_backups(tmp_path / "backups") == made


def test_the_cli_restores_a_backup_and_keeps_the_store_it_replaced(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with engram.open(postgres_url, embedder=None) as memory:
        memory.working.set(REF, "k", "backed up")
    dest = tmp_path / "b"
    for _ in range(3):
        assert main(["--db", postgres_url, "backup", str(dest), "--keep", "2"]) == 0
    made = staging.complete_backups(dest)
    assert len(made) == 2
    with engram.open(postgres_url, embedder=None) as memory:
        memory.working.set(REF, "k", "changed since")
        # refused while another engram process (this one) is connected, naming it
        done = subprocess.run(
            [ENGRAM, "--db", postgres_url, "restore", str(made[-1])],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 4, done.stderr
        assert f"(pid {os.getpid()} on " in done.stderr and "nothing was restored" in done.stderr
        assert memory.working.get(REF, "k") == "changed since"
    assert list(dest.glob(f"{pg_backups.KEPT_PREFIX}*")) == []
    capsys.readouterr()
    assert main(["--db", postgres_url, "--json", "restore", str(made[-1])]) == 0
    kept = Path(json.loads(capsys.readouterr().out)["kept"])
    assert kept.parent == dest and kept.name.startswith(pg_backups.KEPT_PREFIX)
    with engram.open(postgres_url, embedder=None) as memory:
        assert memory.working.get(REF, "k") == "backed up"
    assert staging.complete_backups(dest) == made  # the kept one is out of the rotation
    # the kept backup is itself one to restore: it puts back what the restore replaced
    assert main(["--db", postgres_url, "restore", str(kept)]) == 0
    with engram.open(postgres_url, embedder=None) as memory:
        assert memory.working.get(REF, "k") == "changed since"


def test_a_restore_refused_or_failing_leaves_the_database_as_it_was(
    postgres_url: str, tmp_path: Path
) -> None:
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(16)) as memory:
        memory.remember_many(REF, ["backed up one", "backed up two"])
    made = pg_backups.backup(postgres_url, tmp_path / "b", tools_dir=TOOLS)
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(16)) as memory:
        memory.remember(REF, "written since")
    facts = "SELECT content FROM facts ORDER BY content"
    before = stores.rows(postgres_url, facts)
    # a store of another schema version has tables the dump does not name: refused
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO engram_schema SELECT max(version) + 1 FROM engram_schema")
        with pytest.raises(engram.Conflict, match=f"version {len(MIGRATIONS)} and the data"):
            pg_backups.restore(made, postgres_url, tools_dir=TOOLS)
        conn.execute("DELETE FROM engram_schema WHERE version > %s", (len(MIGRATIONS),))
    assert list((tmp_path / "b").glob(f"{pg_backups.KEPT_PREFIX}*")) == []
    dump = made / pg_backups.DUMP_NAME
    whole = dump.read_bytes()
    dump.write_bytes(whole[:-1] + bytes([whole[-1] ^ 1]))
    with pytest.raises(engram.InvalidInput, match="sha256 differs"):
        pg_backups.restore(made, postgres_url, tools_dir=TOOLS)
    # cut short, its manifest made to match: pg_restore fails inside its one transaction
    dump.write_bytes(whole[: len(whole) * 3 // 4])
    manifest = json.loads((made / staging.MANIFEST).read_text())
    (made / staging.MANIFEST).write_text(json.dumps({**manifest, "sha256": staging.sha256(dump)}))
    with pytest.raises(StorageFailure, match="pg_restore failed"):
        pg_backups.restore(made, postgres_url, tools_dir=TOOLS)
    assert stores.rows(postgres_url, facts) == before
    assert len(before) == 3
    assert list((tmp_path / "b").glob(f"{pg_backups.KEPT_PREFIX}*")) == []


def test_a_restored_scope_searches_its_graph_at_once(
    postgres_url: str, postgres_admin: str, tmp_path: Path
) -> None:
    """pg_restore builds the scope's graph; the restore then analyses the tables, without
    which the planner, told nothing of how many rows the scope has, sorted them all
    rather than search the graph (as right after a build: see above)."""
    embedder = engram.HashingEmbedder(64)
    with engram.open(postgres_url, embedder=embedder, vector_index_above=100) as memory:
        memory.remember_many(REF, _sentences(4000, 3))
        assert memory._store.builder.settle(timeout=120)
    graph = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")
    made = pg_backups.backup(postgres_url, tmp_path / "b", tools_dir=TOOLS)
    into = postgres_server.create_database(postgres_admin)
    try:
        assert pg_backups.restore(made, into, tools_dir=TOOLS) is None  # it held no store
        valid = "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        valid += "WHERE i.indisvalid AND starts_with(c.relname, 'fact_ann_')"
        assert stores.rows(into, valid) == graph
        assert stores.rows(into, "SELECT ann_index FROM scope_state") == graph
        query = np.asarray(embedder.embed(["w1 w2 w3"], "query")[0], np.float32)
        assert f"Index Scan using {graph[0][0]} " in _searched_through(into, query, 100)
    finally:
        postgres_server.drop_database(postgres_admin, into)


def test_without_pg_dump_a_backup_says_what_is_missing_and_leaves_nothing(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engram.open(postgres_url, embedder=None).close()
    missing = str(tmp_path / "no-tools")
    with pytest.raises(StorageFailure, match="without pg_dump") as refused:
        pg_backups.backup(postgres_url, tmp_path / "b", tools_dir=missing)
    assert "ENGRAM_PG_BIN" in str(refused.value.hint)
    monkeypatch.setenv("ENGRAM_PG_BIN", missing)  # the setting reaches the command line's backup
    assert main(["--db", postgres_url, "backup", str(tmp_path / "b")]) == 7
    assert not (tmp_path / "b").exists() or list((tmp_path / "b").iterdir()) == []


def test_a_dump_that_does_not_verify_leaves_nothing_behind(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engram.open(postgres_url, embedder=None).close()
    monkeypatch.setattr(pg_backups, "_count_dump", lambda tool, dump: {"facts": -1})
    with pytest.raises(StorageFailure, match="holds"):
        pg_backups.backup(postgres_url, tmp_path / "b", tools_dir=TOOLS)
    assert list((tmp_path / "b").iterdir()) == []


def test_an_erase_cancels_its_scopes_index_build_in_progress(postgres_url: str) -> None:
    """Erasing a scope whose index is being built cancels the build instead of waiting for
    it (the build's concurrent phases wait for the erase's transaction in turn)."""
    # no build asked by the writes: the test starts the one it erases during
    memory = engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=10**9
    )
    store = memory._store
    assert isinstance(store, PostgresStore)
    outcome: dict[str, object] = {}

    def build() -> None:
        try:
            outcome["built"] = store.pg.autocommit(lambda c: vectors.build_index(c, REF.key))
        except StorageFailure as failed:
            outcome["failed"] = failed

    # A snapshot older than the build holds its last phase until this transaction ends,
    # so the erase surely meets the build running, however fast or busy the machine.
    try:
        with psycopg.connect(postgres_url) as holding:
            holding.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            holding.execute("SELECT 1").fetchall()
            try:
                memory.remember_many(
                    REF, [f"fact {i} " + s for i, s in enumerate(_sentences(2_000, 12))]
                )
                builder = threading.Thread(target=build)
                builder.start()
                _wait_for_a_build(postgres_url)
                memory.forget_all(REF, expected_count=memory.count(REF), hard=True)
                builder.join(timeout=600)
            finally:
                holding.rollback()
        assert "canceling statement" in str(outcome.get("failed")), outcome
        assert stores.rows(postgres_url, GRAPHS) == []
    finally:
        memory.close()


def test_closing_cancels_an_index_build_in_progress_without_a_failure(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A store closed while the build its writes asked for runs cancels the build and
    says so, without reporting a failure; nothing is left building."""
    memory = engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=1_000
    )
    texts = [f"fact {i} " + s for i, s in enumerate(_sentences(2_000, 12))]
    # A snapshot older than the build holds its last phase until this transaction ends,
    # so the build is surely still running when the store closes, however fast or busy
    # the machine (20,000 facts to make it long enough lost that race under load).
    with psycopg.connect(postgres_url) as holding:
        holding.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holding.execute("SELECT 1").fetchall()
        try:
            memory.remember_many(REF, texts)
            _wait_for_a_build(postgres_url)
            with caplog.at_level(logging.INFO, logger="engram.storage"):
                memory.close()
        finally:
            holding.rollback()
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "engram.storage"]
    assert [m for level, m in said if level >= logging.WARNING] == []
    assert any("cancelled" in m for _, m in said), said
    assert stores.rows(postgres_url, _BUILDING) == [(0,)]


def test_closing_before_the_build_reaches_its_index_stops_it_there(postgres_url: str) -> None:
    """A store closed while its index build is still on a statement before the index (here
    its first look at the scope, held by a lock) stops the build there: the close does not
    wait for that statement and then for the whole build after it."""
    memory = engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=10**9
    )
    store = memory._store
    assert isinstance(store, PostgresStore)
    memory.remember_many(REF, [f"fact {i} " + s for i, s in enumerate(_sentences(1_500, 12))])
    closing = threading.Thread(target=memory.close)
    with psycopg.connect(postgres_url) as holding:
        holding.execute("LOCK TABLE scope_state IN ACCESS EXCLUSIVE MODE")
        try:
            store.ann_above = 1_000
            store.builder.want(REF.key)
            deadline = time.monotonic() + 60
            while stores.rows(postgres_url, _WAITING_ON_A_LOCK) != [(1,)]:
                assert time.monotonic() < deadline, "the build never reached the lock"
            closing.start()
            closing.join(60)
            assert not closing.is_alive(), "the close waited for the build"
        finally:
            holding.rollback()
            closing.join(600)
    assert stores.rows(postgres_url, "SELECT ann_index FROM scope_state") == [(None,)]
    assert stores.rows(postgres_url, GRAPHS) == []


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_process_that_only_reads_asks_for_the_index_its_scope_wants(
    postgres_url: str, mode: str
) -> None:
    """A scope filled by a process that closed before its index was built (an import from
    the command line) gets its index from the next process that searches it, not only
    from the next that writes: a service that only reads would search it exactly for
    good."""
    with engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=10**9
    ) as memory:
        memory.remember_many(REF, [f"fact {i} " + s for i, s in enumerate(_sentences(1_500, 12))])
    with engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=1_000
    ) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        wanted = "fact 7 " + _sentences(1_500, 12)[7]
        assert memory.recall(REF, wanted, top_k=1, mode=mode)[0].fact.content == wanted
        assert store.builder.settle(120)
        (built,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        assert built is not None
        assert memory.recall(REF, wanted, top_k=1, mode=mode)[0].fact.content == wanted


def test_a_scope_another_process_is_indexing_is_left_to_it_for_a_while(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another process builds a scope's index (here: holds the build's lock), every
    search here finds the scope wanting one; the first ask finds the build elsewhere and
    the next are not sent, until ``ELSEWHERE_FOR`` has passed."""
    from engram.storage.postgres import store as pg_store

    with engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=10**9
    ) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        texts = [f"fact {i} " + s for i, s in enumerate(_sentences(1_500, 12))]
        memory.remember_many(REF, texts)
        store.ann_above = 1_000
        tried: list[bool | None] = []
        build = vectors.build_index

        def counted(conn: Any, scope: str) -> bool | None:
            tried.append(build(conn, scope))
            return tried[-1]

        monkeypatch.setattr(vectors, "build_index", counted)
        clock = [0.0]
        store.builder.now = lambda: clock[0]
        with psycopg.connect(postgres_url, autocommit=True) as elsewhere:
            elsewhere.execute("SELECT pg_advisory_lock(%s)", (vectors.build_lock(REF.key),))
            for text in texts[:5]:
                assert memory.recall(REF, text, top_k=1, mode="vector")[0].fact.content == text
                assert store.builder.settle(120)
            assert tried == [None]
            # let go by a statement that returns once it is let go: closing the
            # connection returns before the server's session ends (seen failing once,
            # the next build finding the lock still held)
            elsewhere.execute("SELECT pg_advisory_unlock(%s)", (vectors.build_lock(REF.key),))
        clock[0] += pg_store.ELSEWHERE_FOR
        memory.recall(REF, texts[0], top_k=1, mode="vector")
        assert store.builder.settle(120)
        assert tried == [None, True]


def test_a_build_drops_an_index_its_scope_does_not_name(postgres_url: str) -> None:
    """A build stopped after its index was made but before the scope named it leaves a
    valid index nothing reads; the scope's next build drops it."""
    with engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=1_000
    ) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        memory.remember_many(REF, [f"fact {i} " + s for i, s in enumerate(_sentences(1_500, 12))])
        assert store.builder.settle(120)
        (named,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        stray = vectors.index_name(REF.key) + "_1_e1"
        create = (
            f'CREATE INDEX "{stray}" ON fact_vectors USING hnsw '
            "((vector::vector(64)) vector_cosine_ops) WHERE fact <= 1"
        )
        stores.rows(postgres_url, "SELECT 1", setup=(create,))
        memory.remember_many(REF, [f"more {i} " + s for i, s in enumerate(_sentences(600, 13))])
        assert store.builder.settle(120)
    kept = [name for (name,) in stores.rows(postgres_url, GRAPHS)]
    assert stray not in kept and named not in kept and len(kept) == 1, kept


def test_a_recent_graph_s_build_keeps_the_graphs_searched_and_drops_a_stray(
    postgres_url: str,
) -> None:
    """A recent graph's build drops a stray index of its scope (one a stopped build left)
    and keeps the big graph; the next recent graph replaces the last, and the big one
    stays until a big build replaces both."""
    with engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=100
    ) as memory:
        store = memory._store
        assert isinstance(store, PostgresStore)
        memory.remember_many(REF, _sentences(1000, 14))
        assert store.builder.settle(120)
        (named,) = stores.rows(postgres_url, "SELECT ann_index FROM scope_state")[0]
        stray = vectors.index_name(REF.key, 1, recent=True)
        create = (
            f'CREATE INDEX "{stray}" ON fact_vectors USING hnsw '
            "((vector::vector(64)) vector_cosine_ops) WHERE fact <= 1"
        )
        stores.rows(postgres_url, "SELECT 1", setup=(create,))
        graphs = "SELECT ann_index, recent_index FROM scope_state"
        for batch in range(2):  # past the threshold, then past it again after the first
            memory.remember_many(REF, _sentences(101, 15 + batch))
            assert store.builder.settle(120)
            (big, recent) = stores.rows(postgres_url, graphs)[0]
            assert big == named and recent is not None
            assert sorted(n for (n,) in stores.rows(postgres_url, GRAPHS)) == sorted([big, recent])


def test_a_write_during_its_scopes_index_build_asks_for_the_next_build(
    postgres_url: str,
) -> None:
    """Facts written while their scope's index is being built, past the share it may
    leave out, get the next build once that one ends: the ask is not dropped because a
    build was running."""
    memory = engram.open(
        postgres_url, embedder=engram.HashingEmbedder(64), vector_index_above=1_000
    )
    store = memory._store
    assert isinstance(store, PostgresStore)
    texts = [f"fact {i} " + s for i, s in enumerate(_sentences(4_000, 13))]
    # A snapshot older than the build holds its last phase until this transaction ends,
    # so the second write surely commits while the first build runs.
    with psycopg.connect(postgres_url) as holding:
        holding.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holding.execute("SELECT 1").fetchall()
        try:
            memory.remember_many(REF, texts[:2_000])
            _wait_for_a_build(postgres_url)
            memory.remember_many(REF, texts[2_000:])
        finally:
            holding.rollback()
    try:
        assert store.builder.settle(120)
        covered = stores.rows(
            postgres_url,
            "SELECT ann_rows, facts FROM scope_state WHERE scope = ?",
            (REF.key,),
        )
        assert covered == [(4_000, 4_000)]
    finally:
        memory.close()


_WAITING_ON_A_LOCK = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE wait_event_type = 'Lock' AND query LIKE '%%scope_state%%' AND state = 'active'"
)
_BUILDING = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE starts_with(query, 'CREATE INDEX CONCURRENTLY') AND state = 'active'"
)


def _wait_for_a_build(url: str) -> None:
    """Returns once an index build is running on the server (a minute at most)."""
    deadline = time.monotonic() + 60
    while stores.rows(url, _BUILDING) != [(1,)]:
        assert time.monotonic() < deadline, "no build started"


def test_a_fact_coming_or_leaving_fires_no_trigger_row_by_row(postgres_url: str) -> None:
    """Three row-level triggers on each of facts and the trash asked about every row
    that left (150 ms a thousand of a 100k revert's restores, 15 s of its 46), and one
    queued each fact that came; the mentions' asked each whether another grounds its
    entity (the next test): what a fact's coming or leaving deletes or queues beside it
    runs once a statement (what it does is the graph's, derived copies', feedback's and
    documents' tests' to hold)."""
    by_row = (
        "SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal "
        "AND tgrelid IN ('facts'::regclass, 'fact_trash'::regclass, 'mentions'::regclass) "
        "AND tgtype & 1 = 1 AND tgtype & 12 <> 0 ORDER BY 1, 2"
    )
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(16)):
        assert stores.rows(postgres_url, by_row) == []


def test_a_fact_s_leaving_takes_its_graph_rows_once_a_statement(postgres_url: str) -> None:
    """Row by row, each mention that left asked whether another still grounds its entity,
    walking the mentions its own transaction had deleted: a soft forget of a 100k-fact
    scope took each chunk longer than the last (3.3 s, then 13.8 by the sixth). Both
    triggers now run once a statement, over the rows it removed, with the same result
    (the test above reads their level)."""
    other = ResourceRef("graph-kept")
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(REF, [f"Ana Lima wrote note {i} in Porto" for i in range(40)])
        zed = mem.remember(REF, "Zed Quill arrived late")
        mem.remember(other, "Ana Lima lives in Porto")
        mem.forget(REF, zed.id)
        with pytest.raises(engram.NotFound):
            mem.graph.entity(REF, "Zed Quill")
        assert mem.graph.entity(REF, "Ana Lima").name == "Ana Lima"
        mem.forget_all(REF, expected_count=40)
        for name in ("Ana Lima", "Porto"):
            with pytest.raises(engram.NotFound):
                mem.graph.entity(REF, name)
            assert mem.graph.entity(other, name).name == name  # another scope's stays
        left = "SELECT count(*) FROM mentions WHERE scope = ?"
        assert stores.rows(postgres_url, left, (REF.key,)) == [(0,)]
        assert mem.health(REF, graph_drift=True).graph.drift.in_step
