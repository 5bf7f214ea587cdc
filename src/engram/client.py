"""``engram.Client``: the HTTP service from Python, with the library's method names.

Request bodies are built from :mod:`engram.wire`, the models the service validates them
with. Errors come back as the same classes the library raises (by their stable ``code``).
Answers are the service's JSON, as dicts; a blocked revert raises
:class:`~engram.core.errors.RevertBlocked` with ``later`` as the service names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from engram import wire
from engram.core import limits, ops
from engram.core.conversations import Turn
from engram.core.errors import ALL_ERRORS, EngramError, InvalidInput, RevertBlocked
from engram.core.graph import ops as graph_ops
from engram.core.health import DRIFT_PER_SCOPE
from engram.core.models import SourceRef
from engram.core.records import Entry
from engram.wire import documents as documents_wire
from engram.wire import ops as wire_ops

JSON = dict[str, Any]
_BY_CODE: dict[str, type[EngramError]] = {cls.code: cls for cls in ALL_ERRORS}
_BY_CODE["too_large"] = InvalidInput  # 413: the body is over the service's limit


class Client:
    """A client of one engram service. ``token`` is a bearer token: a service token for
    the agent routes, a person's token for the people routes."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:4600",
        *,
        token: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self._headers = headers
        self.working = WorkingClient(self)
        self.sessions = SessionsClient(self)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; the decoded answer, or the engram error it carries."""
        answer = self._answered(method, path, **kwargs)
        return None if answer.status_code == 204 else _json_or_none(answer)

    def _answered(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request's answer, or the engram error it carries."""
        headers = {**self._headers, **kwargs.pop("headers", {})}
        answer = self._http.request(method, path, headers=headers, **kwargs)
        if answer.is_success:
            return answer
        raise _error(answer.status_code, _json_or_none(answer))

    def call_json(self, method: str, path: str, **kwargs: Any) -> JSON:
        result: JSON = self.call(method, path, **kwargs)
        return result

    def send(self, method: str, path: str, body: wire.Body, **kwargs: Any) -> JSON:
        """One request carrying ``body`` as the service reads it (fields left unset are
        not sent)."""
        data = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return self.call_json(method, path, json=data, **kwargs)

    # -- the service ---------------------------------------------------------------
    def healthz(self) -> JSON:
        return self.call_json("GET", "/healthz")

    def health(self, agent_id: str | None = None, *, graph_drift: bool = False) -> JSON:
        """The health report of the agent's memory (ended or not), or, without one, of
        the whole store (with its bytes): the library's ``Memory.health``, camelCase.
        ``graph_drift`` (an agent's only) also compares its graph with a rebuild."""
        if agent_id is None:
            if graph_drift:
                raise InvalidInput(DRIFT_PER_SCOPE)
            return self.call_json("GET", "/health/report")
        return self.run(agent_id, ops.Health(graph_drift))

    # -- agents --------------------------------------------------------------------
    def register(
        self, name: str, *, resource_id: str | None = None, team_id: str | None = None
    ) -> JSON:
        fields = _params(name=name, resourceId=resource_id, teamId=team_id)
        return self.send("POST", "/agents", _body(wire.AgentSpec, **fields))

    def agents(
        self, *, after: str | None = None, limit: int | None = None, name: str | None = None
    ) -> JSON:
        """One page of registered agents in id order (``nextAfter`` when more follow)."""
        return self.call_json("GET", "/agents", params=_params(after=after, limit=limit, name=name))

    def agent(self, agent_id: str) -> JSON:
        return self.call_json("GET", f"/agents/{_quote(agent_id)}")

    def spawn(
        self,
        agent_id: str,
        name: str,
        *,
        resource_id: str | None = None,
        into_existing: bool = False,
    ) -> JSON:
        fields = _params(name=name, resourceId=resource_id, intoExisting=into_existing or None)
        spec = _body(wire.SpawnSpec, **fields)
        return self.send("POST", f"/agents/{_quote(agent_id)}/spawn", spec)

    def end(self, agent_id: str) -> JSON:
        return self.call_json("POST", f"/agents/{_quote(agent_id)}/end")

    # -- declared operations -------------------------------------------------------
    def run(self, agent_id: str, op: ops.Op[Any]) -> JSON:
        """Carries out one declared operation (:mod:`engram.core.ops`) for the agent: the
        request its declaration names, checked here first by the library's own rules."""
        return self.run_at(f"/agents/{_quote(agent_id)}", op)

    def answer(self, agent_id: str, op: ops.Op[Any]) -> BaseModel | None:
        """Carries out one declared operation for the agent, its answer typed: the wire
        model the service publishes for it (``FactOut``, ``RecallOut``, ``EntryOut``…),
        read by field name (``fact.created_at``); None for an answer with no body."""
        model = wire_ops.answer(type(op)).model
        found = self.run(agent_id, op)
        return None if model is None else model.model_validate(found)

    def run_at(self, prefix: str, op: ops.Op[Any], *, people: bool = False) -> JSON:
        """Carries out one declared operation on the scope at ``prefix``: an agent's
        (``/agents/{id}``) or a person's in an application (``/api/v1/apps/{app}``,
        ``people``: bodies in snake_case)."""
        kind = type(op)
        path, sent = wire_ops.encoded(op, people=people)
        url = prefix + path
        if wire_ops.sent_in_body(kind):
            return self.call_json(kind.surface.method, url, json=sent if sent else None)
        params = {k: _query_value(v) for k, v in sent.items()}
        return self.call_json(kind.surface.method, url, params=params)

    # -- an agent's facts ----------------------------------------------------------
    def remember(
        self,
        agent_id: str,
        content: str,
        *,
        source_ref: tuple[str, int] | None = None,
        type: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        created_at: datetime | None = None,
        context: str | None = None,
        strength: float | None = None,
        expires_at: datetime | None = None,
    ) -> JSON:
        source = None if source_ref is None else SourceRef(*source_ref)
        note = ops.Remember(
            content,
            source,
            type,
            tags or (),
            metadata,
            created_at,
            context,
            1.0 if strength is None else strength,
            expires_at,
        )
        return self.run(agent_id, note)

    def remember_conversation(
        self,
        agent_id: str,
        turns: Sequence[Turn | dict[str, Any]],
        *,
        session_id: str | None = None,
        expected_next: int | None = None,
        context_turns: int | None = None,
    ) -> JSON:
        """Remembers a conversation's turns (``engram.Turn`` or ``{speaker, text, at?}``);
        the answer names the session, the entries and one fact per turn."""
        shaped = [
            _body(wire.TurnBody, speaker=t.speaker, text=t.text, at=t.at, metadata=t.metadata)
            if isinstance(t, Turn)
            else _body(wire.TurnBody, **t)
            for t in turns
        ]
        fields = _params(
            sessionId=session_id, expectedNext=expected_next, contextTurns=context_turns
        )
        body = _body(wire.NewConversation, turns=shaped, **fields)
        return self.send("POST", f"/agents/{_quote(agent_id)}/conversations", body)

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        top_k: int | None = None,
        type: str | None = None,
        tags: Sequence[str] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        verified_only: bool = False,
        mode: Literal["hybrid", "text", "vector"] = "hybrid",
        min_strength: float | None = None,
        min_score: float | None = None,
    ) -> list[JSON]:
        asked = ops.Recall(
            query,
            top_k,
            type,
            tags,
            verified_only,
            mode,
            created_after,
            created_before,
            min_strength,
            min_score,
        )
        return list(self.run(agent_id, asked)["facts"])

    def facts(self, agent_id: str, *, limit: int | None = None, before: str | None = None) -> JSON:
        return self.run(agent_id, ops.Facts(limit, before))

    def fact(self, agent_id: str, fact_id: str) -> JSON:
        return self.run(agent_id, ops.GetFact(fact_id))

    def provenance(self, agent_id: str, fact_id: str) -> list[JSON]:
        """The chunks of the agent's documents holding the fact's words."""
        return list(self.run(agent_id, ops.FactProvenance(fact_id))["provenance"])

    def correct(self, agent_id: str, fact_id: str, content: str, *, by: str | None = None) -> JSON:
        return self.run(agent_id, ops.Correct(fact_id, content, by))

    def merge(
        self,
        agent_id: str,
        fact_ids: Sequence[str],
        content: str | None = None,
        *,
        hard: bool = False,
    ) -> JSON:
        """Folds 2 to 10 of the agent's facts into one (the merged fact); without
        ``content`` the service's chat model writes the words."""
        return self.run(agent_id, ops.Merge(fact_ids, content, hard))

    def forget(self, agent_id: str, fact_id: str, *, hard: bool = False) -> bool:
        """Forgets one fact; idempotent. Returns whether it existed. Softly (to the trash,
        see :meth:`trash` and :meth:`restore`) unless ``hard``: then for good."""
        return bool(self.run(agent_id, ops.Forget(fact_id, hard))["forgotten"])

    def forget_all(self, agent_id: str, *, expected_count: int, hard: bool = False) -> int:
        """Forgets every fact, confirming how many the caller saw (Conflict when more);
        softly unless ``hard``."""
        return int(self.run(agent_id, ops.ForgetAll(expected_count, hard))["forgotten"])

    # -- an agent's history ----------------------------------------------------------
    def trash(self, agent_id: str, *, limit: int | None = None, before: str | None = None) -> JSON:
        """One page of softly forgotten facts, most recently forgotten first, each with
        ``deletedAt`` and ``purgeAt`` (``nextBefore`` when more follow)."""
        return self.run(agent_id, ops.Trash(limit, before))

    def restore(self, agent_id: str, fact_id: str) -> JSON:
        """Brings a softly forgotten fact back (same id and times): the fact. Conflict
        when the agent holds its words again; NotFound when it is not in the trash."""
        return self.run(agent_id, ops.Restore(fact_id))

    def delete_traces(self, agent_id: str, ids: Sequence[str]) -> JSON:
        """Deletes these facts for good, live or trashed (unknown ids are skipped; at
        most 1,000): how many ``facts``, ``trashed`` and ``ledgerItemsScrubbed``."""
        return self.run(agent_id, ops.DeleteTraces(tuple(ids)))

    def delete_scope(
        self, agent_id: str, *, expected_count: int, turn_user_id: str | None = None
    ) -> JSON:
        """Deletes every fact of the agent for good (live and trashed; only
        ``turn_user_id``'s when given), confirming ``expected_count`` (Conflict when
        more would go, and nothing is deleted)."""
        return self.run(
            agent_id,
            ops.DeleteScope(True, expected_count=expected_count, turn_user_id=turn_user_id),
        )

    def ledger(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        before: int | None = None,
        object_id: str | None = None,
    ) -> JSON:
        """One page of the agent's write ledger, newest first (``nextBefore`` when more
        follow); ``object_id`` keeps the entries that changed that fact or key."""
        return self.run(agent_id, ops.Ledger(limit, before, object_id))

    def history(self, agent_id: str, fact_id: str) -> list[JSON]:
        """The ledger entries that changed one fact, newest first; NotFound when the
        agent never held it."""
        return list(self.run(agent_id, ops.History(fact_id))["entries"])

    def ledger_changes(
        self, agent_id: str, entry_id: int, *, limit: int | None = None, after: int | None = None
    ) -> JSON:
        """What one ledger entry changed, a page at a time (``nextAfter`` when more
        follow): all of them, where a listing shows an entry's first 100."""
        return self.run(agent_id, ops.LedgerChanges(entry_id, limit, after))

    def revert(self, agent_id: str, entry_id: int) -> JSON:
        """Undoes one ledger entry as a new one, which it answers. RevertBlocked (its
        ``later`` names the later entries) when later writes changed the same objects;
        Conflict for an entry whose before-states were erased or that cannot be undone."""
        return self.run(agent_id, ops.Revert(entry_id))

    def compact(
        self,
        agent_id: str,
        *,
        max_facts: int | None = None,
        max_age: timedelta | None = None,
    ) -> JSON:
        age = None if max_age is None else max_age // timedelta(milliseconds=1)
        return self.run(agent_id, ops.Compact(max_facts, age))

    # -- an agent's episodes ---------------------------------------------------------
    def episodic_recall(
        self,
        agent_id: str,
        *,
        branch: Literal["own", "lineage"] = "own",
        limit: int | None = None,
        after: datetime | None = None,
        query: str | None = None,
    ) -> JSON:
        """The agent's session entries in time order (``nextAfter`` when more follow)."""
        return self.run(agent_id, ops.EpisodicRecall(branch, limit, after, query))

    def episodic_tree(self, agent_id: str) -> list[JSON]:
        """The fork trees holding the agent's sessions (each root with its children)."""
        return list(self.run(agent_id, ops.EpisodicTree())["roots"])

    # -- an agent's knowledge graph -------------------------------------------------
    def tools(self, agent_id: str) -> list[JSON]:
        """The agent's memory tools as a host registers them: name, description and the
        JSON Schema of their arguments."""
        path = f"/agents/{_quote(agent_id)}/tools"
        return list(self.call_json("GET", path)["tools"])

    def call_tool(self, agent_id: str, name: str, arguments: dict[str, Any]) -> JSON:
        """Calls one memory tool on the agent's memory: ``{text, isError}``, the text the
        tool answers the model (a refusal too, with nothing written)."""
        path = f"/agents/{_quote(agent_id)}/tools/{_quote(name)}"
        return self.call_json("POST", path, json=arguments)

    def graph(self, agent_id: str) -> GraphClient:
        """The agent's knowledge graph, as ``Memory.graph`` with the agent for a scope."""
        return GraphClient(self, f"/agents/{_quote(agent_id)}", people=False)

    # -- an agent's retrieval feedback ----------------------------------------------
    def usage(self, agent_id: str) -> UsageClient:
        """The agent's retrieval feedback, as ``Memory.usage`` with the agent for a scope."""
        return UsageClient(self, agent_id)

    # -- consolidation ---------------------------------------------------------------
    def consolidate(
        self, agent_id: str, *, steps: Sequence[str] | None = None, dry_run: bool = False
    ) -> JSON:
        """Runs the consolidation cycle (or ``steps``) over the agent's memory:
        ``{dryRun, changed, steps: [{step, changed, counts, factIds, merged, entry}]}``.
        CapabilityMissing when the service does not self-improve."""
        return self.run(agent_id, ops.Consolidate(steps, dry_run))

    # -- an agent's documents, wiki, export and imports -----------------------------
    def ingest_text(
        self,
        agent_id: str,
        text: str,
        *,
        name: str,
        media_type: Literal["text/markdown", "text/plain", "text/html"] | None = None,
        **cutting: Any,
    ) -> JSON:
        """Ingests ``text`` as the agent's document ``name``, each chunk a fact;
        ``cutting``: ``strategy``, ``chunk_tokens``, ``tags``, ``type``."""
        fields = _params(text=text, name=name, mediaType=media_type, **_cutting(cutting))
        return self.send("POST", _documents(agent_id), _body(documents_wire.DocumentText, **fields))

    def ingest_url(self, agent_id: str, url: str, **cutting: Any) -> JSON:
        """Fetches ``url`` (public addresses only, unless the service allows private
        ones) and ingests it as the agent's document named by the URL."""
        fields = _params(url=url, **_cutting(cutting))
        return self.send("POST", _documents(agent_id), _body(documents_wire.DocumentUrl, **fields))

    def ingest_file(
        self,
        agent_id: str,
        data: bytes,
        *,
        name: str,
        media_type: str | None = None,
        **cutting: Any,
    ) -> JSON:
        """Uploads a file's bytes (Markdown, text, HTML or PDF) as the agent's document
        ``name``."""
        checked = _body(documents_wire.DocumentUpload, **_params(name=name, **_cutting(cutting)))
        form = checked.model_dump(mode="json", by_alias=True, exclude_unset=True)
        fields: dict[str, Any] = {k: v if k == "tags" else str(v) for k, v in form.items()}
        upload = (name, data, media_type or "application/octet-stream")
        return self.call_json("POST", _documents(agent_id), data=fields, files={"file": upload})

    def documents(
        self, agent_id: str, *, limit: int | None = None, after: str | None = None
    ) -> list[JSON]:
        """The agent's documents by source, without their chunks."""
        return list(self.run(agent_id, ops.Documents(limit, after))["documents"])

    def document(self, agent_id: str, document_id: str) -> JSON:
        """One document with its chunks in order."""
        return self.run(agent_id, ops.GetDocument(document_id))

    def forget_document(self, agent_id: str, document_id: str, *, hard: bool = False) -> None:
        """Forgets a document and its chunks' facts that no other document names;
        NotFound when the agent has no such document."""
        self.run(agent_id, ops.ForgetDocument(document_id, hard))

    def compile_wiki(self, agent_id: str, *, batch: int = 500) -> JSON:
        """Folds the facts written since the last compile into the wiki's pages."""
        return self.run(agent_id, ops.CompileWiki(batch))

    def export_string(
        self, agent_id: str, *, format: Literal["json", "jsonl", "mcp-memory", "mem0"] = "jsonl"
    ) -> str:
        """The agent's export as text: facts with their vectors, then working keys."""
        path = f"/agents/{_quote(agent_id)}/export"
        return self._answered("GET", path, params={"format": format}).text

    def import_string(
        self,
        agent_id: str,
        text: str,
        *,
        format: Literal["json", "jsonl", "csv"] | None = None,
        source: Literal["engram", "mem0", "mcp-memory"] = "engram",
        dry_run: bool = False,
        on_error: Literal["refuse", "skip"] = "refuse",
    ) -> JSON:
        """Imports records into the agent's memory, all or nothing (BadRecords lists
        every bad record), or with ``on_error="skip"`` the good ones (the answer's
        ``skipped`` lists the others)."""
        params = _params(
            format=format,
            source=source,
            dryRun="true" if dry_run else None,
            onError=None if on_error == "refuse" else on_error,
        )
        path = f"/agents/{_quote(agent_id)}/imports"
        return self.call_json("POST", path, content=text.encode("utf-8"), params=params)

    # -- people ----------------------------------------------------------------------
    def app(self, app: str) -> AppClient:
        """What ``app`` remembers of the person this client's token names."""
        return AppClient(self, app)

    def apps(self) -> list[JSON]:
        """The applications that remember the person this client's token names:
        ``{app, count}`` each."""
        return list(self.call_json("GET", "/api/v1/apps")["apps"])

    def shares(self, *, source: str | None = None, reader: str | None = None) -> list[JSON]:
        """The person's allowances: by ``source``, by ``reader``, or (neither) all."""
        params = _params(source=source, reader=reader)
        return list(self.call_json("GET", "/api/v1/memory-shares", params=params)["shares"])

    def allow(self, source: str, reader: str) -> JSON:
        spec = _body(wire.ShareSpec, source=source, reader=reader)
        return self.send("PUT", "/api/v1/memory-shares", spec)

    def stop(self, source: str, reader: str) -> None:
        self.call("DELETE", "/api/v1/memory-shares", params={"source": source, "reader": reader})

    def memories(self, app: str, *, limit: int | None = None, before: str | None = None) -> JSON:
        """The person's memories of ``app`` (the route that works without a runtime);
        ``nextBefore`` when more follow."""
        params = _params(agent_id=app, limit=limit, before=before)
        return self.call_json("GET", "/api/v1/memories", params=params)

    def forget_memories(self, app: str, *, count: int) -> int:
        """Forgets everything ``app`` remembers of the person, confirming ``count``."""
        params = {"agent_id": app, "count": count}
        return int(self.call_json("DELETE", "/api/v1/memories", params=params)["forgotten"])

    def correct_memory(self, memory_id: str, text: str) -> JSON:
        """Corrects one of the person's memories by id, whatever application holds it."""
        path = f"/api/v1/memories/{_quote(memory_id)}"
        return self.send("PATCH", path, _body(wire.MemoryWords, memory=text))

    def forget_memory(self, memory_id: str) -> None:
        self.call("DELETE", f"/api/v1/memories/{_quote(memory_id)}")


class WorkingClient:
    """An agent's working memory, as ``Memory.working`` with an agent id for a scope."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def get(self, agent_id: str, key: str) -> Any:
        return self.entry(agent_id, key)["value"]

    def entry(self, agent_id: str, key: str) -> JSON:
        """The value with its ``version`` (for a later compare-and-set)."""
        return self._client.run(agent_id, ops.WorkingGet(key))

    def set(
        self,
        agent_id: str,
        key: str,
        value: Any,
        *,
        expected_version: int | None = None,
        ttl: timedelta | None = None,
    ) -> JSON:
        """Sets ``key``; ``expected_version`` makes it a compare-and-set (0: must be unset;
        Conflict when stale), ``ttl`` (whole seconds, at least one: the service's unit)
        makes it expire. InvalidInput, before anything is sent, for another ``ttl``."""
        seconds = None
        if ttl is not None:
            seconds, part = divmod(limits.check_ttl(ttl), timedelta(seconds=1))
            if part:  # never rounded: 0.4 s is not 1 s, nor 0
                raise InvalidInput(
                    f"ttl must be a whole number of seconds over HTTP, got "
                    f"{limits.seconds(ttl)} seconds"
                )
        return self._client.run(agent_id, ops.WorkingSet(key, value, expected_version, seconds))

    def delete(self, agent_id: str, key: str) -> None:
        self._client.run(agent_id, ops.WorkingDelete(key))

    def list(self, agent_id: str, *, after: str | None = None, limit: int | None = None) -> JSON:
        return self._client.run(agent_id, ops.WorkingList(after, limit))


class SessionsClient:
    """Sessions, as ``Memory.sessions`` with an agent id for a scope."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def start(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        name: str | None = None,
        fork_of: SourceRef | None = None,
    ) -> JSON:
        return self._client.run(agent_id, ops.StartSession(session_id, name, fork_of))

    def append(
        self, session_id: str, entries: Sequence[Entry], *, expected_next: int | None = None
    ) -> range:
        """Appends the entries; the indexes written (a retry with ``expected_next``
        answers the same range; Conflict when it is stale)."""
        bodies = [
            _body(
                wire.EntryBody,
                **_params(kind=e.kind, content=e.content, role=e.role, at=e.at, data=e.data),
            )
            for e in entries
        ]
        fields: dict[str, Any] = {"entries": bodies}
        if expected_next is not None:
            fields["expectedNext"] = expected_next
        path = f"/sessions/{_quote(session_id)}/entries"
        answer = self._client.send("POST", path, _body(wire.NewEntries, **fields))
        return range(int(answer["start"]), int(answer["stop"]))


class AppClient:
    """The person's memory in one application, as ``engram.core.people.AppMemory``."""

    def __init__(self, client: Client, app: str) -> None:
        self._client = client
        self.app = app
        self.graph = GraphClient(client, f"/api/v1/apps/{_quote(app)}", people=True)
        self._tools = f"/api/v1/apps/{_quote(app)}/tools"

    def tools(self) -> list[JSON]:
        """The memory tools of the application's agent over the person."""
        return list(self._client.call_json("GET", f"{self._tools}")["tools"])

    def call_tool(self, name: str, arguments: dict[str, Any]) -> JSON:
        """Calls one tool on what the application remembers of the person: ``{text,
        is_error}``."""
        return self._client.call_json("POST", f"{self._tools}/{_quote(name)}", json=arguments)

    def remember(self, text: str) -> JSON:
        path = f"/api/v1/apps/{_quote(self.app)}/memories"
        return self._client.send("POST", path, _body(wire.MemoryWords, memory=text))

    def recall(self, query: str, *, top_k: int | None = None) -> list[JSON]:
        path = f"/api/v1/apps/{_quote(self.app)}/memories/search"
        params = _params(query=query, topK=top_k)
        return list(self._client.call_json("GET", path, params=params)["memories"])

    def listing(self, *, limit: int | None = None, before: str | None = None) -> JSON:
        path = f"/api/v1/apps/memories/{_quote(self.app)}"
        return self._client.call_json("GET", path, params=_params(limit=limit, before=before))

    def correct(self, memory_id: str, text: str) -> JSON:
        path = f"/api/v1/apps/memories/{_quote(self.app)}/{_quote(memory_id)}"
        return self._client.send("PATCH", path, _body(wire.MemoryWords, memory=text))

    def forget(self, memory_id: str) -> None:
        self._client.call("DELETE", f"/api/v1/apps/memories/{_quote(self.app)}/{_quote(memory_id)}")

    def export(self) -> JSON:
        """Everything the application remembers of the person, as one export document."""
        return self._client.call_json("GET", f"/api/v1/apps/memories/{_quote(self.app)}/export")

    def forget_all(self, *, count: int) -> int:
        path = f"/api/v1/apps/memories/{_quote(self.app)}"
        return int(self._client.call_json("DELETE", path, params={"count": count})["forgotten"])


class UsageClient:
    """One agent's retrieval feedback, as ``Memory.usage`` with the scope bound: which
    injected facts a response used. Each call is a declared operation, checked here
    before it is sent; answers are the service's JSON."""

    def __init__(self, client: Client, agent_id: str) -> None:
        self._client = client
        self._agent_id = agent_id

    def detect(
        self,
        injected_ids: Sequence[str],
        response: str,
        *,
        query: str | None = None,
        record: bool = True,
    ) -> list[JSON]:
        """One signal per fact, in the given order, stored unless ``record`` is false:
        ``{factId, signal, reason, score}``. NotFound when an id is no fact of the agent
        (nothing is stored)."""
        asked = ops.DetectFeedback(injected_ids, response, query, dry_run=not record)
        return list(self._client.run(self._agent_id, asked)["signals"])

    def record(
        self,
        fact_id: str,
        signal: Literal["used", "ignored"],
        *,
        reason: str | None = None,
        query: str | None = None,
    ) -> JSON:
        """Stores that a response used or ignored the fact: the stored row."""
        return self._client.run(self._agent_id, ops.RecordFeedback(fact_id, signal, reason, query))

    def signals(self, fact_id: str) -> list[JSON]:
        """The fact's stored signals, oldest first; NotFound when the agent holds no
        such fact."""
        return list(self._client.run(self._agent_id, ops.FactFeedback(fact_id))["feedback"])


class GraphClient:
    """One scope's knowledge graph (an agent's, or the person's in an application), as
    ``Memory.graph`` with the scope bound: the library's names, each a declared
    operation (:mod:`engram.core.graph.ops`) checked here before it is sent. An
    ``entity`` is an id, a name or an alias; answers are the service's JSON."""

    def __init__(self, client: Client, prefix: str, *, people: bool) -> None:
        self._client = client
        self._prefix = prefix
        self._people = people  # the people routes' bodies and answers are snake_case

    def run(self, op: ops.Op[Any]) -> JSON:
        return self._client.run_at(self._prefix, op, people=self._people)

    def upsert_entity(
        self,
        name: str,
        *,
        type: str | None = None,
        aliases: Sequence[str] = (),
        summary: str | None = None,
        attributes: dict[str, Any] | None = None,
    ) -> JSON:
        return self.run(graph_ops.UpsertEntity(name, type, aliases, summary, attributes))

    def entity(self, entity: str) -> JSON:
        return self.run(graph_ops.GetEntity(entity))

    def delete_entity(self, entity: str) -> JSON:
        """Deletes it with its relations (never a fact); the entity as it was."""
        return self.run(graph_ops.DeleteEntity(entity))

    def search(
        self,
        query: str,
        *,
        top_k: int = graph_ops.DEFAULT_SEARCH,
        types: Sequence[str] = (),
        mode: Literal["hybrid", "text"] = "hybrid",
    ) -> list[JSON]:
        """Entities for ``query``, best first, each with ``score`` and its ranks."""
        return list(self.run(graph_ops.SearchEntities(query, types, top_k, mode))["entities"])

    def declare_relation_type(self, type: str, *, single_valued: bool) -> bool:
        """Whether that changed anything."""
        return bool(self.run(graph_ops.DeclareRelationType(type, single_valued))["changed"])

    def upsert_relation(
        self,
        source: str,
        target: str,
        type: str,
        *,
        facts: Sequence[str] = (),
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        attributes: dict[str, Any] | None = None,
    ) -> JSON:
        made = graph_ops.Relate(source, type, target, facts, valid_at, invalid_at, attributes)
        return self.run(made)

    def relations(
        self,
        *,
        entity: str | None = None,
        type: str | None = None,
        as_of: datetime | None = None,
        include_expired: bool = False,
        limit: int = limits.DEFAULT_PAGE,
    ) -> list[JSON]:
        asked = graph_ops.Relations(entity, type, as_of, include_expired, limit)
        return list(self.run(asked)["relations"])

    def expire_relation(self, relation_id: str, *, at: datetime | None = None) -> JSON:
        """Retires it (``at``: when it stopped holding); it stays readable as of before."""
        return self.run(graph_ops.EndRelation(relation_id, at))

    def delete_relation(self, relation_id: str) -> JSON:
        """Deletes it, as if it never was."""
        return self.run(graph_ops.EndRelation(relation_id, hard=True))

    def neighbourhood(
        self,
        entity: str,
        *,
        depth: int = 1,
        limit: int | None = None,
        as_of: datetime | None = None,
    ) -> JSON:
        """``{center, entities, relations, facts (memories on a person's), truncated}``."""
        return self.run(graph_ops.Neighbourhood(entity, depth, limit, as_of))

    def traverse(
        self,
        start: str,
        *,
        depth: int = 2,
        types: Sequence[str] = (),
        direction: Literal["out", "in", "both"] = "both",
        limit: int | None = None,
    ) -> list[JSON]:
        """The paths from ``start``, shortest first: ``{entities (ids), relations}``."""
        walked = graph_ops.Traverse(start, depth, types, direction, limit)
        return list(self.run(walked)["paths"])

    def extract(
        self,
        *,
        extractor: Literal["rules", "llm", "spacy"] = "rules",
        fact_ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> JSON:
        """Reads the scope's facts for the graph (``fact_ids`` only, when given) with
        ``extractor``; what it did (``factsRead``, ``entitiesAdded``, ... on an agent's)."""
        return self.run(graph_ops.Extract(extractor, fact_ids, limit))


B = TypeVar("B", bound=wire.Body)


def _body(shape: type[B], **fields: Any) -> B:
    """The request body, checked here as the service would check it: a field it would
    refuse is InvalidInput naming the field, and nothing is sent."""
    try:
        return shape(**fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'body'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        raise InvalidInput(f"invalid request: {problems}") from None


def _error(status: int, body: object) -> EngramError:
    """The engram error an answer carries, by its ``code`` (with what it names)."""
    error = body.get("error", {}) if isinstance(body, dict) else {}
    error = error if isinstance(error, dict) else {}
    message = error.get("message") or f"HTTP {status}"
    cls = _BY_CODE.get(error.get("code", ""), EngramError)
    if cls is RevertBlocked:
        later = error.get("later")
        numbers = tuple(n for n in later if isinstance(n, int)) if isinstance(later, list) else ()
        return RevertBlocked(message, later=numbers, hint=error.get("hint"))
    return cls(message, hint=error.get("hint"))


def _params(**given: Any) -> JSON:
    """Query parameters, leaving out those not given (the service refuses none of these)."""
    return {name: value for name, value in given.items() if value is not None}


def _facts(agent_id: str) -> str:
    return f"/agents/{_quote(agent_id)}/facts"


def _quote(part: str) -> str:
    """One path segment, percent-encoded; dots too, so a key ``..`` is not a dot-segment."""
    return wire_ops.segment(part)


def _query_value(value: Any) -> Any:
    """A query parameter as the service reads it: ``true``/``false`` for a flag."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _documents(agent_id: str) -> str:
    return f"/agents/{_quote(agent_id)}/documents"


def _cutting(given: dict[str, Any]) -> dict[str, Any]:
    """How a document is cut, as the wire names it (``chunk_tokens`` → ``chunkTokens``)."""
    known = {"strategy", "chunk_tokens", "tags", "type"}
    unknown = sorted(set(given) - known)
    if unknown:
        raise InvalidInput(f"no option {unknown[0]!r}: the options are {', '.join(sorted(known))}")
    return {to_camel(k): list(v) if k == "tags" else v for k, v in given.items() if v is not None}


def _json_or_none(answer: httpx.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return None
