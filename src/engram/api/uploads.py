"""The body of ``POST /agents/{id}/documents``: JSON (``{text, name}`` or ``{url}``, exactly
one of the two) or a ``multipart/form-data`` upload (a ``file`` and the fields of
:class:`engram.wire.documents.DocumentUpload`), read and checked here, with their schema
for OpenAPI, since FastAPI describes one body type per route. The upload's bytes are
never written to the server's disk as a path anything reads back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData, UploadFile

from engram.api.bodies import MAX_UPLOAD_BYTES, is_upload
from engram.api.params import DIGITS
from engram.core import limits
from engram.core.documents import loading
from engram.core.errors import InvalidInput
from engram.wire.documents import DocumentText, DocumentUpload, DocumentUrl

M = TypeVar("M", bound=BaseModel)
FIELDS = ("file", "name", "mediaType", "strategy", "chunkTokens", "tags", "type")


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def _upload_schema() -> dict[str, Any]:
    schema = _schema(DocumentUpload)
    schema["properties"] = {"file": {"type": "string", "format": "binary"}, **schema["properties"]}
    schema["required"] = ["file"]
    return schema


REQUEST_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {"schema": {"oneOf": [_schema(DocumentText), _schema(DocumentUrl)]}},
        "multipart/form-data": {"schema": _upload_schema()},
    },
}


@dataclass(frozen=True, slots=True)
class Upload:
    """An uploaded file's bytes, its name and media type as decided, the other fields."""

    data: bytes
    name: str
    media_type: str
    fields: DocumentUpload


def is_multipart(request: Request) -> bool:
    return is_upload(request.method, request.url.path, request.headers.get("content-type"))


def json_body(raw: bytes) -> DocumentText | DocumentUrl:
    """The JSON body as text or a URL to ingest; InvalidInput (400) otherwise."""
    if not raw:
        raise InvalidInput(
            "the body is missing: send {text, name} or {url} as JSON, or a file as "
            "multipart/form-data"
        )
    payload = json.loads(raw)  # the gate let only JSON through
    if isinstance(payload, dict) and "url" in payload and "text" in payload:
        raise InvalidInput("give exactly one of text and url")
    if isinstance(payload, dict) and "url" in payload:
        return _valid(DocumentUrl, payload)
    return _valid(DocumentText, payload)


async def read_upload(request: Request) -> Upload:
    """The upload's file and fields, checked; InvalidInput (400) for a missing or empty
    file, an unknown or repeated field, a type that neither the fields, the file's
    Content-Type, its first bytes nor its name tell."""
    form = await request.form(
        max_files=1, max_fields=len(FIELDS) + limits.MAX_TAGS, max_part_size=MAX_UPLOAD_BYTES
    )
    try:
        return await _checked(form)
    finally:
        await form.close()


async def _checked(form: FormData) -> Upload:
    unknown = sorted(set(form.keys()) - set(FIELDS))
    if unknown:
        raise InvalidInput(f"unknown upload field {unknown[0][:64]!r}: the fields are {FIELDS}")
    files = form.getlist("file")
    if len(files) != 1 or not isinstance(files[0], UploadFile):
        raise InvalidInput("the upload needs exactly one file, in the field 'file'")
    values: dict[str, Any] = {}
    for key in FIELDS[1:]:
        given = form.getlist(key)
        if any(not isinstance(v, str) for v in given):
            raise InvalidInput(f"the upload field {key!r} must be text, not a file")
        if key == "tags":
            values[key] = list(given) if given else None
        elif len(given) > 1:
            raise InvalidInput(f"the upload field {key!r} is given {len(given)} times")
        elif key == "chunkTokens" and given:
            values[key] = _integer(key, str(given[0]))
        elif given:
            values[key] = str(given[0])
    fields = _valid(DocumentUpload, values)
    file = files[0]
    data = await file.read()
    if not data:
        raise InvalidInput("the uploaded file is empty")
    name = fields.name or file.filename
    if not name:
        raise InvalidInput("name the document: the upload has no file name and no 'name'")
    media = fields.media_type or loading.media_type(data, name, file.content_type)
    if media is None:
        raise InvalidInput(
            f"engram cannot tell what {name[:80]!r} is",
            hint="give mediaType: text/markdown, text/plain, text/html or application/pdf",
        )
    return Upload(data, name, media, fields)


def _integer(key: str, value: str) -> int:
    """A form field's whole number, written with at most 20 ASCII digits (``int()`` would
    take ``¹``, and fail on thousands of digits); the model checks its range."""
    if not DIGITS.fullmatch(value):
        raise InvalidInput(
            f"the upload field {key!r} must be a whole number written with the digits 0-9, "
            f"got {value[:40]!r}"
        )
    return int(value)


def _valid(model: type[M], payload: object) -> M:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        ) from exc
