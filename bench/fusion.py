#!/usr/bin/env python3
"""What a hybrid recall's fusion takes from each list: LoCoMo dev, studied offline.

For each sample, the conversation is stored as ``bench/locomo.py`` stores it (SQLite,
the local model, ``--context`` neighbours); then, for every question of categories 1-4,
the lists the hybrid fuses are read once through the store (full text and the local
model's vectors, pool 50, and the feedback, speaker and time lists over their
candidates), with more vector lists computed beside them by exact search over the
conversation's turns:

- ``local``: the stored vectors of whole turns (``"{speaker}: {text}"``, the local
  model) and the question as asked: recall before turns were embedded without their
  speakers' labels (the store is made one of whole turns, :func:`whole_turns`);
- ``local-bare``: the turn's words without its speaker's prefix; ``local-bare-nameless``:
  the same, asked with the question without the conversation's speakers' first names;
- ``local+ctx``: the local model's vector of the turn written after its previous turn;
- ``e5``, ``e5-bare``, ``e5+ctx``: the same with the packaged e5 model
  (``engram-durable[e5]``).

Each question's lists and evidence are dumped (``--dump``, a JSON file reused by
``--from``), and fusions are scored offline: recall@10 per category for each
combination of lists, the agreement of the halves (where each question's evidence sits
in each list), and the fused rank of the evidence only the vector half found.

    .venv/bin/python bench/fusion.py /work/shared/data/locomo/locomo-dev.json --dump OUT
    .venv/bin/python bench/fusion.py --from OUT [--json RESULT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from harness import one_line, table, write_json
from locomo import CATEGORIES, Sample, load_samples, store_conversation

import engram
from engram import ResourceRef
from engram.core import query, signals
from engram.core.models import Filters
from engram.core.ports import ModelRecord
from engram.core.ranking import Candidate, fuse
from engram.embedders.packaged import load
from engram.opening import open_store

POOL = 50
K = 10
Lists = dict[str, list[tuple[str, float]]]
VECTORS = ("local", "local-bare", "local-bare-nameless", "local+ctx", "e5", "e5-bare", "e5+ctx")


def dump(dataset: Path, context: int, with_e5: bool) -> dict[str, Any]:
    """Every question's lists, its evidence as fact ids, and each fact's traits."""
    local = load("local")
    e5 = load("e5") if with_e5 else None
    out: dict[str, Any] = {"context": context, "samples": []}
    for sample in load_samples(dataset):
        out["samples"].append(_sample(sample, context, local, e5))
        print(f"{sample.sample_id}: {len(sample.questions)} questions", file=sys.stderr)
    return out


def _sample(sample: Sample, context: int, local: Any, e5: Any) -> dict[str, Any]:
    ref = ResourceRef(sample.sample_id)
    with tempfile.TemporaryDirectory() as tmp:
        whole_turns(f"{tmp}/s.db", local)
        mem = engram.open(f"{tmp}/s.db", embedder=local)
        try:
            stored = store_conversation(mem, ref, sample.turns, context)
            ids = list(stored.covers)
            turn_of = {t.dia_id: t for t in sample.turns}
            texts = [turn_of[min(stored.covers[i])].memory() for i in ids]
            contexts = _with_neighbours(sample, stored.covers, ids)
            extra = _vector_lists(sample, ids, texts, contexts, local, e5)
            questions = []
            store = mem._store  # the study reads the lists recall fuses, before fusion
            scope = ref
            for n, question in enumerate(sample.questions):
                terms = query.terms(question.text)
                vector = local.embed([question.text], "query")[0]

                def read(tx: Any, terms: list[str] = terms, vector: Any = vector) -> Any:
                    lexical, semantic = store.candidates.both(
                        tx, scope, terms, vector, Filters(), POOL
                    )
                    pooled = dict.fromkeys([c.id for c in lexical] + [c.id for c in semantic])
                    traits = store.facts.traits(tx, scope, list(pooled))
                    return lexical, semantic, traits

                lexical, semantic, traits = store.run(read, write=False)
                named = _named_more(question.text, terms, lexical, traits)
                lists: Lists = {
                    "text": [(c.id, c.score) for c in lexical],
                    "local": [(c.id, c.score) for c in semantic],
                    **{k: [(c.id, c.score) for c in v] for k, v in named.items()},
                    **{k: v[n] for k, v in extra.items()},
                }
                wanted = set(question.evidence)
                questions.append(
                    {
                        "text": question.text,
                        "category": question.category,
                        "evidence": sorted(i for i in ids if stored.covers[i] & wanted),
                        "n_evidence": len(wanted),
                        "covers": {
                            i: sorted(stored.covers[i] & wanted)
                            for i in ids
                            if stored.covers[i] & wanted
                        },
                        "lists": lists,
                    }
                )
        finally:
            mem.close()
    turns = {fid: min(stored.covers[fid]) for fid in ids}
    return {"sample": sample.sample_id, "turns": turns, "questions": questions}


def whole_turns(path: str, model: Any) -> None:
    """Makes ``path`` a store whose vectors read whole turns, as every store's did before
    turns were embedded without their speakers' labels (:mod:`engram.core.spoken`): the
    study's ``local`` list and its question as asked are that baseline."""
    store = open_store(path)
    try:
        store.run(lambda tx: store.models.put(tx, ModelRecord(model.model, model.dimension)))
    finally:
        store.close()


def _named_more(
    question: str, terms: list[str], lexical: list[Candidate], traits: Any
) -> dict[str, list[Candidate]]:
    """The signal lists by name (``signals.lists`` drops the empty ones)."""
    return {
        "feedback": signals._feedback(terms, lexical, traits),
        "speaker": signals.by_speaker(question, traits),
        "time": signals.by_time(question, traits),
    }


def _with_neighbours(
    sample: Sample, covers: dict[str, frozenset[str]], ids: Sequence[str]
) -> list[str]:
    """Each fact's turn after its session's previous turn (the turn in its context)."""
    order = {t.dia_id: n for n, t in enumerate(sample.turns)}
    out = []
    for fid in ids:
        first = min(covers[fid], key=order.__getitem__)
        n = order[first]
        turn = sample.turns[n]
        before = sample.turns[n - 1] if n > 0 else None
        same = before is not None and before.dia_id.split(":")[0] == turn.dia_id.split(":")[0]
        out.append((before.memory() + "\n" if same and before else "") + turn.memory())
    return out


def _vector_lists(
    sample: Sample,
    ids: list[str],
    texts: list[str],
    contexts: list[str],
    local: Any,
    e5: Any,
) -> dict[str, list[list[tuple[str, float]]]]:
    """Each variant's top ``POOL`` per question: a model, what a memory's vector reads
    (the turn as stored, the turn without its speaker's prefix, the turn after its
    previous turn) and what the question's reads (as asked, or without the speakers'
    names, which the speaker list reads)."""
    asked = [q.text for q in sample.questions]
    speakers = {t.speaker.split()[0] for t in sample.turns}
    nameless = [_without(q, speakers) for q in asked]
    bare = [_bare(t) for t in texts]
    variants: list[tuple[str, Any, list[str], list[str]]] = [
        ("local-bare", local, bare, asked),
        ("local-bare-nameless", local, bare, nameless),
        ("local+ctx", local, contexts, asked),
    ]
    if e5 is not None:
        variants += [
            ("e5", e5, texts, asked),
            ("e5-bare", e5, bare, asked),
            ("e5+ctx", e5, contexts, asked),
        ]
    out: dict[str, list[list[tuple[str, float]]]] = {}
    passages: dict[tuple[int, int], np.ndarray] = {}
    for name, model, memories, questions in variants:
        key = (id(model), id(memories))
        if key not in passages:
            passages[key] = np.asarray(model.embed(memories, "passage"), dtype=np.float32)
        q = np.asarray(model.embed(questions, "query"), dtype=np.float32)
        out[name] = [_top(ids, row) for row in q @ passages[key].T]
    return out


def _bare(memory: str) -> str:
    """A turn's words without its ``"{speaker}: "`` prefix."""
    return memory.partition(": ")[2] or memory


def _without(question: str, names: set[str]) -> str:
    words = [w for w in question.split() if w.strip("'s?,.!").removesuffix("'s") not in names]
    return " ".join(words) or question


def _top(ids: list[str], row: np.ndarray) -> list[tuple[str, float]]:
    best = np.argsort(-row, kind="stable")[:POOL]
    return [(ids[i], float(row[i])) for i in best]


# -- offline ---------------------------------------------------------------------------
Fusion = Callable[[Lists], list[str]]


def by_score(names: Sequence[str], signals_too: bool = True) -> Fusion:
    """The recall's own fusion over the named lists (the signals over the candidates of
    the named lists, as recall scores them)."""

    def fused(lists: Lists) -> list[str]:
        halves = [[Candidate(i, s) for i, s in lists[n]] for n in names]
        pooled = {c.id for half in halves for c in half}
        more = []
        if signals_too:
            for name in ("feedback", "speaker", "time"):
                kept = [Candidate(i, s) for i, s in lists.get(name, []) if i in pooled]
                if kept:
                    more.append(kept)
        text = halves[0] if names[0] == "text" else []
        rest = halves[1:] if names[0] == "text" else halves
        return [f.id for f in fuse(text, [], [*rest, *more])]

    return fused


def recall_at(question: dict[str, Any], ranked: Sequence[str], k: int = K) -> float:
    covers = question["covers"]
    found: set[str] = set()
    for fid in ranked[:k]:
        found.update(covers.get(fid, ()))
    return len(found) / question["n_evidence"]


def scored(data: dict[str, Any], fusion: Fusion) -> dict[str, float]:
    by: dict[str, list[float]] = defaultdict(list)
    for sample in data["samples"]:
        for q in sample["questions"]:
            if not q["n_evidence"]:
                continue
            r = recall_at(q, fusion(q["lists"]))
            by["all"].append(r)
            by[CATEGORIES[q["category"]]].append(r)
    return {name: round(sum(v) / len(v), 4) for name, v in by.items()}


def agreement(data: dict[str, Any], vector: str) -> dict[str, Any]:
    """Where the evidence sits: in the text list's top 10, the vector list's top 10,
    both, or neither; and, for evidence only the vector's top 10 holds, its rank in the
    fused order (text + that vector list + signals)."""
    cells: dict[str, int] = defaultdict(int)
    fused_ranks: list[int] = []
    fusion = by_score(["text", vector])
    for sample in data["samples"]:
        for q in sample["questions"]:
            text = [i for i, _ in q["lists"]["text"][:K]]
            vec = [i for i, _ in q["lists"][vector][:K]]
            order = fusion(q["lists"])
            for fid in q["evidence"]:
                where = ("T" if fid in text else "-") + ("V" if fid in vec else "-")
                cells[where] += 1
                if where == "-V":
                    fused_ranks.append(order.index(fid) + 1 if fid in order else 999)
    ranks = sorted(fused_ranks)
    return {
        "evidence_facts": dict(cells),
        "vector_only_fused_rank": {
            "n": len(ranks),
            "in_top_10": sum(1 for r in ranks if r <= K),
            "median": ranks[len(ranks) // 2] if ranks else None,
        },
    }


def study(data: dict[str, Any]) -> dict[str, Any]:
    vectors = [n for n in VECTORS if _has(data, n)]
    rows: dict[str, dict[str, float]] = {}
    rows["text alone"] = scored(data, by_score(["text"], signals_too=False))
    for v in vectors:
        rows[f"{v} alone"] = scored(data, lambda lists, v=v: [i for i, _ in lists[v]])
    rows["text + local (before)"] = scored(data, by_score(["text", "local"]))
    for v in vectors[1:]:
        rows[f"text + {v}"] = scored(data, by_score(["text", v]))
        rows[f"text + local + {v}"] = scored(data, by_score(["text", "local", v]))
    return {
        "recall@10": rows,
        "agreement": {v: agreement(data, v) for v in vectors},
    }


def _has(data: dict[str, Any], name: str) -> bool:
    return name in data["samples"][0]["questions"][0]["lists"]


def report(result: dict[str, Any]) -> str:
    cats = ["all", *CATEGORIES.values()]
    rows = [[name, *(r.get(c) for c in cats)] for name, r in result["recall@10"].items()]
    text = table(["lists", *cats], rows)
    lines = [text, ""]
    for v, a in result["agreement"].items():
        lines.append(
            f"{v}: evidence facts by list (T text top 10, V vector top 10) "
            f"{a['evidence_facts']}; vector-only {a['vector_only_fused_rank']}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", type=Path, nargs="?")
    parser.add_argument("--context", type=int, default=1)
    parser.add_argument("--dump", type=Path, help="write every question's lists here")
    parser.add_argument("--from", type=Path, dest="source", help="study a dump")
    parser.add_argument("--no-e5", action="store_true")
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args(argv)
    if args.source:
        data = json.loads(args.source.read_text())
    else:
        if args.path is None:
            parser.error("give a dataset, or --from a dump")
        data = dump(args.path, args.context, not args.no_e5)
        if args.dump:
            args.dump.write_text(json.dumps(data))
    result = study(data)
    if args.out:
        write_json(args.out, result)
    print(report(result))
    print(one_line({k: v["all"] for k, v in result["recall@10"].items()}))


if __name__ == "__main__":
    main()
