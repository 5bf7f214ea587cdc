#!/usr/bin/env python3
"""The service's own cost per write: core-ms a request spends in the service when no
model runs (``bench/hashing_service.py``: the service's app over a store whose embedder
hashes words), for ``POST facts`` (one fact a request) and, as the floor of a request and
a durable write, ``PUT memory/{key}``; each round as `engram serve` runs uvicorn (its C
HTTP parser and uvloop where installed) and with uvicorn's pure-Python parser and asyncio's
loop ("plain"), in alternating order. With ``--against SRC`` (another checkout's ``src``,
e.g. a `git worktree` of an earlier commit) the second side is that code, served as now:
a change's cost measured in one sitting.

Every core-ms the request path spends is one the embedder cannot: with the local model a
fact costs its embedding (about 4-5 core-ms) plus this.

    .venv/bin/python bench/write_cost.py [--writers 16] [--seconds 8] [--rounds 3] [--json OUT]
    .venv/bin/python bench/write_cost.py --against /tmp/before/src   # this code against that
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import sentences
from harness import environment, one_line, table, write_json
from service import answering, free_port
from writers import accounted, posting_facts

HERE = Path(__file__).resolve().parent

SEED = 20261203


def start(
    db_path: Path, port: int, plain: bool, against: Path | None = None
) -> subprocess.Popen[bytes]:
    """The hashing service on ``db_path`` and ``port`` (``plain``: uvicorn's pure-Python
    parser and loop, or with ``against`` that code served as now); returns once it
    answers /healthz."""
    env = {**os.environ, "ENGRAM_DB_PATH": str(db_path), "ENGRAM_PORT": str(port)}
    env["BENCH_UVICORN"] = "plain" if plain and against is None else "auto"
    if plain and against is not None:
        env["PYTHONPATH"] = str(against)  # ahead of this checkout's installed src
    proc = subprocess.Popen([sys.executable, str(HERE / "hashing_service.py")], env=env)
    return answering(proc, port)


def one_round(
    texts: list[str], offset: itertools.count[int], args: argparse.Namespace, plain: bool
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="engram-write-cost-") as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start(Path(tmp) / "service.db", port, plain, args.against)
        try:
            base, facts = posting_facts(proc, url, texts, offset, args)
            memory = accounted(
                proc, lambda c, i: c.put(f"{base}/memory/k{i}", json={"value": i}), args
            )
            stored = httpx.get(f"{base}/health").json()["facts"]["live"]
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    assert stored == facts["requests"], (stored, facts["requests"])  # each acknowledged, once
    return {"post_facts": facts, "put_memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, dest="out")
    parser.add_argument(
        "--against", type=Path, help="another checkout's src, served as the second side"
    )
    args = parser.parse_args()
    texts = sentences.unique_sentences(400_000, SEED)
    offset = itertools.count()
    rounds = []
    for turn in range(args.rounds):  # the order alternates, so a busy neighbour slows both
        order = ("served", "plain") if turn % 2 == 0 else ("plain", "served")
        rounds.append({way: one_round(texts, offset, args, way == "plain") for way in order})
    median = {
        f"{way}_{kind}_{what}": statistics.median(r[way][kind][what] for r in rounds)
        for way in ("served", "plain")
        for kind in ("post_facts", "put_memory")
        for what in ("server_core_ms_per_request", "requests_per_s", "p50_ms")
    }
    result = {
        "benchmark": "write_cost",
        "writers": args.writers,
        "seconds_per_run": args.seconds,
        "second_side": "plain uvicorn" if args.against is None else f"code at {args.against}",
        "environment": environment(),
        "rounds": rounds,
        "median": median,
    }
    if args.out:  # first: the figures outlive a failed print
        write_json(args.out, result)
    shown = {"served": "served", "plain": "plain"}
    if args.against is not None:
        shown = {"served": "this code", "plain": "against"}
    rows = [
        [
            n,
            shown[way],
            kind,
            r[way][kind]["requests_per_s"],
            r[way][kind]["p50_ms"],
            r[way][kind]["server_core_ms_per_request"],
            r[way][kind]["client_core_ms_per_request"],
        ]
        for n, r in enumerate(rounds, 1)
        for way in ("served", "plain")
        for kind in ("post_facts", "put_memory")
    ]
    side = "uvicorn" if args.against is None else "code"
    heads = ["round", side, "request", "requests/s", "p50 ms", "service core-ms"]
    print(table([*heads, "client core-ms"], rows))
    print(one_line({"benchmark": "write_cost", "median": median}))


if __name__ == "__main__":
    main()
