"""Copies follow their source: what a conversation's turn gave others, kept in step inside
every write.

A turn is a fact and a message entry of its session, and its words are also in its
neighbours' context (:mod:`engram.core.conversations`); a wiki page lists the facts it
folds (:mod:`engram.core.wiki`). The database queues a fact whenever it leaves (a forget,
a deletion for good, the trash's purge, a scope's deletion), comes back from the trash,
or is reworded, if it points at a session entry, is a document's chunk or its scope has
a wiki
(:meth:`engram.core.ports.FactRows.departed`); :func:`settle` reads the queue before each
write commits (:meth:`engram.core.ledger.Entry.close`), so no write path leaves a copy
holding words that are gone:

- a message entry that facts of its session's scope were remembered from is shown while
  one of them is live (with its words, corrected), hidden from every read while all are
  in the trash, and deleted with the last of them; a turn whose words were stored
  already (as another turn, or a fact) repeats that fact, and its entry follows it the
  same way;
- the facts around it (live and in the trash) get their context again from the turns
  still there, at the width it was built with (its entry keeps it; for a turn written
  before widths were kept, the width that builds its context again);
- the chunks either side of a document's chunk get their context again from the
  chunks still there (:func:`engram.core.documents.chunking.context`);
- the wiki's pages listing the fact, and its index, go for good (a page is a view): the
  next compile writes them again from the facts there.

A context changed here is an item of the write's ledger entry with the context before it,
so a revert gives it back, carrying the token the fact had (a copy following its source
blocks no revert of what made or changed the fact); when a turn is deleted for good, no
before-state keeps its words: this entry's items record none, and the neighbours'
earlier context items are scrubbed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby
from typing import TYPE_CHECKING

from engram.core import ledger, rules, wiki
from engram.core.conversations import KIND, MAX_WIDTH, around, line
from engram.core.documents import chunking, history
from engram.core.models import Fact
from engram.core.scopes import Scope, parse_key

if TYPE_CHECKING:
    from engram.core.ledger import Entry
    from engram.core.records import Entry as SessionEntry

BATCH = 500  # queued facts read at a time
GROUP = 200  # changed entries of one session followed at a time
LISTED = 100  # facts looked for in the wiki's pages by statement at a time
WIKI_INDEX = wiki.PREFIX + wiki.INDEX  # the wiki's index page, as a document
_LISTED = re.compile(r"\[([^\[\]\s]+)\]")  # how a page lists a fact: [<id>]


def settle(rec: Entry) -> None:
    """Follows every queued fact until the queue is empty."""
    store, tx = rec.store, rec.tx
    listings = _Listings(rec)
    while queued := store.facts.departed(tx, BATCH):
        for key, items in groupby(queued, key=lambda d: d.scope):
            scope, departed = parse_key(key), list(items)
            _wiki(rec, scope, [d.fact_id for d in departed], listings)
            _chunks(rec, scope, [d.fact_id for d in departed])
            sourced = [(d.source.sandbox_id, d.source.entry_index) for d in departed if d.source]
            ids = [d.fact_id for d in departed]
            sourced = sorted({*sourced, *((s, i) for s, i, _ in store.sessions.repeating(tx, ids))})
            for session_id, found in groupby(sourced, key=lambda s: s[0]):
                indexes = sorted({index for _, index in found})
                for start in range(0, len(indexes), GROUP):
                    _follow(rec, scope, session_id, indexes[start : start + GROUP])
        store.facts.settled(tx, queued)


class _Listings:
    """Which of the wiki's pages list which facts, for one settle. A few facts are looked
    for by statement, each a pattern matched against every page of the scope; where more
    leave at once (a forget of a whole scope: a million), the pages are read once and
    the ids they list indexed, until a page goes (0.07 s a statement for 100 facts against
    3,015 wiki facts: a soft forget of a 1.15M-fact scope took 1,002 s, 102 s now)."""

    def __init__(self, rec: Entry) -> None:
        self._rec = rec
        self._read: dict[str, dict[str, dict[str, str]]] = {}

    def of(self, scope: Scope, fact_ids: Sequence[str]) -> dict[str, str]:
        """The pages (live or in the trash) listing any of these facts: each page fact's
        id, with its document's."""
        rec, listed = self._rec, self._read.get(scope.key)
        if not fact_ids:
            return {}
        if listed is None and len(fact_ids) <= LISTED:
            return rec.store.facts.wiki_listing(rec.tx, scope, fact_ids)
        if listed is None:
            listed = self._read[scope.key] = {}
            for page, document, text in rec.store.facts.wiki_texts(rec.tx, scope):
                for fact_id in _LISTED.findall(text):
                    listed.setdefault(fact_id, {})[page] = document
        pages: dict[str, str] = {}
        for fact_id in fact_ids:
            pages.update(listed.get(fact_id, {}))
        return pages

    def changed(self, scope: Scope) -> None:
        """The scope's pages changed (some went): read again when next asked."""
        self._read.pop(scope.key, None)


def _wiki(rec: Entry, scope: Scope, fact_ids: Sequence[str], listings: _Listings) -> None:
    """The wiki's pages listing these facts go for good, with its index (which names
    pages and holds the watermark, so the next compile writes every page again from the
    facts there). A page is a view the next compile writes again: none waits in the
    trash, and a revert passes over its going (:data:`engram.core.ledger.DROP`), so it
    gets the facts back and the next compile their pages (putting back a page a compile
    has written again since would give two pages one name). A fact back from the trash
    that no page lists takes the index alone (the watermark may have passed it). Pages
    an earlier version put in the trash (the index among them: it names entity pages by
    their names) go for good with the first fact deleted for good."""
    store, tx = rec.store, rec.tx
    live = store.facts.by_ids(tx, scope, fact_ids)
    listing = listings.of(scope, fact_ids)
    shown = _listed(rec, scope, list(live), listing) if live and listing else set()
    follow = [i for i in fact_ids if i not in live or (i in shown and rec.reverts is None)]
    pages = listing if len(follow) == len(fact_ids) else listings.of(scope, follow)
    if not pages and live.keys() <= shown:
        return
    listings.changed(scope)
    index = store.documents.by_source(tx, scope, WIKI_INDEX)
    for document_id in sorted({*pages.values(), *([index.id] if index else [])}):
        document = store.documents.get(tx, scope, document_id)
        if document is not None:
            history.forget(rec, document, hard=True, action=ledger.DROP)
    kept = live.keys() | store.facts.trashed(tx, scope, follow).keys()
    if any(i not in kept for i in follow) and (trashed := store.facts.wiki_trash(tx, scope)):
        store.ledger.scrub(
            tx, scope, sorted(set(trashed.values())), kind="document", sparing=rec.seq
        )
        rules.erase(rec, list(trashed), action=ledger.DROP)


def _listed(rec: Entry, scope: Scope, fact_ids: Sequence[str], listing: dict[str, str]) -> set[str]:
    """Those of these facts that a live page of the wiki lists (among ``listing``, the
    pages listing any of them)."""
    pages = rec.store.facts.by_ids(rec.tx, scope, list(listing))
    said = "\n".join(f"{p.content}\n{p.context or ''}" for p in pages.values())
    return {i for i in fact_ids if f"[{i}]" in said}


def _chunks(rec: Entry, scope: Scope, fact_ids: Sequence[str]) -> None:
    """The chunks either side of a document's chunks among these facts get their context
    again from the chunks still there; a chunk whose fact was deleted for good names none
    from then on."""
    store, tx = rec.store, rec.tx
    documents = store.documents.holding(tx, scope, fact_ids)
    if not documents:
        return
    departed = set(fact_ids)
    kept = {*store.facts.by_ids(tx, scope, fact_ids), *store.facts.trashed(tx, scope, fact_ids)}
    erased = [i for i in fact_ids if i not in kept]
    near: list[str] = []
    for document_id in documents:
        document = store.documents.get(tx, scope, document_id)
        if document is None:
            continue
        ids = [c.fact_id for c in document.chunks if c.fact_id is not None]
        live = store.facts.by_ids(tx, scope, ids)
        trashed = {i: fact for i, (fact, _) in store.facts.trashed(tx, scope, ids).items()}
        words = {c.idx: live[c.fact_id].content for c in document.chunks if c.fact_id in live}
        moved = {c.idx for c in document.chunks if c.fact_id in departed}
        for chunk in document.chunks:
            fact = live.get(chunk.fact_id or "") or trashed.get(chunk.fact_id or "")
            if fact is None or not {chunk.idx - 1, chunk.idx + 1} & moved:
                continue
            near.append(fact.id)
            sides = [words[i] for i in (chunk.idx - 1, chunk.idx + 1) if i in words]
            context = chunking.context(chunk.heading or document.title, sides)
            if context != fact.context:
                _set_context(rec, scope, fact, context, fact.id in live, bool(erased))
    if erased:
        store.documents.unname(tx, erased)
        store.ledger.scrub(tx, scope, near, action="context", sparing=rec.seq)


def _set_context(
    rec: Entry, scope: Scope, fact: Fact, context: str | None, live: bool, erasing: bool
) -> None:
    """Gives a fact (live, or in the trash) its context built again; a live one's change
    is an item of the entry, keeping the context before unless words are being erased."""
    store, tx = rec.store, rec.tx
    if not live:
        store.facts.set_trashed_context(tx, scope, fact.id, context)
        return
    store.facts.set_context(tx, scope, fact.id, context, rec.now)
    if rec.holds("fact", fact.id):  # this entry changed it already, and says how
        return
    # The item keeps the token the fact had: a copy following its source is no state
    # of the fact's own, so it blocks no revert of what made the fact or changed it.
    newest = store.ledger.tokens(tx, scope, "fact", [fact.id]).get(fact.id)
    kept = None if erasing else json.dumps({"state": "live", "context": fact.context})
    rec.record("fact", fact.id, "context", kept, None if newest is None else newest[1])


def _follow(rec: Entry, scope: Scope, session_id: str, changed: Sequence[int]) -> None:
    store, tx = rec.store, rec.tx
    session = store.sessions.get(tx, session_id)
    own = session is not None and session.scope == scope
    lo, hi = max(0, changed[0] - 2 * MAX_WIDTH), changed[-1] + 2 * MAX_WIDTH + 1
    span = list(range(lo, hi))
    live = store.facts.by_source(tx, scope, session_id, span)
    trashed = store.facts.trashed_by_source(tx, scope, session_id, span)
    entries = dict[int, tuple["SessionEntry", bool]]()
    widths: dict[int, int] = {}
    repeated: dict[int, str] = {}  # a turn repeating a fact stored before it
    for entry, hidden, width, repeats in store.sessions.window(tx, session_id, lo, hi):
        assert entry.index is not None
        if width is not None:
            widths[entry.index] = width
        if own:
            entries[entry.index] = (entry, hidden)
            if repeats is not None:
                repeated[entry.index] = repeats
    # What each entry shows: its own fact's words, or those of the fact it repeats.
    shown, held = dict(live), dict(trashed)
    if repeated:
        ids = sorted(set(repeated.values()))
        found = store.facts.by_ids(tx, scope, ids)
        gone = {i: fact for i, (fact, _) in store.facts.trashed(tx, scope, ids).items()}
        shown |= {i: found[f] for i, f in repeated.items() if f in found}
        held |= {i: gone[f] for i, f in repeated.items() if f in gone}
    erased = [i for i in changed if i not in shown and i not in held]
    built = {i: line(e) for i, (e, _) in entries.items()}  # the lines as first written
    for index in changed:
        if index in entries and entries[index][0].kind == KIND:
            _settle_entry(rec, session_id, index, entries, shown, held)
    after = _lines(entries, shown, held, own)
    before = {**after, **{i: built[i] for i in changed if i in built}}
    near = {i for c in changed for i in range(c - MAX_WIDTH, c + MAX_WIDTH + 1)}
    for index in sorted(near):
        for fact, is_live in ((live.get(index), True), (trashed.get(index), False)):
            if fact is None:
                continue
            if index in widths:  # a turn alone in its width has none, and may again
                context = around(_said(after), index, widths[index])
            elif fact.context is not None:
                context = _rebuilt(fact.context, index, after, (before, built))
            else:
                continue
            if context != fact.context:
                _set_context(rec, scope, fact, context, is_live, bool(erased))
    if erased:  # earlier entries may hold its words in a neighbour's context before
        near_erased = {i for c in erased for i in range(c - MAX_WIDTH, c + MAX_WIDTH + 1)}
        ids = [f.id for i in near_erased for f in (live.get(i), trashed.get(i)) if f]
        store.ledger.scrub(tx, scope, ids, action="context", sparing=rec.seq)


def _settle_entry(
    rec: Entry,
    session_id: str,
    index: int,
    entries: dict[int, tuple[SessionEntry, bool]],
    live: dict[int, Fact],
    trashed: dict[int, Fact],
) -> None:
    store, tx = rec.store, rec.tx
    entry, hidden = entries[index]
    if index in live:
        if hidden:
            store.sessions.hide(tx, session_id, index, False)
        words = _spoken(entry, live[index].content)
        if words != entry.content:  # the turn was corrected (or a correction reverted)
            store.sessions.reword(tx, session_id, index, words)
        entries[index] = (replace(entry, content=words), False)
    elif index in trashed:
        if not hidden:
            store.sessions.hide(tx, session_id, index, True)
            entries[index] = (entries[index][0], True)
    else:
        store.sessions.erase_entry(tx, session_id, index)
        del entries[index]


def _spoken(entry: SessionEntry, content: str) -> str:
    """What a turn's fact says, as its entry holds it: without the speaker it opens with."""
    said = f"{entry.role}: " if entry.role is not None else ""
    return content.removeprefix(said) if said and content.startswith(said) else content


def _lines(
    entries: dict[int, tuple[SessionEntry, bool]],
    live: dict[int, Fact],
    trashed: dict[int, Fact],
    own: bool,
) -> dict[int, str]:
    """The line each index gives its neighbours now: a live turn's words; for the
    session's own scope, an entry still shown that no trashed fact holds."""
    lines = {i: fact.content for i, fact in live.items()}
    if own:
        for index, (entry, hidden) in entries.items():
            if index not in lines and index not in trashed and not hidden:
                lines[index] = line(entry)
    return lines


def _rebuilt(
    context: str, index: int, after: dict[int, str], earlier: Sequence[dict[int, str]]
) -> str | None:
    """``context`` built again from ``after`` at the width that built it (from the lines
    as they are, were, or were first written); at the width its lines reach when none
    does."""
    for width in range(1, MAX_WIDTH + 1):
        for lines in (after, *earlier):
            if around(_said(lines), index, width) == context:
                return around(_said(after), index, width)
    reach = [abs(i - index) for i, text in earlier[-1].items() if i != index and text in context]
    return around(_said(after), index, max(reach, default=1))


def _said(lines: dict[int, str]) -> list[tuple[int, str]]:
    return sorted(lines.items())
