"""Routes that move an agent's memory out and in: ``GET .../export`` answers the agent's
facts (with their vectors) and working keys as JSON or JSONL; ``POST .../imports`` takes
such an export, CSV, or mem0's memories as the body (up to 50 MiB) and imports it all or
nothing, one ledger entry naming the caller. A bad record anywhere is a 422 listing
every bad record by line and field, with nothing written."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import APIRouter, Query, Request, Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.responses import FileResponse

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import Flag
from engram.core.errors import InvalidInput
from engram.wire.portability import ExportDocument, ImportOut, Mem0Memories

if TYPE_CHECKING:
    from engram.core.memory import Memory
    from engram.core.scopes import Scope

router = APIRouter(
    prefix="/agents/{agent_id}",
    tags=["portability"],
    responses=errors(400, 401, 403, 404, 500, 503),
)
MEDIA = {
    "json": "application/json",
    "jsonl": "application/x-ndjson",
    "mcp-memory": "application/x-ndjson",
    "mem0": "application/json",
}
ExportFormat = Annotated[
    Literal["json", "jsonl", "mcp-memory", "mem0"],
    Query(
        description="json, jsonl, mcp-memory (the MCP memory server's JSONL graph) or mem0 "
        "(mem0's get_all() answer)"
    ),
]
ImportFormat = Annotated[
    Literal["json", "jsonl", "csv"] | None,
    Query(description="json, jsonl or csv; sniffed from the body when absent"),
]
Source = Annotated[
    Literal["engram", "mem0", "mcp-memory"],
    Query(description="engram's export, mem0's memories, or the MCP memory server's graph"),
]
DryRun = Annotated[bool, Query(alias="dryRun", description="check and count; write nothing"), Flag]
OnError = Annotated[
    Literal["refuse", "skip"],
    Query(
        alias="onError",
        description="refuse: a bad record refuses the whole import (422); skip: the good "
        "records are imported and the bad ones listed in skipped",
    ),
]


@router.get(
    "/export",
    response_class=Response,
    responses={
        200: {
            "description": "the export: engram's document (json), or mem0's memories (mem0)",
            "model": ExportDocument | Mem0Memories,
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    },
)
def export(agent_id: str, request: Request, format: ExportFormat = "jsonl") -> Response:
    """The agent's facts, oldest first, with their vectors and the model that made them,
    then its working keys: a header line and one record a line (``jsonl``), or one JSON
    document (``json``). The ledger, the trash and feedback stay behind."""
    memory, agent = agent_memory(request, agent_id)
    return exported(memory, agent.ref, format)


def exported(memory: Memory, scope: Scope, format: str) -> Response:
    """The scope's export as the answer: written to a temporary file a page at a time
    (the scope is never held whole), sent from it, then removed."""
    folder = tempfile.mkdtemp(prefix="engram-export-")
    try:
        path = memory.export(scope, os.path.join(folder, "export"), format=format).path
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    done = BackgroundTask(shutil.rmtree, folder, ignore_errors=True)
    return FileResponse(path, media_type=MEDIA[format], background=done)


@router.post("/imports", responses=errors(409, 413, 422, 501, 502))
async def imports(
    agent_id: str,
    request: Request,
    format: ImportFormat = None,
    source: Source = "engram",
    dry_run: DryRun = False,
    on_error: OnError = "refuse",
) -> ImportOut:
    """Imports the body's records into the agent's memory, all or nothing: vectors are
    reused when the file's model is the store's, the other facts embedded; words the
    agent already holds are linked, not written twice; ids taken are changed and listed
    in ``idMappings``. 422 lists every bad record (``error.errors``: line, field,
    message), unless ``onError=skip`` imports the others and lists them in ``skipped``;
    409 when the agent has ended."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput("the body is not UTF-8 text") from exc

    def run() -> ImportOut:
        memory, agent = agent_memory(request, agent_id, write=not dry_run)
        report = memory.import_string(
            agent.ref, text, format=format, source=source, dry_run=dry_run, on_error=on_error
        )
        return ImportOut.of(report)

    return await run_in_threadpool(run)
