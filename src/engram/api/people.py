"""Routes for what applications remember of people, and the people's allowances.

The person is the subject of the verified bearer token, never a field of the request.
Writes land under the calling application's own key; reads add other applications'
memories only where the person allowed it, marked ``rememberedBy``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import WithJsonSchema
from starlette.convertors import Convertor, register_url_convertor

from engram import wire
from engram.api.context import Person, memory_of
from engram.api.openapi import errors
from engram.api.params import Count, Limit, TopK
from engram.api.portability import exported
from engram.core import fields, limits, ops, people
from engram.core.errors import NotFound
from engram.core.people import AppMemory
from engram.core.scopes import PersonAppRef
from engram.wire import (
    AppMemories,
    AppRemembering,
    AppsOut,
    Corrected,
    Forgotten,
    FoundMemories,
    FoundMemory,
    MemoryWords,
    PersonMemory,
    ShareOut,
    SharesOut,
    ShareSpec,
)
from engram.wire.portability import ExportDocument

router = APIRouter(
    prefix="/api/v1", tags=["people"], responses=errors(400, 401, 403, 404, 500, 503)
)
Before = Annotated[
    str | None,
    Query(description="nextBefore of the previous page"),
    WithJsonSchema(fields.Text(256, strip=False, pattern=ops.CURSOR_PATTERN).schema()),
]
App = Annotated[str, wire.APP]
MemoryId = Annotated[str, WithJsonSchema(ops.FACT_ID.schema())]
# Beside .../{app}/export, an id is any segment but that word (see MemoryIdOf).
AppMemoryId = Annotated[str, WithJsonSchema({**ops.FACT_ID.schema(), "not": {"const": "export"}})]
AgentId = Annotated[str, Query(description="the application, app:<uid>"), wire.APP]
Shared = Annotated[str, wire.SHARED_APP]
Words = Annotated[str, wire.shown(limits.MAX_QUERY_CHARS, blank=False)]


class MemoryIdOf(Convertor[str]):
    """A memory's id in a path beside ``export``: any segment but that word, so a PATCH
    or DELETE of ``.../{app}/export`` is a 405 naming GET, never a memory called export."""

    regex = "(?!export$)[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("memory", MemoryIdOf())


def app_memory(request: Request, app: str) -> AppMemory:
    """The memory ``app`` (``app:<uid>``, or its uid) keeps of each person."""
    return AppMemory(memory_of(request), app if app.startswith("app:") else f"app:{app}")


@router.get("/apps")
def apps(request: Request, person: Person) -> AppsOut:
    """The applications that remember the person, by name, with how many memories each
    keeps (the person's own memories only)."""
    found = people.applications(memory_of(request), person)
    return AppsOut(apps=[AppRemembering(app=a.app, count=a.count) for a in found])


# -- as the caller, in an application ------------------------------------------------
@router.post("/apps/{app}/memories", status_code=201, responses=errors(413, 422))
def remember(app: App, body: MemoryWords, request: Request, person: Person) -> PersonMemory:
    """Remembers ``memory`` as what ``{app}`` knows of the person (201)."""
    return PersonMemory.of(app_memory(request, app).remember(person, body.memory))


@router.get("/apps/{app}/memories/search")
def search(
    app: App, request: Request, person: Person, query: Words, top_k: TopK = limits.DEFAULT_TOP_K
) -> FoundMemories:
    """What ``{app}`` remembers of the person for ``query``, best first, and what other
    applications remember of them where the person allowed it (marked ``rememberedBy``)."""
    memory = app_memory(request, app)
    found = [
        FoundMemory(
            **PersonMemory.of(shared.hit.fact).model_dump(),
            score=shared.hit.score,
            rememberedBy=shared.remembered_by,
        )
        for shared in memory.recall(person, query, top_k=top_k)
    ]
    return FoundMemories(app=memory.app, memories=found)


# -- the routes of a person's memories in an application ------------------------------
@router.get("/apps/memories/{app}")
def listing(
    app: App,
    request: Request,
    person: Person,
    limit: Limit = limits.DEFAULT_PAGE,
    before: Before = None,
) -> AppMemories:
    """How many, and the newest first; ``nextBefore`` when more follow."""
    memory = app_memory(request, app)
    scope = memory.scope(person)
    store = memory_of(request)
    page = store.facts(scope, limit=limit, before=before)
    return AppMemories(
        app=memory.app,
        count=store.count(scope),
        memories=[PersonMemory.of(f) for f in page.facts],
        nextBefore=page.next_before,
    )


@router.get(
    "/apps/memories/{app}/export",
    response_class=Response,
    responses={200: {"description": "the person's export", "model": ExportDocument}},
)
def export(app: App, request: Request, person: Person) -> Response:
    """Everything ``{app}`` remembers of the person, as one engram export document (the
    facts with their vectors, then the working keys): theirs to keep or take elsewhere."""
    scope = app_memory(request, app).scope(person)
    return exported(memory_of(request), scope, "json")


@router.patch("/apps/memories/{app}/{memory_id:memory}", responses=errors(405, 409, 413, 422))
def correct(
    app: App, memory_id: AppMemoryId, body: MemoryWords, request: Request, person: Person
) -> Corrected:
    """Corrects one memory of the person in ``{app}`` (embedded again)."""
    memory = app_memory(request, app)
    memory.require_semantic()  # a runtime embeds corrections again
    fact = memory.correct(person, memory_id, body.memory, by=person)
    return Corrected(corrected=True, memory=PersonMemory.of(fact))


@router.delete("/apps/memories/{app}/{memory_id:memory}", responses=errors(405))
def forget(app: App, memory_id: AppMemoryId, request: Request, person: Person) -> Forgotten:
    """Forgets one memory of the person, for good (a person's forget is real)."""
    app_memory(request, app).forget(person, memory_id)
    return Forgotten(forgotten=1)


@router.delete("/apps/memories/{app}", responses=errors(409))
def forget_all(app: App, request: Request, person: Person, count: Count) -> Forgotten:
    """Forgets everything ``{app}`` remembers of the person, for good, confirming ``count``:
    when there are more now, nothing is forgotten (409)."""
    return Forgotten(forgotten=app_memory(request, app).forget_all(person, count=count))


# -- without a runtime: the person's memories by id, whatever application -----------
@router.get("/memories")
def memories_of(
    request: Request,
    person: Person,
    agent_id: AgentId,
    limit: Limit = limits.DEFAULT_PAGE,
    before: Before = None,
) -> AppMemories:
    """What one application (``agent_id``) remembers of the person, newest first;
    ``nextBefore`` when more follow."""
    return listing(agent_id, request, person, limit, before)


@router.patch("/memories/{memory_id}", responses=errors(409, 413, 422))
def correct_by_id(
    memory_id: MemoryId, body: MemoryWords, request: Request, person: Person
) -> Corrected:
    """Corrects one of the person's memories by id, whatever application holds it."""
    app = _owned_app(request, person, memory_id)
    fact = app_memory(request, app).correct(person, memory_id, body.memory, by=person)
    return Corrected(corrected=True, memory=PersonMemory.of(fact))


@router.delete("/memories/{memory_id}")
def forget_by_id(memory_id: MemoryId, request: Request, person: Person) -> Forgotten:
    """Forgets one of the person's memories by id, for good, whatever application holds it."""
    app_memory(request, _owned_app(request, person, memory_id)).forget(person, memory_id)
    return Forgotten(forgotten=1)


@router.delete("/memories", responses=errors(409))
def forget_all_of_app(
    request: Request, person: Person, agent_id: AgentId, count: Count
) -> Forgotten:
    """Forgets everything one application (``agent_id``) remembers of the person, for
    good, confirming ``count``."""
    return forget_all(agent_id, request, person, count)


def _owned_app(request: Request, person: str, memory_id: str) -> str:
    """Forgets everything one application (``agent_id``) remembers of the person, for good,
    confirming ``count``."""
    scope = memory_of(request).scope_of(memory_id)
    if not isinstance(scope, PersonAppRef) or scope.person != person:
        raise NotFound(f"no memory {memory_id!r} of yours")
    return scope.app


# -- allowances -------------------------------------------------------------------------
@router.get(
    "/memory-shares",
    # JSON Schema cannot say "one of these parameters or none, not both": beside it.
    openapi_extra={"x-not-both": [["source", "reader"]]},
)
def shares(
    request: Request,
    person: Person,
    source: Annotated[Shared | None, Query(description="who reads what this app remembers")] = None,
    reader: Annotated[
        Shared | None, Query(description="what this app reads besides its own")
    ] = None,
) -> SharesOut:
    """The person's allowances: by ``source``, by ``reader``, or all of them."""
    found = memory_of(request).sharing.shares(person, source=source, reader=reader)
    return SharesOut(shares=[ShareOut.of(s) for s in found])


@router.put(
    "/memory-shares",
    responses=errors(413, 422),
    # JSON Schema cannot say two values differ: published beside it, as x-order is.
    openapi_extra={"x-different": [["source", "reader"]]},
)
def allow(body: ShareSpec, request: Request, person: Person) -> ShareOut:
    """Lets ``reader`` read what ``source`` remembers of the person."""
    return ShareOut.of(memory_of(request).sharing.allow(person, body.source, body.reader))


@router.delete("/memory-shares", status_code=204, response_class=Response)
def stop(request: Request, person: Person, source: Shared, reader: Shared) -> None:
    """Stops ``reader`` reading what ``source`` remembers of the person."""
    memory_of(request).sharing.stop(person, source, reader)
