"""Old copies of rows that a rebuilt page keeps in its unused space: zeroed after a write
that erased words, without touching what the file holds (storage/sqlite/freespace.py).

``ENGRAM_SCRUB_STRESS_S`` sets how long two processes write and scrub one store at once
(3 seconds in the suite)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import engram
import stores
from engram import ResourceRef
from engram.storage.sqlite import freespace
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.schema import PAGES_SCRUBBED
from traces import planted_in, planted_word

REF = ResourceRef("user-42")
BUSY_MS = 5_000
STRESS_S = float(os.environ.get("ENGRAM_SCRUB_STRESS_S", "3"))


def _churned(path: Path, steps: int = 1_500) -> tuple[dict[int, str], set[str]]:
    """A file of rows inserted and deleted at random (as SQLite would lay out a store's
    pages): the rows left, and the words of those deleted that no row left holds."""
    rng = random.Random(11)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA page_size = 8192")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, tag BLOB, body TEXT)")
    conn.execute("CREATE TABLE k (word TEXT PRIMARY KEY) WITHOUT ROWID")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
    rows: dict[int, str] = {}
    deleted: set[str] = set()
    for _ in range(steps):
        if rng.random() < 0.6 or not rows:
            body = " ".join(planted_word(rng) for _ in range(rng.randint(3, 40)))
            rowid = conn.execute(
                "INSERT INTO t (tag, body) VALUES (randomblob(8), ?)", (body,)
            ).lastrowid
            conn.execute("INSERT OR IGNORE INTO k VALUES (?)", (body.split()[0],))
            rows[int(rowid or 0)] = body
        else:
            body = rows.pop(rng.choice(list(rows)))
            conn.execute("DELETE FROM t WHERE body = ?", (body,))
            conn.execute("DELETE FROM k WHERE word = ?", (body.split()[0],))
            deleted.update(body.split())
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return rows, deleted - {word for body in rows.values() for word in body.split()}


def _checkpoint(path: Path) -> None:
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    conn.close()


def _left(path: Path, words: set[str]) -> list[str]:
    """The planted words asked for that the file's bytes hold."""
    return sorted(words & planted_in(path.read_bytes()))


def test_a_scrub_zeroes_old_copies_and_nothing_a_row_holds(tmp_path: Path) -> None:
    path = tmp_path / "churned.db"
    rows, deleted = _churned(path)
    assert _left(path, deleted)  # secure_delete alone leaves some behind
    dirty = freespace.dirty_pages(str(path))
    assert dirty
    assert freespace.scrub(str(path), busy_ms=BUSY_MS) == len(dirty)
    _checkpoint(path)
    assert freespace.dirty_pages(str(path)) == []
    assert _left(path, deleted) == []
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert dict(conn.execute("SELECT id, body FROM t").fetchall()) == rows
    assert {w for (w,) in conn.execute("SELECT word FROM k")} == {
        body.split()[0] for body in rows.values()
    }
    conn.close()
    assert freespace.scrub(str(path), busy_ms=BUSY_MS) == 0  # nothing left to zero
    _checkpoint(path)
    conn = sqlite3.connect(path)
    assert not freespace.due(conn)  # the scrub's own write says so
    conn.close()


def test_a_connection_that_read_pages_before_a_scrub_does_not_write_them_back(
    tmp_path: Path,
) -> None:
    """Its cached pages still hold what the scrub zeroed: the scrub's own commit, before
    the next writer can come, makes it read them again before it changes one."""
    path = tmp_path / "churned.db"
    _churned(path)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("PRAGMA secure_delete = ON")
    assert reader.execute("SELECT count(*), sum(length(body)) FROM t").fetchone()[0]
    assert freespace.scrub(str(path), busy_ms=BUSY_MS)
    # Same-sized values are written over in place: no page is laid out again.
    reader.execute("UPDATE t SET tag = randomblob(8)")
    reader.close()
    _checkpoint(path)
    assert freespace.dirty_pages(str(path)) == []


def test_a_scrub_leaves_the_file_alone_while_its_log_holds_a_write(tmp_path: Path) -> None:
    """Pages still in the log would be copied into the file beside the zeroing: the
    next erasing write scrubs instead."""
    path = tmp_path / "churned.db"
    _churned(path)
    dirty = freespace.dirty_pages(str(path))
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("INSERT INTO t (tag, body) VALUES (randomblob(8), 'one more')")
    assert freespace.scrub(str(path), busy_ms=BUSY_MS) is None
    assert freespace.dirty_pages(str(path)) == dirty
    writer.close()


def _hard(mem: engram.Memory, fact: engram.Fact) -> None:
    assert mem.forget(REF, fact.id, hard=True)


def _from_trash(mem: engram.Memory, fact: engram.Fact) -> None:
    assert mem.forget(REF, fact.id)
    assert mem.delete_traces(REF, [fact.id]).trashed == 1


def _lived(mem: engram.Memory, way: Callable[[engram.Memory, engram.Fact], None]) -> set[str]:
    """Facts remembered and erased in turn, as a store lives (their rows move between
    pages while they live): the words erased that no fact left holds. Without the scrub
    12 of them stay in the file (seed 1; seeds 2 to 5 leave none, but every seed leaves
    pages whose unused space holds something)."""
    rng = random.Random(1)
    erased: set[str] = set()
    live: list[engram.Fact] = []
    for _ in range(25):
        said = [" ".join(planted_word(rng) for _ in range(rng.randint(2, 12))) for _ in range(40)]
        live += mem.remember_many(REF, said)
        for fact in rng.sample(live, 10):
            live.remove(fact)
            way(mem, fact)
            erased.update(fact.content.split())
    return erased - {word for fact in live for word in fact.content.split()}


@pytest.mark.parametrize("way", [_hard, _from_trash], ids=["forget-hard", "trash-then-delete"])
def test_words_a_store_erased_leave_no_old_copy_in_its_pages(
    db_path: Path, way: Callable[[engram.Memory, engram.Fact], None]
) -> None:
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
        erased = _lived(mem, way)
        assert _left(db_path, erased) == []
        assert freespace.dirty_pages(str(db_path)) == []


def test_a_store_from_before_the_scrubs_is_scrubbed_as_it_opens(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What its erasures left in its pages before this engram goes when it is opened."""
    with monkeypatch.context() as before:
        before.setattr(freespace, "scrub", lambda path, busy_ms: None)
        with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
            erased = _lived(mem, _hard)
    assert _left(db_path, erased)
    for statement in (*stores.BEFORE_PAGE_SCRUBS, f"PRAGMA user_version = {PAGES_SCRUBBED - 1}"):
        stores.rows(db_path, statement)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)):
        assert _left(db_path, erased) == []
    assert stores.rows(db_path, "SELECT value FROM meta WHERE key = 'scrub_due'") == [("0",)]


def test_a_scrub_that_did_not_run_after_its_erasure_runs_when_the_store_opens(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its erasing write said a scrub is due; the scrub never came (a reader held the
    log, another write came first, the process ended): the next open runs it."""
    with monkeypatch.context() as skipped:
        skipped.setattr(freespace, "scrub", lambda path, busy_ms: None)
        with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
            erased = _lived(mem, _hard)
    assert _left(db_path, erased)
    assert stores.rows(db_path, "SELECT value FROM meta WHERE key = 'scrub_due'") == [("1",)]
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)):
        assert _left(db_path, erased) == []
    assert stores.rows(db_path, "SELECT value FROM meta WHERE key = 'scrub_due'") == [("0",)]


# Two processes on one store: ``eraser`` remembers and forgets for good (each forget
# scrubs the file's pages) until ``other`` has finished, then forgets once more alone;
# ``other`` remembers, corrects, trashes and recalls meanwhile, its connections caching
# pages across the scrubs. Each prints what it did as JSON.
_TWO = """
import json, random, sys, time
import engram
from engram import ResourceRef
from engram.storage.sqlite import freespace
role, path, seconds, done = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
rng = random.Random(role)
head = "zq" if role == "eraser" else "qz"  # no word of one is the other's
word = lambda: head + "".join(rng.choice("bcdfghjkmnpvwx") for _ in range(10))
with engram.open(path, embedder=engram.HashingEmbedder(16)) as mem:
    ref, live, out = ResourceRef(role), [], {"writes": 0}
    end = time.monotonic() + seconds
    if role == "other":
        while time.monotonic() < end:
            live += mem.remember_many(ref, [f"plain {word()} " + "ab" * rng.randint(1, 60)])
            fact = rng.choice(live)
            mem.correct(ref, fact.id, f"plain {word()} " + "cd" * rng.randint(1, 60))
            mem.recall(ref, "plain", mode="text")
            if len(live) > 5:
                mem.forget(ref, live.pop(0).id)
            out["writes"] += 1
        open(done, "w").close()
    else:
        real, erased = freespace.scrub, set()
        out["skipped"] = 0
        def counted(p, busy_ms):
            zeroed = real(p, busy_ms=busy_ms)
            out["skipped"] += zeroed is None
            return zeroed
        freespace.scrub = counted
        alone = False
        while not alone:
            alone = time.monotonic() > end and __import__("os").path.exists(done)
            said = [" ".join(word() for _ in range(rng.randint(2, 12))) for _ in range(20)]
            live += mem.remember_many(ref, said)
            for fact in rng.sample(live, 5):
                live.remove(fact)
                assert mem.forget(ref, fact.id, hard=True)
                erased.update(fact.content.split())
                out["writes"] += 1
        out["erased"] = sorted(erased - {w for f in live for w in f.content.split()})
print(json.dumps(out))
"""


def test_two_processes_writing_and_scrubbing_one_store_leave_it_sound(tmp_path: Path) -> None:
    """The scrub writes the file beside SQLite: with another process writing at once
    (its cached pages, its checkpoints), the file stays sound and its full-text index
    whole, and no word erased is left."""
    path, done = tmp_path / "engram.db", tmp_path / "other-done"
    engram.open(path, embedder=engram.HashingEmbedder(16)).close()  # created, migrated
    started = {
        role: subprocess.Popen(
            [sys.executable, "-c", _TWO, role, str(path), str(STRESS_S), str(done)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for role in ("eraser", "other")
    }
    said = {}
    for role, process in started.items():
        out, _ = process.communicate(timeout=STRESS_S + 120)
        assert process.returncode == 0, role
        said[role] = json.loads(out.splitlines()[-1])
    assert said["eraser"]["writes"] > 0 and said["other"]["writes"] > 0
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('integrity-check')")
    conn.close()
    assert _left(path, set(said["eraser"]["erased"])) == []
