"""One thread that does, a scope at a time, the work a search asked for but must not wait
for: building a scope's approximate vector index, loading its full-text postings.

The search that finds the work missing asks for it and answers another way meanwhile
(exact search, the FTS5 statement); later searches find it done. A scope asked for twice
before its turn is done once. ``settle`` waits for the queue to empty (benchmarks, tests);
``close`` stops the thread after the scope at hand, whose work checks ``closed``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("engram.storage")


class Worker:
    def __init__(self, name: str, work: Callable[[str], object]) -> None:
        self.name = name
        self._work = work
        self._wake = threading.Condition()
        self._wanted: dict[str, None] = {}  # scopes, in the order asked
        self._busy: str | None = None
        self._thread: threading.Thread | None = None
        self.closed = False

    def want(self, scope: str) -> None:
        """Asks for ``scope``'s work (once, however often asked before it runs)."""
        with self._wake:
            if self.closed or scope in self._wanted or self._busy == scope:
                return
            self._wanted[scope] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._wake.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until nothing is asked for or running; False when ``timeout`` passed."""
        with self._wake:
            return self._wake.wait_for(lambda: not self._wanted and self._busy is None, timeout)

    def close(self) -> None:
        with self._wake:
            self.closed = True
            self._wanted.clear()
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self.closed or bool(self._wanted))
                if self.closed:
                    self._thread = None
                    self._wake.notify_all()
                    return
                scope = next(iter(self._wanted))
                del self._wanted[scope]
                self._busy = scope
            try:
                self._work(scope)
            except Exception:  # the other way answers meanwhile; asked again later
                log.exception("%s: the work for a scope failed", self.name)
            finally:
                with self._wake:
                    self._busy = None
                    self._wake.notify_all()
