"""``engram graph`` on both backends: entities, relation types, relations over time, walks;
``--json`` as the service answers (by field name), lines for people, refusals that exit
with the error's code and write nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

import engram
import stores
from chat_server import ChatEndpoint
from engram.cli.main import main
from stores import Target

EARLIER, LATER = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
GRAPH_ROWS = """SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM relations),
    (SELECT count(*) FROM relation_types), (SELECT count(*) FROM ledger)"""


@pytest.fixture
def db(target: Target) -> str:
    return str(target)


def graph(
    capsys: pytest.CaptureFixture[str], db: str, *argv: str, resource: str = "user-42"
) -> tuple[int, str, str]:
    code = main(["graph", *argv, "--db", db, "--resource", resource, "--embedder", "none"])
    out, err = capsys.readouterr()
    return code, out, err


def graph_json(capsys: pytest.CaptureFixture[str], db: str, *argv: str, **kw: str) -> Any:
    code, out, err = graph(capsys, db, "--json", *argv, **kw)
    assert code == 0, err
    return json.loads(out)


def test_entities_add_show_search_and_rm(capsys: pytest.CaptureFixture[str], db: str) -> None:
    add = ["entity", "add", "Ana Lima", "--type", "person", "--alias", "Ana", "A. Lima"]
    ana = graph_json(capsys, db, *add, "--summary", "paints birds")
    assert ana["id"].startswith("e_") and ana["aliases"] == ["A. Lima", "Ana"]
    assert "created_at" in ana  # field names, as the rest of --json
    code, out, _ = graph(capsys, db, "entity", "show", "a. lima")
    assert code == 0
    assert out.strip() == f"{ana['id']}  Ana Lima (person)  aka A. Lima, Ana  - paints birds"
    graph_json(capsys, db, "entity", "add", "Lima", "--type", "place")
    found = graph_json(capsys, db, "entity", "search", "lima", "--mode", "text")["entities"]
    assert {e["name"] for e in found} == {"Ana Lima", "Lima"}
    assert all(e["text_rank"] is not None and e["score"] > 0 for e in found)
    typed = graph_json(capsys, db, "entity", "search", "lima", "--mode", "text", "--type", "place")
    assert [e["name"] for e in typed["entities"]] == ["Lima"]
    top = graph_json(capsys, db, "entity", "search", "lima", "--mode", "text", "--top-k", "1")
    assert len(top["entities"]) == 1
    code, out, _ = graph(capsys, db, "entity", "rm", "Ana")
    assert code == 0 and out.startswith(f"deleted {ana['id']}  Ana Lima")
    code, _, err = graph(capsys, db, "entity", "show", "Ana")
    assert code == 3 and "error[not_found]" in err


def test_relations_over_time(capsys: pytest.CaptureFixture[str], db: str) -> None:
    for name in ("Ana", "Lisbon", "Porto"):
        graph_json(capsys, db, "entity", "add", name)
    declared = graph_json(capsys, db, "type", "lives_in", "--single-valued")
    assert declared == {"type": "lives_in", "single_valued": True, "changed": True}
    code, out, _ = graph(capsys, db, "type", "lives_in", "--single-valued")
    assert (code, out.strip()) == (0, "lives_in is single-valued (it already was)")
    relate = ["relate", "Ana", "lives_in"]
    first = graph_json(capsys, db, *relate, "Lisbon", "--valid-at", "2023-01-01T00:00:00Z")
    second = graph_json(capsys, db, *relate, "Porto", "--valid-at", "2023-07-20T00:00:00Z")
    assert first["valid_at"] == "2023-01-01T00:00:00Z"
    code, out, _ = graph(capsys, db, "relations")
    assert out.splitlines() == [f"{second['id']}  Ana -[lives_in]-> Porto  2023-07-20 to now"]
    held = graph_json(capsys, db, "relations", "--as-of", "2023-03-01T00:00:00Z")["relations"]
    assert [r["id"] for r in held] == [first["id"]]
    every = graph_json(capsys, db, "relations", "--all", "--entity", "Ana", "--type", "lives_in")
    assert [r["id"] for r in every["relations"]] == [first["id"], second["id"]]
    assert (
        graph_json(capsys, db, "relations", "--all", "--limit", "1")["relations"][0]["id"]
        == (first["id"])
    )
    code, out, _ = graph(capsys, db, "expire", second["id"], "--at", "2024-01-01T00:00:00Z")
    assert code == 0 and out.strip().endswith("2023-07-20 to 2024-01-01  [retired]")
    assert graph_json(capsys, db, "relations")["relations"] == []
    gone = graph_json(capsys, db, "unrelate", second["id"])
    assert gone["id"] == second["id"]
    every = graph_json(capsys, db, "relations", "--all")["relations"]
    assert [r["id"] for r in every] == [first["id"]]
    graph_json(capsys, db, "type", "lives_in", "--multi-valued")
    graph_json(capsys, db, *relate, "Porto")
    assert len(graph_json(capsys, db, "relations", "--entity", "Ana")["relations"]) == 1


def test_a_relation_cites_facts(capsys: pytest.CaptureFixture[str], target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        fact = mem.remember(engram.ResourceRef("user-42"), "Ana met Bo at the market")
    db = str(target)
    for name in ("Ana", "Bo"):
        graph_json(capsys, db, "entity", "add", name)
    made = graph_json(capsys, db, "relate", "Ana", "knows", "Bo", "--fact", fact.id)
    assert made["facts"] == [fact.id]
    code, out, _ = graph(capsys, db, "relations")
    assert code == 0 and out.strip().endswith("Ana -[knows]-> Bo  (1 fact)")


def test_neighbours_and_traversals(capsys: pytest.CaptureFixture[str], db: str) -> None:
    for name in ("Ana", "Bo", "Cy", "Acme"):
        graph_json(capsys, db, "entity", "add", name)
    for source, kind, target in (("Ana", "knows", "Bo"), ("Bo", "knows", "Cy")):
        graph_json(capsys, db, "relate", source, kind, target)
    graph_json(capsys, db, "relate", "Acme", "employs", "Cy")
    around = graph_json(capsys, db, "neighbours", "Bo")
    assert [e["name"] for e in around["entities"]] == ["Bo", "Ana", "Cy"]
    assert around["truncated"] is False and around["facts"] == []
    code, out, _ = graph(capsys, db, "neighbours", "Bo", "--depth", "2", "--limit", "2")
    lines = out.splitlines()
    assert lines[0].endswith("  Bo") and lines[-1] == "  (cut short: raise --limit to see more)"
    code, out, _ = graph(capsys, db, "traverse", "Ana", "--depth", "3")
    assert code == 0
    assert out.splitlines() == [
        "Ana -[knows]-> Bo",
        "Ana -[knows]-> Bo -[knows]-> Cy",
        "Ana -[knows]-> Bo -[knows]-> Cy <-[employs]- Acme",
    ]
    outward = graph_json(capsys, db, "traverse", "Cy", "--direction", "out")
    assert outward == {"paths": []}
    typed = graph_json(capsys, db, "traverse", "Cy", "--type", "employs", "--limit", "5")
    assert len(typed["paths"]) == 1 and typed["paths"][0]["relations"][0]["type"] == "employs"


@pytest.mark.parametrize(
    ("argv", "exit_code"),
    [
        (["entity", "add", "   "], 2),
        (["entity", "add", "Eve", "--type", "t" * 129], 2),
        (["entity", "add", "Eve", "--alias", *[f"a{i}" for i in range(65)]], 2),
        (["entity", "add", "Robert", "--alias", "ana"], 4),  # Ana's alias: a conflict
        (["relate", "Ana", "knows", "Nobody"], 3),
        (["relate", "Ana", "knows", "Bo", "--fact", "f_missing"], 3),
        (["relate", "Ana", "knows", "Bo", "--valid-at", "2024-01-01"], 2),
        (["relate", "Ana", "knows", "Bo", "--valid-at", LATER, "--invalid-at", EARLIER], 2),
        (["type", "lives_in"], 2),
        (["type", "lives_in", "--single-valued", "--multi-valued"], 2),
        (["neighbours", "Ana", "--depth", "4"], 2),
        (["traverse", "Ana", "--direction", "up"], 2),
        (["traverse", "Ana", "--limit", "1001"], 2),
        (["expire", "r_missing"], 3),
        (["unrelate", "r_missing"], 3),
        (["entity", "rm", "Nobody"], 3),
        (["extract", "--with", "spelling"], 2),
        (["extract", "--limit", "5"], 2),  # the rules read every fact
        (["extract", "--with", "llm"], 5),  # no ENGRAM_LLM_URL here
        (["extract", "--fact", "f_missing"], 3),
    ],
)
def test_refusals_exit_with_their_code_and_write_nothing(
    capsys: pytest.CaptureFixture[str], db: str, target: Target, argv: list[str], exit_code: int
) -> None:
    graph_json(capsys, db, "entity", "add", "Ana")
    graph_json(capsys, db, "entity", "add", "Bo")
    before = stores.rows(target, GRAPH_ROWS)
    code, _, err = graph(capsys, db, *argv)
    assert code == exit_code, err
    assert err.startswith("error[")
    assert stores.rows(target, GRAPH_ROWS) == before


def test_another_resource_s_graph_is_not_there(capsys: pytest.CaptureFixture[str], db: str) -> None:
    secret = graph_json(capsys, db, "entity", "add", "Secret Name", resource="other")
    graph_json(capsys, db, "entity", "add", "Bo", resource="other")
    hidden = graph_json(capsys, db, "relate", "Secret Name", "knows", "Bo", resource="other")
    for argv in (
        ["entity", "show", secret["id"]],
        ["entity", "rm", "Secret Name"],
        ["neighbours", secret["id"]],
        ["expire", hidden["id"]],
        ["unrelate", hidden["id"]],
    ):
        code, _, err = graph(capsys, db, *argv)
        assert code == 3 and "error[not_found]" in err, argv
    assert graph_json(capsys, db, "relations", "--all")["relations"] == []
    assert (
        graph_json(capsys, db, "relations", resource="other")["relations"][0]["id"]
        == (hidden["id"])
    )


def test_extract_reads_facts_by_rules_or_a_chat_model(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["remember", "ziggy chased the red ball", "--db", db, "--resource", "user-42"]) == 0
    capsys.readouterr()
    code, out, _ = graph(capsys, db, "extract")
    assert code == 0 and out == "read 1 fact with rules: nothing new\n"
    served = ChatEndpoint()
    try:
        served.answers["ziggy chased the red ball"] = {
            "entities": [{"name": "Ziggy", "type": "animal"}, {"name": "Bruno", "type": None}],
            "relations": [],
        }
        monkeypatch.setenv("ENGRAM_LLM_URL", served.url)
        monkeypatch.setenv("ENGRAM_LLM_MODEL", "test-chat")
        code, out, err = graph(capsys, db, "extract", "--with", "llm", "--limit", "10")
        assert code == 0, err
        assert out.splitlines() == [
            "read 1 fact with llm: 1 entity new",
            "  1 entity not in its fact's words, dropped",
        ]
        again = graph_json(capsys, db, "extract", "--with", "llm")
        assert (again["facts_read"], again["extractor"]) == (0, "llm")
        assert graph_json(capsys, db, "entity", "show", "ziggy")["origin"] == "extracted"
    finally:
        served.close()


def test_graph_commands_need_a_resource(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code = main(["graph", "entity", "add", "Ana", "--db", db])
    _, err = capsys.readouterr()
    assert code == 2 and "'engram graph entity add' needs --resource ID" in err


def test_a_json_option_is_read_as_json(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """An operation's JSON object parameter is one option of JSON text on the command line
    (an entity's attributes, as a fact's metadata); anything else exits 2, writing nothing."""
    ana = graph_json(capsys, db, "entity", "add", "Ana", "--attributes", '{"born": 1990}')
    assert ana["attributes"] == {"born": 1990}
    before = stores.rows(db, GRAPH_ROWS)
    for text in ("[1990]", "{born: 1990}"):
        code, _, err = graph(capsys, db, "entity", "add", "Bo", "--attributes", text)
        assert code == 2 and "expected a JSON object" in err, err
    assert stores.rows(db, GRAPH_ROWS) == before
