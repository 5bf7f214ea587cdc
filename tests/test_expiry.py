"""A fact may expire (``expires_at``, as mem0's ``expiration_date``): from then on it is
not recalled or listed, the next write or consolidation moves it to the trash, forks
keep it, and it goes through every surface, export and import included."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.cli.main import main
from engram.core.errors import InvalidInput
from stores import ManualClock, Target

REF = engram.ResourceRef("expiry")


def _open(target: Target, clock: ManualClock) -> engram.Memory:
    return engram.open(target, embedder=engram.HashingEmbedder(32), clock=clock)


def _at(clock: ManualClock, after: timedelta) -> datetime:
    return datetime.fromtimestamp(clock.now / 1e6, UTC) + after


def test_an_expired_fact_is_neither_recalled_nor_listed(target: Target, clock: ManualClock) -> None:
    with _open(target, clock) as mem:
        lasting = mem.remember(REF, "the office opens at nine")
        brief = mem.remember(
            REF, "the office opens at ten this week", expires_at=_at(clock, timedelta(days=7))
        )
        assert brief.expires_at is not None and lasting.expires_at is None
        both = {lasting.id, brief.id}
        assert {
            h.fact.id for h in mem.recall(REF, "when does the office open", mode="text")
        } == both
        assert {f.id for f in mem.facts(REF).facts} == both

        clock.advance(timedelta(days=7))
        hits = mem.recall(REF, "when does the office open", mode="text")
        assert [h.fact.id for h in hits] == [lasting.id]
        assert [f.id for f in mem.facts(REF).facts] == [lasting.id]
        assert mem.fact(REF, brief.id).content == brief.content  # by id, until it is trashed


def test_recall_fills_its_top_k_past_expired_facts(target: Target, clock: ManualClock) -> None:
    with _open(target, clock) as mem:
        soon = _at(clock, timedelta(hours=1))
        gone = [mem.remember(REF, f"deploy window {n} on friday", expires_at=soon) for n in "ab"]
        kept = [mem.remember(REF, f"deploy freeze {n}") for n in "cd"]
        clock.advance(timedelta(hours=2))
        hits = mem.recall(REF, "deploy window on friday", top_k=2, mode="text")
        assert {h.fact.id for h in hits} == {f.id for f in kept}
        assert not {h.fact.id for h in hits} & {f.id for f in gone}


def test_the_next_write_or_consolidation_trashes_it_and_it_reverts_like_any_write(
    target: Target, clock: ManualClock
) -> None:
    with _open(target, clock) as mem:
        brief = mem.remember(
            REF, "a code valid for an hour", expires_at=_at(clock, timedelta(hours=1))
        )
        other = mem.remember(REF, "another scope's code", expires_at=_at(clock, timedelta(hours=1)))
        clock.advance(timedelta(hours=1))
        report = mem.consolidate(REF, steps=["compact"], dry_run=True)
        assert set(report.steps[0].fact_ids) == {brief.id, other.id}
        done = mem.consolidate(REF, steps=["compact"])
        assert done.steps[0].counts["expired"] == 2
        assert {t.fact.id for t in mem.trash(REF).facts} == {brief.id, other.id}

        hour = _at(clock, timedelta(hours=1))
        later = mem.remember(
            REF, "a code for a minute", expires_at=_at(clock, timedelta(minutes=1))
        )
        clock.advance(timedelta(minutes=1))
        mem.remember(REF, "any write applies the caps")
        assert later.id in {t.fact.id for t in mem.trash(REF).facts}

        undone = mem.remember(REF, "a code reverted", expires_at=hour)
        reverted = mem.revert(REF, mem.ledger(REF, limit=1).entries[0].seq)
        assert undone.id in {t.fact.id for t in mem.trash(REF).facts}
        mem.revert(REF, reverted.seq)
        assert mem.fact(REF, undone.id).expires_at == hour


def test_an_expiry_must_come_after_the_fact(mem: engram.Memory) -> None:
    created = datetime(2024, 5, 1, tzinfo=UTC)
    with pytest.raises(InvalidInput, match=r"created_at \(.*\) must be earlier than expires_at"):
        mem.remember(REF, "x", created_at=created, expires_at=created)
    with pytest.raises(InvalidInput, match="expires_at must be a timezone-aware datetime"):
        mem.remember(REF, "x", expires_at=datetime(2030, 1, 1))


def test_forks_exports_and_imports_keep_the_expiry(target: Target, clock: ManualClock) -> None:
    until = _at(clock, timedelta(days=30)).replace(microsecond=0)
    with _open(target, clock) as mem:
        fact = mem.remember(REF, "a trial until next month", expires_at=until)
        mem.fork(REF, "expiry-child")
        child = mem.facts(engram.ResourceRef("expiry-child")).facts[0]
        assert child.expires_at == until
        text = mem.export_string(REF)
        assert json.loads(text.splitlines()[1])["expiresAt"] == until.isoformat()
        mem.import_string(engram.ResourceRef("copy"), text)
        assert mem.facts(engram.ResourceRef("copy")).facts[0].expires_at == until
        mem0 = [{"id": "9f1c", "memory": "likes tea", "expiration_date": "2031-01-02"}]
        mem.import_string(engram.ResourceRef("from-mem0"), json.dumps(mem0), source="mem0")
        imported = mem.facts(engram.ResourceRef("from-mem0")).facts[0]
        assert imported.expires_at == datetime(2031, 1, 2, tzinfo=UTC)
        assert fact.expires_at == until


def test_every_surface_sets_the_expiry(
    target: Target, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    until = "2031-06-01T00:00:00+00:00"
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    with TestClient(create_app(memory_store=memory)) as http:
        agent = http.post("/agents", json={"name": "planner"}).json()["id"]
        made = http.post(f"/agents/{agent}/facts", json={"content": "a", "expiresAt": until})
        assert made.status_code == 201 and made.json()["expiresAt"] == "2031-06-01T00:00:00Z"
        refused = http.post(f"/agents/{agent}/facts", json={"content": "b", "expiresAt": "soon"})
        assert refused.status_code == 400 and "expiresAt" in refused.text
        client = engram.Client(http=http)
        fact = client.remember(agent, "b", expires_at=datetime(2031, 6, 1, tzinfo=UTC))
        assert fact["expiresAt"] == "2031-06-01T00:00:00Z"
    ref = engram.ResourceRef("tools")
    add = next(t for t in memory.create_tools(ref) if t.name == "memory_add")
    assert "expiresAt" in add.spec()["parameters"]["properties"]
    assert not add({"content": "c", "expiresAt": until}).is_error
    bad = add({"content": "d", "expiresAt": "tomorrow"})
    assert bad.is_error and "expiresAt must be an ISO 8601 time" in bad.text
    assert memory.facts(ref).facts[0].expires_at == datetime(2031, 6, 1, tzinfo=UTC)
    memory.close()
    cli_db = str(tmp_path / "cli.db")  # the local model's store (the others hash)
    argv = ["--json", "remember", "e", "--expires-at", until, "--db", cli_db]
    assert main([*argv, "--resource", "cli"]) == 0
    assert json.loads(capsys.readouterr().out)["expires_at"] == "2031-06-01T00:00:00Z"
    assert main([*argv[:-4], "--expires-at", "soon", "--db", cli_db]) == 2
    assert "--expires-at" in capsys.readouterr().err
