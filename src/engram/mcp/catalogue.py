"""The tools an MCP client sees: the library's memory tools (:mod:`engram.core.tools`,
the same specifications as ``mem.create_tools`` and the service's tools routes), and five
more over the same scope, specified in the same way:

- ``memory_list{limit?, before?}``: the newest facts, one line each, and the cursor of
  the next page when more follow.
- ``graph_search{query, topK?, types?}``: entities by name and meaning, best first.
- ``graph_neighbourhood{entity, depth?}``: an entity's relations and the facts that
  mention it.
- ``working_get{key}``: a working-memory value, as JSON.
- ``working_set{key, value, ttlSeconds?}``: sets one (any JSON value, up to 64 KiB).

The scope is bound here, by whoever launched or authenticated the server; no argument
names one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Literal

from engram.core import tools
from engram.core.graph.models import MAX_NAME_CHARS, MAX_TYPE_CHARS
from engram.core.graph.walks import Subgraph
from engram.core.limits import MAX_KEY_CHARS, MAX_TTL
from engram.core.memory import Memory
from engram.core.people import AppMemory, Person, PersonBacking
from engram.core.scopes import Scope

MAX_LIST = 100
MAX_GRAPH_TOP_K = 20
_KEY = {"type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS, "description": "the key"}


def agent(memory: Memory, ref: Scope) -> list[tools.Tool]:
    """An agent's tools over ``ref``: the memory tools, then the five above."""
    return memory.create_tools(ref) + extra(memory, ref)


def person(memory: Memory, app: AppMemory, who: Person) -> list[tools.Tool]:
    """The tools an application's agent has over what it remembers of ``who``."""
    return tools.create(PersonBacking(memory, app, who)) + extra(memory, app.scope(who))


def extra(memory: Memory, ref: Scope) -> list[tools.Tool]:
    """The listing, graph and working-memory tools over ``ref``."""
    return [
        tools.Tool(
            "memory_list",
            "List remembered facts, newest first: '- [id] words'. The last line gives "
            "the 'before' cursor of the next page when more follow.",
            _object(
                {
                    "limit": _count(MAX_LIST, "how many (default 20)"),
                    "before": {"type": "string", "minLength": 1, "maxLength": 256},
                },
                [],
            ),
            lambda args: _listing(memory, ref, args),
            writes=False,
        ),
        tools.Tool(
            "graph_search",
            "Find the people, places and things remembered, by name and meaning, best "
            "first: '- [id] name (type): summary'.",
            _object(
                {
                    "query": tools.QUERY,
                    "topK": _count(MAX_GRAPH_TOP_K, "how many (default 5)"),
                    "types": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1, "maxLength": MAX_TYPE_CHARS},
                        "maxItems": 16,
                        "description": "only entities of these types",
                    },
                },
                ["query"],
            ),
            lambda args: _entities(memory, ref, args),
            writes=False,
        ),
        tools.Tool(
            "graph_neighbourhood",
            "What is remembered around an entity (its id or name): its relations to "
            "other entities and the facts that mention them.",
            _object(
                {
                    "entity": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS},
                    "depth": {"type": "integer", "minimum": 1, "maximum": 3},
                },
                ["entity"],
            ),
            lambda args: _around(memory, ref, args),
            writes=False,
        ),
        tools.Tool(
            "working_get",
            "Read a value kept in working memory by key; answers its JSON.",
            _object({"key": _KEY}, ["key"]),
            lambda args: json.dumps(memory.working.get(ref, args["key"]), ensure_ascii=False),
            writes=False,
        ),
        tools.Tool(
            "working_set",
            "Keep a JSON value in working memory under a key (replacing what was there).",
            _object(
                {
                    "key": _KEY,
                    "value": {"description": "any JSON value, up to 64 KiB"},
                    "ttlSeconds": _count(
                        int(MAX_TTL.total_seconds()), "forget it after this many seconds"
                    ),
                },
                ["key", "value"],
            ),
            lambda args: _keep(memory, ref, args),
            writes=True,
        ),
    ]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _count(maximum: int, description: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": maximum, "description": description}


def _listing(memory: Memory, ref: Scope, args: Mapping[str, Any]) -> str:
    page = memory.facts(ref, limit=args.get("limit", 20), before=args.get("before"))
    if not page.facts:
        return "No memory yet."
    lines = [f"- [{fact.id}] {fact.content}" for fact in page.facts]
    if page.next_before:
        lines.append(f"More: before={page.next_before}")
    return "\n".join(lines)


def _entities(memory: Memory, ref: Scope, args: Mapping[str, Any]) -> str:
    mode: Literal["hybrid", "text"] = "hybrid" if memory.embedder is not None else "text"
    hits = memory.graph.search(
        ref, args["query"], top_k=args.get("topK", 5), types=args.get("types", []), mode=mode
    )
    if not hits:
        return "No entity matches."
    return "\n".join(
        f"- [{h.entity.id}] {h.entity.name}"
        + (f" ({h.entity.type})" if h.entity.type else "")
        + (f": {h.entity.summary}" if h.entity.summary else "")
        for h in hits
    )


def _around(memory: Memory, ref: Scope, args: Mapping[str, Any]) -> str:
    found: Subgraph = memory.graph.neighbourhood(ref, args["entity"], depth=args.get("depth", 1))
    names = {e.id: e.name for e in found.entities}
    lines = [f"{found.center.name} [{found.center.id}]"]
    lines += [
        f"- {names.get(r.source, r.source)} -[{r.type}]-> {names.get(r.target, r.target)}"
        for r in found.relations
    ]
    lines += [f"- fact [{fact.id}] {fact.content}" for fact in found.facts]
    if found.truncated:
        lines.append("(more lie beyond what is shown)")
    return "\n".join(lines)


def _keep(memory: Memory, ref: Scope, args: Mapping[str, Any]) -> str:
    seconds = args.get("ttlSeconds")
    ttl = None if seconds is None else timedelta(seconds=seconds)
    entry = memory.working.set(ref, args["key"], args["value"], ttl=ttl)
    return f"Kept {entry.key!r} (version {entry.version})."
