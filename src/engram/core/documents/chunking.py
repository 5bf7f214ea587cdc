"""Cutting a document's text into chunks, each a span of the text: ``text[start:end]`` is
the chunk, always, so a fact can be traced back to the characters it came from.

Markdown is cut at headings (ATX and setext) found by markdown-it-py, so a heading inside
a code fence is never taken for one and a fence is never cut while it fits a chunk; the
blocks of a section are packed together up to ``chunk_tokens``. A block too long for one
chunk is split by semchunk, counting the embedder's own tokens. Plain text is packed the
same way by paragraphs. Every chunk is also at most MAX_FACT_CHARS characters, and is
stripped of surrounding whitespace (a fact's words are). Token counts of blocks are added
up when packing: the MiniLM tokenizer splits at whitespace first, so the count of blocks
joined by newlines is the sum of their counts (special tokens aside).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

from engram.core import installing
from engram.core.errors import CapabilityMissing
from engram.core.limits import MAX_CONTEXT_CHARS, MAX_FACT_CHARS

Counter = Callable[[str], int]
SEPARATOR = " › "
INSTALL = installing.extra("ingest")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_NEWLINE = re.compile(r"\r\n|\r|\n")  # markdown-it's line ends, no others
_BLANK = re.compile(r"\n[ \t]*\n")
# A CJK character, a word (an underscore splits it, as a WordPiece tokenizer's
# punctuation does: "snake_case" is three pieces), a mark.
_PIECES = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+|[^\w\s]|_")
_RUNS = re.compile(r"[0-9]+|[^0-9]+")  # an ASCII word's runs of digits and of the rest


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of the document: ``text[start:end] == words``; ``heading`` its trail;
    ``page`` the PDF page it is on (None: not a PDF)."""

    words: str
    start: int
    end: int
    heading: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class Cut:
    """What chunking found: the chunks in order, the title, the front matter."""

    chunks: list[Chunk]
    title: str | None
    front_matter: dict[str, str]


def estimate_tokens(text: str) -> int:
    """A count for an embedder without a tokenizer, meant to exceed a WordPiece or BPE
    tokenizer's on real text (random letters, or a short text of rare words, can fall
    short): a CJK character or a mark (an underscore too, which splits a word as any
    mark does: "snake_case" is three pieces) is one token, an ASCII word one per four
    letters begun, and where it holds digits each run of them and of the rest counted
    apart (a vocabulary splits a word where letters and digits meet: "a22de3b", a
    commit's name, is five of MiniLM's tokens), digits one per two begun; any other word
    one per letter (an English vocabulary spells such words letter by letter). On
    engram's own Markdown it counts 1.3x MiniLM's."""
    total = 0
    for piece in _PIECES.findall(text):
        if piece.isascii() and piece[0].isalnum():
            if any(c.isdigit() for c in piece):
                total += sum(
                    1 + len(run) // (2 if run[0].isdigit() else 4) for run in _RUNS.findall(piece)
                )
            else:
                total += 1 + len(piece) // 4
        else:
            total += len(piece)
    return total


def cut(text: str, strategy: str, chunk_tokens: int, count: Counter, *, front: bool = True) -> Cut:
    """The chunks of ``text`` by ``strategy`` (``markdown`` or ``paragraph``), each at
    most ``chunk_tokens`` tokens by ``count`` and MAX_FACT_CHARS characters; a leading
    ``---`` block is front matter when ``front``. Raises CapabilityMissing when the
    ``ingest`` extra is not installed."""
    matter, body_start = front_matter(text) if front else ({}, 0)
    if strategy == "markdown":
        sections = list(_markdown_sections(text, body_start))
    else:
        sections = [(body_start, len(text), "", _paragraphs(text, body_start, len(text)))]
    title = matter.get("title") or next(
        (h.split(SEPARATOR)[0] for _, _, h, _ in sections if h), None
    )
    chunks: list[Chunk] = []
    for start, end, heading, blocks in sections:
        for a, b in _pack(text, blocks or [(start, end)], chunk_tokens, count):
            chunk = _trimmed(text, a, b, heading)
            if chunk is not None:
                chunks.append(chunk)
    return Cut(chunks, title, matter)


def front_matter(text: str) -> tuple[dict[str, str], int]:
    """A leading ``---`` block's ``key: value`` lines, and where the body starts."""
    found = _FRONT.match(text)
    if found is None:
        return {}, 0
    pairs: dict[str, str] = {}
    for line in found.group(1).splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() and not key.startswith((" ", "\t", "-", "#")):
            pairs[key.strip()] = value.strip().strip("'\"")
    return pairs, found.end()


Blocks = list[tuple[int, int]]


def _markdown_sections(text: str, body_start: int) -> Iterator[tuple[int, int, str, Blocks]]:
    try:
        from markdown_it import MarkdownIt
    except ImportError as exc:
        raise CapabilityMissing("Markdown chunking needs markdown-it-py", hint=INSTALL) from exc
    body = text[body_start:]
    lines = _line_starts(body)
    tokens = MarkdownIt("commonmark").parse(body)
    trail: list[tuple[int, str]] = []
    start, heading = body_start, ""
    blocks: Blocks = []
    for i, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        a, b = body_start + lines[token.map[0]], body_start + lines[token.map[1]]
        if token.type == "heading_open":
            if blocks or start < a:
                yield start, a, heading, blocks
            level = int(token.tag[1:])
            trail = [t for t in trail if t[0] < level]
            trail.append((level, " ".join(tokens[i + 1].content.split())))
            start, heading, blocks = a, SEPARATOR.join(t[1] for t in trail), []
        blocks.append((a, b))
    if blocks:
        yield start, len(text), heading, blocks


def _line_starts(text: str) -> list[int]:
    """The offset of each line's start, and one past the end, for markdown-it's maps."""
    return [0, *(m.end() for m in _NEWLINE.finditer(text)), len(text), len(text)]


def _paragraphs(text: str, start: int, end: int) -> Blocks:
    blocks, at = [], start
    for gap in _BLANK.finditer(text, start, end):
        blocks.append((at, gap.start()))
        at = gap.end()
    blocks.append((at, end))
    return [(a, b) for a, b in blocks if text[a:b].strip()]


def _pack(text: str, blocks: Blocks, limit: int, count: Counter) -> Iterator[tuple[int, int]]:
    """Consecutive blocks joined while they fit; a block alone too long is split."""
    open_at, close_at, held = -1, -1, 0
    for a, b in blocks:
        size = count(text[a:b])
        if open_at >= 0 and held + size <= limit and b - open_at <= MAX_FACT_CHARS:
            close_at, held = b, held + size
            continue
        fits = size <= limit and b - a <= MAX_FACT_CHARS
        if not fits and _heading_alone(text, open_at, close_at, held, limit):
            # A heading alone goes with the first part of the long block it heads: the
            # block is split with room left for it.
            pieces = list(_split(text, a, b, limit - held, count, a - open_at))
            yield open_at, pieces[0][1] if pieces else close_at
            yield from pieces[1:]
            open_at = -1
            continue
        if open_at >= 0:
            yield open_at, close_at
        open_at = -1
        if fits:
            open_at, close_at, held = a, b, size
        else:
            yield from _split(text, a, b, limit, count)
    if open_at >= 0:
        yield open_at, close_at


def _heading_alone(text: str, a: int, b: int, held: int, limit: int) -> bool:
    """Whether the open chunk is one short line (a heading, never a fence)."""
    return a >= 0 and held <= limit // 4 and "\n" not in text[a:b].strip()


def _split(
    text: str, a: int, b: int, limit: int, count: Counter, reserved: int = 0
) -> Iterator[tuple[int, int]]:
    try:
        import semchunk
    except ImportError as exc:
        raise CapabilityMissing("splitting long text needs semchunk", hint=INSTALL) from exc

    def bounded(piece: str) -> int:  # over the character limit counts as over the tokens
        return count(piece) if len(piece) <= MAX_FACT_CHARS - reserved else limit + 1

    chunker = semchunk.chunkerify(bounded, limit)  # type: ignore[attr-defined]
    _, offsets = chunker(text[a:b], offsets=True)
    for start, end in cast("list[tuple[int, int]]", offsets):
        yield a + start, a + end


def _trimmed(text: str, a: int, b: int, heading: str) -> Chunk | None:
    words = text[a:b]
    lead = len(words) - len(words.lstrip())
    tail = len(words.rstrip())
    if tail <= lead:
        return None
    return Chunk(text[a + lead : a + tail], a + lead, a + tail, heading)


def context(heading: str, neighbours: list[str]) -> str:
    """A chunk's context, what full text matches beside its words: its heading trail (or
    the document's title) and the words of the chunks either side of it."""
    return "\n\n".join([t for t in (heading,) if t] + neighbours)[:MAX_CONTEXT_CHARS]
