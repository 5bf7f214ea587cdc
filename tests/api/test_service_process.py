"""The real service as a subprocess: SIGKILL it, start it again on the same file."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import stores
from stores import Target

ENGRAM = str(Path(sys.executable).parent / "engram")
# Seconds. Every wait here is for a condition (a health answer, an exit); this bound only
# stops a hang, so a loaded machine may take what it takes.
PATIENCE = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> set[str]:
    """The sockets (as /proc/<pid>/fd shows them) that listen on local port ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()  # local address, remote address, state, ..., inode
            if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":  # 0A: LISTEN
                found.add(f"socket:[{fields[9]}]")
    return found


def _listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself listens on ``port``: a health answer on the port
    could come from another test session's service that took it first."""
    sockets = _listening(port)
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            if os.readlink(fd) in sockets:
                return True
        except OSError:
            pass  # closed meanwhile
    return False


@dataclass
class Service:
    """A running `engram serve` and a client of it."""

    proc: subprocess.Popen[bytes]
    http: httpx.Client

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL
        self.proc.wait(PATIENCE)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(PATIENCE)
            except subprocess.TimeoutExpired:
                self.kill()


@contextmanager
def running(target: Target, **env: str) -> Iterator[Service]:
    """The service on a free port, once it answers there; stopped afterwards. The port is
    free when chosen, but another process may bind it first: then the service exits and
    starts again on another."""
    for _ in range(5):
        port = _free_port()
        # Its output goes to a file, so a full pipe never blocks it.
        with tempfile.TemporaryFile() as output:
            environment = {**os.environ, **stores.env(target), "ENGRAM_PORT": str(port), **env}
            proc = subprocess.Popen(
                [ENGRAM, "serve"], env=environment, stdout=output, stderr=output
            )
            url = f"http://127.0.0.1:{port}"
            if _answers(proc, port, url):
                with httpx.Client(base_url=url, timeout=PATIENCE) as http:
                    service = Service(proc, http)
                    try:
                        yield service
                    finally:
                        service.stop()
                return
            output.seek(0)
            said = output.read().decode(errors="replace")
        if not _listening(port):  # it stopped, and not because another took its port
            raise AssertionError(f"the service stopped: {said}")
    raise AssertionError("no port stayed free long enough for the service")


def _answers(proc: subprocess.Popen[bytes], port: int, url: str) -> bool:
    """Waits until ``proc`` listens on ``port`` and answers /healthz (True), or exits
    (False)."""
    deadline = time.monotonic() + PATIENCE
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(PATIENCE)
            raise AssertionError(f"the service did not answer within {PATIENCE:.0f} s")
        if _listens(proc.pid, port):
            try:
                if httpx.get(f"{url}/healthz", timeout=PATIENCE).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
        time.sleep(0.05)
    return False


@pytest.fixture
def port() -> Iterator[int]:
    yield _free_port()


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


def test_a_bad_store_path_stops_the_service_before_it_listens(tmp_path: Path, port: int) -> None:
    bad = tmp_path / "missing" / "e.db"
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, "ENGRAM_DB_PATH": str(bad), "ENGRAM_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode != 0
    assert "error[storage_failure]" in done.stderr and str(bad) in done.stderr


def test_only_one_of_url_and_model_is_a_startup_error(target: Target, port: int) -> None:
    done = subprocess.run(
        [ENGRAM, "serve"],
        env={**os.environ, **stores.env(target), "ENGRAM_EMBEDDINGS_URL": "http://x/"},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 2 and "ENGRAM_EMBEDDINGS_MODEL" in done.stderr


def test_no_auth_beyond_loopback_is_refused_unless_asked_for(target: Target, port: int) -> None:
    base = {**os.environ, **stores.env(target), "ENGRAM_PORT": str(port)}
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


def test_an_unreachable_database_stops_the_service_without_showing_its_password(
    port: int,
) -> None:
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        url = f"postgresql://engram:s3cret@127.0.0.1:{closed.getsockname()[1]}/engram"
        done = subprocess.run(
            [ENGRAM, "serve"],
            env={**os.environ, "ENGRAM_DB_URL": url, "ENGRAM_PORT": str(port)},
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
    assert done.returncode != 0
    assert "error[storage_failure]" in done.stderr
    assert f"postgresql://engram@127.0.0.1:{url.rsplit(':', 1)[1]}" in done.stderr
    assert "s3cret" not in done.stderr + done.stdout
