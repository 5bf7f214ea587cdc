"""The wiki: a scope's facts folded into Markdown pages, which are then its documents.

``mem.wiki.compile(ref, batch=500)`` reads the scope once, takes the facts written since
the watermark (the position, creation time then row, of the last fact folded), oldest
first, up to ``batch`` at a time, and regenerates every page those facts touch:

- ``index.md``: every page, with how many facts each holds;
- ``entities/<name>.md``: the facts naming the entity (the graph's mentions), newest
  first, then its live relations;
- ``types/<type>.md``: the facts of that type, newest first;
- ``log/<YYYY-MM-DD>.md``: the facts created that day (UTC), oldest first.

A page is written from every fact that belongs on it, never appended to, so the same
facts always give the same bytes. Each page is then ingested as the scope's document
``wiki:<path>`` (type ``wiki``: :mod:`engram.core.documents`), so recall finds the pages
like any document, and a page whose bytes did not change writes nothing. A batch's pages
and the watermark (in the index page's front matter) are written in one ledger entry
(``wiki.compile``) and one transaction: a batch that fails leaves every page and the
watermark as they were, and the next compile does that batch again. The compiler never
reads wiki pages back as input.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engram.core import limits
from engram.core.errors import InvalidInput, StorageFailure
from engram.core.models import Fact
from engram.core.portability import folder as folders  # the parameter is folder
from engram.core.records import WikiReport as WikiReport  # re-exported

if TYPE_CHECKING:
    from engram.core.documents.models import IngestReport
    from engram.core.graph.models import Entity, Relation
    from engram.core.ports import Store, Tx
    from engram.core.scopes import Scope

WIKI_TYPE = "wiki"
PREFIX = "wiki:"
INDEX = "index.md"
MAX_BATCH = limits.MAX_WIKI_BATCH
# The facts a page lists: an entity's or a type's newest, a day's latest (the index counts
# them all). A scope filled in bulk names one person in 29k facts and holds a million in
# one day; each page is a document whose chunks are facts, so a page listing them all
# copied the scope into itself.
PAGE_FACTS = 200
NEWEST_AT_ONCE = 1000  # facts read at a time, newest first, for one past the watermark
_UNSAFE = re.compile(r"[^\w\- ]+", re.UNICODE)


class Pages(Protocol):
    """What writes the wiki's pages: the scope's documents (engram.core.documents keeps
    them, and follows the wiki in turn, so the wiki names only what it asks of them)."""

    def ingest_pages(
        self,
        ref: Scope,
        pages: Sequence[tuple[str, str]],
        *,
        op: str,
        tags: Sequence[str] = (),
        type: str = "document",
    ) -> list[IngestReport]:
        """Pages (name, text) written together, in one ledger entry ``op``."""
        ...


class Wiki:
    def __init__(self, store: Store, pages: Pages) -> None:
        self._store, self._pages = store, pages
        self._folders: dict[str, Path] = {}  # scope key -> the folder its pages mirror to

    def attach(self, ref: Scope, folder: str | os.PathLike[str] | None) -> None:
        """Mirrors the scope's pages into ``folder`` from each compile on, as Markdown
        files at their paths (``index.md``, ``entities/…``); None stops. The last call
        wins; the folder is made when missing (its parent must be a folder). A page's file
        is replaced whole; a page whose name is not safe as a file name, or whose place
        holds a link, a directory or a file with other hard links, is left out and listed
        (:func:`engram.core.portability.folder.update`): no byte is written outside the
        folder. The file of a page the index listed and lists no more (its facts left)
        is deleted. Raises InvalidInput (no such parent; the folder is a link or a file)."""
        if folder is None:
            self._folders.pop(ref.key, None)
            return
        path = Path(folder)
        if not path.parent.is_dir():
            raise InvalidInput(f"{path.parent} is not a folder")
        if os.path.lexists(path) and (path.is_symlink() or not path.is_dir()):
            raise InvalidInput(f"{path} is a link or not a folder; the wiki never follows one")
        self._folders[ref.key] = path

    def compile(self, ref: Scope, *, batch: int = 500) -> WikiReport:
        """Folds the facts written since the watermark into their pages, ``batch`` facts
        at a time, until none is left; with a folder attached, each batch's pages are
        written there first. Raises InvalidInput (batch outside 1 to 10,000),
        StorageFailure (a page the folder could not take: no space, no permission) and
        what ingesting a page raises; the watermark then stays where the last whole batch
        left it, and the next compile writes that batch's pages again."""
        if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
            raise InvalidInput(f"batch must be an integer from 1 to {MAX_BATCH}, got {batch!r}")
        mark = self._watermark(ref)
        store = self._store
        if mark is not None:
            held = mark
            if not store.run(lambda tx: _past(store, tx, ref, held), write=False):
                return WikiReport(0, (), f"{held[0]}.{held[1]}", ())  # the scope left unread
        facts, naming, entities, relations = store.run(
            lambda tx: _snapshot(store, tx, ref), write=False
        )  # read once: facts written meanwhile are the next compile's
        grouped = _Grouped.of([f for f, _ in facts], naming)  # once: each batch reads it
        pending = [(f, p) for f, p in facts if mark is None or p > mark]
        folded, written, left = 0, [], dict[str, str]()
        mirror = self._folders.get(ref.key)
        done: set[str] = set()  # pages written from the whole snapshot: final for this run
        for start in range(0, len(pending), batch):
            part = pending[start : start + batch]
            fresh = [f for f, _ in part]
            wanted = touched(fresh, naming) - done
            done |= wanted
            pages = render(grouped, entities, relations, wanted)
            last = part[-1][1]
            pages[INDEX] = _with_mark(pages[INDEX], f"{last[0]}.{last[1]}")
            paths = sorted(pages)
            if mirror is not None:
                left.update(_mirror(mirror, pages))
            named = [(PREFIX + p, pages[p]) for p in paths]
            reports = self._pages.ingest_pages(
                ref, named, op="wiki.compile", type=WIKI_TYPE, tags=(WIKI_TYPE,)
            )
            written += [p for p, r in zip(paths, reports, strict=True) if r.status != "unchanged"]
            folded, mark = folded + len(fresh), last
        shown = None if mark is None else f"{mark[0]}.{mark[1]}"
        return WikiReport(folded, tuple(dict.fromkeys(written)), shown, tuple(left.items()))

    def _watermark(self, ref: Scope) -> tuple[int, int] | None:
        store = self._store
        found = store.run(
            lambda tx: store.documents.by_source(tx, ref, PREFIX + INDEX), write=False
        )
        raw = None if found is None else found.metadata.get("watermark")
        if not raw:
            return None
        created, _, seq = raw.partition(".")
        return int(created), int(seq)


def _mirror(target: Path, pages: dict[str, str]) -> list[tuple[str, str]]:
    """Writes the pages into the folder, and deletes the files of the pages its index
    listed that the new index does not (a page whose facts all left: the wiki wrote the
    file, and its words go with the page); what was left out (page, why)."""
    kept, left = folders.writable(sorted(pages))
    try:
        before = folders.read(target, INDEX)
        _, blocked = folders.update(target, {name: pages[name] for name in kept})
        gone = listed(before or "") - listed(pages[INDEX]) - {INDEX}
        blocked += folders.remove(target, sorted(gone)) if gone else []
    except OSError as exc:
        raise StorageFailure(
            f"could not write the wiki's pages into {target}: {exc.strerror or exc}; "
            "the watermark stays where it was"
        ) from exc
    return left + blocked


_LISTED = re.compile(r"^- ((?:entities|types|log)/[^\n]+\.md) \(\d+\)$", re.MULTILINE)


def listed(index: str) -> set[str]:
    """The pages an index page lists."""
    return set(_LISTED.findall(index))


def _snapshot(
    store: Store, tx: Tx, ref: Scope
) -> tuple[
    list[tuple[Fact, tuple[int, int]]], dict[str, list[str]], dict[str, Entity], list[Relation]
]:
    """Every non-wiki fact oldest first with its position, the entities each names, the
    entities and the live relations."""
    found = [(f, p) for f, p in store.facts.page(tx, ref, None, 1 << 40) if f.type != WIKI_TYPE]
    found.reverse()
    ids = [f.id for f, _ in found]
    naming: dict[str, list[str]] = defaultdict(list)
    for mention in store.graph.mentions(tx, ref, facts=ids) if ids else []:
        if mention.entity not in naming[mention.fact_id]:
            naming[mention.fact_id].append(mention.entity)
    entity_ids = sorted({e for named in naming.values() for e in named})
    entities = store.graph.entities(tx, ref, entity_ids) if entity_ids else {}
    relations = (
        [
            r
            for r in store.graph.relations(tx, ref, entities=entity_ids, limit=1 << 30)
            if r.expired_at is None
        ]
        if entity_ids
        else []
    )
    return found, dict(naming), entities, relations


def _past(store: Store, tx: Tx, ref: Scope, mark: tuple[int, int]) -> bool:
    """Whether the newest fact that is no wiki page lies past the watermark: read newest
    first past the pages' own facts (a compile with nothing new read every fact of the
    scope, 69 s at 1.15M)."""
    before = None
    while True:
        page = store.facts.page(tx, ref, before, NEWEST_AT_ONCE)
        for fact, position in page:
            if fact.type != WIKI_TYPE:
                return position > mark
        if len(page) < NEWEST_AT_ONCE:
            return False
        before = page[-1][1]


def touched(fresh: Sequence[Fact], naming: dict[str, list[str]]) -> set[str]:
    """The pages the facts change: the index, their entities', types' and days' pages."""
    pages = {INDEX}
    for fact in fresh:
        pages.add(day_page(fact))
        if fact.type:
            pages.add(type_page(fact.type))
        pages.update(f"entity:{e}" for e in naming.get(fact.id, []))
    return pages


@dataclass(frozen=True)
class _Grouped:
    """The facts by the pages that list them, oldest first."""

    by_entity: dict[str, list[Fact]]
    by_type: dict[str, list[Fact]]
    by_day: dict[str, list[Fact]]

    @classmethod
    def of(cls, facts: Sequence[Fact], naming: dict[str, list[str]]) -> _Grouped:
        by_entity: dict[str, list[Fact]] = defaultdict(list)
        by_type: dict[str, list[Fact]] = defaultdict(list)
        by_day: dict[str, list[Fact]] = defaultdict(list)
        for fact in facts:
            for entity_id in naming.get(fact.id, []):
                by_entity[entity_id].append(fact)
            if fact.type:
                by_type[type_page(fact.type)].append(fact)
            by_day[day_page(fact)].append(fact)
        return cls(dict(by_entity), dict(by_type), dict(by_day))


def render(
    grouped: _Grouped,
    entities: dict[str, Entity],
    relations: Sequence[Relation],
    wanted: set[str],
) -> dict[str, str]:
    """The pages ``wanted`` (entity pages as ``entity:<id>``), by path, and the index."""
    pages: dict[str, str] = {}
    for key in sorted(wanted):
        if key.startswith("entity:"):
            entity = entities.get(key.removeprefix("entity:"))
            if entity is not None:
                pages[entity_page(entity)] = _entity(
                    entity, grouped.by_entity.get(entity.id, []), relations, entities
                )
        elif key.startswith("types/"):
            pages[key] = _listing(f"Type: {key[6:-3]}", grouped.by_type.get(key, []), newest=True)
        elif key.startswith("log/"):
            pages[key] = _listing(f"Log: {key[4:-3]}", grouped.by_day.get(key, []), newest=False)
    listed = {
        entity_page(entities[e]): len(v) for e, v in grouped.by_entity.items() if e in entities
    }
    listed |= {path: len(v) for path, v in grouped.by_type.items()}
    listed |= {path: len(v) for path, v in grouped.by_day.items()}
    pages[INDEX] = _index(listed)
    return pages


def entity_page(entity: Entity) -> str:
    """The entity's page: its name made safe, and a short digest of its normal name (two
    names that make the same slug never share a page)."""
    digest = hashlib.sha256(entity.norm.encode("utf-8")).hexdigest()[:6]
    return f"entities/{_slug(entity.name)}-{digest}.md"


def type_page(kind: str) -> str:
    return f"types/{_slug(kind)}.md"


def day_page(fact: Fact) -> str:
    return f"log/{fact.created_at.astimezone(UTC).date().isoformat()}.md"


def _slug(text: str) -> str:
    return (_UNSAFE.sub("-", text).strip("- ") or "page")[:80]


def _line(fact: Fact) -> str:
    when = fact.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    words = " ".join(fact.content.split())
    return f"- {words} ({when}, [{fact.id}])"


def _listing(title: str, facts: Sequence[Fact], *, newest: bool) -> str:
    """The page's facts (given oldest first): its newest PAGE_FACTS, newest first, or
    its latest PAGE_FACTS in order, after a line counting those left out."""
    return "\n".join([f"# {title}", "", *_lines(facts, newest=newest)]) + "\n"


def _lines(facts: Sequence[Fact], *, newest: bool) -> list[str]:
    shown = facts[-PAGE_FACTS:]
    older = len(facts) - len(shown)
    lines = [_line(f) for f in (reversed(shown) if newest else shown)]
    if not older:
        return lines
    said = f"({older} older {'fact' if older == 1 else 'facts'} not listed)"
    return [*lines, said] if newest else [said, *lines]


def _entity(
    entity: Entity,
    facts: Sequence[Fact],
    relations: Sequence[Relation],
    entities: dict[str, Entity],
) -> str:
    title = entity.name + (f" ({entity.type})" if entity.type else "")
    lines = [f"# {title}", "", *_lines(facts, newest=True)]
    mine = sorted(
        (r for r in relations if entity.id in (r.source, r.target)),
        key=lambda r: (r.type, r.source, r.target),
    )
    if mine:
        lines += ["", "## Relations", ""]
        for relation in mine:
            source = entities.get(relation.source)
            target = entities.get(relation.target)
            lines.append(
                f"- {source.name if source else relation.source} {relation.type} "
                f"{target.name if target else relation.target}"
            )
    return "\n".join(lines) + "\n"


def _index(listed: dict[str, int]) -> str:
    lines = ["# Index", ""]
    for section in ("entities", "types", "log"):
        paths = sorted(p for p in listed if p.startswith(section + "/"))
        if paths:
            lines += [f"## {section.capitalize()}", ""]
            lines += [f"- {p} ({listed[p]})" for p in paths]
            lines.append("")
    return "\n".join(lines)


def _with_mark(index: str, mark: str) -> str:
    return f"---\nwatermark: {mark}\n---\n{index}"
