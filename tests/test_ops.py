"""Each operation is declared once (engram.core.ops) and every surface is built from the
declaration: the library's Memory.run, the HTTP route and its schema, engram.Client, the
command line and the agent tools. These tests hold the surfaces to the declarations."""

from __future__ import annotations

import argparse
import base64
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import engram
from engram.api import create_app
from engram.api.declared import AGENTS, DECLARED, PEOPLE
from engram.cli.main import READING, build_parser
from engram.client import GraphClient, SessionsClient, UsageClient, WorkingClient
from engram.core import ops, tools
from engram.core.errors import InvalidInput
from engram.core.fields import Items, Real, Text, Whole
from engram.core.graph import ops as graph_ops
from engram.mcp import catalogue
from engram.wire.ops import Where, answer, carried, naming, sent
from stores import Target, rows

EARLIER, LATER = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 2, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The service's OpenAPI schema."""
    store = tmp_path_factory.mktemp("schema") / "engram.db"
    with engram.open(store, embedder=None) as memory:
        return create_app(memory_store=memory).openapi()


def _commands(
    parser: argparse.ArgumentParser | None = None, within: str = ""
) -> dict[str, argparse.ArgumentParser]:
    """Every command by its full name (``graph entity add``), nested ones too."""
    parser = parser or build_parser()
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, inner in action.choices.items():
                full = f"{within} {name}".strip()
                found[full] = inner
                found |= _commands(inner, full)
    return found


def test_every_operation_is_offered_on_every_surface(
    published: dict[str, Any], tmp_path: Path
) -> None:
    paths = published["paths"]
    commands = _commands()
    with engram.open(tmp_path / "tools.db", embedder=None) as mem:  # what MCP offers too
        mcp = catalogue.agent(mem, engram.ResourceRef("tools"))
    offered = {t.name: t for t in [*tools.create(tools._Nowhere(), reflect=True), *mcp]}
    for op in DECLARED:
        surface = op.surface
        for mount in (AGENTS, PEOPLE):
            path = mount.prefix + surface.path
            assert (surface.method.lower() in paths.get(path, {})) is mount.offers(op), (op, path)
        by_tag = {"graph": GraphClient, "feedback": UsageClient, ops.WORKING: WorkingClient}
        client = by_tag.get(op.surface.tag, engram.Client)
        client = SessionsClient if op is ops.StartSession else client
        assert callable(getattr(client, ops.name_of(op))), op  # the Client's method
        if surface.cli is not None:
            assert surface.cli in commands, op
            assert (surface.cli in READING) is not surface.writes, op
        if surface.tool is not None:
            assert offered[surface.tool].writes is surface.writes, op


def test_the_published_bounds_are_the_declared_ones(published: dict[str, Any]) -> None:
    """Every marker's bound is in the published schema of its parameter, on every mount."""
    for op, mount in ((op, m) for op in DECLARED for m in (AGENTS, PEOPLE) if m.offers(op)):
        item = published["paths"][mount.prefix + op.surface.path][op.surface.method.lower()]
        said = item.get("x-order", [])  # times in order: what JSON Schema cannot compare
        assert len(said) == len(op.order), op
        for field in carried(op):
            named = naming(op, people=mount.people)(field)
            schema = _parameter_schema(published, item, named, op.__name__)
            marker = field.marker
            if isinstance(marker, Text):
                assert schema["maxLength"] == marker.max_chars, (op, field.name)
                assert "pattern" in schema, (op, field.name)
            elif isinstance(marker, Whole | Real):
                assert (schema["minimum"], schema["maximum"]) == (marker.low, marker.high)
            elif isinstance(marker, Items):
                assert schema["maxItems"] == marker.high, (op, field.name)
                assert schema.get("uniqueItems", False) is marker.distinct or marker.low > 1


def _parameter_schema(published: dict[str, Any], item: dict[str, Any], name: str, op: str) -> Any:
    for parameter in item.get("parameters", []):
        if parameter["name"] == name:
            return parameter["schema"]
    body_schema = item["requestBody"]["content"]["application/json"]["schema"]
    if "anyOf" in body_schema:  # an optional body
        body_schema = next(o for o in body_schema["anyOf"] if "$ref" in o)
    if "oneOf" in body_schema:  # one of several operations' bodies
        body_schema = next(o for o in body_schema["oneOf"] if o["$ref"].endswith(f"/{op}Body"))
    ref = body_schema["$ref"]
    body = published["components"]["schemas"][ref.rsplit("/", 1)[1]]
    found = body["properties"][name]
    if "anyOf" in found:
        found = next(option for option in found["anyOf"] if option.get("type") != "null")
    return found


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda: ops.Remember("x" * 2001), "content"),
        (lambda: ops.Remember("x", tags=["t"] * 33), "tags"),
        (lambda: ops.Remember("x", strength=10.5), "strength"),
        (lambda: ops.Recall("x", top_k=101), "top_k"),
        (lambda: ops.Recall("x", mode="fuzzy"), "mode"),  # type: ignore[arg-type]
        (lambda: ops.Facts(limit=0), "limit"),
        (lambda: ops.Merge(["f_1"], "x"), "fact_ids"),
        (lambda: ops.ForgetAll(-1), "expected_count"),
        (lambda: ops.Forget("f\x00"), "fact id"),
        (lambda: ops.Compact(max_age_ms=-1), "max_age_ms"),
        (lambda: ops.DetectFeedback(["f_1", "f_1"], "x"), "'f_1' twice"),  # [n] counts places
        (lambda: ops.Consolidate(["tidy"]), "step"),
        (lambda: graph_ops.Relate("A", "t", "B", valid_at=LATER, invalid_at=EARLIER), "valid_at"),
        (lambda: graph_ops.DeclareRelationType("x" * 129, True), "relation_type"),
    ],
)
def test_one_past_a_bound_is_refused_when_the_operation_is_made(
    make: Callable[[], object], named: str
) -> None:
    with pytest.raises(InvalidInput, match=named):
        make()


def test_an_operation_is_checked_once_and_keeps_what_it_checked() -> None:
    note = ops.Remember("  words  ", tags=["b", "a", "b"], context="   ")
    assert (note.content, note.tags, note.context) == ("words", ("a", "b"), None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.content = "other"  # type: ignore[misc]


def _samples(mem: engram.Memory, ref: engram.ResourceRef) -> dict[type, Callable[[], Any]]:
    """One call of each operation, on a scope with facts to act on."""
    first, second, third, fourth = (
        mem.remember(ref, words).id
        for words in ("Ana lives in Lisbon", "Ana moved to Lisbon", "the deploy", "a spare")
    )
    mem.forget(ref, fourth)
    doc = mem.ingest_text(ref, "# Trip\n\nAna flies to Porto.", name="trip.md").document_id
    assert doc is not None
    return {
        ops.Remember: lambda: ops.Remember("Bo reads at night"),
        ops.Facts: lambda: ops.Facts(limit=2),
        ops.Recall: lambda: ops.Recall("Ana", mode="text"),
        ops.GetFact: lambda: ops.GetFact(first),
        ops.FactProvenance: lambda: ops.FactProvenance(first),
        ops.DetectFeedback: lambda: ops.DetectFeedback([first], "Ana lives in Lisbon [1]"),
        ops.RecordFeedback: lambda: ops.RecordFeedback(first, "used"),
        ops.FactFeedback: lambda: ops.FactFeedback(first),
        ops.Consolidate: lambda: ops.Consolidate(["strengthen"]),  # the signal just recorded
        ops.CompileWiki: lambda: ops.CompileWiki(),
        ops.StartSession: lambda: ops.StartSession("s-ops", "a session"),
        ops.EpisodicRecall: lambda: ops.EpisodicRecall(branch="lineage"),
        ops.EpisodicTree: lambda: ops.EpisodicTree(),
        ops.Health: lambda: ops.Health(graph_drift=True),
        ops.WorkingSet: lambda: ops.WorkingSet("plan", {"step": 1}, expected_version=0),
        ops.WorkingGet: lambda: ops.WorkingGet("plan"),
        ops.WorkingList: lambda: ops.WorkingList(limit=5),
        ops.WorkingDelete: lambda: ops.WorkingDelete("plan"),
        ops.Correct: lambda: ops.Correct(third, "the deploy runs weekly"),
        ops.Merge: lambda: ops.Merge([first, second], "Ana lives in Lisbon now"),
        ops.Forget: lambda: ops.Forget(third),
        ops.Restore: lambda: ops.Restore(fourth),
        ops.Compact: lambda: ops.Compact(max_facts=1),
        ops.Trash: lambda: ops.Trash(limit=5),
        ops.Ledger: lambda: ops.Ledger(limit=5),
        ops.History: lambda: ops.History(first),
        ops.LedgerChanges: lambda: ops.LedgerChanges(mem.ledger(ref, limit=1).entries[0].seq),
        ops.Revert: lambda: ops.Revert(mem.ledger(ref, limit=1).entries[0].seq),
        ops.Documents: lambda: ops.Documents(limit=5),
        ops.GetDocument: lambda: ops.GetDocument(doc),
        ops.ForgetDocument: lambda: ops.ForgetDocument(doc),
        ops.ForgetAll: lambda: ops.ForgetAll(mem.count(ref)),
        **_graph_samples(mem, ref),
        ops.DeleteTraces: lambda: ops.DeleteTraces([second, third]),  # trashed by now
        ops.DeleteScope: lambda: ops.DeleteScope(True, _live_and_trashed(mem, ref)),
    }


def _live_and_trashed(mem: engram.Memory, ref: engram.ResourceRef) -> int:
    return mem.count(ref) + len(mem.trash(ref).facts)


def _graph_samples(mem: engram.Memory, ref: engram.ResourceRef) -> dict[type, Callable[[], Any]]:
    for name in ("Ana", "Lisbon", "Porto"):
        mem.graph.upsert_entity(ref, name)
    lives = mem.graph.upsert_relation(ref, "Ana", "Lisbon", "lives_in").id
    return {
        graph_ops.UpsertEntity: lambda: graph_ops.UpsertEntity("Bo", type="person"),
        graph_ops.SearchEntities: lambda: graph_ops.SearchEntities("Ana", mode="text"),
        graph_ops.GetEntity: lambda: graph_ops.GetEntity("Ana"),
        graph_ops.DeleteEntity: lambda: graph_ops.DeleteEntity("Porto"),
        graph_ops.DeclareRelationType: lambda: graph_ops.DeclareRelationType("visits", True),
        graph_ops.Relate: lambda: graph_ops.Relate("Ana", "knows", "Bo"),
        graph_ops.Relations: lambda: graph_ops.Relations(entity="Ana"),
        graph_ops.EndRelation: lambda: graph_ops.EndRelation(lives),
        graph_ops.Neighbourhood: lambda: graph_ops.Neighbourhood("Ana", depth=2),
        graph_ops.Traverse: lambda: graph_ops.Traverse("Ana"),
        graph_ops.Extract: lambda: graph_ops.Extract(),
    }


def test_an_operation_writes_exactly_when_it_declares(target: Target) -> None:
    """A writing operation adds one ledger entry (each sample changes something); a
    reading one adds none. Episodes are not in the ledger (a session's entries are its
    own record): starting a session adds a session instead."""
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        ref = engram.ResourceRef("ops")
        samples = _samples(mem, ref)
        assert set(samples) == set(DECLARED), "an operation without a sample here"
        for op, make in samples.items():
            table = "sessions" if op is ops.StartSession else "ledger"
            before = _rows(target, table)
            mem.run(ref, make())
            added = _rows(target, table) - before
            assert added == (1 if op.surface.writes else 0), (op, added)


def test_every_answer_reads_back_as_the_model_its_schema_names(mem: engram.Memory) -> None:
    """What the service sends for each operation is what ``Client.answer`` reads into
    the answer's model: the same answer again, field for field."""
    ref = engram.ResourceRef("typed")
    where = Where("typed", ref, semantic=True)
    for op, make in _samples(mem, ref).items():
        made = make()
        built = answer(op).of(made, mem.run(ref, made), where)
        model = answer(op).model
        if built is None or model is None:
            assert model is None and built is None, op
            continue
        assert model.model_validate(sent(built)) == built, op


def _rows(target: Target, table: str) -> int:
    return int(rows(target, f"SELECT count(*) FROM {table}")[0][0])


def test_a_cursor_of_an_older_version_still_pages(mem: engram.Memory) -> None:
    ref = engram.ResourceRef("pages")
    for n in range(3):
        mem.remember(ref, f"fact number {n}")
    page = mem.facts(ref, limit=1)
    assert page.next_before is not None and page.next_before.count(".") == 1
    older = base64.urlsafe_b64encode(page.next_before.encode()).decode().rstrip("=")
    assert mem.facts(ref, limit=1, before=older) == mem.facts(ref, limit=1, before=page.next_before)
    with pytest.raises(InvalidInput, match="not a cursor"):
        mem.facts(ref, before="not-a-cursor")
    for fact in mem.facts(ref).facts:
        mem.forget(ref, fact.id)
    trashed = mem.trash(ref, limit=1)
    assert trashed.next_before is not None and trashed.next_before.count(".") >= 1
    old_trash = base64.urlsafe_b64encode(trashed.next_before.encode()).decode().rstrip("=")
    assert mem.trash(ref, limit=1, before=old_trash) == mem.trash(
        ref, limit=1, before=trashed.next_before
    )
