"""Generated requests from the service's own OpenAPI schema, valid and invalid, on every
route: no input is a 5xx, every answer matches its documented status, content type and
schema (schemathesis' checks), and a refused request stores nothing. On both backends
(PostgreSQL refuses some text SQLite would take, so both are fuzzed, with the same
requests)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import jwt
import pytest
import schemathesis
import spacy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
)

import engram
from chat_server import ReadsNothing
from engram import UpstreamFailure
from engram.api import create_app
from engram.core.documents.urls import Fetched
from engram.settings import Settings
from stores import Target, rows_through

# ENGRAM_FUZZ_RANDOM=1 draws new requests (a deeper run). Unset, the suite sends the same
# ones every time, and cannot pass or fail by chance. ENGRAM_FUZZ_EXAMPLES: requests of
# each kind (valid, invalid) per operation, 4 by default.
RANDOM = os.environ.get("ENGRAM_FUZZ_RANDOM") == "1"
EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "4"))
SECRET = "fuzz-secret-0123456789abcdef0123456789"
SERVICE = "fuzz-service-token"
# What a refusal must leave as it was: every table a request can write.
SNAPSHOT = """SELECT
    (SELECT count(*) FROM working), (SELECT coalesce(sum(version), 0) FROM working),
    (SELECT count(*) FROM facts), (SELECT coalesce(max(updated_at), 0) FROM facts),
    (SELECT count(*) FROM agents), (SELECT count(*) FROM agents WHERE ended_at IS NOT NULL),
    (SELECT count(*) FROM shares), (SELECT count(*) FROM entities),
    (SELECT coalesce(max(updated_at), 0) FROM entities), (SELECT count(*) FROM relations),
    (SELECT count(*) FROM relations WHERE expired_at IS NOT NULL),
    (SELECT count(*) FROM relation_types)"""


FILES = {("POST", "/agents/{agent_id}/documents"), ("POST", "/agents/{agent_id}/imports")}


def _headers(path: str) -> dict[str, str]:
    """A service token for the agent routes; for people's, a person's token minted for
    each request (fuzzing takes minutes on a loaded machine)."""
    if not path.startswith("/api/v1"):
        return {"Authorization": f"Bearer {SERVICE}"}
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


class Offline:
    """Generated URLs to ingest are never fetched: the suite reaches no host beyond the
    machine. Each fetch fails as an unreachable host would."""

    def fetch(self, url: str, *, max_bytes: int, allow_private: bool) -> Fetched:
        raise UpstreamFailure(f"{url} is not fetched while fuzzing")


SHARDS = 4  # the routes, dealt into this many tests: a worker is never left with them all


@dataclass
class _Service:
    """One backend's store, seeded, and the service over it."""

    name: str
    memory: engram.Memory
    known: dict[str, list[str]]
    app: Any

    @classmethod
    def over(cls, name: str, target: Target) -> _Service:
        memory = engram.open(
            target,
            embedder=engram.HashingEmbedder(16),
            chat=ReadsNothing(),
            recogniser=engram.SpacyRecogniser(spacy.blank("en")),  # finds nothing
            fetcher=Offline(),
        )
        settings_ = Settings(
            db_path=str(target),
            jwt_secret=SECRET,
            service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
        )
        known = _seed(memory)
        return cls(name, memory, known, create_app(settings_, memory_store=memory))


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_input_is_a_server_error_and_a_refusal_stores_nothing(
    shard: int, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each generated request goes to both backends' services in turn: they are drawn
    once (building a route's strategies costs most of a run), and each store sees the
    same requests, its own ids put in the same places."""
    services = [_Service.over("sqlite", tmp_path / "engram.db")]
    try:
        services.append(_Service.over("postgres", request.getfixturevalue("postgres_store_url")))
        schema = schemathesis.openapi.from_dict(_published(services[0].app))
        schema.location = "/openapi.json"  # as from_asgi leaves it
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) > 25
        for operation in operations[shard::SHARDS]:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                _fuzz(operation, mode, services)
    finally:
        for service in services:
            service.memory.close()


def _published(app: Any) -> dict[str, Any]:
    """The service's schema, as ``/openapi.json`` serves it: the same for every app, so
    read once a process (about 2.7 s through the app) and copied for each shard."""
    if not _SCHEMA:
        _SCHEMA.append(json.dumps(app.openapi()))
    found: dict[str, Any] = json.loads(_SCHEMA[0])
    return found


_SCHEMA: list[str] = []


def _seed(memory: engram.Memory) -> dict[str, list[str]]:
    """A running and an ended agent with keys and facts, and a person's memory: ids the
    generated requests use some of the time, so refusals meet state they could damage."""
    running = memory.agents.register("fuzzed")
    ended = memory.agents.register("finished", resource_id="finished")
    for agent in (running, ended):
        memory.working.set(agent.ref, "plan", {"step": 1})
        memory.remember(agent.ref, f"{agent.name} knows the deploy runs nightly")
    memory.agents.end(ended.id)
    mine = engram.PersonAppRef("p1", "app:notes")
    kept = memory.remember(mine, "prefers short answers")
    facts = [f.id for f in memory.facts(running.ref).facts]
    relations = []
    for scope in (running.ref, mine):
        for name in ("Ana", "Bo"):
            memory.graph.upsert_entity(scope, name)
        relations.append(memory.graph.upsert_relation(scope, "Ana", "Bo", "knows").id)
    return {
        "agent_id": [running.id, ended.id],
        "key": ["plan"],
        "fact_id": facts,
        "memory_id": [kept.id],
        "app": ["app:notes", "notes"],
        "entity": ["Ana", "Bo"],
        "relation_id": relations,
        "relation_type": ["knows"],
    }


def _fuzz(operation: Any, mode: GenerationMode, services: list[_Service]) -> None:
    @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
    @settings(
        max_examples=EXAMPLES,
        derandomize=not RANDOM,  # the suite sends the same requests every time
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any, data: st.DataObject) -> None:
        if mode is GenerationMode.POSITIVE:
            assume(_in_order(case, operation.definition.raw.get("x-order", [])))
            assume(_different(case, operation.definition.raw.get("x-different", [])))
            assume(_not_both(case, operation.definition.raw.get("x-not-both", [])))
        known = services[0].known  # each service's lists are as long, in the same order
        chosen = {
            name: data.draw(st.integers(0, len(known[name]) - 1))
            for name in list(case.path_parameters or {})
            if name in known and data.draw(st.booleans())
        }
        drawn = dict(case.path_parameters or {})
        for service in services:
            if drawn:
                case.path_parameters = {
                    **drawn,
                    **{name: service.known[name][at] for name, at in chosen.items()},
                }
            # the call, and the probes of the checks after it, go to this service
            operation.app = operation.schema.app = service.app
            _send(case, mode, operation, service)

    try:
        check()
    except Unsatisfiable:
        assert mode is GenerationMode.NEGATIVE  # a route with nothing to get wrong


def _send(case: Any, mode: GenerationMode, operation: Any, service: _Service) -> None:
    """``case`` sent to ``service``: no 5xx, an answer as documented, a refusal that
    stores nothing, and a request the schema allows never refused as malformed."""
    before = rows_through(service.memory, SNAPSHOT)
    headers = _headers(case.path)
    response = case.call(headers=headers)
    where = (service.name, case.method, case.formatted_path, case.query, response.text[:300])
    # A URL to ingest is never fetched here (Offline): a 502 says so, as an
    # unreachable host's would; any other 5xx is engram's own failure.
    offline = response.status_code == 502 and "not fetched while fuzzing" in response.text
    assert response.status_code < 500 or offline, where
    if response.status_code >= 400:
        assert rows_through(service.memory, SNAPSHOT) == before, where
    # What engram answers must be what its schema says. Whether a request was the
    # schema's to refuse is not checked here: engram refuses some text a schema cannot
    # describe (NUL characters, words that are only whitespace, a cursor no page gave),
    # and the checks take some valid requests for invalid ones (a known id put in the
    # path, one value of a repeatable parameter, text measured in surrogate halves).
    excluded = [positive_data_acceptance, negative_data_rejection]
    if offline:
        excluded.append(not_a_server_error)
    case.validate_response(response, headers=headers, excluded_checks=excluded)
    # The schema is the truth: a request it allows is never refused as malformed
    # (400, 413, 422); it may still meet a state the request cannot know (no such
    # agent or fact: 404, an ended agent: 409, no model: 5xx). Files are the
    # exception: what a document's or an import's bytes hold is not a schema's to say.
    if mode is GenerationMode.POSITIVE and (case.method, case.path) not in FILES:
        assert response.status_code not in (400, 413, 422), where


def _different(case: Any, pairs: list[list[str]]) -> bool:
    """Whether the body keeps apart the values its operation publishes as
    ``x-different`` (an application is not its own reader): JSON Schema cannot."""
    sent = case.body if isinstance(case.body, dict) else {}
    return all(a not in sent or sent.get(a) != sent.get(b) for a, b in pairs)


def _not_both(case: Any, pairs: list[list[str]]) -> bool:
    """Whether the request gives at most one of each pair its operation publishes as
    ``x-not-both`` (an allowance's source or its reader): JSON Schema cannot say so."""
    sent = {**(case.query or {}), **(case.body if isinstance(case.body, dict) else {})}
    return all(not (a in sent and b in sent) for a, b in pairs)


def _in_order(case: Any, orders: list[dict[str, Any]]) -> bool:
    """Whether the request keeps the times its operation publishes as ``x-order`` in
    order (a rule JSON Schema cannot state): a request that does not is not one the
    schema allows, and the service refuses it."""
    sent = {**(case.query or {}), **(case.body if isinstance(case.body, dict) else {})}
    for order in orders:
        first, then = sent.get(order["earlier"]), sent.get(order["later"])
        if not (isinstance(first, str) and isinstance(then, str)):
            continue
        try:
            a, b = datetime.fromisoformat(first), datetime.fromisoformat(then)
        except ValueError:
            continue
        if a.utcoffset() is None or b.utcoffset() is None:
            continue
        if (a >= b) if order["strict"] else (a > b):
            return False
    return True
