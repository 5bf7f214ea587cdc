"""Routes for episodic memory: start an agent's session, append entries, read its
episodes (its own, or with their lineage) and the fork tree.

A session is named by its id alone when entries are appended: the session's own scope
says whose it is. Only agents' sessions are reached here; a person's are not.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from engram.api.context import agent_memory, enabled_memory
from engram.api.openapi import errors
from engram.api.params import Limit, Time
from engram.core import limits
from engram.core.episodes import SessionNode
from engram.core.errors import NotFound
from engram.core.models import SourceRef
from engram.core.scopes import ResourceRef
from engram.wire import (
    AppendOut,
    EntryPageOut,
    NewEntries,
    SessionEntryOut,
    SessionNodeOut,
    SessionOut,
    SessionSpec,
    TreeOut,
)

router = APIRouter(tags=["sessions"], responses=errors(400, 401, 403, 404, 500, 501, 503))


@router.post("/agents/{agent_id}/sessions", status_code=201, responses=errors(409, 413))
def start(agent_id: str, body: SessionSpec, request: Request) -> SessionOut:
    """Starts a session of the agent, perhaps forked from an entry of another session
    (``forkOf``: 404 unless it is an entry of a session of the same team)."""
    memory, agent = agent_memory(request, agent_id, write=True)
    fork = body.fork_of
    session = memory.sessions.start(
        agent.ref,
        session_id=body.session_id,
        name=body.name,
        fork_of=None if fork is None else SourceRef(fork.sandbox_id, fork.entry_index),
    )
    return SessionOut.of(session)


@router.post("/sessions/{session_id}/entries", status_code=201, responses=errors(409, 413))
def append(session_id: str, body: NewEntries, request: Request) -> AppendOut:
    """Appends entries (at most 1,000) in order; answers the indexes written. 409 when
    ``expectedNext`` is stale (a retry whose entries are there answers their range)."""
    memory = enabled_memory(request)
    session = memory.sessions.find(session_id)
    if not isinstance(session.scope, ResourceRef):
        raise NotFound(f"no session {session_id!r}")
    written = memory.sessions.append(
        session, [e.entry() for e in body.entries], expected_next=body.expected_next
    )
    return AppendOut(session_id=session.id, start=written.start, stop=written.stop)


@router.get("/agents/{agent_id}/episodes")
def episodes(
    agent_id: str,
    request: Request,
    branch: Annotated[Literal["own", "lineage"], Query()] = "own",
    limit: Limit = limits.DEFAULT_PAGE,
    after: Annotated[Time, Query(description="entries after this time; nextAfter")] = None,
    query: Annotated[str | None, Query(description="entries holding every word")] = None,
) -> EntryPageOut:
    """The agent's session entries in time order; ``branch=lineage`` adds each
    ancestor's entries up to its fork point. ``nextAfter`` when more follow."""
    memory, agent = agent_memory(request, agent_id)
    page = memory.episodic_recall(agent.ref, branch=branch, limit=limit, after=after, query=query)
    return EntryPageOut(
        entries=[SessionEntryOut.of(e) for e in page.entries], next_after=page.next_after
    )


@router.get("/agents/{agent_id}/episodes/tree")
def tree(agent_id: str, request: Request) -> TreeOut:
    """The fork trees holding the agent's sessions: roots, their entries and children."""
    memory, agent = agent_memory(request, agent_id)
    return TreeOut(roots=[_node(n) for n in memory.episodic_tree(agent.ref)])


def _node(node: SessionNode) -> SessionNodeOut:
    return SessionNodeOut(
        session=SessionOut.of(node.session),
        entries=[SessionEntryOut.of(e) for e in node.entries],
        children=[_node(c) for c in node.children],
    )
