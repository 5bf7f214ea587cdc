"""A forget is real: after a forget, a forget-all, a correction or a compaction, the
words it removed are nowhere in the SQLite file or its log (spec 003: people's memories)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import engram
import stores
from engram import ResourceRef
from engram.core.scopes import PersonAppRef
from engram.storage.sqlite import forgetting

REF = ResourceRef("user-42")
PLANTED = "zqxplantedword"  # a word nothing else in the file holds


def _files(db_path: Path) -> Iterator[Path]:
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = Path(f"{db_path}{suffix}")
        if path.exists():
            yield path


def found(db_path: Path, word: str) -> list[str]:
    """The files (the store, its log) whose bytes hold ``word`` in any case."""
    return [p.name for p in _files(db_path) if word.encode() in p.read_bytes().lower()]


def _filler(rng: random.Random, n: int) -> list[str]:
    words = ["plan", "email", "friday", "invoice", "ticket", "deploy", "lisbon", "coffee"]
    return [" ".join(rng.choices(words, k=8)) + f" {i}" for i in range(n)]


def _forget_one(mem: engram.Memory, fact: engram.Fact) -> None:
    assert mem.forget(REF, fact.id, hard=True)


def _forget_all(mem: engram.Memory, fact: engram.Fact) -> None:
    mem.forget_all(REF, expected_count=mem.count(REF), hard=True)


def _trash_then_delete(mem: engram.Memory, fact: engram.Fact) -> None:
    assert mem.forget(REF, fact.id)  # softly: the trash keeps the words...
    assert mem.trash(REF).facts[0].fact.content == fact.content
    receipt = mem.delete_traces(REF, [fact.id])  # ...until they are deleted for good
    assert (receipt.facts, receipt.trashed) == (0, 1)


def _correct_then_delete(mem: engram.Memory, fact: engram.Fact) -> None:
    # A correction keeps the old words in the ledger, for a revert; deleting the fact
    # for good erases them there too.
    mem.correct(REF, fact.id, "the corrected words of that fact")
    receipt = mem.delete_traces(REF, [fact.id])
    assert receipt.facts == 1 and receipt.ledger_items_scrubbed == 2  # the add, the correct


def _compact_then_delete_scope(mem: engram.Memory, fact: engram.Fact) -> None:
    assert mem.compact(REF, max_age=timedelta(days=1)).removed >= 1  # to the trash
    assert mem.delete_scope(REF).trashed >= 1


WAYS: dict[str, Callable[[engram.Memory, engram.Fact], None]] = {
    "forget": _forget_one,
    "forget_all": _forget_all,
    "trash": _trash_then_delete,
    "correct": _correct_then_delete,
    "compact": _compact_then_delete_scope,
}


@pytest.fixture(params=[True, False], ids=["fts-secure-delete", "fts-merge"])
def secure_fts(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways the full-text index forgets: FTS5's secure-delete option (SQLite 3.44+),
    and, on an older SQLite, merging the whole index after the write."""
    if request.param and not forgetting.SECURE_FTS:
        pytest.skip("this driver's SQLite has no FTS5 secure-delete")
    monkeypatch.setattr(forgetting, "SECURE_FTS", request.param)
    return bool(request.param)


@pytest.mark.parametrize("way", list(WAYS))
def test_forgotten_words_leave_the_file_and_its_log(
    db_path: Path, way: str, secure_fts: bool
) -> None:
    rng = random.Random(7)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(REF, _filler(rng, 300))
        old = None
        if way == "compact":  # an old fact, as a compaction by age removes
            old = mem.remember(
                REF, f"met {PLANTED} in March", created_at=datetime.now(UTC) - timedelta(days=3)
            )
        context = None if way == "correct" else f"Ana: {PLANTED}? sure"  # kept by a correction
        planted = old or mem.remember(REF, f"the door code is {PLANTED} 4711", context=context)
        mem.remember_many(REF, _filler(rng, 300)[150:])  # rows on both sides of it
        assert mem.recall(REF, PLANTED, mode="text")[0].fact.id == planted.id
        assert found(db_path, PLANTED)  # the probe finds the word while it is remembered
        WAYS[way](mem, planted)
        assert mem.recall(REF, PLANTED, mode="text") == []
        assert found(db_path, PLANTED) == []  # while the store is still open
    assert found(db_path, PLANTED) == []


@pytest.mark.parametrize(
    "others",
    [200, 2 * forgetting.BULK_RATIO + 10],
    ids=["large-against-the-store: index merged", "small: deleted securely"],
)
def test_a_persons_forget_all_leaves_nothing(db_path: Path, others: int) -> None:
    scope = PersonAppRef("p1", "app:notes")
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(REF, _filler(random.Random(1), others))  # someone else's, kept
        mem.remember_many(scope, [f"{PLANTED} is my diagnosis", "lives in Porto"])
        assert found(db_path, PLANTED)
        assert mem.forget_all(scope, expected_count=2, hard=True) == 2
        assert found(db_path, PLANTED) == []
        assert mem.count(REF) == others
        assert mem.recall(REF, "invoice", mode="text")  # the merged index still answers


def test_a_store_from_before_forgets_what_it_had_forgotten_when_opened(db_path: Path) -> None:
    """A store whose forgets were only logical (made before this) is cleaned once."""
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(REF, _filler(random.Random(2), 200))
    conn = forgetting.sqlite3.connect(db_path)  # a forget as an older engram made it
    conn.execute("PRAGMA secure_delete = OFF")
    conn.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('secure-delete', 0)")
    conn.execute(
        "INSERT INTO facts (id, scope, scope_token, content, content_hash, tags, created_at,"
        " updated_at) VALUES ('f_x', ?, 'tok', ?, 'h', '[]', 0, 0)",
        (REF.key, f"{PLANTED} once"),
    )
    conn.commit()
    conn.execute("DELETE FROM facts WHERE id = 'f_x'")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    if not forgetting.SECURE_FTS:
        pytest.skip("without FTS5 secure-delete the next forget merges the index")
    assert found(db_path, PLANTED)  # still in the index's segments
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)):
        pass
    assert found(db_path, PLANTED) == []


def test_names_a_relation_was_read_from_leave_the_file_with_their_fact(db_path: Path) -> None:
    """The graph reads relations from a fact's sentence ("X works for Y"): the names and
    their relation go with the fact, on every read path and in every byte of the store."""
    person, company = "Zqvarnek", "Zqolbrant"  # each a unique token, as PLANTED is
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(REF, _filler(random.Random(3), 200))
        said = mem.remember(REF, f"Ana's brother {person} works for {company} Labs in 2021.")
        named = {mem.graph.entity(REF, r.target).name for r in mem.graph.relations(REF)}
        assert f"{company} Labs" in named  # the relation was read
        probes = [person.lower(), company.lower()]  # found() reads the bytes case-blind
        assert all(found(db_path, word) for word in probes)
        mem.forget(REF, said.id, hard=True)
        assert mem.graph.relations(REF, include_expired=True) == []
        assert mem.graph.search(REF, person) == [] and mem.graph.search(REF, company) == []
        assert not any(found(db_path, word) for word in probes)
    assert not any(found(db_path, word) for word in probes)


def test_a_common_word_saved_in_its_scope_s_text_base_leaves_with_its_facts(
    db_path: Path,
) -> None:
    """A large scope's text base saves its common terms' postings, each under its word:
    a fact erased leaves every posting in the same write (they would tell which common
    words it held), and a word whose facts are all erased leaves the base."""
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        bases = mem._store.texts.bases  # type: ignore[attr-defined]  # SQLite's
        bases.above, bases.term_rows = 100, 5
        mem.remember_many(REF, _filler(random.Random(4), 200))
        planted = mem.remember_many(REF, [f"{PLANTED} note {i}" for i in range(6)])
        assert bases.build(REF.key)
        saved = "SELECT count(*) FROM text_base_terms WHERE term = ?"
        assert stores.rows(db_path, saved, (PLANTED,)) == [(1,)]
        held = "SELECT length(counts) FROM text_base_terms WHERE term = ?"
        for left, fact in enumerate(reversed(planted)):
            assert stores.rows(db_path, held, (PLANTED,)) == [(len(planted) - left,)]
            assert mem.forget(REF, fact.id, hard=True)
        assert stores.rows(db_path, saved, (PLANTED,)) == [(0,)]
        assert stores.rows(db_path, "SELECT count(*) FROM text_base_terms") != [(0,)]
        assert mem.recall(REF, PLANTED, mode="text") == []
        assert found(db_path, PLANTED) == []
    assert found(db_path, PLANTED) == []


def test_old_words_the_ledger_s_retention_drops_leave_the_file_and_its_log(
    db_path: Path, clock: stores.ManualClock
) -> None:
    """A correction keeps the old words in the ledger, for a revert; its retention drops
    them at a compaction, and with them every copy in the file and its log."""
    with engram.open(
        db_path,
        embedder=engram.HashingEmbedder(16),
        clock=clock,
        ledger_retention=timedelta(days=1),
    ) as mem:
        mem.remember_many(REF, _filler(random.Random(5), 300))
        planted = mem.remember(REF, f"the door code is {PLANTED} 4711")
        mem.correct(REF, planted.id, "the door code changed")
        assert mem.recall(REF, PLANTED, mode="text") == []
        assert found(db_path, PLANTED)  # the ledger's before-state
        clock.advance(timedelta(days=2))
        mem.compact(REF)
        assert found(db_path, PLANTED) == []
    assert found(db_path, PLANTED) == []
