#!/usr/bin/env python3
"""Single writers against the embedder's own batch speed: what coalescing buys the service.

In one run, on the same texts (``bench/sentences.py``'s, all distinct):

1. the embedder alone: ``LocalEmbedder.embed`` on a list of them (sorted by tokens, runs
   of 16), in this process, with the service stopped: sentences/s;
2. `engram serve` (SQLite, the local model, as `make run` starts it) on a fresh store,
   driven from this process by ``--writers`` client threads, each posting one fact per
   request (``POST /agents/{id}/facts``) for ``--seconds``, with
   ``ENGRAM_COALESCE_EMBEDDINGS`` true and false in turn.

Rounds alternate the order of the variants, so a busy neighbour slows them alike; the
table gives each round and the median, and the ratio of the service's facts/s to the
embedder's sentences/s measured in the same round.

    .venv/bin/python bench/writers.py [--writers 16] [--seconds 8] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import sentences
from harness import environment, one_line, table, write_json
from service import drive, free_port, start

from engram.embedders.local import LocalEmbedder

SEED = 20250115
EMBEDDER_TEXTS = 2_000


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of process ``pid``, or of this one, all its threads."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def embedder_alone(embedder: LocalEmbedder, texts: list[str]) -> dict[str, Any]:
    """``embed`` on the whole list at once, as ``remember_many`` calls it."""
    cpu, started = cpu_seconds(), time.perf_counter()
    embedder.embed(texts, "passage")
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    return {
        "texts": len(texts),
        "seconds": round(seconds, 2),
        "per_s": round(len(texts) / seconds, 1),
        "core_ms_per_text": round(cpu * 1000 / len(texts), 2),
    }


def accounted(
    proc: subprocess.Popen[bytes],
    call: Callable[[httpx.Client, int], httpx.Response],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """``drive`` with the CPU time it cost the service and this process, per request."""
    server, client = cpu_seconds(proc.pid), cpu_seconds()
    result = drive(call, args.seconds, args.writers)
    server, client = cpu_seconds(proc.pid) - server, cpu_seconds() - client
    per = 1000 / max(result["requests"], 1)
    result["server_core_ms_per_request"] = round(server * per, 2)
    result["client_core_ms_per_request"] = round(client * per, 2)
    return result


def posting_facts(
    proc: subprocess.Popen[bytes],
    url: str,
    texts: list[str],
    offset: itertools.count[int],
    args: argparse.Namespace,
) -> tuple[str, dict[str, Any]]:
    """A new agent's URL, and ``accounted`` of posting one fact a request to it."""
    agent = httpx.post(f"{url}/agents", json={"name": "bench"}).json()["id"]
    base = f"{url}/agents/{agent}"

    def post(client: httpx.Client, _: int) -> httpx.Response:
        return client.post(f"{base}/facts", json={"content": texts[next(offset)]})

    return base, accounted(proc, post, args)


def service_writes(
    texts: list[str], offset: itertools.count[int], coalesce: bool, args: argparse.Namespace
) -> dict[str, Any]:
    """``--writers`` threads posting one fact each per request, for ``--seconds``."""
    with tempfile.TemporaryDirectory(prefix="engram-writers-") as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start(
            Path(tmp) / "service.db", port, ENGRAM_COALESCE_EMBEDDINGS=str(coalesce).lower()
        )
        try:
            base, result = posting_facts(proc, url, texts, offset, args)
            health = httpx.get(f"{base}/health").json()
            result["facts_stored"] = health["facts"]["live"]  # each acknowledged one, once
            if coalesce:  # the same writers with no model: HTTP and a durable write alone
                result["put_memory"] = accounted(
                    proc, lambda c, i: c.put(f"{base}/memory/k{i}", json={"value": i}), args
                )
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    texts = sentences.unique_sentences(200_000, SEED)
    embedder = LocalEmbedder()
    embedder.embed(texts[-64:], "passage")  # load and warm up
    offset = itertools.count()  # every request a text no run has written
    rounds = []
    for turn in range(args.rounds):
        batch = embedder_alone(embedder, texts[:EMBEDDER_TEXTS])
        order = (True, False) if turn % 2 == 0 else (False, True)
        runs = {
            coalesce: service_writes(texts[EMBEDDER_TEXTS:], offset, coalesce, args)
            for coalesce in order
        }
        rounds.append(
            {
                "embedder_batch": batch,
                "coalescing_on": runs[True],
                "coalescing_off": runs[False],
                "ratio_on": round(runs[True]["requests_per_s"] / batch["per_s"], 3),
                "ratio_off": round(runs[False]["requests_per_s"] / batch["per_s"], 3),
            }
        )
    return {
        "benchmark": "writers",
        "writers": args.writers,
        "seconds_per_run": args.seconds,
        "environment": environment(),
        "rounds": rounds,
        "median": {
            key: statistics.median(r[key] for r in rounds) for key in ("ratio_on", "ratio_off")
        }
        | {
            "embedder_batch_per_s": statistics.median(r["embedder_batch"]["per_s"] for r in rounds),
            "on_facts_per_s": statistics.median(
                r["coalescing_on"]["requests_per_s"] for r in rounds
            ),
            "off_facts_per_s": statistics.median(
                r["coalescing_off"]["requests_per_s"] for r in rounds
            ),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args()
    result = run(args)
    rows = []
    for number, r in enumerate(result["rounds"], 1):
        on, off = r["coalescing_on"], r["coalescing_off"]
        rows.append(
            [
                number,
                r["embedder_batch"]["per_s"],
                f"{on['requests_per_s']} ({on['p50_ms']} / {on['p99_ms']})",
                f"{off['requests_per_s']} ({off['p50_ms']} / {off['p99_ms']})",
                r["ratio_on"],
                r["ratio_off"],
                on["failures"] + off["failures"],
            ]
        )
    headers = [
        "round",
        "embedder batch sentences/s",
        "coalescing on facts/s (p50 / p99 ms)",
        "off facts/s (p50 / p99 ms)",
        "on / batch",
        "off / batch",
        "failures",
    ]
    print(table(headers, rows))
    if args.out:
        write_json(args.out, result)
    print(one_line({"benchmark": "writers", "median": result["median"]}))


if __name__ == "__main__":
    main()
