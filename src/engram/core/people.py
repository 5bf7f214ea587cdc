"""What an application remembers of people: per person, per application, shared only
where the person allowed it.

The person is always a trusted identity, established by the edges, never read from input:
the subject of a token the service verified, or the owner the runtime was launched as
(``ENGRAM_OWNER_UID``) when a run has no session (the machine itself, a scheduled run).
A verified person reads what other applications remember of them where they allowed it;
the owner acting without a session reads its own memories only (spec 003: a turn without
a token reads its own only). :class:`Acting` carries that difference. Writes go under the
calling application's own key only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.core import limits, ops, reranking, tools
from engram.core.errors import InvalidInput, NotFound, Unavailable, Unprocessable
from engram.core.models import Fact, FactPage, RecallHit
from engram.core.scopes import PersonAppRef, check_app, person_prefix

if TYPE_CHECKING:
    from engram.core.memory import Memory

NOT_SIGNED_IN = "Nothing is remembered in this conversation: its visitor is not signed in."
UNAVAILABLE = "Semantic memory is not available here: no embedding model is configured."


@dataclass(frozen=True, slots=True)
class Acting:
    """Whose memory a call uses, and whether that person's allowances are read.

    Build it with :meth:`verified` (the subject of a token the service verified) or
    :meth:`owner` (the configured owner, acting with no session and no token).
    """

    person: str
    allowances: bool

    @classmethod
    def verified(cls, uid: str) -> Acting:
        """A person a token verified: reads other applications' memories they allowed."""
        return cls(uid, allowances=True)

    @classmethod
    def owner(cls, uid: str | None) -> Acting:
        """The owner with no session: its own memories only, no allowances. Raises
        InvalidInput when no owner is configured."""
        if not uid or not uid.strip():
            raise InvalidInput(
                "no owner is configured: a run without a session acts as the owner",
                hint="set ENGRAM_OWNER_UID to the person this runtime is launched as",
            )
        return cls(uid.strip(), allowances=False)


Person = str | Acting  # a str is the uid of a person a token verified


def _acting(person: Person) -> Acting:
    return person if isinstance(person, Acting) else Acting.verified(person)


@dataclass(frozen=True, slots=True)
class Remembering:
    """An application that remembers a person, and how many memories it keeps."""

    app: str
    count: int


def applications(memory: Memory, person: Person) -> list[Remembering]:
    """The applications that remember the person (its own memories of them only, never
    another person's), by name."""
    who = _acting(person).person
    return [
        Remembering(scope.app, memory.count(scope))
        for scope in memory.scopes(under=person_prefix(who))
        if isinstance(scope, PersonAppRef) and scope.person == who
    ]


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

    def scope(self, person: Person) -> PersonAppRef:
        return PersonAppRef(_acting(person).person, self.app)

    def remember(self, person: Person, text: str) -> Fact:
        """Remembers ``text`` as what this application knows of the person. Raises
        Unprocessable for empty words or more than 2000 characters, as a correction does."""
        _words(text)
        self.require_semantic()
        return self._memory.remember(self.scope(person), text)

    def recall(self, person: Person, query: str, *, top_k: int | None = None) -> list[SharedHit]:
        """This application's memories of the person, then, for a verified person, other
        applications' where the person allowed it (each ranked as one recall ranks, up to
        ``top_k`` of each kind). The owner acting without a session reads its own only."""
        self.require_semantic()
        who = _acting(person)
        own = [SharedHit(h) for h in self._memory.recall(self.scope(who), query, top_k=top_k)]
        if not who.allowances:
            return own
        others = [
            SharedHit(hit, source)
            for source in self._memory.sharing.sources_for(who.person, self.app)
            for hit in self._memory.recall(PersonAppRef(who.person, source), query, top_k=top_k)
        ]
        others.sort(key=lambda shared: reranking.merged(shared.hit))
        return own + others[: limits.check_top_k(top_k)]

    def listing(self, person: Person, *, limit: int | None = None) -> tuple[int, FactPage]:
        """How many memories the application holds of the person, and the newest."""
        ref = self.scope(person)
        return self._memory.count(ref), self._memory.facts(ref, limit=limit)

    def correct(self, person: Person, memory_id: str, text: str, *, by: str) -> Fact:
        """Rewrites one of the person's memories here (embedded again when an embedder is
        configured; otherwise it keeps its old vector). Raises Unprocessable for empty
        words or more than 2000 characters, NotFound for anything not the person's here."""
        _words(text)
        return self._memory.correct(self.scope(person), memory_id, text, by=by)

    def forget(self, person: Person, memory_id: str) -> None:
        """Forgets one of the person's memories here for good (spec 003: a person's
        forget is real): no trash, and the ledger keeps none of its words."""
        if not self._memory.forget(self.scope(person), memory_id, hard=True):
            raise NotFound(f"no memory {memory_id!r} of yours in {self.app}")

    def forget_all(self, person: Person, *, count: int) -> int:
        """Forgets all of it for good, confirming ``count``; Conflict when there is more
        now."""
        return self._memory.forget_all(self.scope(person), expected_count=count, hard=True)

    def require_semantic(self) -> None:
        """Raises Unavailable (503, in a sentence) when nothing can embed here."""
        if self._memory.embedder is None:
            raise Unavailable(UNAVAILABLE)


class PersonBacking(tools.AgentBacking):
    """The tools an application's agent has over what it remembers of one person: its
    searches also read what other applications remember of the person where the person
    allowed it (marked ``remembered by``); what it forgets or merges away is forgotten
    for good (spec 003: a person's forget is real)."""

    def __init__(self, memory: Memory, app: AppMemory, person: Person) -> None:
        super().__init__(memory, app.scope(person), hard=True)
        self._app = app
        self._person = person

    def add(self, note: ops.Remember) -> Fact:
        self._app.require_semantic()
        return super().add(note)

    def search(
        self, query: str, top_k: int, tags: Sequence[str], type: str | None
    ) -> list[tools.Found]:
        if tags or type:  # filters read this application's memories alone
            return super().search(query, top_k, tags, type)
        hits = self._app.recall(self._person, query, top_k=top_k)
        return [tools.Found(s.hit.fact, s.hit.relevance, s.remembered_by) for s in hits]


def acting(verified: str | None, *, scheduled: bool, owner: str | None) -> Acting | None:
    """Whose memory a run uses: a run outside any conversation (scheduled, or the machine
    itself) acts as the owner, its own memories only; a conversation as its verified
    visitor; nobody when not signed in, or when no owner is configured for a run
    outside a conversation."""
    if scheduled:
        return Acting.owner(owner) if owner and owner.strip() else None
    return None if verified is None else Acting.verified(verified)


def acting_person(verified: str | None, *, scheduled: bool, owner: str | None) -> str | None:
    """The uid :func:`acting` names, or None. Pass the :class:`Acting` itself to
    AppMemory and the tools: a bare uid is taken as a verified person's."""
    who = acting(verified, scheduled=scheduled, owner=owner)
    return None if who is None else who.person


def tool_remember(app: AppMemory, person: Person | None, text: str) -> str:
    """The remember tool: a sentence, never an error page, for a visitor not signed in."""
    if person is None:
        return NOT_SIGNED_IN
    fact = app.remember(person, text)
    return f"Remembered: {fact.content}"


def tool_recall(app: AppMemory, person: Person | None, query: str, top_k: int = 5) -> str:
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


def _words(text: str) -> None:
    """A person's words, held to a fact's rule under their own name: empty words or more
    than 2000 characters are Unprocessable (spec 003), alike when remembered or corrected."""
    try:
        limits.check_content(text, name="memory")
    except InvalidInput as exc:
        raise Unprocessable(exc.message) from exc
