"""The route that appends entries to a session. Starting a session and reading an
agent's episodes and fork tree are declared operations (engram.core.ops).

A session is named by its id alone when entries are appended: the session's own scope
says whose it is. Only agents' sessions are reached here; a person's are not.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import enabled_memory
from engram.api.openapi import errors
from engram.core.errors import NotFound
from engram.core.scopes import ResourceRef
from engram.wire import (
    AppendOut,
    NewEntries,
)

router = APIRouter(tags=["sessions"], responses=errors(400, 401, 403, 404, 500, 501, 503))


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
