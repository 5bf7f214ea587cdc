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

With ``--derived``, what following a fact's derived copies costs (``engram.core.derived``:
a conversation turn's session entry and its neighbours' context, a wiki's pages): one
scope of N facts (default 100k), half plain facts written with ``remember_many`` in
batches of 10,000, half conversation turns written with ``remember_conversation`` in
sessions of 50 turns (``context_turns=1``), the hashing embedder at 384 dimensions. On a
fixed (seeded) sample of each kind, one operation at a time: a remember, a soft forget
of a plain fact and of a turn, the restore of those turns, a hard forget of a plain fact
and of a turn. Then the same on two more stores: one of N facts whose wiki was compiled
over ``--early-wiki`` facts written before them (the scope has a wiki, which lists none
of the sampled facts), and a smaller one whose wiki is compiled over all of it
(``--wiki-facts``; compiling 100k facts takes minutes), with ``--wiki-rounds`` forgets
each right after a compile first (the first forget after a compile takes the pages
listing the fact and the wiki's index). The script only uses what the code before the
derived copies (f3abbe8) has, so the same file measures both:

    .venv/bin/python bench/forgetting.py --derived [--facts 100000] [--sample 200]
        [--early-wiki 1000] [--wiki-facts 10000] [--wiki-rounds 5]
        [--backend sqlite|postgres] [--label after] [--json OUT]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sentences
from harness import RESULTS_DIR, environment, latency_summary, one_line, table, timed, write_json
from targets import BACKENDS, Targets

import engram
from engram import Memory, ResourceRef, Turn
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


# -- following derived copies (--derived) ----------------------------------------------
FILL_BATCH = 10_000  # plain facts per remember_many
SESSION_TURNS = 50  # turns per remember_conversation (one session each)
SEED = 20261201
STORES = ("scope", "with_early_wiki", "with_wiki")
RIGHT_AFTER = "soft forget, plain, right after a compile"


def _code() -> dict[str, str | None]:
    """Which engram was imported: its path and the commit of the tree it is in."""
    where = Path(engram.__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        head = None
    return {"engram_file": str(where), "commit": head}


def fill(mem: Memory, ref: ResourceRef, texts: Iterator[str], facts: int) -> dict[str, Any]:
    """Half plain facts (remember_many in batches), half turns (one session per
    remember_conversation, one neighbouring turn as context); the ids of each kind."""
    plain, turns = facts // 2, facts - facts // 2
    rng = random.Random(SEED)
    plain_ids: list[str] = []
    start = time.perf_counter()
    for done in range(0, plain, FILL_BATCH):
        batch = [next(texts) for _ in range(min(FILL_BATCH, plain - done))]
        plain_ids += [f.id for f in mem.remember_many(ref, batch)]
    plain_s = time.perf_counter() - start
    turn_ids: list[str] = []
    start = time.perf_counter()
    for done in range(0, turns, SESSION_TURNS):
        speakers = rng.sample(sentences.NAMES, 2)
        said = [Turn(speakers[i % 2], next(texts)) for i in range(min(SESSION_TURNS, turns - done))]
        turn_ids += [f.id for f in mem.remember_conversation(ref, said, context_turns=1).facts]
    turns_s = time.perf_counter() - start
    return {
        "plain_ids": plain_ids,
        "turn_ids": turn_ids,
        "fill": {
            "plain_facts": len(plain_ids),
            "plain_s": round(plain_s, 1),
            "turns": len(turn_ids),
            "sessions": -(-turns // SESSION_TURNS),
            "turns_s": round(turns_s, 1),
            "count": mem.count(ref),
        },
    }


def operations(
    mem: Memory,
    ref: ResourceRef,
    plain: Sequence[str],
    turns: Sequence[str],
    texts: Iterator[str],
    sample: int,
) -> dict[str, Any]:
    """Each operation once per sampled fact, one operation after the other: the turns
    softly forgotten are the ones restored; hard forgets take other facts."""
    soft_plain, hard_plain = plain[:sample], plain[sample : 2 * sample]
    soft_turns, hard_turns = turns[:sample], turns[sample : 2 * sample]
    work: list[tuple[str, Callable[[str], object], Sequence[str]]] = [
        (
            "remember, plain",
            lambda text: mem.remember(ref, text),
            [next(texts) for _ in plain[:sample]],
        ),
        ("soft forget, plain", lambda i: mem.forget(ref, i), soft_plain),
        ("soft forget, turn", lambda i: mem.forget(ref, i), soft_turns),
        ("restore, turn", lambda i: mem.restore(ref, i), soft_turns),
        ("hard forget, plain", lambda i: mem.forget(ref, i, hard=True), hard_plain),
        ("hard forget, turn", lambda i: mem.forget(ref, i, hard=True), hard_turns),
    ]
    out: dict[str, Any] = {}
    for name, op, args in work:
        results, samples = [], []
        for arg in args:
            result, ms = timed(op, arg)
            results.append(result)
            samples.append(ms)
        out[name] = latency_summary(samples)
        if name.startswith(("soft", "hard")):
            out[name]["not_found"] = sum(result is not True for result in results)
    return out


def scope_run(
    target: str, facts: int, sample: int, *, wiki_rounds: int | None = None, early_wiki: int = 0
) -> dict[str, Any]:
    """One fresh store: fill, then time the operations on a seeded sample. With
    ``wiki_rounds``, the wiki is compiled over the whole scope, and that many soft
    forgets are timed first, each right after a compile. With ``early_wiki``, that many
    plain facts are written and the wiki compiled over them alone before the fill: the
    scope has a wiki, which lists none of the sampled facts."""
    ref = ResourceRef("forgetting")
    pool = facts + early_wiki + sample * (3 + (wiki_rounds or 0))
    texts = iter(sentences.unique_sentences(pool, 29))
    out: dict[str, Any] = {"facts": facts, "sample": sample}
    with engram.open(target, embedder=engram.HashingEmbedder(384)) as mem:
        if early_wiki:
            mem.remember_many(ref, [next(texts) for _ in range(early_wiki)])
            report, ms = timed(mem.wiki.compile, ref)
            out["early_wiki"] = {
                "facts": early_wiki,
                "compile_ms": round(ms, 1),
                "pages": len(report.pages),
                "facts_with_pages": mem.count(ref),
            }
        filled = fill(mem, ref, texts, facts)
        out["fill"] = filled["fill"]
        rng = random.Random(SEED + facts)
        plain = rng.sample(filled["plain_ids"], 2 * sample + (wiki_rounds or 0))
        turns = rng.sample(filled["turn_ids"], 2 * sample)
        if wiki_rounds is not None:
            report, ms = timed(mem.wiki.compile, ref)
            out["wiki"] = {
                "compile_ms": round(ms, 1),
                "pages": len(report.pages),
                "facts_with_pages": mem.count(ref),
            }
            after, compiles = [], []
            for victim in plain[2 * sample :]:
                after.append(timed(mem.forget, ref, victim)[1])
                compiles.append(timed(mem.wiki.compile, ref)[1])
            out["wiki"][RIGHT_AFTER] = latency_summary(after)
            out["wiki"]["compile after that forget"] = latency_summary(compiles)
        out["operations"] = operations(mem, ref, plain, turns, texts, sample)
    return out


def derived_run(
    backend: str, facts: int, sample: int, wiki_facts: int, wiki_rounds: int, early_wiki: int
) -> dict[str, Any]:
    out: dict[str, Any] = {"environment": environment(), "code": _code(), "backend": backend}
    with Targets(backend) as targets:
        out["scope"] = scope_run(targets.fresh(), facts, sample)
        if early_wiki:
            out["with_early_wiki"] = scope_run(
                targets.fresh(), facts, sample, early_wiki=early_wiki
            )
        if wiki_facts:
            out["with_wiki"] = scope_run(
                targets.fresh(), wiki_facts, sample, wiki_rounds=wiki_rounds
            )
    return out


def derived_table(result: dict[str, Any]) -> str:
    rows = []
    for key in STORES:
        if key not in result:
            continue
        got = result[key]
        label = f"{got['facts']:,}"
        if key == "with_early_wiki":
            label += f" + wiki of {got['early_wiki']['facts']:,} before"
        ops = got["operations"]
        if key == "with_wiki":
            label += " + wiki"
            ops = {RIGHT_AFTER: got["wiki"][RIGHT_AFTER], **ops}
        for name, summary in ops.items():
            row = [label, name, summary["p50_ms"], summary["p95_ms"], summary["mean_ms"]]
            rows.append([*row, summary["n"]])
    return table(["facts", "operation", "p50", "p95", "mean", "n"], rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--json", dest="out", type=Path)
    parser.add_argument("--derived", action="store_true", help="following derived copies")
    parser.add_argument("--facts", type=int, default=100_000, help="with --derived")
    parser.add_argument("--sample", type=int, default=200, help="with --derived")
    parser.add_argument("--wiki-facts", type=int, default=10_000, help="with --derived; 0: none")
    parser.add_argument("--wiki-rounds", type=int, default=5, help="with --derived")
    parser.add_argument("--early-wiki", type=int, default=1_000, help="with --derived; 0: none")
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite", help="with --derived")
    parser.add_argument("--label", default="", help="with --derived: names the JSON file")
    args = parser.parse_args(argv)
    if args.derived:
        derived_main(args)
        return
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


def derived_main(args: argparse.Namespace) -> None:
    result = derived_run(
        args.backend, args.facts, args.sample, args.wiki_facts, args.wiki_rounds, args.early_wiki
    )
    result["label"] = args.label
    print(f"{args.backend}, {result['code']['engram_file']}; milliseconds per operation")
    for key in STORES:
        if key in result:
            got = result[key]
            wiki = got.get("wiki", got.get("early_wiki", {}))
            print(key, one_line(got["fill"]), one_line(wiki))
    print(derived_table(result))
    name = "-".join(["forgetting-derived", *([args.label] if args.label else []), args.backend])
    out = args.out or RESULTS_DIR / f"{name}.json"
    write_json(out, result)
    summary = {k: v["p50_ms"] for k, v in result["scope"]["operations"].items()}
    print(one_line({"benchmark": "forgetting --derived", "facts": args.facts, **summary}))


if __name__ == "__main__":
    main()
