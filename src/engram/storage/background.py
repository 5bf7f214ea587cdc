"""One thread that does, one at a time, the work a search asked for but must not wait
for: building a scope's approximate vector index, reading a long full-text posting.

The search that finds the work missing asks for it and answers another way meanwhile
(exact search, the FTS5 statement); later searches find it done. Work asked for twice
before its turn is done once. Asked for while it runs, it is done once more after when
the work asks for itself (it found it must start over), or when the worker is made with
``again=True``: the ask saw a state the running work may not have read (a write
committed while a scope's index was being built). ``settle`` waits
for the queue to empty (benchmarks, tests); ``close`` stops the thread after the work at
hand, which checks ``closed`` (or is interrupted: see :meth:`Worker.close`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

log = logging.getLogger("engram.storage")

# How often ``close`` interrupts work that has not yet ended: an interrupt can land just
# before the work's next step, which then runs whole unless it is interrupted again.
INTERRUPT_EVERY = 0.05


K = TypeVar("K", bound=Hashable)  # what work is asked for: a scope, a scope's term


class Worker(Generic[K]):
    def __init__(self, name: str, work: Callable[[K], object], *, again: bool = False) -> None:
        self.name = name
        self._work = work
        self._again = again
        self._wake = threading.Condition()
        self._wanted: dict[K, None] = {}  # in the order asked
        self._busy: K | None = None
        self._thread: threading.Thread | None = None
        self.closed = False

    def want(self, key: K) -> None:
        """Asks for ``key``'s work (once, however often asked before it runs; once more
        after it, when asked while it runs by the work itself or where the worker does
        work ``again``)."""
        with self._wake:
            itself = threading.current_thread() is self._thread
            if self.closed or key in self._wanted:
                return
            if self._busy == key and not (self._again or itself):
                return
            self._wanted[key] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._wake.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until nothing is asked for or running; False when ``timeout`` passed."""
        with self._wake:
            return self._wake.wait_for(lambda: not self._wanted and self._busy is None, timeout)

    def close(self, interrupt: Callable[[], object] | None = None) -> None:
        """Stops the thread once the work at hand ends. ``interrupt`` (a server-side
        statement's cancel) is called until it has: work that checked ``closed`` before it
        was set and had not yet started the step the interrupt stops would otherwise run
        that step whole."""
        with self._wake:
            self.closed = True
            self._wanted.clear()
            self._wake.notify_all()
            thread = self._thread
        if thread is None:
            return
        if interrupt is None:
            thread.join()
            return
        while thread.is_alive():
            interrupt()
            thread.join(INTERRUPT_EVERY)

    def _run(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self.closed or bool(self._wanted))
                if self.closed:
                    self._thread = None
                    self._wake.notify_all()
                    return
                key = next(iter(self._wanted))
                del self._wanted[key]
                self._busy = key
            try:
                self._work(key)
            except Exception:  # the other way answers meanwhile; asked again later
                log.exception("%s: the work asked for failed", self.name)
            finally:
                with self._wake:
                    self._busy = None
                    self._wake.notify_all()
