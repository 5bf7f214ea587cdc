"""A large scope's vectors in an approximate (HNSW) index, a file beside the database.

Exact search keeps every vector of a scope in memory: at a million facts that is 1.5 GB
read from the file before the first answer. From ``ANN_ABOVE`` facts a scope is also
indexed in a ``usearch`` graph with int8 vectors, saved in ``<database>-vectors/`` and
opened memory-mapped, so a process that starts answers from the pages its queries touch.

The rows stay the one source of truth, and the file is only ever a hint about them:

- ``vector_indexes`` (migration 18) names a scope's file, the change-log mark it was
  built at and the newest row it holds. A search reads that row in its own snapshot, so
  a file is used only once its row committed, and never after a row that drops it did.
- What changed since the mark is read from the change log (:mod:`.revision`): those
  rows are never taken from the file; rows added or rewritten since are searched exactly
  from memory (the delta). The file's candidates are read back from the rows with their
  float32 vectors and scored exactly, so a fact forgotten since is never returned, and
  the scores are exact cosines, as exact search gives.
- A fact held by the file that leaves it (erased, moved to the trash, corrected, given a
  new vector) is named in ``vector_scrubs`` in the same transaction (the schema's
  triggers), and after the commit its vector's bytes in the file are overwritten with
  zeros (:func:`scrub`): the graph stays, the fact excluded from its answers through the
  change log (a corrected or restored fact's new row is searched beside the file). A
  store that opens applies any a process left. A vector found at no row of the file or
  at several, or more of them than a merge takes, drops the file instead, as a scope
  forgotten whole does: the commit deletes every file no row names (:meth:`sweep`), and
  the index is built again from the rows.
- Builds run on one background thread per store: a missing index once a scope reaches
  ``ANN_ABOVE``, a merge once the delta or the rows excluded pass a tenth of the file,
  or ``MERGE_ROWS`` in a process that searches the scope again and again.
  A build writes a new file, then installs it with its row in one transaction. Where a
  fact it read was erased or trashed meanwhile (``scope_state.erasures`` moved), the
  vectors of the facts changed since its first read are overwritten in the new file
  first; where one cannot be, it is thrown away and built again. A crash at any point
  leaves a file no row names (swept) or a row naming a file that is whole.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from engram.core.ranking import Candidate
from engram.storage.background import Worker
from engram.storage.neighbours import usearch_module
from engram.storage.rows import fact_columns, to_traits
from engram.storage.sql.dialect import SQLITE_VECTOR, cosines
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import vectorfiles
from engram.storage.sqlite.index.revision import logged_since
from engram.storage.sqlite.index.vectors import AMONG, ROWS, Floats, arrays, scanned
from engram.storage.sqlite.schema import change_mark

if TYPE_CHECKING:
    from usearch.index import Index

log = logging.getLogger("engram.storage")

# Below this many facts exact search is as fast (BENCHMARKS.md, "One scope at scale").
ANN_ABOVE = 50_000
# The graph: 32 links a node, int8 vectors, EXPANSION_ADD candidates explored as a node is
# added; EXPANSION_SEARCH explored a query, more as the scope grows (search_width), the
# best OVERSAMPLE of them scored exactly. Recall@10 against exact on the perf corpus
# (BENCHMARKS.md): built exploring 128, 384 explored gave 0.981 at 100k, 0.969 at 300k,
# 0.94 at 1M, and holding 0.97 took a width growing as the square root of the scope (1,214
# at 1M, 24.9 ms); built exploring 256 (twice the build: 1,357 s at 1M on 2 cores), 384
# gives 0.983 at 300k and 0.975 at 1M (8.2 ms), 512 0.980. 48 links were no better.
CONNECTIVITY = 32
EXPANSION_ADD = 256
NARROW_BUILD = 128  # what files built before vector_indexes.built_with were built with
EXPANSION_SEARCH = 384
WIDEST = 4096
OVERSAMPLE = 100
MERGE_FRACTION = 0.1  # of the file's size: the delta, or the rows excluded, past it
# ... or past this many rows, whatever the file's size: every query scores the delta
# exactly (a 60k delta beside a 1M file cost 4 ms a query, and 0.9 s to read first), in
# a process that has searched the scope MERGE_AFTER times. A process that answers one
# question and exits (a CLI's recall) would only start the merge, read the whole file
# into memory (1.9 GB at 1.15M facts) and abandon it.
MERGE_ROWS = 20_000
MERGE_AFTER = 20
BUILD_BATCH = 20_000  # rows read at a time by a build
# ... and added at a time, the build looking at ``closed`` before each: a close waits
# for one such add (a whole batch took about 18 s into a 1M-row graph).
ADD_AT_ONCE = 2_000
# A filter that leaves no more rows than the graph would give, and at most this many, is
# scored exactly from its rows.
EXACT_ROWS = 20_000

VALUE_BYTES = np.dtype(SQLITE_VECTOR).itemsize  # of a stored vector


@dataclass
class _Delta:
    """Rows the file does not answer for: ``excluded`` seqs (changed since its mark) are
    never taken from it; ``rows`` (seq: id, vector) are those added or rewritten since."""

    file: str
    last_seq: int  # the newest row read, the file's or the delta's
    mark: int
    version: int = -1
    epoch: int = -1
    excluded: set[int] = field(default_factory=set)
    rows: dict[int, tuple[str, Floats]] = field(default_factory=dict)

    def copy(self) -> _Delta:
        """A copy to change: searches holding this one read it unchanged."""
        return _Delta(
            self.file,
            self.last_seq,
            self.mark,
            self.version,
            self.epoch,
            set(self.excluded),
            dict(self.rows),
        )

    @cached_property
    def _arrays(self) -> tuple[npt.NDArray[np.int64], list[str], Floats]:
        """The rows' seqs, ids and vectors, in ``rows``' order: once per delta, which is
        replaced, never changed, once searches may hold it."""
        seqs = np.fromiter(self.rows, np.int64, len(self.rows))
        ids = [fact_id for fact_id, _ in self.rows.values()]
        return seqs, ids, np.stack([vector for _, vector in self.rows.values()])

    def best(
        self, query: Floats, allowed: set[int] | None, limit: int
    ) -> Iterator[tuple[int, str, float]]:
        """The ``limit`` rows nearest ``query`` among ``allowed`` (and any tied with the
        last of them), as (seq, id, exact cosine): a delta holds up to ``MERGE_ROWS`` rows
        (more while a merge runs), and every one of them sorted in Python had cost 100 ms
        a query at 60k."""
        if not self.rows:
            return
        seqs, ids, matrix = self._arrays
        scores = cosines(matrix, query)
        among = np.arange(len(seqs))
        if allowed is not None:
            among = np.fromiter(
                (i for i, seq in enumerate(seqs.tolist()) if seq in allowed), np.int64
            )
            scores = scores[among]
        if len(scores) > limit:
            last = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            kept = np.flatnonzero(scores >= last)
            among, scores = among[kept], scores[kept]
        for at, score in zip(among.tolist(), scores.tolist(), strict=True):
            yield int(seqs[at]), ids[at], score


@dataclass
class _Opened:
    index: Index
    size: int


class ApproximateIndex:
    """One store's approximate indexes: opened files, their deltas, and the builder."""

    def __init__(self, database: str, run: Callable[..., Any] | None = None) -> None:
        self.above = ANN_ABOVE
        self.directory = vectorfiles.directory_of(database)
        self._run = run  # Database.run: the builder's transactions
        self._lock = threading.Lock()
        self._opened: dict[str, _Opened] = {}
        self._deltas: dict[str, _Delta] = {}
        self._searches: dict[str, int] = {}  # of each scope past MERGE_ROWS, this file
        self._unusable: set[str] = set()  # files found missing or damaged (names are unique)
        self._builder: Worker[str] = Worker("engram-vector-index", self.build)

    @property
    def available(self) -> bool:
        return self.directory is not None and self._run is not None and usearch_module() is not None

    # -- searching ---------------------------------------------------------------------

    def search(
        self,
        conn: sqlite3.Connection,
        scope: str,
        query: Floats,
        allowed: set[int] | None,
        limit: int,
        facts: int,
        passes: Callable[[list[int]], set[int]] | None = None,
    ) -> list[Candidate] | None:
        """The ``limit`` nearest facts of ``scope`` (``facts`` of them), exact cosines,
        best first; None when this scope is below ``above`` or has no usable index (exact
        search answers). ``passes``: of given row numbers, those that pass a filter many
        facts pass; only those of the ``limit`` nearest are read and given. ``conn`` is
        inside a read transaction."""
        if facts < self.above or not self.available:
            return None
        row = conn.execute(
            "SELECT file, mark, last_seq, size, dimension, built_with FROM vector_indexes "
            "WHERE scope = ?",
            (scope,),
        ).fetchone()
        if row is None:  # none yet, or dropped: a file another process unlinked is let go
            self.forget(scope)
            self.want(scope)
            return None
        file, mark, last_seq, size, dimension, built_with = row
        if dimension != query.shape[-1]:
            return None  # exact search names the mismatch
        query = query.astype(np.float32, copy=False)  # float32 products, as exact search
        opened = self._open(scope, file, size, built_with)
        if opened is None:
            self.want(scope)
            return None
        delta = self._follow(conn, scope, file, mark, last_seq)
        if delta is None:
            self.want(scope)
            return None
        beside = max(len(delta.rows), len(delta.excluded))
        if beside > MERGE_FRACTION * max(size, self.above) or (
            beside > MERGE_ROWS and self._searched(scope) >= MERGE_AFTER
        ):
            self.want(scope)
        return self._nearest(conn, scope, opened, delta, query, allowed, limit, passes)

    def _searched(self, scope: str) -> int:
        """How many times this process has searched ``scope`` past MERGE_ROWS, this one
        counted."""
        with self._lock:
            count = self._searches[scope] = self._searches.get(scope, 0) + 1
        return count

    def _nearest(
        self,
        conn: sqlite3.Connection,
        scope: str,
        opened: _Opened,
        delta: _Delta,
        query: Floats,
        allowed: set[int] | None,
        limit: int,
        passes: Callable[[list[int]], set[int]] | None,
    ) -> list[Candidate] | None:
        if allowed is not None and not allowed:
            return []  # a filter no fact passes
        count = min(opened.size, max(OVERSAMPLE, limit) + len(delta.excluded))
        if allowed is not None:  # a filter: as many more as it is narrow
            count = min(opened.size, count * -(-opened.size // len(allowed)))
            # Its rows read and scored cost about what as many of the graph's results do
            # (BENCHMARKS.md, "A filter's rows or the graph"): whichever is fewer.
            if len(allowed) <= min(count, EXACT_ROWS):
                return scanned(conn, scope, query, limit, sorted(allowed))
        # Asked for the whole file (a small scope, or a wide filter): every row, exactly.
        found = opened.index.search(query, count, threads=1, exact=count >= opened.size)
        keys = [k for k in found.keys.tolist() if k not in delta.excluded]
        if allowed is not None:
            keys = [k for k in keys if k in allowed]
        beside = list(delta.best(query, allowed, limit))
        if passes is not None:  # only the best that pass are read
            kept = passes(keys + [seq for seq, _, _ in beside])
            keys, beside = [k for k in keys if k in kept], [r for r in beside if r[0] in kept]
        scored = {r.seq: r for r in _read(conn, scope, keys, query, traits=True)}
        for seq, fact_id, score in beside:
            scored[seq] = _Row(seq, fact_id, score)
        if allowed is not None and len(scored) < min(limit, len(allowed)):
            return scanned(conn, scope, query, limit, sorted(allowed))
        best = sorted(scored.values(), key=lambda r: (-r.score, r.seq))[:limit]
        return [r.candidate() for r in best]

    def _open(self, scope: str, file: str, size: int, built_with: int) -> _Opened | None:
        with self._lock:
            opened = self._opened.get(file)
        if opened is not None:
            return opened
        assert self.directory is not None
        if file in self._unusable:
            return None
        index = _restored(usearch_module(), self.directory / file, size, view=True)
        if index is None:  # said once: each search until the build ends would say it again
            with self._lock:
                self._unusable.add(file)
            return None
        index.expansion_search = search_width(size, built_with)  # type: ignore[misc]  # settable
        opened = _Opened(index, size)
        with self._lock:
            self._let_go(scope)
            self._opened[file] = opened
        return opened

    def _held(self, file: str) -> Index | None:
        """The file's graph as this process has it open, if it has."""
        with self._lock:
            opened = self._opened.get(file)
        return None if opened is None else opened.index

    def _let_go(self, scope: str) -> None:
        """Drops the scope's opened files, and the count of its searches past MERGE_ROWS,
        which starts again with the next file (under ``_lock``)."""
        mine = vectorfiles.scope_name(scope)
        for file in [f for f in self._opened if vectorfiles.scope_of(f) == mine]:
            del self._opened[file]
        self._searches.pop(scope, None)

    def _follow(
        self, conn: sqlite3.Connection, scope: str, file: str, mark: int, last_seq: int
    ) -> _Delta | None:
        """The scope's delta against ``file``, brought to this snapshot; None when the
        change log no longer reaches back to the file's mark."""
        state = conn.execute(
            "SELECT version, epoch FROM scope_state WHERE scope = ?", (scope,)
        ).fetchone()
        with self._lock:
            delta = self._deltas.get(scope)
        if delta is None or delta.file != file:
            delta = _Delta(file, last_seq, mark)
        if state is None:
            return None
        if (delta.version, delta.epoch) == (state[0], state[1]):
            return delta
        delta = delta.copy()
        now = change_mark(conn)
        if delta.epoch != state[1]:
            touched = logged_since(conn, scope, delta.mark)
            if touched is None:
                return None
            delta.excluded.update(touched)
            for seq in touched:
                delta.rows.pop(seq, None)
            # A deleted newest row's seq goes to the next insert: appends are then read
            # from the newest row still present.
            if delta.last_seq in delta.excluded:
                newest = conn.execute(
                    "SELECT coalesce(max(seq), -1) FROM facts WHERE scope = ? AND seq <= ?",
                    (scope, delta.last_seq),
                ).fetchone()[0]
                delta.last_seq = int(newest)
            _add(conn, scope, delta, AMONG, json.dumps(touched))
        delta.mark = now
        _add(conn, scope, delta, _NEWER, delta.last_seq)
        delta.version, delta.epoch = state[0], state[1]
        with self._lock:
            self._deltas[scope] = delta
        return delta

    def forget(self, scope: str) -> None:
        with self._lock:
            self._deltas.pop(scope, None)
            self._let_go(scope)

    # -- building ----------------------------------------------------------------------

    def want(self, scope: str) -> None:
        """Asks the builder for ``scope``'s index (built, or merged)."""
        if self.available:
            self._builder.want(scope)

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until no build is wanted or running; False when ``timeout`` passed."""
        return self._builder.settle(timeout)

    def close(self) -> None:
        self._builder.close()
        with self._lock:
            self._opened.clear()
            self._deltas.clear()

    def stale(self, scope: str) -> bool:
        """Whether a build would write ``scope`` a new file: it has reached ``above`` and
        has no usable file, or rows were written, changed or deleted since its file."""
        return self.available and self._start(scope) is not None

    def _start(self, scope: str) -> dict[str, Any] | None:
        """What a build of ``scope`` starts from (:func:`_state`), or None when there is
        nothing to build: below ``above``, no vectors, or a file current and whole."""
        assert self.directory is not None and self._run is not None
        start = self._run(lambda tx: _state(tx.conn, scope), write=False)
        if start is None or start["facts"] < self.above or not start["dimension"]:
            return None
        return start if _stale(self.directory, start) else None

    def build(self, scope: str) -> bool:
        """Builds ``scope``'s index from its rows (or merges the file it has with what
        changed since) and installs it; False when there was nothing to build, another
        process is building it, or a fact it read was erased meanwhile (then it is asked
        for again)."""
        assert self.directory is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        with vectorfiles.held(self.directory / f"{vectorfiles.scope_name(scope)}.lock") as held:
            if not held:
                return False
            installed = self._build(scope)
        self.sweep()
        return installed

    def _build(self, scope: str) -> bool:
        assert self.directory is not None and self._run is not None
        usearch = usearch_module()
        start = self._start(scope)
        if start is None:  # nothing written since a whole file: not the same file again
            return False
        index: Index | None = None
        rewritten: list[int] = []
        last_seq = -1
        built_with = EXPANSION_ADD
        base = start["index"]
        if base is not None and (self.directory / base["file"]).exists():
            changed = start["changed"]
            mergeable = changed is not None and len(changed) <= MERGE_FRACTION * base["size"]
            if mergeable and not base["scrubbing"]:  # no erased vector read from the file
                # A merge: the file, less what changed since it, plus the rows after it.
                index = _restored(usearch, self.directory / base["file"], base["size"])
            if index is not None:
                # A merge keeps the file's graph: it searches as that was built.
                built_with = int(base["built_with"])
                index.expansion_add = EXPANSION_ADD  # type: ignore[misc]  # settable
                index.remove([k for k in changed if index.contains(k)])
                last_seq = int(base["last_seq"])
                # Rows after the file's newest come with the appends: read once, added once.
                rewritten = [k for k in changed if k <= last_seq]
        if index is None:
            index = usearch.Index(
                ndim=start["dimension"],
                metric="cos",
                dtype="i8",
                connectivity=CONNECTIVITY,
                expansion_add=EXPANSION_ADD,
                expansion_search=EXPANSION_SEARCH,
            )
        for seqs, matrix in self._batches(scope, last_seq, rewritten):
            for at in range(0, len(seqs), ADD_AT_ONCE):
                if self._builder.closed:
                    return False
                index.add(seqs[at : at + ADD_AT_ONCE], matrix[at : at + ADD_AT_ONCE], threads=0)
            last_seq = max(last_seq, int(seqs.max()))
        name = vectorfiles.file_name(vectorfiles.scope_name(scope))
        partial = self.directory / (name + vectorfiles.PARTIAL)
        index.save(str(partial))
        _fsync(partial)
        # What the file holds as it opens (a merge's removed keys are not in its count).
        size = len(usearch.Index.restore(str(partial), view=True))
        path = self.directory / name
        with vectorfiles.files_lock(self.directory):
            os.replace(partial, path)
            installed = bool(
                self._run(
                    lambda tx: _install(
                        tx.conn, scope, path, start, max(last_seq, 0), size, built_with
                    )
                )
            )
            if not installed:
                path.unlink(missing_ok=True)
        if not installed:
            self.want(scope)  # what an erasure left could not be overwritten: again
        return installed

    def _batches(
        self, scope: str, after: int, rewritten: list[int]
    ) -> Iterator[tuple[npt.NDArray[np.int64], Floats]]:
        """The ``rewritten`` rows still present, then the scope's rows after seq
        ``after``, a batch at a time (each its own read: a new row lands after the
        last one read, or, reusing a deleted row's seq, is in the change log)."""
        assert self._run is not None
        for at in range(0, len(rewritten), BUILD_BATCH):
            chunk = json.dumps(rewritten[at : at + BUILD_BATCH])
            rows = self._run(lambda tx, c=chunk: _rows(tx.conn, scope, AMONG, c), write=False)
            if rows:
                yield arrays(rows)
        while True:
            rows = self._run(
                lambda tx, a=after: _rows(tx.conn, scope, _AFTER, a, BUILD_BATCH), write=False
            )
            if not rows:
                return
            after = int(rows[-1][0])
            yield arrays(rows)

    def sweep(self) -> None:
        """Deletes the files no row names (:func:`vectorfiles.sweep`), and lets go of
        those this process had open."""
        if self._run is None:
            return
        scrub(self.directory, self._run, self._held)
        named = vectorfiles.sweep(self.directory, self._run)
        with self._lock:
            for file in [f for f in self._opened if f not in named]:
                del self._opened[file]


def scrub(
    directory: Path | None,
    run: Callable[..., Any],
    held: Callable[[str], Index | None] | None = None,
) -> None:
    """Overwrites with zeros, in the index files that hold them, the vectors of the facts
    erased or trashed since (``vector_scrubs``, migrations 25 and 26), then forgets them.
    A file where such a vector is found at no row of its own or at several, or that has
    more of them than a merge takes, or that cannot be written, is dropped instead (its
    row deleted: the sweep deletes the file). ``held``: a file's graph as the process has
    it open already (to open one costs 170 ms at 1M vectors)."""
    if directory is None:
        return
    if not directory.exists():  # no file holds them
        run(lambda tx: tx.conn.execute("DELETE FROM vector_scrubs"))
        return
    # One process at a time: another's zeros, written while this one compared bytes,
    # would read as a vector not found, and drop the file.
    with vectorfiles.files_lock(directory):
        pending = run(
            lambda tx: tx.conn.execute(
                "SELECT s.file, s.seq, i.size FROM vector_scrubs s "
                "LEFT JOIN vector_indexes i ON i.file = s.file ORDER BY s.file, s.seq"
            ).fetchall(),
            write=False,
        )
        by_file: dict[str, tuple[list[int], int | None]] = {}
        for file, seq, size in pending:
            by_file.setdefault(str(file), ([], size))[0].append(int(seq))
        for file, (seqs, size) in by_file.items():
            opened = None if held is None else held(file)
            try:
                kept = (
                    size is not None
                    and _overwritable(len(seqs), size)
                    and overwrite(directory / file, seqs, size, opened)
                )
            except OSError as exc:  # a full disk, a file made read-only: it goes instead
                log.warning("cannot overwrite erased vectors in %s (%s): dropped", file, exc)
                kept = False
            run(lambda tx, f=file, s=seqs, k=kept: _settled(tx.conn, f, s, k))


def _overwritable(count: int, size: int) -> bool:
    """Whether ``count`` vectors of a file of ``size`` are overwritten in it rather than
    the file dropped: no more than a merge takes (one, at least)."""
    return count <= max(1.0, MERGE_FRACTION * size)


def _settled(conn: sqlite3.Connection, file: str, seqs: list[int], kept: bool) -> None:
    """Forgets the overwrites done in ``file`` (or, where they could not be, drops it)."""
    conn.execute(
        "DELETE FROM vector_scrubs WHERE file = ? AND seq IN (SELECT value FROM json_each(?))",
        (file, json.dumps(seqs)),
    )
    if not kept:
        conn.execute("DELETE FROM vector_indexes WHERE file = ?", (file,))


def overwrite(path: Path, seqs: list[int], size: int, view: Index | None = None) -> bool:
    """Writes zeros over the vectors of ``seqs`` in the index file ``path``, synced; False
    where one cannot be found at a row of its own. A dense usearch file opens with its
    vectors, after two 32-bit words (their count and bytes), one after another in the
    order of their slots, which is not the order of the keys: a vector is found among
    them by its bytes, and read back as zeros after."""
    if view is None and path.exists():
        view = _restored(usearch_module(), path, size, view=True)
    if view is None or not path.exists():
        return False
    count, width = (int(x) for x in np.fromfile(path, np.uint32, 2))
    if width < 8 or 8 + count * width > path.stat().st_size:
        return False
    mapped = np.memmap(path, np.uint8, "r")
    rows = mapped[8 : 8 + count * width].reshape(count, width)
    heads = np.ndarray((count,), np.uint64, buffer=mapped, offset=8, strides=(width,))
    slots = []
    for seq in seqs:
        if not view.contains(seq):
            continue  # not in this file
        held = np.asarray(view.get(seq, dtype="i8"), np.int8).tobytes()
        if len(held) != width:
            return False
        if not any(held):
            continue  # overwritten already
        head = np.frombuffer(held[:8], np.uint64)[0]
        found = [int(r) for r in np.flatnonzero(heads == head) if rows[r].tobytes() == held]
        if len(found) != 1:
            return False
        slots.append(found[0])
    del heads, rows, mapped
    if slots:
        with open(path, "r+b") as handle:
            for slot in slots:
                handle.seek(8 + slot * width)
                handle.write(bytes(width))
            handle.flush()
            os.fsync(handle.fileno())
    # the mapping shows the file as written: each one's vector is now read as zeros
    return not any(
        view.contains(seq) and np.asarray(view.get(seq, dtype="i8")).any() for seq in seqs
    )


def _stale(directory: Path, start: dict[str, Any]) -> bool:
    """Whether the scope ``start`` (:func:`_state`) describes has no usable file (none,
    missing, cut short), or rows were written, changed or deleted since its file."""
    base = start["index"]
    if base is None or not base["current"]:
        return True
    return _restored(usearch_module(), directory / base["file"], base["size"], view=True) is None


def _state(conn: sqlite3.Connection, scope: str) -> dict[str, Any] | None:
    """What a build starts from, read in one snapshot."""
    row = conn.execute(
        "SELECT facts, erasures FROM scope_state WHERE scope = ?", (scope,)
    ).fetchone()
    if row is None:
        return None
    index = conn.execute(
        "SELECT file, mark, last_seq, size, built_with FROM vector_indexes WHERE scope = ?",
        (scope,),
    ).fetchone()
    width = conn.execute(
        "SELECT length(v.vector) FROM facts f JOIN fact_vectors v ON v.fact = f.seq "
        "WHERE f.scope = ? LIMIT 1",
        (scope,),
    ).fetchone()
    base = None
    changed = None
    if index is not None:
        base = {
            "file": index[0],
            "mark": index[1],
            "last_seq": index[2],
            "size": index[3],
            "built_with": index[4],
        }
        changed = logged_since(conn, scope, int(index[1]))
        newer = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM facts WHERE scope = ? AND seq > ?)", (scope, index[2])
        ).fetchone()[0]
        base["current"] = changed == [] and not newer  # the file holds every row as it is
        base["scrubbing"] = bool(  # an erased vector's bytes not yet overwritten
            conn.execute(
                "SELECT EXISTS (SELECT 1 FROM vector_scrubs WHERE file = ?)", (index[0],)
            ).fetchone()[0]
        )
    return {
        "facts": int(row[0]),
        "erasures": int(row[1]),
        "mark": change_mark(conn),
        "dimension": int(width[0]) // VALUE_BYTES if width else 0,
        "index": base,
        "changed": changed,
    }


# What a scope's rows are read by besides given seqs (vectors.AMONG): those after a seq,
# in order, or all of them.
_AFTER = "f.scope = ? AND f.seq > ? ORDER BY f.seq LIMIT ?"
_NEWER = "f.scope = ? AND f.seq > ?"
# A candidate's row as ROWS reads it, with what recall reads of it (its traits, and a
# hit's fact): its whole row.
_WITH_ROW = (
    f"SELECT f.seq, f.id, v.vector, {fact_columns('f.')} "
    "FROM facts f JOIN fact_vectors v ON v.fact = f.seq "
)


def _rows(conn: sqlite3.Connection, scope: str, where: str, *args: object) -> list[Any]:
    """The scope's (seq, id, vector) rows matching ``where``."""
    return conn.execute(f"{ROWS}WHERE {where}", (scope, *args)).fetchall()


def _add(conn: sqlite3.Connection, scope: str, delta: _Delta, where: str, arg: object) -> None:
    """Reads into ``delta`` the scope's rows matching ``where``."""
    rows = _rows(conn, scope, where, arg)
    if not rows:
        return
    seqs, matrix = arrays(rows)  # one matrix: a row at a time cost 20 us each
    for at, (seq, fact_id, _) in enumerate(rows):
        delta.rows[int(seq)] = (str(fact_id), matrix[at])
    delta.last_seq = max(delta.last_seq, int(seqs.max()))


def _install(
    conn: sqlite3.Connection,
    scope: str,
    path: Path,
    start: dict[str, Any],
    last_seq: int,
    size: int,
    built_with: int,
) -> bool:
    """Names the new file ``path`` as the scope's index (holding its rows up to
    ``last_seq`` as of the build's first read). A fact erased or trashed since that read
    may be in it: each one changed since is overwritten in it first (the searches exclude
    them, through the change log, as for any file); where one cannot be, or more of them
    than a merge takes, it is not installed."""
    now = conn.execute("SELECT erasures FROM scope_state WHERE scope = ?", (scope,)).fetchone()
    if now is None:
        return False
    if int(now[0]) != start["erasures"]:
        changed = logged_since(conn, scope, start["mark"])
        if changed is None or not _overwritable(len(changed), size):
            return False
        if not overwrite(path, changed, size):
            return False
    conn.execute(
        "INSERT INTO vector_indexes (scope, file, mark, last_seq, size, dimension, built_with) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET file = excluded.file, "
        "mark = excluded.mark, last_seq = excluded.last_seq, size = excluded.size, "
        "dimension = excluded.dimension, built_with = excluded.built_with",
        (scope, path.name, start["mark"], last_seq, size, start["dimension"], built_with),
    )
    return True


@dataclass(frozen=True, slots=True)
class _Row:
    seq: int
    id: str
    score: float
    row: tuple[Any, ...] | None = None  # its row of FACT_COLUMNS, where it was read

    def candidate(self) -> Candidate:
        traits = None if self.row is None else to_traits(self.row)
        return Candidate(self.id, self.score, traits)


def _read(
    conn: sqlite3.Connection, scope: str, seqs: list[int], query: Floats, *, traits: bool = False
) -> list[_Row]:
    """The scope's rows among ``seqs`` still present, with their exact cosines (and,
    with ``traits``, what recall reads of them for its lists: from the row each id is
    read from, so that it reads them no more, as PostgreSQL's vector half gives them)."""
    if not seqs:
        return []
    select = _WITH_ROW if traits else ROWS
    rows = conn.execute(f"{select}WHERE {AMONG}", (scope, json.dumps(seqs))).fetchall()
    if not rows:
        return []
    scores = cosines(arrays(rows)[1], query).tolist()
    return [
        _Row(int(r[0]), str(r[1]), x, r[3:] if traits else None)
        for r, x in zip(rows, scores, strict=True)
    ]


def search_width(size: int, built_with: int = EXPANSION_ADD) -> int:
    """How many candidates a query explores in a graph of ``size`` vectors built exploring
    ``built_with``: EXPANSION_SEARCH up to 1M vectors (100k for a narrower build), growing
    as the square root of the size beyond."""
    anchor = 1e5 if built_with <= NARROW_BUILD else 1e6
    return min(WIDEST, max(EXPANSION_SEARCH, round(EXPANSION_SEARCH * math.sqrt(size / anchor))))


def _restored(usearch: Any, path: Path, size: int, *, view: bool = False) -> Index | None:
    """The index file at ``path`` (memory-mapped for a ``view``); None, and logged, when
    it is missing, cut short or not the ``size`` its row says: it is then built again."""
    if not path.exists():
        log.warning("a scope's vector index %s is missing; it is built again", path)
        return None
    try:
        index = usearch.Index.restore(str(path), view=view)
    except Exception as exc:  # usearch raises ValueError and RuntimeError alike
        log.warning("a scope's vector index %s is unreadable (%s); it is built again", path, exc)
        return None
    if index is None or len(index) != size:
        log.warning("a scope's vector index %s is not the size its row says", path)
        return None
    return index  # type: ignore[no-any-return]


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
