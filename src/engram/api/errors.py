"""One mapping from engram's errors to HTTP answers: ``{"error": {code, message, hint?}}``.

Client errors say what is wrong, in words: which parameter or body field, and why. A 500
says no more than that it is one: the details go to the log, never to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic.alias_generators import to_camel
from starlette.exceptions import HTTPException
from starlette.routing import Match

from engram.core.errors import EngramError
from engram.wire.ops import is_body_tag

log = logging.getLogger("engram.api")

WHERE = {"query": "query parameter", "header": "header", "path": "path parameter"}
KINDS = {
    "int": "an integer",
    "string": "a string",
    "bool": "true or false",
    "float": "a number",
    "dict": "an object",
    "list": "a list",
    "model": "an object",
    "model_attributes": "an object",
}
HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def error_response(
    status: int,
    code: str,
    message: str,
    hint: str | None = None,
    headers: Mapping[str, str] | None = None,
    details: Mapping[str, object] | None = None,
) -> JSONResponse:
    body: dict[str, object] = {"code": code, "message": message}
    if hint:
        body["hint"] = hint
    body.update(details or {})
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def install(app: FastAPI) -> None:
    """Registers the handlers that turn every failure into the one error shape."""

    @app.exception_handler(EngramError)
    async def engram_error(request: Request, exc: EngramError) -> JSONResponse:
        if exc.http_status == 500:
            log.error("%s on %s %s: %s", exc.code, request.method, request.url.path, exc)
            return error_response(500, exc.code, "local storage failed")
        return error_response(exc.http_status, exc.code, exc.message, exc.hint, details=exc.details)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [describe(e) for e in exc.errors()[:5]]
        hints = [h for h in (_hint(e) for e in exc.errors()[:5]) if h]
        message = "invalid request: " + "; ".join(problems)
        return error_response(400, "invalid_input", message, hints[0] if hints else None)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "invalid_input")
        headers, message = exc.headers, str(exc.detail)
        if exc.status_code == 405:  # every route of this path, not only the first that matched
            headers = {"Allow": ", ".join(allowed_methods(request))}
        path = request.url.path
        if exc.status_code == 404 and message == "Not Found":  # no route, not a lookup
            message = f"no route at {path}"
            if path.endswith("/") and path != "/":
                message += ": no path here ends with a slash"
        return error_response(exc.status_code, code, message, headers=headers)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "internal error")


def allowed_methods(request: Request) -> list[str]:
    """The methods some route of the app answers at this request's path (asked of the
    router itself, whatever shape its routes take)."""
    return [
        method
        for method in METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL
            for route in request.app.router.routes
        )
    ]


def describe(error: Mapping[str, Any]) -> str:
    """One validation error as words: where it is, then what is wrong with it."""
    loc = [
        str(part)
        for at, part in enumerate(error.get("loc", ()))
        if not (at == 1 and is_body_tag(part))  # the operation a body was read as
    ]
    kind = str(error.get("type", ""))
    if loc[:1] == ["body"] and len(loc) == 1:
        if kind == "missing":
            return "this route needs a JSON body"
        return f"the body must be a JSON object, got {_json_kind(error.get('input'))}"
    if loc[:1] == ["body"]:
        where = "body field " + ".".join(loc[1:])
    else:
        where = f"{WHERE.get(loc[0], loc[0])} {'.'.join(loc[1:])}" if loc else "the request"
    return f"{where} {_problem(kind, error)}"


def problem(error: Mapping[str, Any]) -> str:
    """What is wrong with one validation error's value, in words ("must be a string, got
    the number 5"), for a caller that says where it is in its own terms."""
    return _problem(str(error.get("type", "")), error)


def _problem(kind: str, error: Mapping[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    got = error.get("input")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not one this route takes"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        wanted = KINDS.get(kind.rsplit("_", 1)[0], "another type")
        return f"must be {wanted}, got {_json_kind(got)}"
    bounds = {
        "greater_than_equal": f"must be at least {ctx.get('ge')}",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "string_too_short": "must not be empty",
        "string_too_long": f"must be at most {ctx.get('max_length')} characters",
        "too_long": f"must have at most {ctx.get('max_length')} items",
    }
    if kind in bounds:
        return bounds[kind]
    message = str(error.get("msg", "is invalid")).removeprefix("Value error, ")
    return message if message.startswith("must") else f"is invalid: {message}"


def _hint(error: Mapping[str, Any]) -> str | None:
    loc = [str(part) for part in error.get("loc", ())]
    if error.get("type") == "extra_forbidden" and loc:
        camel = to_camel(loc[-1])
        if camel != loc[-1]:
            return f"field names are camelCase here: did you mean {camel!r}?"
    return None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}" if len(repr(value)) < 30 else "a number"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
