"""The ledger's rows on both backends: one entry per logical write, one item per object it
changed (see :class:`engram.core.ports.LedgerRows` for each method's contract)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.core.clock import from_us
from engram.core.ledger import ABSENT
from engram.core.limits import CHANGES_SHOWN
from engram.core.models import Change, LedgerEntry, Writer
from engram.core.ports import Tx
from engram.core.scopes import Scope, parse_key
from engram.storage.sql.dialect import Dialect
from engram.storage.sql.tx import SQLTx, sql

ENTRY_COLUMNS = (
    "seq, scope, op, at, actor, via, turn_user, request_id, reverts, reverted_by, scrubbed"
)


class LedgerTable:
    def begin(
        self,
        tx: Tx,
        scope: Scope,
        op: str,
        writer: Writer,
        now_us: int,
        reverts: int | None = None,
    ) -> int:
        t = sql(tx)
        t.entries += 1
        return int(
            t.one(
                "INSERT INTO ledger (scope, op, at, actor, via, turn_user, request_id, "
                "reverts) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
                (
                    scope.key,
                    op,
                    now_us,
                    writer.actor,
                    writer.via,
                    writer.turn_user,
                    writer.request_id,
                    reverts,
                ),
            )
        )

    def add(self, tx: Tx, entry: int, changes: Sequence[Change]) -> None:
        sql(tx).executemany(
            "INSERT INTO ledger_items (entry, kind, object_id, action, token, before) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (entry, kind, object_id) "
            "DO UPDATE SET action = excluded.action, token = excluded.token",
            [(entry, c.kind, c.object_id, c.action, c.token, _stored(c.before)) for c in changes],
        )

    def holds(self, tx: Tx, entry: int, kind: str, object_id: str) -> bool:
        found = "SELECT 1 FROM ledger_items WHERE entry = ? AND kind = ? AND object_id = ?"
        return bool(sql(tx).rows(found, (entry, kind, object_id)))

    def drop(self, tx: Tx, entry: int) -> None:
        sql(tx).execute("DELETE FROM ledger WHERE seq = ?", (entry,))

    def entry(self, tx: Tx, scope: Scope, seq: int) -> LedgerEntry | None:
        t = sql(tx)
        row = t.execute(
            f"SELECT {ENTRY_COLUMNS} FROM ledger WHERE seq = ? AND scope = ?", (seq, scope.key)
        ).fetchone()
        return None if row is None else _shown(t, [row])[0]

    def items(self, tx: Tx, seq: int, after: tuple[str, str] | None, limit: int) -> list[Change]:
        t = sql(tx)
        kind, object_id = after or ("", "")
        rows = t.rows(
            "SELECT kind, object_id, action, before, token FROM ledger_items "
            "WHERE entry = ? AND (kind, object_id) > (?, ?) ORDER BY kind, object_id LIMIT ?",
            (seq, kind, object_id, limit),
        )
        return [_change(r) for r in rows]

    def changes(
        self, tx: Tx, scope: Scope, seq: int, offset: int, limit: int
    ) -> list[Change] | None:
        t = sql(tx)
        if (
            t.execute(
                "SELECT 1 FROM ledger WHERE seq = ? AND scope = ?", (seq, scope.key)
            ).fetchone()
            is None
        ):
            return None
        rows = t.rows(
            "SELECT kind, object_id, action, NULL, token FROM ledger_items WHERE entry = ? "
            "ORDER BY kind, object_id LIMIT ? OFFSET ?",
            (seq, limit, offset),
        )
        return [_change(r) for r in rows]

    def tokens(
        self,
        tx: Tx,
        scope: Scope,
        kind: str,
        ids: Sequence[str],
        before_entry: int | None = None,
    ) -> dict[str, tuple[int, int | None]]:
        if not ids:
            return {}
        t = sql(tx)
        rows = t.rows(*tokens_of(t.dialect, scope.key, kind, ids, before_entry))
        latest: dict[str, tuple[int, int | None]] = {}
        for object_id, entry, token in rows:  # ascending: the last one stays
            latest[str(object_id)] = (int(entry), None if token is None else int(token))
        return latest

    def later(
        self, tx: Tx, scope: Scope, objects: Sequence[tuple[str, str]], after_entry: int
    ) -> list[int]:
        t, found = sql(tx), set[int]()
        for kind, object_id in objects:
            rows = t.rows(
                "SELECT i.entry FROM ledger_items i JOIN ledger l ON l.seq = i.entry "
                "WHERE i.kind = ? AND i.object_id = ? AND l.scope = ? AND i.entry > ?",
                (kind, object_id, scope.key, after_entry),
            )
            found.update(int(r[0]) for r in rows)
        return sorted(found)

    def mark_reverted(self, tx: Tx, seq: int, by: int | None) -> None:
        sql(tx).execute("UPDATE ledger SET reverted_by = ? WHERE seq = ?", (by, seq))

    def page(
        self,
        tx: Tx,
        scope: Scope,
        before: int | None,
        limit: int,
        object_id: str | None = None,
    ) -> list[LedgerEntry]:
        t = sql(tx)
        top = before if before is not None else 1 << 62
        if object_id is None:
            rows = t.rows(
                f"SELECT {ENTRY_COLUMNS} FROM ledger WHERE scope = ? AND seq < ? "
                "ORDER BY seq DESC LIMIT ?",
                (scope.key, top, limit),
            )
        else:
            rows = t.rows(
                f"{_KINDS}SELECT {ENTRY_COLUMNS} FROM ledger WHERE scope = ? AND seq < ? "
                "AND seq IN (SELECT entry FROM ledger_items "
                "WHERE kind IN (SELECT k FROM kinds) AND object_id = ?) "
                "ORDER BY seq DESC LIMIT ?",
                (scope.key, top, object_id, limit),
            )
        return _shown(t, rows, object_id)

    def scrub(
        self,
        tx: Tx,
        scope: Scope,
        fact_ids: Sequence[str] | None,
        *,
        kind: str = "fact",
        action: str | None = None,
        sparing: int | None = None,
    ) -> int:
        """Erases the before-states of the items that name these objects of ``kind`` in
        the scope (or every item of the scope, for None), only those of ``action`` if
        given, marking their entries scrubbed."""
        t = sql(tx).erasing()
        if fact_ids is not None and not fact_ids:
            return 0
        # A whole scope's deletion erases the before-states of everything it held.
        named = "entry IN (SELECT seq FROM ledger WHERE scope = ?)"
        params: list[object] = [scope.key]
        if fact_ids is not None:
            member, listed = t.dialect.in_list("object_id", fact_ids)
            named += f" AND kind = ? AND {member}"
            params += [kind, *listed]
        if action is not None:
            named += " AND action = ?"
            params.append(action)
        if sparing is not None:
            named += " AND entry <> ?"
            params.append(sparing)
        t.execute(
            f"UPDATE ledger SET scrubbed = 1 WHERE seq IN (SELECT entry FROM ledger_items "
            f"WHERE {named})",
            tuple(params),
        )
        erased = t.execute(
            f"UPDATE ledger_items SET before = NULL WHERE before IS NOT NULL AND {named}",
            tuple(params),
        )
        return int(erased.rowcount)

    def delete_before(self, tx: Tx, scope: Scope, cutoff_us: int) -> int:
        t = sql(tx)
        t.execute(
            "DELETE FROM ledger_items WHERE entry IN "
            "(SELECT seq FROM ledger WHERE scope = ? AND at < ?)",
            (scope.key, cutoff_us),
        )
        gone = t.execute("DELETE FROM ledger WHERE scope = ? AND at < ?", (scope.key, cutoff_us))
        return int(gone.rowcount)

    def count(self, tx: Tx, scope: Scope) -> int:
        return int(sql(tx).one("SELECT count(*) FROM ledger WHERE scope = ?", (scope.key,)))


def tokens_of(
    d: Dialect, scope: str, kind: str, ids: Sequence[str], before_entry: int | None
) -> tuple[str, tuple[Any, ...]]:
    """Every item naming these objects of ``kind`` in the scope's entries before
    ``before_entry``: (object, entry, token), oldest first. The items are sought by
    object (``+i.entry`` keeps the entry off the join's keys): SQLite otherwise walked the
    scope's entries and sought every object in each, 2,500 entries times the objects (one
    read of a 10k batch's items took 3.3 s, 0.02 s sought by object)."""
    member, params = d.in_list("i.object_id", ids)
    return (
        "SELECT i.object_id, i.entry, i.token FROM ledger_items i JOIN ledger l "
        f"ON l.seq = +i.entry WHERE i.kind = ? AND l.scope = ? AND {member} "
        "AND i.entry < ? ORDER BY i.entry",
        (kind, scope, *params, before_entry if before_entry is not None else 1 << 62),
    )


# The kinds of object the ledger's items name, read from their index (kind, object_id,
# entry) a kind at a time: an object's items are then sought by (kind, object_id) under
# each, where the object alone would scan every item (0.3 s at a million facts).
_KINDS = (
    "WITH RECURSIVE kinds(k) AS (SELECT min(kind) FROM ledger_items UNION ALL "
    "SELECT (SELECT min(kind) FROM ledger_items WHERE kind > k) FROM kinds "
    "WHERE k IS NOT NULL) "
)


def _stored(before: str | None) -> str | None:
    """A before-state as a row holds it: what did not exist before (:data:`ABSENT`, the
    before-state of every add: a write's item, a fact's) as the empty string, which no
    state's JSON is (19 bytes a fact less); erased stays NULL."""
    return "" if before == ABSENT else before


def _change(row: Sequence[Any]) -> Change:
    kind, object_id, action, before, token = row
    return Change(
        str(kind),
        str(object_id),
        str(action),
        None if before is None else (str(before) or ABSENT),
        None if token is None else int(token),
    )


def _shown(t: SQLTx, rows: Sequence[Any], object_id: str | None = None) -> list[LedgerEntry]:
    """The entries of ``rows`` (ENTRY_COLUMNS) as a listing shows them: how many items
    each has, and its first CHANGES_SHOWN of them (only those naming ``object_id``, when
    given) in (kind, object) order, without their before-states."""
    if not rows:
        return []
    seqs = [int(r[0]) for r in rows]
    member, params = t.dialect.in_list("entry", seqs)
    counts = {
        int(e): int(n)
        for e, n in t.rows(
            f"SELECT entry, count(*) FROM ledger_items WHERE {member} GROUP BY entry", params
        )
    }
    # Each entry's first CHANGES_SHOWN items (or the object's): those of small entries
    # in one statement, each larger one's by a statement of its own that stops there
    # (a 10k batch's items are 10k; numbering every item of a page in one statement
    # took 0.7 s for 50 such entries).
    items: dict[int, list[Change]] = {}
    everything = len(seqs) * CHANGES_SHOWN  # no more than that where each has at most
    if object_id is not None:
        wanted: list[tuple[str, tuple[Any, ...], int]] = [
            (f"{member} AND object_id = ?", (*params, object_id), everything)
        ]
    else:
        small = [q for q in seqs if counts.get(q, 0) <= CHANGES_SHOWN]
        listed, held = t.dialect.in_list("entry", small)
        wanted = [(listed, tuple(held), everything)] if small else []
        wanted += [
            ("entry = ?", (q,), CHANGES_SHOWN) for q in seqs if counts.get(q, 0) > CHANGES_SHOWN
        ]
    for where, values, most in wanted:
        for r in t.rows(
            "SELECT entry, kind, object_id, action, NULL, token FROM ledger_items "
            f"WHERE {where} ORDER BY entry, kind, object_id LIMIT ?",
            (*values, most),
        ):
            items.setdefault(int(r[0]), []).append(_change(r[1:]))
    return [_entry(r, items.get(int(r[0]), []), counts.get(int(r[0]), 0)) for r in rows]


def _entry(row: Sequence[Any], changes: list[Change], count: int) -> LedgerEntry:
    seq, scope, op, at, actor, via, turn_user, request_id, reverts, reverted_by, scrubbed = row
    return LedgerEntry(
        seq=int(seq),
        scope=parse_key(str(scope)),
        op=str(op),
        at=from_us(int(at)),
        actor=str(actor),
        via=str(via),
        turn_user=None if turn_user is None else str(turn_user),
        request_id=None if request_id is None else str(request_id),
        reverts=None if reverts is None else int(reverts),
        reverted_by=None if reverted_by is None else int(reverted_by),
        scrubbed=bool(scrubbed),
        changes=tuple(changes),
        change_count=count,
    )
