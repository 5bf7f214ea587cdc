"""A document's arguments checked, and its bytes read as text."""

from __future__ import annotations

import hashlib

from engram.core import limits
from engram.core.documents.chunking import INSTALL
from engram.core.documents.models import (
    DEFAULT_MAX_TOKENS,
    MEDIA_TYPES,
    MIN_CHUNK_TOKENS,
    STRATEGIES,
)
from engram.core.errors import CapabilityMissing, InvalidInput, Unprocessable
from engram.core.ports import Embedder, TokenCounter
from engram.core.text import check_text

MAX_SOURCE_CHARS = limits.MAX_SOURCE_CHARS
NEAR_TIE = 0.1  # charset-normalizer's "chaos": the share of characters that look wrong


def window(embedder: Embedder) -> int:
    """The embedder's tokens for one text (special tokens included)."""
    return embedder.max_tokens if isinstance(embedder, TokenCounter) else DEFAULT_MAX_TOKENS


def check_chunk_tokens(value: object, embedder: Embedder) -> int:
    """``chunk_tokens`` within 16 and the embedder's window less its two special tokens."""
    top = window(embedder) - 2
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not MIN_CHUNK_TOKENS <= value <= top
    ):
        raise InvalidInput(
            f"chunk_tokens must be an integer from {MIN_CHUNK_TOKENS} to {top}, got {value!r}"
        )
    return value


def check_strategy(strategy: object, media_type: str) -> str:
    """The strategy to cut with: ``auto`` is ``markdown`` for Markdown and HTML (read as
    the Markdown trafilatura writes), else ``paragraph``."""
    if strategy not in STRATEGIES:
        raise InvalidInput(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if strategy == "auto":
        return "markdown" if media_type in ("text/markdown", "text/html") else "paragraph"
    return str(strategy)


def check_media_type(media_type: object) -> str:
    if media_type not in MEDIA_TYPES:
        raise InvalidInput(
            f"media_type must be one of {', '.join(MEDIA_TYPES)}, got {media_type!r}"
        )
    return str(media_type)


def check_source(name: object) -> str:
    return check_text(name, "name", max_chars=MAX_SOURCE_CHARS, strip=True)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> str:
    """The bytes as text: UTF-8 (a BOM dropped), else what charset-normalizer finds.
    Raises Unprocessable (no encoding reads them, or they hold NUL characters, as binary
    files do) and CapabilityMissing (charset-normalizer missing, for non-UTF-8 bytes)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = _guess(data)
    if "\x00" in text:
        raise Unprocessable("the document holds NUL characters: it is not text")
    return text


def _guess(data: bytes) -> str:
    try:
        from charset_normalizer import from_bytes
    except ImportError as exc:
        raise CapabilityMissing(
            "reading text that is not UTF-8 needs charset-normalizer", hint=INSTALL
        ) from exc
    found = list(from_bytes(data))
    if not found:
        raise Unprocessable("the document is not text in any encoding engram can read")
    best = min(found, key=lambda m: m.chaos)
    # Short Western text reads as well in several Latin code pages, and charset-normalizer
    # picked cp1257 for plain French; Windows-1252 is by far the commonest, so it wins
    # a near tie.
    western = [m for m in found if m.encoding == "cp1252" and m.chaos <= best.chaos + NEAR_TIE]
    return str(western[0] if western else best)


def check_tags(tags: object) -> tuple[str, ...]:
    return limits.check_tags(tags)
