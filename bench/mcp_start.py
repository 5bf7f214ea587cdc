#!/usr/bin/env python3
"""How long a cold `engram mcp` takes to answer: spawn to `initialize` answered, and spawn
to `tools/list` answered, over its stdin and stdout, on a fresh store each run.

The client side is plain JSON-RPC lines written to the pipe (no SDK in this process), so
the time is the server's: Python starting, engram and the MCP SDK importing, the store
opening. The embedder is the environment's (the local model by default), which loads
only to embed, so not here.

    .venv/bin/python bench/mcp_start.py [--runs 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from harness import environment, latency_summary, one_line, table, write_json

ENGRAM = str(Path(sys.executable).parent / "engram")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], wanted: int) -> dict[str, Any]:
    """The response with id ``wanted`` (notifications and other lines skipped)."""
    while line := pipe.readline():
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == wanted:
            return message
    raise SystemExit("engram mcp closed its stdout before answering")


def once(store: Path) -> tuple[float, float, int]:
    """Milliseconds from spawn to `initialize` answered and to `tools/list` answered, and
    how many tools it listed."""
    launch = [ENGRAM, "--db", str(store), "mcp", "--resource", "bench"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        launch, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, INITIALIZE)
        _answer(proc.stdout, 1)
        initialized = (time.perf_counter() - start) * 1000
        _send(proc.stdin, INITIALIZED)
        _send(proc.stdin, LIST)
        listed = _answer(proc.stdout, 2)
        answered = (time.perf_counter() - start) * 1000
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return initialized, answered, len(listed["result"]["tools"])


def run(runs: int) -> dict[str, Any]:
    initialized, listed, tools = [], [], 0
    for i in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            first, second, tools = once(Path(scratch) / f"mcp-{i}.db")
        initialized.append(first)
        listed.append(second)
    return {
        "benchmark": "mcp",
        "runs": runs,
        "tools_listed": tools,
        "embedder": os.environ.get("ENGRAM_EMBEDDER", "default"),
        "environment": environment(),
        "spawn_to_initialize": latency_summary(initialized),
        "spawn_to_tools_list": latency_summary(listed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args()
    result = run(args.runs)
    rows = [
        [name, s["p50_ms"], s["max_ms"]]
        for name, s in (
            ("spawn → initialize", result["spawn_to_initialize"]),
            ("spawn → tools/list", result["spawn_to_tools_list"]),
        )
    ]
    print(table(["cold engram mcp", "p50 ms", "max ms"], rows))
    if args.out:
        write_json(args.out, result)
    print(one_line({k: v for k, v in result.items() if k != "environment"}))


if __name__ == "__main__":
    main()
