"""Exact nearest-vector search in large scopes, done mostly in a smaller space.

A scope's vectors are projected once onto the principal directions of their own second
moment (a third of the dimensions), and each row keeps the length of what the projection
drops (its residual). A query then costs one product over the projected rows, an exact
score for the best few hundred of them, and a bound: by Cauchy-Schwarz a row's true score
is at most its projected score plus its residual times the query's residual, so every row
whose bound still reaches the ``limit``-th exact score is scored exactly too. Nothing is
approximated: the answer is the exact top ``limit``. The basis only decides how fast
that is; when vectors do not concentrate (few rows pruned), the caller searches plainly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engram.storage.sql.dialect import cosines

F32 = npt.NDArray[np.float32]
Indices = npt.NDArray[np.intp]

# Below this many rows a plain product over the scope costs about a millisecond.
PROJECT_ABOVE = 20_000
# A basis holding less of the rows' energy than this prunes too little to pay.
MIN_ENERGY = 0.85
# Rows sampled to fit the basis: a 384x384 second moment settles long before 100k rows.
FIT_SAMPLE = 20_000
# Candidates scored exactly before the bound is applied, per result asked for.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 200
# Float32 rounding in the projected scores, far above its real size (~1e-6).
SLACK = 1e-4


@dataclass
class Projection:
    """The basis, and every row's projected coordinates and residual length."""

    basis: F32  # (dimension, reduced), orthonormal columns
    fitted_on: int
    rows: F32
    residuals: npt.NDArray[np.float32]
    count: int = 0

    @classmethod
    def fit(cls, matrix: F32) -> Projection | None:
        """A projection of ``matrix``'s rows, or None when its vectors do not concentrate."""
        count, dimension = matrix.shape
        step = max(1, count // FIT_SAMPLE)
        sample = matrix[::step].astype(np.float64)
        values, vectors = np.linalg.eigh(sample.T @ sample)
        reduced = max(1, dimension // 3)
        total = float(values.sum())
        if total <= 0 or float(values[-reduced:].sum()) / total < MIN_ENERGY:
            return None
        basis = np.ascontiguousarray(vectors[:, ::-1][:, :reduced], dtype=np.float32)
        empty = np.empty((0, reduced), np.float32)
        projection = cls(basis, count, empty, np.empty(0, np.float32))
        projection.extend(matrix)
        return projection

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.residuals.nbytes + self.basis.nbytes)

    def extend(self, new_rows: F32) -> None:
        """Projects rows appended to the scope (in the scope's row order)."""
        added = new_rows.shape[0]
        if added == 0:
            return
        need = self.count + added
        if need > self.rows.shape[0]:
            capacity = max(need, 2 * self.rows.shape[0], 64)
            rows = np.empty((capacity, self.basis.shape[1]), np.float32)
            rows[: self.count] = self.rows[: self.count]
            residuals = np.empty(capacity, np.float32)
            residuals[: self.count] = self.residuals[: self.count]
            self.rows, self.residuals = rows, residuals
        projected = new_rows @ self.basis
        # |row|^2 = |projected|^2 + |residual|^2 (orthonormal basis), summed in float64.
        whole = np.einsum("ij,ij->i", new_rows, new_rows, dtype=np.float64)
        kept = np.einsum("ij,ij->i", projected, projected, dtype=np.float64)
        self.rows[self.count : need] = projected
        self.residuals[self.count : need] = np.sqrt(np.maximum(whole - kept, 0.0))
        self.count = need

    def search(
        self,
        matrix: F32,
        count: int,
        query: F32,
        allowed: npt.NDArray[np.bool_] | None,
        limit: int,
    ) -> tuple[Indices, F32] | None:
        """Indices among the first ``count`` rows holding the exact top ``limit`` scores
        (with those scores, in no order; possibly a few more rows), or None when the bound
        prunes too little to pay."""
        count = min(count, self.count)  # rows appended since the caller looked are not its
        wanted = max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * limit)
        if wanted >= count:  # as much as the whole product: the caller does that
            return None
        reduced_query = self.basis.T @ query
        query_residual = float(np.linalg.norm(query - self.basis @ reduced_query))
        approx = self.rows[:count] @ reduced_query
        if allowed is not None:
            approx = np.where(allowed, approx, np.float32(-np.inf))
        picked = np.argpartition(-approx, wanted - 1)[:wanted]
        picked = picked[np.isfinite(approx[picked])]
        exact = cosines(matrix[picked], query)
        if exact.shape[0] < limit:
            return None
        threshold = np.partition(exact, exact.shape[0] - limit)[exact.shape[0] - limit]
        bound = approx + self.residuals[:count] * np.float32(query_residual)
        bound[picked] = -np.inf
        rest = np.flatnonzero(bound >= threshold - SLACK)
        if rest.shape[0] > count // 4:
            return None
        if rest.shape[0]:
            picked = np.concatenate([picked, rest])
            exact = np.concatenate([exact, cosines(matrix[rest], query)])
        return picked, exact
