"""The write ledger: every logical write is one entry, written in the transaction of the
change, with one item per object it changed and that object's state before it.

Each item also names the *token* of the state it left: the number of the entry that made
that state. A normal write leaves its own number; a revert puts back the token the object
had before the reverted entry, so "the object is as entry E left it" is exactly "its newest
item carries E's token" (:mod:`engram.core.undo` relies on it). Tokens are entry numbers,
never reused, so a state cannot be mistaken for another that happens to look the same.

Before-states, as JSON:
- a fact: ``{"state": "absent"}`` (it did not exist), ``{"state": "trash"}``, ``{"state":
  "live"}`` (it was live as it is now in the trash), or ``{"state": "live", "words":
  {...}}`` (its words, correction and vector before a correct: undoing needs no embedder);
- a working key: ``{"unset": true}`` or ``{"value": <JSON text>, "expires_at": us}``;
- an allowance: ``{"allowed": bool, "allowed_at": us}``;
- an agent: none (a registration is not undone);
- a fact whose strength consolidation moved: ``{"state": "live", "strength": x}``;
- a feedback row: none when added (a signal is only added, and its entry is not
  reverted); ``{"applied": bool}`` when consolidation applied it.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any, TypeVar

from engram.core.clock import to_us
from engram.core.models import Change, Fact, Writer

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx, Vectors
    from engram.core.scopes import Scope

T = TypeVar("T")
OWN = -1  # the token of a change: this entry's own number

ABSENT = json.dumps({"state": "absent"})
TRASHED = json.dumps({"state": "trash"})
LIVE = json.dumps({"state": "live"})
UNSET = json.dumps({"unset": True})
# The action of a derived copy (a wiki page) that went with its source for good: the
# next compile writes it again from what remains, so a revert passes over it.
DROP = "drop"


# The items an entry holds before it writes them: a write that changes more objects (an
# import of a million facts) writes them as it goes, so it holds a batch, not the write.
HELD_ITEMS = 10_000


class Entry:
    """One ledger entry being written in ``tx``: ``record`` each object changed; the
    items are written as they pass ``HELD_ITEMS``, and the rest once the work is done
    (an entry that changed nothing is dropped)."""

    def __init__(
        self,
        store: Store,
        tx: Tx,
        scope: Scope,
        op: str,
        writer: Writer,
        now_us: int,
        reverts: int | None = None,
    ) -> None:
        self.store, self.tx, self.scope, self.now = store, tx, scope, now_us
        self.writer, self.reverts = writer, reverts
        self.seq = store.ledger.begin(tx, scope, op, writer, now_us, reverts)
        self._changes: dict[tuple[str, str], Change] = {}
        self._written = False  # items written already (an object's first before-state kept)

    def record(
        self,
        kind: str,
        object_id: str,
        action: str,
        before: str | None = None,
        token: int | None = OWN,
    ) -> None:
        """One object changed. Changed twice in one entry, it keeps its first
        before-state and its last action and token."""
        key = (kind, object_id)
        first = self._changes.get(key)
        kept = before if first is None else first.before
        self._changes[key] = Change(
            kind, object_id, action, kept, self.seq if token == OWN else token
        )
        if len(self._changes) >= HELD_ITEMS:
            self._write()

    def holds(self, kind: str, object_id: str) -> bool:
        """Whether this entry has recorded a change of the object already."""
        if (kind, object_id) in self._changes:
            return True
        return self._written and self.store.ledger.holds(self.tx, self.seq, kind, object_id)

    @property
    def changed(self) -> bool:
        """Whether the work recorded a change so far: an entry that records none is
        dropped as it closes, so no report may name it."""
        return self._written or bool(self._changes)

    def close(self) -> None:
        """Writes the entry's items (see :func:`engram.core.recording.write`)."""
        if self.changed:
            self._write()
        else:
            self.store.ledger.drop(self.tx, self.seq)

    def _write(self) -> None:
        """The items held, written; an object written before keeps its first
        before-state and takes the new action and token."""
        if self._changes:
            self.store.ledger.add(self.tx, self.seq, list(self._changes.values()))
            self._changes, self._written = {}, True


def words(fact: Fact, content_hash: str, vector: Vectors | None) -> str:
    """A live fact's before-state with its words, correction and vector."""
    return json.dumps(
        {
            "state": "live",
            "words": {
                "content": fact.content,
                "content_hash": content_hash,
                "corrected_by": fact.corrected_by,
                "corrected_at": None if fact.corrected_at is None else to_us(fact.corrected_at),
                "vector": None
                if vector is None
                else base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii"),
            },
        }
    )


def working_value(stored: tuple[str, int, int | None] | None) -> str:
    """A working key's before-state from its stored (value, version, expires_at)."""
    if stored is None:
        return UNSET
    return json.dumps({"value": stored[0], "expires_at": stored[2]})


def allowance(allowed_at_us: int | None) -> str:
    return json.dumps({"allowed": allowed_at_us is not None, "allowed_at": allowed_at_us})


def decode(before: str | None) -> dict[str, Any]:
    return {} if before is None else dict(json.loads(before))


def vector_of(words_state: dict[str, Any]) -> bytes | None:
    """The vector a words before-state holds, as little-endian float32 bytes, or None."""
    raw = words_state.get("vector")
    return None if raw is None else base64.b64decode(raw)
