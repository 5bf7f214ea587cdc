"""The knowledge graph's rows on both backends (see :class:`engram.core.ports.GraphRows`
for each method's contract). Every write goes through ``recorded()``: a graph write is a
write to memory and belongs to a ledger entry. What a fact's leaving does to the graph is
done by the database's triggers (SQLite migration 11, PostgreSQL 7)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from engram.core.clock import from_us, to_us
from engram.core.errors import StorageFailure
from engram.core.graph.models import (
    EXTRACTORS,
    ORDER,
    ORIGINS,
    Entity,
    Extractor,
    FactReading,
    Mention,
    Origin,
    Relation,
)
from engram.core.ports import Tx
from engram.core.scopes import Scope
from engram.storage.rows import stored_digest
from engram.storage.sql.queries import like_pattern
from engram.storage.sql.tx import SQLTx, sql

ENTITY_COLUMNS = "id, name, norm, type, summary, attributes, origin, created_at, updated_at"
# An extracted entity with no type of its own takes the type its mentions were read with
# most often, ties broken by models.ORDER, then by name.
_RANK = " ".join(f"WHEN '{t}' THEN {n}" for n, t in enumerate(ORDER))
ENTITY_READ = ENTITY_COLUMNS.replace(
    "type",
    "CASE WHEN type IS NULL AND origin = 'extracted' THEN (SELECT m.type FROM mentions m "
    "WHERE m.entity = entities.id AND m.type IS NOT NULL GROUP BY m.type "
    f"ORDER BY count(*) DESC, CASE m.type {_RANK} ELSE {len(ORDER)} END, m.type LIMIT 1) "
    "ELSE type END",
    1,
)
RELATION_COLUMNS = (
    "id, source, target, type, attributes, origin, valid_at, invalid_at, created_at, "
    "expired_at, extractor"
)


def grounding_sources(*, rules_only: bool = False) -> tuple[tuple[str, str], ...]:
    """Where a fact's grounding of an entity is stored, each as its table aliased ``x``
    (``x.fact_id``, ``x.entity``) and the condition its rows meet: the groundings table's
    rows (the rules' alone, with ``rules_only``), and the mentions flagged as grounding
    their entity (the rules' groundings a mention carries are stored so)."""
    only = " AND x.extractor = 'rules'" if rules_only else ""
    return (("groundings x", f"1 = 1{only}"), ("mentions x", "x.grounds = 1"))


def grounding_pairs(entities: str, *, rules_only: bool = False) -> str:
    """The statement of the (fact, entity) pairs grounding the entities ``e`` for which
    the condition ``entities`` holds (its parameters given twice), from every one of
    :func:`grounding_sources`."""
    return " UNION ".join(
        f"SELECT x.fact_id, x.entity FROM {table} JOIN entities e ON e.id = x.entity "
        f"WHERE {entities} AND {held}"
        for table, held in grounding_sources(rules_only=rules_only)
    )


def queue_selected(
    tx: Tx, scope: Scope, select: str, params: Sequence[Any], exclude: Sequence[str]
) -> None:
    """Queues for the graph's reading, as :meth:`GraphTable.queue` does, the facts whose
    ``id`` the statement ``select`` (with ``params``) gives, but those in ``exclude``: in
    the store, however many it selects."""
    t = sql(tx).recorded()
    member, listed = t.dialect.in_list("h.id", exclude)
    t.execute(
        f"INSERT INTO graph_dirty (scope, fact_id) SELECT ?, h.id FROM ({select}) AS h "
        f"WHERE NOT {member} ON CONFLICT DO NOTHING",
        (scope.key, *params, *listed),
    )


class GraphTable:
    def __init__(self) -> None:
        self.reads_facts = True

    def entity_ids(self, tx: Tx, scope: Scope, limit: int) -> list[str]:
        rows = sql(tx).rows(
            "SELECT id FROM entities WHERE scope = ? ORDER BY norm LIMIT ?", (scope.key, limit)
        )
        return [str(r[0]) for r in rows]

    def entities(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Entity]:
        if not ids:
            return {}
        t = sql(tx)
        # By id alone, the scope checked on the rows: given the scope too, SQLite would
        # walk the scope's names index instead of the id's.
        member, params = t.dialect.in_list("id", ids)
        rows = [
            r[1:]
            for r in t.rows(f"SELECT scope, {ENTITY_READ} FROM entities WHERE {member}", params)
            if r[0] == scope.key
        ]
        if not rows:
            return {}
        aliases: dict[str, list[str]] = defaultdict(list)
        member, params = t.dialect.in_list("entity", [r[0] for r in rows])
        for entity, name in t.rows(
            f"SELECT entity, name FROM entity_aliases WHERE {member} ORDER BY entity, norm",
            params,
        ):
            aliases[str(entity)].append(str(name))
        return {str(r[0]): _entity(r, aliases[str(r[0])]) for r in rows}

    def named(self, tx: Tx, scope: Scope, norms: Sequence[str]) -> dict[str, str]:
        if not norms:
            return {}
        t = sql(tx)
        member, params = t.dialect.in_list("norm", norms)
        found = {
            str(n): str(i)
            for n, i in t.rows(
                f"SELECT norm, entity FROM entity_aliases WHERE {member} AND scope = ?",
                (*params, scope.key),
            )
        }
        found.update(
            (str(n), str(i))
            for n, i in t.rows(
                f"SELECT norm, id FROM entities WHERE {member} AND scope = ?",
                (*params, scope.key),
            )
        )
        return found

    def put_entity(self, tx: Tx, scope: Scope, entity: Entity, alias_norms: Sequence[str]) -> None:
        t = sql(tx).recorded()
        values = (
            entity.name,
            entity.norm,
            entity.type,
            entity.summary,
            json.dumps(entity.attributes, sort_keys=True),
            entity.origin,
            to_us(entity.updated_at),
        )
        updated = t.execute(
            "UPDATE entities SET name = ?, norm = ?, type = ?, summary = ?, attributes = ?, "
            "origin = ?, updated_at = ? WHERE id = ? AND scope = ?",
            (*values, entity.id, scope.key),
        )
        if not updated.rowcount:
            t.execute(
                f"INSERT INTO entities (scope, {ENTITY_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope.key, entity.id, *values[:6], to_us(entity.created_at), values[6]),
            )
        t.execute("DELETE FROM entity_aliases WHERE entity = ?", (entity.id,))
        t.executemany(
            "INSERT INTO entity_aliases (scope, norm, name, entity) VALUES (?, ?, ?, ?)",
            [
                (scope.key, norm, name, entity.id)
                for name, norm in zip(entity.aliases, alias_norms, strict=True)
            ],
        )

    def delete_entity(self, tx: Tx, scope: Scope, entity_id: str) -> bool:
        t = sql(tx).recorded().erasing()
        gone = t.execute("DELETE FROM entities WHERE id = ? AND scope = ?", (entity_id, scope.key))
        return gone.rowcount > 0

    def named_like(self, tx: Tx, scope: Scope, words: Sequence[str], limit: int) -> dict[str, str]:
        if not words:
            return {}
        t = sql(tx)
        patterns = [like_pattern(w) for w in words]
        fields = " OR ".join(
            "lower(e.name) LIKE lower(?) ESCAPE '!' OR lower(coalesce(e.summary, '')) "
            "LIKE lower(?) ESCAPE '!'"
            for _ in words
        )
        aliases = " OR ".join("lower(a.name) LIKE lower(?) ESCAPE '!'" for _ in words)
        rows = t.rows(
            "SELECT e.id, e.name, e.summary FROM entities e WHERE e.scope = ? AND "
            f"({fields} OR EXISTS (SELECT 1 FROM entity_aliases a WHERE a.entity = e.id "
            f"AND ({aliases}))) ORDER BY e.seq LIMIT ?",
            (scope.key, *[p for p in patterns for _ in range(2)], *patterns, limit),
        )
        found = self.entities(tx, scope, [str(r[0]) for r in rows])
        return {
            e.id: "\n".join([e.name, *e.aliases, *([e.summary] if e.summary else [])])
            for e in found.values()
        }

    def set_mentions(self, tx: Tx, scope: Scope, readings: Sequence[FactReading]) -> None:
        if not readings:
            return
        t = sql(tx).recorded()
        # A grounding is a flag on a mention that names its entity in its fact, a row
        # where none does. New groundings first, then stale ones out (flags set before
        # flags cleared): an entity still grounded never goes.
        grounded = {(r.fact_id, entity) for r in readings for entity in r.grounds}
        carried = {(m.fact_id, m.entity) for r in readings for m in r.mentions} & grounded
        kept_grounds = grounded - carried
        t.executemany(
            "INSERT INTO groundings (fact_id, entity, extractor) VALUES (?, ?, 'rules') "
            "ON CONFLICT DO NOTHING",
            sorted(kept_grounds),
        )
        flagged = [
            (
                m.fact_id,
                m.start,
                m.end,
                m.entity,
                scope.key,
                m.type,
                int((m.fact_id, m.entity) in grounded),
            )
            for r in readings
            for m in r.mentions
        ]
        t.executemany(
            'INSERT INTO mentions (fact_id, start, "end", entity, scope, type, grounds) '
            "VALUES (?, ?, ?, ?, ?, ?, ?) "
            'ON CONFLICT (fact_id, start) DO UPDATE SET "end" = excluded."end", '
            "entity = excluded.entity, type = excluded.type, grounds = excluded.grounds",
            sorted(flagged, key=lambda row: -row[6]),
        )
        ids = [r.fact_id for r in readings]
        kept_mentions = {(m.fact_id, m.start) for r in readings for m in r.mentions}
        member, params = t.dialect.in_list("fact_id", ids)
        stale_mentions = [
            (str(row[0]), int(row[1]))
            for row in t.rows(f"SELECT fact_id, start FROM mentions WHERE {member}", params)
            if (str(row[0]), int(row[1])) not in kept_mentions
        ]
        stale_grounds = [
            (str(row[0]), str(row[1]))
            for row in t.rows(
                f"SELECT fact_id, entity FROM groundings WHERE extractor = 'rules' AND {member}",
                params,
            )
            if (str(row[0]), str(row[1])) not in kept_grounds
        ]
        t.executemany("DELETE FROM mentions WHERE fact_id = ? AND start = ?", stale_mentions)
        t.executemany(
            "DELETE FROM groundings WHERE fact_id = ? AND entity = ? AND extractor = 'rules'",
            stale_grounds,
        )
        self._set_rule_relations(t, scope, readings)

    def _set_rule_relations(self, t: SQLTx, scope: Scope, readings: Sequence[FactReading]) -> None:
        """Each read fact's support of the rules' relations made exactly its
        ``relations``: new ones written, then support added, then stale support out (a
        relation left with none goes, by the database's trigger)."""
        wanted = {r.id: r for reading in readings for r in reading.relations}
        t.executemany(
            f"INSERT INTO relations (scope, {RELATION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            [(scope.key, *_relation_values(r)) for r in wanted.values()],
        )
        kept = {(r.id, f.fact_id) for f in readings for r in f.relations}
        t.executemany(
            "INSERT INTO relation_support (relation, fact_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            sorted(kept),
        )
        member, params = t.dialect.in_list("s.fact_id", [r.fact_id for r in readings])
        stale = [
            (str(row[0]), str(row[1]))
            for row in t.rows(
                "SELECT s.relation, s.fact_id FROM relation_support s JOIN relations r "
                f"ON r.id = s.relation WHERE {member} AND r.extractor = 'rules'",
                params,
            )
            if (str(row[0]), str(row[1])) not in kept
        ]
        t.executemany("DELETE FROM relation_support WHERE relation = ? AND fact_id = ?", stale)

    def ground(
        self, tx: Tx, scope: Scope, groundings: Sequence[tuple[str, str]], extractor: str
    ) -> None:
        sql(tx).recorded().executemany(
            "INSERT INTO groundings (fact_id, entity, extractor) "
            "SELECT ?, id, ? FROM entities WHERE id = ? AND scope = ? ON CONFLICT DO NOTHING",
            [(fact_id, extractor, entity, scope.key) for fact_id, entity in groundings],
        )

    def unread(
        self, tx: Tx, scope: Scope, extractor: str, limit: int, fact_ids: Sequence[str] = ()
    ) -> list[str]:
        t = sql(tx)
        where, params = "", list[object]()
        if fact_ids:
            member, params = t.dialect.in_list("f.id", fact_ids)
            where = f" AND {member}"
        rows = t.rows(
            f"SELECT f.id FROM facts f WHERE f.scope = ?{where} "
            "AND f.type IS DISTINCT FROM 'wiki' AND NOT EXISTS ("
            "SELECT 1 FROM graph_reads r WHERE r.fact_id = f.id AND r.extractor = ? "
            "AND r.content_hash = f.content_hash) ORDER BY f.seq LIMIT ?",
            (scope.key, *params, extractor, limit),
        )
        return [str(r[0]) for r in rows]

    def mark_read(
        self, tx: Tx, scope: Scope, extractor: str, reads: Sequence[tuple[str, str]]
    ) -> None:
        sql(tx).recorded().executemany(
            "INSERT INTO graph_reads (fact_id, extractor, content_hash) "
            "SELECT id, ?, ? FROM facts WHERE id = ? AND scope = ? "
            "ON CONFLICT (fact_id, extractor) DO UPDATE SET content_hash = excluded.content_hash",
            [(extractor, stored_digest(digest), fact_id, scope.key) for fact_id, digest in reads],
        )

    def mentions(
        self, tx: Tx, scope: Scope, *, facts: Sequence[str] = (), entities: Sequence[str] = ()
    ) -> list[Mention]:
        t = sql(tx)
        found: list[Any] = []
        for column, values in (("fact_id", facts), ("entity", entities)):
            if values:
                member, params = t.dialect.in_list(column, values)
                found += t.rows(
                    f'SELECT fact_id, start, "end", entity, type FROM mentions '
                    f"WHERE {member} AND scope = ?",
                    (*params, scope.key),
                )
        unique = {(str(r[0]), int(r[1])): r for r in found}
        return [
            Mention(str(r[0]), int(r[1]), int(r[2]), str(r[3]), None if r[4] is None else str(r[4]))
            for _, r in sorted(unique.items())
        ]

    def mentioning(
        self, tx: Tx, scope: Scope, entities: Sequence[str], *, until_us: int | None, limit: int
    ) -> list[str]:
        if not entities or limit <= 0:
            return []
        t = sql(tx)
        member, params = t.dialect.in_list("m.entity", entities)
        until = "" if until_us is None else " AND f.created_at <= ?"
        rows = t.rows(
            "SELECT f.id FROM facts f WHERE f.id IN (SELECT m.fact_id FROM mentions m "
            f"WHERE {member} AND m.scope = ?) AND f.scope = ?{until} "
            "ORDER BY f.created_at DESC, f.id DESC LIMIT ?",
            (*params, scope.key, scope.key, *(() if until_us is None else (until_us,)), limit),
        )
        return [str(r[0]) for r in rows]

    def groundings(
        self, tx: Tx, scope: Scope, entities: Sequence[str] = ()
    ) -> dict[str, list[str]]:
        t = sql(tx)
        where, params = "", list[object]()
        if entities:
            member, params = t.dialect.in_list("e.id", entities)
            where = f" AND {member}"
        grounded: dict[str, list[str]] = defaultdict(list)
        for fact_id, entity in t.rows(
            grounding_pairs(f"e.scope = ?{where}") + " ORDER BY 1, 2",
            (scope.key, *params, scope.key, *params),
        ):
            grounded[str(fact_id)].append(str(entity))
        return dict(grounded)

    def queued(self, tx: Tx, limit: int) -> list[tuple[str, str]]:
        rows = sql(tx).rows(
            "SELECT scope, fact_id FROM graph_dirty ORDER BY scope, fact_id LIMIT ?", (limit,)
        )
        return [(str(s), str(f)) for s, f in rows]

    def queue(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> None:
        sql(tx).recorded().executemany(
            "INSERT INTO graph_dirty (scope, fact_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(scope.key, f) for f in fact_ids],
        )

    def gone(self, tx: Tx, limit: int) -> list[tuple[str, str]]:
        rows = sql(tx).rows(
            "SELECT scope, norm FROM graph_gone ORDER BY scope, norm LIMIT ?", (limit,)
        )
        return [(str(s), str(n)) for s, n in rows]

    def forget_gone(self, tx: Tx, items: Sequence[tuple[str, str]]) -> None:
        sql(tx).executemany(
            "DELETE FROM graph_gone WHERE scope = ? AND norm = ?", [tuple(i) for i in items]
        )

    def dequeue(self, tx: Tx, items: Sequence[tuple[str, str]]) -> None:
        sql(tx).executemany(
            "DELETE FROM graph_dirty WHERE scope = ? AND fact_id = ?", [tuple(i) for i in items]
        )

    def relation_type(self, tx: Tx, scope: Scope, type: str) -> bool | None:
        row = (
            sql(tx)
            .execute(
                "SELECT single_valued FROM relation_types WHERE scope = ? AND type = ?",
                (scope.key, type),
            )
            .fetchone()
        )
        return None if row is None else bool(row[0])

    def put_relation_type(
        self, tx: Tx, scope: Scope, type: str, single_valued: bool | None
    ) -> None:
        t = sql(tx).recorded()
        if single_valued is None:
            t.execute("DELETE FROM relation_types WHERE scope = ? AND type = ?", (scope.key, type))
            return
        t.execute(
            "INSERT INTO relation_types (scope, type, single_valued) VALUES (?, ?, ?) "
            "ON CONFLICT (scope, type) DO UPDATE SET single_valued = excluded.single_valued",
            (scope.key, type, int(single_valued)),
        )

    def put_relation(self, tx: Tx, scope: Scope, relation: Relation) -> None:
        t = sql(tx).recorded()
        values = _relation_values(relation)
        updated = t.execute(
            "UPDATE relations SET source = ?, target = ?, type = ?, attributes = ?, "
            "origin = ?, valid_at = ?, invalid_at = ?, created_at = ?, expired_at = ?, "
            "extractor = ? WHERE id = ? AND scope = ?",
            (*values[1:], relation.id, scope.key),
        )
        if not updated.rowcount:
            t.execute(
                f"INSERT INTO relations (scope, {RELATION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope.key, *values),
            )
        # Support first, then stale support out: an extracted relation still supported
        # never goes (its last support leaving deletes it).
        t.executemany(
            "INSERT INTO relation_support (relation, fact_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(relation.id, fact_id) for fact_id in relation.facts],
        )
        kept, params = t.dialect.in_list("fact_id", list(relation.facts) or [""])
        t.execute(
            f"DELETE FROM relation_support WHERE relation = ? AND NOT {kept}",
            (relation.id, *params),
        )

    def relations(
        self,
        tx: Tx,
        scope: Scope,
        *,
        ids: Sequence[str] = (),
        entities: Sequence[str] = (),
        types: Sequence[str] = (),
        source: str | None = None,
        limit: int = 1000,
    ) -> list[Relation]:
        t = sql(tx)
        where, params = ["scope = ?"], list[object]([scope.key])
        if ids:
            member, listed = t.dialect.in_list("id", ids)
            where.append(member)
            params += listed
        if source is not None:
            where.append("source = ?")
            params.append(source)
        if types:
            member, listed = t.dialect.in_list("type", types)
            where.append(member)
            params += listed
        base = " AND ".join(where)
        select = f"SELECT {RELATION_COLUMNS}, seq FROM relations WHERE {base}"
        if entities:
            # One arm per end, so each uses its own index (an OR of the two would not).
            heads, by_head = t.dialect.in_list("source", entities)
            tails, by_tail = t.dialect.in_list("target", entities)
            statement = f"{select} AND {heads} UNION {select} AND {tails} ORDER BY seq LIMIT ?"
            args: list[object] = [*params, *by_head, *params, *by_tail, limit]
        else:
            statement, args = f"{select} ORDER BY seq LIMIT ?", [*params, limit]
        rows = [r[:-1] for r in t.rows(statement, args)]
        if not rows:
            return []
        support: dict[str, list[str]] = defaultdict(list)
        member, listed = t.dialect.in_list("relation", [r[0] for r in rows])
        for relation, fact_id in t.rows(
            f"SELECT relation, fact_id FROM relation_support WHERE {member} "
            "ORDER BY relation, fact_id",
            listed,
        ):
            support[str(relation)].append(str(fact_id))
        return [_relation(r, support[str(r[0])]) for r in rows]

    def erase_scope(self, tx: Tx, scope: Scope) -> int:
        t = sql(tx).recorded().erasing()
        t.execute("DELETE FROM relations WHERE scope = ?", (scope.key,))
        gone = t.execute("DELETE FROM entities WHERE scope = ?", (scope.key,)).rowcount
        t.execute("DELETE FROM relation_types WHERE scope = ?", (scope.key,))
        t.execute("DELETE FROM graph_dirty WHERE scope = ?", (scope.key,))
        return int(gone)

    def delete_relation(self, tx: Tx, scope: Scope, relation_id: str) -> bool:
        t = sql(tx).recorded().erasing()
        gone = t.execute(
            "DELETE FROM relations WHERE id = ? AND scope = ?", (relation_id, scope.key)
        )
        return gone.rowcount > 0


def _relation_values(relation: Relation) -> tuple[object, ...]:
    """The relation's row, in the order of :data:`RELATION_COLUMNS`."""
    return (
        relation.id,
        relation.source,
        relation.target,
        relation.type,
        json.dumps(relation.attributes, sort_keys=True),
        relation.origin,
        _us(relation.valid_at),
        _us(relation.invalid_at),
        to_us(relation.created_at),
        _us(relation.expired_at),
        relation.extractor,
    )


def _us(at: Any) -> int | None:
    return None if at is None else to_us(at)


def _at(us: Any) -> Any:
    return None if us is None else from_us(int(us))


def _origin(value: Any) -> Origin:
    for origin in ORIGINS:
        if value == origin:
            return origin
    raise StorageFailure(f"a graph row has an unknown origin {value!r}")


def _entity(row: Sequence[Any], aliases: list[str]) -> Entity:
    eid, name, norm, etype, summary, attributes, origin, created, updated = row
    return Entity(
        id=str(eid),
        name=str(name),
        norm=str(norm),
        type=None if etype is None else str(etype),
        aliases=tuple(aliases),
        summary=None if summary is None else str(summary),
        attributes=json.loads(str(attributes)),
        origin=_origin(origin),
        created_at=from_us(int(created)),
        updated_at=from_us(int(updated)),
    )


def _relation(row: Sequence[Any], facts: list[str]) -> Relation:
    rid, source, target, rtype, attributes, origin, valid, invalid, created, expired, by = row
    return Relation(
        id=str(rid),
        source=str(source),
        target=str(target),
        type=str(rtype),
        origin=_origin(origin),
        valid_at=_at(valid),
        invalid_at=_at(invalid),
        created_at=from_us(int(created)),
        expired_at=_at(expired),
        facts=tuple(facts),
        attributes=json.loads(str(attributes)),
        extractor=_extractor(by),
    )


def _extractor(value: Any) -> Extractor | None:
    for extractor in EXTRACTORS:
        if value == extractor:
            return extractor
    return None
