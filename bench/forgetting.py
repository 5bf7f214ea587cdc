#!/usr/bin/env python3
"""What a real forget costs on SQLite: forgets and writes with and without it.

A forget is real when the forgotten words leave the file and its log
(``engram.storage.sqlite.forgetting``). Three ways are measured in one run, each on a
fresh file holding one scope of N facts (bench/sentences.py's pool, a hashing embedder so
that only storage is timed), at each size:

- ``logical``: as before, the rows deleted and nothing more (``secure_delete`` off, FTS5
  without secure-delete, no checkpoint after a forget): the words stay in the file;
- ``real``: the default, FTS5's secure-delete option, ``secure_delete`` on, and the log
  checkpointed and truncated after each forgetting write;
- ``real, index merged``: what a SQLite older than 3.44 does instead of FTS5's option
  (the whole full-text index merged after each forgetting write).

Timed: single forgets, single remembers, batches of 100 remembers, and a forget-all of a
second scope of 1,000 facts; the file is checked for a planted word after each forget.

    .venv/bin/python bench/forgetting.py [--sizes 10000 100000] [--json OUT]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sentences
from harness import environment, latency_summary, one_line, table, timed, write_json

import engram
from engram import Memory, ResourceRef
from engram.storage.sqlite import database, forgetting
from engram.storage.sqlite.store import SQLiteStore

WAYS = ("logical", "real", "real, index merged")
FORGETS = 30
WRITES = 200
BATCHES = 5
PLANT = "qqzplanted"


@contextmanager
def opened(path: Path, way: str) -> Iterator[Memory]:
    secure, purge = forgetting.SECURE_FTS, forgetting.purge
    try:
        if way == "real, index merged":
            forgetting.SECURE_FTS = False
        if way == "logical":
            forgetting.purge = lambda conn: None
        mem = engram.open(path, embedder=engram.HashingEmbedder(384))
        store = mem._store  # a diagnostic reaches inside on purpose
        assert isinstance(store, SQLiteStore)
        if way == "logical":
            conn = store.db.connection()
            conn.execute("PRAGMA secure_delete = OFF")
            conn.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('secure-delete', 0)")
        yield mem
        mem.close()
    finally:
        forgetting.SECURE_FTS, forgetting.purge = secure, purge


def _planted_in(path: Path) -> bool:
    return any(PLANT.encode() in p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def measure(path: Path, way: str, pool: list[str]) -> dict[str, Any]:
    ref, other = ResourceRef("big"), ResourceRef("other")
    size = len(pool) - WRITES - BATCHES * 100 - 1000
    with opened(path, way) as mem:
        for start in range(0, size, 1000):
            mem.remember_many(ref, pool[start : min(start + 1000, size)])
        rest = iter(pool[size:])
        mem.remember_many(other, [next(rest) for _ in range(1000)])
        forgets, left = [], 0
        for i in range(FORGETS):
            victim = mem.remember(ref, f"{PLANT}{i} {next(rest)}")
            forgets.append(timed(mem.forget, ref, victim.id)[1])
            left += _planted_in(path)
        writes = [timed(mem.remember, ref, next(rest))[1] for _ in range(WRITES - FORGETS)]
        batches = [
            timed(mem.remember_many, ref, [next(rest) for _ in range(100)])[1]
            for _ in range(BATCHES)
        ]
        _, forget_all = timed(mem.forget_all, other, expected_count=1000)
    return {
        "forget": latency_summary(forgets),
        "remember": latency_summary(writes),
        "remember_many_100": latency_summary(batches),
        "forget_all_1000_ms": round(forget_all, 1),
        "planted_word_left_after_forgets": left,
        "file_mb": round(path.stat().st_size / 1e6, 1),
    }


def run(sizes: Sequence[int]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "environment": environment(),
        "busy_timeout_ms": database.BUSY_TIMEOUT_MS,
    }
    for size in sizes:
        pool = sentences.unique_sentences(size + WRITES + BATCHES * 100 + 1000, 17)
        out[str(size)] = {}
        for way in WAYS:
            with tempfile.TemporaryDirectory(prefix="engram-forgetting-") as name:
                out[str(size)][way] = measure(Path(name) / "engram.db", way, pool)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--json", dest="out", type=Path)
    args = parser.parse_args(argv)
    result = run(args.sizes)
    rows = []
    for size in args.sizes:
        for way, got in result[str(size)].items():
            rows.append(
                [
                    f"{size:,}",
                    way,
                    got["forget"]["p50_ms"],
                    got["forget"]["p95_ms"],
                    got["remember"]["p50_ms"],
                    got["remember_many_100"]["p50_ms"],
                    got["forget_all_1000_ms"],
                    f"{got['planted_word_left_after_forgets']}/{FORGETS}",
                ]
            )
    headers = [
        "facts",
        "forget",
        "p50",
        "p95",
        "remember p50",
        "batch of 100 p50",
        "forget-all 1k",
        "word left",
    ]
    print("milliseconds; 'word left': forgets after which the file still held the word")
    print(table(headers, rows))
    out = args.out or Path(__file__).parent / "results" / "forgetting.json"
    write_json(out, result)
    print(one_line({"benchmark": "forgetting", "sizes": args.sizes}))


if __name__ == "__main__":
    main()
