"""Working memory: JSON values by key, per scope."""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from engram.core import ledger, limits, recording, rules
from engram.core.clock import Clock, from_us, now_us
from engram.core.errors import NotFound, Unprocessable
from engram.core.models import LIBRARY, JSONValue, Swept, WorkingEntry, WorkingPage, Writer
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

T = TypeVar("T")


class WorkingMemory:
    """Key/value memory of a scope. Keys are 1-256 characters, values JSON up to 64 KiB."""

    def __init__(self, store: Store, *, clock: Clock = now_us, writer: Writer = LIBRARY) -> None:
        self._store = store
        self._now = clock
        self._writer = writer

    def get(self, ref: Scope, key: str) -> JSONValue:
        """The value at ``key``. Raises NotFound when the key is unset (or expired)."""
        return self.entry(ref, key).value

    def entry(self, ref: Scope, key: str) -> WorkingEntry:
        """The value at ``key`` with its version. Raises NotFound when unset, and
        Unprocessable for a value stored before values' depth was limited, deeper than it
        (overwrite or delete the key)."""
        checked, now, store = limits.check_key(key), self._now(), self._store
        entry = store.run(lambda tx: store.working.get(tx, ref, checked, now), write=False)
        if entry is None:
            raise NotFound(f"no working-memory key {key!r} in this scope")
        if entry.too_deep:
            raise Unprocessable(
                f"the value under {key!r} nests lists or objects more than "
                f"{limits.MAX_DEPTH} levels deep (it was stored before that limit) and "
                "cannot be served",
                hint="overwrite or delete the key",
            )
        return entry

    def set(
        self,
        ref: Scope,
        key: str,
        value: JSONValue,
        *,
        expected_version: int | None = None,
        ttl: timedelta | None = None,
    ) -> WorkingEntry:
        """Sets ``key``; nothing is written when the value is invalid, over 64 KiB or
        nested more than 64 levels deep.

        ``expected_version`` makes it a compare-and-set: the current version must match
        (0: the key must be unset), else Conflict. ``ttl`` (at most a million days)
        makes the key expire.
        """
        limits.check_key(key)
        text = limits.encode_value(value)
        if expected_version is not None:
            limits.check_version(expected_version)
        now, store = self._now(), self._store
        expires = None
        if ttl is not None:
            expires = now + limits.check_ttl(ttl) // timedelta(microseconds=1)

        def write(rec: ledger.Entry) -> int:
            tx = rec.tx
            stored = store.working.claim(tx, ref, key)
            version = rules.next_version(key, stored, expected_version, now)
            before = store.working.raw(tx, ref, [key]).get(key) if stored else None
            store.working.put(tx, ref, key, text, version, now, expires)
            rec.record("working", key, "set", ledger.working_value(before))
            return version

        version = store.run(lambda tx: self._entry(tx, ref, "working.set", now, write))
        return WorkingEntry(
            key=key,
            value=json.loads(text),  # as a read gives it back (tuples become lists)
            version=version,
            updated_at=from_us(now),
            expires_at=None if expires is None else from_us(expires),
        )

    def delete(self, ref: Scope, key: str) -> bool:
        """Removes ``key``; idempotent. Returns whether it was set."""
        checked, now, store = limits.check_key(key), self._now(), self._store

        def write(rec: ledger.Entry) -> bool:
            store.working.claim(rec.tx, ref, checked)
            before = store.working.raw(rec.tx, ref, [checked]).get(checked)
            if before is None or not store.working.delete(rec.tx, ref, checked):
                return False
            rec.record("working", checked, "delete", ledger.working_value(before))
            return True

        return store.run(lambda tx: self._entry(tx, ref, "working.delete", now, write))

    def sweep(self, under: Scope | str = "") -> builtins.list[Swept]:
        """Deletes the keys that have expired (no read sees them, yet they stay stored
        until a sweep or a write of the key): of the scope ``under``, or of every scope
        whose storage key (:attr:`Scope.key`) starts with the string ``under`` (``""``:
        every scope). One ledger entry (``working.expire``) a scope, each key's value
        kept there as a delete keeps it. Answers what went, with the value each key
        held (None for one too deep to serve, as a read says); a key written again
        meanwhile stays."""
        now, store = self._now(), self._store
        found = store.run(lambda tx: store.working.expired(tx, under, now), write=False)
        by_scope: dict[str, tuple[Scope, builtins.list[str]]] = {}
        for scope, key in found:
            by_scope.setdefault(scope.key, (scope, []))[1].append(key)

        def write(rec: ledger.Entry, keys: builtins.list[str]) -> builtins.list[Swept]:
            swept = []
            for key in sorted(keys):
                held = store.working.claim(rec.tx, rec.scope, key)
                if held is None or held[1] is None or held[1] > now:
                    continue  # deleted, or written again since it was read
                before = store.working.raw(rec.tx, rec.scope, [key]).get(key)
                if before is not None and store.working.delete(rec.tx, rec.scope, key):
                    rec.record("working", key, "delete", ledger.working_value(before))
                    swept.append(Swept(rec.scope, key, limits.decode_value(before[0])[0]))
            return swept

        def expire(scope: Scope, keys: builtins.list[str]) -> builtins.list[Swept]:
            return store.run(
                lambda tx: self._entry(tx, scope, "working.expire", now, lambda r: write(r, keys))
            )

        return [gone for _, held in sorted(by_scope.items()) for gone in expire(*held)]

    def _entry(self, tx: Tx, ref: Scope, op: str, now: int, work: Callable[[ledger.Entry], T]) -> T:
        return recording.write(self._store, tx, ref, op, self._writer, now, work)

    def scopes(self, starting: str = "") -> builtins.list[Scope]:
        """The scopes holding at least one live key whose storage key (:attr:`Scope.key`)
        starts with ``starting``, in ascending order of that key. Read-only."""
        now, store = self._now(), self._store
        found = store.run(lambda tx: store.working.scopes(tx, starting, now), write=False)
        return sorted(found, key=lambda scope: scope.key.encode("utf-8"))

    def list(
        self, ref: Scope, *, after: str | None = None, limit: int | None = None
    ) -> WorkingPage:
        """One page in ascending UTF-8 byte order of the key (default 100, max 1000)."""
        size = limits.check_limit(limit)
        if after is not None:
            limits.check_key(after)
        now, store = self._now(), self._store
        rows = store.run(lambda tx: store.working.page(tx, ref, after, size + 1, now), write=False)
        more = len(rows) > size
        rows = rows[:size]
        return WorkingPage(
            [r for r in rows if not r.too_deep],
            rows[-1].key if more else None,
            tuple(r.key for r in rows if r.too_deep),
        )
