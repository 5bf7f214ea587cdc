#!/usr/bin/env python3
"""How fast does a scope move out and in: export and import of ``--facts`` facts (default
100,000) with their vectors.

Fills one SQLite scope with LoCoMo dev turns (repeated with a counter past the first
pass, so every fact is new words) through the hashing embedder at 384 dimensions (the
local model's width, so each record carries a vector of the real size), exports it to
JSONL and to a new SQLite store, then imports the JSONL into a fresh store of the same
model in a child process, which reports its time, whether anything was embedded, and
its peak resident memory.

    .venv/bin/python bench/portability.py [--facts N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import RESULTS_DIR, environment, write_json

import engram
from engram import Note, ResourceRef

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo"
REF = ResourceRef("portability-bench")
WIDTH = 384


def words(count: int) -> list[str]:
    raw = json.loads((DATA / "locomo-dev.json").read_text())
    turns = [
        str(t["text"])
        for item in raw
        for key, value in item["conversation"].items()
        if key.startswith("session_") and isinstance(value, list)
        for t in value
        if t.get("text")
    ]
    return [
        turns[n % len(turns)] + (f" (note {n // len(turns)})" if n >= len(turns) else "")
        for n in range(count)
    ]


def child(db: str, source: str) -> None:
    mem = engram.open(db, embedder=engram.HashingEmbedder(WIDTH))
    start = time.perf_counter()
    report = mem.import_file(REF, source)
    took = time.perf_counter() - start
    peak_kib = _high_water_kib()
    print(
        json.dumps(
            {
                "seconds": round(took, 2),
                "facts": report.facts_added,
                "vectors_embedded": report.vectors_embedded,
                "vectors_reused": report.vectors_reused,
                "peak_mib": round(peak_kib / 1024, 1),
            }
        )
    )


def _high_water_kib() -> int:
    """This process's peak resident memory since it began: VmHWM, which is of its own
    address space. getrusage's ru_maxrss is not: Linux carries the parent's over exec,
    so a child spawned by a large parent reports the parent's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--child", nargs=2, metavar=("DB", "SOURCE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    folder = Path(tempfile.mkdtemp(prefix="engram-portability-"))
    mem = engram.open(folder / "source.db", embedder=engram.HashingEmbedder(WIDTH))
    texts = words(args.facts)
    for i in range(0, len(texts), 1000):
        mem.remember_many(REF, [Note(t) for t in texts[i : i + 1000]])
    start = time.perf_counter()
    out = mem.export(REF, folder / "out.jsonl")
    export_s = time.perf_counter() - start
    start = time.perf_counter()
    store = mem.export(REF, folder / "out.sqlite")
    sqlite_s = time.perf_counter() - start
    mem.close()
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(folder / "target.db"), out.path],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    rate = imported["facts"] / imported["seconds"]
    print(f"export to JSONL: {out.facts} facts in {export_s:.1f} s ({out.bytes / 1e6:.0f} MB)")
    print(f"export to SQLite: {store.facts} facts in {sqlite_s:.1f} s")
    print(
        f"import of the JSONL: {imported['facts']} facts in {imported['seconds']} s "
        f"({rate:,.0f} facts/s), {imported['vectors_embedded']} embedded, "
        f"peak {imported['peak_mib']} MiB"
    )
    write_json(
        RESULTS_DIR / "portability.json",
        {
            "benchmark": "portability",
            "facts": out.facts,
            "export_jsonl_seconds": round(export_s, 2),
            "export_jsonl_bytes": out.bytes,
            "export_sqlite_seconds": round(sqlite_s, 2),
            "import": imported,
            "import_facts_per_second": round(rate),
            "environment": environment(),
        },
    )


if __name__ == "__main__":
    main()
