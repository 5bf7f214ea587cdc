"""Export and import: a scope's memory to JSON, JSONL and a new SQLite store and back,
across backends; every bad record listed with nothing written; vectors reused only for
the same model; ids kept or remapped; mem0's memories and CSV; and an import killed in
any phase leaving the store as it was."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engram
from engram import (
    BadRecords,
    CapabilityMissing,
    Conflict,
    InvalidInput,
    Note,
    NotFound,
    ResourceRef,
)
from engram.core.portability import transfer
from stores import Target, rows

REF = ResourceRef("portable")
NOTES = [
    Note("Ana moved to Lyon in 2020", tags=["move"], type="event", metadata={"k": 1}),
    Note("Bo likes green tea", context="said at breakfast", strength=1.5),
    Note("the deploy runs nightly at 2am", tags=["ops", "cron"]),
    Note("Cy plays chess on Sundays"),
]
QUERIES = ["where does Ana live", "what does Bo drink", "when is the deploy", "chess"]


def _facts(mem: engram.Memory, ref: ResourceRef = REF) -> dict[str, tuple[Any, ...]]:
    return {
        f.id: (f.content, f.type, f.tags, f.metadata, f.context, f.strength, f.created_at)
        for f in mem.facts(ref, limit=1000).facts
    }


def _hits(mem: engram.Memory, mode: str) -> list[list[tuple[str, float]]]:
    return [
        [(h.fact.id, round(h.score, 6)) for h in mem.recall(REF, q, mode=mode)]  # type: ignore[arg-type]
        for q in QUERIES
    ]


def _filled(target: Target | Path, embedder: Any) -> engram.Memory:
    mem = engram.open(target, embedder=embedder)
    mem.remember_many(REF, NOTES)
    mem.working.set(REF, "plan", {"tier": "pro"})
    return mem


def test_sqlite_to_jsonl_to_postgres_to_sqlite_gives_the_same_memory(
    tmp_path: Path, postgres_store_url: str, hashing: engram.HashingEmbedder
) -> None:
    with _filled(tmp_path / "first.db", hashing) as first:
        report = first.export(REF, tmp_path / "out.jsonl")
        assert (report.format, report.facts, report.working) == ("jsonl", 4, 1)
        facts, vector_hits, hybrid = _facts(first), _hits(first, "vector"), _hits(first, "hybrid")
    with engram.open(postgres_store_url, embedder=hashing) as pg:
        done = pg.import_file(REF, tmp_path / "out.jsonl")
        assert (done.facts_added, done.vectors_reused, done.vectors_embedded) == (4, 4, 0)
        assert done.id_mappings == {} and _facts(pg) == facts
        assert _hits(pg, "vector") == vector_hits  # the same vectors, the same cosines
        assert pg.working.get(REF, "plan") == {"tier": "pro"}
        pg.export(REF, tmp_path / "back.sqlite")
    with engram.open(tmp_path / "back.sqlite", embedder=hashing) as back:
        assert _facts(back) == facts
        assert _hits(back, "vector") == vector_hits and _hits(back, "hybrid") == hybrid
    with engram.open(tmp_path / "back.sqlite", embedder="none") as read_only:
        assert len(read_only.facts(REF).facts) == 4  # opens without a model


def test_json_and_csv_and_a_second_import_link_what_is_held(
    target: Target, tmp_path: Path, hashing: engram.HashingEmbedder
) -> None:
    with _filled(target, hashing) as mem:
        text = mem.export_string(REF, format="json")
        assert json.loads(text)["format"] == "engram-export"
        other = ResourceRef("other")
        first = mem.import_string(other, text)
        assert first.facts_added == 4 and set(first.id_mappings) == set(_facts(mem))
        again = mem.import_string(other, text)
        assert (again.facts_added, again.facts_existing) == (0, 4)
        csv = (
            "content,tags,type,created_at,metadata\n"
            'Eve rides a bike,a;b,hobby,2024-01-02T03:04:05Z,"{""x"": 2}"\n'
        )
        made = mem.import_string(ResourceRef("csv"), csv)
        (fact,) = mem.facts(ResourceRef("csv")).facts
        assert made.vectors_embedded == 1 and fact.tags == ("a", "b") and fact.type == "hobby"
        assert fact.metadata == {"x": 2} and fact.created_at.year == 2024


def test_every_bad_record_is_listed_and_nothing_is_written(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    with _filled(target, hashing) as mem:
        lines = mem.export_string(REF).splitlines()
        lines[2] = "{not json"
        record = json.loads(lines[3])
        lines[3] = json.dumps({**record, "strength": 11, "tags": "x"})
        lines.append(json.dumps({"kind": "fact"}))
        before = (_facts(mem, ResourceRef("into")), len(mem.ledger(REF).entries))
        with pytest.raises(BadRecords) as raised:
            mem.import_string(ResourceRef("into"), "\n".join(lines))
        listed = [(e["line"], e["field"]) for e in raised.value.details["errors"]]  # type: ignore[union-attr]
        assert listed == [(3, "line"), (4, "tags"), (4, "strength"), (7, "content")]
        assert (_facts(mem, ResourceRef("into")), len(mem.ledger(REF).entries)) == before
        with pytest.raises(BadRecords, match="line 1"):
            mem.import_string(REF, "", format="csv")
        with pytest.raises(InvalidInput, match="source"):
            mem.import_string(REF, "[]", source="letta")


def test_vectors_are_reused_only_for_the_same_model(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.db", engram.HashingEmbedder(32)) as mem:
        mem.export(REF, tmp_path / "a.jsonl")
    with engram.open(tmp_path / "b.db", embedder=engram.HashingEmbedder(16)) as other:
        done = other.import_file(REF, tmp_path / "a.jsonl")
        assert (done.vectors_reused, done.vectors_embedded) == (0, 4)
    with engram.open(tmp_path / "c.db", embedder=engram.HashingEmbedder(16)) as seeded:
        seeded.remember(REF, "a fact of another model")
    with engram.open(tmp_path / "c.db", embedder="none") as blind:
        with pytest.raises(CapabilityMissing, match="no embedder"):
            blind.import_file(REF, tmp_path / "a.jsonl")
        assert len(blind.facts(REF).facts) == 1


def test_an_export_never_overwrites(tmp_path: Path, hashing: engram.HashingEmbedder) -> None:
    with _filled(tmp_path / "a.db", hashing) as mem:
        (tmp_path / "taken.jsonl").write_text("mine")
        with pytest.raises(Conflict, match="never overwrites"):
            mem.export(REF, tmp_path / "taken.jsonl")
        assert (tmp_path / "taken.jsonl").read_text() == "mine"
        with pytest.raises(InvalidInput, match="format"):
            mem.export(REF, tmp_path / "out.txt")
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_mem0_memories_come_in_with_nothing_skipped_silently(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    got_all = {
        "results": [
            {
                "id": "3f1c",
                "memory": "Likes sushi",
                "hash": "h1",
                "metadata": {"source": "chat"},
                "categories": ["food"],
                "created_at": "2024-05-01T10:00:00-07:00",
                "user_id": "alice",
            },
            {"id": "9a2b", "memory": "Allergic to peanuts", "user_id": "alice"},
        ]
    }
    with engram.open(target, embedder=hashing) as mem:
        done = mem.import_string(REF, json.dumps(got_all), source="mem0")
        assert done.facts_added == 2
        sushi = next(f for f in mem.facts(REF).facts if f.content == "Likes sushi")
        assert sushi.tags == ("food",) and sushi.metadata["mem0_id"] == "3f1c"
        assert sushi.metadata["user_id"] == "alice" and sushi.created_at.hour == 17
        platform = {"memories": [{"memory": "Runs at dawn"}, {"text": ""}]}
        came = mem.import_string(REF, json.dumps(platform), source="mem0")
        assert came.facts_added == 1  # a blank record carries nothing: left out, and said
        assert [(s.line, s.field) for s in came.skipped] == [(1, "text")]
        lines = "\n".join(json.dumps(m) for m in got_all["results"])
        assert mem.import_string(ResourceRef("jsonl"), lines, source="mem0").facts_added == 2


def test_a_file_of_this_model_is_written_as_read_and_a_late_bad_record_still_refuses_all(
    target: Target, tmp_path: Path, hashing: engram.HashingEmbedder, monkeypatch: Any
) -> None:
    monkeypatch.setattr(transfer, "WRITE_BATCH", 2)  # batches written before the bad ones
    into = ResourceRef("into")
    with _filled(target, hashing) as mem:
        mem.export(REF, tmp_path / "out.jsonl")
        lines = (tmp_path / "out.jsonl").read_text().splitlines()
        late = [json.dumps({"kind": "fact", "content": ""}), '{"kind": "fact", "strength": -1']
        (tmp_path / "bad.jsonl").write_text("\n".join(lines + late) + "\n")
        entries = len(mem.ledger(into).entries)
        with pytest.raises(BadRecords) as raised:
            mem.import_file(into, tmp_path / "bad.jsonl")
        listed = [(e["line"], e["field"]) for e in raised.value.details["errors"]]  # type: ignore[union-attr]
        assert listed == [(7, "content"), (8, "line")]
        assert mem.facts(into).facts == [] and len(mem.ledger(into).entries) == entries
        assert rows(target, "SELECT count(*) FROM entities WHERE scope = ?", (into.key,)) == [(0,)]
        seen: list[tuple[str, int, int]] = []
        done = mem.import_file(into, tmp_path / "out.jsonl", progress=lambda *a: seen.append(a))
        assert (done.facts_added, done.vectors_reused, done.vectors_embedded) == (4, 4, 0)
        assert seen == [("parse", 0, 5), ("write", 2, 5), ("write", 4, 5), ("write", 5, 5)]
        assert mem.working.get(into, "plan") == {"tier": "pro"}
        assert sorted(v[0] for v in _facts(mem, into).values()) == sorted(n.content for n in NOTES)
        # A fact with no vector of the model: the file is imported in phases instead.
        record = json.loads(lines[2])
        lines[2] = json.dumps({**record, "vector": None})
        (tmp_path / "part.jsonl").write_text("\n".join(lines) + "\n")
        part = mem.import_file(ResourceRef("part"), tmp_path / "part.jsonl")
        assert (part.facts_added, part.vectors_reused, part.vectors_embedded) == (4, 3, 1)
        assert len(mem.ledger(ResourceRef("part")).entries) == 1


def test_an_id_held_in_the_trash_is_not_reused(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    with _filled(target, hashing) as mem:
        text = mem.export_string(REF)
        gone, *others = mem.facts(REF).facts
        mem.forget(REF, gone.id)
        for fact in others:
            mem.forget(REF, fact.id, hard=True)
        done = mem.import_string(ResourceRef("elsewhere"), text)
        assert set(done.id_mappings) == {gone.id}
        mem.restore(REF, gone.id)  # the trashed fact can still come back under its id
        assert mem.fact(REF, gone.id).content == gone.content


def test_a_dry_run_writes_nothing(
    target: Target, tmp_path: Path, hashing: engram.HashingEmbedder
) -> None:
    with _filled(target, hashing) as mem:
        text = mem.export_string(REF)
        (tmp_path / "out.jsonl").write_text(text)
        with pytest.raises(InvalidInput, match="dry_run"):
            mem.import_file(ResourceRef("dry"), tmp_path / "out.jsonl", dry_run="yes")  # type: ignore[arg-type]
        entries = len(mem.ledger(ResourceRef("dry")).entries)
        report = mem.import_string(ResourceRef("dry"), text, dry_run=True)
        assert report.dry_run and report.facts_added == 4 and report.entry is None
        assert mem.facts(ResourceRef("dry")).facts == []
        assert len(mem.ledger(ResourceRef("dry")).entries) == entries


KILLER = """
import sys, engram
from engram import ResourceRef
from engram.core.portability import transfer
transfer.WRITE_BATCH = 100  # a file of this model is written in twelve batches
mem = engram.open(sys.argv[1], embedder=engram.HashingEmbedder(16))
def tell(phase, done, total):
    print(phase, done, total, flush=True)
    sys.stdin.readline()  # the test kills here, or lets it go on
mem.import_file(ResourceRef("victim"), sys.argv[2], progress=tell)
print("done", flush=True)
"""


# A file of another model is imported in phases, its lines: 1 parse, 2-6 embedding (five
# batches), 7 inside the write's transaction. A file of this model is written as read:
# 1 parse, 2-14 inside the transaction, after each batch. The suite kills at one point
# of each phase; ENGRAM_IMPORT_KILLS=N kills at N points of each kind drawn at random.
KILLS = int(os.environ.get("ENGRAM_IMPORT_KILLS", "0"))
POINTS = (
    [(32, random.Random(n).randint(1, 7)) for n in range(KILLS)]
    + [(16, random.Random(n).randint(1, 14)) for n in range(KILLS)]
    if KILLS
    else [(32, 1), (32, 2), (32, 7), (16, 5)]
)


@pytest.mark.parametrize(("width", "kill_at"), POINTS)
def test_an_import_killed_in_any_phase_leaves_the_store_as_it_was(
    tmp_path: Path, width: int, kill_at: int
) -> None:
    facts = [Note(f"fact number {i} of the batch") for i in range(1200)]
    with engram.open(tmp_path / "src.db", embedder=engram.HashingEmbedder(width)) as src:
        src.remember_many(REF, facts)
        src.export(REF, tmp_path / "big.jsonl")
    with engram.open(tmp_path / "store.db", embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(ResourceRef("victim"), "already here")
    state = lambda: rows(tmp_path / "store.db", "SELECT count(*) FROM facts")  # noqa: E731
    ledger = lambda: rows(tmp_path / "store.db", "SELECT count(*) FROM ledger")  # noqa: E731
    before = (state(), ledger())
    child = subprocess.Popen(
        [sys.executable, "-c", KILLER, str(tmp_path / "store.db"), str(tmp_path / "big.jsonl")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.stdin is not None and child.stdout is not None
    seen = []
    for _ in range(kill_at):
        line = child.stdout.readline()
        assert line, "the import ended before the kill point"
        seen.append(line.split()[0])
        if len(seen) < kill_at:
            child.stdin.write("\n")
            child.stdin.flush()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    inside = "write" if width == 16 else "embed"  # what lines 2.. of the phases say
    assert seen[-1] == ("parse" if kill_at == 1 else "write" if kill_at == 7 else inside)
    assert (state(), ledger()) == before
    with engram.open(tmp_path / "store.db", embedder=engram.HashingEmbedder(16)) as mem:
        assert [f.content for f in mem.facts(ResourceRef("victim")).facts] == ["already here"]
        assert mem.import_file(ResourceRef("victim"), tmp_path / "big.jsonl").facts_added == 1200


MCP_GRAPH = [
    {
        "type": "entity",
        "name": "John_Smith",
        "entityType": "person",
        "observations": ["Speaks fluent Spanish", "Graduated in 2019"],
    },
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
]


def _server_lines(lines: list[dict[str, Any]]) -> str:
    """A file as the MCP memory server writes it (JSON.stringify: compact, UTF-8)."""
    return "\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in lines)


def test_the_mcp_memory_graph_comes_in_and_goes_out_the_same(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    text = _server_lines(MCP_GRAPH)
    with engram.open(target, embedder=hashing) as mem:
        done = mem.import_string(REF, text, source="mcp-memory")
        # a fact of each entity, observation and relation: the file kept, as it said it
        assert (done.facts_added, done.entities, done.relations) == (5, 2, 1)
        hits = mem.recall(REF, "what does John speak", mode="text")
        assert hits[0].fact.content == "John_Smith: Speaks fluent Spanish"
        john = mem.graph.entity(REF, "John_Smith")
        assert john.type == "person" and john.origin == "imported"
        out = mem.export_string(REF, format="mcp-memory")
        assert set(out.splitlines()) == set(text.splitlines())
        mem.remember(REF, "Anthropic opened an office in Zurich")  # the scope's own words
        grown = [json.loads(x) for x in mem.export_string(REF, format="mcp-memory").splitlines()]
        anthropic = next(x for x in grown if x.get("name") == "Anthropic")
        assert anthropic["observations"] == ["Anthropic opened an office in Zurich"]


def test_a_bad_mcp_memory_line_writes_nothing_and_a_dangling_relation_is_kept(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    """A line the server could not have written is named with its field; a relation to an
    entity never created, which the server keeps, is kept too (a fact; no graph edge)."""
    with engram.open(target, embedder=hashing) as mem:
        bad = [*MCP_GRAPH, {"type": "entity", "name": 7, "entityType": "x"}, {"type": "tag"}]
        with pytest.raises(BadRecords) as raised:
            mem.import_string(REF, "\n".join(json.dumps(x) for x in bad), source="mcp-memory")
        listed = [(e["line"], e["field"]) for e in raised.value.details["errors"]]  # type: ignore[union-attr]
        assert listed == [(4, "name"), (5, "type")]
        assert mem.facts(REF).facts == [] and mem.ledger(REF).entries == []
        dangling = [MCP_GRAPH[0], {**MCP_GRAPH[2], "to": "Nobody"}]
        text = _server_lines(dangling)
        mem.import_string(REF, text, source="mcp-memory")
        assert set(mem.export_string(REF, format="mcp-memory").splitlines()) == set(
            text.splitlines()
        )
        assert mem.graph.relations(REF) == []


def _listed(raised: pytest.ExceptionInfo[BadRecords]) -> list[tuple[int, str]]:
    return [(e["line"], e["field"]) for e in raised.value.details["errors"]]  # type: ignore[union-attr]


def test_records_nested_too_deeply_to_read_are_bad_records_in_every_format(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from engram.cli.main import main

    deep = "[" * 100_000 + "]" * 100_000
    deeper_than_python_reads = "[" * 5_000 + "]" * 5_000  # fits in a CSV field
    deep_fact = '{"kind": "fact", "content": "x", "metadata": ' + deep + "}"
    fine = json.dumps({"kind": "fact", "content": "fine"})
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        for text, options, where in [
            (deep, {}, (1, "document")),
            (f"{fine}\n{deep_fact}\n", {"format": "jsonl"}, (2, "line")),
            (
                f"content,metadata\nfine,{{}}\nx,{deeper_than_python_reads}\n",
                {"format": "csv"},
                (3, "metadata"),
            ),
            (deep, {"source": "mem0"}, (1, "line")),
            (deep, {"source": "mcp-memory"}, (1, "line")),
        ]:
            with pytest.raises(BadRecords, match="nests too deeply") as raised:
                mem.import_string(REF, text, **options)  # type: ignore[arg-type]
            assert _listed(raised) == [where], options
        (tmp_path / "deep.jsonl").write_text(deep + "\n" + fine + "\n")  # the header's place
        with pytest.raises(BadRecords, match="nests too deeply"):
            mem.import_file(REF, tmp_path / "deep.jsonl")
        assert mem.facts(REF).facts == [] and mem.ledger(REF).entries == []
    (tmp_path / "deep.json").write_text(deep)
    argv = ["--db", str(db_path), "--resource", "r", "--embedder", "none"]
    assert main([*argv, "import", str(tmp_path / "deep.json")]) == 2
    assert "nests too deeply" in capsys.readouterr().err


def test_a_csv_field_over_the_reader_s_limit_is_named_too_long_by_its_line(db_path: Path) -> None:
    import csv

    long = "x" * (csv.field_size_limit() + 1)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        with pytest.raises(BadRecords, match="line 3, line: a field is over 131072") as raised:
            mem.import_string(REF, f"content\nshort\n{long}\nafter\n", format="csv")
        assert "content: at most 2000" in str(raised.value)
        with pytest.raises(BadRecords) as raised:  # in quotes, over several lines
            mem.import_string(REF, f'content,type\n"a\n{long}",t\n', format="csv")
        assert _listed(raised) == [(3, "line")]
        with pytest.raises(BadRecords) as raised:  # in the header
            mem.import_string(REF, f"content,{long}\n", format="csv")
        assert _listed(raised) == [(1, "header")]
        assert mem.facts(REF).facts == [] and mem.ledger(REF).entries == []


def test_an_import_without_facts_needs_no_embedder_and_names_only_an_entry_it_wrote(
    target: Target,
) -> None:
    empty = json.dumps(records_header := {"format": "engram-export", "version": 1})
    working = "\n".join(
        json.dumps({"kind": "working", "key": k, "value": v}) for k, v in (("a", 1), ("b", [2]))
    )
    with engram.open(target, embedder="none") as mem:
        for text, options in [
            ("content\n", {"format": "csv"}),
            (json.dumps({**records_header, "model": None, "scope": "x"}), {"format": "jsonl"}),
            (json.dumps({**records_header, "facts": [], "working": []}), {"format": "json"}),
            (empty, {}),
            ("[]", {"source": "mem0"}),
            ("", {"source": "mcp-memory"}),
        ]:
            done = mem.import_string(REF, text, **options)  # type: ignore[arg-type]
            assert (done.facts_added, done.working_set, done.entry) == (0, 0, None), options
        assert mem.ledger(REF).entries == []
        keys = mem.import_string(REF, working, format="jsonl")
        assert keys.working_set == 2 and keys.entry is not None
        assert mem.working.get(REF, "b") == [2]
        mem.revert(REF, keys.entry)
        with pytest.raises(NotFound):
            mem.working.get(REF, "a")
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        text = "content\nAna moved to Lyon\n"
        assert mem.import_string(REF, text, format="csv").entry is not None
        again = mem.import_string(REF, text, format="csv")  # every fact already held
        assert (again.facts_existing, again.entry) == (1, None)


def test_unknown_columns_and_fields_and_vectors_of_another_width_are_bad_records(
    db_path: Path, tmp_path: Path
) -> None:
    with _filled(db_path, engram.HashingEmbedder(16)) as mem:
        lines = mem.export_string(REF).splitlines()
        head, fact, working = json.loads(lines[0]), json.loads(lines[1]), json.loads(lines[-1])
        into = ResourceRef("into")
        for text, options, listed in [
            ("content,colour\nhi,red\n", {"format": "csv"}, [(1, "colour")]),
            ("content,type,type\nhi,a,b\n", {"format": "csv"}, [(1, "type")]),
            ("content,type\nhi,a\nho,b,c\n", {"format": "csv"}, [(3, "line")]),
            (
                "\n".join(
                    json.dumps(x)
                    for x in (
                        {**head, "note": 1},
                        {**fact, "colour": "red"},
                        {**working, "ttl": 5},
                        {"kind": "working", "key": "k"},
                        {**fact, "vector": fact["vector"][:-8]},  # one float32 short
                    )
                ),
                {"format": "jsonl"},
                [(1, "note"), (2, "colour"), (3, "ttl"), (4, "value"), (5, "vector")],
            ),
            (
                json.dumps({**head, "facts": [], "extra": []}),
                {"format": "json"},
                [(1, "extra")],
            ),
            (
                json.dumps([{k: v for k, v in fact.items() if k != "kind"}]),  # no model
                {"format": "json"},
                [(1, "vector")],
            ),
        ]:
            with pytest.raises(BadRecords) as raised:
                mem.import_string(into, text, **options)  # type: ignore[arg-type]
            assert _listed(raised) == listed, text
        # A file of this store's model, read as it is written: the short vector refuses it.
        short = {**json.loads(lines[2]), "vector": fact["vector"][:-8]}
        (tmp_path / "short.jsonl").write_text("\n".join([*lines[:2], json.dumps(short)]) + "\n")
        with pytest.raises(BadRecords, match="has 15 value") as raised:
            mem.import_file(into, tmp_path / "short.jsonl")
        assert _listed(raised) == [(3, "vector")]
        # A vector no L2-normalised embedding has (a value past 1, not a number) too.
        for value in (1.5, float("nan")):
            values = np.frombuffer(base64.b64decode(fact["vector"]), "<f4").copy()
            values[3] = value
            odd = {**fact, "vector": base64.b64encode(values.tobytes()).decode("ascii")}
            with pytest.raises(BadRecords, match="L2-normalised") as raised:
                mem.import_string(into, "\n".join([lines[0], json.dumps(odd)]))
            assert _listed(raised) == [(2, "vector")]
        assert mem.facts(into).facts == [] and mem.ledger(into).entries == []


@pytest.mark.parametrize(
    ("name", "format"),
    [
        ("x.jsonl", None),
        ("x.json", None),
        ("x.sqlite", None),
        ("x.jsonl", "mcp-memory"),
        ("x", "markdown"),
        ("x", "obsidian"),
    ],
)
def test_an_export_the_system_will_not_write_names_its_path(
    db_path: Path, capsys: pytest.CaptureFixture[str], name: str, format: str | None
) -> None:
    from engram.cli.main import main

    where = f"/proc/{name}"  # a folder no file can be created in, even by root
    with _filled(db_path, engram.HashingEmbedder(16)) as mem:
        with pytest.raises(InvalidInput, match=f"cannot write {where}: "):
            mem.export(REF, where, format=format)
        argv = ["--db", str(db_path), "--resource", REF.resource_id, "--embedder", "none"]
        argv += ["export", where, *(["--format", format] if format else [])]
        assert main(argv) == 2
        assert f"error[invalid_input]: cannot write {where}: " in capsys.readouterr().err


def test_an_export_onto_a_full_disk_is_a_storage_failure_naming_its_path(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from engram import StorageFailure

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    out = tmp_path / "out.jsonl"
    with _filled(db_path, engram.HashingEmbedder(16)) as mem, monkeypatch.context() as patch:
        patch.setattr(os, "fsync", full)  # the disk fills as the file is flushed
        with pytest.raises(StorageFailure, match=re.escape(f"cannot write {out}: No space")):
            mem.export(REF, out)
    assert [p.name for p in tmp_path.iterdir()] == [db_path.name]  # no staging file left


@pytest.mark.parametrize(
    "options", [{}, {"format": "jsonl"}, {"format": "csv"}, {"source": "mem0"}]
)
def test_an_import_the_system_will_not_read_names_its_path(
    db_path: Path, options: dict[str, str]
) -> None:
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        with pytest.raises(InvalidInput, match="cannot read /proc/self/mem: "):
            mem.import_file(REF, "/proc/self/mem", **options)  # type: ignore[arg-type]
        assert mem.ledger(REF).entries == []


def test_skipping_bad_records_imports_the_good_ones_on_every_path(
    target: Target, tmp_path: Path, hashing: engram.HashingEmbedder, monkeypatch: Any
) -> None:
    """``on_error="skip"``: the streamed import of a file of this model, the whole-file
    import and a dry run each leave out the bad records, listed with their lines, and
    import the rest; a file wrong as a whole is refused all the same."""
    monkeypatch.setattr(transfer, "WRITE_BATCH", 2)  # batches written around the bad ones
    with _filled(target, hashing) as mem:
        mem.export(REF, tmp_path / "out.jsonl")
        lines = (tmp_path / "out.jsonl").read_text().splitlines()
        bad = [json.dumps({"kind": "fact", "content": "x" * 2001}), '{"kind": "fact"']
        mixed = [lines[0], lines[1], bad[0], *lines[2:], bad[1]]
        (tmp_path / "mixed.jsonl").write_text("\n".join(mixed) + "\n")
        for into, dry in ((ResourceRef("streamed"), False), (ResourceRef("dry"), True)):
            done = mem.import_file(into, tmp_path / "mixed.jsonl", on_error="skip", dry_run=dry)
            assert [(s.line, s.field) for s in done.skipped] == [(3, "content"), (8, "line")]
            assert done.skipped[0].record == json.loads(bad[0]) and done.skipped[1].record is None
            assert done.facts_added == 4 and done.working_set == 1
        assert len(mem.facts(ResourceRef("streamed")).facts) == 4
        assert mem.facts(ResourceRef("dry")).facts == []
        whole = "\n".join(mixed)  # read whole, not streamed
        done = mem.import_string(ResourceRef("whole"), whole, on_error="skip")
        assert [s.line for s in done.skipped] == [3, 8] and done.facts_added == 4
        broken = json.dumps({"format": "engram-export", "version": 9})
        with pytest.raises(BadRecords, match="version"):
            mem.import_string(ResourceRef("no"), "\n".join([broken, *lines[1:]]), on_error="skip")
        with pytest.raises(InvalidInput, match="on_error must be refuse or skip"):
            mem.import_string(ResourceRef("no"), whole, on_error="ignore")  # type: ignore[arg-type]


def test_words_holding_unicode_line_breaks_survive_a_jsonl_round_trip(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    """JSONL is split at line feeds only: U+2028, U+0085 and the other breaks that
    ``str.splitlines`` splits at are written raw inside a record's strings."""
    words = "first\u2028second\x85third\x1cfourth"
    with engram.open(target, embedder=hashing) as mem:
        mem.remember(REF, words)
        text = mem.export_string(REF)
        assert "\u2028" in text  # raw, as json.dumps(ensure_ascii=False) writes it
        mem.import_string(ResourceRef("again"), text)
        assert [f.content for f in mem.facts(ResourceRef("again")).facts] == [words]
        mem0 = json.dumps({"memory": words}, ensure_ascii=False) + "\n" + '{"memory": "x"}'
        mem.import_string(ResourceRef("mem0"), mem0, source="mem0")
        assert words in {f.content for f in mem.facts(ResourceRef("mem0")).facts}
