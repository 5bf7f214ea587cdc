"""The backends, one per kind of store: what the edges do with a store by where it is.

A target is a ``postgresql://`` URL or a SQLite file path. Everything an edge does with a
store as a whole (open it, show where it is, back it up, restore it, find who else has
it open) goes through the :class:`Backend` of its target, so no edge branches on the URL
scheme or imports a storage module (import-linter holds them to it). Storage modules
load only when used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from engram.core.health import Scrubbed
    from engram.core.ports import Store

Target = str | os.PathLike[str]
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Backend(Protocol):
    """A kind of store, as the edges use it."""

    @property
    def name(self) -> str: ...

    def open(self, target: Target, *, apply_migrations: bool = True) -> Store: ...

    def describe(self, target: Target) -> str:
        """Where the store is, as it may be shown (never a password)."""
        ...

    def backup(
        self, target: Target, dest_dir: Target, *, keep: int | None, tools_dir: str = ""
    ) -> Path:
        """A new verified backup under ``dest_dir``; only the ``keep`` newest stay.
        ``tools_dir``: where the backend's own tools are, if it needs any
        (``ENGRAM_PG_BIN``)."""
        ...

    def restore(self, backup_dir: Target, target: Target, *, tools_dir: str = "") -> Path | None:
        """Puts a backup back; returns where the replaced store is kept, if anywhere.
        ``tools_dir`` as for :meth:`backup`."""
        ...

    def exists(self, target: Target) -> bool:
        """Whether a store is there to read: opening creates one where there is none,
        which a command that only reads must not do."""
        ...

    def scrub(self, target: Target, *, vectors: bool = False) -> Scrubbed:
        """Takes every word a write erased for good out of the store's files, now: a write
        that erases does so itself on SQLite; PostgreSQL keeps such bytes until its tables
        are written anew, which this does (the vectors' table too with ``vectors``; SQLite
        overwrites an erased fact's vector where it erases it)."""
        ...

    def check_sole(self, target: Target, *, done: str, then: str) -> None:
        """Raises Conflict naming the other processes that have the store open, before
        maintenance that every reader relies on (a re-embedding, a migration): "…;
        nothing was ``done``", with the hint to stop them and ``then`` retry. This
        process must not have the store open itself."""
        ...


def is_url(target: Target) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def backend_for(target: Target) -> Backend:
    """The backend of ``target``: PostgreSQL for its URLs, else a SQLite file."""
    return POSTGRES if is_url(target) else SQLITE


@dataclass(frozen=True, slots=True)
class _SQLite:
    name: str = "sqlite"

    def open(self, target: Target, *, apply_migrations: bool = True) -> Store:
        from engram.storage.sqlite import SQLiteStore

        return SQLiteStore(target)  # a file is always migrated when opened

    def describe(self, target: Target) -> str:
        return os.path.abspath(target)

    def backup(
        self, target: Target, dest_dir: Target, *, keep: int | None, tools_dir: str = ""
    ) -> Path:
        from engram.storage.sqlite import backup

        return backup.backup(target, dest_dir, keep=keep)

    def restore(self, backup_dir: Target, target: Target, *, tools_dir: str = "") -> Path | None:
        from engram.storage.sqlite import backup

        return backup.restore(backup_dir, target)

    def exists(self, target: Target) -> bool:
        return Path(target).exists()

    def scrub(self, target: Target, *, vectors: bool = False) -> Scrubbed:
        from engram.storage.sqlite import scrub

        return scrub.scrub(str(target))

    def check_sole(self, target: Target, *, done: str, then: str) -> None:
        from engram.storage.sqlite import owner

        owner.check_sole(Path(target), done=done, then=then)


@dataclass(frozen=True, slots=True)
class _Postgres:
    name: str = "postgres"

    def open(self, target: Target, *, apply_migrations: bool = True) -> Store:
        from engram.storage.postgres import PostgresStore

        return PostgresStore(str(target), apply_migrations=apply_migrations)

    def describe(self, target: Target) -> str:
        from engram.storage.postgres.database import redact

        return redact(str(target))

    def backup(
        self, target: Target, dest_dir: Target, *, keep: int | None, tools_dir: str = ""
    ) -> Path:
        from engram.storage.postgres import backup

        return backup.backup(str(target), dest_dir, keep=keep, tools_dir=tools_dir)

    def exists(self, target: Target) -> bool:
        from engram.storage.postgres import database

        return database.has_schema(str(target))

    def scrub(self, target: Target, *, vectors: bool = False) -> Scrubbed:
        from engram.storage.postgres import scrub

        return scrub.scrub(str(target), vectors=vectors)

    def check_sole(self, target: Target, *, done: str, then: str) -> None:
        from engram.storage.postgres import database

        database.check_sole(str(target), done=done, then=then)

    def restore(self, backup_dir: Target, target: Target, *, tools_dir: str = "") -> Path | None:
        from engram.storage.postgres import backup

        return backup.restore(backup_dir, str(target), tools_dir=tools_dir)


SQLITE: Backend = _SQLite()
POSTGRES: Backend = _Postgres()
