"""What differs in the SQL of the two backends, as little as it is.

Statements are written once with ``?`` placeholders and no ``%``; :meth:`Dialect.sql`
gives each driver its own spelling. Everything else the two share: ``ON CONFLICT ... DO
UPDATE SET x = excluded.x``, ``RETURNING``, row values, ``CAST(? AS TEXT)`` for a
parameter that may be NULL.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True, slots=True)
class Dialect:
    """``mark``: the driver's placeholder. ``scope_by_id``: how a lookup by id also checks
    the scope. ``vector``: a vector as the driver binds it; ``unvector``: a stored vector
    as float32. ``listed``: a list as one parameter; ``member``: the test that a column
    is in it (``{column}``, one ``?``)."""

    mark: str
    scope_by_id: str
    vector: Callable[[Any], object]
    unvector: Callable[[Any], Any]
    listed: Callable[[Sequence[Any]], object]
    member: str

    def sql(self, text: str) -> str:
        """``text`` (``?`` placeholders) in this driver's spelling."""
        return text if self.mark == "?" else _spelled(text, self.mark)

    def unvector_bytes(self, raw: bytes) -> Any:
        """A vector from little-endian float32 bytes."""
        return _floats(raw, "<f4")

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[object]]:
        """``column IN (values)`` as one parameter, whatever the number of values."""
        return self.member.format(column=column), [self.listed(list(values))]


@lru_cache(maxsize=1024)
def _spelled(text: str, mark: str) -> str:
    return text.replace("?", mark)


SQLITE = Dialect(
    mark="?",
    # Lookups by id go through the id index; the unary + keeps SQLite's planner from
    # choosing the scope index instead (which walks the whole scope).
    scope_by_id="+scope = ?",
    vector=lambda v: v.astype("<f4").tobytes(),
    unvector=lambda raw: _floats(raw, "<f4"),
    listed=json.dumps,
    member="{column} IN (SELECT value FROM json_each(?))",
)


def postgres_dialect(vector: Callable[[Any], object]) -> Dialect:
    return Dialect(
        mark="%s",
        scope_by_id="scope = ?",
        vector=vector,
        unvector=lambda raw: _floats(raw, None),
        listed=lambda values: values,
        member="{column} = ANY(?)",
    )


def _floats(raw: Any, stored: str | None) -> Any:
    import numpy as np  # only vector reads need it

    if stored is not None:
        return np.frombuffer(raw, dtype=stored).astype(np.float32)
    if hasattr(raw, "to_numpy"):  # pgvector's Vector
        raw = raw.to_numpy()
    return np.asarray(raw, dtype=np.float32)
