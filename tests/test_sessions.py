"""Episodic sessions on both backends: append-only entries, retries, forks, lineage and
the fork tree (against a brute-force model on generated fork forests), spawn, scopes,
and every bad input refused with nothing written."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engram
from engram import Conflict, InvalidInput, NotFound, PersonAppRef, ResourceRef, SourceRef
from engram.core.episodes import SessionNode
from engram.core.sessions import MAX_FORK_DEPTH, Entry, Session
from stores import ManualClock, Target

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def memory(target: Target, clock: ManualClock) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=None, clock=clock) as opened:
        yield opened


def said(*texts: str, at: datetime | None = None) -> list[Entry]:
    return [Entry("message", text, role="user", at=at) for text in texts]


def contents(entries: list[Entry]) -> list[str]:
    return [entry.content for entry in entries]


# -- appending ---------------------------------------------------------------------------
def test_entries_are_numbered_from_zero_and_read_back(memory: engram.Memory) -> None:
    ref = ResourceRef("planner")
    session = memory.sessions.start(ref, name="morning")
    assert (session.next_index, session.fork_of, session.depth) == (0, None, 0)
    assert memory.sessions.append(session, said("hello", "plan the day")) == range(0, 2)
    data = {"tool": "search", "args": ["q", 1], "ok": True}
    tool = Entry("tool_call", "", role="assistant", at=T0, data=data)
    assert memory.sessions.append(ref, [tool], session_id=session.id) == range(2, 3)
    assert memory.sessions.append(ref, said("latest")) == range(3, 4)  # the newest session
    assert memory.sessions.get(ref, session.id).next_index == 4
    page = memory.episodic_recall(ref)
    assert contents(page.entries) == ["", "hello", "plan the day", "latest"]  # by time
    stored = page.entries[0]
    assert (stored.kind, stored.role, stored.at, stored.data) == (
        "tool_call",
        "assistant",
        T0,
        data,
    )
    assert stored.source_ref == SourceRef(session.id, 2)
    assert memory.sessions.append(session, []) == range(4, 4)


def test_a_retry_is_idempotent_and_a_stale_index_conflicts(memory: engram.Memory) -> None:
    ref = ResourceRef("planner")
    session = memory.sessions.start(ref)
    batch = said("one", "two")
    assert memory.sessions.append(session, batch, expected_next=0) == range(0, 2)
    assert memory.sessions.append(session, batch, expected_next=0) == range(0, 2)  # retried
    assert memory.sessions.append(session, batch[1:], expected_next=1) == range(1, 2)
    assert memory.sessions.get(ref, session.id).next_index == 2
    with pytest.raises(Conflict, match="has 2 entries, not 0"):
        memory.sessions.append(session, said("other"), expected_next=0)
    with pytest.raises(Conflict):
        memory.sessions.append(session, said("two", "three"), expected_next=1)  # runs past
    with pytest.raises(Conflict):
        memory.sessions.append(session, said("ahead"), expected_next=5)
    assert memory.sessions.append(session, said("three"), expected_next=2) == range(2, 3)
    assert contents(memory.episodic_recall(ref).entries) == ["one", "two", "three"]


def test_starting_again_with_the_same_id_is_a_retry(memory: engram.Memory) -> None:
    ref = ResourceRef("planner")
    first = memory.sessions.start(ref, session_id="run-1", name="n")
    assert memory.sessions.start(ref, session_id="run-1", name="n") == first
    with pytest.raises(Conflict, match="taken"):
        memory.sessions.start(ref, session_id="run-1", name="other")
    with pytest.raises(Conflict):
        memory.sessions.start(ResourceRef("someone-else"), session_id="run-1", name="n")


# -- forks -------------------------------------------------------------------------------
def test_a_fork_point_must_be_an_entry_of_a_session_it_may_fork(memory: engram.Memory) -> None:
    ref, sibling = ResourceRef("planner", "acme"), ResourceRef("worker", "acme")
    parent = memory.sessions.start(ref)
    memory.sessions.append(parent, said("a", "b"))
    with pytest.raises(NotFound, match="no entry 2"):
        memory.sessions.start(sibling, fork_of=SourceRef(parent.id, 2))
    with pytest.raises(NotFound):
        memory.sessions.start(sibling, fork_of=SourceRef("s_missing", 0))
    for stranger in (ResourceRef("worker"), ResourceRef("worker", "other-team")):
        with pytest.raises(NotFound, match="to fork from"):
            memory.sessions.start(stranger, fork_of=SourceRef(parent.id, 0))
    person = PersonAppRef("ada", "app:notes")
    with pytest.raises(NotFound):
        memory.sessions.start(person, fork_of=SourceRef(parent.id, 0))
    mine = memory.sessions.start(person)
    memory.sessions.append(mine, said("x"))
    with pytest.raises(NotFound):
        memory.sessions.start(PersonAppRef("bob", "app:notes"), fork_of=SourceRef(mine.id, 0))
    assert memory.sessions.start(person, fork_of=SourceRef(mine.id, 0)).depth == 1
    child = memory.sessions.start(sibling, fork_of=SourceRef(parent.id, 1))
    assert (child.fork_of, child.depth) == (SourceRef(parent.id, 1), 1)
    assert memory.episodic_tree(ResourceRef("worker")) == []  # not in the team


def test_forks_stop_at_the_depth_cap(memory: engram.Memory) -> None:
    ref, store = ResourceRef("deep"), memory._store
    deepest = Session("s_deep", ref, None, None, MAX_FORK_DEPTH, T0, 0)
    store.run(lambda tx: store.sessions.insert(tx, deepest))
    memory.sessions.append(deepest, said("bottom"))
    with pytest.raises(InvalidInput, match="at most 1000 forks"):
        memory.sessions.start(ref, fork_of=SourceRef("s_deep", 0))


def test_lineage_flattens_ancestors_up_to_their_fork_points(memory: engram.Memory) -> None:
    root_ref, child_ref = ResourceRef("planner", "t"), ResourceRef("worker", "t")
    root = memory.sessions.start(root_ref)
    memory.sessions.append(root, [Entry("m", f"root {i}", at=T0 + timedelta(i)) for i in range(4)])
    child = memory.sessions.start(child_ref, fork_of=SourceRef(root.id, 1))
    memory.sessions.append(child, [Entry("m", "child 0", at=T0 + timedelta(days=1))])  # a tie
    memory.sessions.append(child, [Entry("m", "child 1", at=T0 + timedelta(days=9))])
    own = memory.episodic_recall(child_ref)
    assert contents(own.entries) == ["child 0", "child 1"]
    lineage = memory.episodic_recall(child_ref, branch="lineage")
    assert contents(lineage.entries) == ["root 0", "child 0", "root 1", "child 1"]
    later = memory.episodic_recall(child_ref, branch="lineage", after=T0 + timedelta(days=1))
    assert contents(later.entries) == ["child 1"]
    assert contents(memory.episodic_recall(child_ref, branch="lineage", query="ROOT").entries) == [
        "root 0",
        "root 1",
    ]
    [node] = memory.episodic_tree(child_ref)
    assert node.session.id == root.id and len(node.entries) == 4
    assert [c.session.id for c in node.children] == [child.id]


def test_pages_follow_each_other_without_losing_ties(memory: engram.Memory) -> None:
    ref = ResourceRef("pager")
    session = memory.sessions.start(ref)
    times = [T0, T0, T0 + timedelta(1), T0 + timedelta(1), T0 + timedelta(1), T0 + timedelta(2)]
    memory.sessions.append(session, [Entry("m", str(i), at=t) for i, t in enumerate(times)])
    seen: list[str] = []
    after = None
    while True:
        page = memory.episodic_recall(ref, limit=3, after=after)
        seen += contents(page.entries)
        if page.next_after is None:
            break
        after = page.next_after
    assert seen == [str(i) for i in range(6)]


def test_query_words_all_match_as_substrings(memory: engram.Memory) -> None:
    ref = ResourceRef("finder")
    session = memory.sessions.start(ref)
    memory.sessions.append(session, said("Deploy the API at noon", "deploy_script 100%", "api"))
    found = memory.episodic_recall(ref, query="deploy api")
    assert contents(found.entries) == ["Deploy the API at noon"]
    assert contents(memory.episodic_recall(ref, query="_script 100%").entries) == [
        "deploy_script 100%"
    ]
    assert memory.episodic_recall(ref, query="y_s%").entries == []  # wildcards are literal


# -- spawn, sources, scopes ----------------------------------------------------------------
def test_spawn_starts_the_child_forked_from_the_parents_last_entry(memory: engram.Memory) -> None:
    parent = memory.agents.register("planner", team_id="acme")
    _, nothing = memory.agents.spawn(parent.id, "early")
    assert nothing.session_id is None  # no session to continue yet
    session = memory.sessions.start(parent.ref)
    memory.sessions.append(session, said("step 1", "step 2"))
    child, fork = memory.agents.spawn(parent.id, "worker")
    assert fork.session_id is not None
    started = memory.sessions.get(child.ref, fork.session_id)
    assert (started.fork_of, started.depth) == (SourceRef(session.id, 1), 1)
    memory.sessions.append(child.ref, said("child step"))
    lineage = memory.episodic_recall(child.ref, branch="lineage")
    assert contents(lineage.entries) == ["step 1", "step 2", "child step"]


def test_a_verified_fact_resolves_to_its_entry(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as memory:
        ref = ResourceRef("planner")
        session = memory.sessions.start(ref)
        memory.sessions.append(session, said("the user confirmed the refund"))
        fact = memory.remember(ref, "refund confirmed", source_ref=SourceRef(session.id, 0))
        entry = memory.source(fact)
        assert entry is not None and entry.content == "the user confirmed the refund"
        assert memory.source(memory.remember(ref, "a free-form note")) is None
        dangling = memory.remember(ref, "points nowhere", source_ref=SourceRef(session.id, 7))
        assert memory.source(dangling) is None
        elsewhere = memory.remember(
            ResourceRef("x", "other"), "not ours", source_ref=SourceRef(session.id, 0)
        )
        assert memory.source(elsewhere) is None


def test_another_scopes_session_is_not_found(memory: engram.Memory) -> None:
    mine, theirs = ResourceRef("mine"), ResourceRef("theirs")
    session = memory.sessions.start(theirs)
    memory.sessions.append(session, said("private"))
    with pytest.raises(NotFound):
        memory.sessions.get(mine, session.id)
    with pytest.raises(NotFound):
        memory.sessions.append(mine, said("x"), session_id=session.id)
    with pytest.raises(NotFound, match="no session yet"):
        memory.sessions.append(mine, said("x"))
    assert memory.episodic_recall(mine, branch="lineage").entries == []
    assert memory.episodic_tree(mine) == []
    assert memory.sessions.get(theirs, session.id).next_index == 1


# -- bad input -----------------------------------------------------------------------------
BAD_APPENDS = [
    ([Entry("k" * 129, "x")], "kind"),
    ([Entry("m", "x", role="r" * 129)], "role"),
    ([Entry("m", "é" * (32 * 1024 + 1))], "64 KiB"),
    ([Entry("m", "x", at=datetime(2024, 1, 1))], "timezone-aware"),
    ([Entry("m", "x", data={1j: 2})], "JSON"),
    ([Entry("", "x")], "kind"),
    (said(*["x"] * 1001), "at most 1000"),
    ([Entry("m", "fine"), Entry("m", "\x00")], "NUL"),
]


@pytest.mark.parametrize(("entries", "why"), BAD_APPENDS)
def test_bad_entries_are_refused_with_nothing_written(
    memory: engram.Memory, entries: list[Entry], why: str
) -> None:
    ref = ResourceRef("strict")
    session = memory.sessions.start(ref)
    memory.sessions.append(session, said("kept"))
    with pytest.raises(InvalidInput, match=why):
        memory.sessions.append(session, entries)
    assert memory.sessions.get(ref, session.id).next_index == 1
    assert contents(memory.episodic_recall(ref).entries) == ["kept"]


def test_bad_reads_and_starts_are_refused(memory: engram.Memory) -> None:
    ref = ResourceRef("strict")
    with pytest.raises(InvalidInput, match="timezone-aware"):
        memory.episodic_recall(ref, after=datetime(2024, 1, 1))
    with pytest.raises(InvalidInput, match="branch"):
        memory.episodic_recall(ref, branch="all")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="limit"):
        memory.episodic_recall(ref, limit=0)
    with pytest.raises(InvalidInput):
        memory.sessions.start(ref, session_id="x" * 129)
    with pytest.raises(InvalidInput):
        memory.sessions.start(ref, fork_of=SourceRef("s", -1))
    with pytest.raises(InvalidInput, match="expected_next"):
        memory.sessions.append(ref, said("x"), expected_next=-1)
    assert memory.episodic_tree(ref) == []


# -- generated fork forests against a brute-force model ------------------------------------
@dataclass
class Model:
    """Sessions as plain Python: id -> (scope, parent, fork point), and their entries."""

    scope: dict[str, ResourceRef] = field(default_factory=dict)
    fork: dict[str, tuple[str, int] | None] = field(default_factory=dict)
    entries: dict[str, list[datetime]] = field(default_factory=dict)

    def lineage(self, ref: ResourceRef, own: bool) -> list[tuple[str, int]]:
        reach: dict[str, tuple[float, int]] = {}  # session -> (furthest index, nearest depth)
        for sid in [s for s, scope in self.scope.items() if scope == ref]:
            upto, depth, at = float("inf"), 0, sid
            while True:
                old = reach.get(at, (-1.0, depth))
                reach[at] = (max(old[0], upto), min(old[1], depth))
                point = self.fork[at]
                if own or point is None:
                    break
                at, upto, depth = point[0], point[1], depth + 1
        rows = [
            (self.entries[sid][i], depth, sid, i)
            for sid, (upto, depth) in reach.items()
            for i in range(len(self.entries[sid]))
            if i <= upto
        ]
        return [(sid, i) for _, _, sid, i in sorted(rows)]

    def tree(self, ref: ResourceRef) -> list[tuple[str, list[object]]]:
        def root(sid: str) -> str:
            point = self.fork[sid]
            return sid if point is None else root(point[0])

        def node(sid: str) -> tuple[str, list[object]]:
            kids = [s for s in self.fork if (self.fork[s] or ("", 0))[0] == sid]
            return sid, [node(k) for k in kids]

        roots = {root(s) for s, scope in self.scope.items() if scope == ref}
        return [node(r) for r in self.fork if r in roots]  # in order of start


def shape(nodes: list[SessionNode]) -> list[tuple[str, list[object]]]:
    return [(n.session.id, shape(n.children)) for n in nodes]


OPS = st.lists(
    st.tuples(
        st.integers(0, 2),  # the scope
        st.one_of(st.none(), st.integers(0, 50)),  # the parent, among sessions so far
        st.integers(0, 50),  # the fork point, among the parent's entries
        st.lists(st.integers(0, 4), max_size=4),  # the new session's entry times
    ),
    min_size=1,
    max_size=8,
)
EXAMPLES = itertools.count()


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_lineage_and_tree_match_a_brute_force_model(
    memory: engram.Memory, ops: list[tuple[int, int | None, int, list[int]]]
) -> None:
    team = f"forest-{next(EXAMPLES)}"  # every example in a team of its own
    refs = [ResourceRef(f"agent-{i}", team) for i in range(3)]
    model = Model()
    for scope, parent, point, times in ops:
        forkable = [s for s in model.fork if model.entries[s]]
        fork = None
        if parent is not None and forkable:
            pid = forkable[parent % len(forkable)]
            fork = (pid, point % len(model.entries[pid]))
        source = None if fork is None else SourceRef(*fork)
        session = memory.sessions.start(refs[scope], fork_of=source)
        stamps = [T0 + timedelta(minutes=t) for t in times]
        memory.sessions.append(session, [Entry("m", "e", at=at) for at in stamps])
        model.scope[session.id], model.fork[session.id] = refs[scope], fork
        model.entries[session.id] = stamps
    for ref in refs:
        for branch in ("own", "lineage"):
            page = memory.episodic_recall(ref, branch=branch, limit=1000)
            got = [(e.session_id, e.index) for e in page.entries]
            assert got == model.lineage(ref, own=branch == "own"), branch
        assert shape(memory.episodic_tree(ref)) == model.tree(ref)


# -- the command line ------------------------------------------------------------------------
def test_the_command_line_starts_appends_and_reads(
    target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from engram.cli.main import main

    def run(*argv: str) -> tuple[int, str]:
        code = main(["--json", *argv, "--db", str(target), "--embedder", "none"])
        out, _ = capsys.readouterr()
        return code, out

    scope = ["--resource", "planner", "--team", "acme"]
    code, out = run("session", "start", "--name", "first", *scope)
    assert code == 0
    sid = json.loads(out)["id"]
    code, out = run("session", "append", "message", "hello", "--role", "user", *scope)
    assert code == 0 and json.loads(out) == {"session_id": sid, "start": 0, "stop": 1}
    data = ["--data", '{"a": 1}', "--at", "2024-05-01T09:00:00Z", "--session", sid]
    assert run("session", "append", "tool_call", "ran", *data, *scope)[0] == 0
    assert run("session", "append", "m", "late", "--expected-next", "0", *scope)[0] == 4
    fork = ["--fork-of", f"{sid}:1", "--resource", "worker", "--team", "acme"]
    code, out = run("session", "start", *fork)
    assert code == 0 and json.loads(out)["fork_of"] == {"sandbox_id": sid, "entry_index": 1}
    code, out = run("episodes", "--lineage", "--resource", "worker", "--team", "acme")
    assert [e["content"] for e in json.loads(out)["entries"]] == ["ran", "hello"]
    code, out = run("episodes", "--tree", *scope)
    [root] = json.loads(out)["roots"]
    assert root["session"]["id"] == sid and len(root["children"]) == 1
    assert run("episodes", "--after", "2024-05-01", *scope)[0] == 2  # naive: refused
    assert run("session", "append", "m", "x", "--resource", "nobody")[0] == 3


def test_concurrent_appends_take_turns(memory: engram.Memory) -> None:
    import threading

    ref = ResourceRef("busy")
    session = memory.sessions.start(ref)
    ranges: list[range] = []
    failures: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            for i in range(20):
                ranges.append(memory.sessions.append(session, said(f"{name} {i}", "and more")))
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(i for r in ranges for i in r) == list(range(80))
    assert memory.sessions.get(ref, session.id).next_index == 80
