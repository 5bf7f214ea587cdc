"""The knowledge graph through the real app (in-process) on both backends: an agent's
routes and a person's in an application, engram.Client with the library's names, and
refusals that write nothing and name nothing of another scope."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
import stores
from answers import error as _error
from answers import ok as _ok
from engram import Conflict, InvalidInput, NotFound
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "graph-secret-0123456789abcdef0123456789"
SERVICE = "graph-service-token"
T0 = datetime(2023, 1, 1, tzinfo=UTC)
GRAPH_ROWS = """SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM entity_aliases),
    (SELECT count(*) FROM relations), (SELECT count(*) FROM relation_types),
    (SELECT count(*) FROM ledger)"""


def _http(target: Target, embedder: engram.HashingEmbedder | None) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    memory = engram.open(target, embedder=embedder)
    app = create_app(settings, memory_store=memory)
    with TestClient(app, headers={"Authorization": f"Bearer {SERVICE}"}) as test:
        yield test
    memory.close()


@pytest.fixture
def http(target: Target) -> Iterator[TestClient]:
    yield from _http(target, engram.HashingEmbedder(32))


def _person(uid: str) -> dict[str, str]:
    signed = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}"}


def _agent(http: TestClient, name: str) -> str:
    made = http.post("/agents", json={"name": name})
    assert made.status_code == 201, made.text
    return f"/agents/{made.json()['id']}/graph"


def _chain(http: TestClient, graph: str, headers: dict[str, str] | None = None) -> None:
    """Ana -knows-> Bo -knows-> Cy -works_at-> Acme, and Dee alone."""
    for name in ("Ana", "Bo", "Cy", "Acme", "Dee"):
        _ok(http.put(f"{graph}/entities", json={"name": name}, headers=headers))
    chain = [("Ana", "knows", "Bo"), ("Bo", "knows", "Cy"), ("Cy", "works_at", "Acme")]
    for source, kind, target in chain:
        body = {"source": source, "target": target, "type": kind}
        _ok(http.post(f"{graph}/relations", json=body, headers=headers), 201)


# -- an agent's graph ------------------------------------------------------------------
def test_entities_are_upserted_found_and_deleted_by_id_name_or_alias(http: TestClient) -> None:
    graph = _agent(http, "planner")
    spec = {"name": "Ana Lima", "type": "person", "aliases": ["Ana"], "summary": "paints birds"}
    ana = _ok(http.put(f"{graph}/entities", json=spec | {"attributes": {"born": 1990}}))
    assert ana["id"].startswith("e_") and ana["origin"] == "asserted"
    assert (ana["aliases"], ana["attributes"], ana["createdAt"]) == (
        ["Ana"],
        {"born": 1990},
        ana["updatedAt"],
    )
    again = _ok(http.put(f"{graph}/entities", json={"name": "ana", "aliases": ["A. Lima"]}))
    assert again["id"] == ana["id"] and again["aliases"] == ["A. Lima", "Ana"]
    assert again["summary"] == "paints birds"  # a value left out stays as it is
    for ref in (ana["id"], "Ana Lima", "a.%20lima", "ANA"):
        assert _ok(http.get(f"{graph}/entities/{ref}"))["id"] == ana["id"], ref
    _ok(http.put(f"{graph}/entities", json={"name": "Lima", "type": "place"}))
    found = _ok(http.get(f"{graph}/entities", params={"query": "lima", "mode": "text"}))
    assert {e["name"] for e in found["entities"]} == {"Ana Lima", "Lima"}
    assert all(e["textRank"] is not None and e["vectorRank"] is None for e in found["entities"])
    assert all(e["score"] > 0 for e in found["entities"])
    typed = _ok(http.get(f"{graph}/entities", params={"query": "lima", "type": "place"}))
    assert [e["name"] for e in typed["entities"]] == ["Lima"]
    one = _ok(http.get(f"{graph}/entities", params={"query": "lima", "topK": 1}))
    assert len(one["entities"]) == 1
    gone = _ok(http.delete(f"{graph}/entities/Ana"))
    assert gone["id"] == ana["id"]
    _error(http.get(f"{graph}/entities/{ana['id']}"), 404, "not_found")
    _error(http.delete(f"{graph}/entities/Ana"), 404, "not_found")


def test_relations_keep_world_and_engram_time(http: TestClient) -> None:
    graph = _agent(http, "planner")
    for name in ("Ana", "Lisbon", "Porto"):
        _ok(http.put(f"{graph}/entities", json={"name": name}))
    declared = _ok(http.put(f"{graph}/relation-types/lives_in", json={"singleValued": True}))
    assert declared == {"type": "lives_in", "singleValued": True, "changed": True}
    again = _ok(http.put(f"{graph}/relation-types/lives_in", json={"singleValued": True}))
    assert again["changed"] is False
    moved = T0 + timedelta(days=200)
    lisbon = {"source": "Ana", "target": "Lisbon", "type": "lives_in", "validAt": T0.isoformat()}
    first = _ok(http.post(f"{graph}/relations", json=lisbon), 201)
    porto = lisbon | {"target": "Porto", "validAt": moved.isoformat()}
    second = _ok(http.post(f"{graph}/relations", json=porto), 201)
    assert first["validAt"] == "2023-01-01T00:00:00Z" and first["expiredAt"] is None
    now = _ok(http.get(f"{graph}/relations", params={"entity": "Ana"}))["relations"]
    assert [r["id"] for r in now] == [second["id"]]
    then = (T0 + timedelta(days=10)).isoformat()
    held = _ok(http.get(f"{graph}/relations", params={"entity": "Ana", "asOf": then}))
    assert [r["id"] for r in held["relations"]] == [first["id"]]
    every = _ok(http.get(f"{graph}/relations", params={"includeExpired": "true"}))["relations"]
    assert {r["id"]: r["invalidAt"] for r in every} == {
        first["id"]: moved.isoformat().replace("+00:00", "Z"),
        second["id"]: None,
    }
    assert _ok(http.get(f"{graph}/relations", params={"type": "knows"}))["relations"] == []
    assert len(_ok(http.get(f"{graph}/relations", params={"limit": 1}))["relations"]) == 1

    end = "2024-01-01T00:00:00Z"
    retired = _ok(http.delete(f"{graph}/relations/{second['id']}", params={"at": end}))
    assert retired["invalidAt"] == end and retired["expiredAt"] is not None
    assert _ok(http.get(f"{graph}/relations"))["relations"] == []
    gone = _ok(http.delete(f"{graph}/relations/{second['id']}", params={"hard": "true"}))
    assert gone["id"] == second["id"]
    every = _ok(http.get(f"{graph}/relations", params={"includeExpired": "true"}))["relations"]
    assert [r["id"] for r in every] == [first["id"]]
    _error(http.delete(f"{graph}/relations/{second['id']}"), 404, "not_found")


def test_a_relation_cites_the_agent_s_facts(http: TestClient) -> None:
    graph = _agent(http, "planner")
    facts = graph.removesuffix("/graph") + "/facts"
    fact = _ok(http.post(facts, json={"content": "Ana met Bo at the market"}), 201)["id"]
    for name in ("Ana", "Bo"):
        _ok(http.put(f"{graph}/entities", json={"name": name}))
    body = {"source": "Ana", "target": "Bo", "type": "knows", "facts": [fact]}
    made = _ok(
        http.post(f"{graph}/relations", json=body | {"attributes": {"where": "market"}}), 201
    )
    assert (made["facts"], made["attributes"]) == ([fact], {"where": "market"})
    _error(http.post(f"{graph}/relations", json=body | {"facts": ["f_missing"]}), 404, "not_found")
    _error(http.post(f"{graph}/relations", json=body | {"target": "Nobody"}), 404, "not_found")


def test_walks_follow_relations_within_their_bounds(http: TestClient) -> None:
    graph = _agent(http, "planner")
    _chain(http, graph)
    one = _ok(http.get(f"{graph}/entities/Bo/neighbourhood"))
    assert one["center"]["name"] == "Bo" and one["truncated"] is False
    assert [e["name"] for e in one["entities"]] == ["Bo", "Ana", "Cy"]
    assert len(one["relations"]) == 2 and one["facts"] == []
    two = _ok(http.get(f"{graph}/entities/Bo/neighbourhood", params={"depth": 2}))
    assert [e["name"] for e in two["entities"]] == ["Bo", "Ana", "Cy", "Acme"]
    cut = _ok(http.get(f"{graph}/entities/Bo/neighbourhood", params={"depth": 2, "limit": 2}))
    assert cut["truncated"] is True and len(cut["entities"]) == 2

    names = {e["id"]: e["name"] for e in two["entities"]}
    out = _ok(http.post(f"{graph}/traversals", json={"start": "Ana", "depth": 3}))["paths"]
    assert [[names[i] for i in p["entities"]] for p in out] == [
        ["Ana", "Bo"],
        ["Ana", "Bo", "Cy"],
        ["Ana", "Bo", "Cy", "Acme"],
    ]
    assert [len(p["relations"]) for p in out] == [1, 2, 3]
    spec = {"start": "Acme", "depth": 3, "types": ["knows"], "direction": "in"}
    assert _ok(http.post(f"{graph}/traversals", json=spec))["paths"] == []
    inward = _ok(http.post(f"{graph}/traversals", json={"start": "Cy", "direction": "in"}))
    assert [[names[i] for i in p["entities"]] for p in inward["paths"]] == [
        ["Cy", "Bo"],
        ["Cy", "Bo", "Ana"],
    ]
    limited = {"start": "Ana", "depth": 3, "limit": 2}
    assert len(_ok(http.post(f"{graph}/traversals", json=limited))["paths"]) == 2
    assert _ok(http.post(f"{graph}/traversals", json={"start": "Dee"}))["paths"] == []

    mentor = {"source": "Bo", "target": "Dee", "type": "mentors", "validAt": T0.isoformat()}
    _ok(http.post(f"{graph}/relations", json=mentor), 201)
    before = (T0 - timedelta(days=1)).isoformat()
    then = _ok(http.get(f"{graph}/entities/Bo/neighbourhood", params={"asOf": before}))
    assert [e["name"] for e in then["entities"]] == ["Bo", "Ana", "Cy"]  # not mentoring yet
    now = _ok(http.get(f"{graph}/entities/Bo/neighbourhood"))
    assert [e["name"] for e in now["entities"]] == ["Bo", "Ana", "Cy", "Dee"]


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


BAD_ENTITIES: list[dict[str, Any]] = [
    {"name": ""},
    {"name": "   "},
    {"name": "?!"},
    {"name": "x" * 257},
    {"name": 5},
    {"name": "Eve", "type": "t" * 129},
    {"name": "Eve", "aliases": "Evie"},
    {"name": "Eve", "aliases": [f"a{i}" for i in range(65)]},
    {"name": "Eve", "summary": "s" * 2001},
    {"name": "Eve", "attributes": [1]},
    {"name": "Eve", "attributes": {"deep": _nested(70)}},
    {"name": "Eve", "extra": 1},
]
BAD_RELATIONS: list[dict[str, Any]] = [
    {"source": "Ana", "target": "Bo", "type": "knows", "validAt": "2024-02-01T00:00:00Z"}
    | {"invalidAt": "2024-01-01T00:00:00Z"},
    {"source": "Ana", "target": "Bo", "type": "knows", "validAt": "2024-01-01T00:00:00"},
    {"source": "Ana", "target": "Bo", "type": "knows", "validAt": 1704067200},
    {"source": "Ana", "target": "Bo", "type": "knows", "valid_at": "2024-01-01T00:00:00Z"},
    {"source": "Ana", "target": "Bo"},
    {"source": "Ana", "target": "Bo", "type": " "},
    {"source": "Ana", "target": "Bo", "type": "knows", "facts": "f_1"},
    {"source": "Ana", "target": "Ana", "type": "lives_in"},  # a single-valued self-loop
    {"source": "Ana", "target": "Bo", "type": "knows", "facts": [":\u0000"]},
]
BAD_READS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/entities", {}),
    ("GET", "/entities", {"query": "   "}),
    ("GET", "/entities", {"query": "ana", "topK": 0}),
    ("GET", "/entities", {"query": "ana", "topK": 101}),
    ("GET", "/entities", {"query": "ana", "top_k": 3}),
    ("GET", "/entities", {"query": "ana", "mode": "vector"}),
    ("GET", "/relations", {"asOf": "yesterday"}),
    ("GET", "/relations", {"includeExpired": "1"}),
    ("GET", "/relations", {"limit": 0}),
    ("GET", "/relations", {"type": "x" * 129}),
    ("GET", "/entities/Ana/neighbourhood", {"depth": 4}),
    ("GET", "/entities/Ana/neighbourhood", {"depth": 0}),
    ("GET", "/entities/Ana/neighbourhood", {"limit": 1001}),
]
BAD_TRAVERSALS: list[dict[str, Any]] = [
    {"start": "Ana", "depth": 4},
    {"start": "Ana", "direction": "up"},
    {"start": "Ana", "types": "knows"},
    {"start": "Ana", "limit": 1001},
    {"start": "Ana", "from": "Bo"},
]


def test_bad_input_is_400_and_writes_nothing(http: TestClient, target: Target) -> None:
    graph = _agent(http, "planner")
    for name in ("Ana", "Bo"):
        _ok(http.put(f"{graph}/entities", json={"name": name}))
    _ok(http.put(f"{graph}/relation-types/lives_in", json={"singleValued": True}))
    relation = _ok(
        http.post(f"{graph}/relations", json={"source": "Ana", "target": "Bo"} | {"type": "knows"}),
        201,
    )["id"]
    before = stores.rows(target, GRAPH_ROWS)
    for body in BAD_ENTITIES:
        _error(http.put(f"{graph}/entities", json=body), 400, "invalid_input")
    for body in BAD_RELATIONS:
        _error(http.post(f"{graph}/relations", json=body), 400, "invalid_input")
    lone = '{"source": "Ana", "target": "Bo", "type": "knows", "facts": ["\\ud800"]}'
    json_body = {"content-type": "application/json"}
    answer = http.post(f"{graph}/relations", content=lone, headers=json_body)
    _error(answer, 400, "invalid_input")  # a lone surrogate, as JSON may escape one
    for bad_type in ({"singleValued": "true"}, {}, {"single_valued": True}):
        _error(http.put(f"{graph}/relation-types/t", json=bad_type), 400, "invalid_input")
    _error(
        http.put(f"{graph}/relation-types/%20", json={"singleValued": True}), 400, "invalid_input"
    )
    at = {"at": "2024-01-01T00:00:00"}  # no UTC offset
    _error(http.delete(f"{graph}/relations/{relation}", params=at), 400, "invalid_input")
    for odd in ("r_%00", "r_%ED%A0%80", "%20"):  # NUL, a lone surrogate, only a space
        for hard in ("false", "true"):
            answer = http.delete(f"{graph}/relations/{odd}", params={"hard": hard})
            assert answer.status_code in (400, 404), answer.text
    for method, path, params in BAD_READS:
        answer = http.request(method, graph + path, params=params)
        _error(answer, 400, "invalid_input")
    for body in BAD_TRAVERSALS:
        _error(http.post(f"{graph}/traversals", json=body), 400, "invalid_input")
    assert stores.rows(target, GRAPH_ROWS) == before
    # The relation the refusals named is there: they were refused for what they said.
    assert _ok(http.delete(f"{graph}/relations/{relation}"))["expiredAt"]


def test_a_snake_case_field_is_refused_with_its_camel_case_spelling(http: TestClient) -> None:
    graph = _agent(http, "planner")
    body = {"source": "Ana", "target": "Bo", "type": "knows", "invalid_at": "2024-01-01T00:00:00Z"}
    error = _error(http.post(f"{graph}/relations", json=body), 400, "invalid_input")
    assert "invalidAt" in error["hint"]


def test_another_agent_s_graph_is_not_found_and_not_hinted_at(
    http: TestClient, target: Target
) -> None:
    mine, theirs = _agent(http, "mine"), _agent(http, "theirs")
    _ok(http.put(f"{mine}/entities", json={"name": "Ana"}))
    secret = _ok(http.put(f"{theirs}/entities", json={"name": "Secret Name"}))
    _ok(http.put(f"{theirs}/entities", json={"name": "Bo"}))
    hidden = _ok(
        http.post(
            f"{theirs}/relations",
            json={"source": "Secret Name", "target": "Bo"} | {"type": "knows"},
        ),
        201,
    )
    before = stores.rows(target, GRAPH_ROWS)
    errors = [
        _error(http.get(f"{mine}/entities/{secret['id']}"), 404, "not_found"),
        _error(http.get(f"{mine}/entities/Secret%20Name"), 404, "not_found"),
        _error(http.delete(f"{mine}/entities/{secret['id']}"), 404, "not_found"),
        _error(http.get(f"{mine}/entities/{secret['id']}/neighbourhood"), 404, "not_found"),
        _error(http.post(f"{mine}/traversals", json={"start": secret["id"]}), 404, "not_found"),
        _error(http.delete(f"{mine}/relations/{hidden['id']}"), 404, "not_found"),
        _error(http.delete(f"{mine}/relations/{hidden['id']}?hard=true"), 404, "not_found"),
        _error(
            http.post(
                f"{mine}/relations", json={"source": "Ana", "target": secret["id"], "type": "knows"}
            ),
            404,
            "not_found",
        ),
    ]
    assert all("hint" not in e for e in errors)
    assert _ok(http.get(f"{mine}/entities", params={"query": "secret"}))["entities"] == []
    assert _ok(http.get(f"{mine}/relations", params={"includeExpired": "true"}))["relations"] == []
    assert stores.rows(target, GRAPH_ROWS) == before
    # The same words as for an entity that exists nowhere: nothing tells them apart.
    _ok(http.delete(f"{theirs}/entities/{secret['id']}"))
    after = _error(http.get(f"{mine}/entities/{secret['id']}"), 404, "not_found")
    assert after == errors[0]
    assert _ok(http.get(f"{theirs}/relations"))["relations"] == []


def test_conflicts_are_409_and_write_nothing(http: TestClient, target: Target) -> None:
    made = http.post("/agents", json={"name": "planner"}).json()["id"]
    graph = f"/agents/{made}/graph"
    _ok(http.put(f"{graph}/entities", json={"name": "Bo"}))
    before = stores.rows(target, GRAPH_ROWS)
    taken = {"name": "Robert", "aliases": ["bo"]}
    _error(http.put(f"{graph}/entities", json=taken), 409, "conflict")
    assert stores.rows(target, GRAPH_ROWS) == before
    _ok(http.post(f"/agents/{made}/end"))
    before = stores.rows(target, GRAPH_ROWS)
    _error(http.put(f"{graph}/entities", json={"name": "Cy"}), 409, "conflict")
    _error(http.delete(f"{graph}/entities/Bo"), 409, "conflict")
    _error(http.put(f"{graph}/relation-types/t", json={"singleValued": True}), 409, "conflict")
    assert stores.rows(target, GRAPH_ROWS) == before
    assert _ok(http.get(f"{graph}/entities/Bo"))["name"] == "Bo"  # an ended agent still reads


def test_searching_by_meaning_without_an_embedder(target: Target) -> None:
    for http in _http(target, None):
        graph = _agent(http, "planner")
        _ok(http.put(f"{graph}/entities", json={"name": "Ana"}))
        _error(http.get(f"{graph}/entities", params={"query": "ana"}), 501, "capability_missing")
        text = _ok(http.get(f"{graph}/entities", params={"query": "ana", "mode": "text"}))
        assert [e["name"] for e in text["entities"]] == ["Ana"]
        people = "/api/v1/apps/app:a/graph"
        _ok(http.put(f"{people}/entities", json={"name": "Ana"}, headers=_person("p1")))
        search = http.get(f"{people}/entities", params={"query": "ana"}, headers=_person("p1"))
        _error(search, 503, "unavailable")
        found = http.get(
            f"{people}/entities", params={"query": "ana", "mode": "text"}, headers=_person("p1")
        )
        assert [e["name"] for e in _ok(found)["entities"]] == ["Ana"]


# -- a person's graph in an application -------------------------------------------------
def test_a_person_s_graph_is_theirs_in_one_application(http: TestClient, target: Target) -> None:
    p1, p2 = _person("p1"), _person("p2")
    notes = "/api/v1/apps/app:notes/graph"
    ana = _ok(http.put(f"{notes}/entities", json={"name": "Ana", "type": "friend"}, headers=p1))
    assert set(ana) >= {"created_at", "updated_at"} and "createdAt" not in ana
    _ok(http.put(f"{notes}/entities", json={"name": "Lisbon"}, headers=p1))
    declared = http.put(
        f"{notes}/relation-types/lives_in", json={"single_valued": True}, headers=p1
    )
    assert _ok(declared) == {"type": "lives_in", "single_valued": True, "changed": True}
    body = {"source": "Ana", "target": "Lisbon", "type": "lives_in", "valid_at": T0.isoformat()}
    made = _ok(http.post(f"{notes}/relations", json=body, headers=p1), 201)
    assert made["valid_at"] == "2023-01-01T00:00:00Z" and made["expired_at"] is None
    camel = body | {"validAt": T0.isoformat()}
    _error(http.post(f"{notes}/relations", json=camel, headers=p1), 400, "invalid_input")
    listed = _ok(http.get(f"{notes}/relations", params={"entity": "Ana"}, headers=p1))
    assert [r["id"] for r in listed["relations"]] == [made["id"]]
    around = _ok(http.get(f"{notes}/entities/Ana/neighbourhood", headers=p1))
    assert set(around) == {"center", "entities", "relations", "memories", "truncated"}
    assert [e["name"] for e in around["entities"]] == ["Ana", "Lisbon"]
    paths = _ok(http.post(f"{notes}/traversals", json={"start": "Lisbon"}, headers=p1))["paths"]
    assert [p["entities"] for p in paths] == [[made["target"], made["source"]]]
    found = _ok(http.get(f"{notes}/entities", params={"query": "ana"}, headers=p1))
    assert [e["name"] for e in found["entities"]] == ["Ana"]
    assert {"text_rank", "vector_rank", "score"} <= set(found["entities"][0])

    before = stores.rows(target, GRAPH_ROWS)
    for other, app in ((p2, "app:notes"), (p1, "app:calendar")):
        there = f"/api/v1/apps/{app}/graph"
        _error(http.get(f"{there}/entities/{ana['id']}", headers=other), 404, "not_found")
        _error(http.delete(f"{there}/entities/Ana", headers=other), 404, "not_found")
        gone = http.delete(f"{there}/relations/{made['id']}", headers=other)
        _error(gone, 404, "not_found")
        search = http.get(f"{there}/entities", params={"query": "ana"}, headers=other)
        assert _ok(search)["entities"] == []
    for nobody in ("", f"Bearer {SERVICE}"):  # no token; a token naming no person
        answer = http.get(f"{notes}/entities/Ana", headers={"Authorization": nobody})
        assert answer.status_code in (401, 403), answer.text
    assert stores.rows(target, GRAPH_ROWS) == before

    expired = http.delete(
        f"{notes}/relations/{made['id']}", params={"at": "2024-01-01T00:00:00Z"}, headers=p1
    )
    assert _ok(expired)["invalid_at"] == "2024-01-01T00:00:00Z"
    deleted = http.delete(f"{notes}/relations/{made['id']}", params={"hard": "true"}, headers=p1)
    assert _ok(deleted)["id"] == made["id"]
    assert _ok(http.delete(f"{notes}/entities/Ana", headers=p1))["id"] == ana["id"]
    _error(http.get(f"{notes}/entities/Ana", headers=p1), 404, "not_found")


# -- engram.Client ---------------------------------------------------------------------
def test_the_client_speaks_the_library_s_names(http: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=http)
    g = client.graph(client.register("planner")["id"])
    ana = g.upsert_entity("Ana Lima", type="person", aliases=["Ana"], summary="paints")
    assert g.entity("ana")["id"] == ana["id"]
    for name in ("Lisbon", "Porto"):
        g.upsert_entity(name, type="place", attributes={"country": "pt"})
    assert g.declare_relation_type("lives_in", single_valued=True) is True
    assert g.declare_relation_type("lives_in", single_valued=True) is False
    first = g.upsert_relation("Ana", "Lisbon", "lives_in", valid_at=T0)
    second = g.upsert_relation("Ana", "Porto", "lives_in", valid_at=T0 + timedelta(days=9))
    assert [r["id"] for r in g.relations(entity="Ana")] == [second["id"]]
    then = g.relations(entity="Ana", as_of=T0 + timedelta(days=1))
    assert [r["id"] for r in then] == [first["id"]]
    assert len(g.relations(include_expired=True, limit=5)) == 2
    assert [h["name"] for h in g.search("porto", mode="text", types=["place"], top_k=3)] == [
        "Porto"
    ]
    around = g.neighbourhood("Ana", depth=2, limit=10, as_of=None)
    assert {e["name"] for e in around["entities"]} == {"Ana Lima", "Porto"}
    paths = g.traverse("Porto", depth=1, types=["lives_in"], direction="in", limit=5)
    assert [p["entities"] for p in paths] == [[second["target"], ana["id"]]]
    assert g.expire_relation(second["id"], at=T0 + timedelta(days=20))["expiredAt"]
    assert g.delete_relation(second["id"])["id"] == second["id"]
    with pytest.raises(NotFound):
        g.delete_relation(second["id"])
    with pytest.raises(Conflict):
        g.upsert_entity("Someone", aliases=["Porto"])
    with pytest.raises(InvalidInput):
        g.upsert_relation("Ana", "Porto", "x", valid_at=T0, invalid_at=T0 - timedelta(days=1))
    with pytest.raises(InvalidInput):  # checked here, before anything is sent
        g.traverse("Ana", depth=4)
    assert g.delete_entity("Porto")["name"] == "Porto"
    with pytest.raises(NotFound):
        g.entity("Porto")


def test_the_client_reaches_a_person_s_graph(http: TestClient) -> None:
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    g = engram.Client(token=token, http=http).app("app:notes").graph
    g.upsert_entity("Ana")
    g.upsert_entity("Lisbon")
    assert g.declare_relation_type("lives_in", single_valued=True) is True
    made = g.upsert_relation("Ana", "Lisbon", "lives_in", valid_at=T0)
    assert made["valid_at"] == "2023-01-01T00:00:00Z"
    assert [r["id"] for r in g.relations(entity="Lisbon")] == [made["id"]]
    assert g.neighbourhood("Lisbon")["memories"] == []
    assert len(g.traverse("Ana")) == 1
    assert g.expire_relation(made["id"])["expired_at"] is not None
    other = engram.Client(token=SERVICE, http=http)
    with pytest.raises(engram.Forbidden):  # a service's token names no person
        other.app("app:notes").graph.entity("Ana")


def test_deleting_a_relation_for_good_takes_a_time_it_stopped_as_moot(http: TestClient) -> None:
    """The schema cannot say "``at`` or ``hard``, not both", so a request with both is
    valid by it: the service follows the schema and deletes (it refused it before)."""
    graph = _agent(http, "planner")
    for name in ("Ana", "Bo"):
        _ok(http.put(f"{graph}/entities", json={"name": name}))
    knows = _ok(
        http.post(f"{graph}/relations", json={"source": "Ana", "target": "Bo", "type": "knows"}),
        201,
    )
    both = {"at": "2024-01-01T00:00:00Z", "hard": "true"}
    assert _ok(http.delete(f"{graph}/relations/{knows['id']}", params=both))["id"] == knows["id"]
    listed = _ok(http.get(f"{graph}/relations", params={"includeExpired": "true"}))
    assert listed["relations"] == []
