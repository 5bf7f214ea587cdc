"""The real service as a subprocess: SIGKILL it, start it again on the same file."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ENGRAM = str(Path(sys.executable).parent / "engram")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start(db_path: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    environment = {**os.environ, "ENGRAM_DB_PATH": str(db_path), "ENGRAM_PORT": str(port), **env}
    proc = subprocess.Popen(
        [ENGRAM, "serve"], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("the service did not come up")


@pytest.fixture
def port() -> Iterator[int]:
    yield _free_port()


def test_acknowledged_writes_survive_a_sigkill(db_path: Path, port: int) -> None:
    url = f"http://127.0.0.1:{port}"
    proc = _start(db_path, port)
    try:
        agent = httpx.post(f"{url}/agents", json={"name": "planner"}).json()["id"]
        for i in range(20):
            assert httpx.put(f"{url}/agents/{agent}/memory/k{i}", json={"value": i}).is_success
        facts = [
            httpx.post(f"{url}/agents/{agent}/facts", json={"content": f"fact {i}"}).json()["id"]
            for i in range(10)
        ]
        httpx.post(f"{url}/agents/{agent}/end")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    proc = _start(db_path, port)
    try:
        page = httpx.get(f"{url}/agents/{agent}/memory", params={"limit": 1000}).json()
        assert page["working"] == {f"k{i}": i for i in range(20)}
        listed = httpx.get(f"{url}/agents/{agent}/facts").json()["facts"]
        assert {f["id"] for f in listed} == set(facts)
        assert httpx.get(f"{url}/agents/{agent}").json()["status"] == "ended"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_bad_store_path_stops_the_service_before_it_listens(tmp_path: Path, port: int) -> None:
    bad = tmp_path / "missing" / "e.db"
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, "ENGRAM_DB_PATH": str(bad), "ENGRAM_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "error[storage_failure]" in done.stderr and str(bad) in done.stderr


def test_only_one_of_url_and_model_is_a_startup_error(db_path: Path, port: int) -> None:
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, "ENGRAM_DB_PATH": str(db_path), "ENGRAM_EMBEDDINGS_URL": "http://x/"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "ENGRAM_EMBEDDINGS_MODEL" in done.stderr


def test_no_auth_beyond_loopback_is_refused_unless_asked_for(db_path: Path, port: int) -> None:
    base = {**os.environ, "ENGRAM_DB_PATH": str(db_path), "ENGRAM_PORT": str(port)}
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**base, "ENGRAM_HOST": "0.0.0.0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 with no auth configured" in done.stderr
