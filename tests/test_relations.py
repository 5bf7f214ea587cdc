"""Types and relations read by rules from plain sentences: each pattern with and without
its time, the negatives, and each type's cues."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.core import asked
from engram.core.graph import organisations, places, products
from engram.core.graph.entity_types import most_frequent, types
from engram.core.graph.extraction import extract
from engram.core.graph.relations import relations, valid_at

WRITTEN = datetime(2023, 5, 10, tzinfo=UTC)


def related(text: str) -> list[tuple[str, str, str, str | None]]:
    mentions = extract(text)
    return [
        (mentions[r.source].surface, r.type, mentions[r.target].surface, r.time)
        for r in relations(text, mentions)
    ]


def typed(text: str, speaker: str | None = None) -> list[tuple[str, str | None]]:
    mentions = extract(text, speaker=speaker)
    kinds = types(text, mentions, relations(text, mentions))
    return [(m.surface, kind) for m, kind in zip(mentions, kinds, strict=True)]


@pytest.mark.parametrize(
    ("text", "relation"),
    [
        ("Ana lives in Oslo.", ("Ana", "lives_in", "Oslo", None)),
        ("Ana has lived in Oslo since 2019.", ("Ana", "lives_in", "Oslo", "since 2019")),
        ("Bruno Costa works at Lumen.", ("Bruno Costa", "works_for", "Lumen", None)),
        ("Ana is a nurse at Lumen in 2020.", ("Ana", "works_for", "Lumen", "2020")),
        ("Ana studies at Porto University.", ("Ana", "studies_at", "Porto University", None)),
        ("Ana moved to Oslo in March 2019.", ("Ana", "moved_to", "Oslo", "March 2019")),
        ("In 2019, Ana moved to Oslo.", ("Ana", "moved_to", "Oslo", "2019")),
        ("Ana was born in Lima.", ("Ana", "born_in", "Lima", None)),
        ("Ana is from Brazil.", ("Ana", "from", "Brazil", None)),
        ("Lumen is based in Porto.", ("Lumen", "located_in", "Porto", None)),
        ("Ana is married to Luis.", ("Ana", "married_to", "Luis", None)),
        ("Ana and Luis got married last year.", ("Ana", "married_to", "Luis", "last year")),
        ("Ana is friends with Luis.", ("Ana", "friend_of", "Luis", None)),
        ("Ana's brother Luis came.", ("Luis", "brother_of", "Ana", None)),
        ("Luis is Ana's brother.", ("Luis", "brother_of", "Ana", None)),
        ("Ana's sister, Maria, called.", ("Maria", "sister_of", "Ana", None)),
        ("Ana's mom Rita called.", ("Rita", "mother_of", "Ana", None)),
        ("I met Ana with her cousin Rui.", ("Rui", "cousin_of", "Ana", None)),
        # a student's year or kind, and a kin word addressing the object
        (
            "Ana is a third-year student at Lumen University.",
            ("Ana", "studies_at", "Lumen University", None),
        ),
        (
            "Ana is a PhD student at Lumen University.",
            ("Ana", "studies_at", "Lumen University", None),
        ),
        ("Aunt Ana married Uncle Luis in 1989.", ("Ana", "married_to", "Luis", "1989")),
        # where what an organisation has is
        ("Huawei's main campus is in Shenzhen.", ("Huawei", "located_in", "Shenzhen", None)),
        # a time spent working there, and a professor of a university
        (
            "Tobi spent last summer working for Lumen.",
            ("Tobi", "works_for", "Lumen", "last summer"),
        ),
        (
            "Prof. Ada Oyelaran of Brackwell University spoke.",
            ("Ada Oyelaran", "works_for", "Brackwell University", None),
        ),
    ],
)
def test_each_pattern_reads_its_relation(text: str, relation: tuple[str, ...]) -> None:
    assert related(text) == [relation]


def test_a_doctor_of_a_place_works_for_no_one() -> None:
    assert related("Dr. Ana Reis of Lisbon spoke at the forum.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # a clause that goes on with the subject, its own time apart
            "Ana moved to Oslo in 2019 and works for Lumen.",
            [("Ana", "moved_to", "Oslo", "2019"), ("Ana", "works_for", "Lumen", None)],
        ),
        (
            "Ana is from Lima but has lived in Oslo for six years.",
            [("Ana", "from", "Lima", None), ("Ana", "lives_in", "Oslo", "for six years")],
        ),
        (
            "Ana studied at Lumen before moving back to Oslo.",
            [("Ana", "studies_at", "Lumen", None), ("Ana", "moved_to", "Oslo", None)],
        ),
        (  # another subject: its clause, not the first one's time
            "Ana moved to Oslo in 2019 and Luis works for Lumen.",
            [("Ana", "moved_to", "Oslo", "2019"), ("Luis", "works_for", "Lumen", None)],
        ),
        (
            "Ana moved from Lima to Oslo in 2015.",
            [("Ana", "moved_to", "Oslo", "2015")],
        ),
        (  # an apposition between subject and verb, a name inside it or none
            "Ana Lopes, a Peruvian architect, lives in Oslo.",
            [("Ana Lopes", "lives_in", "Oslo", None)],
        ),
        (
            "Ana Lopes, a local architect, lives in Oslo.",
            [("Ana Lopes", "lives_in", "Oslo", None)],
        ),
        (
            "Luis is married to Ana, a dentist from Lima.",
            [("Luis", "married_to", "Ana", None), ("Ana", "from", "Lima", None)],
        ),
        ("New tenant: Ana Lopes, from Lima.", [("Ana Lopes", "from", "Lima", None)]),
        ("Lumen Labs hired Ana last year.", [("Ana", "works_for", "Lumen Labs", "last year")]),
        (  # where a place stands, its subject stands too; not for a job
            "Ana lives on Rue Cler in Paris.",
            [("Ana", "lives_in", "Rue Cler", None), ("Ana", "lives_in", "Paris", None)],
        ),
        (
            "Ana was born in Lima, in Peru.",
            [("Ana", "born_in", "Lima", None), ("Ana", "born_in", "Peru", None)],
        ),
        ("Ana works for Lumen Labs in Porto.", [("Ana", "works_for", "Lumen Labs", None)]),
        (  # joining is a job's start, after the clause it follows
            "Ana studied at Lumen Labs in 2015 before joining Vexlo.",
            [("Ana", "studies_at", "Lumen Labs", "2015"), ("Ana", "works_for", "Vexlo", None)],
        ),
        (  # where one lives, and what one does there
            "Ana lives in Porto, where she works for Vexlo.",
            [("Ana", "lives_in", "Porto", None), ("Ana", "works_for", "Vexlo", None)],
        ),
        (  # a job "for" in apposition, as "at" and "with"
            "Ana Lopes, a columnist for Brightpost, lives in Oslo.",
            [
                ("Ana Lopes", "works_for", "Brightpost", None),
                ("Ana Lopes", "lives_in", "Oslo", None),
            ],
        ),
        (  # what one is "for" that is no job
            "Ana Lopes, a candidate for Brightpost, lives in Oslo.",
            [("Ana Lopes", "lives_in", "Oslo", None)],
        ),
        (
            "Ana Lopes has been a nurse with the NHS since 2016.",
            [("Ana Lopes", "works_for", "NHS", "since 2016")],
        ),
        ("Ana teaches art at Lumen.", [("Ana", "works_for", "Lumen", None)]),
        ("Ana works part-time at Lumen.", [("Ana", "works_for", "Lumen", None)]),
        ("Luis works remotely for Lumen Labs.", [("Luis", "works_for", "Lumen Labs", None)]),
        (
            "Ana and her partner Luis live in Oslo.",
            [
                ("Ana", "lives_in", "Oslo", None),
                ("Luis", "partner_of", "Ana", None),
                ("Luis", "lives_in", "Oslo", None),
            ],
        ),
        (
            "Ana and Luis have been best friends for twenty years.",
            [("Ana", "friend_of", "Luis", "for twenty years")],
        ),
        (
            "Ana has been friends with Luis since primary school.",
            [("Ana", "friend_of", "Luis", "since primary school")],
        ),
        (  # a friend named as kin is dated by nothing the sentence says of another verb
            "Ana's friend Luis moved to Oslo last spring.",
            [("Ana", "friend_of", "Luis", None), ("Luis", "moved_to", "Oslo", "last spring")],
        ),
        (
            "Lumen Labs has its headquarters in Porto.",
            [("Lumen Labs", "located_in", "Porto", None)],
        ),
        (
            "Ana Lopes \u2014 relocated to Oslo in 2023.",
            [("Ana Lopes", "moved_to", "Oslo", "2023")],
        ),
    ],
)
def test_clauses_appositions_and_durations(
    text: str, expected: list[tuple[str, str, str, str | None]]
) -> None:
    assert sorted(related(text)) == sorted(expected)


def said(turn: str, speaker: str = "Caroline") -> list[tuple[str, str, str, str | None]]:
    text = f"{speaker}: {turn}"
    mentions = extract(text, speaker=speaker)
    return [
        (mentions[r.source].surface, r.type, mentions[r.target].surface, r.time)
        for r in relations(text, mentions)
    ]


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        (
            "I moved to Oslo in 2019 and work for Lumen Labs.",
            [
                ("Caroline", "moved_to", "Oslo", "2019"),
                ("Caroline", "works_for", "Lumen Labs", None),
            ],
        ),
        ("Hey! I'm from Sweden originally.", [("Caroline", "from", "Sweden", None)]),
        ("I\u2019m originally from Sweden.", [("Caroline", "from", "Sweden", None)]),
        (
            "So I've lived in Oslo for six years.",
            [("Caroline", "lives_in", "Oslo", "for six years")],
        ),
        ("I was born in Lima.", [("Caroline", "born_in", "Lima", None)]),
        (  # a lowercase "i" in chat; its sentence's time, not the one before
            "Ana Lopes came in 2018. so i moved to Oslo.",
            [("Caroline", "moved_to", "Oslo", None)],
        ),
        (
            "I went hiking with my sister Ana yesterday.",
            [("Ana", "sister_of", "Caroline", None)],
        ),
        (  # another's relation in one clause, the speaker's own in the next
            "Ana moved to Oslo and I live in Bergen.",
            [("Ana", "moved_to", "Oslo", None), ("Caroline", "lives_in", "Bergen", None)],
        ),
        ("I think Ana lives in Oslo.", [("Ana", "lives_in", "Oslo", None)]),
        ("I want to move to Oslo.", []),
        ("I visited Oslo last year.", []),
    ],
)
def test_a_speaker_states_relations_of_themselves(
    turn: str, expected: list[tuple[str, str, str, str | None]]
) -> None:
    assert sorted(said(turn)) == sorted(expected)


def test_i_and_my_are_no_one_without_a_speaker() -> None:
    assert related("I moved to Oslo with my sister Ana.") == []


def test_a_place_in_a_region_and_subjects_listed_together() -> None:
    assert related("We moved to Porto, Portugal.") == [("Porto", "located_in", "Portugal", None)]
    assert related("Ana and Luis live in Oslo.") == [
        ("Ana", "lives_in", "Oslo", None),
        ("Luis", "lives_in", "Oslo", None),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Ana wants to move to Oslo.",
        "Ana is moving to Oslo.",
        "Ana doesn't live in Oslo.",
        "Ana never worked at Lumen.",
        "Ana visited Luis in Oslo.",
        "I met Ana in Oslo and moved to Bergen.",  # no relation before: whose move is unsaid
        "Ana visited Lima and wants to move to Oslo.",
        "Ana drove from Lima to Oslo.",
        "Ana is not a student at Lumen University.",
        "Ana's office is in Lisbon.",  # a person's office: no place of hers
    ],
)
def test_no_relation_without_a_clear_pattern(text: str) -> None:
    assert related(text) == []


def test_a_time_starts_its_period() -> None:
    assert valid_at("2019", WRITTEN) == datetime(2019, 1, 1, tzinfo=UTC)
    assert valid_at("since March 2019", WRITTEN) == datetime(2019, 3, 1, tzinfo=UTC)
    assert valid_at("3 March 2019", WRITTEN) == datetime(2019, 3, 3, tzinfo=UTC)
    assert valid_at("last year", WRITTEN) == datetime(2022, 1, 1, tzinfo=UTC)
    assert valid_at("last month", WRITTEN) == datetime(2023, 4, 1, tzinfo=UTC)
    assert valid_at("two years ago", WRITTEN) is None
    assert valid_at("for a year", WRITTEN) is None  # a duration: no start said
    assert valid_at("for six years", WRITTEN) is None
    assert valid_at("since primary school", WRITTEN) is None
    assert valid_at(None, WRITTEN) is None
    assert valid_at("Sept. 2021", WRITTEN) == datetime(2021, 9, 1, tzinfo=UTC)
    assert valid_at("Jan 2023", WRITTEN) == datetime(2023, 1, 1, tzinfo=UTC)
    assert valid_at("from March 2014 to May 2019", WRITTEN) == datetime(2014, 3, 1, tzinfo=UTC)
    assert valid_at("now", WRITTEN) is None
    assert valid_at("before the war", WRITTEN) is None


def test_straight_out_of_a_school_and_a_name_inside_its_subjects_apposition() -> None:
    assert related("Johnson & Johnson hired Adaeze straight out of Covenant University.") == [
        ("Adaeze", "works_for", "Johnson & Johnson", None),
        ("Adaeze", "studies_at", "Covenant University", None),
    ]
    assert related("Kofi, fresh out of Makerere, joined Safaricom.") == [
        ("Kofi", "studies_at", "Makerere", None),
        ("Kofi", "works_for", "Safaricom", None),  # not Makerere, inside the apposition
    ]
    # after the verb's object, it is still said of the verb's subject
    assert related("Adaeze was hired by Safaricom straight out of Makerere.") == [
        ("Adaeze", "works_for", "Safaricom", None),
        ("Adaeze", "studies_at", "Makerere", None),
    ]


def test_an_apposition_opens_a_name_and_keeps_no_time_of_the_clause_after_it() -> None:
    assert related("Fatou, a midwife from Dakar, now lives in Lyon.") == [
        ("Fatou", "from", "Dakar", None),
        ("Fatou", "lives_in", "Lyon", "now"),
    ]


def test_a_clause_set_apart_keeps_its_own_time_and_kin_set_apart_opens_a_name() -> None:
    assert related("Ana, who grew up in Recife, now teaches in Lisbon.") == [
        ("Ana", "from", "Recife", None),  # "now" is the teaching's
    ]
    assert related("Jonas, who has lived in Oslo since 2015, works for Bosch.") == [
        ("Jonas", "lives_in", "Oslo", "since 2015"),
        ("Jonas", "works_for", "Bosch", None),
    ]
    assert related("Kofi, fresh out of Makerere, joined Safaricom in 2020.") == [
        ("Kofi", "studies_at", "Makerere", None),  # 2020 is the joining's
        ("Kofi", "works_for", "Safaricom", "2020"),
    ]
    assert related("Ana, now living in Oslo, works for Lumen.") == [
        ("Ana", "lives_in", "Oslo", "now"),
        ("Ana", "works_for", "Lumen", None),  # not Oslo's, inside the apposition
    ]
    assert related("In 2019, Ana Lopes, a nurse, moved to Oslo.") == [
        ("Ana Lopes", "moved_to", "Oslo", "2019"),  # before the subject, when none after
    ]
    assert related("Olusegun, my uncle, lives in Ibadan.") == [
        ("Olusegun", "lives_in", "Ibadan", None),
    ]


def test_a_best_friend_who_is_named_studying_now_and_born_and_raised() -> None:
    assert related("Moana's best friend is Leilani.") == [
        ("Moana", "friend_of", "Leilani", None),
    ]
    assert related("Ana's brother is Luis.") == [("Luis", "brother_of", "Ana", None)]
    assert related("Rhiannon is studying medicine at Cardiff University.") == [
        ("Rhiannon", "studies_at", "Cardiff University", None),
    ]
    assert related("Kazuki was born and raised in Sapporo.") == [
        ("Kazuki", "born_in", "Sapporo", None),
    ]


def test_a_job_for_living_with_someone_in_and_over_a_decade() -> None:
    assert related("Lukas is a software developer for SAP.") == [
        ("Lukas", "works_for", "SAP", None),
    ]
    assert related("Ana is a good friend for Luis.") == []  # no job
    assert related("Luca lives with his grandmother in Naples.") == [
        ("Luca", "lives_in", "Naples", None),
    ]
    assert related("Mehmet has worked at Turkcell for over a decade.") == [
        ("Mehmet", "works_for", "Turkcell", "for over a decade"),
    ]


def test_a_relative_clause_a_fronted_clause_and_years_married() -> None:
    assert related("Jonas, who works for Bosch, lives in Stuttgart.") == [
        ("Jonas", "works_for", "Bosch", None),
        ("Jonas", "lives_in", "Stuttgart", None),
    ]
    # the place a fronted clause ends on is no subject, nor the region of the name after it
    assert related("Before moving to Perth, Declan worked at Qantas.") == [
        ("Declan", "works_for", "Qantas", None),
    ]
    assert related("Teodor and Ilinca have been married for ten years.") == [
        ("Teodor", "married_to", "Ilinca", "for ten years"),
    ]
    assert related("Maya has been teaching at Brookfield Academy since 2012.") == [
        ("Maya", "works_for", "Brookfield Academy", "since 2012"),
    ]
    assert related("Siddharth studied engineering at BITS Pilani.") == [
        ("Siddharth", "studies_at", "BITS Pilani", None),
    ]


def test_a_district_of_a_town_in_and_the_coast_of_locate_a_place() -> None:
    assert related("Shoreditch is a district of London. Oyo is a town in Nigeria.") == [
        ("Shoreditch", "located_in", "London", None),  # a sentence's first word, read
        ("Oyo", "located_in", "Nigeria", None),
    ]
    assert related("Galway, on the west coast of Ireland, is lovely.") == [
        ("Galway", "located_in", "Ireland", None)
    ]
    assert related("Ana is a nurse in Lima.") == []  # a person's work is no district


def test_the_place_a_sentence_opens_with_is_where_one_grew_up_or_lives() -> None:
    assert related("Galway, on the west coast of Ireland, is where Ciarán grew up.") == [
        ("Galway", "located_in", "Ireland", None),
        ("Ciarán", "from", "Galway", None),  # the sentence's first place, not Ireland
    ]
    assert related("Oslo is where Kofi lives now.") == [("Kofi", "lives_in", "Oslo", "now")]
    assert related("Oslo is where Kofi met Ana.") == []  # meeting there says no tie


def test_a_months_short_form_a_span_now_and_before_the_war_are_times() -> None:
    assert related("Tolu relocated to Manchester in Jan 2023.") == [
        ("Tolu", "moved_to", "Manchester", "Jan 2023")
    ]
    assert related("Ana moved to Oslo in Sept. 2021.") == [
        ("Ana", "moved_to", "Oslo", "Sept. 2021")
    ]
    assert related("Ana worked for Ryanair from 2014 to 2019.") == [
        ("Ana", "works_for", "Ryanair", "from 2014 to 2019")
    ]
    assert related("beatriz lives in porto now") == [("beatriz", "lives_in", "porto", "now")]
    assert related("Lidia was born in Wroclaw before the war.") == [
        ("Lidia", "born_in", "Wroclaw", "before the war")
    ]
    # "before" that begins a clause is no time, and ends the first one's
    assert related("Ana moved to Oslo in 2019 before moving to Paris.") == [
        ("Ana", "moved_to", "Oslo", "2019"),
        ("Ana", "moved_to", "Paris", None),
    ]


def test_a_persons_particles_do_not_count_against_a_persons_shape() -> None:
    assert typed("We saw Juan de la Cruz yesterday.") == [("Juan de la Cruz", "person")]
    # "of" and "the" are no person's: a work or a place with no cue stays untyped
    assert typed("I love Lord of the Rings so much.") == [("Lord of the Rings", None)]
    assert typed("I loved Pride of Baghdad twice.") == [("Pride of Baghdad", None)]
    assert typed("I read Pride of Baghdad twice.") == [("Pride of Baghdad", "work")]
    # after "the", capitalised or not, no person: a river, a band, a title
    assert typed("The Amazon floods near Manaus. The Beatles played.") == [
        ("Amazon", None),
        ("Manaus", "place"),
        ("Beatles", None),
    ]


def test_types_from_context() -> None:
    assert typed("Ana: Thanks, Mel! Dr. Lee said hi.", speaker="Ana") == [
        ("Ana", "person"),  # the speaker
        ("Mel", "person"),  # thanked
        ("Lee", "person"),  # a title
    ]
    assert typed("Bruno Costa works at Lumen.") == [
        ("Bruno Costa", "person"),
        ("Lumen", "organisation"),  # works at
    ]
    assert typed("I visited Porto, Portugal and Lumen Labs near Central Park.") == [
        ("Porto", "place"),
        ("Portugal", "place"),
        ("Lumen Labs", "organisation"),  # a word inside the name
        ("Central Park", "place"),
    ]
    assert typed("I am learning German. Luis told me.") == [
        ("German", "language"),
        ("Luis", "person"),
    ]
    # No cue: a name of a person's shape is a person (measured: BENCHMARKS.md), a film's
    # name too; a quoted title is a work, a people's name a group, a language's name
    # alone and one after "the" nothing.
    assert typed("I love Tokyo Drift and Zara.") == [("Tokyo Drift", "person"), ("Zara", "person")]
    assert typed('We saw "Pan Tadeusz" in the Alhambra and read Korean novels.') == [
        ("Pan Tadeusz", "work"),
        ("Alhambra", None),
        ("Korean", "group"),
    ]
    assert typed("Zara says Esperanto is easy.") == [("Zara", "person"), ("Esperanto", None)]


def test_peoples_and_faiths_are_groups_and_their_languages_languages() -> None:
    assert typed("Valeria Castillo, a Mexican architect, lives in Monterrey.") == [
        ("Valeria Castillo", "person"),
        ("Mexican", "group"),
        ("Monterrey", "place"),
    ]
    assert typed("We thanked Sikh volunteers and Yoruba and Igbo families.") == [
        ("Sikh", "group"),
        ("Yoruba", "group"),
        ("Igbo", "group"),
    ]
    assert typed("Dong-hyun translates Korean novels into English.") == [
        ("Dong-hyun", "person"),
        ("Korean", "language"),
        ("English", "language"),
    ]
    assert typed("Interpreter needed: Yoruba and Hausa, Tuesday.") == [
        ("Yoruba", "group"),
        ("Hausa", "group"),
    ]  # not people: a language's cue is not said, so a people's name
    assert typed("Luis Sri Lankan") == [("Luis Sri Lankan", "person")]  # one name, read whole


def test_a_months_short_form_beside_a_day_or_a_year_is_a_time_not_a_name() -> None:
    assert typed("Tolu relocated to Manchester in Jan 2023.") == [
        ("Tolu", "person"),
        ("Manchester", "place"),
    ]
    assert typed("The report is due 15 Jan, says Aisha.") == [("Aisha", "person")]
    assert typed("Jan Kowalski met Jan at the market.") == [
        ("Jan Kowalski", "person"),
        ("Jan", "person"),
    ]


def test_an_organisation_by_its_shape_what_it_has_and_who_it_employs() -> None:
    assert typed("AT&T, Procter & Gamble and Unilever fined the FCC.") == [
        ("AT&T", "organisation"),  # joined by "&"
        ("Procter & Gamble", "organisation"),
        ("Unilever", "organisation"),  # listed with one
        ("FCC", "organisation"),  # an acronym
    ]
    assert typed("Nike's store was shut. Ana said she spent a year working for Shell.") == [
        ("Nike", "organisation"),  # what it has
        ("Ana", "person"),
        ("Shell", "organisation"),  # who works for it
    ]
    # the name after the "&" is the head: no lake's, no forest's
    assert typed("The grant went to Lake & Harrow.") == [("Lake & Harrow", "organisation")]
    assert typed("We walked round Brennholt Lake.") == [("Brennholt Lake", "place")]
    # an employer before its crew or its pilots
    assert typed("Ana Reis - Aerolux cabin crew. Luis Sousa - Vantory pilots.") == [
        ("Ana Reis", "person"),
        ("Aerolux", "organisation"),
        ("Luis Sousa", "person"),
        ("Vantory", "organisation"),
    ]


def test_a_place_before_a_known_one_and_a_given_name_in_a_list() -> None:
    assert typed("We loved Springfield, Illinois.") == [
        ("Springfield", "place"),  # before a place every reader knows, with no cue
        ("Illinois", "place"),
    ]
    # a given name every reader knows takes no type from a listed neighbour
    assert typed("Met Deepika, Lisbon was lovely. Ref: Naveen Kumar, Infosys.") == [
        ("Deepika", "person"),
        ("Lisbon", "place"),
        ("Naveen Kumar", "person"),
        ("Infosys", "organisation"),
    ]


def test_what_an_organisation_has_types_it_before_the_relation_it_states() -> None:
    assert typed("Huawei's main campus is in Shenzhen. Ana's office is in Lisbon.") == [
        ("Huawei", "organisation"),  # not the place a located_in's source would be
        ("Shenzhen", "place"),
        ("Ana", "person"),  # a given name every reader knows has an office of her own
        ("Lisbon", "place"),
    ]


def test_an_organisation_an_acronym_opens_or_its_names_last_word_says() -> None:
    text = "I met staff of NYU Langone, TU Munich and JFK Airport. We saw AJ Styles."
    assert typed(text) == [
        ("NYU Langone", "organisation"),  # an acronym of three or more opens it
        ("TU Munich", "organisation"),  # of two, before a place every reader knows
        ("JFK Airport", "place"),  # a place's word says otherwise
        ("AJ Styles", None),  # two capitals before no place: a person's initials too
    ]
    text = "I read the Washington Post; we listened to Warner Bros and Octopus Energy."
    assert typed(text) == [
        ("Washington Post", "organisation"),
        ("Warner Bros", "organisation"),
        ("Octopus Energy", "organisation"),
    ]
    # a utility's or a carrier's: no person's surname after a given name's shape
    assert typed("Pay Thames Water, then ring Scottish Power and Network Rail.") == [
        ("Thames Water", "organisation"),
        ("Scottish Power", "organisation"),
        ("Network Rail", "organisation"),
    ]
    # the same words in a question ask for what they always did
    assert asked.kind("What video games does Nate play?") == "work"
    assert asked.kind("Which party did Ana go to?") is None


def test_an_event_by_its_names_last_word() -> None:
    text = "Li Na spoke at the Shanghai Biology Forum; we watched the FIFA World Cup."
    assert typed(text) == [
        ("Li Na", "person"),
        ("Shanghai Biology Forum", "event"),
        ("FIFA World Cup", "event"),  # the last word decides, not the acronym opening it
    ]
    assert typed("We went to Glastonbury Festival and the Davis Cup.") == [
        ("Glastonbury Festival", "event"),  # not the place "went to" would say
        ("Davis Cup", "event"),
    ]


def test_who_employs_hires_or_is_headed_is_an_organisation() -> None:
    assert typed("I got an internship at Lumen and an offer from Northwind.") == [
        ("Lumen", "organisation"),
        ("Northwind", "organisation"),  # not a place: the organisation's cue is longer
    ]
    assert typed("Kofi plays for Hearts. She is the CEO of Brightwave.") == [
        ("Kofi", "person"),
        ("Hearts", "organisation"),
        ("Brightwave", "organisation"),
    ]
    assert typed("We shop at Kaufwelt; Ana is volunteering with Brightpath.") == [
        ("Kaufwelt", "organisation"),
        ("Ana", "person"),
        ("Brightpath", "organisation"),  # a cue longer than a place's look-back
    ]
    # "at" alone: where one works or eats, never a person, unless one looks or is mad at them
    assert typed("Glad Ayumi got the job at Rakuten; we had lunch at Nobu.") == [
        ("Ayumi", "person"),
        ("Rakuten", "organisation"),
        ("Nobu", "organisation"),
    ]
    assert typed("I was mad at Tobi, so I laughed at Bruno and smiled at Deepika.") == [
        ("Tobi", "person"),
        ("Bruno", "person"),
        ("Deepika", "person"),
    ]


def test_who_is_quit_founded_acquired_or_named_by_its_kind_is_an_organisation() -> None:
    assert typed("She quit Brennholt and resigned from Tovar; he founded Quillmark.") == [
        ("Brennholt", "organisation"),  # a person's shape, but one quits a job
        ("Tovar", "organisation"),
        ("Quillmark", "organisation"),
    ]
    assert typed("In May Kellam acquired Ostrava Dynamics and merged with Pellow.") == [
        ("Kellam", "person"),  # the one acquiring is not read: people acquire too
        ("Ostrava Dynamics", "organisation"),
        ("Pellow", "organisation"),
    ]
    assert typed(
        "My brother works in marketing for Dravo. We love Tobin's startup, Fieldnote."
    ) == [
        ("Dravo", "organisation"),  # the work between "works" and "for"
        ("Tobin", "person"),
        ("Fieldnote", "organisation"),  # named after its kind
    ]
    # "founded by" and "left" are no such cues: the founder is a person, one leaves places
    assert typed("It was founded by Oyelaran. Ishaan left Brennholt.") == [
        ("Oyelaran", "person"),
        ("Ishaan", "person"),
        ("Brennholt", "person"),
    ]
    # But one left for a business is one worked for, unless a place every reader knows.
    assert typed("Hugo left Saint-Gobain to join a startup called Fennec.") == [
        ("Hugo", "person"),
        ("Saint-Gobain", "organisation"),
        ("Fennec", "organisation"),
    ]
    assert typed("Ewa moved from Orlen to a smaller energy firm.") == [
        ("Ewa", "person"),
        ("Orlen", "organisation"),
    ]
    assert typed("Ana left Lisbon to join a startup. Tom moved from Kestrel to a flat.") == [
        ("Ana", "person"),
        ("Lisbon", "place"),
        ("Tom", "person"),
        ("Kestrel", "place"),
    ]
    assert ("Tema", "organisation") not in typed("Ife left Tema for a bank job in London.")


def test_one_joins_works_for_or_quits_a_person_every_reader_knows_or_whats_theirs() -> None:
    assert typed("I joined Deepika's team and quit Brennholt's band.") == [
        ("Deepika", "person"),
        ("Brennholt", "person"),  # whose band: the possessive's person
    ]
    assert typed("She works for Deepika; Ana works for Brightwave.") == [
        ("Deepika", "person"),  # an employer, but a person every reader knows
        ("Ana", "person"),
        ("Brightwave", "organisation"),
    ]


def test_schools_partners_apps_teams_and_web_domains_are_organisations() -> None:
    assert typed("She got into Pellham and he graduated from Kestrel.") == [
        ("Pellham", "organisation"),
        ("Kestrel", "organisation"),  # not a place: "from" after "graduated"
    ]
    text = "We partnered with Brightwave; the Kellam app crashed; I booked on Booking.com."
    assert typed(text) == [
        ("Brightwave", "organisation"),
        ("Kellam", "organisation"),  # what it offers, after the name
        ("Booking.com", "organisation"),  # a web domain's name
    ]
    # not what is someone's, nor where one arrives
    assert typed("He got into Tobi's car; we got into Lisbon late.") == [
        ("Tobi", "person"),
        ("Lisbon", "place"),
    ]


def test_a_possessive_before_who_an_organisation_has_ends_the_name() -> None:
    assert typed("Fenwick's CEO resigned. We met Google's CFO and Kellam's founders.") == [
        ("Fenwick", "organisation"),  # a sentence's first word, read by what follows
        ("Google", "organisation"),  # not "Google's CFO"
        ("Kellam", "organisation"),
    ]
    assert typed("Fenwick's HQ is in Leeds. Ana's stock price tip was wrong.") == [
        ("Fenwick", "organisation"),
        ("Leeds", "place"),
        ("Ana", "person"),  # a given name every reader knows
    ]
    assert typed("Charlotte's Web is a classic.") == [("Charlotte's Web", "person")]
    # where its HQ is, it is; where its CEO is, it need not be
    text = "Fenwick's HQ is in Leeds. Kellam's CEO is in Paris."
    assert related(text) == [("Fenwick", "located_in", "Leeds", None)]


def test_apps_shops_and_clubs_every_reader_knows_are_organisations() -> None:
    assert typed("She streams on Twitch and shops at Uniqlo; the Lakers lost.") == [
        ("Twitch", "product"),  # an app is a product (products.py)
        ("Uniqlo", "organisation"),
        ("Lakers", "organisation"),
    ]
    # in lowercase, one that is an English word too is left to its cues
    text = "she reached for tinder and matches; we ordered from deliveroo"
    assert typed(text) == [("deliveroo", "organisation")]
    # utilities, newspapers and clubs; in lowercase where their name is no English word
    assert typed("Mum rang British Gas, then read the Daily Mail.") == [
        ("British Gas", "organisation"),
        ("Daily Mail", "organisation"),
    ]
    assert typed("brentford beat fulham at home lol") == [
        ("brentford", "organisation"),
        ("fulham", "organisation"),
    ]


def test_a_company_named_by_an_ordinary_word_is_one_where_the_text_speaks_of_its_trade() -> None:
    assert typed("Orange cut the mobile signal across Rennes.") == [
        ("Orange", "organisation"),  # a sentence's first word, read by its trade's words
        ("Rennes", "place"),
    ]
    assert typed("Labour promised new homes. The Greens won two seats.") == [
        ("Labour", "organisation"),
        ("Greens", "organisation"),
    ]
    assert typed("Chase sent me a letter about my overdraft.") == [("Chase", "organisation")]
    assert typed("Apple released a new laptop.") == [("Apple", "organisation")]
    assert typed("Boots lost my prescription. I bought new boots.") == [("Boots", "organisation")]
    assert typed("Halifax froze my account, so we drove to Halifax.") == [
        ("Halifax", "organisation"),
        ("Halifax", "place"),  # a known place's own cue wins
    ]
    # the same words with no word of their trade: a colour, a fruit, a person
    assert typed("Orange is my favourite colour. Apple pie is the best.") == []
    assert typed("Chase said he would bring the car.") == [("Chase", "person")]
    # a person's cue before it wins over the trade's words
    assert typed("Chase and I opened a joint account.") == [("Chase", "person")]
    # but not a verb a company does as often, where the trade is spoken of
    assert typed("Sky kept the rugby on while Pat slept.") == [
        ("Sky", "organisation"),
        ("Pat", "person"),
    ]
    assert typed("Chase said the overdraft was fine.") == [("Chase", "person")]


def test_a_place_by_the_way_there_what_it_has_and_what_comes_of_it() -> None:
    text = "We drove through Holloway, stopped just outside Dunmere and headed toward Ellsworth."
    assert typed(text) == [("Holloway", "place"), ("Dunmere", "place"), ("Ellsworth", "place")]
    text = (
        "We walked the streets of Valdora; the town of Brackwell floods; brunch in downtown Carver."
    )
    assert typed(text) == [("Valdora", "place"), ("Brackwell", "place"), ("Carver", "place")]
    assert typed("Marrowby's beaches are stunning. She works for a Kestrel-based startup.") == [
        ("Marrowby", "place"),  # a sentence's first word, read by what follows
        ("Kestrel", "place"),  # "-based" is no part of the name
    ]
    # a way there to what is someone's is no place: its owner is a person
    text = "We parked near Ana's place, waited outside Brennholt's flat and sat in Kofi's car."
    assert typed(text) == [("Ana", "person"), ("Brennholt", "person"), ("Kofi", "person")]
    assert typed("I went to Deepika, then flew to Brackwell.") == [
        ("Deepika", "person"),  # a given name every reader knows
        ("Brackwell", "place"),
    ]
    # through someone, and a tool one sends with, are no way there
    assert typed("I got the job through Oyelaran and sent it via Brightwave.") == [
        ("Oyelaran", "person"),
        ("Brightwave", "person"),
    ]


def test_a_persons_age_beside_the_name_says_a_person() -> None:
    assert typed("Tobi, 34, runs the bakery. Kofi is 29 years old. Ife turned 40.") == [
        ("Tobi", "person"),  # each a sentence's first word, unknown
        ("Kofi", "person"),
        ("Ife", "person"),
    ]
    # "who" after the name says a person where "near" would say a place
    assert typed("We sat near Brennholt, who waved.") == [("Brennholt", "person")]


def test_a_sentence_opens_with_whoever_says_decides_or_does_to_others() -> None:
    text = "Okafor emailed the invoice. Ruairi spent three years at Baxley. Wren interned there."
    assert typed(text) == [
        ("Okafor", "person"),
        ("Ruairi", "person"),
        ("Baxley", "organisation"),
        ("Wren", "person"),
    ]
    # a verb whose subject is as often a thing opens no name: "Work called", "Yoga helped"
    assert typed("Work called me in. Yoga helped a lot. Dinner started late.") == []


def test_a_group_called_by_a_name_one_drives_for_and_an_arena_are_typed() -> None:
    assert typed("Svetlana sings in a choir called Northern Voices.") == [
        ("Svetlana", "person"),
        ("Northern Voices", "organisation"),
    ]
    assert typed("Yusuf drives for Bolt.") == [("Yusuf", "person"), ("Bolt", "organisation")]
    assert typed("We went to the O2 Arena.") == [("O2 Arena", "place")]


def test_organisations_by_what_only_they_are_or_do() -> None:
    # a known place where one is admitted is its university; moved to, the place
    assert typed("Ana was accepted to Oxford! Then she moved to Oxford.") == [
        ("Ana", "person"),
        ("Oxford", "organisation"),
        ("Oxford", "place"),
    ]
    assert typed("Call Brennan Plumbing about the leak.") == [("Brennan Plumbing", "organisation")]
    assert typed("Anahí sings with Coro Santa Cecilia.") == [
        ("Anahí", "person"),
        ("Coro Santa Cecilia", "organisation"),
    ]
    assert typed("The Guardian ran a piece on Nadia.") == [
        ("Guardian", "organisation"),
        ("Nadia", "person"),
    ]
    # "the" and a plural name either side of a match's verb, a name on the other side
    assert typed("The Tigers beat the Sharks 3-1.") == [
        ("Tigers", "organisation"),
        ("Sharks", "organisation"),
    ]
    assert typed("We saw the Hendersons beat the odds.") == [("Hendersons", None)]


def test_kin_right_before_a_name_says_a_person_whatever_else_it_names() -> None:
    assert typed("Tadhg's partner Fia came. My sister Alexa too.") == [
        ("Tadhg", "person"),
        ("Fia", "person"),  # the FIA, were it written so
        ("Alexa", "person"),  # the assistant, elsewhere
    ]
    assert typed("Her employer, Cortex Labs, pays well.") == [("Cortex Labs", "organisation")]
    assert typed("Grandad Wilf turned 90.") == [("Wilf", "person")]


def test_a_name_asked_something_opens_a_sentence_as_a_person() -> None:
    assert typed("Okonkwo, can you send the slides? Fenella, please call.") == [
        ("Okonkwo", "person"),
        ("Fenella", "person"),
    ]
    assert typed("Anyway, can you send it? Ugh, can you believe it?") == []


def test_a_persons_initials_are_no_acronym() -> None:
    assert typed("J. R. Okoye signed it. We love J.K. Rowling.") == [
        ("J. R. Okoye", "person"),
        ("J.K. Rowling", "person"),
    ]


def test_a_thing_one_has_or_a_band_one_hears_is_no_person_nor_place() -> None:
    assert typed("We bought a Dyson. I wore my Gryffindor scarf.") == [
        ("Dyson", None),
        ("Gryffindor", None),
    ]
    assert typed("Listening to Velvetine. Listening to Ana sing.") == [
        ("Velvetine", "person"),  # an artist's name, as often as a band's: no place
        ("Ana", "person"),
    ]
    assert typed("Mateo works remotely for Automattic.") == [
        ("Mateo", "person"),
        ("Automattic", "organisation"),
    ]


def test_who_funds_or_hires_is_an_organisation_and_an_everyday_acronym_is_none() -> None:
    assert typed("Noor's startup got funding from Sequoia.") == [
        ("Noor", "person"),
        ("Sequoia", "organisation"),
    ]
    assert typed("Fenwick Digital is hiring. Brackley Ltd is recruiting.") == [
        ("Fenwick Digital", "organisation"),
        ("Brackley Ltd", "organisation"),
    ]
    assert typed("Sent my CV to Harlow & Pike.") == [("Harlow & Pike", "organisation")]
    assert typed("Ama was promoted to manager at Vodafone Ghana.") == [
        ("Ama", "person"),
        ("Vodafone Ghana", "organisation"),
    ]


def test_who_names_a_new_head_supplies_or_powers_a_home_and_where_a_gala_is() -> None:
    assert typed("Lumora announced a new CEO on Monday.") == [("Lumora", "organisation")]
    assert typed("We're with Octopus for gas and electric.") == [("Octopus", "organisation")]
    assert typed("Greenleaf Organics supplies our café.") == [
        ("Greenleaf Organics", "organisation")
    ]
    assert typed("Kestrel Hall is hosting the gala at the Barbican Centre.") == [
        ("Kestrel Hall", "place"),
        ("Barbican Centre", "place"),
    ]
    # a given name before a surname that is a place's word too: a person's
    assert typed("We met Rebecca Hall and Emma Park.") == [
        ("Rebecca Hall", "person"),
        ("Emma Park", "person"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I finally cancelled my subscription to Brightwave.", [("Brightwave", "organisation")]),
        ("Ugh, called Telvora support for an hour.", [("Telvora", "organisation")]),
        ("My Zephyra account got locked again lol", [("Zephyra", "organisation")]),
        ("We bought shares of Halvorsen last year.", [("Halvorsen", "organisation")]),
        # the one acquiring is not read (people acquire too); the one acquired is
        (
            "Lumora acquired Fennick for an undisclosed sum.",
            [("Lumora", "person"), ("Fennick", "organisation")],
        ),
    ],
)
def test_what_one_subscribes_to_calls_the_support_of_or_holds_shares_of(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert typed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ugh Quillo cancelled my order again", [("Quillo", "organisation")]),
        ("just got my first paycheck from Bramwell!!", [("Bramwell", "organisation")]),
        ("thinking of switching to Nestly for my phone plan", [("Nestly", "organisation")]),
        ("we booked through Wanderly and it was a mess", [("Wanderly", "organisation")]),
        ("my Vantis order still hasn't shipped", [("Vantis", "organisation")]),
        ("I love Zestra's new flavours", [("Zestra", "organisation")]),
        (
            "Bex is freelancing for Corvid Studio now",
            [("Bex", "person"), ("Corvid Studio", "organisation")],
        ),
    ],
)
def test_a_chat_s_shops_employers_and_providers(text: str, expected: list[tuple[str, str]]) -> None:
    assert typed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PO received from Duvall Systems.", [("Duvall Systems", "organisation")]),
        ("Follow up with Kestrova procurement about the PO.", [("Kestrova", "organisation")]),
        ("Escalated the ticket to Zentro's support team.", [("Zentro", "organisation")]),
    ],
)
def test_a_note_s_purchase_orders_name_nothing_and_procurement_is_an_organisation_s(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert typed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A spokesperson for Veltrane declined to comment.", [("Veltrane", "organisation")]),
        ("The board of Quintara approved the merger.", [("Quintara", "organisation")]),
        ("Zemlo's chief executive resigned on Friday.", [("Zemlo", "organisation")]),
        ("Our supplier, Greystock, raised prices again.", [("Greystock", "organisation")]),
        ("Ilse got a discount code from Lunaro.", [("Ilse", "person"), ("Lunaro", "organisation")]),
        (
            "Yannick is on the Dravo payroll now.",
            [("Yannick", "person"), ("Dravo", "organisation")],
        ),
        # a celebrity's spokesperson speaks for a person every reader knows by name
        ("A spokesperson for Taylor Swift said no.", [("Taylor Swift", "person")]),
    ],
)
def test_news_of_an_organisation_its_board_spokesperson_chief_executive_and_suppliers(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert typed(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Solenne is the CFO of Marrowind.",
        "Solenne is a CFO at Marrowind.",
        "Solenne is the new director of Marrowind.",
        "Solenne is the new nurse at Marrowind.",
    ],
)
def test_who_holds_a_role_at_an_organisation_works_for_it(text: str) -> None:
    assert typed(text) == [("Solenne", "person"), ("Marrowind", "organisation")]
    assert related(text) == [("Solenne", "works_for", "Marrowind", None)]


def test_a_notes_bracketed_employer_and_an_offer_letters_sender() -> None:
    assert typed("Standup: Marek (Brightside), Ilse (Corvel Labs).") == [
        ("Marek", "person"),
        ("Brightside", "organisation"),
        ("Ilse", "person"),
        ("Corvel Labs", "organisation"),
    ]
    assert typed("We visited Lisbon (Portugal).") == [("Lisbon", "place"), ("Portugal", "place")]
    assert typed("Offer letter from Stripe arrived!") == [("Stripe", "organisation")]
    assert typed("Got a letter from Okonjo.") == [("Okonjo", "person")]


def test_a_list_after_to_is_no_place_in_a_region() -> None:
    assert typed("Applied to Monzo, Wise and Starling.") == [
        ("Monzo", "organisation"),
        ("Wise", "organisation"),
        ("Starling", "organisation"),
    ]
    assert related("Applied to Monzo, Wise and Starling.") == []
    # a given name after "and" ends no list: the place in a place stands
    assert related("She lives in Austin, Texas and Maria visits often.") == [
        ("Austin", "located_in", "Texas", None),
    ]


def test_a_name_of_english_words_alone_is_no_person_without_a_cue() -> None:
    assert typed("Definitely Star Wars! I sing with Northern Voices.") == [
        ("Star Wars", None),
        ("Northern Voices", None),
    ]
    # a word that is a name too, or one word alone (a pet's often), is still a person's
    assert typed("We met Rose Baker. Our cat Biscuit sleeps.") == [
        ("Rose Baker", "person"),
        ("Biscuit", "person"),
    ]


def test_a_possessive_before_whom_only_a_person_has_says_a_person() -> None:
    assert typed("Hendrika's employer pays well.") == [("Hendrika", "person")]
    assert typed("I met Brennholt's landlord.") == [("Brennholt", "person")]


def test_a_japanese_honorific_is_no_part_of_the_name() -> None:
    assert typed("Nakamura-san sent the slides.") == [("Nakamura", "person")]
    assert typed("I asked Mori-sensei and Aiko-chan.") == [("Mori", "person"), ("Aiko", "person")]


def test_what_only_an_organisation_does_or_reports_types_it() -> None:
    text = "Brindle raised $40 million. Novapay charged me twice. Kestrova laid off 300 people."
    assert typed(text) == [
        ("Brindle", "organisation"),
        ("Novapay", "organisation"),
        ("Kestrova", "organisation"),
    ]
    # one who was laid off is a person
    assert typed("We heard Tobi was laid off by Kestrova.") == [
        ("Tobi", "person"),
        ("Kestrova", "organisation"),
    ]
    assert typed("Vexlo's customer support was useless. Kestrova's stock dropped.") == [
        ("Vexlo", "organisation"),
        ("Kestrova", "organisation"),
    ]
    text = "I got a refund from Vantory. Dad banks with Crestwell. We flew with Aerolux."
    assert typed(text)[:2] == [("Vantory", "organisation"), ("Crestwell", "organisation")]
    assert typed("I booked the flights with Aerolux.") == [("Aerolux", "organisation")]


def test_teams_by_their_clubs_words_their_matches_and_a_country_in_a_match() -> None:
    assert typed("Lindqvist scored twice for Halden United.") == [
        ("Lindqvist", "person"),
        ("Halden United", "organisation"),
    ]
    assert typed("Halden United drew with Norrby.") == [
        ("Halden United", "organisation"),
        ("Norrby", "organisation"),  # the match's verb joins it to a team
    ]
    assert typed("The match between Celtic and Rangers kept Eoin up.") == [
        ("Celtic", "organisation"),
        ("Rangers", "organisation"),  # the match decides, not "kept"
        ("Eoin", "person"),
    ]
    assert typed("Brennholt Athletic beat Marrowby Town 2-0.") == [
        ("Brennholt Athletic", "organisation"),
        ("Marrowby Town", "organisation"),  # a club's "Town" beside a match's verb
    ]
    assert typed("Marrowby County drew with Brennholt Athletic.")[0] == (
        "Marrowby County",
        "organisation",
    )
    assert typed("We drove to Marrowby Town on Sunday.") == [("Marrowby Town", "place")]
    assert typed("The Kestrel Owls lost the cup final to Brennholt Athletic.") == [
        ("Kestrel Owls", "organisation"),  # a match named between loser and winner
        ("Brennholt Athletic", "organisation"),
    ]
    assert typed("Tunde plays left back for Ajaccio; Kemi plays in goal for Tovar.") == [
        ("Tunde", "person"),
        ("Ajaccio", "organisation"),  # a position between "plays" and "for"
        ("Kemi", "person"),
        ("Tovar", "organisation"),
    ]
    assert typed("Marta sings in the Brennholt Opera chorus.")[1:] == [
        ("Brennholt Opera", "organisation")
    ]
    assert typed("Brazil beat Argentina. We lost to Spain in the final.") == [
        ("Brazil", "organisation"),
        ("Argentina", "organisation"),
        ("Spain", "organisation"),
    ]
    # elsewhere a country is a place, and one person beats another
    assert typed("I moved to Spain. Ana beat Luis at chess.") == [
        ("Spain", "place"),
        ("Ana", "person"),
        ("Luis", "person"),
    ]


def test_a_business_in_apposition_a_band_s_players_and_an_airline_flown() -> None:
    assert typed("I interviewed at Lumora, a startup in Leeds.") == [
        ("Lumora", "organisation"),  # not the person "Kwame, a nurse from Kumasi" is
        ("Leeds", "place"),
    ]
    assert typed("Kwame, a nurse from Kumasi, joined.")[0] == ("Kwame", "person")
    assert typed("Brightmoor, a small bakery near the station, closed.") == [
        ("Brightmoor", "organisation")  # a sentence's first word, read by its apposition
    ]
    assert typed("Her band, The Velvet Owls, plays Friday. My gym, Ironhouse, shut.") == [
        ("The Velvet Owls", "organisation"),
        ("Ironhouse", "organisation"),
    ]
    assert typed("Rhiannon plays bass in Static Bloom.") == [
        ("Rhiannon", "person"),
        ("Static Bloom", "organisation"),  # "in" alone would make it a place
    ]
    assert typed("I'm flying Aer Lingus to Boston.") == [
        ("Aer Lingus", "organisation"),
        ("Boston", "place"),
    ]
    assert typed("Lunch w/ Priyanka @ Dishoom") == [
        ("Priyanka", "person"),
        ("Dishoom", "organisation"),  # "@" and a space: "at"
    ]
    text = "Pick up Zuri from Greenfield Primary. Invoice from Halcyon Design unpaid."
    assert typed(text) == [
        ("Zuri", "person"),
        ("Greenfield Primary", "organisation"),
        ("Halcyon Design", "organisation"),
    ]


def test_an_organisation_s_cue_reads_through_the_and_names_more_of_what_one_does_with_it() -> None:
    # "the" between the cue and the name, which a name after "the" alone would not be
    assert typed("Tobi volunteers at the Brannock.") == [
        ("Tobi", "person"),
        ("Brannock", "organisation"),
    ]
    assert typed("She plays for the Tigers.") == [("Tigers", "organisation")]
    assert typed("We joined the Garcias for dinner.") == [("Garcias", None)]  # a family
    assert typed("Ana works with the Kowalski twins.")[1] == ("Kowalski", None)
    # more instruments, "the" before them
    assert typed("Odile plays oboe in Quellmark. Ines plays the harp for Vellany.") == [
        ("Odile", "person"),
        ("Quellmark", "organisation"),  # "in" alone would make it a place
        ("Ines", "person"),
        ("Vellany", "organisation"),
    ]
    assert typed("She plays the piano in Brackwell.") == [("Brackwell", "place")]
    # what a writer writes for a paper, and where one works then
    text = "Bassey writes a monthly column for Verdane."
    assert typed(text) == [("Bassey", "person"), ("Verdane", "organisation")]
    assert related(text) == [("Bassey", "works_for", "Verdane", None)]
    assert related("Ana wrote a poem for Bea.") == []
    # what one holds with a business, and what it sends
    assert typed("Priya has a pension with Dorrell. A receipt from Quarrow came.") == [
        ("Priya", "person"),
        ("Dorrell", "organisation"),
        ("Quarrow", "organisation"),  # "from" alone would make it a place
    ]
    assert typed("Ana got a letter from Okonjo.")[1] == ("Okonjo", "person")
    # what one holds or writes with people as often
    assert typed("Ana has an account with Hattie.")[1] == ("Hattie", "person")
    assert typed("She writes stories for Zadie.") == [("Zadie", "person")]
    assert typed("A statement from Okonjo followed.")[0][1] != "organisation"  # a person's too
    assert typed("Ana signed up with Bea for the race.")[1] == ("Bea", "person")


def test_a_trade_s_or_an_ensemble_s_word_ends_an_organisation_s_name() -> None:
    text = "Callow Textiles hired Brisk Couriers. Tickets for the Marden Players and Ostra Quartet."
    assert typed(text) == [
        ("Callow Textiles", "organisation"),
        ("Brisk Couriers", "organisation"),
        ("Marden Players", "organisation"),
        ("Ostra Quartet", "organisation"),
    ]
    # after a given name every reader knows, a surname; a symphony is as often a work
    assert typed("Sarah Finance called.") == [("Sarah Finance", "person")]
    assert typed("We listened to the Fifth Symphony.") == [("Fifth Symphony", None)]


def test_a_saint_s_name_keeps_its_s_and_is_no_street_nor_person() -> None:
    assert typed("Drop-off at St Brennan's at 8.") == [("St Brennan's", "organisation")]
    assert typed("St Brennan's is closing.") == [("St Brennan's", None)]
    assert typed("She works at St. Brennan's Hospital.") == [
        ("St. Brennan's Hospital", "organisation")
    ]
    assert typed("Ana lives on Brennan St.")[1] == ("Brennan St", "place")  # a street's
    assert typed("We met at St Pancras.") == [("St Pancras", "place")]  # a saint's place
    assert typed("The club is staging Orlanda this spring.") == [("Orlanda", "work")]
    # what one uses is a tool, not a person; one used as something is anyone
    assert typed("Our team uses Jira. We downloaded Calmly.") == [
        ("Jira", "product"),
        ("Calmly", "product"),
    ]
    assert typed("He used Okafor as a reference.") == [("Okafor", "person")]
    # what one finishes is a work, what one lives through an event; a grandmother no name
    assert typed("I finally finished Elden Ring.") == [("Elden Ring", "work")]
    assert typed("Lockdown during Covid was hard.") == [("Covid", "event")]
    assert typed("Christmas at Nan's. Mam made soup.") == []
    # what comes from someone: flowers, a parcel, advice, what one learned
    assert typed("Flowers from Zadie. I learned it from Ostrander.") == [
        ("Zadie", "person"),
        ("Ostrander", "person"),
    ]
    assert typed("A postcard from Marrowby. I got it from Brackwell.") == [
        ("Marrowby", "place"),
        ("Brackwell", "place"),
    ]
    assert typed("I use the Brackwell app.") == [("Brackwell", "organisation")]
    assert typed("We saw a new production of Orlanda.") == [("Orlanda", "work")]
    assert typed("They doubled the production of Brennholt boilers.")[0][1] != "work"


def test_who_is_thanked_or_quoted_and_who_comes_from_a_department_is_a_person() -> None:
    text = "Oyelaran finally replied. Renner from accounts called. According to Halvorsen, no."
    assert typed(text) == [
        ("Oyelaran", "person"),  # an adverb between the name and what it did
        ("Renner", "person"),  # from a department, not a place
        ("Halvorsen", "person"),  # "according to" is no way to a place
    ]
    assert typed("Congrats to Adaku on the new job! Thanks to Brennholt too.") == [
        ("Adaku", "person"),
        ("Brennholt", "person"),
    ]
    text = "Meet Delphine at Gare du Nord, then Ladbroke Grove and Canary Wharf."
    assert typed(text) == [
        ("Delphine", "person"),
        ("Gare du Nord", "place"),  # a station's word, not "at"'s organisation
        ("Ladbroke Grove", "place"),
        ("Canary Wharf", "place"),
    ]


def test_who_one_writes_or_freelances_for_is_a_member_of_or_what_it_makes_things_in() -> None:
    text = "She freelanced for Brightline. Hamid is a member of Kestrel."
    assert typed(text) == [
        ("Brightline", "organisation"),
        ("Hamid", "person"),
        ("Kestrel", "organisation"),
    ]
    assert typed("The Quillmark factory closes; we went to the new Lumora store.") == [
        ("Quillmark", "organisation"),
        ("Lumora", "organisation"),
    ]


def test_what_comes_from_someone_who_one_sits_next_to_and_what_a_person_has() -> None:
    text = "Got a text from Okonjo. Haven't heard from Dervla. I sat next to Brennholt."
    assert typed(text) == [("Okonjo", "person"), ("Dervla", "person"), ("Brennholt", "person")]
    assert typed("Say hi to Marisol! She apologised to Kellam. He moved here from Dunmore.") == [
        ("Marisol", "person"),
        ("Kellam", "person"),
        ("Dunmore", "place"),  # "from" alone is still a place's
    ]
    assert typed("Okafor's birthday is Friday. Brennholt's wedding was lovely.") == [
        ("Okafor", "person"),  # a sentence's first word, before what a person has
        ("Brennholt", "person"),
    ]
    assert typed("Work's party is Friday. Life's good.") == []


def test_whom_an_organisation_serves_and_what_it_sells_at_after_its_possessive() -> None:
    text = "Dishroom's menu changed. Brennholt's customers complained about Kellam's prices."
    assert typed(text) == [
        ("Dishroom", "organisation"),  # a sentence's first word
        ("Brennholt", "organisation"),
        ("Kellam", "organisation"),
    ]
    assert typed("Ana's menu looks great.") == [("Ana", "person")]  # a given name's own


def test_how_far_a_place_is_from_another_names_both_places() -> None:
    assert typed("Dunmore is an hour from Galway. Sintra is 40 minutes from Lisbon.") == [
        ("Dunmore", "place"),  # a sentence's first word, read by how far it is
        ("Galway", "place"),
        ("Sintra", "place"),
        ("Lisbon", "place"),
    ]
    assert typed("We stayed a short drive from Kestrel.") == [("Kestrel", "place")]
    # a given name every reader knows is where someone is; without a name after, nothing
    assert typed("Tobi is an hour from Lisbon. Okafor is 40 minutes away.") == [
        ("Tobi", "person"),
        ("Lisbon", "place"),
    ]


def test_a_notes_field_names_its_value_and_its_kind() -> None:
    assert typed("Owner: Brennholt\nAttendees: Okafor, Kellam\nVenue: Kestrel Hall") == [
        ("Brennholt", "person"),  # a label's value, though a line's first word
        ("Okafor", "person"),
        ("Kellam", "person"),
        ("Kestrel Hall", "place"),
    ]
    assert typed("Client: Quillmark. Where: Dunmore.") == [
        ("Quillmark", "organisation"),
        ("Dunmore", "place"),
    ]
    assert typed("Note: Kestrel is closed") == []  # a label that names no kind


def test_what_one_watches_reads_or_plays_is_a_work() -> None:
    text = "We watched Inception, I'm reading Project Hail Mary and he plays Valorant."
    assert typed(text) == [
        ("Inception", "work"),  # a person's shape, no other cue
        ("Project Hail Mary", "work"),
        ("Valorant", "work"),
    ]
    assert typed("Just saw an episode of Severance.") == [("Severance", "work")]
    # a given name every reader knows, a possessive, or "plays for" say otherwise
    assert typed("She read Tobi's note, watched Ana play and plays for Hearts.") == [
        ("Tobi", "person"),
        ("Ana", "person"),
        ("Hearts", "organisation"),
    ]


def test_a_place_every_reader_knows_is_a_place_without_a_cue() -> None:
    assert typed("Japan was lovely, and Zara loved Nevada and the UK.") == [
        ("Japan", "place"),  # a sentence's first word, and no cue after it
        ("Zara", "person"),  # no cue: a person's shape
        ("Nevada", "place"),
        ("UK", "place"),  # not an organisation's acronym
    ]
    # What people do after it, or a greeting before it, still says a person.
    assert typed("Thanks, Florida! Kenya said hi.") == [("Florida", "person"), ("Kenya", "person")]
    assert typed("Tell the FBI.") == [("FBI", "organisation")]


def test_a_city_every_reader_knows_is_a_place_even_opening_a_sentence() -> None:
    assert typed("Nairobi was so hot, Wanjiru kept laughing.") == [
        ("Nairobi", "place"),  # a sentence's first word, known
        ("Wanjiru", "person"),
    ]
    assert typed("Lisbon's trams are older than Marco's grandfather.") == [
        ("Lisbon", "place"),
        ("Marco", "person"),
    ]
    assert typed("The bay was calm the morning Ishaan left Chittagong.") == [
        ("Ishaan", "person"),
        ("Chittagong", "place"),  # no cue: "left" says nothing
    ]
    # A city's name that is a given name as often keeps its sentence's cues.
    assert typed("Yesterday Milan and Sofia said hi.") == [("Milan", "person"), ("Sofia", "person")]


def test_an_organisation_every_reader_knows_is_one_without_a_cue() -> None:
    assert typed("Spotify hired Bruno Costa after Deloitte did.") == [
        ("Spotify", "organisation"),  # a sentence's first word, known
        ("Bruno Costa", "person"),
        ("Deloitte", "organisation"),
    ]
    assert typed("We watched Real Madrid beat Arsenal with Ana.") == [
        ("Real Madrid", "organisation"),
        ("Arsenal", "organisation"),
        ("Ana", "person"),
    ]
    # One that is a word or a person's name as often keeps its sentence's cues.
    assert typed("Ana works for Apple, and Zara met Chase.") == [
        ("Ana", "person"),
        ("Apple", "organisation"),  # works for
        ("Zara", "person"),
        ("Chase", "person"),  # no cue: a person's shape
    ]


def test_the_whole_name_of_a_known_organisation_decides_before_its_words() -> None:
    assert typed("Nottingham Forest drew with Crystal Palace.") == [
        ("Nottingham Forest", "organisation"),  # not the forest or the palace
        ("Crystal Palace", "organisation"),
    ]
    text = "Celtic won again. Kofi got a job at Capgemini and banks with NatWest."
    assert typed(text) == [
        ("Celtic", "organisation"),  # a sentence's first word, known
        ("Kofi", "person"),
        ("Capgemini", "organisation"),
        ("NatWest", "organisation"),
    ]
    assert typed("went to greggs with ngozi, then the nhs") == [
        ("greggs", "organisation"),  # a chain in lowercase
        ("ngozi", "person"),
        ("nhs", "organisation"),  # with no word of going before it
    ]
    # in lowercase anywhere, where a place or an app needs a word of going or using
    assert typed("ugh monzo froze my card, the lisbon rowing club can wait") == [
        ("monzo", "organisation"),
    ]
    assert typed("ikea delivery came late and my spotify wrapped is embarrassing") == [
        ("ikea", "organisation"),
    ]
    # named after a person or a town as often, or letters chat uses: not listed
    assert typed("Costa said hi. Burnley is lovely. cos i said so") == [("Costa", "person")]


def test_a_name_every_reader_knows_is_read_whole_across_an_ordinary_word() -> None:
    text = "Jakub works for CD Projekt and gives to Save the Children and Doctors Without Borders."
    assert typed(text) == [
        ("Jakub", "person"),
        ("CD Projekt", "organisation"),  # not the disc's letters and a surname
        ("Save the Children", "organisation"),
        ("Doctors Without Borders", "organisation"),
    ]
    assert typed("Ana moved from Trinidad and Tobago to Great Britain, loves Dr Pepper.") == [
        ("Ana", "person"),
        ("Trinidad and Tobago", "place"),  # one country, not two
        ("Great Britain", "place"),
        ("Dr Pepper", "product"),  # no doctor's surname
    ]
    # written as a name, first and last word capitalised; the words alone stay words
    assert typed("Ana said to just eat, then ordered from Just Eat.") == [
        ("Ana", "person"),
        ("Just Eat", "organisation"),
    ]
    assert typed("under armour, great britain") == []
    # a name's last word alone does not read it: "John" is no "Papa John"
    assert typed("Ana ate at Papa John's; John said hi.") == [
        ("Ana", "person"),
        ("Papa John", "organisation"),
        ("John", "person"),
    ]


def test_every_known_name_is_one_name() -> None:
    """The lists' names are one a line or between bars: two run together would never be
    read ("quebec city the hague")."""
    for listed in (places.KNOWN, organisations.KNOWN, products.KNOWN):
        assert max(len(name.split()) for name in listed) <= 4
    assert {"middle east", "south africa", "new delhi", "the hague"} <= places.KNOWN


def test_apps_devices_and_drinks_are_products_and_their_company_an_organisation() -> None:
    text = "Hyun-woo listens on Spotify; Stella Artois is his beer; my new iPhone broke."
    assert typed(text) == [
        ("Hyun-woo", "person"),
        ("Spotify", "product"),
        ("Stella Artois", "product"),  # not the person its given name would say
        ("iPhone", "product"),
    ]
    assert typed("learning mandarin on duolingo, posting on instagram") == [
        ("duolingo", "product"),  # in lowercase after a word of using
        ("instagram", "product"),
    ]
    # an English word as often is left to its cues in lowercase
    assert typed("he rode on with the peloton, then paid on venmo") == []
    # where the sentence speaks of the company: who works for it, is hired by it, or
    # what it has
    assert typed("Ana works at Spotify. Spotify hired Bo. Spotify's CEO spoke.") == [
        ("Ana", "person"),
        ("Spotify", "organisation"),
        ("Spotify", "organisation"),
        ("Bo", "person"),
        ("Spotify", "organisation"),
    ]


def test_what_is_sent_or_said_to_someone_names_a_person_and_a_given_name_a_surname() -> None:
    assert typed("Contract review done, send to Ritu.") == [("Ritu", "person")]
    assert typed("I talked to Oyelaran and we went to Faro.") == [
        ("Oyelaran", "person"),  # talked to
        ("Faro", "place"),  # went to: a place's cue still
    ]
    assert typed("Eun-ji Park met Jun Park near Hyde Park.") == [
        ("Eun-ji Park", "person"),  # a romanised given name's shape first
        ("Jun Park", "person"),  # a given name first
        ("Hyde Park", "place"),
    ]
    assert typed("The final between Ajaccio and Bastia was tense.") == [
        ("Ajaccio", "organisation"),  # a match between teams
        ("Bastia", "organisation"),  # listed with one
    ]


def test_a_given_name_written_in_lowercase_is_a_person() -> None:
    assert typed("went to nandos with ciara after work lol") == [
        ("nandos", "organisation"),  # a chain every reader knows, after a word of going
        ("ciara", "person"),
    ]
    assert typed("omg aoife's sister niamh got in!!") == [
        ("aoife", "person"),  # the possessive ends the name
        ("niamh", "person"),
    ]
    assert typed("ravi and deepika are hosting, ask ana") == [
        ("ravi", "person"),
        ("deepika", "person"),
        ("ana", "person"),
    ]
    # Places and organisations every reader knows read in lowercase too, with their types.
    assert typed("beatriz lives in porto now, jun is at ucla") == [
        ("beatriz", "person"),
        ("porto", "place"),
        ("ucla", "organisation"),
    ]
    assert typed("landed in cebu!!! philippines here we go") == [("cebu", "place")]
    # A company named by a word no common English word, where its trade is spoken of.
    assert typed("anyone else's amazon parcel stuck?") == [("amazon", "organisation")]
    assert typed("tesla sent a recall notice for my car") == [("tesla", "organisation")]
    assert typed("the amazon is huge, an apple on my laptop") == []
    assert typed("booked flights w ryanair, then with easyjet") == [
        ("ryanair", "organisation"),  # "w" and "with" say one comes, as "at" does
        ("easyjet", "organisation"),
    ]
    # Without a word that says one comes, a known place is often part of a longer name.
    assert typed("the lisbon rowing club won") == []
    assert typed("we had turkey with us in china") == []  # words as often as places
    # A name that is an English word as often is not read; nor one inside an address,
    # a handle or a tag, which keep their own kinds.
    assert typed("will mark the rose for jack") == []
    assert typed("mail sara.lopez@mail.com or @sara") == [
        ("sara.lopez@mail.com", "email"),
        ("@sara", "handle"),
    ]


def test_an_organisation_s_name_in_lowercase_is_read_after_what_only_an_organisation_is() -> None:
    # Anywhere: a known name of several words, one of them no English word.
    assert typed("waiting on hold with british gas for an hour") == [
        ("british gas", "organisation")
    ]
    # After an organisation's cue: a run ending in an organisation's word after one that
    # is no English word, two words joined by "&", or one word that is neither English
    # nor a given name.
    assert typed("fatima works at the kenyan embassy now") == [
        ("fatima", "person"),
        ("kenyan embassy", "organisation"),
    ]
    assert typed("interview at korvell labs went ok") == [("korvell labs", "organisation")]
    assert typed("got an offer from brandt & kessler!!") == [("brandt & kessler", "organisation")]
    assert typed("my sister got a job at quillon, some fintech in berlin") == [
        ("quillon", "organisation"),
        ("berlin", "place"),
    ]
    # Not without the cue, nor ordinary words or chat's short forms after one, nor one
    # word after "the" or after "with" (a word of a longer name; people are worked with).
    assert typed("korvell labs and quillon, and brandt & kessler") == []
    assert typed("the local council, a job at home, joined ur team, flying tmrw") == []
    assert typed("got into uni, works at the transgender center") == []
    assert typed("i work with influencers") == []


def test_visiting_paris_gives_paris_only() -> None:
    assert typed("Visiting Paris was fun.") == [("Paris", "place")]
    assert typed("Yesterday I saw it.") == []


def test_an_entity_takes_its_most_frequent_type_ties_by_a_fixed_order() -> None:
    assert most_frequent(["place", "person", "place", None]) == "place"
    assert most_frequent(["place", "person"]) == "person"
    assert most_frequent(["organisation", "place"]) == "organisation"
    assert most_frequent([None]) is None


def test_a_trade_s_word_of_shops_building_health_transport_and_papers_ends_a_name() -> None:
    text = "Ferrow Heating quoted us. Marsden Chronicle ran it. Kestle Ferries sailed late."
    assert typed(text) == [
        ("Ferrow Heating", "organisation"),
        ("Marsden Chronicle", "organisation"),
        ("Kestle Ferries", "organisation"),
    ]
    assert typed("Lunch with Sam Chemists.") == [("Sam Chemists", "person")]  # a surname
    # another language's word for a company, a bank or a group
    assert typed("Grupo Velmar bought Deutsche Fernwerk.") == [
        ("Grupo Velmar", "organisation"),
        ("Deutsche Fernwerk", "organisation"),
    ]
    assert typed("Maria Banco called. Dinner with Asa Okafor.") == [
        ("Maria Banco", "person"),  # after a given name, a surname
        ("Asa Okafor", "person"),  # a legal form's letters that are a given name too
    ]


def test_a_brand_s_capital_inside_a_word_is_no_one_s_name() -> None:
    assert typed("Tea with BrightPath.") == [("BrightPath", None)]
    # a person's: after a prefix, or before a part that is no word
    assert typed("Tea with McBride, JoAnn and KeShawn.") == [
        ("McBride", "person"),
        ("JoAnn", "person"),
        ("KeShawn", "person"),
    ]
    # what a business has after its name: a membership, a direct debit
    assert typed("Cancel the VoltGym direct debit. My Lumo membership ends.") == [
        ("VoltGym", "organisation"),
        ("Lumo", "organisation"),
    ]


def test_a_training_post_a_rejection_a_position_or_a_chair_is_an_organisation_s() -> None:
    text = "An apprenticeship at Brennholt. A placement at Quillmark. A rejection from Vexlo."
    assert [kind for _, kind in typed(text)] == ["organisation"] * 3
    assert typed("Rangi plays hooker for the Marlins.")[1] == ("Marlins", "organisation")
    assert typed("Tobi played point guard for Halden.")[1] == ("Halden", "organisation")
    assert typed("Lena plays second violin with the Brannock.")[1] == (
        "Brannock",
        "organisation",
    )
    assert typed("Tobi played a song for Ana.")[1] == ("Ana", "person")
    # a university every reader knows turns one down; one is apprenticed to a person
    assert typed("Got a rejection from Oxford.") == [("Oxford", "organisation")]
    assert typed("She was an apprentice to Okafor.") == [("Okafor", "person")]


def test_a_known_hyphenated_name_is_read_with_a_space_too() -> None:
    assert typed("cousin got an apprenticeship at rolls royce!!") == [
        ("rolls royce", "organisation")
    ]
    assert typed("the rolls were great") == []
    assert {"rolls royce", "coca cola", "mercedes benz"} <= organisations.KNOWN
    assert "chick fil a" not in organisations.KNOWN


def test_what_kind_of_business_a_name_is_or_whose_business_it_is_makes_it_an_organisation() -> None:
    # its kind after "is a", the head of its phrase; a name opening the sentence
    assert typed("Brannock is a small bakery in Leeds.") == [
        ("Brannock", "organisation"),
        ("Leeds", "place"),
    ]
    assert typed("Velmar is the best gym.") == [("Velmar", "organisation")]
    # a kind that only describes someone's work is no business's
    assert typed("Ada Okafor is a brand ambassador.") == [("Ada Okafor", "person")]
    assert typed("Okafor is a firm believer in luck.") == []
    # one's bank, supplier or employer, named after it
    assert typed("My bank is Velmar. Our energy supplier is Brightwave.") == [
        ("Velmar", "organisation"),
        ("Brightwave", "organisation"),
    ]
    assert typed("My employer Velmar pays late.") == [("Velmar", "organisation")]
    assert typed("my bank is brightside lol") == [("brightside", "organisation")]
    assert typed("The restaurant was Okafor's idea.") == [("Okafor", "person")]
    # what a business has after its possessive
    assert typed("Velmar's app keeps crashing.") == [("Velmar", "organisation")]
    assert typed("Tobi's app idea is cool.") == [("Tobi", "person")]


def test_who_one_is_on_hold_with_and_what_goes_into_administration_is_an_organisation() -> None:
    assert typed("I was on hold with Velmar for an hour.") == [("Velmar", "organisation")]
    assert typed("Velmar went into administration.") == [("Velmar", "organisation")]
    assert typed("The Velmar branch in Leeds closed.")[0] == ("Velmar", "organisation")
    assert typed("Okafor went bust at poker.") == [("Okafor", "person")]  # cards, as often


def test_a_coined_word_before_a_trade_s_word_in_lowercase_is_an_organisation_anywhere() -> None:
    assert typed("lol the guy from greenleaf estates called AGAIN") == [
        ("greenleaf estates", "organisation")
    ]
    assert typed("interview w/ ocado tech next week") == [("ocado tech", "organisation")]
    # not a typo, chat's short forms, an English word's derived form, a product, a given
    # name or a place before it, nor a coined word before a word of any group
    assert typed("teh bank is closed, ur bank too") == []
    assert typed("the globetrotting estates of old") == []
    assert typed("kofi motors is great") == [("kofi", "person")]
    assert typed("the frontend team and my crossfit group") == []


def test_where_one_was_raised_a_hometown_a_doctorate_and_a_job_started_are_relations() -> None:
    assert related("Ana Reis was raised in Braga.") == [("Ana Reis", "from", "Braga", None)]
    assert related("Ana Reis's hometown is Braga.") == [("Ana Reis", "from", "Braga", None)]
    assert related("Ana Reis is doing a PhD in physics at Velmar University.") == [
        ("Ana Reis", "studies_at", "Velmar University", None)
    ]
    assert related("Ana Reis started working at Velmar in 2018.") == [
        ("Ana Reis", "works_for", "Velmar", "2018")
    ]
    # a job still to start is no relation, nor is a person located anywhere
    assert related("Ana will start working at Velmar in May.") == []
    assert related("Ana Reis is based in Porto.") == []
    assert typed("Ana Reis is based in Porto.") == [("Ana Reis", "person"), ("Porto", "place")]
    assert related("Velmar Labs is based in Porto.") == [
        ("Velmar Labs", "located_in", "Porto", None)
    ]


def test_kin_set_apart_by_commas_a_twin_and_a_wedding_are_relations() -> None:
    assert related("I met Tobi, Ana's brother, at the party.") == [
        ("Tobi", "brother_of", "Ana", None)
    ]
    assert related("Tobi, Ana's son and Mia went out.") == []  # a list, not an apposition
    assert related("Ana Reis's twin sister Mia lives in Oslo.")[0] == (
        "Mia",
        "sister_of",
        "Ana Reis",
        None,
    )
    assert related("Ana Reis tied the knot with Tobi Silva in 2019.") == [
        ("Ana Reis", "married_to", "Tobi Silva", "2019")
    ]
