"""In-process copies of scopes (vectors, full-text postings), kept to a byte budget.

A copy is loaded or brought up to date under one of a few striped locks, picked by the
scope, so the seconds a large scope's first load can take hold up only the scopes that
share its stripe, never the whole process. The table of copies has its own short lock;
the least recently used copies are dropped first when the budget is exceeded.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

STRIPES = 64


class Sized(Protocol):
    @property
    def nbytes(self) -> int: ...


T = TypeVar("T", bound=Sized)
R = TypeVar("R")


class ScopeCopies(Generic[T]):
    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._copies: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(STRIPES)]

    def use(
        self,
        scope: str,
        current: Callable[[T], bool],
        update: Callable[[T | None], T],
        read: Callable[[T], R],
    ) -> R:
        """``read`` of the scope's copy, after ``update`` (given the held copy, or None)
        when the held copy is not ``current``; both run under the scope's stripe lock."""
        with self.stripe(scope):
            with self._lock:
                held = self._copies.get(scope)
                if held is not None:
                    self._copies.move_to_end(scope)
            if held is None or not current(held):
                held = update(held)
                with self._lock:
                    self._copies[scope] = held
                    self._copies.move_to_end(scope)
                    self._evict()
            return read(held)

    def held(self, scope: str) -> T | None:
        with self._lock:
            return self._copies.get(scope)

    def forget(self, scope: str) -> None:
        with self._lock:
            self._copies.pop(scope, None)

    def clear(self) -> None:
        with self._lock:
            self._copies.clear()

    def stripe(self, scope: str) -> threading.Lock:
        return self._stripes[zlib.crc32(scope.encode("utf-8")) % STRIPES]

    def evict(self) -> None:
        """Drops the least recently used copies past the budget (the newest stays)."""
        with self._lock:
            self._evict()

    def _evict(self) -> None:
        total = sum(c.nbytes for c in self._copies.values())
        while total > self.budget_bytes and len(self._copies) > 1:
            _, dropped = self._copies.popitem(last=False)
            total -= dropped.nbytes
