"""The llm extractor on both backends, against a real chat endpoint served on 127.0.0.1
by the test (canned answers per fact text): what a fact's words hold of an answer is
written in one ledger entry, the rest is dropped and counted, a malformed answer is
rejected, a failing call writes nothing and leaves the backlog as it was, and the graph's
LLM part follows the facts (correct, forget, restore) without touching what callers
asserted. The answers' reading itself (parse, ground) is tested apart, without a server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

import engram
import stores
from chat_server import ChatEndpoint
from engram import CapabilityMissing, Conflict, InvalidInput, NotFound, ResourceRef
from engram import UpstreamFailure as Upstream
from engram.core.graph import llm
from engram.core.graph.models import ExtractionReport
from engram.core.memory import Memory
from engram.opening import open_store
from stores import Target, WatchedStore, rows

REF = ResourceRef("reader")
ZIGGY = "Ziggy was chasing the red ball near Porto."
ZIGGY_SAYS = {
    "entities": [
        {"name": "Ziggy", "type": "animal"},
        {"name": "red ball", "type": "object"},
        {"name": "Porto", "type": "place"},
    ],
    "relations": [
        {
            "source": "Ziggy",
            "target": "red ball",
            "type": "chased",
            "valid_at": "2021-03-04T05:06:07+01:00",
        },
        {"source": "ziggy", "target": "PORTO", "type": "near"},
    ],
}


@pytest.fixture
def endpoint() -> Iterator[ChatEndpoint]:
    served = ChatEndpoint()
    yield served
    served.close()


@pytest.fixture
def mem(target: Target, endpoint: ChatEndpoint) -> Iterator[Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(16), chat=endpoint.chat()) as m:
        yield m


def _groundings(target: Target, extractor: str = "llm") -> set[tuple[str, str]]:
    return stores.groundings(target, extractor)


def _entities(target: Target) -> set[tuple[str, str]]:
    found = rows(target, "SELECT norm, origin FROM entities WHERE scope = ?", (REF.key,))
    return {(str(n), str(o)) for n, o in found}


def _relations(mem: Memory) -> set[tuple[str, str, str, str, tuple[str, ...]]]:
    names = {}
    found = mem.graph.relations(REF, include_expired=True)
    for r in found:
        for end in (r.source, r.target):
            names[end] = mem.graph.entity(REF, end).name
    return {(names[r.source], r.type, names[r.target], r.origin, r.facts) for r in found}


# -- what is written ----------------------------------------------------------------
def test_what_the_facts_words_hold_is_written_in_one_entry(
    mem: Memory, endpoint: ChatEndpoint, target: Target
) -> None:
    endpoint.answers[ZIGGY] = ZIGGY_SAYS
    fact = mem.remember(REF, ZIGGY)
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "Ziggy")  # it opens the sentence: the rules leave it
    porto = mem.graph.entity(REF, "Porto")  # the rules ground Porto
    before = len(mem.ledger(REF).entries)

    report = mem.graph.extract(REF, extractor="llm")

    assert report == ExtractionReport("llm", facts_read=1, entities_added=2, relations_added=2)
    ziggy, ball = mem.graph.entity(REF, "ziggy"), mem.graph.entity(REF, "Red Ball")
    assert (ziggy.name, ziggy.type, ziggy.origin) == ("Ziggy", "animal", "extracted")
    assert (ball.name, ball.type, ball.origin) == ("red ball", "object", "extracted")
    assert mem.graph.entity(REF, "Porto") == porto  # a known entity is left as it was
    assert _relations(mem) == {
        ("Ziggy", "chased", "red ball", "extracted", (fact.id,)),
        ("Ziggy", "near", "Porto", "extracted", (fact.id,)),
    }
    chased = mem.graph.relations(REF, type="chased")[0]
    assert chased.valid_at == datetime(2021, 3, 4, 4, 6, 7, tzinfo=UTC)
    assert _groundings(target) == {(fact.id, e.id) for e in (ziggy, ball, porto)}
    assert _groundings(target, "rules") == {(fact.id, porto.id)}
    # a name new to the scope is found by the rules where it opens the sentence
    assert [f.id for f in mem.graph.neighbourhood(REF, "Ziggy").facts] == [fact.id]

    [asked] = endpoint.requests
    assert asked.path == "/v1/chat/completions"
    assert asked.body == {
        "model": "test-chat",
        "messages": [
            {"role": "system", "content": llm.SYSTEM},
            {"role": "user", "content": llm.question(ZIGGY, fact.created_at)},
        ],
        "temperature": 0,
    }
    entries = mem.ledger(REF).entries
    assert len(entries) == before + 1
    entry = entries[0]
    assert entry.op == "graph.extract"
    assert sorted((c.kind, c.action) for c in entry.changes) == [
        ("graph", "extract"),
        ("relation", "upsert"),
        ("relation", "upsert"),
    ]
    with pytest.raises(Conflict, match="cannot be reverted"):
        mem.revert(REF, entry.seq)


def test_a_second_extract_reads_nothing(mem: Memory, endpoint: ChatEndpoint) -> None:
    endpoint.answers[ZIGGY] = ZIGGY_SAYS
    mem.remember_many(REF, [ZIGGY, "Nothing to see here."])
    assert mem.graph.extract(REF, extractor="llm").facts_read == 2
    before = mem.ledger(REF).entries
    assert mem.graph.extract(REF, extractor="llm") == ExtractionReport("llm")
    assert len(endpoint.requests) == 2  # nobody was asked again
    assert mem.ledger(REF).entries == before  # and nothing written


def test_what_the_words_do_not_hold_is_dropped_and_counted(
    mem: Memory, endpoint: ChatEndpoint, target: Target
) -> None:
    # the rules leave "Zorwen" out (a sentence's first word that no list holds), so the
    # model's naming is what adds it
    text = "Zorwen baked banana bread with Bo in Lisbon."
    endpoint.answers[text] = {
        "entities": [
            {"name": "Zorwen", "type": "person"},
            {"name": "Ban"},  # only inside a word
            {"name": "Paris", "type": "place"},  # nowhere
            {"name": " ", "type": None},  # nothing
            {"name": "zorwen", "type": "robot"},  # named twice: the first naming stays
        ],
        "relations": [
            {"source": "Zorwen", "target": "Paris", "type": "visited"},  # an end not kept
            {"source": "Zorwen", "target": "Bo", "type": "friend_of", "valid_at": "2021-05-01"},
            {"source": "Zorwen", "target": "Lisbon", "type": "lives_in", "valid_at": "yesterday"},
            {"source": "Zorwen", "target": "Zorwen", "type": "is"},  # a self-loop
            {"source": "Zorwen", "target": "Bo", "type": "  "},  # no type
            {"source": "Zorwen", "target": "Cy", "type": "knows"},  # known, not in the text
            {"source": "zorwen", "target": "bo", "type": "friend_of"},  # the same again
        ],
    }
    mem.graph.upsert_entity(REF, "Cy", type="person")
    fact = mem.remember(REF, text)

    report = mem.graph.extract(REF, extractor="llm")

    assert report == ExtractionReport(
        "llm",
        facts_read=1,
        entities_added=1,
        relations_added=2,
        entities_dropped=3,
        relations_dropped=4,
        times_dropped=2,
    )
    assert mem.graph.entity(REF, "Zorwen").type == "person"
    assert ("paris", "extracted") not in _entities(target)
    assert ("ban", "extracted") not in _entities(target)
    assert _relations(mem) == {
        ("Zorwen", "friend_of", "Bo", "extracted", (fact.id,)),
        ("Zorwen", "lives_in", "Lisbon", "extracted", (fact.id,)),
    }
    assert all(r.valid_at is None for r in mem.graph.relations(REF))


MALFORMED = {
    "not JSON": "Sure! Ziggy is a dog.",
    "a list": "[]",
    "no relations": json.dumps({"entities": [{"name": "Ziggy"}]}),
    "a key not asked for": json.dumps({**ZIGGY_SAYS, "summary": "a dog"}),
    "a name that is no string": json.dumps({"entities": [{"name": 7}], "relations": []}),
    "too many entities": json.dumps(
        {"entities": [{"name": "Ziggy"}] * (llm.MAX_ENTITIES + 1), "relations": []}
    ),
    "an over-long type": json.dumps(
        {"entities": [{"name": "Ziggy", "type": "t" * 129}], "relations": []}
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_rejected_whole_and_its_fact_read(
    mem: Memory, endpoint: ChatEndpoint, target: Target, case: str
) -> None:
    endpoint.answers[ZIGGY] = MALFORMED[case]
    mem.remember(REF, ZIGGY)
    graph = _entities(target), _groundings(target)

    report = mem.graph.extract(REF, extractor="llm")

    assert report == ExtractionReport("llm", facts_read=1, answers_rejected=1)
    assert (_entities(target), _groundings(target)) == graph  # nothing of it kept
    assert mem.graph.relations(REF) == []
    assert mem.graph.extract(REF, extractor="llm").facts_read == 0  # at temperature 0: once


def test_an_answer_in_a_code_fence_is_read(mem: Memory, endpoint: ChatEndpoint) -> None:
    endpoint.answers[ZIGGY] = f"```json\n{json.dumps(ZIGGY_SAYS, indent=2)}\n```"
    mem.remember(REF, ZIGGY)
    assert mem.graph.extract(REF, extractor="llm").relations_added == 2


# -- failures write nothing ---------------------------------------------------------
def _failing(endpoint: ChatEndpoint) -> None:
    endpoint.answers["The second fact names Bo."] = (500, b'{"error": "overloaded"}')


def _stalling(endpoint: ChatEndpoint) -> None:
    endpoint.delay = 60.0  # far past the timeout, however loaded the machine


@pytest.mark.parametrize(
    ("breaks", "words"),
    [(_failing, "answered HTTP 500"), (_stalling, "did not answer within 1 s")],
)
def test_a_failing_call_writes_nothing_and_the_backlog_stays(
    target: Target,
    endpoint: ChatEndpoint,
    breaks: Callable[[ChatEndpoint], None],
    words: str,
) -> None:
    endpoint.answers[ZIGGY] = ZIGGY_SAYS
    with engram.open(
        target, embedder=engram.HashingEmbedder(16), chat=endpoint.chat(timeout=1.0)
    ) as mem:
        mem.remember_many(REF, [ZIGGY, "The second fact names Bo."])
        graph = _entities(target), _groundings(target), _groundings(target, "rules")
        before = mem.ledger(REF).entries
        breaks(endpoint)
        with pytest.raises(Upstream, match=words):
            mem.graph.extract(REF, extractor="llm")
        assert (_entities(target), _groundings(target), _groundings(target, "rules")) == graph
        assert mem.graph.relations(REF) == []
        assert mem.ledger(REF).entries == before
        assert rows(target, "SELECT count(*) FROM graph_reads")[0][0] == 0
        endpoint.answers.clear()
        endpoint.answers[ZIGGY] = ZIGGY_SAYS
        endpoint.delay = 0.0
        assert mem.graph.extract(REF, extractor="llm").facts_read == 2  # the backlog stayed


class _Chat:
    """A chat model in this process: it names the last word of each text, notes the
    transactions open when asked, and may do something in between (``meanwhile``)."""

    model = "in-process"

    def __init__(self, watched: WatchedStore) -> None:
        self.watched = watched
        self.open_when_asked: list[int] = []
        self.meanwhile: Callable[[str], None] = lambda asked: None

    def complete(self, system: str, user: str) -> str:
        self.open_when_asked.append(self.watched.open)
        self.meanwhile(user)
        last = user.split()[-1].strip(".")
        return json.dumps({"entities": [{"name": last}], "relations": []})


def test_the_model_is_asked_outside_any_transaction_and_a_fact_changed_meanwhile_is_skipped(
    target: Target,
) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as other:
        first, second = other.remember_many(REF, ["one names quill.", "two names rook."])
        watched = WatchedStore(open_store(target))
        chat = _Chat(watched)

        def correct_the_first(asked: str) -> None:
            if asked.endswith("one names quill."):
                other.correct(REF, first.id, "one names sable.")

        chat.meanwhile = correct_the_first
        with Memory(watched, engram.HashingEmbedder(16), chat=chat) as mem:  # type: ignore[arg-type]
            report = mem.graph.extract(REF, extractor="llm")
            assert chat.open_when_asked == [0, 0]
            assert (report.facts_read, report.facts_skipped) == (1, 1)
            rook = mem.graph.entity(REF, "rook")
            assert _groundings(target) == {(second.id, rook.id)}
            with pytest.raises(NotFound):
                mem.graph.entity(REF, "quill")  # read from words the fact no longer has
            chat.meanwhile = lambda asked: None
            again = mem.graph.extract(REF, extractor="llm")  # its new words are unread
            assert (again.facts_read, again.facts_skipped) == (1, 0)
            sable = mem.graph.entity(REF, "sable")
            assert _groundings(target) == {(second.id, rook.id), (first.id, sable.id)}


# -- the graph follows the facts ----------------------------------------------------
def test_a_corrected_fact_loses_what_the_model_read_and_returns_to_the_backlog(
    mem: Memory, endpoint: ChatEndpoint, target: Target
) -> None:
    endpoint.answers[ZIGGY] = ZIGGY_SAYS
    fact = mem.remember(REF, ZIGGY)
    mem.graph.extract(REF, extractor="llm")
    mem.correct(REF, fact.id, "Ziggy slept near Porto.")
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "red ball")  # the model read it in words that are gone
    assert mem.graph.relations(REF, include_expired=True) == []
    assert _groundings(target) == set()
    # the words back (a revert), before any extract: unread again, read as they were
    mem.revert(REF, mem.ledger(REF, limit=1).entries[0].seq)
    assert mem.graph.extract(REF, extractor="llm").relations_added == 2
    assert mem.graph.entity(REF, "red ball").origin == "extracted"
    mem.correct(REF, fact.id, "Ziggy slept near Porto.")
    assert mem.graph.extract(REF, extractor="llm").facts_read == 1
    assert endpoint.asked()[-1].endswith("Ziggy slept near Porto.")
    assert len(endpoint.requests) == 3


def test_forgetting_takes_what_the_model_read_and_never_what_was_asserted(
    mem: Memory, endpoint: ChatEndpoint, target: Target
) -> None:
    text, also = "Ziggy was fond of Bo.", "Bo met ziggy again."  # no rule finds Ziggy
    ziggy_likes_bo = {"source": "Ziggy", "target": "Bo", "type": "likes"}
    endpoint.answers[text] = {
        "entities": [{"name": "Ziggy"}, {"name": "Bo", "type": "person"}],
        "relations": [ziggy_likes_bo, {"source": "Bo", "target": "Ziggy", "type": "knows"}],
    }
    endpoint.answers[also] = {"entities": [{"name": "ziggy"}], "relations": [ziggy_likes_bo]}
    bo = mem.graph.upsert_entity(REF, "Bo", type="dog")
    mel = mem.graph.upsert_entity(REF, "Mel")
    fact, other = mem.remember_many(REF, [text, also])
    asserted = mem.graph.upsert_relation(REF, "Bo", mel.id, "knows", facts=[fact.id])

    report = mem.graph.extract(REF, extractor="llm")

    assert (report.entities_added, report.relations_added) == (1, 2)  # Ziggy; likes, knows
    ziggy = mem.graph.entity(REF, "Ziggy")
    assert mem.graph.entity(REF, "Bo") == bo  # asserted: the caller's type stays
    assert _groundings(target) == {(fact.id, ziggy.id), (fact.id, bo.id), (other.id, ziggy.id)}
    likes = mem.graph.relations(REF, type="likes")
    assert [set(r.facts) for r in likes] == [{fact.id, other.id}]  # one relation, two supports

    mem.forget(REF, fact.id)
    left = mem.graph.entity(REF, "Ziggy")  # the other fact still grounds it; its type,
    assert (left.id, left.origin) == (ziggy.id, ziggy.origin)  # from mentions, went too
    assert (ziggy.type, left.type) == ("person", None)  # "Ziggy was fond" was the one
    assert [r.facts for r in mem.graph.relations(REF, type="likes")] == [(other.id,)]
    assert [r.id for r in mem.graph.relations(REF, type="knows")] == [asserted.id]

    mem.forget(REF, other.id, hard=True)
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "Ziggy")
    assert mem.graph.entity(REF, "Bo") == bo
    assert [r.id for r in mem.graph.relations(REF)] == [asserted.id]
    assert all("ziggy" not in norm for norm, _ in _entities(target))
    assert _groundings(target) == set()

    mem.restore(REF, fact.id)  # back, and unread again
    assert mem.graph.extract(REF, extractor="llm").facts_read == 1
    assert mem.graph.entity(REF, "Ziggy").origin == "extracted"


def test_a_deleted_model_entity_stays_deleted_and_its_delete_is_not_reverted(
    mem: Memory, endpoint: ChatEndpoint
) -> None:
    endpoint.answers[ZIGGY] = ZIGGY_SAYS
    mem.remember(REF, ZIGGY)
    mem.graph.extract(REF, extractor="llm")
    mem.graph.delete_entity(REF, "red ball")
    assert [r.type for r in mem.graph.relations(REF)] == ["near"]
    assert mem.graph.extract(REF, extractor="llm").facts_read == 0  # not asked again
    [entry] = mem.ledger(REF, limit=1).entries
    with pytest.raises(Conflict, match="no fact's words ground it now"):
        mem.revert(REF, entry.seq)  # its grounding went with it: it would be held by nothing
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "red ball")
    assert mem.ledger(REF, limit=1).entries == [entry]


def test_a_single_valued_type_keeps_what_is_held(mem: Memory, endpoint: ChatEndpoint) -> None:
    text = "Ana moved to Lisbon from Porto."
    endpoint.answers[text] = {
        "entities": [{"name": "Ana"}, {"name": "Lisbon"}],
        "relations": [{"source": "Ana", "target": "Lisbon", "type": "lives_in"}],
    }
    mem.graph.declare_relation_type(REF, "lives_in", single_valued=True)
    mem.graph.upsert_entity(REF, "Ana")
    held = mem.graph.upsert_relation(
        REF, "Ana", mem.graph.upsert_entity(REF, "Porto").id, "lives_in"
    )
    mem.remember(REF, text)
    report = mem.graph.extract(REF, extractor="llm")
    assert (report.relations_added, report.relations_dropped) == (0, 1)
    # a model's reading retires nothing (the rules read their own moved_to beside it)
    assert [r for r in mem.graph.relations(REF) if r.extractor != "rules"] == [held]


def test_limit_and_fact_ids_choose_what_is_read(mem: Memory, endpoint: ChatEndpoint) -> None:
    facts = mem.remember_many(REF, ["first fact.", "second fact.", "third fact."])
    assert mem.graph.extract(REF, extractor="llm", limit=2).facts_read == 2
    assert [a.rsplit("\n", 1)[-1] for a in endpoint.asked()] == ["first fact.", "second fact."]
    assert mem.graph.extract(REF, extractor="llm", fact_ids=[facts[0].id]).facts_read == 0
    assert mem.graph.extract(REF, extractor="llm", fact_ids=[facts[2].id]).facts_read == 1
    assert mem.graph.extract(REF, extractor="llm").facts_read == 0
    with pytest.raises(NotFound, match="no live fact"):
        mem.graph.extract(REF, extractor="llm", fact_ids=["f_unknown"])
    assert len(endpoint.requests) == 3


# -- refusals ---------------------------------------------------------------------------
def test_without_a_chat_model_the_llm_extractor_is_missing(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, ZIGGY)
        before = mem.ledger(REF).entries
        with pytest.raises(CapabilityMissing, match="needs ENGRAM_LLM_URL and ENGRAM_LLM_MODEL"):
            mem.graph.extract(REF, extractor="llm")
        assert mem.ledger(REF).entries == before


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"extractor": "gliner"}, "extractor must be one of rules, llm, spacy"),
        ({"extractor": "rules", "limit": 5}, "limit bounds a model extractor"),
        ({"extractor": "llm", "limit": 0}, "limit must be between 1 and 1000"),
        ({"extractor": "llm", "fact_ids": "f_1"}, "fact_ids must be a list"),
    ],
)
def test_bad_arguments_are_refused(mem: Memory, arguments: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidInput, match=words):
        mem.graph.extract(REF, **arguments)


def test_the_rules_still_read_every_fact_or_those_named(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16), extractor="off") as off:
        first, _ = off.remember_many(REF, ["We met Ana Lima in Porto.", "Then Bo called."])
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        report = mem.graph.extract(REF, fact_ids=[first.id])
        assert report == ExtractionReport("rules", facts_read=1, entities_added=2)
        with pytest.raises(NotFound):
            mem.graph.entity(REF, "Bo")
        assert mem.graph.extract(REF) == ExtractionReport("rules", facts_read=2, entities_added=1)


def test_acting_keeps_the_chat_model(mem: Memory, endpoint: ChatEndpoint) -> None:
    endpoint.answers[ZIGGY] = ZIGGY_SAYS
    mem.remember(REF, ZIGGY)
    acting = mem.acting(actor="reader-bot")
    assert acting.chat is mem.chat
    assert acting.graph.extract(REF, extractor="llm").entities_added == 2
    assert mem.ledger(REF, limit=1).entries[0].actor == "reader-bot"


# -- reading answers, without a server ------------------------------------------------
BAD_ANSWERS = [
    "",
    "null",
    '{"entities": []}',
    '{"entities": [], "relations": {}}',
    '{"entities": [{"type": "person"}], "relations": []}',
    '{"entities": [{"name": "A", "kind": "x"}], "relations": []}',
    '{"entities": [{"name": ["A"]}], "relations": []}',
    '{"entities": ["A"], "relations": []}',
    '{"entities": [], "relations": [{"source": "A", "target": "B"}]}',
    '{"entities": [], "relations": [{"source": "A", "target": "B", "type": 1}]}',
    '{"entities": [], "relations": [{"source": "A", "target": "B", "type": "t", "valid_at": 1}]}',
    '{"entities": [{"name": "' + "n" * 257 + '"}], "relations": []}',
    '{"entities": [{"name": "A\\u0000"}], "relations": []}',
    "```\n{}\n```",
    '```json\n{"entities": [], "relations": []}',
    '{"entities": [], "relations": []} and that is all',
    json.dumps(
        {
            "entities": [],
            "relations": [{"source": "A", "target": "B", "type": "t"}] * (llm.MAX_RELATIONS + 1),
        }
    ),
    " " * (llm.MAX_ANSWER_CHARS + 1),
]


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_an_answer_not_of_the_shape_asked_is_malformed(answer: str) -> None:
    with pytest.raises(llm.Malformed):
        llm.parse(answer)


def test_an_answer_of_the_shape_asked_is_read() -> None:
    answer = llm.parse(
        '  ```json\n{"relations": [{"source": " A ", "target": "B", "type": "t", '
        '"valid_at": null}], "entities": [{"name": " Ana ", "type": ""}, {"name": "B", '
        '"type": null}, {"name": "C"}]}\n```\n'
    )
    assert answer == llm.Answer(
        (llm.Named("Ana", None), llm.Named("B", None), llm.Named("C", None)),
        (llm.Related("A", "B", "t", None),),
    )


@pytest.mark.parametrize(
    ("name", "text", "kept"),
    [
        ("Ana", "ana went home", True),
        ("ANA", "Ana's cat", True),
        ("Ana", "Banana bread", False),
        ("Ana", "Anabel came", False),
        ("New York", "we flew to new\n york!", True),
        ("New York", "New Yorker", False),
        ("The Beatles", "I love the Beatles.", True),
        ("Ed Sheeran's", "Ed Sheeran played", True),
        ("@bo_x", "ping @bo_x now", True),
        ("C++", "I write C++ daily", True),
        ("Lisboa", "Lisbon", False),
        ("?!", "?! indeed", False),
    ],
)
def test_an_entity_is_kept_when_its_normal_name_is_whole_words_of_the_text(
    name: str, text: str, kept: bool
) -> None:
    found = llm.ground(llm.Answer((llm.Named(name, None),), ()), text, ())
    assert bool(found.entities) is kept
    assert found.entities_dropped == (not kept)


@pytest.mark.parametrize(
    ("valid_at", "expected", "dropped"),
    [
        ("2021-03-04T05:06:07+01:00", datetime(2021, 3, 4, 4, 6, 7, tzinfo=UTC), 0),
        ("2021-03-04T05:06:07Z", datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC), 0),
        ("2021-03-04T05:06:07", None, 1),  # no offset
        ("2021-03-04", None, 1),
        ("March 2021", None, 1),
        ("0001-01-01T00:00:00+01:00", None, 1),  # before year 1 in UTC
        (None, None, 0),
    ],
)
def test_valid_at_is_kept_only_with_an_offset(
    valid_at: str | None, expected: datetime | None, dropped: int
) -> None:
    answer = llm.Answer(
        (llm.Named("Ana", None), llm.Named("Bo", None)),
        (llm.Related("Ana", "Bo", "knows", valid_at),),
    )
    found = llm.ground(answer, "Ana knows Bo", ())
    assert [link.valid_at for link in found.relations] == [expected]
    assert found.times_dropped == dropped


def test_a_relation_end_the_scope_knows_counts_only_where_the_text_holds_it() -> None:
    answer = llm.Answer(
        (llm.Named("Ana", None),),
        (llm.Related("Ana", "Bo", "knows", None), llm.Related("Ana", "Cy", "knows", None)),
    )
    found = llm.ground(answer, "Ana knows Bo", {"bo", "cy"})
    assert [(r.source, r.target) for r in found.relations] == [("ana", "bo")]
    assert found.relations_dropped == 1


def test_a_models_relation_stands_beside_the_rules_one(mem: Memory, endpoint: ChatEndpoint) -> None:
    text = "Ana works at Orbit Labs."
    endpoint.answers[text] = {
        "entities": [{"name": "Ana"}, {"name": "Orbit Labs"}],
        "relations": [{"source": "Ana", "target": "Orbit Labs", "type": "works_for"}],
    }
    fact = mem.remember(REF, text)
    [rules] = mem.graph.relations(REF)
    report = mem.graph.extract(REF, extractor="llm")
    assert report.relations_added == 1  # what the model keeps never hangs on the rules'
    assert [(r.extractor, r.facts) for r in mem.graph.relations(REF)] == [
        ("rules", (fact.id,)),
        ("llm", (fact.id,)),
    ]
    assert mem.graph.relations(REF)[0] == rules
