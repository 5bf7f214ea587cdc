"""Routes for the memory tools: an agent's (``/agents/{id}/tools``) and an application's
agent's over the person a token names (``/api/v1/apps/{app}/tools``).

A call's body is the tool's arguments, a JSON object; the answer is the text the tool
gives the model, 200 even when the tool refused or failed (``isError``, nothing written):
the model reads it and acts. An unknown tool, agent or application is an error page as
on every route. A visitor with no token reaches the people routes' tools too, and each
answers spec 003's sentence: nothing is remembered or read of a visitor not signed in.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request

from engram.api.context import Authorization, agent_memory, memory_of, verified_person
from engram.api.openapi import errors
from engram.api.people import app_memory
from engram.core import tools
from engram.core.errors import NotFound
from engram.core.people import NOT_SIGNED_IN, PersonBacking
from engram.wire.tools import (
    PersonToolResultOut,
    PersonToolsOut,
    PersonToolSpecOut,
    ToolResultOut,
    ToolsOut,
    ToolSpecOut,
)

router = APIRouter(
    prefix="/agents/{agent_id}/tools",
    tags=["tools"],
    responses=errors(400, 401, 403, 404, 500, 503),
)
people_router = APIRouter(
    prefix="/api/v1/apps/{app}/tools",
    tags=["people"],
    responses=errors(400, 401, 403, 404, 500, 503),
)

ToolName = Annotated[str, Path(min_length=1, max_length=64, description="a tool's name")]
Arguments = Annotated[
    dict[str, Any], Body(description="the tool's arguments, as its parameters describe")
]


def _named(found: list[tools.Tool], name: str) -> tools.Tool:
    for tool in found:
        if tool.name == name:
            return tool
    names = ", ".join(t.name for t in found)
    raise NotFound(f"no tool {name!r}", hint=f"the tools are {names}")


@router.get("")
def listing(agent_id: str, request: Request) -> ToolsOut:
    """The agent's memory tools, as a host registers them with a model."""
    memory, agent = agent_memory(request, agent_id)
    return ToolsOut(tools=[ToolSpecOut.of(t) for t in memory.create_tools(agent.ref)])


@router.post("/{name}", responses=errors(409))
def call(agent_id: str, name: ToolName, arguments: Arguments, request: Request) -> ToolResultOut:
    """Calls one tool on the agent's memory; what it answers the model."""
    memory, agent = agent_memory(request, agent_id, write=tools.writes(name))
    tool = _named(memory.create_tools(agent.ref), name)
    return ToolResultOut.of(tool(arguments))


def _person_tools(request: Request, app: str, header: str | None) -> list[tools.Tool]:
    """The tools over the person a token names in ``app``; with no token at all, the
    tools answering that nothing is remembered of a visitor not signed in."""
    application = app_memory(request, app)
    if header is None or not header.strip():
        return tools.answering(NOT_SIGNED_IN)
    backing = PersonBacking(memory_of(request), application, verified_person(request, header))
    return tools.create(backing)


# A token is optional here (the bearer scheme, or nothing): a visitor with none is
# answered, not refused.
OPTIONAL_TOKEN: dict[str, Any] = {"security": [{}]}


@people_router.get("", openapi_extra=OPTIONAL_TOKEN)
def person_listing(app: str, request: Request, header: Authorization) -> PersonToolsOut:
    """The memory tools over what ``{app}`` remembers of the person, as a host registers
    them (a visitor without a token gets tools that remember nothing)."""
    found = _person_tools(request, app, header)
    return PersonToolsOut(tools=[PersonToolSpecOut.of(t) for t in found])


@people_router.post("/{name}", openapi_extra=OPTIONAL_TOKEN)
def person_call(
    app: str, name: ToolName, arguments: Arguments, request: Request, header: Authorization
) -> PersonToolResultOut:
    """Calls one tool on what ``app`` remembers of the person (and, for a search, what
    other applications remember of them where they allowed it)."""
    tool = _named(_person_tools(request, app, header), name)
    return PersonToolResultOut.of(tool(arguments))
