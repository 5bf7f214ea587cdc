"""How long work tells how far it has come: an import's phases, a re-embedding's batches."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, int], None]
"""Told (phase, done, total) as work moves; the command line draws it as a bar."""


def untold(_phase: str, _done: int, _total: int) -> None:
    """The progress of work no one asked to be told of."""
