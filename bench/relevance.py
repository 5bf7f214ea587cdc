#!/usr/bin/env python3
"""Does one relevance threshold tell a related fact from an unrelated one, for any query?

On the LoCoMo dev split (each conversation in its own store, turns with one neighbouring
turn as context, the local model):
- **related** pairs: each question (categories 1-4) with each fact holding its evidence;
- **unrelated** pairs: each question with the best hit it gets from *another*
  conversation's store (the hardest unrelated fact recall offers for it).

For the fused score (what recall ordered by before) and for the relevance and its parts,
it prints the area under the ROC curve (the chance that a related pair scores above an
unrelated one) and the best single threshold with its accuracy. It also asks a store
holding one fact a related and an unrelated question: the fused score cannot tell them
apart, the relevance can.

    .venv/bin/python bench/relevance.py /work/shared/data/locomo/locomo-dev.json
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from harness import RESULTS_DIR, environment, table, write_json
from locomo import load_samples, store_conversation

import engram
from engram import ResourceRef
from engram.core import query, relevance
from engram.embedders.local import LocalEmbedder


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a related pair scores above an unrelated one), ties counting half."""
    pos, neg = np.asarray(positive), np.asarray(negative)
    above = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(above / (len(pos) * len(neg)))


def best_threshold(positive: Sequence[float], negative: Sequence[float]) -> tuple[float, float]:
    """The threshold with the best balanced accuracy, and that accuracy."""
    best = (0.0, 0.0)
    for cut in sorted({*positive, *negative}):
        kept = sum(p >= cut for p in positive) / len(positive)
        dropped = sum(n < cut for n in negative) / len(negative)
        accuracy = (kept + dropped) / 2
        if accuracy > best[1]:
            best = (cut, accuracy)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    args = parser.parse_args()
    samples = load_samples(args.dataset)
    embedder = LocalEmbedder()
    signals: dict[str, dict[str, list[float]]] = {
        name: {"related": [], "unrelated": []}
        for name in ("fused score", "relevance", "lexical", "semantic", "max", "mean")
    }
    with tempfile.TemporaryDirectory() as tmp:
        mem = engram.open(Path(tmp) / "relevance.db", embedder=embedder)
        refs = [ResourceRef(s.sample_id) for s in samples]
        facts_of: list[dict[str, Any]] = []
        for sample, ref in zip(samples, refs, strict=True):
            stored = store_conversation(mem, ref, sample.turns, 1)
            by_turn = {t: fid for fid, ids in stored.covers.items() for t in ids}
            facts_of.append(by_turn)
        for n, (sample, ref) in enumerate(zip(samples, refs, strict=True)):
            other = refs[(n + 1) % len(refs)]
            for question in sample.questions:
                q_vec = embedder.embed([question.text], "query")[0]
                terms = query.terms(question.text)
                evidence = {facts_of[n][d] for d in question.evidence if d in facts_of[n]}
                scores = {h.fact.id: h.score for h in mem.recall(ref, question.text, top_k=50)}
                for fact_id in evidence:
                    fact = mem.fact(ref, fact_id)
                    cosine = float(embedder.embed([fact.content], "passage")[0] @ q_vec)
                    text = f"{fact.content}\n{fact.context or ''}"
                    _add(signals, "related", relevance.lexical(terms, text), cosine)
                    signals["fused score"]["related"].append(scores.get(fact_id, 0.0))
                miss = mem.recall(other, question.text, top_k=1)
                if miss:
                    fact = miss[0].fact
                    cosine = float(embedder.embed([fact.content], "passage")[0] @ q_vec)
                    text = f"{fact.content}\n{fact.context or ''}"
                    _add(signals, "unrelated", relevance.lexical(terms, text), cosine)
                    signals["fused score"]["unrelated"].append(miss[0].score)
        single = ResourceRef("single")
        mem.remember(single, "Caroline adopted a rescue dog named Oscar last spring")
        alone = {
            question: mem.recall(single, question, top_k=1)[0]
            for question in ("What pet did Caroline adopt?", "Which city hosts the jazz festival?")
        }
        mem.close()
    rows, figures = [], {}
    for name, pairs in signals.items():
        area = auc(pairs["related"], pairs["unrelated"])
        cut, accuracy = best_threshold(pairs["related"], pairs["unrelated"])
        figures[name] = {
            "auc": round(area, 4),
            "threshold": round(cut, 4),
            "balanced_accuracy": round(accuracy, 4),
            "related": len(pairs["related"]),
            "unrelated": len(pairs["unrelated"]),
        }
        rows.append([name, f"{area:.3f}", f"{cut:.3f}", f"{accuracy:.3f}"])
    print(table(["signal", "AUC", "best threshold", "balanced accuracy"], rows))
    print()
    for question, hit in alone.items():
        print(
            f"one stored fact, {question!r}: score {hit.score:.3f}, relevance {hit.relevance:.3f}"
        )
    write_json(
        RESULTS_DIR / "relevance.json",
        {
            "environment": environment(),
            "signals": figures,
            "single_fact": {
                q: {"score": h.score, "relevance": h.relevance} for q, h in alone.items()
            },
        },
    )


def _add(
    signals: dict[str, dict[str, list[float]]], side: str, share: float, cosine: float
) -> None:
    semantic = min(1.0, max(0.0, cosine))
    signals["relevance"][side].append(relevance.combined(share, cosine))
    signals["lexical"][side].append(share)
    signals["semantic"][side].append(semantic)
    signals["max"][side].append(max(share, semantic))
    signals["mean"][side].append((share + semantic) / 2)


if __name__ == "__main__":
    main()
