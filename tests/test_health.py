"""The health report on both backends: what a scope and the store hold, counted exactly,
and never a write."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from chat_server import ReadsNothing
from engram.api import create_app
from engram.backends import backend_for
from engram.cli.main import main
from engram.core.graph.rebuild import Difference, GraphDrift
from engram.core.health import (
    Backlog,
    DocumentHealth,
    EntityCounts,
    FeedbackHealth,
    HealthReport,
    RelationCounts,
    StrengthSummary,
    TypeCount,
    VectorIndexHealth,
)
from engram.core.scopes import Scope
from engram.core.spoken import SUFFIX  # the record of vectors of turns' words
from engram.settings import Settings
from engram.storage.sqlite import freespace
from engram.storage.sqlite.fulltext import scope_token
from stores import ManualClock, Target

OTHER = engram.ResourceRef("someone-else")
SERVICE = "health-service-token"
# Everything a report could change if it wrote.
SNAPSHOT = """SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM fact_trash),
    (SELECT count(*) FROM ledger), (SELECT count(*) FROM ledger_items),
    (SELECT count(*) FROM working), (SELECT count(*) FROM sessions),
    (SELECT count(*) FROM session_entries), (SELECT count(*) FROM agents),
    (SELECT max(seq) FROM ledger)"""


def _ledger(mem: engram.Memory, ref: Scope) -> tuple[int, int]:
    entries = mem.ledger(ref, limit=1000).entries
    return len(entries), sum(e.scrubbed for e in entries)


def test_fact_counts_follow_every_write(mem: engram.Memory, ref: engram.ResourceRef) -> None:
    source = engram.SourceRef("sandbox-1", 0)
    tea = mem.remember(ref, "likes green tea", type="preference")
    mem.remember(ref, "likes long walks", type="preference")
    deploy = mem.remember(ref, "deployed on friday", type="event", source_ref=source)
    plain = mem.remember(ref, "has a cat")
    mem.remember(OTHER, "not this scope's", type="preference")

    report = mem.health(ref)
    assert report.scope == ref and report.storage is None
    assert (report.facts.live, report.facts.trashed, report.facts.verified) == (4, 0, 1)
    assert report.facts.by_type == (
        TypeCount(None, 1, 0),
        TypeCount("event", 1, 0),
        TypeCount("preference", 2, 0),
    )
    assert report.facts.without_vector == 0
    assert report.fulltext.in_step and report.fulltext.rows == 4
    assert (report.ledger.entries, report.ledger.scrubbed) == _ledger(mem, ref)

    assert mem.forget(ref, tea.id)  # softly: to the trash
    report = mem.health(ref)
    assert (report.facts.live, report.facts.trashed) == (3, 1)
    assert TypeCount("preference", 1, 1) in report.facts.by_type
    assert report.fulltext.rows == 3

    mem.restore(ref, tea.id)
    report = mem.health(ref)
    assert (report.facts.live, report.facts.trashed) == (4, 0)

    mem.correct(ref, plain.id, "has two cats")
    report = mem.health(ref)
    assert report.facts.live == 4 and report.fulltext.in_step

    assert mem.forget(ref, deploy.id, hard=True)
    report = mem.health(ref)
    assert (report.facts.live, report.facts.trashed, report.facts.verified) == (3, 0, 0)
    assert TypeCount("event", 0, 0) not in report.facts.by_type
    assert report.ledger.scrubbed >= 1  # the deletion for good scrubbed what named it
    assert (report.ledger.entries, report.ledger.scrubbed) == _ledger(mem, ref)

    store = mem.health()
    assert store.scope is None
    assert store.facts.live == 4 and TypeCount("preference", 3, 0) in store.facts.by_type
    assert store.ledger.entries == report.ledger.entries + _ledger(mem, OTHER)[0]


def test_working_keys_count_only_live_ones(target: Target, clock: ManualClock) -> None:
    ref = engram.ResourceRef("worker")
    with engram.open(target, embedder=None, clock=clock) as mem:
        mem.working.set(ref, "plan", {"step": 1})
        mem.working.set(ref, "draft", "x", ttl=timedelta(seconds=30))
        mem.working.set(OTHER, "plan", 2)
        assert mem.health(ref).working_keys == 2
        clock.advance(timedelta(seconds=31))
        assert mem.health(ref).working_keys == 1
        assert mem.health().working_keys == 2
        mem.working.delete(ref, "plan")
        assert mem.health(ref).working_keys == 0


def test_sessions_and_their_entries(mem: engram.Memory, ref: engram.ResourceRef) -> None:
    first = mem.sessions.start(ref, name="first")
    mem.sessions.append(first, [engram.Entry("message", f"turn {i}") for i in range(3)])
    mem.sessions.start(ref, name="second")
    other = mem.sessions.start(OTHER)
    mem.sessions.append(other, [engram.Entry("message", "elsewhere")])
    report = mem.health(ref)
    assert (report.sessions.sessions, report.sessions.entries) == (2, 3)
    store = mem.health()
    assert (store.sessions.sessions, store.sessions.entries) == (3, 4)


def test_strengths_are_summarised(mem: engram.Memory, ref: engram.ResourceRef) -> None:
    assert mem.health(ref).facts.strength == StrengthSummary(None, None, None, 0)
    for i, strength in enumerate([7.0, 1.0, 0.5, 1.0, 3.0]):
        mem.remember(ref, f"fact {i}", strength=strength)
    assert mem.health(ref).facts.strength == StrengthSummary(0.5, 1.0, 7.0, 3)
    mem.remember(ref, "fact 5", strength=9.0)  # six: the lower middle is the median
    assert mem.health(ref).facts.strength == StrengthSummary(0.5, 1.0, 9.0, 4)
    mem.remember(OTHER, "elsewhere", strength=10.0)
    assert mem.health().facts.strength == StrengthSummary(0.5, 3.0, 10.0, 5)
    weak = engram.ResourceRef("mostly-weak")  # the middle one under the default
    for i, strength in enumerate([0.2, 0.3, 0.4, 1.0]):
        mem.remember(weak, f"weak fact {i}", strength=strength)
    assert mem.health(weak).facts.strength == StrengthSummary(0.2, 0.3, 1.0, 3)


def test_a_fact_without_a_vector_is_counted(
    mem: engram.Memory, ref: engram.ResourceRef, target: Target
) -> None:
    mem.remember(ref, "kept its vector")
    lost = mem.remember(ref, "lost its vector")
    mem.remember(OTHER, "elsewhere")
    stores.rows(
        target,
        "DELETE FROM fact_vectors WHERE fact = (SELECT seq FROM facts WHERE id = ?)",
        (lost.id,),
    )
    assert mem.health(ref).facts.without_vector == 1
    assert mem.health(OTHER).facts.without_vector == 0
    assert mem.health().facts.without_vector == 1


def test_full_text_rows_match_fact_rows(
    mem: engram.Memory, ref: engram.ResourceRef, target: Target
) -> None:
    for i in range(4):
        mem.remember(ref, f"the release note {i}")
    mem.remember(OTHER, "another scope's note")
    for report in (mem.health(ref), mem.health(OTHER), mem.health()):
        assert report.fulltext.in_step and report.fulltext.rows == report.facts.live
    mem.remember(ref, "the of and")  # stopwords only
    report = mem.health(ref)
    if stores.is_postgres(target):  # its words hold no lexeme: full text cannot find it
        assert (report.fulltext.rows, report.fulltext.facts) == (4, 5)
    else:  # FTS5 indexes every word
        assert report.fulltext.in_step and report.fulltext.rows == 5


def test_a_broken_full_text_index_shows(db_path: Path) -> None:
    """SQLite only: its index is kept by triggers, and a row can go missing. PostgreSQL's
    words are a generated column, always in step with the row."""
    ref = engram.ResourceRef("indexed")
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        facts = [mem.remember(ref, f"the release note {i}") for i in range(3)]
        mem.remember(OTHER, "another scope's note")
        seq, content, context = stores.rows(
            db_path, "SELECT seq, content, context FROM facts WHERE id = ?", (facts[1].id,)
        )[0]
        stores.rows(
            db_path,
            "INSERT INTO facts_fts (facts_fts, rowid, content, scope_token, context) "
            "VALUES ('delete', ?, ?, ?, ?)",
            (seq, content, scope_token(ref.key), context),
        )
        report = mem.health(ref)
        assert (report.fulltext.rows, report.fulltext.facts) == (2, 3)
        assert not report.fulltext.in_step
        assert mem.health(OTHER).fulltext.in_step
        store = mem.health()
        assert (store.fulltext.rows, store.fulltext.facts) == (3, 4)


def test_the_store_reports_its_bytes_schema_and_model(
    mem: engram.Memory, ref: engram.ResourceRef, target: Target
) -> None:
    assert mem.health().model is None  # no vectors yet
    mem.remember(ref, "something")
    report = mem.health()
    assert report.schema_version == mem._store.schema_version
    assert mem.embedder is not None and report.model is not None
    assert (report.model.model, report.model.dimension) == (f"hashing-64{SUFFIX}", 64)
    storage = report.storage
    assert storage is not None and storage.bytes > 0
    if stores.is_postgres(target):
        assert storage.backend == "postgres"
        assert (storage.wal_bytes, storage.free_bytes) == (None, None)
    else:
        path = Path(target)
        page_size = stores.rows(target, "PRAGMA page_size")[0][0]
        assert storage.backend == "sqlite" and storage.bytes % page_size == 0
        assert storage.bytes >= path.stat().st_size  # the log's pages count too
        wal = Path(f"{path}-wal")
        assert storage.wal_bytes == (wal.stat().st_size if wal.exists() else 0)
        assert storage.free_bytes is not None and storage.free_bytes >= 0
    assert mem.health(ref).schema_version == report.schema_version


def test_the_store_says_when_a_scrub_is_due(
    mem: engram.Memory,
    ref: engram.ResourceRef,
    target: Target,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """From a write that erased words for good until ``engram scrub``: on PostgreSQL
    always, on SQLite where the erasing write could not scrub the file itself. The
    command line's report says so."""

    def due() -> bool:
        storage = mem.health().storage
        assert storage is not None
        line = _cli(target, "health", capsys=capsys)[1]
        assert storage.scrub_due == ("until `engram scrub`" in line)
        return storage.scrub_due

    fact = mem.remember(ref, "a word to erase")
    assert mem.forget(ref, fact.id)  # to the trash: nothing erased
    assert due() is False
    if not stores.is_postgres(target):
        monkeypatch.setattr(freespace, "scrub", lambda path, busy_ms: None)  # a reader held it
    assert mem.delete_traces(ref, [fact.id]).trashed == 1
    assert due() is True
    monkeypatch.undo()
    assert backend_for(target).scrub(target).was_due is True
    assert due() is False


def _built(mem: engram.Memory, ref: engram.ResourceRef) -> None:
    """Waits for the scope's own vector index (PostgreSQL builds one after the write that
    crosses the threshold; SQLite at the scope's first vector search)."""
    store = mem._store
    builder = getattr(store, "builder", None)
    if builder is None:
        mem.recall(ref, "note", top_k=1, mode="vector")
        builder = store.index.approximate  # type: ignore[attr-defined]
    assert builder.settle(timeout=120)


def test_the_vector_index_is_reported(target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scope past the store's threshold has a graph of its own: the report says how many
    vectors it was built with, the facts searched beside it, its bytes and (SQLite) the
    erased vectors a file still holds."""
    big, small = engram.ResourceRef("big"), engram.ResourceRef("small")
    postgres = stores.is_postgres(target)
    embedder = engram.HashingEmbedder(64)
    with engram.open(target, embedder=embedder, vector_index_above=300) as mem:
        none = VectorIndexHealth(0, 0, 0, 0, None if postgres else 0)
        assert mem.health().vector_index == none
        mem.remember_many(small, [f"note {i} of the small one" for i in range(5)])
        facts = mem.remember_many(big, [f"note {i} on shelf {i % 13}" for i in range(400)])
        _built(mem, big)
        index = mem.health(big).vector_index
        assert (index.scopes, index.vectors, index.beside) == (1, 400, 0) and index.bytes > 0
        if postgres:
            (name,) = stores.rows(
                target, "SELECT ann_index FROM scope_state WHERE ann_index IS NOT NULL"
            )[0]
            size = stores.rows(target, "SELECT pg_relation_size(to_regclass(?))", (name,))[0][0]
        else:
            (name,) = stores.rows(target, "SELECT file FROM vector_indexes")[0]
            size = (Path(f"{target}-vectors") / name).stat().st_size
        assert index.bytes == size
        mem.remember_many(big, ["a note after the graph", "and another one"])
        mem.correct(big, facts[5].id, "a note reworded, its vector new")
        # SQLite searches a rewritten vector beside its file; PostgreSQL's index holds the
        # row's new version itself
        beside = 2 if postgres else 3
        assert mem.health(big).vector_index.beside == beside
        assert mem.health(small).vector_index == none
        if not postgres:  # an erased vector left in the file by a process stopped first
            from engram.storage.sqlite.index import approximate

            monkeypatch.setattr(approximate, "scrub", lambda *args: None)
            mem.forget(big, facts[3].id, hard=True)
            assert mem.health(big).vector_index.to_overwrite == 1
        whole = mem.health().vector_index
        assert (whole.scopes, whole.vectors, whole.beside, whole.bytes) == (1, 400, beside, size)
        assert whole.to_overwrite == (None if postgres else 1)
        if not postgres:  # a file whose change log was cleared past its mark is used no more
            stores.rows(target, "UPDATE scope_state SET changes_from = changes_from + 1000")
            assert mem.health(big).vector_index.beside == 401
        else:  # a graph of 1402, then 310 after it (past 300, under a quarter): a recent
            # graph of them, counted with it
            mem.remember_many(big, [f"a later note {i}" for i in range(1000)])
            _built(mem, big)
            mem.remember_many(big, [f"a last note {i}" for i in range(310)])
            _built(mem, big)
            mem.remember(big, "the newest note")  # after both
            graphs = "SELECT ann_index, recent_index FROM scope_state WHERE scope = ?"
            names = stores.rows(target, graphs, (big.key,))[0]
            sizes = [
                stores.rows(target, "SELECT pg_relation_size(to_regclass(?))", (n,))[0][0]
                for n in names
            ]
            index = mem.health(big).vector_index
            assert (index.vectors, index.beside, index.bytes) == (1712, 1, sum(sizes))


def test_a_report_never_writes(mem: engram.Memory, target: Target) -> None:
    agent = mem.agents.register("finished")
    mem.remember(agent.ref, "a fact")
    mem.working.set(agent.ref, "plan", 1)
    mem.sessions.start(agent.ref)
    mem.forget(agent.ref, mem.remember(agent.ref, "to the trash").id)
    mem.agents.end(agent.id)
    before = stores.rows(target, SNAPSHOT)
    if stores.is_postgres(target):
        reports = [mem.health(agent.ref), mem.health()]
    else:
        from engram.storage.sqlite.driver import sqlite3

        path = Path(target)
        files = {p: p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists()}
        watcher = sqlite3.connect(path)
        try:
            version = watcher.execute("PRAGMA data_version").fetchone()
            reports = [mem.health(agent.ref), mem.health()]
            assert watcher.execute("PRAGMA data_version").fetchone() == version
        finally:
            watcher.close()
        assert {p: p.read_bytes() for p in files} == files
    assert stores.rows(target, SNAPSHOT) == before
    assert [r.facts.live for r in reports] == [1, 1]
    assert reports[0].facts.trashed == 1 and reports[0].working_keys == 1


# -- the graph, documents, feedback and what is kept past its time ----------------------
KNOWN = engram.ResourceRef("known")
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Known:
    """What :func:`_build` wrote, where the report cannot be predicted by hand."""

    lisbon: str  # a fact grounding an extracted entity
    ana: str  # another
    ledger_at_start: int  # entries written before the clock moved on
    oldest: datetime  # the first entry's time


def _build(mem: engram.Memory, clock: ManualClock) -> Known:
    """A scope of known contents (see the comments for each count), and one fact, one
    signal and one expiring key in another scope. The store keeps the trash 30 days and
    the ledger 30 days."""
    graph = mem.graph
    graph.upsert_entity(KNOWN, "Acme", aliases=["Acme Corp"])  # asserted, one alias
    graph.upsert_entity(KNOWN, "Zed")  # asserted, grounded by no fact: not an orphan
    lisbon = mem.remember(KNOWN, "We flew to Lisbon in May.")  # extracted: lisbon
    ana = mem.remember(KNOWN, "the team met Ana Lima today.")  # extracted: ana lima
    mem.remember(KNOWN, "I work at Acme now.")  # a mention of the asserted Acme
    talk = mem.remember_conversation(  # extracted: cy (until forgotten) and di
        KNOWN, [engram.Turn("Cy", "hello there"), engram.Turn("Di", "see you soon")]
    )
    graph.upsert_relation(KNOWN, "Acme", "Lisbon", "based_in")  # live
    graph.upsert_relation(  # ended in the world
        KNOWN, "Acme", "Zed", "partner_of", invalid_at=datetime(2020, 1, 1, tzinfo=UTC)
    )
    retired = graph.upsert_relation(KNOWN, "Zed", "Lisbon", "visited")
    graph.expire_relation(KNOWN, retired.id)  # expired
    text = "# plain notes\n\nthe first part of it.\n\n# more notes\n\nthe second part of it.\n"
    document = mem.ingest_text(KNOWN, text, name="notes.md", chunk_tokens=16)
    assert document.document_id is not None and document.chunks == 2
    chunks = mem.document(KNOWN, document.document_id).chunks
    assert chunks[0].fact_id is not None
    mem.forget(KNOWN, chunks[0].fact_id, hard=True)  # a chunk without its fact
    for _ in range(3):
        mem.usage.record(KNOWN, lisbon.id, "used")
    mem.consolidate(KNOWN, steps=["strengthen"])  # the three applied
    for _ in range(2):
        mem.usage.record(KNOWN, ana.id, "ignored")  # two pending
    mem.working.set(KNOWN, "plan", 1)  # live
    mem.working.set(KNOWN, "draft", 2, ttl=timedelta(seconds=10))  # expires
    mem.working.set(KNOWN, "lock", 3, ttl=DAY)  # expires
    early = mem.remember(KNOWN, "an early plain note")
    mem.forget(KNOWN, early.id)  # in the trash 35 days at the report: past retention

    mem.remember(OTHER, "they moved to Oslo.")  # extracted: oslo
    other = mem.remember(OTHER, "a plain note elsewhere")
    mem.usage.record(OTHER, other.id, "ignored")
    mem.working.set(OTHER, "soon", 4, ttl=timedelta(seconds=10))

    entries = mem.ledger(KNOWN, limit=1000).entries
    known = Known(lisbon.id, ana.id, len(entries), min(e.at for e in entries))
    clock.advance(20 * DAY)
    for fact in (
        mem.remember(KNOWN, "a note on the budget"),
        mem.remember(KNOWN, "a note on the roadmap"),
    ):
        mem.forget(KNOWN, fact.id)  # in the trash 15 days at the report
    mem.forget(KNOWN, talk.facts[0].id)  # Cy's turn: its entry hidden, cy gone
    clock.advance(15 * DAY)
    return known


@pytest.fixture
def known(target: Target, clock: ManualClock) -> Iterator[tuple[engram.Memory, Known]]:
    with engram.open(
        target,
        embedder=engram.HashingEmbedder(16),
        clock=clock,
        ledger_retention=timedelta(days=30),
        chat=ReadsNothing(),
    ) as mem:
        yield mem, _build(mem, clock)


def test_a_store_of_known_contents_is_counted_exactly(
    known: tuple[engram.Memory, Known],
) -> None:
    mem, built = known
    # live: Lisbon, Ana Lima, Acme, Di's turn, the chunk left; trashed: four
    mem.graph.extract(KNOWN, extractor="llm", limit=2)  # reads two; the rest wait
    report = mem.health(KNOWN)
    assert (report.facts.live, report.facts.trashed) == (5, 4)
    graph = report.graph
    assert graph.entities == EntityCounts(total=5, asserted=2, extracted=3, imported=0)
    assert graph.relations == RelationCounts(live=1, ended=1, expired=1)
    assert (graph.aliases, graph.mentions, graph.orphans, graph.queued) == (1, 4, 0, 0)
    assert graph.backlog == Backlog(llm=3, spacy=5)
    assert graph.drift is None  # only when asked for
    assert report.documents == DocumentHealth(documents=1, chunks=2, chunks_without_fact=1)
    assert report.feedback == FeedbackHealth(signals=5, pending=2)
    assert (report.sessions.sessions, report.sessions.entries) == (1, 2)
    stale = report.stale
    assert (stale.working_keys, report.working_keys) == (2, 1)
    assert stale.trash_past_retention == 1
    assert stale.trash_retention == timedelta(days=30)
    assert stale.ledger_past_retention == built.ledger_at_start
    assert stale.ledger_retention == timedelta(days=30)
    assert stale.ledger_oldest == built.oldest
    assert stale.session_entries_hidden == 1

    store = mem.health()  # the other scope's one of each added
    assert store.graph.entities == EntityCounts(total=6, asserted=2, extracted=4, imported=0)
    assert (store.graph.mentions, store.graph.orphans) == (5, 0)
    assert store.graph.backlog == Backlog(llm=5, spacy=7)
    assert store.documents == report.documents
    assert store.feedback == FeedbackHealth(signals=6, pending=3)
    assert store.stale.working_keys == 3 and store.stale.session_entries_hidden == 1
    assert store.stale.trash_past_retention == 1
    assert store.stale.ledger_past_retention == built.ledger_at_start + len(
        mem.ledger(OTHER, limit=1000).entries
    )


def _stray(target: Target) -> None:
    """An extracted entity, ``e_stray``, that no fact names."""
    stores.rows(
        target,
        "INSERT INTO entities (id, scope, name, norm, type, summary, attributes, origin, "
        "created_at, updated_at) VALUES ('e_stray', ?, 'Stray', 'stray', NULL, NULL, '{}', "
        "'extracted', 0, 0)",
        (KNOWN.key,),
    )


def test_an_orphan_is_an_extracted_entity_no_live_fact_grounds(
    known: tuple[engram.Memory, Known], target: Target
) -> None:
    """Grounded by a row of either table, each only by a fact that is not live (a
    trashed one's id, a gone one's), an extracted entity is an orphan still; grounded by
    a live fact through either table, it is not."""
    mem, built = known
    trashed = stores.rows(target, "SELECT id FROM fact_trash LIMIT 1")[0][0]
    _stray(target)
    groundings = "INSERT INTO groundings (fact_id, entity, extractor) VALUES (?, 'e_stray', 'llm')"
    mentions = (
        'INSERT INTO mentions (fact_id, start, "end", entity, type, scope, grounds) '
        "VALUES (?, 900, 905, 'e_stray', NULL, ?, 1)"
    )
    stores.rows(target, groundings, (trashed,))
    stores.rows(target, mentions, ("f_gone", KNOWN.key))
    assert (mem.health(KNOWN).graph.orphans, mem.health().graph.orphans) == (1, 1)
    stores.rows(target, groundings, (built.lisbon,))
    assert mem.health(KNOWN).graph.orphans == 0
    stores.rows(target, "DELETE FROM groundings WHERE entity = 'e_stray'")
    assert mem.health(KNOWN).graph.orphans == 1
    stores.rows(target, mentions, (built.lisbon, KNOWN.key))
    assert mem.health(KNOWN).graph.orphans == 0


def test_a_healthy_graph_has_no_drift_and_a_broken_one_shows(
    known: tuple[engram.Memory, Known], target: Target
) -> None:
    mem, built = known
    healthy = mem.health(KNOWN, graph_drift=True).graph.drift
    nothing = Difference(0, 0)
    assert healthy == GraphDrift(
        facts_read=5, entities=nothing, mentions=nothing, groundings=nothing
    )
    assert healthy.in_step

    # Lisbon's mentions go, its grounding kept as a row (the rules' groundings are flags
    # on the mentions carrying them, a row where none does)
    stores.rows(
        target,
        "INSERT INTO groundings (fact_id, entity, extractor) "
        "SELECT fact_id, entity, 'rules' FROM mentions WHERE fact_id = ? AND grounds = 1",
        (built.lisbon,),
    )
    stores.rows(target, "DELETE FROM mentions WHERE fact_id = ?", (built.lisbon,))
    _stray(target)
    stores.rows(
        target, "UPDATE mentions SET grounds = 0 WHERE fact_id = ?", (built.ana,)
    )  # the database drops Ana Lima (no grounding left) and queues the fact
    report = mem.health(KNOWN, graph_drift=True)
    graph, drift = report.graph, report.graph.drift
    assert drift is not None and not drift.in_step
    assert drift.entities == Difference(missing=1, extra=1)  # ana lima; the stray
    assert drift.mentions == Difference(missing=2, extra=0)  # Lisbon's; Ana Lima's
    assert drift.groundings == Difference(missing=1, extra=0)  # Ana Lima's
    assert (graph.orphans, graph.queued, graph.mentions) == (1, 1, 2)
    assert mem.health(OTHER, graph_drift=True).graph.drift == GraphDrift(
        facts_read=2, entities=nothing, mentions=nothing, groundings=nothing
    )
    with pytest.raises(engram.InvalidInput, match="per scope"):
        mem.health(graph_drift=True)

    mem.remember(KNOWN, "a write reads the queue")  # settles the queued fact again
    after = mem.health(KNOWN, graph_drift=True).graph
    assert after.queued == 0 and after.drift is not None
    assert after.drift.entities == Difference(missing=0, extra=1)  # the stray stays
    assert after.drift.mentions == Difference(missing=1, extra=0)  # Lisbon's: not queued


def test_retention_switched_off_counts_nothing_past_it(target: Target, clock: ManualClock) -> None:
    with engram.open(
        target,
        embedder=engram.HashingEmbedder(16),
        clock=clock,
        trash_retention=None,
        ledger_retention=None,
    ) as mem:
        mem.forget(KNOWN, mem.remember(KNOWN, "kept for ever").id)
        clock.advance(400 * DAY)
        stale = mem.health(KNOWN).stale
        assert (stale.trash_retention, stale.ledger_retention) == (None, None)
        assert (stale.trash_past_retention, stale.ledger_past_retention) == (0, 0)
        assert mem.health(KNOWN).facts.trashed == 1


# -- the edges ------------------------------------------------------------------------
@pytest.fixture
def service(target: Target) -> Iterator[TestClient]:
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    settings = Settings(
        db_path=str(target),
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    with TestClient(create_app(settings, memory_store=memory)) as client:
        client.headers["Authorization"] = f"Bearer {SERVICE}"
        yield client


def test_http_reports_an_ended_agent_and_the_store(service: TestClient) -> None:
    agent = service.post("/agents", json={"name": "reporter"}).json()["id"]
    for i, strength in enumerate([1.0, 2.0, 4.0]):
        body = {"content": f"fact {i}", "type": "note", "strength": strength}
        assert service.post(f"/agents/{agent}/facts", json=body).status_code == 201
    service.put(f"/agents/{agent}/memory/plan", json={"value": 1})
    assert service.post(f"/agents/{agent}/end").status_code == 200

    answer = service.get(f"/agents/{agent}/health")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["scope"] == {"resourceId": "reporter"}
    assert body["facts"]["live"] == 3 and body["facts"]["withoutVector"] == 0
    assert body["facts"]["byType"] == [{"type": "note", "live": 3, "trashed": 0}]
    assert body["facts"]["strength"] == {"min": 1.0, "p50": 2.0, "max": 4.0, "offDefault": 2}
    assert body["fullText"] == {"rows": 3, "facts": 3, "inStep": True}
    assert body["workingKeys"] == 1 and body["storage"] is None
    assert body["model"] == {"model": f"hashing-32{SUFFIX}", "dimension": 32}
    assert body["graph"] == {
        "entities": {"total": 0, "asserted": 0, "extracted": 0, "imported": 0},
        "relations": {"live": 0, "ended": 0, "expired": 0},
        "aliases": 0,
        "mentions": 0,
        "orphans": 0,
        "queued": 0,
        "backlog": {"llm": 3, "spacy": 3},
        "drift": None,
    }
    assert body["documents"] == {"documents": 0, "chunks": 0, "chunksWithoutFact": 0}
    assert body["feedback"] == {"signals": 0, "pending": 0}
    stale = body["stale"]
    assert stale["ledgerOldestAt"] is not None
    assert {k: v for k, v in stale.items() if k != "ledgerOldestAt"} == {
        "workingKeys": 0,
        "trashPastRetention": 0,
        "trashRetentionSeconds": 30 * 86400,
        "ledgerPastRetention": 0,
        "ledgerRetentionSeconds": 90 * 86400,
        "sessionEntriesHidden": 0,
    }
    drifted = service.get(f"/agents/{agent}/health", params={"graphDrift": "true"}).json()
    assert drifted["graph"]["drift"] == {
        "factsRead": 3,
        "entities": {"missing": 0, "extra": 0},
        "mentions": {"missing": 0, "extra": 0},
        "groundings": {"missing": 0, "extra": 0},
        "relations": {"missing": 0, "extra": 0},
        "inStep": True,
    }
    assert service.get(f"/agents/{agent}/health?graphDrift=yes").status_code == 400
    refused = service.get("/health/report?graphDrift=true")  # a rebuild is per scope
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_input"

    store = service.get("/health/report").json()
    assert store["scope"] is None and store["storage"]["bytes"] > 0
    assert store["schemaVersion"] == body["schemaVersion"]
    assert service.get("/agents/nobody/health").status_code == 404
    assert service.get("/health/report", headers={"Authorization": "Bearer x"}).status_code == 401


def test_the_client_reads_both_reports(service: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=service)
    agent = client.register("reporter")["id"]
    client.remember(agent, "a fact")
    assert client.health(agent)["facts"]["live"] == 1
    assert client.health(agent)["graph"]["drift"] is None
    assert client.health(agent, graph_drift=True)["graph"]["drift"]["inStep"] is True
    assert client.health()["storage"]["bytes"] > 0
    with pytest.raises(engram.InvalidInput, match="per scope"):
        client.health(graph_drift=True)
    with pytest.raises(engram.NotFound):
        client.health("nobody")


def _cli(target: Target, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--db", str(target), *args])
    return code, capsys.readouterr().out


def test_the_command_line_renders_a_report(
    target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(engram.ResourceRef("cli"), "a fact", type="note")
        mem.remember(OTHER, "another")
    code, out = _cli(target, "health", "--resource", "cli", "--json", capsys=capsys)
    assert code == 0
    data = json.loads(out)
    assert data["scope"] == {"resource_id": "cli"} and data["facts"]["live"] == 1
    assert data["full_text"]["in_step"] is True and data["storage"] is None
    assert data["vector_index"]["scopes"] == 0
    code, out = _cli(target, "health", capsys=capsys)
    assert code == 0
    assert "facts: 2 live, 0 in the trash" in out and "schema version" in out
    assert "vector index: none (vector search is exact)" in out
    code, out = _cli(target, "health", "--store", "--json", capsys=capsys)
    assert code == 0 and json.loads(out)["facts"]["live"] == 2
    code, out = _cli(target, "health", "--resource", "cli", capsys=capsys)
    assert code == 0 and "note: 1 live" in out
    assert main(["--db", str(target), "health", "--store", "--resource", "cli"]) == 2


def test_the_command_line_renders_the_graph_documents_feedback_and_stale_items(
    target: Target, clock: ManualClock, capsys: pytest.CaptureFixture[str]
) -> None:
    with engram.open(
        target, embedder=engram.HashingEmbedder(16), clock=clock, chat=ReadsNothing()
    ) as mem:
        _build(mem, clock)
    # the command runs at the real time, 35 days behind the store's clock: nothing is
    # past a retention yet, and the keys with a time to live are made to have expired
    stores.rows(target, "UPDATE working SET expires_at = 1 WHERE expires_at IS NOT NULL")
    code, out = _cli(target, "health", "--resource", "known", "--graph-drift", capsys=capsys)
    assert code == 0, out
    lines = out.splitlines()
    assert (
        "graph: 5 entities (2 asserted, 3 extracted, 0 imported), 1 aliases, 4 mentions, "
        "0 orphans" in lines
    )
    assert "  relations: 1 live, 1 ended, 1 expired" in lines
    assert "  queued for the rules: 0; unread by llm: 5, by spacy: 5" in lines
    assert (
        "  drift from the rules' rebuild of 5 facts (in step): entities 0 missing, 0 extra, "
        "mentions 0 missing, 0 extra, groundings 0 missing, 0 extra, "
        "relations 0 missing, 0 extra" in lines
    )
    assert "documents: 1, with 2 chunks, 1 without their fact" in lines
    assert "feedback: 5 signals, 2 not applied yet" in lines
    assert "stale: 2 working keys expired, 1 session entries hidden" in lines
    assert "  trash: 0 facts past retention (kept 30 days)" in lines
    assert any(
        line.startswith("  ledger: 0 entries past retention (kept 90 days), oldest 20")
        for line in lines
    )

    code, out = _cli(target, "--json", "health", "--resource", "known", capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["graph"]["drift"] is None
    assert data["graph"]["entities"] == {"total": 5, "asserted": 2, "extracted": 3, "imported": 0}
    assert data["documents"] == {"documents": 1, "chunks": 2, "chunks_without_fact": 1}
    assert data["feedback"] == {"signals": 5, "pending": 2}
    assert data["stale"]["session_entries_hidden"] == 1
    assert data["stale"]["trash_retention_seconds"] == 30 * 86400
    code, out = _cli(
        target, "--json", "health", "--resource", "known", "--graph-drift", capsys=capsys
    )
    assert code == 0 and json.loads(out)["graph"]["drift"]["in_step"] is True
    assert main(["--db", str(target), "health", "--graph-drift"]) == 2  # per scope only


def test_the_report_type_is_exported() -> None:
    assert engram.HealthReport is HealthReport
