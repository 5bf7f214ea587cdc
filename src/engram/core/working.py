"""Working memory: JSON values by key, per scope."""

from __future__ import annotations

from datetime import timedelta

from engram.core import limits
from engram.core.clock import now_us
from engram.core.errors import NotFound, Unprocessable
from engram.core.models import JSONValue, WorkingEntry, WorkingPage
from engram.core.ports import Store
from engram.core.scopes import Scope


class WorkingMemory:
    """Key/value memory of a scope. Keys are 1-256 characters, values JSON up to 64 KiB."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, ref: Scope, key: str) -> JSONValue:
        """The value at ``key``. Raises NotFound when the key is unset (or expired)."""
        return self.entry(ref, key).value

    def entry(self, ref: Scope, key: str) -> WorkingEntry:
        """The value at ``key`` with its version. Raises NotFound when unset, and
        Unprocessable for a value stored before values' depth was limited, deeper than it
        (overwrite or delete the key)."""
        entry = self._store.working_get(ref, limits.check_key(key), now_us())
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
        now = now_us()
        expires = None
        if ttl is not None:
            expires = now + limits.check_ttl(ttl) // timedelta(microseconds=1)
        return self._store.working_set(
            ref, key, text, expected_version=expected_version, expires_at_us=expires, now_us=now
        )

    def delete(self, ref: Scope, key: str) -> bool:
        """Removes ``key``; idempotent. Returns whether it was set."""
        return self._store.working_delete(ref, limits.check_key(key))

    def list(
        self, ref: Scope, *, after: str | None = None, limit: int | None = None
    ) -> WorkingPage:
        """One page in ascending UTF-8 byte order of the key (default 100, max 1000)."""
        size = limits.check_limit(limit)
        if after is not None:
            limits.check_key(after)
        rows = self._store.working_list(ref, after, size + 1, now_us())
        more = len(rows) > size
        rows = rows[:size]
        return WorkingPage(
            [r for r in rows if not r.too_deep],
            rows[-1].key if more else None,
            tuple(r.key for r in rows if r.too_deep),
        )
