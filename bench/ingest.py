#!/usr/bin/env python3
"""What ingesting documents costs with the local model: chunks a second, and the share of
the time the chunker takes (markdown-it-py's structure and semchunk's splits, counting
MiniLM's own tokens) beside embedding and writing.

The corpus is real Markdown: engram's own README.md, DEVELOPERS.md and BENCHMARKS.md
(or the files given), each ingested into a fresh SQLite store with the local model. The
chunker alone is timed on the same texts with the same counter, first cold (its caches
empty), then warm. A second ingest of the same bytes is timed too (a no-op: read the
document, compare its sha256).

    .venv/bin/python bench/ingest.py [--chunk-tokens 200] [--files A.md B.md] [--json OUT]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import environment, one_line, table, timed, write_json

import engram
from engram import ResourceRef
from engram.core.documents import chunking
from engram.embedders.local import LocalEmbedder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = [ROOT / "README.md", ROOT / "DEVELOPERS.md", ROOT / "BENCHMARKS.md"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-tokens", type=int, default=200)
    parser.add_argument("--files", nargs="+", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    embedder = LocalEmbedder()
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
            {"environment": environment(), "chunk_tokens": args.chunk_tokens, "results": results},
        )


if __name__ == "__main__":
    main()
