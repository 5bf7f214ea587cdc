"""What a recall query is to the full-text half: its content words.

Question words and function words ("what", "did", "the") carry no evidence and, in a
BM25 ranking, pull in every fact that shares them; they are dropped when the query has
anything else.
"""

from __future__ import annotations

import re

MAX_TERMS = 64

WORD = re.compile(r"\w+", re.UNICODE)  # a word, as every part of recall splits text

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don ever kind""".split()
)


def terms(query: str) -> list[str]:
    """The distinct lower-cased words of ``query``, stopwords dropped unless nothing is left."""
    words = list(dict.fromkeys(w.lower() for w in WORD.findall(query)))
    content = [w for w in words if w not in STOPWORDS]
    return (content or words)[:MAX_TERMS]
