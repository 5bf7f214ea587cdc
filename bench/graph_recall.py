#!/usr/bin/env python3
"""LoCoMo dev: does recall gain from the graph? Measured, not offered (BENCHMARKS.md).

Each question's entities (the names the rules find in it that the scope knows) lead to
the facts that mention them, each fact scored by the summed IDF of the question's
entities it mentions (log(1 + facts / facts mentioning the entity)); the best 50 are
fused as one more list beside recall's own, over the candidates only (``pool``) or over
the whole scope (``scope``), against recall as it is (``none``). Recall@10 per category.

    .venv/bin/python bench/graph_recall.py /work/shared/data/locomo/locomo-dev.json [--context 1]
"""

import argparse
import math
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import locomo
from harness import table

import engram
from engram import ResourceRef
from engram.core import signals
from engram.core.graph.extraction import read
from engram.core.ranking import Candidate

Lists = Callable[..., list[Any]]
VARIANTS = ("none", "pool", "scope")


def question_entities(store: Any, tx: Any, ref: ResourceRef, question: str) -> set[str]:
    """The scope's entities the question names."""
    reading = read(question)
    known = store.graph.named(tx, ref, sorted(reading.lookups))
    return {known[m.name] for m in reading.mentions(known) if m.name in known}


def graph_list(
    store: Any, tx: Any, ref: ResourceRef, total: int, question: str, pool: Mapping[str, Any] | None
) -> list[Candidate]:
    """The facts mentioning the question's entities, by summed IDF, best 50 (only those
    in ``pool`` when given)."""
    score: dict[str, float] = defaultdict(float)
    for entity in question_entities(store, tx, ref, question):
        facts = {m.fact_id for m in store.graph.mentions(tx, ref, entities=[entity])}
        weight = math.log(1 + total / max(1, len(facts)))
        for fact_id in facts:
            score[fact_id] += weight
    found = [Candidate(f, v) for f, v in score.items() if pool is None or f in pool]
    found.sort(key=lambda c: (-c.score, c.id))
    return found[:50]


def with_graph(base: Lists, variant: str, state: dict[str, Any]) -> Lists:
    def lists(
        question: str,
        terms: Sequence[str],
        text: Sequence[Candidate],
        traits: Mapping[str, Any],
        *more: Any,
    ) -> list[Any]:
        found = base(question, terms, text, traits, *more)  # what else recall passes
        if variant == "none":
            return found
        pool = traits if variant == "pool" else None
        extra = graph_list(
            state["store"], state["tx"], state["ref"], state["total"], question, pool
        )
        return [*found, extra] if extra else found

    return lists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("path", type=Path)
    parser.add_argument("--context", type=int, default=0)
    args = parser.parse_args()
    results: dict[str, dict[int, list[float]]] = {v: defaultdict(list) for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        for sample in locomo.load_samples(args.path):
            with engram.open(Path(tmp) / f"{sample.sample_id}.db") as mem:
                run_sample(mem, sample, args.context, results)
    names = {0: "all (1-4)", **locomo.CATEGORIES}
    rows = [
        [variant, *(f"{sum(v) / len(v):.4f}" for _, v in sorted(per.items()))]
        for variant, per in results.items()
    ]
    print(table(["graph list", *(names[c] for c in sorted(results["none"]))], rows))


def run_sample(
    mem: engram.Memory, sample: Any, context: int, results: dict[str, dict[int, list[float]]]
) -> None:
    ref = ResourceRef(sample.sample_id)
    stored = locomo.store_conversation(mem, ref, sample.turns, context)
    store: Any = mem._store
    state: dict[str, Any] = {"store": store, "ref": ref}
    state["total"] = store.run(lambda tx: store.facts.count(tx, ref), write=False)
    real = store.run

    def run(work: Any, write: bool = True, lock: Any = ()) -> Any:
        def seen(tx: Any) -> Any:
            state["tx"] = tx  # the recall's own snapshot
            return work(tx)

        return real(seen, write=write, lock=lock)

    store.run = run
    base: Lists = signals.lists
    try:
        for variant in VARIANTS:
            signals.lists = with_graph(base, variant, state)
            for q in sample.questions:
                if not q.evidence:
                    continue
                hits = mem.recall(ref, q.text, top_k=10)
                ranked = [stored.covers[h.fact.id] for h in hits]
                found = locomo.score(ranked, q.evidence, stored)["recall@10"]
                results[variant][q.category].append(found)
                results[variant][0].append(found)
    finally:
        signals.lists = base


if __name__ == "__main__":
    main()
