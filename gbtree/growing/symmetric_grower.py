"""Grow a symmetric (oblivious) tree: one split per level (``grow_policy="symmetric"``).

CatBoost's trees: every node of a level tests the same feature and threshold,
so a row's leaf is the bits of ``d`` comparisons. A level's split maximises the
gain summed over the level's nodes (``_splitting.find_best_split_outputs`` with
the nodes' histograms in place of the outputs'): valid when the children's
hessian sums, averaged over the nodes, are > 0 and >= ``min_child_weight``, and
kept when the summed gain is at least ``gamma`` per node split. Every node of
the level is split, so a node may have an empty child (its leaf value is 0).
Missing values go the level's default direction in every node.

The tree is stored as an ordinary tree, complete to its depth, its nodes
numbered level by level (node ``i``'s children are ``2i + 1`` and ``2i + 2``):
prediction, model files and SHAP values read it as any other, and
``_predictor.Forest`` recognises it and predicts it with the symmetric walk.
"""
import dataclasses

import numpy as np

from ..kernels._column_sampler import ColumnSampler
from ..kernels._node_histograms import level_histograms, output_histograms
from ..kernels._leaf_rows import add_leaf_values
from ..kernels._partition import partition_level, py_partition_sparse
from ..kernels._splitting import find_best_split_outputs
from .binned_grower import BinnedGrower
from .grower_params import check_pairs
from .level_tree import TreeBuilder, allowed_features

# the deepest symmetric tree (2**16 leaves), as CatBoost's
MAX_SYMMETRIC_DEPTH = 16


class SymmetricGrower(BinnedGrower):
    """Grows symmetric trees on a binned matrix, depth ``max_depth``.

    The same construction as ``_expand_ahead.TreeGrower`` (the binned matrix, dense or a
    ``binning.SparseBinned``, its bins and thresholds, a ``GrowerParams``);
    ``max_leaves``, lossguide growth, monotone constraints and quantised gradients
    are refused. Column sampling draws one set of features per level
    (``colsample_bynode`` acts as ``colsample_bylevel``); with interaction
    constraints a level may split on a feature when it and the features of the
    levels above lie in one group (a feature in no group: only with itself). The
    engine options of ``GrowerParams`` do not apply.
    """

    kind = "symmetric trees"
    interactions = True

    def __init__(self, X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                 default_bin=None):
        if params.lossguide or params.max_leaves or not 1 <= params.max_depth <= \
                MAX_SYMMETRIC_DEPTH:
            raise ValueError(f"symmetric trees grow level by level to max_depth (1 to "
                             f"{MAX_SYMMETRIC_DEPTH}), without max_leaves")
        super().__init__(X_binned, n_bins, bin_offsets, bin_thresholds,
                         dataclasses.replace(params, symmetric=True), n_threads, default_bin)
        self._buffers = None

    def _root_histogram(self, pairs, rows, out):
        """The tree's rows' histogram into ``out`` (1, n_entries, 2); returns their
        (G, H)."""
        totals = np.zeros((1, 2))
        all_rows = self.dense and rows.shape[0] == self.n_rows
        output_histograms(self.X, None if all_rows else rows, pairs, self.bin_offsets,
                          self.default_bin, out, totals, self.n_threads)
        return totals[0]

    def _split_rows(self, rows, bounds, feature, bin, default_left):
        """Each node's rows ``rows[start:end]`` (``bounds``) partitioned in place
        (stable); returns their left counts."""
        if self.dense:
            return partition_level(self.columns[feature], rows, bounds, bin,
                                   self.n_bins[feature], default_left, self.n_threads)
        return np.array([py_partition_sparse(self.X, rows[start:end], feature, bin, default_left,
                                             self.n_threads) if end > start else 0
                         for start, end in bounds], dtype=np.int64)

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        """Grow one tree on ``pairs`` (1, n_rows, 2); add its values to
        ``raw[:, output]`` on the rows it was grown on (``sample``: sorted row
        indices, None: all). ``seed`` drives the column sampling. Returns ``[the
        tree]`` (NODE_DTYPE, level order)."""
        params, n = self.params, self.n_rows
        check_pairs(pairs.shape, n, 1)
        grown = (np.arange(n, dtype=np.uint32) if sample is None
                 else np.array(sample, dtype=np.uint32))
        if grown.shape[0] == 0:
            raise ValueError("there are no rows to grow a tree on")
        self._rows = grown.copy()     # partitioned level by level
        self._columns = ColumnSampler(self.n_features, params)
        self._columns.begin(seed)
        E = self.bin_offsets[-1]
        if self._buffers is None:    # a level's histograms and its children's, reused
            most = 2 ** (params.max_depth - 1)
            self._buffers = (np.empty((most, E, 2)), np.empty((most, E, 2)))
        self._hist = self._buffers[0][:1]
        sums = self._root_histogram(pairs, self._rows, self._hist)
        if not np.all(np.isfinite(sums)):
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        # each level's nodes' (start, end) in ``rows``, in level order
        self._pairs, self._bounds, self._used = pairs, [np.array([[0, grown.shape[0]]])], []
        root = (sums, grown.shape[0], self._scan(sums[None, :], 0))
        out, _ = TreeBuilder(self._level, self.thresholds, self.bin_offsets,
                             params).grow(0, root, learning_rate)
        leaves = out[2 ** (len(self._bounds) - 1) - 1:]
        add_leaf_values(self._rows, self._bounds[-1], np.ascontiguousarray(leaves["value"]),
                        raw, output, self.n_threads)
        self._last = (self._rows,
                      np.concatenate([b[:, 0] for b in self._bounds]).astype(np.intp),
                      np.concatenate([b[:, 1] for b in self._bounds]).astype(np.intp))
        self._pairs = self._hist = None
        return [out]

    def _scan(self, sums, depth):
        """The best split of the level at ``depth`` (its nodes' histograms in
        ``_hist``, their ``sums``), the same for every node, or None."""
        params = self.params
        # (a level has one split: its node-level draw is keyed by the depth)
        mask = allowed_features(params.interaction_groups, self.n_features,
                                self._columns.mask(depth, depth), self._used)
        if mask is not None and not mask.any():
            return None
        return find_best_split_outputs(self._hist, self.n_bins, self.bin_offsets, sums,
                                       *params.penalties, params.gamma * sums.shape[0],
                                       mask, self.n_threads)

    def _level(self, t, splits):
        """``TreeBuilder``'s level of a symmetric tree, applied to the rows in memory:
        every node's rows partitioned, the histograms of the children ``build``
        built and the others derived, the next level's best split; returns the
        children's row counts and [that split]."""
        m = len(splits)
        _, f, b, default_left = splits[0][:4]
        self._used.append(f)
        parent_bounds = self._bounds[-1]
        n_left = self._split_rows(self._rows, parent_bounds, f, b, default_left)
        child_bounds = np.empty((2 * m, 2), dtype=np.int64)
        child_bounds[0::2, 0] = parent_bounds[:, 0]
        child_bounds[0::2, 1] = child_bounds[1::2, 0] = parent_bounds[:, 0] + n_left
        child_bounds[1::2, 1] = parent_bounds[:, 1]
        self._bounds.append(child_bounds)
        counts = child_bounds[:, 1] - child_bounds[:, 0]
        if splits[0][6] < 0:   # (the last level)
            return counts, [None]
        small = np.array([2 * j + (split[6] == split[5]) for j, split in enumerate(splits)])
        child_hist = self._buffers[(len(self._bounds) - 1) % 2][:2 * m]
        level_histograms(self.X, self._rows, np.ascontiguousarray(child_bounds[small]),
                         self._pairs[0], self.bin_offsets, self.default_bin, child_hist,
                         small, self.n_threads)
        for i, s in enumerate(small):
            np.subtract(self._hist[i], child_hist[s], out=child_hist[s ^ 1])
        self._hist = child_hist
        child_sums = np.empty((2 * m, 2))
        child_sums[0::2] = [split[7] for split in splits]
        child_sums[1::2] = [split[8] for split in splits]
        return counts, [self._scan(child_sums, splits[0][9])]
