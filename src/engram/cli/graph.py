"""``engram graph``: how the knowledge graph's commands print. The commands themselves
are built from the graph's declared operations (:mod:`engram.core.graph.ops`, by
``cli/declared.py``); each prints its answer: ``--json`` as the service answers it (by
field name), else one line per entity, relation or path, relations named by their
entities."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from engram.cli.render import Output, fact_line, wired
from engram.core import ops
from engram.core.errors import NotFound
from engram.core.graph import ops as graph_ops
from engram.core.graph.graph import Graph
from engram.core.graph.models import Entity, ExtractionReport, Relation
from engram.core.graph.search import EntityHit
from engram.core.graph.walks import Path, Subgraph
from engram.core.memory import Memory
from engram.core.scopes import ResourceRef, Scope

GRAPH = "engram.wire.graph"  # the graph's wire shapes, imported for --json alone


def rendered(mem: Memory, scope: Scope, op: ops.Op[Any], result: Any) -> Output:
    """What a graph command prints of its operation's result."""
    graph = mem.graph
    if isinstance(op, graph_ops.UpsertEntity | graph_ops.GetEntity):
        return _entity(result)
    if isinstance(op, graph_ops.DeleteEntity):
        shown = _entity(result)
        return Output(shown.made, [f"deleted {entity_line(result)} with its relations"])
    if isinstance(op, graph_ops.SearchEntities):
        return _hits(result)
    if isinstance(op, graph_ops.DeclareRelationType):
        return _declared(op, result)
    if isinstance(op, graph_ops.Relate):
        return _relations(graph, scope, [result], single=True)
    if isinstance(op, graph_ops.Relations):
        return _relations(graph, scope, result)
    if isinstance(op, graph_ops.EndRelation):
        shown = _relations(graph, scope, [result], single=True)
        if not op.hard:
            return shown
        return Output(shown.made, [f"deleted {line}" for line in shown.lines])
    if isinstance(op, graph_ops.Neighbourhood):
        return subgraph(result)
    if isinstance(op, graph_ops.Traverse):
        names = _names(graph, scope, (e for p in result for e in p.entities))
        lines = [path_line(p, names) for p in result] or ["no paths"]
        return Output(
            wired(lambda s: s.PathsOut(paths=[s.PathOut.of(p) for p in result]), GRAPH), lines
        )
    assert isinstance(op, graph_ops.Extract), op
    return Output(wired(lambda s: s.ExtractionOut.of(result), GRAPH), extraction_lines(result))


def _declared(op: graph_ops.DeclareRelationType, changed: bool) -> Output:
    single = op.single_valued
    kind = "single-valued" if single else "multi-valued"
    line = f"{op.relation_type} is {kind}" + ("" if changed else " (it already was)")
    said = wired(
        lambda s: s.RelationTypeOut(type=op.relation_type, single_valued=single, changed=changed),
        GRAPH,
    )
    return Output(said, [line])


def unrelate(mem: Memory, args: argparse.Namespace) -> Output:
    """``graph unrelate ID``: ``graph expire ID --hard`` under its own name."""
    scope = ResourceRef(args.resource, team_id=args.team)
    made = graph_ops.EndRelation(args.relation_id, hard=True)
    return rendered(mem, scope, made, mem.run(scope, made))


def extraction_lines(report: ExtractionReport) -> list[str]:
    """``read 12 facts with llm: 3 entities and 2 relations new, 1 entity dropped``"""
    line = f"read {_count(report.facts_read, 'fact')} with {report.extractor}"
    added = [
        _count(n, noun) + " new"
        for n, noun in ((report.entities_added, "entity"), (report.relations_added, "relation"))
        if n
    ]
    line += ": " + ", ".join(added) if added else ": nothing new"
    dropped = [
        f"{_count(n, noun)} {why}"
        for n, noun, why in (
            (report.entities_dropped, "entity", "not in its fact's words, dropped"),
            (report.relations_dropped, "relation", "dropped"),
            (report.times_dropped, "time", "not ISO 8601, dropped"),
            (report.answers_rejected, "answer", "not the JSON asked for"),
            (report.facts_skipped, "fact", "changed while read, left for the next run"),
        )
        if n
    ]
    return [line, *(f"  {d}" for d in dropped)]


def _count(n: int, noun: str) -> str:
    plural = "entities" if noun == "entity" else noun + "s"
    return f"{n} {noun if n == 1 else plural}"


# -- rendering -----------------------------------------------------------------------------
def entity_line(entity: Entity) -> str:
    """``e_…  Ana Lima (person)  aka Ana, A. Lima  - paints birds``"""
    line = f"{entity.id}  {entity.name}" + (f" ({entity.type})" if entity.type else "")
    if entity.aliases:
        line += "  aka " + ", ".join(entity.aliases)
    return line + (f"  - {entity.summary}" if entity.summary else "")


def relation_line(relation: Relation, names: dict[str, str]) -> str:
    """``r_…  Ana -[lives_in]-> Lisbon  2023-01-01 to 2023-07-20  [retired]``"""
    source, target = names.get(relation.source, relation.source), names.get(relation.target)
    line = f"{relation.id}  {source} -[{relation.type}]-> {target or relation.target}"
    start, end = relation.valid_at, relation.invalid_at
    if start is not None or end is not None:
        line += f"  {start.date() if start else '?'} to {end.date() if end else 'now'}"
    if relation.facts:
        line += f"  ({len(relation.facts)} fact{'' if len(relation.facts) == 1 else 's'})"
    return line + ("  [retired]" if relation.expired_at is not None else "")


def path_line(path: Path, names: dict[str, str]) -> str:
    """``Ana -[knows]-> Bo <-[works_at]- Acme``: each step in its own direction."""
    line = names.get(path.entities[0], path.entities[0])
    for step, relation in enumerate(path.relations):
        here, there = path.entities[step], path.entities[step + 1]
        name = names.get(there, there)
        forward = relation.source == here
        line += f" -[{relation.type}]-> {name}" if forward else f" <-[{relation.type}]- {name}"
    return line


def subgraph(found: Subgraph) -> Output:
    names = {e.id: e.name for e in found.entities}
    lines = [f"around {entity_line(found.center)}"]
    lines += [f"  {entity_line(e)}" for e in found.entities if e.id != found.center.id]
    lines += [f"  {relation_line(r, names)}" for r in found.relations]
    lines += [f"  {fact_line(f)}" for f in found.facts]
    if found.truncated:
        lines.append("  (cut short: raise --limit to see more)")
    return Output(wired(lambda s: s.SubgraphOut.of(found), GRAPH), lines)


def _entity(entity: Entity) -> Output:
    return Output(wired(lambda s: s.EntityOut.of(entity), GRAPH), [entity_line(entity)])


def _hits(hits: Sequence[EntityHit]) -> Output:
    lines = [f"{h.score:.2f}  {entity_line(h.entity)}" for h in hits] or ["no entities found"]
    found = wired(lambda s: s.EntitiesOut(entities=[s.FoundEntity.of_hit(h) for h in hits]), GRAPH)
    return Output(found, lines)


def _relations(
    graph: Graph, ref: Scope, found: Sequence[Relation], *, single: bool = False
) -> Output:
    names = _names(graph, ref, (end for r in found for end in (r.source, r.target)))
    lines = [relation_line(r, names) for r in found] or ["no relations"]
    if single:
        return Output(wired(lambda s: s.RelationOut.of(found[0]), GRAPH), lines)
    listed = wired(lambda s: s.RelationsOut(relations=[s.RelationOut.of(r) for r in found]), GRAPH)
    return Output(listed, lines)


def _names(graph: Graph, ref: Scope, ids: Iterable[str]) -> dict[str, str]:
    """Each entity's name, for the lines (an entity gone meanwhile keeps its id)."""
    names: dict[str, str] = {}
    for entity_id in dict.fromkeys(ids):
        try:
            names[entity_id] = graph.entity(ref, entity_id).name
        except NotFound:
            continue
    return names


HANDLERS: dict[str, Callable[[Memory, argparse.Namespace], Output]] = {
    "graph unrelate": unrelate,
}
