"""engram.Client against the real app (in-process): every route, the library's names,
and errors as the library's classes."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.core import ops
from engram.settings import Settings
from engram.wire import EntryOut, FactOut, HealthReportOut, RecallOut
from stores import Target

SECRET = "client-secret-0123456789abcdef01234567"
SERVICE = "client-service-token"


@pytest.fixture
def app_client(target: Target) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    with TestClient(create_app(settings, memory_store=memory)) as client:
        yield client


def test_a_fact_s_context_goes_through_the_client(app_client: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=app_client)
    agent = client.register("reviewer")["id"]
    client.remember(agent, "the deploy runs nightly")
    fact = client.remember(agent, "see you then", context="the nightly review of the release")
    assert fact["context"] == "the nightly review of the release"
    assert client.recall(agent, "release review", top_k=1)[0]["id"] == fact["id"]


def test_a_fact_s_strength_goes_through_the_client(app_client: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=app_client)
    agent = client.register("reviewer")["id"]
    plain = client.remember(agent, "the deploy runs nightly")
    strong = client.remember(agent, "the deploy needs approval", strength=2.5)
    assert (plain["strength"], strong["strength"]) == (1.0, 2.5)
    hits = client.recall(agent, "deploy", top_k=5, min_strength=2)
    assert [h["id"] for h in hits] == [strong["id"]]
    with pytest.raises(engram.InvalidInput):
        client.remember(agent, "never stored", strength=11)


def test_an_operation_s_answer_comes_typed_as_the_service_publishes_it(
    app_client: TestClient,
) -> None:
    """Each answer parses into the model the schema names for it, read by field name."""
    client = engram.Client(token=SERVICE, http=app_client)
    agent = client.register("typed")["id"]
    fact = client.answer(agent, ops.Remember("the deploy runs nightly", tags=["ops"]))
    assert isinstance(fact, FactOut)
    assert (fact.content, fact.tags, fact.created_at.tzinfo is not None) == (
        "the deploy runs nightly",
        ["ops"],
        True,
    )
    hits = client.answer(agent, ops.Recall("deploy", mode="text"))
    assert isinstance(hits, RecallOut) and [h.id for h in hits.facts] == [fact.id]
    kept = client.answer(agent, ops.WorkingSet("plan", {"step": 1}))
    assert isinstance(kept, EntryOut) and (kept.value, kept.version) == ({"step": 1}, 1)
    assert client.answer(agent, ops.WorkingDelete("plan")) is None  # a 204 has no body
    report = client.answer(agent, ops.Health())
    assert isinstance(report, HealthReportOut) and report.facts.live == 1


def _person(app_client: TestClient, uid: str) -> engram.Client:
    token = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return engram.Client(token=token, http=app_client)


def test_agents_and_their_memory(app_client: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=app_client)
    assert client.healthz()["ok"] is True
    agent = client.register("planner", team_id="acme")["id"]
    assert client.agent(agent)["resourceRef"] == {"resourceId": "planner", "teamId": "acme"}
    client.working.set(agent, "a/b?c#d", {"ship": "v2"})
    assert client.working.get(agent, "a/b?c#d") == {"ship": "v2"}
    assert client.working.list(agent)["working"] == {"a/b?c#d": {"ship": "v2"}}
    client.working.delete(agent, "a/b?c#d")
    with pytest.raises(engram.NotFound):
        client.working.get(agent, "a/b?c#d")
    fact = client.remember(agent, "the deploy runs nightly", source_ref=("sb-1", 3))
    assert fact["verified"] is True
    assert client.recall(agent, "deploy", top_k=1)[0]["id"] == fact["id"]

    assert [f["id"] for f in client.facts(agent, limit=10)["facts"]] == [fact["id"]]
    child = client.spawn(agent, "worker")
    assert child["fork"]["semanticFactsCopied"] == 1
    assert client.compact(agent, max_facts=0, max_age=timedelta(days=1))["removed"] == 0
    assert client.end(child["agent"]["id"])["status"] == "ended"
    # The Client holds a call to the library's own rules before sending it, so the
    # message names the parameter as the caller wrote it (the service would say topK).
    with pytest.raises(engram.InvalidInput, match="top_k"):
        client.recall(agent, "x", top_k=101)
    with pytest.raises(engram.Unauthenticated):
        engram.Client(http=app_client).register("nobody")


def test_people_and_allowances(app_client: TestClient) -> None:
    p1 = _person(app_client, "p1")
    a, b = p1.app("app:a"), p1.app("app:b")
    kept = a.remember("likes green tea")
    b.remember("likes green apples")
    assert [m.get("rememberedBy") for m in b.recall("green", top_k=10)] == [None]
    assert p1.allow("app:a", "app:b")["reader"] == "app:b"
    assert [s["source"] for s in p1.shares(reader="app:b")] == ["app:a"]
    assert [m.get("rememberedBy") for m in b.recall("green", top_k=10)] == [None, "app:a"]
    p1.stop("app:a", "app:b")
    with pytest.raises(engram.NotFound):
        p1.stop("app:a", "app:b")
    with pytest.raises(engram.Unprocessable):
        p1.allow("app:a", "app:a")
    assert a.correct(kept["id"], "likes black tea")["memory"]["memory"] == "likes black tea"
    assert p1.correct_memory(kept["id"], "likes oolong")["memory"]["corrected_by"] == "p1"
    assert a.listing()["count"] == 1
    assert p1.memories("app:a")["memories"][0]["memory"] == "likes oolong"
    p2 = _person(app_client, "p2")
    with pytest.raises(engram.NotFound):
        p2.forget_memory(kept["id"])
    with pytest.raises(engram.Conflict):
        b.forget_all(count=0)
    assert b.forget_all(count=1) == 1
    a.forget(kept["id"])
    assert a.listing()["count"] == 0
    a.remember("one more")
    with pytest.raises(engram.Conflict):
        p1.forget_memories("app:a", count=0)
    assert p1.forget_memories("app:a", count=1) == 1
    with pytest.raises(engram.Forbidden):
        engram.Client(token=SERVICE, http=app_client).app("app:a").listing()


def test_the_agent_routes_a_service_needs(app_client: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=app_client)
    agent = client.register("planner")["id"]
    assert [a["id"] for a in client.agents(name="planner")["agents"]] == [agent]
    fact = client.remember(
        agent,
        "refund approved",
        type="decision",
        tags=["billing"],
        metadata={"ticket": 42},
        created_at=datetime(2024, 3, 1, tzinfo=UTC),
        source_ref=("sb-1", 7),
    )
    assert (fact["type"], fact["tags"], fact["metadata"]) == (
        "decision",
        ["billing"],
        {"ticket": 42},
    )
    client.remember(agent, "refund discussed", tags=["chat"])
    assert [h["id"] for h in client.recall(agent, "refund", tags=["billing"])] == [fact["id"]]
    assert [h["id"] for h in client.recall(agent, "refund", verified_only=True)] == [fact["id"]]
    before = datetime(2024, 6, 1, tzinfo=UTC)
    assert [h["id"] for h in client.recall(agent, "refund", created_before=before)] == [fact["id"]]
    assert len(client.recall(agent, "refund", mode="text", type="decision")) == 1
    assert client.fact(agent, fact["id"])["content"] == "refund approved"
    assert client.correct(agent, fact["id"], "refund sent", by="ops")["correctedBy"] == "ops"
    assert client.forget(agent, fact["id"]) is True and client.forget(agent, fact["id"]) is False
    with pytest.raises(engram.Conflict):
        client.forget_all(agent, expected_count=0)
    assert client.forget_all(agent, expected_count=1) == 1

    for ttl, said in (
        (timedelta(0), "got 0 seconds"),  # once sent as 1 second
        (timedelta(seconds=-3), "got -3 seconds"),
        (timedelta(milliseconds=1500), "a whole number of seconds over HTTP, got 1.5 seconds"),
    ):
        with pytest.raises(engram.InvalidInput, match=said):
            client.working.set(agent, "plan", "a", ttl=ttl)
    entry = client.working.set(agent, "plan", "a", expected_version=0, ttl=timedelta(hours=1))
    assert entry["version"] == 1 and entry["expiresAt"] is not None
    with pytest.raises(engram.Conflict):
        client.working.set(agent, "plan", "b", expected_version=0)
    assert client.working.set(agent, "plan", "b", expected_version=1)["version"] == 2
    assert client.working.entry(agent, "plan")["value"] == "b"
    for key in (".", "..", "a\nb", "%2F"):
        client.working.set(agent, key, key)
        assert client.working.get(agent, key) == key
    with pytest.raises(engram.InvalidInput):
        client.working.set(agent, "big", "x" * (2 << 20))  # over the body limit: 413
    client.end(agent)
    with pytest.raises(engram.Conflict, match="ended"):
        client.working.set(agent, "plan", "c")
    assert client.working.get(agent, "plan") == "b"


def test_shares_with_neither_argument_lists_them_all(app_client: TestClient) -> None:
    p1 = _person(app_client, "p1")
    assert p1.shares() == []
    p1.allow("app:a", "app:b")
    p1.allow("app:c", "app:a")
    assert {(s["source"], s["reader"]) for s in p1.shares()} == {
        ("app:a", "app:b"),
        ("app:c", "app:a"),
    }
    with pytest.raises(engram.InvalidInput, match="not both"):
        p1.shares(source="app:a", reader="app:b")


def test_history_through_the_client(app_client: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=app_client)
    agent = client.register("historian")["id"]
    due = client.remember(agent, "the invoice is due Friday")
    assert client.forget(agent, due["id"]) is True
    trash = client.trash(agent)
    assert [t["id"] for t in trash["facts"]] == [due["id"]] and "purgeAt" in trash["facts"][0]
    assert client.restore(agent, due["id"])["createdAt"] == due["createdAt"]
    with pytest.raises(engram.NotFound):
        client.restore(agent, due["id"])
    assert client.forget(agent, due["id"], hard=True) is True
    assert client.trash(agent)["facts"] == []
    with pytest.raises(engram.NotFound):
        client.fact(agent, due["id"])

    for i in range(3):
        client.remember(agent, f"fact number {i}")
    assert client.forget_all(agent, expected_count=3) == 3
    first = client.trash(agent, limit=2)
    rest = client.trash(agent, limit=2, before=first["nextBefore"])
    assert len(first["facts"]) == 2 and len(rest["facts"]) == 1 and "nextBefore" not in rest
    client.remember(agent, "one more fact")
    assert client.forget_all(agent, expected_count=1, hard=True) == 1
    assert client.trash(agent)["facts"] == []  # for good: the trash's too

    kept = client.remember(agent, "the office is in Lisbon")["id"]
    gone = client.remember(agent, "the door code is 4711")["id"]
    receipt = client.delete_traces(agent, [gone, "f_nope"])
    assert (receipt["facts"], receipt["trashed"]) == (1, 0)
    with pytest.raises(engram.InvalidInput):
        client.delete_traces(agent, [])  # refused before it is sent
    client.forget(agent, client.remember(agent, "a trashed fact")["id"])
    with pytest.raises(engram.Conflict):
        client.delete_scope(agent, expected_count=1)  # one live, one trashed
    assert client.delete_scope(agent, expected_count=0, turn_user_id="nobody")["facts"] == 0
    receipt = client.delete_scope(agent, expected_count=2)
    assert (receipt["facts"], receipt["trashed"]) == (1, 1) and receipt["ledgerItemsScrubbed"] > 0
    assert client.facts(agent)["facts"] == [] and client.trash(agent)["facts"] == []
    newest = client.ledger(agent, limit=1)["entries"][0]
    assert newest["op"] == "delete_scope"
    assert {(c["kind"], c["action"]) for c in newest["changes"]} == {("fact", "erase")}
    assert len(newest["changes"]) == 2  # each fact's history ends with its deletion
    history = client.history(agent, kept)
    assert [(e["op"], e["scrubbed"]) for e in history] == [
        ("delete_scope", False),
        ("remember", True),
    ]


def test_reverts_through_the_client(app_client: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=app_client)
    agent = client.register("historian")["id"]
    fact = client.remember(agent, "the meeting is at noon")["id"]
    added = client.history(agent, fact)[0]["seq"]
    client.correct(agent, fact, "the meeting is at one")
    client.correct(agent, fact, "the meeting is at two")
    later = [e["seq"] for e in client.history(agent, fact)[:2]][::-1]
    with pytest.raises(engram.RevertBlocked) as blocked:
        client.revert(agent, added)
    assert blocked.value.later == tuple(later) and blocked.value.hint
    assert isinstance(blocked.value, engram.Conflict)
    assert client.fact(agent, fact)["content"] == "the meeting is at two"

    undone = client.revert(agent, later[1])
    assert (undone["op"], undone["reverts"]) == ("revert", later[1])
    assert undone["actor"].startswith("service:") and undone["via"] == "http"
    assert client.fact(agent, fact)["content"] == "the meeting is at one"

    page = client.ledger(agent, limit=2)
    assert [e["seq"] for e in page["entries"]] == [undone["seq"], later[1]]
    assert page["entries"][1]["revertedBy"] == undone["seq"]
    older = client.ledger(agent, limit=100, before=page["nextBefore"])
    assert older["entries"][0]["seq"] == later[0]
    assert client.ledger(agent, object_id=fact)["entries"] == client.history(agent, fact)
    with pytest.raises(engram.NotFound):
        client.revert(agent, 999_999)
    client.forget(agent, fact, hard=True)
    with pytest.raises(engram.Conflict, match="erased") as scrubbed:
        client.revert(agent, later[0])
    assert not isinstance(scrubbed.value, engram.RevertBlocked)
    client.end(agent)
    with pytest.raises(engram.Conflict, match="ended"):
        client.revert(agent, undone["seq"])
    assert client.ledger(agent)["entries"][0]["op"] == "agent.end"


def test_every_route_has_a_client_method(app_client: TestClient) -> None:
    """Each route of the service is reached by some method of engram.Client: the calls
    below are one of each, and the routes they reach must be all of them."""
    reached: set[tuple[str, str]] = set()
    app_client.event_hooks["request"].append(
        lambda request: reached.add((request.method, request.url.path))
    )
    client = engram.Client(token=SERVICE, http=app_client)
    client.healthz()
    agent = client.register("planner")["id"]
    client.agents()
    client.agent(agent)
    client.health(agent)
    client.health()
    client.working.set(agent, "plan", {"tier": "pro"})
    client.working.get(agent, "plan")
    client.working.list(agent)
    client.working.delete(agent, "plan")
    one = client.remember(agent, "Ana lives in Lisbon")["id"]
    two = client.remember(agent, "Ana moved to Lisbon")["id"]
    three = client.remember(agent, "the deploy runs nightly")["id"]
    client.remember_conversation(agent, [engram.Turn("ana", "hello there")])
    client.recall(agent, "Ana")
    client.facts(agent)
    client.fact(agent, one)
    client.provenance(agent, one)
    client.correct(agent, three, "the deploy runs weekly")
    merged = client.merge(agent, [one, two], "Ana lives in Lisbon now")["id"]
    client.forget(agent, three)
    client.trash(agent)
    client.restore(agent, three)
    client.history(agent, three)
    client.ledger(agent)
    newest = client.ledger(agent, limit=1)["entries"][0]
    assert client.ledger_changes(agent, newest["seq"])["changes"] == newest["changes"]
    client.revert(agent, newest["seq"])
    client.compact(agent, max_facts=100)
    session = client.sessions.start(agent)["id"]
    client.sessions.append(session, [engram.Entry("note", "a step")])
    client.episodic_recall(agent)
    client.episodic_tree(agent)
    graph = client.graph(agent)
    graph.upsert_entity("Ana", type="person")
    graph.upsert_entity("Lisbon", type="place")
    graph.entity("Ana")
    graph.search("Ana")
    graph.declare_relation_type("lives_in", single_valued=True)
    relation = graph.upsert_relation("Ana", "Lisbon", "lives_in", facts=[merged])["id"]
    graph.relations()
    graph.neighbourhood("Ana")
    graph.traverse("Ana")
    graph.extract()
    graph.expire_relation(relation)
    graph.delete_relation(relation)
    graph.delete_entity("Lisbon")
    usage = client.usage(agent)
    usage.detect([merged], "Ana lives in Lisbon now, as you said")
    usage.record(merged, "used")
    usage.signals(merged)
    client.consolidate(agent, dry_run=True)
    client.ingest_text(agent, "# Trip\n\nAna flies to Porto.", name="trip.md")
    client.ingest_file(agent, b"# Notes\n\nBo reads.", name="notes.md", media_type="text/markdown")
    document = client.documents(agent)[0]["id"]
    client.document(agent, document)
    client.forget_document(agent, document)
    client.compile_wiki(agent)
    exported = client.export_string(agent)
    client.import_string(agent, exported, dry_run=True)
    client.tools(agent)
    client.call_tool(agent, "memory_search", {"query": "Ana"})
    client.delete_traces(agent, [three])
    client.forget_all(agent, expected_count=len(client.facts(agent)["facts"]))
    client.delete_scope(agent, expected_count=client.health(agent)["facts"]["trashed"])
    client.end(agent)
    client.spawn(agent, "worker")

    ana = _person(app_client, "ana")
    app = ana.app("app:notes")
    memory = app.remember("ana walks daily")["id"]
    app.recall("walks")
    app.listing()
    app.correct(memory, "ana walks every day")
    app.export()
    app.tools()
    app.call_tool("memory_search", {"query": "walks"})
    people_graph = app.graph
    people_graph.upsert_entity("Ana", type="person")
    people_graph.upsert_entity("Porto", type="place")
    people_graph.entity("Ana")
    people_graph.search("Ana")
    people_graph.declare_relation_type("visits", single_valued=False)
    visit = people_graph.upsert_relation("Ana", "Porto", "visits")["id"]
    people_graph.relations()
    people_graph.neighbourhood("Ana")
    people_graph.traverse("Ana")
    people_graph.extract()
    people_graph.delete_relation(visit)
    people_graph.delete_entity("Porto")
    app.forget(memory)
    second = app.remember("ana reads at night")["id"]
    ana.memories("app:notes")
    ana.correct_memory(second, "ana reads before bed")
    ana.forget_memory(second)
    app.remember("ana swims")
    app.forget_all(count=1)
    ana.app("app:mail").remember("ana mails bo")
    assert {"app": "app:mail", "count": 1} in ana.apps()
    ana.forget_memories("app:mail", count=1)
    ana.allow("app:notes", "app:calendar")
    ana.shares()
    ana.stop("app:notes", "app:calendar")

    published = app_client.get("/openapi.json").json()["paths"]
    routes = {(method.upper(), path) for path, item in published.items() for method in item}
    matched = {(method, _template(routes, method, path)) for method, path in reached}
    assert len(routes) > 80
    assert routes - matched == set(), "routes no Client method reaches"


def _template(routes: set[tuple[str, str]], method: str, path: str) -> str:
    """The published path a request's path is an instance of (the most literal one)."""
    fits = [
        template
        for verb, template in routes
        if verb == method and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path)
    ]
    return min(fits, key=lambda t: t.count("{"), default=path)
