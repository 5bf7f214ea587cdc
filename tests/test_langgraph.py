"""engram.integrations.langgraph: EngramStore against LangGraph's own InMemoryStore.

The differential test runs the same random operations on both and compares ``get``,
query-less ``search`` (as sets) and ``list_namespaces``. ``ENGRAM_LANGGRAPH_EXAMPLES``
sets its size (default 40; the acceptance run is 500).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import InvalidNamespaceError, PutOp
from langgraph.store.memory import InMemoryStore

import engram
from engram.integrations.langgraph import AsyncEngramStore, EngramStore, decode, encode
from stores import ManualClock, Target

EXAMPLES = int(os.environ.get("ENGRAM_LANGGRAPH_EXAMPLES", "40"))

# Labels that collide when a store joins or prefixes carelessly: siblings sharing a
# start, the separator and the escape character, their escaped spellings, the wildcard.
LABELS = ["a", "b", "ab", "a/b", "a%2Fb", "%", "%25", "*", "é"]
KEYS = ["k", "k2", "K", "a/b", "%", "é"]

labels = st.sampled_from(LABELS)
tails = st.lists(labels, max_size=2).map(tuple)
values = st.fixed_dictionaries({"n": st.integers(0, 5), "s": st.sampled_from(["x", "y", ""])})
filters = st.one_of(
    st.none(),
    st.builds(lambda n: {"n": n}, st.integers(0, 5)),
    st.builds(lambda s: {"s": s}, st.sampled_from(["x", "y"])),
    st.builds(
        lambda op, n: {"n": {op: n}},
        st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]),
        st.integers(0, 5),
    ),
)
puts = st.tuples(st.just("put"), tails, st.sampled_from(KEYS), values)
operations = st.one_of(
    puts,
    puts,  # twice as likely: most operations only read, and need something to read
    st.tuples(st.just("delete"), tails, st.sampled_from(KEYS)),
    st.tuples(st.just("get"), tails, st.sampled_from(KEYS)),
    st.tuples(st.just("search"), tails, filters),
    st.tuples(
        st.just("list"),
        tails,
        st.one_of(st.none(), st.lists(labels, min_size=1, max_size=2).map(tuple)),
        st.one_of(st.none(), st.integers(1, 4)),
        st.integers(0, 3),
    ),
)


class Reference(InMemoryStore):
    """Upstream's store listing only namespaces that hold an item, as its database
    stores do (the in-memory one also lists a namespace once read from or emptied)."""

    def batch(self, ops: Iterable[Any]) -> list[Any]:
        results = super().batch(ops)
        for namespace in [ns for ns, items in self._data.items() if not items]:
            del self._data[namespace]
        return results


def _as_set(items: Iterable[Any]) -> set[tuple[tuple[str, ...], str, str]]:
    return {(i.namespace, i.key, json.dumps(i.value, sort_keys=True)) for i in items}


def _step(ours: EngramStore, theirs: Reference, root: str, step: tuple[Any, ...]) -> None:
    kind, tail = step[0], (root, *step[1])
    if kind == "put":
        ours.put(tail, step[2], step[3])
        theirs.put(tail, step[2], step[3])
    elif kind == "delete":
        ours.delete(tail, step[2])
        theirs.delete(tail, step[2])
    elif kind == "get":
        mine, upstream = ours.get(tail, step[2]), theirs.get(tail, step[2])
        assert (mine and (mine.namespace, mine.key, mine.value)) == (
            upstream and (upstream.namespace, upstream.key, upstream.value)
        ), step
    elif kind == "search":
        mine = ours.search(tail, filter=step[2], limit=1000)
        assert _as_set(mine) == _as_set(theirs.search(tail, filter=step[2], limit=1000)), step
        assert len(mine) == len(_as_set(mine))
    else:
        _, _, suffix, depth, offset = step
        asked = {"prefix": tail, "suffix": suffix, "max_depth": depth}
        assert ours.list_namespaces(**asked, offset=offset, limit=3) == theirs.list_namespaces(
            **asked, offset=offset, limit=3
        ), step


def _differential(store: EngramStore, examples: int) -> None:
    roots = (f"t{n}" for n in itertools.count())  # each example in a namespace of its own

    @settings(max_examples=examples, derandomize=True)
    @given(steps=st.lists(operations, min_size=3, max_size=16))
    def run(steps: list[tuple[Any, ...]]) -> None:
        root, theirs = next(roots), Reference()
        for step in steps:
            _step(store, theirs, root, step)
        # what is left, under every prefix of every namespace upstream holds
        for prefix in {ns[:n] for ns in theirs._data for n in range(1, len(ns) + 1)}:
            assert _as_set(store.search(prefix, limit=1000)) == _as_set(
                theirs.search(prefix, limit=1000)
            ), prefix
            assert store.list_namespaces(prefix=prefix, limit=1000) == theirs.list_namespaces(
                prefix=prefix, limit=1000
            ), prefix

    run()


def test_engram_store_behaves_as_upstreams_in_memory_store(tmp_path: Path) -> None:
    with engram.open(tmp_path / "lg.db", embedder=engram.HashingEmbedder(16)) as mem:
        _differential(EngramStore(mem), EXAMPLES)


def test_engram_store_behaves_as_upstreams_on_each_backend(mem: engram.Memory) -> None:
    _differential(EngramStore(mem), 8)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EngramStore]:
    with engram.open(tmp_path / "lg.db", embedder=engram.HashingEmbedder(16)) as mem:
        yield EngramStore(mem)


SIBLINGS = ["acme", "acme-corp", "acme/corp", "acme%2Fcorp", "acme%", "acm", "corp"]


@settings(max_examples=25, derandomize=True)
@given(
    spaces=st.lists(st.lists(st.sampled_from(SIBLINGS), min_size=1, max_size=3), max_size=6),
    prefix=st.lists(st.sampled_from(SIBLINGS), max_size=2),
)
def test_no_prefix_returns_a_sibling_namespace(
    tmp_path_factory: pytest.TempPathFactory, spaces: list[list[str]], prefix: list[str]
) -> None:
    path = tmp_path_factory.mktemp("siblings") / "lg.db"
    with engram.open(path, embedder=engram.HashingEmbedder(16)) as mem:
        store = EngramStore(mem)
        for space in spaces:
            store.put(("tenant", *space), "k", {"v": 1})
        wanted = ("tenant", *prefix)
        found = {i.namespace for i in store.search(wanted, limit=1000)}
        listed = set(store.list_namespaces(prefix=wanted, limit=1000))
        expected = {("tenant", *s) for s in spaces if tuple(s[: len(prefix)]) == tuple(prefix)}
        assert found == listed == expected


@settings(max_examples=200, derandomize=True)
@given(st.lists(st.text(min_size=1, max_size=12).filter(lambda t: "." not in t), max_size=6))
def test_namespaces_encode_injectively_and_decode_back(labels: list[str]) -> None:
    namespace = tuple(label.replace("\x00", "") or "x" for label in labels)
    if namespace[:1] == ("langgraph",):
        return
    text = encode(namespace)
    assert decode(text) == (namespace or None)
    assert "/" not in text or len(namespace) > 1


def test_refusals(store: EngramStore) -> None:
    for bad in [("a.b",), ("",), ("langgraph", "x"), (), ("a", "b\x00")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})
        if bad[:1] == ("langgraph",):
            continue  # taken through batch, as upstream's stores take it
        with pytest.raises(InvalidNamespaceError):
            store.batch([PutOp(bad, "k", {"v": 1})])  # straight to batch, past put's check
    with pytest.raises(InvalidNamespaceError):
        store.put(("a" * 200, "/" * 20), "k", {"v": 1})  # 261 characters encoded
    store.put(("a" * 256,), "k", {"v": 1})  # 256 is allowed
    with pytest.raises(InvalidNamespaceError):
        store.search(("a.b",))
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("",))
    with pytest.raises(engram.InvalidInput):
        store.put(("a",), "k", {"v": "x" * 70_000})  # over 64 KiB of JSON
    assert store.get(("a",), "k") is None


def test_an_index_needs_an_embedder(tmp_path: Path) -> None:
    with (
        engram.open(tmp_path / "none.db", embedder="none") as mem,
        pytest.raises(engram.CapabilityMissing),
    ):
        EngramStore(mem, index={"fields": ["text"], "dims": 384})


def test_a_search_by_meaning_reads_at_most_100_namespaces(tmp_path: Path) -> None:
    with engram.open(tmp_path / "lg.db", embedder=engram.HashingEmbedder(16)) as mem:
        store = EngramStore(mem, index={"fields": ["text"]})
        for n in range(101):
            store.put(("many", f"n{n}"), "k", {"text": "t"}, index=False)
        with pytest.raises(engram.InvalidInput):
            store.search(("many",), query="t")
        assert len(store.search(("many", "n1"), query="t")) == 1


def test_times_ttl_and_async(tmp_path: Path) -> None:
    clock = ManualClock()
    with engram.open(tmp_path / "lg.db", embedder=engram.HashingEmbedder(16), clock=clock) as mem:
        store = EngramStore(mem, ttl={"default_ttl": 10})
        store.put(("a",), "k", {"v": 1})
        first = store.get(("a",), "k")
        clock.advance(timedelta(minutes=5))
        asyncio.run(store.aput(("a",), "k", {"v": 2}))
        second = asyncio.run(store.aget(("a",), "k"))
        assert first is not None and second is not None and second.value == {"v": 2}
        assert second.created_at == first.created_at == first.updated_at < second.updated_at
        store.put(("a",), "forever", {"v": 3}, ttl=None)
        for minutes, said in ((0, "got 0 minutes"), (-1.5, "got -1.5 minutes")):
            with pytest.raises(engram.InvalidInput, match=said):
                store.put(("a",), "never", {"v": 4}, ttl=minutes)
        clock.advance(timedelta(minutes=11))
        assert store.get(("a",), "k") is None  # 10 minutes after its last put
        assert store.list_namespaces() == [("a",)]  # still holds "forever"
        store.delete(("a",), "forever")
        assert asyncio.run(store.alist_namespaces()) == []


def _facts(mem: engram.Memory, namespace: tuple[str, ...]) -> list[str]:
    return sorted(f.content for f in mem.facts(engram.ResourceRef(encode(namespace))).facts)


def test_a_query_finds_an_indexed_item_by_meaning(local_mem: engram.Memory) -> None:
    store = EngramStore(local_mem, index={"fields": ["text", "tags[*]"]})
    store.put(("u", "1", "food"), "pizza", {"text": "I adore a margherita from Naples"})
    store.put(("u", "1", "work"), "budget", {"text": "The quarterly budget is due Friday"})
    store.put(("u", "1", "work"), "plain", {"text": "Italian cooking"}, index=False)
    store.put(("u", "10", "food"), "other", {"text": "I adore a margherita from Naples"})
    found = store.search(("u", "1"), query="favourite Italian dish")
    assert [(i.namespace, i.key) for i in found[:2]] == [
        (("u", "1", "food"), "pizza"),
        (("u", "1", "work"), "budget"),
    ]
    assert found[0].score is not None and found[0].score > found[1].score
    assert found[-1].key == "plain" and found[-1].score is None  # unindexed, unscored, last
    filtered = store.search(("u",), query="Italian dish", filter={"text": {"$ne": "x"}}, limit=1)
    assert filtered[0].key in {"pizza", "other"}


def test_replacing_or_deleting_an_item_replaces_or_deletes_its_facts(mem: engram.Memory) -> None:
    store = EngramStore(mem, index={"fields": ["text", "more[*]"]})
    ns = ("u", "1")
    store.put(ns, "a", {"text": "shared words", "more": ["one", "two"]})
    store.put(ns, "b", {"text": "shared words"})
    assert _facts(mem, ns) == ["one", "shared words", "two"]
    store.put(ns, "a", {"text": "new words"})
    assert _facts(mem, ns) == ["new words", "shared words"]  # b still holds its text
    store.delete(ns, "b")
    assert _facts(mem, ns) == ["new words"]
    store.put(ns, "a", {"text": "new words"}, index=False)
    assert _facts(mem, ns) == []
    with pytest.raises(engram.InvalidInput):  # refused before anything is embedded
        store.put(ns, "big", {"text": "words " * 11_000})
    # fits alone, not once the ids of its facts are added: its facts go again
    size = len(json.dumps({"value": {"text": "x "}, "langgraph": {}}, separators=(",", ":")))
    store.put(ns, "big", {"text": "x " + "y" * (65_520 - size)}, index=False)  # it fits
    with pytest.raises(engram.InvalidInput):
        store.put(ns, "big", {"text": "x " + "y" * (65_520 - size)})
    assert _facts(mem, ns) == []
    assert store.get(ns, "big") is not None  # as it was
    mem.remember(engram.ResourceRef(encode(ns)), "an agent's own fact")
    store.put(ns, "c", {"text": "an agent's own fact"})
    store.delete(ns, "c")
    assert _facts(mem, ns) == ["an agent's own fact"]  # never forgets what it did not write


def test_namespace_is_the_scope_engram_sees(mem: engram.Memory, target: Target) -> None:
    store = EngramStore(mem)
    store.put(("users", "a/b"), "prefs", {"theme": "dark"})
    entry = mem.working.get(engram.ResourceRef("users/a%2Fb"), "prefs")
    assert entry == {"value": {"theme": "dark"}, "langgraph": {"facts": []}}
    mem.working.set(engram.ResourceRef("users/plain"), "k", {"v": 1})
    mem.working.set(engram.ResourceRef("no.namespace"), "k", {"v": 1})
    item = store.get(("users", "plain"), "k")
    assert item is not None and item.value == {"v": 1} and item.created_at == item.updated_at
    assert store.list_namespaces() == [("users", "a/b"), ("users", "plain")]


def test_expired_items_are_swept_with_the_facts_only_they_listed(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    """``sweep_ttl`` (as upstream's SQL stores) deletes what expired, and the facts its
    text became go with it; writing or deleting an expired item sweeps it too."""
    clock = ManualClock()
    with engram.open(target, embedder=hashing, clock=clock) as mem:
        store = EngramStore(mem, index={"fields": ["text"]}, ttl={"default_ttl": 1})
        ns = ("u", "1")
        store.put(ns, "short", {"text": "leaves soon"})
        store.put(ns, "shared", {"text": "kept words"})
        store.put(ns, "also", {"text": "kept words"}, ttl=None)
        store.put(ns, "again", {"text": "written again"})
        store.put(ns, "gone", {"text": "deleted once expired"})
        store.put(("v",), "other", {"text": "another namespace"})
        clock.advance(timedelta(minutes=2))
        assert store.get(ns, "short") is None and _facts(mem, ns) == [
            "deleted once expired",
            "kept words",
            "leaves soon",
            "written again",
        ]  # hidden, still stored
        store.put(ns, "again", {"text": "new words"}, ttl=None)  # sweeps the namespace
        assert _facts(mem, ns) == ["kept words", "new words"]
        assert store.sweep_ttl() == 1  # only ("v",)'s is left to sweep
        assert _facts(mem, ("v",)) == [] and store.sweep_ttl() == 0
        assert [i.key for i in store.search(ns)] == ["again", "also"]
        store.put(ns, "late", {"text": "expires and is deleted"})
        clock.advance(timedelta(minutes=2))
        store.delete(ns, "late")
        assert _facts(mem, ns) == ["kept words", "new words"]
        ledger = mem.ledger(engram.ResourceRef(encode(ns))).entries
        assert "working.expire" in {e.op for e in ledger}


def test_the_sweeper_sweeps_until_stopped(tmp_path: Path) -> None:
    clock = ManualClock()
    with engram.open(tmp_path / "lg.db", embedder=None, clock=clock) as mem:
        store = EngramStore(mem, ttl={"default_ttl": 1, "sweep_interval_minutes": 0.0005})
        store.put(("a",), "k", {"v": 1})
        clock.advance(timedelta(minutes=2))
        done = store.start_ttl_sweeper()
        ref = engram.ResourceRef(encode(("a",)))
        deadline = time.monotonic() + 60
        while mem.health(ref).stale.working_keys and time.monotonic() < deadline:
            time.sleep(0.01)
        assert mem.health(ref).stale.working_keys == 0  # swept, not only hidden
        assert store.stop_ttl_sweeper(timeout=60) and done.result(timeout=60) is None
        assert EngramStore(mem).start_ttl_sweeper().done()  # no ttl: nothing to sweep


def test_the_async_store_sweeps_as_upstreams_async_stores(tmp_path: Path) -> None:
    """``AsyncEngramStore``: ``await store.sweep_ttl()`` and a sweeper task, as LangGraph's
    async SQL stores have them (their own tests await both)."""
    clock = ManualClock()

    async def run(mem: engram.Memory) -> None:
        store = AsyncEngramStore(mem, ttl={"default_ttl": 1, "sweep_interval_minutes": 0.0005})
        await store.aput(("a",), "k", {"v": 1})
        await store.aput(("a",), "j", {"v": 2})
        clock.advance(timedelta(minutes=2))
        assert await store.aget(("a",), "k") is None
        assert await store.sweep_ttl() == 2 and await store.sweep_ttl() == 0
        await store.aput(("a",), "k", {"v": 3})
        clock.advance(timedelta(minutes=2))
        task = await store.start_ttl_sweeper()
        assert await store.start_ttl_sweeper() is task  # one sweeper at a time
        ref = engram.ResourceRef(encode(("a",)))
        deadline = time.monotonic() + 60
        while mem.health(ref).stale.working_keys and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert mem.health(ref).stale.working_keys == 0
        assert await store.stop_ttl_sweeper(timeout=60) and task.done()
        assert (await AsyncEngramStore(mem).start_ttl_sweeper()) is not None  # no ttl: done

    with engram.open(tmp_path / "lg.db", embedder=None, clock=clock) as mem:
        asyncio.run(run(mem))
