"""Reading facts for the graph through the real app (in-process) on both backends: the
rules again, a chat model's backlog, refusals that write nothing (400, 404, 501, 502), a
person's memories in one application, and engram.Client."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import jwt
import pytest
import spacy
from fastapi.testclient import TestClient

import engram
import stores
from answers import error as _error
from answers import ok as _ok
from chat_server import ChatEndpoint
from engram import CapabilityMissing, InvalidInput, NotFound
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "extract-secret-0123456789abcdef0123456789"
SERVICE = "extract-service-token"
ROWS = """SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM relations),
    (SELECT count(*) FROM groundings), (SELECT count(*) FROM graph_reads),
    (SELECT count(*) FROM ledger)"""
SAW = "ziggy chased the red ball near faro"
ZIGGY = {
    "entities": [
        {"name": "Ziggy", "type": "animal"},
        {"name": "red ball", "type": "object"},
        {"name": "Bruno", "type": "person"},  # not in the words: dropped
    ],
    "relations": [{"source": "Ziggy", "target": "red ball", "type": "chased"}],
}


@pytest.fixture
def endpoint() -> Iterator[ChatEndpoint]:
    served = ChatEndpoint()
    served.answers[SAW] = ZIGGY
    yield served
    served.close()


def _serve(
    target: Target, chat: engram.RemoteChat | None, recogniser: engram.SpacyRecogniser | None = None
) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    memory = engram.open(
        target, embedder=engram.HashingEmbedder(32), chat=chat, recogniser=recogniser
    )
    with TestClient(
        create_app(settings, memory_store=memory), headers={"Authorization": f"Bearer {SERVICE}"}
    ) as test:
        yield test
    memory.close()


def _ruled() -> engram.SpacyRecogniser:
    """A real spaCy pipeline that knows two names."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(  # type: ignore[attr-defined]
        [{"label": "ANIMAL", "pattern": "ziggy"}, {"label": "GPE", "pattern": "faro"}]
    )
    return engram.SpacyRecogniser(nlp)


@pytest.fixture
def http(target: Target, endpoint: ChatEndpoint) -> Iterator[TestClient]:
    yield from _serve(target, endpoint.chat(), _ruled())


@pytest.fixture
def plain(target: Target) -> Iterator[TestClient]:
    """A service with no chat model."""
    yield from _serve(target, None)


def _agent(http: TestClient, name: str) -> str:
    return f"/agents/{_ok(http.post('/agents', json={'name': name}), 201)['id']}"


def _person(uid: str) -> dict[str, str]:
    signed = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}"}


def test_a_chat_model_reads_the_agent_s_backlog(http: TestClient, endpoint: ChatEndpoint) -> None:
    agent = _agent(http, "walker")
    saw = _ok(http.post(f"{agent}/facts", json={"content": SAW}), 201)
    _ok(http.post(f"{agent}/facts", json={"content": "Ana met Bo Lima in Lisbon."}), 201)
    read = _ok(http.post(f"{agent}/graph/extractions", json={"extractor": "llm", "limit": 1}))
    assert read == {
        "extractor": "llm",
        "factsRead": 1,
        "entitiesAdded": 2,
        "relationsAdded": 1,
        "entitiesDropped": 1,
        "relationsDropped": 0,
        "timesDropped": 0,
        "answersRejected": 0,
        "factsSkipped": 0,
    }
    assert endpoint.asked()[-1].endswith(SAW)
    ziggy = _ok(http.get(f"{agent}/graph/entities/Ziggy"))
    assert (ziggy["type"], ziggy["origin"]) == ("animal", "extracted")
    around = _ok(http.get(f"{agent}/graph/entities/Ziggy/neighbourhood"))
    assert [(r["type"], r["facts"]) for r in around["relations"]] == [("chased", [saw["id"]])]
    # The next call reads the next fact; then the backlog is empty.
    assert _ok(http.post(f"{agent}/graph/extractions", json={"extractor": "llm"}))["factsRead"] == 1
    assert _ok(http.post(f"{agent}/graph/extractions", json={"extractor": "llm"}))["factsRead"] == 0
    assert len(endpoint.asked()) == 2
    # A spaCy pipeline works its own backlog: every fact, entities only.
    ner = _ok(http.post(f"{agent}/graph/extractions", json={"extractor": "spacy"}))
    assert (ner["extractor"], ner["factsRead"], ner["entitiesAdded"]) == ("spacy", 2, 1)
    assert _ok(http.get(f"{agent}/graph/entities/faro"))["type"] == "place"
    # The rules read every fact again, or those named.
    again = _ok(http.post(f"{agent}/graph/extractions", json={}))
    assert (again["extractor"], again["factsRead"], again["entitiesAdded"]) == ("rules", 2, 0)
    named = http.post(f"{agent}/graph/extractions", json={"facts": [saw["id"]]})
    assert _ok(named)["factsRead"] == 1


def test_refusals_write_nothing(http: TestClient, endpoint: ChatEndpoint, target: Target) -> None:
    mine, theirs = _agent(http, "mine"), _agent(http, "theirs")
    _ok(http.post(f"{mine}/facts", json={"content": SAW}), 201)
    hidden = _ok(http.post(f"{theirs}/facts", json={"content": "Secret met Ana."}), 201)
    before = stores.rows(target, ROWS)
    for body in (
        {"extractor": "nope"},
        {"extractor": "llm", "limit": 0},
        {"extractor": "llm", "limit": 1001},
        {"extractor": "llm", "limit": "5"},
        {"extractor": "rules", "limit": 5},  # the rules read all
        {"facts": []},
        {"facts": ["f_1"] * 1001},
        {"facts": ["f_\x00"]},
        {"extractor": "llm", "extra": 1},
    ):
        _error(http.post(f"{mine}/graph/extractions", json=body), 400, "invalid_input")
    for extractor in ("rules", "llm"):
        body = {"extractor": extractor, "facts": [hidden["id"]]}
        error = _error(http.post(f"{mine}/graph/extractions", json=body), 404, "not_found")
        assert "hint" not in error
    assert endpoint.asked() == []
    endpoint.answers[SAW] = (500, b'{"error": "overloaded"}')
    failed = http.post(f"{mine}/graph/extractions", json={"extractor": "llm"})
    _error(failed, 502, "upstream_failure")
    assert stores.rows(target, ROWS) == before
    endpoint.answers[SAW] = ZIGGY  # the backlog is as it was: the same fact is read
    assert _ok(http.post(f"{mine}/graph/extractions", json={"extractor": "llm"}))["factsRead"] == 1


def test_without_a_chat_model_the_llm_extractor_is_501(plain: TestClient, target: Target) -> None:
    agent = _agent(plain, "walker")
    _ok(plain.post(f"{agent}/facts", json={"content": SAW}), 201)
    before = stores.rows(target, ROWS)
    error = _error(
        plain.post(f"{agent}/graph/extractions", json={"extractor": "llm"}),
        501,
        "capability_missing",
    )
    assert "ENGRAM_LLM_URL" in error["message"]
    spacy_error = _error(
        plain.post(f"{agent}/graph/extractions", json={"extractor": "spacy"}),
        501,
        "capability_missing",
    )
    assert "ENGRAM_SPACY_MODEL" in spacy_error["message"] + spacy_error.get("hint", "")
    people = plain.post(
        "/api/v1/apps/app:notes/graph/extractions", json={"extractor": "llm"}, headers=_person("p")
    )
    _error(people, 501, "capability_missing")
    assert stores.rows(target, ROWS) == before


def test_a_person_s_memories_are_read_in_their_application(
    http: TestClient, endpoint: ChatEndpoint
) -> None:
    p1, p2 = _person("p1"), _person("p2")
    notes = "/api/v1/apps/app:notes"
    memory = _ok(http.post(f"{notes}/memories", json={"memory": SAW}, headers=p1), 201)
    for other, app in ((p2, "app:notes"), (p1, "app:calendar")):
        there = f"/api/v1/apps/{app}/graph/extractions"
        body = {"extractor": "llm", "facts": [memory["id"]]}
        _error(http.post(there, json=body, headers=other), 404, "not_found")
        nothing = _ok(http.post(there, json={"extractor": "llm"}, headers=other))
        assert nothing["facts_read"] == 0
    assert endpoint.asked() == []
    read = _ok(http.post(f"{notes}/graph/extractions", json={"extractor": "llm"}, headers=p1))
    assert (read["facts_read"], read["entities_added"], read["entities_dropped"]) == (1, 2, 1)
    assert "factsRead" not in read
    found = _ok(http.get(f"{notes}/graph/entities/red%20ball", headers=p1))
    assert found["origin"] == "extracted"
    _error(http.get(f"{notes}/graph/entities/red%20ball", headers=p2), 404, "not_found")


def test_the_client_reads_facts_on_both_surfaces(http: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=http)
    agent = client.register("walker")["id"]
    client.remember(agent, SAW)
    g = client.graph(agent)
    assert g.extract(extractor="llm", limit=5)["entitiesAdded"] == 2
    assert g.extract()["factsRead"] == 1
    with pytest.raises(InvalidInput):  # checked here, before anything is sent
        g.extract(extractor="llm", limit=0)
    with pytest.raises(NotFound):
        g.extract(fact_ids=["f_nowhere"])
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    person = engram.Client(token=token, http=http).app("app:notes")
    person.remember(SAW)
    assert person.graph.extract(extractor="llm")["entities_added"] == 2


def test_the_client_hears_501_as_capability_missing(plain: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=plain)
    g = client.graph(client.register("walker")["id"])
    with pytest.raises(CapabilityMissing):
        g.extract(extractor="llm")
