"""HTML and PDF documents on a SQLite file (reading is the same on every backend): HTML
read as the Markdown trafilatura writes, boilerplate gone and cut by heading; a PDF page
by page, each chunk on one page with its number; every chunk's span indexes the text
``load`` gives; types found by suffix and by sniffing in a walk; an encrypted PDF refused
with nothing written; a dry run writing nothing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import engram
from engram import CapabilityMissing, InvalidInput, ResourceRef, Unprocessable
from engram.core.documents.loading import load, sniff
from pdfs import pdf
from stores import rows

REF = ResourceRef("reader")
PAGE = """<!DOCTYPE html><html><head><title>Keeping bees</title></head><body>
<nav><a href="/">Home</a> | <a href="/shop">Shop the honey store</a></nav>
<main><article><h1>Keeping bees</h1>
<p>Bees need a dry hive and a steady source of nectar through the summer months.
Beekeepers check the frames every week for signs of disease.</p>
<h2>Winter</h2>
<p>In winter the colony clusters to keep warm, eating the honey stored in autumn.
Do not open the hive on cold days, or the brood will chill.</p>
<h2>Harvest</h2>
<p>Honey is harvested in late summer, leaving enough for the bees to last the winter.
A full frame holds about two kilograms of honey.</p>
</article></main>
<footer>Copyright 2026 Example Apiaries. All rights reserved. Privacy policy.</footer>
</body></html>"""
PAGES = [
    ["Tides are caused by the gravity of the moon.", "Spring tides follow a full moon."],
    ["The second page is about harbours.", "Boats wait in the harbour for the tide."],
    ["The third page is about lighthouses.", "A lighthouse warns ships of rocks."],
]


@pytest.fixture
def mem(db_path: Path) -> Iterator[engram.Memory]:
    with engram.open(db_path, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def chunk_facts(mem: engram.Memory, doc_id: str) -> list[tuple[engram.StoredChunk, engram.Fact]]:
    doc = mem.document(REF, doc_id)
    return [(c, mem.fact(REF, c.fact_id)) for c in doc.chunks if c.fact_id is not None]


def test_html_is_read_as_markdown_without_boilerplate_and_cut_by_heading(
    mem: engram.Memory,
) -> None:
    report = mem.ingest_text(REF, PAGE, name="bees.html", media_type="text/html", chunk_tokens=64)
    assert report.status == "created"
    doc = mem.document(REF, report.document_id or "")
    assert doc.title == "Keeping bees" and doc.media_type == "text/html"
    text = load(PAGE.encode(), "text/html").text
    pairs = chunk_facts(mem, doc.id)
    assert list(dict.fromkeys(c.heading for c, _ in pairs)) == [
        "Keeping bees",
        "Keeping bees › Winter",
        "Keeping bees › Harvest",
    ]
    for chunk, fact in pairs:
        assert text[chunk.start : chunk.end] == fact.content
        assert (fact.metadata["start"], fact.metadata["end"]) == (chunk.start, chunk.end)
    words = " ".join(f.content for _, f in pairs)
    assert "two kilograms" in words
    assert "Copyright" not in words and "Shop the honey store" not in words


def test_a_pdf_is_cut_page_by_page_keeping_page_numbers(mem: engram.Memory) -> None:
    data = pdf(PAGES)
    report = mem.ingest_text(REF, data, name="tides.pdf", media_type="application/pdf")
    assert report.status == "created" and report.chunks == 3
    loaded = load(data, "application/pdf")
    assert [p.number for p in loaded.pages] == [1, 2, 3] and "\r" not in loaded.text
    pairs = chunk_facts(mem, report.document_id or "")
    for (chunk, fact), page, lines in zip(pairs, loaded.pages, PAGES, strict=True):
        assert loaded.text[chunk.start : chunk.end] == fact.content == "\n".join(lines)
        assert page.start <= chunk.start < chunk.end <= page.end
        assert fact.metadata["page"] == chunk.page == page.number
        (found,) = mem.provenance(REF, fact.id)
        assert (found.source, found.idx, found.page) == ("tides.pdf", chunk.idx, page.number)
        assert loaded.text[found.start : found.end] == fact.content
    again = mem.ingest_text(REF, data, name="tides.pdf", media_type="application/pdf")
    assert again.status == "unchanged"


def test_provenance_names_every_chunk_holding_a_fact_and_only_the_scope_s(
    mem: engram.Memory,
) -> None:
    for name in ("a.txt", "c.txt"):  # the same words: one fact, two chunks naming it
        mem.ingest_text(REF, "Shared words.", name=name, media_type="text/plain")
    (shared,) = mem.facts(REF).facts
    found = mem.provenance(REF, shared.id)
    assert [(p.source, p.idx, p.start, p.end, p.page) for p in found] == [
        ("a.txt", 0, 0, 13, None),
        ("c.txt", 0, 0, 13, None),
    ]
    plain = mem.remember(REF, "a fact no document holds")
    assert mem.provenance(REF, plain.id) == []
    with pytest.raises(engram.NotFound):
        mem.provenance(engram.ResourceRef("someone else"), shared.id)
    with pytest.raises(engram.NotFound):
        mem.provenance(REF, "f_nothing")
    mem.forget(REF, plain.id)
    assert mem.provenance(REF, plain.id) == []  # in the trash: still the scope's


def test_a_long_page_gives_several_chunks_none_across_pages(mem: engram.Memory) -> None:
    long_page = [f"Line {i} of the long first page tells of the sea." for i in range(40)]
    report = mem.ingest_text(
        REF, pdf([long_page, ["A short second page."]]), name="long.pdf",
        media_type="application/pdf", chunk_tokens=32,
    )  # fmt: skip
    pairs = chunk_facts(mem, report.document_id or "")
    pages = [f.metadata["page"] for _, f in pairs]
    assert len(pairs) > 3 and pages[-1] == 2 and pages.count(2) == 1
    assert all("second page" not in f.content for _, f in pairs if f.metadata["page"] == 1)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (pdf([["secret words"]], encrypt=True), "PDF cannot be read.*password"),
        (b"%PDF-1.4\nnot really a pdf\n", "PDF cannot be read"),
        (pdf([[], []]), "holds no text"),  # as a scan without OCR is
    ],
)
def test_an_encrypted_broken_or_textless_pdf_is_unprocessable_and_writes_nothing(
    mem: engram.Memory, db_path: Path, data: bytes, match: str
) -> None:
    with pytest.raises(Unprocessable, match=match):
        mem.ingest_text(REF, data, name="locked.pdf", media_type="application/pdf")
    assert rows(db_path, "SELECT count(*) FROM documents") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM facts") == [(0,)]


def test_a_pdf_as_text_is_refused(mem: engram.Memory) -> None:
    with pytest.raises(InvalidInput, match="bytes"):
        mem.ingest_text(REF, "%PDF-1.4", name="x.pdf", media_type="application/pdf")


@pytest.mark.parametrize(
    ("module", "media", "data"),
    [("trafilatura", "text/html", PAGE.encode()), ("pypdfium2", "application/pdf", pdf([["x"]]))],
)
def test_without_the_extra_a_loader_names_it(
    mem: engram.Memory, monkeypatch: pytest.MonkeyPatch, module: str, media: str, data: bytes
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(CapabilityMissing) as missing:
        mem.ingest_text(REF, data, name="x", media_type=media)
    assert "engram-durable[ingest]" in (missing.value.hint or "")
    assert mem.documents(REF) == []


def test_sniffing() -> None:
    assert sniff(b"%PDF-1.7\n") == "application/pdf"
    assert sniff(b"\xef\xbb\xbf  <!DOCTYPE HTML>") == "text/html"
    assert sniff(b"\n<html lang=en>") == "text/html"
    assert sniff(b"# <html> in a heading") is None


def test_a_walk_reads_html_and_pdf_by_suffix_and_by_sniffing(
    mem: engram.Memory, tmp_path: Path
) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "bees.htm").write_text(PAGE)
    (root / "tides.pdf").write_bytes(pdf(PAGES))
    (root / "export").write_bytes(pdf(PAGES[:1]))  # no suffix: sniffed
    (root / "locked.pdf").write_bytes(pdf([["x"]], encrypt=True))
    dry = mem.ingest(REF, root, include=["*"], dry_run=True)
    assert dry.dry_run and [r.status for r in dry.reports] == [
        "created", "created", "skipped", "created",
    ]  # fmt: skip
    assert mem.documents(REF) == []
    walked = mem.ingest(REF, root, include=["*"])
    kinds = {Path(d.source).name: d.media_type for d in mem.documents(REF)}
    assert kinds == {
        "bees.htm": "text/html",
        "export": "application/pdf",
        "tides.pdf": "application/pdf",
    }
    skipped = [r for r in walked.reports if r.status == "skipped"]
    assert [Path(r.source).name for r in skipped] == ["locked.pdf"]
    assert "Incorrect password" in (skipped[0].reason or "")
    (root / "bees.htm").write_text(PAGE.replace("two kilograms", "three kilograms"))
    again = mem.ingest(REF, root, include=["*"], dry_run=True)
    assert [r.status for r in again.reports] == ["replaced", "unchanged", "skipped", "unchanged"]
