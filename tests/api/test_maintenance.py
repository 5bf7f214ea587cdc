"""One owner for maintenance, with a real `engram serve` on the store: `engram reembed`
refuses while the service holds it, naming the service's pid, and changes nothing; a
service whose store was re-embedded under it anyway (a re-embedding that began before it
opened the store) refuses to recall by meaning, as it refuses to write, instead of
ranking new vectors by an old model's query."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from test_service_process import PATIENCE, running

import engram
import stores
from answers import error, ok
from engram.core.spoken import SUFFIX  # the record of vectors of turns' words
from engram.opening import open_store, reconcile_model
from stores import Target

ENGRAM = str(Path(sys.executable).parent / "engram")
WORDS = ["Ana drinks green tea every morning", "Bo cycles to work in the rain"]


def _agent(http: httpx.Client) -> str:
    return f"/agents/{ok(http.post('/agents', json={'name': 'planner'}), 201)['id']}"


def test_reembed_refuses_while_a_service_holds_the_store(target: Target) -> None:
    with running(target) as service:
        http = service.http
        agent = _agent(http)
        for words in WORDS:
            ok(http.post(f"{agent}/facts", json={"content": words}), 201)
        done = subprocess.run(
            [ENGRAM, "--embedder", "e5", "reembed"],
            env={**os.environ, **stores.env(target)},
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
        assert done.returncode == 4, done.stderr
        assert "error[conflict]" in done.stderr, done.stderr
        assert f"pid {service.proc.pid}" in done.stderr, done.stderr
        assert "nothing was re-embedded" in done.stderr
        # The service goes on as before: its model, its recalls, its writes.
        model = ok(http.get("/health/report"))["model"]
        assert model == {"model": f"all-MiniLM-L6-v2{SUFFIX}", "dimension": 384}
        hits = ok(http.get(f"{agent}/facts", params={"query": "what does Ana drink?"}))
        assert hits["facts"][0]["content"] == WORDS[0]
        ok(http.post(f"{agent}/facts", json={"content": "Cy paints birds"}), 201)


def test_a_service_re_embedded_under_it_refuses_to_recall_by_meaning(target: Target) -> None:
    with running(target) as service:
        http = service.http
        agent = _agent(http)
        for words in WORDS:
            ok(http.post(f"{agent}/facts", json={"content": words}), 201)
        ok(http.put(f"{agent}/graph/entities", json={"name": "Ana"}))
        question = {"query": "what does Ana drink?"}
        assert ok(http.get(f"{agent}/facts", params=question))["facts"]
        # What a re-embedding that began before the service opened the store does.
        store = open_store(target)
        try:
            reconcile_model(store, engram.HashingEmbedder(384, model="other"), reembed=True)
        finally:
            store.close()
        found = error(http.get(f"{agent}/facts", params=question), 409, "embedder_mismatch")
        assert "'other-384'" in found["message"] and "nothing was recalled" in found["message"]
        assert "restart" in found["hint"]
        for mode in ("vector", "hybrid"):
            answer = http.get(f"{agent}/facts", params=question | {"mode": mode})
            error(answer, 409, "embedder_mismatch")
        search = http.get(f"{agent}/graph/entities", params={"query": "Ana"})
        error(search, 409, "embedder_mismatch")
        tool = ok(http.post(f"{agent}/tools/memory_search", json={"query": "tea"}))
        assert tool["isError"] and "nothing was recalled" in tool["text"], tool
        error(http.post(f"{agent}/facts", json={"content": "x"}), 409, "embedder_mismatch")
        # Full text needs no vector: it still answers.
        text = ok(http.get(f"{agent}/facts", params=question | {"mode": "text"}))
        assert text["facts"][0]["content"] == WORDS[0]
