"""``engram mcp``: the MCP server over the process's stdin and stdout, for one scope the
launch flags name (trusted, as the command line is). The protocol owns stdout while it
runs: the SDK points the stray output of handlers at stderr."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from engram.core import tools
from engram.mcp import server


def serve(found: list[tools.Tool]) -> None:
    """Answers one client over stdio until it closes stdin."""
    app = server.build(lambda _request: found)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await app.run(read, write, app.create_initialization_options())

    anyio.run(run)
