"""The OpenAPI schema as generated clients need it: every answer typed, every refusal the
one error shape, integers as integers, bearer auth as a security scheme.

FastAPI documents a 422 ``HTTPValidationError`` on every route with parameters; engram
answers invalid requests 400 with ``{"error": {...}}``, so that is what is documented,
with the statuses each route can answer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.routing import BaseRoute

from engram.wire import ErrorAnswer

MEANING = {
    400: "Invalid input: a malformed or out-of-range parameter, body or key",
    401: "No bearer token, or one that was refused",
    403: "A verified token that may not use this route",
    404: "No such agent, key, fact or memory",
    405: "A method the path does not take (a memory id of export is the export's path: GET)",
    409: "A conflict: a stale version or count, an ended agent, words held by another fact",
    413: "The body is over 1 MiB (an upload: 32 MiB), or a document over its limit",
    422: "Well-formed words the domain refuses",
    500: "A local storage failure",
    501: "Memory is disabled, or facts have no embedder here",
    502: "The embeddings provider (or a URL to ingest) failed; nothing was stored",
    503: "Not available right now (busy store, or no embedder for people's memories)",
}
VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route or router: these statuses, each the error shape."""
    return {s: {"model": ErrorAnswer, "description": MEANING[s]} for s in statuses}


def install(app: FastAPI, published: Callable[[], dict[str, Any]]) -> None:
    """Replaces the app's schema builder with one that publishes its own copy of
    ``published()``: the finished schema of the app's routes, which every app of a process
    shares, made once a process (0.6 to 1.1 s of a core each time)."""

    def schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = copy.deepcopy(published())
        return app.openapi_schema

    app.openapi = schema  # type: ignore[method-assign]


def published(
    title: str, version: str, description: str, routes: Sequence[BaseRoute]
) -> dict[str, Any]:
    """The finished schema of ``routes``."""
    built = get_openapi(title=title, version=version, description=description, routes=routes)
    return finish(built)


def finish(schema: dict[str, Any]) -> dict[str, Any]:
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            _drop_validation_error(operation.get("responses", {}))
            for parameter in operation.get("parameters", []):
                parameter["schema"] = _without_null(parameter.get("schema", {}))
    components = schema.get("components", {}).get("schemas", {})
    for name in VALIDATION_SCHEMAS:
        components.pop(name, None)
    return schema


def _drop_validation_error(responses: dict[str, Any]) -> None:
    answer = responses.get("422", {})
    ref = answer.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
    if ref.endswith("/HTTPValidationError"):
        del responses["422"]


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter is absent or a value: ``anyOf [T, null]`` is just ``T``."""
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return schema
    kept = [o for o in options if o.get("type") != "null"]
    if len(kept) != 1:
        return schema
    rest = {k: v for k, v in schema.items() if k != "anyOf"}
    return {**kept[0], **rest}
