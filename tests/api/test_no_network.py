"""Nothing reaches the network, and nothing is written outside the store's folder, unless
asked: the library with the local model and a real `engram serve` doing every kind of
work, each in a process whose HOME and temporary folder are fresh, empty directories.

Whatever a dependency does on its own (onnxruntime's telemetry wrote a device id under
``~/.cache/Microsoft/DeveloperTools`` and a ``.ses`` file in the temporary folder, and
looked up its collector's name from a native thread) shows up as a file or as a lookup.
Python's own ``socket.getaddrinfo`` never sees a native thread's lookups, so the probe is
``strace`` on the whole process tree: every ``connect`` it makes, by address.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
import pytest
from test_service_process import PATIENCE, _answering, _stop

from pdfs import pdf

ENGRAM = str(Path(sys.executable).parent / "engram")
LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _environment(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """The caller's environment with HOME and TMPDIR fresh and empty, and nothing that
    would turn a dependency's telemetry off or move its caches elsewhere: what is proved
    is engram's default."""
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    quiet = re.compile(r"^(XDG_|HF_|ORT_|TOKENIZERS_|SPACY|DO_NOT_TRACK|TMP$|TEMP$)")
    env = {k: v for k, v in os.environ.items() if not quiet.match(k)}
    env |= {"HOME": str(home), "TMPDIR": str(temp), "ENGRAM_PORT": "0"}
    return env, home, temp


def _written(*roots: Path) -> list[str]:
    return sorted(str(p) for root in roots for p in root.rglob("*") if not p.is_dir())


LIBRARY = """
import sys, engram
with engram.open(sys.argv[1]) as mem:
    ref = engram.ResourceRef("user-42")
    mem.remember(ref, "Ana drinks green tea every morning")
    hits = mem.recall(ref, "what does Ana drink?")
    assert hits and "green tea" in hits[0].fact.content, hits
    mem.ingest_text(ref, "# Tides\\n\\nThe moon pulls the sea.", name="tides.md")
    mem.graph.upsert_entity(ref, "Ana", type="person")
"""


# Another embedder than the local model, and a scope searched through its vector graph:
# usearch's loading loads onnxruntime too (which must come first), and did so with its
# telemetry on, writing its device id and session file.
GRAPH = """
import sys, engram
with engram.open(sys.argv[1], embedder=engram.HashingEmbedder(64), vector_index_above=10) as mem:
    ref = engram.ResourceRef("user-42")
    mem.remember_many(ref, [f"Ana drank tea number {i} at {i * 7} past" for i in range(40)])
    assert mem.recall(ref, "tea", mode="vector")
    assert {"usearch.compiled", "onnxruntime"} <= set(sys.modules), "the graph was not read"
"""


def _work(http: httpx.Client) -> None:
    """Every kind of work the service does: working memory, facts, recall, conversations,
    documents (Markdown, HTML, a PDF upload), the graph, tools, MCP, health,
    consolidation, the wiki, export and import, people."""

    def ok(answer: httpx.Response, status: int = 200) -> object:
        assert answer.status_code == status, answer.text
        return answer.json() if answer.content else None

    made = ok(http.post("/agents", json={"name": "planner"}), 201)
    assert isinstance(made, dict)
    agent = f"/agents/{made['id']}"
    ok(http.put(f"{agent}/memory/plan", json={"value": {"tier": "pro"}, "ttlSeconds": 60}))
    ok(http.get(f"{agent}/memory/plan"))
    fact = ok(http.post(f"{agent}/facts", json={"content": "Ana drinks green tea"}), 201)
    assert isinstance(fact, dict)
    ok(http.get(f"{agent}/facts", params={"query": "what does Ana drink?"}))
    turns = [{"speaker": "Ana", "text": "been to Lisbon?"}, {"speaker": "Bo", "text": "Twice!"}]
    ok(http.post(f"{agent}/conversations", json={"turns": turns}), 201)
    docs = f"{agent}/documents"
    ok(http.post(docs, json={"text": "# Guide\n\nInstall it.", "name": "guide.md"}))
    page = "<html><body><article><h1>Tides</h1><p>The moon pulls the sea.</p></article>"
    ok(http.post(docs, json={"text": page, "name": "t.html", "mediaType": "text/html"}))
    chart = pdf([["A harbour chart, page one."], ["Depths in metres."]])
    ok(http.post(docs, files={"file": ("chart.pdf", chart, "application/pdf")}))
    graph = f"{agent}/graph"
    for name in ("Ana", "Bo"):
        ok(http.put(f"{graph}/entities", json={"name": name}))
    ok(
        http.post(f"{graph}/relations", json={"source": "Ana", "target": "Bo", "type": "knows"}),
        201,
    )
    ok(http.get(f"{graph}/entities", params={"query": "Ana"}))
    ok(http.get(f"{graph}/entities/Ana/neighbourhood"))
    ok(http.post(f"{graph}/traversals", json={"start": "Ana"}))
    ok(http.post(f"{agent}/tools/memory_search", json={"query": "tea"}))
    ok(
        http.post(
            f"{agent}/feedback", json={"response": "Ana drinks green tea", "factIds": [fact["id"]]}
        )
    )
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "memory_search", "arguments": {"query": "tea"}}
    ok(http.post("/mcp", params={"agent": made["id"]}, json=call, headers=ACCEPT))
    ok(http.get(f"{agent}/health"))
    ok(http.get("/health/report"))
    ok(http.post(f"{agent}/consolidations", json={}))
    ok(http.post(f"{agent}/wiki/compilations", json={}))
    out = http.get(f"{agent}/export")
    assert out.status_code == 200, out.text
    into = ok(http.post("/agents", json={"name": "into"}), 201)
    assert isinstance(into, dict)
    imported = http.post(
        f"/agents/{into['id']}/imports", content=out.content, headers={"content-type": "text/plain"}
    )
    assert imported.status_code == 200, imported.text
    ok(http.get(f"{agent}/ledger"))


@contextmanager
def _serving(env: dict[str, str], *wrap: str) -> Iterator[httpx.Client]:
    """`engram serve` (under ``wrap``, a tracer, if given) once it answers; stopped after.
    A tracer does not pass its own SIGTERM on, so the service itself is sent it."""
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen([*wrap, ENGRAM, "serve"], env=env, stdout=output, stderr=output)
        served = proc.pid
        try:
            url = _answering(proc, output)
            if wrap:
                children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
                served = int(children.split()[0])
            with httpx.Client(base_url=url, timeout=PATIENCE) as http:
                yield http
        finally:
            if served != proc.pid:
                with suppress(ProcessLookupError):
                    os.kill(served, signal.SIGTERM)
            _stop(proc)


def test_nothing_is_written_outside_the_store_s_folder(tmp_path: Path) -> None:
    env, home, temp = _environment(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY, str(store / "lib.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    assert _written(home, temp) == []
    searched = [sys.executable, "-c", GRAPH, str(store / "graph.db")]
    done = subprocess.run(searched, env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 0, done.stderr
    assert _written(home, temp) == []
    env["ENGRAM_DB_PATH"] = str(store / "served.db")
    with _serving(env) as http:
        _work(http)
    assert _written(home, temp) == []


CONNECT = re.compile(r"connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), (.*?)\}")
ADDRESS = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')
# Seconds the service keeps working after every kind of work was done once. Telemetry
# posts on a timer, not per request: onnxruntime 1.32 looked its collector up 6-7 s
# after the service's first request (3 runs here), so the window is three times that.
# The wait ends at once when a lookup shows up; only a clean run takes it whole.
WINDOW = 20.0


def _reached(trace: Path) -> list[str]:
    """Every name server asked and every address beyond loopback connected to, as
    ``address:port``, in the trace so far."""
    reached = []
    for line in trace.read_text().splitlines() if trace.exists() else []:
        if (found := CONNECT.search(line)) is None:
            continue
        port, rest = found.groups()
        where = ADDRESS.search(rest)
        address = where and (where[1] or where[2])
        if port == "53" or address not in LOOPBACK:
            reached.append(f"{address}:{port}")
    return reached


def test_no_name_is_looked_up_and_no_address_reached_beyond_loopback(tmp_path: Path) -> None:
    strace = shutil.which("strace")
    assert strace, "this test needs strace (apt-get install strace)"
    env, _, _ = _environment(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    env["ENGRAM_DB_PATH"] = str(store / "served.db")
    trace = tmp_path / "trace"
    probe = [strace, "-f", "-qq", "-e", "trace=connect", "-o", str(trace)]
    with _serving(env, *probe) as http:
        _work(http)
        worked = time.monotonic()
        while not _reached(trace) and time.monotonic() - worked < WINDOW:
            found = http.get("/healthz")  # the service busy, not idle, while it is watched
            assert found.status_code == 200, found.text
            time.sleep(0.2)
    reached = _reached(trace)
    assert reached == [], f"lookups or connections beyond loopback: {json.dumps(reached)}"


def test_fastapis_own_telemetry_stays_off_whatever_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With FASTAPI_OTEL_AUTO_CONFIGURE true, FastAPI sets up exporters of its request
    telemetry (exception messages among it) to the collector the environment names, at
    the service's start (here, without the exporter package, it says it failed to)."""
    import logging

    from fastapi.testclient import TestClient

    import engram
    from engram.api import create_app

    monkeypatch.setenv("FASTAPI_OTEL_AUTO_CONFIGURE", "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector.invalid:4318")
    memory = engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(64))
    app = create_app(memory_store=memory)
    with caplog.at_level(logging.DEBUG), memory, TestClient(app) as http:
        assert http.get("/healthz").status_code == 200
    said = [r.getMessage() for r in caplog.records if "telemetry" in r.getMessage().lower()]
    assert said == []
