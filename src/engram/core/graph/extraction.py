"""Entity mentions in a text, by rules, with no model and no network.

It runs inline on every write, so it reads one text in tens of microseconds and the same
text always gives the same mentions. In order:

1. names the scope already knows, and their aliases: the longest run of words whose normal
   form (:func:`engram.core.graph.names.normalise`) is known, beginning and ending with a word
   that has a capital ("new york" in lowercase is not matched, nor "max" for Max);
2. runs of capitalised words that do not start a sentence ("New York", "Lord of the
   Rings", "George R. R. Martin"), and titles in double quotes ("The Name of the Wind");
3. a capitalised run that opens a sentence and goes on with further name words, read
   whole ("Bruno Costa works...", "University of Porto opened...", "Marks & Spencer"),
   unless its first word is one that opens sentences and never a name: an imperative or
   adjective of :data:`engram.core.graph.ordinary.OPENERS` ("Glad Max", "Tell Jon") or
   the shape of a gerund or an -ly adverb ("Visiting Paris", "Hopefully Nate"): a list,
   because chat opens sentences with verbs and adjectives no shape tells apart;
4. a lone word that opens a sentence only when the scope knows it ("Max looks happy"),
   or when a pattern makes it a name: listed with a name ("Ana and Luis", "Ana, Luis and
   Maria"), the subject of what people do ("Ana works at", "lives", "moved", "was born",
   "said", "told", "teaches", "graduated", "no longer lives", "Anthony and I", "Jakub
   and his cousin"), (an adverb between: "Oyelaran finally replied"), of what someone
   says, decides or does to others ("Okafor emailed", "Ruairi spent", "Brindle raised",
   "Kestrova laid off": never "started", "helped" or "called", which a thing does as
   often: "Work called"), a possessive or "is my" before a kin word or one of whom only
   a person has (:data:`engram.core.graph.ordinary.KIN`,
   :data:`engram.core.graph.ordinary.PERSONAL`: "Ana's brother", "Kofi's best friend",
   "Ana is my sister", "Hendrika's employer") or what a person has
   (:data:`engram.core.graph.ordinary.OWNED`: "Okafor's birthday"), one from a
   department ("Renner from accounts"), how far it is from a place named after ("Dunmore
   is an hour from Galway"), the value of a note's field ("Owner: Brennholt", "Venue:
   Kestrel Hall"), a business's kind in apposition or after "is a" ("Brightmoor, a small
   bakery", "Brannock is a small bakery in Leeds"), or a
   possessive before what an organisation has (:data:`HOLDINGS`: "Nike's store"), or a
   place, an organisation or a given name every reader knows
   (:mod:`engram.core.graph.places`, :mod:`engram.core.graph.organisations`,
   :mod:`engram.core.graph.given_names`, which holds no English word: "Italy was
   awesome", "Spotify hired Ana", "Deepika always wins"), or a company whose name is as
   often a word, where the text speaks of its trade ("Orange cut the mobile signal":
   :data:`engram.core.graph.organisations.TRADES`). Else "Italy was awesome" and
   "Dance is my passion" would read alike, and only the second is common in chat; any
   possessive ("Life's good") was tried and added false names on the LoCoMo turns;
5. @handles, #hashtags, emails and URLs;
6. a given name written in lowercase, as chat writes names ("with ciara", "james's
   car"), from :mod:`engram.core.graph.given_names`, which leaves out every name that is
   an English word too ("will", "mark", "grace"), a known organisation in lowercase
   ("ugh monzo froze my card"), a company named by a word no common English word where
   the text speaks of its trade ("my amazon parcel"), and a known place or product in
   lowercase after a word that says one comes ("landed in cebu", "on duolingo"); an
   organisation's name of several words in lowercase that no list reads: a known one
   holding a word that is no English word ("on hold with british gas"), a coined word
   before a trade's word ("the guy from greenleaf estates"), or after what only an
   organisation is ("a job at quillon", "interview at korvell labs", "an offer from
   brandt & kessler"); a month's short form that is a given name ("Jan") is a time
   beside a day or a year ("in Jan 2023").

Ordinary words are never names, capitalised or not (:mod:`engram.core.graph.ordinary`):
pronouns and other function words, deictics (This, Now, Here, Today), greetings and
interjections ("Hey John" names John), contractions (I'm, Let's), time expressions
(Monday, June, Christmas: a fact's time carries them; but a month or season that is a
given name too, right before a name and after no word that makes it a time, is a first
name: "May Lin", "Summer Delaney"), family words and titles (Mom, Dr., Aunt, Coach: "Aunt
Rosa" names Rosa), single letters. A possessive is not part of a name
("Ed Sheeran's" names Ed Sheeran, "Chris' dog" Chris), nor is a Japanese honorific
("Nakamura-san" names Nakamura), but "Charlotte's Web" is one name
unless the scope knows Charlotte. "and" parts two names ("Ana and Luis"), "&" joins one
("Johnson & Johnson").

A conversation's turn is stored as ``"{speaker}: {text}"``: given ``speaker``, the prefix
is a mention of them (kind ``speaker``) and the text after it starts a sentence. Without
it, a short prefix before a colon ("Caroline: ", "Note: ") is read as a sentence of its
own, so its first word is a name only as rule 4 says.

Measured on 616 hand-labelled LoCoMo dev turns in BENCHMARKS.md (``bench/extraction.py``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from engram.core.graph import english, given_names, names, organisations, places, products
from engram.core.graph.ordinary import (
    ABBREVIATIONS,
    ACRONYMS,
    CONNECTORS,
    FUNCTION,
    HOLIDAYS,
    INSIDE_NAMES,
    KIN,
    NAMED_MONTHS,
    NAMED_TIMES,
    NOT_NAMES,
    OWNED,
    PERSONAL,
    TITLE_WORDS,
    opener,
)

Kind = Literal["name", "speaker", "handle", "hashtag", "email", "url"]
MAX_NAME_WORDS = 8  # a known name or a capitalised run is at most this many words

_normalise = lru_cache(maxsize=8192)(names.normalise)  # names repeat; it is pure

_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`]+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[^\W_](?:[\w-]*\w)?(?:\.[^\W_](?:[\w-]*\w)?)+")
_HANDLE = re.compile(r"(?<![\w@/.])@\w+(?:[.]\w+)*")
_HASHTAG = re.compile(r"(?<![\w#&/])#\w+")
_SPECIALS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("url", _URL),  # first: a URL may hold an @ or a #
    ("email", _EMAIL),
    ("handle", _HANDLE),
    ("hashtag", _HASHTAG),
)
_URL_TAIL = ".,;:!?'\")]}>"
# A word: letters and digits, with ' - . & inside it and + at its end ("Spider-Man",
# "O'Brien", "U.S", "AT&T", "LGBTQ+").
_WORD = re.compile(r"[^\W_](?:\w|['\u2019.&-](?=[^\W_]))*\+*")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{1,120})[\"\u201d]")
_LABEL = re.compile(r"[^\W\d_][\w .'\u2019-]{0,60}?:[ \t]+")
# A word from its first capital, or first letter beyond ASCII (a word with a capital inside,
# "iPhone", is read again from its start).
_CAPITAL = re.compile(r"[^\W\d_a-z](?:\w|['\u2019.&-](?=[^\W_]))*\+*")
_INSIDE = "'\u2019.&-"  # what may join two parts of one word
_LETTER = re.compile(r"\w")
_INITIALISM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # "J.K", "U.S", "D.C"
# A sentence ends in a gap between words: a stop, a newline or an emoji, then no word.
_ENDS = re.compile(r"[.!?\u2026\n\U0001f000-\U0001faff\u2600-\u27bf][^\w]*$")
# What may lie between two words of one name: spaces, "&", connectors ("Bank of America",
# "Lord of the Rings", "Juan de la Cruz", "Ali bin Hamad").
_JOIN = re.compile(
    r"[ \t]*&[ \t]*|[ \t]+(?:(?:" + "|".join(sorted(CONNECTORS)) + r")[ \t]+(?:the[ \t]+)?)*"
)
_CONTRACTION = re.compile(r"(?:n't|'m|'re|'ve|'ll|'d)$")
# What an organisation has, after a possessive that opens a sentence: "Nike's store";
# where one of them is, the organisation is ("Huawei's campus is in Shenzhen").
HOLDINGS = frozenset(
    """store stores shop shops office offices campus headquarters hq factory branch website
    warehouse subsidiary""".split()
)
# Who an organisation has, serves and reports: "Fenwick's CEO resigned", "Kellam's stock
# price fell", "Vexlo's customer support", "Dishroom's menu", "Velmar's app". No person
# has a founder, shareholders or quarterly earnings; where its CEO is, the organisation
# need not be.
STAFF = tuple(
    "ceo|cfo|cto|coo|founder|founders|co-founder|cofounder|employees|shareholders|stock price"
    "|share price|stock|ipo|revenue|profits|earnings|customer service|customer support"
    "|customers|products|menu|prices|logo|chief executive|payroll|flavours|flavors"
    "|support team|procurement|app|apps".split("|")
)
# The kinds of business a name is given in apposition, before it ("her band, The Velvet
# Owls", "a restaurant called Sal's") or after it ("Lumora, a startup in Leeds",
# "Brightmoor, a small bakery"): an organisation, not the person "X, a nurse from" is.
BUSINESSES = (
    "company|startup|start-up|firm|brand|label|charity|nonprofit|non-profit|business|band"
    "|restaurant|shop|store|bakery|bar|pub|gym|agency|studio|publisher|airline|bank|chain"
    "|supermarket|consultancy|retailer|manufacturer|distillery|brewery|winery|franchise"
    "|supplier|vendor|insurer|lender|provider"
).split("|")
# A business's kind after its name, in apposition or after "is a", as the head of its
# phrase: "Brightmoor, a small bakery", "Brannock is a small bakery in Leeds"; not "Ana is
# a brand ambassador" nor "a bank clerk".
KIND_AFTER = (
    r"(?:,|[ \t]+(?:is|was))[ \t]+(?:a|an|the|our|my|their|his|her)[ \t]+"
    r"(?:[a-z-]+[ \t]+){0,2}?(?:" + "|".join(BUSINESSES) + r")"
    r"(?=[ \t]*(?:[.,;:!?)]|$)|[ \t]+(?:in|on|at|near|from|for|that|which|who|with|run|owned"
    r"|based|called|named|where|and|but)\b)"
)
# What a match between two teams is called: "the final between", "a friendly against".
MATCHES = r"(?:match|game|final|derby|fixture|clash|friendly|qualifier)"
# Where one plays in a team, between "plays" and the team, in the field games people play:
# "plays left back for", "plays hooker for", "played point guard for", "plays shortstop for".
_POSITION = (
    r"(?:(?:(?:left|right|centre|center|loose|tight|inside|outside|small|power|point|shooting"
    r"|wide|running|middle|opening|first|second|third)[ -]?)?(?:back|wing|winger|forward"
    r"|midfield|striker|goalkeeper|keeper|defence|defense|half|fly-half|scrum-half|full-back"
    r"|fullback|hooker|prop|lock|flanker|number\s+(?:8|eight|nine|ten)|guard|center|centre"
    r"|quarterback|linebacker|receiver|end|cornerback|safety|kicker|pitcher|catcher|shortstop"
    r"|baseman|base|batter|batsman|bowler|spinner|wicketkeeper|wicket-keeper|all-rounder|goalie"
    r"|defenceman|defenseman|setter|libero|blocker|jammer)|up\s+front|in\s+goal)"
)
# Who employs, hires or is worked for: "working for Shell", "works in sales for", "hired
# by", "fined by", "an internship at", "an apprenticeship at", "an offer from", "a
# rejection from", "plays (left back) for"; who is quit ("quit Brennholt", "resigned
# from", "laid off by"); who founded or heads one ("CEO of", "founded Quillmark"); what is
# bought, merged or invested in as a business ("acquired", "merged with", "a stake in",
# "shares of", "the board of", "a spokesperson for"); what one subscribes to or has a code
# from ("a subscription to Brightwave", "a discount code from Lunaro"), or is on hold
# with ("on hold with Velmar for an hour"); a business named
# after its kind ("her startup, Fieldnote", "a label called Lumora", "a choir called
# Northern Voices"); where one shops, orders from, volunteers or drives ("drives for
# Bolt").
# What one plays in a band or an orchestra, with its chair or kind ("plays cello for the
# Bamberg Symphony", "played second violin with the Hallé"); after "the piano", "in" says
# where as often ("plays the piano in Brackwell").
_INSTRUMENTS = (
    r"(?:(?:first|second|third|fourth|principal|co-principal|lead|rhythm|solo|tenor|alto"
    r"|baritone|soprano|electric|acoustic|bass)\s+)?(?:bass|double\s+bass|guitar|drums|keys"
    r"|keyboards|piano|organ|violin|viola|cello|harp"
    r"|sax|saxophone|trumpet|trombone|tuba|horn|french\s+horn|flute|clarinet|oboe|bassoon"
    r"|percussion|timpani|banjo|mandolin|ukulele|accordion|bagpipes)"
)
# What a writer writes for a paper, between the verb and "for" ("writes a weekly column
# for El Mundo").
WRITTEN_FOR = (
    r"(?:(?:a|an|the)\s+)?(?:(?:weekly|monthly|daily|regular|fortnightly)\s+)?"
    r"(?:column|columns|blog|newsletter|reviews|articles|pieces|features)"
)
# What one holds with a business, before "with" ("renewed the insurance with Aviva", "a
# mortgage with"; not an account or a contract, held with people as often).
_HELD_WITH = r"(?:insurance|policy|mortgage|pension|loan|savings|tariff|phone\s+plan|broadband)"
BEFORE_ORGANISATION = re.compile(
    r"\b(?:(?:work|works|worked|working|job)\s+(?:[a-z]+ly\s+)?(?:for|with)|(?:hired|employed|fined|sponsored"
    r"|owned|acquired)\s+by(?:\s+the)?|joined|" + MATCHES + r"\s+between"
    r"|(?:work|works|worked|working)\s+(?:in|on)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:for|at)"
    r"|quit|quits|(?:resigned|resigns|retired|retires)\s+from|laid\s+off\s+(?:by|from)"
    r"|(?:founded|co-founded|cofounded|founds)|(?:acquired|acquires|acquiring|bought\s+out"
    r"|merged\s+with|merging\s+with|stake\s+in|shares\s+in|(?:invest|invests|invested"
    r"|investing)\s+in)|(?:employer|" + "|".join(BUSINESSES) + r")(?:,|\s+called|\s+named)"
    r"|(?:my|our|your|his|her|their)\s+(?:(?:new|old|current|former)\s+)?(?:[a-z]+\s+)?(?:"
    + "|".join(BUSINESSES)
    + r")\s+(?:is|was)|(?:my|our|your|his|her|their)\s+employer"
    r"|(?:choir|orchestra|club|team|society|collective|foundation|union|ngo)\s+(?:called|named)"
    r"|(?:drive|drives|drove|driving|deliver|delivers|delivered|delivering)\s+for"
    r"|(?:intern|interns|interned|interning|internship|job|role|position|offer|interview"
    r"|rejection|acceptance|apprentice|apprenticeship|placement|traineeship|trainee"
    r"|secondment|residency|fellowship|graduate\s+scheme)"
    r"(?:\s+(?:letter|email|call))?\s+(?:at|with|from)|(?:applied|applies|applying)\s+to|(?:plays|played|playing|signed"
    r"|signs)\s+(?:"
    + _POSITION
    + r"\s+)?for|(?:ceo|cfo|cto|founder|co-founder|cofounder|founders)\s+of"
    r"|(?:shop|shops|shopped|shopping)\s+at|(?:ordered|orders|ordering)\s+from"
    r"|(?:volunteer|volunteers|volunteered|volunteering)\s+(?:at|with|for)"
    r"|(?:partnered|partnering|partners|a\s+partnership)\s+with|got\s+into|(?:accepted"
    r"|admitted)\s+(?:in)?to|enrolled\s+(?:at|in)|graduated\s+from|dropped\s+out\s+of"
    r"|(?:alumna|alumnus|alumni)\s+of|refund\s+from|(?:bank|banks|banked|banking)\s+with"
    r"|(?:plays|played|playing)\s+(?:"
    + _INSTRUMENTS
    + r"\s+(?:in|for|with)|the\s+"
    + _INSTRUMENTS
    + r"\s+(?:for|with))"
    r"|(?:sings|sang|singing)\s+(?:in|for|with)(?:\s+the)?"
    r"|(?:singer|drummer|guitarist|bassist|frontman|frontwoman|keyboardist|vocalist)\s+(?:of|for|in)"
    r"|(?:fly|flies|flew|flying|flown)|(?:freelance|freelances|freelanced|freelancing|writes"
    r"|wrote|writing|reports|reported|reporting)(?:\s+" + WRITTEN_FOR + r")?\s+for|members?\s+of"
    r"|insured\s+(?:with|by)|customer\s+of|(?:funded|backed)\s+by|(?:grant|funding|investment"
    r"|loan|invoice|quote|payout|receipt|bill|rebate|delivery)"
    r"\s+from|" + _HELD_WITH + r"\s+with"
    r"|flights?\s+with|shares\s+of|subscription\s+(?:to|with)|board\s+of"
    r"|(?:spokesperson|spokeswoman|spokesman)\s+(?:for|at)"
    r"|(?:discount|promo|coupon|voucher|referral)\s+code\s+from|on\s+hold\s+(?:to|with)"
    r"|(?:paycheck|paycheque|payslip|salary|wages|bonus)\s+from|booked\s+(?:it\s+)?(?:through|via))\s+$",
    re.IGNORECASE,
)
# What a place has, after its possessive: "Marrowby's beaches", "Brackwell's mayor".
PLACE_HAS = tuple(
    "beaches|streets|skyline|weather|mayor|suburbs|downtown|nightlife|old town|population"
    "|harbour|harbor|coastline|museums|neighbourhoods|neighborhoods".split("|")
)
# A note's fields whose value is a name, and the kind of name: "Owner: Brennholt",
# "Attendees: Okafor, Tobi", "Venue: Kestrel Hall", "Client: Quillmark".
FIELDS = (
    dict.fromkeys(
        """owner contact host lead speaker speakers attendee attendees guest guests organiser
        organizer chair driver coach teacher tutor doctor dentist landlord plumber babysitter
        nanny assignee reviewer manager from to cc""".split(),
        "person",
    )
    | dict.fromkeys("venue location where address destination".split(), "place")
    | dict.fromkeys(
        "client company employer vendor supplier bank school airline sponsor agency".split(),
        "organisation",
    )
)
# The field a name is the value of, its label just before it on its line.
FIELD = re.compile(
    r"(?:^|(?<=[\n.!?;]))[ \t]*(?P<field>" + "|".join(FIELDS) + r")[ \t]*:[ \t]+$",
    re.IGNORECASE,
)
# How far a place is from another: "Dunmore is an hour from Galway", "Sintra is 40 minutes
# from Lisbon", "a short drive from Kestrel" (before the second name).
AWAY = (
    r"(?:an?|\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty"
    r"|a[ \t]+short|a[ \t]+long)[ \t]+(?:hours?|minutes?|mins?|km|kilometres|kilometers|miles"
    r"|drive|walk|ride|flight|train[ \t]+ride)(?:'s[ \t]+(?:drive|walk|ride|flight))?[ \t]+"
    r"(?:away[ \t]+)?(?:from|(?:north|south|east|west)[ \t]+of|outside)"
)
# After a place's name, how far it is from another named next: "Dunmore is an hour from
# Galway" (the extractor's cue for a sentence's first word, and the types' for a place).
FAR_FROM = (
    r"[ \t]+(?:is|was|are)[ \t]+(?:(?:about|only|just)[ \t]+)?(?i:" + AWAY + r")[ \t]+"
    r"(?:the[ \t]+)?[A-Z]"
)
# A place's name with what comes of it: "a Kestrel-based startup", "Lagos-born".
FROM_PLACE = re.compile(r"-(?:based|born|bred|raised|bound)\b", re.IGNORECASE)
# A Japanese honorific after a name is no part of it, as a title before one is not:
# "Nakamura-san", "Aiko-chan", "Mori-sensei".
HONORIFIC = re.compile(r"-(?:san|sama|kun|chan|sensei)\b")
# A person's age beside their name: "Tobi, 34, runs", "Kofi is 29 years old", "Ife turned 40".
AGED = (
    r"(?:,[ \t]+\d{1,3},|[ \t]+(?:is|was)[ \t]+\d{1,3}[ \t]+(?:years?[ \t]+old|yo)\b"
    r"|[ \t]+(?:turned|turns)[ \t]+\d{1,3}\b)"
)
# Someone asked something by name, the name first: "Okonkwo, can you send the slides?",
# "Fenella, please call".
ASKED_OF = r",[ \t]+(?:(?:can|could|would|will|do|did|are|were|have)[ \t]+(?:you|u)|please)\b"
# Who someone is, set apart after their name: "Fatou, a midwife from Dakar", "Luis, our
# neighbour at", "Olusegun, my uncle,".
APPOSED_PERSON = (
    r",[ \t]+(?:(?:a|an|our|my)[ \t]+[a-z]+[ \t]+(?:[a-z]+[ \t]+)?(?:from|at|who|with|in)\b"
    r"|(?:my|our|his|her|their)[ \t]+(?:(?:best|older|younger|big|little|old)[ \t]+)?(?:"
    + "|".join(sorted(KIN | PERSONAL))
    + r"),)"
)
# After a possessive, these end a name when written as abbreviations ("Fenwick's CEO").
_HELD = HOLDINGS | frozenset(w for w in STAFF if " " not in w)
# What after a sentence's first word makes it a name unknown to the scope: a verb people
# do with a name as its subject, "and I", a question asked of it, a possessive before a kin
# word or before what an organisation or a place has, or a person's age (a person's
# honorific between).
_SUBJECT = re.compile(
    r"(?:" + HONORIFIC.pattern + r")?"
    r"(?:[ \t]+(?:(?:also|now|still|just|recently|currently|finally|already|never|always"
    r"|often|usually|actually|apparently|probably|literally|suddenly|eventually|has|had"
    r"|have)[ \t]+)?"
    r"(?:no[ \t]+longer[ \t]+)?"
    r"(?:works|worked|lives|lived|moved|was[ \t]+born|grew[ \t]+up|studies|studied"
    r"|is[ \t]+(?:married|from|friends|based[ \t]+in|located[ \t]+in)|got[ \t]+married|married"
    r"|is[ \t]+an?[ \t]+(?:[a-z]+[ \t]+)?(?:district|suburb|neighbou?rhood|borough|town|city"
    r"|village|region|province|county|island|municipality)[ \t]+(?:of|in)"
    r"|comes[ \t]+from|came[ \t]+from|said|says|told|tells|thinks|texted"
    r"|been[ \t]+friends|became|graduated|teaches|taught|plays|played|listens|translates"
    r"|is[ \t]+buying|sent|drove|flew|cried|laughed|smiled|wrote|replied|booked"
    # what someone says, decides or does to others: verbs whose subject is a someone,
    # seldom the common noun a chat sentence opens with ("Okafor emailed", "Ruairi spent
    # three years at"; not "started", "helped" or "called": "Work called")
    r"|asked|answered|emailed|messaged|mentioned|explained|admitted|promised|agreed"
    r"|decided|invited|offered|suggested|recommended|insisted|complained|apologi[sz]ed"
    r"|announced|confirmed|signed|hired|interned|subscribed|scored|spent|met|joined"
    r"|quit|visited|bought|sold|volunteered|donated|adopted|hosted|coached|proposed"
    r"|shouted|whispered|joked|argued|raised|charged|shipped|launched|recalled|denied"
    r"|laid[ \t]+off|went[ \t]+public|filed[ \t]+for[ \t]+bankruptcy"
    r"|(?:was|got)[ \t]+(?:promoted|hired|fired|laid[ \t]+off|engaged|married)"
    r"|(?:is|was)[ \t]+(?:studying|working|living|teaching|training|interning|freelancing"
    r"|volunteering))\b"
    r"|[ \t]+(?:and|&)[ \t]+(?:I|me|his|her|their)\b"
    r"|"
    + ASKED_OF
    + r"|"
    + APPOSED_PERSON
    + r"|[ \t]+(?:is|was)[ \t]+(?:[A-Z][\w-]*['\u2019]s?|the[ \t]+(?:(?:new|former|current)[ \t]+)?"
    r"(?:[a-z]+|CEO|CFO|CTO|COO)[ \t]+(?:of|at)|an?[ \t]+(?:new[ \t]+)?(?:[a-z]+|CEO|CFO|CTO|COO)"
    r"[ \t]+at)\b"
    r"|(?:['\u2019]s?|[ \t]+is[ \t]+(?:my|a|an|our|his|her))[ \t]+"
    r"(?:(?:best|older|younger|big|little|old)[ \t]+)?(?:"
    + "|".join(sorted(KIN | PERSONAL))
    + r")\b"
    r"|['\u2019]s[ \t]+(?:" + "|".join(sorted(OWNED)) + r")\b"
    r"|['\u2019]s[ \t]+(?:(?:main|new|flagship)[ \t]+)?(?i:"
    + "|".join(sorted(HOLDINGS | frozenset(STAFF)))
    + r")\b"
    r"|['\u2019]s[ \t]+(?:" + "|".join(PLACE_HAS) + r")\b"
    r"|"
    + FAR_FROM
    + r"|"
    + KIND_AFTER
    + r"|"
    + AGED
    + r"|[ \t]+from[ \t]+(?:work|accounts|hr|marketing|sales|finance|it|legal|ops"
    r"|engineering|support|payroll|reception|the[ \t]+office|school|church|the[ \t]+gym"
    r"|next[ \t]+door|upstairs|downstairs)\b)"
)
# A verb after a sentence's first word (an adverb between, whose presence is kept): an
# English word in the past ("fixed", "carried"), an irregular past, or a third person's
# present ("runs", "loves"); then the word after it, if any. Not an auxiliary: "Atlantis
# was awesome" is as often a place's, a game's or a brand's as a person's.
_VERB = re.compile(
    r"[ \t]+(?P<adverb>(?:also|now|still|just|never|always|often|finally|already|then"
    r"|really|totally|literally|actually)[ \t]+)?"
    r"(?P<verb>[a-z]+)(?![\w'\u2019-])(?:[ \t]+(?P<then>[a-z]+)\b)?"
)
_PAST = frozenset(
    """went got made took ran saw came gave found told said brought bought thought caught
    taught wrote drove flew ate drank sang swam won lost left kept felt met sent spent built
    sold paid held stood sat slept led fed hid hit put let set cut shut quit knew grew threw
    drew wore tore broke spoke chose froze woke rode fell forgave forgot became began""".split()
)
# What one does or is, said of someone in the present: with these, a noun may follow
# ("Zuberi loves jazz"), where another word ending in "s" may be a noun itself ("Alhambra
# tickets sell out").
_PRESENT = frozenset(
    """loves likes hates adores wants needs knows thinks says feels lives works plays reads
    writes speaks sings cooks bakes drives rides teaches studies owns calls texts tells
    asks hopes prefers misses swims paints draws dances travels visits""".split()
)


def _acts(text: str, end: int) -> bool:
    """Whether the words after ``end`` are a possessive's "'s" ("Zuberi's back") or a
    verb whose subject the word before it is: an irregular past ("Lorcan bought a van"),
    a verb of what one does or feels ("Zuberi loves jazz"), or a past or third person's
    present that is an English word, followed by a function word (in the past, by nothing
    or after an adverb too): "Frodo carried the ring", "Dagny runs the front desk",
    "Sunniva laughed.", "Zuberi never called back"; not "Alhambra tickets sell out",
    "Kimchi fried rice" nor "Gracias amigos.", where a noun follows or is the word."""
    if text.startswith(("'s ", "\u2019s "), end):
        return True  # "Zuberi's back", "Alhambra's gardens": a name's
    found = _VERB.match(text, end)
    if found is None:
        return False
    verb, then = found.group("verb"), found.group("then")
    if verb in _PAST or verb in _PRESENT:
        return True
    if not english.word(verb) or len(verb) < 4:
        return False
    if verb.endswith("ed"):
        return found.group("adverb") is not None or then is None or then in FUNCTION
    return (
        then in FUNCTION
        and verb.endswith("s")
        and (english.word(verb[:-1]) or english.word(verb[:-2]))
    )


# Between a sentence's first word and a name after it, a list: "Ana and Luis", "Ana,
# Luis and Maria".
_AND = re.compile(r",?[ \t]+(?:and|&)[ \t]+|,[ \t]+")


@dataclass(frozen=True, slots=True)
class Mention:
    """A mention of an entity: ``text[start:end] == surface``; ``name`` is its normal form;
    ``entity`` is what the scope's known names gave for it, if anything."""

    surface: str
    start: int
    end: int
    name: str
    kind: Kind
    entity: str | None = None


@dataclass(slots=True)
class _Word:
    start: int
    end: int  # before a possessive 's
    folded: str  # case folded, possessive dropped, ' for every apostrophe
    capital: bool  # has a capital letter: "Max", "NYC", "iPhone"
    initial: bool  # starts a sentence
    ordinary: bool  # never a name (:mod:`engram.core.graph.ordinary`)
    possessive: bool
    joined: bool  # joined to the word before it: spaces only, " & ", or "R. R."
    abbreviation: bool = False  # a stop after it may not end a sentence: "Dr.", "R."
    dotted: bool = False  # followed by a full stop


_PLAIN = _Word(
    0, 0, "", capital=False, initial=False, ordinary=True, possessive=False, joined=False
)


def extract(
    text: str, known: Mapping[str, str] | None = None, *, speaker: str | None = None
) -> list[Mention]:
    """The mentions in ``text``, in order of position, none overlapping. ``known`` maps
    the scope's normal names and aliases to their entities; ``speaker`` names who said a
    ``"{speaker}: ..."`` turn. Deterministic: the same arguments give the same list."""
    return read(text, speaker=speaker).mentions(known or {})


def trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span ``text[start:end]`` (a name another reader found) without the ordinary
    words at its ends, as the rules read words: leading ones ("Hey Mel", "Dr. Lee", "the
    Beatles"; a capital "The" stays, as in a title), trailing ones but those that may end
    a name ("Iron Man", "Apple TV"), and a final possessive ("Ed Sheeran's"). None when
    no word is left. Numbers stay ("Cyberpunk 2077")."""
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text, start, end)]
    while words and _trimmed(words[0][2]) and words[0][2] != "The":
        words.pop(0)
    while words and _trimmed(words[-1][2]) and _traits(words[-1][2])[0] not in INSIDE_NAMES:
        words.pop()
    if not words:
        return None
    last = words[-1][2]
    possessive = _traits(last)[1]
    return words[0][0], words[-1][1] - (2 if possessive else 0)


def _trimmed(word: str) -> bool:
    """An ordinary word (:mod:`engram.core.graph.ordinary`, contractions), not a number."""
    stem, _, ordinary, _, _ = _traits(word)
    return ordinary and not stem.isdigit()


def read(text: str, *, speaker: str | None = None) -> Reading:
    """``text`` split into words once, for a caller that looks its names up elsewhere:
    ``reading.lookups`` are the normal forms to ask the scope about, then
    ``reading.mentions(answers)``."""
    return Reading(text, speaker)


class Reading:
    """One text read for names; :attr:`lookups` is every normal form :meth:`mentions` may
    look up, so a map holding only the known ones among them gives the same mentions as a
    map of the whole scope."""

    def __init__(self, text: str, speaker: str | None = None) -> None:
        self._text = text
        self._fixed: list[Mention] = []
        body = self._speaker(speaker)
        scan = body if self._fixed else 0  # a speaker's prefix is read already
        specials = _specials(text)
        self._fixed += specials
        self._words = _scan(text, scan, body, [(m.start, m.end) for m in specials])
        words = _plain_words(text, scan)
        self._lowercase = list(_lowercase_names(text, scan, words))
        self._lowercase += _lowercase_organisations(text, scan, words)
        self._whole = list(_whole_names(text, scan, self._words))
        self._titles = list(_titles(text))
        self._keys = {(i, j): self._key(i, j) for i, j in self._runs()}
        self.lookups = frozenset(self._probes())
        self._holidays = {
            n for (i, j), key in self._keys.items() if key in HOLIDAYS for n in range(i, j + 1)
        }

    def _speaker(self, speaker: str | None) -> int:
        """Where the text after a speaker's or label's prefix begins."""
        text = self._text
        if speaker and text.startswith(speaker + ":") and (name := _normalise(speaker)):
            self._fixed.append(Mention(speaker, 0, len(speaker), name, "speaker"))
            return len(speaker) + 1
        label = _LABEL.match(text)
        if label and len(_WORD.findall(label.group())) <= 4:
            return label.end()
        return 0

    def _probes(self) -> Iterator[str]:
        for mention in self._fixed + self._lowercase + self._whole:
            yield mention.name
        yield from self._keys.values()
        for _, _, name in self._titles:
            yield name

    def _runs(self) -> Iterator[tuple[int, int]]:
        """Every run of joined words i..j that begins and ends with a capital."""
        words = self._words
        for i, first in enumerate(words):
            if not _bounds(first) or (first.initial and first.folded == "the"):
                continue
            for j in range(i, min(i + MAX_NAME_WORDS, len(words))):
                if j > i and not words[j].joined:
                    break
                if _bounds(words[j]):
                    yield i, j

    def _key(self, i: int, j: int) -> str:
        return _normalise(self._text[self._words[i].start : self._words[j].end])

    def mentions(self, known: Mapping[str, str]) -> list[Mention]:
        """The mentions, in order of position, none overlapping: URLs, emails, handles,
        tags and the speaker first, then the longest names, a known name before a quoted
        title before a capitalised run of the same length."""
        known = {key: known[key] for key in self.lookups if key in known}
        found: list[tuple[int, int, Mention]] = [
            (0, 0, m if m.name not in known else _with(m, known[m.name])) for m in self._fixed
        ]
        if known:
            found += [(1, 0, m) for m in self._known(known)]
        found += [
            (1, 0, m if m.name not in known else _with(m, known[m.name])) for m in self._whole
        ]
        found += [(1, 1, m) for m in self._quoted(known)]
        found += [(1, 2, m) for m in self._capitalised(known)]
        found += [
            (1, 3, m if m.name not in known else _with(m, known[m.name])) for m in self._lowercase
        ]
        found.sort(key=lambda f: (f[0], f[2].start - f[2].end, f[1], f[2].start))
        # The chosen, none overlapping, kept in order of position: a new one is checked
        # against its two neighbours there, not against every one chosen before it.
        chosen: list[Mention] = []
        starts: list[int] = []
        for _, _, m in found:
            at = bisect_left(starts, m.start)
            if at > 0 and chosen[at - 1].end > m.start:
                continue
            if at < len(chosen) and chosen[at].start < m.end:
                continue
            chosen.insert(at, m)
            starts.insert(at, m.start)
        return chosen

    def _mention(self, start: int, end: int, known: Mapping[str, str]) -> Mention | None:
        surface = self._text[start:end]
        name = _normalise(surface)
        if not name or name in HOLIDAYS:
            return None
        return Mention(surface, start, end, name, "name", known.get(name))

    def _known(self, known: Mapping[str, str]) -> Iterator[Mention]:
        """The longest known name at each word (rule 1); a known function word ("Will")
        that starts a sentence is read as the word."""
        longest: dict[int, int] = {}
        for (i, j), key in self._keys.items():
            if key in known:
                longest[i] = j
        for i, j in longest.items():
            word = self._words[i]
            if i == j and word.initial and word.folded in FUNCTION:
                continue
            if mention := self._mention(word.start, self._words[j].end, known):
                yield mention

    def _quoted(self, known: Mapping[str, str]) -> Iterator[Mention]:
        for start, end, _ in self._titles:
            if mention := self._mention(start, end, known):
                yield mention

    def _capitalised(self, known: Mapping[str, str]) -> Iterator[Mention]:
        """Runs of capitalised words (rules 2 to 4)."""
        words, i = self._words, 0
        while i < len(words):
            if not self._opens(i, known):
                i += 1
                continue
            j = self._close(i, known)
            letters = all(w.end - w.start == 1 for w in words[i : j + 1])
            end = words[j].end
            if j > i and words[j].possessive and words[i].folded in SAINTS:
                own = _SAINT_S.match(self._text, end)  # "St Aidan's": its name
                end = end if own is None else own.end()
            if not letters and (mention := self._mention(words[i].start, end, known)):
                yield mention
            i = j + 1

    def _opens(self, i: int, known: Mapping[str, str]) -> bool:
        word = self._words[i]
        if i in self._holidays:
            return False
        if not _nameable(word):
            return self._the(i)
        return not word.initial or self._keys.get((i, i)) in known or self._opener(i)

    def _opener(self, i: int) -> bool:
        """Whether a sentence's first word, unknown to the scope, opens a name: when it
        is not an opener's (:func:`engram.core.graph.ordinary.opener`) and a name word
        follows it in the run ("Bruno Costa", "University of Porto"), is listed with one
        ("Ana and Luis", "Ana, Luis and Maria"), or it is the subject of what people do
        ("Ana works at", "Ana said", "Ana and I") or a possessive before a kin word
        ("Ana's brother"). A common English word and nothing else
        (:func:`engram.core.graph.english.only_word`) is the subject as a common noun
        ("Work called", "Teacher said"); one that is no English word is a name before a
        verb of what people do (:func:`_acts`: "Sunniva fixed the boiler")."""
        words, word = self._words, self._words[i]
        if opener(word.folded):
            return False
        if word.folded in _KNOWN_OPENERS:
            return True  # "Italy was awesome", "Spotify hired Ana", "Deepika always wins"
        if organisations.of_its_trade(word.folded, self._text):
            return True  # "Orange cut the mobile signal", "Labour promised new homes"
        if FIELD.search(self._text, max(0, word.start - 24), word.start):
            return True  # a note's field's value: "Owner: Brennholt"
        after = words[i + 1] if i + 1 < len(words) else None
        if after is not None and _nameable(after) and not after.initial:
            if after.joined:
                return True
            gap = self._text[word.end : after.start]
            if _AND.fullmatch(gap) and (gap != ", " or self._listed(i + 1)):
                return True
        if english.only_word(word.folded):
            return False
        if _SUBJECT.match(self._text, word.end):
            return True
        return not english.word(word.folded) and _acts(self._text, word.end)

    def _listed(self, i: int) -> bool:
        """Whether the name word at ``i`` goes on a list ending in "and": "Luis and"
        (read along the list, however long, not by recursion)."""
        words = self._words
        while i + 1 < len(words) and _nameable(words[i + 1]):
            gap = self._text[words[i].end : words[i + 1].start]
            if not _AND.fullmatch(gap):
                return False
            if gap != ", ":
                return True
            i += 1
        return False

    def _the(self, i: int) -> bool:
        """A capital "The" inside a sentence opens a title: "we love The Santa Clause"."""
        word, after = self._words[i], self._words[i + 1 : i + 2]
        return (
            word.folded == "the"
            and word.capital
            and not word.initial
            and bool(after)
            and after[0].joined
            and _nameable(after[0])
        )

    def _close(self, i: int, known: Mapping[str, str]) -> int:
        """The last word of the capitalised run opened at ``i``: capitalised words, with
        connectors ("of the") between two of them, not past a known name's possessive nor
        a possessive before an abbreviation of what or who an organisation has ("Fenwick's
        CEO", "Nike's HQ"), nor past "of" after a person's title ("Prof. Li Na of Fudan
        University": a person, then where she is)."""
        words, last = self._words, i
        titled = i > 0 and words[i - 1].folded in _PERSON_TITLES and words[i].joined
        j = i + 1
        while j < len(words) and j - i < MAX_NAME_WORDS and words[j].joined:
            if j in self._holidays or (titled and self._of(j)):
                break
            if words[last].possessive and (
                self._keys.get((last, last)) in known
                or (words[j].folded in _HELD and words[j].ordinary)
            ):
                break  # "Ana's Mom" once Ana is known; "Fenwick's CEO", "Nike's HQ"
            if _nameable(words[j]) or (words[j].capital and words[j].folded in INSIDE_NAMES):
                last = j
            elif not (words[j].folded in CONNECTORS or _after_of(words, j)):
                break
            j += 1
        return last

    def _of(self, j: int) -> bool:
        """Whether "of" joins the word at ``j`` to the one before it."""
        return "of" in self._text[self._words[j - 1].end : self._words[j].start].split()


# A saint's name that names a school, a church or a hospital keeps its "'s" ("parents'
# evening at St Aidan's", "St Mary's is closing"): no saint owns what follows.
SAINTS = frozenset({"st", "st.", "saint"})
_SAINT_S = re.compile(r"['\u2019]s\b")


def _with(mention: Mention, entity: str) -> Mention:
    return Mention(mention.surface, mention.start, mention.end, mention.name, mention.kind, entity)


def _bounds(word: _Word) -> bool:
    """A word a known name may begin or end with: one with a capital, not a contraction
    ("I'm") and not a lone letter ("I") unless it is an initial."""
    return (
        word.capital
        and not _CONTRACTION.search(word.folded)
        and (word.end - word.start > 1 or word.dotted)
        and word.folded != "i"
    )


def _nameable(word: _Word) -> bool:
    """A word that may be part of a name: capitalised, not ordinary, not one letter
    unless it is an initial ("R." in "George R. R. Martin")."""
    return word.capital and not word.ordinary and (word.end - word.start > 1 or word.dotted)


def _after_of(words: list[_Word], j: int) -> bool:
    return words[j].folded == "the" and j > 0 and words[j - 1].folded in CONNECTORS


def _specials(text: str) -> list[Mention]:
    """URLs, emails, handles and hashtags, none inside another (rule 5)."""
    found: list[Mention] = []
    if "@" not in text and "#" not in text and "://" not in text and "www." not in text:
        return found  # most texts: four scans saved
    taken: list[tuple[int, int]] = []
    for kind, pattern in _SPECIALS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if kind == "url":
                end = _url_end(text, start, end)
            surface = text[start:end]
            if any(s < end and start < e for s, e in taken):
                continue
            if kind in ("handle", "hashtag") and not any(c.isalpha() for c in surface):
                continue
            taken.append((start, end))
            found.append(Mention(surface, start, end, _normalise(surface), kind))
    return sorted(found, key=lambda m: m.start)


_EDGES = ".,!?;:()[]{}\"'\u201c\u201d*_~<>\u2026-"  # around a word split at spaces
_LOWER = re.compile(r"(?<![\w@#/.'\u2019-])[^\W\d_A-Z]+(?=['\u2019]s\b|(?![\w@'\u2019-]))")


# A person's titles, after which a run's "of" says where they are, not a longer name.
_PERSON_TITLES = frozenset("mr mrs ms mx dr doc prof professor".split())
# The places, organisations and products every reader knows (rule 4).
_EVERY_READER_KNOWS = places.KNOWN | organisations.KNOWN | products.KNOWN
# The words that open a sentence as a name with no cue: those, and given names.
_KNOWN_OPENERS = _EVERY_READER_KNOWS | given_names.GIVEN
# The names read in lowercase: given names and the organisations every reader knows by a
# name that is no English word anywhere ("monzo froze my card", "ikea delivery guy"); the
# places and products so known where a preposition or a verb of going or using says one
# comes ("landed in cebu", "back from lisbon", "on duolingo"). Elsewhere a place's or an
# app's word is often part of a longer name or a thing in lowercase ("the lisbon rowing
# club", "my spotify wrapped").
_ANYWHERE = given_names.GIVEN | organisations.IN_LOWERCASE
# A company named by a word, where its text speaks of its trade and its name is no common
# English word ("anyone else's amazon parcel stuck?", "tesla sent a recall notice"; not "an
# apple on my laptop").
_TRADED = frozenset(name for name in organisations.TRADES if not english.common(name))
IN_LOWERCASE = _ANYWHERE | _TRADED | places.IN_LOWERCASE | products.IN_LOWERCASE
_COMES = re.compile(
    r"\b(?:in|from|to|at|near|for|into|via|on|using|with|w/?|through|around|across|visit|visits"
    r"|visited|visiting|leave|leaves|left|leaving|landed|reached)[ \t]+$"
)


def _plain_words(text: str, scan: int) -> frozenset[str]:
    """The words of ``text`` from ``scan``, split at spaces, with no punctuation around
    them nor a possessive after them: what a text's lowercase names are looked up by."""
    words = text[scan:].replace("\u2019", "'").split()
    return frozenset([w.strip(_EDGES).partition("'")[0] for w in words])


def _lowercase_names(text: str, scan: int, words: frozenset[str]) -> Iterator[Mention]:
    """Names written in lowercase, as chat writes them (:data:`IN_LOWERCASE`): "with
    ciara", "my cousin sara", "james's car", "landed in cebu". A possessive ends the name.
    ``words``, the text's :func:`_plain_words`."""
    if IN_LOWERCASE.isdisjoint(words):
        return  # most texts: their words split once, no name among them
    for match in _LOWER.finditer(text, scan):
        token, start = match.group(), match.start()
        if not token.islower() or token not in IN_LOWERCASE:
            continue
        if token in _TRADED:
            if organisations.of_its_trade(token, text):
                yield Mention(token, start, match.end(), _normalise(token), "name")
        elif token in _ANYWHERE or _COMES.search(text, max(scan, start - 12), start):
            yield Mention(token, start, match.end(), _normalise(token), "name")


# Organisations' names in lowercase, as chat writes them, that the lists above do not read:
# a known organisation's name of several words one of which is no English word, or a
# coined word before a trade's word, anywhere ("on hold with british gas", "the guy from
# greenleaf estates"); and just after what only an organisation is
# (:data:`BEFORE_ORGANISATION`: "a job at", "an offer from", "hired by the") or where one
# works or studies ("works at the"), a run of up to three words that ends in an
# organisation's word after one that is no English word ("interview at korvell labs",
# "the kenyan embassy"), is two words joined by "&" ("an offer from brandt & kessler"), or
# is one word that is neither an English word nor a given name ("a job at quillon"). A
# run opens with a word that is no English word, with "&" after it, or with the first word
# of a known name that holds one ("rolls royce"): a known name of English words ("whole
# foods", "arsenal") is read with its capitals only.
_AT_WORK = re.compile(
    r"\b(?:work|works|worked|working|study|studies|studied|studying)[ \t]+at[ \t]+$", re.IGNORECASE
)
_BEFORE_AMPERSAND = re.compile(r"(?<![\w'\u2019-])([^\W\d_A-Z]+)[ \t]+&[ \t]+[^\W\d_A-Z]")
_RUN_GAP = re.compile(r"[ \t]+(?:&[ \t]+)?")
_CUE_BACK = 40  # characters read before a run for its cue
# Every word the cues' patterns hold: the word just before a run is one of them where a
# cue ends there (each cue ends with a word it names; a business's kind with a comma).
_CUE_WORDS = frozenset(
    re.findall(
        r"(?<![\\\[-])(?<!\]\+)\b[a-z][a-z-]+", BEFORE_ORGANISATION.pattern + _AT_WORK.pattern
    )
) | frozenset(BUSINESSES)


# The first words of the known organisations' names of several words, one of them no
# English word ("rolls royce", "deutsche bank"): a run opens there too.
_OPENS_KNOWN = frozenset(
    name.split()[0]
    for name in organisations.KNOWN
    if " " in name and not all(english.word(w) for w in name.split())
)


def _lowercase_organisations(text: str, scan: int, words: frozenset[str]) -> Iterator[Mention]:
    """The organisations' names in lowercase that no single known word gives (the
    comment above); ``words``, the text's :func:`_plain_words`."""
    opens = [w for w in words - english.vocabulary() if w.islower() and _may_open(w)]
    opens += words & _OPENS_KNOWN
    if "&" in text:
        opens += [m.group(1) for m in _BEFORE_AMPERSAND.finditer(text, scan)]
    if not opens:
        return  # most texts: no word a run could open with
    starts = sorted({at for word in opens for at in _places(text, scan, word)})
    after = scan
    for start in starts:
        if start < after:
            continue  # inside the run found before
        tokens = [_LOWER.match(text, start)]
        while len(tokens) < 3 and (gap := _RUN_GAP.match(text, tokens[-1].end())):  # type: ignore[union-attr]
            if (token := _LOWER.match(text, gap.end())) is None:
                break
            tokens.append(token)
        for token in reversed(tokens):  # the longest run first
            end = token.end()  # type: ignore[union-attr]
            run = text[start:end]
            anywhere = _organisation_run(run)
            if anywhere is None or not (
                anywhere or _after_organisation_cue(text, scan, start, run)
            ):
                continue
            yield Mention(run, start, end, _normalise(run), "name")
            after = end
            break


def _places(text: str, scan: int, word: str) -> Iterator[int]:
    """Where ``word`` stands whole in ``text`` from ``scan``, as :data:`_LOWER` reads it."""
    at = text.find(word, scan)
    while at >= 0:
        token = _LOWER.match(text, at)  # its look-behind reads the character before
        if token is not None and token.end() == at + len(word):
            yield at
        at = text.find(word, at + len(word))


def _may_open(word: str) -> bool:
    """Whether a run of :func:`_organisation_run` may open with ``word``: a word neither
    English nor ordinary."""
    return word.isalpha() and word not in NOT_NAMES and not english.word(word)


def _organisation_run(run: str) -> bool | None:
    """Whether a lowercase run is an organisation's name anywhere (True), only after an
    organisation's cue (False), or not one (None)."""
    words = run.replace("&", " ").split()
    name = " ".join(words)
    if not all(w.isalpha() and w not in NOT_NAMES for w in words):
        return None
    if name in organisations.KNOWN:
        return len(words) > 1 and not all(english.word(w) for w in words)
    if len(words) == 1:
        alone = len(name) > 2 and name not in given_names.GIVEN and not english.word(name)
        return False if alone else None
    if "&" in run and len(words) == 2:
        return False
    if words[-1] in organisations.NAMING_WORDS and not english.word(words[0]):
        # a coined word before a trade's word names the business wherever it stands ("the
        # guy from greenleaf estates", "interview w/ ocado tech"); before a word of any
        # group, a cue is needed ("the frontend team", "my crossfit group")
        return len(words) == 2 and words[-1] in organisations.TRADE_WORDS and _coined(words[0])
    return None


# The endings of an English word's derived forms, which the word lists do not all hold.
_DERIVED = ("ing", "ed", "ly", "ness", "ful", "less", "ous", "ist", "ism", "able")


def _coined(word: str) -> bool:
    """Whether ``word`` is no English word, given name, known place or product, long
    enough to be no typo of one ("teh bank", "ur bank") and not shaped as an English
    word's derived form the lists miss ("globetrotting")."""
    return (
        len(word) >= 5
        and not word.endswith(_DERIVED)
        and not english.word(word)
        and word not in given_names.GIVEN
        and word not in places.KNOWN
        and word not in products.KNOWN
    )


def _after_organisation_cue(text: str, scan: int, start: int, run: str) -> bool:
    """Whether what only an organisation is, or where one works or studies, comes just
    before ``run`` at ``start``, "the" between. A run of one word needs more: not after
    "the" ("works at the transgender center": a word of a longer name or a thing), nor
    after a cue that ends in "with" ("work with influencers": people and groups are
    worked with as often)."""
    back = max(scan, start - _CUE_BACK)
    before = [w.casefold() for w in text[back:start].split()[-2:]]
    ends = [start]
    if before and before[-1] == "the":
        ends.append(text.rfind(text[back:start].split()[-1], back, start))
        before.pop()
    if not before or before[-1].rstrip(",") not in _CUE_WORDS:
        return False  # most runs: the cues' searches are long, a word's look-up is not
    if " " not in run and (before[-1] == "with" or len(ends) > 1):
        return False
    cues = (BEFORE_ORGANISATION, _AT_WORK)
    return any(cue.search(text, back, end) is not None for cue in cues for end in ends)


# The names every reader knows (rule 4) that hold a word no name is read with: an
# ordinary word, a connector or an abbreviation ("Save the Children", "Doctors Without
# Borders", "Great Britain", "Trinidad and Tobago", "CD Projekt", "Dr Pepper"). The scan
# breaks them at that word, so they are found whole, as written with their first and
# last word capitalised.
_BROKEN = sorted(
    (
        name
        for name in _EVERY_READER_KNOWS
        if " " in name and any(w in NOT_NAMES or opener(w) for w in name.split())
    ),
    key=len,
    reverse=True,
)
_WHOLE = re.compile(
    r"(?<![\w'\u2019-])(?:"
    + "|".join(r"[ \t]+".join(map(re.escape, name.split())) for name in _BROKEN)
    + r")(?![\w-])",
    re.IGNORECASE,
)
# Their first words by their last, which a text holds capitalised when it holds the name.
_FIRSTS: dict[str, set[str]] = {}
for _name in _BROKEN:
    _FIRSTS.setdefault(_name.split()[-1], set()).add(_name.split()[0])


def _whole_names(text: str, scan: int, words: list[_Word]) -> Iterator[Mention]:
    """The names every reader knows that the scan would break (:data:`_BROKEN`);
    ``words``, the scan's capitalised words."""
    folded = None
    for word in words:
        if (firsts := _FIRSTS.get(word.folded)) is not None:
            folded = folded or text.casefold()
            if any(first in folded for first in firsts):
                break
    else:
        return  # most texts: no such name's last word, capitalised, after its first
    for match in _WHOLE.finditer(text, scan):
        surface = match.group()
        if surface[0].isupper() and surface.split()[-1][0].isupper():
            yield Mention(surface, match.start(), match.end(), _normalise(surface), "name")


def _url_end(text: str, start: int, end: int) -> int:
    """Trailing punctuation ends the sentence, not the URL; a ")" closes one it opened."""
    while end > start and text[end - 1] in _URL_TAIL:
        if text[end - 1] == ")" and text.count("(", start, end) >= text.count(")", start, end):
            break
        end -= 1
    return end


def _scan(text: str, scan: int, body: int, taken: list[tuple[int, int]]) -> list[_Word]:
    """The words with a capital (or a letter beyond ASCII): the only ones a name may
    begin or end with. What lies between two of them decides whether they are ``joined``
    (lowercase words keep them apart, connectors do not)."""
    words: list[_Word] = []
    previous: _Word | None = None
    after = scan  # where the previous word or special mention ended
    for match in _CAPITAL.finditer(text, scan):
        start, end = match.span()
        token = match.group()
        if start < after:
            continue
        if start > after and _glued(text, start):  # "iPhone": read from its start
            found = _WORD.match(text, _word_start(text, start, after))
            if found is None or found.end() <= start:
                continue
            start, end, token = *found.span(), found.group()
        if taken and any(s <= start < e for s, e in taken):
            after, previous = max(e for s, e in taken if s <= start < e), _PLAIN
            continue
        origin = FROM_PLACE.search(token) or HONORIFIC.search(token)
        if origin is not None and origin.start() > 0 and origin.end() == len(token):
            token, end = token[: origin.start()], start + origin.start()  # "Kestrel-based"
        if previous is None or after <= body <= start:
            first = not _LETTER.search(text, max(after, body), start)
        else:
            first = False
        word = _read(token, start, end, text[after:start], previous, first)
        word.dotted = end - start == 1 and text.startswith(".", end)
        words.append(word)
        previous, after = word, end
    _first_names(text, words)
    _dates(text, words)
    return words


# What makes "May" a month before a name: "in May Ana...", "last Summer Ana...".
_TIME_BEFORE = re.compile(
    r"\b(?:in|on|of|last|next|this|that|every|each|since|until|till|by|from|through|during"
    r"|early|late|mid|until)[ \t]+$",
    re.IGNORECASE,
)


def _first_names(text: str, words: list[_Word]) -> None:
    """A month or season that is a given name too (:data:`NAMED_TIMES`), directly before
    a name word and after no word that makes it a time, is a first name: "May Lin",
    "Summer Delaney", but "in May Lin arrived" and "May 5"."""
    for k in range(len(words) - 1):
        word, after = words[k], words[k + 1]
        if (
            word.ordinary
            and word.folded in NAMED_TIMES
            and after.joined
            and _nameable(after)
            and not _TIME_BEFORE.search(text, max(0, word.start - 12), word.start)
        ):
            word.ordinary = False


# A day or a year beside a month's short form: "Jan 2023", "Jan 3rd", "15 Jan", "3rd of Jan".
_DAY_OR_YEAR_AFTER = re.compile(r"\.?,?[ \t]+(?:\d{4}|\d{1,2}(?:st|nd|rd|th)?)\b")
_DAY_BEFORE = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?[ \t]+(?:of[ \t]+)?$")


def _dates(text: str, words: list[_Word]) -> None:
    """A month's short form that is a given name too (:data:`NAMED_MONTHS`) beside a day
    or a year is a time: "relocated in Jan 2023", "due 15 Jan"; "Jan Kowalski" stays."""
    for word in words:
        if (
            not word.ordinary
            and word.folded in NAMED_MONTHS
            and (
                _DAY_OR_YEAR_AFTER.match(text, word.end)
                or _DAY_BEFORE.search(text, max(0, word.start - 12), word.start)
            )
        ):
            word.ordinary = True


def _glued(text: str, at: int) -> bool:
    """Whether the letter at ``at`` continues a word begun before it."""
    before = text[at - 1]
    return (
        before.isalnum()
        or before == "_"
        or (before in _INSIDE and at > 1 and text[at - 2].isalnum())
    )


def _word_start(text: str, at: int, floor: int) -> int:
    while at > floor and _glued(text, at):
        at -= 1
    return at


def _read(token: str, start: int, end: int, gap: str, previous: _Word | None, first: bool) -> _Word:
    folded, possessive, ordinary, capital, abbreviation = _traits(token)
    if gap == " ":  # the commonest gap: joined, in the same sentence
        joined, initial = previous is not None, first
    else:
        if previous is not None and previous.abbreviation and gap.startswith("."):
            gap = gap[1:]  # "Dr. Lee", "R. R. Martin": the stop ends no sentence
        joined = previous is not None and (
            bool(_JOIN.fullmatch(gap)) or (previous.abbreviation and not gap.strip())
        )
        initial = first or bool(_ENDS.search(gap))
    return _Word(
        start=start,
        end=end - 2 if possessive else end,
        folded=folded,
        capital=capital,
        initial=initial,
        ordinary=ordinary,
        possessive=possessive,
        joined=joined,
        abbreviation=abbreviation,
    )


@lru_cache(maxsize=8192)
def _traits(token: str) -> tuple[str, bool, bool, bool, bool]:
    """What a word is wherever it stands: case folded (possessive dropped), possessive,
    ordinary, capitalised, an abbreviation a stop may follow ("Dr", "R", "J.K"). Words
    repeat, so this is remembered."""
    folded = token.casefold().replace("\u2019", "'")
    stem = folded[:-2] if folded.endswith("'s") else folded  # "gina's", and "it's"
    possessive = stem != folded and stem not in NOT_NAMES
    plural = token[-1:] == "s" and token[:-1].isupper() and folded[:-1] in NOT_NAMES  # "DIYs"
    # "GoT", "iPhone": a brand's mixed case, unless an ordinary acronym is written so ("PhD")
    mixed = not plural and not token[1:].islower() and not token.isupper()
    mixed = mixed and stem not in ACRONYMS
    ordinary = not mixed and (stem in NOT_NAMES or plural or bool(_CONTRACTION.search(folded)))
    capital = token[0].isupper() or (token[0].islower() and not token.islower())
    abbreviation = len(token) == 1 or stem in ABBREVIATIONS or bool(_INITIALISM.fullmatch(stem))
    return stem, possessive, ordinary or stem.isdigit(), capital, abbreviation


def _titles(text: str) -> Iterator[tuple[int, int, str]]:
    """Double-quoted titles: every word capitalised but short ones ("of", "the"), the
    first capitalised, one not ordinary, at most eight words."""
    for match in _QUOTED.finditer(text):
        inside = list(_WORD.finditer(text, match.start(1), match.end(1)))
        if not inside or len(inside) > MAX_NAME_WORDS:
            continue
        words = [_read(m.group(), *m.span(), " ", None, n == 0) for n, m in enumerate(inside)]
        if not words[0].capital or not any(_nameable(w) for w in words):
            continue
        if all(w.capital or w.folded in TITLE_WORDS for w in words):
            start, end = words[0].start, words[-1].end
            yield start, end, _normalise(text[start:end])
