"""One MCP server over engram's tools, whatever carries it (stdio, streamable HTTP, the
SDK's in-memory client).

``tools/list`` and ``tools/call`` ask a :data:`Resolver` for the tools of the request's
scope: a fixed list on stdio (the launch flags named it), the token's on HTTP. A tool's
refusal or an engram error reaches the model as a tool error (``isError``) holding the
sentence the library's tools answer: the SDK would otherwise pass an exception on as
"Error executing tool X" only. Calls run in a worker thread: the store blocks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from engram.core import installing, tools
from engram.core.errors import EngramError

NAME = "engram"
INSTRUCTIONS = (
    "Durable memory. Search it before answering what may have been said before; add "
    "facts worth keeping beyond this conversation."
)

# The request's tools: ``request`` is the HTTP request carrying the message (starlette's),
# None in-process and on stdio. Raises an EngramError when the caller may have none.
Resolver = Callable[[Any], list[tools.Tool]]


@functools.cache
def version() -> str:
    """engram's version, as its installed distribution says (empty when not installed)."""
    try:
        return metadata.version(installing.DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return ""


def build(resolve: Resolver) -> Server[Any]:
    """The server answering ``tools/list`` and ``tools/call`` with ``resolve``'s tools;
    its ``serverInfo`` names engram and its version."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        found = await anyio.to_thread.run_sync(resolve, ctx.request)
        return types.ListToolsResult(tools=[described(t) for t in found])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request, name, arguments = ctx.request, params.name, params.arguments or {}
        answer = await anyio.to_thread.run_sync(lambda: call(resolve, request, name, arguments))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)], is_error=answer.is_error
        )

    return Server(
        NAME,
        version=version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def described(tool: tools.Tool) -> types.Tool:
    """A tool as MCP lists it: its name, description and JSON Schema, as the library's."""
    schema = dict(tool.parameters)
    return types.Tool(name=tool.name, description=tool.description, input_schema=schema)


def call(resolve: Resolver, request: Any, name: str, arguments: object) -> tools.ToolResult:
    """What the tool ``name`` answers; an unknown name or a scope refused is a tool error."""
    try:
        found = resolve(request)
    except EngramError as exc:
        return tools.ToolResult(f"error[{exc.code}]: {exc.message}", is_error=True)
    for tool in found:
        if tool.name == name:
            return tool(arguments)
    names = ", ".join(t.name for t in found)
    return tools.ToolResult(f"There is no tool {name!r}; the tools are {names}.", is_error=True)
