"""A document's bytes as the text its chunks are cut from, by media type, and the media
type sniffed from the bytes when nothing says it.

The text is what ``start`` and ``end`` of every chunk index (``load(data,
media_type).text[start:end]`` is the chunk's words), and it is not the bytes:

- text and Markdown: the bytes decoded (:func:`engram.core.documents.reading.decode`);
- HTML: the Markdown trafilatura writes from it, boilerplate (navigation, footers) left
  out and headings kept, so the ``markdown`` strategy cuts it by heading. It depends on
  trafilatura's version, like any extraction: the same bytes and version, the same text;
- PDF: each page's text as PDFium reads it, ``\\r\\n`` turned into ``\\n``, the pages
  joined by a form feed (``\\f``); each page is cut apart, so a chunk never spans two
  pages, and its ``page`` (1-based) goes into the fact's metadata.

HTML and PDF need the ``ingest`` extra (trafilatura with lxml_html_clean, pypdfium2);
without it they raise CapabilityMissing. Measured on a 2-core machine: PDFium reads
about 76 pages a second, 13 to 18 times pypdf; trafilatura a small page in ~4 ms.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from engram.core.documents import chunking, reading
from engram.core.documents.chunking import INSTALL
from engram.core.errors import CapabilityMissing, InvalidInput, Unprocessable

HTML, PDF = "text/html", "application/pdf"
MEDIA_BY_SUFFIX = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".html": HTML,
    ".htm": HTML,
    ".pdf": PDF,
}
# What a Content-Type names, for the types engram reads.
CONTENT_TYPES = {
    "text/html": HTML,
    "application/xhtml+xml": HTML,
    "application/pdf": PDF,
    "text/markdown": "text/markdown",
    "text/x-markdown": "text/markdown",
    "text/plain": "text/plain",
}
PAGE_BREAK = "\f"
SNIFF_BYTES = 1024
_HTML_START = (b"<!doctype html", b"<html")
_LINE_ENDS = re.compile(r"\r\n?")
# PDFium keeps global state: one document is read at a time, whichever thread asks.
_PDFIUM = threading.Lock()


@dataclass(frozen=True, slots=True)
class Page:
    """A page's span of a PDF's text; ``number`` counts from 1."""

    number: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Loaded:
    """The text chunks are cut from; a PDF's pages; a title the bytes carry, if any."""

    text: str
    pages: tuple[Page, ...] = ()
    title: str | None = None


def sniff(head: bytes) -> str | None:
    """The media type the first bytes announce: PDF (``%PDF-``) or HTML (``<!doctype
    html`` or ``<html``, after a BOM and whitespace, in any case); None otherwise."""
    if head.startswith(b"%PDF-"):
        return PDF
    start = head[:SNIFF_BYTES].removeprefix(b"\xef\xbb\xbf").lstrip().lower()
    return HTML if start.startswith(_HTML_START) else None


def media_type(data: bytes, name: str, content_type: str | None = None) -> str | None:
    """What a body is, in this order: its ``content_type`` (a fetched URL's, an upload's)
    when it names a type engram reads, what its first bytes announce, the suffix of its
    ``name`` (a path or a URL's path); None when none says."""
    label = (content_type or "").split(";")[0].strip().lower()
    suffix = PurePosixPath(name).suffix.lower()
    return CONTENT_TYPES.get(label) or sniff(data[:SNIFF_BYTES]) or MEDIA_BY_SUFFIX.get(suffix)


def load(data: str | bytes, media_type: str) -> Loaded:
    """The text of ``data`` read as ``media_type`` (one of MEDIA_TYPES, checked).
    Raises InvalidInput (a PDF given as text), Unprocessable (bytes that are not text,
    an HTML page with no readable text, an encrypted or broken PDF, one with no text) and
    CapabilityMissing (the ``ingest`` extra missing)."""
    if media_type == PDF:
        if isinstance(data, str):
            raise InvalidInput("a PDF must be given as bytes, not text")
        return _pdf(data)
    text = data if isinstance(data, str) else reading.decode(data)
    if "\x00" in text:
        raise Unprocessable("the document holds NUL characters: it is not text")
    return _html(text) if media_type == HTML else Loaded(text)


def cut(loaded: Loaded, strategy: str, chunk_tokens: int, count: chunking.Counter) -> chunking.Cut:
    """The chunks of ``loaded``: of its text, or of each page apart (a chunk never
    spans two pages), their spans always of ``loaded.text``."""
    if not loaded.pages:
        found = chunking.cut(loaded.text, strategy, chunk_tokens, count)
        return replace(found, title=loaded.title or found.title)
    chunks: list[chunking.Chunk] = []
    for page in loaded.pages:
        part = loaded.text[page.start : page.end]
        for c in chunking.cut(part, strategy, chunk_tokens, count, front=False).chunks:
            chunks.append(
                replace(c, start=c.start + page.start, end=c.end + page.start, page=page.number)
            )
    return chunking.Cut(chunks, loaded.title, {})


def _html(text: str) -> Loaded:
    try:
        import trafilatura
    except ImportError as exc:
        raise CapabilityMissing(
            "reading HTML needs trafilatura and lxml_html_clean", hint=INSTALL
        ) from exc
    markdown = trafilatura.extract(
        text,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_images=False,
        include_links=False,
        deduplicate=False,
    )
    if not markdown or not markdown.strip():
        raise Unprocessable("the HTML holds no readable text")
    meta = trafilatura.extract_metadata(text)
    title = meta.title if meta is not None and meta.title else None
    return Loaded(markdown, title=title)


def _pdf(data: bytes) -> Loaded:
    try:
        import pypdfium2  # type: ignore[import-untyped]
    except ImportError as exc:
        raise CapabilityMissing("reading PDF needs pypdfium2", hint=INSTALL) from exc
    with _PDFIUM:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as exc:
            raise Unprocessable(f"the PDF cannot be read: {exc}") from exc
        try:
            texts = [_page_text(page) for page in document]
            title = document.get_metadata_dict().get("Title") or None
        finally:
            document.close()
    if not any(text.strip() for text in texts):
        raise Unprocessable("the PDF holds no text: a scanned page needs OCR, which engram lacks")
    pages, at = [], 0
    for number, text in enumerate(texts, 1):
        pages.append(Page(number, at, at + len(text)))
        at += len(text) + len(PAGE_BREAK)
    return Loaded(PAGE_BREAK.join(texts), tuple(pages), title)


def _page_text(page: object) -> str:
    textpage = page.get_textpage()  # type: ignore[attr-defined]
    try:
        text = str(textpage.get_text_bounded())
    finally:
        textpage.close()
        page.close()  # type: ignore[attr-defined]
    return _LINE_ENDS.sub("\n", text).replace("\x00", "").replace(PAGE_BREAK, "\n")
