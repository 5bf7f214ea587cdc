"""Every write is recorded, and no path can skip it.

Three enumerations, each found by introspection, so a write path added later without a
ledger entry (or without a line here) fails:
- every public method of the library's write surfaces (Memory, working memory, agents,
  allowances, an application's memory of people): each write adds exactly one entry,
  naming the writer the library was told (``acting``);
- every POST/PUT/PATCH/DELETE route of the service: one entry, through ``http``, naming
  the caller its token verified (never a body field);
- every command of the command line that writes: one entry, through ``cli``;
and the storage seam itself: each row write on the port, called without a ledger entry,
is refused.

Sessions are the episodic record, a log of their own kept apart from the write ledger
(their appends are not ledger entries); they are listed apart here.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
from engram import PersonAppRef, ResourceRef, Turn
from engram.api.app import create_app
from engram.cli.main import _user as cli_user
from engram.cli.main import build_parser, main
from engram.core import ops, ports
from engram.core.agents import Agents
from engram.core.clock import now_us
from engram.core.documents.models import Document
from engram.core.errors import StorageFailure
from engram.core.graph.graph import Graph
from engram.core.graph.models import Entity, FactReading, Mention, Relation
from engram.core.memory import Memory
from engram.core.people import AppMemory
from engram.core.ports import NewFact
from engram.core.sharing import Share, Sharing
from engram.core.usage import Feedback, Usage
from engram.core.wiki import Wiki
from engram.core.working import WorkingMemory
from engram.settings import Settings
from stores import Target, rows

REF = ResourceRef("writer")
OTHER = ResourceRef("other")

# What only reads (or configures a view): everything else public is a write.
READS = {
    Memory: {
        "acting",
        "close",
        "count",
        "create_tools",  # the tools' calls are the writes below
        "episodic_recall",
        "episodic_tree",
        "fact",
        "facts",
        "health",
        "history",
        "ledger",
        "ledger_changes",
        "recall",
        "scope_of",
        "scopes",
        "vectors",
        "source",
        "document",
        "documents",
        "provenance",
        "export",  # writes a file (or a new store), not this memory
        "export_string",
        "trash",
        "writer",
        "embedder",
    },
    WorkingMemory: {"entry", "get", "list", "scopes"},
    Agents: {"get", "list"},
    Sharing: {"shares", "sources_for"},
    AppMemory: {"listing", "recall", "require_semantic", "scope"},
    Graph: {"entity", "model_extractors", "neighbourhood", "relations", "search", "traverse"},
    Usage: {"signals"},
    Wiki: {"attach"},  # where pages are mirrored to, in this process: not the memory
}


def _entries(target: Target) -> list[tuple[int, str, str, str]]:
    return [
        (int(seq), str(op), str(actor), str(via))
        for seq, op, actor, via in rows(
            target, "SELECT seq, op, actor, via FROM ledger ORDER BY seq"
        )
    ]


def _one_new_entry(target: Target, before: list[Any], actor: str, via: str) -> str:
    after = _entries(target)
    new = after[len(before) :]
    assert len(new) == 1, new
    _, op, who, through = new[0]
    assert (who, through) == (actor, via), new[0]
    return op


# -- the library ------------------------------------------------------------------------
def _library_writes(mem: Memory) -> dict[str, Callable[[], object]]:
    """One call per write method, each changing something."""
    fact = mem.remember(REF, "the plan is pro")
    other = mem.remember(REF, "the trip is in May")
    may, travel = mem.remember_many(REF, ["the trip is in spring", "we travel in May"])
    gone = mem.remember(REF, "the old door code")
    mem.forget(REF, gone.id)
    agent = mem.agents.register("parent")
    app = AppMemory(mem, "app:notes")
    kept = app.remember("ana", "ana likes tea")
    mem.working.set(REF, "doomed", 1)
    mem.working.set(REF, "fleeting", 1, ttl=timedelta(microseconds=1))  # expired by the sweep
    mem.remember(REF, "an old fact", created_at=_days_ago(400))
    mem.sharing.allow("ana", "app:notes", "app:mail")
    for name in ("Ana", "Bo", "Cy", "Doomed"):
        mem.graph.upsert_entity(REF, name)
    ending = mem.graph.upsert_relation(REF, "Ana", "Bo", "knows")
    dropped = mem.graph.upsert_relation(REF, "Bo", "Cy", "knows")
    read = mem.remember(REF, "Ana reads in Lisbon")
    mem.usage.record(REF, read.id, "used")  # for consolidation to apply
    doomed = mem.ingest_text(REF, "# Doomed\n\nA document to forget.", name="doomed.md")
    return {
        "Memory.ingest": lambda: mem.ingest(REF, _notes_dir()),
        "Memory.ingest_text": lambda: mem.ingest_text(REF, "# Notes\n\nSome words.", name="n.md"),
        "Memory.forget_document": lambda: mem.forget_document(REF, doomed.document_id or ""),
        "Memory.remember": lambda: mem.remember(REF, "a new fact"),
        "Memory.remember_many": lambda: mem.remember_many(REF, ["one more", "and another"]),
        "Memory.remember_conversation": lambda: mem.remember_conversation(
            REF, [Turn("Ana", "been to Lisbon?"), Turn("Bo", "twice")]
        ),
        "Memory.correct": lambda: mem.correct(REF, fact.id, "the plan is team"),
        "Memory.forget": lambda: mem.forget(REF, other.id),
        "Memory.forget_all": lambda: mem.forget_all(OTHER_SEEDED, expected_count=1),
        "Memory.restore": lambda: mem.restore(REF, gone.id),
        "Memory.delete_traces": lambda: mem.delete_traces(REF, [fact.id]),
        "Memory.delete_scope": lambda: mem.delete_scope(DELETED_SEEDED),
        "Memory.compact": lambda: mem.compact(REF, max_age=timedelta(days=365)),
        "Memory.fork": lambda: mem.fork(REF, "fork-child"),
        "Memory.revert": lambda: mem.revert(REF, mem.ledger(REF, limit=1).entries[0].seq),
        "Memory.consolidate": lambda: mem.consolidate(REF, steps=["strengthen"]),
        "Memory.import_string": lambda: mem.import_string(REF, '[{"content": "imported"}]'),
        "Memory.import_file": lambda: mem.import_file(REF, _records_file()),
        "Wiki.compile": lambda: mem.wiki.compile(REF),  # one batch: one entry
        "Memory.merge": lambda: mem.merge(REF, [may.id, travel.id], "the trip is in late May"),
        "Memory.run": lambda: mem.run(REF, ops.Remember("run through its declaration")),
        "WorkingMemory.set": lambda: mem.working.set(REF, "plan", {"tier": "pro"}),
        "WorkingMemory.delete": lambda: mem.working.delete(REF, "doomed"),
        "WorkingMemory.sweep": lambda: mem.working.sweep(REF),
        "Agents.register": lambda: mem.agents.register("another"),
        "Agents.spawn": lambda: mem.agents.spawn(agent.id, "child"),
        "Agents.end": lambda: mem.agents.end(agent.id),
        "Sharing.allow": lambda: mem.sharing.allow("ana", "app:notes", "app:calendar"),
        "Sharing.stop": lambda: mem.sharing.stop("ana", "app:notes", "app:mail"),
        "AppMemory.remember": lambda: app.remember("ana", "ana walks daily"),
        "AppMemory.correct": lambda: app.correct("ana", kept.id, "ana likes green tea", by="ana"),
        "AppMemory.forget": lambda: app.forget("ana", kept.id),
        "AppMemory.forget_all": lambda: app.forget_all("bo", count=1),
        "Graph.upsert_entity": lambda: mem.graph.upsert_entity(REF, "Eve", type="person"),
        "Graph.delete_entity": lambda: mem.graph.delete_entity(REF, "Doomed"),
        "Graph.declare_relation_type": lambda: mem.graph.declare_relation_type(
            REF, "lives_in", single_valued=True
        ),
        "Graph.upsert_relation": lambda: mem.graph.upsert_relation(REF, "Ana", "Cy", "knows"),
        "Graph.expire_relation": lambda: mem.graph.expire_relation(REF, ending.id),
        "Graph.delete_relation": lambda: mem.graph.delete_relation(REF, dropped.id),
        "Graph.extract": lambda: mem.graph.extract(REF),
        "Usage.record": lambda: mem.usage.record(REF, read.id, "used"),
        "Usage.detect": lambda: mem.usage.detect(REF, [read.id], "Ana reads in Lisbon."),
    }


OTHER_SEEDED = ResourceRef("seeded")
DELETED_SEEDED = ResourceRef("deleted")


def _notes_dir() -> Path:
    """A directory of one Markdown file, in the test's own working directory."""
    folder = Path("notes").resolve()
    folder.mkdir(exist_ok=True)
    (folder / "walk.md").write_text("# Walk\n\nA file in a directory.\n")
    return folder


def _records_file() -> Path:
    """A CSV of one record, in the test's own working directory."""
    path = Path("records.csv").resolve()
    path.write_text("content\nimported from a file\n")
    return path


def _days_ago(days: int) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


def test_every_library_write_adds_one_entry_naming_its_writer(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as plain:
        plain.remember(OTHER_SEEDED, "seeded fact")
        plain.remember(DELETED_SEEDED, "a fact to delete")
        AppMemory(plain, "app:notes").remember("bo", "bo's only memory")
        mem = plain.acting(actor="tester", via="tool", request_id="r-1")
        writes = _library_writes(mem)
        surfaces = {"Memory": Memory, "WorkingMemory": WorkingMemory, "Agents": Agents}
        surfaces |= {"Sharing": Sharing, "AppMemory": AppMemory, "Graph": Graph, "Usage": Usage}
        surfaces |= {"Wiki": Wiki}
        found = {
            f"{name}.{method}"
            for name, cls in surfaces.items()
            for method, _ in inspect.getmembers(cls, callable)
            if not method.startswith("_") and method not in READS[cls]
        }
        assert found == set(writes), "a write method without a check here (or a stale one)"
        for write in writes.values():
            before = _entries(target)
            write()
            _one_new_entry(target, before, "tester", "tool")
        request_ids = rows(target, "SELECT DISTINCT request_id FROM ledger WHERE actor = 'tester'")
        assert request_ids == [("r-1",)]


def test_a_write_that_changes_nothing_adds_no_entry(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        fact = mem.remember(REF, "the plan is pro")
        before = _entries(target)
        mem.remember(REF, "the plan is pro")  # a duplicate
        assert mem.forget(REF, "f_unknown") is False
        assert mem.working.delete(REF, "never-set") is False
        mem.sharing.allow("ana", "app:a", "app:b")
        mem.sharing.allow("ana", "app:a", "app:b")  # allowed already
        with pytest.raises(engram.Conflict):
            mem.forget_all(REF, expected_count=0)
        with pytest.raises(engram.NotFound):
            mem.correct(REF, "f_unknown", "x")
        assert len(_entries(target)) == len(before) + 1  # the first allow alone
        assert mem.fact(REF, fact.id).content == "the plan is pro"


# -- the storage seam -------------------------------------------------------------------
# Row methods that only read, lock, or are no write to memory (re-embedding replaces
# every vector of the store in place; the model record; the episodic log).
ROW_READS = {
    "get",
    "expired",
    "scopes",
    "by_ids",
    "by_hashes",
    "strengths",
    "page",
    "count",
    "any",
    "scope_of",
    "taken",
    "words",
    "vector_of",
    "near_pairs",
    "changes",
    "mentioning",
    "by_source",
    "trashed_by_source",
    "departed",
    "gone",
    "wiki_listing",
    "wiki_texts",
    "wiki_trash",
    "holding",
    "traits",
    "vectors",
    "ids",
    "created_before",
    "oldest",
    "trashed",
    "trash_page",
    "trash_ids",
    "trash_expired",
    "trash_count",
    "texts_after",
    "count_after",
    "weak",
    "vector_from_bytes",
    "scope_keys",
    "entity_ids",
    "without_vector",
    "fulltext_sound",  # FTS5's check is an INSERT that writes nothing
    "pending",
    "applied",
    "live_count",
    "raw",
    "claim",
    "listed",
    "entities",
    "named",
    "mentions",
    "relation_type",
    "relations",
    "named_like",
    "groundings",
    "queued",
    "unread",
    "of_fact",
    "list",
    "naming",
    "provenance",
}
# dequeue, forget_gone and settled: the graph's reading queues and the derived copies'
ROW_EXEMPT = {"replace_vectors", "dequeue", "forget_gone", "settled"}


def _row_writes(store: Any) -> dict[str, Callable[[Any], object]]:
    import numpy as np

    from engram.core.agents import Agent
    from engram.core.clock import from_us
    from engram.core.models import Fact

    now = now_us()
    fact = Fact("f_row", REF, "row words", from_us(now), from_us(now))
    new = NewFact(fact, "ab" * 32, "{}", np.ones(16, np.float32) / 4)
    agent = Agent("a_row", "row", REF, None, from_us(now))
    share = Share("ana", "app:a", "app:b", from_us(now))
    entity = Entity("e_x", "X", "x", None, (), None, {}, "asserted", from_us(now), from_us(now))
    relation = Relation("r_x", "e_x", "e_x", "t", "asserted", None, None, from_us(now), None)
    document = Document(
        "d_x", "x.md", "text/markdown", "X", "h", 1, "markdown:200", {}, *[from_us(now)] * 2
    )
    return {
        "working.put": lambda tx: store.working.put(tx, REF, "k", "1", 1, now, None),
        "working.delete": lambda tx: store.working.delete(tx, REF, "k"),
        "working.copy_scope": lambda tx: store.working.copy_scope(tx, REF, OTHER, now),
        "facts.insert": lambda tx: store.facts.insert(tx, REF, [new]),
        "facts.rewrite": lambda tx: store.facts.rewrite(
            tx, REF, "f_x", "w", "cd" * 32, None, None, None, now
        ),
        "facts.set_context": lambda tx: store.facts.set_context(tx, REF, "f_x", "c", now),
        "facts.set_strength": lambda tx: store.facts.set_strength(tx, REF, "f_x", 0.5),
        "facts.set_trashed_context": lambda tx: store.facts.set_trashed_context(
            tx, REF, "f_x", "c"
        ),
        "facts.add_vectors": lambda tx: store.facts.add_vectors(tx, []),
        "facts.rebuild_fulltext": lambda tx: store.facts.rebuild_fulltext(tx),
        "usage.mark_applied": lambda tx: store.usage.mark_applied(tx, REF, [], True),
        "facts.trash": lambda tx: store.facts.trash(tx, REF, ["f_x"], now),
        "facts.restore": lambda tx: store.facts.restore(tx, REF, "f_x"),
        "facts.erase": lambda tx: store.facts.erase(tx, REF, ["f_x"]),
        "facts.erase_scope": lambda tx: store.facts.erase_scope(tx, REF),
        "facts.copy_scope": lambda tx: store.facts.copy_scope(tx, REF, OTHER, []),
        "agents.insert": lambda tx: store.agents.insert(tx, agent),
        "agents.end": lambda tx: store.agents.end(tx, "a_row", now),
        "shares.put": lambda tx: store.shares.put(tx, share),
        "shares.delete": lambda tx: store.shares.delete(tx, "ana", "app:a", "app:b"),
        "graph.put_entity": lambda tx: store.graph.put_entity(tx, REF, entity, []),
        "graph.delete_entity": lambda tx: store.graph.delete_entity(tx, REF, "e_x"),
        "graph.set_mentions": lambda tx: store.graph.set_mentions(
            tx, REF, [FactReading("f_x", (Mention("f_x", 0, 3, "e_x"),), ("e_x",))]
        ),
        "graph.queue": lambda tx: store.graph.queue(tx, REF, ["f_x"]),
        "graph.ground": lambda tx: store.graph.ground(tx, REF, [("f_x", "e_x")], "llm"),
        "graph.mark_read": lambda tx: store.graph.mark_read(tx, REF, "llm", [("f_x", "ef" * 32)]),
        "graph.put_relation_type": lambda tx: store.graph.put_relation_type(tx, REF, "t", True),
        "graph.put_relation": lambda tx: store.graph.put_relation(tx, REF, relation),
        "graph.delete_relation": lambda tx: store.graph.delete_relation(tx, REF, "r_x"),
        "graph.erase_scope": lambda tx: store.graph.erase_scope(tx, REF),
        "usage.add": lambda tx: store.usage.add(
            tx, REF, [Feedback("u_x", "f_x", "used", None, None, None, from_us(now))]
        ),
        "documents.put": lambda tx: store.documents.put(tx, REF, document),
        "documents.delete": lambda tx: store.documents.delete(tx, REF, "d_x"),
        "documents.unname": lambda tx: store.documents.unname(tx, ["f_x"]),
    }


def test_the_storage_seam_refuses_a_write_outside_a_ledger_entry(target: Target) -> None:
    interfaces = {
        "working": ports.WorkingRows,
        "facts": ports.FactRows,
        "agents": ports.AgentRows,
        "shares": ports.ShareRows,
        "graph": ports.GraphRows,
        "usage": ports.UsageRows,
        "documents": ports.DocumentRows,
    }
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        store = mem._store
        writes = _row_writes(store)
        found = {
            f"{name}.{method}"
            for name, interface in interfaces.items()
            for method, _ in inspect.getmembers(interface, inspect.isfunction)
            if not method.startswith("_") and method not in ROW_READS | ROW_EXEMPT
        }
        assert found == set(writes), "a row write without a check here (or a stale one)"
        for write in writes.values():
            with pytest.raises(StorageFailure, match="outside a ledger entry"):
                store.run(write)
            # and inside an entry, the same call is let through
            store.run(lambda tx, w=write: (store.ledger.begin(tx, REF, "t", mem.writer, 0), w(tx)))


# -- the service -----------------------------------------------------------------------
SECRET = "ledger-secret-0123456789abcdef0123456789"
SERVICE = "ledger-service-token"
EPISODIC = {("POST", "/agents/{agent_id}/sessions"), ("POST", "/sessions/{session_id}/entries")}
# Reads that take a body, so are POSTs: they must add no entry.
READ_POSTS = {
    ("POST", "/agents/{agent_id}/graph/traversals"),
    ("POST", "/api/v1/apps/{app}/graph/traversals"),
}


def _person(uid: str) -> dict[str, str]:
    signed = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}"}


@pytest.fixture
def service(target: Target) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    memory = engram.open(target, embedder=engram.HashingEmbedder(16))
    with TestClient(create_app(settings, memory_store=memory)) as client:
        client.headers["Authorization"] = f"Bearer {SERVICE}"
        yield client


def test_every_write_route_adds_one_entry_naming_the_verified_caller(
    service: TestClient, target: Target
) -> None:
    c = service
    agent = c.post("/agents", json={"name": "a"}).json()["id"]
    spare = c.post("/agents", json={"name": "spare"}).json()["id"]
    base = f"/agents/{agent}"
    f1 = c.post(f"{base}/facts", json={"content": "fact one"}).json()["id"]
    f2 = c.post(f"{base}/facts", json={"content": "fact two"}).json()["id"]
    f3 = c.post(f"{base}/facts", json={"content": "fact three"}).json()["id"]
    read = c.post(f"{base}/facts", json={"content": "Ana reads in Lisbon"}).json()["id"]
    merged = [c.post(f"{base}/facts", json={"content": f"merge me {n}"}).json()["id"] for n in "ab"]
    c.post(f"{base}/feedback/{read}", json={"signal": "used"})  # for consolidation to apply
    c.post(f"{base}/facts", json={"content": "old", "createdAt": "2020-01-01T00:00:00Z"})
    c.delete(f"{base}/facts/{f3}")
    c.put(f"{base}/memory/doomed", json={"value": 1})
    spare_base = f"/agents/{spare}"
    c.post(f"{spare_base}/facts", json={"content": "spare fact"})
    ana = _person("ana")
    m1 = c.post("/api/v1/apps/app:a/memories", json={"memory": "ana one"}, headers=ana).json()
    m2 = c.post("/api/v1/apps/app:a/memories", json={"memory": "ana two"}, headers=ana).json()
    c.post("/api/v1/apps/app:b/memories", json={"memory": "ana in b"}, headers=ana)
    c.post("/api/v1/apps/app:c/memories", json={"memory": "ana in c"}, headers=ana)
    c.put("/api/v1/memory-shares", json={"source": "app:a", "reader": "app:d"}, headers=ana)
    service_actor = "service:" + hashlib.sha256(SERVICE.encode()).hexdigest()[:8]
    graph, people_graph = f"{base}/graph", "/api/v1/apps/app:a/graph"
    for name in ("Ana", "Bo", "Doomed"):
        c.put(f"{graph}/entities", json={"name": name})
        c.put(f"{people_graph}/entities", json={"name": name}, headers=ana)
    knows = {"source": "Ana", "target": "Bo", "type": "knows"}
    ending = c.post(f"{graph}/relations", json=knows).json()["id"]
    dropped = c.post(f"{graph}/relations", json={**knows, "type": "likes"}).json()["id"]
    person_ending = c.post(f"{people_graph}/relations", json=knows, headers=ana).json()["id"]
    doomed_doc = c.post(f"{base}/documents", json={"text": "# D\n\nDoomed.", "name": "d.md"})

    calls: dict[tuple[str, str], Callable[[], Any]] = {
        ("POST", "/agents"): lambda: c.post("/agents", json={"name": "b"}),
        ("POST", "/agents/{agent_id}/spawn"): lambda: c.post(f"{base}/spawn", json={"name": "kid"}),
        ("PUT", "/agents/{agent_id}/memory/{key}"): lambda: c.put(
            f"{base}/memory/plan", json={"value": "pro"}
        ),
        ("DELETE", "/agents/{agent_id}/memory/{key}"): lambda: c.delete(f"{base}/memory/doomed"),
        ("POST", "/agents/{agent_id}/facts"): lambda: c.post(
            f"{base}/facts", json={"content": "fact four"}
        ),
        ("POST", "/agents/{agent_id}/conversations"): lambda: c.post(
            f"{base}/conversations", json={"turns": [{"speaker": "Ana", "text": "hi there"}]}
        ),
        ("PATCH", "/agents/{agent_id}/facts/{fact_id}"): lambda: c.patch(
            f"{base}/facts/{f1}", json={"content": "fact one, corrected"}
        ),
        ("DELETE", "/agents/{agent_id}/facts/{fact_id}"): lambda: c.delete(f"{base}/facts/{f2}"),
        ("POST", "/agents/{agent_id}/merges"): lambda: c.post(
            f"{base}/merges", json={"factIds": merged, "content": "merged, one fact"}
        ),
        ("POST", "/agents/{agent_id}/imports"): lambda: c.post(
            f"{base}/imports",
            content='[{"content": "imported over http"}]',
            headers={"content-type": "application/json"},
        ),
        ("POST", "/agents/{agent_id}/wiki/compilations"): lambda: c.post(
            f"{base}/wiki/compilations", json={}
        ),
        ("POST", "/agents/{agent_id}/consolidations"): lambda: c.post(
            f"{base}/consolidations", json={"steps": ["strengthen"]}
        ),
        ("POST", "/agents/{agent_id}/compactions"): lambda: c.post(
            f"{base}/compactions", json={"maxAgeMs": 86_400_000}
        ),
        ("POST", "/agents/{agent_id}/trash/{fact_id}/restore"): lambda: c.post(
            f"{base}/trash/{f3}/restore"
        ),
        ("POST", "/agents/{agent_id}/ledger/{entry_id}/revert"): lambda: c.post(
            f"{base}/ledger/{_newest(c, base)}/revert"
        ),
        ("POST", "/agents/{agent_id}/deletions"): lambda: c.post(
            f"{base}/deletions", json={"factIds": [f1]}
        ),
        ("DELETE", "/agents/{agent_id}/facts"): lambda: c.delete(
            f"{spare_base}/facts", params={"count": 1}
        ),
        ("POST", "/agents/{agent_id}/end"): lambda: c.post(f"{spare_base}/end"),
        ("POST", "/agents/{agent_id}/feedback"): lambda: c.post(
            f"{base}/feedback", json={"factIds": [read], "response": "Ana reads in Lisbon."}
        ),
        ("POST", "/agents/{agent_id}/feedback/{fact_id}"): lambda: c.post(
            f"{base}/feedback/{read}", json={"signal": "used"}
        ),
        ("POST", "/api/v1/apps/{app}/memories"): lambda: c.post(
            "/api/v1/apps/app:a/memories", json={"memory": "ana three"}, headers=ana
        ),
        ("PATCH", "/api/v1/apps/memories/{app}/{memory_id}"): lambda: c.patch(
            f"/api/v1/apps/memories/app:a/{m1['id']}", json={"memory": "ana one!"}, headers=ana
        ),
        ("DELETE", "/api/v1/apps/memories/{app}/{memory_id}"): lambda: c.delete(
            f"/api/v1/apps/memories/app:a/{m1['id']}", headers=ana
        ),
        ("PATCH", "/api/v1/memories/{memory_id}"): lambda: c.patch(
            f"/api/v1/memories/{m2['id']}", json={"memory": "ana two!"}, headers=ana
        ),
        ("DELETE", "/api/v1/memories/{memory_id}"): lambda: c.delete(
            f"/api/v1/memories/{m2['id']}", headers=ana
        ),
        ("DELETE", "/api/v1/apps/memories/{app}"): lambda: c.delete(
            "/api/v1/apps/memories/app:b", params={"count": 1}, headers=ana
        ),
        ("DELETE", "/api/v1/memories"): lambda: c.delete(
            "/api/v1/memories", params={"agent_id": "app:c", "count": 1}, headers=ana
        ),
        ("PUT", "/api/v1/memory-shares"): lambda: c.put(
            "/api/v1/memory-shares", json={"source": "app:a", "reader": "app:e"}, headers=ana
        ),
        ("DELETE", "/api/v1/memory-shares"): lambda: c.delete(
            "/api/v1/memory-shares", params={"source": "app:a", "reader": "app:d"}, headers=ana
        ),
        ("PUT", "/agents/{agent_id}/graph/entities"): lambda: c.put(
            f"{graph}/entities", json={"name": "Cy", "type": "person"}
        ),
        ("DELETE", "/agents/{agent_id}/graph/entities/{entity}"): lambda: c.delete(
            f"{graph}/entities/Doomed"
        ),
        ("PUT", "/agents/{agent_id}/graph/relation-types/{relation_type}"): lambda: c.put(
            f"{graph}/relation-types/lives_in", json={"singleValued": True}
        ),
        ("POST", "/agents/{agent_id}/graph/relations"): lambda: c.post(
            f"{graph}/relations", json={**knows, "target": "Cy"}
        ),
        ("DELETE", "/agents/{agent_id}/graph/relations/{relation_id}"): lambda: c.delete(
            f"{graph}/relations/{ending}", params={"at": "2024-01-01T00:00:00Z"}
        ),
        ("PUT", "/api/v1/apps/{app}/graph/entities"): lambda: c.put(
            f"{people_graph}/entities", json={"name": "Cy"}, headers=ana
        ),
        ("DELETE", "/api/v1/apps/{app}/graph/entities/{entity}"): lambda: c.delete(
            f"{people_graph}/entities/Doomed", headers=ana
        ),
        ("PUT", "/api/v1/apps/{app}/graph/relation-types/{relation_type}"): lambda: c.put(
            f"{people_graph}/relation-types/lives_in", json={"single_valued": True}, headers=ana
        ),
        ("POST", "/api/v1/apps/{app}/graph/relations"): lambda: c.post(
            f"{people_graph}/relations", json={**knows, "target": "Cy"}, headers=ana
        ),
        ("DELETE", "/api/v1/apps/{app}/graph/relations/{relation_id}"): lambda: c.delete(
            f"{people_graph}/relations/{person_ending}", headers=ana
        ),
        ("POST", "/agents/{agent_id}/tools/{name}"): lambda: c.post(
            f"{base}/tools/memory_add", json={"content": "added by a tool"}
        ),
        ("POST", "/api/v1/apps/{app}/tools/{name}"): lambda: c.post(
            "/api/v1/apps/app:a/tools/memory_add", json={"content": "ana swims"}, headers=ana
        ),
        ("POST", "/agents/{agent_id}/graph/extractions"): lambda: c.post(
            f"{graph}/extractions", json={}
        ),
        ("POST", "/agents/{agent_id}/documents"): lambda: c.post(
            f"{base}/documents", json={"text": "# N\n\nNotes.", "name": "n.md"}
        ),
        ("DELETE", "/agents/{agent_id}/documents/{document_id}"): lambda: c.delete(
            f"{base}/documents/{doomed_doc.json()['documentId']}"
        ),
        ("POST", "/api/v1/apps/{app}/graph/extractions"): lambda: c.post(
            f"{people_graph}/extractions", json={"extractor": "rules"}, headers=ana
        ),
    }
    # A second way through one route: a relation deleted for good is one entry too.
    variants = [lambda: c.delete(f"{graph}/relations/{dropped}", params={"hard": "true"})]
    reads = {
        ("POST", "/agents/{agent_id}/graph/traversals"): lambda: c.post(
            f"{graph}/traversals", json={"start": "Ana"}
        ),
        ("POST", "/api/v1/apps/{app}/graph/traversals"): lambda: c.post(
            f"{people_graph}/traversals", json={"start": "Ana"}, headers=ana
        ),
    }
    schema = c.get("/openapi.json").json()
    routes = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("post", "put", "patch", "delete")
    }
    assert routes - EPISODIC - READ_POSTS == set(calls), "a write route without a check here"
    assert set(reads) == READ_POSTS
    for (method, path), call in calls.items():
        before = _entries(target)
        answer = call()
        assert answer.is_success, (method, path, answer.text)
        actor = "ana" if path.startswith("/api/v1") else service_actor
        _one_new_entry(target, before, actor, "http")
    for call in variants:
        before = _entries(target)
        assert call().is_success
        _one_new_entry(target, before, service_actor, "http")
    for (method, path), call in reads.items():
        before = _entries(target)
        answer = call()
        assert answer.is_success and answer.json()["paths"], (method, path, answer.text)
        assert _entries(target) == before, (method, path)


def _newest(client: TestClient, base: str) -> int:
    seq: int = client.get(f"{base}/ledger", params={"limit": 1}).json()["entries"][0]["seq"]
    return seq


# -- the command line -------------------------------------------------------------------
CLI_READS = {
    "recall",
    "facts",
    "documents",
    "document",
    "fact",
    "provenance",
    "history",
    "trash",
    "ledger",
    "ledger-changes",
    "episodes",
    "working get",
    "working list",
    "app recall",
    "app list",
    "status",
    "health",
    "graph entity show",
    "graph entity search",
    "graph relations",
    "graph neighbours",
    "graph traverse",
    "feedback show",
    "export",  # writes a file (or a new store), not this one
}
CLI_EPISODIC = {"session start", "session append"}


def test_every_writing_command_adds_one_entry_through_the_command_line(
    capsys: pytest.CaptureFixture[str],
    target: Target,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    db = str(target)
    monkeypatch.setenv("ENGRAM_OWNER_UID", "owner")
    scoped = ["--db", db, "--resource", "cli", "--embedder", "none"]
    embeds = ["--db", db, "--resource", "cli"]

    def run(*argv: str) -> Any:
        code = main(["--json", *argv])
        out, err = capsys.readouterr()
        assert code == 0, (argv, err)
        return json.loads(out)

    fact = run("remember", "the plan is pro", *embeds)["id"]
    gone = run("remember", "the old code", *embeds)["id"]
    run("remember", "kept for forget", *embeds)
    run("forget", gone, *scoped)
    owned = run("app", "app:a", "remember", "owner likes tea", "--db", db)["id"]
    run("app", "app:b", "remember", "owner in b", "--db", db)
    run("working", "set", "doomed", "1", *scoped)
    forgettable = run("remember", "to forget", *embeds)["id"]
    read = run("remember", "Ana reads in Lisbon", *embeds)["id"]
    merged = [run("remember", f"merge me {n}", *embeds)["id"] for n in "ab"]
    turns = tmp_path / "turns.jsonl"
    turns.write_text('{"speaker": "Ana", "text": "a turn of the command line"}\n')
    for name in ("Ana", "Bo", "Doomed"):
        run("graph", "entity", "add", name, *scoped)
    ending = run("graph", "relate", "Ana", "knows", "Bo", *scoped)["id"]
    dropped = run("graph", "relate", "Ana", "likes", "Bo", *scoped)["id"]
    calls: dict[str, Callable[[], Any]] = {  # in this order
        "feedback detect": lambda: run(
            "feedback", "detect", read, "--response", "Ana reads in Lisbon.", *embeds
        ),
        "feedback record": lambda: run("feedback", "record", read, "used", *scoped),
        "consolidate": lambda: run("consolidate", "--step", "strengthen", *embeds),
        "import": lambda: run("import", str(_records_file()), *embeds),
        "wiki": lambda: run("wiki", *embeds),
        "remember": lambda: run("remember", "another fact", *embeds),
        "remember-conversation": lambda: run("remember-conversation", str(turns), *embeds),
        "ingest": lambda: run("ingest", str(_notes_dir()), *embeds),
        "forget-document": lambda: run(
            "forget-document", run("documents", *scoped)["documents"][0]["id"], *scoped
        ),
        "correct": lambda: run("correct", fact, "the plan is team", *embeds),
        "forget": lambda: run("forget", forgettable, *scoped),
        "merge": lambda: run("merge", *merged, "--content", "merged, one fact", *embeds),
        "unforget": lambda: run("unforget", gone, *scoped),
        "revert": lambda: run("revert", str(_entries(target)[-1][0]), *scoped),
        "delete": lambda: run("delete", fact, *scoped),
        "compact": lambda: run("compact", "--max-facts", "1", *scoped),
        "forget-all": lambda: run("forget-all", "--expected-count", "9", *scoped),
        "working set": lambda: run("working", "set", "plan", '"pro"', *scoped),
        "fork": lambda: run("fork", "cli-child", *scoped),
        "working delete": lambda: run("working", "delete", "doomed", *scoped),
        "app remember": lambda: run("app", "app:a", "remember", "owner walks", "--db", db),
        "app correct": lambda: run(
            "app", "app:a", "correct", owned, "owner likes tea!", "--db", db
        ),
        "app forget": lambda: run("app", "app:a", "forget", owned, "--db", db),
        "app forget-all": lambda: run("app", "app:b", "forget-all", "--count", "1", "--db", db),
        "graph entity add": lambda: run("graph", "entity", "add", "Cy", "--type", "x", *scoped),
        "graph entity rm": lambda: run("graph", "entity", "rm", "Doomed", *scoped),
        "graph type": lambda: run("graph", "type", "lives_in", "--single-valued", *scoped),
        "graph relate": lambda: run("graph", "relate", "Ana", "knows", "Cy", *scoped),
        "graph expire": lambda: run("graph", "expire", ending, *scoped),
        "graph unrelate": lambda: run("graph", "unrelate", dropped, *scoped),
        "graph extract": lambda: run("graph", "extract", *scoped),
    }
    handlers = _handlers(build_parser())
    assert handlers - CLI_READS - CLI_EPISODIC == set(calls), "a command without a check here"
    user = cli_user()
    for name, call in calls.items():
        before = _entries(target)
        call()
        op = _one_new_entry(target, before, user, "cli")
        assert op, name


def _handlers(parser: Any) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for child in action.choices.values():
            handler = child.get_default("handler")
            if handler is not None:
                found.add(handler)
            found |= _handlers(child)
    return found


def test_a_writer_names_what_it_is_for_and_a_bad_one_is_refused(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        with pytest.raises(engram.InvalidInput):
            mem.acting(via="carrier-pigeon")  # type: ignore[arg-type]
        with pytest.raises(engram.InvalidInput):
            mem.acting(actor="")
        turn = mem.acting(actor="assistant", turn_user="bo")
        fact = turn.remember(PersonAppRef("ana", "app:chat"), "bo asked about the trip")
        assert fact.turn_user == "bo"
        entry = mem.ledger(PersonAppRef("ana", "app:chat")).entries[0]
        assert (entry.actor, entry.via, entry.turn_user) == ("assistant", "library", "bo")
