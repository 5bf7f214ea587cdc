"""Routes for an agent's documents: ingest text, a URL or an uploaded file (never a path
on the server), list them, read one with its chunks, forget one. Each write is one ledger
entry naming the caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from engram.api import uploads
from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import Flag
from engram.wire.documents import (
    Cutting,
    DocumentText,
    DocumentUrl,
    IngestOut,
)

router = APIRouter(
    prefix="/agents/{agent_id}/documents",
    tags=["documents"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)
Hard = Annotated[bool, Query(description="delete the facts for good"), Flag]


@router.post(
    "", responses=errors(409, 413, 422, 502), openapi_extra={"requestBody": uploads.REQUEST_BODY}
)
async def ingest(agent_id: str, request: Request) -> IngestOut:
    """Ingests a document as the agent's, each chunk a fact: ``{text, name}`` (Markdown,
    plain text or HTML), ``{url}`` (fetched; public addresses only unless the service
    allows private ones) or an uploaded ``file`` (multipart, also PDF). Answers
    ``created``, ``unchanged`` (the same bytes: nothing written) or ``replaced`` (its old
    chunks' facts that no other document names go to the trash). A body over the
    service's limit is 413, a URL that cannot be fetched 502; nothing is half-written on
    any refusal."""
    if uploads.is_multipart(request):
        upload = await uploads.read_upload(request)
        return await run_in_threadpool(_ingest_upload, request, agent_id, upload)
    body = uploads.json_body(await request.body())
    if isinstance(body, DocumentUrl):
        return await run_in_threadpool(_ingest_url, request, agent_id, body)
    return await run_in_threadpool(_ingest_text, request, agent_id, body)


def _ingest_text(request: Request, agent_id: str, body: DocumentText) -> IngestOut:
    return _ingest(request, agent_id, body.text, body.name, body.media_type, body)


def _ingest_upload(request: Request, agent_id: str, upload: uploads.Upload) -> IngestOut:
    return _ingest(request, agent_id, upload.data, upload.name, upload.media_type, upload.fields)


def _ingest(
    request: Request,
    agent_id: str,
    data: str | bytes,
    name: str,
    media_type: str,
    cut: Cutting,
) -> IngestOut:
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    report = memory.ingest_text(
        agent.ref,
        data,
        name=name,
        media_type=media_type,
        strategy=cut.strategy,
        chunk_tokens=cut.chunk_tokens,
        tags=cut.tags or (),
        type=cut.type,
    )
    return IngestOut.of(report)


def _ingest_url(request: Request, agent_id: str, body: DocumentUrl) -> IngestOut:
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    walked = memory.ingest(
        agent.ref,
        body.url,
        strategy=body.strategy,
        chunk_tokens=body.chunk_tokens,
        tags=body.tags or (),
        type=body.type,
        allow_private=bool(getattr(request.app.state, "ingest_allow_private", False)),
    )
    return IngestOut.of(walked.reports[0])
