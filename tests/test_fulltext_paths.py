"""The two ways the full-text half reaches a scope must agree, and the counts that choose
between them must stay exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import engram
import stores
from engram import Note, ResourceRef
from engram.core.models import Filters
from engram.storage.postgres import PostgresStore
from engram.storage.postgres.postings import Postings
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import text_candidates_sql
from stores import Target


def _ranked(db_path: Path, scope: ResourceRef, terms: list[str], outside: int) -> list[str]:
    sql, params = text_candidates_sql(terms, scope.key, Filters(), 10, outside)
    conn = sqlite3.connect(db_path)
    try:
        return [row[0] for row in conn.execute(sql, params)]
    finally:
        conn.close()


def test_without_the_scope_token_the_same_rows_come_back(db_path: Path) -> None:
    """SQLite's FTS5 scope token (PostgreSQL filters its GIN matches by scope instead)."""
    with engram.open(db_path, embedder=engram.HashingEmbedder(64)) as mem:
        _scope_token_paths_agree(mem, db_path)


def _scope_token_paths_agree(mem: engram.Memory, db_path: Path) -> None:
    big, small = ResourceRef("big"), ResourceRef("small")
    mem.remember_many(big, [f"apple note number {i}" for i in range(40)])
    # the other scope's facts rank above every one of big's for this query
    mem.remember_many(small, [f"apple apple apple {i}" for i in range(5)])
    narrowed = _ranked(db_path, big, ["apple"], outside=10**9)
    whole = _ranked(db_path, big, ["apple"], outside=5)
    assert whole == narrowed and len(whole) == 10
    stored = {f.id for f in mem.facts(big, limit=1000).facts}
    assert set(whole) <= stored
    hits = mem.recall(small, "apple", mode="text", top_k=10)
    assert {h.fact.scope for h in hits} == {small}


def _counts(target: Target) -> tuple[dict[str, int], dict[str, int]]:
    kept = dict(stores.rows(target, "SELECT scope, facts FROM scope_state WHERE facts != 0"))
    real = dict(stores.rows(target, "SELECT scope, count(*) FROM facts GROUP BY scope"))
    return kept, real


def test_fact_counts_follow_every_change(mem: engram.Memory, target: Target) -> None:
    ref = ResourceRef("counted")
    old = datetime.now(UTC) - timedelta(days=90)
    facts = mem.remember_many(ref, [Note(f"fact {i}", created_at=old) for i in range(3)])
    mem.remember_many(ref, ["fresh one", "fresh two", "fresh one"])  # a duplicate too
    mem.forget(ref, facts[0].id)
    mem.forget(ref, facts[0].id)  # already gone
    mem.correct(ref, facts[1].id, "fact one, corrected")
    child = mem.fork(ref, "child").ref
    mem.remember(child, "only in the child")
    assert mem.compact(ref, max_age=timedelta(days=30)).removed == 2
    assert mem.compact(child, max_facts=2).removed == 3
    kept, real = _counts(target)
    assert kept == real
    mem.forget_all(child, expected_count=2)
    kept, real = _counts(target)
    assert kept == real == {ref.key: 2}


# PostgreSQL's postings (migration 15): what each word weighs in each fact, and each
# word's count of facts in its scope, as the facts' own tsvectors give them.
_POSTINGS = (
    "SELECT scope, term, impact, fact FROM fact_terms ORDER BY 1, 2, 3, 4",
    "SELECT f.scope, u.lexeme, ts_rank(f.words, engram_term_query(u.lexeme), 1), f.seq "
    "FROM facts f, unnest(f.words) u ORDER BY 1, 2, 3, 4",
)
_WORD_COUNTS = (
    "SELECT scope, term, facts FROM scope_terms ORDER BY 1, 2",
    "SELECT f.scope, u.lexeme, count(*) FROM facts f, unnest(f.words) u "
    "GROUP BY 1, 2 ORDER BY 1, 2",
)
# Words whose lexemes need quoting in a tsquery, and repeated words.
_AWKWARD = [
    "O'Brien's report on rock'n'roll",
    "the path C:\\\\temp\\\\notes and back\\\\slash",
    "apple apple apple pie",
    "quotes 'single' and \"double\" around words",
    "café déjà vu naïve résumé",
]


def _postings_match(url: str) -> None:
    for kept, recomputed in (_POSTINGS, _WORD_COUNTS):
        assert stores.rows(url, kept) == stores.rows(url, recomputed)


def test_postgres_postings_follow_every_change(postgres_store_url: str) -> None:
    ref, other = ResourceRef("posted"), ResourceRef("elsewhere")
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as mem:
        facts = mem.remember_many(ref, [*_AWKWARD, "fresh one", "fresh two", "fresh one"])
        mem.remember_many(other, ["apple pie elsewhere", _AWKWARD[0]])
        _postings_match(postgres_store_url)
        mem.forget(ref, facts[2].id)  # to the trash: its postings leave
        mem.correct(ref, facts[0].id, "O'Hara's corrected report")
        _postings_match(postgres_store_url)
        assert mem.restore(ref, facts[2].id) is not None
        child = mem.fork(ref, "child").ref
        mem.remember(child, "only in the child")
        mem.forget(ref, facts[1].id, hard=True)
        _postings_match(postgres_store_url)
        gone = "SELECT 1 FROM scope_terms WHERE scope = ? AND term = 'temp'"
        assert not stores.rows(postgres_store_url, gone, (ref.key,))
        mem.forget_all(child, expected_count=len(mem.facts(child, limit=100).facts))
        _postings_match(postgres_store_url)
        held = stores.rows(postgres_store_url, "SELECT DISTINCT scope FROM fact_terms ORDER BY 1")
        assert [r[0] for r in held] == sorted([ref.key, other.key])


def _rows_read(url: str, statement: str, params: tuple[object, ...]) -> dict[str, int]:
    """The postings' and word counts' rows a statement (and its triggers) reads, as the
    server counts them; the statement is rolled back."""
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute(statement.encode(), params)
        read = conn.execute(
            "SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
            "FROM pg_stat_xact_user_tables WHERE relname IN ('fact_terms', 'scope_terms')"
        ).fetchall()
        conn.rollback()
    return {str(name): int(n) for name, n in read}


def test_postgres_postings_leave_in_work_that_grows_with_what_leaves(postgres_url: str) -> None:
    """Erasing a scope reads each posting and word count a few times, not once for each
    fact removed, and changing one fact's words reads that fact's, on a scope just filled
    (its tables not yet analysed, as after a bulk import)."""
    ref, words = ResourceRef("erased"), 3_000
    texts = [f"w{i} w{(i * 7) % words} w{(i * 13) % words} common" for i in range(words)]
    with engram.open(postgres_url, embedder=engram.HashingEmbedder(64)) as mem:
        mem.remember_many(ref, texts)
    held = "SELECT 1 FROM fact_terms WHERE scope = ?"
    postings = len(stores.rows(postgres_url, held, (ref.key,)))
    assert postings >= 3 * words
    erase = _rows_read(postgres_url, "DELETE FROM facts WHERE scope = %s", (ref.key,))
    # one read of each row per statement, and a little: not one per fact removed
    assert erase["fact_terms"] <= 2 * postings, erase
    assert erase["scope_terms"] <= 4 * (words + 1), erase
    change = _rows_read(
        postgres_url,
        "UPDATE facts SET context = 'w1 w2 and more' WHERE scope = %s AND content = %s",
        (ref.key, texts[5]),
    )
    assert change["fact_terms"] <= 20 and change["scope_terms"] <= 20, change
    _postings_match(postgres_url)


def test_postgres_postings_are_written_for_a_store_from_before(postgres_store_url: str) -> None:
    ref = ResourceRef("older")
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as mem:
        mem.remember_many(ref, _AWKWARD)
    stores.as_postgres_schema_14(postgres_store_url)
    assert not stores.rows(postgres_store_url, "SELECT to_regclass('fact_terms')")[0][0]
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as mem:
        hits = mem.recall(ref, "rock and roll report", mode="text", top_k=3)
        assert hits and "rock'n'roll" in hits[0].fact.content
        mem.remember(ref, "a report written after")
    _postings_match(postgres_store_url)
    assert len(stores.rows(postgres_store_url, "SELECT * FROM fact_terms")) > 20


def test_postgres_postings_rank_as_the_statement(
    postgres_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Summed from the postings, or ranked over every match's tsvector: the same facts in
    the same order, with the same scores (up to the order of a sum's terms)."""
    import random

    import psycopg

    from engram.storage.postgres import fulltext

    rng = random.Random(7)
    vocabulary = ["apple", "river", "stone", "Bruno's", "running", "ran", "e-mail", "x"]
    ref = ResourceRef("ranked")
    texts = {" ".join(rng.choices(vocabulary, k=rng.randint(1, 9))) + f" n{i}" for i in range(300)}
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as mem:
        mem.remember_many(ref, [*texts, *_AWKWARD])
        mem.remember_many(ResourceRef("noise"), [*texts][:50])
    queries = [
        ["apple"],
        ["apple", "river"],
        ["run", "stone", "stone"],  # a word asked twice counts twice
        ["bruno", "the", "apple"],  # a stop word
        ["brien", "rock"],
        ["temp", "notes", "slash"],
        ["cafe", "café"],
        ["absent"],
        ["absent", "x"],
    ]
    ranked = fulltext._from_postings
    copies = Postings()
    with psycopg.connect(postgres_store_url, autocommit=True) as conn:
        for terms in queries:
            fast = ranked(conn, ref.key, terms, 40)
            assert fast is not None, terms
            for _ in range(2):  # summed in this process: read, then from its copies
                copied = ranked(conn, ref.key, terms, 40, copies)
                assert copied is not None, terms
                assert [(c.id, round(c.score, 12)) for c in copied] == [
                    (c.id, round(c.score, 12)) for c in fast
                ], terms
            monkeypatch.setattr(fulltext, "_from_postings", lambda *a: None)
            slow = fulltext.candidates(conn, ref.key, terms, Filters(), 40)
            monkeypatch.setattr(fulltext, "_from_postings", ranked)
            assert [round(c.score, 12) for c in fast] == [round(c.score, 12) for c in slow], terms
            by_score = {round(c.score, 12): set() for c in slow}
            for c in slow:
                by_score[round(c.score, 12)].add(c.id)
            for c in fast:  # ties may fall either way where sums differ in the last bit
                assert c.id in by_score[round(c.score, 12)], terms

            # every fact holding a word, from the postings and through the GIN index
            def holding(terms: list[str]) -> set[str]:
                select, params = fulltext.holding(conn, ref.key, terms)
                return {str(r[0]) for r in conn.execute(select, params)}

            held = holding(terms)
            lexemes = fulltext._lexemes
            monkeypatch.setattr(fulltext, "_lexemes", lambda *a: None)
            assert held == holding(terms), terms
            monkeypatch.setattr(fulltext, "_lexemes", lexemes)
        # a word of several lexemes is left to the statement
        for word in ("e-mail", "o'brien"):
            assert ranked(conn, ref.key, [word], 40) is None
            assert fulltext.candidates(conn, ref.key, [word], Filters(), 40)


def test_postgres_postings_rank_a_filter_s_facts_as_the_statement(
    postgres_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a filter, the postings' copies rank the filter's facts alone, as the
    statement does (it scores every match, then keeps those that pass): the few that pass,
    the first passing of the best, or, where too few of those pass, every passing fact."""
    import random

    from engram.core import query
    from engram.storage.postgres import fulltext
    from engram.storage.sql import passing

    rng = random.Random(8)
    words = ["camera", "flight", "river", "stone", "apple", "report", "harbour", "violin"]
    ref, other = ResourceRef("filtered"), ResourceRef("filtered-other")
    texts = [" ".join(rng.choices(words, k=rng.randint(2, 7))) + f" n{i}" for i in range(300)]
    notes = stores.filtered_notes(texts)
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as mem:
        store = mem._store
        assert isinstance(store, PostgresStore)
        mem.remember_many(ref, notes)
        mem.remember_many(ref, [Note(f"camera report t{i}", tags=("x",)) for i in range(30)])
        mem.remember_many(other, [Note(n.content, tags=("x",)) for n in notes[:80]])

        def both(terms: list[str], kept: Filters, limit: int) -> tuple[list[Any], list[Any]]:
            fast = stores.text_candidates(store, ref, terms, kept, limit)
            with monkeypatch.context() as statement:  # the postings answer nothing
                statement.setattr(fulltext, "_from_postings", lambda *a: None)
                statement.setattr(fulltext, "_passing_of_best", lambda *a: None)
                slow = stores.text_candidates(store, ref, terms, kept, limit)
            return fast, slow

        def same(fast: list[Any], slow: list[Any], why: object) -> None:
            assert [round(c.score, 12) for c in fast] == [round(c.score, 12) for c in slow], why
            tied: dict[float, set[str]] = {}
            for c in slow:
                tied.setdefault(round(c.score, 12), set()).add(c.id)
            for c in fast:  # ties may fall either way where sums differ in the last bit
                assert c.id in tied[round(c.score, 12)], why
            assert all(c.traits is not None for c in fast), why  # not the statement's

        queries = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(8)]
        queries += ["camera report", "camera"]
        for kept in stores.six_filters():
            for text in queries:
                terms = query.terms(text)
                for limit in (1000, 10):
                    same(*both(terms, kept, limit), (kept, text, limit))
        held = 30 + sum("camera" in n.content.split() for n in notes[::3])
        tagged = stores.text_candidates(store, ref, ["camera"], Filters(tags=("x",)), 1000)
        assert len(tagged) == held

        reads = stores.count_passing_rows(monkeypatch, 50)
        for kept, *read in stores.FEW_CASES:
            for asks, expected in zip((2, 1), read, strict=True):
                monkeypatch.setattr(passing, "ASKS", asks)
                reads.clear()
                fast, slow = both(["camera"], kept, 10)
                same(fast, slow, kept)
                assert fast and len(reads) == expected, (kept, asks)


def test_postgres_a_type_a_twentieth_have_is_found_among_a_best_asked_as_wide_as_its_share_says(
    postgres_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on SQLite (``test_textindex``), ranked from the process's postings
    (:func:`stores.a_twentieth_found_as_wide_as_its_share_says`)."""
    from engram.storage.postgres import fulltext

    ref = ResourceRef("twentieth")
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(64)) as mem:
        store = mem._store
        assert isinstance(store, PostgresStore)
        mem.remember_many(ref, stores.TWENTIETH)
        with monkeypatch.context() as statement:  # the postings answer nothing
            statement.setattr(fulltext, "_from_postings", lambda *a: None)
            statement.setattr(fulltext, "_passing_of_best", lambda *a: None)
            expected = stores.text_candidates(store, ref, ["camera"], Filters(type="plan"), 10)
        read: list[int] = []
        candidates = fulltext._candidates

        def reading(conn: Any, best: list[tuple[int, float]]) -> Any:
            read.extend(seq for seq, _ in best)
            return candidates(conn, best)

        monkeypatch.setattr(fulltext, "_candidates", reading)
        stores.a_twentieth_found_as_wide_as_its_share_says(
            monkeypatch, postgres_store_url, store, ref, expected, read
        )


def test_postgres_postings_copied_in_a_process_follow_every_change_to_the_scope(
    postgres_store_url: str,
) -> None:
    """A process sums the postings it read before while its scope's words are unchanged:
    a fact remembered, forgotten, corrected or restored through another store (another
    process) is ranked as the server ranks it at once, and a forgotten one never comes
    back from the copies."""
    ref, other = ResourceRef("copied"), ResourceRef("copied-other")
    embedder = engram.HashingEmbedder(64)
    texts = [f"river stone {w} n{i}" for i, w in enumerate(["apple"] * 30 + ["pear"] * 30)]
    with (
        engram.open(postgres_store_url, embedder=embedder) as reader,
        engram.open(postgres_store_url, embedder=embedder) as writer,
    ):
        store = reader._store
        assert isinstance(store, PostgresStore)

        def ids(text: str = "apple river") -> list[str]:
            return [h.fact.id for h in reader.recall(ref, text, mode="text", top_k=50)]

        def served(text: str = "apple river") -> list[str]:
            copies, store.postings = store.postings, None  # type: ignore[assignment]
            try:
                return ids(text)
            finally:
                store.postings = copies

        facts = writer.remember_many(ref, texts)
        writer.remember_many(other, ["apple apple river"])  # another scope's change
        assert ids() == served() and len(ids()) == 50
        held = store.postings._copies.held(ref.key).version  # type: ignore[union-attr]
        writer.remember_many(other, ["apple river again"])
        assert store.postings._copies.held(ref.key).version == held  # type: ignore[union-attr]  # not this scope's
        added = writer.remember(ref, "apple apple apple river river")
        assert ids()[0] == added.id and ids() == served()
        writer.forget(ref, added.id)
        assert added.id not in ids() and ids() == served()
        writer.correct(ref, facts[0].id, "pear stone only")
        assert facts[0].id not in ids() and ids() == served()
        writer.restore(ref, added.id)
        assert ids()[0] == added.id and ids() == served()
        writer.forget(ref, added.id, hard=True)
        assert added.id not in ids() and ids() == served()
        assert ids("pear") == served("pear")
        # erased in this process: its copies of the scope go at the commit
        assert store.postings._copies.held(ref.key) is not None
        reader.forget(ref, facts[1].id, hard=True)
        assert store.postings._copies.held(ref.key) is None
        assert facts[1].id not in ids() and ids() == served()


def test_postgres_postings_copies_are_bounded() -> None:
    """Past what a process holds, the scopes asked least lately go first, and within a
    scope holding more than the bound alone, its words asked least lately."""
    import numpy as np

    from engram.storage.postgres import postings

    copies = postings.Postings(budget_bytes=10 * 16)  # ten postings
    rows = (np.arange(6, dtype=np.int64), np.ones(6))
    for scope in ("a", "b", "c"):
        copies._copies.use(scope, lambda _: False, lambda _: postings._Words(1), lambda _: None)
        held = copies._copies.held(scope)
        assert held is not None
        held.put("w", rows)
        copies._copies.evict()
    assert [s for s in "abc" if copies._copies.held(s)] == ["c"]
    held = copies._copies.held("c")
    assert held is not None
    held.put("v", rows)
    held.trim(copies._copies.budget_bytes)  # one scope holding more than the bound alone
    assert list(held.words) == ["v"] and held.nbytes == 6 * 16


def test_facts_outside_a_scope_are_counted_exactly_up_to_the_bound(db_path: Path) -> None:
    """The count that chooses the path reads a bounded number of scopes: exact while the
    choice depends on it, and above the bound (never below) in a store of many scopes."""
    from engram.storage.sqlite.fulltext import SCOPE_TOKEN_ABOVE
    from engram.storage.sqlite.store import _facts_outside

    with engram.open(db_path, embedder=engram.HashingEmbedder(64)) as mem:
        mem.remember_many(ResourceRef("mine"), ["apple mine", "pear mine"])
    conn = sqlite3.connect(db_path)
    try:
        mine = ResourceRef("mine").key
        assert _facts_outside(conn, mine) == 0
        state = "INSERT INTO scope_state (scope, version, epoch, facts) VALUES (?, 1, 0, ?)"
        conn.execute(state, ("r:big", SCOPE_TOKEN_ABOVE - 3))
        conn.executemany(state, [(f"r:empty{i}", 0) for i in range(2000)])  # hold none
        conn.executemany(state, [(f"r:one{i}", 1) for i in range(3)])
        assert _facts_outside(conn, mine) == SCOPE_TOKEN_ABOVE  # exact at the bound
        conn.executemany(state, [(f"r:many{i}", 1) for i in range(5000)])
        assert SCOPE_TOKEN_ABOVE < _facts_outside(conn, mine) <= 2 * SCOPE_TOKEN_ABOVE + 1
    finally:
        conn.close()


def test_a_write_reads_no_count_of_the_whole_store(db_path: Path) -> None:
    """A remember that moves nothing to the trash reads its own scope's rows: a sum over
    every scope's count cost each write 0.9 ms in a store of 10,000 scopes."""
    with engram.open(db_path, embedder=engram.HashingEmbedder(64)) as mem:
        for i in range(3):
            mem.remember(ResourceRef(f"other{i}"), f"a fact of scope {i}")
        read: list[str] = []
        conn = mem._store.db.connection()  # type: ignore[attr-defined]
        conn.set_trace_callback(read.append)
        try:
            mem.remember(ResourceRef("mine"), "a new fact")
        finally:
            conn.set_trace_callback(None)
    whole = [s for s in read if "sum(facts)" in s and "WHERE scope =" not in s]
    assert read and not whole, whole


def test_the_facts_holding_a_name_are_queued_by_the_store(target: Target) -> None:
    """A name new to a scope queues every fact holding its words for the graph to read
    again, but those being read: in one statement, with no list of them in the process."""
    from engram.core import ledger, recording
    from engram.core.models import Writer

    ref = ResourceRef("holders")
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        texts = ["Felix went home", "felix again", "nothing here", "Ana and Felix", "Felixstowe"]
        facts = mem.remember_many(ref, texts)
        store = mem._store

        def work(rec: ledger.Entry) -> list[list[str]]:
            assert store.graph.queued(rec.tx, 100) == []  # read before the last commit
            store.candidates.queue_holding(rec.tx, ref, ["felix"], exclude={facts[0].id})
            first = sorted(f for _, f in store.graph.queued(rec.tx, 100))
            store.candidates.queue_holding(rec.tx, ref, ["felix", "home"])  # queued again
            store.candidates.queue_holding(rec.tx, ref, [])
            return [first, sorted(f for _, f in store.graph.queued(rec.tx, 100))]

        first, then = store.run(
            lambda tx: recording.write(store, tx, ref, "test", Writer(), 1, work), lock=[ref]
        )
    assert first == sorted(facts[i].id for i in (1, 3))
    assert then == sorted(facts[i].id for i in (0, 1, 3))


def _tables_read(node: dict[str, object], seen: list[dict[str, object]]) -> None:
    """The nodes of a plan that read a table, a bitmap scan's with its index's name and
    condition."""
    children: list[dict[str, object]] = node.get("Plans", [])  # type: ignore[assignment]
    if "Relation Name" in node:
        by_bitmap = [c for c in children if c["Node Type"] == "Bitmap Index Scan"]
        seen.append(
            {**node, **{k: by_bitmap[0][k] for k in ("Index Name", "Index Cond")}}
            if len(by_bitmap) == 1
            else node
        )
    for child in children:
        _tables_read(child, seen)


def test_postgres_a_write_of_a_few_facts_leaves_the_statistics_to_the_autovacuum(
    postgres_store_url: str,
) -> None:
    """Fewer facts than ``RECOUNT_FROM`` written into a table counted empty read no
    catalog and analyse nothing: their own lookups are few, and the autovacuum counts
    the table again soon; as many as that are counted in the write."""
    import psycopg

    from engram.storage.postgres.store import RECOUNT_FROM

    ref = ResourceRef("few")
    counted = "SELECT reltuples FROM pg_class WHERE oid = 'facts'::regclass"
    with (
        engram.open(postgres_store_url, embedder=engram.HashingEmbedder(16)) as mem,
        psycopg.connect(postgres_store_url, autocommit=True) as conn,
    ):
        conn.execute("ALTER TABLE facts SET (autovacuum_enabled = false)")  # no count but ours
        try:
            mem.remember_many(ref, [f"note {i}" for i in range(RECOUNT_FROM)])
            mem.forget_all(ref, expected_count=RECOUNT_FROM, hard=True)
            conn.execute("ANALYZE facts")
            mem.remember_many(ref, [f"again {i}" for i in range(RECOUNT_FROM - 1)])
            assert conn.execute(counted).fetchall() == [(0.0,)]
            mem.remember_many(ref, [f"more {i}" for i in range(RECOUNT_FROM)])
            assert conn.execute(counted).fetchone()[0] >= RECOUNT_FROM  # type: ignore[index]
        finally:
            conn.execute("ALTER TABLE facts RESET (autovacuum_enabled)")


@pytest.mark.parametrize("statistics", ["as analysed", "analysed empty"])
def test_postgres_facts_holding_a_new_name_are_read_by_key_after_a_scope_is_refilled(
    postgres_store_url: str, monkeypatch: pytest.MonkeyPatch, statistics: str
) -> None:
    """The facts holding a name new to the scope are found from its words' postings, each
    then read by its row number through the key, as the write that brought the name plans
    it. A scope forgotten for good and analysed (as the autovacuum does after it), then
    filled again in one write, left both tables counted empty: the planner then read every
    posting to find the name's, and sought each holder through the index by age."""
    import psycopg

    from engram.storage.postgres import fulltext

    ref = ResourceRef("holders")
    rows = 2_000
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(ref, [f"Felix said {i} things to Ana" for i in range(rows)])
        if statistics == "analysed empty":
            mem.forget_all(ref, expected_count=rows, hard=True)
    with psycopg.connect(postgres_store_url, autocommit=True) as conn:
        conn.execute("ANALYZE facts, fact_terms")
    plans: list[dict[str, object]] = []
    holding = fulltext.holding

    def explained(conn: Any, scope: str, terms: list[str]) -> Any:
        select, params = holding(conn, scope, terms)
        conn.execute("SET enable_seqscan = off")  # which index, where one is used
        plan = conn.execute(f"EXPLAIN (FORMAT JSON) {select}".encode(), params).fetchone()
        conn.execute("RESET enable_seqscan")
        plans.append(plan[0][0]["Plan"])
        return select, params

    monkeypatch.setattr(fulltext, "holding", explained)
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(16)) as mem:
        filler = [f"the weather was fine on day {i}" for i in range(rows - 10)]
        mem.remember_many(ref, [*filler, *(f"Marta met {i} friends in Braga" for i in range(10))])
    assert plans
    seen: list[dict[str, object]] = []
    for plan in plans:
        _tables_read(plan, seen)
    read = {node["Relation Name"]: node for node in seen}
    assert set(read) == {"facts", "fact_terms"}, seen
    for node in seen:  # a key's lookup, never a walk of another index
        if node["Relation Name"] == "facts":
            assert node.get("Index Name") == "facts_pkey", node
            assert str(node.get("Index Cond", "")).startswith("(seq = "), node
        else:
            assert node.get("Index Name") == "fact_terms_by_impact", node
            assert "term = ANY" in str(node.get("Index Cond", "")), node
