"""The real service as a subprocess: SIGKILL it, start it again on the same file."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

import stores
from stores import Target

ENGRAM = str(Path(sys.executable).parent / "engram")
# Seconds. Every wait here is for a condition (a health answer, an exit); this bound only
# stops a hang, so a loaded machine may take what it takes.
PATIENCE = 120.0


# The service binds before it announces, and announces the port it bound: asked for port
# 0 it takes one no other process holds, so two test runs at once never share one.
LISTENING = re.compile(rb"engram listening on (http://\S+:\d+) ")


@dataclass
class Service:
    """A running `engram serve` and a client of it."""

    proc: subprocess.Popen[bytes]
    http: httpx.Client

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL
        self.proc.wait(PATIENCE)


@contextmanager
def running(target: Target, **env: str) -> Iterator[Service]:
    """The service on a port of its own choosing, once it answers there; stopped after."""
    environment = {**os.environ, **stores.env(target), "ENGRAM_PORT": "0", **env}
    # Its output goes to a file, so a full pipe never blocks it.
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen([ENGRAM, "serve"], env=environment, stdout=output, stderr=output)
        try:
            url = _answering(proc, output)
            with httpx.Client(base_url=url, timeout=PATIENCE) as http:
                yield Service(proc, http)
        finally:
            _stop(proc)


def _answering(proc: subprocess.Popen[bytes], output: IO[bytes]) -> str:
    """The service's URL, once it has said where it listens and answers /healthz there."""
    deadline = time.monotonic() + PATIENCE
    url = ""
    while time.monotonic() < deadline:
        # pread: the service writes through the same file offset, which a read would move
        said = os.pread(output.fileno(), 1 << 20, 0)
        if proc.poll() is not None:
            raise AssertionError(f"the service stopped: {said.decode(errors='replace')}")
        if not url and (announced := LISTENING.search(said)):
            url = announced[1].decode()
        if url and _healthy(url):
            return url
        time.sleep(0.05)
    raise AssertionError(f"the service did not answer within {PATIENCE:.0f} s")


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=PATIENCE).status_code == 200
    except httpx.HTTPError:
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(PATIENCE)


def test_acknowledged_writes_survive_a_sigkill(target: Target) -> None:
    with running(target) as service:
        http = service.http
        agent = http.post("/agents", json={"name": "planner"}).json()["id"]
        for i in range(20):
            assert http.put(f"/agents/{agent}/memory/k{i}", json={"value": i}).is_success
        facts = [
            http.post(f"/agents/{agent}/facts", json={"content": f"fact {i}"}).json()["id"]
            for i in range(10)
        ]
        http.post(f"/agents/{agent}/end")
        service.kill()
    with running(target) as service:
        http = service.http
        page = http.get(f"/agents/{agent}/memory", params={"limit": 1000}).json()
        assert page["working"] == {f"k{i}": i for i in range(20)}
        listed = http.get(f"/agents/{agent}/facts").json()["facts"]
        assert {f["id"] for f in listed} == set(facts)
        assert http.get(f"/agents/{agent}").json()["status"] == "ended"


def test_a_bad_store_path_stops_the_service_before_it_listens(tmp_path: Path) -> None:
    bad = tmp_path / "missing" / "e.db"
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, "ENGRAM_DB_PATH": str(bad), "ENGRAM_PORT": "0"},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode != 0
    assert "error[storage_failure]" in done.stderr and str(bad) in done.stderr


def test_only_one_of_url_and_model_is_a_startup_error(target: Target) -> None:
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, **stores.env(target), "ENGRAM_EMBEDDINGS_URL": "http://x/"},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 2 and "ENGRAM_EMBEDDINGS_MODEL" in done.stderr


def test_no_auth_beyond_loopback_is_refused_unless_asked_for(target: Target) -> None:
    base = {**os.environ, **stores.env(target), "ENGRAM_PORT": "0"}
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**base, "ENGRAM_HOST": "0.0.0.0"},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 with no auth configured" in done.stderr


def test_two_services_on_one_store_share_it_and_a_sigkill_loses_nothing(target: Target) -> None:
    with running(target) as first, running(target) as second:
        one, two = first.http, second.http
        agent = one.post("/agents", json={"name": "planner"}).json()["id"]
        written = []
        for i in range(15):  # alternate services; each write is read back through the other
            by, other = (one, two) if i % 2 == 0 else (two, one)
            assert by.put(f"/agents/{agent}/memory/k{i}", json={"value": i}).is_success
            assert other.get(f"/agents/{agent}/memory/k{i}").json()["value"] == i
            fact = by.post(f"/agents/{agent}/facts", json={"content": f"fact {i}"}).json()
            written.append(fact["id"])
        first.kill()
        listed = two.get(f"/agents/{agent}/facts").json()["facts"]
        assert {f["id"] for f in listed} == set(written)
        page = two.get(f"/agents/{agent}/memory", params={"limit": 1000}).json()
        assert page["working"] == {f"k{i}": i for i in range(15)}
        hits = two.get(f"/agents/{agent}/facts", params={"query": "fact 7"}).json()
        assert written[7] in {h["id"] for h in hits["facts"]}


def test_an_unreachable_database_stops_the_service_without_showing_its_password() -> None:
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        url = f"postgresql://engram:s3cret@127.0.0.1:{closed.getsockname()[1]}/engram"
        done = subprocess.run(
            [ENGRAM, "serve"],
            env={**os.environ, "ENGRAM_DB_URL": url, "ENGRAM_PORT": "0"},
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
    assert done.returncode != 0
    assert "error[storage_failure]" in done.stderr
    assert f"postgresql://engram@127.0.0.1:{url.rsplit(':', 1)[1]}" in done.stderr
    assert "s3cret" not in done.stderr + done.stdout
