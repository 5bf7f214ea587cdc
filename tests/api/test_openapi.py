"""The service against its own OpenAPI schema (schemathesis), on both backends: every
answer matches its documented status, content type and schema; nothing is a 5xx."""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

import engram
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "openapi-secret-0123456789abcdef012345"
SERVICE = "openapi-service-token"


def _settings(target: Target) -> Settings:
    return Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )


def _published_schema() -> Any:
    """The schema the service publishes (it does not depend on the store behind it); each
    test sends its requests to its own app, on its own backend."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "schema.db"
        with engram.open(path, embedder=None) as memory:
            return schemathesis.openapi.from_asgi(
                "/openapi.json", create_app(_settings(path), memory_store=memory)
            )


schema = _published_schema()
schema.config.generation.update(modes=["positive", "negative"])


@dataclass
class Service:
    app: FastAPI
    agent: str


class Reader:
    """A chat model that finds nothing in any fact: the llm extractor's routes answer."""

    model = "reads-nothing"

    def complete(self, system: str, user: str) -> str:
        return '{"entities": [], "relations": []}'


@pytest.fixture
def service(target: Target) -> Iterator[Service]:
    memory = engram.open(target, embedder=engram.HashingEmbedder(16), chat=Reader())
    agent = memory.agents.register("conformance").id
    yield Service(create_app(_settings(target), memory_store=memory), agent)
    memory.close()


@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_answer_matches_the_schema(case: Any, service: Service) -> None:
    if "agent_id" in (case.path_parameters or {}):
        case.path_parameters["agent_id"] = service.agent  # reach past the agent lookup
    token = SERVICE
    if case.path.startswith("/api/v1"):
        claims = {"sub": "p1", "exp": int(time.time()) + 600}
        token = jwt.encode(claims, SECRET, algorithm="HS256")
    case.call_and_validate(
        app=service.app,
        headers={"Authorization": f"Bearer {token}"},
        # engram refuses some text a schema cannot describe (NUL characters, words that are
        # only whitespace, a cursor no page gave): 400, which this check counts as a failure
        excluded_checks=[positive_data_acceptance],
    )


def test_the_schema_documents_what_the_service_answers() -> None:
    published = schema.raw_schema
    components = published["components"]
    assert "HTTPValidationError" not in components["schemas"]
    assert components["securitySchemes"]["HTTPBearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": components["securitySchemes"]["HTTPBearer"]["description"],
    }
    integers = {"limit", "topK", "count"}
    operations = 0
    for path, item in published["paths"].items():
        for method, operation in item.items():
            operations += 1
            answers = operation["responses"]
            for status in ("400", "422"):  # 422 only where the domain refuses words
                if status in answers:
                    error = answers[status]["content"]["application/json"]["schema"]["$ref"]
                    assert error.endswith("/ErrorAnswer"), (method, path, status)
            assert "400" in answers, (method, path)
            for status, answer in answers.items():
                if status.startswith("2") and status != "204":
                    body = answer["content"]["application/json"]["schema"]
                    assert "$ref" in body or "anyOf" in body, (method, path, status)
            for parameter in operation.get("parameters", []):
                if parameter["name"] in integers:
                    assert parameter["schema"]["type"] == "integer", (method, path)
                    assert {"minimum", "maximum"} <= set(parameter["schema"]), (method, path)
            if path != "/healthz":
                assert operation["security"] == [{"HTTPBearer": []}], (method, path)
    assert operations >= 29
