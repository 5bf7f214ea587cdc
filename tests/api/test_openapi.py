"""The schema the service publishes documents what it answers: errors in one shape, the
bearer scheme, integers as integers. Whether every answer matches it, on both backends, is
``test_fuzz.py``'s to check, with the requests it generates from it."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

import engram
from engram.api import create_app
from engram.settings import Settings

SECRET = "openapi-secret-0123456789abcdef012345"
SERVICE = "openapi-service-token"


def _published() -> dict[str, Any]:
    """The schema the service publishes (it does not depend on the store behind it)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "schema.db"
        settings = Settings(
            db_path=str(path),
            jwt_secret=SECRET,
            service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
        )
        with engram.open(path, embedder=None) as memory:
            return create_app(settings, memory_store=memory).openapi()


def test_the_schema_documents_what_the_service_answers() -> None:
    published = _published()
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
            if path.startswith("/api/v1/apps/{app}/tools"):  # a visitor needs no token
                assert operation["security"] == [{"HTTPBearer": []}, {}], (method, path)
            elif path != "/healthz":
                assert operation["security"] == [{"HTTPBearer": []}], (method, path)
    assert operations >= 29


def _strings(schema: dict[str, Any], components: dict[str, Any], at: str) -> list[tuple]:
    """Each string a request body's ``schema`` takes, by where it sits, with its schema."""
    if "$ref" in schema:
        return _strings(components[schema["$ref"].rsplit("/", 1)[1]], components, at)
    found: list[tuple] = []
    for sub in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        found += _strings(sub, components, at)
    if schema.get("type") == "string" and not {"enum", "const", "format"} & schema.keys():
        found.append((at, schema))
    for name, value in schema.get("properties", {}).items():
        found += _strings(value, components, f"{at}.{name}")
    if "items" in schema:
        found += _strings(schema["items"], components, f"{at}[]")
    return found


def test_every_text_a_body_takes_says_it_holds_no_nul() -> None:
    """The library refuses NUL in every text it stores, and whitespace alone in a label,
    a session's id or a document's name; a body's schema that said nothing of it let
    requests it allowed be refused as malformed (a session id holding NUL, a sandbox id of
    spaces: the fuzzer's finds). A document's text is what its bytes hold, not the
    schema's to say."""
    published = _published()
    components = published["components"]["schemas"]
    silent = set()
    for path, operations in published["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            body = content.get("application/json", {}).get("schema")
            for at, schema in _strings(body or {}, components, "body"):
                if r"\x00" not in schema.get("pattern", ""):
                    silent.add((method, path, at))
    assert silent == {("post", "/agents/{agent_id}/documents", "body.text")}
