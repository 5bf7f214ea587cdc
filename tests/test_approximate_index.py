"""A large SQLite scope's approximate vector index: it answers as exact search does, follows
every change of the rows, and an erased fact's vector leaves its files at the commit."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engram
import stores
from engram import Fact, Note, ResourceRef
from engram.core.models import Filters
from engram.storage.sqlite import database
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import approximate
from engram.storage.sqlite.store import SQLiteStore
from stores import same_hits

DIMENSION = 64
ABOVE = 200
REF = ResourceRef("big")
QUERIES = ["topic 3 and word 12", "a note about topic 30", "word 77 again", "topic 11"]


def sentence(i: int) -> str:
    return f"note {i} about topic {i % 37} and word {i * 7 % 101} of shelf {i % 13}"


def store_of(mem: engram.Memory) -> SQLiteStore:
    store = mem._store
    assert isinstance(store, SQLiteStore)
    return store


@pytest.fixture(autouse=True)
def whole_file(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is read whole (its rows exactly), so answers can be compared with exact
    search's to the last digit: a pool's scores move with its members, and the graph's
    own recall is measured by bench/scale.py (and roughly by the graph's test below)."""
    if not request.node.name.startswith("test_the_graph"):
        monkeypatch.setattr(approximate, "OVERSAMPLE", 100_000)


def test_the_graph_finds_what_exact_search_finds(
    pair: tuple[engram.Memory, engram.Memory],
) -> None:
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(1_500)])
    built(indexed)
    overlap = []
    for query in QUERIES:
        near = {h.fact.id for h in recalled(indexed, query)}
        overlap.append(len(near & {h.fact.id for h in recalled(exact, query)}) / 10)
    assert sum(overlap) / len(overlap) >= 0.9, overlap


def test_a_file_records_how_its_graph_was_built_and_is_searched_as_wide_as_that_needs(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    indexed, _ = pair
    indexed.remember_many(REF, [sentence(i) for i in range(400)])
    file = built(indexed)
    recalled(indexed, QUERIES[1])  # opens the file
    rows = stores.rows(db_path, "SELECT built_with, size FROM vector_indexes")
    assert rows == [(approximate.EXPANSION_ADD, 400)]
    opened = store_of(indexed).index.approximate._opened[file.name]
    assert opened.index.expansion_search == approximate.search_width(400)
    # A graph built exploring 256 holds recall at 384 explored up to 1M vectors; one built
    # exploring 128 (every file before the column) needed 1,214 there (BENCHMARKS.md).
    assert approximate.search_width(1_000_000) == 384
    assert approximate.search_width(4_000_000) == 768
    assert approximate.search_width(1_000_000, approximate.NARROW_BUILD) == 1214
    assert approximate.search_width(100_000, approximate.NARROW_BUILD) == 384
    assert approximate.search_width(10**9, approximate.NARROW_BUILD) == approximate.WIDEST


@pytest.fixture
def pair(db_path: Path) -> Iterator[tuple[engram.Memory, engram.Memory]]:
    """Two stores on one file: the first searches its approximate index from ``ABOVE``
    facts on (as ENGRAM_VECTOR_INDEX_ABOVE sets it), the second always exactly."""
    embedder = engram.HashingEmbedder(DIMENSION)
    with (
        engram.open(db_path, embedder=embedder, vector_index_above=ABOVE) as indexed,
        engram.open(db_path, embedder=embedder, vector_index_above=1 << 52) as exact,
    ):
        assert store_of(indexed).index.approximate.above == ABOVE
        yield indexed, exact


@pytest.mark.parametrize("bad", [0, -1, 2.5, "many", True, 1 << 60])
def test_a_threshold_that_is_not_a_count_of_facts_is_refused(db_path: Path, bad: object) -> None:
    with pytest.raises(engram.InvalidInput, match="vector_index_above"):
        engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION), vector_index_above=bad)  # type: ignore[arg-type]
    assert not db_path.exists()  # refused before the store was opened or created


def filled_and_built(mem: engram.Memory) -> tuple[list[Fact], Path]:
    """400 facts remembered, then the scope's index built: the facts, and its file."""
    facts = mem.remember_many(REF, [sentence(i) for i in range(400)])
    return facts, built(mem)


def built(mem: engram.Memory) -> Path:
    """Asks for the scope's index, waits for it, and returns its file."""
    return stores.graph_file(mem, REF, QUERIES[0])


def recalled(mem: engram.Memory, query: str, **kw: object) -> list[engram.RecallHit]:
    return mem.recall(REF, query, top_k=10, mode="vector", **kw)  # type: ignore[arg-type]


def hits(mem: engram.Memory, query: str) -> list[tuple[str, float]]:
    return [(h.fact.id, round(h.score, 5)) for h in recalled(mem, query)]


def same_answers(indexed: engram.Memory, exact: engram.Memory, **kw: object) -> None:
    for query in QUERIES:
        same_hits(recalled(indexed, query, **kw), recalled(exact, query, **kw))


def test_facts_of_one_vector_tie_alike_in_the_index_and_in_exact_search(
    pair: tuple[engram.Memory, engram.Memory],
) -> None:
    # A word and the word repeated have one vector: every search scores them alike and
    # orders them as written, wherever their rows sit among the others'.
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(300)])
    same = indexed.remember_many(REF, [" ".join(["lantern"] * n) for n in range(1, 10)])
    built(indexed)
    for mem in (indexed, exact):
        hits = mem.recall(REF, "lantern", top_k=len(same), mode="vector")
        assert [h.fact.id for h in hits] == [f.id for f in same]
        assert len({h.score for h in hits}) == 1
    same_hits(
        indexed.recall(REF, "lantern", top_k=12, mode="vector"),
        exact.recall(REF, "lantern", top_k=12, mode="vector"),
    )


def test_the_file_s_candidates_carry_what_recall_reads_of_their_rows(
    pair: tuple[engram.Memory, engram.Memory],
) -> None:
    # A hybrid recall reads each candidate's traits for the lists beside its halves, and
    # its hits' facts; the file's candidates bring both from the rows their ids and
    # vectors are read from.
    indexed, _ = pair
    said = indexed.remember_many(
        REF, [Note(sentence(i), metadata={"speaker": "Ana Reis"}) for i in range(300)]
    )
    built(indexed)
    store = store_of(indexed)
    assert indexed.embedder is not None
    vector = indexed.embedder.embed([sentence(7)], "query")[0]
    found = stores.vector_candidates(store, REF, vector, Filters(), 10)
    assert store.index.approximate._opened and found[0].id == said[7].id  # from the file
    ids = [c.id for c in found]
    read = store.run(lambda tx: store.facts.traits(tx, REF, ids), write=False)
    assert {c.id: c.traits for c in found} == read
    assert {t.speaker for t in read.values()} == {"Ana Reis"}
    # ... and the whole row: a hit's fact is built from it, not read again
    facts = store.run(lambda tx: store.facts.by_ids(tx, REF, ids), write=False)
    assert {c.id: c.traits.fact() for c in found if c.traits and c.traits.fact} == facts


def test_the_index_answers_as_exact_search_and_follows_appends_and_forgets(
    pair: tuple[engram.Memory, engram.Memory],
) -> None:
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(600)])
    file = built(indexed)
    assert file.exists() and file.stat().st_size > 0
    same_answers(indexed, exact)
    searched = store_of(indexed).index.approximate._opened
    assert file.name in searched  # answered from the file, not the in-memory copy

    # Appended after the file: found from the rows (the delta), first where exact.
    new = indexed.remember(REF, QUERIES[1]).id
    assert hits(indexed, QUERIES[1])[0][0] == new
    # Forgotten softly after the file: never returned, though the file still holds it.
    top = hits(indexed, QUERIES[2])[0][0]
    indexed.forget(REF, top)
    assert top not in {i for i, _ in hits(indexed, QUERIES[2])}
    assert file.exists()
    same_answers(indexed, exact)
    indexed.restore(REF, top)
    assert top in {i for i, _ in hits(indexed, QUERIES[2])}
    same_answers(indexed, exact)


def test_a_delta_larger_than_the_answer_is_ranked_as_exact_search_ranks_it(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows written after the file are scored exactly, their best kept (ties with the last
    of them too): more tied rows than the answer holds, appended after the file, come out
    as exact search orders them, with a filter as without."""
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(300)])
    built(indexed)
    monkeypatch.setattr(approximate, "MERGE_FRACTION", 10.0)  # the rows stay beside it
    same = indexed.remember_many(
        REF, [Note(content=" ".join(["lantern"] * n), tags=("t",)) for n in range(1, 71)]
    )
    indexed.remember_many(
        REF, [Note(content=sentence(i) + " lantern", tags=("t",)) for i in range(300, 400)]
    )
    monkeypatch.setattr(approximate, "EXACT_ROWS", 10)  # the filter goes to the file too
    for kw in ({}, {"tags": ["t"]}):
        found = indexed.recall(REF, "lantern", top_k=30, mode="vector", **kw)  # type: ignore[arg-type]
        assert [h.fact.id for h in found] == [f.id for f in same[:30]]
        same_hits(found, exact.recall(REF, "lantern", top_k=30, mode="vector", **kw))  # type: ignore[arg-type]
        same_answers(indexed, exact, **kw)
    held = store_of(indexed).index.approximate._deltas["r:big"]
    assert len(held.rows) == 170  # answered beside the file, not from a merged one


def test_a_delta_s_best_hold_every_row_tied_with_the_last_of_them() -> None:
    """The delta's rows in any order, many of one vector: its best are the nearest, and
    every row tied with the last of them, so the answer's order (by seq) is exact
    search's."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    vectors[::2] = vectors[0]  # 20 rows of one vector
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    seqs = rng.permutation(np.arange(1_000, 1_040)).tolist()
    delta = approximate._Delta("f", max(seqs), 0)
    for seq, vector in zip(seqs, vectors, strict=True):
        delta.rows[seq] = (f"id{seq}", vector)
    query = vectors[0]
    for allowed in (None, set(seqs[::3])):
        rows = [s for s in seqs if allowed is None or s in allowed]
        exact = sorted(rows, key=lambda s: (-float(delta.rows[s][1] @ query), s))
        best = sorted(delta.best(query, allowed, 5), key=lambda r: (-r[2], r[0]))
        assert [r[0] for r in best[:5]] == exact[:5]
        tied = [s for s in rows if float(delta.rows[s][1] @ query) >= best[4][2] - 1e-6]
        assert {r[0] for r in best} == set(tied)


def test_reindex_builds_the_index_and_brings_it_up_to_date_and_waits(
    pair: tuple[engram.Memory, engram.Memory],
) -> None:
    """A store used only by processes that answer and exit never builds its index in the
    background; consolidating's reindex builds it, or builds it again with what was
    written beside it, and returns once it is installed."""
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(400)])
    held = "SELECT size FROM vector_indexes"
    store = store_of(indexed)

    def sizes() -> list[int]:
        return [
            r[0] for r in store.db.run(lambda tx: tx.conn.execute(held).fetchall(), write=False)
        ]

    def built(**kw: bool) -> int:
        report = indexed.consolidate(REF, steps=["reindex"], **kw).step("reindex")
        assert report is not None
        return report.counts["vector_index_built"]

    assert built(dry_run=True) == 1 and sizes() == []
    assert built() == 1 and sizes() == [400]  # no wait for a background build
    assert built() == 0 and built(dry_run=True) == 0  # current: nothing to do
    indexed.remember_many(REF, [sentence(i) for i in range(400, 430)])
    assert built(dry_run=True) == 1
    assert built() == 1 and sizes() == [430]
    same_answers(indexed, exact)
    assert indexed.consolidate(REF, steps=["reindex"]).changed == 0


def test_a_delta_past_its_bound_is_merged_into_the_file(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every query scores the delta, so it is merged once it passes MERGE_ROWS, however
    small a part of the file that is, by a process that searches the scope again and
    again: one that answers a question or two and exits would read the whole file to
    merge it and abandon the merge."""
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(1_000)])
    first = built(indexed)
    monkeypatch.setattr(approximate, "MERGE_ROWS", 50)
    monkeypatch.setattr(approximate, "MERGE_AFTER", 3)
    indexed.remember_many(REF, [sentence(i) for i in range(1_000, 1_060)])  # 6% of the file
    assert built(indexed) == first and built(indexed) == first  # two searches: no merge
    merged = built(indexed)  # the third
    assert merged != first
    store = store_of(indexed)
    size = store.db.run(
        lambda tx: tx.conn.execute("SELECT size FROM vector_indexes").fetchone()[0],
        write=False,
    )
    assert size == 1_060
    same_answers(indexed, exact)
    # the searches are counted again for the merged file's delta
    indexed.remember_many(REF, [sentence(i) for i in range(1_060, 1_120)])
    assert built(indexed) == merged and built(indexed) == merged
    assert built(indexed) != merged


def test_a_filter_is_answered_exactly(pair: tuple[engram.Memory, engram.Memory]) -> None:
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(400)])
    indexed.remember_many(
        REF, [Note(content=sentence(i) + " tagged", tags=("t",)) for i in range(400, 700)]
    )
    built(indexed)
    same_answers(indexed, exact, tags=["t"])
    # Wide (300 of 703 pass): the first passing of the graph's best, no row numbers
    # read; three, more than FEW but none among the best: every passing row number.
    later = indexed.remember_many(
        REF, [Note(sentence(i) + " few", tags=("few",)) for i in range(3)]
    )
    with pytest.MonkeyPatch.context() as watched:
        reads = stores.count_passing_rows(watched, 2)
        read_from_file: list[int] = []
        real = approximate._read

        def read(conn: Any, scope: str, seqs: list[int], *args: Any, **kw: Any) -> Any:
            read_from_file.extend(seqs)
            return real(conn, scope, seqs, *args, **kw)

        watched.setattr(approximate, "_read", read)
        answers = {query: recalled(indexed, query, tags=["t"]) for query in QUERIES}
        assert reads == []
        # only the best that pass are read from the file: every one of them tagged
        tagged = "SELECT fact FROM fact_tags WHERE tag = 't'"
        assert read_from_file and set(read_from_file) <= {
            r[0] for r in stores.rows(store_of(indexed).db.path, tagged)
        }
        hits = recalled(indexed, QUERIES[0], tags=["few"])
        assert {h.fact.id for h in hits} == {f.id for f in later} and len(reads) == 1
    for query, found in answers.items():
        same_hits(found, recalled(exact, query, tags=["t"]))


def test_a_tag_a_twentieth_have_is_found_among_a_best_asked_as_wide_as_its_share_says(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall's vector half wants 50; every twentieth of 1,000 facts is tagged. Its
    best 200 hold about 10 of them, and four times as wide, 800, about 40: every passing
    row number was read then. As wide as the share seen says holds 50 and half as many
    again is the whole graph, which holds all 50: no row number read, and the answers
    are exact search's."""
    from engram.storage.sql import passing

    indexed, exact = pair
    indexed.remember_many(
        REF, [Note(sentence(i), tags=("some",) if i % 20 == 0 else ()) for i in range(1_000)]
    )
    built(indexed)
    monkeypatch.setattr(approximate, "OVERSAMPLE", 100)  # the graph's best, not the file
    reads = stores.count_passing_rows(monkeypatch, 10)
    for margin, read in ((passing.MARGIN, 0), (0.0, len(QUERIES))):  # 0: four times alone
        monkeypatch.setattr(passing, "MARGIN", margin)
        reads.clear()
        answers = {query: recalled(indexed, query, tags=["some"]) for query in QUERIES}
        assert len(reads) == read, margin
        for query, found in answers.items():
            same_hits(found, recalled(exact, query, tags=["some"]))


def test_a_filter_s_rows_are_scored_where_fewer_than_the_graph_would_give(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter's rows are read and scored exactly where they are no more than the graph
    would be asked for (its best OVERSAMPLE, times as many more as the filter is narrow);
    where more pass, the graph gives them."""
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(100)])
    for tag, numbers in (("wide", range(100, 700)), ("narrow", range(700, 740))):
        indexed.remember_many(
            REF, [Note(content=f"{sentence(i)} {tag}", tags=(tag,)) for i in numbers]
        )
    built(indexed)
    monkeypatch.setattr(approximate, "OVERSAMPLE", 20)  # a pool of 50: 50 a pass
    scans: list[int] = []
    real = approximate.scanned

    def watched(*args: Any) -> list[Any]:
        scans.append(len(args[4]))
        return real(*args)

    monkeypatch.setattr(approximate, "scanned", watched)
    # 40 pass: the graph would be asked for its best 740 (every row), so they are scanned,
    # and answer as exact search does.
    same_answers(indexed, exact, tags=["narrow"])
    assert scans == [40] * len(QUERIES)
    # 600 pass: the graph is asked for its best 100 (about 81 of them pass). It answers
    # as the graph does (its own recall is measured by bench/scale.py).
    scans.clear()
    overlap = []
    for query in QUERIES:
        found, expected = (recalled(m, query, tags=["wide"]) for m in (indexed, exact))
        overlap.append(len({h.fact.id for h in found} & {h.fact.id for h in expected}) / 10)
    assert scans == []
    assert sum(overlap) / len(overlap) >= 0.9, overlap
    assert recalled(indexed, QUERIES[0], tags=["none such"]) == []  # none pass


def _scrubs(db_path: Path) -> list[Any]:
    return stores.rows(db_path, "SELECT file, seq FROM vector_scrubs")


def _in_no_file(directory: Path, quantized: bytes) -> None:
    """No file of the index folder holds these bytes of a vector."""
    for path in directory.iterdir():
        assert quantized not in path.read_bytes(), path


@pytest.mark.parametrize("change", ["forget for good", "correct", "trash", "purge the trash"])
def test_an_erased_fact_s_vector_leaves_the_index_file_at_its_commit_and_the_graph_stays(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path, change: str
) -> None:
    """Its bytes in the file are overwritten with zeros after the commit, in place: the
    same file answers after it, without it (a correction's new words searched beside the
    file), as exact search answers; the scope's graph is not built again. A fact moved to
    the trash goes from the file too (the trash keeps its own copy): its purge then finds
    none."""
    indexed, exact = pair
    texts = [sentence(i) for i in range(500)]
    facts = indexed.remember_many(REF, texts)
    file = built(indexed)
    victim = facts[123]
    quantized = stores.held_vector(file, db_path, victim.id)
    assert len(quantized) == DIMENSION and quantized in file.read_bytes()
    row = stores.rows(db_path, "SELECT file, last_seq, size FROM vector_indexes")

    if change == "correct":
        indexed.correct(REF, victim.id, "the shelf was moved to the attic")
    elif change == "forget for good":
        indexed.forget(REF, victim.id, hard=True)
    else:
        indexed.forget(REF, victim.id)
        if change == "purge the trash":
            indexed.forget(REF, victim.id, hard=True)
    assert file.exists() and _scrubs(db_path) == []
    assert stores.rows(db_path, "SELECT file, last_seq, size FROM vector_indexes") == row
    _in_no_file(file.parent, quantized)
    found = [i for i, _ in hits(indexed, texts[123])]
    assert victim.id not in found
    same_answers(indexed, exact)
    if change == "correct":
        assert hits(indexed, "the shelf was moved to the attic")[0][0] == victim.id
    assert store_of(indexed).index.approximate.settle(timeout=60)  # no build was asked for
    assert stores.rows(db_path, "SELECT file, last_seq, size FROM vector_indexes") == row
    assert sorted(p.name for p in file.parent.glob("*.usearch")) == [file.name]


def test_a_process_that_never_searched_overwrites_an_erased_vector(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    indexed, _ = pair
    facts, file = filled_and_built(indexed)
    quantized = stores.held_vector(file, db_path, facts[9].id)
    with engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)) as writer:
        writer.forget(REF, facts[9].id, hard=True)
        assert "approximate" in store_of(writer).index.__dict__  # loaded to overwrite
    assert file.exists() and quantized not in file.read_bytes() and _scrubs(db_path) == []


def test_an_erased_vector_left_by_a_stopped_process_is_overwritten_as_a_store_opens(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fact and the file's row to overwrite are one commit; the overwrite follows it.
    A process stopped between the two leaves the row, and the next store to open the file
    does the overwrite (meanwhile the fact is never answered: the change log excludes it)."""
    indexed, _ = pair
    texts = [sentence(i) for i in range(400)]
    facts = indexed.remember_many(REF, texts)
    file = built(indexed)
    quantized = stores.held_vector(file, db_path, facts[4].id)
    with monkeypatch.context() as patched:
        patched.setattr(approximate, "scrub", lambda *args: None)
        indexed.forget(REF, facts[4].id, hard=True)
    assert quantized in file.read_bytes() and len(_scrubs(db_path)) == 1
    assert facts[4].id not in {i for i, _ in hits(indexed, texts[4])}
    with engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)):
        pass
    assert file.exists() and quantized not in file.read_bytes() and _scrubs(db_path) == []


def test_a_file_dropped_by_a_stopped_process_is_deleted_as_a_store_opens(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    """A commit that drops a file's row deletes the file after it; a process stopped in
    between leaves it, and the next store to open deletes it."""
    indexed, _ = pair
    _, file = filled_and_built(indexed)
    stores.rows(db_path, "DELETE FROM vector_indexes")
    assert file.exists()
    with engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)):
        assert not file.exists()


def test_a_build_never_merges_a_file_with_a_vector_still_to_overwrite(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge copies the file's vectors, a removed key's bytes too: built from a file whose
    erased vector is not yet overwritten, it would keep them. It is built from the rows."""
    indexed, exact = pair
    facts = indexed.remember_many(REF, [sentence(i) for i in range(400)])
    built(indexed)
    approximate_index = store_of(indexed).index.approximate
    indexed.forget(REF, facts[0].id)  # to the trash: a change the next file is built after
    assert approximate_index.build(REF.key)
    (name,) = stores.rows(db_path, "SELECT file FROM vector_indexes")[0]
    file = approximate_index.directory / name
    quantized = stores.held_vector(file, db_path, facts[4].id)
    monkeypatch.setattr(approximate, "scrub", lambda *args: None)
    indexed.forget(REF, facts[4].id, hard=True)
    indexed.remember_many(REF, [sentence(i) for i in range(400, 430)])
    restored: list[str] = []
    restore = approximate._restored
    monkeypatch.setattr(
        approximate, "_restored", lambda *a, **k: restored.append(a[1].name) or restore(*a, **k)
    )
    assert approximate_index.build(REF.key)
    assert file.name not in restored  # not read to merge: built from the rows
    (name,) = stores.rows(db_path, "SELECT file FROM vector_indexes")[0]
    assert name != file.name and quantized not in (file.parent / name).read_bytes()
    same_answers(indexed, exact)


def test_overwrites_take_the_folder_s_lock(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    """One process at a time overwrites: another's zeros, written while this one compares
    bytes, would read as a vector not found and drop the file."""
    import threading
    import time

    from engram.storage.sqlite.index import vectorfiles

    indexed, _ = pair
    facts = indexed.remember_many(REF, [sentence(i) for i in range(300)])
    file = built(indexed)
    quantized = stores.held_vector(file, db_path, facts[2].id)
    forgotten = threading.Thread(target=lambda: indexed.forget(REF, facts[2].id, hard=True))
    with vectorfiles.files_lock(file.parent):
        forgotten.start()
        deadline = time.monotonic() + 60
        while not _scrubs(db_path) and time.monotonic() < deadline:
            time.sleep(0.01)  # until the forget has committed
        assert _scrubs(db_path) and forgotten.is_alive()  # its overwrite waits for the lock
        assert quantized in file.read_bytes()
    forgotten.join(timeout=60)
    assert not forgotten.is_alive() and quantized not in file.read_bytes()
    assert _scrubs(db_path) == []


def _not_found(*args: object) -> bool:
    return False


def _full(*args: object) -> bool:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("overwrite", [_not_found, _full], ids=["not found once", "disk full"])
def test_a_vector_its_file_cannot_overwrite_drops_the_file(
    pair: tuple[engram.Memory, engram.Memory],
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    overwrite: Any,
) -> None:
    """A vector found at no row of its file or at several, or a file that cannot be
    written (a full disk, made read-only): the erased vector goes with its file."""
    indexed, exact = pair
    facts, file = filled_and_built(indexed)
    quantized = stores.held_vector(file, db_path, facts[4].id)
    monkeypatch.setattr(approximate, "overwrite", overwrite)
    indexed.forget(REF, facts[4].id, hard=True)
    assert not file.exists() and _scrubs(db_path) == []
    _in_no_file(file.parent, quantized)
    same_answers(indexed, exact)


def test_a_file_that_cannot_be_deleted_fails_the_forget_after_its_commit_and_is_retried(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error says the forget was committed; what follows the commit in the process
    follows it still (the scope's copies dropped), and the next store to open the file
    deletes it."""
    indexed, _ = pair
    _, file = filled_and_built(indexed)
    store = store_of(indexed)
    recalled(indexed, QUERIES[0])
    assert file.name in store.index.approximate._opened

    def refused(*args: object) -> set[str]:
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as patched:
        patched.setattr(approximate.vectorfiles, "sweep", refused)
        with pytest.raises(engram.StorageFailure, match="was committed") as failed:
            indexed.forget_all(REF, expected_count=400, hard=True)
    assert failed.value.hint is not None and "next forget" in failed.value.hint
    assert indexed.facts(REF).facts == [] and file.exists()
    assert file.name not in store.index.approximate._opened
    with engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)):
        assert not file.exists()


def test_what_follows_a_commit_in_the_process_follows_it_where_its_purge_fails(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed, _ = pair
    _, file = filled_and_built(indexed)
    store = store_of(indexed)
    recalled(indexed, QUERIES[0])
    assert file.name in store.index.approximate._opened

    def failing(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(database.forgetting, "purge", failing)
    with pytest.raises(engram.StorageFailure):
        indexed.forget_all(REF, expected_count=400, hard=True)
    assert file.name not in store.index.approximate._opened  # the scope's copies dropped


@pytest.mark.parametrize("log", ["names it", "was cleared"])
def test_a_fact_trashed_before_migration_27_leaves_its_file_as_the_store_opens(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, log: str
) -> None:
    """A fact in the trash since before its move overwrote its vector (migration 26) may
    still be in its scope's file. Where the change log names it after the file's mark, it
    is overwritten as the store opens and the graph stays; a file whose log was cleared
    past its mark cannot tell what it holds, and goes. Its purge then drops no file."""
    embedder = engram.HashingEmbedder(DIMENSION)
    with engram.open(db_path, embedder=embedder, vector_index_above=ABOVE) as before:
        facts, file = filled_and_built(before)
        quantized = stores.held_vector(file, db_path, facts[7].id)
        with monkeypatch.context() as patched:  # trashed as before 26: left in the file
            patched.setattr(approximate, "scrub", lambda *args: None)
            before.forget(REF, facts[7].id)
    stores.rows(db_path, "DELETE FROM vector_scrubs")
    for statement in stores.BEFORE_TRASH_SCRUBS:
        stores.rows(db_path, statement)
    stores.rows(db_path, "INSERT INTO vector_trash_held VALUES (?)", (facts[7].id,))
    if log == "was cleared":
        stores.rows(db_path, "UPDATE scope_state SET changes_from = changes_from + 1000")
    stores.rows(db_path, "PRAGMA user_version = 26")
    assert quantized in file.read_bytes()
    with (
        engram.open(db_path, embedder=embedder, vector_index_above=ABOVE) as indexed,
        engram.open(db_path, embedder=embedder, vector_index_above=1 << 52) as exact,
    ):
        assert file.exists() == (log == "names it") and _scrubs(db_path) == []
        _in_no_file(file.parent, quantized)
        indexed.forget(REF, facts[7].id, hard=True)  # its purge
        assert file.exists() == (log == "names it") and _scrubs(db_path) == []
        same_answers(indexed, exact)


@pytest.mark.parametrize("hard", [False, True])
def test_a_scope_forgotten_whole_drops_its_file(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path, hard: bool
) -> None:
    """Not one row at a time."""
    indexed, exact = pair
    _, file = filled_and_built(indexed)
    indexed.forget_all(REF, expected_count=400, hard=hard)
    assert not file.exists() and _scrubs(db_path) == []
    same_answers(indexed, exact)


def test_more_erased_at_once_than_a_merge_takes_drops_the_file(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    indexed, _ = pair
    facts, file = filled_and_built(indexed)
    store = store_of(indexed)
    seqs = [s for (s,) in stores.rows(db_path, "SELECT seq FROM facts ORDER BY seq")]
    erased = seqs[: int(approximate.MERGE_FRACTION * 400) + 1]  # as one commit's triggers
    stores.rows(
        db_path,
        "INSERT INTO vector_scrubs (file, seq) SELECT ?, value FROM json_each(?)",
        (file.name, json.dumps(erased)),
    )
    store.index.sweep()
    assert not file.exists() and _scrubs(db_path) == []
    assert stores.rows(db_path, "SELECT count(*) FROM vector_indexes") == [(0,)]
    assert len(facts) == 400


def test_a_build_that_overlapped_an_erasure_it_cannot_overwrite_is_not_installed(
    pair: tuple[engram.Memory, engram.Memory], tmp_path: Path
) -> None:
    indexed, _ = pair
    facts = indexed.remember_many(REF, [sentence(i) for i in range(300)])
    store = store_of(indexed)
    start = store.db.run(lambda tx: approximate._state(tx.conn, "r:big"), write=False)
    indexed.forget(REF, facts[0].id, hard=True)
    installed = store.db.run(
        lambda tx: approximate._install(
            tx.conn, "r:big", tmp_path / "x.usearch", start, 300, 300, approximate.EXPANSION_ADD
        )
    )
    assert not installed


def test_a_build_overlapped_by_more_forgets_than_a_merge_takes_is_not_installed(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path, tmp_path: Path
) -> None:
    """Its file could have each one overwritten (it holds them all), but so many are
    built again from the rows, as a merge would be."""
    import shutil

    indexed, _ = pair
    facts = indexed.remember_many(REF, [sentence(i) for i in range(300)])
    file = built(indexed)
    store = store_of(indexed)
    start = store.db.run(lambda tx: approximate._state(tx.conn, REF.key), write=False)
    new = tmp_path / "new.usearch"  # as the build wrote it, before the forgets
    shutil.copy(file, new)
    quantized = stores.held_vector(new, db_path, facts[0].id)
    for fact in facts[: int(approximate.MERGE_FRACTION * 300) + 1]:
        indexed.forget(REF, fact.id, hard=True)
    installed = store.db.run(
        lambda tx: approximate._install(
            tx.conn, REF.key, new, start, 300, 300, approximate.EXPANSION_ADD
        )
    )
    assert not installed
    assert quantized in new.read_bytes()  # not overwritten: thrown away whole


@pytest.mark.parametrize("merge", [True, False])
def test_a_build_that_overlapped_forgets_is_installed_without_their_vectors(
    pair: tuple[engram.Memory, engram.Memory],
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    merge: bool,
) -> None:
    """Facts read by a build, then forgotten for good or to the trash before it installs:
    their vectors are overwritten in the new file, which is installed (a build was thrown
    away instead, and at 1M facts one takes 15 minutes: forgets could starve it)."""
    indexed, exact = pair
    facts, file = filled_and_built(indexed)
    gone = [stores.held_vector(file, db_path, f.id) for f in facts[3:5]]
    more = 20 if merge else 200  # a merge's tenth, or more: built from the rows
    indexed.remember_many(REF, [sentence(i) for i in range(400, 400 + more)])
    batches = approximate.ApproximateIndex._batches

    def read_then_forgotten(self: Any, *args: Any) -> Iterator[Any]:
        for at, batch in enumerate(batches(self, *args)):
            yield batch
            if at == 0:
                indexed.forget(REF, facts[3].id, hard=True)
                indexed.forget(REF, facts[4].id)

    monkeypatch.setattr(approximate.ApproximateIndex, "_batches", read_then_forgotten)
    assert store_of(indexed).index.approximate.build(REF.key)
    (name,) = stores.rows(db_path, "SELECT file FROM vector_indexes")[0]
    assert name != file.name and (file.parent / name).exists()
    for quantized in gone:
        _in_no_file(file.parent, quantized)
    same_answers(indexed, exact)


def _cut_short(file: Path) -> None:
    file.write_bytes(file.read_bytes()[:100])


@pytest.mark.parametrize(
    ("damage", "said_as"),
    [(_cut_short, ""), (Path.unlink, "is missing")],
    ids=["cut short", "missing"],
)
def test_a_missing_or_damaged_file_is_said_once_and_rebuilt(
    pair: tuple[engram.Memory, engram.Memory],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[Path], None],
    said_as: str,
) -> None:
    """Exact search answers until the build ends, and the file's state is logged once,
    not at every search meanwhile."""
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(300)])
    file = built(indexed)
    before = recalled(exact, QUERIES[0])
    with engram.open(store_of(indexed).path, embedder=engram.HashingEmbedder(DIMENSION)) as fresh:
        store_of(fresh).index.approximate.above = ABOVE
        with monkeypatch.context() as held:  # no build yet: the file stays as it is
            held.setattr(approximate.ApproximateIndex, "want", lambda self, scope: None)
            damage(file)
            with caplog.at_level(logging.WARNING, logger="engram.storage"):
                for _ in range(3):
                    same_hits(recalled(fresh, QUERIES[0]), before)
        said = [r.getMessage() for r in caplog.records if "vector index" in r.getMessage()]
        assert len(said) == 1 and said_as in said[0], said
        assert built(fresh) != file
        same_hits(recalled(fresh, QUERIES[0]), before)


CHILD = textwrap.dedent(
    """
    import sys, engram
    from engram import Note, ResourceRef
    from engram.storage.sqlite.index import approximate
    path, stage = sys.argv[1], sys.argv[2]
    ref = ResourceRef("big")

    def hold(*args, **kwargs):
        print("holding", flush=True)
        sys.stdin.read()  # killed here

    if stage == "mid-build":
        approximate.ApproximateIndex._batches = lambda self, *a: hold() or iter(())
    elif stage == "mid-save":
        approximate._fsync = hold
    elif stage == "before-install":
        approximate._install = hold
    mem = engram.open(path, embedder=engram.HashingEmbedder({dimension}))
    mem._store.index.approximate.above = {above}
    if stage == "after-rows":
        mem.remember(ref, "a fact written after the index")
        mem.forget(ref, sys.argv[3])
        hold()
    mem._store.index.approximate.build("r:big")
    """
).format(dimension=DIMENSION, above=ABOVE)


@pytest.mark.parametrize("stage", ["mid-build", "mid-save", "before-install", "after-rows"])
def test_a_writer_killed_between_rows_and_index_loses_nothing(
    db_path: Path, tmp_path: Path, stage: str
) -> None:
    texts = [sentence(i) for i in range(400)]
    with engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        store_of(mem).index.approximate.above = ABOVE
        facts = mem.remember_many(REF, texts)
        if stage == "after-rows":
            built(mem)
    victim = facts[42]
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script), str(db_path), stage, victim.id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "holding"  # the condition, not a delay
        child.kill()
    finally:
        child.wait(timeout=60)
    with (
        engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)) as indexed,
        engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)) as exact,
    ):
        store_of(indexed).index.approximate.above = ABOVE
        store_of(exact).index.approximate.above = 1 << 62
        file = built(indexed)
        directory = file.parent
        assert sorted(p.name for p in directory.glob("*.usearch*")) == [file.name]
        same_answers(indexed, exact)
        if stage == "after-rows":  # the rows committed, the index never heard
            assert hits(indexed, "a fact written after the index")[0][1] == 1.0
            assert victim.id not in {i for i, _ in hits(indexed, texts[42])}


def test_the_local_model_loads_after_the_index(tmp_path: Path) -> None:
    """In a process that opened a scope's index first, the local model still loads and
    embeds (usearch loaded before onnxruntime crashed onnxruntime's first session)."""
    script = textwrap.dedent(
        f"""
        import engram
        from engram import ResourceRef
        ref = ResourceRef("big")
        with engram.open({str(tmp_path / "a.db")!r}, embedder=engram.HashingEmbedder(16),
                         vector_index_above=50) as mem:
            mem.remember_many(ref, [f"note {{i}} about shelf {{i % 7}}" for i in range(80)])
            assert mem._store.index.approximate.build("r:big")
            assert mem.recall(ref, "shelf 3", top_k=3, mode="vector")
        with engram.open({str(tmp_path / "b.db")!r}) as local:
            local.remember(ref, "the local model embeds this")
            print(local.recall(ref, "what does the local model embed", top_k=1)[0].fact.content)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "the local model embeds this"


def test_a_merge_holds_each_row_once(pair: tuple[engram.Memory, engram.Memory]) -> None:
    """A merge starts from the file: a row appended after it and then changed is added
    once, and the merged file opens with the count its row says."""
    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(400)])
    first = built(indexed)
    later = indexed.remember_many(REF, [sentence(i) for i in range(400, 420)])
    # The newest row forgotten: the next insert takes its seq, changed after the file and
    # newer than it.
    indexed.forget(REF, later[-1].id)
    indexed.remember(REF, "a fact that takes the forgotten one's row number")
    store = store_of(indexed)
    assert store.index.approximate.build("r:big")  # merged from the file
    file, size = store.db.run(
        lambda tx: tx.conn.execute("SELECT file, size FROM vector_indexes").fetchone(),
        write=False,
    )
    assert file != first.name and size == indexed.count(REF) == 420
    from usearch.index import Index

    assert len(Index.restore(str(first.parent / file), view=True)) == size
    same_answers(indexed, exact)


def test_a_forget_does_not_hold_its_turn_to_write_while_a_build_installs(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build installs its file holding the index folder's lock and waiting for a turn to
    write; a forget's commit sweeps that folder under the same lock. The sweep waits until
    the forget's turn to write is over, or the two wait for each other."""
    import threading

    from engram.storage.sqlite import forgetting
    from engram.storage.sqlite.index import vectorfiles

    indexed, _ = pair
    facts = indexed.remember_many(REF, [sentence(i) for i in range(300)])
    directory = built(indexed).parent
    store = store_of(indexed)
    purging, done = threading.Event(), threading.Event()
    purge = forgetting.purge

    def purged(conn: object, *, scrub: str | None = None) -> None:  # the forget's commit,
        purging.set()  # inside its turn to write
        purge(conn, scrub=scrub)  # type: ignore[arg-type]

    monkeypatch.setattr(forgetting, "purge", purged)
    took: list[bool] = []

    def installing() -> None:  # as a build's install: the folder's lock, then a write
        with vectorfiles.files_lock(directory):
            held.set()
            purging.wait(timeout=60)
            took.append(store.db._writer.acquire(timeout=10))
            if took[-1]:
                store.db._writer.release()
        done.set()

    held = threading.Event()
    builder = threading.Thread(target=installing)
    builder.start()
    assert held.wait(timeout=60)
    indexed.forget(REF, facts[0].id, hard=True)
    builder.join(timeout=60)
    assert done.is_set() and took == [True]


def test_a_store_lets_go_of_a_file_another_store_dropped(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    """An erase elsewhere unlinks the file; a store that had it open lets it go at its
    next search, so its blocks leave the disk (an open mapping keeps them)."""
    indexed, _ = pair
    indexed.remember_many(REF, [sentence(i) for i in range(300)])
    file = built(indexed)
    hits(indexed, QUERIES[0])
    assert file.name in store_of(indexed).index.approximate._opened
    with engram.open(db_path, embedder=engram.HashingEmbedder(DIMENSION)) as elsewhere:
        elsewhere.forget_all(REF, expected_count=300, hard=True)
        elsewhere.remember_many(REF, [sentence(i) for i in range(300, 600)])
    assert not file.exists()
    hits(indexed, QUERIES[0])
    assert file.name not in store_of(indexed).index.approximate._opened


def test_hybrid_reads_its_full_text_half_beside_the_graph_search_and_answers_alike(
    pair: tuple[engram.Memory, engram.Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the graph serves the vector half, the full-text half runs on a thread of
    its own beside it (the same connection and read; under a filter many facts pass
    too, once they are counted), and so does the reading of its
    candidates' traits: the same hits as the halves one after the other with every
    trait read after both, and a failure of that half reaches the caller."""
    import threading

    from engram.storage.sql import passing
    from engram.storage.sql.tables import FactTable
    from engram.storage.sqlite.store import SQLiteCandidates

    indexed, exact = pair
    indexed.remember_many(REF, [sentence(i) for i in range(600)])
    built(indexed)
    text_half, both = SQLiteCandidates._text, SQLiteCandidates.both
    traits = FactTable.traits
    ran_on: list[str] = []
    traits_on: list[str] = []

    def watched(self: SQLiteCandidates, *args: Any, **kwargs: Any) -> Any:
        ran_on.append(threading.current_thread().name)
        return text_half(self, *args, **kwargs)

    def traits_watched(self: FactTable, *args: Any, **kwargs: Any) -> Any:
        traits_on.append(threading.current_thread().name)
        return traits(self, *args, **kwargs)

    monkeypatch.setattr(SQLiteCandidates, "_text", watched)
    monkeypatch.setattr(FactTable, "traits", traits_watched)
    monkeypatch.setattr(passing, "FEW", 100)  # more pass the strength floor below
    beside = {q: indexed.recall(REF, q, top_k=10, mode="hybrid") for q in QUERIES}
    floor = {q: indexed.recall(REF, q, top_k=10, mode="hybrid", min_strength=0.5) for q in QUERIES}
    assert set(ran_on) == {"engram-text-half"}, ran_on  # under a filter too
    assert "engram-text-half" in traits_on, traits_on
    ran_on.clear()
    monkeypatch.setattr(passing, "FEW", 1_000)  # a few facts: searched before a thread starts
    indexed.recall(REF, QUERIES[0], top_k=10, mode="hybrid", min_strength=0.5)
    assert set(ran_on) == {threading.current_thread().name}, ran_on
    ran_on.clear()
    traits_on.clear()
    for query in QUERIES:  # below the graph's threshold: one after the other
        exact.recall(REF, query, top_k=10, mode="hybrid")
    assert set(ran_on) == set(traits_on) == {threading.current_thread().name}

    def in_turn(
        self: SQLiteCandidates,
        tx: Any,
        scope: Any,
        terms: Any,
        vector: Any,
        filters: Any,
        limit: int,
        then: Any = None,
    ) -> Any:
        return self.text(tx, scope, terms, filters, limit), self.vector(
            tx, scope, vector, filters, limit
        )

    monkeypatch.setattr(SQLiteCandidates, "both", in_turn)
    for query in QUERIES:
        same_hits(beside[query], indexed.recall(REF, query, top_k=10, mode="hybrid"))
        in_order = indexed.recall(REF, query, top_k=10, mode="hybrid", min_strength=0.5)
        same_hits(floor[query], in_order)
    monkeypatch.setattr(SQLiteCandidates, "both", both)

    def broken(self: SQLiteCandidates, *args: Any, **kwargs: Any) -> Any:
        raise engram.StorageFailure("the full-text half failed")

    monkeypatch.setattr(SQLiteCandidates, "_text", broken)
    with pytest.raises(engram.StorageFailure, match="full-text half failed"):
        indexed.recall(REF, QUERIES[0], top_k=10, mode="hybrid")
    monkeypatch.setattr(SQLiteCandidates, "_text", text_half)
    assert indexed.recall(REF, QUERIES[0], top_k=10, mode="hybrid")


def test_a_new_connection_s_first_hybrid_recall_reads_both_halves_at_once(
    pair: tuple[engram.Memory, engram.Memory], db_path: Path
) -> None:
    """Where the graph serves a scope, the full-text half runs on a thread beside its
    search, on the same connection; loading the scope's postings reads FTS5's own index
    through this connection's temporary tables. They were made on the first query's
    error, whose class the other thread's statements could change: a new process's first
    hybrid recall over a large scope failed (StorageFailure, "no such table")."""
    indexed, _ = pair
    indexed.remember_many(REF, [sentence(i) for i in range(400)])
    built(indexed)
    for _ in range(5):  # each a new store on the file: a new connection, its first recall
        with engram.open(
            db_path, embedder=engram.HashingEmbedder(DIMENSION), vector_index_above=ABOVE
        ) as fresh:
            store = store_of(fresh)
            store.texts.index_above = 100  # the scope's postings are held, and loaded
            store.texts.load_inline = True  # by this first search
            for query in QUERIES:
                assert fresh.recall(REF, query, top_k=10, mode="hybrid")


def test_a_build_looks_at_closed_between_its_adds(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store closed while its index is being built waits for one add of a few rows, not
    for a batch read whole (at 1M rows, seconds each); the build installs nothing."""
    usearch = approximate.usearch_module()
    added: list[int] = []
    builder: list[Any] = []

    class Index(usearch.Index):  # type: ignore[misc,name-defined]
        def add(self, keys: Any, vectors: Any, **kw: Any) -> Any:
            added.append(len(keys))
            builder[0].closed = True  # as a close does while this add runs
            return super().add(keys, vectors, **kw)

    monkeypatch.setattr(approximate, "ADD_AT_ONCE", 10, raising=False)
    module = type("usearch", (), {"Index": Index})
    monkeypatch.setattr(approximate, "usearch_module", lambda: module)
    with engram.open(
        db_path, embedder=engram.HashingEmbedder(DIMENSION), vector_index_above=ABOVE
    ) as mem:
        builder.append(store_of(mem).index.approximate._builder)
        mem.remember_many(REF, [sentence(i) for i in range(ABOVE + 100)])
        mem.recall(REF, QUERIES[0], top_k=5, mode="vector")  # asks for the build
        assert store_of(mem).index.approximate.settle(timeout=120)
        installed = store_of(mem).db.run(
            lambda tx: tx.conn.execute("SELECT count(*) FROM vector_indexes").fetchone(),
            write=False,
        )
    assert added == [10]
    assert installed == (0,)
