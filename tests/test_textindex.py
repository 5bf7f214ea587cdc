"""Large SQLite scopes rank full text from memory exactly as FTS5's statement does."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engram
import stores
from engram import Memory, Note, ResourceRef
from engram.core import query
from engram.core.models import Fact, Filters
from engram.core.ranking import Candidate
from engram.storage import summed
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import (
    COLUMNS,
    SCOPE_TOKEN,
    TOKENIZE,
    scope_token,
    text_candidates_sql,
)
from engram.storage.sqlite.index import postings, textbase, textindex
from engram.storage.sqlite.index.tokens import Tokenizer
from engram.storage.sqlite.store import SQLiteStore

WORDS = (
    "budget invoice invoices invoiced running runner runs ran café cafe naïve resume résumé "
    "flight hotel report reports meeting camera bicycle garden deadline insurance server "
    "migration newsletter workshop keyboard ticket birthday party gym tax repair phone plan"
).split()
BIG = ResourceRef("big")
OTHER = ResourceRef("other")


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
    if rng.random() < 0.2:  # the same word several times: term frequency above one
        words += [words[0]] * rng.randint(1, 3)
    return " ".join(words) + f" n{rng.randint(0, 10**9)}"


def ranked(store: SQLiteStore, ref: ResourceRef, text: str, limit: int) -> list[Candidate]:
    return stores.text_candidates(store, ref, query.terms(text), Filters(), limit)


def assert_same_ranking(fast: SQLiteStore, slow: SQLiteStore, queries: list[str]) -> None:
    for text in queries:
        every = ranked(slow, BIG, text, 1000)  # more than match: no cut, a total order
        assert ranked(fast, BIG, text, 1000) == every, text
        # Cut short, with ties at the cut: the same rows (ties go to the older fact).
        assert ranked(fast, BIG, text, 10) == ranked(slow, BIG, text, 10) == every[:10], text


def test_the_index_ranks_as_the_statement(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(5)
    mem.remember_many(OTHER, [sentence(rng) for _ in range(150)])
    notes = [
        Note(sentence(rng), context=sentence(rng) if rng.random() < 0.3 else None)
        for _ in range(400)
    ]
    mem.remember_many(BIG, notes)
    mem.remember_many(BIG, [f"camera report n{i}" for i in range(40)])  # 40 equal scores
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 5))) for _ in range(30)]
    queries += ["running cafe résumé", "invoices invoiced invoice", "nothing matches zzz"]
    queries += ["camera report", "camera"]
    assert_same_ranking(fast, slow, queries)
    assert fast.texts.held(BIG.key) is not None  # the index answered, not the statement

    mem.remember_many(BIG, [sentence(rng) for _ in range(50)])  # appended: added
    mem.remember_many(OTHER, [sentence(rng) for _ in range(50)])  # other scopes: new stats
    assert_same_ranking(fast, slow, queries)

    held = fast.texts.held(BIG.key)
    facts = mem.facts(BIG, limit=300).facts
    for fact in facts[::3]:
        mem.forget(BIG, fact.id)
    for fact in facts[1::6]:  # none of them forgotten above
        mem.correct(BIG, fact.id, sentence(rng))
    assert_same_ranking(fast, slow, queries)
    assert fast.texts.held(BIG.key) is held  # revised in place, not rebuilt

    for fact in mem.facts(BIG, limit=400).facts:  # most of the scope: rebuilt
        mem.forget(BIG, fact.id)
    mem.remember_many(BIG, [sentence(rng) for _ in range(100)])
    assert_same_ranking(fast, slow, queries)
    assert fast.texts.held(BIG.key) is not held


def test_the_index_s_candidates_carry_what_recall_reads_of_their_rows(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    # A hybrid recall reads each candidate's traits for the lists beside its halves; the
    # index's candidates bring them from the rows their ids are read from, so none is
    # read again by its id.
    mem, fast, _ = indexed_and_plain
    rng = random.Random(8)
    said = mem.remember(BIG, "camera report flight", metadata={"speaker": "Ana Reis"})
    mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
    found = ranked(fast, BIG, "camera report flight", 20)
    assert fast.texts.held(BIG.key) is not None and found  # the index answered
    ids = [c.id for c in found]
    read = fast.run(lambda tx: fast.facts.traits(tx, BIG, ids), write=False)
    assert {c.id: c.traits for c in found} == read
    assert read[said.id].speaker == "Ana Reis"


def test_another_process_writes_are_seen(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(9)
    mem.remember_many(BIG, [sentence(rng) for _ in range(200)])
    assert_same_ranking(fast, slow, ["camera flight"])
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as elsewhere:
        added = elsewhere.remember(BIG, "camera camera flight")
    assert ranked(fast, BIG, "camera flight", 1)[0].id == added.id
    assert_same_ranking(fast, slow, ["camera flight"])


def test_queries_the_index_cannot_answer_go_to_the_statement(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(3)
    mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
    mem.remember(BIG, "the foo_bar camera", tags=("x",))
    assert ranked(fast, BIG, "camera", 10)  # the index holds the scope
    # A word FTS5 splits into two tokens is a phrase: the statement answers it.
    assert (
        fast.db.run(lambda tx: fast.texts.search(tx.conn, BIG.key, ["foo_bar"], 10), write=False)
        is None
    )
    assert ranked(fast, BIG, "foo_bar", 10) == ranked(slow, BIG, "foo_bar", 10)


def test_a_filtered_query_ranks_the_filter_s_rows_from_the_index_as_the_statement(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each filter narrows which rows answer, never how they score: the index ranks the
    filter's rows alone, exactly as the statement does, without it."""
    from engram.storage.sqlite import store as store_module

    mem, fast, slow = indexed_and_plain
    rng = random.Random(8)
    notes = stores.filtered_notes([sentence(rng) for _ in range(400)])
    mem.remember_many(BIG, notes)
    mem.remember_many(BIG, [Note(f"camera report n{i}", tags=("x",)) for i in range(30)])  # ties
    mem.remember_many(OTHER, [Note(sentence(rng), tags=("x",)) for _ in range(100)])
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(12)]
    queries += ["camera report", "camera"]
    statement = store_module.text_candidates_sql
    for kept in stores.six_filters():
        for text in queries:
            terms = query.terms(text)
            every = stores.text_candidates(slow, BIG, terms, kept, 1000)
            with monkeypatch.context() as only_the_index:
                only_the_index.setattr(store_module, "text_candidates_sql", None)
                assert stores.text_candidates(fast, BIG, terms, kept, 1000) == every, kept
                cut = stores.text_candidates(fast, BIG, terms, kept, 10)
            assert cut == stores.text_candidates(slow, BIG, terms, kept, 10) == every[:10]
    assert store_module.text_candidates_sql is statement
    hits = mem.recall(BIG, "camera", tags=["x"], mode="text", top_k=50)
    assert len(hits) == 30 + sum("camera" in n.content.split() for n in notes[::3])

    # A filter more than FEW facts pass keeps the first passing rows of the best; it
    # reads the row number of every fact it passes only where too few of the best pass.
    # SQLite counts a filter's facts before it reads any row number: one more than FEW
    # read into a set only to learn that more pass cost nine times their count.
    reads = stores.count_passing_rows(monkeypatch, 50)
    row_reads: list[str] = []

    as_set = store_module.as_set

    def read_as_set(t: Any, statement: str, params: Any) -> set[int]:
        row_reads.append(statement)
        return as_set(t, statement, params)

    monkeypatch.setattr(store_module, "as_set", read_as_set)
    from engram.storage.sql import passing

    sought: list[str] = []  # the best sought by a statement to learn which pass
    seek = passing.Passing._kept

    def seeking(self: Any, column: str, values: Any) -> Any:
        sought.append(column)
        return seek(self, column, values)

    monkeypatch.setattr(passing.Passing, "_kept", seeking)
    # most pass a strength floor (none read; the best tested on their traits, not sought);
    # too few of the best are of the type (sought, then sought again among a wider best:
    # enough there, or, asked only once, every passing row read once); 40 come before
    # hour 40, few (read once, as the set)
    rows_read = ((0, 0), (0, 1), (1, 1))
    seeks = ((0, 0), (2, 1), (0, 0))
    for (kept, *read), rows, seek_count in zip(stores.FEW_CASES, rows_read, seeks, strict=True):
        for at, asks in enumerate((2, 1)):
            monkeypatch.setattr(passing, "ASKS", asks)
            reads.clear()
            row_reads.clear()
            sought.clear()
            got = stores.text_candidates(fast, BIG, ["camera"], kept, 10)
            assert len(row_reads) == rows[at], (kept, asks, row_reads)
            assert len(sought) == seek_count[at], (kept, asks, sought)
            assert got == stores.text_candidates(slow, BIG, ["camera"], kept, 10)
            assert got and len(reads) == read[at], (kept, asks)


def test_a_type_a_twentieth_have_is_found_among_a_best_asked_as_wide_as_its_share_says(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter's best asked as wide as the share seen passing says, and only the rows
    that pass read (:func:`stores.a_twentieth_found_as_wide_as_its_share_says`)."""
    mem, fast, slow = indexed_and_plain
    mem.remember_many(BIG, stores.TWENTIETH)
    expected = stores.text_candidates(slow, BIG, ["camera"], Filters(type="plan"), 10)
    read: list[int] = []
    candidates = textindex._candidates

    def reading(conn: Any, scope: str, seqs: list[int], scores: list[float]) -> Any:
        read.extend(seqs)
        return candidates(conn, scope, seqs, scores)

    monkeypatch.setattr(textindex, "_candidates", reading)
    stores.a_twentieth_found_as_wide_as_its_share_says(
        monkeypatch, fast.db.path, fast, BIG, expected, read
    )


def test_a_filtered_statement_runs_its_match_once_before_the_filter_s_facts(
    db_path: Path,
) -> None:
    """Joined the other way round, SQLite walks the filter's facts and runs the match
    again for each one: a type filter over a 1.15M-fact scope did not end in 20 s."""
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(BIG, [f"camera note {i}" for i in range(50)])
    every = (
        Filters(type="plan"),
        Filters(min_strength=0.5),
        Filters(tags=("x",)),
        Filters(created_after=datetime(2026, 1, 1, tzinfo=UTC)),
    )
    for kept in every:
        sql, params = text_candidates_sql(["camera"], BIG.key, kept, 10, 0)
        plan = [row[3] for row in stores.rows(db_path, f"EXPLAIN QUERY PLAN {sql}", tuple(params))]
        assert plan[0].startswith("SCAN facts_fts VIRTUAL TABLE"), plan


def test_small_scopes_are_not_indexed(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, slow = indexed_and_plain
    mem.remember_many(BIG, [f"camera report {i}" for i in range(50)])
    assert ranked(fast, BIG, "camera", 10) == ranked(slow, BIG, "camera", 10)
    assert fast.texts.held(BIG.key) is None


def test_the_tokenizer_is_the_full_text_index_s(db_path: Path) -> None:
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)):
        pass
    conn = sqlite3.connect(db_path)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'facts_fts'").fetchone()[0]
    conn.close()
    assert f"tokenize='{TOKENIZE}'" in sql
    assert f"fts5(\n        {', '.join(COLUMNS)}, content='facts'" in sql
    assert SCOPE_TOKEN.fullmatch(scope_token(BIG.key))


def test_a_new_fact_taking_a_forgotten_fact_s_row_number_is_found(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    # SQLite gives the next insert the row number of a deleted newest row; both
    # in-memory copies must read it although it is not above the last row they read.
    mem, fast, slow = indexed_and_plain
    rng = random.Random(11)
    mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
    newest = mem.remember(BIG, "camera alpha")
    assert ranked(fast, BIG, "camera alpha", 1)[0].id == newest.id
    assert mem.recall(BIG, "camera alpha", top_k=1, mode="vector")[0].fact == newest
    mem.forget(BIG, newest.id)
    ranked(fast, BIG, "camera", 5)  # the copies revise themselves here
    mem.recall(BIG, "camera", top_k=5, mode="vector")
    again = mem.remember(BIG, "camera beta")  # takes the forgotten fact's row number
    assert ranked(fast, BIG, "camera beta", 1)[0].id == again.id
    assert mem.recall(BIG, "camera beta", top_k=1, mode="vector")[0].fact == again
    assert ranked(fast, BIG, "camera", 20) == ranked(slow, BIG, "camera", 20)


def _traced(store: SQLiteStore, text: str) -> tuple[list[Candidate], bool]:
    """The ranking of ``BIG`` for ``text``, and whether the statement made it."""
    statements: list[str] = []
    store.db.connection().set_trace_callback(statements.append)
    found = ranked(store, BIG, text, 10)
    store.db.connection().set_trace_callback(None)
    return found, any("facts_fts MATCH" in s for s in statements)


def test_a_long_posting_is_read_on_the_side(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    """In a file of many scopes, a query whose term is held by many rows is the
    statement's while the term's posting is read on the side; then the posting answers,
    the same."""
    mem, fast, slow = indexed_and_plain
    fast.texts.load_inline = False  # as a store opens
    fast.texts.read_inline_below = 50
    rng = random.Random(11)
    mem.remember_many(OTHER, [sentence(rng) for _ in range(350)])  # most of the file
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    mem.remember(BIG, "a lone zeppelin")
    assert ranked(fast, BIG, "zeppelin", 10) == ranked(slow, BIG, "zeppelin", 10)
    held = fast.texts.held(BIG.key)
    assert held is not None and list(held.terms) == ["zeppelin"]  # one row: read inline

    def traced(text: str) -> tuple[list[Candidate], bool]:
        return _traced(fast, text)

    first, by_statement = traced("camera flight")
    assert by_statement and first == ranked(slow, BIG, "camera flight", 10)
    assert fast.texts.settle(timeout=60)
    assert set(held.terms) == {"zeppelin", "camera", "flight"}  # read on the side
    assert traced("camera flight") == (first, False)  # the postings answer, the same


def test_a_scope_holding_most_of_its_file_reads_a_long_posting_as_asked(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    """The file's rows of a term are then mostly the scope's: reading them costs less
    than the statement's scoring them, so the query waits for the posting."""
    mem, fast, slow = indexed_and_plain
    fast.texts.load_inline = False  # as a store opens
    fast.texts.read_inline_below = 50
    rng = random.Random(13)
    mem.remember_many(OTHER, [sentence(rng) for _ in range(100)])
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    found, by_statement = _traced(fast, "camera flight")
    assert not by_statement and found == ranked(slow, BIG, "camera flight", 10)
    held = fast.texts.held(BIG.key)
    assert held is not None and set(held.terms) == {"camera", "flight"}


def _reading_threads(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Which thread read each term's posting, from here on."""
    by: dict[str, str] = {}
    read = postings.read

    def reading(conn: Any, scope: str, token: str, lengths: Any) -> Any:
        by[token] = threading.current_thread().name
        return read(conn, scope, token, lengths)

    monkeypatch.setattr(postings, "read", reading)
    return by


def test_a_query_s_new_terms_are_read_on_two_connections_at_once(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half of them on a second connection, on its own thread, where its snapshot holds
    the same facts; the ranking is the statement's."""
    mem, fast, slow = indexed_and_plain
    rng = random.Random(19)
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    ranked(fast, BIG, "zzz", 10)  # the scope's lengths held: only postings are read below
    by = _reading_threads(monkeypatch)
    text = "camera flight hotel garden"
    assert ranked(fast, BIG, text, 10) == ranked(slow, BIG, text, 10)
    assert sorted(by) == ["camera", "flight", "garden", "hotel"]
    second = [t for t, name in by.items() if name.startswith("engram-postings")]
    assert len(second) == 2  # every second one: no term's count is known beforehand
    by.clear()
    assert ranked(fast, BIG, text, 10) == ranked(slow, BIG, text, 10)
    assert by == {}  # held now


def test_a_second_connection_in_another_snapshot_reads_no_posting(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write committed between the two snapshots could give the second connection
    other rows: where the facts it sees differ, the query's own connection reads all."""
    mem, fast, slow = indexed_and_plain
    rng = random.Random(23)
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    ranked(fast, BIG, "zzz", 10)
    mark = postings.DocumentCounts.mark

    def elsewhere(self: Any, conn: Any) -> tuple[int, int]:
        at = mark(self, conn)
        return (
            (at[0], at[1] + 1)
            if threading.current_thread().name.startswith("engram-postings")
            else at
        )

    monkeypatch.setattr(postings.DocumentCounts, "mark", elsewhere)
    by = _reading_threads(monkeypatch)
    text = "camera flight hotel garden"
    assert ranked(fast, BIG, text, 10) == ranked(slow, BIG, text, 10)
    assert sorted(by) == ["camera", "flight", "garden", "hotel"]
    assert not any(name.startswith("engram-postings") for name in by.values())


def test_a_large_scope_s_lengths_are_read_in_two_halves_at_once(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its older seqs' on the query's connection, its newer seqs' on the second: the
    same lengths as one read, and the statement's ranking."""
    mem, fast, slow = indexed_and_plain
    fast.texts.split_lengths_above = 100
    rng = random.Random(29)
    mem.remember_many(OTHER, [sentence(rng) for _ in range(50)])
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    mem.remember_many(OTHER, [sentence(rng) for _ in range(50)])  # seqs between
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    ranges: list[tuple[str, Any, Any]] = []
    read = postings.read_lengths

    def reading(conn: Any, scope: str, since: Any = None, below: Any = None) -> Any:
        ranges.append((threading.current_thread().name, since, below))
        return read(conn, scope, since, below)

    monkeypatch.setattr(postings, "read_lengths", reading)
    by = _reading_threads(monkeypatch)
    text = "camera flight"
    assert ranked(fast, BIG, text, 10) == ranked(slow, BIG, text, 10)
    # The second connection is free again once the lengths are read: the same query's
    # words share it too.
    assert sorted(by) == ["camera", "flight"]
    assert sum(name.startswith("engram-postings") for name in by.values()) == 1
    assert len(ranges) == 2
    mine, theirs = sorted(ranges, key=lambda r: r[0].startswith("engram-postings"))
    assert mine[1] is None and theirs[2] is None and mine[2] == theirs[1]
    assert theirs[0].startswith("engram-postings")
    held = fast.texts.held(BIG.key)
    assert held is not None and held.lengths is not None
    with fast.db.transaction(write=False) as tx:
        whole = read(tx.conn, BIG.key)
    assert np.array_equal(held.lengths.seqs, whole.seqs)
    assert np.array_equal(held.lengths.sizes, whole.sizes)


def test_the_terms_a_second_connection_reads() -> None:
    assert textindex._shared(["a"], {}) == []
    assert textindex._shared(["a", "b", "c", "d"], {"a": 1}) == ["b", "d"]  # counts unknown
    known = {"a": 100, "b": 60, "c": 50, "d": 5}
    assert textindex._shared(["a", "b", "c", "d"], known) == ["b", "c"]  # 100 + 5 to 110


def test_a_scope_s_first_query_reads_its_lengths_before_its_postings(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read on the side, the lengths came after the first queries, whose postings were
    read from each row's docsize record meanwhile (four times as long at 1M facts); so
    the query that first needs them reads them, even where postings are read beside."""
    mem, fast, slow = indexed_and_plain
    fast.texts.load_inline = False  # as a store opens
    rng = random.Random(17)
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    given: list[bool] = []
    read = postings.read

    def reading(conn: Any, scope: str, token: str, lengths: Any) -> Any:
        given.append(lengths is not None)
        return read(conn, scope, token, lengths)

    monkeypatch.setattr(postings, "read", reading)
    assert ranked(fast, BIG, "camera flight", 10) == ranked(slow, BIG, "camera flight", 10)
    held = fast.texts.held(BIG.key)
    assert held is not None and held.lengths is not None
    assert given == [True, True]  # each posting read with the lengths held


def test_a_scope_holding_most_of_its_file_counts_a_terms_rows_off_its_posting(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its postings are read from the whole file's instances, which also count the rows
    holding each term: FTS5's own count, a second walk of the term's doclist, is not
    asked for. A scope holding less of its file still asks it first."""
    mem, fast, slow = indexed_and_plain
    rng = random.Random(16)
    mem.remember_many(OTHER, [sentence(rng) for _ in range(100)])
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    walked: list[str] = []
    walk = postings.documents_with

    def counted(conn: Any, token: str) -> int:
        walked.append(token)
        return walk(conn, token)

    monkeypatch.setattr(postings, "documents_with", counted)
    for text in ("camera flight", "hotel garden camera", "zzz camera"):
        assert ranked(fast, BIG, text, 10) == ranked(slow, BIG, text, 10), text
    assert walked == []
    mem.remember_many(OTHER, [sentence(rng) for _ in range(400)])  # now less than half
    assert ranked(fast, BIG, "camera flight", 10) == ranked(slow, BIG, "camera flight", 10)
    assert sorted(walked) == ["camera", "flight"]


def test_memory_grows_with_the_terms_asked_for(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(12)
    mem.remember_many(BIG, [sentence(rng) for _ in range(400)])
    assert_same_ranking(fast, slow, ["camera hotel"])
    held = fast.texts.held(BIG.key)
    assert held is not None and set(held.terms) == {"camera", "hotel"}
    one = held.terms["camera"].nbytes
    assert held.lengths is not None  # the scope's lengths count against the budget too
    fast.texts.budget_bytes = held.lengths.nbytes + 2 * one + one // 2  # about two terms
    assert_same_ranking(fast, slow, ["garden", "server"])
    assert list(held.terms) == ["garden", "server"]  # the least recently used went first
    assert held.term_bytes == sum(p.nbytes for p in held.terms.values())
    assert_same_ranking(fast, slow, ["camera hotel"])  # read again when asked for


def test_long_facts_and_large_batches_rank_as_the_statement(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    # A fact of more than 127 tokens in a column has a docsize varint of two bytes; a
    # batch of more appends or changes than followed drops the terms held (read again).
    mem, fast, slow = indexed_and_plain
    rng = random.Random(13)
    mem.remember_many(BIG, [sentence(rng) for _ in range(200)])
    long = " ".join(rng.choice(WORDS[-12:]) for _ in range(200))  # short words: in the limit
    mem.remember_many(BIG, [Note(long), Note("camera", context=long)])
    queries = ["camera", "hotel flight", "camera camera report"]
    assert_same_ranking(fast, slow, queries)
    held = fast.texts.held(BIG.key)
    fast.texts.followed = 20
    mem.remember_many(BIG, [sentence(rng) for _ in range(15)])  # followed in place
    assert_same_ranking(fast, slow, queries)
    assert fast.texts.held(BIG.key) is held
    mem.remember_many(BIG, [sentence(rng) for _ in range(25)])  # read again
    assert_same_ranking(fast, slow, queries)
    assert fast.texts.held(BIG.key) is not held


def test_postings_read_with_the_lengths_held_are_those_read_with_docsize_records(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    """A posting is read from the term's instances alone once the scope's lengths are
    held, and joined to each row's docsize record before: both give the same rows,
    counts and lengths, in a file of one scope and of several. Where the instances read
    were the whole file's, they also count the file's rows holding the term, as FTS5's
    own count does (the query then walks the term's doclist once, not twice)."""
    mem, fast, _ = indexed_and_plain
    rng = random.Random(14)
    mem.remember_many(BIG, [sentence(rng) for _ in range(200)])
    long = " ".join(rng.choice(WORDS[-12:]) for _ in range(200))
    mem.remember_many(BIG, [Note(long), Note("camera", context=long)])

    def both(token: str) -> tuple[postings.Posting, postings.Posting]:
        def read(tx: Any) -> tuple[postings.Posting, postings.Posting]:
            lengths = postings.read_lengths(tx.conn, BIG.key)
            assert lengths.seqs.shape[0] == mem.count(BIG)
            joined, counted = postings.read(tx.conn, BIG.key, token, None)
            alone, whole = postings.read(tx.conn, BIG.key, token, lengths)
            rows = postings.documents_with(tx.conn, token)
            assert whole == rows and counted == (None if other else rows), token
            return joined, alone

        return fast.db.run(read, write=False)  # type: ignore[no-any-return]

    other = False

    for other in (False, True):
        if other:  # facts of another scope hold the same words: never in BIG's postings
            mem.remember_many(OTHER, [sentence(rng) for _ in range(100)] + [long])
        for (token,) in Tokenizer().words(["camera", "hotel", "invoices", *WORDS[-12:]]):
            joined, alone = both(token)
            assert joined.seqs.tolist() == alone.seqs.tolist(), token
            assert joined.counts.tolist() == alone.counts.tolist(), token
            assert joined.sizes.tolist() == alone.sizes.tolist(), token
            assert joined.seqs.shape[0] > 0, token
        assert [p.seqs.shape[0] for p in both("zzz")] == [0, 0]
    assert max(both("camera")[1].sizes.tolist()) > 127  # a two-byte varint among them


def test_terms_read_after_a_change_see_the_changed_facts_lengths(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    mem, fast, slow = indexed_and_plain
    rng = random.Random(15)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
    assert_same_ranking(fast, slow, ["camera"])  # the scope's lengths are held from here
    mem.correct(BIG, facts[3].id, "hotel garden " + " ".join(["party"] * 40))  # longer now
    mem.correct(BIG, facts[5].id, "hotel")  # shorter now
    mem.forget(BIG, facts[4].id)
    held = fast.texts.held(BIG.key)
    assert held is not None and set(held.terms) == {"camera"}
    assert_same_ranking(fast, slow, ["hotel", "garden party", "camera"])  # read after


def test_the_lengths_are_followed_while_no_word_is_held(
    indexed_and_plain: tuple[Memory, SQLiteStore, SQLiteStore],
) -> None:
    # Reading a scope's lengths costs a second at 1M facts: a write must not drop them
    # just because no word's posting is held yet.
    mem, fast, slow = indexed_and_plain
    rng = random.Random(16)
    mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
    assert ranked(fast, BIG, "zzz", 10) == []  # no row holds it: no posting read
    held = fast.texts.held(BIG.key)
    assert held is not None and held.lengths is not None and not held.terms
    mem.remember(BIG, "camera zzz")
    assert_same_ranking(fast, slow, ["zzz camera", "zzz"])
    assert fast.texts.held(BIG.key) is held  # followed, not read again


def test_the_scope_s_rows_are_found_by_offset_as_by_search() -> None:
    """A scope's lengths tell its rows among a posting's by each seq's offset where its
    seqs lie close together, by a binary search where they are spread: the same answer,
    for seqs before, among, between and after the scope's."""
    import numpy as np

    rng = np.random.default_rng(5)
    for spread in (1, 3, 50):  # the scope's seqs every `spread` rows of the file
        seqs = np.sort(rng.choice(5_000 * spread, 5_000, replace=False)).astype(np.int64) + 7
        lengths = postings.Lengths(seqs, rng.random(seqs.shape[0]).astype(np.float32))
        assert (lengths._positions is None) == (spread > postings.DENSE_SPAN)
        before_and_after = rng.integers(0, 5_000 * spread + 20, 3_000)
        among = rng.integers(seqs[0], seqs[-1] + 1, 3_000)  # within the scope's span
        for asked in (before_and_after, among, rng.choice(seqs, 3_000)):  # the last all held
            asked = np.unique(asked).astype(np.int64)
            held, at = lengths.where(asked)
            assert held.tolist() == np.isin(asked, seqs).tolist()
            assert (lengths.seqs[at[held]] == asked[held]).all()
        assert lengths.where(np.empty(0, np.int64))[0].shape == (0,)


def test_a_posting_s_rows_are_read_off_its_instances_as_unique_gives_them() -> None:
    rng = random.Random(14)
    cases = [[], [7], [3, 3, 3], [1, 2, 2, 5, 9, 9, 9, 12]]
    cases += [sorted(rng.randrange(50) for _ in range(200)) for _ in range(5)]
    cases += [[5, 2, 2, 9, 1, 5]]  # out of row order: sorted first
    for case in cases:
        instances = np.asarray(case, np.int64)
        got = postings.runs(instances)
        want = np.unique(instances, return_index=True, return_counts=True)
        for a, b in zip(got, want, strict=True):
            assert a.tolist() == b.tolist(), case


def test_a_query_s_best_are_the_same_summed_densely_or_by_unique_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows spread thinly over their seqs (a scope among many) are summed by unique row,
    with the same rows, order and scores as the dense sum; ties go to the older row."""
    rng = np.random.default_rng(3)
    for spread in (3, 50_000):
        parts = []
        for _ in range(4):
            seqs = np.unique(rng.integers(0, 2_000, 700)) * spread
            parts.append((seqs.astype(np.int64), rng.integers(1, 6, seqs.shape[0]) / 4.0))
        got = []
        for span in (0, 10**9):  # by unique rows; densely
            monkeypatch.setattr(summed, "DENSE_SPAN", span)
            seqs, scores = summed.best(parts, 25)
            got.append((seqs.tolist(), scores.tolist()))
        assert got[0] == got[1] and len(got[0][0]) == 25
        pairs = list(zip(got[0][1], got[0][0], strict=True))
        assert pairs == sorted(pairs, key=lambda p: (-p[0], p[1]))


def test_the_floor_of_a_query_s_best_lets_every_one_of_them_through() -> None:
    """At least ``kept`` values reach the floor, and it is no higher than the kept-th
    largest: whether a sample found it or, where the sample's best are more of the best
    than their share, the partition of every value."""
    rng = np.random.default_rng(15)
    kept = 30
    cases = [rng.random(n) for n in (10, 100, 5_000, 40_000)]
    cases += [rng.integers(0, 4, 40_000).astype(np.float64)]  # ties everywhere
    # the few best all where a sample's strides fall: the sample's floor lets too few by
    skewed = rng.random(40_000)
    skewed[: 40_000 // (kept * summed.SAMPLED) * 5 : 40_000 // (kept * summed.SAMPLED)] += 10
    cases += [skewed]
    for values in cases:
        floor = summed.floor(values, min(kept, values.shape[0]))
        wanted = min(kept, values.shape[0])
        assert np.count_nonzero(values >= floor) >= wanted
        assert floor <= np.sort(values)[-wanted]


def _read_anew(
    fast: SQLiteStore, slow: SQLiteStore, monkeypatch: pytest.MonkeyPatch, queries: list[str]
) -> list[str]:
    """``queries`` ranked as a new process ranks them (the scope's terms held dropped),
    each as the statement ranks it; the terms read from FTS5's instances meanwhile."""
    read: list[str] = []
    original = postings.read

    def counted(conn: Any, scope: str, token: str, lengths: Any) -> Any:
        read.append(token)
        return original(conn, scope, token, lengths)

    fast.texts.forget(BIG.key)
    monkeypatch.setattr(postings, "read", counted)
    try:
        assert_same_ranking(fast, slow, queries)
    finally:
        monkeypatch.undo()
    return read


def _build(fast: SQLiteStore) -> bool:
    """Builds ``BIG``'s base now; whether one was installed."""
    assert fast.texts.bases is not None
    return fast.texts.bases.build(BIG.key)


def _base(db_path: Path, ref: ResourceRef) -> tuple[int | None, int]:
    """The scope's base as the file holds it: its build (None: none), and its terms."""
    build = stores.rows(db_path, "SELECT build FROM text_bases WHERE scope = ?", (ref.key,))
    terms = stores.rows(db_path, "SELECT count(*) FROM text_base_terms WHERE scope = ?", (ref.key,))
    return (build[0][0] if build else None), terms[0][0]


def _seqs(db_path: Path, ids: list[str]) -> list[int]:
    """The row numbers of the facts ``ids``, in their order."""
    found = dict(
        stores.rows(
            db_path,
            f"SELECT id, seq FROM facts WHERE id IN ({','.join('?' * len(ids))})",
            tuple(ids),
        )
    )
    return [int(found[i]) for i in ids]


def _saved(db_path: Path, ref: ResourceRef) -> set[int]:
    """Every fact a saved posting of the scope's base holds."""
    blobs = stores.rows(db_path, "SELECT seqs FROM text_base_terms WHERE scope = ?", (ref.key,))
    return {int(s) for (blob,) in blobs for s in textbase.unpacked(blob)}


def test_a_large_scope_s_common_terms_are_read_from_its_base(
    based: tuple[Memory, SQLiteStore, SQLiteStore],
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mem, fast, slow = based
    rng = random.Random(21)
    notes = [Note(sentence(rng), context=sentence(rng) if rng.random() < 0.3 else None)]
    mem.remember_many(BIG, notes + [Note(sentence(rng)) for _ in range(400)])
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(20)]
    queries += ["running cafe résumé", "invoices invoiced invoice", "camera n12 zzz"]
    assert _base(db_path, BIG) == (None, 0)
    assert_same_ranking(fast, slow, queries)  # from the instances, a base asked for
    assert fast.texts.settle(30)
    build, terms = _base(db_path, BIG)
    tokens = {t for word in Tokenizer().words(WORDS) for t in word}
    assert build is not None and terms == len(tokens)  # each held by about 70 facts

    def fresh() -> list[str]:
        """The words of ``WORDS`` a new process reads from the instances (the rest are
        held by too few facts to be saved)."""
        return [t for t in _read_anew(fast, slow, monkeypatch, queries) if t in tokens]

    assert fresh() == []  # every word from the base
    mem.remember_many(BIG, [sentence(rng) for _ in range(30)])  # appended since the base
    assert_same_ranking(fast, slow, queries)
    assert fresh() == []
    facts = mem.facts(BIG, limit=200).facts
    for fact in facts[::7]:  # to the trash: the words stay in the store, the base too
        mem.forget(BIG, fact.id)
    assert _base(db_path, BIG) == (build, terms)
    assert fresh() == []
    assert mem.restore(BIG, facts[0].id)
    assert fresh() == []

    # in the base (the newest 30 came after it), none of them in the trash
    used = [facts[i].id for i in (31, 32, 33, 34, 36)]
    seqs = dict(zip(used, _seqs(db_path, used), strict=True))
    corrected = seqs[facts[31].id]
    mem.correct(BIG, facts[31].id, "camera camera hotel")  # the ledger keeps the old words
    assert _base(db_path, BIG) == (build, terms)
    assert _saved(db_path, BIG) & {corrected}
    assert fresh() == []
    # the words leaving for good leave the base in the same write: the base is kept
    fast.run(lambda tx: fast.ledger.delete_before(tx, BIG, 1 << 62))  # retention: gone
    assert _base(db_path, BIG)[0] == build and not _saved(db_path, BIG) & {corrected}
    assert fresh() == []  # read from the base still, the same ranking
    mem.correct(BIG, facts[33].id, "camera garden")
    fast.run(lambda tx: fast.ledger.scrub(tx, BIG, [facts[33].id]))  # old words scrubbed
    assert _base(db_path, BIG)[0] == build and not _saved(db_path, BIG) & {seqs[facts[33].id]}
    assert fresh() == []
    mem.forget(BIG, facts[32].id, hard=True)
    assert _base(db_path, BIG)[0] == build and not _saved(db_path, BIG) & {seqs[facts[32].id]}
    assert fresh() == []
    mem.forget(BIG, facts[36].id)  # in the trash, then purged from it for good
    assert _saved(db_path, BIG) & {seqs[facts[36].id]}
    mem.forget(BIG, facts[36].id, hard=True)
    assert _base(db_path, BIG)[0] == build and not _saved(db_path, BIG) & {seqs[facts[36].id]}
    assert fresh() == []
    # a context rewritten (a neighbour's erased words leave it) by another program: no
    # search reads the base it marked until a store strips it, at its next erasing write
    stores.rows(db_path, "UPDATE facts SET context = 'hotel' WHERE id = ?", (facts[34].id,))
    assert _base(db_path, BIG)[0] == build and _saved(db_path, BIG) & {seqs[facts[34].id]}
    assert fresh() != []  # read from the instances, the same ranking; a build asked for
    assert fast.texts.settle(30)
    assert stores.rows(db_path, "SELECT build = ?, strip_due FROM text_bases", (build,)) == [
        (0, 0)
    ]  # built anew, in its place
    assert fresh() == []
    assert_same_ranking(fast, slow, queries)


def _based_scope(
    mem: Memory, fast: SQLiteStore, db_path: Path, rng: random.Random
) -> tuple[list[Fact], int]:
    """300 facts of ``BIG`` and its base, built now: the facts, and the base's build."""
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    assert _build(fast)
    build, _ = _base(db_path, BIG)
    assert build is not None
    return facts, build


def _deleted_by_another_program(db_path: Path, fact_id: str) -> None:
    """The fact deleted by raw SQL: no store's commit follows it."""
    stores.rows(db_path, "DELETE FROM facts WHERE id = ?", (fact_id,))


def test_a_base_marked_by_another_program_s_erasure_is_stripped_by_the_next_erasing_write(
    based: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    mem, fast, slow = based
    rng = random.Random(24)
    facts, build = _based_scope(mem, fast, db_path, rng)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(12)]
    first, second = _seqs(db_path, [facts[0].id, facts[1].id])
    assert _saved(db_path, BIG) >= {first, second}
    _deleted_by_another_program(db_path, facts[0].id)
    assert stores.rows(db_path, "SELECT strip_due FROM text_bases") == [(1,)]
    assert _saved(db_path, BIG) & {first}  # marked, not stripped: read by no search
    mem.forget(BIG, facts[1].id, hard=True)
    assert stores.rows(db_path, "SELECT build, strip_due FROM text_bases") == [(build, 0)]
    assert not _saved(db_path, BIG) & {first, second}
    assert_same_ranking(fast, slow, queries)


def test_a_store_opened_on_a_marked_base_strips_it(
    based: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    mem, fast, _ = based
    facts, build = _based_scope(mem, fast, db_path, random.Random(25))
    (gone,) = _seqs(db_path, [facts[0].id])
    _deleted_by_another_program(db_path, facts[0].id)
    assert _saved(db_path, BIG) & {gone}
    with engram.open(db_path, embedder=None):
        pass
    assert stores.rows(db_path, "SELECT build, strip_due FROM text_bases") == [(build, 0)]
    assert not _saved(db_path, BIG) & {gone}


def test_a_base_the_change_log_no_longer_reaches_back_to_goes_whole(
    based: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    mem, fast, _ = based
    facts, _ = _based_scope(mem, fast, db_path, random.Random(26))
    stores.rows(db_path, "UPDATE scope_state SET changes_from = changes_from + 1000000")
    mem.forget(BIG, facts[0].id, hard=True)
    assert _base(db_path, BIG) == (None, 0)


def test_a_base_read_before_a_fact_left_for_good_is_not_saved(
    based: tuple[Memory, SQLiteStore, SQLiteStore], db_path: Path
) -> None:
    mem, fast, _ = based
    rng = random.Random(22)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(200)])
    read = fast.db.run(lambda tx: textbase._read(tx.conn, BIG.key, 100, 10), write=False)
    assert read is not None and read.terms
    mem.forget(BIG, facts[0].id, hard=True)  # its words were read into ``read``
    assert not fast.db.run(lambda tx: textbase._install(tx.conn, BIG.key, read))
    assert _base(db_path, BIG) == (None, 0)
    assert _build(fast)
    assert _base(db_path, BIG)[1] == len(read.terms)


def test_a_base_followed_too_far_is_built_again(
    based: tuple[Memory, SQLiteStore, SQLiteStore],
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mem, fast, slow = based
    rng = random.Random(23)
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    assert _build(fast)
    build, _ = _base(db_path, BIG)
    fast.texts.followed = 5
    mem.remember_many(BIG, [sentence(rng) for _ in range(3)])
    assert_same_ranking(fast, slow, ["camera hotel"])  # three facts beside the base
    held = fast.texts.held(BIG.key)
    assert held is not None and held.base is not None and held.base.followed == 3
    for _ in range(3):
        mem.remember(BIG, sentence(rng))
        assert_same_ranking(fast, slow, ["camera hotel", "garden"])
    assert held.refused == build  # six: let go and asked for again (built meanwhile, maybe)
    assert fast.texts.settle(30)
    assert _base(db_path, BIG)[0] not in (None, build)
    assert _read_anew(fast, slow, monkeypatch, ["camera hotel", "garden"]) == []


def test_a_new_fact_taking_a_row_number_its_base_holds_is_read_beside_it(
    based: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem, fast, slow = based
    rng = random.Random(24)
    mem.remember_many(BIG, [sentence(rng) for _ in range(150)])
    newest = mem.remember(BIG, "camera alpha hotel")
    assert _build(fast)
    mem.forget(BIG, newest.id)  # to the trash: the base stays, the row number is free
    again = mem.remember(BIG, "camera beta")
    # as a new process: the base and what changed since
    assert _read_anew(fast, slow, monkeypatch, ["camera hotel"]) == []
    found = [c.id for c in ranked(fast, BIG, "camera hotel", 500)]
    assert again.id in found and newest.id not in found


def test_a_base_read_before_appends_and_trashing_follows_them(
    based: tuple[Memory, SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A build reads in one snapshot and installs later: what was written meanwhile (but
    # erased nothing) is after its mark, and the searches read it beside the base.
    mem, fast, slow = based
    rng = random.Random(25)
    facts = mem.remember_many(BIG, [sentence(rng) for _ in range(200)])
    read = fast.db.run(lambda tx: textbase._read(tx.conn, BIG.key, 100, 10), write=False)
    assert read is not None
    mem.remember_many(BIG, [sentence(rng) for _ in range(20)])
    for fact in facts[:5]:
        mem.forget(BIG, fact.id)  # to the trash: no words leave the store
    assert fast.db.run(lambda tx: textbase._install(tx.conn, BIG.key, read))
    assert _read_anew(fast, slow, monkeypatch, ["camera hotel", "garden server", "budget"]) == []


def test_a_scope_beside_others_reads_its_base_where_the_terms_are_counted(
    based: tuple[Memory, SQLiteStore, SQLiteStore],
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # BM25 counts a term's rows in the whole file: a saved posting holds its scope's
    # alone, so where other scopes share the file it is read once that count is known;
    # until then the term's instances are read, which count every scope's rows.
    mem, fast, slow = based
    rng = random.Random(26)
    mem.remember_many(BIG, [sentence(rng) for _ in range(300)])
    mem.remember_many(OTHER, [sentence(rng) for _ in range(60)])  # under 100: no base
    assert _build(fast)
    assert _base(db_path, OTHER) == (None, 0)
    queries = ["camera hotel", "garden server budget"]
    tokens = {t for word in Tokenizer().words(WORDS) for t in word}
    for counted in (False, True):  # the file unchanged: the second pass knows the counts
        read = _read_anew(fast, slow, monkeypatch, queries)
        assert ([t for t in read if t in tokens] == []) is counted


def test_a_base_s_seqs_are_saved_as_their_gaps() -> None:
    """Two bytes a fact where every gap between a term's facts fits, four where one does
    not; read back as they were."""
    rng = np.random.default_rng(31)
    near = np.cumsum(rng.integers(1, 65_536, 1_000))
    far = np.concatenate([near, [near[-1] + 65_536, 2**32 - 1]])
    for seqs, width in ((near, 2), (far, 4), (np.array([7]), 2)):
        blob = textbase.packed(seqs)
        assert len(blob) == 1 + width * seqs.shape[0]
        assert textbase.unpacked(blob).tolist() == seqs.tolist()


def test_bases_saved_before_their_seqs_were_packed_are_dropped_as_the_store_opens(
    db_path: Path,
) -> None:
    rng = random.Random(32)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        bases = mem._store.texts.bases  # type: ignore[attr-defined]  # SQLite's
        bases.above, bases.term_rows = 100, 5
        mem.remember_many(BIG, [sentence(rng) for _ in range(200)])
        assert bases.build(BIG.key)
    assert _base(db_path, BIG)[1] > 0
    for statement in (*stores.BEFORE_STRENGTH_INDEX, "PRAGMA user_version = 32"):
        stores.rows(db_path, statement)  # saved by the format before
    with engram.open(db_path, embedder=None):
        pass
    assert _base(db_path, BIG) == (None, 0)


@pytest.mark.parametrize("bad", [0, -1, "100", True, 2**70])
def test_a_text_base_s_threshold_is_checked(db_path: Path, bad: Any) -> None:
    with pytest.raises(engram.InvalidInput, match="text_base_above"):
        engram.open(db_path, embedder=engram.HashingEmbedder(16), text_base_above=bad)


def test_the_text_base_s_threshold_is_a_setting(db_path: Path) -> None:
    """``ENGRAM_TEXT_BASE_ABOVE`` reaches the store the service opens, and a scope that
    size gets a base."""
    from engram.api.app import create_app
    from engram.settings import Settings

    env = {
        "ENGRAM_DB_PATH": str(db_path),
        "ENGRAM_EMBEDDER": "none",
        "ENGRAM_TEXT_BASE_ABOVE": "150",
    }
    settings = Settings.from_env(env)
    assert settings.text_base_above == 150
    rng = random.Random(27)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as writer:
        writer.remember_many(BIG, [sentence(rng) for _ in range(160)])
    app = create_app(settings)
    mem = app.state.memory
    try:
        store = mem._store
        assert isinstance(store, SQLiteStore) and store.texts.bases is not None
        assert store.texts.bases.above == 150
        store.texts.index_above = 100
        assert mem.recall(BIG, "camera hotel", mode="text")
        assert store.texts.settle(30)
        assert _base(db_path, BIG)[0] is not None
    finally:
        mem.close()
