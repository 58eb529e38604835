"""Grow a tree on sorted column blocks: exact greedy split finding
(``tree_method="exact"``) and the approximate algorithm with local proposals
(``"approx"``, ``approx_proposal="local"``).

The XGBoost paper's Algorithm 1 with its sparsity-aware enumeration
(Algorithm 3): every split between two distinct values of a feature among a
node's rows is a candidate, not only the edges of its bins. Its Algorithm 2
(approx) keeps only the candidates between hessian-weighted quantiles of each
feature, ``n_parts - 1`` of them at most, proposed here for each node from its
own rows (global proposals, once per tree, grow on histograms: ``approx.py``).
The blocks being sorted, the quantiles are exact (``_exact.local_bins``: a
summary of zero error, cut into ``n_parts`` parts of equal hessian), which the
streaming ``sketch`` module only approximates. The raw values
are read as float32 (as XGBoost's exact method reads them) and sorted once
per fit into column blocks (``_exact.sort_columns``); the tree grows level by
level (depthwise, to ``max_depth``), each level's splits found in one walk of
the blocks (``_exact.level_splits``), its rows moved to the next level by
their values (``_exact.split_positions``). A split's threshold is the float32
midpoint of the two values it separates (in float64: XGBoost takes it in
float32, where it may round onto one of them), and ``x <= threshold`` goes left.
"""
import numpy as np
import scipy.sparse as sp

from ..kernels._column_sampler import ColumnSampler
from ..kernels._exact import level_splits, local_bins, row_states, sort_columns, split_positions
from .grower_params import check_pairs
from .level_tree import TreeBuilder

# Entries whose positions and gradients are gathered at once, per thread: the
# paper's cache-aware buffer (an engine option of the grower: 0 walks without it).
EXACT_BUFFER = 32


def _sparse_blocks(X, absent_as_missing):
    """Column blocks of a CSR matrix: each feature's stored non-NaN entries, plus
    (absent entries being zeros) every absent row with the value 0."""
    n, F = X.shape
    C = X.tocsc()
    C.sort_indices()
    ptr, rows, values = [0], [], []
    for f in range(F):
        r = C.indices[C.indptr[f]:C.indptr[f + 1]].astype(np.uint32)
        v = C.data[C.indptr[f]:C.indptr[f + 1]].astype(np.float32)
        keep = ~np.isnan(v)
        r, v = r[keep], v[keep]
        if not absent_as_missing:
            absent = np.ones(n, dtype=bool)
            absent[C.indices[C.indptr[f]:C.indptr[f + 1]]] = False
            r = np.concatenate([r, np.flatnonzero(absent).astype(np.uint32)])
            v = np.concatenate([v, np.zeros(int(absent.sum()), dtype=np.float32)])
        order = np.lexsort((r, v))
        rows.append(r[order])
        values.append(v[order])
        ptr.append(ptr[-1] + r.shape[0])
    return (np.array(ptr, dtype=np.int64), np.concatenate(rows or [np.empty(0, np.uint32)]),
            np.concatenate(values or [np.empty(0, np.float32)]))


def column_blocks(X, absent_as_missing, n_threads):
    """``(blocks, XT, csr)``: the column blocks of X (``(col_ptr, col_rows,
    col_values)``, each feature's non-missing values in increasing order, float32)
    and X by column as the partition reads it: ``XT`` (dense, float32, one row per
    feature) or ``csr`` (the arrays of a CSR X and the value of its absent
    entries), the other None."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        csr = (np.ascontiguousarray(X.indptr, dtype=np.int64),
               np.ascontiguousarray(X.indices, dtype=np.int32),
               np.ascontiguousarray(X.data, dtype=np.float32),
               np.float32(np.nan if absent_as_missing else 0.0))
        return _sparse_blocks(X, absent_as_missing), None, csr
    XT = np.ascontiguousarray(np.asarray(X, dtype=np.float32).T)
    return sort_columns(XT, n_threads), XT, None


def check_depthwise(params, method):
    """The growers of exact and approx split finding grow depthwise to max_depth,
    without constraints or quantised gradients."""
    if params.lossguide or params.max_leaves or params.max_depth < 1:
        raise ValueError(f"{method} grows depthwise to max_depth >= 1 (no max_leaves, no "
                         f"grow_policy='lossguide')")
    if (params.monotone_constraints is not None or params.interaction_groups
            or params.quant_levels):
        raise ValueError(f"{method} supports neither monotone nor interaction constraints "
                         f"nor grad_quant_bins")


class ExactGrower:
    """Grows trees by exact greedy split finding on the raw feature values.

    ``X``: the training matrix (dense, NaN = missing, or CSR whose absent entries
    are 0, or missing with ``absent_as_missing``); ``params``: a ``GrowerParams``.
    Depthwise to ``max_depth`` only; monotone and interaction constraints and
    quantised gradients are refused. ``proposal`` (None: exact; ``"local"``: approx
    with ``n_parts`` parts of each node's hessian). ``buffer``: entries gathered at once
    per thread (0: none), which changes the speed, never the trees.
    """

    def __init__(self, X, params, n_threads, absent_as_missing=False, buffer=EXACT_BUFFER,
                 proposal=None, n_parts=255):
        if proposal not in (None, "local") or n_parts < 2:
            raise ValueError(f"proposal must be None or 'local' and n_parts >= 2, got "
                             f"{proposal!r} and {n_parts!r}")
        self.proposal, self.n_parts = proposal, n_parts
        check_depthwise(params, "tree_method='exact'" if proposal is None else
                        "tree_method='approx'")
        self.params, self.n_threads, self.buffer = params, n_threads, buffer
        self.n_rows, self.n_features = X.shape
        self.blocks, self.XT, self.csr = column_blocks(X, absent_as_missing, n_threads)
        self.has_missing = (np.diff(self.blocks[0]) < self.n_rows).astype(np.uint8)
        self._last = None

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        """Grow one tree on ``pairs`` (1, n_rows, 2) and add its values to
        ``raw[:, output]`` on the rows it was grown on (``sample``: sorted row
        indices, None: all); ``seed`` drives the column sampling. Returns ``[the
        tree]`` (NODE_DTYPE)."""
        n = self.n_rows
        check_pairs(pairs.shape, n, 1)
        rows = np.arange(n) if sample is None else np.asarray(sample, dtype=np.intp)
        if rows.shape[0] == 0:
            raise ValueError("there are no rows to grow a tree on")
        pos = np.full(n, -1, dtype=np.int32)
        pos[rows] = 0
        # each row's place among the nodes of the tree's last level (the kernels move
        # the rows level by level), and its leaf once its node is one
        self._state = row_states(pairs[0, :, 0], pairs[0, :, 1], pos)
        self._leaf_of = np.full(n, -1, dtype=np.int32)
        root = np.array([self._state["g"][rows].astype(np.float64).sum(),
                         self._state["h"][rows].astype(np.float64).sum()])
        if not np.all(np.isfinite(root)):
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        self._columns = ColumnSampler(self.n_features, self.params)
        self._columns.begin(seed)
        self._level_nodes = [0]
        found = self._scan(root[None, :], 0)[0]   # (max_depth >= 1)
        out, _ = TreeBuilder(self._level, None, None, self.params).grow(
            0, (root, rows.shape[0], found), learning_rate)
        self._move({})   # (the last level's nodes are leaves)
        raw[rows, output] += out["value"][self._leaf_of[rows]]
        self._last = (out, rows, self._leaf_of)
        return [out]

    def _scan(self, sums, depth):
        """The best split of each node of the last level (their ``sums``, at
        ``depth``), found in one walk of the blocks: (gain, feature, threshold,
        default_left, left sums), or None."""
        params, m = self.params, sums.shape[0]
        masks = [self._columns.mask(node, depth) for node in self._level_nodes]
        allowed = None if masks[0] is None else np.stack(masks)
        bins = (local_bins(*self.blocks, self._state, m, self.n_parts, self.n_threads)
                if self.proposal == "local" else None)
        gain, feature, threshold, default_left, left = level_splits(
            *self.blocks, self.has_missing, self._state, sums, allowed, *params.penalties,
            self.buffer, self.n_threads, bins)
        return [None if feature[i] < 0 or gain[i] < params.gamma else
                (float(gain[i]), int(feature[i]), threshold[i], bool(default_left[i]), left[i])
                for i in range(m)]

    def _move(self, splits):
        """The rows of the last level's nodes to the next level by ``splits`` (node ->
        (feature, threshold, default_left)), the others' rows to their leaf
        (``_exact.split_positions``); the next level's nodes are the split nodes'
        children, in order."""
        level = self._level_nodes
        m = len(level)
        feature = np.full(m, -1, dtype=np.int32)
        threshold, default_left = np.zeros(m), np.zeros(m, dtype=bool)
        left_pos = np.zeros(m, dtype=np.int32)
        order = {node: j for j, node in enumerate(splits)}   # (the children's order)
        for i, node in enumerate(level):
            if node in splits:
                feature[i], threshold[i], default_left[i] = splits[node]
                left_pos[i] = 2 * order[node]
        split_positions(self._state, self._leaf_of, np.asarray(level, dtype=np.int32), feature,
                        threshold, default_left.view(np.uint8), left_pos,
                        self.XT if self.csr is None else self.csr, self.n_threads)

    def _level(self, t, splits):
        """``TreeBuilder``'s level of splits (all of the level's, depthwise), applied
        to the rows: the children's row counts and best splits."""
        self._move({s[0]: s[1:4] for s in splits})
        self._level_nodes = [c for s in splits for c in s[4:6]]
        pos = self._state["pos"]
        counts = np.bincount(pos[pos >= 0], minlength=len(self._level_nodes))
        if splits[0][6] < 0:   # (children at max_depth: leaves)
            return counts, [None] * len(self._level_nodes)
        sums = np.array([side for s in splits for side in s[7:9]])
        return counts, self._scan(sums, splits[0][9])

    def node_bounds(self):
        """``(lower, upper)`` bounds on each node's weight in the last tree: none."""
        n = self._last[0].shape[0]
        return np.full(n, -np.inf), np.full(n, np.inf)

    def leaf_rows(self):
        """As ``TreeGrower.leaf_rows``: the rows of the last tree by leaf, and each
        node's (start, end) among them (a node's range holds its left child's, then
        its right child's; each leaf's rows increasing)."""
        nodes, rows, leaf_of = self._last
        n = nodes.shape[0]
        inner = np.flatnonzero(nodes["is_leaf"] == 0)   # children come after their parents
        sizes = np.bincount(leaf_of[rows], minlength=n)
        for i in inner[::-1]:
            sizes[i] = sizes[nodes[i]["left"]] + sizes[nodes[i]["right"]]
        starts = np.zeros(n, dtype=np.intp)
        for i in inner:
            starts[nodes[i]["left"]] = starts[i]
            starts[nodes[i]["right"]] = starts[i] + sizes[nodes[i]["left"]]
        ends = starts + sizes
        by_leaf = rows[np.argsort(starts[leaf_of[rows]], kind="stable")]
        return by_leaf.astype(np.uint32), starts, ends
