"""A store over one SQL database: the unit of work and the rows of every table.

A backend gives its database (which opens transactions, retries them and translates
driver errors), its own fact rows and candidates, and the part of the health report
that is its own (full-text rows, bytes); everything else is shared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol, TypeVar

from engram.core.ports import CandidateRows, Tx
from engram.core.scopes import Scope
from engram.storage.sql.documents import DocumentTable
from engram.storage.sql.graph import GraphTable
from engram.storage.sql.health import HealthTable
from engram.storage.sql.ledger import LedgerTable
from engram.storage.sql.tables import (
    AgentTable,
    FactTable,
    ModelTable,
    SessionTable,
    ShareTable,
    WorkingTable,
)
from engram.storage.sql.tx import SQLTx
from engram.storage.sql.usage import UsageTable

T = TypeVar("T")


class Database(Protocol):
    schema_version: int

    def transaction(self, *, write: bool = True) -> AbstractContextManager[SQLTx]: ...

    def run(self, work: Callable[[SQLTx], T], *, write: bool = True) -> T: ...

    def close(self) -> None: ...


class SQLStore:
    """The core's Store port (:class:`engram.core.ports.Store`) over ``db``."""

    def __init__(
        self,
        db: Database,
        facts: FactTable,
        candidates: CandidateRows,
        health: HealthTable,
        *,
        models: ModelTable | None = None,
    ) -> None:
        self.db = db
        self.working = WorkingTable()
        self.facts = facts
        self.candidates = candidates
        self.models = models or ModelTable()
        self.agents = AgentTable()
        self.shares = ShareTable()
        self.ledger = LedgerTable()
        self.sessions = SessionTable()
        self.graph = GraphTable()
        self.usage = UsageTable()
        self.documents = DocumentTable()
        self.health = health

    @property
    def schema_version(self) -> int:
        return self.db.schema_version

    @contextmanager
    def transaction(self, *, write: bool = True, lock: Sequence[Scope] = ()) -> Iterator[Tx]:
        with self.db.transaction(write=write) as tx:
            tx.lock(lock)
            yield tx

    def run(self, work: Callable[[Tx], T], *, write: bool = True, lock: Sequence[Scope] = ()) -> T:
        if not lock:
            return self.db.run(work, write=write)

        def locked(tx: SQLTx) -> T:
            tx.lock(lock)
            return work(tx)

        return self.db.run(locked, write=write)

    def close(self) -> None:
        self.db.close()
