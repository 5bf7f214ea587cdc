"""History: soft forgets and the trash, deletion for good that leaves the words nowhere,
retention, and the refusals; on both backends."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest

import engram
import engram.settings
from engram import Conflict, Fact, InvalidInput, NotFound, PersonAppRef, ResourceRef
from engram.core import ledger
from engram.core.limits import CHANGES_SHOWN
from stores import ManualClock, Target, is_postgres, plan, rows

REF = ResourceRef("history")


def _open(target: Target, clock: ManualClock | None = None) -> engram.Memory:
    return engram.open(target, embedder=engram.HashingEmbedder(32), clock=clock)


def test_a_soft_forget_leaves_every_retriever_at_once_and_restores_whole(
    target: Target,
) -> None:
    with _open(target) as mem:
        kept = mem.remember(REF, "the invoice is due friday")
        gone = mem.remember(
            REF, "the door code is 4711", tags=["home"], context="Ana asked", strength=2.0
        )
        assert mem.forget(REF, gone.id) is True
        assert mem.forget(REF, gone.id) is False  # idempotent: nothing live to forget
        for mode in ("text", "vector", "hybrid"):
            hits = mem.recall(REF, "door code 4711", mode=mode, top_k=10)
            assert gone.id not in [h.fact.id for h in hits], mode
        assert [f.id for f in mem.facts(REF).facts] == [kept.id]
        with pytest.raises(NotFound):
            mem.fact(REF, gone.id)
        assert mem.count(REF) == 1
        (trashed,) = mem.trash(REF).facts
        assert trashed.fact == gone
        assert trashed.purge_at - trashed.deleted_at == timedelta(days=30)

        back = mem.restore(REF, gone.id)
        assert back == gone  # same id, words, tags, context, strength and times
        hits = mem.recall(REF, "door code", mode="text", top_k=1)
        assert hits[0].fact.id == gone.id
        assert mem.recall(REF, "door", tags=["home"], top_k=1)[0].fact.id == gone.id
        assert mem.recall(REF, "door code 4711", mode="vector", top_k=1)[0].fact.id == gone.id
        assert mem.trash(REF).facts == []
        with pytest.raises(NotFound):
            mem.restore(REF, gone.id)  # not in the trash any more


def test_a_restore_is_refused_when_its_words_are_live_again(target: Target) -> None:
    with _open(target) as mem:
        first = mem.remember(REF, "the plan is pro")
        mem.forget(REF, first.id)
        second = mem.remember(REF, "the plan is pro")
        assert second.id != first.id
        entries = len(mem.ledger(REF).entries)
        with pytest.raises(Conflict, match=second.id):
            mem.restore(REF, first.id)
        assert len(mem.ledger(REF).entries) == entries  # nothing written
        assert [t.fact.id for t in mem.trash(REF).facts] == [first.id]


def test_the_trash_is_emptied_for_good_after_its_retention(
    target: Target, clock: ManualClock
) -> None:
    with _open(target, clock) as mem:
        old = mem.remember(REF, "forgotten long ago")
        mem.forget(REF, old.id)
        clock.advance(timedelta(days=29))
        recent = mem.remember(REF, "forgotten lately")
        mem.forget(REF, recent.id)
        assert {t.fact.id for t in mem.trash(REF).facts} == {old.id, recent.id}
        clock.advance(timedelta(days=2))  # old is 31 days in the trash, recent 2
        mem.compact(REF)
        assert [t.fact.id for t in mem.trash(REF).facts] == [recent.id]
        history = mem.history(REF, old.id)
        assert history[0].op == "compact" and history[0].changes[0].action == "erase"
        assert all(e.scrubbed for e in history[1:])
        with pytest.raises(NotFound):
            mem.restore(REF, old.id)


def test_the_ledger_keeps_entries_for_its_retention(target: Target, clock: ManualClock) -> None:
    with _open(target, clock) as mem:
        mem.working.set(REF, "plan", "pro")
        clock.advance(timedelta(days=91))
        mem.working.set(REF, "plan", "team")
        mem.compact(REF)
        assert [e.op for e in mem.ledger(REF).entries] == ["working.set"]


def test_the_trash_pages_most_recently_forgotten_first(target: Target, clock: ManualClock) -> None:
    with _open(target, clock) as mem:
        facts = mem.remember_many(REF, [f"fact {i}" for i in range(5)])
        for fact in facts:
            clock.advance(timedelta(seconds=1))
            mem.forget(REF, fact.id)
        seen, before = [], None
        while True:
            page = mem.trash(REF, limit=2, before=before)
            seen += [t.fact.id for t in page.facts]
            if page.next_before is None:
                break
            before = page.next_before
        assert seen == [f.id for f in reversed(facts)]
        with pytest.raises(InvalidInput):
            mem.trash(REF, before="not-a-cursor")


def test_forget_all_is_soft_unless_hard(target: Target) -> None:
    with _open(target) as mem:
        mem.remember_many(REF, ["one", "two"])
        assert mem.forget_all(REF, expected_count=2) == 2
        assert len(mem.trash(REF).facts) == 2
        entry = mem.ledger(REF, limit=1).entries[0]
        assert entry.op == "forget_all" and len(entry.changes) == 2  # one entry, two items
        mem.revert(REF, entry.seq)
        assert mem.count(REF) == 2 and mem.trash(REF).facts == []
        assert mem.forget_all(REF, expected_count=2, hard=True) == 2
        assert mem.trash(REF).facts == [] and mem.count(REF) == 0


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_a_whole_scope_goes_a_chunk_at_a_time_and_all_of_it(
    target: Target, monkeypatch: pytest.MonkeyPatch, hard: bool
) -> None:
    """A scope's facts are moved or deleted by statements of SCOPE_CHUNK rows (one
    statement's journal over a 1.15M-fact scope held 1.8 GB); every one of them goes."""
    from engram.storage.sql import queries

    monkeypatch.setattr(queries, "SCOPE_CHUNK", 3)
    with _open(target) as mem:
        facts = mem.remember_many(REF, [f"fact number {n}" for n in range(10)])
        mem.forget(REF, facts[0].id)  # one in the trash already
        assert mem.forget_all(REF, expected_count=9, hard=hard) == 9
        assert mem.count(REF) == 0 and mem.facts(REF).facts == []
        trashed = {t.fact.id for t in mem.trash(REF).facts}
        assert trashed == (set() if hard else {f.id for f in facts})
        entry = mem.ledger(REF, limit=1).entries[0]
        assert entry.change_count == (10 if hard else 9)


def test_deletion_for_good_refuses_what_it_cannot_do_and_writes_nothing(
    target: Target,
) -> None:
    with _open(target) as mem:
        fact = mem.remember(REF, "a fact")
        entries = len(mem.ledger(REF).entries)
        for bad in ([], "f_x", [f"f_{i}" for i in range(1001)], [""], [None]):
            with pytest.raises(InvalidInput):
                mem.delete_traces(REF, bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="non-empty id"):
            mem.delete_scope(ResourceRef("  "))
        with pytest.raises(InvalidInput):
            mem.delete_scope(REF, turn_user_id="")
        with pytest.raises(Conflict):
            mem.delete_scope(REF, expected_count=0)
        assert len(mem.ledger(REF).entries) == entries
        assert mem.fact(REF, fact.id) == fact
        receipt = mem.delete_traces(REF, [fact.id, "f_unknown", fact.id])
        assert (receipt.facts, receipt.trashed) == (1, 0)
        with pytest.raises(Conflict, match="erased"):
            mem.revert(REF, mem.history(REF, fact.id)[-1].seq)
        with pytest.raises(Conflict, match="cannot be reverted"):
            mem.revert(REF, mem.history(REF, fact.id)[0].seq)


def test_a_scope_deletion_can_take_only_a_second_users_facts(target: Target) -> None:
    scope = PersonAppRef("ana", "app:chat")
    with _open(target) as mem:
        mine = mem.remember(scope, "ana likes tea")
        bo = mem.acting(turn_user="bo")
        theirs = bo.remember(scope, "bo asked about flights")
        trashed = bo.remember(scope, "bo's old question")
        mem.forget(scope, trashed.id)
        receipt = mem.delete_scope(scope, turn_user_id="bo", expected_count=2)
        assert (receipt.facts, receipt.trashed) == (1, 1)
        assert [f.id for f in mem.facts(scope).facts] == [mine.id]
        assert mem.trash(scope).facts == []
        assert theirs.turn_user == "bo" and mine.turn_user is None


def _planted(mem: engram.Memory, word: str) -> list[str]:
    """Facts that carry ``word`` in every place the store keeps words: live rows, a
    correction's before-state in the ledger, the trash; returns their ids."""
    live = mem.remember(REF, f"the vault word is {word}", context=f"said {word} twice")
    mem.correct(REF, live.id, "the vault word changed")  # the old words, in the ledger
    trashed = mem.remember(REF, f"{word} was the old alarm code")
    mem.forget(REF, trashed.id)  # in the trash
    tagged = mem.remember(REF, "a fact with a tag", tags=[word])
    return [live.id, trashed.id, tagged.id]


def _sqlite_bytes_hold(path: Path, word: str) -> list[str]:
    files = [path, path.with_name(path.name + "-wal")]
    return [p.name for p in files if p.exists() and word.encode() in p.read_bytes()]


def _postgres_tables_hold(url: str, word: str) -> list[str]:
    tables = [
        str(name)
        for (name,) in rows(
            url,
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
        )
    ]
    holding = "SELECT count(*) FROM {} x WHERE strpos(x::text, ?) > 0"
    return [t for t in tables if rows(url, holding.format(t), (word,))[0][0]]


@pytest.mark.parametrize("how", ["traces", "scope"])
def test_deleted_words_are_nowhere_in_the_store(target: Target, how: str) -> None:
    word = "w" + uuid.uuid4().hex
    with _open(target) as mem:
        mem.remember_many(ResourceRef("neighbour"), [f"unrelated {i}" for i in range(20)])
        ids = _planted(mem, word)
        held = (
            _postgres_tables_hold(str(target), word)
            if is_postgres(target)
            else _sqlite_bytes_hold(Path(target), word)
        )
        assert held  # the probe finds the word while it is remembered
        if how == "traces":
            receipt = mem.delete_traces(REF, ids)
            assert (receipt.facts, receipt.trashed) == (2, 1)
        else:
            receipt = mem.delete_scope(REF, expected_count=3)
        assert receipt.ledger_items_scrubbed >= 4
        assert mem.recall(REF, word, mode="text") == []
        if is_postgres(target):
            assert _postgres_tables_hold(str(target), word) == []
        else:
            assert _sqlite_bytes_hold(Path(target), word) == []
        assert mem.count(ResourceRef("neighbour")) == 20
    if not is_postgres(target):
        assert _sqlite_bytes_hold(Path(target), word) == []


def test_caps_move_facts_to_the_trash_and_a_revert_brings_them_back(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(32), max_facts=2) as mem:
        first = mem.remember(REF, "first")
        mem.remember_many(REF, ["second", "third"])
        assert [t.fact.id for t in mem.trash(REF).facts] == [first.id]
        entry = mem.ledger(REF, limit=1).entries[0]
        assert {c.action for c in entry.changes} == {"add", "trash"}
        mem.revert(REF, entry.seq)  # the batch goes, and what its cap trashed comes back
        assert [f.id for f in mem.facts(REF).facts] == [first.id]


def test_the_retentions_are_settings(target: Target, clock: ManualClock) -> None:
    settings = engram.settings.Settings.from_env(
        {"ENGRAM_TRASH_RETENTION_DAYS": "1", "ENGRAM_LEDGER_RETENTION_DAYS": "0"}
    )
    assert settings.trash_retention == timedelta(days=1) and settings.ledger_retention is None
    with engram.open(
        target,
        embedder=engram.HashingEmbedder(32),
        clock=clock,
        trash_retention=settings.trash_retention,
        ledger_retention=settings.ledger_retention,
    ) as mem:
        fact = mem.remember(REF, "short-lived")
        mem.forget(REF, fact.id)
        assert mem.trash(REF).facts[0].purge_at - mem.trash(REF).facts[0].deleted_at == timedelta(
            days=1
        )
        clock.advance(timedelta(days=400))
        mem.compact(REF)
        assert mem.trash(REF).facts == []
        assert len(mem.history(REF, fact.id)) == 3  # the ledger keeps everything (0: kept)
    with engram.open(
        target, embedder=engram.HashingEmbedder(32), clock=clock, trash_retention=None
    ) as keeping:
        fact = keeping.remember(REF, "kept in the trash")
        keeping.forget(REF, fact.id)
        clock.advance(timedelta(days=4000))
        keeping.compact(REF)
        (kept,) = keeping.trash(REF).facts
        assert kept.fact.id == fact.id and kept.purge_at is None
    with pytest.raises(InvalidInput, match="trash_retention"):
        engram.open(target, trash_retention=timedelta(days=-1))


def test_what_did_not_exist_before_is_stored_empty_and_read_whole(target: Target) -> None:
    with _open(target) as mem:
        fact = mem.remember(REF, "the invoice is due friday")
        (entry,) = mem.history(REF, fact.id)
        store = mem._store
        held = store.run(lambda tx: store.ledger.items(tx, entry.seq, None, 10), write=False)
        assert [c.before for c in held] == [ledger.ABSENT]
        # the row holds no JSON for it: 19 bytes a remembered fact
        raw = rows(target, "SELECT before FROM ledger_items WHERE object_id = ?", (fact.id,))
        assert raw == [("",)]
        mem.revert(REF, entry.seq)  # undone as an add is: the fact leaves
        assert mem.count(REF) == 0


def test_a_listing_shows_an_entrys_first_changes_and_the_rest_are_paged(
    target: Target,
) -> None:
    """A batch of 250 is one entry of 250 changes: a listing of the ledger shows its
    first CHANGES_SHOWN (in kind, object order) and how many it made; ledger_changes
    reads them all, a page at a time; a listing for one object, and a fact's history,
    show that object's change; an entry another scope holds, or none does, is not found."""
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        batch = mem.remember_many(REF, [f"fact number {i}" for i in range(250)])
        mem.remember(REF, "one more")
        mem.remember(ResourceRef("elsewhere"), "not here")
        newest, big = mem.ledger(REF, limit=2).entries
        assert (newest.change_count, len(newest.changes)) == (1, 1)
        assert big.change_count == 250 and len(big.changes) == CHANGES_SHOWN
        ordered = sorted(f.id for f in batch)
        assert [c.object_id for c in big.changes] == ordered[:CHANGES_SHOWN]

        seen, after, pages = [], None, 0
        while True:
            page = mem.ledger_changes(REF, big.seq, limit=100, after=after)
            seen += [c.object_id for c in page.changes]
            pages += 1
            if page.next_after is None:
                break
            after = page.next_after
        assert seen == ordered and pages == 3
        assert {c.action for c in mem.ledger_changes(REF, big.seq).changes} == {"add"}
        assert mem.ledger_changes(REF, big.seq, after=250).changes == []

        one = batch[137].id
        [entry] = mem.ledger(REF, object_id=one).entries
        assert [c.object_id for c in entry.changes] == [one] and entry.change_count == 250
        [entry] = mem.history(REF, one)
        assert [c.object_id for c in entry.changes] == [one] and entry.change_count == 250

        elsewhere = mem.ledger(ResourceRef("elsewhere"), limit=1).entries[0].seq
        for missing in (elsewhere, elsewhere + 100):
            with pytest.raises(NotFound):
                mem.ledger_changes(REF, missing)
        for bad in ({"limit": 0}, {"limit": 1001}, {"after": -1}):
            with pytest.raises(InvalidInput):
                mem.ledger_changes(REF, big.seq, **bad)  # type: ignore[arg-type]


def test_a_reverts_tokens_are_sought_by_object_not_by_entry(target: Target) -> None:
    """A revert reads the newest item of each object it changed. SQLite walked the
    scope's entries and sought every object in each (one read of a 10k batch's items
    took 3.3 s among 2,500 entries); the items are sought by their object instead. On both
    backends the statement reads each object's items."""
    from engram.storage.sql.dialect import SQLITE, postgres_dialect
    from engram.storage.sql.ledger import tokens_of

    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        for n in range(20):
            mem.remember(REF, f"an entry of its own {n}")
        facts = mem.remember_many(REF, [f"a batch fact {n}" for n in range(30)])
        dialect = postgres_dialect(lambda v: v) if is_postgres(target) else SQLITE
        ids = [f.id for f in facts]
        sql, params = tokens_of(dialect, REF.key, "fact", ids, None)
        if not is_postgres(target):  # PostgreSQL's plan follows its statistics
            shown = plan(target, sql, params)
            assert "ledger_items_by_object" in shown, shown
        got = rows(target, sql, params)
        assert sorted(str(r[0]) for r in got) == sorted(ids)


def test_a_revert_brings_a_forgotten_scope_back_a_chunk_at_a_time(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts a soft forget took come back by a few statements a chunk, not one fact
    at a time (the revert of a 100k-fact forget spent 18.5 of its 40 s restoring one by
    one): the same facts, tags and vectors, in the same order, the trash empty; a fact
    whose words are live again stops the revert before any comes back."""
    from engram import Note
    from engram.core import rules, undo

    with engram.open(target, embedder=engram.HashingEmbedder(32)) as mem:
        notes = [
            Note(f"remembered fact {n} of ten", tags=("t",) if n % 2 else ()) for n in range(10)
        ]
        made = mem.remember_many(REF, notes)
        listed = [f.id for f in mem.facts(REF).facts]
        mem.forget_all(REF, expected_count=10)
        entry = mem.ledger(REF, limit=1).entries[0]
        store = mem._store
        moved: list[int] = []
        restore = store.facts.restore

        def counted(tx: object, scope: object, ids: list[str]) -> object:
            moved.append(len(ids))
            return restore(tx, scope, ids)  # type: ignore[arg-type]

        monkeypatch.setattr(undo, "RESTORED_AT_ONCE", 3)
        monkeypatch.setattr(store.facts, "restore", counted)
        mem.revert(REF, entry.seq)
        assert moved == [3, 3, 3, 1]
        assert [f.id for f in mem.facts(REF).facts] == listed  # new positions, in order
        assert [mem.fact(REF, f.id) for f in made] == made
        assert mem.trash(REF).facts == []
        tagged = mem.recall(REF, "remembered fact", tags=["t"], top_k=10)
        assert {h.fact.id for h in tagged} == {f.id for f in made[1::2]}
        for fact in made:  # each vector back with its fact
            assert mem.recall(REF, fact.content, mode="vector", top_k=1)[0].fact.id == fact.id
        reverted = mem.ledger(REF, limit=1).entries[0]
        assert [c.action for c in reverted.changes] == ["restore"] * 10

        # words live again: nothing comes back, and the revert is refused
        mem.forget_all(REF, expected_count=10)
        again = mem.ledger(REF, limit=1).entries[0]
        mem.remember(REF, made[7].content)
        moved.clear()
        with pytest.raises(Conflict, match=made[7].id):
            mem.revert(REF, again.seq)
        assert mem.count(REF) == 1 and len(mem.trash(REF).facts) == 10

        # two facts of the same words in the trash cannot come back together
        mem.forget(REF, mem.facts(REF).facts[0].id)
        twins = [t.fact.id for t in mem.trash(REF).facts if t.fact.content == made[7].content]
        assert len(twins) == 2
        with pytest.raises(Conflict, match="the same words"):
            store.run(lambda tx: rules.restore_many(store, tx, REF, twins))
        assert len(mem.trash(REF).facts) == 11


def _uncounted(mem: engram.Memory, url: str, table: str) -> tuple[list[Fact], int]:
    """Sixty facts of REF forgotten softly (more than a write counts again:
    ``RECOUNT_FROM``), and ``table``'s statistics then set as an
    analysis of it empty after a mass delete leaves them (no row, its pages); the facts
    and the forget's entry."""
    made = mem.remember_many(REF, [f"fact {n} to come back" for n in range(60)])
    mem.forget_all(REF, expected_count=60)
    rows(
        url,
        "UPDATE pg_class SET reltuples = 0, relpages = "
        f"greatest(1, pg_relation_size(oid) / 8192) WHERE oid = '{table}'::regclass",
    )
    assert rows(url, _COUNTED.format(table=table)) == [(0.0,)]
    return made, mem.ledger(REF, limit=1).entries[0].seq


_COUNTED = "SELECT reltuples FROM pg_class WHERE oid = '{table}'::regclass"


@pytest.mark.parametrize("table", ["fact_trash", "facts", "fact_terms"])
def test_postgres_a_table_analysed_empty_is_counted_as_facts_come_back(
    postgres_store_url: str, table: str
) -> None:
    """A revert reads its facts by id, and the graph its postings by word. Where the
    statistics of the trash, the facts or their postings count fewer rows than the
    revert knows are there (the trash analysed empty after a revert, before the forget
    that filled it again; the facts and postings analysed by the autovacuum mid-revert),
    every index holding a key looks as cheap to search as the key's own, and a lookup
    may scan one whole: the table is analysed as the facts come back."""
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(16)) as mem:
        made, forgot = _uncounted(mem, postgres_store_url, table)
        mem.revert(REF, forgot)
        assert [mem.fact(REF, f.id) for f in made] == made
        assert mem.trash(REF).facts == []
    counted = rows(postgres_store_url, _COUNTED.format(table=table))
    assert counted[0][0] >= 60  # counted while it held them


def test_postgres_a_revert_does_not_wait_to_analyse_a_table_another_holds(
    postgres_store_url: str,
) -> None:
    """Where another holds the trash as an analysis or a vacuum does, the revert leaves
    the trash's statistics as they are rather than wait: two reverts each holding one
    table and waiting for the other's would deadlock."""
    import threading

    import psycopg

    waiting = (
        "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'fact_trash'::regclass"
    )
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(16)) as mem:
        made, forgot = _uncounted(mem, postgres_store_url, "fact_trash")
        with psycopg.connect(postgres_store_url) as holder:
            holder.execute("LOCK TABLE fact_trash IN SHARE UPDATE EXCLUSIVE MODE")
            done, failed = threading.Event(), []

            def revert() -> None:
                try:
                    mem.revert(REF, forgot)
                except Exception as exc:  # reported below
                    failed.append(exc)
                finally:
                    done.set()

            thread = threading.Thread(target=revert)
            thread.start()
            blocked = False
            while not done.wait(0.05):
                if rows(postgres_store_url, waiting) != [(0,)]:
                    blocked = True  # the revert waits for the holder
                    break
            holder.rollback()
            thread.join()
        assert not blocked and not failed, failed
        assert [mem.fact(REF, f.id) for f in made] == made
        # left as it was
        assert rows(postgres_store_url, _COUNTED.format(table="fact_trash")) == [(0.0,)]
