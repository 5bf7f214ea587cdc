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
    as float32, whatever precision the backend stores it at. ``listed``: a list as one
    parameter; ``member``: the test that a column is in it (``{column}``, one ``?``).
    ``batched``: runs a statement (in the driver's spelling) over many rows as one
    statement on a connection, and says whether it could (None: never).
    ``binary_rows``: whether the driver reads rows in the server's binary form."""

    mark: str
    scope_by_id: str
    vector: Callable[[Any], object]
    unvector: Callable[[Any], Any]
    listed: Callable[[Sequence[Any]], object]
    member: str
    batched: Callable[[Any, str, Sequence[Sequence[Any]]], bool] | None = None
    binary_rows: bool = False

    def sql(self, text: str) -> str:
        """``text`` (``?`` placeholders) in this driver's spelling."""
        return text if self.mark == "?" else _spelled(text, self.mark)

    def unvector_bytes(self, raw: bytes) -> Any:
        """A vector from little-endian float32 bytes (the wire's and the ledger's form, not
        necessarily the store's)."""
        return _floats(raw, "<f4")

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[object]]:
        """``column IN (values)`` as one parameter, whatever the number of values."""
        return self.member.format(column=column), [self.listed(list(values))]


@lru_cache(maxsize=1024)
def _spelled(text: str, mark: str) -> str:
    return text.replace("?", mark)


# How SQLite stores a vector: little-endian float16, half float32's bytes. A stored vector
# is L2-normalised, so each value lies in [-1, 1], where float16 keeps 11 significant
# bits; read back, it is normalised again (float16's rounding moves its length by up to
# about 1e-4), so a score is the cosine PostgreSQL's operator gives, within 1e-5, and
# exact top-10s from float16 rows are float32's (0.9995 of them, 100k facts,
# BENCHMARKS.md). Searches compute in float32.
SQLITE_VECTOR = "<f2"


def sqlite_vector(vector: Any) -> bytes:
    """A vector as SQLite stores it (the core admits only values in [-1, 1]:
    ``rules.check_model``)."""
    import numpy as np

    return np.asarray(vector).astype(SQLITE_VECTOR).tobytes()


def sqlite_matrix(blobs: Sequence[bytes]) -> Any:
    """Stored vectors (of one width) as one float32 matrix of unit rows, a row each."""
    import numpy as np

    joined = np.frombuffer(b"".join(blobs), dtype=SQLITE_VECTOR)
    matrix = joined.reshape(len(blobs), -1).astype(np.float32)
    # Each row's length by einsum: a third of linalg.norm's time (8 against 1.9 ms for
    # 20,000 rows of 384), and a row's the same wherever it sits.
    lengths = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
    matrix /= np.maximum(lengths, np.float32(1e-12))
    return matrix


def cosines(matrix: Any, query: Any) -> Any:
    """Each row of ``matrix`` (unit rows) times ``query``, every row computed alike: BLAS's
    matrix-vector product gives two identical rows different last bits by where they sit
    in the matrix, so a tie between two facts of the same vector (a text and its word
    repeated) broke one way in a whole scope's search and the other among re-scored
    candidates."""
    import numpy as np

    scores: Any = np.einsum("ij,j->i", matrix, query)
    return scores


SQLITE = Dialect(
    mark="?",
    # Lookups by id go through the id index; the unary + keeps SQLite's planner from
    # choosing the scope index instead (which walks the whole scope).
    scope_by_id="+scope = ?",
    vector=sqlite_vector,
    unvector=lambda raw: sqlite_matrix([raw])[0],
    # Text goes as UTF-8, never as \u escapes: SQLite's JSON reads the escaped U+99999
    # (its mark for a character it cannot read) as nothing, so a key of it was never found.
    listed=lambda values: json.dumps(values, ensure_ascii=False),
    member="{column} IN (SELECT value FROM json_each(?))",
)


def postgres_dialect(
    vector: Callable[[Any], object],
    batched: Callable[[Any, str, Sequence[Sequence[Any]]], bool] | None = None,
) -> Dialect:
    return Dialect(
        mark="%s",
        scope_by_id="scope = ?",
        vector=vector,
        unvector=lambda raw: _floats(raw, None),
        listed=lambda values: values,
        member="{column} = ANY(?)",
        batched=batched,
        binary_rows=True,
    )


def _floats(raw: Any, stored: str | None) -> Any:
    import numpy as np  # only vector reads need it

    if stored is not None:
        return np.frombuffer(raw, dtype=stored).astype(np.float32)
    if hasattr(raw, "to_numpy"):  # pgvector's Vector or HalfVector
        raw = raw.to_numpy()
    floats = np.asarray(raw, dtype=np.float32)
    if getattr(raw, "dtype", None) == np.float16:  # stored at half precision: as SQLite's
        floats /= max(float(np.linalg.norm(floats)), 1e-12)
    return floats
