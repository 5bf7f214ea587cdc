#!/usr/bin/env python3
"""What ingesting documents costs with the local model: chunks a second, and the share of
the time the chunker takes (markdown-it-py's structure and semchunk's splits, counting
MiniLM's own tokens) beside embedding and writing; PDF pages a second; and re-ingesting an
edited document of 1,000 chunks.

The corpus is real Markdown: engram's own README.md, DEVELOPERS.md and BENCHMARKS.md
(or the files given), each ingested into a fresh SQLite store with the local model. The
chunker alone is timed on the same texts with the same counter, first cold (its caches
empty), then warm. A second ingest of the same bytes is timed too (a no-op: read the
document, compare its sha256).

The PDFs are real ones when the machine has them (Debian's libtasn1 manual and the
shared-mime-info spec, or the files given to ``--pdfs``): PDFium reading alone, then the
whole ingest, in pages a second. The edited document is 1,000 sections of one chunk each;
a tenth of them are reworded and it is ingested again: the time, the chunks embedded
anew, and how many of the old version's chunk facts stay live (the promise is 0).

    .venv/bin/python bench/ingest.py [--chunk-tokens 200] [--files A.md B.md]
        [--pdfs A.pdf] [--sections 1000] [--json OUT]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import environment, one_line, table, timed, write_json

import engram
from engram import ResourceRef
from engram.core.documents import chunking, loading
from engram.embedders.local import LocalEmbedder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = [ROOT / "README.md", ROOT / "DEVELOPERS.md", ROOT / "BENCHMARKS.md"]
DOCS = Path("/usr/share/doc")
PDFS = [
    DOCS / "libtasn1-doc" / "libtasn1.pdf",
    DOCS / "shared-mime-info" / "shared-mime-info-spec.pdf",
]
REF = ResourceRef("bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-tokens", type=int, default=200)
    parser.add_argument("--files", nargs="+", type=Path, default=CORPUS)
    parser.add_argument("--pdfs", nargs="*", type=Path, default=[p for p in PDFS if p.exists()])
    parser.add_argument("--sections", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    embedder = LocalEmbedder()
    pdfs = [pdf_row(embedder, path, args.chunk_tokens) for path in args.pdfs]
    for row in pdfs:
        print(one_line(row))
    edited = reingest(embedder, args.sections)
    print(one_line(edited))
    texts = {p.name: p.read_text() for p in args.files}
    rows, results = [], []
    for name, text in texts.items():
        cut, cold_ms = timed(
            chunking.cut, text, "markdown", args.chunk_tokens, embedder.count_tokens
        )
        _, warm_ms = timed(chunking.cut, text, "markdown", args.chunk_tokens, embedder.count_tokens)
        with (
            tempfile.TemporaryDirectory() as folder,
            engram.open(Path(folder) / "bench.db", embedder=embedder) as mem,
        ):
            ref = ResourceRef("bench")
            report, ingest_ms = timed(
                mem.ingest_text, ref, text, name=name, chunk_tokens=args.chunk_tokens
            )
            again, again_ms = timed(
                mem.ingest_text, ref, text, name=name, chunk_tokens=args.chunk_tokens
            )
        assert report.chunks == len(cut.chunks) and again.status == "unchanged"
        result = {
            "file": name,
            "chars": len(text),
            "chunks": report.chunks,
            "chunker_cold_ms": round(cold_ms, 1),
            "chunker_warm_ms": round(warm_ms, 1),
            "ingest_ms": round(ingest_ms, 1),
            "chunks_per_s": round(report.chunks / ingest_ms * 1000, 1),
            "chunker_share": round(cold_ms / ingest_ms, 3),
            "unchanged_ms": round(again_ms, 2),
        }
        results.append(result)
        rows.append(list(result.values()))
        print(one_line(result))
    total_chunks = sum(r["chunks"] for r in results)
    total_ms = sum(r["ingest_ms"] for r in results)
    cold = sum(r["chunker_cold_ms"] for r in results)
    headers = list(results[0])
    rows.append(
        [
            "all",
            sum(r["chars"] for r in results),
            total_chunks,
            round(cold, 1),
            "",
            round(total_ms, 1),
            round(total_chunks / total_ms * 1000, 1),
            round(cold / total_ms, 3),
            "",
        ]
    )
    print(table(headers, rows))
    if args.json:
        write_json(
            args.json,
            {
                "environment": environment(),
                "chunk_tokens": args.chunk_tokens,
                "results": results,
                "pdfs": pdfs,
                "reingest": edited,
            },
        )


def pdf_row(embedder: LocalEmbedder, path: Path, chunk_tokens: int) -> dict[str, object]:
    """PDFium's reading alone, then the whole ingest, of one PDF."""
    data = path.read_bytes()
    loaded, read_ms = timed(loading.load, data, loading.PDF)
    with (
        tempfile.TemporaryDirectory() as folder,
        engram.open(Path(folder) / "bench.db", embedder=embedder) as mem,
    ):
        report, ingest_ms = timed(
            mem.ingest_text, REF, data, name=path.name, media_type=loading.PDF,
            chunk_tokens=chunk_tokens,
        )  # fmt: skip
    pages = len(loaded.pages)
    return {
        "pdf": path.name,
        "pages": pages,
        "chars": len(loaded.text),
        "chunks": report.chunks,
        "read_ms": round(read_ms, 1),
        "read_pages_per_s": round(pages / read_ms * 1000, 1),
        "ingest_ms": round(ingest_ms, 1),
        "ingest_pages_per_s": round(pages / ingest_ms * 1000, 2),
        "chunks_per_s": round(report.chunks / ingest_ms * 1000, 1),
    }


def _sections(count: int, edited: int) -> str:
    """``count`` sections of one chunk each; the first ``edited`` reworded."""
    parts = []
    for i in range(count):
        verb = "was revised to say" if i < edited else "says"
        parts.append(
            f"## Section {i}\n\nSection {i} {verb} that shipment {i * 7} left dock "
            f"{i % 13} on day {i % 31} carrying {i * 3} crates of item {i}."
        )
    return "\n\n".join(parts) + "\n"


def reingest(embedder: LocalEmbedder, count: int) -> dict[str, object]:
    """A document of ``count`` chunks, then a tenth of them reworded: the time of each
    ingest, and the old version's chunk facts still live after the second (0 promised)."""
    first, second = _sections(count, 0), _sections(count, count // 10)
    with (
        tempfile.TemporaryDirectory() as folder,
        engram.open(Path(folder) / "bench.db", embedder=embedder) as mem,
    ):
        made, first_ms = timed(mem.ingest_text, REF, first, name="edited.md", chunk_tokens=64)
        before = mem.document(REF, made.document_id or "")
        again, second_ms = timed(mem.ingest_text, REF, second, name="edited.md", chunk_tokens=64)
        after = mem.document(REF, again.document_id or "")
        kept = {c.fact_id for c in after.chunks}
        stale = {c.fact_id for c in before.chunks} - kept
        live = _live_ids(mem)
    assert again.status == "replaced" and made.chunks == count
    return {
        "chunks": made.chunks,
        "first_ingest_ms": round(first_ms, 1),
        "edited_chunks": count // 10,
        "reingest_ms": round(second_ms, 1),
        "stale_chunk_facts": len(stale),
        "stale_still_live": len(stale & live),
    }


def _live_ids(mem: engram.Memory) -> set[str | None]:
    ids: set[str | None] = set()
    cursor = None
    while True:
        page = mem.facts(REF, limit=1000, before=cursor)
        ids.update(f.id for f in page.facts)
        if page.next_before is None:
            return ids
        cursor = page.next_before


if __name__ == "__main__":
    main()
