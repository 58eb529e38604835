"""The weighted quantile sketch of the XGBoost paper (Chen & Guestrin, 2016, appendix A).

A :class:`Summary` of a multiset D of weighted values holds its sorted distinct
values ``x_1 < ... < x_k`` and, for each, bounds on its ranks in D:

- ``rmin[i] <= r-(x_i)``: the total weight of the values of D below ``x_i``;
- ``rmax[i] >= r+(x_i)``: the total weight of the values of D up to ``x_i``;
- ``w[i] <= w(x_i)``: the weight of the values of D equal to ``x_i``.

For a value y between two entries the bounds come from its neighbours:
``r-(y) >= rmin[i] + w[i]`` for the largest ``x_i < y`` (0 if none) and
``r+(y) <= rmax[j] - w[j]`` for the smallest ``x_j > y`` (the total weight if
none). A summary is *eps-approximate* when, for every y,
``r+(y) - r-(y) - w(y) <= eps * total`` with these bounds: a query for the rank
``d`` then returns a value whose rank is within ``eps * total`` of d.

Summaries of parts of the data merge into a summary of the whole with the larger
of their errors, and pruning one to ``b + 1`` entries adds ``1 / b``: the
operations a distributed or out-of-core pass over the data needs.
:class:`Sketch` streams chunks through levels of merged summaries and keeps the
error of the final summary within the ``eps`` it was made with.
"""
import math

import numpy as np

__all__ = ["Summary", "Sketch"]


class Summary:
    """Sorted distinct ``values`` with ``rmin``, ``rmax`` and ``w`` (float64 arrays of
    one length), the ``total`` weight of the data summarised and ``eps``, the error
    bound the operations that made it guarantee."""

    __slots__ = ("values", "rmin", "rmax", "w", "total", "eps")

    def __init__(self, values, rmin, rmax, w, total, eps):
        self.values, self.rmin, self.rmax, self.w = values, rmin, rmax, w
        self.total, self.eps = float(total), float(eps)

    @classmethod
    def from_data(cls, values, weights=None, b=None):
        """The exact summary (``eps = 0``) of ``values`` (1-D; NaN skipped) with
        ``weights`` (non-negative; 1 by default). Zero weights count for nothing.
        ``b``: at most ``b + 1`` entries, as ``prune(b)`` gives them (the error
        ``1 / b`` when entries are dropped)."""
        values = np.asarray(values).ravel()
        if values.dtype != np.float32:   # (float32 values sort as they are: faster)
            values = values.astype(np.float64, copy=False)
        if weights is None:
            # (unweighted: the counts of the distinct values are the gaps between them)
            nan = np.isnan(values)
            values = np.sort(values[~nan] if nan.any() else values)
            n = values.size
            new = values[1:] != values[:-1]
            if b is not None and n and np.count_nonzero(new) + 1 > int(b) + 1:
                return cls._of_sorted(values, int(b))
            start = np.flatnonzero(np.r_[True, new]) if n else np.empty(0, dtype=np.intp)
            w = np.diff(np.r_[start, n]).astype(np.float64)
            return cls._of_distinct(values[start], w)
        weights = np.asarray(weights, dtype=np.float64).ravel()
        if weights.shape != values.shape:
            raise ValueError(f"weights must have one value per value: {weights.shape[0]} "
                             f"weights for {values.shape[0]} values")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("weights must be finite and non-negative")
        keep = ~np.isnan(values) & (weights > 0)
        values, weights = values[keep], weights[keep]
        order = np.argsort(values, kind="stable")
        values, weights = values[order], weights[order]
        # the first entry of each distinct value (np.unique would sort again)
        start = np.flatnonzero(np.r_[True, values[1:] != values[:-1]]) if values.size else (
            np.empty(0, dtype=np.intp))
        w = np.add.reduceat(weights, start) if values.size else np.empty(0)
        out = cls._of_distinct(values[start], w)
        return out if b is None else out.prune(b)

    @classmethod
    def _of_sorted(cls, values, b):
        """A summary of sorted unweighted values of more than ``b + 1`` distinct ones
        in ``b + 1`` entries or fewer: the values at ``b + 1`` evenly spaced positions
        with their exact ranks. Between two entries lie fewer than ``n / b`` values,
        so the error is ``1 / b``, the bound of ``prune(b)``."""
        n = values.size
        keep = np.unique(values[(np.arange(b + 1) * (n - 1)) // b])
        rmin = np.searchsorted(values, keep, side="left").astype(np.float64)
        rmax = np.searchsorted(values, keep, side="right").astype(np.float64)
        return cls(keep.astype(np.float64), rmin, rmax, rmax - rmin, float(n), 1.0 / b)

    @classmethod
    def _of_distinct(cls, distinct, w):
        """The exact summary of sorted distinct values of weights ``w``."""
        rmax = np.cumsum(w)
        rmin = rmax - w
        return cls(distinct.astype(np.float64), rmin, rmax, w, rmax[-1] if rmax.size else 0.0,
                   0.0)

    def __len__(self):
        return self.values.shape[0]

    def _bounds_at(self, y):
        """``(r-, r+, w)`` bounds of the sorted values y, in this summary or not."""
        k = len(self)
        i = np.searchsorted(self.values, y, side="left")
        here = i < k
        here[here] = self.values[i[here]] == y[here]
        below = np.where(i > 0, np.concatenate([[0.0], self.rmin + self.w])[i], 0.0)
        above = np.where(i < k, np.concatenate([self.rmax - self.w, [self.total]])[i],
                         self.total)
        ii = np.where(here, i, 0)
        rmin = np.where(here, self.rmin[ii] if k else 0.0, below)
        rmax = np.where(here, self.rmax[ii] if k else 0.0, above)
        w = np.where(here, self.w[ii] if k else 0.0, 0.0)
        return rmin, rmax, w

    def merge(self, other):
        """The summary of both data sets; its error is the larger of the two."""
        values = np.union1d(self.values, other.values)
        a, b = self._bounds_at(values), other._bounds_at(values)
        return Summary(values, a[0] + b[0], a[1] + b[1], a[2] + b[2],
                       self.total + other.total, max(self.eps, other.eps))

    def query(self, ranks):
        """For each rank d (0 <= d <= total), a value of the summary whose rank is
        within ``eps * total`` of d (the paper's query function)."""
        d = np.asarray(ranks, dtype=np.float64)
        if len(self) == 0:
            raise ValueError("an empty summary has no quantiles")
        mid = (self.rmin + self.rmax) / 2
        # i: the last entry whose mid-rank is <= d (-1: before the first)
        i = np.searchsorted(mid, d, side="right") - 1
        inner = (i >= 0) & (i < len(self) - 1)
        j = np.clip(i, 0, len(self) - 1)
        nxt = np.clip(i + 1, 0, len(self) - 1)
        left = 2 * d < self.rmin[j] + self.w[j] + self.rmax[nxt] - self.w[nxt]
        pick = np.where(inner, np.where(left, j, nxt), np.where(i < 0, 0, len(self) - 1))
        return self.values[pick]

    def prune(self, b):
        """At most ``b + 1`` entries: the answers to the ranks ``total * i / b``;
        the error grows by ``1 / b``."""
        b = int(b)
        if b < 1:
            raise ValueError(f"b must be at least 1, got {b}")
        if len(self) <= b + 1:
            return self
        keep = np.unique(self.query(self.total * np.arange(b + 1) / b))
        i = np.searchsorted(self.values, keep)
        return Summary(keep, self.rmin[i], self.rmax[i], self.w[i], self.total,
                       self.eps + 1.0 / b)

    def masses(self):
        """Each entry's weight with the weight between it and the next entry (``w``
        itself for an exact summary): the data spread over the entries, for cutting
        quantiles from a pruned summary."""
        if self.eps == 0 or len(self) == 0:
            return self.w
        return np.diff(np.r_[self.rmin, self.total])


class Sketch:
    """A streaming eps-approximate summary: ``push`` chunks of (values, weights),
    then ``summary()``.

    Chunks are summarised and merged like a binary counter: level l holds the
    summary of 2**l chunks. A chunk's summary and every merge are pruned to
    ``b = 2 * (MAX_LEVELS + 1) / eps`` entries, so a level's summary has an error of
    at most ``(l + 1) / b <= eps / 2``; ``summary()`` merges the levels (no error
    added) and prunes the result to ``2 / eps`` entries, adding ``eps / 2``.
    """

    MAX_LEVELS = 48   # 2**48 chunks

    def __init__(self, eps):
        if not 0 < eps < 1:
            raise ValueError(f"eps must be in (0, 1), got {eps!r}")
        self.eps = float(eps)
        self._level_b = math.ceil(2 * (self.MAX_LEVELS + 1) / self.eps)
        self._levels = []     # None or a Summary of 2**l chunks

    def push(self, values, weights=None):
        carry = Summary.from_data(values, weights, self._level_b)
        for level, held in enumerate(self._levels):
            if held is None:
                self._levels[level] = carry
                return self
            self._levels[level] = None
            carry = held.merge(carry).prune(self._level_b)
        if len(self._levels) >= self.MAX_LEVELS:
            raise ValueError(f"a sketch takes at most 2**{self.MAX_LEVELS} chunks")
        self._levels.append(carry)
        return self

    def summary(self, prune=True):
        """The summary of every chunk pushed, with ``eps`` at most the sketch's
        (``prune=False``: the levels merged as they are, at most ``eps / 2``, with up
        to ``2 * (MAX_LEVELS + 1) / eps`` entries a level)."""
        held = [s for s in self._levels if s is not None]
        if not held:
            return Summary.from_data(np.empty(0))
        out = held[0]
        for s in held[1:]:
            out = out.merge(s)
        return out.prune(math.ceil(2 / self.eps)) if prune else out
