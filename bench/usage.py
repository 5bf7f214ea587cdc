#!/usr/bin/env python3
"""How well does the usage detector tell which injected facts a response used?

Scores :func:`engram.core.usage.detect` on the hand-labelled fixture
(``tests/fixtures/feedback.jsonl``: each case the facts injected, a response, the ids it
used) without an embedder and with the packaged local model. Each (case, fact) is one
decision; "used" is the positive class. Prints and writes precision, recall and F1 of
"used" overall, by category of case, and by the rule that said "used" (its precision, and
how many of the gold uses it found), plus the time a call takes; then again with the
two checks (a different figure, the opposite polarity) switched off, to show what they
buy.

    .venv/bin/python bench/usage.py
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from harness import RESULTS_DIR, environment, table, write_json

from engram.core import usage
from engram.core.ports import Embedder
from engram.core.records import Injected
from engram.core.usage import detect
from engram.embedders.local import LocalEmbedder

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "feedback.jsonl"


def prf(tp: int, fp: int, fn: int) -> dict[str, float | int]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(f1, 3),
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def score(cases: list[dict[str, Any]], embedder: Embedder | None) -> dict[str, Any]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    misses, took = [], []
    for case in cases:
        facts = [Injected(f["id"], f["text"]) for f in case["facts"]]
        start = time.perf_counter()
        signals = detect(facts, case["response"], embedder=embedder)
        took.append((time.perf_counter() - start) * 1000)
        for s in signals:
            gold, said = s.fact_id in case["used"], s.signal == "used"
            kind = "tp" if gold and said else "fp" if said else "fn" if gold else "tn"
            for key in ("all", case["category"]):
                counts[key][kind] += 1
            if said:
                reasons[s.reason]["tp" if gold else "fp"] += 1
            if gold != said:
                misses.append(
                    {
                        "case": case["id"],
                        "fact": s.fact_id,
                        "gold": gold,
                        "reason": s.reason,
                        "score": s.score,
                    }
                )
    took.sort()
    return {
        "decisions": sum(counts["all"].values()),
        "by_category": {k: prf(c["tp"], c["fp"], c["fn"]) for k, c in sorted(counts.items())},
        "by_rule": {
            k: {"precision": round(c["tp"] / (c["tp"] + c["fp"]), 3), **c}
            for k, c in sorted(reasons.items())
        },
        "misses": misses,
        "ms_per_call_p50": round(took[len(took) // 2], 3),
    }


def unchecked(cases: list[dict[str, Any]], embedder: Embedder | None) -> dict[str, Any]:
    """The score with the two checks off (a different figure, the opposite polarity):
    what they buy."""
    figure, agrees = usage._other_figure, usage.agrees
    usage._other_figure, usage.agrees = (lambda *_: False), (lambda *_: True)
    try:
        return score(cases, embedder)
    finally:
        usage._other_figure, usage.agrees = figure, agrees


def main() -> None:
    cases = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    results = {"environment": environment(), "cases": len(cases)}
    local = LocalEmbedder()
    for name, embedder, checks in (
        ("terms", None, True),
        ("local", local, True),
        ("terms-without-checks", None, False),
        ("local-without-checks", local, False),
    ):
        got = score(cases, embedder) if checks else unchecked(cases, embedder)
        results[name] = got
        print(f"\n{name}: {got['decisions']} decisions, {got['ms_per_call_p50']} ms a call")
        print(
            table(
                ["category", "P", "R", "F1", "tp", "fp", "fn"],
                [
                    [k, v["precision"], v["recall"], v["f1"], v["tp"], v["fp"], v["fn"]]
                    for k, v in got["by_category"].items()
                ],
            )
        )
        print(
            table(
                ["rule", "precision", "tp", "fp"],
                [
                    [k, v["precision"], v.get("tp", 0), v.get("fp", 0)]
                    for k, v in got["by_rule"].items()
                ],
            )
        )
    write_json(RESULTS_DIR / "usage.json", results)


if __name__ == "__main__":
    main()
