#!/usr/bin/env python3
"""One scope at scale: fill, size on disk, a cold process's first recall, p50/p95 per
mode, memory, and vector recall against exact search.

The scope is filled with the perf corpus (``sentences``) and ``HashingEmbedder(384)``,
as bench/perf.py does: the vectors have the local model's width and every store-side
cost is the same, while 1M facts fill in minutes, not hours. Recall times exclude the
query's embedding (timed and subtracted on every call).

Each measuring pass is a process of its own, started after the fill, so its first
query is what a service that just started sees: the cold first query (with the time
the process took to open the store), then one query per remaining question, then the
process's peak resident memory; then the same questions again (what a process that has
answered them once gives: its copies warm). Vector recall@10 compares the vector half's ten
against the exact ten by cosine, computed here with numpy over every stored vector
(read from a copy of the file, so the store under test is not warmed by it).

    .venv/bin/python bench/scale.py [--facts 100000] [--backend sqlite|postgres]
                                     [--queries 100] [--json OUT] [--store FILE]
                                     [--scopes 1] [--pg-setting NAME=VALUE ...]

With ``--scopes N`` the facts are spread over N scopes (people of one application), each
filled in one batch, and each question is asked of one of them. ``--pg-setting`` sets
the PostgreSQL server the run starts (``shared_buffers=1GB``: the size of its page cache).

With ``--restored`` (one scope), the run ends with a backup of the store, restored twice;
each step's time and bytes, and a cold process's hybrid recalls on each. SQLite: into new
files, as it is (with the index files it holds) and as a backup from before it held them
(none: the restored store searches exactly until it has built its graph). PostgreSQL:
into new databases, by ``pg_restore`` alone and by ``engram restore`` (each builds the
scope's graph as it restores).

With ``--after N`` (one scope), the run ends with steady writes: N more facts in
``AFTER_STEPS`` batches, each followed by the background builds it asked for (waited
for and timed: what a recall meets between them is the vectors after the graphs,
searched exactly) and a process asking every mode in turn; then vector recall@10
against exact over every fact.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sentences  # noqa: E402
from harness import environment, latency_summary, table, write_json  # noqa: E402
from perf import TimedEmbedder  # noqa: E402
from targets import Targets, postgres_server  # noqa: E402

import engram  # noqa: E402
from engram import ResourceRef  # noqa: E402

DIMENSION, TOP_K, SEED, BATCH = 384, 10, 20240501, 10_000
MODES = ("text", "vector", "hybrid")
CORRECTED = "after-correction"  # a measuring child's: recalls after one correction
# ... and this one's: every mode asked again, question by question in turn, so that the
# hybrid's ratio to its slower half is read from one process at one moment
INTERLEAVED = "interleaved"
FILTERED = "filtered"  # a measuring child's: hybrid recalls under filters
REF = ResourceRef("scale")
AFTER_STEPS = 4  # the batches --after writes in, each measured after


def scopes_of(count: int) -> list[ResourceRef]:
    """The scopes a run fills: one (``REF``), or ``count`` people of one application."""
    return [REF] if count == 1 else [ResourceRef("scale", f"p{i}") for i in range(count)]


def asked_of(question: int, scopes: list[ResourceRef]) -> ResourceRef:
    """The scope question ``question`` is asked of: spread over them all, the same each run."""
    return scopes[(question * 7919) % len(scopes)]


def fill(target: str, facts: int, scopes: int = 1) -> dict[str, Any]:
    corpus = sentences.unique_sentences(facts, SEED)
    refs = scopes_of(scopes)
    started = time.perf_counter()
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        if scopes == 1:
            for start in range(0, facts, BATCH):
                mem.remember_many(REF, list(corpus[start : start + BATCH]))
        else:  # each scope its share, in one batch
            each = facts // scopes
            for i, ref in enumerate(refs):
                mem.remember_many(ref, list(corpus[i * each : (i + 1) * each]))
        held = sum(mem.count(ref) for ref in refs)
        seconds = time.perf_counter() - started
        indexed = build_index(mem) if scopes == 1 else {"seconds": None, "bytes": 0}
        based = build_text_base(mem) if scopes == 1 else None
        size = mem.health().storage
    assert held == facts, (held, facts)
    stored = size.bytes if size is not None else 0  # the database; the log apart
    total = stored + indexed["bytes"]
    return {
        "facts": facts,
        "seconds": round(seconds, 1),
        "facts_per_s": round(facts / seconds),
        "bytes": stored,
        "bytes_per_fact": round(stored / facts),
        "wal_bytes": None if size is None else size.wal_bytes,
        "vector_index": indexed,
        "text_base": based,
        "bytes_per_fact_with_index": round(total / facts),
    }


def kept(target: str, facts: int) -> dict[str, Any]:
    """A store this benchmark filled before (``--store``), filled now if it is new: its
    size, and its index built where missing (the fill's time is that run's)."""
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        held = mem.count(REF)
    if held == 0:
        return fill(target, facts)
    # Each run ends by forgetting one fact for good (after_correction; its correction keeps
    # the fact's time), so a kept store holds one fewer for each run measured on it.
    assert facts * 0.99 <= held <= facts, f"{target} holds {held} facts, not {facts}"
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        indexed = build_index(mem)
        based = build_text_base(mem)
        size = mem.health().storage
    stored = size.bytes if size is not None else 0
    return {
        "facts": facts,
        "seconds": None,
        "facts_per_s": None,
        "bytes": stored,
        "bytes_per_fact": round(stored / facts),
        "wal_bytes": None if size is None else size.wal_bytes,
        "vector_index": indexed,
        "text_base": based,
        "bytes_per_fact_with_index": round((stored + indexed["bytes"]) / facts),
    }


def build_index(mem: engram.Memory) -> dict[str, Any]:
    """Builds the scope's approximate vector index now, covering every vector: on SQLite
    a store builds it in the background once a search finds it missing; on PostgreSQL
    the fill's writes asked for builds in the background, waited for here, then one
    covering the vectors they left out. Its time and its size."""
    builder = getattr(mem._store, "builder", None)
    if builder is not None:
        from engram.storage.postgres import vectors

        started = time.perf_counter()
        assert builder.settle()
        mem._store.pg.autocommit(lambda conn: vectors.build_index(conn, REF.key))
        seconds = time.perf_counter() - started
        size = mem._store.pg.autocommit(
            lambda conn: conn.execute(
                "SELECT coalesce(pg_relation_size(ann_index::regclass), 0) FROM scope_state "
                "WHERE scope = %s AND ann_index IS NOT NULL",
                (REF.key,),
            ).fetchone()
        )
        inside = int(size[0]) if size else 0  # counted in the database's size already
        return {"seconds": round(seconds, 1), "bytes": 0, "bytes_in_database": inside}
    approximate = getattr(getattr(mem._store, "index", None), "approximate", None)
    if approximate is None or not approximate.available:
        return {"seconds": None, "bytes": 0}
    started = time.perf_counter()
    built = any(approximate.directory.glob("*.usearch")) or approximate.build(REF.key)
    assert built
    seconds = time.perf_counter() - started
    held = sum(p.stat().st_size for p in approximate.directory.glob("*.usearch"))
    return {"seconds": round(seconds, 1), "bytes": held}


def build_text_base(mem: engram.Memory) -> dict[str, Any] | None:
    """Builds the scope's text base now where the store keeps one (SQLite: a search of
    a large scope asks for it, built in the background): its time, its terms, and the
    bytes its postings take in the database (counted in its size already)."""
    texts = getattr(mem._store, "texts", None)
    bases = getattr(texts, "bases", None)
    if bases is None:
        return None
    started = time.perf_counter()
    built = bases.build(REF.key)
    seconds = time.perf_counter() - started
    terms, held = mem._store.db.run(
        lambda tx: tx.conn.execute(
            "SELECT count(*), coalesce(sum(length(seqs) + length(counts)), 0) "
            "FROM text_base_terms WHERE scope = ?",
            (REF.key,),
        ).fetchone(),
        write=False,
    )
    return {"built": built, "seconds": round(seconds, 1), "terms": terms, "bytes": held}


def measure(target: str, mode: str, queries: int, scopes: int = 1) -> dict[str, Any]:
    """In this process (run as a child): open, the cold first query, then the rest."""
    asked = sentences.questions(queries, SEED + 1)
    refs = scopes_of(scopes)
    embedder = TimedEmbedder(engram.HashingEmbedder(DIMENSION))
    started = time.perf_counter()
    mem = engram.open(target, embedder=embedder)
    opened = time.perf_counter() - started
    passes: list[list[float]] = []
    found: list[list[str]] = []
    for _ in range(2):
        times = []
        found = []
        for i, question in enumerate(asked):
            ref = asked_of(i, refs)
            before, at = embedder.spent_ms, time.perf_counter()
            hits = mem.recall(ref, question, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
            times.append((time.perf_counter() - at) * 1000 - (embedder.spent_ms - before))
            found.append([h.fact.id for h in hits])
        passes.append(times)
    resident = resident_kib()  # before closing lets go of the index file's mapping
    mem.close()
    rss = peak_rss_kib()
    return {
        "mode": mode,
        "open_ms": round(opened * 1000, 1),
        "first_ms": round(passes[0][0], 1),
        "warm": latency_summary(passes[0][1:]),
        "again": latency_summary(passes[1]),
        "peak_rss_mib": round(rss / 1024, 1),
        # of that, after both passes: the process's own memory, and the pages of files
        # it maps (the vector index file: the OS's cache, shared and given back under
        # pressure; opening it reads every node's header, and the first search maps
        # most of the rest)
        "own_mib": round(resident["RssAnon"] / 1024, 1),
        "mapped_files_mib": round(resident["RssFile"] / 1024, 1),
        "hits": found,
    }


def after_correction(target: str, queries: int, scopes: int = 1) -> dict[str, Any]:
    """In this process (run as a child, after the three modes have been measured): one
    fact corrected in a process that has searched, then hybrid questions. A correction
    erases the fact's old vector; when that took the scope's graph with it, every search
    after it was exact until a new graph was built. Then one fact forgotten for good,
    timed: its words leave every page of the file (storage/sqlite/freespace.py)."""
    asked = sentences.questions(queries, SEED + 1)
    refs = scopes_of(scopes)
    embedder = TimedEmbedder(engram.HashingEmbedder(DIMENSION))
    with engram.open(target, embedder=embedder) as mem:
        mem.recall(refs[0], asked[0], top_k=TOP_K, mode="hybrid")  # open, as a service is
        fact = mem.facts(refs[0], limit=1).facts[0]
        started = time.perf_counter()
        mem.correct(refs[0], fact.id, f"{fact.content} again")
        corrected = (time.perf_counter() - started) * 1000
        times = []
        for i, question in enumerate(asked):
            before, at = embedder.spent_ms, time.perf_counter()
            mem.recall(asked_of(i, refs), question, top_k=TOP_K, mode="hybrid")
            times.append((time.perf_counter() - at) * 1000 - (embedder.spent_ms - before))
        gone = mem.facts(refs[0], limit=2).facts[1]
        started = time.perf_counter()
        mem.forget(refs[0], gone.id, hard=True)
        forgotten = (time.perf_counter() - started) * 1000
    return {
        "correct_ms": round(corrected, 1),
        "forget_hard_ms": round(forgotten, 1),
        "first_ms": round(times[0], 1),
        "after": latency_summary(times[1:]),
        "peak_rss_mib": round(peak_rss_kib() / 1024, 1),
    }


def filtered(target: str, queries: int, scopes: int = 1) -> dict[str, Any]:
    """In this process (run as a child): hybrid questions under each of a few filters,
    wide (the newer or older half of the scope's time, a strength floor every fact
    passes) and narrow (its newest thousandth of that time, a type, a tag and a strength
    floor no fact has). A filter narrows which facts answer, and both halves rank only those."""
    asked = sentences.questions(queries, SEED + 1)
    refs = scopes_of(scopes)
    embedder = TimedEmbedder(engram.HashingEmbedder(DIMENSION))
    out: dict[str, Any] = {}
    with engram.open(target, embedder=embedder) as mem:
        oldest, newest = time_span(mem, refs[0])
        middle = oldest + (newest - oldest) / 2
        kinds: dict[str, dict[str, Any]] = {
            "the newer half": {"created_after": middle},
            "the older half": {"created_before": middle},
            "strength at least 0.5": {"min_strength": 0.5},
            "the newest thousandth": {"created_after": newest - (newest - oldest) / 1000},
            "a type none has": {"type": "none such"},
            "a tag none has": {"tags": ["none such"]},
            "a strength none has": {"min_strength": 2.0},
        }
        mem.recall(refs[0], asked[0], top_k=TOP_K, mode="hybrid")  # open, as a service is
        for name, kind in kinds.items():
            times = []
            for i, question in enumerate(asked):
                before, at = embedder.spent_ms, time.perf_counter()
                mem.recall(asked_of(i, refs), question, top_k=TOP_K, mode="hybrid", **kind)
                times.append((time.perf_counter() - at) * 1000 - (embedder.spent_ms - before))
            out[name] = latency_summary(times)
    return {"hybrid": out, "peak_rss_mib": round(peak_rss_kib() / 1024, 1)}


def written_after(target: str, facts: int, after: int, queries: int) -> list[dict[str, Any]]:
    """After every other measure: ``after`` more facts, in :data:`AFTER_STEPS` batches,
    each written and its builds waited for by a process of its own, then each mode asked
    in turn by another (:func:`interleaved`). Each step's figures: the facts written
    since the fill, the write's and the builds' seconds, what the scope's graphs hold and
    how many vectors are searched exactly beside them, and the p50s."""
    corpus = sentences.unique_sentences(facts + after, SEED)[facts:]
    each = after // AFTER_STEPS
    steps = []
    for step in range(AFTER_STEPS):
        with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
            started = time.perf_counter()
            mem.remember_many(REF, list(corpus[step * each : (step + 1) * each]))
            wrote = time.perf_counter() - started
            builder = getattr(mem._store, "builder", None)
            if builder is not None:  # PostgreSQL's background builds
                assert builder.settle()
            settled = time.perf_counter() - started - wrote
            graphs = mem.health(REF).vector_index
        turns = child(target, INTERLEAVED, queries, 1)
        steps.append(
            {
                "written": (step + 1) * each,
                "write_s": round(wrote, 1),
                "builds_s": round(settled, 1),
                "in_graphs": graphs.vectors,
                "beside": graphs.beside,
                **{mode: turns[mode]["p50_ms"] for mode in MODES},
            }
        )
        print(f"after: {steps[-1]}", flush=True)
    return steps


def time_span(mem: engram.Memory, ref: ResourceRef) -> tuple[datetime, datetime]:
    """When the scope's oldest and newest facts were made (both stores keep microseconds)."""
    from engram.storage.sql.tx import sql

    statement = "SELECT min(created_at), max(created_at) FROM facts WHERE scope = ?"
    rows = mem._store.run(lambda tx: sql(tx).rows(statement, (ref.key,)), write=False)
    low, high = (datetime.fromtimestamp(int(us) / 1e6, UTC) for us in rows[0])
    return low, high


def interleaved(target: str, queries: int, scopes: int = 1) -> dict[str, Any]:
    """In this process (run as a child): each question asked once in every mode (what
    they read is then held), then again, each question in the three modes one after the
    other, the order turning from one question to the next. Separate processes run
    minutes apart on this machine, which moves every mode by a third from one minute to
    the next; asked in turn, the modes share each moment."""
    asked = sentences.questions(queries, SEED + 1)
    refs = scopes_of(scopes)
    embedder = TimedEmbedder(engram.HashingEmbedder(DIMENSION))
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    with engram.open(target, embedder=embedder) as mem:
        for i, question in enumerate(asked):
            for mode in MODES:
                mem.recall(asked_of(i, refs), question, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
        for i, question in enumerate(asked):
            turn = i % len(MODES)
            for mode in MODES[turn:] + MODES[:turn]:
                before, at = embedder.spent_ms, time.perf_counter()
                mem.recall(asked_of(i, refs), question, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
                times[mode].append((time.perf_counter() - at) * 1000 - (embedder.spent_ms - before))
    summary = {mode: latency_summary(t) for mode, t in times.items()}
    slower = max(summary["text"]["p50_ms"], summary["vector"]["p50_ms"])
    return {**summary, "hybrid_over_slower_half": round(summary["hybrid"]["p50_ms"] / slower, 2)}


def peak_rss_kib() -> int:
    """This process's peak resident memory. Not getrusage's ru_maxrss: Linux carries the
    parent's peak into a child started by fork and exec, so every child reported the
    filling parent's peak (312 MiB in all three modes)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB; elsewhere


def resident_kib() -> dict[str, int]:
    """This process's resident memory now, by kind (KiB): ``RssAnon`` its own, ``RssFile``
    the pages of files it maps; zeros where ``/proc`` does not say."""
    kinds = {"RssAnon": 0, "RssFile": 0}
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                name = line.split(":")[0]
                if name in kinds:
                    kinds[name] = int(line.split()[1])
    except OSError:
        pass
    return kinds


def exact_vector_hits(target: str, queries: int, scopes: int = 1) -> list[list[str]]:
    """The exact ten by cosine for each question, over every vector of its scope."""
    import numpy as np

    asked = sentences.questions(queries, SEED + 1)
    refs = scopes_of(scopes)
    query = np.asarray(engram.HashingEmbedder(DIMENSION).embed(asked, "query"))
    query /= np.maximum(np.linalg.norm(query, axis=1, keepdims=True), 1e-12)
    found: list[list[str]] = [[] for _ in asked]
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        for ref in dict.fromkeys(asked_of(i, refs) for i in range(len(asked))):
            ids, matrix = _vectors_of(mem, ref)
            for i in range(len(asked)):
                if asked_of(i, refs) == ref:
                    best = np.argsort(-(matrix @ query[i]))[:TOP_K]
                    found[i] = [ids[j] for j in best]
    return found


def _vectors_of(mem: engram.Memory, ref: ResourceRef) -> tuple[list[str], Any]:
    import numpy as np

    ids: list[str] = []
    rows: list[Any] = []
    before: str | None = None
    while True:
        page = mem.facts(ref, limit=1000, before=before)
        held = mem.vectors(ref, [f.id for f in page.facts])
        ids += list(held)
        rows += [np.asarray(v, dtype=np.float32).reshape(-1) for v in held.values()]
        if page.next_before is None:
            break
        before = page.next_before
    matrix = np.stack(rows)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return ids, matrix


def recall_at_10(found: list[list[str]], exact: list[list[str]]) -> float:
    """The share of each question's exact ten that ``found`` holds, averaged."""
    shared = [len(set(a) & set(b)) / TOP_K for a, b in zip(found, exact, strict=True)]
    return round(sum(shared) / len(shared), 4)


# How a PostgreSQL backup is restored: by pg_restore alone, as docs/postgres.md said before
# engram restored PostgreSQL stores, and by engram restore.
PG_RESTORES = ("by_pg_restore_alone", "by_engram_restore")


def restored(target: str, queries: int, targets: Targets) -> dict[str, Any]:
    """The store backed up and restored: a cold process's hybrid recalls on each restore,
    with the time and bytes of each step (see :func:`restored_files` and
    :func:`restored_dump`)."""
    if targets.backend == "postgres":
        return restored_dump(target, queries, targets)
    return restored_files(target, queries)


def restored_dump(target: str, queries: int, targets: Targets) -> dict[str, Any]:
    """The database dumped by ``engram backup``, then restored into a new database once
    each way of :data:`PG_RESTORES` (each rebuilds the scope's graph as it restores):
    whether the restored scope searches it at once, and how fast it answers."""
    from engram.storage.postgres import backup as backups

    tools = postgres_server.bin_dir()
    work = Path(tempfile.mkdtemp(prefix="restored-"))
    try:
        started = time.perf_counter()
        made = backups.backup(target, work / "backups", tools_dir=str(tools))
        dump = made / backups.DUMP_NAME
        out: dict[str, Any] = {
            "backup_s": round(time.perf_counter() - started, 1),
            "backup_bytes": dump.stat().st_size,
            "index_file_bytes": 0,
        }
        for name in PG_RESTORES:
            into = targets.fresh()
            started = time.perf_counter()
            if name == "by_engram_restore":
                backups.restore(made, into, tools_dir=str(tools))
            else:
                command = ["--clean", "--if-exists", "--single-transaction", "-d", into]
                subprocess.run([str(tools / "pg_restore"), *command, str(dump)], check=True)
            restore_s = round(time.perf_counter() - started, 1)
            state = restored_state(into)
            asked = child(into, "hybrid", queries, 1)
            asked.pop("hits")
            out[name] = {"restore_s": restore_s, **state, **asked}
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def restored_state(url: str) -> dict[str, Any]:
    """The graph a restored PostgreSQL scope names, where it is a valid index, and whether
    its facts' table had been analysed (by the restore or by autovacuum) when asked."""
    import psycopg

    with psycopg.connect(url) as conn:
        graph = conn.execute(
            "SELECT s.ann_index FROM scope_state s JOIN pg_class c ON c.relname = s.ann_index "
            "JOIN pg_index i ON i.indexrelid = c.oid WHERE s.scope = %s AND i.indisvalid",
            (REF.key,),
        ).fetchone()
        analysed = conn.execute(
            "SELECT coalesce(last_analyze, last_autoanalyze) IS NOT NULL "
            "FROM pg_stat_user_tables WHERE relname = 'facts'"
        ).fetchone()
    return {"graph": None if graph is None else str(graph[0]), "analysed": bool(analysed[0])}


def restored_files(target: str, queries: int) -> dict[str, Any]:
    """The SQLite store backed up, then restored into new files twice, with the index files
    the backup holds and without (as a backup from before they were kept): the time and
    bytes of each, and a cold process's hybrid recalls on each restored store."""
    from engram.storage import staging
    from engram.storage.sqlite import backup as backups
    from engram.storage.sqlite.index import snapshots

    work = Path(tempfile.mkdtemp(prefix="restored-", dir=Path(target).parent))
    try:
        started = time.perf_counter()
        made = backups.backup(target, work / "backups")
        out: dict[str, Any] = {
            "backup_s": round(time.perf_counter() - started, 1),
            "backup_bytes": sum(p.stat().st_size for p in made.rglob("*") if p.is_file()),
            "index_file_bytes": sum(p.stat().st_size for p in made.glob("vectors/*")),
        }
        for name in ("with_files", "without_files"):
            if name == "without_files":
                manifest = json.loads((made / staging.MANIFEST).read_text())
                del manifest[staging.FILES]
                (made / staging.MANIFEST).write_text(json.dumps(manifest))
                shutil.rmtree(made / snapshots.FOLDER, ignore_errors=True)
            into = work / f"{name}.db"
            started = time.perf_counter()
            backups.restore(made, into)
            restore_s = round(time.perf_counter() - started, 1)
            asked = child(str(into), "hybrid", queries, 1)
            asked.pop("hits")
            out[name] = {"restore_s": restore_s, **asked}
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def child(target: str, mode: str, queries: int, scopes: int) -> dict[str, Any]:
    asks = ["--queries", str(queries), "--scopes", str(scopes)]
    done = subprocess.run(
        [sys.executable, __file__, "--measure", target, "--mode", mode, *asks],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def run(
    backend: str,
    facts: int,
    queries: int,
    store: str | None = None,
    scopes: int = 1,
    settings: tuple[str, ...] = (),
    after: int = 0,
    restore: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "benchmark": "scale",
        "backend": backend,
        "scopes": scopes,
        "environment": environment(),
    }
    if settings:
        out["postgres_settings"] = list(settings)
    with Targets(backend, settings) as targets:
        target = store or targets.fresh()
        out["fill"] = kept(target, facts) if store else fill(target, facts, scopes)
        print(f"fill: {out['fill']}", flush=True)
        measured = {mode: child(target, mode, queries, scopes) for mode in MODES}
        exact = exact_vector_hits(target, queries, scopes)
        out["interleaved"] = child(target, INTERLEAVED, queries, scopes)
        out["filtered"] = child(target, FILTERED, min(queries, 30), scopes)
        out["after_correction"] = child(target, CORRECTED, min(queries, 30), scopes)
        if after:
            out["written_after"] = written_after(target, facts, after, queries)
            hits = child(target, "vector", queries, scopes)["hits"]
            again = exact_vector_hits(target, queries, scopes)
            out["vector_recall_at_10_after"] = recall_at_10(hits, again)
        if restore:
            out["restored"] = restored(target, queries, targets)
    vector_hits = measured["vector"].pop("hits")
    for mode in ("text", "hybrid"):
        measured[mode].pop("hits")
    out["recall"] = measured
    out["vector_recall_at_10"] = recall_at_10(vector_hits, exact)
    slower = max(measured["text"]["warm"]["p50_ms"], measured["vector"]["warm"]["p50_ms"])
    out["hybrid_over_slower_half"] = round(measured["hybrid"]["warm"]["p50_ms"] / slower, 2)
    return out


def report(out: dict[str, Any]) -> str:
    rows = [
        [
            mode,
            m["open_ms"],
            m["first_ms"],
            m["warm"]["p50_ms"],
            m["warm"]["p95_ms"],
            m["again"]["p50_ms"],
            m["again"]["p95_ms"],
            m["peak_rss_mib"],
            m.get("own_mib", ""),
        ]
        for mode, m in out["recall"].items()
    ]
    fill_ = out["fill"]
    index = fill_["vector_index"]
    filled = (
        "filled before (--store)"
        if fill_["seconds"] is None
        else f"filled in {fill_['seconds']} s ({fill_['facts_per_s']:,}/s)"
    )
    head = (
        f"{out['backend']}: {fill_['facts']:,} facts in {out.get('scopes', 1):,} scope(s) "
        f"{filled}, "
        f"{fill_['bytes']:,} bytes ({fill_['bytes_per_fact']} a fact)"
        f"; vector index built in {index['seconds']} s, {index['bytes']:,} bytes "
        f"({fill_['bytes_per_fact_with_index']} a fact with it)"
    )
    based = fill_.get("text_base")
    if based and based["terms"]:  # a scope under the base's size has none
        built = f"built in {based['seconds']} s" if based["built"] else "held already"
        head += (
            f"; text base {built}, {based['terms']:,} terms, "
            f"{based['bytes']:,} bytes in the database"
        )
    tail = (
        f"vector recall@10 against exact: {out['vector_recall_at_10']}; "
        f"hybrid p50 / slower half's p50: {out['hybrid_over_slower_half']}"
    )
    if "interleaved" in out:
        turns = out["interleaved"]
        tail += "\nasked again in turn in one process, p50 ms: " + ", ".join(
            f"{mode} {turns[mode]['p50_ms']}" for mode in MODES
        )
        tail += f"; hybrid over its slower half {turns['hybrid_over_slower_half']}"
    if "filtered" in out:
        kinds = out["filtered"]["hybrid"]
        tail += "\nhybrid under a filter, p50 ms: " + ", ".join(
            f"{name} {times['p50_ms']}" for name, times in kinds.items()
        )
    if "after_correction" in out:
        fixed = out["after_correction"]
        tail += (
            f"\nafter one correction ({fixed['correct_ms']} ms): hybrid first "
            f"{fixed['first_ms']} ms, p50 {fixed['after']['p50_ms']} ms, "
            f"peak RSS {fixed['peak_rss_mib']} MiB; then a forget for good "
            f"{fixed['forget_hard_ms']} ms"
        )
    if "written_after" in out:
        tail += "\nwritten after, each batch's builds waited for, then asked in turn:\n"
        tail += table(
            ["written", "write s", "builds s", "in graphs", "beside", *MODES],
            [[step[k] for k in step] for step in out["written_after"]],
        )
        tail += f"\nvector recall@10 against exact after them: {out['vector_recall_at_10_after']}"
    if "restored" in out:
        back = out["restored"]
        tail += (
            f"\nbacked up in {back['backup_s']} s ({back['backup_bytes']:,} bytes, "
            f"{back['index_file_bytes']:,} of them index files); restored:"
        )
        names = PG_RESTORES if out["backend"] == "postgres" else ("with_files", "without_files")
        for name in names:
            one = back[name]
            graph = ""
            if "graph" in one:
                graph = f", its graph {one['graph'] or 'missing'}, "
                graph += "analysed" if one["analysed"] else "not analysed"
            tail += (
                f"\n  {name.replace('_', ' ')}: in {one['restore_s']} s{graph}, hybrid open "
                f"{one['open_ms']} ms, first {one['first_ms']} ms, p50 {one['warm']['p50_ms']} "
                f"ms, p95 {one['warm']['p95_ms']} ms, peak RSS {one['peak_rss_mib']} MiB"
            )
    heads = ["mode", "open ms", "first ms", "p50 ms", "p95 ms", "again p50", "again p95"]
    body = table([*heads, "peak RSS MiB", "own MiB"], rows)
    return f"{head}\n{body}\n{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--scopes", type=int, default=1, help="spread the facts over this many scopes"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the PostgreSQL server the run starts (repeatable)",
    )
    parser.add_argument(
        "--store", help="a SQLite file to keep: filled on the first run, measured after"
    )
    parser.add_argument(
        "--after", type=int, default=0, help="then this many facts more, written in steps"
    )
    parser.add_argument(
        "--restored",
        action="store_true",
        help="then back the store up and restore it, with its index files and without",
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument(
        "--mode", choices=(*MODES, CORRECTED, INTERLEAVED, FILTERED), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.measure and args.mode == FILTERED:
        print(json.dumps(filtered(args.measure, args.queries, args.scopes)))
        return
    if args.measure and args.mode == INTERLEAVED:
        print(json.dumps(interleaved(args.measure, args.queries, args.scopes)))
        return
    if args.measure and args.mode == CORRECTED:
        print(json.dumps(after_correction(args.measure, args.queries, args.scopes)))
        return
    if args.measure:
        print(json.dumps(measure(args.measure, args.mode, args.queries, args.scopes)))
        return
    if args.store and args.scopes != 1:
        parser.error("--store keeps a store of one scope")
    if args.pg_setting and args.backend != "postgres":
        parser.error("--pg-setting sets the PostgreSQL server's own")
    if args.after and (args.scopes != 1 or args.store):
        parser.error("--after writes to one scope filled by this run")
    if args.restored and args.scopes != 1:
        parser.error("--restored backs up a store of one scope")
    settings = tuple(args.pg_setting)
    out = run(
        args.backend,
        args.facts,
        args.queries,
        args.store,
        args.scopes,
        settings,
        args.after,
        args.restored,
    )
    if args.json:  # first: a run at 1M is half an hour
        write_json(args.json, out)
    print(report(out))


if __name__ == "__main__":
    main()
