"""Allowances: which applications may read what another application remembers of a person.

One allowance per person and (source, reader) pair: "reader may use what source
remembers of me". Only the person allows or stops; stopping takes effect on the very
next read, because every read asks the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from engram.core.clock import Clock, from_us, now_us
from engram.core.errors import InvalidInput, NotFound, Unprocessable
from engram.core.scopes import check_app
from engram.core.text import check_text

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx

MAX_PERSON_CHARS = 256


@dataclass(frozen=True, slots=True)
class Share:
    person: str
    source: str
    reader: str
    allowed_at: datetime


class Sharing:
    """A person's allowances between applications."""

    def __init__(self, store: Store, *, clock: Clock = now_us) -> None:
        self._store = store
        self._now = clock

    def allow(self, person: str, source: str, reader: str) -> Share:
        """Lets ``reader`` use what ``source`` remembers of ``person``; idempotent.
        Raises Unprocessable for an application as its own reader."""
        person, source, reader = _checked(person, source, reader)
        if source == reader:
            raise Unprocessable(f"{source} cannot be its own reader: it reads its own already")
        wanted, store = Share(person, source, reader, from_us(self._now())), self._store

        def write(tx: Tx) -> Share:
            store.shares.put(tx, wanted)  # allowing again keeps the first allowed_at
            stored = store.shares.get(tx, person, source, reader)
            assert stored is not None
            return stored

        return store.run(write)

    def stop(self, person: str, source: str, reader: str) -> None:
        """Stops an allowance. Raises NotFound when it was never allowed."""
        checked, store = _checked(person, source, reader), self._store
        if not store.run(lambda tx: store.shares.delete(tx, *checked)):
            raise NotFound(f"{reader} was not allowed to read what {source} remembers")

    def shares(
        self, person: str, *, source: str | None = None, reader: str | None = None
    ) -> list[Share]:
        """Who reads what ``source`` remembers of the person, or what ``reader`` reads
        besides its own: at most one of them; neither lists all the person's allowances."""
        if source is not None and reader is not None:
            raise InvalidInput("give source or reader, not both")
        person = check_text(person, "person", max_chars=MAX_PERSON_CHARS)
        source = None if source is None else check_app(source)
        reader = None if reader is None else check_app(reader)
        store = self._store
        return store.run(lambda tx: store.shares.listed(tx, person, source, reader), write=False)

    def sources_for(self, person: str, reader: str) -> list[str]:
        """The applications whose memories of ``person`` ``reader`` may read now."""
        return [share.source for share in self.shares(person, reader=reader)]


def _checked(person: str, source: str, reader: str) -> tuple[str, str, str]:
    return (
        check_text(person, "person", max_chars=MAX_PERSON_CHARS),
        check_app(source),
        check_app(reader),
    )
