"""What recall knows beyond words: the periods a question names, who said a candidate,
the kind of name a question asks for, and each reordering a hybrid recall (on both
backends) without adding a candidate."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

import engram
from engram import ResourceRef
from engram.core.asked import kind, wh
from engram.core.clock import to_us
from engram.core.ranking import Candidate, Traits
from engram.core.signals import (
    NEAREST,
    by_kind,
    by_speaker,
    by_speaker_nearest,
    by_time,
    lists,
    reads_nearest,
)
from engram.core.when import Days, Period, periods, referred
from stores import Target

REF = ResourceRef("signals")
JUNE = datetime(2023, 6, 14, 9, 0, tzinfo=UTC)
JULY = datetime(2023, 7, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When did Melanie go camping in June?", [Period(None, 6)]),
        ("What did she paint in July 2023?", [Period(2023, 7)]),
        ("What did Gina find on 1 February, 2023?", [Period(2023, 2, 1)]),
        ("What did she show on October 13, 2023?", [Period(2023, 10, 13)]),
        ("Who came on the 3rd of May 2023?", [Period(2023, 5, 3)]),
        ("What happened on Sept. 9 2024?", [Period(2024, 9, 9)]),
        ("What happened on 2023-10-13, or in 2023-11?", [Period(2023, 10, 13), Period(2023, 11)]),
        ("How often did he swim in 2022 and during March?", [Period(2022), Period(None, 3)]),
        ("What may I bring to the party?", []),  # "may" is a word before it is a month
        ("What did she do last week?", []),  # relative times are not read
        ("What happened on February 30, 2023?", []),  # no such day
        ("What happened in 2023-13?", []),  # no such month
    ],
)
def test_a_question_names_the_periods_it_states(question: str, expected: list[Period]) -> None:
    assert periods(question) == expected


def _days(first: tuple[int, int, int], last: tuple[int, int, int] | None = None) -> Days:
    return Days(date(*first), date(*(last or first)))


@pytest.mark.parametrize(
    ("question", "named", "first", "last"),
    [
        ("Where was John between August 11 and August 15 2023?", "2023-08-15", "2023-08-11", None),
        ("between 11 and 15 August 2023", "2023-08-15", "2023-08-11", None),
        ("from Aug 30 to Sept. 2, 2023", "2023-09-02", "2023-08-30", None),
        # The year said once, and the first end's month after the last's: a year earlier.
        ("from 28 December to 3 January 2024", "2024-01-03", "2023-12-28", None),
        ("from 15 to 11 August 2023", "2023-08-11", None, None),  # backwards: no range
        ("between February 27 and 30, 2023", None, None, None),  # no such day
        ("from 3 to 5 people", None, None, None),  # no month, no year
        ("between August 11 and 15", None, None, None),  # no year
        # Relative to the day named after it, as "last week" said on that day.
        ("Where was Tim the week before 16 Nov 2023?", "2023-11-16", "2023-11-06", "2023-11-12"),
        ("got it two weeks before Aug 11, 2023", "2023-08-11", "2023-07-24", "2023-07-30"),
        ("on the Sunday before October 25, 2022", "2022-10-25", "2022-10-23", "2022-10-23"),
        ("the Sunday after the 25th of October 2022", "2022-10-25", "2022-10-30", "2022-10-30"),
        ("the weekend before April 10, 2023", "2023-04-10", "2023-04-08", "2023-04-09"),
        ("She finished it last Friday on 23 Jan 2022", "2022-01-23", "2022-01-21", "2022-01-21"),
        ("the week before the wedding", None, None, None),  # no day to count from
    ],
)  # fmt: skip
def test_a_question_names_ranges_and_times_relative_to_a_day_it_names(
    question: str, named: str | None, first: str | None, last: str | None
) -> None:
    # A range's last day is the day named in it (``last`` None).
    expected: list[Period | Days] = []
    if named is not None:
        day = date.fromisoformat(named)
        expected.append(Period(day.year, day.month, day.day))
    if first is not None:
        end = last or named
        assert end is not None
        expected.append(Days(date.fromisoformat(first), date.fromisoformat(end)))
    assert periods(question) == expected
    assert periods(question, JUNE) == expected  # a day named: not when it is asked


ASKED = datetime(2023, 5, 10, 1, 0, tzinfo=timezone(timedelta(hours=3)))  # 9 May in UTC


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I do yesterday?", [_days((2023, 5, 8))]),
        ("Who did we meet last week?", [_days((2023, 5, 1), (2023, 5, 7))]),
        ("What is on tomorrow, and in June?", [Period(None, 6), _days((2023, 5, 10))]),
        ("What did I say three days ago?", [_days((2023, 5, 6))]),
        ("What did I do today?", []),  # the question's own day: every fact would hold
    ],
)
def test_a_question_s_relative_times_are_read_against_when_it_is_asked(
    question: str, expected: list[Period | Days]
) -> None:
    assert periods(question, ASKED) == expected
    assert periods(question) == [p for p in expected if isinstance(p, Period)]


def test_days_hold_and_meet_in_utc() -> None:
    days = _days((2023, 6, 13), (2023, 6, 14))
    assert days.holds(JUNE) and not days.holds(JUNE + timedelta(days=1))
    assert days.holds(
        datetime(2023, 6, 14, 22, 0, tzinfo=timezone(timedelta(hours=-4))) - timedelta(days=1)
    )
    assert not days.holds(datetime(2023, 6, 14, 22, 0, tzinfo=timezone(timedelta(hours=-4))))
    assert days.meets(date(2023, 6, 14), date(2023, 6, 20))
    assert days.meets(date(2023, 6, 1), date(2023, 6, 13))
    assert not days.meets(date(2023, 6, 15), date(2023, 6, 20))


MONDAY = datetime(2023, 5, 8, 23, 30, tzinfo=timezone(timedelta(hours=-2)))  # Tue in UTC


@pytest.mark.parametrize(
    ("words", "first", "last"),
    [
        ("I went yesterday", (2023, 5, 8), (2023, 5, 8)),  # the day before, in UTC
        ("Last  night was fun", (2023, 5, 8), (2023, 5, 8)),
        ("last week I ran", (2023, 5, 1), (2023, 5, 7)),  # the calendar week before
        ("we hiked last weekend", (2023, 5, 6), (2023, 5, 7)),
        ("last month", (2023, 4, 1), (2023, 4, 30)),
        ("last year", (2022, 1, 1), (2022, 12, 31)),
        ("last Tuesday", (2023, 5, 2), (2023, 5, 2)),  # the latest before, not today
        ("three days ago", (2023, 5, 6), (2023, 5, 6)),
        ("a couple of weeks ago", (2023, 4, 24), (2023, 4, 30)),
        ("12 months ago", (2022, 5, 1), (2022, 5, 31)),
        ("tomorrow", (2023, 5, 10), (2023, 5, 10)),
        ("next Friday", (2023, 5, 12), (2023, 5, 12)),
        ("next month", (2023, 6, 1), (2023, 6, 30)),
        ("in December last year", (2022, 1, 1), (2022, 12, 31)),
    ],
)
def test_a_memory_s_relative_times_are_read_against_when_it_was_said(
    words: str, first: tuple[int, int, int], last: tuple[int, int, int]
) -> None:
    assert referred(words, MONDAY) == [(date(*first), date(*last))]


def test_what_says_no_more_than_its_own_day_or_no_real_day_is_not_read() -> None:
    assert referred("today, tonight, this week, last time, a few days ago", MONDAY) == []
    assert referred("last year", datetime(1, 3, 1, tzinfo=UTC)) == []  # before year 1
    assert referred("yesterday, and last month", MONDAY) == [
        (date(2023, 5, 8), date(2023, 5, 8)),
        (date(2023, 4, 1), date(2023, 4, 30)),
    ]


def test_a_period_meets_a_range_of_days_when_any_day_lies_in_it() -> None:
    may, june = date(2023, 5, 31), date(2023, 6, 1)
    assert Period(2023, 6, 1).meets(may, june)
    assert not Period(2023, 6, 2).meets(may, june)
    assert Period(None, 6).meets(may, june) and not Period(None, 7).meets(may, june)
    assert Period(None, 1).meets(date(2022, 12, 30), date(2023, 1, 2))  # across a year
    assert Period(2023).meets(may, june) and not Period(2024).meets(may, june)
    assert not Period(2022, 6).meets(may, june)


def test_a_period_holds_in_utc_for_times_of_any_zone() -> None:
    day = Period(2023, 6, 14)
    assert day.holds(JUNE)
    late_in_new_york = datetime(2023, 6, 13, 22, 0, tzinfo=timezone(timedelta(hours=-4)))
    assert day.holds(late_in_new_york)  # 02:00 on the 14th in UTC
    assert not day.holds(JUNE + timedelta(days=1))
    assert Period(None, 6).holds(JUNE.replace(year=1999))
    assert not Period(2024).holds(JUNE)


def _traits(*rows: tuple[str, str, datetime, str | None]) -> dict[str, Traits]:
    return {fid: Traits(text, at, speaker) for fid, text, at, speaker in rows}


def test_the_speaker_list_holds_the_turns_of_whoever_the_question_names() -> None:
    traits = _traits(
        ("a", "Caroline: I went to a support group", JUNE, "Caroline Wu"),
        ("b", "Melanie: how was it?", JUNE, "Melanie"),
        ("c", "a note with nobody's voice", JUNE, None),
        ("d", "The Bot: hello", JUNE, "The Bot"),
    )
    assert [c.id for c in by_speaker("What did caroline go to?", traits)] == ["a"]
    assert {c.score for c in by_speaker("Did Caroline or Melanie go?", traits)} == {1.0}
    assert [c.id for c in by_speaker("Did Caroline or Melanie go?", traits)] == ["a", "b"]
    assert by_speaker("What did the bot say?", traits) == []  # "the" names nobody
    assert by_speaker("Who went to a support group?", traits) == []


def test_the_speaker_s_nearest_hold_their_words_by_meaning_unless_the_question_asks_when() -> None:
    traits = _traits(
        ("far", "Ana: the weather", JUNE, "Ana"),
        ("bo", "Bo: ramen again", JUNE, "Bo"),
        ("near", "Ana: I cook ramen", JUNE, "Ana Lima"),
    )
    nearest = [Candidate("near", 0.9), Candidate("bo", 0.8), Candidate("gone", 0.7)]
    nearest.append(Candidate("far", 0.1))
    found = by_speaker_nearest("What does Ana cook?", nearest, traits)
    assert found == [Candidate("far", 1.0), Candidate("near", 1.0)]  # at one score
    assert by_speaker_nearest("When did Ana cook ramen?", nearest, traits) == []
    assert by_speaker_nearest("What does everyone cook?", nearest, traits) == []
    assert reads_nearest("Which cities has Ana seen?", {"ana"})
    assert not reads_nearest("When did Ana go?", {"ana"})
    assert not reads_nearest("Which cities?", set())
    # Only the lists' own traits: the deeper half's traits come as ``wider``.
    assert lists("What does Ana cook?", ["cook"], [], {}, nearest=nearest, wider=traits) == [found]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When did Ana go?", "when"),
        ("And then, how many times?", "how"),
        ("In which city did Bo live?", "which"),
        ("Ana went camping.", None),
    ],
)
def test_a_question_s_first_wh_word(question: str, expected: str | None) -> None:
    assert wh(question) == expected


def test_the_time_list_holds_the_candidates_of_the_periods_asked_about() -> None:
    traits = _traits(("june", "camping", JUNE, None), ("july", "camping", JULY, None))
    assert [c.id for c in by_time("When did she go camping in June?", traits)] == ["june"]
    assert [c.id for c in by_time("camping in June or in July?", traits)] == ["july", "june"]
    assert by_time("When did she go camping?", traits) == []
    # Said on 2 July: "last month" was June, "yesterday" 1 July; its context is not read.
    traits = {
        "said": Traits("we went camping last month", JULY, None),
        "near": Traits("we went camping", JULY, None, "the week before last month's trip"),
        "day": Traits("Bo: we went camping yesterday", JULY, "Bo"),
    }
    assert [c.id for c in by_time("What did we do in June 2023?", traits)] == ["said"]
    assert [c.id for c in by_time("What did Bo do on 1 July 2023?", traits)] == ["day"]


def test_only_lists_with_members_join_the_fusion() -> None:
    traits = _traits(("a", "Ana: camping by the lake", JUNE, "Ana"))
    assert lists("camping", ["camping"], [], traits) == []
    named = lists("Where did Ana camp in June?", ["ana", "camp", "june"], [], traits)
    assert [[c.id for c in found] for found in named] == [["a"], ["a"]]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Where did Joanna travel to in July 2022?", "place"),
        ("Which cities has John been to?", "place"),
        ("Which US states might Tim be in during September?", "place"),
        ("Which outdoor spot did Joanna visit in May?", "place"),
        ("Who did Maria have dinner with?", "person"),
        ("With whom did she go?", "person"),
        ("Which team did John sign with?", "organisation"),
        ("What company does Bo work for?", "organisation"),
        ("What video games does Nate play?", "work"),
        ("What book series does Tim like?", "work"),
        ("What did John play?", None),  # the verb comes before any noun
        ("What kind of art does Caroline make?", None),
        ("How many games has John won?", None),  # "how" asks for a number
        ("When did she go to the city?", None),
        ("the weekly party on Tuesday", None),  # no question word
    ],
)
def test_a_question_asks_for_the_kind_of_name_its_words_say(
    question: str, expected: str | None
) -> None:
    assert kind(question) == expected


def test_the_kind_list_holds_the_candidates_naming_what_the_question_asks_for() -> None:
    kinds = {"rome": {"place", "person"}, "bo": {"person"}, "none": set[str]()}
    assert [c.id for c in by_kind("Where did Jon go on his trip?", kinds)] == ["rome"]
    assert [c.id for c in by_kind("Who did Ana meet at the park?", kinds)] == ["bo", "rome"]
    assert by_kind("When did Jon go on his trip?", kinds) == []
    traits = _traits(("rome", "Jon: a trip to Rome", JUNE, "Jon"))
    assert lists("Where did he go?", ["go"], [], traits, kinds) == [[Candidate("rome", 1.0)]]
    assert lists("Where did he go?", ["go"], [], traits) == []  # no kinds read: no list


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(64)) as memory:
        yield memory


def test_a_question_naming_a_speaker_ranks_their_words_first(mem: engram.Memory) -> None:
    # The same words in two voices: only the speaker tells them apart, and whichever
    # speaker is asked about comes first, so neither order can come from the ids.
    ana = mem.remember(REF, "I love the sea at dawn.", metadata={"speaker": "Ana"})
    bo = mem.remember(REF, "I love the sea at dawn!", metadata={"speaker": "Bo"})
    for name, first in (("Ana", ana), ("Bo", bo)):
        hits = mem.recall(REF, f"What does {name} love about the sea?", top_k=2)
        assert hits[0].fact.id == first.id
        assert {h.fact.id for h in hits} == {ana.id, bo.id}


def test_a_question_naming_a_period_ranks_what_happened_in_it_first(mem: engram.Memory) -> None:
    june = mem.remember(REF, "We went camping by the lake.", created_at=JUNE)
    july = mem.remember(REF, "We went camping by the lake!", created_at=JULY)
    for month, first in (("June", june), ("July", july)):
        hits = mem.recall(REF, f"Where did we go camping in {month}?", top_k=2)
        assert hits[0].fact.id == first.id


def test_a_conversation_turn_carries_its_speaker_to_recall(mem: engram.Memory) -> None:
    done = mem.remember_conversation(
        REF,
        [
            engram.Turn("Ana", "my sister paints birds", JUNE),
            engram.Turn("Bo", "my sister paints birds too", JUNE),
        ],
        context_turns=0,
    )
    hits = mem.recall(REF, "What does Bo's sister paint?", top_k=2)
    assert hits[0].fact.id == done.facts[1].id
    assert hits[0].fact.metadata["speaker"] == "Bo"


def test_a_question_asking_where_ranks_the_fact_naming_a_place_first(mem: engram.Memory) -> None:
    # The other fact shares more of the question's words; only the place it names lifts
    # the first, and a question asking for no place keeps the other first.
    rome = mem.remember(REF, "Jon took a short trip last week to Rome.")
    rest = mem.remember(REF, "Jon took a short trip last week, a trip to rest.")
    assert _ranked(mem, "Where did Jon go on a trip last week?") == [rome.id, rest.id]
    assert _ranked(mem, "Why did Jon go on a trip last week?") == [rest.id, rome.id]


def test_a_question_naming_a_day_finds_what_was_said_of_it_the_day_after(
    mem: engram.Memory,
) -> None:
    # The other fact shares more of the question's words; only the day "yesterday"
    # names, read against when it was said, lifts the first.
    day_after = mem.remember(REF, "I went camping yesterday.", created_at=JUNE)
    later = mem.remember(REF, "I went camping, camping at the lake.", created_at=JULY)
    assert _ranked(mem, "Where did I go camping on 13 June 2023?") == [day_after.id, later.id]
    assert _ranked(mem, "Where did I go camping on 2 July 2023?") == [later.id, day_after.id]


def test_a_question_about_yesterday_finds_what_happened_the_day_before_it_is_asked(
    target: Target,
) -> None:
    # The same words at two times: only the times the questions state tell them apart,
    # and each comes first for its own, so neither order can come from the ids. The
    # relative ones are read against when recall is asked (the store's clock, 2 July).
    with engram.open(target, embedder=engram.HashingEmbedder(64), clock=lambda: to_us(JULY)) as mem:
        day_before = mem.remember(
            REF, "We went camping by the lake.", created_at=JULY - timedelta(days=1)
        )
        june = mem.remember(REF, "We went camping by the lake!", created_at=JUNE)
        for question, first in (
            ("Where did we go camping yesterday?", day_before),
            ("Where did we go camping last month?", june),
            ("Where did we camp between 12 and 20 June 2023?", june),  # a range
            ("Where did we camp the week before 20 June 2023?", june),  # from a day named
            ("Where did we camp a day before 2 July 2023?", day_before),
        ):
            assert _ranked(mem, question)[0] == first.id, question


def test_who_a_turn_names_counts_in_its_words_not_in_its_speaker_label(
    mem: engram.Memory,
) -> None:
    # Every turn opens with its speaker's name: only the name in the first's own words
    # makes it the answer to "who". The second shares more of the question's words.
    done = mem.remember_conversation(
        REF,
        [
            engram.Turn("Ana", "I met Bo at the park.", JUNE),
            engram.Turn("Ana", "I met everyone at the park, we met at the park.", JUNE),
        ],
        context_turns=1,
    )
    met_bo, met_all = done.facts[0].id, done.facts[1].id
    assert _ranked(mem, "Who did Ana meet at the park?") == [met_bo, met_all]
    assert _ranked(mem, "When did Ana meet everyone at the park?") == [met_all, met_bo]


def test_a_question_naming_a_speaker_reads_the_vector_half_deeper_for_their_words(
    mem: engram.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ana's turn that shares no word with the question lies below the pool of either
    # half (the 60 of Bo's that share its words come first) and within the nearest the
    # question reads deeper; a question asking when, or naming nobody, reads the pool.
    turns = [engram.Turn("Ana", "what do you cook, Bo? I cook soup", JUNE)]
    turns += [engram.Turn("Bo", f"I cook soup on day {i}", JUNE) for i in range(60)]
    turns.append(engram.Turn("Ana", "ramen is my favourite", JUNE))
    done = mem.remember_conversation(REF, turns, context_turns=0)
    asked: list[int] = []
    vector = mem._store.candidates.vector

    def counted(*args: object) -> list[Candidate]:
        asked.append(int(args[-1]))  # type: ignore[call-overload]
        return vector(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mem._store.candidates, "vector", counted)
    for question, deep in (
        ("What does Ana cook?", True),
        ("When does Ana cook soup?", False),
        ("What does everyone cook?", False),
    ):
        asked.clear()
        mem.recall(REF, "Did Ana cook?")  # the scope's speakers are known: the text half first
        asked.clear()
        hits = mem.recall(REF, question, top_k=10)
        assert len(hits) == 10
        assert (NEAREST in asked) is deep, question
    assert done.facts[-1].metadata["speaker"] == "Ana"


def _ranked(mem: engram.Memory, question: str) -> list[str]:
    """The ids of the best two facts a hybrid recall gives for ``question``."""
    return [h.fact.id for h in mem.recall(REF, question, top_k=2)]
