"""Relations stated in plain sentences, read by rules between a text's mentions, with
the time the sentence gives them.

A relation is read only where the words between two mentions of one sentence are one of
a few clear patterns; anything else (a negation, a wish, a question, an adverb not
listed) reads nothing: "Ana wants to move to Oslo" and "Ana doesn't live in Oslo" state
no relation. The types, source first:

- ``lives_in`` ("Ana lives in Oslo", "has lived in", "lives with her aunt in", "lives on
  Rue Cler": and "in Paris" after it, as after "was born in" or "moved to", is the
  subject's too), ``works_for`` ("works at", "works for", "is employed by", "got a job
  at", "is a nurse at", "has been the chef at", "teaches art at", "has been teaching
  at", "is a developer for", "spent last summer working for", "writes a weekly column
  for"; a professor or a doctor "of" an organisation: "Prof. Li Na of Fudan
  University"), ``studies_at`` ("studies at", "is a student at", "is a
  third-year student at", "studied law at", "graduated from", "straight out of"),
  ``moved_to`` ("moved to", "moved back to"; not "is moving to"), ``born_in`` ("was born
  in", "was born and raised in"), ``from`` ("is from", "comes from", "grew up in";
  "Galway ... is where Ciarán grew up", and "was born", "lives" so), ``located_in`` ("is
  based in", "is located in", "has its headquarters in", "Huawei's main campus is in",
  "is a district of", "a town in", "on the west coast of", unless a given name every
  reader knows has it: "Ana's office"; and "in Porto, Portugal": the first place in the
  second), ``married_to`` ("is married to", "married", "Ana and Luis got married", "have
  been married"), ``friend_of`` ("is a friend of", "is friends with", "became friends
  with", "Ana and Luis have been friends", "Ana's friend Luis", "Ana's best friend is
  Luis");
- family, with a role: "Ana's brother Luis", "Ana's sister, Maria, ...", "Luis is Ana's
  brother", "Ana's brother is Luis", "Luis is the brother of Ana" give ``brother_of``
  from Luis to Ana: the relative is the source, as the chat model's ``sister_of`` has it
  (:mod:`llm`), and the role is the type's first part, in its plain form (:data:`ROLES`:
  "mom" is ``mother``).

A title or a kin word addressing the object after the verb is not in its way ("married
Uncle Segun", "works for Dr. Lee").

Subjects listed with "and" share the relation ("Ana and Luis live in Oslo", "Ana and her
partner Luis live in Oslo": two). A clause that goes on after a relation's object keeps
its subject ("Ana moved to Oslo in 2019 and works for Lumen", "... but has lived in
Oslo", "... before moving back to Oslo", "... before joining Lumen", "lives in Oslo,
where she works for Lumen"); so does "moved from Lima to Oslo". An
apposition may stand between a subject and its verb ("Ana Lopes, a Peruvian architect,
lives in Oslo"), and states one itself, with no time ("Ana, a dentist from Lima", "Ana
Lopes, from Lima", "Ana, a reporter for Lumen"; "Fatou, a midwife from Dakar, now lives
in Lyon": "now" is the verb's), as a relative clause does ("Jonas, who works for Bosch,
lives in Stuttgart": both Jonas's). A place a fronted clause ends on is no subject
("Before moving to Perth, Declan worked at"), nor the region of a given name every
reader knows after it. "Lumen hired Ana": Ana works for Lumen.

In a conversation's turn (``"Ana: ..."``, read with its speaker), "I" and "my" are the
speaker: "I moved to Oslo in 2019 and work for Lumen", "I'm from Lima", "I've lived in
Oslo" state the speaker's relations, "with my sister Maria" gives ``sister_of`` from
Maria to the speaker. Without a speaker they name no one and read nothing.

**Time.** A year, a month (whole or short: "Jan", "Sept.") and year, or a date in the
same clause, after "in", "since", "as of" or "on" ("in March 2019", "since 2019", "in
Jan 2023"), a span ("from 2014 to 2019"), and "last year", "this year", "last month",
"this month", are the relation's ``time`` as written; :func:`valid_at` gives the start
of the period it names (a span's first), "last year" counted from the fact's own time
(the first of January of the year before). Other relative times and durations ("two
years ago", "last summer", "for six years", "since primary school", "now", "before the
war") stay as written, with no ``valid_at``: resolving them would guess. The clause runs
from its sentence's start, or the "and", "but", "before"... that begins it (not "before
the war", a time), to the next such word: in "Ana moved to Oslo in 2019 and works for
Lumen" the year is the move's alone. A clause set apart by commas keeps its own time,
and a verb after it reads its time from the verb on (else before its subject): in "Ana,
who grew up in Recife, now teaches in Lisbon" the "now" is not the growing up's, and in
"Kofi, fresh out of Makerere, joined Safaricom in 2020" the year is the joining's. Kin
and a place in a place are read from their words alone and take no time.

Pure and deterministic: the same text and mentions give the same relations, in order of
position. The graph stores what they read in each fact as that fact's relations, marked
as the rules', with ``valid_at`` resolved against the fact's own time
(:mod:`engram.core.graph.indexing`). Measured on the labelled sentences in BENCHMARKS.md
(``bench/names.py``): dev relations 1.000 / 0.958 / 0.978, held-out 0.957 / 0.721 / 0.822
(precision / recall / F1, with their times).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from engram.core.graph import given_names, organisations
from engram.core.graph.extraction import HOLDINGS, WRITTEN_FOR, Mention
from engram.core.graph.ordinary import KIN

# A kin word's plain form, as a family relation's type says it: "brother_of".
ROLES = {
    **{word: word for word in KIN},
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "mama": "mother",
    "dad": "father",
    "daddy": "father",
    "papa": "father",
    "kid": "child",
    "auntie": "aunt",
    "grandma": "grandmother",
    "granny": "grandmother",
    "grandpa": "grandfather",
    "stepmom": "stepmother",
    "stepdad": "stepfather",
    "bestie": "friend",
    "neighbour": "neighbor",
    "coworker": "colleague",
    "parents": "parent",
}

# Kin a name is addressed by after a verb: "married Uncle Segun", "works for Auntie Rosa".
_ADDRESSED = "uncle|aunt|auntie|grandma|grandpa|granny|cousin"
_ADVERB = r"(?:(?:now|still|currently|recently|just|also|finally|already|actually|both)\s+)?"
_HAS = r"(?:(?:has|have|had)\s+(?:been\s+)?)?"
# What one is "for" that is no job: "a big fan of", "a gift for", "the candidate for".
_NO_JOB = (
    r"(?!(?:big |huge |good |great )?"
    r"(?:friend|fan|match|gift|present|surprise|treat|mentor|role model|candidate) )"
)
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("studies_at", r"(?:studies|study|studied|is studying|are studying|(?:is|was|are|were)"
     r" (?:an? )?(?:(?!not |never |no )[a-z]+(?:-[a-z]+)? )?students?|enrolled|graduated)"
     r" (?:at|from)|(?:fresh|straight) out of"
     r"|(?:studies|studied|is studying|was studying) (?!not |never )[a-z]+(?: [a-z]+)? at"
     r"|(?:is|was|are|were) doing (?:a|an|her|his|their|my|our) (?:phd|doctorate|degree|masters"
     r"|master's|mba|postdoc|bachelor's|diploma)(?: in [a-z]+(?: [a-z]+)?)? at"),
    ("works_for", r"(?:works|work|worked|working|is working|are working|spent(?: [a-z]+){1,3}"
     r" working)"
     r"(?: (?:part-time|full-time|part time|full time|remotely|freelance|nights|weekends))?"
     r" (?:at|for)"
     r"|(?:works|worked|is working) as an? [a-z]+(?: [a-z]+)? (?:at|for)"
     r"|(?:is|was|are|were) (?:employed|hired) (?:at|by)|(?:got|took|started|has|found) (?:a|the)"
     r"(?: new)? job (?:at|with)|(?:is|was|has been|had been) (?:an?|the) [a-z]+(?: [a-z]+)?"
     r" (?:at|with)|(?:is|was|has been|had been) (?:an?|the) " + _NO_JOB +
     r"[a-z]+(?: [a-z]+)? for|joined|(?:is|was|has been|had been) (?:an?|the)"
     r" (?:(?:new|former|current) )?(?:ceo|cfo|cto|coo|founder|co-founder|cofounder|owner"
     r"|president|director|head|chair|manager) of"
     r"|(?:teaches|taught|(?:is |was )?teaching|writes|wrote)(?: [a-z]+)? (?:at|for)"
     r"|(?:writes|wrote|is writing) " + WRITTEN_FOR + " for|started (?:working|work) (?:at|for)"),
    ("lives_in", r"(?:lives|live|lived|living|is living|are living|resides|settled) (?:in|on)"
     r"|(?:lives|live|lived|living) with (?:his|her|their|my|our|a|an|the)(?: [a-z]+){1,2} in"),
    ("moved_to", r"(?:moved|relocated)(?: back| here| over)? to"),
    ("born_in", r"(?:was|were) born(?: and (?:raised|bred))? in"),
    ("from", r"(?:is|are|was|were) (?:originally )?from|(?:comes|come|came) from"
     r"|(?:grew|grow) up in|(?:was|were) (?:raised|brought up) in"),
    ("located_in", r"(?:is|are|was) (?:located|based|situated|headquartered) in"
     r"|(?:has|have) (?:its|their) (?:headquarters|head office|main office) in"
     r"|(?:is|was) (?:an? |the )?(?:[a-z]+ )?(?:district|suburb|neighbou?rhood|borough|town"
     r"|city|village|region|province|state|county|island|municipality|capital) (?:of|in)"
     r"|on the (?:west|east|north|south|northern|southern|eastern|western|(?:north|south)"
     r"-(?:east|west)) coast of"),
    ("married_to", r"(?:is|was|got|has been) married to|married|tied the knot with"),
    ("friend_of", r"(?:is|was|has been|became|have been) (?:a |an )?(?:good |close |best |old )?"
     r"friends? (?:of|with)|(?:is|are) friends with"),
)  # fmt: skip
_SAID = (
    _ADVERB
    + _HAS
    + r"(?:"
    + "|".join(f"(?P<{name}>{pattern})" for name, pattern in _PATTERNS)
    + r")\s+(?:the\s+)?(?:(?:dr|mr|mrs|ms|prof|professor|"
    + _ADDRESSED
    + r")\.?\s+)?"
)
_BETWEEN = re.compile(r"(?:,?\s+|\s*[\u2013\u2014]\s*)" + _SAID, re.IGNORECASE)
# A professor or a doctor "of" an organisation works for it: "Prof. Li Na of Fudan
# University", "Dr. Okafor of Lagos University Hospital" (not "of Lisbon").
_OF = re.compile(r"\s+of\s+")
_PROFESSOR = re.compile(r"\b(?:prof|professor|dr|doctor)\.?\s+$", re.IGNORECASE)
# Said of whoever the sentence's last verb was said of, not of the name before it: "Kenji
# was hired by Nintendo straight out of Kyoto University".
_OUT_OF = re.compile(r",?\s+(?:fresh|straight)\s+out\s+of\s+", re.IGNORECASE)
# "Ana moved to Oslo in 2019 and works for Lumen", "grew up in Lima but has lived in Oslo
# for six years", "studied at Lumen before moving back to Oslo": the clause after a
# relation's object goes on with the same subject. What stands before the conjunction is
# a time or nothing; ``clause`` is where the second relation's words begin.
_CARRIED = re.compile(
    r"(?:\s+(?:in|on|since|for)\s+[\w ]{1,30}?)?(?P<clause>,?\s+(?:and|but|then|before|after)"
    r"\s+(?:later\s+|then\s+|eventually\s+)?|,\s+where\s+(?:he|she|they)\s+)"
    + r"(?:(?P<moving>moving|relocating)(?:\s+back)?\s+to\s+|(?P<joining>joining)\s+|"
    + _SAID
    + r")",
    re.IGNORECASE,
)
# "Ana, a dentist from Rabat", "Oksana Melnyk, from Kharkiv", "Luis, a nurse at Lumen".
_APPOSED = re.compile(
    r",\s+(?:(?:an?\s+[a-z]+(?:\s+[a-z]+)?\s+)?(?:originally\s+)?(?P<from>from)"
    r"|an?\s+" + _NO_JOB + r"[a-z]+(?:\s+[a-z]+)?\s+(?P<works_for>at|with|for))\s+(?:the\s+)?",
    re.IGNORECASE,
)
# "Valeria Castillo, a Mexican architect, lives in Monterrey": the words between a subject
# and its verb set apart by commas (a name may stand among them).
_APPOSITION = re.compile(
    r",\s+(?:an?|the|my|our|his|her|their|who|now|currently|still|originally|recently"
    r"|(?:fresh|straight)\s+out\s+of)\s+[^,.!?;:]{1,48},",
    re.IGNORECASE,
)
# "Jonas, who works for Bosch, ...": a relative clause states its own relation.
_WHO = re.compile(r",\s+who\s+" + _SAID, re.IGNORECASE)
# "Acme hired Ana": the one hired works for the one hiring.
_HIRED = re.compile(
    r"\s+(?:just\s+|recently\s+)?(?:hired|employs|employed|recruited)\s+", re.IGNORECASE
)
# "Huawei's main campus is in Shenzhen": where what an organisation has is, it is (a
# given name every reader knows has an office or a shop of their own).
_HELD_IN = re.compile(
    r"['\u2019]s\s+(?:(?:main|new|flagship|first)\s+)?(?:"
    + "|".join(sorted(HOLDINGS))
    + r")\s+(?:is|was|are|were)\s+(?:(?:located|based)\s+)?in\s+",
    re.IGNORECASE,
)
# "Ana moved from Lima to Oslo": the place after "to".
_MOVED_FROM = re.compile(r"\s+(?:moved|relocated)\s+(?:back\s+)?from\s+", re.IGNORECASE)
_TO = re.compile(r"\s+to\s+", re.IGNORECASE)
# "lives on Rue Cler in Paris", "was born in Lima, in Peru": where a place stands, the
# subject stands too.
_IN = re.compile(r",?\s+in\s+", re.IGNORECASE)
_WHERE = frozenset({"lives_in", "moved_to", "born_in"})
_KIN = "|".join(sorted(ROLES, key=lambda w: (-len(w), w)))
# What may stand between a possessive and a kin word: "Ana's older brother", "her twin
# sister", "his new wife".
_AGED_KIN = r"(?:(?:older|younger|big|little|best|old|new|twin)\s+)?"
# "Ana's brother Luis", "Ana's sister, Maria,": from the possessive to the relative.
_POSSESSED = re.compile(rf"['\u2019]s?\s+{_AGED_KIN}({_KIN}),?\s+")
# "Ana's best friend is Luis", "Ana's brother was Luis": the relative after "is".
_POSSESSED_IS = re.compile(rf"['\u2019]s?\s+{_AGED_KIN}({_KIN})\s+(?:is|was)\s+")
# "Ana's hometown is Braga": where she is from.
_HOMETOWN = re.compile(r"['\u2019]s?\s+(?:hometown|home\s+town)\s+(?:is|was)\s+", re.IGNORECASE)
# "Luis is Ana's brother": after the possessive, the role.
_IS = re.compile(r"\s+(?:is|was)\s+")
# A gap of a comma alone: a place and its region ("Austin, Texas"), a name and its
# apposition ("Tobi, Ana's son,").
_COMMA = re.compile(r",\s+")
# "Galway, on the west coast of Ireland, is where Ciarán grew up": the sentence's first
# place is where the one after "is where" grew up, was born or lives.
_IS_WHERE = re.compile(r",?\s+(?:is|was)\s+where\s+")
_WHERE_DONE = re.compile(
    r"\s+(?:(?P<from>grew\s+up)|(?P<born_in>was\s+born)|(?P<lives_in>lives|has\s+lived))\b"
)
_ROLE_AFTER = re.compile(rf"['\u2019]s?\s+{_AGED_KIN}({_KIN})\b")
# "Tobi, Ana's son, called": the first name is the second's kin, set apart by commas.
_ROLE_APART = re.compile(rf"['\u2019]s?\s+{_AGED_KIN}({_KIN}),")
_ROLE_OF = re.compile(rf"\s+(?:is|was)\s+(?:the|a)\s+({_KIN})\s+of\s+")
_AND = re.compile(r"\s*,\s*|\s+and\s+|\s*,\s*and\s+")
# "Meiko and her partner Daniel live in Yokohama": a subject listed with its relation.
_AND_KIN = re.compile(
    rf"\s+and\s+(?:his|her|their)\s+{_AGED_KIN}(?:{_KIN})\s+",
    re.IGNORECASE,
)
# "Gustavo plays FIFA with his nephew Enzo": the relative of the sentence's subject.
_THEIR = re.compile(rf"\b(?:his|her|their)\s+{_AGED_KIN}({_KIN}),?\s+$")
# A turn's speaker saying it of themselves: "Ana: I moved to Oslo", "... and I work at
# Lumen"; the words after "I" read as the patterns read a name's ("I'm" as "is").
_I = re.compile(
    r"(?:^|[:.!?]\s*|,\s*(?:and|but|so)?\s*|\s(?:and|but|so)\s+)"
    r"(?:(?:so|well|yeah|yes|oh|and|but|actually|also|now)[,!]?\s+)*I(?P<rest>(?:['\u2019](?:m|ve)|\s).*)$",
    re.IGNORECASE | re.DOTALL,
)
_I_FORMS = (
    ("'m ", " is "),
    ("\u2019m ", " is "),
    (" am ", " is "),
    ("'ve ", " have "),
    ("\u2019ve ", " have "),
)
# "... with my sister Ana": the speaker's relative.
_MY = re.compile(rf"\bmy\s+{_AGED_KIN}({_KIN}),?\s+$", re.IGNORECASE)
_GOT_MARRIED = re.compile(r"\s+(?:got|are|were|(?:have|had)\s+been)\s+married\b")
# "Niamh and Cathal have been best friends": friends, named together.
_BECAME_FRIENDS = re.compile(
    r"\s+(?:are|were|became|have\s+been|had\s+been)\s+(?:good\s+|close\s+|best\s+|old\s+)?"
    r"friends\b",
    re.IGNORECASE,
)
_LIST_GOES_ON = re.compile(r",?\s+(?:and|&)\s+([A-Z][\w'\u2019-]*)")
_BEFORE_PLACE = re.compile(r"\b(?:in|from|to|near|visit|visited|visiting)\s+$", re.IGNORECASE)

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
# A month named whole or by its short form ("Jan 2023", "Sept. 2021").
_MONTH = (
    r"(?:" + "|".join(m.capitalize() for m in _MONTHS) + r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?"
    r"|Oct|Nov|Dec)\.?)"
)
_MONTH_NUMBERS = (
    {m: i + 1 for i, m in enumerate(_MONTHS)}
    | {m[:3]: i + 1 for i, m in enumerate(_MONTHS)}
    | {"sept": 9}
)
# When a relation lasted: "from 2014 to 2019", "from March 2014 until May 2019".
_SPAN = r"(?:\d{1,2}\s+)?(?:" + _MONTH + r"\s+)?(?:\d{1,2},?\s+)?\d{4}"
_TIME = re.compile(
    r"\b(?:(?:in|as of|on)\s+(?P<at>(?:\d{1,2}\s+)?(?:" + _MONTH + r"\s+)?"
    r"(?:\d{1,2},?\s+)?\d{4})\b"
    r"|(?P<since>since\s+(?:\d{1,2}\s+)?(?:" + _MONTH + r"\s+)?"
    r"(?:\d{1,2},?\s+)?\d{4})\b"
    r"|(?P<span>from\s+" + _SPAN + r"\s+(?:to|until|till)\s+" + _SPAN + r")\b"
    r"|(?P<rel>(?:last|this)\s+(?:year|month))\b"
    r"|(?P<loose>(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?:years?|months?|weeks?|days?)\s+ago|last\s+(?:week|summer|winter|spring|fall"
    r"|autumn)"
    r"|for\s+(?:the\s+(?:past|last)\s+)?(?:(?:over|more\s+than|almost|nearly|about)\s+)?"
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|a\s+few|several|many)\s+"
    r"(?:years?|months?|weeks?|decades?)"
    r"|since\s+(?:(?:primary|secondary|high|middle|grade|elementary)\s+school|school|uni"
    r"|university|college|childhood|kindergarten)"
    r"|(?:before|after)\s+the\s+[a-z]+(?=\s*(?:[.,;!?]|$))|now)\b)",
    re.IGNORECASE,
)
# A sentence's end; not the stop of a month's short form ("in Sept. 2021").
_SENTENCE_END = re.compile(
    r"(?<!\bJan)(?<!\bFeb)(?<!\bMar)(?<!\bApr)(?<!\bJun)(?<!\bJul)(?<!\bAug)(?<!\bSep)"
    r"(?<!\bSept)(?<!\bOct)(?<!\bNov)(?<!\bDec)[.!?\n]+(?:\s|$)"
)
# A clause's end, for its time: also "while", which begins no clause keeping the subject.
# "before the war" is the relation's time, not a clause ("before moving to Paris").
_NEXT_CLAUSE = re.compile(
    r",?\s+(?:and|but|then|(?:before|after)(?!\s+the\s+[a-z]+\s*(?:[.,;!?]|$))|while)\s+",
    re.IGNORECASE,
)
_NAMED = ("name", "speaker")  # kinds a relation may join: not handles, tags or links


class SetApart(NamedTuple):
    """A clause set apart by commas ("Ana, who grew up in Recife, now..."): its time is
    read between ``start`` and ``stop`` alone."""

    start: int
    stop: int


class PastApposition(NamedTuple):
    """A verb after its subject's apposition ("Jonas, who has lived in Oslo since 2015,
    works for Bosch"): its time is read from ``verb`` on, else before ``subject``."""

    subject: int
    verb: int


# Where a relation's time is read: from a place in its clause (its subject's start, or
# where a clause going on with the last verb's subjects begins), a clause set apart, a
# verb past an apposition; None for a state read from its words alone.
Anchor = int | SetApart | PastApposition | None


@dataclass(frozen=True, slots=True)
class Stated:
    """A relation a text states: ``mentions[source]`` -[type]-> ``mentions[target]``,
    with its time as written (None when the sentence gives none)."""

    source: int
    type: str
    target: int
    time: str | None = None


def relations(text: str, mentions: Sequence[Mention]) -> list[Stated]:
    """The relations ``text`` states between its ``mentions`` (in order of position, as
    :func:`engram.core.graph.extraction.extract` gives them), each once, in order of
    their source's then target's position."""
    if len(mentions) < 2:
        return []
    found: dict[tuple[int, str, int], Stated] = {}
    for source, kind, target, anchor in _read(text, mentions):
        if source == target or mentions[source].name == mentions[target].name:
            continue
        if (source, kind, target) not in found:
            # kin ("Ana's brother Luis") and places in places ("Porto, Portugal"): a state
            # whose start no sentence says (anchor None)
            time = _anchored_time(text, anchor, mentions[target].end)
            found[(source, kind, target)] = Stated(source, kind, target, time)
    return sorted(found.values(), key=lambda s: (s.source, s.target, s.type))


def _an_organisation(mention: Mention) -> bool:
    """Whether ``mention``'s name says it is an organisation: one every reader knows, or
    ending in an organisation's word ("Fudan University")."""
    name = mention.name
    return name in organisations.KNOWN or name.split()[-1] in organisations.NAMING_WORDS


def _read(text: str, mentions: Sequence[Mention]) -> Iterator[tuple[int, str, int, Anchor]]:
    """(source, type, target, where its time is read: :data:`Anchor`)."""
    carried: list[int] = []  # the subjects of the sentence's last verb, for the next clause
    where = ""  # that verb's type
    speaker = 0 if mentions[0].kind == "speaker" else None  # who "I" and "my" are
    for i in range(len(mentions) - 1):
        a, b = mentions[i], mentions[i + 1]
        if i and _SENTENCE_END.search(text, mentions[i - 1].end, a.start):
            carried, where = [], ""
        if a.kind not in _NAMED or b.kind not in _NAMED:
            continue
        gap = text[a.end : b.start]
        if len(gap) > 80:
            continue
        across = _across_apposition(text, mentions, i)
        if across and across[0] != i:  # a name inside its subject's apposition:
            subject, kind, verb = across  # "Kofi, fresh out of Makerere, joined Safaricom"
            carried, where = [subject], kind
            yield subject, kind, i + 1, PastApposition(mentions[subject].start, verb)
        elif (
            _OF.fullmatch(gap)
            and _PROFESSOR.search(text, max(0, a.start - 12), a.start)
            and _an_organisation(b)
        ):
            carried, where = [i], "works_for"
            yield i, "works_for", i + 1, a.start
        elif said := _BETWEEN.fullmatch(gap):
            kind = where = said.lastgroup or ""
            if not (carried and _OUT_OF.fullmatch(gap)):  # else the last verb's subjects:
                carried = list(_subjects(text, mentions, i))  # "hired by X straight out of"
            # set apart by a comma ("Kofi, fresh out of Makerere, joined ... in 2020"),
            # the clause after it keeps its own time
            anchor: Anchor = (
                _set_apart(text, a.end, b.end)
                if gap.startswith(",")
                else mentions[carried[-1]].start
            )
            for subject in carried:
                if kind == "located_in" and given_names.opens(mentions[subject].name):
                    continue  # "Ana Reis is based in Porto": no place is someone
                yield subject, kind, i + 1, anchor
            if kind == "located_in" or _BEFORE_PLACE.search(text, max(0, a.start - 12), a.start):
                yield from _timeless(_place_pair(text, mentions, i + 1))
        elif _IN.fullmatch(gap) and carried and where in _WHERE:
            for subject in carried:
                yield subject, where, i + 1, mentions[carried[-1]].start
        elif (went := _CARRIED.fullmatch(gap)) and carried:
            kind = where = (
                "moved_to"
                if went.group("moving")
                else "works_for"
                if went.group("joining")
                else went.lastgroup or ""
            )
            for subject in carried:
                yield subject, kind, i + 1, a.end + went.end("clause")
        elif who := _WHO.fullmatch(gap):  # "Ana, who grew up in Recife, now teaches"
            yield i, who.lastgroup or "", i + 1, _set_apart(text, a.end, b.end)
        elif apposed := _APPOSED.fullmatch(gap):  # "Fatou, a midwife from Dakar, now"
            yield i, apposed.lastgroup or "", i + 1, _set_apart(text, a.end, b.end)
        elif across:
            subject, kind, verb = across
            carried, where = [subject], kind
            yield subject, kind, i + 1, PastApposition(mentions[subject].start, verb)
        elif _HIRED.fullmatch(gap):
            yield i + 1, "works_for", i, a.start
        elif _HELD_IN.fullmatch(gap) and not given_names.opens(a.name):
            yield i, "located_in", i + 1, a.start  # not a person's: "Ana's office is in"
        elif i and _TO.fullmatch(gap) and _MOVED_FROM.fullmatch(text, mentions[i - 1].end, a.start):
            movers = list(_subjects(text, mentions, i - 1))
            for subject in movers:
                yield subject, "moved_to", i + 1, mentions[movers[-1]].start
        elif _HOMETOWN.fullmatch(gap):
            yield i, "from", i + 1, a.start
        elif role := _POSSESSED.fullmatch(gap) or _POSSESSED_IS.fullmatch(gap):
            yield from _timeless(_family(role.group(1), i + 1, i))
        elif role := (
            _ROLE_OF.fullmatch(gap)
            or (_IS.fullmatch(gap) and _ROLE_AFTER.match(text, b.end))
            or (_COMMA.fullmatch(gap) and _ROLE_APART.match(text, b.end))
        ):
            yield from _timeless(_family(role.group(1), i, i + 1))
        elif _AND.fullmatch(gap) and _GOT_MARRIED.match(text, b.end):
            yield i, "married_to", i + 1, a.start
        elif _AND.fullmatch(gap) and _BECAME_FRIENDS.match(text, b.end):
            yield i, "friend_of", i + 1, a.start
        elif (
            _COMMA.fullmatch(gap)
            and _BEFORE_PLACE.search(text, max(0, a.start - 12), a.start)
            and not given_names.opens(b.name)
            and not list_goes_on(text, b.end)  # "to Monzo, Wise and Starling"
        ):
            yield i, "located_in", i + 1, None
        elif (
            _IS_WHERE.fullmatch(gap)
            and (done := _WHERE_DONE.match(text, b.end))
            and (place := _subject(text, mentions, i)) is not None
        ):
            yield i + 1, done.lastgroup or "", place, b.start
        elif (role := _THEIR.search(gap)) and (head := _subject(text, mentions, i)) is not None:
            yield from _timeless(_family(role.group(1), i + 1, head))
        elif speaker is not None and (own := _said_of_self(gap)) is not None:
            kind, at = own
            carried, where = [speaker], kind
            yield speaker, kind, i + 1, a.end + at
        elif speaker is not None and (role := _MY.search(gap)):
            yield from _timeless(_family(role.group(1), i + 1, speaker))


def _set_apart(text: str, start: int, end: int) -> SetApart:
    """The span of a clause set apart by commas that opens at ``start`` and holds
    ``end``: to the comma that closes it, or its sentence's end."""
    closing = text.find(",", end)
    stop = _SENTENCE_END.search(text, end)
    last = len(text) if stop is None else stop.start()
    return SetApart(start, last if closing < 0 else min(closing, last))


def _said_of_self(gap: str) -> tuple[str, int] | None:
    """The type a speaker states of themselves in the words before a name, and where in
    ``gap`` its "I" stands, if any: "I live in", "I'm from", "I've worked at", after the
    gap's last sentence or clause break."""
    said = _I.search(gap)
    if said is None:
        return None
    rest = said.group("rest")
    for written, read in _I_FORMS:
        if rest.casefold().startswith(written):
            rest = read + rest[len(written) :]
            break
    found = _BETWEEN.fullmatch(rest)
    return None if found is None else (found.lastgroup or "", said.start("rest") - 1)


def _timeless(read: Iterator[tuple[int, str, int]]) -> Iterator[tuple[int, str, int, None]]:
    for source, kind, target in read:
        yield source, kind, target, None


def _subjects(text: str, mentions: Sequence[Mention], i: int) -> Iterator[int]:
    """The mention at ``i`` and those listed before it with "and" or commas ("Ana and
    her partner Luis": a relative named with its relation)."""
    yield i
    while i > 0 and mentions[i - 1].kind in _NAMED:
        between = text[mentions[i - 1].end : mentions[i].start]
        if not (_AND.fullmatch(between) or _AND_KIN.fullmatch(between)):
            return
        if _BEFORE_PLACE.search(text, max(0, mentions[i - 1].start - 12), mentions[i - 1].start):
            return  # "Before moving to Perth, Declan worked at": a place, no subject
        i -= 1
        yield i


def _across_apposition(
    text: str, mentions: Sequence[Mention], i: int
) -> tuple[int, str, int] | None:
    """The subject, type and where the verb begins, where the words before ``mentions[i +
    1]`` are a verb's after an apposition that follows its subject: ``mentions[i]``
    itself, or the one before it when ``mentions[i]`` stands inside the apposition."""
    end = mentions[i + 1].start
    for subject in (i, i - 1) if i else (i,):
        if mentions[subject].kind not in _NAMED:
            continue
        between = text[mentions[subject].end : end]
        apposed = _APPOSITION.match(between)
        if apposed and (said := _BETWEEN.fullmatch(between, apposed.end())):
            return subject, said.lastgroup or "", mentions[subject].end + apposed.end()
    return None


def _subject(text: str, mentions: Sequence[Mention], i: int) -> int | None:
    """The first name of the sentence holding the mention at ``i``, if a name."""
    while i > 0 and not _SENTENCE_END.search(text, mentions[i - 1].end, mentions[i].start):
        i -= 1
    return i if mentions[i].kind in _NAMED else None


def _place_pair(text: str, mentions: Sequence[Mention], i: int) -> Iterator[tuple[int, str, int]]:
    """ "in Porto, Portugal": the place at ``i`` located in the one after it (not a
    given name every reader knows: "in Perth, Declan worked")."""
    if (
        i + 1 < len(mentions)
        and _COMMA.fullmatch(text[mentions[i].end : mentions[i + 1].start])
        and not given_names.opens(mentions[i + 1].name)
    ):
        yield i, "located_in", i + 1


def list_goes_on(text: str, end: int) -> bool:
    """Whether the name ending at ``end`` is followed by "and" and one more name, not a
    given name every reader knows: "Monzo, Wise and Starling" is a list, where "Austin,
    Texas and Maria" is a place in a place."""
    more = _LIST_GOES_ON.match(text, end)
    return more is not None and more.group(1).casefold() not in given_names.GIVEN


def _family(word: str, relative: int, of: int) -> Iterator[tuple[int, str, int]]:
    role = ROLES[word.casefold()]
    if role == "friend":  # friends both ways: the first named is the source
        yield min(relative, of), "friend_of", max(relative, of)
    else:
        yield relative, f"{role}_of", of


def _anchored_time(text: str, anchor: Anchor, end: int) -> str | None:
    """The time of a relation whose target ends at ``end``, read where ``anchor`` says."""
    if anchor is None:
        return None
    if isinstance(anchor, SetApart):
        return _first_time(text, anchor.start, anchor.stop)
    if isinstance(anchor, PastApposition):
        after = _time(text, anchor.verb, end, begin=anchor.verb)
        if after is not None:
            return after
        return _time(text, anchor.subject, anchor.subject, stop=anchor.subject)
    return _time(text, anchor, end)


def _first_time(text: str, start: int, stop: int) -> str | None:
    found = _TIME.search(text, start, stop)
    return None if found is None else found.group(found.lastgroup or 0)


def _time(
    text: str, anchor: int, end: int, *, begin: int | None = None, stop: int | None = None
) -> str | None:
    """The first time stated in the clause holding ``text[anchor:end]``: from its
    sentence's start or the clause before it ("Ana moved to Oslo in 2019 and Luis ...") to
    its sentence's end or the next clause ("... in 2019 and works for Lumen"); from
    ``begin`` or to ``stop`` instead where given."""
    if begin is None:
        begin = 0
        for ended in _SENTENCE_END.finditer(text, 0, anchor):
            begin = ended.end()
        for ended in _NEXT_CLAUSE.finditer(text, begin, anchor):
            begin = ended.end()
    if stop is None:
        after = _SENTENCE_END.search(text, end)
        stop = after.start() if after else len(text)
        if (next_clause := _NEXT_CLAUSE.search(text, end, stop)) is not None:
            stop = next_clause.start()
    return _first_time(text, begin, stop)


def _month(word: str) -> int | None:
    """The month a case-folded word names, whole or short ("sept.", "jan"), or None."""
    word = word.rstrip(".")
    return _MONTH_NUMBERS.get(word)


def valid_at(time: str | None, written: datetime) -> datetime | None:
    """When a relation stated with ``time`` (as :func:`relations` gives it) began: the
    first moment of the year, month or day it names, in UTC; "last year", "this year",
    "last month" and "this month" counted from ``written``, the fact's own time. None
    for no time or one that names no such period ("two years ago")."""
    if time is None:
        return None
    words = time.replace(",", " ").split()
    folded = [w.casefold() for w in words]
    if folded[0] in ("last", "this") and folded[-1] in ("year", "month"):
        back = 1 if folded[0] == "last" else 0
        if folded[-1] == "year":
            return datetime(written.year - back, 1, 1, tzinfo=UTC)
        months = written.year * 12 + written.month - 1 - back
        return datetime(months // 12, months % 12 + 1, 1, tzinfo=UTC)
    if folded[0] == "from":  # a span: when it began
        ends = [i for i, w in enumerate(folded) if w in ("to", "until", "till")]
        words, folded = words[1 : ends[0]], folded[1 : ends[0]]
    if not words or not words[-1].isdigit() or len(words[-1]) != 4:
        return None
    year = int(words[-1])
    month = next((_month(w) for w in folded if _month(w)), None)
    day = next((int(w) for w in words[:-1] if w.isdigit()), None)
    try:
        return datetime(year, month or 1, day if month and day else 1, tzinfo=UTC)
    except ValueError:
        return None
