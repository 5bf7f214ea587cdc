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

import stores
from stores import Target

ENGRAM = str(Path(sys.executable).parent / "engram")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start(target: Target, port: int, **env: str) -> subprocess.Popen[bytes]:
    environment = {**os.environ, **stores.env(target), "ENGRAM_PORT": str(port), **env}
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


def test_acknowledged_writes_survive_a_sigkill(target: Target, port: int) -> None:
    url = f"http://127.0.0.1:{port}"
    proc = _start(target, port)
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
    proc = _start(target, port)
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


def test_only_one_of_url_and_model_is_a_startup_error(target: Target, port: int) -> None:
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, **stores.env(target), "ENGRAM_EMBEDDINGS_URL": "http://x/"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "ENGRAM_EMBEDDINGS_MODEL" in done.stderr


def test_no_auth_beyond_loopback_is_refused_unless_asked_for(target: Target, port: int) -> None:
    base = {**os.environ, **stores.env(target), "ENGRAM_PORT": str(port)}
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**base, "ENGRAM_HOST": "0.0.0.0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 with no auth configured" in done.stderr


def test_two_services_on_one_store_share_it_and_a_sigkill_loses_nothing(target: Target) -> None:
    first_port, second_port = _free_port(), _free_port()
    first, second = _start(target, first_port), _start(target, second_port)
    one, two = f"http://127.0.0.1:{first_port}", f"http://127.0.0.1:{second_port}"
    try:
        agent = httpx.post(f"{one}/agents", json={"name": "planner"}).json()["id"]
        written = []
        for i in range(15):  # alternate services; each write is read back through the other
            by, other = (one, two) if i % 2 == 0 else (two, one)
            assert httpx.put(f"{by}/agents/{agent}/memory/k{i}", json={"value": i}).is_success
            assert httpx.get(f"{other}/agents/{agent}/memory/k{i}").json()["value"] == i
            fact = httpx.post(f"{by}/agents/{agent}/facts", json={"content": f"fact {i}"}).json()
            written.append(fact["id"])
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        listed = httpx.get(f"{two}/agents/{agent}/facts").json()["facts"]
        assert {f["id"] for f in listed} == set(written)
        page = httpx.get(f"{two}/agents/{agent}/memory", params={"limit": 1000}).json()
        assert page["working"] == {f"k{i}": i for i in range(15)}
        hits = httpx.get(f"{two}/agents/{agent}/facts", params={"query": "fact 7"}).json()
        assert written[7] in {h["id"] for h in hits["facts"]}
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)


def test_an_unreachable_database_stops_the_service_without_showing_its_password(
    port: int,
) -> None:
    url = f"postgresql://engram:s3cret@127.0.0.1:{_free_port()}/engram"
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, "ENGRAM_DB_URL": url, "ENGRAM_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "error[storage_failure]" in done.stderr
    assert f"postgresql://engram@127.0.0.1:{url.rsplit(':', 1)[1]}" in done.stderr
    assert "s3cret" not in done.stderr + done.stdout
