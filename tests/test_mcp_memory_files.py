"""Every file the MCP reference memory server can write comes into engram and goes back
out equal, as a set of lines, on both backends.

The files are generated from the server's own rules (its ``createEntities``,
``addObservations`` and ``createRelations``): an entity's name is unique as written, so
names that differ only in case are two entities; its observations are unique and of any
length; a relation is a unique triple whose ends need not be entities at all; the file
holds the entities, then the relations, each written by ``JSON.stringify``. Only what no
store's text holds is left out of the words: NUL and lone surrogates.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import engram
from stores import Target

EXAMPLES = int(os.environ.get("ENGRAM_MCP_FILE_EXAMPLES", "8"))
LONG = " ".join(["Ana keeps a diary of every climb she made in the Dolomites."] * 42)
NAMES = ["Ana Lima", "ana lima", "ANA LIMA", "Bo", "bo", "Acme", "", " ", "?!", "Zoë", "x" * 300]
TYPES = ["person", "organization", "", "event", "t" * 200]
WORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)
observations = st.lists(
    st.one_of(st.sampled_from(["", " spaced ", "likes tea", LONG, "Zoë ❤ 東京"]), WORDS),
    unique=True,
    max_size=4,
)
entities = st.dictionaries(
    st.one_of(st.sampled_from(NAMES), WORDS),
    st.tuples(st.sampled_from(TYPES), observations),
    max_size=5,
)
ends = st.one_of(st.sampled_from([*NAMES, "Nobody"]), WORDS)
relations = st.lists(
    st.tuples(ends, ends, st.sampled_from(["works_at", "knows", "", "r" * 150])),
    unique=True,
    max_size=4,
)


def _file(made: dict[str, tuple[str, list[str]]], related: list[tuple[str, str, str]]) -> str:
    lines: list[dict[str, Any]] = [
        {"type": "entity", "name": name, "entityType": kind, "observations": said}
        for name, (kind, said) in made.items()
    ]
    lines += [
        {"type": "relation", "from": a, "to": b, "relationType": kind} for a, b, kind in related
    ]
    return "\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in lines)


def test_every_file_the_server_writes_goes_back_out_equal(target: Target) -> None:
    scopes = (engram.ResourceRef(f"mcp{n}") for n in itertools.count())
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as mem:

        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None)
        @given(entities, relations)
        def run(made: dict[str, tuple[str, list[str]]], related: list[Any]) -> None:
            text, ref = _file(made, related), next(scopes)
            if text:
                mem.import_string(ref, text, source="mcp-memory")
            out = mem.export_string(ref, format="mcp-memory")
            assert set(out.splitlines()) == set(text.splitlines())

        run()


def test_a_long_observation_is_kept_whole_and_found_by_its_end(target: Target) -> None:
    text = _file({"Ana": ("person", [LONG + " She summited the Marmolada last."])}, [])
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as mem:
        ref = engram.ResourceRef("long")
        done = mem.import_string(ref, text, source="mcp-memory")
        assert done.facts_added == 3  # the entity, and the observation in two parts
        assert all(len(f.content) <= 2000 for f in mem.facts(ref).facts)
        hits = mem.recall(ref, "Marmolada summit", mode="text")
        assert hits and "Marmolada" in hits[0].fact.content
        assert mem.export_string(ref, format="mcp-memory").splitlines() == text.splitlines()


def test_the_file_the_server_itself_wrote_goes_back_out_equal(target: Target) -> None:
    """``fixtures/mcp-memory.jsonl`` is what the reference server (npm
    ``@modelcontextprotocol/server-memory``) wrote after the calls in
    ``fixtures/make_mcp_memory.py``: names that differ only in case, an observation of
    2,506 characters, a relation to an entity never created. Every line comes back, and
    the graph holds what it can: the relation between two entities it holds."""
    text = (Path(__file__).parent / "fixtures" / "mcp-memory.jsonl").read_text()
    assert "Porto" not in {json.loads(line).get("name") for line in text.splitlines()}
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as mem:
        ref = engram.ResourceRef("from-the-server")
        mem.import_string(ref, text, source="mcp-memory")
        out = mem.export_string(ref, format="mcp-memory")
        held = mem.graph.relations(ref, entity="Lisbon", type="lives_in")
    assert sorted(out.splitlines()) == sorted(text.splitlines())
    assert [r.type for r in held] == ["lives_in"]
