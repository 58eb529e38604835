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
import numpy as np

from ..kernels._column_sampler import ColumnSampler
from ..kernels._node_histograms import level_histograms, output_histograms
from ..kernels._leaf_rows import add_leaf_values
from ..kernels._partition import partition_level, py_partition_sparse
from ..kernels._splitting import find_best_split_outputs
from ._nodes import node_records
from .binned_grower import BinnedGrower
from .grower_params import check_pairs

# the deepest symmetric tree (2**16 leaves), as CatBoost's
MAX_SYMMETRIC_DEPTH = 16


def allowed_features(groups, n_features, sampled, used):
    """The uint8 mask of the features a level may split on: the column sample's
    ``sampled`` (None: all) within the interaction constraints ``groups`` given the
    features ``used`` by the levels above (None: every feature)."""
    if not groups or not used:
        return sampled
    used = set(used)
    mask = np.zeros(n_features, dtype=np.uint8)
    for group in groups:
        if used <= set(group):
            mask[group] = 1
    if len(used) == 1 and not any(used <= set(group) for group in groups):
        mask[next(iter(used))] = 1      # a feature in no group: with itself
    return mask if sampled is None else mask & sampled


def build_children(child_sums):
    """Of each node's two children (``child_sums``: (G, H) of left, right, left, ...),
    the index of the one whose histogram is built, the other's being its parent's
    minus it: the one of the smaller hessian sum (the left on a tie)."""
    m = child_sums.shape[0] // 2
    return 2 * np.arange(m) + (child_sums[0::2, 1] > child_sums[1::2, 1])


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
        super().__init__(X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                         default_bin)
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
        rows = grown.copy()     # partitioned level by level
        columns = ColumnSampler(self.n_features, params)
        columns.begin(seed)
        E = self.bin_offsets[-1]
        if self._buffers is None:    # a level's histograms and its children's, reused
            most = 2 ** (params.max_depth - 1)
            self._buffers = (np.empty((most, E, 2)), np.empty((most, E, 2)))
        hist = self._buffers[0][:1]
        sums = self._root_histogram(pairs, rows, hist)[None, :]
        if not np.all(np.isfinite(sums)):
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        # per level: each node's (start, end) in ``rows``, its sums, and the split
        bounds = [np.array([[0, rows.shape[0]]])]
        all_sums = [sums]
        splits, gains = [], []
        for depth in range(params.max_depth):
            m = sums.shape[0]
            # (a level has one split: its node-level draw is keyed by the depth)
            mask = allowed_features(params.interaction_groups, self.n_features,
                                    columns.mask(depth, depth), [split[0] for split in splits])
            if mask is not None and not mask.any():
                break
            found = find_best_split_outputs(hist, self.n_bins, self.bin_offsets, sums,
                                            *params.penalties, params.gamma * m, mask,
                                            self.n_threads)
            if found is None:
                break
            _, f, b, default_left, left_sums, per_node = found
            splits.append((f, b, default_left))
            gains.append(per_node)
            parent_bounds = bounds[-1]
            n_left = self._split_rows(rows, parent_bounds, f, b, default_left)
            child_bounds = np.empty((2 * m, 2), dtype=np.int64)
            child_bounds[0::2, 0] = parent_bounds[:, 0]
            child_bounds[0::2, 1] = child_bounds[1::2, 0] = parent_bounds[:, 0] + n_left
            child_bounds[1::2, 1] = parent_bounds[:, 1]
            child_sums = np.empty((2 * m, 2))
            child_sums[0::2] = left_sums
            child_sums[1::2] = sums - left_sums
            if depth + 1 < params.max_depth:
                # the histogram of the child of the smaller hessian sum built, the
                # other's by subtraction (the level-wise trainer's choice, made before
                # the rows are partitioned)
                small = build_children(child_sums)
                child_hist = self._buffers[(depth + 1) % 2][:2 * m]
                level_histograms(self.X, rows, np.ascontiguousarray(child_bounds[small]),
                                 pairs[0], self.bin_offsets, self.default_bin, child_hist,
                                 small, self.n_threads)
                for i, s in enumerate(small):
                    np.subtract(hist[i], child_hist[s], out=child_hist[s ^ 1])
                hist = child_hist
            bounds.append(child_bounds)
            all_sums.append(child_sums)
            sums = child_sums
        out = self._emit(bounds, all_sums, splits, gains, learning_rate)
        leaves = out[2 ** len(splits) - 1:]
        add_leaf_values(rows, bounds[-1], np.ascontiguousarray(leaves["value"]), raw, output,
                        self.n_threads)
        self._last = (rows, np.concatenate([b[:, 0] for b in bounds]).astype(np.intp),
                      np.concatenate([b[:, 1] for b in bounds]).astype(np.intp))
        return [out]

    def _emit(self, bounds, all_sums, splits, gains, learning_rate):
        """The tree in level order."""
        params = self.params
        depth = len(splits)
        sums = np.concatenate(all_sums)
        ranges = np.concatenate(bounds)
        split = np.arange(2 ** depth - 1)          # (every node above the leaves)
        level = np.repeat(np.arange(depth), 2 ** np.arange(depth))
        f = np.array([splits[d][0] for d in level], dtype=np.intp)
        b = np.array([splits[d][1] for d in level], dtype=np.intp)
        return node_records(
            [learning_rate * params.leaf_weight(g, h)
             for g, h in sums],
            sums[:, 1], ranges[:, 1] - ranges[:, 0],
            np.repeat(np.arange(depth + 1), 2 ** np.arange(depth + 1)), split, f,
            self.thresholds[self.bin_offsets[f] + b], [splits[d][2] for d in level],
            np.concatenate(gains) if gains else (), 2 * split + 1, 2 * split + 2,
            bin_threshold=b)
