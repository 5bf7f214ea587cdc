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
a later change; the scrub therefore commits one small write of its own (the count of
scrubs, a row of ``meta``, whose page it reads after the zeroing), and every connection,
in this process or another, drops its cached pages at its next transaction, as it does
after any other connection's commit.

The pages are read from the operating system's cache through a memory map, a block at a
time, with numpy: 0.28 s for a 1.75 GB file, where a ``VACUUM`` of the 1.15M-fact store
took 23.1 s.
"""

from __future__ import annotations

import logging
import mmap
import os

import numpy as np

from engram.storage.sqlite.driver import sqlite3

log = logging.getLogger("engram.storage")

# The page types of a b-tree page (interior and leaf, index and table), from the first
# byte of its header; any other first byte (an overflow or free page) is passed over.
_BTREE = np.zeros(256, dtype=bool)
_BTREE[[2, 5, 10, 13]] = True
_INTERIOR = (2, 5)  # their headers are 12 bytes, the leaves' 8
_FILE_HEADER = 100  # the first page's b-tree header follows the file's header
_COUNTED = (
    "INSERT INTO meta (key, value) VALUES ('scrubs', '1') "
    "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)
_BLOCK_PAGES = 8192  # pages read at a time (64 MiB of 8 KiB pages)
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
            if _log_bytes(path):
                conn.execute("ROLLBACK")
                log.info("a write came between a forget and its scrub; the next one scrubs")
                return None
            zeroed = _zero(path, dirty_pages(path))
            conn.execute(_COUNTED)  # a commit: the other connections' caches go
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return zeroed
    finally:
        conn.close()


def dirty_pages(path: str) -> list[tuple[int, int, int]]:
    """Each b-tree page of the file whose unused region holds a byte other than zero:
    (its offset in the file, where the region starts and ends within it)."""
    found: list[tuple[int, int, int]] = []
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size < _FILE_HEADER:
            return found
        header = file.read(_FILE_HEADER)
        page = _page_bytes(header)
        pages = size // page
        if not pages or pages >= _PAGES_AT_MOST or header[52:56] != bytes(4):
            # a file with pointer-map pages (auto-vacuum, which engram does not set) or
            # too large to tell a b-tree page by its first byte is not read this way
            log.warning("the pages of %s were not scrubbed: not a layout this reads", path)
            return found
        with mmap.mmap(file.fileno(), pages * page, access=mmap.ACCESS_READ) as view:
            whole = np.frombuffer(view, dtype=np.uint8).reshape(pages, page)
            for first in range(0, pages, _BLOCK_PAGES):
                block = whole[first : first + _BLOCK_PAGES]
                found += _dirty_in(block, first, page)
            del whole, block  # the map closes only once no array views it
    return found


def _dirty_in(block: np.ndarray, first: int, page: int) -> list[tuple[int, int, int]]:
    header = block[:, :12].astype(np.int64)
    start = np.zeros(len(block), dtype=np.int64)  # where each page's b-tree header is
    if first == 0:
        header[0] = block[0, _FILE_HEADER : _FILE_HEADER + 12]
        start[0] = _FILE_HEADER
    kind = header[:, 0]
    cells = header[:, 3] * 256 + header[:, 4]
    low = start + np.where(np.isin(kind, _INTERIOR), 12, 8) + 2 * cells
    high = header[:, 5] * 256 + header[:, 6]
    high[high == 0] = 65_536  # the format's spelling of a 64 KiB page's end
    rows = np.flatnonzero(_BTREE[kind] & (low < high) & (high <= page))
    if not len(rows):
        return []
    # One pass over the block: OR-reduce each region [low, high) and the span between it
    # and the next (which starts further on, so every span is non-empty); keep the first.
    flat = block.reshape(-1)
    bounds = np.empty(2 * len(rows), dtype=np.int64)
    bounds[0::2] = rows * page + low[rows]
    bounds[1::2] = rows * page + high[rows]
    if bounds[-1] == len(flat):  # the last region runs to the block's end
        bounds = bounds[:-1]
    held = np.bitwise_or.reduceat(flat, bounds)[0::2]
    return [
        ((first + int(r)) * page, int(low[r]), int(high[r])) for r in rows[np.flatnonzero(held)]
    ]


def _zero(path: str, regions: list[tuple[int, int, int]]) -> int:
    if not regions:
        return 0
    fd = os.open(path, os.O_WRONLY)
    try:
        for offset, low, high in regions:
            os.pwrite(fd, bytes(high - low), offset + low)
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(regions)


def _page_bytes(header: bytes) -> int:
    size = int.from_bytes(header[16:18], "big")
    return 65_536 if size == 1 else size


def _log_bytes(path: str) -> int:
    try:
        return os.stat(path + "-wal").st_size
    except FileNotFoundError:
        return 0
