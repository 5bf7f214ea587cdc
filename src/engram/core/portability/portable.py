"""A scope's memory to and from files and text: the formats and the stores behind them.

JSON and JSONL are written here (:mod:`.records` makes the records, :mod:`.files` puts
a file in place whole). A ``.sqlite``/``.db`` export is a new engram store: the records
imported into it through the same import as any other, so ``engram.open`` recalls from
it directly; importing one reads it back through its own store.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from engram.core.errors import CapabilityMissing, InvalidInput
from engram.core.portability import files, folder, mcp_memory, mem0, records, transfer
from engram.core.portability.transfer import Importer, ImportReport
from engram.core.progress import Progress
from engram.core.scopes import Scope, parse_key

if TYPE_CHECKING:
    from engram.core.ports import ModelRecord, Store, Tx

SOURCES = ("engram", "mem0", "mcp-memory")
OnError = Literal["refuse", "skip"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What an export wrote: the file, its format, the facts and working keys in it, and
    its size in bytes."""

    path: str
    format: str
    facts: int
    working: int
    bytes: int
    left_out: tuple[tuple[str, str], ...] = ()  # what a folder export could not write, and why


class _Memory(Protocol):
    def import_file(self, ref: Scope, path: str | os.PathLike[str]) -> ImportReport: ...

    def export(self, ref: Scope, path: str | os.PathLike[str]) -> ExportReport: ...

    def close(self) -> None: ...


class Portable:
    def __init__(
        self,
        store: Store,
        importer: Importer,
        stores: Callable[[str], Store] | None,
        memory_of: Callable[[Store, bool], _Memory],
    ) -> None:
        self._store, self._importer = store, importer
        self._stores, self._memory_of = stores, memory_of

    def export(
        self,
        ref: Scope,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        update: bool = False,
    ) -> ExportReport:
        if not isinstance(update, bool):
            raise InvalidInput("update must be true or false")
        kind = files.export_format(Path(path), format)
        if update and kind not in folder.FOLDER_FORMATS:
            raise InvalidInput(
                f"update applies to a folder export ({', '.join(folder.FOLDER_FORMATS)}), "
                f"not {kind}: a file export is always new"
            )
        target = files.target(path, update=update)
        with files.writing(target):
            return self._export(ref, target, kind, update)

    def _export(self, ref: Scope, target: Path, kind: str, update: bool) -> ExportReport:
        store, tally = self._store, _Tally()
        if kind in folder.FOLDER_FORMATS:
            found = transfer.exporting(store, ref, lambda _, found: list(tally(found)))
            written, left_out, counts = folder.pages(found, kind)
            if update:
                size, blocked = folder.update(target, written)
                left_out += [(f"page {name}", why) for name, why in blocked]
            else:
                size, blocked = folder.write(target, written), []
            missing = dict(blocked)
            shown = sum(n for name, n in counts.items() if name not in missing)
            working = 0 if "working.md" in missing else tally.working
            return ExportReport(str(target), kind, shown, working, size, tuple(left_out))
        if kind == "mcp-memory":
            size = files.write_text(target, self._mcp_lines(ref))
            facts = store.run(lambda tx: store.facts.count(tx, ref), write=False)
            return ExportReport(str(target), kind, facts, 0, size)
        if kind == "mem0":
            size = files.write_text(target, [self._mem0(ref)])
            facts = store.run(lambda tx: store.facts.count(tx, ref), write=False)
            return ExportReport(str(target), kind, facts, 0, size)
        if kind == "jsonl":
            size = transfer.exporting(
                store,
                ref,
                lambda model, found: files.write_text(
                    target, records.lines(records.header(model, ref.key), tally(found))
                ),
            )
        elif kind == "json":
            size = files.write_text(target, [self._text(ref, "json", tally)])
        else:
            size = files.place(target, lambda staged: self._sqlite(staged, ref, tally))
        return ExportReport(str(target), kind, tally.facts, tally.working, size)

    def export_string(self, ref: Scope, *, format: str = "jsonl") -> str:
        if format == "mcp-memory":
            return "".join(self._mcp_lines(ref))
        if format == "mem0":
            return self._mem0(ref)
        if format not in ("json", "jsonl"):
            raise InvalidInput(f"format must be json, jsonl, mcp-memory or mem0, got {format!r}")
        return self._text(ref, format, _Tally())

    def _text(self, ref: Scope, format: str, tally: _Tally) -> str:
        """The scope's records as one ``json`` document or ``jsonl`` text."""

        def text(model: ModelRecord | None, found: Iterator[dict[str, Any]]) -> str:
            head = records.header(model, ref.key)
            if format == "json":
                return transfer.json_document(head, list(tally(found)))
            return "".join(records.lines(head, tally(found)))

        return transfer.exporting(self._store, ref, text)

    def import_string(
        self,
        ref: Scope,
        text: str,
        *,
        format: str | None = None,
        source: str = "engram",
        dry_run: bool = False,
        progress: Progress | None = None,
        on_error: OnError = "refuse",
    ) -> ImportReport:
        if not isinstance(text, str):
            raise InvalidInput("text must be a string")
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be true or false")
        skip = _skipping(on_error)
        if source == "mcp-memory":
            graph = mcp_memory.parse(text)
            parsed = records.Parsed(facts=graph.facts(), errors=graph.errors)
            return self._importer.run(
                ref, parsed, dry_run=dry_run, progress=progress, graph=graph, skip=skip
            )
        if source == "mem0":
            parsed = mem0.parse(text)
        elif source == "engram":
            parsed = records.parse(text, format or records.sniff(text))
        else:
            raise InvalidInput(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
        return self._importer.run(ref, parsed, dry_run=dry_run, progress=progress, skip=skip)

    def import_file(
        self,
        ref: Scope,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        source: str = "engram",
        dry_run: bool = False,
        progress: Progress | None = None,
        on_error: OnError = "refuse",
    ) -> ImportReport:
        found = files.source(path)
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be true or false")
        skip = _skipping(on_error)
        suffix = found.suffix.lower()
        if source == "engram" and format is None:
            format = {".json": "json", ".jsonl": "jsonl", ".csv": "csv"}.get(suffix)
            format = "sqlite" if suffix in (".sqlite", ".db") else format
        if source == "engram" and format == "sqlite":
            with tempfile.TemporaryDirectory(prefix="engram-import-") as temp:
                lines = self._sqlite_lines(found, ref, Path(temp))
                return self.import_file(
                    ref,
                    lines,
                    format="jsonl",
                    dry_run=dry_run,
                    progress=progress,
                    on_error=on_error,
                )
        if source == "engram" and format == "jsonl":  # read a line at a time
            with files.reading(found):
                streamed = None if dry_run else self._importer.stream(ref, found, progress, skip)
                if streamed is not None:
                    return streamed
                parsed = _read(found, records.parse_jsonl)
            return self._importer.run(ref, parsed, dry_run=dry_run, progress=progress, skip=skip)
        with files.reading(found):
            text = _read(found, "".join)
        return self.import_string(
            ref,
            text,
            format=format,
            source=source,
            dry_run=dry_run,
            progress=progress,
            on_error=on_error,
        )

    def _sqlite(self, staged: Path, ref: Scope, tally: _Tally) -> int:
        """The scope as a new store at ``staged``: its records written to a JSONL file
        beside it, then imported from there, a batch at a time."""
        with tempfile.TemporaryDirectory(prefix=".engram-export-", dir=staged.parent) as temp:
            lines = Path(temp) / "records.jsonl"
            transfer.exporting(
                self._store,
                ref,
                lambda model, found: files.write_new(
                    lines, records.lines(records.header(model, ref.key), tally(found))
                ),
            )
            other = self._memory_of(self._open(staged), True)
            try:
                other.import_file(ref, lines)
            finally:
                other.close()
        return staged.stat().st_size

    def _sqlite_lines(self, path: Path, ref: Scope, folder: Path) -> Path:
        """The scope's records in the store at ``path`` (this scope, or the one scope it
        holds) as a JSONL export in ``folder``."""
        opened = self._open(path)
        other = self._memory_of(opened, False)
        try:
            scopes = opened.run(lambda tx: opened.facts.scope_keys(tx, 2), write=False)
            if ref.key in scopes or not scopes:
                source = ref
            elif len(scopes) == 1:
                source = parse_key(scopes[0])
            else:
                raise InvalidInput(f"{path} holds several scopes and not this one")
            return Path(other.export(source, folder / "records.jsonl").path)
        finally:
            other.close()

    def _mcp_lines(self, ref: Scope) -> list[str]:
        store = self._store

        def read(tx: Tx) -> list[str]:
            ids = store.graph.entity_ids(tx, ref, 1 << 30)
            found = store.graph.entities(tx, ref, ids)
            entities = [found[i] for i in ids if i in found]
            naming: dict[str, list[str]] = {}
            for mention in store.graph.mentions(tx, ref, entities=ids) if ids else []:
                naming.setdefault(mention.entity, []).append(mention.fact_id)
            relations = store.graph.relations(tx, ref, limit=1 << 30)
            facts = [f for f, _ in store.facts.page(tx, ref, None, 1 << 40)]
            facts.reverse()
            return list(mcp_memory.lines(entities, relations, facts, naming))

        return store.run(read, write=False)

    def _mem0(self, ref: Scope) -> str:
        """The scope's facts as mem0's ``get_all()`` answers them (:func:`mem0.document`)."""
        store = self._store

        def read(tx: Tx) -> str:
            facts = [f for f, _ in store.facts.page(tx, ref, None, 1 << 40)]
            return mem0.document(reversed(facts))

        return store.run(read, write=False)

    def _open(self, path: Path) -> Store:
        if self._stores is None:
            raise CapabilityMissing("this memory cannot open another store")
        return self._stores(str(path))


class _Tally:
    """Counts the records an export writes, as they pass."""

    def __init__(self) -> None:
        self.facts = self.working = 0

    def __call__(self, found: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for record in found:
            if record["kind"] == "fact":
                self.facts += 1
            else:
                self.working += 1
            yield record


def _skipping(on_error: object) -> bool:
    """Whether bad records are left out (``skip``) rather than refusing the import."""
    if on_error not in ("refuse", "skip"):
        raise InvalidInput(f"on_error must be refuse or skip, got {on_error!r}")
    return on_error == "skip"


def _read(path: Path, use: Callable[[Iterable[str]], T]) -> T:
    try:
        with open(path, encoding="utf-8") as lines:
            return use(lines)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text") from exc
