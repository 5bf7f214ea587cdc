"""How near a candidate's words come to the question's, word by word, by meaning.

A question that shares no word with the fact that answers it ("how to contact them",
"the customer prefers email") is ranked by the vector half alone, where one vector for
each whole text decides by a hair (0.700 against 0.697 for a fact about a refund). Word
by word the same model tells them apart: "contact" lies near "email" (0.61) and far from
"refund" (0.39). This list scores each candidate by how near its words come to each of
the question's: for each question word its nearest word in the candidate, averaged.

The words' vectors come from the store's own embedder, each word embedded once and held
(to :data:`WORDS_HELD`, the least recently used let go first), so a question costs one
batch of the words its candidates bring that are not held yet: the local model embeds
about 1,300 single words a second here, so only the vector half's best
:data:`CANDIDATES` are scored (at most about 200 new words, 0.15 s, while a process
meets a scope's words for the first time). They are held under a digest of each word,
keyed afresh in each process, never the word: what a fact said, forgotten for good,
stays in no copy of this one.

Recall reads this list where the full-text half found nothing, and for a question that
asks what the facts imply (``asked.supposes``: "would", "might", "likely", "probably",
"could"), whose answer shares few words with them. Beside full text on every question,
on the LoCoMo dev split, it lifted multi-hop and open-domain questions and lowered
single-hop and temporal ones (BENCHMARKS.md), counting again the words full text had
matched; on the questions that suppose, it lifted open-domain ones and moved no other.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engram.core import query
from engram.core.ranking import Candidate, Traits

WORDS_HELD = 20_000  # about 31 MB of 384-wide vectors
CANDIDATES = 20  # the vector half's best, scored word by word


class WordVectors:
    """One embedder's vectors of single words, held as they are asked for: ``embed``
    gives a unit row for each word (the store's embedder, as passages); ``owner`` is that
    embedder, so its memory knows whose words these are."""

    def __init__(
        self, embed: Callable[[list[str]], Any], owner: object, held: int = WORDS_HELD
    ) -> None:
        self.owner = owner
        self._embed = embed
        self._held = held
        self._key = os.urandom(16)
        self._lock = threading.Lock()
        self._vectors: OrderedDict[bytes, Any] = OrderedDict()

    def _digest(self, word: str) -> bytes:
        return hashlib.blake2b(word.encode("utf-8"), digest_size=16, key=self._key).digest()

    def of(self, words: Sequence[str]) -> dict[str, Any]:
        """Each of ``words``' unit vector, embedding those not held in one batch."""
        keys = {w: self._digest(w) for w in words}
        with self._lock:
            found = {w: self._vectors[k] for w, k in keys.items() if k in self._vectors}
            for w in found:
                self._vectors.move_to_end(keys[w])
        missing = [w for w in keys if w not in found]
        if missing:
            rows = self._embed(missing)
            with self._lock:
                for word, vector in zip(missing, rows, strict=True):
                    self._vectors[keys[word]] = vector
                    found[word] = vector
                while len(self._vectors) > self._held:
                    self._vectors.popitem(last=False)
        return found


def by_words(
    terms: Sequence[str],
    nearest: Sequence[Candidate],
    traits: Mapping[str, Traits],
    vectors: WordVectors,
) -> list[Candidate]:
    """The first :data:`CANDIDATES` of ``nearest`` (the vector half, best first) that
    ``traits`` describes, best first, each scored by the mean over the question's
    ``terms`` of the cosine to its nearest word in the candidate's content."""
    asked = [t for t in terms if t not in query.STOPWORDS]
    among = [c.id for c in nearest if c.id in traits][:CANDIDATES]
    if not asked or len(among) < 2:
        return []
    words = {fid: query.terms(traits[fid].content) for fid in among}
    held = vectors.of(list(dict.fromkeys([*asked, *(w for ws in words.values() for w in ws)])))
    question = [held[t] for t in asked]
    scored = []
    for fid, ws in words.items():
        if not ws:
            continue
        rows = [held[w] for w in ws]
        nearness = sum(max(float(q @ row) for row in rows) for q in question) / len(question)
        scored.append(Candidate(fid, nearness))
    scored.sort(key=lambda c: (-c.score, c.id))
    return scored
