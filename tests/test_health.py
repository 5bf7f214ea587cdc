"""The health report on both backends: what a scope and the store hold, counted exactly,
and never a write."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.cli.main import main
from engram.core.health import HealthReport, StrengthSummary, TypeCount
from engram.core.scopes import Scope
from engram.settings import Settings
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
    assert (report.model.model, report.model.dimension) == ("hashing-64", 64)
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
    assert body["model"] == {"model": "hashing-32", "dimension": 32}

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
    assert client.health()["storage"]["bytes"] > 0
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
    code, out = _cli(target, "health", capsys=capsys)
    assert code == 0
    assert "facts: 2 live, 0 in the trash" in out and "schema version" in out
    code, out = _cli(target, "health", "--store", "--json", capsys=capsys)
    assert code == 0 and json.loads(out)["facts"]["live"] == 2
    code, out = _cli(target, "health", "--resource", "cli", capsys=capsys)
    assert code == 0 and "note: 1 live" in out
    assert main(["--db", str(target), "health", "--store", "--resource", "cli"]) == 2


def test_the_report_type_is_exported() -> None:
    assert engram.HealthReport is HealthReport
