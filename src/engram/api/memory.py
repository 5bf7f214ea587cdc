"""The one working-memory route that is not a declared operation: ``…/memory/`` with
nothing after it. Reading, setting, deleting and listing keys are declared operations
(engram.core.ops: WorkingList, WorkingGet, WorkingSet, WorkingDelete), whose key is the
rest of the path, percent-decoded: any key the library takes, newlines and slashes
included, is reachable."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.core import limits
from engram.core.errors import InvalidInput

router = APIRouter(
    prefix="/agents/{agent_id}/memory",
    tags=["working memory"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)


@router.api_route("/", methods=["GET", "PUT", "DELETE"], include_in_schema=False)
def empty_key(agent_id: str, request: Request) -> None:
    """``…/memory/`` names no key: refused for what it is (the app follows no trailing
    slash, so it is never taken for the listing), once the agent is known. Included
    after the key's routes: a route's pattern ends in ``$``, which also matches before a
    final newline, so ``…/memory/%0A`` (the key "\\n") would land here first."""
    agent_memory(request, agent_id)
    raise InvalidInput(
        "the working-memory key is empty: nothing follows /memory/",
        hint=f"a key is 1-{limits.MAX_KEY_CHARS} characters, percent-encoded after /memory/",
    )
