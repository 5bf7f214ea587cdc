#!/usr/bin/env python3
"""Requests/s and latency of the HTTP service under load from a second process.

Starts `engram serve` (the embedded default: SQLite + the local model) on a free
loopback port with a fresh store, then drives each route for a fixed time from this
process with a few client threads, one route at a time:

    PUT  /agents/{id}/memory/{key}     GET /agents/{id}/memory/{key}
    POST /agents/{id}/facts            GET /agents/{id}/facts?query=…&topK=5

    .venv/bin/python bench/service.py [--seconds 8] [--clients 4] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import sentences
from harness import environment, one_line, percentile, table, write_json

ENGRAM = str(Path(sys.executable).parent / "engram")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(db_path: Path, port: int, **settings: str) -> subprocess.Popen[bytes]:
    """`engram serve` on ``db_path`` and ``port``, with ``settings`` as ENGRAM_… variables
    beside them; returns once it answers /healthz."""
    env = {**os.environ, **settings, "ENGRAM_DB_PATH": str(db_path), "ENGRAM_PORT": str(port)}
    proc = subprocess.Popen([ENGRAM, "serve"], env=env, stderr=subprocess.DEVNULL)
    return answering(proc, port)


def answering(proc: subprocess.Popen[bytes], port: int) -> subprocess.Popen[bytes]:
    """``proc`` once it answers /healthz on ``port`` (killed if it does not within two
    minutes: the local model loads first)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the service did not start")


def drive(
    call: Callable[[httpx.Client, int], httpx.Response], seconds: float, clients: int
) -> dict[str, Any]:
    """Runs ``call`` from ``clients`` threads for ``seconds``; every answer must succeed."""
    counter = itertools.count()
    samples: list[float] = []
    failures: list[int] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker() -> None:
        mine: list[float] = []
        with httpx.Client(timeout=30) as client:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                answer = call(client, next(counter))
                mine.append((time.perf_counter() - started) * 1000)
                if not answer.is_success:
                    failures.append(answer.status_code)
        with lock:
            samples.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - began
    return {
        "requests": len(samples),
        "failures": len(failures),
        "requests_per_s": round(len(samples) / wall, 1),
        "p50_ms": round(percentile(samples, 50), 2),
        "p99_ms": round(percentile(samples, 99), 2),
    }


def run(seconds: float, clients: int) -> dict[str, Any]:
    facts = sentences.unique_sentences(200_000, 7)
    questions = sentences.questions(1000, 8)
    with tempfile.TemporaryDirectory(prefix="engram-service-") as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start(Path(tmp) / "service.db", port)
        try:
            agent = httpx.post(f"{url}/agents", json={"name": "bench"}).json()["id"]
            base = f"{url}/agents/{agent}"
            results = {
                "PUT memory/{key}": drive(
                    lambda c, i: c.put(
                        f"{base}/memory/k{i}", json={"value": {"step": i, "note": "x" * 64}}
                    ),
                    seconds,
                    clients,
                )
            }
            written = results["PUT memory/{key}"]["requests"]  # GET reads only keys that exist
            routes: dict[str, Callable[[httpx.Client, int], httpx.Response]] = {
                "GET memory/{key}": lambda c, i: c.get(f"{base}/memory/k{i % written}"),
                "POST facts": lambda c, i: c.post(f"{base}/facts", json={"content": facts[i]}),
                "GET facts?query=": lambda c, i: c.get(
                    f"{base}/facts", params={"query": questions[i % 1000], "topK": 5}
                ),
            }
            results |= {name: drive(call, seconds, clients) for name, call in routes.items()}
            stored = results["POST facts"]["requests"]  # all distinct, all acknowledged
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    return {
        "benchmark": "service",
        "seconds_per_route": seconds,
        "clients": clients,
        "facts_in_scope_at_recall": stored,
        "environment": environment(),
        "routes": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args()
    result = run(args.seconds, args.clients)
    rows = [
        [name, r["requests"], r["failures"], r["requests_per_s"], r["p50_ms"], r["p99_ms"]]
        for name, r in result["routes"].items()
    ]
    print(table(["route", "requests", "failures", "req/s", "p50 ms", "p99 ms"], rows))
    if args.out:
        write_json(args.out, result)
    print(one_line({"benchmark": "service", "routes": result["routes"]}))


if __name__ == "__main__":
    main()
