"""EngramStore held to LangGraph's own SQLite store (``langgraph-checkpoint-sqlite``), as
its users know it: the same operations on both, the same answers.

What upstream's stores accept, EngramStore accepts: a list for a namespace prefix, the
``langgraph`` root through ``batch``, a dotted path into nested fields as a filter key.
A search by meaning scores each item as upstream does, by ``distance_type``, with the
same embeddings (cosine similarity compared; upstream's SQLite store scores
``inner_product`` by the L1 distance and ranks ``l2`` farthest first, so those two are
held to their definitions instead). ``refresh_on_read`` pushes an item's expiry back on
a read, and nothing else of it changes.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pysqlite3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from langgraph.store.sqlite import SqliteStore

import engram
from engram.integrations.langgraph import EngramStore
from stores import ManualClock

EXAMPLES = int(os.environ.get("ENGRAM_LANGGRAPH_EXAMPLES", "40"))
EMBEDDER = engram.HashingEmbedder(64)
TEXTS = ["green tea in the morning", "a red bicycle", "tea with lemon", "morning runs", "x"]


def _embed(texts: list[str]) -> list[list[float]]:
    return [list(map(float, v)) for v in EMBEDDER.embed(texts, "passage")]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[EngramStore, SqliteStore]]:
    # upstream's SQLite store reads "text_fields" where IndexConfig says "fields": both read it
    index: Any = {"dims": 64, "embed": _embed, "text_fields": ["text"], "distance_type": "cosine"}
    conn = pysqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    theirs = SqliteStore(conn, index=index)
    theirs.setup()
    with engram.open(tmp_path / "lg.db", embedder=EMBEDDER) as mem:
        yield EngramStore(mem, index=index), theirs
    conn.close()


def _seen(items: list[Any]) -> set[tuple[tuple[str, ...], str, str]]:
    return {(tuple(i.namespace), i.key, repr(sorted(i.value.items()))) for i in items}


# engram keeps vectors at float16 on SQLite, upstream at float32: a score moves by
# under 1e-4 (storage/sql/dialect.py), never the set of items scored.
WITHIN = 5e-4


def _scored(items: list[Any]) -> dict[tuple[tuple[str, ...], str], float]:
    return {(tuple(i.namespace), i.key): i.score for i in items if i.score is not None}


values = st.fixed_dictionaries(
    {
        "text": st.sampled_from(TEXTS),
        "user": st.fixed_dictionaries({"level": st.integers(0, 3)}),
        "tag": st.sampled_from(["a", "b"]),
    }
)
spaces = st.sampled_from([("p", "one"), ("p", "two"), ("q",)])
steps = st.one_of(
    st.tuples(st.just("put"), spaces, st.sampled_from(["k1", "k2", "k3"]), values),
    st.tuples(st.just("delete"), spaces, st.sampled_from(["k1", "k2"])),
    st.tuples(st.just("search"), st.sampled_from([["p"], ("p",), ["p", "one"], []]), st.none()),
    st.tuples(
        st.just("search"),
        st.sampled_from([["p"], ("q",), ()]),
        st.sampled_from([{"user.level": 1}, {"tag": "a"}, {"user.level": 2, "tag": "b"}]),
    ),
    st.tuples(st.just("query"), st.sampled_from([["p"], ("q",), ()]), st.sampled_from(TEXTS)),
)


def test_engram_store_answers_as_upstreams_sqlite_store(
    pair: tuple[EngramStore, SqliteStore],
) -> None:
    ours, theirs = pair
    roots = (f"r{n}" for n in itertools.count())

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None)
    @given(st.lists(steps, min_size=2, max_size=12))
    def run(plan: list[tuple[Any, ...]]) -> None:
        root = next(roots)
        for step in plan:
            kind, where = step[0], [root, *step[1]]
            if kind == "put":
                for store in (ours, theirs):
                    store.put(tuple(where), step[2], step[3])
            elif kind == "delete":
                for store in (ours, theirs):
                    store.delete(tuple(where), step[2])
            elif kind == "search":  # a list prefix, a dotted filter: as upstream reads them
                mine = ours.search(where, filter=step[2], limit=100)
                assert _seen(mine) == _seen(theirs.search(where, filter=step[2], limit=100))
            else:  # scored by cosine similarity of the same embeddings
                mine = ours.search(where, query=step[2], limit=100)
                upstream = theirs.search(where, query=step[2], limit=100)
                assert _scored(mine) == pytest.approx(_scored(upstream), abs=WITHIN), step
                ranked = [i.score for i in mine if i.score is not None]
                assert ranked == sorted(ranked, reverse=True)

    run()


def test_the_langgraph_root_is_taken_through_batch_and_refused_by_put(
    pair: tuple[EngramStore, SqliteStore],
) -> None:
    for store in pair:
        store.batch([PutOp(("langgraph", "x"), "k", {"v": 1})])
        found = store.get(("langgraph", "x"), "k")
        assert found is not None and found.value == {"v": 1}
        with pytest.raises(Exception, match="langgraph"):
            store.put(("langgraph", "y"), "k", {"v": 1})


def test_distance_types_score_by_their_definitions(tmp_path: Path) -> None:
    texts = {"a": "green tea in the morning", "b": "a red bicycle"}
    asked = EMBEDDER.embed(["tea"], "query")[0]
    with engram.open(tmp_path / "lg.db", embedder=EMBEDDER) as mem:
        for distance, score in (
            ("cosine", lambda v: float(asked @ v / np.linalg.norm(asked) / np.linalg.norm(v))),
            ("inner_product", lambda v: float(asked @ v)),
            ("l2", lambda v: -float(np.linalg.norm(asked - v))),
        ):
            store = EngramStore(mem, index={"fields": ["text"], "distance_type": distance})
            for key, text in texts.items():
                store.put((distance,), key, {"text": text})
            found = store.search((distance,), query="tea")
            want = {k: score(EMBEDDER.embed([t], "passage")[0]) for k, t in texts.items()}
            assert {i.key: i.score for i in found} == pytest.approx(want, abs=WITHIN)
            assert [i.key for i in found] == sorted(want, key=lambda k: -want[k])
        with pytest.raises(engram.InvalidInput, match="distance_type must be one of"):
            EngramStore(mem, index={"fields": ["text"], "distance_type": "hamming"})  # type: ignore[typeddict-item]


def test_a_read_refreshes_the_expiry_when_asked_and_nothing_else(tmp_path: Path) -> None:
    clock = ManualClock()
    with engram.open(tmp_path / "lg.db", embedder=EMBEDDER, clock=clock) as mem:
        store = EngramStore(mem, ttl={"default_ttl": 10, "refresh_on_read": True})
        store.put(("t",), "k", {"v": 1})
        store.put(("t",), "kept", {"v": 2})
        first = store.get(("t",), "k")
        clock.advance(timedelta(minutes=8))
        again = store.get(("t",), "k")  # refreshed: ten minutes from now
        assert first is not None and again is not None
        assert (again.created_at, again.updated_at, again.value) == (
            first.created_at,
            first.updated_at,
            first.value,
        )
        assert store.search(("t",), refresh_ttl=False)  # a search that does not refresh
        clock.advance(timedelta(minutes=8))
        assert store.get(("t",), "k") is not None  # 16 minutes in, read at 8
        assert store.get(("t",), "kept", refresh_ttl=False) is None  # never refreshed
        clock.advance(timedelta(minutes=11))
        assert store.get(("t",), "k") is None
        plain = EngramStore(mem, ttl={"default_ttl": 10, "refresh_on_read": False})
        plain.put(("u",), "k", {"v": 1})
        clock.advance(timedelta(minutes=8))
        assert plain.get(("u",), "k") is not None  # no refresh
        clock.advance(timedelta(minutes=3))
        assert plain.get(("u",), "k") is None
