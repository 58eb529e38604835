"""Grow a tree whose leaves hold a vector: one structure for every output.

XGBoost's ``multi_strategy="multi_output_tree"``: each split maximises the gain
summed over the K outputs (``_splitting.find_best_split_outputs``) and each
leaf holds K values, one Newton step per output. The tree is returned as K
trees of one structure (one per output, each with its output's leaf values,
covers and gains), which is how the ensemble stores it: prediction, model
files and SHAP values treat them like any other trees.

The tree grows as ``level_tree.TreeBuilder`` grows every tree of the Python
growers (in the expansion order of ``_expansion``), over the rows in memory: a
node's rows partitioned stably, the histograms of the child of the smaller
hessian sum built (one per output, ``_node_histograms.output_histograms``) and
the other child's derived by subtraction. With one output it grows the trees
``TreeGrower`` grows.
"""
import dataclasses

import numpy as np

from ..kernels._column_sampler import ColumnSampler
from ..kernels._node_histograms import output_histograms
from ..kernels._partition import partition_column, py_partition_sparse
from ..kernels._splitting import find_best_split_outputs
from .level_tree import TreeBuilder
from .binned_grower import BinnedGrower
from .grower_params import check_pairs


class VectorLeafGrower(BinnedGrower):
    """Grows trees whose leaves hold a vector of K values on a binned matrix.

    The same construction as ``_expand_ahead.TreeGrower`` (the binned matrix, dense or a
    ``binning.SparseBinned``, its bins and thresholds, a ``GrowerParams``);
    monotone and interaction constraints and quantised gradients are refused.
    The engine options of ``GrowerParams`` do not apply.
    """

    kind = "trees whose leaves hold a vector"

    def __init__(self, X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                 default_bin=None):
        super().__init__(X_binned, n_bins, bin_offsets, bin_thresholds,
                         dataclasses.replace(params, vector_leaves=True), n_threads,
                         default_bin)
        self._spare = []   # histogram buffers of closed nodes, reused (fresh pages cost)

    def _histograms(self, pairs, rows):
        """The rows' histograms (K, n_entries, 2) and their sums (K, 2)."""
        shape = (pairs.shape[0], self.bin_offsets[-1], 2)
        out = (self._spare.pop() if self._spare and self._spare[-1].shape == shape
               else np.empty(shape))
        totals = np.empty((pairs.shape[0], 2))
        all_rows = self.dense and rows.shape[0] == self.n_rows
        output_histograms(self.X, None if all_rows else rows, pairs, self.bin_offsets,
                          self.default_bin, out, totals, self.n_threads)
        return out, totals

    def _split_rows(self, rows, feature, bin, default_left):
        """The node's rows partitioned in place (stable): the left ones' count."""
        if self.dense:
            return partition_column(self.columns[feature], rows, bin, self.n_bins[feature],
                                    default_left, self.n_threads)
        return py_partition_sparse(self.X, rows, feature, bin, default_left, self.n_threads)

    def _find_split(self, hist, sums, count, depth, mask):
        """A node's best split (gain summed over the outputs), or None."""
        params = self.params
        if (params.max_depth > 0 and depth >= params.max_depth) or count < 2:
            return None
        return find_best_split_outputs(hist, self.n_bins, self.bin_offsets, sums,
                                       *params.penalties, params.gamma, mask, self.n_threads)

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        """Grow one tree on ``pairs`` (K, n_rows, 2) float32 (gradient, hessian) pairs
        of the K outputs (``output``: 0, the first); add its values to ``raw``
        (n_rows, K) on the rows it was grown on (``sample``: sorted row indices,
        None: all). ``seed`` drives the column sampling. Returns the tree as K
        NODE_DTYPE arrays of one structure, tree k holding output k's leaf values."""
        params, K = self.params, raw.shape[1]
        check_pairs(pairs.shape, self.n_rows, K)
        if output != 0 or raw.shape[0] != self.n_rows:
            raise ValueError(f"a tree of vector leaves fits every output: output 0 of raw "
                             f"({self.n_rows}, K), got output {output!r} of {raw.shape}")
        rows = (np.arange(self.n_rows, dtype=np.uint32) if sample is None
                else np.array(sample, dtype=np.uint32))
        if rows.shape[0] == 0:
            raise ValueError("there are no rows to grow a tree on")
        self._columns = ColumnSampler(self.n_features, params)
        self._columns.begin(seed)
        hist, sums = self._histograms(pairs, rows)
        if not np.all(np.isfinite(sums)):
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        # each node's rows, a range of ``rows`` (partitioned node by node), and the
        # histograms of the nodes that may split
        self._pairs, self._rows = pairs, rows
        self._ranges, self._hists = {0: (0, rows.shape[0])}, {0: hist}
        root = (sums, rows.shape[0],
                self._find_split(hist, sums, rows.shape[0], 0, self._columns.mask(0, 0)))
        trees, _ = TreeBuilder(self._level, self.thresholds, self.bin_offsets,
                               params).grow(0, root, learning_rate)
        # (gathering the values row by row: adding at the rows in their partition
        # order would scatter over raw)
        leaf_of = np.empty(self.n_rows, dtype=np.intp)   # each grown row's node
        for i in np.flatnonzero(trees[0]["is_leaf"]):
            start, end = self._ranges[i]
            leaf_of[rows[start:end]] = i
        table = np.array([nodes["value"] for nodes in trees]).T
        if rows.shape[0] == self.n_rows:
            raw += table[leaf_of]
        else:
            ordered = np.sort(rows)
            raw[ordered] += table[leaf_of[ordered]]
        bounds = np.array([self._ranges[i] for i in range(trees[0].shape[0])], dtype=np.intp)
        self._last = (rows, bounds[:, 0].copy(), bounds[:, 1].copy())
        self._spare += self._hists.values()
        self._pairs = self._hists = None
        return trees

    def _level(self, t, splits):
        """``TreeBuilder``'s batch of splits, applied to the rows in memory: each
        split node's rows partitioned, the histograms of the child ``build`` built
        and the other's derived, the children's best splits; returns the
        children's row counts and best splits."""
        counts, found = [], []
        for (node, f, b, default_left, left, right, build, sums_l, sums_r, depth,
             _, _) in splits:
            start, end = self._ranges[node]
            part = self._rows[start:end]
            n_left = self._split_rows(part, f, b, default_left)
            self._ranges[left] = (start, start + n_left)
            self._ranges[right] = (start + n_left, end)
            counts += [n_left, end - start - n_left]
            large = self._hists.pop(node)
            if build < 0:
                self._spare.append(large)
                found += [None, None]
                continue
            small = self._histograms(self._pairs, part[:n_left] if build == left
                                     else part[n_left:])[0]
            large -= small
            for c, sums, n in ((left, sums_l, counts[-2]), (right, sums_r, counts[-1])):
                hist = small if c == build else large
                split = self._find_split(hist, sums, n, depth, self._columns.mask(c, depth))
                if split is not None:
                    self._hists[c] = hist
                else:
                    self._spare.append(hist)
                found.append(split)
        return counts, found
