"""Rules both backends apply inside their own transactions, written once: the caps, the
confirmed count of forget-all, the versions of compare-and-set, and a fork's refusal to
land on memory that is already there.

``conn`` is either driver's connection: both run ``execute(sql, params)`` and return a
cursor that iterates rows and has ``fetchone``; ``mark`` is the driver's placeholder.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from engram.core.errors import Conflict
from engram.core.models import Caps, Compaction
from engram.core.scopes import ResourceRef, Scope


class Cursor(Protocol):
    def __iter__(self) -> Iterator[Any]: ...

    def fetchone(self) -> Any: ...


class Connection(Protocol):
    def execute(self, sql: Any, params: Sequence[Any] = ..., /) -> Any: ...


def apply_caps(conn: Connection, scope: str, caps: Caps, now_us: int, mark: str) -> Compaction:
    """Drops the scope's facts older than ``caps.max_age_us``, then its oldest beyond
    ``caps.max_facts``. The caller records the change of count."""
    expired: list[str] = []
    over: list[str] = []
    if caps.max_age_us:
        expired = [
            str(r[0])
            for r in conn.execute(
                f"DELETE FROM facts WHERE scope = {mark} AND created_at < {mark} RETURNING id",
                (scope, now_us - caps.max_age_us),
            )
        ]
    if caps.max_facts:
        count = int(
            conn.execute(f"SELECT count(*) FROM facts WHERE scope = {mark}", (scope,)).fetchone()[0]
        )
        if count > caps.max_facts:
            over = [
                str(r[0])
                for r in conn.execute(
                    f"DELETE FROM facts WHERE seq IN (SELECT seq FROM facts WHERE scope = {mark} "
                    f"ORDER BY created_at, seq LIMIT {mark}) RETURNING id",
                    (scope, count - caps.max_facts),
                )
            ]
    return Compaction(expired, over)


def confirm_count(count: int, expected_count: int) -> None:
    """forget-all's guard: Conflict (nothing forgotten) when the scope holds more facts
    than the caller confirmed."""
    if count > expected_count:
        raise Conflict(
            f"this scope holds {count} facts, more than the {expected_count} confirmed; "
            "nothing was forgotten",
            hint="read the count again and confirm it",
        )


def next_version(
    key: str, stored: tuple[Any, Any] | None, expected_version: int | None, now_us: int
) -> int:
    """The version a set of ``key`` writes, given its stored (version, expires_at): a
    compare-and-set must name the live version (0: unset or expired), else Conflict.
    Versions keep growing across expiry."""
    live = stored is not None and (stored[1] is None or stored[1] > now_us)
    current = int(stored[0]) if stored is not None and live else 0
    if expected_version is not None and expected_version != current:
        raise Conflict(f"key {key!r} is at version {current}, not {expected_version}")
    return (int(stored[0]) if stored is not None else 0) + 1


def refuse_occupied(
    conn: Connection, child: Scope, now_us: int, mark: str, *, into_existing: bool
) -> None:
    """Raises Conflict when the scope ``child`` holds a live working key or a fact and
    the caller did not ask to fork into existing memory."""
    if into_existing:
        return
    keys = conn.execute(
        f"SELECT count(*) FROM working WHERE scope = {mark} "
        f"AND (expires_at IS NULL OR expires_at > {mark})",
        (child.key, now_us),
    ).fetchone()[0]
    facts = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM facts WHERE scope = {mark} LIMIT 1) AS f",
        (child.key,),
    ).fetchone()[0]
    if keys or facts:
        shown = child.resource_id if isinstance(child, ResourceRef) else child.key
        raise Conflict(
            f"resource {shown!r} already holds memory ({int(keys)} working keys"
            f"{', and facts' if facts else ''}); a fork would overwrite and merge into it",
            hint="fork into an unused resource, or ask for it explicitly "
            '(into_existing=True, --into-existing, "intoExisting": true)',
        )
