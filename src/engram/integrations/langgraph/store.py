"""EngramStore: LangGraph's ``BaseStore`` over one Memory (see
:mod:`engram.integrations.langgraph` for how it maps onto working memory and facts)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
)

from engram.core import limits
from engram.core.clock import from_us, to_us
from engram.core.errors import CapabilityMissing, Conflict, InvalidInput, NotFound
from engram.core.limits import MAX_FACT_CHARS, MAX_PAGE, MAX_TTL
from engram.core.memory import Memory
from engram.core.models import JSONValue, WorkingEntry
from engram.core.scopes import ResourceRef
from engram.core.writing import Note
from engram.integrations.langgraph.filters import matches
from engram.integrations.langgraph.namespaces import (
    Namespace,
    check_labels,
    does_match,
    fixed_prefix,
    namespace_of,
    ref_of,
)

MAX_QUERY_NAMESPACES = 100
DISTANCES = ("cosine", "inner_product", "l2")  # as upstream's indexed stores name them
ITEM_TYPE = "lg:item"
ENVELOPE = "langgraph"
_CAS_TRIES = 8
_RESOURCES = ResourceRef("_").key[:-1]  # what every resource scope's key starts with
_Paths = list[tuple[str, str | list[str]]]


@dataclass(frozen=True, slots=True)
class _Stored:
    """An item as its working-memory key holds it; ``ttl``: its time to live in minutes,
    as its put gave it (None: it lives until deleted)."""

    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    facts: tuple[str, ...]
    version: int
    ttl: float | None = None


def _stored(entry: WorkingEntry) -> _Stored | None:
    raw, updated = entry.value, entry.updated_at
    if not isinstance(raw, dict):
        return None  # not a value LangGraph can hold
    meta, value = raw.get(ENVELOPE), raw.get("value")
    if set(raw) != {"value", ENVELOPE} or not isinstance(meta, dict) or not isinstance(value, dict):
        return _Stored(raw, updated, updated, (), entry.version)
    created, written = meta.get("created_at"), meta.get("updated_at")
    if isinstance(written, int):  # a read that refreshed the expiry changed nothing else
        updated = from_us(written)
    when = from_us(created) if isinstance(created, int) else updated
    ttl = meta.get("ttl")
    lives = float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) else None
    return _Stored(value, when, updated, _facts_of(raw), entry.version, lives)


def _facts_of(raw: JSONValue) -> tuple[str, ...]:
    """The facts an item listed, from its stored envelope (an expired one's too)."""
    meta = raw.get(ENVELOPE) if isinstance(raw, dict) else None
    facts = meta.get("facts") if isinstance(meta, dict) else None
    return tuple(f for f in facts if isinstance(f, str)) if isinstance(facts, list) else ()


_Found = tuple[SearchItem, _Stored]  # a search's hit, and its item as the search read it


def _meta(item: _Stored) -> dict[str, JSONValue]:
    """The envelope that keeps the item as it is (its facts, creation and ttl)."""
    meta: dict[str, JSONValue] = {"facts": list(item.facts), "created_at": to_us(item.created_at)}
    meta["updated_at"] = to_us(item.updated_at)
    if item.ttl is not None:
        meta["ttl"] = item.ttl
    return meta


def _search_item(namespace: Namespace, key: str, item: _Stored, score: float | None) -> SearchItem:
    return SearchItem(namespace, key, item.value, item.created_at, item.updated_at, score)


class _MemoryStore(BaseStore):
    """LangGraph's ``BaseStore`` over one :class:`~engram.Memory` (see
    :mod:`engram.integrations.langgraph` for how namespaces, items, search and filters
    map onto it).

    ``index``: ``{"fields": [...]}`` makes items searchable by meaning (``["$"]``, the
    whole value, when no field is named). Raises CapabilityMissing when ``index`` is
    given and ``mem`` has no embedder. ``ttl``: LangGraph's ``TTLConfig``; its
    ``default_ttl`` (minutes) applies to puts that name none.
    """

    supports_ttl = True

    def __init__(
        self, mem: Memory, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> None:
        if index and mem.embedder is None:
            raise CapabilityMissing("an indexed LangGraph store needs a memory with an embedder")
        distance = (index or {}).get("distance_type", "cosine")
        if distance not in DISTANCES:
            raise InvalidInput(
                f"distance_type must be one of {', '.join(DISTANCES)}, got {distance!r}"
            )
        self._mem = mem
        self.index_config = index
        self.ttl_config = ttl
        # "text_fields": what upstream's SQLite store reads where IndexConfig says "fields"
        named = (index.get("fields") or index.get("text_fields")) if index else None
        self._fields = _paths(_listed_fields(named)) if index else None
        self._distance = distance

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the operations in order; one result per operation (None for a put)."""
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key, op.refresh_ttl)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(op.namespace, op.key)
            else:
                self._put(op)
            return None
        raise ValueError(f"Unknown operation type: {type(op)}")

    # -- items ---------------------------------------------------------------------
    def _get(self, namespace: Namespace, key: str, refresh: bool = False) -> Item | None:
        namespace = check_labels(namespace)
        if not namespace:
            return None
        found = self._entry(ref_of(namespace), key)
        if found is None:
            return None
        if refresh:
            found = self._refreshed(ref_of(namespace), key, found)
        return Item(
            value=found.value,
            key=key,
            namespace=namespace,
            created_at=found.created_at,
            updated_at=found.updated_at,
        )

    def _entry(self, ref: ResourceRef, key: str) -> _Stored | None:
        try:
            return _stored(self._mem.working.entry(ref, key))
        except NotFound:
            return None

    def _items(self, ref: ResourceRef) -> Iterator[tuple[str, _Stored]]:
        """The namespace's live items in ascending UTF-8 order of the key."""
        after: str | None = None
        while True:
            page = self._mem.working.list(ref, after=after, limit=MAX_PAGE)
            for entry in page.entries:
                if (found := _stored(entry)) is not None:
                    yield entry.key, found
            if page.next_after is None:
                return
            after = page.next_after

    def _put(self, op: PutOp) -> None:
        namespace = check_labels(op.namespace, as_put=True)
        if not isinstance(op.value, Mapping):
            raise InvalidInput(f"a LangGraph value is a mapping, got {type(op.value).__name__}")
        ref, value = ref_of(namespace), dict(op.value)
        limits.check_key(op.key)
        limits.encode_value({"value": value, ENVELOPE: {}})  # refused before any embedding
        old = self._entry(ref, op.key)
        if old is None:  # an expired item there goes first, with the facts only it listed
            self._swept(ref)
        facts = self._index(ref, namespace, op.key, value, op.index)
        try:
            self._write(ref, namespace, op, value, facts, old)
        except Exception:
            old = self._entry(ref, op.key)  # the item as it stays: its facts stay too
            self._release(ref, op.key, facts, keep=old.facts if old else ())
            raise

    def _write(
        self,
        ref: ResourceRef,
        namespace: Namespace,
        op: PutOp,
        value: dict[str, Any],
        facts: tuple[str, ...],
        old: _Stored | None,
    ) -> None:
        """Writes the item over ``old`` (as last read), reading it again on a conflict."""
        ttl = None if op.ttl is None else _ttl(op.ttl)
        for attempt in range(_CAS_TRIES):
            if attempt:
                old = self._entry(ref, op.key)
            meta: dict[str, JSONValue] = {"facts": list(facts)}
            if old is not None:  # a first write's time is its key's, so only a replace says
                meta["created_at"] = to_us(old.created_at)
            if op.ttl is not None:  # what a read refreshes the expiry to
                meta["ttl"] = op.ttl
            wrapped: dict[str, JSONValue] = {"value": value, ENVELOPE: meta}
            version = old.version if old else 0
            try:
                self._mem.working.set(ref, op.key, wrapped, expected_version=version, ttl=ttl)
            except Conflict:
                continue  # another writer came between the read and the write
            self._release(ref, op.key, old.facts if old else (), keep=facts)
            return
        raise Conflict(f"item {op.key!r} of {namespace} kept changing; nothing was written")

    def _refreshed(self, ref: ResourceRef, key: str, item: _Stored) -> _Stored:
        """The item, its expiry pushed to its ttl from now (``refresh_on_read``): the key
        written again with the value it holds, so a read of an item that lives for a time
        is a write. Another writer coming first leaves it as that writer left it."""
        if item.ttl is None:
            return item
        wrapped: dict[str, JSONValue] = {"value": item.value, ENVELOPE: _meta(item)}
        try:
            entry = self._mem.working.set(
                ref, key, wrapped, expected_version=item.version, ttl=_ttl(item.ttl)
            )
        except Conflict:
            return item
        return _stored(entry) or item

    def _delete(self, namespace: Namespace, key: str) -> None:
        if not check_labels(namespace):
            return
        ref = ref_of(namespace)
        old = self._entry(ref, key)
        if old is None:  # unset, or expired: then swept with the facts only it listed
            self._swept(ref)
        elif self._mem.working.delete(ref, key):
            self._release(ref, key, old.facts, keep=())

    # -- expiry --------------------------------------------------------------------
    def _interval(self, asked: float | None) -> float:
        """Minutes between sweeps: as asked, else the ttl config's, else 5 (upstream's)."""
        return float(asked or (self.ttl_config or {}).get("sweep_interval_minutes") or 5)

    def _swept(self, under: ResourceRef | str) -> int:
        """Sweeps the expired keys of ``under`` (a scope, or a prefix of scope keys), and
        forgets the facts only the swept items listed."""
        gone = self._mem.working.sweep(under)
        for swept in gone:
            if isinstance(swept.scope, ResourceRef) and namespace_of(swept.scope) is not None:
                self._release(swept.scope, swept.key, _facts_of(swept.value), keep=())
        return len(gone)

    # -- indexed text as facts -----------------------------------------------------
    def _index(
        self,
        ref: ResourceRef,
        namespace: Namespace,
        key: str,
        value: dict[str, Any],
        index: Sequence[str] | bool | None,
    ) -> tuple[str, ...]:
        """The ids of the facts holding the item's indexed text (remembered now)."""
        if self._fields is None or index is False:
            return ()
        paths = self._fields if index is None or index is True else _paths(list(index))
        notes = [
            Note(text, type=ITEM_TYPE, metadata={ENVELOPE: _naming(namespace, key, path)})
            for path, text in _texts(value, paths)
        ]
        facts = self._mem.remember_many(ref, notes) if notes else []
        return tuple(dict.fromkeys(fact.id for fact in facts))

    def _release(
        self, ref: ResourceRef, key: str, dropped: Sequence[str], *, keep: Sequence[str]
    ) -> None:
        """Hard-forgets the facts the item no longer lists and no other item lists."""
        gone = set(dropped) - set(keep)
        for other, item in self._items(ref) if gone else ():
            if other != key:
                gone -= set(item.facts)
            if not gone:
                return
        for fact_id in sorted(gone):
            try:
                fact = self._mem.fact(ref, fact_id)
            except NotFound:
                continue
            if fact.type == ITEM_TYPE:  # never a fact remembered by other means
                self._mem.forget(ref, fact_id, hard=True)

    # -- search and listing --------------------------------------------------------
    def _namespaces(self, prefix: Namespace) -> list[Namespace]:
        """The namespaces holding live keys that are ``prefix`` or lie under it, sorted."""
        starting = ref_of(prefix).key if prefix else _RESOURCES
        found = (namespace_of(scope) for scope in self._mem.working.scopes(starting))
        return sorted(ns for ns in found if ns is not None and ns[: len(prefix)] == prefix)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        spaces = self._namespaces(check_labels(op.namespace_prefix))
        if op.query and self._fields is not None:
            found = self._ranked(op, op.query, spaces)[op.offset : op.offset + op.limit]
        else:
            found = self._listed(op, spaces)
        return [self._search_refreshed(hit, item) if op.refresh_ttl else hit for hit, item in found]

    def _listed(self, op: SearchOp, spaces: list[Namespace]) -> list[_Found]:
        found: list[_Found] = []
        for namespace in spaces:
            for key, item in self._items(ref_of(namespace)):
                if matches(item.value, op.filter):
                    found.append((_search_item(namespace, key, item, None), item))
                if len(found) >= op.offset + op.limit:
                    return found[op.offset :]
        return found[op.offset :]

    def _search_refreshed(self, hit: SearchItem, item: _Stored) -> SearchItem:
        """The hit, its item's expiry pushed back when it has one (the item as the search
        read it: no second read)."""
        if item.ttl is None:
            return hit
        again = self._refreshed(ref_of(hit.namespace), hit.key, item)
        return _search_item(hit.namespace, hit.key, again, hit.score)

    def _ranked(self, op: SearchOp, query: str, spaces: list[Namespace]) -> list[_Found]:
        """Every item under the prefix that the filter keeps, scored as upstream scores
        it: the best of its indexed texts' similarity to the query by the index's
        ``distance_type``; items with no indexed text follow, unscored."""
        if len(spaces) > MAX_QUERY_NAMESPACES:
            raise InvalidInput(
                f"a search by meaning reads at most {MAX_QUERY_NAMESPACES} namespaces; "
                f"{len(spaces)} lie under {op.namespace_prefix}",
                hint="search under a longer prefix",
            )
        embedder = self._mem.embedder
        assert embedder is not None  # an index needs one: refused at construction
        asked = embedder.embed([query], "query")[0]
        scored: list[tuple[float, _Found]] = []
        unscored: list[_Found] = []
        for namespace in spaces:
            ref = ref_of(namespace)
            kept = [(key, item) for key, item in self._items(ref) if matches(item.value, op.filter)]
            vectors = self._mem.vectors(ref, [f for _, item in kept for f in item.facts])
            for key, item in kept:
                found = [vectors[f] for f in item.facts if f in vectors]
                if not found:
                    unscored.append((_search_item(namespace, key, item, None), item))
                    continue
                score = max(self._similarity(asked, vector) for vector in found)
                scored.append((score, (_search_item(namespace, key, item, score), item)))
        scored.sort(key=lambda row: -row[0])
        return [row[1] for row in scored] + unscored

    def _similarity(self, asked: Any, vector: Any) -> float:
        """How alike two vectors are by the index's distance type, higher for closer:
        cosine similarity, the inner product, or the L2 distance negated."""
        if self._distance == "inner_product":
            return float(asked @ vector)
        if self._distance == "l2":
            return -float(((asked - vector) ** 2).sum() ** 0.5)
        norms = float((asked @ asked) ** 0.5 * (vector @ vector) ** 0.5)
        return float(asked @ vector) / norms if norms else 0.0

    def _list_namespaces(self, op: ListNamespacesOp) -> list[Namespace]:
        conditions = tuple(op.match_conditions or ())
        for condition in conditions:
            check_labels(tuple(condition.path))
        spaces = [
            ns
            for ns in self._namespaces(fixed_prefix(conditions))
            if all(does_match(c, ns) for c in conditions)
        ]
        if op.max_depth is not None:
            spaces = sorted({ns[: op.max_depth] for ns in spaces})
        return spaces[op.offset : op.offset + op.limit]


def _listed_fields(named: object) -> list[str]:
    """The index's fields: a list of paths, or one path alone; none: the whole value."""
    if not named:
        return ["$"]
    if isinstance(named, str):
        return [named]
    if not isinstance(named, list | tuple) or not all(isinstance(p, str) for p in named):
        raise InvalidInput(f"an index's fields are a list of paths, got {named!r}")
    return list(named)


def _paths(fields: Sequence[str]) -> _Paths:
    return [(p, p if p == "$" else tokenize_path(p)) for p in fields]


def _texts(value: dict[str, Any], paths: _Paths) -> list[tuple[str, str]]:
    """(field path, text) of each non-blank text at the paths, clipped to a fact's size."""
    found = []
    for path, tokens in paths:
        for text in get_text_at_path(value, tokens):
            clipped = text.strip()[:MAX_FACT_CHARS]
            if clipped:
                found.append((path, clipped))
    return found


def _naming(namespace: Namespace, key: str, path: str) -> JSONValue:
    return {"namespace": list(namespace), "key": key, "path": path}


def _ttl(minutes: float) -> timedelta:
    """LangGraph's ttl, in minutes as it is given; refused in minutes too."""
    most = MAX_TTL // timedelta(minutes=1)
    if isinstance(minutes, bool) or not isinstance(minutes, int | float):
        raise InvalidInput(f"ttl must be a number of minutes, got {minutes!r}")
    if not 0 < minutes <= most:  # also false for nan
        given = f"{minutes:f}".rstrip("0").rstrip(".") if isinstance(minutes, float) else minutes
        raise InvalidInput(
            f"ttl must be more than 0 minutes and at most {most} minutes (a million days), "
            f"got {given} minutes"
        )
    return timedelta(minutes=minutes)


class EngramStore(_MemoryStore):
    """The store for synchronous code (its async methods run it in a worker thread):
    :meth:`sweep_ttl` and its sweeper thread as LangGraph's ``SqliteStore`` has them."""

    def __init__(
        self, mem: Memory, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> None:
        super().__init__(mem, index=index, ttl=ttl)
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    def sweep_ttl(self) -> int:
        """Deletes every item that has expired (no read sees one, yet it stays stored
        until swept, deleted or written again), with the facts only it listed, as
        upstream's SQL stores' ``sweep_ttl``; answers how many went. It sweeps every
        expired working key of the memory's resource scopes, a LangGraph item or not:
        each scope's is one ledger entry (``working.expire``)."""
        return self._swept(_RESOURCES)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweeps (:meth:`sweep_ttl`) every ``sweep_interval_minutes`` (else the ttl
        config's, else 5) in a daemon thread until :meth:`stop_ttl_sweeper`, as upstream's
        stores do; the future is done when the thread stops (cancelling it stops it)."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.ttl_config:
            future.set_result(None)
            return future
        if self._sweeper is not None and self._sweeper.is_alive():
            future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
            return future
        minutes = self._interval(sweep_interval_minutes)
        self._stop.clear()

        def sweep() -> None:
            while not self._stop.wait(minutes * 60):
                with contextlib.suppress(Exception):  # the next round tries again
                    self._swept(_RESOURCES)
            if not future.done():
                future.set_result(None)

        self._sweeper = threading.Thread(target=sweep, daemon=True, name="engram-ttl-sweeper")
        self._sweeper.start()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper; whether it has stopped (or never ran) within ``timeout``."""
        if self._sweeper is None or not self._sweeper.is_alive():
            return True
        self._stop.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped


class AsyncEngramStore(_MemoryStore):
    """The same store for asyncio code, as LangGraph's ``AsyncSqliteStore`` and
    ``AsyncPostgresStore`` are to theirs: ``await store.sweep_ttl()``, and a sweeper task
    (``await store.start_ttl_sweeper()`` ... ``await store.stop_ttl_sweeper()``)."""

    def __init__(
        self, mem: Memory, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> None:
        super().__init__(mem, index=index, ttl=ttl)
        self._stopping: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def sweep_ttl(self) -> int:
        """Deletes every item that has expired (see :meth:`EngramStore.sweep_ttl`), in a
        worker thread; answers how many went."""
        return await asyncio.to_thread(self._swept, _RESOURCES)

    async def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweeps every ``sweep_interval_minutes`` (else the ttl config's, else 5) in a
        task of the running loop until :meth:`stop_ttl_sweeper`; the task, to await or
        cancel."""
        if not self.ttl_config:
            return asyncio.create_task(asyncio.sleep(0))
        if self._task is not None and not self._task.done():
            return self._task
        minutes = self._interval(sweep_interval_minutes)
        stopping = self._stopping = asyncio.Event()

        async def sweep() -> None:
            while True:
                try:
                    await asyncio.wait_for(stopping.wait(), timeout=minutes * 60)
                    return
                except TimeoutError:
                    with contextlib.suppress(Exception):  # the next round tries again
                        await self.sweep_ttl()

        self._task = asyncio.create_task(sweep(), name="engram-ttl-sweeper")
        return self._task

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper; whether it has stopped (or never ran) within ``timeout``."""
        if self._task is None or self._task.done():
            return True
        assert self._stopping is not None
        self._stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=timeout)
        except TimeoutError:
            return False
        self._task = None
        return True
