"""In-process copies of scopes: a slow load holds up only its own stripe, and the budget holds."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from engram.storage.copies import ScopeCopies


@dataclass
class Copy:
    version: int
    nbytes: int = 10


def test_a_slow_load_does_not_hold_up_other_scopes() -> None:
    copies: ScopeCopies[Copy] = ScopeCopies(budget_bytes=1_000)
    assert copies.stripe("big") is not copies.stripe("small")
    loading, release = threading.Event(), threading.Event()

    def slow(_: Copy | None) -> Copy:
        loading.set()
        assert release.wait(30)
        return Copy(1)

    big = threading.Thread(target=copies.use, args=("big", lambda c: True, slow, lambda c: c))
    big.start()
    assert loading.wait(30)
    answered: list[Copy] = []
    small = threading.Thread(
        target=lambda: answered.append(
            copies.use("small", lambda c: True, lambda _: Copy(7), lambda c: c)
        )
    )
    small.start()
    small.join(10)
    early, still_loading = list(answered), big.is_alive()
    release.set()
    big.join(30)
    small.join(30)
    assert early == [Copy(7)] and still_loading  # answered while the big load ran


def test_one_scope_is_loaded_once_by_concurrent_readers() -> None:
    copies: ScopeCopies[Copy] = ScopeCopies(budget_bytes=1_000)
    loads: list[int] = []
    gate = threading.Barrier(4)

    def update(held: Copy | None) -> Copy:
        loads.append(1)
        return Copy(3)

    def reader() -> None:
        gate.wait()
        assert copies.use("s", lambda c: c.version == 3, update, lambda c: c.version) == 3

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(loads) == 1


def test_the_least_recently_used_copies_go_first() -> None:
    copies: ScopeCopies[Copy] = ScopeCopies(budget_bytes=25)
    for scope in ("a", "b"):
        copies.use(scope, lambda c: True, lambda _: Copy(1), lambda c: c)
    copies.use("a", lambda c: True, lambda _: Copy(1), lambda c: c)  # a is used again
    copies.use("c", lambda c: True, lambda _: Copy(1), lambda c: c)
    assert copies.held("b") is None
    assert copies.held("a") is not None and copies.held("c") is not None
