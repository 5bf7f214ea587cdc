"""Backups of a PostgreSQL store with ``pg_dump``: one snapshot, verified, all or nothing.

The rows are counted in a transaction whose snapshot ``pg_dump`` then shares
(``--snapshot``), so the counts describe exactly the dump. The dump (custom format) is
verified by reading its data back with ``pg_restore`` and counting the rows of every
table; only then is the backup renamed into place (see :mod:`engram.storage.staging`).

:func:`restore` puts one back with ``pg_restore --clean --if-exists --single-transaction``
once the dump matches its manifest and no engram process is connected, after keeping
the database it replaces as a backup of its own; a scope's graph is built as it
restores, with the memory engram's own builds take, and the tables are vacuumed and
analysed after, so the restored store searches it at once, its queries planned on
statistics.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from engram.core.errors import Conflict, StorageFailure
from engram.storage import staging
from engram.storage.postgres import database
from engram.storage.postgres.database import redact
from engram.storage.postgres.vectors import BUILD_MEMORY
from engram.storage.staging import check_digest, sha256, staged_backup

TABLES = ("engram_schema", *staging.TABLES)
DUMP_NAME = "engram.dump"
TOOL_TIMEOUT_S = 3600
KEPT_PREFIX = "before-restore-"  # the backup a restore keeps of the database it replaced


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
    return _made(url, dest_dir, pg_dump, pg_restore, keep=keep)


def _made(
    url: str,
    dest_dir: str | os.PathLike[str],
    pg_dump: str,
    pg_restore: str,
    *,
    keep: int | None = None,
    prefix: str = staging.PREFIX,
) -> Path:
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

    return staged_backup(dest_dir, keep, build, prefix=prefix)


def restore(backup_dir: str | os.PathLike[str], url: str, *, tools_dir: str = "") -> Path | None:
    """Puts the backup ``backup_dir`` back into the database at ``url``; returns the
    backup kept of the engram store it replaced (``before-restore-<time>`` beside
    ``backup_dir``, itself a backup to restore), or None when the database held none.

    The dump must match its manifest's sha256, and no engram process may be connected
    (each is named). ``pg_restore`` runs in one transaction: it restores all or nothing.
    Raises NotFound (no backup), InvalidInput (not a PostgreSQL backup, or one changed
    since it was made), Conflict (engram processes connected, or a store of another
    schema version in the database: restore into an empty one), StorageFailure (a tool
    missing or failing, or the server refusing); in every case the database is as it was.
    """
    backup_path = Path(backup_dir)
    manifest = staging.read_manifest(backup_path, DUMP_NAME)
    pg_dump, pg_restore = find_tool("pg_dump", tools_dir), find_tool("pg_restore", tools_dir)
    dump = backup_path / DUMP_NAME
    check_digest(backup_path, DUMP_NAME, dump, manifest.sha256)
    database.check_sole(url, done="restored", then="restore")
    held = database.schema_version(url)
    # The dump's engram_schema holds a row a migration applied: its version. A store of
    # another version has tables the dump does not name, which --clean would leave, rows
    # and all, beside the restored ones.
    backed_up = manifest.counts["engram_schema"]
    if held is not None and held != backed_up:
        raise Conflict(
            f"{backup_path} holds a store of schema version {backed_up} and the database at "
            f"{redact(url)} one of version {held}; nothing was restored",
            hint="restore it into a new, empty database (engram migrates it as it opens)",
        )
    kept = None
    if held is not None:
        kept = _made(url, backup_path.parent, pg_dump, pg_restore, prefix=KEPT_PREFIX)
    conninfo, env = _without_password(url)
    # The scopes' graphs are built as their indexes are restored: with the memory engram's
    # own builds take, not the server's default (64 MB, which a graph of 100,000 vectors
    # outgrows), and, with nothing else running, the server's parallel workers.
    env["PGOPTIONS"] = f"{env.get('PGOPTIONS', '')} -c maintenance_work_mem={BUILD_MEMORY}"
    command = [pg_restore, "--clean", "--if-exists", "--single-transaction", "--no-owner"]
    try:
        _run([*command, f"--dbname={conninfo}", str(dump)], env)
    except BaseException:
        if kept is not None:  # nothing was restored: the database is the one kept
            shutil.rmtree(kept, ignore_errors=True)
        raise
    try:  # a restored table has no statistics and no visibility map until this
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM (ANALYZE)")
    except psycopg.Error as exc:
        raise StorageFailure(
            f"restored {backup_path} to {redact(url)}, but could not vacuum it: {exc}",
            hint="run VACUUM (ANALYZE) on the database: until then its queries plan blind",
        ) from exc
    return kept


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
