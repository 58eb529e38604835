"""Grow a tree whose leaves hold a vector: one structure for every output.

XGBoost's ``multi_strategy="multi_output_tree"``: each split maximises the gain
summed over the K outputs (``_splitting.find_best_split_outputs``) and each
leaf holds K values, one Newton step per output. The tree is returned as K
trees of one structure (one per output, each with its output's leaf values,
covers and gains), which is how the ensemble stores it: prediction, model
files and SHAP values treat them like any other trees.

The growth follows ``_expansion.OpenNodes``, ``_expand_ahead.TreeGrower``'s order
(depthwise: the oldest open node first; lossguide: the largest gain, ties to the
oldest), with the rows of
a node partitioned stably, the histograms of the child of the smaller hessian
sum built (one per output, ``_node_histograms.output_histograms``) and the other
child's derived by subtraction. With one output it grows the trees ``TreeGrower`` grows.
"""
import numpy as np

from ..kernels._column_sampler import ColumnSampler
from ..kernels._node_histograms import output_histograms
from ..kernels._partition import partition_column, py_partition_sparse
from ..kernels._splitting import find_best_split_outputs
from ._expansion import OpenNodes
from ._nodes import node_records
from .binned_grower import BinnedGrower
from .grower_params import check_pairs


class _Node:
    # ``rows``: the node's rows, a view of the tree's row array from ``start``
    __slots__ = ("rows", "start", "hist", "sums", "depth", "split")

    def __init__(self, rows, start, hist, sums, depth):
        self.rows, self.start, self.hist, self.sums, self.depth = rows, start, hist, sums, depth
        self.split = None   # find_best_split_outputs' answer: None, or the split


class VectorLeafGrower(BinnedGrower):
    """Grows trees whose leaves hold a vector of K values on a binned matrix.

    The same construction as ``_expand_ahead.TreeGrower`` (the binned matrix, dense or a
    ``binning.SparseBinned``, its bins and thresholds, a ``GrowerParams``);
    monotone and interaction constraints and quantised gradients are refused.
    The engine options of ``GrowerParams`` do not apply.
    """

    kind = "trees whose leaves hold a vector"

    def _histograms(self, pairs, rows):
        """The rows' histograms (K, n_entries, 2) and their sums (K, 2)."""
        out = np.empty((pairs.shape[0], self.bin_offsets[-1], 2))
        totals = np.empty((pairs.shape[0], 2))
        all_rows = self.dense and rows.shape[0] == self.n_rows
        output_histograms(self.X, None if all_rows else rows, pairs, self.bin_offsets,
                          self.default_bin, out, totals, self.n_threads)
        return out, totals

    def _split_rows(self, rows, feature, bin, default_left):
        """The node's rows partitioned in place (stable): (left rows, right rows)."""
        if self.dense:
            n_left = partition_column(self.columns[feature], rows, bin,
                                      self.n_bins[feature], default_left, self.n_threads)
        else:
            n_left = py_partition_sparse(self.X, rows, feature, bin, default_left,
                                         self.n_threads)
        return rows[:n_left], rows[n_left:]

    def _find_split(self, node, mask):
        params = self.params
        if (params.max_depth > 0 and node.depth >= params.max_depth) or node.rows.shape[0] < 2:
            return None
        return find_best_split_outputs(node.hist, self.n_bins, self.bin_offsets, node.sums,
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
        columns = ColumnSampler(self.n_features, params)
        columns.begin(seed)
        hist, sums = self._histograms(pairs, rows)
        if not np.all(np.isfinite(sums)):
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        nodes = [_Node(rows, 0, hist, sums, 0)]
        splits = {}     # parent id -> (feature, bin, default_left, gains per output, children)
        nodes[0].split = self._find_split(nodes[0], columns.mask(0, 0))
        opened = OpenNodes(params.lossguide)
        if nodes[0].split is not None:
            opened.push(0, nodes[0].split[0])
        n_leaves = 1
        while opened and (params.max_leaves == 0 or n_leaves < params.max_leaves):
            parent_id = opened.pop()
            parent = nodes[parent_id]
            gain, f, b, default_left, left_sums, per_output = parent.split
            left_rows, right_rows = self._split_rows(parent.rows, f, b, default_left)
            sums_l, sums_r = left_sums, parent.sums - left_sums
            depth = parent.depth + 1
            may_split = params.max_depth == 0 or depth < params.max_depth
            # (the child of the smaller hessian sum over the outputs: the choice the
            # level-wise trainer makes before the rows are partitioned)
            small_left = np.sum(sums_l[:, 1]) <= np.sum(sums_r[:, 1])
            h_l = h_r = None
            if may_split:
                small = self._histograms(pairs, left_rows if small_left else right_rows)[0]
                large = parent.hist
                large -= small
                h_l, h_r = (small, large) if small_left else (large, small)
            parent.hist = None
            ids = (len(nodes), len(nodes) + 1)
            children = (_Node(left_rows, parent.start, h_l, sums_l, depth),
                        _Node(right_rows, parent.start + left_rows.shape[0], h_r, sums_r, depth))
            nodes.extend(children)
            n_leaves += 1
            splits[parent_id] = (f, b, default_left, per_output, ids)
            if may_split:
                for i, child in zip(ids, children):
                    child.split = self._find_split(child, columns.mask(i, depth))
                    if child.split is not None:
                        opened.push(i, child.split[0])
                    else:
                        child.hist = None
        return self._emit(nodes, splits, rows, K, learning_rate, raw)

    def _emit(self, nodes, splits, rows, K, learning_rate, raw):
        """The K trees of the grown structure; adds the leaf values to ``raw`` on
        ``rows``, the tree's row array (each leaf's rows a range of it)."""
        params = self.params
        leaf_of = np.empty(self.n_rows, dtype=np.intp)   # each grown row's node
        for i, node in enumerate(nodes):
            if i not in splits:
                leaf_of[node.rows] = i
        split = sorted(splits)
        f = np.array([splits[i][0] for i in split], dtype=np.intp)
        b = np.array([splits[i][1] for i in split], dtype=np.intp)
        gains = np.array([splits[i][3] for i in split]).reshape(len(split), K)
        sums = np.array([node.sums for node in nodes])        # (n, K, 2)
        out = np.array([node_records(
            [learning_rate * params.leaf_weight(g, h)
             for g, h in sums[:, k]],
            sums[:, k, 1], [node.rows.shape[0] for node in nodes],
            [node.depth for node in nodes], split, f,
            self.thresholds[self.bin_offsets[f] + b], [splits[i][2] for i in split],
            gains[:, k], [splits[i][4][0] for i in split], [splits[i][4][1] for i in split],
            bin_threshold=b) for k in range(K)])
        # (gathering the values row by row: adding at the rows in their partition
        # order would scatter over raw)
        table = out["value"].T
        if rows.shape[0] == self.n_rows:
            raw += table[leaf_of]
        else:
            ordered = np.sort(rows)
            raw[ordered] += table[leaf_of[ordered]]
        self._last = (rows, np.array([node.start for node in nodes], dtype=np.intp),
                      np.array([node.start + node.rows.shape[0] for node in nodes],
                               dtype=np.intp))
        return list(out)
