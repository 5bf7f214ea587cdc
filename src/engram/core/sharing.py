"""Allowances: which applications may read what another application remembers of a person.

One allowance per person and (source, reader) pair: "reader may use what source
remembers of me". Only the person allows or stops; stopping takes effect on the very
next read, because every read asks the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from engram.core.clock import now_us
from engram.core.errors import InvalidInput, NotFound, Unprocessable
from engram.core.scopes import check_app
from engram.core.text import check_text

MAX_PERSON_CHARS = 256


@dataclass(frozen=True, slots=True)
class Share:
    person: str
    source: str
    reader: str
    allowed_at: datetime


class ShareStore(Protocol):
    def share_put(self, person: str, source: str, reader: str, now_us: int) -> Share:
        """Allows; allowing again keeps the first ``allowed_at``."""
        ...

    def share_delete(self, person: str, source: str, reader: str) -> bool: ...

    def shares_list(
        self, person: str, *, source: str | None, reader: str | None
    ) -> list[Share]: ...


class Sharing:
    """A person's allowances between applications."""

    def __init__(self, store: ShareStore) -> None:
        self._store = store

    def allow(self, person: str, source: str, reader: str) -> Share:
        """Lets ``reader`` use what ``source`` remembers of ``person``; idempotent.
        Raises Unprocessable for an application as its own reader."""
        person, source, reader = _checked(person, source, reader)
        if source == reader:
            raise Unprocessable(f"{source} cannot be its own reader: it reads its own already")
        return self._store.share_put(person, source, reader, now_us())

    def stop(self, person: str, source: str, reader: str) -> None:
        """Stops an allowance. Raises NotFound when it was never allowed."""
        if not self._store.share_delete(*_checked(person, source, reader)):
            raise NotFound(f"{reader} was not allowed to read what {source} remembers")

    def shares(
        self, person: str, *, source: str | None = None, reader: str | None = None
    ) -> list[Share]:
        """Who reads what ``source`` remembers of the person, or what ``reader`` reads
        besides its own: at most one of them; neither lists all the person's allowances."""
        if source is not None and reader is not None:
            raise InvalidInput("give source or reader, not both")
        return self._store.shares_list(
            check_text(person, "person", max_chars=MAX_PERSON_CHARS),
            source=None if source is None else check_app(source),
            reader=None if reader is None else check_app(reader),
        )

    def sources_for(self, person: str, reader: str) -> list[str]:
        """The applications whose memories of ``person`` ``reader`` may read now."""
        return [share.source for share in self.shares(person, reader=reader)]


def _checked(person: str, source: str, reader: str) -> tuple[str, str, str]:
    return (
        check_text(person, "person", max_chars=MAX_PERSON_CHARS),
        check_app(source),
        check_app(reader),
    )
