"""Ordinary words: the ones written with a capital that name nothing.

Case folded, with ``'`` for every apostrophe. The extractor never takes them for a name,
whatever their case (:mod:`engram.core.graph.extraction`); they were written from English
grammar and chat usage, not read off the labelled turns.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Pronouns, determiners, prepositions, conjunctions, auxiliaries and modals, question
# words, deictics (this, here, now, today), and the adverbs that open sentences; chat's
# short forms of them ("ur", "bc").
FUNCTION = _words(
    """a an the and or but nor so yet for of in on at to from by with without about above
    below over under into onto upon within through throughout during before after since until
    till across along among around behind beside besides between beyond near off out up down
    than then as if because though although while whereas unless whether per via
    i me my mine myself you your yours yourself yourselves he him his himself she her hers
    herself it its itself we us our ours ourselves they them their theirs themselves one ones
    who whom whose which what whatever whoever whichever when whenever where wherever why how
    this that these those here there now then today tonight tomorrow yesterday
    is am are was were be been being have has had having do does did doing done get got
    will would shall should can could may might must ought need let lets
    not no all any some every each either neither both few many much more most less least
    other another such same own only just also too very really quite rather even still already
    again ever never always often sometimes usually maybe perhaps almost
    everyone everybody everything someone somebody something anyone anybody anything nobody
    nothing none nowhere somewhere anywhere everywhere ya ye y'all yall u ur bc cuz coz"""
)

# Greetings, farewells, thanks, reactions and fillers: "Hey John" names John.
INTERJECTIONS = _words(
    """hey hi hello hiya howdy yo heya bye goodbye byebye cya farewell goodnight night morning
    evening afternoon welcome thanks thank thanx thx ty cheers congrats congratulations kudos
    bravo sorry please pardon oh ooh ohh ah ahh aah aw aww awww wow woah whoa yay woo woohoo
    woot hooray hurray yippee phew whew ugh oops whoops ouch yikes eek meh hmm hm mm mmm um umm
    uh uhh er erm ha haha hahaha hah heh hehe lol lmao rofl omg gosh gee jeez geez damn dang
    darn boo yes yeah yea yep yup yah nope nah ok okay alright aight sure cool nice great
    awesome amazing wonderful fantastic lovely neat brilliant excellent good fine right true
    totally absolutely definitely exactly agreed indeed well anyway anyways btw oof dear wait
    look listen aye see"""
)

# Time expressions (chat's short forms too: "tmrw"): a fact's own time carries them,
# and as entities they would join unrelated facts across years.
TIME = _words(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays mon tue tues wed weds thu thur thurs fri sat sun
    january february march april may june july august september october november december
    feb mar apr jun jul aug sep sept oct nov dec spring summer autumn fall winter
    weekend weekday noon midnight christmas xmas easter thanksgiving halloween hanukkah
    chanukah diwali ramadan eid passover kwanzaa valentine valentines tmrw tmr tomoz
    tonite yday"""
)

# Holidays of several words, as normal names; a capitalised span equal to one is dropped.
HOLIDAYS = frozenset(
    {
        "new year",
        "new years",
        "new year's eve",
        "new year's day",
        "new years eve",
        "christmas eve",
        "christmas day",
        "boxing day",
        "mother's day",
        "father's day",
        "valentine's day",
        "independence day",
        "labor day",
        "labour day",
        "memorial day",
        "veterans day",
        "black friday",
        "good friday",
        "cyber monday",
        "fourth of july",
        "st. patrick's day",
        "st patrick's day",
        "lunar new year",
        "chinese new year",
    }
)

# Family words, forms of address and titles: "Mom" or "Dr." is not anyone's name.
ADDRESS = _words(
    """mom mum mommy mummy mama momma dad daddy papa grandma grandpa granny grandmother
    grandfather nana nan nanna gran gramps grampa grandad granddad mam mammy nonna nonno
    abuela abuelo auntie aunty aunt
    uncle bro sis babe baby honey hun sweetie
    sweetheart darling buddy pal dude man guys folks fam bestie sir madam ma'am maam miss
    mister mr mrs ms mx dr doc prof professor coach captain capt sgt officer mother father
    brother sister son daughter wife husband god"""
)

# Kin and companions, as a possessive names them ("Ana's brother Luis"): the roles of
# family relations (:mod:`engram.core.graph.relations`), in their plain forms.
KIN = _words(
    """mother father mom mum dad mommy daddy mama papa parent parents brother sister
    sibling son daughter child kid wife husband partner spouse boyfriend girlfriend fiance
    fiancee cousin aunt auntie uncle niece nephew grandmother grandfather grandma grandpa
    granny grandson granddaughter grandchild stepmother stepfather stepmom stepdad
    stepson stepdaughter stepbrother stepsister friend bestie roommate neighbor neighbour
    colleague coworker boss"""
)

# Whom only a person has, as a possessive names them ("Hendrika's employer", "Ana's
# landlord"): a person's cue like kin, but no family relation is read from them.
PERSONAL = _words(
    """employer landlord landlady therapist tutor mentor classmate flatmate housemate ex"""
)

# What a person has, as a possessive names it ("Okafor's birthday", "Brennholt's
# wedding"): said of a person far more often than of a place or a company.
OWNED = _words(
    """birthday wedding funeral graduation house flat apartment car dog cat baby kids
    parents family"""
)

# Abbreviations of ordinary things, as written capitalised or in chat ("uni", "bday").
ACRONYMS = _words(
    """tv diy bbq asap fyi dm pm am ps gps ceo cfo cto coo hq mba phd md rn ai ar vr pc usb faq vip
    rsvp hr bff tbh imo imho irl idk jk np pls plz brb ttyl gg mvp ootd tldr aka eta etc vs
    cd dvd pdf id adhd ptsd ocd rpg fps mmo r&r cv crm erp api ui ux qa kpi okr roi nda sla
    gp icu mri dj mc ivf pto wfh po sow rfp rfq poc ngl smh ikr omw gf bf bday uni"""
)

# After one of these, a full stop does not end the sentence: "Dr. Smith", "St. Louis".
ABBREVIATIONS = _words("mr mrs ms dr prof st mt ft jr sr vs")

# Lowercase words inside a name: "Bank of America", "Lord of the Rings", "Vincent van Gogh".
CONNECTORS = _words("of de da del della der den van von du di le la los las dos das bin bint ibn")
# Connectors that join a person's names ("Juan de la Cruz", "Ali bin Hamad"): not "of".
PARTICLES = CONNECTORS - {"of"}
# Time words that are given names too ("May Lin", "June Carter", "Summer Delaney"): such a
# word followed by a name is read as a first name, not as a time.
NAMED_TIMES = _words("april may june jun august summer autumn")
# A month's short form that is a given name too ("Jan Kowalski"): a time only beside a day
# or a year ("in Jan 2023", "15 Jan", "Jan 3rd").
NAMED_MONTHS = _words("jan")

# Lowercase words inside a quoted title: "Pride and Prejudice", "Gone with the Wind".
TITLE_WORDS = CONNECTORS | _words(
    "a an the and or nor but in on at to for from by with as into over under upon up out"
)

# Words that open sentences in chat and never a name's first word: imperatives and
# verbs written without their subject ("Met Ana", "Tell Jon"), adjectives before a name
# ("Glad Max liked it", "Poor Luis"). A capitalised run that opens a sentence is read
# whole unless its first word is one of these, or has the shape of one
# (:func:`opener`). Written from English usage; the LoCoMo turns were read only to see
# which kinds of word open their sentences (gerunds, imperatives, adjectives).
OPENERS = _words(
    """go come remember tell ask meet met saw see seen say said call called text texted
    visit visited love loved miss missed wish wished hope hoped guess bet keep take took
    give gave make made try tried check watch watched read enjoy enjoyed find found bring
    brought send sent show showed help helped join joined invite invited hug hugged tag
    tagged follow followed told asked went got heard hear talk talked chat chatted catch
    caught sounds looks seems feels reminds happened glad happy proud excited lucky sad
    poor sweet brave cute little big beautiful crazy super pretty best anytime remind
    reminded drive drove pick picked collect collected drop dropped email emailed message
    messaged thank thanked pay paid book booked ring rang phone phoned forward forwarded
    introduce introduced congratulate congratulated"""
)
# The shape of a word that opens a sentence and no name: a gerund of six letters or more
# ("Visiting Paris", "Learning German"; "King" and "Ewing" are shorter or names a scope
# learns when they recur) and adverbs in -ally, -fully, -ously, -ently, -ately, -ively.
OPENER_ENDINGS = ("ing", "ally", "fully", "ously", "ently", "antly", "ately", "ively")


def opener(folded: str) -> bool:
    """Whether a case-folded word, opening a sentence, opens no name (:data:`OPENERS`,
    :data:`OPENER_ENDINGS`: a gerund of six letters or more)."""
    if folded in OPENERS:
        return True
    if folded.endswith("ing"):
        return len(folded) >= 6
    return folded.endswith(OPENER_ENDINGS)


NOT_NAMES = FUNCTION | INTERJECTIONS | TIME | ADDRESS | ACRONYMS

# Ordinary words that may still end or continue a name: "Iron Man", "Apple TV".
INSIDE_NAMES = ADDRESS | ACRONYMS
