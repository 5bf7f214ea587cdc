"""Agents: a persisted spec (name, resource, team) whose memory lives in its scope.

Memory routes take an agent id and resolve the scope from the persisted spec, so they
work for ended agents and after a restart. Spawning registers a child and forks the
parent's memory into the child's scope, in one transaction.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

from engram.core import ledger, limits, recording, rules, sessions
from engram.core.clock import Clock, from_us, now_us
from engram.core.errors import NotFound
from engram.core.models import LIBRARY, ForkResult, Writer
from engram.core.records import Agent as Agent  # re-exported
from engram.core.records import AgentPage as AgentPage
from engram.core.scopes import ResourceRef
from engram.core.text import check_text

if TYPE_CHECKING:
    from engram.core.ports import Store, Tx

MAX_NAME_CHARS = 256


class Agents:
    """Registration, lookup, spawning and ending of agents."""

    def __init__(self, store: Store, *, clock: Clock = now_us, writer: Writer = LIBRARY) -> None:
        self._store = store
        self._now = clock
        self._writer = writer

    def register(
        self, name: str, *, resource_id: str | None = None, team_id: str | None = None
    ) -> Agent:
        """A new agent; its resource id defaults to its name."""
        checked = check_text(name, "name", max_chars=MAX_NAME_CHARS)
        ref = ResourceRef(resource_id if resource_id is not None else checked, team_id)
        agent = self._new(checked, ref, parent_id=None)
        store = self._store

        def write(rec: ledger.Entry) -> None:
            store.agents.insert(rec.tx, agent)
            rec.record("agent", agent.id, "register")

        store.run(lambda tx: self._entry(tx, ref, "agent.register", write))
        return agent

    def get(self, agent_id: str) -> Agent:
        """The agent, ended or not. Raises NotFound (also for ids no agent can have)."""
        store = self._store
        found = None
        if _possible(agent_id):
            found = store.run(lambda tx: store.agents.get(tx, agent_id), write=False)
        if found is None:
            raise NotFound(f"no agent {agent_id!r}")
        return found

    def spawn(
        self,
        parent_id: str,
        name: str,
        *,
        resource_id: str | None = None,
        copy_memory: bool = True,
        into_existing: bool = False,
    ) -> tuple[Agent, ForkResult]:
        """A child of ``parent_id`` (same team) starting with a copy of its memory.

        A child given the parent's own resource id shares the parent's memory instead,
        and ``copy_memory=False`` (memory disabled) registers it alone: nothing is copied.
        A child whose resource already holds memory (another agent's, say) is refused
        with Conflict, registering nothing, unless ``into_existing``: then the parent's
        working keys overwrite the child's of the same name and its facts join theirs.

        With memory, the child's session starts forked from the last entry of the
        parent's newest session (``ForkResult.session_id``); when the parent has no
        session, or its newest has no entry yet, none is started (a fork point must be
        an entry) and the child starts its own when it first works.
        """
        parent = self.get(parent_id)
        checked = check_text(name, "name", max_chars=MAX_NAME_CHARS)
        ref = parent.ref.child(resource_id if resource_id is not None else checked)
        child = self._new(checked, ref, parent_id=parent.id)
        fork_from = parent.ref if copy_memory and ref != parent.ref else None
        now, store = self._now(), self._store

        def write(rec: ledger.Entry) -> ForkResult:
            store.agents.insert(rec.tx, child)
            rec.record("agent", child.id, "register")
            keys, facts = 0, 0
            if fork_from is not None:
                keys, facts = rules.fork(rec, fork_from, into_existing=into_existing)
            session = (
                sessions.fork_latest(store, rec.tx, parent.ref, ref, now) if copy_memory else None
            )
            return ForkResult(ref, keys, facts, None if session is None else session.id)

        return child, store.run(
            lambda tx: recording.write(store, tx, ref, "agent.spawn", self._writer, now, write),
            lock=[] if fork_from is None else [fork_from, ref],
        )

    def list(
        self, *, after: str | None = None, limit: int | None = None, name: str | None = None
    ) -> AgentPage:
        """One page of every registered agent, ended or not, in ascending id order
        (default 100, max 1000); ``name`` keeps only the agents of that name."""
        size = limits.check_limit(limit)
        if after is not None:
            check_text(after, "after", max_chars=64)
        if name is not None:
            check_text(name, "name", max_chars=MAX_NAME_CHARS)
        store = self._store
        rows = store.run(lambda tx: store.agents.page(tx, after, size + 1, name), write=False)
        more = len(rows) > size
        rows = rows[:size]
        return AgentPage(rows, rows[-1].id if more else None)

    def end(self, agent_id: str) -> Agent:
        now, store = self._now(), self._store

        def write(tx: Tx) -> Agent | None:
            agent = store.agents.get(tx, agent_id)
            if agent is None or agent.ended_at is not None:
                return agent

            def end(rec: ledger.Entry) -> None:
                store.agents.end(tx, agent_id, now)
                rec.record("agent", agent_id, "end")

            recording.write(store, tx, agent.ref, "agent.end", self._writer, now, end)
            return store.agents.get(tx, agent_id)

        ended = store.run(write) if _possible(agent_id) else None
        if ended is None:
            raise NotFound(f"no agent {agent_id!r}")
        return ended

    def _entry(
        self, tx: Tx, ref: ResourceRef, op: str, work: Callable[[ledger.Entry], None]
    ) -> None:
        recording.write(self._store, tx, ref, op, self._writer, self._now(), work)

    def _new(self, name: str, ref: ResourceRef, *, parent_id: str | None) -> Agent:
        return Agent("a_" + secrets.token_hex(8), name, ref, parent_id, from_us(self._now()))


def _possible(agent_id: object) -> bool:
    """Whether some agent could have this id (ids are short, plain text)."""
    return (
        isinstance(agent_id, str)
        and 0 < len(agent_id) <= 64
        and agent_id.isascii()
        and agent_id.isprintable()
    )
