"""Allowances: which applications may read what another application remembers of a person.

One allowance per person and (source, reader) pair: "reader may use what source
remembers of me". Only the person allows or stops; stopping takes effect on the very
next read, because every read asks the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from engram.core import ledger, recording
from engram.core.clock import Clock, from_us, now_us, to_us
from engram.core.errors import InvalidInput, NotFound, Unprocessable
from engram.core.models import LIBRARY, Writer
from engram.core.records import Share as Share  # re-exported
from engram.core.scopes import PersonAppRef, check_app
from engram.core.text import check_text

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx

MAX_PERSON_CHARS = 256
T = TypeVar("T")


class Sharing:
    """A person's allowances between applications."""

    def __init__(self, store: Store, *, clock: Clock = now_us, writer: Writer = LIBRARY) -> None:
        self._store = store
        self._now = clock
        self._writer = writer

    def allow(self, person: str, source: str, reader: str) -> Share:
        """Lets ``reader`` use what ``source`` remembers of ``person``; idempotent.
        Raises Unprocessable for an application as its own reader."""
        person, source, reader = _checked(person, source, reader)
        if source == reader:
            raise Unprocessable(f"{source} cannot be its own reader: it reads its own already")
        now, store = self._now(), self._store
        wanted = Share(person, source, reader, from_us(now))

        def write(rec: ledger.Entry) -> Share:
            stored = store.shares.get(rec.tx, person, source, reader)
            if stored is not None:  # allowing again keeps the first allowed_at
                return stored
            store.shares.put(rec.tx, wanted)
            rec.record("share", share_id(person, source, reader), "allow", ledger.allowance(None))
            return wanted

        return store.run(lambda tx: self._entry(tx, person, source, "allow", now, write))

    def stop(self, person: str, source: str, reader: str) -> None:
        """Stops an allowance. Raises NotFound when it was never allowed."""
        checked, now, store = _checked(person, source, reader), self._now(), self._store

        def write(rec: ledger.Entry) -> bool:
            stored = store.shares.get(rec.tx, *checked)
            if stored is None:
                return False
            store.shares.delete(rec.tx, *checked)
            before = ledger.allowance(to_us(stored.allowed_at))
            rec.record("share", share_id(*checked), "stop", before)
            return True

        if not store.run(lambda tx: self._entry(tx, checked[0], checked[1], "stop", now, write)):
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

    def _entry(
        self, tx: Tx, person: str, source: str, op: str, now: int, work: Callable[[ledger.Entry], T]
    ) -> T:
        """``work`` as an entry of the ledger of what ``source`` remembers of ``person``."""
        scope = PersonAppRef(person, source)
        return recording.write(self._store, tx, scope, f"share.{op}", self._writer, now, work)


def share_id(person: str, source: str, reader: str) -> str:
    """An allowance as one ledger object id."""
    return "\x1f".join((person, source, reader))


def share_parts(object_id: str) -> tuple[str, str, str]:
    person, source, reader = object_id.split("\x1f")
    return person, source, reader


def _checked(person: str, source: str, reader: str) -> tuple[str, str, str]:
    return (
        check_text(person, "person", max_chars=MAX_PERSON_CHARS),
        check_app(source),
        check_app(reader),
    )
