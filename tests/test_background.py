"""The worker that does the work a search or a write asked for but must not wait for:
asked twice before its turn, once; asked while it runs, once more after only where the
work asks for itself or the ask may have seen what the running work did not read
(``again``)."""

from __future__ import annotations

import threading

import pytest

from engram.storage.background import Worker


def _worker(again: bool) -> tuple[Worker[str], list[str], threading.Event, threading.Event]:
    done: list[str] = []
    started, release = threading.Event(), threading.Event()

    def work(key: str) -> None:
        started.set()
        assert release.wait(30), "never released"
        done.append(key)

    return Worker("test", work, again=again), done, started, release


@pytest.mark.parametrize(("again", "runs"), [(False, 1), (True, 2)])
def test_work_asked_for_while_it_runs_runs_again_only_where_asked_to(
    again: bool, runs: int
) -> None:
    worker, done, started, release = _worker(again)
    try:
        worker.want("scope")
        assert started.wait(30), "the work never started"
        worker.want("scope")  # while it runs: what it read may be older than this ask
        worker.want("scope")  # and again before its next turn: still once more
        release.set()
        assert worker.settle(30)
        assert done == ["scope"] * runs
    finally:
        release.set()
        worker.close()


def test_work_asked_for_twice_before_its_turn_runs_once() -> None:
    worker, done, started, release = _worker(again=True)
    try:
        worker.want("first")
        assert started.wait(30), "the work never started"
        worker.want("second")
        worker.want("second")
        release.set()
        assert worker.settle(30)
        assert done == ["first", "second"]
    finally:
        release.set()
        worker.close()


def test_work_that_asks_for_itself_as_it_runs_runs_again() -> None:
    done: list[str] = []

    def work(key: str) -> None:
        done.append(key)
        if len(done) == 1:
            worker.want(key)  # what it read changed under it: from the start again

    worker: Worker[str] = Worker("test", work)
    try:
        worker.want("scope")
        assert worker.settle(30)
        assert done == ["scope", "scope"]
    finally:
        worker.close()


def test_closing_interrupts_the_work_at_hand_until_it_ends() -> None:
    """An interrupt that lands before the step it stops (the work had not yet begun it)
    is sent again until the work ends; close waits for that, not for the step run whole."""
    interrupts: list[None] = []
    started, stopped = threading.Event(), threading.Event()

    def work(key: str) -> None:
        started.set()
        assert stopped.wait(30), "never interrupted"  # a step that only an interrupt ends

    def interrupt() -> None:
        interrupts.append(None)
        if len(interrupts) == 3:  # the first two find the step not yet begun
            stopped.set()

    worker: Worker[str] = Worker("test", work)
    worker.want("scope")
    assert started.wait(30), "the work never started"
    worker.close(interrupt=interrupt)
    assert len(interrupts) >= 3  # more only where the thread was slow to end after
    assert worker.settle(0)
