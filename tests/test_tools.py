"""The memory tools on both backends: their specifications, each call one ledger entry
answering text, refusals as sentences that write nothing, the scope bound when they are
made, and merge's one entry that a revert undoes."""

from __future__ import annotations

import re
from typing import Any

import pytest

import engram
import stores
from engram import ResourceRef
from stores import Target

REF = ResourceRef("tools-user")
OTHER = ResourceRef("someone-else")
ROWS = "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM ledger)"
NAMES = ["memory_add", "memory_search", "memory_update", "memory_delete", "memory_merge"]
REFLECTING = [*NAMES, "memory_reflect"]


def _tools(mem: engram.Memory, ref: ResourceRef = REF) -> dict[str, engram.Tool]:
    return {t.name: t for t in mem.create_tools(ref)}


def _ok(tool: engram.Tool, args: dict[str, Any]) -> str:
    result = tool(args)
    assert not result.is_error, result.text
    return result.text


def _id(text: str) -> str:
    found = re.findall(r"\[(f_[0-9a-f]+)\]", text)
    assert found, text
    return found[-1]


def _entries(mem: engram.Memory, ref: ResourceRef = REF) -> int:
    return len(mem.ledger(ref, limit=1000).entries)


def test_the_specifications_are_closed_json_schemas(mem: engram.Memory) -> None:
    specs = [t.spec() for t in mem.create_tools(REF)]
    assert [s["name"] for s in specs] == REFLECTING
    for spec in specs:
        schema = spec["parameters"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert "scope" not in schema["properties"] and spec["description"]
    assert [t.name for t in mem.create_tools(REF, include_reflect=False)] == NAMES
    with pytest.raises(engram.InvalidInput):
        mem.create_tools(REF, include_reflect="yes")  # type: ignore[arg-type]


def test_each_call_writes_one_entry_and_answers_text(mem: engram.Memory) -> None:
    t = _tools(mem)
    before = _entries(mem)
    tea = _id(_ok(t["memory_add"], {"content": "Ana drinks green tea", "tags": ["drinks"]}))
    coffee = _id(_ok(t["memory_add"], {"content": "Ana drinks black coffee", "type": "preference"}))
    assert _entries(mem) == before + 2
    found = _ok(t["memory_search"], {"query": "what does Ana drink", "topK": 5})
    lines = found.splitlines()
    assert len(lines) == 2 and all(re.fullmatch(r"- \[f_\w+\] .+ \(\d\.\d\d\)", x) for x in lines)
    only = _ok(t["memory_search"], {"query": "Ana drinks", "tags": ["drinks"]})
    assert _id(only) == tea and len(only.splitlines()) == 1
    typed = _ok(t["memory_search"], {"query": "Ana drinks", "type": "preference"})
    assert _id(typed) == coffee
    assert _entries(mem) == before + 2  # a search writes nothing
    _ok(t["memory_update"], {"id": tea, "content": "Ana drinks jasmine tea"})
    assert mem.fact(REF, tea).content == "Ana drinks jasmine tea"
    assert _entries(mem) == before + 3
    assert _ok(t["memory_delete"], {"id": coffee}) == f"Forgot [{coffee}]."
    assert [t.fact.id for t in mem.trash(REF).facts] == [coffee]  # softly, revertable
    assert _entries(mem) == before + 4
    again = t["memory_delete"]({"id": coffee})  # gone already: an error, as an update says
    assert again.is_error and "no fact" in again.text and "nothing changed" in again.text


def test_merge_folds_facts_in_one_entry_that_a_revert_undoes(mem: engram.Memory) -> None:
    a = mem.remember(REF, "the deploy runs at 2am", tags=["ops"], type="schedule")
    b = mem.remember(REF, "deploys happen nightly at 2", tags=["deploy"], type="schedule")
    c = mem.remember(REF, "the deploy is at two in the morning", strength=3.0, type="schedule")
    before = _entries(mem)
    text = _ok(
        _tools(mem)["memory_merge"],
        {"ids": [a.id, b.id, c.id], "content": "the deploy runs nightly at 2am"},
    )
    merged = mem.fact(REF, _id(text))
    assert (merged.tags, merged.type, merged.strength) == (("deploy", "ops"), "schedule", 3.0)
    assert [f.content for f in mem.facts(REF).facts] == ["the deploy runs nightly at 2am"]
    assert _entries(mem) == before + 1
    entry = mem.ledger(REF, limit=1).entries[0]
    assert entry.op == "merge"
    mem.revert(REF, entry.seq)
    assert sorted(f.id for f in mem.facts(REF).facts) == sorted([a.id, b.id, c.id])


def test_merging_into_one_of_their_own_words_keeps_that_fact(mem: engram.Memory) -> None:
    a = mem.remember(REF, "Bo likes jazz")
    b = mem.remember(REF, "Bo is fond of jazz music")
    kept = mem.merge(REF, [a.id, b.id], "Bo likes jazz")
    assert kept.id == a.id
    assert [f.id for f in mem.facts(REF).facts] == [a.id]


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("memory_add", {}, "needs the argument 'content'"),
        ("memory_add", {"content": ""}, "content must be 1 to 2000 characters"),
        ("memory_add", {"content": "x" * 2001}, "content must be 1 to 2000"),
        ("memory_add", {"content": "x", "scope": "other"}, "takes no argument 'scope'"),
        ("memory_add", {"content": 5}, "content must be a string"),
        ("memory_add", {"content": "x", "tags": "t"}, "tags must be a list"),
        ("memory_add", {"content": "x", "tags": [""]}, "tags[0] must be 1 to 128"),
        ("memory_search", {"query": "x", "topK": 21}, "topK must be from 1 to 20"),
        ("memory_search", {"query": "x", "topK": True}, "topK must be an integer"),
        ("memory_update", {"id": "f_nope", "content": "x"}, "no fact 'f_nope'"),
        ("memory_merge", {"ids": ["f_1"], "content": "x"}, "ids must hold 2 to 10 items"),
        ("memory_merge", {"ids": ["f_1"] * 11, "content": "x"}, "ids must hold 2 to 10"),
        ("memory_merge", {"ids": ["f_1", "f_1"], "content": "x"}, "must name 2 to 10 facts"),
        ("memory_merge", {"ids": ["f_1", "f_2"]}, "needs the argument 'content'"),
        ("memory_merge", {"ids": ["f_1", "f_2"], "content": "x"}, "no fact 'f_1'"),
    ],
)
def test_refusals_are_sentences_that_write_nothing(
    mem: engram.Memory, target: Target, name: str, args: dict[str, Any], says: str
) -> None:
    mem.remember(REF, "something to keep")
    before = stores.rows(target, ROWS)
    result = _tools(mem)[name](args)
    assert result.is_error and says in result.text, result.text
    assert result.text.startswith(f"{name} failed: ")
    assert stores.rows(target, ROWS) == before


def test_the_agent_never_reaches_another_scope(mem: engram.Memory) -> None:
    theirs = mem.remember(OTHER, "their secret plan")
    mine = mem.remember(REF, "my own plan")
    t = _tools(mem)
    for name, args in (  # another scope's id answers alike whatever the tool
        ("memory_update", {"id": theirs.id, "content": "changed"}),
        ("memory_merge", {"ids": [theirs.id, mine.id], "content": "one plan"}),
        ("memory_delete", {"id": theirs.id}),
    ):
        result = t[name](args)
        assert result.is_error and "no fact" in result.text
    assert theirs.id not in _ok(t["memory_search"], {"query": "secret plan"})
    assert mem.fact(OTHER, theirs.id).content == "their secret plan"


def test_without_an_embedder_search_reads_words_and_add_is_refused(target: Target) -> None:
    with engram.open(target, embedder=None) as plain:
        t = _tools(plain)
        added = t["memory_add"]({"content": "Ana drinks tea"})
        assert added.is_error and "embed" in added.text.lower()
        assert _ok(t["memory_search"], {"query": "tea"}) == "No memory matches."


def test_a_visitor_not_signed_in_is_told_so() -> None:
    from engram.core import tools
    from engram.core.people import NOT_SIGNED_IN

    answering = tools.answering(NOT_SIGNED_IN)
    assert [t.name for t in answering] == NAMES
    for tool in answering:
        assert tool(_minimal(tool)) == engram.ToolResult(NOT_SIGNED_IN)
        assert tool({"bogus": 1}).is_error  # its arguments are still checked


def _minimal(tool: engram.Tool) -> dict[str, Any]:
    values = {"content": "x", "query": "x", "id": "f_1", "ids": ["f_1", "f_2"]}
    return {k: values[k] for k in tool.parameters["required"]}


def test_reflect_runs_the_consolidation_cycle_and_is_absent_when_it_is_off(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    with engram.open(target, embedder=hashing) as mem:
        mem.remember_many(REF, ["Ana moved to Lyon in 2020.", "ana moved to Lyon in 2020!"])
        reflect = _tools(mem)["memory_reflect"]
        before = _entries(mem)
        assert _ok(reflect, {"dryRun": True}).startswith("Would change 1 in all. merge: 1 merged")
        assert _entries(mem) == before and mem.count(REF) == 2
        assert _ok(reflect, {}).startswith("Changed 1 in all. merge: 1 merged")
        assert _entries(mem) == before + 1 and mem.count(REF) == 1
        assert _ok(reflect, {}) == "Nothing to tidy: the memory is consolidated."
        refused = reflect({"dryRun": "yes"})
        assert refused.is_error and "dryRun" in refused.text
    with engram.open(target, embedder=hashing, self_improve=False) as mem:
        assert [t.name for t in mem.create_tools(REF)] == NAMES
        assert [t.name for t in mem.acting(actor="a").create_tools(REF)] == NAMES


def test_merge_without_content_takes_the_chat_model_s_words_when_they_lose_nothing(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    from chat_server import ChatEndpoint

    endpoint = ChatEndpoint()
    try:
        with engram.open(target, embedder=hashing, chat=endpoint.chat()) as mem:
            rent = mem.remember(REF, "Ana pays 950 a month for the flat")
            lyon = mem.remember(REF, "Ana's flat is in Lyon")
            endpoint.answers[lyon.content] = "Ana pays 950 a month for her flat in Lyon."
            merge = _tools(mem)["memory_merge"]
            assert merge.parameters["required"] == ["ids"]
            text = _ok(merge, {"ids": [rent.id, lyon.id]})
            merged = "Ana pays 950 a month for her flat in Lyon."
            assert text.endswith(f"into [{_id(text)}]: {merged}")
            assert endpoint.asked()[-1] == "Notes:\n1. " + rent.content + "\n2. " + lyon.content

            bike = mem.remember(REF, "Bo bought a bike for 300")
            red = mem.remember(REF, "Bo's bike is red")
            endpoint.answers[red.content] = "Bo bought a red bike."  # 300 left out
            before = _entries(mem)
            refused = merge({"ids": [bike.id, red.id]})
            assert refused.is_error and "leave out 300" in refused.text
            with pytest.raises(engram.UpstreamFailure, match="leave out 300"):
                mem.merge(REF, [bike.id, red.id])
            assert _entries(mem) == before and mem.count(REF) == 3
    finally:
        endpoint.close()


def test_merge_without_content_or_a_chat_model_is_refused(mem: engram.Memory) -> None:
    a, b = mem.remember_many(REF, ["one", "two"])
    assert _tools(mem)["memory_merge"].parameters["required"] == ["ids", "content"]
    with pytest.raises(engram.InvalidInput, match="content is required"):
        mem.merge(REF, [a.id, b.id])
    assert mem.count(REF) == 2


def test_a_tool_writes_exactly_when_it_says_so(mem: engram.Memory) -> None:
    # Who may call a tool (an ended agent only those that do not write: its routes and
    # MCP ask each tool) rests on the tool's own declaration; each is held to it here.
    from engram.mcp import catalogue

    a, b = (mem.remember(REF, words).id for words in ("Ana drinks tea", "Ana likes tea"))
    c = mem.remember(REF, "Bo rides a bike").id
    mem.graph.upsert_entity(REF, "Ana")
    mem.working.set(REF, "plan", {"step": 1})
    calls = {
        "memory_add": {"content": "Bo swims on Sundays"},
        "memory_search": {"query": "tea"},
        "memory_update": {"id": c, "content": "Bo rides a red bike"},
        "memory_merge": {"ids": [a, b], "content": "Ana drinks and likes tea"},
        "memory_delete": {"id": c},
        "memory_list": {},
        "graph_search": {"query": "Ana"},
        "graph_neighbourhood": {"entity": "Ana"},
        "working_get": {"key": "plan"},
        "working_set": {"key": "plan", "value": {"step": 2}},
    }
    served = catalogue.agent(mem, REF)
    assert {t.name for t in served} == {*calls, "memory_reflect"} - (
        set() if mem.self_improving else {"memory_reflect"}
    )
    for tool in served:
        if tool.name == "memory_reflect":  # may find nothing to change: declared only
            assert tool.writes and engram.core.tools.writes(tool.name)
            continue
        before = _entries(mem)
        _ok(tool, calls[tool.name])
        assert (_entries(mem) > before) is tool.writes, tool.name
        if tool.name in NAMES:  # what the tools route asks before making the tools
            assert engram.core.tools.writes(tool.name) is tool.writes, tool.name


def test_the_tools_take_what_the_library_takes(mem: engram.Memory) -> None:
    from engram.core import limits
    from engram.core.graph.models import MAX_TYPE_CHARS
    from engram.mcp import catalogue

    tools = {t.name: t for t in catalogue.agent(mem, REF)}
    label = "t" * limits.MAX_LABEL_CHARS
    fact = _id(_ok(tools["memory_add"], {"content": "Ana swims", "tags": [label], "type": label}))
    assert mem.fact(REF, fact).tags == (label,)
    _ok(tools["memory_search"], {"query": "swims " * (limits.MAX_QUERY_CHARS // 6)})
    _ok(
        tools["graph_search"],
        {"query": "q" * limits.MAX_QUERY_CHARS, "types": ["p" * MAX_TYPE_CHARS]},
    )
    for name, args in (
        ("memory_add", {"content": "x", "tags": [label + "t"]}),
        ("memory_search", {"query": "q" * (limits.MAX_QUERY_CHARS + 1)}),
        ("memory_update", {"id": "f" * (limits.MAX_ID_CHARS + 1), "content": "x"}),
    ):
        assert tools[name](args).is_error, name
