"""A type for each mention of a text, by rules from its words and its context, or None
when they do not say.

The types are those :mod:`engram.core.graph.ner` maps spaCy's labels to: ``person``,
``place``, ``organisation``, and where clear ``language``, ``work``, ``event`` and
``product``; handles, tags, emails and URLs keep their own kind. Cues, the first that
holds deciding:

1. a conversation's speaker is a ``person``, and so is a given name written in lowercase
   (:mod:`engram.core.graph.given_names`: "with ciara");
2. the whole name a product every reader knows (:mod:`engram.core.graph.products`: apps,
   devices, drinks, branded goods: "on Spotify", "Stella Artois") unless the sentence
   speaks of its company (who works for it or is hired by it, what it has: "works at
   Spotify", "Spotify's CEO": an ``organisation``), or an organisation every reader
   knows (:mod:`engram.core.graph.organisations`: large companies and brands, shops and
   chains, banks, universities, public and international bodies, sports clubs: "Crystal
   Palace", not the palace its last word says), else a word inside the name: an
   organisation's (University, Bank, Inc, Labs, Hospital, Club, a trade's Textiles or
   Couriers, an ensemble's Players or Quartet...: "University of Porto", "Lumen Labs"),
   an event's (Forum, Summit, Festival, Cup...: "FIFA World Cup") or a place's (Street,
   Park, Lake, City, Island...: "Central Park", "Lake Tahoe", "St Albans"; not a saint's
   St before an "'s": "St Aidan's"); the last such word decides (after an "&", among
   the words after it: "Forest & Bird" names no forest), unless a given name comes first
   ("Jun Park", "Eun-ji Park": a surname), and a place's Town, City or County beside a
   match's verb ends a club's name ("beat Marrowby Town");
3. a note's field the name is the value of (:data:`engram.core.graph.extraction.FIELDS`:
   "Owner: Brennholt" a person, "Venue: Kestrel Hall" a place, "Client: Quillmark" an
   organisation); the relations the sentence states
   (:mod:`engram.core.graph.relations`): who lives, works, studies, was born, moved or
   is related is a ``person``; where one lives, was born, moved to, is from, or what is
   located in, a ``place``; where one works or studies an ``organisation``;
4. a title, form of address or kin word just before it ("Dr. Lee", "Aunt Rosa", "my
   brother Luis"), a greeting or thanks ("Thanks, Mel"), a possessive kin word after it
   ("Ana's brother") or one of whom only a person has ("Hendrika's employer"), a
   Japanese honorific ("Nakamura-san"), or what is sent, said or given to it or comes
   from it ("a text from Okonjo"), who one sits next to, or who is thanked ("send to
   Ritu", "talked to Ana", "congrats to Adaku"; "to" alone is a place's, but not
   "according to"): a ``person``;
5. a language's name after "speak", "learn", "in", "translate", "into" and the like
   ("learning German", "translates Korean novels"): a ``language``;
6. a verb people do after it ("Ana said", "Luis told", "Ana thinks", "Ana and I"), their
   age ("Tobi, 34,", "Kofi is 29 years old", "Ife turned 40") or "who" after it: a
   ``person``;
7. a place every reader knows (:mod:`engram.core.graph.places`: countries, continents,
   oceans, US states, the capitals and large cities; "UK" and "USA" too, not read as
   acronyms), or "in", "from", "to", "near", "visit(ed)", "coast of", "outside",
   "toward", "throughout", "downtown", "the streets (town, city, island...) of", "drove
   (walked, flew...) through" just before it, what comes of it or what it has after it
   ("Kestrel-based", "Marrowby's beaches", "Brackwell's mayor"), how far it is from
   another place or another from it ("Dunmore is an hour from Galway", "a short drive
   from Kestrel"), or "<City>, <Region>": a ``place``; the words before it not for a
   given name every reader knows, nor before a possessive ("near Ana's place", "outside
   Brennholt's flat": a person's, rule 8's possessive); "at" alone is no place's cue
   (rule 8); a nationality, people or faith every reader knows
   (:mod:`engram.core.graph.peoples`: "Mexican", "Yoruba", "Sikh"): a ``group``;
8. who employs, is worked, written or freelanced for, or has one as a member ("working for
   Shell", "works in sales for", "hired by", "fined by the", "an internship at", "an offer
   from", "plays (left back) for", "writes a weekly column for"; "the" may come between:
   "volunteers at the Brannock"), who is quit ("quit Brennholt", "resigned from") or left
   for a business ("left Orlen to join a startup"), founded, acquired, merged with or
   invested in, who heads it ("CEO of"), a business named after its kind ("her startup,
   Fieldnote", "a label called Lumora") or before it ("Lumora, a startup in Leeds", read
   before a person's "Kwame, a nurse from"), a band or an orchestra one plays or sings in
   ("plays bass in Static Bloom", "plays the oboe in"), an airline flown ("flying Aer
   Lingus"), where one shops, orders from or volunteers, what one holds with it or it sends
   ("a pension with", "a receipt from"), what or who it has after a possessive ("Nike's
   store", "Huawei's main campus", "Fenwick's CEO", "Kellam's shareholders", "Vexlo's
   customer support") or before it ("the Kellam app", "the Brightwave team", "the Quillmark
   factory", "Aerolux cabin crew"), what only an organisation does ("raised $40 million",
   "laid off", "charged me"), whom one banks or flies with or gets a refund or a grant
   from, a school one gets into, enrols at or graduated from, a partner ("partnered with"),
   a web domain's name ("Booking.com"), or who plays a match ("the final between Ajaccio
   and Bastia", both of them; a country every reader knows on either side of a match's
   verb: "Brazil beat Argentina"): an ``organisation``, its cue read before a place's ("an
   offer from"), and not for a given name every reader knows or before a possessive ("works
   for Deepika", "joined Deepika's team": a person); an organisation's shape, checked with
   the words of rule 2: two names joined by "&" ("Procter & Gamble", "AT&T"), an acronym of
   two to five capitals ("IBM", "NHS"), or a name one opens ("NYU Langone"; of two
   capitals, before a known place only: "TU Munich", not "AJ Styles"); and last, after a
   possessive's ``person`` ("Milena's trip"), a name after "at" (or "@ ") that is no known
   given name ("the job at Rakuten", "lunch at Nobu"), unless one looks, laughs or is angry
   at it;
   A company whose name is as often an ordinary word, a place or a person's, where the text
   speaks of its trade (:data:`engram.core.graph.organisations.TRADES`: "Orange cut the
   mobile signal", "Labour won two seats"): an ``organisation``, after a person's cues
   ("Chase said") but for a verb a company does as often ("Sky kept the rugby on");
9. names listed together ("IBM and SAP", "Procter & Gamble and Unilever") share the type
   of one that has a cue, and a match's verb joins a team to its opponent ("Halden
   United drew with Norrby", "lost the cup final to");
10. what one watches, streams, reads, plays or finishes ("watched Inception", "reading
    Project Hail Mary", "plays Valorant", "an episode of Severance", "finished Elden
    Ring"), unless a given name every reader knows or before a possessive: a ``work``,
    read before an organisation's cue; what happens "during" it ("during Covid"): an
    ``event``; what one uses, downloads or installs ("our team uses Jira"), but not what
    one uses as something ("used Okafor as a reference") nor a company's app: a
    ``product``, read next;
11. none of these: a ``person`` when the name has a person's shape (one to three words
    beside a person's particles, "Juan de la Cruz"; none an acronym, no "of" or "the",
    not after "the", not a language's name nor a saint's with its "'s", "St Aidan's"), a
    ``work`` when it is a
    quoted title, else None. Measured on the labelled sentences' dev split
    (``bench/names.py``, BENCHMARKS.md): person F1 0.69 with None, 0.75 with every
    untyped name a person, 0.84 with the shape's exclusions and the cues above; a
    capitalised name with no cue is a person more often than anything else. Films and
    bands named with no cue are read as people ("Tokyo Drift"): the cost.

Pure and deterministic, like the extractor: the same text, mentions and relations give
the same types.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engram.core.graph import english, given_names, organisations, peoples, places, products
from engram.core.graph.extraction import (
    AGED,
    APPOSED_PERSON,
    ASKED_OF,
    AWAY,
    BEFORE_ORGANISATION,
    BUSINESSES,
    FAR_FROM,
    FIELD,
    FIELDS,
    FROM_PLACE,
    HOLDINGS,
    HONORIFIC,
    KIND_AFTER,
    MATCHES,
    PLACE_HAS,
    SAINTS,
    STAFF,
    Mention,
)
from engram.core.graph.models import (
    EVENT,
    GROUP,
    LANGUAGE,
    ORDER,
    ORGANISATION,
    PERSON,
    PLACE,
    PRODUCT,
    WORK,
)
from engram.core.graph.names import normalise
from engram.core.graph.ordinary import ADDRESS, KIN, NAMED_TIMES, PARTICLES, PERSONAL
from engram.core.graph.places import PLACE_WORDS
from engram.core.graph.relations import Stated, list_goes_on

# Words that end an event's name: "Shanghai Biology Forum", "FIFA World Cup", "Web Summit",
# "Glastonbury Festival" (names only, as the organisations' words above).
_NAMING_EVENTS = frozenset(
    """forum summit festival conference convention expo marathon olympics olympiad cup
    championship championships tournament carnival gala parade prix biennale awards
    hackathon""".split()
)
LANGUAGES = peoples.LANGUAGES
# A place's last word that is a common surname too: after a given name, a person's.
_SURNAMES_OF_PLACES = frozenset("hall lane bay park street".split())
_PERSON_ENDS = frozenset({"lives_in", "works_for", "studies_at", "moved_to", "born_in"})
_PERSON_BOTH = frozenset({"married_to", "friend_of"})
_PLACE_TARGETS = frozenset({"lives_in", "moved_to", "born_in", "from", "located_in"})
_ORGANISATION_TARGETS = frozenset({"works_for", "studies_at"})

_GREETINGS = frozenset(
    "hey hi hello hiya howdy heya bye goodbye thanks thank thx congrats congratulations"
    " cheers welcome dear".split()
)
# Forms of address that are never verbs ("miss" is both) and kin: "Aunt Rosa", "my
# brother Luis", "Thanks, Mel".
_ADDRESS = (ADDRESS - {"miss", "man", "god", "guys", "folks", "fam"}) | KIN | _GREETINGS
_BEFORE_PERSON = re.compile(
    r"\b(?:" + "|".join(sorted(_ADDRESS, key=lambda w: (-len(w), w))) + r")\.?,?\s+$",
    re.IGNORECASE,
)
# Of the verbs after a person, those a company does as often: a company whose text speaks
# of its trade is not made a person by them ("Sky kept the rugby on", "Tesla bought the
# plant"; "Chase said" stays a person).
_DONE_BY_BOTH = re.compile(
    r"\s+(?:kept|spent|plays|bought|became|booked|met|visited|flew)\b", re.IGNORECASE
)
_AFTER_PERSON = re.compile(
    r"(?:['\u2019]s?\s+(?:(?:best|older|younger|big|little|old)\s+)?(?:"
    + "|".join(sorted(KIN | PERSONAL))
    + r")\b"
    r"|\s+(?:said|says|told|tells|thinks|thought|asked|texted|wrote|replied|laughed|smiled"
    r"|cried|booked|kept|spent|loves|loved|likes|liked|wants|wanted|feels|felt|plays|met"
    r"|visited|bought|cooked|baked|became|flew|drove|walked|learned|learns|translates"
    r"|hopes|hoped|knows|knew|is\s+buying|and\s+I|and\s+me|and\s+(?:his|her))\b"
    r"|"
    + APPOSED_PERSON
    + r"|,\s+who\b|"
    + AGED
    + r"|"
    + ASKED_OF
    + r"|"
    + HONORIFIC.pattern
    + r")"
)
# What is said, sent or given to someone, or comes from them: "send to Ritu", "talked to Ana",
# "married to Luis", "an apprentice to Okafor", "a text from Okonjo"
# ("to" alone is a place's cue: "went to Porto").
_TO_PERSON = re.compile(
    r"\b(?:send|sends|sent|sending|talk|talks|talked|talking|speak|speaks|spoke|speaking"
    r"|say|says|said|write|writes|wrote|writing|reply|replies|replied|explain|explained"
    r"|introduce|introduced|give|gave|given|show|showed|lend|lent|hand|handed|pass|passed"
    r"|text|texted|married|engaged|apprentice|apprenticed|belongs|belonged|congrats"
    r"|congratulations|thanks|cheers|kudos|props|shout\s*out|shout-out|condolences|next"
    r"|hi|hello|bye|goodbye|apologised|apologized|waved|lied|proposed)"
    r"\s+(?:it\s+|this\s+|them\s+)?to\s+$"
    # what comes from someone: "a text from Okonjo", "heard from Dervla" (not an offer's
    # letter, email or call: "an offer letter from Stripe" is an employer's)
    r"|\b(?<!offer\s)(?<!rejection\s)(?<!acceptance\s)"
    r"(?:text|texts|message|messages|email|emails|call|calls|letter|letters|gift|gifts"
    r"|present|presents|card|cards|note|hug|hugs|kiss|reply|heard|dm|dms|voicemail|invite"
    r"|invitation|flowers|parcel|advice|tips|visit|(?:learned|learnt|picked\s+up|heard)"
    r"\s+(?:it|this|that))\s+from\s+$",
    re.IGNORECASE,
)
# A romanised given name's shape, hyphenated with its second part in lowercase: "Eun-ji
# Park", "Hyun-woo", "Dong-hyun" (a place's hyphenated name capitalises both: "Saint-Denis").
_GIVEN_SHAPE = re.compile(r"[A-Z][a-z]+-[a-z]+")
_BEFORE_LANGUAGE = re.compile(
    r"\b(?:speak|speaks|spoke|speaking|learn|learns|learned|learnt|learning|study|studying"
    r"|studied|in|into|fluent|native|teach|teaches|taught|translate|translates|translated"
    r"|translating)\s+$",
    re.IGNORECASE,
)
_BEFORE_PLACE = re.compile(
    r"\b(?:in|from|(?<!\baccording )to|near|visit|visits|visited|visiting|around|across"
    r"|outside|toward|towards|throughout|downtown|uptown|(?:coast|capital|outskirts|north|south|east"
    r"|west|streets|city|town|village|island|state|province|county|suburbs|shores)\s+of"
    r"|(?:drove|drive|driving|walked|walking|passed|passing|travelled|traveled|flew|went"
    r"|cycled|hiked|sailed|road-tripped)\s+(?:back\s+)?through)\s+$",
    re.IGNORECASE,
)
# After a place's name: what comes of it ("Kestrel-based", "Lagos-born") or what it has
# ("Marrowby's beaches", "Brackwell's mayor").
_AFTER_PLACE = re.compile(
    FROM_PLACE.pattern + r"|['\u2019]s\s+(?:" + "|".join(PLACE_HAS) + r")\b", re.IGNORECASE
)
# How far a place is from another named after it ("Dunmore is an hour from Galway"), and
# the other place ("an hour from Galway"); not a given name every reader knows ("Ana is an
# hour from home" is where Ana is).
_AWAY_TO = re.compile(FAR_FROM)
_AWAY_FROM = re.compile(r"\b" + AWAY + r"\s+$", re.IGNORECASE)
_REGION = re.compile(r",\s+")
_POSSESSIVE = re.compile(r"['\u2019]s?\s+[a-z]")
_ACRONYM = re.compile(r"[A-Z]{2,5}")
# "Nike's store", "Huawei's main campus", "Fenwick's CEO": what an organisation has.
_HOLDS = re.compile(
    r"['\u2019]s\s+(?:(?:main|new|flagship)\s+)?(?:"
    + "|".join(sorted(HOLDINGS | frozenset(STAFF)))
    + r")\b",
    re.IGNORECASE,
)
_LISTED = re.compile(r",?\s+and\s+|,\s+")
_KIND_AFTER = re.compile(KIND_AFTER, re.IGNORECASE)
# One left for a business is one worked for: "left Saint-Gobain to join a startup", "moved
# from Orlen to a smaller energy firm" (not "left Lisbon to join her sister", "moved from
# Leeds to a small flat", "left Tema for a bank job"; a place every reader knows stays one).
_LEFT = re.compile(
    r"\b(?:left|leaves|leaving|quit|quits|(?:moved|moves|moving|switched|switches|switching)"
    r"\s+from)\s+$",
    re.IGNORECASE,
)
_FOR_A_BUSINESS = re.compile(
    r"\s+(?:to|for)\s+(?:join\s+)?(?:a|an|another|the)\s+(?:[a-z-]+\s+){0,2}?(?:"
    + "|".join(BUSINESSES)
    + r")\b(?![ \t]+(?:job|role|position|gig|internship))",
    re.IGNORECASE,
)
_AFTER_THE = re.compile(r"\bthe\s+$", re.IGNORECASE)  # "the Hague", "The Amazon floods"
# Kin or a companion right before a name: "partner Fia", "my friend Zara" (an employer is
# no one's: "her employer, Cortex Labs").
_KIN_WORDS = KIN | PERSONAL - {"employer"}
_INITIALS = re.compile(r"(?:[A-Z]\.)+")
# A word with a capital inside after lowercase, its last part an English word, as brands
# are written ("PureGym", "EasyJet", "BlackRock"); a person's name has one after a prefix
# ("McBride", "MacLeod", "DeShawn", "LaToya", "DiCaprio", "VanDyke", "FitzGerald") or
# before a part that is no word ("JoAnn", "KeShawn").
_BRAND = re.compile(
    r"(?!(?:Mc|Mac|De|Di|Da|Du|La|Le|Van|Von|Fitz)[A-Z])[A-Z][a-z]+(?:[A-Z][a-z]*)*"
    r"[A-Z](?P<last>[a-z]{2,})"
)
# Before a name, what makes it a thing one has ("a Dyson", "my Vitamix"), no one's name.
_A_THING = re.compile(r"\b(?:a|an|my|our|your|his|their)\s+(?:(?:new|old|first)\s+)?$")
# Before a name, what makes it a band's as often as an artist's: "listening to Radiohead".
_HEARD = re.compile(r"\b(?:listen|listens|listened|listening)\s+to\s+$", re.IGNORECASE)
# After an organisation's name, what it offers, or who it has: "the Brightwave app", "the
# Kellam team", "the Fenwick CEO", "Telvora support", "my Zephyra account", "the Corvel
# direct debit", "my Lumo membership", "the Velmar branch"; or what only an organisation
# does: "Brindle raised $40 million", "Novapay charged me twice", "Quorvane laid off 200",
# "Velmar went into administration" (one who "was laid off" is a person; one goes bust
# at cards as often).
_AFTER_ORGANISATION = re.compile(
    r"\s+(?:(?:"
    + "|".join(
        "website team staff platform hq headquarters store stores shop shops factory"
        " factories warehouse outlet support account subscription order orders membership"
        " memberships helpline hotline branch branches crew pilot pilots".split()
        + list(STAFF)
    )
    + r")\b|(?:direct\s+debit|standing\s+order|loyalty\s+(?:card|points)|gift\s+cards?"
    r"|(?:cabin|ground|flight)\s+crew)\b"
    r"|(?:(?:just|recently|finally|has|have|had)\s+)?(?:laid\s+off|lays\s+off"
    r"|went\s+public|went\s+into\s+administration|filed\s+for\s+bankruptcy"
    r"|raised\s+[$\u20ac\u00a3]|charged\s+(?:me|us)\b"
    r"|(?:cut|cuts|slashed)\s+[\d,]+\s+jobs|announced\s+(?:layoffs|job\s+cuts)"
    r"|(?:is|are)\s+(?:hiring|recruiting)\b"
    r"|(?:announced|appointed|named)\s+(?:a|an|its|their)\s+(?:new\s+|interim\s+)?(?:ceo|cfo|cto"
    r"|chair|chairman|chairwoman|president|director|head)\b"
    r"|\s*for\s+(?:our\s+|my\s+|the\s+)?(?:gas|electric|electricity|broadband|internet|energy"
    r"|insurance|mortgage|phone\s+plan|mobile\s+plan|data\s+plan)\b"
    r"|(?:cancelled|canceled|delayed|refunded)\s+(?:my|our)\s+(?:order|parcel|package|delivery"
    r"|flight)\b"
    r"|(?:ran|runs|published|publishes)\s+(?:a|an)\s+(?:piece|story|article|feature|editorial"
    r"|op-ed|exposé|expose|investigation)\b))",
    re.IGNORECASE,
)
# A match named between a loser and its winner: "lost the cup final to", "lost a
# friendly to".
_A_MATCH = r"(?:(?:the|a|an|their|its)\s+(?:[a-z-]+\s+)?" + MATCHES + r"\s+)?"
# A team's name either side of a match's verb: a country every reader knows names its
# national team there ("Brazil beat Argentina", "lost to Spain", "France vs Italy").
_MATCH_BEFORE = re.compile(
    r"\b(?:beat|beats|defeated|defeats|thrashed|(?:lost|loses|losing)\s+" + _A_MATCH + r"to"
    r"|(?:drew|draw|tied)\s+with|vs\.?|versus|" + MATCHES + r"\s+against)\s+$",
    re.IGNORECASE,
)
_MATCH_AFTER = re.compile(
    r"\s+(?:beat|beats|defeated|defeats|thrashed|(?:lost|loses)\s+" + _A_MATCH + r"to"
    r"|(?:drew|tied)\s+with|vs\.?|versus)\s",
    re.IGNORECASE,
)
# Either side of a match's verb, one team makes the other one ("Halden United drew with
# Norrby"), as names listed together share a type.
_MATCHED = re.compile(_MATCH_AFTER.pattern + "?", re.IGNORECASE)
# A place's words that end a club's name as often ("Ipswich Town", "Derby County"): beside
# a match's verb, the club's.
_CLUBS_PLACE_WORDS = frozenset({"town", "city", "county"})
# Where one is admitted or turned down: a place every reader knows after it is its
# university ("accepted to Oxford", "an offer from Cambridge", "a rejection from Yale";
# not "got into", said of arriving as often).
_ADMITTED = re.compile(
    r"\b(?:(?:accepted|admitted|applied|applying|apply)\s+(?:in)?to|(?:offer|rejection)\s+from"
    r"|(?:rejected|waitlisted|wait-listed)\s+(?:by|from))\s+$",
    re.IGNORECASE,
)
# A team called by its members, in the plural: "the Tigers", "the Wolves" (before or after
# a match's verb).
_TEAM = re.compile(r"[A-Z][a-z]+s")
_NAME_NEXT = re.compile(r"(?:the\s+)?[A-Z]")
_NAME_LAST = re.compile(r"[A-Z][\w'\u2019-]*\s+$")
# The second team of "the match between X and Y", however Y is read after ("...and Rangers
# kept Eoin up": the match decides).
_SECOND_TEAM = re.compile(
    r"\b" + MATCHES + r"\s+between\s+(?:the\s+)?[A-Z][^,.;!?]{0,40}?"
    r"\s+(?:and|&|vs\.?|versus)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# A web domain's name: "Booking.com".
_DOMAIN = re.compile(r"\S+\.(?:com|org|net|io|co|ai|app|dev)", re.IGNORECASE)
# What one watches, reads, streams or plays is a work ("watched Inception", "reading
# Middlemarch", "plays Valorant", "an episode of Severance"); not what one listens to (an
# artist as often), and not a given name every reader knows ("watching Ana").
# "the" between a cue and the name it reads ("volunteers at the Brannock").
_THE_BEFORE = re.compile(r"(?<=\s)the\s+$", re.IGNORECASE)
# What happens during something is an event: "during Covid", "during Wimbledon".
_DURING = re.compile(r"\bduring\s+(?:the\s+)?$", re.IGNORECASE)
_AS = re.compile(r"\s+as\b", re.IGNORECASE)  # "used Okafor as a reference"
# What one uses, downloads or installs is a tool, an app or a device: "our team uses Jira",
# "downloaded Calmly", "subscribed to Vexly"; but one used as something is anyone.
_BEFORE_PRODUCT = re.compile(
    r"\b(?:use|uses|used|using|download|downloads|downloaded|downloading|install|installs"
    r"|installed|installing|(?:subscribe|subscribes|subscribed|subscribing)\s+to)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# People a name tells apart, after it: "the Kowalski twins", "the Okafor kids".
_PEOPLE_AFTER = re.compile(
    r"\s+(?:twins|family|families|kids|children|boys|girls|brothers|sisters|siblings"
    r"|cousins|parents|household|clan)\b",
    re.IGNORECASE,
)
_BEFORE_WORK = re.compile(
    r"\b(?:watch|watches|watched|watching|rewatch|rewatched|rewatching|binge-watch"
    r"|binge-watched|binge-watching|binged|binging|bingeing|stream|streams|streamed|streaming"
    r"|read|reads|reading|reread|rereading|play|plays|played|playing|staging|staged"
    r"|finished|finishing|(?:an\s+episode|the\s+finale|season\s+\d+|a\s+copy|the\s+sequel"
    r"|the\s+trailer|a\s+(?:new\s+)?production)\s+of)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# "at" before a name no other cue types: where one works, studies or eats, more often
# than a place (a known place or a place's word decides before it) and never a person,
# unless one looks, laughs or is angry at them.
_AT = re.compile(
    r"(?<!\blook )(?<!\blooked )(?<!\blooking )(?<!\blaughed )(?<!\blaughing )"
    r"(?<!\bsmiled )(?<!\bsmiling )(?<!\bwaved )(?<!\bstared )(?<!\bstaring )"
    r"(?<!\byelled )(?<!\bshouted )(?<!\bmad )(?<!\bangry )(?<!\bupset )(?<!\bpointed )"
    r"(?<!\bgrinned )(?<!\bglared )(?<!\bwinked )(?<!\bsnapped )(?:\bat|(?<!\S)@)\s+$",
    re.IGNORECASE,
)
_LOOK_BACK = 16  # characters read before a mention for a cue


def types(
    text: str, mentions: Sequence[Mention], stated: Sequence[Stated] = ()
) -> list[str | None]:
    """The type of each of ``mentions`` (of ``text``, in order of position) by the cues
    of the module, with ``stated`` the relations :func:`engram.core.graph.relations.relations`
    read between them; None where no cue holds."""
    by_relation = _from_relations(stated)
    found = [_type(text, mentions, n, by_relation.get(n)) for n in range(len(mentions))]
    _share_in_lists(text, mentions, found)
    return [_default(text, m, kind) for m, kind in zip(mentions, found, strict=True)]


def _share_in_lists(text: str, mentions: Sequence[Mention], found: list[str | None]) -> None:
    """Names listed together ("IBM and SAP", "Procter & Gamble and Unilever") are of one
    type, and so are an organisation and the name its match's verb joins it to ("Halden
    United drew with Norrby"): one with no cue takes the type of the neighbour that has
    one, unless it opens with a given name every reader knows."""
    for _ in range(2):  # a list of three passes a type two steps
        for n in range(len(mentions) - 1):
            a, b = mentions[n], mentions[n + 1]
            if a.kind != "name" or b.kind != "name":
                continue
            between = text[a.end : b.start]
            matched = _MATCHED.fullmatch(between) and ORGANISATION in (found[n], found[n + 1])
            if not (matched or _LISTED.fullmatch(between)):
                continue
            if found[n] is None and found[n + 1] is not None and not given_names.opens(a.name):
                found[n] = found[n + 1]
            elif found[n + 1] is None and found[n] is not None and not given_names.opens(b.name):
                found[n + 1] = found[n]


def _default(text: str, mention: Mention, kind: str | None) -> str | None:
    """A name no cue types is a ``person`` when it has a person's shape: one to three
    words, none all capitals nor with a brand's capital inside, not a quoted title (a
    ``work``), not after "the", an article or a possessive (one owns or orders a thing,
    no one), not words that are all English and nothing else
    (:func:`engram.core.graph.english.only_word`; one such word alone is often a pet's
    name: "Shadow", "Biscuit")."""
    if kind is not None or mention.kind != "name" or mention.name in LANGUAGES:
        return kind  # a language's name with no cue of one: a people's too, or unsaid
    if mention.start > 0 and text[mention.start - 1] in '"\u201c':
        return WORK
    words = mention.surface.split()
    if any(w.isupper() and len(w) > 1 and not _INITIALS.fullmatch(w) for w in words):
        return None  # an acronym's shape; a person's initials are not ("J. R. Okoye")
    if any(_brand(w) for w in words):
        return None  # a brand's shape: a company's, an app's or a thing's, no one's
    # a person's particles do not count ("Juan de la Cruz": two names); "of" and "the" are
    # no person's ("Lord of the Rings")
    if "of" in words or "the" in words or len([w for w in words if w not in PARTICLES]) > 3:
        return None
    if _AFTER_THE.search(text, max(0, mention.start - 5), mention.start):
        return None
    if _A_THING.search(text, max(0, mention.start - 20), mention.start):
        return None  # "a Dyson", "my Vitamix", "an Uber"
    if len(words) > 1 and all(english.only_word(w.casefold()) for w in words):
        return None  # "Star Wars", "Pride Month", "Northern Voices": words, no one's names
    if _saint_s(mention.surface):
        return None  # "St John's": a school's, a church's or a college's name
    return PERSON


def _type(text: str, mentions: Sequence[Mention], n: int, related: str | None) -> str | None:
    mention = mentions[n]
    if mention.kind == "speaker":
        return PERSON
    if mention.kind != "name":
        return mention.kind
    if mention.surface.islower() and mention.name in given_names.GIVEN:
        return PERSON  # "with ciara"; a known place or organisation in lowercase reads on
    if _kin_before(text, mention.start):
        return PERSON  # "Tadhg's partner Fia", "my sister Alexa": whatever else it names
    known = mention.name in places.KNOWN
    if not known and mention.name in products.KNOWN:
        return ORGANISATION if _of_the_company(text, mention, related) else PRODUCT
    if not known and mention.name in organisations.KNOWN:
        return ORGANISATION  # the whole name, before the words in it: "Crystal Palace"
    first = mention.surface.split(maxsplit=1)[0]
    # "Eun-ji Park", "Jun Park": a given name first, so a person's surname, not a park;
    # "Rebecca Hall", "Lois Lane": a given name every reader knows before a surname that
    # is a place's or a trade's word too ("Ana Mutual")
    last = mention.name.split()[-1]
    given = (
        _GIVEN_SHAPE.fullmatch(first) is not None
        or first.casefold() in NAMED_TIMES
        or (
            given_names.opens(mention.name)
            and (last in _SURNAMES_OF_PLACES or last in organisations.AS_SURNAMES)
        )
    )
    named = (None if given else _by_words(mention.name, _saint_s(mention.surface))) or (
        None if known else _by_shape(mention.surface)
    )
    if named == PLACE and last in _CLUBS_PLACE_WORDS and _matched(text, mention):
        return ORGANISATION  # "Fenwick Athletic beat Coldwell Town": a club, not a town
    if named is not None:
        return named
    given_first = given_names.opens(mention.name)
    if field := FIELD.search(text, max(0, mention.start - 24), mention.start):
        return FIELDS[field.group("field").casefold()]  # "Venue: Kestrel Hall"
    if _HOLDS.match(text, mention.end) and not given_first:
        return ORGANISATION  # before its relations: "Huawei's campus is in" locates it
    if not given_first and _SECOND_TEAM.search(text, max(0, mention.start - 80), mention.start):
        return ORGANISATION
    if not given_first and _KIND_AFTER.match(text, mention.end):
        return ORGANISATION  # "Lumora, a startup in Leeds": before a person's apposition
    left = not known and _LEFT.search(text, max(0, mention.start - 2 * _LOOK_BACK), mention.start)
    if left and _FOR_A_BUSINESS.match(text, mention.end):
        return ORGANISATION  # "left Saint-Gobain to join a startup": before a place's cue
    if related is not None and not (related == ORGANISATION and given_first):
        return related  # "works for Deepika": a person every reader knows, employer or not
    before = text[max(0, mention.start - _LOOK_BACK) : mention.start]
    back = max(0, mention.start - 2 * _LOOK_BACK)  # the longer cues', read further back
    if _BEFORE_PERSON.search(before) or (
        _AFTER_PERSON.match(text, mention.end)
        and not (
            _DONE_BY_BOTH.match(text, mention.end)
            and organisations.of_its_trade(mention.name, text)
        )
    ):
        return PERSON
    if not known and _TO_PERSON.search(text, back, mention.start):
        return PERSON
    if known and _matched(text, mention):
        return ORGANISATION  # a national team
    if known and _ADMITTED.search(text, back, mention.start):
        return ORGANISATION  # "accepted to Oxford": its university
    if _team(text, mention, back):
        return ORGANISATION  # "the Tigers beat the Sharks"
    if not known and _in_brackets_after_someone(text, mentions, n):
        return ORGANISATION  # a note's "Marek (Brightside)": where the person works
    if organisations.of_its_trade(mention.name, text) and not (
        known and _BEFORE_PLACE.search(text, back, mention.start)
    ):
        return ORGANISATION  # "Orange cut the mobile signal", not "drove to Halifax"
    if known:
        return PLACE
    if mention.name in LANGUAGES and _BEFORE_LANGUAGE.search(before):
        return LANGUAGE
    if mention.name in peoples.GROUPS:
        return GROUP
    if mention.name in LANGUAGES:
        return None
    if not given_first and _HEARD.search(text, back, mention.start):
        return None  # "listening to Radiohead": a band or an artist, no place
    owned = _POSSESSIVE.match(text, mention.end) is not None
    # What one watches, works for or goes to is no given name every reader knows, nor what
    # is someone's: "read Tobi's note", "joined Deepika's team", "near Ana's place" are a
    # person's (the possessive's, below). A work's cue first, then a product's, then an
    # organisation's (it holds a place's: "an offer from", "applied to"), then a place's.
    if not (given_first or owned):
        if _BEFORE_WORK.search(text, back, mention.start):
            return WORK  # "watched Inception"
        if _DURING.search(text, back, mention.start):
            return EVENT  # "during Covid", "during Wimbledon": what happens, no one
        if (
            _BEFORE_PRODUCT.search(text, back, mention.start)
            and not _AS.match(text, mention.end)
            and not _AFTER_ORGANISATION.match(text, mention.end)
        ):
            return PRODUCT  # "our team uses Jira": a tool, no one ("used Okafor as a ...")
        if (
            _organisation_cue(text, back, mention)
            or _AFTER_ORGANISATION.match(text, mention.end)
            or _DOMAIN.fullmatch(mention.surface)
        ):
            return ORGANISATION
        if _BEFORE_PLACE.search(text, back, mention.start):
            return PLACE
    if _AFTER_PLACE.match(text, mention.end) or _in_region(text, mentions, n):
        return PLACE
    if not given_first and (
        _AWAY_TO.match(text, mention.end)
        or _AWAY_FROM.search(text, max(0, mention.start - 48), mention.start)
    ):
        return PLACE  # "Dunmore is an hour from Galway", "a short drive from Kestrel"
    if not given_first and _before_region(text, mentions, n):
        return PLACE  # "Springfield, Illinois", "Teatro Colón, Buenos Aires"
    if owned and len(mention.name.split()) <= 2:
        return PERSON  # "Milena's trip": among the weakest cues, last but one
    if _AT.search(before) and not given_first:
        return ORGANISATION  # "the job at Rakuten", "chef at Casa de los Abuelos"
    return None


def _matched(text: str, mention: Mention) -> bool:
    """Whether ``mention`` stands on either side of a match's verb: "beat Coldwell Town",
    "Coldwell Town drew with"."""
    before = text[max(0, mention.start - _LOOK_BACK) : mention.start]
    return bool(_MATCH_BEFORE.search(before) or _MATCH_AFTER.match(text, mention.end))


def _kin_before(text: str, start: int) -> bool:
    """Whether the word before ``start`` (a comma after it or not) is kin or a companion
    (:data:`_KIN_WORDS`), a space between."""
    if not text[start - 1 : start].isspace():
        return False
    words = text[max(0, start - 24) : start].split()
    return bool(words) and words[-1].rstrip(",").casefold() in _KIN_WORDS


def _in_brackets_after_someone(text: str, mentions: Sequence[Mention], n: int) -> bool:
    """Whether the name at ``n`` stands in brackets right after a name opening with a
    given name every reader knows, as notes write where one works: "Marek (Brightside)",
    "Ilse Berg (Corvel Labs)"."""
    if n == 0 or not given_names.opens(mentions[n - 1].name):
        return False
    return text[mentions[n - 1].end : mentions[n].start].strip() == "("


def _team(text: str, mention: Mention, back: int) -> bool:
    """Whether ``mention`` is "the" and a plural name, on one side of a match's verb with
    a name on the other: "the Tigers beat the Sharks" (not "the Hendersons beat the
    odds")."""
    the = _AFTER_THE.search(text, max(0, mention.start - 5), mention.start)
    if the is None or not _TEAM.fullmatch(mention.surface):
        return False
    if after := _MATCH_AFTER.match(text, mention.end):
        return _NAME_NEXT.match(text, after.end()) is not None
    before = _MATCH_BEFORE.search(text, back, the.start())
    return before is not None and _NAME_LAST.search(text, back, before.start()) is not None


def _of_the_company(text: str, mention: Mention, related: str | None) -> bool:
    """Whether the sentence speaks of a product's company, not the product: who works
    for it or is hired by it, or what it has ("works at Spotify", "Spotify's CEO")."""
    back = max(0, mention.start - 2 * _LOOK_BACK)
    return (
        related == ORGANISATION
        or _HOLDS.match(text, mention.end) is not None
        or _organisation_cue(text, back, mention)
    )


def _organisation_cue(text: str, back: int, mention: Mention) -> bool:
    """Whether what only an organisation is comes just before ``mention``
    (:data:`BEFORE_ORGANISATION`: "hired by", "plays cello for"), "the" between or not
    ("plays cello for the Bamberg Symphony"), but for a family after "the": one word that
    is a plural of no English word ("joined the Garcias for dinner"; "the Tigers" a team),
    or a name before a word of people ("the Kowalski twins")."""
    if BEFORE_ORGANISATION.search(text, back, mention.start):
        return True
    the = _THE_BEFORE.search(text, back, mention.start)
    if the is None:
        return False
    words = mention.name.split()
    if len(words) == 1 and words[0].endswith("s") and not english.word(words[0][:-1]):
        return False  # a family's name
    if _PEOPLE_AFTER.match(text, mention.end):
        return False  # "works with the Kowalski twins": people the name tells apart
    return BEFORE_ORGANISATION.search(text, back, the.start()) is not None


def _by_words(name: str, saint: bool = False) -> str | None:
    """An organisation's, an event's or a place's word inside the name, the last one
    deciding; a name of one word is not typed by itself ("Bank", "Park" are surnames
    too); ``saint``: a saint's name with its "'s", whose St is no street."""
    words = name.split()
    if len(words) < 2:
        return None
    if saint:
        words = words[1:]  # "St Aidan's": a school's, no street's; "St Albans" a place
    if "&" in words:  # "Forest & Bird": the name after the "&" is its head, no forest
        words = words[len(words) - words[::-1].index("&") :]
    for word in reversed(words):
        if word in organisations.NAMING_WORDS:
            return ORGANISATION
        if word in _NAMING_EVENTS:
            return EVENT
        if word in PLACE_WORDS:
            return PLACE
    return None


def _by_shape(surface: str) -> str | None:
    """An organisation's shape: two names joined by "&" ("Johnson & Johnson", "AT&T"),
    an acronym of two to five capitals ("IBM", "NHS"), or a name such an acronym opens
    ("NYU Langone", "PSV Eindhoven"); of two capitals only before a place every reader
    knows ("TU Munich"), as a person's initials open a name too ("AJ Styles")."""
    if "&" in surface and not surface.islower():
        return ORGANISATION
    if _ACRONYM.fullmatch(surface):
        return ORGANISATION
    first, _, rest = surface.partition(" ")
    opens = bool(rest) and _ACRONYM.fullmatch(first) is not None
    if opens and first.casefold() not in places.KNOWN:
        return ORGANISATION if len(first) > 2 or normalise(rest) in places.KNOWN else None
    return None


def _brand(word: str) -> bool:
    """Whether ``word`` is written as a brand is (:data:`_BRAND`)."""
    shaped = _BRAND.fullmatch(word)
    return shaped is not None and english.word(word[shaped.start("last") - 1 :].casefold())


def _saint_s(surface: str) -> bool:
    """Whether ``surface`` is a saint's name with its "'s", a school's, a church's or a
    hospital's ("St Aidan's")."""
    return surface.split()[0].casefold() in SAINTS and surface.endswith(("'s", "\u2019s"))


def agreeing(stated: Sequence[Stated], kinds: Sequence[str | None]) -> list[Stated]:
    """The relations of ``stated`` their ends' types (``kinds``, of the same mentions)
    allow: one only a person holds (works for, lives in, studies at, kin, married to...)
    not held by what the types read as an organisation or a place ("Callow Textiles hired
    Brisk Couriers": no one's employer)."""
    return [
        r for r in stated if not (_of_a_person(r.type) and kinds[r.source] in (ORGANISATION, PLACE))
    ]


def _of_a_person(kind: str) -> bool:
    """Whether only a person holds a relation of ``kind``."""
    return kind in _PERSON_ENDS or kind in _PERSON_BOTH or kind.endswith("_of")


def _from_relations(stated: Sequence[Stated]) -> dict[int, str]:
    """The types the relations give their ends, the first relation read deciding."""
    found: dict[int, str] = {}
    for relation in stated:
        kind = relation.type
        if _of_a_person(kind):
            found.setdefault(relation.source, PERSON)
        if kind in _PERSON_BOTH or kind.endswith("_of"):
            found.setdefault(relation.target, PERSON)
        if kind in _PLACE_TARGETS:
            found.setdefault(relation.target, PLACE)
        if kind == "located_in":
            found.setdefault(relation.source, PLACE)
        if kind in _ORGANISATION_TARGETS:
            found.setdefault(relation.target, ORGANISATION)
    return found


def _in_region(text: str, mentions: Sequence[Mention], n: int) -> bool:
    """``"<City>, <Region>"`` after "in", "from", "to": the region; not one of a list
    ("applied to Monzo, Wise and Starling"), nor after an organisation every reader knows."""
    if n == 0 or not _REGION.fullmatch(text[mentions[n - 1].end : mentions[n].start]):
        return False
    if mentions[n - 1].name in organisations.KNOWN or list_goes_on(text, mentions[n].end):
        return False
    start = mentions[n - 1].start
    return bool(_BEFORE_PLACE.search(text[max(0, start - _LOOK_BACK) : start]))


def _before_region(text: str, mentions: Sequence[Mention], n: int) -> bool:
    """``"<Place>, <a place every reader knows>"``: the first, with no cue before it."""
    if n + 1 >= len(mentions) or mentions[n + 1].name not in places.KNOWN:
        return False
    return _REGION.fullmatch(text[mentions[n].end : mentions[n + 1].start]) is not None


def most_frequent(found: Sequence[str | None]) -> str | None:
    """The type read most often among ``found`` (None ignored), ties broken by
    :data:`ORDER`, then by name; None when none was read."""
    counts: dict[str, int] = {}
    for kind in found:
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda k: (-counts[k], _rank(k), k))


def _rank(kind: str) -> int:
    return ORDER.index(kind) if kind in ORDER else len(ORDER)
