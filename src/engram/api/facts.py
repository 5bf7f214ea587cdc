"""Routes for an agent's facts. The fact operations themselves are declared once
(:mod:`engram.core.ops`) and routed by :mod:`engram.api.declared`; what stays here is a
conversation's turns, which arrive as a list of turn bodies."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.wire import ConversationOut, NewConversation

router = APIRouter(
    prefix="/agents/{agent_id}",
    tags=["facts"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)


@router.post("/conversations", status_code=201, responses=errors(409, 413, 502))
def remember_conversation(
    agent_id: str, body: NewConversation, request: Request
) -> ConversationOut:
    """Remembers a conversation's turns: each a fact ``"speaker: text"`` at its time,
    its neighbouring turns as context, and an entry of the session ``sessionId``
    (started when new) that the fact points at. Later turns appended to the session
    complete the context of the turns before them."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    done = memory.remember_conversation(
        agent.ref,
        [t.turn() for t in body.turns],
        session_id=body.session_id,
        expected_next=body.expected_next,
        context_turns=body.context_turns,
    )
    return ConversationOut.of(done)
