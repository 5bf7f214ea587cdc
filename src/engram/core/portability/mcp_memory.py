"""The MCP reference memory server's knowledge graph (its JSONL file), in and out.

Each line of that file is an entity (``{"type": "entity", "name", "entityType",
"observations": [...]}``) or a relation (``{"type": "relation", "from", "to",
"relationType"}``). The server keeps what it is given: names that differ only in case
are two entities, a relation may name an entity that was never created, an observation
may be of any length. So the file is kept in facts, exactly, and the graph is engram's
reading of it:

- each entity is a fact ``"<name> (<entityType>)"``; each observation a fact
  ``"<name>: <observation>"`` (cut into consecutive parts when longer than a fact
  holds, each embedded, so recall finds every part); each relation a fact
  ``"<from> <relationType> <to>"``. Each carries the file's exact words in its metadata
  (:data:`ENTITY_KEY` and the others), by which they go back out;
- each entity whose name the graph can hold becomes a graph entity (origin
  ``imported``) of its type, and each relation between two entities the file or the
  scope holds a graph relation.

Going out, the file's entities in its order with their observations whole, then the
scope's own graph entities (with the facts that name them) that the file did not hold,
then the file's relations and the scope's own. A file the server wrote comes back out
equal as a set of lines. An entity the graph's rules extracted goes out only when some
fact of the scope's own (not the file's) names it. No record is skipped silently: a
bad one is listed with its line and field.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engram.core import limits
from engram.core.errors import InvalidInput
from engram.core.graph.models import Entity, Relation
from engram.core.graph.names import normalise
from engram.core.models import Fact
from engram.core.portability.records import FactRecord, jsonl_lines, objects, pieces
from engram.core.text import check_text

ENTITY_KEY, OBSERVATION_KEY, TYPE_KEY = "mcp_entity", "mcp_observation", "mcp_entity_type"
PART_KEY = "mcp_part"  # [index, count] of an observation cut into parts
FROM_KEY, TO_KEY, RELATION_KEY = "mcp_from", "mcp_to", "mcp_relation"
DEFAULT_TYPE = "entity"  # an engram entity with no type goes out as this
MAX_WORDS = 1000  # a name or type: the server sets no limit; a fact's metadata does
MAX_OBSERVATION = 100_000  # characters: 50 facts or more


@dataclass(frozen=True, slots=True)
class McpEntity:
    name: str
    type: str
    observations: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class McpRelation:
    source: str
    target: str
    type: str
    line: int


@dataclass(slots=True)
class McpGraph:
    entities: list[McpEntity] = field(default_factory=list)
    relations: list[McpRelation] = field(default_factory=list)
    errors: list[tuple[int, str, str]] = field(default_factory=list)

    def facts(self) -> list[FactRecord]:
        """The file as facts, in its order: each entity, then its observations (a long
        one in parts), then each relation. Two records whose words a scope would keep as
        one fact are told apart by a number after the second's."""
        found: list[FactRecord] = []
        seen: dict[str, int] = {}

        def _fact(words: str, metadata: dict[str, Any], line: int) -> FactRecord:
            made = _record(words, metadata, line)
            same = limits.normalize_for_hash(made.content)
            seen[same] = seen.get(same, 0) + 1
            if seen[same] == 1:
                return made
            return _record(
                f"{made.content[: limits.MAX_FACT_CHARS - 12]} ({seen[same]})", metadata, line
            )

        for e in self.entities:
            said = {ENTITY_KEY: e.name, TYPE_KEY: e.type}
            found.append(_fact(f"{e.name} ({e.type})", said, e.line))
            for text in e.observations:
                cut = pieces(text, limits.MAX_FACT_CHARS - len(e.name) - 2)
                for n, (piece, gap) in enumerate(cut):
                    meta: dict[str, Any] = {ENTITY_KEY: e.name, OBSERVATION_KEY: piece + gap}
                    if len(cut) > 1:
                        meta[PART_KEY] = [n, len(cut)]
                    found.append(_fact(f"{e.name}: {piece}", meta, e.line))
        for r in self.relations:
            said = {FROM_KEY: r.source, TO_KEY: r.target, RELATION_KEY: r.type}
            found.append(_fact(f"{r.source} {r.type} {r.target}", said, r.line))
        return found


def _record(words: str, metadata: dict[str, Any], line: int) -> FactRecord:
    """A fact of the file's words: stripped and cut as a fact holds them (the metadata
    keeps them exact); words of nothing but space are named by what they belong to."""
    content = words.strip()[: limits.MAX_FACT_CHARS] or json.dumps(metadata)[:64]
    return FactRecord(id=None, content=content, metadata=metadata, line=line)


def parse(text: str) -> McpGraph:
    graph = McpGraph()
    for number, obj in objects(jsonl_lines(text), graph.errors):
        if obj.get("type") == "entity":
            _entity(obj, number, graph)
        elif obj.get("type") == "relation":
            _relation(obj, number, graph)
        else:
            kind = obj.get("type")
            graph.errors.append((number, "type", f"must be entity or relation: {kind!r}"))
    return graph


def _entity(obj: dict[str, Any], line: int, graph: McpGraph) -> None:
    before = len(graph.errors)
    name = _words(obj.get("name"), "name", line, graph)
    kind = _words(obj.get("entityType"), "entityType", line, graph)
    found = obj.get("observations", [])
    if not isinstance(found, list):
        graph.errors.append((line, "observations", "must be a list of strings"))
        return
    observations = []
    for text in found:
        checked = _words(text, "observations", line, graph, most=MAX_OBSERVATION)
        if checked is not None:
            observations.append(checked)
    if len(graph.errors) == before and name is not None and kind is not None:
        graph.entities.append(McpEntity(name, kind, tuple(observations), line))


def _relation(obj: dict[str, Any], line: int, graph: McpGraph) -> None:
    before = len(graph.errors)
    source = _words(obj.get("from"), "from", line, graph)
    target = _words(obj.get("to"), "to", line, graph)
    kind = _words(obj.get("relationType"), "relationType", line, graph)
    if source is None or target is None or kind is None or len(graph.errors) > before:
        return
    graph.relations.append(McpRelation(source, target, kind, line))


def _words(
    value: object, name: str, line: int, graph: McpGraph, *, most: int = MAX_WORDS
) -> str | None:
    """The file's words as they are (any text the server keeps, but NUL, which no
    store's text holds), or None with the problem listed."""
    try:
        return check_text(value, name, max_chars=most, empty=True)
    except InvalidInput as exc:
        graph.errors.append((line, name, exc.message))
        return None


# -- going out ---------------------------------------------------------------------------
def lines(
    entities: Sequence[Entity],
    relations: Sequence[Relation],
    facts: Sequence[Fact],
    naming: dict[str, list[str]],
) -> Iterator[str]:
    """The JSONL lines: the file's entities and the scope's own, then the file's
    relations and the scope's own. ``facts`` are the scope's, oldest first; ``naming``
    holds, by entity id, the ids of the facts that name it."""
    said: dict[str, str] = {}  # the file's entities: name → type, in its order
    observed: dict[str, list[str]] = defaultdict(list)
    parted: list[str] = []  # the parts of the observation being put back together
    related: list[tuple[str, str, str]] = []
    own = [f for f in facts if not _from_file(f)]
    for fact in facts:
        meta = fact.metadata
        if isinstance(meta.get(TYPE_KEY), str) and isinstance(meta.get(ENTITY_KEY), str):
            said.setdefault(meta[ENTITY_KEY], meta[TYPE_KEY])
        elif isinstance(meta.get(OBSERVATION_KEY), str) and isinstance(meta.get(ENTITY_KEY), str):
            parted.append(meta[OBSERVATION_KEY])
            part = meta.get(PART_KEY)
            if not isinstance(part, list) or part[0] == part[1] - 1:
                observed[meta[ENTITY_KEY]].append("".join(parted))
                parted = []
        elif all(isinstance(meta.get(k), str) for k in (FROM_KEY, TO_KEY, RELATION_KEY)):
            related.append((meta[FROM_KEY], meta[TO_KEY], meta[RELATION_KEY]))
    first = {normalise(name): name for name in reversed(list(said))}
    by_id = {f.id: f for f in own}
    names = {e.id: e.name for e in entities}
    theirs: list[tuple[str, str, list[str]]] = []
    for entity in entities:
        mentioned = [by_id[i].content for i in naming.get(entity.id, []) if i in by_id]
        holder = first.get(entity.norm)
        if holder is not None:  # the file's: the scope's own words about it join it
            observed[holder].extend(mentioned)
        elif entity.origin != "extracted" or mentioned:  # a name only the file's facts hold
            theirs.append((entity.name, entity.type or DEFAULT_TYPE, mentioned))
    for name, kind in said.items():
        yield _line(name, kind, observed.get(name, []))
    for name, kind, mentioned in theirs:
        yield _line(name, kind, mentioned)
    kept = set(related)
    for source, target, kind in related:
        yield _relation_line(source, target, kind)
    covered = {(normalise(s), normalise(t), k) for s, t, k in kept}
    for relation in relations:
        source = names.get(relation.source, relation.source)
        target = names.get(relation.target, relation.target)
        key = (normalise(source), normalise(target), relation.type)
        if relation.expired_at is None and key not in covered:
            covered.add(key)
            yield _relation_line(source, target, relation.type)


def _from_file(fact: Fact) -> bool:
    return ENTITY_KEY in fact.metadata or RELATION_KEY in fact.metadata


def _line(name: str, kind: str, observations: list[str]) -> str:
    record = {
        "type": "entity",
        "name": name,
        "entityType": kind,
        "observations": list(dict.fromkeys(observations)),
    }
    return _written(record)


def _relation_line(source: str, target: str, kind: str) -> str:
    return _written({"type": "relation", "from": source, "to": target, "relationType": kind})


def _written(record: dict[str, Any]) -> str:
    """A line as the server writes one (``JSON.stringify``: no spaces, no escapes of
    what UTF-8 holds)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
