"""``engram serve`` as a user runs it: a subprocess, its flags, its port, its access log.

No fixed sleeps: a service is up when /healthz answers (generous deadline), and its
output is read after it has stopped.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import stores
from engram.api.access_log import AccessLog
from stores import Target

ENGRAM = str(Path(sys.executable).parent / "engram")
DEADLINE_S = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def environment(target: Target, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**env, **stores.env(target), **extra}


@contextmanager
def serving(argv: list[str], env: dict[str, str], port: int) -> Iterator[Any]:
    """Runs ``engram *argv`` until /healthz on ``port`` answers; yields that answer's
    JSON, then stops the service (SIGINT, as Ctrl-C) and keeps what it printed in
    ``serving.output``."""
    proc = subprocess.Popen(
        [ENGRAM, *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        health = _wait_for_health(proc, port)
        yield health
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE_S)
        serving.output = (proc.returncode, out, err)  # type: ignore[attr-defined]


def _wait_for_health(proc: subprocess.Popen[str], port: int) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"engram serve exited {proc.returncode}: {proc.stderr.read()}")  # type: ignore[union-attr]
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
            if answer.status_code == 200:
                return answer.json()
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # a poll interval, not a wait for something to happen
    proc.kill()
    raise AssertionError("the service did not answer /healthz in time")


def output() -> tuple[int, str, str]:
    code, out, err = serving.output  # type: ignore[attr-defined]
    return int(code), str(out), str(err)


def access_lines(err: str) -> list[dict[str, Any]]:
    lines = []
    for line in err.splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


# -- flags ----------------------------------------------------------------------------
def test_global_flags_reach_serve(target: Target, tmp_path: Path) -> None:
    """``engram --embedder none serve`` serves without an embedder, though the
    environment names the local model; ``--db`` before ``serve`` names the store."""
    port = free_port()
    elsewhere = tmp_path / "not-this-one.db"
    env = environment(
        tmp_path / "unused.db",
        ENGRAM_EMBEDDER="local",
        ENGRAM_DB_PATH=str(elsewhere),
        ENGRAM_PORT=str(port),
    )
    with serving(["--db", str(target), "--embedder", "none", "serve"], env, port) as health:
        assert health["semantic"] is False
        made = httpx.post(f"http://127.0.0.1:{port}/agents", json={"name": "planner"})
        assert made.status_code == 201, made.text
    code, _, err = output()
    assert code == 0, err
    assert "embedder none" in err
    assert not elsewhere.exists()
    assert stores.rows(target, "SELECT name FROM agents") == [("planner",)]


def test_host_and_port_flags_override_the_environment(target: Target) -> None:
    port, unused = free_port(), free_port()
    env = environment(target, ENGRAM_EMBEDDER="none", ENGRAM_HOST="localhost")
    env["ENGRAM_PORT"] = str(unused)
    with serving(["serve", "--host", "127.0.0.1", "--port", str(port)], env, port) as health:
        assert health["ok"] is True
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{unused}/healthz", timeout=5)
    assert f"listening on http://127.0.0.1:{port} " in output()[2]


def test_a_non_loopback_host_flag_still_needs_auth(target: Target) -> None:
    done = subprocess.run(
        [ENGRAM, "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        env=environment(target, ENGRAM_EMBEDDER="none"),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 with no auth configured" in done.stderr


# -- a taken port ---------------------------------------------------------------------
def test_a_taken_port_is_said_with_its_own_exit_code(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [ENGRAM, "--embedder", "none", "serve", "--port", str(port)],
            env=environment(tmp_path / "e.db"),
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            check=False,
        )
    assert done.returncode == 11, done.stderr
    assert done.stderr.startswith(f"error[port_taken]: port {port} on 127.0.0.1 is taken")
    assert "engram listening on" not in done.stderr
    assert not (tmp_path / "e.db").exists()  # refused before the store was opened


# -- the access log -------------------------------------------------------------------
def test_the_access_log_has_one_json_line_per_request(target: Target) -> None:
    port = free_port()
    env = environment(target, ENGRAM_EMBEDDER="none", ENGRAM_PORT=str(port))
    with serving(["serve"], env, port):
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/agents/a_missing").status_code == 404
        queried = httpx.get(f"{base}/agents/a_missing", params={"q": "secret"}).status_code
        assert httpx.post(f"{base}/agents", json={"name": "planner"}).status_code == 201
    code, _, err = output()
    assert code == 0, err
    logged = access_lines(err)
    assert [(r["method"], r["path"], r["status"]) for r in logged] == [
        ("GET", "/healthz", 200),
        ("GET", "/agents/a_missing", 404),
        ("GET", "/agents/a_missing", queried),
        ("POST", "/agents", 201),
    ]
    for record in logged:
        assert set(record) == {"time", "method", "path", "status", "duration_ms"}
        assert isinstance(record["duration_ms"], float) and record["duration_ms"] >= 0
    assert "secret" not in err  # query strings are not logged


@pytest.mark.parametrize(
    ("argv", "extra"),
    [(["serve", "--no-access-log"], {}), (["serve"], {"ENGRAM_ACCESS_LOG": "false"})],
)
def test_the_access_log_can_be_turned_off(
    tmp_path: Path, argv: list[str], extra: dict[str, str]
) -> None:
    port = free_port()
    env = environment(tmp_path / "e.db", ENGRAM_EMBEDDER="none", ENGRAM_PORT=str(port), **extra)
    with serving(argv, env, port):
        httpx.get(f"http://127.0.0.1:{port}/healthz")
    code, _, err = output()
    assert code == 0 and access_lines(err) == [] and "access log off" in err


def test_a_request_that_fails_inside_the_app_is_logged_as_500() -> None:
    import logging

    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.testclient import TestClient

    def broken(request: object) -> None:
        raise RuntimeError("boom")

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("engram.test-access")
    logger.addHandler(Keep())
    logger.setLevel(logging.INFO)
    app = AccessLog(Starlette(routes=[Route("/broken", broken)]), logger)
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/broken").status_code == 500
    assert [json.loads(r)["status"] for r in records] == [500]
