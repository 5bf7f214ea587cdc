"""``/mcp`` inside ``engram serve``: the MCP server over streamable HTTP.

Whose memory a request reaches is decided by what was verified, never by a tool's
arguments:

- a service token and ``?agent=a_…``: that agent's scope;
- a person's JWT and ``?app=app:x``: what that application remembers of the person.

No token, or one that fails verification: 401. A valid token of the wrong kind (a person's
for ``?agent=``, or one naming no person for ``?app=``): 403. ``?agent=`` asks what the
agent routes ask, so a service that configures no auth leaves it open as it leaves them.
The answers are the service's error shape, checked before the SDK sees the request. Each
request stands alone (the SDK's stateless mode, JSON answers): a scope is bound to a
token, not to a session. So only POST is served: there is no stream for the server to
speak first on (GET) and no session to end (DELETE).

The SDK is imported by the first ``/mcp`` request, on a worker thread, not when the
service starts (it takes about a second of CPU, a third of a start): a service that is
never asked over MCP never loads it. A service without the ``[mcp]`` extra answers
``/mcp`` with 501.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from engram.api.bodies import replay
from engram.api.errors import problem
from engram.api.identity import Verifier
from engram.core import installing, tools
from engram.core.errors import CapabilityMissing, EngramError, InvalidInput
from engram.core.memory import Memory
from engram.core.people import AppMemory
from engram.mcp import catalogue

if TYPE_CHECKING:
    from starlette.applications import Starlette

PATH = "/mcp"
QUERY = ("agent", "app")
TOOLS = "engram.mcp.tools"  # where the gate leaves a request's tools for the SDK's handlers


def mount(app: Starlette) -> None:
    """Adds ``/mcp`` to ``app`` (before the SDK is loaded: see :func:`serving`). POST
    only: each request stands alone and the server never speaks first, so there is no
    event stream to GET (the SDK held one open for ever, one per request) and no session
    to DELETE; both answer 405 with ``Allow: POST``, as the transport's specification
    provides for."""
    app.router.routes.append(Route(PATH, endpoint=Gate(app), methods=["POST"]))


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[None]:
    """Holds, for as long as the service runs, the task group the SDK's session manager
    will run in once the first ``/mcp`` request starts it (:class:`Manager`); without the
    SDK, nothing."""
    if importlib.util.find_spec("mcp") is None:
        yield
        return
    async with anyio.create_task_group() as group:
        app.state.mcp = Manager(group)
        try:
            yield
        finally:
            app.state.mcp = None
            group.cancel_scope.cancel()


class Manager:
    """The SDK's session manager, loaded and started by the first request that needs it,
    in the lifespan's task group (the manager's own task group must outlive requests)."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self._group = group
        self._lock = anyio.Lock()
        self._handle: Any = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._handle is None:
            async with self._lock:  # one load, whichever request comes first
                if self._handle is None:
                    self._handle = await self._group.start(self._run)
        await self._handle(scope, receive, send)

    @staticmethod
    async def _run(*, task_status: anyio.abc.TaskStatus[Any]) -> None:
        manager = await anyio.to_thread.run_sync(_manager)  # imports: off the event loop
        async with manager.run():
            task_status.started(manager.handle_request)
            await anyio.sleep_forever()


def _manager() -> Any:
    """The SDK's stateless session manager over engram's MCP server, each request's tools
    read from what :class:`Gate` decided for it."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from engram.mcp import server

    built = server.build(lambda request: list(request.scope["state"][TOOLS]))
    return StreamableHTTPSessionManager(app=built, json_response=True, stateless=True)


def resolve(app: Starlette, request: Request) -> list[tools.Tool]:
    """The tools of the scope ``request``'s token and query name; raises Unauthenticated
    (401), Forbidden (403), InvalidInput, NotFound (no such agent) or CapabilityMissing.
    ``?agent=`` asks what the agent routes ask (a service token once auth is configured),
    ``?app=`` what the people routes ask (a person's token)."""
    verifier: Verifier = app.state.verifier
    header = request.headers.get("authorization")
    agent, application = _target(request)
    memory: Memory = app.state.memory
    if agent is not None:
        verifier.service(header)
        if not app.state.memory_enabled:
            raise CapabilityMissing("memory is disabled (ENGRAM_MEMORY_ENABLED=false)")
        acting = memory.acting(actor=verifier.actor(header), via="mcp")
        found = acting.agents.get(agent)
        usable = catalogue.agent(acting, found.ref)
        return usable if found.ended_at is None else [t for t in usable if not t.writes]
    uid = verifier.person(header)
    acting = memory.acting(actor=uid, via="mcp")
    named = application if application.startswith("app:") else f"app:{application}"
    return catalogue.person(acting, AppMemory(acting, named), uid)


def _target(request: Request) -> tuple[str | None, str]:
    """``(agent, None)`` or ``(None, app)``, from the query."""
    query = request.query_params
    unknown = sorted(k for k in query if k not in QUERY)
    if unknown:
        raise InvalidInput(f"/mcp takes no query parameter {unknown[0]!r}", hint=_HOW)
    agent, application = query.get("agent"), query.get("app")
    if (agent is None) == (application is None):
        raise InvalidInput("/mcp needs exactly one of ?agent= and ?app=", hint=_HOW)
    return agent, application or ""


_HOW = "?agent=a_… with a service token, or ?app=app:x with a person's token"


class Gate:
    """``/mcp``: refuses a request whose token or scope fails before the SDK reads it."""

    def __init__(self, app: Starlette) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handle: Any = getattr(self._app.state, "mcp", None)
        body = await Request(scope, receive).body()  # whole already: the body gate read it
        try:
            if handle is None:
                raise CapabilityMissing(
                    "the MCP server needs the mcp package", hint=installing.extra("mcp")
                )
            found = await anyio.to_thread.run_sync(resolve, self._app, Request(scope))
        except EngramError as exc:
            headers = {"www-authenticate": "Bearer"} if exc.http_status == 401 else None
            answer = refusal(exc.http_status, exc.code, exc.message, exc.hint, headers, body)
            await answer(scope, receive, send)
            return
        if (refused := check_message(body)) is not None:
            await refused(scope, receive, send)
            return
        scope.setdefault("state", {})[TOOLS] = found  # decided once, here, per request
        await handle(scope, replay(body, receive), send)


# JSON-RPC's codes for a message that is not a request, and for a request's bad params.
INVALID_REQUEST, INVALID_PARAMS = -32600, -32602
# engram's own (JSON-RPC leaves -32000 to -32099 to the server): no caller it may serve;
# no such agent; nothing here to serve it with.
REFUSED, NOT_FOUND, UNAVAILABLE = -32001, -32002, -32003
_CODES = {400: INVALID_REQUEST, 413: INVALID_REQUEST, 401: REFUSED, 403: REFUSED, 404: NOT_FOUND}


def refusal(
    status: int,
    code: str,
    message: str,
    hint: str | None = None,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> JSONResponse:
    """A refusal of ``/mcp`` before the SDK reads the request, as a JSON-RPC error (at
    the same HTTP status) that an MCP client shows in words: its ``data`` holds the
    service's error code and hint; its id is the request's when the body names one."""
    said = message if hint is None else f"{message} ({hint})"
    data = {"code": code} | ({"hint": hint} if hint else {})
    error = {"code": _CODES.get(status, UNAVAILABLE), "message": said, "data": data}
    answer = {"jsonrpc": "2.0", "id": _ident(body), "error": error}
    return JSONResponse(answer, status_code=status, headers=headers)


def body_refusal(status: int, code: str, message: str, prefix: bytes) -> JSONResponse:
    """What the body gate answers ``/mcp`` (a call over 1 MiB, a body not JSON): a
    JSON-RPC error, so a client reads why rather than a bare HTTP status. Of a body too
    large to read, ``prefix`` is its start, where a client's request names its id."""
    return refusal(status, code, message, body=prefix)


# A request's id, named at the top level before its params, as clients write it.
_ID = re.compile(
    rb'^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"[^"]*"\s*,\s*)*"id"\s*:\s*(-?\d+|"[^"\\]*")'
)


def _ident(body: bytes) -> str | int | None:
    """The request's id, when the body (or, cut short, its start) names a usable one."""
    try:
        message = json.loads(body) if body else None
    except (ValueError, RecursionError):
        found = _ID.match(body)
        message = {"id": json.loads(found.group(1))} if found else None
    ident = message.get("id") if isinstance(message, dict) else None
    good = isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))
    return ident if good else None


def check_message(body: bytes) -> JSONResponse | None:
    """The JSON-RPC error answering a message the SDK would refuse, in words naming what
    is wrong (the SDK's own refusal is its validation library's report: types, unions,
    links), or None for one it takes. A message that is not a request or a notification
    answers 400 (``-32600``); a request whose params its method does not take, 200 with
    its id (``-32602``), as JSON-RPC answers a request."""
    try:
        message = json.loads(body) if body else None
    except ValueError:
        return None  # the body gate refused it already
    if isinstance(message, list):
        return _refusal(None, INVALID_REQUEST, "a batch of messages is not taken: send one")
    if not isinstance(message, dict):
        return _refusal(None, INVALID_REQUEST, "the body must be a JSON-RPC message object")
    ident = message.get("id")
    good_id = isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))
    answer_to = ident if good_id else None
    if message.get("jsonrpc") != "2.0":
        return _refusal(answer_to, INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return None  # a client's answer to a request: the SDK's to take
        return _refusal(answer_to, INVALID_REQUEST, "a request needs a method")
    method = message["method"]
    if not isinstance(method, str) or not method:
        return _refusal(answer_to, INVALID_REQUEST, "method must be a non-empty string")
    if "id" in message and not good_id:
        return _refusal(None, INVALID_REQUEST, "id must be a string or an integer")
    if "params" in message and not isinstance(message["params"], dict):
        return _refusal(answer_to, INVALID_REQUEST, "params must be an object")
    if "id" not in message:
        return None  # a notification: nothing is answered
    model = _requests().get(method)
    if model is None:
        return None  # the SDK answers "method not found" in words
    shape = {"method": method} | ({"params": message["params"]} if "params" in message else {})
    try:
        model.model_validate(shape)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'the request'} {problem(e)}"
            for e in exc.errors(include_url=False)[:3]
        ]
        return _refusal(
            ident, INVALID_PARAMS, f"invalid params for {method}: " + "; ".join(problems)
        )
    return None


def _refusal(ident: object, code: int, words: str) -> JSONResponse:
    status = 200 if code == INVALID_PARAMS else 400
    error = {"code": code, "message": words}
    return JSONResponse({"jsonrpc": "2.0", "id": ident, "error": error}, status_code=status)


@functools.cache
def _requests() -> dict[str, Any]:
    """The SDK's model of each request a client may send, by its method."""
    import mcp.types

    return {
        typing.get_args(model.model_fields["method"].annotation)[0]: model
        for model in typing.get_args(mcp.types.ClientRequest)
    }
