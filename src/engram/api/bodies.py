"""The gate every request body passes before routing: bounded, JSON, UTF-8, readable.

Refusals say what is wrong in words (413 past the size limit; 400 for a body that is not
labelled JSON, not UTF-8, not JSON, or nested past what a parser can read) and reach no
route, so nothing is stored. A body that passes is handed on unchanged.

Two routes take other bodies, which they parse themselves: a document uploaded as
``multipart/form-data`` to ``POST /agents/{id}/documents``, up to MAX_UPLOAD_BYTES, and
records to import (JSON, JSONL or CSV text) to ``POST /agents/{id}/imports``, up to
MAX_IMPORT_BYTES.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from email.message import Message as MimeHeader

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram.api.errors import error_response

# How a path answers a refusal when not in the service's error shape: (status, code,
# message, the body's first bytes) to the response (``/mcp`` answers JSON-RPC errors,
# which its clients read, naming the request's id when those bytes do).
Refusal = Callable[[int, str, str, bytes], Response]
PREFIX = 1 << 16  # what such a path is given of a body too large to read

MAX_BODY_BYTES = 1 << 20  # 1 MiB: room for a 64 KiB value however it is escaped
MAX_UPLOAD_BYTES = 32 << 20  # 32 MiB: a document uploaded whole, held in memory once
MAX_IMPORT_BYTES = 50 << 20  # 50 MiB of records, read whole before any is written
UPLOADS = re.compile(r"/agents/[^/]+/documents/?")
IMPORTS = re.compile(r"/agents/[^/]+/imports/?")


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str, prefix: bytes = b"") -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.prefix = prefix  # the body's first bytes, as far as they were read


class BodyGate:
    """ASGI middleware: reads each request body (up to ``limit`` bytes) and checks it."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int = MAX_BODY_BYTES,
        shapes: Mapping[str, Refusal] | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.shapes = dict(shapes or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        upload = is_upload(scope["method"], scope["path"], headers.get("content-type"))
        records = scope["method"] == "POST" and IMPORTS.fullmatch(scope["path"]) is not None
        limit = MAX_UPLOAD_BYTES if upload else MAX_IMPORT_BYTES if records else self.limit
        shape = self.shapes.get(scope["path"])
        try:
            body = await self._read(headers, receive, limit, peek=shape is not None)
            if body and not (upload or records):
                check_json(headers.get("content-type"), body)
        except Refused as refused:
            answer: Response
            if shape is None:
                answer = error_response(refused.status, refused.code, refused.message)
            else:
                answer = shape(refused.status, refused.code, refused.message, refused.prefix)
            await answer(scope, receive, send)
            return
        await self.app(scope, replay(body, receive), send)

    async def _read(
        self, headers: Headers, receive: Receive, limit: int, *, peek: bool = False
    ) -> bytes:
        """The body, or Refused past ``limit``; ``peek``: a refusal keeps the body's first
        bytes (:data:`PREFIX`), reading its first part when its length was declared too
        large."""
        declared = headers.get("content-length", "")
        # ASCII digits only (int() takes "¹"); past 20 of them, more than any limit (and
        # past 4,300, more than int() converts).
        if (
            declared.isascii()
            and declared.isdigit()
            and (len(declared) > 20 or int(declared) > limit)
        ):
            first = await receive() if peek else {}
            raise _too_large(limit, first.get("body", b"")[:PREFIX])
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            if size > limit:
                raise _too_large(limit, b"".join(chunks)[:PREFIX] if peek else b"")
            more = message.get("more_body", False)
        return b"".join(chunks)


def is_upload(method: str, path: str, content_type: str | None) -> bool:
    """Whether this is a document uploaded as multipart/form-data to its one route."""
    if method != "POST" or UPLOADS.fullmatch(path) is None or not content_type:
        return False
    label = MimeHeader()
    label["content-type"] = content_type
    return label.get_content_type() == "multipart/form-data"


def check_json(content_type: str | None, body: bytes) -> None:
    """Raises Refused unless ``body`` is JSON text in UTF-8, labelled as JSON."""
    if not content_type:
        raise Refused(
            400, "invalid_input", "the body has no content-type: send JSON as application/json"
        )
    label = MimeHeader()
    label["content-type"] = content_type
    subtype = label.get_content_subtype()
    if label.get_content_maintype() != "application" or not (
        subtype == "json" or subtype.endswith("+json")
    ):
        raise Refused(
            400,
            "invalid_input",
            f"the body is labelled {content_type[:80]!r}: send JSON as application/json",
        )
    charset = label.get_param("charset")
    if isinstance(charset, str) and charset.lower().replace("-", "") != "utf8":
        raise Refused(400, "invalid_input", f"JSON bodies are UTF-8, not {charset[:40]!r}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = body[exc.start]
        raise Refused(
            400,
            "invalid_input",
            f"the body is not valid UTF-8: byte 0x{bad:02x} at position {exc.start}",
        ) from exc
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise Refused(400, "invalid_input", f"the body is not JSON: {exc.msg} ({where})") from exc
    except RecursionError as exc:
        raise Refused(400, "invalid_input", "the body nests too deeply to be read") from exc
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise Refused(400, "invalid_input", f"the body is not usable JSON: {exc}") from exc


def _too_large(limit: int, prefix: bytes = b"") -> Refused:
    return Refused(
        413, "too_large", f"the body is over {limit} bytes, the most a request may carry", prefix
    )


def replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` that gives ``body`` whole first (it was read already), then what the
    connection says next."""
    sent = False

    async def first() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return first
