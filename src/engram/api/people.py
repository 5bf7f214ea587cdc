"""Routes for what applications remember of people, and the people's allowances.

The person is the subject of the verified bearer token, never a field of the request.
Writes land under the calling application's own key; reads add other applications'
memories only where the person allowed it, marked ``rememberedBy``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response
from pydantic import Field

from engram.api.agents import memory_of
from engram.api.shapes import JSON, Body, int_param, iso
from engram.core import limits
from engram.core.errors import InvalidInput, NotFound
from engram.core.models import Fact
from engram.core.people import AppMemory
from engram.core.scopes import PersonAppRef
from engram.core.sharing import Share

router = APIRouter(prefix="/api/v1", tags=["people"])
Authorization = Annotated[str | None, Header()]


class MemoryWords(Body):
    memory: str


class ShareSpec(Body):
    source: str
    reader: str = Field(...)


def _person(request: Request, authorization: str | None) -> str:
    uid: str = request.app.state.verifier.person(authorization)
    return uid


def _app(request: Request, app: str) -> AppMemory:
    return AppMemory(memory_of(request), app if app.startswith("app:") else f"app:{app}")


def memory_json(fact: Fact) -> JSON:
    return {
        "id": fact.id,
        "memory": fact.content,
        "created_at": iso(fact.created_at),
        "updated_at": iso(fact.updated_at),
        "corrected_by": fact.corrected_by,
        "corrected_at": iso(fact.corrected_at),
    }


def share_json(share: Share) -> JSON:
    return {"source": share.source, "reader": share.reader, "allowed_at": iso(share.allowed_at)}


# -- as the caller, in an application ------------------------------------------------
@router.post("/apps/{app}/memories", status_code=201)
def remember(
    app: str, body: MemoryWords, request: Request, authorization: Authorization = None
) -> JSON:
    person = _person(request, authorization)
    return memory_json(_app(request, app).remember(person, body.memory))


@router.get("/apps/{app}/memories/search")
def search(
    app: str,
    request: Request,
    query: str,
    topK: str | None = None,
    authorization: Authorization = None,
) -> JSON:
    person = _person(request, authorization)
    k = int_param(topK, "topK", default=limits.DEFAULT_TOP_K, maximum=limits.MAX_TOP_K)
    memory = _app(request, app)
    hits = memory.recall(person, query, top_k=k)
    found = []
    for shared in hits:
        item = {**memory_json(shared.hit.fact), "score": shared.hit.score}
        if shared.remembered_by is not None:
            item["rememberedBy"] = shared.remembered_by
        found.append(item)
    return {"app": memory.app, "memories": found}


# -- the routes of a person's memories in an application ------------------------------
@router.get("/apps/memories/{app}")
def listing(
    app: str, request: Request, limit: str | None = None, authorization: Authorization = None
) -> JSON:
    person = _person(request, authorization)
    size = int_param(limit, "limit", default=limits.DEFAULT_PAGE, maximum=limits.MAX_PAGE)
    memory = _app(request, app)
    count, page = memory.listing(person, limit=size)
    return {"app": memory.app, "count": count, "memories": [memory_json(f) for f in page.facts]}


@router.patch("/apps/memories/{app}/{memory_id}")
def correct(
    app: str,
    memory_id: str,
    body: MemoryWords,
    request: Request,
    authorization: Authorization = None,
) -> JSON:
    person = _person(request, authorization)
    memory = _app(request, app)
    memory.require_semantic()  # a runtime embeds corrections again
    fact = memory.correct(person, memory_id, body.memory, by=person)
    return {"corrected": True, "memory": memory_json(fact)}


@router.delete("/apps/memories/{app}/{memory_id}")
def forget(app: str, memory_id: str, request: Request, authorization: Authorization = None) -> JSON:
    person = _person(request, authorization)
    _app(request, app).forget(person, memory_id)
    return {"forgotten": 1}


@router.delete("/apps/memories/{app}")
def forget_all(
    app: str, request: Request, count: str | None = None, authorization: Authorization = None
) -> JSON:
    person = _person(request, authorization)
    if count is None or not count.strip().isdigit() or len(count.strip()) > 16:
        raise InvalidInput("count must be the number of memories you were shown, e.g. ?count=12")
    return {"forgotten": _app(request, app).forget_all(person, count=int(count))}


# -- without a runtime: the person's memories by id, whatever application -----------
@router.get("/memories")
def memories_of(
    request: Request, agent_id: str, limit: str | None = None, authorization: Authorization = None
) -> JSON:
    return listing(agent_id, request, limit, authorization)


@router.patch("/memories/{memory_id}")
def correct_by_id(
    memory_id: str, body: MemoryWords, request: Request, authorization: Authorization = None
) -> JSON:
    person = _person(request, authorization)
    app = _owned_app(request, person, memory_id)
    fact = _app(request, app).correct(person, memory_id, body.memory, by=person)
    return {"corrected": True, "memory": memory_json(fact)}


@router.delete("/memories/{memory_id}")
def forget_by_id(memory_id: str, request: Request, authorization: Authorization = None) -> JSON:
    person = _person(request, authorization)
    _app(request, _owned_app(request, person, memory_id)).forget(person, memory_id)
    return {"forgotten": 1}


@router.delete("/memories")
def forget_all_of_app(
    request: Request,
    agent_id: str,
    count: str | None = None,
    authorization: Authorization = None,
) -> JSON:
    return forget_all(agent_id, request, count, authorization)


def _owned_app(request: Request, person: str, memory_id: str) -> str:
    scope = memory_of(request).scope_of(memory_id)
    if not isinstance(scope, PersonAppRef) or scope.person != person:
        raise NotFound(f"no memory {memory_id!r} of yours")
    return scope.app


# -- allowances -------------------------------------------------------------------------
@router.get("/memory-shares")
def shares(
    request: Request,
    source: str | None = None,
    reader: str | None = None,
    authorization: Authorization = None,
) -> JSON:
    person = _person(request, authorization)
    found = memory_of(request).sharing.shares(person, source=source, reader=reader)
    return {"shares": [share_json(s) for s in found]}


@router.put("/memory-shares")
def allow(body: ShareSpec, request: Request, authorization: Authorization = None) -> JSON:
    person = _person(request, authorization)
    return share_json(memory_of(request).sharing.allow(person, body.source, body.reader))


@router.delete("/memory-shares", status_code=204)
def stop(
    request: Request, source: str, reader: str, authorization: Authorization = None
) -> Response:
    person = _person(request, authorization)
    memory_of(request).sharing.stop(person, source, reader)
    return Response(status_code=204)
