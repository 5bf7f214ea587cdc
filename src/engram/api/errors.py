"""One mapping from engram's errors to HTTP answers: ``{"error": {code, message, hint?}}``.

Client errors say what is wrong. A 500 says no more than that it is one: the details go
to the log, never to the caller.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from engram.core.errors import EngramError

log = logging.getLogger("engram.api")


def error_response(status: int, code: str, message: str, hint: str | None = None) -> JSONResponse:
    body: dict[str, str] = {"code": code, "message": message}
    if hint:
        body["hint"] = hint
    return JSONResponse({"error": body}, status_code=status)


def install(app: FastAPI) -> None:
    """Registers the handlers that turn every failure into the one error shape."""

    @app.exception_handler(EngramError)
    async def engram_error(request: Request, exc: EngramError) -> JSONResponse:
        if exc.http_status == 500:
            log.error("%s on %s %s: %s", exc.code, request.method, request.url.path, exc)
            return error_response(500, exc.code, "local storage failed")
        return error_response(exc.http_status, exc.code, exc.message, exc.hint)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(_describe(e) for e in exc.errors()[:5])
        return error_response(400, "invalid_input", f"invalid request: {problems}")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = "not_found" if exc.status_code == 404 else "invalid_input"
        if exc.status_code == 405:
            code = "method_not_allowed"
        return error_response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "internal error")


def _describe(error: object) -> str:
    if not isinstance(error, dict):
        return str(error)
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
    return f"{where or 'body'}: {error.get('msg', 'invalid')}"
