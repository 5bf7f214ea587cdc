"""Export and import through the real app (in-process) on both backends: an agent's
memory out as JSONL or JSON and into another agent, mem0's memories, a dry run, and
refusals (bad records listed by line, a body that is not UTF-8) that write nothing."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from answers import error, ok
from engram.api import create_app
from engram.settings import Settings
from services import agent as new_agent
from services import serving
from stores import Target

SERVICE = "portability-service-token"


@pytest.fixture
def http(target: Target) -> Iterator[TestClient]:
    with serving(target, SERVICE) as client:
        yield client


def _import(http: TestClient, agent: str, body: str | bytes, **params: str) -> object:
    return http.post(
        f"{agent}/imports", content=body, params=params, headers={"content-type": "text/plain"}
    )


def test_an_agent_s_memory_goes_out_and_into_another(
    http: TestClient, target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged = tmp_path / "staged"
    staged.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staged))  # where the answer is staged
    source = new_agent(http, "source")
    for words in ("Ana moved to Lyon", "Bo likes tea"):
        ok(http.post(f"{source}/facts", json={"content": words}), 201)
    ok(http.put(f"{source}/memory/plan", json={"value": "pro"}))
    out = http.get(f"{source}/export")
    assert out.status_code == 200 and out.headers["content-type"] == "application/x-ndjson"
    lines = out.text.splitlines()
    assert json.loads(lines[0])["format"] == "engram-export" and len(lines) == 4
    whole = http.get(f"{source}/export", params={"format": "json"}).json()
    assert [f["content"] for f in whole["facts"]] == ["Ana moved to Lyon", "Bo likes tea"]
    assert list(staged.iterdir()) == []  # each staged answer removed once sent

    into = new_agent(http, "into")
    planned = ok(_import(http, into, out.text, dryRun="true"))
    assert planned["dryRun"] is True and planned["factsAdded"] == 2 and planned["entry"] is None
    assert ok(http.get(f"{into}/facts"))["facts"] == []
    done = ok(_import(http, into, out.text))
    assert (done["factsAdded"], done["workingSet"], done["vectorsReused"]) == (2, 1, 2)
    assert len(done["idMappings"]) == 2  # the source agent's facts keep their ids
    assert ok(http.get(f"{into}/memory/plan"))["value"] == "pro"
    mem0 = {"results": [{"id": "u1", "memory": "Likes sushi", "user_id": "alice"}]}
    came = ok(_import(http, into, json.dumps(mem0), source="mem0"))
    assert came["factsAdded"] == 1 and came["vectorsEmbedded"] == 1


def test_refusals_list_every_bad_record_and_write_nothing(http: TestClient, target: Target) -> None:
    agent = new_agent(http, "refused")
    before = stores.rows(target, "SELECT count(*) FROM ledger")
    bad = '[{"content": "fine"}, {"content": ""}, {"tags": "x", "content": "y"}]'
    found = error(_import(http, agent, bad), 422, "bad_records")
    assert [(e["line"], e["field"]) for e in found["errors"]] == [(2, "content"), (3, "tags")]
    error(_import(http, agent, b"\xff\xfe"), 400, "invalid_input")
    error(_import(http, agent, "[]", source="letta"), 400, "invalid_input")
    error(http.get(f"{agent}/export", params={"format": "csv"}), 400, "invalid_input")
    assert stores.rows(target, "SELECT count(*) FROM ledger") == before


def test_a_person_takes_their_own_memories_of_an_application(target: Target) -> None:
    import time

    import jwt

    secret = "portability-secret-0123456789abcdef0123"
    settings = Settings(db_path=str(target), jwt_secret=secret)

    def person(uid: str) -> dict[str, str]:
        signed = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, secret, "HS256")
        return {"Authorization": f"Bearer {signed}"}

    with (
        engram.open(target, embedder=engram.HashingEmbedder(32)) as memory,
        TestClient(create_app(settings, memory_store=memory)) as http,
    ):
        for uid, words in (("ana", "Ana swims at dawn"), ("bo", "Bo keeps bees")):
            body = {"memory": words}
            ok(http.post("/api/v1/apps/app:notes/memories", json=body, headers=person(uid)), 201)
        mine = ok(http.get("/api/v1/apps/memories/app:notes/export", headers=person("ana")))
        assert mine["format"] == "engram-export"
        assert [f["content"] for f in mine["facts"]] == ["Ana swims at dawn"]
        error(http.get("/api/v1/apps/memories/app:notes/export"), 401, "unauthenticated")


def test_an_import_over_the_body_limit_is_413_and_writes_nothing(
    http: TestClient, target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.api import bodies

    agent = new_agent(http, "large")
    monkeypatch.setattr(bodies, "MAX_IMPORT_BYTES", 4096)  # the 50 MiB limit, made small
    before = stores.rows(target, "SELECT count(*) FROM ledger")
    records = json.dumps([{"content": f"fact {n} " + "x" * 40} for n in range(100)])
    assert len(records) > 4096
    error(_import(http, agent, records), 413, "too_large")
    assert ok(_import(http, agent, records[:4000].rsplit("},", 1)[0] + "}]"))["factsAdded"] > 0
    assert stores.rows(target, "SELECT count(*) FROM ledger")[0][0] == before[0][0] + 1


def test_records_too_deep_or_too_long_or_of_unknown_fields_are_422_and_write_nothing(
    http: TestClient, target: Target
) -> None:
    agent = new_agent(http, "odd")
    before = stores.rows(target, "SELECT count(*) FROM ledger")
    deep = "[" * 100_000 + "]" * 100_000
    for body, params in [(deep, {}), (deep, {"format": "jsonl"}), (deep, {"source": "mem0"})]:
        found = error(_import(http, agent, body, **params), 422, "bad_records")
        assert "nests too deeply" in found["message"], params
    long = "content\n" + "x" * 200_000 + "\n"
    found = error(_import(http, agent, long, format="csv"), 422, "bad_records")
    assert found["errors"][0]["line"] == 2 and "over 131072 characters" in found["message"]
    found = error(_import(http, agent, "content,colour\nhi,red\n"), 422, "bad_records")
    assert [(e["line"], e["field"]) for e in found["errors"]] == [(1, "colour")]
    assert stores.rows(target, "SELECT count(*) FROM ledger") == before


def test_an_import_that_changes_nothing_names_no_entry(http: TestClient, target: Target) -> None:
    agent = new_agent(http, "idle")
    before = stores.rows(target, "SELECT count(*) FROM ledger")
    assert ok(_import(http, agent, "content\n", format="csv"))["entry"] is None
    assert ok(_import(http, agent, "[]", source="mem0"))["entry"] is None
    assert stores.rows(target, "SELECT count(*) FROM ledger") == before
    done = ok(_import(http, agent, "content\nAna moved to Lyon\n", format="csv"))
    newest = lambda: ok(http.get(f"{agent}/ledger"))["entries"][0]["seq"]  # noqa: E731
    assert newest() == done["entry"]
    again = ok(_import(http, agent, "content\nAna moved to Lyon\n", format="csv"))
    assert (again["factsExisting"], again["entry"]) == (1, None) and newest() == done["entry"]
