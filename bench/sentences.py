"""Short, varied, realistic sentences and questions from word lists, with a fixed seed."""

from __future__ import annotations

import random

NAMES = (
    "Maria Tom Aisha Kenji Lucas Priya Omar Sofia Daniel Mei Jonas Fatima Carlos Hannah Ivan "
    "Leila Noah Chloe Ravi Elena Samuel Yuki Diego Amara Felix Nadia Oscar Ingrid Mateo Zara "
    "Pedro Grace Tariq Lena Hugo Asha Victor Nora Emil Rosa"
).split()
VERBS = (
    "moved|cancelled|booked|asked about|paid for|shared notes on|reviewed|postponed|upgraded|"
    "complained about|signed up for|returned|ordered|renewed|fixed|forgot|planned|approved|"
    "rejected|finished|started|recommended|borrowed|sold|lost|found|scheduled|tested|"
    "rewrote|discussed"
).split("|")
ADJECTIVES = (
    "quarterly annual weekly new old blue shared premium urgent small large second final "
    "draft yearly monthly family team spare broken favourite vegan cheap expensive local "
    "remote early late backup digital printed"
).split()
NOUNS = (
    "budget invoice subscription laptop flight report meeting contract camera bicycle "
    "dentist appointment lease passport playlist recipe garden deadline presentation "
    "insurance policy server migration newsletter workshop keyboard ticket hotel "
    "reservation birthday party gym membership tax return car repair phone plan "
    "design review book club piano lesson vet visit marathon training blog post "
    "database backup onboarding plan job interview kitchen renovation school trip "
    "concert ticket coffee order health checkup salary review camping trip"
).split()
CONTEXTS = (
    "at the office|from home|with the team|over email|in the app|at the café|on a call|"
    "during standup|with her manager|with his sister|on the train|at the airport|"
    "through the portal|in Slack|at the library|after the demo|with the landlord|"
    "at the clinic|in the shared doc|with support|at the bank|over dinner|"
    "in the garage|on the website|at the gym|with a client|at school|in Berlin|"
    "in Lisbon|in Osaka"
).split("|")
TIMES = (
    "on Monday|on Tuesday|on Wednesday|on Thursday|on Friday|last week|this morning|"
    "yesterday|before lunch|after work|in March|in June|in October|on the 3rd|"
    "on the 21st|last night|two days ago|at noon|over the weekend|next month|"
    "in the spring|at the end of the quarter|before the holidays|early today|"
    "late on Sunday|in January|in August|this afternoon|at 9 am|around midnight"
).split("|")
STATES = (
    "too expensive|finally done|delayed again|worth it|confusing|ready to ship|"
    "still pending|a great success|over budget|missing a page"
).split("|")


def _noun(rng: random.Random) -> str:
    """One noun, or (four times in ten) a compound of two random nouns."""
    first = rng.randrange(len(NOUNS))
    return NOUNS[first] if rng.random() < 0.6 else f"{NOUNS[first]} {rng.choice(NOUNS)}"


def sentence(rng: random.Random) -> str:
    name, verb, adj, noun = (
        rng.choice(NAMES),
        rng.choice(VERBS),
        rng.choice(ADJECTIVES),
        _noun(rng),
    )
    context, when = rng.choice(CONTEXTS), rng.choice(TIMES)
    form = rng.randrange(5)
    if form == 0:
        return f"{name} {verb} the {adj} {noun} {context} {when}."
    if form == 1:
        return f"{name} said the {adj} {noun} was {rng.choice(STATES)}."
    if form == 2:
        return f"{when.capitalize()}, {name} {verb} a {adj} {noun}."
    if form == 3:
        return f"{name} {verb} the {noun} for ${rng.randrange(5, 5000)} {when}."
    return f"{name} prefers the {adj} {noun} {context}."


def question(rng: random.Random) -> str:
    name, verb, adj, noun = (
        rng.choice(NAMES),
        rng.choice(VERBS),
        rng.choice(ADJECTIVES),
        _noun(rng),
    )
    form = rng.randrange(4)
    if form == 0:
        return f"What did {name} say about the {noun}?"
    if form == 1:
        return f"Has {name} {verb} the {adj} {noun} yet?"
    if form == 2:
        return f"Who {verb} the {noun} {rng.choice(CONTEXTS)}?"
    return f"{adj} {noun} {rng.choice(TIMES)}"


def unique_sentences(count: int, seed: int) -> list[str]:
    """``count`` distinct sentences (distinct texts, so no write is deduplicated)."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < count:
        seen.setdefault(sentence(rng), None)
    return list(seen)


def questions(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [question(rng) for _ in range(count)]


def vocabulary_size() -> int:
    words = " ".join([*NAMES, *VERBS, *ADJECTIVES, *NOUNS, *CONTEXTS, *TIMES, *STATES])
    return len(set(words.lower().split()))
