"""What an application remembers of people: per person, per application, shared only
where the person allowed it.

The person is always a verified identity (the service's owner, or the subject of a token
the service verified); the edges establish it, this module never reads it from input.
Writes go under the calling application's own key only.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.core import limits
from engram.core.errors import InvalidInput, NotFound, Unavailable, Unprocessable
from engram.core.memory import Memory
from engram.core.models import Fact, FactPage, RecallHit
from engram.core.scopes import PersonAppRef, check_app

NOT_SIGNED_IN = "Nothing is remembered in this conversation: its visitor is not signed in."
UNAVAILABLE = "Semantic memory is not available here: no embedding model is configured."


@dataclass(frozen=True, slots=True)
class SharedHit:
    """A recalled memory; ``remembered_by`` names the other application it came from."""

    hit: RecallHit
    remembered_by: str | None = None


class AppMemory:
    """The memory one application keeps of each person who uses it."""

    def __init__(self, memory: Memory, app: str) -> None:
        self._memory = memory
        self.app = check_app(app)

    def scope(self, person: str) -> PersonAppRef:
        return PersonAppRef(person, self.app)

    def remember(self, person: str, text: str) -> Fact:
        self.require_semantic()
        return self._memory.remember(self.scope(person), text)

    def recall(self, person: str, query: str, *, top_k: int | None = None) -> list[SharedHit]:
        """This application's memories of the person, then, where the person allowed it,
        other applications' (each ranked by score, up to ``top_k`` of each kind)."""
        self.require_semantic()
        own = [SharedHit(h) for h in self._memory.recall(self.scope(person), query, top_k=top_k)]
        others = [
            SharedHit(hit, source)
            for source in self._memory.sharing.sources_for(person, self.app)
            for hit in self._memory.recall(PersonAppRef(person, source), query, top_k=top_k)
        ]
        others.sort(key=lambda shared: -shared.hit.score)
        return own + others[: limits.check_top_k(top_k)]

    def listing(self, person: str, *, limit: int | None = None) -> tuple[int, FactPage]:
        """How many memories the application holds of the person, and the newest."""
        ref = self.scope(person)
        return self._memory.count(ref), self._memory.facts(ref, limit=limit)

    def correct(self, person: str, memory_id: str, text: str, *, by: str) -> Fact:
        """Rewrites one of the person's memories here (embedded again when an embedder is
        configured; otherwise it keeps its old vector). Raises Unprocessable for empty
        words or more than 2000 characters, NotFound for anything not the person's here."""
        try:
            limits.check_content(text, name="memory")
        except InvalidInput as exc:
            raise Unprocessable(exc.message) from exc
        return self._memory.correct(self.scope(person), memory_id, text, by=by)

    def forget(self, person: str, memory_id: str) -> None:
        if not self._memory.forget(self.scope(person), memory_id):
            raise NotFound(f"no memory {memory_id!r} of yours in {self.app}")

    def forget_all(self, person: str, *, count: int) -> int:
        """Forgets all of it, confirming ``count``; Conflict when there is more now."""
        return self._memory.forget_all(self.scope(person), expected_count=count)

    def require_semantic(self) -> None:
        """Raises Unavailable (503, in a sentence) when nothing can embed here."""
        if self._memory.embedder is None:
            raise Unavailable(UNAVAILABLE)


def acting_person(verified: str | None, *, scheduled: bool, owner: str | None) -> str | None:
    """Whose memory a run uses: a scheduled run (outside any conversation) acts as the
    owner; a conversation as its verified visitor, or nobody when not signed in."""
    return owner if scheduled else verified


def tool_remember(app: AppMemory, person: str | None, text: str) -> str:
    """The remember tool: a sentence, never an error page, for a visitor not signed in."""
    if person is None:
        return NOT_SIGNED_IN
    fact = app.remember(person, text)
    return f"Remembered: {fact.content}"


def tool_recall(app: AppMemory, person: str | None, query: str, top_k: int = 5) -> str:
    """The recall tool: what is remembered of the person, one memory per line."""
    if person is None:
        return NOT_SIGNED_IN
    hits = app.recall(person, query, top_k=top_k)
    if not hits:
        return "Nothing remembered matches."
    return "\n".join(
        f"- {h.hit.fact.content}"
        + (f" (remembered by {h.remembered_by})" if h.remembered_by else "")
        for h in hits
    )
