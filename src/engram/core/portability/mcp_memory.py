"""The MCP reference memory server's knowledge graph (its JSONL file), in and out.

Each line of that file is an entity (``{"type": "entity", "name", "entityType",
"observations": [...]}``) or a relation (``{"type": "relation", "from", "to",
"relationType"}``). Coming in, an entity becomes a graph entity (origin ``imported``)
of that type; each observation a fact ``"<name>: <observation>"`` (so recall finds it by
the name too, and the graph's rules link it to the entity), carrying
``{"mcp_entity", "mcp_observation"}`` in its metadata; a relation a graph relation
between the two entities, which the file or the scope must hold. Going out, the scope's
entities with their observations (an imported fact's observation as it came; another
fact naming the entity, its words) and its live relations, so a file that came in goes
out equal as a set of lines. An entity the graph's rules extracted goes out only when
some fact of the scope's own (not an imported observation) names it. No record is
skipped silently: a bad one is listed with its line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engram.core import limits
from engram.core.errors import EngramError
from engram.core.graph import models as graph_models
from engram.core.graph.models import Entity, Relation
from engram.core.models import Fact
from engram.core.portability.records import FactRecord, objects

ENTITY_KEY, OBSERVATION_KEY = "mcp_entity", "mcp_observation"
DEFAULT_TYPE = "entity"  # an engram entity with no type goes out as this


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
        """One fact per observation, in the file's order."""
        return [
            FactRecord(
                id=None,
                content=_words(e.name, text),
                metadata={ENTITY_KEY: e.name, OBSERVATION_KEY: text},
                line=e.line,
            )
            for e in self.entities
            for text in e.observations
        ]


def parse(text: str) -> McpGraph:
    graph = McpGraph()
    for number, obj in objects(text.splitlines(), graph.errors):
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
    name = _checked(obj.get("name"), "name", graph_models.check_name, line, graph)
    kind = _checked(obj.get("entityType"), "entityType", graph_models.check_type, line, graph)
    found = obj.get("observations", [])
    if not isinstance(found, list):
        graph.errors.append((line, "observations", "must be a list of strings"))
        return
    observations = []
    for text in found:
        checked = _checked(text, "observations", _observation, line, graph)
        if checked is not None:
            observations.append(checked)
    if len(graph.errors) == before and name is not None and kind is not None:
        graph.entities.append(McpEntity(name, kind, tuple(observations), line))


def _relation(obj: dict[str, Any], line: int, graph: McpGraph) -> None:
    before = len(graph.errors)
    source = _checked(obj.get("from"), "from", graph_models.check_name, line, graph)
    target = _checked(obj.get("to"), "to", graph_models.check_name, line, graph)
    kind = _checked(obj.get("relationType"), "relationType", graph_models.check_type, line, graph)
    if len(graph.errors) == before and source and target and kind:
        graph.relations.append(McpRelation(source, target, kind, line))


def _observation(value: object) -> str:
    return limits.check_content(value, name="an observation")


def _checked(value: object, name: str, check: Any, line: int, graph: McpGraph) -> Any:
    try:
        return check(value)
    except EngramError as exc:
        graph.errors.append((line, name, exc.message))
        return None


def _words(name: str, observation: str) -> str:
    return f"{name}: {observation}"[: limits.MAX_FACT_CHARS]


# -- going out ---------------------------------------------------------------------------
def lines(
    entities: Sequence[Entity],
    relations: Sequence[Relation],
    facts: Sequence[Fact],
    naming: dict[str, list[str]],
) -> Iterator[str]:
    """The JSONL lines: each entity with its observations, then each live relation.
    ``naming`` holds, by entity id, the ids of the facts that name it."""
    by_id = {f.id: f for f in facts}
    imported: dict[str, list[str]] = defaultdict(list)
    for fact in facts:
        owner = fact.metadata.get(ENTITY_KEY)
        if isinstance(owner, str):
            said = fact.metadata.get(OBSERVATION_KEY)
            imported[owner].append(said if isinstance(said, str) else fact.content)
    names = {e.id: e.name for e in entities}
    for entity in entities:
        observations = list(imported.get(entity.name, []))
        for fact_id in naming.get(entity.id, []):
            naming_fact = by_id.get(fact_id)
            if naming_fact is not None and ENTITY_KEY not in naming_fact.metadata:
                observations.append(naming_fact.content)
        if entity.origin == "extracted" and not observations:
            continue  # a name the rules found in imported observations: not the file's
        record = {
            "type": "entity",
            "name": entity.name,
            "entityType": entity.type or DEFAULT_TYPE,
            "observations": list(dict.fromkeys(observations)),
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"
    for relation in relations:
        if relation.expired_at is not None:
            continue
        record = {
            "type": "relation",
            "from": names.get(relation.source, relation.source),
            "to": names.get(relation.target, relation.target),
            "relationType": relation.type,
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"
