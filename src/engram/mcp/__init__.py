"""The MCP server, an edge like the service and the command line: the library's tools
(:mod:`engram.mcp.catalogue`) over stdio (``engram mcp``, :mod:`engram.mcp.stdio`) and
streamable HTTP (``/mcp`` in ``engram serve``, :mod:`engram.mcp.http`). Every call is
ledgered with ``via="mcp"``. Needs the ``[mcp]`` extra; nothing here imports the SDK until
a server is built."""
