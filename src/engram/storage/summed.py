"""A full-text question's best rows, its words' scores summed in the process.

Each part is one word of the question: the rows (facts' sequence numbers) holding it, a
row once, and the word's score in each. A row's score is the sum of its parts' scores,
added in the parts' order (as the servers' statements add them), and the best are kept,
ties to the older row. SQLite's text index and PostgreSQL's copies of postings rank so.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

SAMPLED = 32  # values sampled for each of a query's best, to find a floor for them
MARGIN = 4  # the floor: about this many times as many values reach it
# Rows summed in an array spanning their seqs while it is at most this many times as long
# as their postings; beyond (a scope's rows spread among many others'), by unique seq.
DENSE_SPAN = 16

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def best(parts: Sequence[tuple[Ints, Floats]], limit: int) -> tuple[Ints, Floats]:
    """The ``limit`` rows scoring most over ``parts`` and their scores, best first, ties
    to the older row (every row tied with the last one kept is considered)."""
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    low = min(int(seqs.min()) for seqs, _ in parts)
    high = max(int(seqs.max()) for seqs, _ in parts)
    postings = sum(seqs.shape[0] for seqs, _ in parts)
    if high - low + 1 <= DENSE_SPAN * postings:
        every = np.concatenate([seqs for seqs, _ in parts]) - low
        # one pass adding each row's scores in the parts' order (a row once a part)
        weights = np.concatenate([score for _, score in parts])
        scores = np.bincount(every, weights=weights, minlength=high - low + 1)
        rows: Ints | None = None
    else:
        rows, every = np.unique(np.concatenate([s for s, _ in parts]), return_inverse=True)
        scored = np.concatenate([score for _, score in parts])
        # weights make the counts float64 sums, added in order too
        scores = np.bincount(every, weights=scored, minlength=rows.shape[0]).astype(np.float64)
    kept = limit * len(parts)  # a row appears once per part: these hold `limit` rows
    if every.shape[0] > kept:
        values = scores[every]
        every = every[values >= floor(values, kept)]
    chosen = np.unique(every)  # in the order of the rows' seqs, either way
    order = chosen[np.lexsort((chosen, -scores[chosen]))][:limit]
    seqs = order + low if rows is None else rows[order]
    return seqs.astype(np.int64), scores[order]


def among(
    parts: Sequence[tuple[Ints, Floats]], allowed: Collection[int]
) -> list[tuple[Ints, Floats]]:
    """Each part's rows and scores among the ``allowed`` rows, parts left with none
    dropped (a filter narrows which rows answer, not their scores)."""
    if not len(allowed):
        return []
    if isinstance(allowed, np.ndarray):
        rows = allowed
    else:
        rows = np.fromiter(allowed, np.int64, len(allowed))
    kept = [(seqs, scores, np.isin(seqs, rows, kind="table")) for seqs, scores in parts]
    return [(seqs[k], scores[k]) for seqs, scores, k in kept if k.any()]


def floor(values: Floats, kept: int) -> float:
    """A score that at least ``kept`` of ``values`` reach and no higher than the
    ``kept``-th largest: found on a strided sample of ``SAMPLED`` values for each one
    kept (the value that about ``MARGIN`` times ``kept`` of them would reach), a
    partition of a few thousand values instead of a common term's 100k, and checked;
    where the check fails, the ``kept``-th largest itself."""
    step = values.shape[0] // (kept * SAMPLED)
    if step >= 2:
        sample = values[::step]
        rank = min(sample.shape[0], MARGIN * kept // step + 1)
        low = float(np.partition(sample, sample.shape[0] - rank)[sample.shape[0] - rank])
        if int(np.count_nonzero(values >= low)) >= kept:
            return low
    return float(np.partition(values, values.shape[0] - kept)[values.shape[0] - kept])
