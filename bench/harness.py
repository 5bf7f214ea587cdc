"""Shared helpers for the benchmark scripts: timing, percentiles, environment, JSON output."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from engram.core.installing import DISTRIBUTION
from engram.storage.sqlite.driver import sqlite3

T = TypeVar("T")
P = ParamSpec("P")

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def timed(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> tuple[T, float]:
    """Calls ``work(*args, **kwargs)`` once; returns its result and the wall time in ms."""
    start = time.perf_counter_ns()
    result = work(*args, **kwargs)
    return result, (time.perf_counter_ns() - start) / 1e6


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def latency_summary(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean and max of latencies in milliseconds, rounded for reading."""
    if not samples_ms:
        return {"n": 0}
    return {
        "n": len(samples_ms),
        "p50_ms": round(percentile(samples_ms, 50), 3),
        "p95_ms": round(percentile(samples_ms, 95), 3),
        "mean_ms": round(float(np.mean(samples_ms)), 3),
        "max_ms": round(max(samples_ms), 3),
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "onnxruntime": _version("onnxruntime"),
        "tokenizers": _version("tokenizers"),
        "sqlite": sqlite3.sqlite_version,
        "engram": _version(DISTRIBUTION),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return platform.processor() or None


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def one_line(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table with right-aligned columns after the first."""
    cells = [[str(h) for h in headers], *[[_cell(v) for v in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])]
        parts += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def one_scope_args(doc: str | None, argv: Sequence[str] | None) -> argparse.Namespace:
    """The options of a benchmark over one large scope: --facts, --queries, --json."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path, dest="out")
    return parser.parse_args(argv)
