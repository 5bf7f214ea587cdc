"""Backups of a PostgreSQL store with ``pg_dump``: one snapshot, verified, all or nothing.

The rows are counted in a transaction whose snapshot ``pg_dump`` then shares
(``--snapshot``), so the counts describe exactly the dump. The dump (custom format) is
verified by reading its data back with ``pg_restore`` and counting the rows of every
table; only then is the backup renamed into place (see :mod:`engram.storage.staging`).
Restore with ``pg_restore --clean --if-exists --single-transaction -d URL engram.dump``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from engram.core.errors import StorageFailure
from engram.storage import staging
from engram.storage.postgres.database import redact
from engram.storage.staging import sha256, staged_backup

TABLES = ("engram_schema", *staging.TABLES)
DUMP_NAME = "engram.dump"
TOOL_TIMEOUT_S = 3600


def find_tool(name: str, directory: str = "") -> str:
    """``pg_dump``/``pg_restore``: from ``directory`` (``ENGRAM_PG_BIN``), else from PATH."""
    found = str(Path(directory) / name) if directory else shutil.which(name)
    if not found or not Path(found).is_file():
        raise StorageFailure(
            f"cannot back up a PostgreSQL store without {name}: it is not "
            + (f"in ENGRAM_PG_BIN ({directory})" if directory else "on PATH"),
            hint="install the PostgreSQL client tools of the server's major version, "
            "or set ENGRAM_PG_BIN to their directory",
        )
    return found


def backup(
    url: str, dest_dir: str | os.PathLike[str], *, keep: int | None = None, tools_dir: str = ""
) -> Path:
    """Dumps the database at ``url`` into a new backup under ``dest_dir``; returns it.
    ``pg_dump`` and ``pg_restore`` come from ``tools_dir`` when given, else from PATH."""
    pg_dump, pg_restore = find_tool("pg_dump", tools_dir), find_tool("pg_restore", tools_dir)

    def build(staging: Path) -> dict[str, object]:
        dump = staging / DUMP_NAME
        counts = _dump(url, pg_dump, dump)
        copied = _count_dump(pg_restore, dump)
        if copied != counts:
            raise StorageFailure(f"the dump {dump} holds {copied} rows, not {counts}")
        return {
            "format": "pg_dump custom",
            "counts": counts,
            "sha256": sha256(dump),
            "source": redact(url),
        }

    return staged_backup(dest_dir, keep, build)


def _dump(url: str, pg_dump: str, dump: Path) -> dict[str, int]:
    try:
        with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = conn.execute("SELECT pg_export_snapshot()").fetchone()
            assert row is not None
            counts = {
                t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                for t in TABLES
            }
            conninfo, env = _without_password(url)
            _run(
                [pg_dump, "--format=custom", f"--snapshot={row[0]}", f"--file={dump}", conninfo],
                env,
            )
    except psycopg.Error as exc:
        raise StorageFailure(f"cannot back up the store at {redact(url)}: {exc}") from exc
    return counts


def _count_dump(pg_restore: str, dump: Path) -> dict[str, int]:
    """Rows per table in the dump, read back from its COPY blocks."""
    text = _run([pg_restore, "--data-only", "--file=-", str(dump)], dict(os.environ))
    counts = dict.fromkeys(TABLES, 0)
    table: str | None = None
    for line in text.splitlines():
        if table is None:
            started = re.match(r"COPY public\.(\w+) ", line)
            table = started.group(1) if started else None
        elif line == "\\.":
            table = None
        elif table in counts:
            counts[table] += 1
    return counts


def _without_password(url: str) -> tuple[str, dict[str, str]]:
    """The connection string without its password, which goes in the environment
    instead (a command line is visible to every user of the machine)."""
    params = conninfo_to_dict(url)
    env = dict(os.environ)
    password = params.pop("password", None)
    if password is not None:
        env["PGPASSWORD"] = str(password)
    return make_conninfo("", **params), env


def _run(command: list[str], env: dict[str, str]) -> str:
    shown = command[0].rsplit("/", 1)[-1]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StorageFailure(f"{shown} failed: {exc}") from exc
    if done.returncode != 0:
        raise StorageFailure(f"{shown} failed: {done.stderr.strip()[:500]}")
    return done.stdout
