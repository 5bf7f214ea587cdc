"""The unused space of the file's pages, zeroed after words leave the store.

``PRAGMA secure_delete`` zeroes a row where it is deleted and a page when it is freed,
but a page that SQLite lays out again (a b-tree rebalanced as rows come and go) gets its
cells written afresh from its end, and what the region between its cell pointers and its
first cell held before is left there. A row moved that way while it lived leaves an old
copy behind, which outlives the row: of 1,000 rows deleted in a file of random inserts
and deletes, about 10 rows' words stayed in the file (BENCHMARKS.md, "Erasure on SQLite:
copies a rebuilt page leaves"). Only a ``VACUUM`` removed them, 23 s at 1.15M facts.

No part of SQLite reads that region: a page's header says where its cells start, and
the space before them counts as free. So after a write that erased words, and once the
log is checkpointed into the file and empty, :func:`scrub` reads every b-tree page's
header and writes zeros over that region where it holds anything, holding the write lock
so no page changes meanwhile (an empty log means no checkpoint copies a page either).
A connection that read a page before it is zeroed could write its old image back with
a later change; the scrub therefore commits one small write of its own (that no scrub
is due, a row of ``meta``, whose page it reads after the zeroing), and every connection,
in this process or another, drops its cached pages at its next transaction, as it does
after any other connection's commit.

The pages are read through a memory map, 64 MiB at a time, only their headers and those
regions: 4.6 ms for a 20k-fact store (27.5 MB) in the operating system's cache, 0.28 s
for the 1.15M-fact store (1.7 GB), where a ``VACUUM`` of that store took 23.1 s.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct

from engram.storage.sqlite.driver import sqlite3

log = logging.getLogger("engram.storage")

# The page types of a b-tree page (interior and leaf, index and table), from the first
# byte of its header; any other first byte (an overflow or free page) is passed over.
_BTREE = (2, 5, 10, 13)
_INTERIOR = (2, 5)  # their headers are 12 bytes, the leaves' 8
_FILE_HEADER = 100  # the first page's b-tree header follows the file's header
# Whether a scrub is due: set by each write that erased words, in its own transaction,
# and cleared by the scrub's own write. A scrub that could not run after its write (the
# log held, another write came first, the process ended) runs at the next erasing
# write's or when a store next opens the file.
_MARK = (
    "INSERT INTO meta (key, value) VALUES ('scrub_due', ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
# The file is mapped this much at a time: what the scan holds in memory stays this, not
# the file's size (a whole 1.7 GB file mapped at once raised the process's peak resident
# memory by as much).
_WINDOW_BYTES = 64 << 20
# A b-tree page's header: its kind, its first free block, its cells, where they start.
_PAGE_HEADER = struct.Struct(">BHHH")
# An overflow or free-list page starts with a page number, whose first byte is 0 or 1
# below this many pages (268 GB at 8 KiB): no such page passes for a b-tree page.
_PAGES_AT_MOST = 2**25


def scrub(path: str, *, busy_ms: int) -> int | None:
    """Zeroes the unused region of every page of the file at ``path`` that holds
    anything there, then commits its own write (in the log, for the caller's next
    checkpoint); the pages zeroed, or None when the log was not empty once the write
    lock was held (another writer came first: the next erasing write scrubs). Waits up
    to ``busy_ms`` for the write lock."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=busy_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            if log_bytes(path):
                conn.execute("ROLLBACK")
                log.info("a write came between a forget and its scrub; the next one scrubs")
                return None
            zeroed = _zero(path, dirty_pages(path))
            mark(conn, due=False)  # a commit: the other connections' caches go
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return zeroed
    finally:
        conn.close()


def mark(conn: sqlite3.Connection, *, due: bool) -> None:
    """Says, in ``conn``'s transaction, whether a scrub is due."""
    conn.execute(_MARK, ("1" if due else "0",))


def due(conn: sqlite3.Connection) -> bool:
    """Whether a write erased words since the file's last scrub (:func:`mark`)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'scrub_due'").fetchone()
    return row is not None and row[0] == "1"


def dirty_pages(path: str) -> list[tuple[int, int, int]]:
    """Each b-tree page of the file whose unused region holds a byte other than zero:
    (its offset in the file, where the region starts and ends within it)."""
    found: list[tuple[int, int, int]] = []
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        header = file.read(_FILE_HEADER)
        if len(header) < _FILE_HEADER:
            return found
        page = _page_bytes(header)
        pages = size // page
        if not pages or pages >= _PAGES_AT_MOST or header[52:56] != bytes(4):
            # a file with pointer-map pages (auto-vacuum, which engram does not set) or
            # too large to tell a b-tree page by its first byte is not read this way
            log.warning("the pages of %s were not scrubbed: not a layout this reads", path)
            return found
        zeros = bytes(page)
        window = max(_WINDOW_BYTES // page, 1)  # pages mapped at a time
        for first in range(0, pages, window):
            count = min(window, pages - first)
            with mmap.mmap(
                file.fileno(), count * page, access=mmap.ACCESS_READ, offset=first * page
            ) as view:
                for number in range(first, first + count):
                    at = (number - first) * page
                    head = at + _FILE_HEADER if number == 0 else at  # its b-tree header
                    kind, _, cells, start = _PAGE_HEADER.unpack_from(view, head)
                    if kind not in _BTREE:
                        continue
                    low = head - at + (12 if kind in _INTERIOR else 8) + 2 * cells
                    high = start or 65_536  # 0: the format's spelling of a 64 KiB page's end
                    if low < high <= page and view[at + low : at + high] != zeros[: high - low]:
                        found.append((number * page, low, high))
    return found


def _zero(path: str, regions: list[tuple[int, int, int]]) -> int:
    if not regions:
        return 0
    with open(path, "r+b") as file:  # buffered writes, flushed and synced once
        for offset, low, high in regions:
            file.seek(offset + low)
            file.write(bytes(high - low))
        file.flush()
        os.fsync(file.fileno())
    return len(regions)


def _page_bytes(header: bytes) -> int:
    size = int.from_bytes(header[16:18], "big")
    return 65_536 if size == 1 else size


def log_bytes(path: str) -> int:
    """The bytes of the write-ahead log of the store at ``path`` (0: none yet)."""
    try:
        return os.stat(path + "-wal").st_size
    except FileNotFoundError:
        return 0
