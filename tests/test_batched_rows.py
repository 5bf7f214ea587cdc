"""Many rows of one statement written to PostgreSQL as one statement over arrays
(``engram.storage.postgres.batched``), and where that is refused, once a row as before."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

import engram
from engram import Note, ResourceRef, Turn
from engram.storage.postgres import batched
from engram.storage.sql.dialect import postgres_dialect
from engram.storage.sql.tx import SQLTx

TABLE = (
    "CREATE TABLE held (k integer PRIMARY KEY, a text, b text, n smallint, big bigint, "
    "v halfvec(3))"
)
INSERT = "INSERT INTO held (k, a, b, n, big, v) VALUES (?, ?, ?, ?, ?, ?)"


class Counted:
    """A connection that counts the statements sent through it: one ``execute`` each,
    and every row of a cursor's ``executemany``."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.sent: Counter[str] = Counter()

    def execute(self, statement: str, params: Any = None) -> Any:
        self.sent["one"] += 1
        return self.conn.execute(statement, params)

    def cursor(self) -> Any:
        counted, cursor = self, self.conn.cursor()

        class Rows:
            def __enter__(self) -> Rows:
                return self

            def __exit__(self, *exc: object) -> None:
                cursor.close()

            def executemany(self, statement: str, rows: Sequence[Any]) -> None:
                counted.sent["a row"] += len(rows)
                cursor.executemany(statement, rows)

        return Rows()


@pytest.fixture
def held(postgres_url: str) -> Iterator[tuple[SQLTx, Counted]]:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        conn.execute(TABLE)
        counted = Counted(conn)
        dialect = postgres_dialect(lambda v: v, batched.Batcher().run)
        yield SQLTx(dialect, counted, write=True), counted


def _rows(count: int) -> list[tuple[Any, ...]]:
    odd = ['a "quoted", {braced} word', "", None, "naïve \\ back"]
    return [
        (
            i,
            odd[i % 4],
            None if i % 3 else f"b{i}",
            i % 7,
            2**40 + i,
            np.array([i / count, 0.5, -1.0], dtype=np.float32),
        )
        for i in range(count)
    ]


def _read(t: SQLTx) -> dict[int, tuple[Any, ...]]:
    rows = t.conn.conn.execute("SELECT k, a, b, n, big, v FROM held").fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4], _near(r[5].to_numpy())) for r in rows}


def _near(vector: Any) -> tuple[float, ...]:
    """A vector as the half-precision column holds it."""
    return tuple(float(x) for x in np.asarray(vector, dtype=np.float16))


def _expected(rows: list[tuple[Any, ...]]) -> dict[int, tuple[Any, ...]]:
    return {r[0]: (r[1], r[2], r[3], r[4], _near(r[5])) for r in rows}


def test_an_insert_s_rows_go_as_one_statement_and_read_back_as_written(
    held: tuple[SQLTx, Counted], monkeypatch: pytest.MonkeyPatch
) -> None:
    t, counted = held
    rows = _rows(2_500)
    t.executemany(INSERT, rows)
    assert counted.sent == {"one": 2}  # the table's columns read once, then the rows
    assert _read(t) == _expected(rows)
    more = [(k + 10_000, *rest) for k, *rest in _rows(2_500)]
    monkeypatch.setattr(batched, "AT_ONCE", 1_000)
    counted.sent.clear()
    t.executemany(INSERT, more)
    assert counted.sent == {"one": 3}  # a thousand rows a statement, the types known
    assert _read(t) == _expected(rows) | _expected(more)


def test_an_upsert_whose_rows_share_a_key_is_written_a_row_at_a_time(
    held: tuple[SQLTx, Counted],
) -> None:
    """One statement cannot update a row twice; a row at a time, the second row updates
    what the first inserted, as it always did."""
    t, counted = held
    upsert = f"{INSERT} ON CONFLICT (k) DO UPDATE SET b = excluded.b"
    vector = np.zeros(3, dtype=np.float32)
    t.executemany(upsert, [(1, "a1", "b1", 1, 1, vector), (1, "a2", "b2", 2, 2, vector)])
    assert counted.sent["a row"] == 2
    assert _read(t)[1][:2] == ("a1", "b2")
    counted.sent.clear()  # no key shared: one statement, each row's conflict its own
    t.executemany(upsert, [(1, "a3", "b3", 1, 1, vector), (2, "a4", "b4", 2, 2, vector)])
    assert counted.sent == {"one": 2}
    assert {k: v[:2] for k, v in _read(t).items()} == {1: ("a1", "b3"), 2: ("a4", "b4")}
    counted.sent.clear()  # nothing done on a conflict: shared keys are one statement
    t.executemany(
        f"{INSERT} ON CONFLICT DO NOTHING",
        [(3, "first", None, 1, 1, vector), (3, "second", None, 1, 1, vector)],
    )
    assert counted.sent == {"one": 1} and _read(t)[3][0] == "first"


def test_a_column_of_several_python_types_goes_as_the_server_takes_it(
    held: tuple[SQLTx, Counted],
) -> None:
    """The driver types an array by its first value: integers among a float column's go
    as floats in one statement; values of other mixed types go a row at a time, each
    dumped on its own, as before."""
    t, counted = held
    t.conn.conn.execute("ALTER TABLE held ADD COLUMN score double precision")
    scored = "INSERT INTO held (k, score) VALUES (?, ?)"
    t.executemany(scored, [(1, 1), (2, 0.5), (3, None), (4, 2**53)])
    assert counted.sent == {"one": 2}
    counted.sent.clear()
    t.executemany(scored, [(5, 0.25), (6, np.float32(0.75))])  # a float and numpy's
    assert counted.sent == {"a row": 2}
    found = dict(t.conn.conn.execute("SELECT k, score FROM held").fetchall())
    assert found == {1: 1.0, 2: 0.5, 3: None, 4: float(2**53), 5: 0.25, 6: 0.75}


def test_a_delete_by_equal_columns_goes_as_one_statement(held: tuple[SQLTx, Counted]) -> None:
    t, counted = held
    rows = _rows(100)
    t.executemany(INSERT, rows)
    counted.sent.clear()
    gone = [(r[0], r[1]) for r in rows[:40]] + [(50, "no such a"), (60, None)]
    t.executemany("DELETE FROM held WHERE k = ? AND a = ?", gone)
    assert counted.sent == {"one": 1}  # the table's columns known from the insert
    # a NULL equals nothing, in either form: row 2 (a NULL) stays, as row 60 does
    assert set(_read(t)) == {2, 6, 10, 14, 18, 22, 26, 30, 34, 38} | set(range(40, 100))


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO held (k, a) SELECT ?, ? WHERE true",
        "UPDATE held SET a = ? WHERE k = ?",
        "DELETE FROM held WHERE k = ? OR a = ?",
        "INSERT INTO held (k, nothing) VALUES (?, ?)",
    ],
)
def test_a_statement_of_another_shape_runs_a_row_at_a_time(
    held: tuple[SQLTx, Counted], statement: str
) -> None:
    t, counted = held
    rows = [(f"a{k}", k) if "UPDATE" in statement else (k, f"a{k}") for k in range(5)]
    if "nothing" in statement:  # a column the table lacks: the row's own error
        with pytest.raises(psycopg.errors.UndefinedColumn):
            t.executemany(statement, rows)
        return
    t.executemany(statement, rows)
    assert counted.sent["a row"] == 5


def test_a_batch_of_facts_writes_what_it_wrote_a_row_a_statement(
    postgres_admin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same batch and conversation into two stores, one with rows batched and one
    without: the same session entries, vectors, tags, names (mentions, their types and
    groundings, entities), relations and ledger items; and in the batched one no row of
    them a statement of its own."""
    import postgres_server

    notes = [
        Note(f"Ana Reis moved to Porto in 2021 and works at Velmar, note {i}", tags=["t", f"n{i}"])
        for i in range(40)
    ] + [Note("Bruno Costa's sister Mia lives in Braga", tags=["t"])]
    turns = [Turn("Ana", f"been to Lisbon {i} times?", metadata={"n": i}) for i in range(30)]
    urls = [postgres_server.store_database(postgres_admin) for _ in range(2)]
    try:
        written = []
        per_row: list[str] = []
        real = psycopg.Cursor.executemany

        def spied(self: Any, statement: Any, rows: Any, **kw: Any) -> Any:
            rows = list(rows)
            per_row.extend([str(statement).split("(")[0]] * len(rows))
            return real(self, statement, rows, **kw)

        for url, batching in zip(urls, (True, False), strict=True):
            per_row.clear()
            monkeypatch.setattr(psycopg.Cursor, "executemany", spied)
            if not batching:
                monkeypatch.setattr(batched.Batcher, "run", lambda *a: False)
            with engram.open(url, embedder=engram.HashingEmbedder(32)) as mem:
                mem.remember_many(ResourceRef("b"), notes)
                mem.remember_conversation(ResourceRef("b"), turns, session_id="s")
            monkeypatch.undo()
            written.append(_written(url))
            assert (per_row == []) if batching else (len(per_row) > 100)
        assert written[0] == written[1]
        assert written[0]["mentions"] and written[0]["relations"] and written[0]["ledger"]
    finally:
        for url in urls:
            postgres_server.drop_database(postgres_admin, url)


def _written(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        register_vector(conn)

        def read(statement: str) -> list[Any]:
            return sorted(tuple(map(str, r)) for r in conn.execute(statement).fetchall())

        return {
            "vectors": read(
                "SELECT f.content, v.vector FROM facts f JOIN fact_vectors v ON v.fact = f.seq"
            ),
            "entries": read(
                "SELECT session_id, idx, kind, role, content, data FROM session_entries"
            ),
            "tags": read("SELECT f.content, t.tag FROM facts f JOIN fact_tags t ON t.fact = f.seq"),
            "mentions": read(
                'SELECT f.content, m.start, m."end", e.name, m.type, m.grounds FROM mentions m '
                "JOIN facts f ON f.id = m.fact_id JOIN entities e ON e.id = m.entity"
            ),
            "groundings": read(
                "SELECT f.content, e.name FROM groundings g JOIN facts f ON f.id = g.fact_id "
                "JOIN entities e ON e.id = g.entity"
            ),
            "entities": read("SELECT name, type FROM entities"),
            "relations": read(
                "SELECT s.name, r.type, o.name, f.content FROM relations r "
                "JOIN entities s ON s.id = r.source JOIN entities o ON o.id = r.target "
                "JOIN relation_support rs ON rs.relation = r.id JOIN facts f ON f.id = rs.fact_id"
            ),
            "ledger": read(
                "SELECT i.kind, i.action, i.before IS NULL, count(*) FROM ledger_items i "
                "GROUP BY 1, 2, 3"
            ),
        }
