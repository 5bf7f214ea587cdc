"""What the command line prints: each result as JSON data and as concise human lines.

The data is made only for ``--json``: it is made by the service's wire shapes, and
importing them (pydantic with them) was 0.25 of the 0.65 s a command took to start."""

from __future__ import annotations

import dataclasses
import importlib
import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engram.core.models import (
    Change,
    ChangesPage,
    Compaction,
    DeletionReceipt,
    Fact,
    FactPage,
    ForkResult,
    JSONValue,
    LedgerEntry,
    LedgerPage,
    RecallHit,
    TrashPage,
    WorkingEntry,
    WorkingPage,
)
from engram.core.scopes import PersonAppRef, Scope

if TYPE_CHECKING:
    from datetime import timedelta

    from engram import wire
    from engram.core.conversations import Conversation
    from engram.core.documents.models import Document, WalkReport
    from engram.core.health import (
        GraphHealth,
        HealthReport,
        StaleHealth,
        StorageHealth,
        VectorIndexHealth,
    )
    from engram.core.portability.portable import ExportReport
    from engram.core.portability.transfer import ImportReport
    from engram.core.ports import Embedder
    from engram.core.records import ConsolidationReport, Entry, EntryPage, Session, SessionNode

JSONData = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Output:
    """One command's result: ``data`` for ``--json`` (``made``: the data, or what makes
    it when asked), ``lines`` for people."""

    made: JSONData | Callable[[], JSONData]
    lines: list[str] = field(default_factory=list)

    @property
    def data(self) -> JSONData:
        return self.made() if callable(self.made) else self.made

    def text(self, as_json: bool) -> str:
        if as_json:
            return dumps(self.data)
        return "\n".join(self.lines)


def dumps(data: JSONValue) -> str:
    return json.dumps(data, ensure_ascii=False)


def wired(
    answer: Callable[[Any], wire.Answer], shapes: str = "engram.wire"
) -> Callable[[], JSONData]:
    """What makes the data of the answer ``answer`` makes of the wire shapes of the module
    ``shapes``, imported only when the data is asked for (``--json``)."""

    def made() -> JSONData:
        return answer(importlib.import_module(shapes)).model_dump(mode="json")

    return made


def scope_data(ref: Scope) -> JSONData:
    if isinstance(ref, PersonAppRef):
        return {"person": ref.person, "app": ref.app}
    return {"resource_id": ref.resource_id, "team_id": ref.team_id}


def fact_data(fact: Fact) -> JSONData:
    """A fact as the service answers it, by field name (:class:`engram.wire.FactOut`)."""
    from engram import wire

    return wire.FactOut.of(fact).model_dump(mode="json")


def fact_line(fact: Fact) -> str:
    """``f_…  [verified]  content  type=T tags=a,b``"""
    line = f"{fact.id}  [{'verified' if fact.verified else 'unverified'}]  {fact.content}"
    extras = []
    if fact.type is not None:
        extras.append(f"type={fact.type}")
    if fact.tags:
        extras.append("tags=" + ",".join(fact.tags))
    return "  ".join([line, " ".join(extras)]) if extras else line


def fact(found: Fact) -> Output:
    return Output(lambda: fact_data(found), [fact_line(found)])


def walk(walked: WalkReport) -> Output:
    reports = [
        {
            "status": r.status,
            "source": r.source,
            "document_id": r.document_id,
            "chunks": r.chunks,
            "reason": r.reason,
        }
        for r in walked.reports
    ]
    lines = [
        f"{r.status:<9} {r.source}"
        + (f" ({r.reason})" if r.reason else f" [{r.document_id}, {r.chunks} chunks]")
        for r in walked.reports
    ]
    counts = ", ".join(
        f"{walked.count(s)} {s}" for s in ("created", "replaced", "unchanged", "skipped")
    )
    if walked.dry_run:
        counts = f"dry run, nothing written: {counts}"
    return Output({"documents": reports, "dry_run": walked.dry_run}, [*lines, counts])


def facts(remembered: Sequence[Fact]) -> Output:
    return Output(
        lambda: {"facts": [fact_data(f) for f in remembered]}, [fact_line(f) for f in remembered]
    )


def facts_page(page: FactPage) -> Output:
    lines = [fact_line(f) for f in page.facts] or ["no facts in this scope"]
    if page.next_before is not None:
        lines.append(f"more follow: --before {page.next_before}")
    return Output(
        lambda: {"facts": [fact_data(f) for f in page.facts], "next_before": page.next_before},
        lines,
    )


def conversation(done: Conversation) -> Output:
    data = wired(lambda w: w.ConversationOut.of(done))

    last = done.entries.stop - 1
    lines = [f"session {done.session_id}: entries {done.entries.start}-{last}"]
    lines += [fact_line(f) for f in done.facts]
    return Output(data, lines)


def recall_hits(hits: Sequence[RecallHit]) -> Output:
    def data() -> JSONData:
        return {
            "hits": [
                {
                    "fact": fact_data(h.fact),
                    "score": h.score,
                    "text_rank": h.text_rank,
                    "vector_rank": h.vector_rank,
                    "relevance": h.relevance,
                    "rerank_score": h.rerank_score,
                }
                for h in hits
            ]
        }

    lines = [f"{h.relevance:.2f}  {fact_line(h.fact)}" for h in hits] or ["nothing recalled"]
    return Output(data, lines)


def provenance(fact_id: str, found: Sequence[Any]) -> Output:
    data = [dataclasses.asdict(p) for p in found]
    lines = [
        f"{p.source} chunk {p.idx} [{p.start}-{p.end}]" + (f" {p.heading}" if p.heading else "")
        for p in found
    ] or [f"no document holds the words of {fact_id}"]
    return Output({"id": fact_id, "provenance": data}, lines)


def document_line(doc: Document) -> str:
    return f"{doc.id}  {doc.source}  ({doc.media_type}, {doc.bytes} bytes)"


def documents(found: Sequence[Document]) -> Output:
    def data() -> JSONData:
        from engram.wire.documents import DocumentOut

        return {"documents": [DocumentOut.of(d).model_dump(mode="json") for d in found]}

    return Output(data, [document_line(d) for d in found] or ["no documents"])


def document(doc: Document) -> Output:
    data = wired(lambda w: w.DocumentOut.of(doc, chunks=True), "engram.wire.documents")

    chunks = [
        f"  chunk {c.idx} [{c.start}-{c.end}] {c.heading}".rstrip() + f"  -> {c.fact_id}"
        for c in doc.chunks
    ]
    return Output(data, [document_line(doc), *chunks])


def forgot_document(document_id: str, existed: bool, *, hard: bool = False) -> Output:
    how = " and its facts for good" if hard else " (its facts to the trash)"
    line = f"forgot {document_id}{how}" if existed else f"no document {document_id} here"
    return Output({"id": document_id, "forgotten": existed, "hard": hard}, [line])


def forgotten(fact_id: str, existed: bool, *, hard: bool = False) -> Output:
    how = " for good" if hard else " (to the trash: engram unforget brings it back)"
    line = f"forgot {fact_id}{how}" if existed else f"no fact {fact_id} in this scope"
    return Output({"id": fact_id, "forgotten": existed, "hard": hard}, [line])


def forgotten_all(count: int, *, hard: bool = False) -> Output:
    how = " for good" if hard else " (to the trash)"
    return Output(
        {"forgotten": count, "hard": hard}, [f"forgot {count} fact{'' if count == 1 else 's'}{how}"]
    )


def trash(page: TrashPage) -> Output:
    data = wired(
        lambda w: w.TrashOut(
            facts=[w.TrashedFact.of_trashed(t) for t in page.facts],
            next_before=page.next_before,
        )
    )

    lines = [
        f"{fact_line(t.fact)}  forgotten {t.deleted_at:%Y-%m-%d %H:%M}, "
        + (f"deleted for good {t.purge_at:%Y-%m-%d}" if t.purge_at else "kept")
        for t in page.facts
    ] or ["the trash is empty"]
    if page.next_before is not None:
        lines.append(f"more follow: --before {page.next_before}")
    return Output(data, lines)


def deleted(receipt: DeletionReceipt) -> Output:
    data = wired(lambda w: w.DeletionOut.of(receipt))

    line = (
        f"deleted for good: {receipt.facts} live and {receipt.trashed} trashed facts; "
        f"{receipt.ledger_items_scrubbed} ledger before-states erased"
    )
    return Output(data, [line])


def entry_line(entry: LedgerEntry) -> str:
    """``#12  2026-11-30 14:03:44  forget  by alice via cli  fact f_…: trash``"""
    changes = ", ".join(_change_line(c) for c in entry.changes[:3])
    if entry.change_count > 3:
        changes += f" and {entry.change_count - 3} more"
    marks = [m for m, on in (("reverted", entry.reverted_by), ("scrubbed", entry.scrubbed)) if on]
    shown = f"#{entry.seq}  {entry.at:%Y-%m-%d %H:%M:%S}  {entry.op}  by {entry.actor} via "
    shown += entry.via + (f"  [{', '.join(marks)}]" if marks else "")
    return f"{shown}  {changes}" if changes else shown


def ledger_entry(entry: LedgerEntry) -> Output:
    data = wired(lambda w: w.LedgerEntryOut.of(entry))

    return Output(data, [entry_line(entry)])


def _change_line(change: Change) -> str:
    return f"{change.kind} {change.object_id}: {change.action}"


def changes(page: ChangesPage) -> Output:
    data = wired(lambda w: w.ChangesOut.of(page))

    lines = [_change_line(c) for c in page.changes] or ["no changes"]
    if page.next_after is not None:
        lines.append(f"more follow: --after {page.next_after}")
    return Output(data, lines)


def ledger(page: LedgerPage) -> Output:
    data = wired(
        lambda w: w.LedgerOut(
            entries=[w.LedgerEntryOut.of(e) for e in page.entries],
            next_before=page.next_before,
        )
    )

    lines = [entry_line(e) for e in page.entries] or ["no writes recorded"]
    if page.next_before is not None:
        lines.append(f"more follow: --before {page.next_before}")
    return Output(data, lines)


def entry_data(entry: WorkingEntry) -> JSONData:
    from engram import wire

    return wire.EntryOut.of(entry).model_dump(mode="json")


def entry_value(entry: WorkingEntry) -> Output:
    return Output(lambda: entry_data(entry), [dumps(entry.value)])


def entry_set(entry: WorkingEntry) -> Output:
    expiry = f", expires {entry.expires_at.isoformat()}" if entry.expires_at else ""
    return Output(lambda: entry_data(entry), [f"set {entry.key} (version {entry.version}{expiry})"])


def entry_deleted(key: str, existed: bool) -> Output:
    line = f"deleted {key}" if existed else f"{key} was not set; nothing to delete"
    return Output({"key": key, "deleted": existed}, [line])


def working_page(page: WorkingPage) -> Output:
    lines = [f"{e.key} = {dumps(e.value)}" for e in page.entries]
    lines += [f"{k}: stored too deep to show (overwrite or delete it)" for k in page.unreadable]
    if page.next_after is not None:
        lines.append(f"more follow: --after {page.next_after}")

    def data() -> JSONData:
        made: JSONData = {
            "entries": [entry_data(e) for e in page.entries],
            "next_after": page.next_after,
        }
        if page.unreadable:
            made["unreadable"] = list(page.unreadable)
        return made

    return Output(data, lines or ["no working-memory keys"])


def forked(result: ForkResult) -> Output:
    line = (
        f"forked into {result.ref.resource_id}: {result.facts_copied} facts and "
        f"{result.working_keys_copied} working-memory keys copied"
    )
    return Output(
        {
            "scope": scope_data(result.ref),
            "facts_copied": result.facts_copied,
            "working_keys_copied": result.working_keys_copied,
        },
        [line],
    )


def session(started: Session) -> Output:
    fork = started.fork_of
    origin = "" if fork is None else f" from {fork.sandbox_id}:{fork.entry_index}"

    data = wired(lambda w: w.SessionOut.of(started))

    return Output(
        data,
        [f"session {started.id}{origin} ({started.next_index} entries)"],
    )


def appended(session_id: str, written: range) -> Output:
    count = len(written)
    return Output(
        {"session_id": session_id, "start": written.start, "stop": written.stop},
        [f"appended {count} entr{'y' if count == 1 else 'ies'} to {session_id} at {written.start}"],
    )


def session_entry_line(entry: Entry, indent: str = "") -> str:
    at = entry.at.isoformat() if entry.at else "?"
    who = f" {entry.role}" if entry.role else ""
    return f"{indent}{at}  {entry.session_id}:{entry.index}  [{entry.kind}{who}]  {entry.content}"


def episodes(page: EntryPage) -> Output:
    def data() -> JSONData:
        from engram import wire

        made = wire.EntryPageOut(
            entries=[wire.SessionEntryOut.of(e) for e in page.entries],
            next_after=page.next_after,
        ).model_dump(mode="json")
        return {"next_after": None, **made}

    lines = [session_entry_line(e) for e in page.entries] or ["no session entries"]
    if page.next_after is not None:
        lines.append(f"more follow: --after {page.next_after.isoformat()}")
    return Output(data, lines)


def tree(roots: Sequence[SessionNode]) -> Output:
    def node_data(node: SessionNode) -> JSONData:
        from engram import wire

        return {
            "session": wire.SessionOut.of(node.session).model_dump(mode="json"),
            "entries": [wire.SessionEntryOut.of(e).model_dump(mode="json") for e in node.entries],
            "children": [node_data(c) for c in node.children],
        }

    def node_lines(node: SessionNode, depth: int) -> list[str]:
        pad = "  " * depth
        lines = [f"{pad}session {node.session.id} ({len(node.entries)} entries)"]
        lines += [session_entry_line(e, pad + "  ") for e in node.entries]
        for child in node.children:
            lines += node_lines(child, depth + 1)
        return lines

    lines = [line for root in roots for line in node_lines(root, 0)] or ["no sessions"]
    return Output(lambda: {"roots": [node_data(r) for r in roots]}, lines)


def compacted(result: Compaction) -> Output:
    line = (
        f"removed {result.removed} facts ({len(result.expired)} past the max age, "
        f"{len(result.over_cap)} over the max count)"
    )

    data = wired(lambda w: w.CompactionOut.of(result))

    return Output(data, [line])


def exported(report: ExportReport) -> Output:
    line = (
        f"exported {report.facts} facts and {report.working} working keys to {report.path} "
        f"({report.format}, {report.bytes} bytes)"
    )
    data: JSONData = {
        "path": report.path,
        "format": report.format,
        "facts": report.facts,
        "working": report.working,
        "bytes": report.bytes,
    }
    data["left_out"] = [{"what": what, "why": why} for what, why in report.left_out]
    lines = [line] + [f"left out: {what}: {why}" for what, why in report.left_out]
    return Output(data, lines)


def imported(report: ImportReport, rejects: str | None = None) -> Output:
    """The import's counts, each id it changed, and every record it left out or took
    with a change (by line, in the file's order); ``rejects``: where the left-out
    records were written."""
    verb = "would import" if report.dry_run else "imported"
    lines = [
        f"{verb} {report.facts_added} facts ({report.facts_existing} already held, linked) "
        f"and {report.working_set} working keys; {report.vectors_reused} vectors reused, "
        f"{report.vectors_embedded} embedded"
    ]
    lines += [f"id {old} is now {new}" for old, new in report.id_mappings.items()]
    if report.skipped:
        where = f"; written to {rejects}" if rejects else ""
        lines.append(f"left out {len(report.skipped)} record(s){where}:")
        lines += [f"  line {s.line}, {s.field}: {s.message}" for s in report.skipped]
    if report.changed:
        lines.append(f"took {len(report.changed)} record(s) with a change:")
        lines += [f"  line {n}, {name}: {said}" for n, name, said in report.changed]

    def data() -> JSONData:
        from engram.wire.portability import ImportOut

        made = ImportOut.of(report).model_dump(mode="json")
        if rejects:
            made["rejects"] = rejects
        return made

    return Output(data, lines)


def consolidated(report: ConsolidationReport) -> Output:
    """One line per step: what it changed (or would), by kind, and its ledger entry."""
    lines = []
    for step in report.steps:
        counts = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in step.counts.items())
        entry = f" (entry {step.entry})" if step.entry is not None else ""
        lines.append(f"{step.step}: {counts or 'nothing to do'}{entry}")
    verb = "would change" if report.dry_run else "changed"
    dry = " (a dry run: nothing written)" if report.dry_run else ""
    lines.append(f"{verb} {report.changed} in all{dry}")

    data = wired(lambda w: w.ConsolidationOut.of(report), "engram.wire.consolidation")

    return Output(data, lines)


def health(report: HealthReport, where: str) -> Output:
    """A health report: one line per part, ``where`` naming the store."""
    facts, strength, text = report.facts, report.facts.strength, report.fulltext
    scope = report.scope
    whose = (
        "the store"
        if scope is None
        else "scope " + " ".join(f"{k}={v}" for k, v in scope_data(scope).items() if v is not None)
    )
    lines = [
        f"health of {whose} at {where}",
        f"facts: {facts.live} live, {facts.trashed} in the trash, {facts.verified} verified, "
        f"{facts.without_vector} without a vector",
        *(
            f"  {t.type if t.type is not None else '(untyped)'}: {t.live} live, "
            f"{t.trashed} in the trash"
            for t in facts.by_type
        ),
        "strength: no facts"
        if strength.p50 is None
        else f"strength: min {strength.min:g}, p50 {strength.p50:g}, max {strength.max:g} "
        f"({strength.off_default} not at 1.0)",
        f"full text: {text.rows} rows for {text.facts} facts "
        + ("(in step)" if text.in_step else "(OUT OF STEP)"),
        _vector_index_line(report.vector_index),
        f"working keys: {report.working_keys} live",
        f"ledger: {report.ledger.entries} entries, {report.ledger.scrubbed} scrubbed",
        f"sessions: {report.sessions.sessions}, with {report.sessions.entries} entries",
        *_graph_lines(report.graph),
        f"documents: {report.documents.documents}, with {report.documents.chunks} chunks, "
        f"{report.documents.chunks_without_fact} without their fact",
        f"feedback: {report.feedback.signals} signals, {report.feedback.pending} not applied yet",
        *_stale_lines(report.stale),
    ]
    if report.storage is not None:
        lines.append(_storage_line(report.storage))
    model = report.model
    lines.append(
        f"schema version {report.schema_version}, model "
        + ("none yet" if model is None else f"{model.model} ({model.dimension} dimensions)")
    )

    data = wired(lambda w: w.HealthReportOut.of(report))

    return Output(data, lines)


def _vector_index_line(index: VectorIndexHealth) -> str:
    if not index.scopes:
        return "vector index: none (vector search is exact)"
    line = (
        f"vector index: {index.scopes} scope{'s' if index.scopes != 1 else ''}, "
        f"{index.vectors} vectors in {index.bytes} bytes, {index.beside} searched beside"
    )
    if index.to_overwrite:
        line += f", {index.to_overwrite} erased still to overwrite"
    return line


def _graph_lines(graph: GraphHealth) -> list[str]:
    entities, relations = graph.entities, graph.relations
    lines = [
        f"graph: {entities.total} entities ({entities.asserted} asserted, "
        f"{entities.extracted} extracted, {entities.imported} imported), "
        f"{graph.aliases} aliases, {graph.mentions} mentions, {graph.orphans} orphans",
        f"  relations: {relations.live} live, {relations.ended} ended, {relations.expired} expired",
        f"  queued for the rules: {graph.queued}; unread by llm: {graph.backlog.llm}, "
        f"by spacy: {graph.backlog.spacy}",
    ]
    drift = graph.drift
    if drift is not None:
        parts = ", ".join(
            f"{name} {d.missing} missing, {d.extra} extra"
            for name, d in (
                ("entities", drift.entities),
                ("mentions", drift.mentions),
                ("groundings", drift.groundings),
                ("relations", drift.relations),
            )
        )
        verdict = "in step" if drift.in_step else "DRIFTED"
        lines.append(
            f"  drift from the rules' rebuild of {drift.facts_read} facts ({verdict}): {parts}"
        )
    return lines


def _stale_lines(stale: StaleHealth) -> list[str]:
    def kept(retention: timedelta | None) -> str:
        return "kept for ever" if retention is None else f"kept {_duration(retention)}"

    oldest = "none" if stale.ledger_oldest is None else stale.ledger_oldest.isoformat()
    return [
        f"stale: {stale.working_keys} working keys expired, "
        f"{stale.session_entries_hidden} session entries hidden",
        f"  trash: {stale.trash_past_retention} facts past retention "
        f"({kept(stale.trash_retention)})",
        f"  ledger: {stale.ledger_past_retention} entries past retention "
        f"({kept(stale.ledger_retention)}), oldest {oldest}",
    ]


def _duration(duration: timedelta) -> str:
    seconds = int(duration.total_seconds())
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} seconds"


def _storage_line(storage: StorageHealth) -> str:
    line = f"storage: {storage.backend}, {storage.bytes} bytes"
    if storage.wal_bytes is not None:
        line += f", {storage.wal_bytes} in the write-ahead log"
    if storage.free_bytes is not None:
        line += f", {storage.free_bytes} free"
    if storage.scrub_due:
        line += "; words erased for good may be in its files until `engram scrub`"
    return line


def error_data(code: str, message: str, hint: str | None = None) -> JSONData:
    body: JSONData = {"code": code, "message": message}
    if hint is not None:
        body["hint"] = hint
    return {"error": body}


def status(path: str, embedder: Embedder | None, db_arg: str, program: str = "engram") -> Output:
    """Where the store is, which model embeds into it, and how to start using it."""
    model = None if embedder is None else {"model": embedder.model, "dimension": embedder.dimension}
    db = f"{shlex.quote(program)} --db {shlex.quote(db_arg)}"
    lines = [
        f"engram store: {path}",
        "embedder: "
        + (
            f"{embedder.model} ({embedder.dimension} dimensions)"
            if embedder
            else "none (working memory and listing only; recall needs one)"
        ),
        "try:",
        f"  {db} remember 'prefers dark mode' --resource user-42",
        f"  {db} recall 'display preferences' --resource user-42",
        f"  {db} working set plan '{{\"step\": 1}}' --resource user-42",
        f"  {shlex.quote(program)} --help",
    ]
    return Output({"path": path, "embedder": model}, lines)
