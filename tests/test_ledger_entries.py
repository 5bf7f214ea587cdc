"""A ledger entry that changes more objects than it holds writes its items as it goes:
the entry reads back whole, each object with its first before-state and its last action
and token, and a revert undoes it all."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import engram
from engram import ResourceRef
from engram.core import ledger, recording
from engram.core.models import Writer
from stores import Target

REF = ResourceRef("ledger-entries")


def test_an_entry_past_what_it_holds_keeps_each_object_s_first_before_state(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "HELD_ITEMS", 3)
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        store = mem._store

        def work(rec: ledger.Entry) -> int:
            for name in "abcde":  # written after the third
                rec.record("fact", f"f_{name}", "add", ledger.ABSENT)
            assert rec.holds("fact", "f_a") and rec.holds("fact", "f_e")
            assert not rec.holds("fact", "f_z")
            rec.record("fact", "f_a", "trash", ledger.LIVE, token=7)  # written before
            rec.record("fact", "f_e", "trash", ledger.LIVE)  # still held
            return rec.seq

        seq = store.run(
            lambda tx: recording.write(store, tx, REF, "test", Writer(), 1, work), lock=[REF]
        )
        read = store.run(lambda tx: store.ledger.items(tx, seq, None, 100), write=False)
    items = {c.object_id: (c.action, c.before, c.token) for c in read}
    assert items == {
        "f_a": ("trash", ledger.ABSENT, 7),
        "f_b": ("add", ledger.ABSENT, seq),
        "f_c": ("add", ledger.ABSENT, seq),
        "f_d": ("add", ledger.ABSENT, seq),
        "f_e": ("trash", ledger.ABSENT, seq),
    }


def test_writes_past_what_an_entry_holds_are_undone_whole(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "HELD_ITEMS", 4)
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        kept = mem.remember(REF, "kept before")
        facts = mem.remember_many(REF, [f"note {i} of many" for i in range(11)])
        added = mem.ledger(REF).entries[0]
        assert len(added.changes) == 11
        assert mem.forget_all(REF, expected_count=12) == 12
        forgot = mem.ledger(REF).entries[0]
        assert len(forgot.changes) == 12
        mem.revert(REF, forgot.seq)
        assert mem.count(REF) == 12
        mem.revert(REF, added.seq)
        assert [f.id for f in mem.facts(REF).facts] == [kept.id]  # the rest in the trash
        assert {t.fact.id for t in mem.trash(REF).facts} == {f.id for f in facts}


def test_an_entry_s_own_scrubs_spare_its_items_written_early(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scrub inside an entry leaves the entry's own items, those it holds and those
    it wrote early alike; an earlier entry's it erases."""
    monkeypatch.setattr(ledger, "HELD_ITEMS", 1)
    said = '{"state": "live", "context": "old words"}'
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        store = mem._store

        def entry(work: Callable[[ledger.Entry], None]) -> int:
            def run(rec: ledger.Entry) -> int:
                work(rec)
                return rec.seq

            return store.run(
                lambda tx: recording.write(store, tx, REF, "test", Writer(), 1, run), lock=[REF]
            )

        first = entry(lambda rec: rec.record("fact", "f_a", "context", said))

        def scrubbing(rec: ledger.Entry) -> None:
            rec.record("fact", "f_a", "context", said)  # written at once: it holds one
            store.ledger.scrub(rec.tx, REF, ["f_a"], action="context", sparing=rec.seq)

        second = entry(scrubbing)
        read = {
            seq: store.run(lambda tx, seq=seq: store.ledger.entry(tx, REF, seq), write=False)
            for seq in (first, second)
        }
        before = {
            seq: store.run(lambda tx, seq=seq: store.ledger.items(tx, seq, None, 10), write=False)
            for seq in (first, second)
        }
    assert read[first] is not None and read[second] is not None
    assert read[first].scrubbed and before[first][0].before is None
    assert not read[second].scrubbed and before[second][0].before == said


def test_a_revert_reads_its_entry_a_page_at_a_time(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A revert checks every item of its entry, then undoes them, a page at a time (the
    revert of a 1.15M-fact forget held them all: 1.7 GB): what a later entry changed on
    any page blocks it whole, and otherwise every object comes back."""
    from engram import RevertBlocked
    from engram.core import undo

    monkeypatch.setattr(undo, "PAGE", 3)
    monkeypatch.setattr(undo, "RESTORED_AT_ONCE", 2)
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        store = mem._store
        pages: list[int] = []
        items = store.ledger.items

        def counted(tx: object, seq: int, after: object, limit: int) -> object:
            found = items(tx, seq, after, limit)  # type: ignore[arg-type]
            pages.append(len(found))
            return found

        monkeypatch.setattr(store.ledger, "items", counted)
        mem.remember_many(REF, [f"note {i} of eleven" for i in range(11)])
        listed = [f.id for f in mem.facts(REF).facts]
        mem.forget_all(REF, expected_count=11)
        forgot = mem.ledger(REF).entries[0]
        reverted = mem.revert(REF, forgot.seq)
        assert pages == [3, 3, 3, 2, 0] * 2  # checked, then undone
        assert [f.id for f in mem.facts(REF).facts] == listed
        assert reverted.change_count == 11 and len(reverted.changes) == 11

        # a change to an object on the last page alone blocks the revert: nothing moves
        other = ResourceRef("ledger-entries-other")
        made = mem.remember_many(other, [f"note {i} of eleven" for i in range(11)])
        added = mem.ledger(other).entries[0]
        last = max(made, key=lambda f: f.id)
        corrected = mem.correct(other, last.id, "note ten, corrected")
        correction = mem.ledger(other).entries[0]
        with pytest.raises(RevertBlocked) as blocked:
            mem.revert(other, added.seq)
        assert blocked.value.later == (correction.seq,)
        assert mem.count(other) == 11 and mem.fact(other, last.id) == corrected
