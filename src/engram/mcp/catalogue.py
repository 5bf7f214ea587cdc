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
from dataclasses import replace
from typing import Literal, TypeVar

from engram.core import ops, tools
from engram.core.graph import ops as graph_ops
from engram.core.graph.search import EntityHit
from engram.core.graph.walks import Subgraph
from engram.core.memory import Memory
from engram.core.models import FactPage, WorkingEntry
from engram.core.people import AppMemory, Person, PersonBacking
from engram.core.scopes import Scope

MAX_LIST = 100
LISTED = 20  # facts a listing shows when the model names no limit
MAX_GRAPH_TOP_K = 20
T = TypeVar("T")


def agent(memory: Memory, ref: Scope) -> list[tools.Tool]:
    """An agent's tools over ``ref``: the memory tools, then the five above."""
    return memory.create_tools(ref) + extra(memory, ref)


def person(memory: Memory, app: AppMemory, who: Person) -> list[tools.Tool]:
    """The tools an application's agent has over what it remembers of ``who``."""
    return tools.create(PersonBacking(memory, app, who)) + extra(memory, app.scope(who))


def extra(memory: Memory, ref: Scope) -> list[tools.Tool]:
    """The listing, graph and working-memory tools over ``ref``, each a declared
    operation offered as its declaration names it."""

    def run(op: ops.Op[T]) -> T:
        return memory.run(ref, op)

    return [
        tools.offer(
            ops.Facts,
            "List remembered facts, newest first: '- [id] words'. The last line gives "
            "the 'before' cursor of the next page when more follow.",
            {"limit": "limit", "before": "before"},
            lambda op: _listing(run(op if op.limit else replace(op, limit=LISTED))),
            limit={"maximum": MAX_LIST, "description": f"how many (default {LISTED})"},
            before={"description": "the cursor a listing's last line gave"},
        ),
        tools.offer(
            graph_ops.SearchEntities,
            "Find the people, places and things remembered, by name and meaning, best "
            "first: '- [id] name (type): summary'.",
            {"query": "query", "topK": "top_k", "types": "types"},
            lambda op: _entities(run(replace(op, mode=_mode(memory)))),
            topK={
                "maximum": MAX_GRAPH_TOP_K,
                "description": f"how many (default {graph_ops.DEFAULT_SEARCH})",
            },
            types={"description": "only entities of these types"},
        ),
        tools.offer(
            graph_ops.Neighbourhood,
            "What is remembered around an entity (its id or name): its relations to "
            "other entities and the facts that mention them.",
            {"entity": "entity", "depth": "depth"},
            lambda op: _around(run(op)),
            entity={"description": "the entity's id, name or alias"},
        ),
        tools.offer(
            ops.WorkingGet,
            "Read a value kept in working memory by key; answers its JSON.",
            {"key": "key"},
            lambda op: json.dumps(run(op).value, ensure_ascii=False),
        ),
        tools.offer(
            ops.WorkingSet,
            "Keep a JSON value in working memory under a key (replacing what was there).",
            {"key": "key", "value": "value", "ttlSeconds": "ttl_seconds"},
            lambda op: _kept(run(op)),
        ),
    ]


def _mode(memory: Memory) -> Literal["hybrid", "text"]:
    return "hybrid" if memory.embedder is not None else "text"


def _listing(page: FactPage) -> str:
    if not page.facts:
        return "No memory yet."
    lines = [f"- [{fact.id}] {fact.content}" for fact in page.facts]
    if page.next_before:
        lines.append(f"More: before={page.next_before}")
    return "\n".join(lines)


def _entities(hits: list[EntityHit]) -> str:
    if not hits:
        return "No entity matches."
    return "\n".join(
        f"- [{h.entity.id}] {h.entity.name}"
        + (f" ({h.entity.type})" if h.entity.type else "")
        + (f": {h.entity.summary}" if h.entity.summary else "")
        for h in hits
    )


def _around(found: Subgraph) -> str:
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


def _kept(entry: WorkingEntry) -> str:
    return f"Kept {entry.key!r} (version {entry.version})."
