"""What callers assert: entities, relations and relation types, each change a ledger item
with the state before it (so a revert puts it back).

Relations keep Graphiti's temporal rule for single-valued types (``lives_in``): a new
target retires the live old relation (``invalid_at`` = the new one's ``valid_at``,
``expired_at`` = now), and a relation that arrives late, older than the live one, is
stored already invalid (``invalid_at`` = the live one's ``valid_at``).

The rules' relations (:mod:`engram.core.graph.indexing`) follow their facts' words and
nothing here touches them: an asserted relation neither joins nor retires one (the two
stand side by side, told apart by ``origin`` and ``extractor``), retiring or deleting one
raises Conflict (forget or correct the fact that states it), and deleting an entity
records none of them (the facts that state them give them back when read again).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram.core import ledger, limits
from engram.core.clock import from_us, to_us
from engram.core.errors import Conflict, InvalidInput, NotFound
from engram.core.graph import indexing, models
from engram.core.graph.models import Entity, Origin, Relation
from engram.core.graph.names import normalise
from engram.core.models import Change, JSONValue
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

ABSENT = ledger.ABSENT  # what did not exist before: one before-state for every kind


def check_norm(name: str, what: str) -> str:
    norm = normalise(name)
    if not norm:
        raise InvalidInput(f"{what} {name!r} has nothing left once normalised")
    return norm


def upsert_entity(
    rec: ledger.Entry,
    name: str,
    *,
    type: str | None = None,
    aliases: Sequence[str] = (),
    summary: str | None = None,
    attributes: dict[str, JSONValue] | None = None,
    origin: Origin = "asserted",
) -> Entity:
    """The entity named ``name`` (or holding it as an alias), created or given these
    values; the aliases given join its own. Raises Conflict when an alias is another
    entity's name or alias."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    name = models.check_name(name)
    etype = None if type is None else models.check_type(type)
    wanted = models.check_aliases(aliases)
    about = models.check_summary(summary)
    attrs = None if attributes is None else models.check_attributes(attributes)
    norm = check_norm(name, "name")
    alias_norms = {check_norm(a, "alias"): a for a in wanted}
    known = store.graph.named(tx, scope, [norm, *alias_norms])
    entity_id = known.get(norm, models.entity_id(scope, norm))
    current = store.graph.entities(tx, scope, [entity_id]).get(entity_id)
    for alias_norm, alias in alias_norms.items():
        owner = known.get(alias_norm)
        if owner is not None and owner != entity_id:
            raise Conflict(f"alias {alias!r} is another entity's name or alias ({owner})")
    now = from_us(rec.now)
    if current is None:
        merged: dict[str, str] = {n: a for n, a in alias_norms.items() if n != norm}
        entity = Entity(entity_id, name, norm, etype, (), about, attrs or {}, origin, now, now)
    else:
        merged = {normalise(a): a for a in current.aliases}
        merged.update((n, a) for n, a in alias_norms.items() if n != current.norm)
        entity = dataclasses.replace(
            current,
            type=etype if etype is not None else current.type,
            summary=about if about is not None else current.summary,
            attributes=attrs if attrs is not None else current.attributes,
            origin="asserted" if origin == "asserted" else current.origin,
        )
    if len(merged) > models.MAX_ALIASES:  # with those it holds: a state, not the request
        raise Conflict(
            f"the entity would have {len(merged)} aliases; the limit is {models.MAX_ALIASES}",
            hint="it holds aliases already: give fewer new ones",
        )
    merged = dict(sorted(merged.items()))  # aliases read back in their normalised order
    entity = dataclasses.replace(entity, aliases=tuple(merged.values()))
    if current is not None and _same(current, entity):
        return current
    entity = dataclasses.replace(entity, updated_at=now)
    store.graph.put_entity(tx, scope, entity, list(merged))
    fresh = [entity.name] if current is None else []
    fresh += [a for n, a in merged.items() if current is None or n not in _norms(current)]
    indexing.queue_holders(store, tx, scope, fresh)  # their words may name it now
    rec.record("entity", entity.id, "upsert", ABSENT if current is None else _entity_state(current))
    return entity


def delete_entity(rec: ledger.Entry, entity: str) -> Entity:
    """Deletes the entity with its aliases, mentions and relations (never a fact)."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    found = _resolve(rec, entity)
    for relation in _held(store.graph.relations(tx, scope, entities=[found.id], limit=1 << 30)):
        rec.record("relation", relation.id, "delete", relation_state(relation))
    store.graph.delete_entity(tx, scope, found.id)
    rec.record("entity", found.id, "delete", _entity_state(found))
    return found


def declare_relation_type(rec: ledger.Entry, type: str, single_valued: bool) -> bool:
    """Declares whether ``type`` holds one target per source at a time; whether that
    changed anything."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    rtype = models.check_type(type)
    if not isinstance(single_valued, bool):
        raise InvalidInput("single_valued must be true or false")
    before = store.graph.relation_type(tx, scope, rtype)
    if before == single_valued:
        return False
    store.graph.put_relation_type(tx, scope, rtype, single_valued)
    state = ABSENT if before is None else json.dumps({"single_valued": before})
    rec.record("relation_type", rtype, "declare", state)
    return True


def upsert_relation(
    rec: ledger.Entry,
    source: str,
    target: str,
    type: str,
    *,
    facts: Sequence[str] = (),
    valid_at: datetime | None = None,
    invalid_at: datetime | None = None,
    attributes: dict[str, JSONValue] | None = None,
    origin: Origin = "asserted",
) -> Relation:
    """``source`` -[type]-> ``target`` (ids or names of the scope's entities), supported
    by ``facts`` (the scope's live facts). The same live relation gains the support and
    times given instead of a second copy."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    rtype = models.check_type(type)
    start, end = models.check_validity(valid_at, invalid_at)
    attrs = None if attributes is None else models.check_attributes(attributes)
    support = _facts(rec, facts)
    head, tail = _resolve(rec, source), _resolve(rec, target)
    single = bool(store.graph.relation_type(tx, scope, rtype))
    if single and head.id == tail.id:
        raise InvalidInput(f"{rtype} is single-valued: an entity cannot be its own {rtype}")
    now = from_us(rec.now)
    history = _held(store.graph.relations(tx, scope, source=head.id, types=[rtype], limit=1 << 30))
    live = [r for r in history if r.expired_at is None]
    same = next((r for r in live if r.target == tail.id and r.invalid_at is None), None)
    if same is not None:
        updated = dataclasses.replace(
            same,
            facts=tuple(dict.fromkeys([*same.facts, *support])),
            valid_at=start if start is not None else same.valid_at,
            invalid_at=end if end is not None else same.invalid_at,
            attributes=attrs if attrs is not None else same.attributes,
            origin="asserted" if origin == "asserted" else same.origin,
        )
        if updated != same:
            store.graph.put_relation(tx, scope, updated)
            rec.record("relation", same.id, "upsert", relation_state(same))
        return updated
    relation = Relation(
        models.new_relation_id(),
        head.id,
        tail.id,
        rtype,
        origin,
        start,
        end,
        now,
        None,
        tuple(support),
        attrs or {},
    )
    if single:
        later = [
            r.valid_at
            for r in history
            if r.valid_at is not None
            and start is not None
            and start < r.valid_at
            and (r.expired_at is None or r.invalid_at is not None)  # not withdrawn
        ]
        if later:  # it arrives late: it held until the next one began, and is over
            ended = min(later) if end is None else min(end, min(later))
            relation = dataclasses.replace(relation, invalid_at=ended)
        else:
            for old in (r for r in live if r.invalid_at is None):
                retired = dataclasses.replace(
                    old, invalid_at=start if start is not None else now, expired_at=now
                )
                store.graph.put_relation(tx, scope, retired)
                rec.record("relation", old.id, "retire", relation_state(old))
    store.graph.put_relation(tx, scope, relation)
    rec.record("relation", relation.id, "upsert", ABSENT)
    return relation


def expire_relation(rec: ledger.Entry, relation_id: str, at: datetime | None = None) -> Relation:
    """Retires the relation: engram no longer holds it from now; ``at`` (when given) is
    when it stopped holding in the world."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    found = _not_rules(relation(rec, relation_id))
    end = models.check_validity(found.valid_at, at)[1] if at is not None else found.invalid_at
    if found.expired_at is not None and end == found.invalid_at:
        return found
    retired = dataclasses.replace(
        found, invalid_at=end, expired_at=found.expired_at or from_us(rec.now)
    )
    store.graph.put_relation(tx, scope, retired)
    rec.record("relation", found.id, "retire", relation_state(found))
    return retired


def delete_relation(rec: ledger.Entry, relation_id: str) -> Relation:
    store, tx, scope = rec.store, rec.tx, rec.scope
    found = _not_rules(relation(rec, relation_id))
    store.graph.delete_relation(tx, scope, found.id)
    rec.record("relation", found.id, "delete", relation_state(found))
    return found


def resolve(store: Store, tx: Tx, scope: Scope, entity: str) -> Entity:
    """The scope's entity with this id, name or alias; NotFound otherwise (another
    scope's entity included, with no hint that it exists)."""
    text = models.check_name(entity, "entity")
    found = store.graph.entities(tx, scope, [text]).get(text)
    if found is None:
        norm = normalise(text)
        entity_id = store.graph.named(tx, scope, [norm]).get(norm) if norm else None
        found = store.graph.entities(tx, scope, [entity_id]).get(entity_id) if entity_id else None
    if found is None:
        raise NotFound(f"no entity {text!r} in this scope")
    return found


def _resolve(rec: ledger.Entry, entity: str) -> Entity:
    return resolve(rec.store, rec.tx, rec.scope, entity)


def relation(rec: ledger.Entry, relation_id: str) -> Relation:
    checked = limits.check_id(relation_id, "relation id")
    found = rec.store.graph.relations(rec.tx, rec.scope, ids=[checked])
    if not found:
        raise NotFound(f"no relation {relation_id!r} in this scope")
    return found[0]


def _held(relations: Sequence[Relation]) -> list[Relation]:
    """Those of ``relations`` that are not the rules' (those follow their facts)."""
    return [r for r in relations if r.extractor != "rules"]


def _not_rules(found: Relation) -> Relation:
    if found.extractor == "rules":
        raise Conflict(
            f"relation {found.id} was read by the rules from facts' words, and follows them",
            hint="forget or correct the facts it cites, or assert a relation of your own",
        )
    return found


def _facts(rec: ledger.Entry, facts: Sequence[str]) -> list[str]:
    if isinstance(facts, str):
        facts = [facts]
    if not isinstance(facts, list | tuple):
        raise InvalidInput("facts must be a list of fact ids")
    if len(facts) > limits.MAX_IDS:
        raise InvalidInput(f"a relation may cite at most {limits.MAX_IDS} facts, got {len(facts)}")
    ids = list(dict.fromkeys(limits.check_id(f) for f in facts))
    found = rec.store.facts.by_ids(rec.tx, rec.scope, ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no live fact {missing[0]!r} in this scope")
    return ids


def _norms(entity: Entity) -> set[str]:
    return {entity.norm, *(normalise(a) for a in entity.aliases)}


def _same(a: Entity, b: Entity) -> bool:
    return dataclasses.replace(a, updated_at=b.updated_at) == b


def _entity_state(entity: Entity) -> str:
    return json.dumps(
        {
            "state": "live",
            "entity": {
                "name": entity.name,
                "type": entity.type,
                "aliases": list(entity.aliases),
                "summary": entity.summary,
                "attributes": entity.attributes,
                "origin": entity.origin,
                "created_at": to_us(entity.created_at),
                "updated_at": to_us(entity.updated_at),
            },
        }
    )


def relation_state(relation: Relation) -> str:
    def us(at: datetime | None) -> int | None:
        return None if at is None else to_us(at)

    return json.dumps(
        {
            "state": "live",
            "relation": {
                "source": relation.source,
                "target": relation.target,
                "type": relation.type,
                "origin": relation.origin,
                "valid_at": us(relation.valid_at),
                "invalid_at": us(relation.invalid_at),
                "created_at": us(relation.created_at),
                "expired_at": us(relation.expired_at),
                "facts": list(relation.facts),
                "attributes": relation.attributes,
                "extractor": relation.extractor,
            },
        }
    )


def entity_from_state(entity_id: str, state: dict[str, Any]) -> Entity:
    e = state["entity"]
    return Entity(
        entity_id,
        e["name"],
        normalise(e["name"]),
        e["type"],
        tuple(e["aliases"]),
        e["summary"],
        e["attributes"],
        e["origin"],
        from_us(e["created_at"]),
        from_us(e["updated_at"]),
    )


def relation_from_state(relation_id: str, state: dict[str, Any]) -> Relation:
    r = state["relation"]

    def at(us: int | None) -> datetime | None:
        return None if us is None else from_us(us)

    return Relation(
        relation_id,
        r["source"],
        r["target"],
        r["type"],
        r["origin"],
        at(r["valid_at"]),
        at(r["invalid_at"]),
        from_us(r["created_at"]),
        at(r["expired_at"]),
        tuple(r["facts"]),
        r["attributes"],
        r.get("extractor"),
    )


# -- reverting -------------------------------------------------------------------
def undo_entity(rec: ledger.Entry, change: Change, token: int | None) -> None:
    """Puts an entity back as ``change.before`` left it (or deletes it when it was
    absent), naming the relations its deletion takes with it."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    target = ledger.decode(change.before)
    current = store.graph.entities(tx, scope, [change.object_id]).get(change.object_id)
    before = ABSENT if current is None else _entity_state(current)
    if target.get("state") != "live":
        if current is not None:
            for gone in _held(
                store.graph.relations(tx, scope, entities=[current.id], limit=1 << 30)
            ):
                rec.record("relation", gone.id, "delete", relation_state(gone))
            store.graph.delete_entity(tx, scope, current.id)
        rec.record("entity", change.object_id, "delete", before, token)
        return
    entity = entity_from_state(change.object_id, target)
    norms = [normalise(a) for a in entity.aliases]
    owners = store.graph.named(tx, scope, [entity.norm, *norms])
    taken = sorted({o for o in owners.values() if o != entity.id})
    if taken:
        raise Conflict(
            f"entity {entity.id} cannot take back its names: entity {taken[0]} holds one now"
        )
    store.graph.put_entity(tx, scope, entity, norms)
    # Names it had and lost, or takes back: the facts that hold them are read again.
    mentioning = {m.fact_id for m in store.graph.mentions(tx, scope, entities=[entity.id])}
    store.graph.queue(tx, scope, sorted(mentioning))
    indexing.queue_holders(store, tx, scope, [entity.name, *entity.aliases])
    if entity.origin == "extracted":
        # An extracted entity lives while facts' words ground it. The rules ground it
        # again on reading, if they do; a model's groundings went with it for good.
        indexing.settle(store, tx, rec.now)
        if not store.graph.groundings(tx, scope, [entity.id]):
            raise Conflict(
                f"entity {entity.id} cannot come back: no fact's words ground it now",
                hint="assert it (upsert_entity) to keep it whatever the facts say",
            )
    rec.record("entity", entity.id, "upsert", before, token)


def undo_relation(rec: ledger.Entry, change: Change, token: int | None) -> None:
    store, tx, scope = rec.store, rec.tx, rec.scope
    target = ledger.decode(change.before)
    found = store.graph.relations(tx, scope, ids=[change.object_id])
    before = ABSENT if not found else relation_state(found[0])
    if target.get("state") != "live":
        if found:
            store.graph.delete_relation(tx, scope, change.object_id)
        rec.record("relation", change.object_id, "delete", before, token)
        return
    relation = relation_from_state(change.object_id, target)
    ends = store.graph.entities(tx, scope, [relation.source, relation.target])
    if relation.source not in ends or relation.target not in ends:
        raise Conflict(f"relation {relation.id} cannot come back: one of its entities is gone")
    live = store.facts.by_ids(tx, scope, list(relation.facts))
    relation = dataclasses.replace(relation, facts=tuple(f for f in relation.facts if f in live))
    store.graph.put_relation(tx, scope, relation)
    rec.record("relation", relation.id, "upsert", before, token)


def undo_relation_type(rec: ledger.Entry, change: Change, token: int | None) -> None:
    store, tx, scope = rec.store, rec.tx, rec.scope
    target = ledger.decode(change.before)
    current = store.graph.relation_type(tx, scope, change.object_id)
    before = ABSENT if current is None else json.dumps({"single_valued": current})
    wanted = target.get("single_valued")
    store.graph.put_relation_type(tx, scope, change.object_id, wanted)
    rec.record("relation_type", change.object_id, "declare", before, token)
