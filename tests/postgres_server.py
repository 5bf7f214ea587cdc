"""A real PostgreSQL 16 + pgvector for the tests and benchmarks, from the `pgserver` wheel.

The server runs in a temporary directory on 127.0.0.1 and a free port. PostgreSQL refuses
to run as root, so as root it runs as an unprivileged system user (created if absent)
through ``runuser``. ``ENGRAM_TEST_POSTGRES_URL`` points at an existing server instead.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVICE_USER = "engram-pg"
NOLOGIN = "/usr/sbin/nologin"
INITDB = ("--encoding=UTF8", "--locale=C")
# Test data is disposable: a crash of the test server may lose it, so it need not fsync.
FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"


def bin_dir() -> Path:
    """The server's programs, found without importing the package (whose import warns)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the pgserver package is not installed (pip install -e '.[dev]')")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    if subprocess.run(["id", "-u", SERVICE_USER], capture_output=True).returncode != 0:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                SERVICE_USER,
            ],
            check=True,
            capture_output=True,
        )
    return ["runuser", "-u", SERVICE_USER, "--", *args]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server() -> Iterator[str]:
    """Yields the URL of a superuser connection to a fresh server; stops it afterwards."""
    existing = os.environ.get("ENGRAM_TEST_POSTGRES_URL")
    if existing:
        yield existing
        return
    root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    data = root / "data"
    port = _free_port()
    pg = bin_dir()
    initdb = [str(pg / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", *INITDB]
    options = f"-h 127.0.0.1 -p {port} -k {root} {FAST}"
    pg_ctl = [str(pg / "pg_ctl"), "-D", str(data)]
    try:
        if os.geteuid() == 0:
            _as_server_user(["true"])
            shutil.chown(root, SERVICE_USER, SERVICE_USER)
        root.chmod(0o700)
        subprocess.run(_as_server_user(initdb), check=True, capture_output=True)
        start = [*pg_ctl, "-o", options, "-l", str(root / "log"), "-w", "start"]
        subprocess.run(_as_server_user(start), check=True, capture_output=True)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            stop = [*pg_ctl, "-m", "immediate", "stop"]
            subprocess.run(_as_server_user(stop), capture_output=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def database_url(admin_url: str, name: str) -> str:
    """The URL of database ``name`` on the server of ``admin_url``."""
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


def create_database(admin_url: str, template: str | None = None) -> str:
    """A new, empty database (with the vector extension); returns its URL."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if template:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        else:
            conn.execute(f"CREATE DATABASE {name}")
    url = database_url(admin_url, name)
    if not template:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


def drop_database(admin_url: str, url: str) -> None:
    import psycopg

    name = url.rpartition("/")[2]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
