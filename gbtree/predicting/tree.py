"""The fitted ensemble as flat NumPy arrays (the model format).

All trees' nodes live in one ``NODE_DTYPE`` array; tree t owns
``nodes[tree_ptr[t]:tree_ptr[t + 1]]`` (its node 0 is the root; ``left`` and
``right`` index within the tree) and adds its leaf values to raw output
``tree_class[t]``. A raw prediction is ``base_score + sum of leaf values``
(leaf values already include the learning rate). Everything is a plain array,
so the model pickles as such.
"""
import functools
import threading

import numpy as np
import scipy.sparse as sp

from . import _predictor, _sparse_predictor
from ._predictor import Forest, apply_raw
from ._sparse_predictor import apply_raw_csr, predict_raw_csr
from ..kernels._typedefs import NODE_DTYPE
from ..data.binning import csr_arrays, kernel_array

IMPORTANCE_TYPES = ("weight", "gain", "cover", "total_gain", "total_cover")


def check_importance_type(value, name="importance_type"):
    if not (isinstance(value, str) and value in IMPORTANCE_TYPES):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, IMPORTANCE_TYPES))}, "
                         f"got {value!r}")

# The most an output's base_score and its trees' largest leaf values may add up to:
# every sum of a prediction, its SHAP and interaction values stays far inside float64.
MAX_OUTPUT = 1e300



class TreeEnsemble:
    """Trees of a boosted model, flat, plus the starting value.

    Parameters
    ----------
    n_features : int
    base_score : ndarray of shape (n_outputs,)
        The raw starting value F0.
    """

    def __init__(self, n_features, base_score):
        self.n_features = int(n_features)
        self.base_score = np.asarray(base_score, dtype=np.float64)
        self._nodes = np.empty(0, dtype=NODE_DTYPE)
        self._tree_ptr = np.zeros(1, dtype=np.int64)
        self._tree_class = np.empty(0, dtype=np.int32)
        self._pending = []
        self._forest = None
        # (joining pending trees and building the traversal copy change several
        # arrays together: threads that predict with this model at once take turns)
        self._lock = threading.RLock()

    @property
    def nodes(self):
        """All nodes, NODE_DTYPE."""
        self._flush()
        return self._nodes

    @property
    def tree_ptr(self):
        """Tree t owns ``nodes[tree_ptr[t]:tree_ptr[t + 1]]``."""
        self._flush()
        return self._tree_ptr

    @property
    def tree_class(self):
        """The raw output each tree adds to."""
        self._flush()
        return self._tree_class

    @property
    def n_outputs(self):
        return self.base_score.shape[0]

    @property
    def n_trees(self):
        return self.tree_class.shape[0]

    def add_tree(self, nodes, output):
        """Append one tree (a NODE_DTYPE array) that feeds raw output ``output``."""
        self._pending.append((nodes, output))

    def _flush(self):
        if not self._pending:
            return
        with self._lock:
            if not self._pending:
                return      # another thread joined them meanwhile
            new_nodes = [n for n, _ in self._pending]
            sizes = np.array([n.shape[0] for n in new_nodes], dtype=np.int64)
            self._nodes = np.concatenate([self._nodes] + new_nodes)
            self._tree_ptr = np.concatenate([self._tree_ptr,
                                             self._tree_ptr[-1] + np.cumsum(sizes)])
            self._tree_class = np.concatenate(
                [self._tree_class, np.array([o for _, o in self._pending], dtype=np.int32)])
            self._pending = []
            self._forest = None

    def _traversal(self):
        """The trees as the walks read them (a ``_predictor.Forest``), built once."""
        forest = self._forest
        if forest is not None and not self._pending:
            return forest   # built: it no longer changes
        with self._lock:
            self._flush()
            if self._forest is None:   # rebuilt when trees change
                self._forest = Forest(self._nodes, self._tree_ptr, self._tree_class,
                                      self.n_features, self.n_outputs)
            return self._forest

    def _check_width(self, X):
        # the kernels read the features the trees split on without bounds checks
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the model has {self.n_features}")

    def scale_trees(self, trees, factor):
        """Multiply the values (leaves and inner nodes) of the listed trees by ``factor``."""
        self._flush()
        with self._lock:
            for t in np.asarray(trees, dtype=np.intp):
                self._nodes["value"][self._tree_ptr[t]:self._tree_ptr[t + 1]] *= factor
            self._forest = None

    @classmethod
    def from_arrays(cls, n_features, base_score, nodes, tree_ptr, tree_class):
        """An ensemble from arrays given from outside (a file, a pickle): checked by
        ``check_ensemble`` first (ValueError)."""
        check_ensemble(n_features, base_score, nodes, tree_ptr, tree_class)
        ens = cls(n_features, base_score)
        ens._nodes, ens._tree_ptr, ens._tree_class = nodes, tree_ptr, tree_class
        return ens

    def __getstate__(self):
        self._flush()
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_pending", "_forest", "_lock")}

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise ValueError("invalid model: the pickled ensemble's state is not a dict")
        keys = ("n_features", "base_score", "_nodes", "_tree_ptr", "_tree_class")
        if set(state) != set(keys):
            raise ValueError(f"invalid model: the pickled ensemble's state must hold {keys}")
        check_ensemble(*(state[k] for k in keys))
        self.__dict__.update(state)
        self._pending = []
        self._forest = None
        self._lock = threading.RLock()

    def tree(self, t):
        """The nodes of tree t (a view)."""
        return self.nodes[self.tree_ptr[t]:self.tree_ptr[t + 1]]

    def tree_slice(self, start, stop):
        """``(nodes, tree_ptr, tree_class)`` of the trees ``start <= t < stop``, their
        ``tree_ptr`` counted from their first node."""
        ptr = self.tree_ptr
        return (self.nodes[ptr[start]:ptr[stop]], ptr[start:stop + 1] - ptr[start],
                self.tree_class[start:stop])

    def predict_raw(self, X, n_threads=1, tree_range=None, absent=0.0, base_margin=None):
        """Raw predictions, shape (n_rows, n_outputs), for float32/float64 X.

        ``tree_range=(start, stop)`` uses only trees ``start <= t < stop``
        (the starting value is always included). X may be a CSR matrix, whose
        absent entries then have the value ``absent`` (0.0, or NaN for missing).
        ``base_margin`` (float64, shape (n_rows, n_outputs)): each row's starting
        value, in place of ``base_score``.
        """
        forest = self._traversal()
        start, stop = (0, forest.n_trees) if tree_range is None else tree_range
        if base_margin is None and (type(X) is np.ndarray or not sp.issparse(X)):
            return forest.predict_raw(kernel_array(X), self.base_score, start, stop, n_threads)
        self._check_width(X)
        out = self._starting_raw(X.shape[0], base_margin)
        _predict_raw(X, forest, start, stop, out, n_threads, absent)
        return out

    def _starting_raw(self, n_rows, base_margin):
        """A new (n_rows, n_outputs) array of the starting values: ``base_score`` on
        every row, or a copy of ``base_margin``."""
        if base_margin is not None:
            if base_margin.shape != (n_rows, self.n_outputs):
                raise ValueError(f"base_margin must have shape ({n_rows}, {self.n_outputs}), "
                                 f"got {base_margin.shape}")
            return np.array(base_margin, dtype=np.float64, order="C")
        out = np.empty((n_rows, self.n_outputs), dtype=np.float64)
        out[:] = self.base_score
        return out

    def predict_raw_binned(self, X_binned, missing_bin, n_threads=1, base_margin=None):
        """Raw predictions from the binned matrix the model was trained on (dense, or
        a ``binning.SparseBinned``), starting from ``base_margin`` if given."""
        out = self._starting_raw(X_binned.shape[0], base_margin)
        _predict_binned(X_binned, missing_bin, self.nodes, self.tree_ptr, self.tree_class,
                        None, out, n_threads)
        return out

    def apply(self, X, n_threads=1, absent=0.0):
        """Index (within its tree) of the leaf each row reaches, shape (n_rows, n_trees).

        X may be a CSR matrix, whose absent entries have the value ``absent``.
        """
        self._check_width(X)
        with self._lock:
            self._flush()
            nodes, tree_ptr = self._nodes, self._tree_ptr
        out = np.empty((X.shape[0], tree_ptr.shape[0] - 1), dtype=np.int32)
        if sp.issparse(X):
            data, indices, indptr, n_features = csr_parts(X)
            apply_raw_csr(data, indices, indptr, n_features, absent, nodes, tree_ptr, out,
                          n_threads)
        else:
            apply_raw(kernel_array(X), nodes, tree_ptr, out, n_threads)
        return out

    def feature_importances(self, importance_type="total_gain"):
        """Per-feature importance over all split nodes (not normalised).

        ``weight``: number of splits; ``total_gain`` / ``total_cover``: summed
        split gain / hessian cover; ``gain`` / ``cover``: those sums divided by
        the number of splits (0 for unused features).
        """
        check_importance_type(importance_type)
        split = self.nodes["is_leaf"] == 0
        feat = self.nodes["feature"][split]
        weight = np.bincount(feat, minlength=self.n_features).astype(np.float64)
        if importance_type == "weight":
            return weight
        field = "gain" if importance_type.endswith("gain") else "cover"
        # (float64 also with no split at all: bincount of nothing gives int64)
        total = np.bincount(feat, weights=self.nodes[field][split],
                            minlength=self.n_features).astype(np.float64, copy=False)
        if importance_type.startswith("total_"):
            return total
        return np.divide(total, weight, out=np.zeros_like(total), where=weight > 0)

    # ------------------------------------------------------------------ inspection
    # Everything that walks the trees for a user (scores by name, the node
    # table, the text dump, the order plot_tree lays nodes out in) is here.

    def feature_names(self, feature_names=None):
        """``feature_names`` as a list, or XGBoost's default names ``f0``, ``f1``, ..."""
        if feature_names is None:
            return [f"f{i}" for i in range(self.n_features)]
        names = [str(name) for name in feature_names]
        if len(names) != self.n_features:
            raise ValueError(f"feature_names has {len(names)} names for "
                             f"{self.n_features} features")
        return names

    def get_score(self, importance_type="weight", feature_names=None):
        """``{feature name: importance}`` for the features used in at least one split.

        Features that never split are left out, as in XGBoost's ``get_score``.
        """
        values = self.feature_importances(importance_type)
        used = np.flatnonzero(self.feature_importances("weight") > 0)
        names = self.feature_names(feature_names)
        return {names[f]: float(values[f]) for f in used}

    def walk(self, t):
        """Node ids of tree t in pre-order (a node, its left subtree, its right
        subtree) with their depths: ``[(node, depth), ...]``."""
        tree = self.tree(t)
        order, stack = [], [(0, 0)]
        while stack:
            node, depth = stack.pop()
            order.append((node, depth))
            if not tree["is_leaf"][node]:
                stack.append((int(tree["right"][node]), depth + 1))
                stack.append((int(tree["left"][node]), depth + 1))
        return order

    def node_table(self, feature_names=None, output_names=None):
        """One entry per node of every tree, as a dict of equal-length columns.

        Columns: ``tree``, ``node`` (id within the tree, the index ``apply``
        returns), ``depth``, ``feature`` (name; None for leaves), ``threshold``
        (``x <= threshold`` goes left; NaN for leaves), ``missing`` (``"left"`` /
        ``"right"``: where a missing value goes; None for leaves), ``left``,
        ``right`` (child node ids; -1 for leaves), ``gain`` (split gain; 0 for
        leaves), ``cover`` (hessian sum of the training rows in the node),
        ``count`` (training rows in the node), ``value`` (learning rate x the
        node's weight: the leaf value for a leaf, the value it would have as a
        leaf for a split node), ``is_leaf``; and ``class`` (the output the tree
        adds to, named by ``output_names``) when the model has several outputs.
        """
        nodes = self.nodes
        names = np.array(self.feature_names(feature_names) + [None], dtype=object)
        is_leaf = nodes["is_leaf"].astype(bool)
        sizes = np.diff(self.tree_ptr)
        tree_of_node = np.repeat(np.arange(self.n_trees), sizes)
        table = {
            "tree": tree_of_node,
            "node": np.arange(nodes.shape[0]) - np.repeat(self.tree_ptr[:-1], sizes),
            "depth": nodes["depth"].astype(np.int64),
            "feature": names[np.where(is_leaf, -1, nodes["feature"])],
            "threshold": np.where(is_leaf, np.nan, nodes["threshold"]),
            "missing": np.where(is_leaf, None,
                                np.where(nodes["default_left"] == 1, "left", "right")).astype(object),
            "left": np.where(is_leaf, -1, nodes["left"]).astype(np.int64),
            "right": np.where(is_leaf, -1, nodes["right"]).astype(np.int64),
            "gain": np.where(is_leaf, 0.0, nodes["gain"]),
            "cover": nodes["cover"].copy(),
            "count": nodes["count"].astype(np.int64),
            "value": nodes["value"].copy(),
            "is_leaf": is_leaf,
        }
        if self.n_outputs > 1:
            labels = (np.arange(self.n_outputs) if output_names is None
                      else np.asarray(output_names))
            table["class"] = labels[self.tree_class[tree_of_node]]
        return table

    def to_dataframe(self, feature_names=None, output_names=None):
        """:meth:`node_table` as a pandas DataFrame (pandas is imported here only)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("trees_to_dataframe needs pandas, an optional dependency of "
                              "gbtree: pip install pandas") from exc
        return pd.DataFrame(self.node_table(feature_names, output_names))

    def dump(self, feature_names=None, with_stats=True):
        """One text string per tree, in XGBoost's text format (one line per node in
        pre-order, indented by depth with tabs)::

            0:[f2<=0.5] yes=1,no=2,missing=1 gain=25.6 cover=8
            \\t1:leaf=-0.5 cover=4

        ``yes`` is the child of ``x <= threshold`` (the left one), ``missing`` the
        child missing values go to. Thresholds and leaf values are written with
        ``repr`` (they read back exactly); gain and cover with 9 significant digits.
        """
        names = self.feature_names(feature_names)
        out = []
        for t in range(self.n_trees):
            tree = self.tree(t)
            lines = []
            for node, depth in self.walk(t):
                rec = tree[node]
                cover = f" cover={rec['cover']:.9g}" if with_stats else ""
                if rec["is_leaf"]:
                    lines.append(f"{chr(9) * depth}{node}:leaf={float(rec['value'])!r}{cover}")
                    continue
                left, right = int(rec["left"]), int(rec["right"])
                missing = left if rec["default_left"] else right
                gain = f" gain={rec['gain']:.9g}" if with_stats else ""
                lines.append(
                    f"{chr(9) * depth}{node}:[{names[rec['feature']]}<={float(rec['threshold'])!r}] "
                    f"yes={left},no={right},missing={missing}{gain}{cover}")
            out.append("\n".join(lines) + "\n")
        return out


def check_ensemble(n_features, base_score, nodes, tree_ptr, tree_class):
    """ValueError (naming the field) unless the arrays are an ensemble the kernels can
    walk: they index rows by ``feature``, nodes by ``left``/``right`` and outputs by
    ``tree_class`` without bounds checks, and ``compact_nodes`` writes one record per
    node reached, so every tree must be a tree (each node reached once from its root)."""
    def bad(field, msg):
        return ValueError(f"invalid model: ensemble.{field}: {msg}")

    if not isinstance(n_features, (int, np.integer)) or isinstance(n_features, bool) \
            or not 0 <= n_features < 2 ** 31:
        raise bad("n_features", f"expected an integer in [0, 2**31), got {n_features!r}")
    for name, a, dtype in (("base_score", base_score, np.float64), ("tree_ptr", tree_ptr, np.int64),
                           ("tree_class", tree_class, np.int32), ("nodes", nodes, NODE_DTYPE)):
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1:
            raise bad(name, f"expected a 1-D array of {dtype}")
    n_out, n_nodes, n_trees = base_score.shape[0], nodes.shape[0], tree_class.shape[0]
    if n_out == 0 or not np.all(np.isfinite(base_score)):
        raise bad("base_score", "expected one finite value per output")
    if tree_ptr.shape[0] != n_trees + 1 or tree_ptr[0] != 0 or tree_ptr[-1] != n_nodes:
        raise bad("tree_ptr", f"expected {n_trees + 1} offsets from 0 to {n_nodes} (nodes)")
    sizes = np.diff(tree_ptr)
    if np.any(sizes < 1) or np.any(sizes >= 2 ** 31):
        raise bad("tree_ptr", "every tree must have between 1 and 2**31 - 1 nodes")
    if np.any((tree_class < 0) | (tree_class >= n_out)):
        t = int(np.flatnonzero((tree_class < 0) | (tree_class >= n_out))[0])
        raise bad("tree_class", f"tree {t} adds to output {tree_class[t]}; the model has "
                                f"{n_out} outputs")

    if not _predictor.trees_are_valid(np.ascontiguousarray(nodes), np.ascontiguousarray(tree_ptr),
                                      n_features):
        _tree_errors(n_features, nodes, tree_ptr, bad)
        raise bad("nodes", "not a tree the predictor can walk")
    _check_node_values(base_score, nodes, tree_ptr, tree_class, bad)


def _first_node(tree_ptr, mask):
    """"tree t, node i" of the first node ``mask`` (over all trees' nodes) holds."""
    k = int(np.flatnonzero(mask)[0])
    t = int(np.searchsorted(tree_ptr, k, side="right") - 1)
    return f"tree {t}, node {k - tree_ptr[t]}"


def _check_node_values(base_score, nodes, tree_ptr, tree_class, bad):
    """The numbers of valid trees: finite values, gains and covers (>= 0, each tree's
    leaves' sum finite: the SHAP walks divide by them), split thresholds that are
    numbers (+-inf splits off the missing values), and leaf values whose largest per
    tree add up, with each output's base_score, to at most ``MAX_OUTPUT``."""
    where = functools.partial(_first_node, tree_ptr)
    for field in ("value", "gain", "cover"):
        wrong = ~np.isfinite(nodes[field])
        if np.any(wrong):
            raise bad(f"nodes.{field}", f"{where(wrong)}: {nodes[field][wrong][0]} is not finite")
    if np.any(nodes["cover"] < 0):
        raise bad("nodes.cover", f"{where(nodes['cover'] < 0)}: a cover (a sum of hessians) "
                                 f"is >= 0")
    split = nodes["is_leaf"] == 0
    if np.any(split & np.isnan(nodes["threshold"])):
        raise bad("nodes.threshold", f"{where(split & np.isnan(nodes['threshold']))}: a split's "
                                     f"threshold is a number")
    if tree_class.shape[0] == 0:
        return
    leaf = ~split
    starts = tree_ptr[:-1]
    covers = np.add.reduceat(np.where(leaf, nodes["cover"], 0.0), starts)
    if not np.all(np.isfinite(covers)):
        t = int(np.flatnonzero(~np.isfinite(covers))[0])
        raise bad("nodes.cover", f"tree {t}: its leaves' covers add up to more than float64 "
                                 f"holds")
    largest = np.maximum.reduceat(np.where(leaf, np.abs(nodes["value"]), 0.0), starts)
    with np.errstate(over="ignore"):
        reach = np.abs(base_score) + np.bincount(tree_class, weights=largest,
                                                 minlength=base_score.shape[0])
    if not np.all(reach <= MAX_OUTPUT):
        k = int(np.flatnonzero(~(reach <= MAX_OUTPUT))[0])
        raise bad("nodes.value", f"the largest leaf values of the trees of output {k} and "
                                 f"its base_score add up to {reach[k]:.3g}, beyond "
                                 f"{MAX_OUTPUT:g}: float64 sums of predictions and SHAP "
                                 f"values would overflow")


def _tree_errors(n_features, nodes, tree_ptr, bad):
    """Raise ``bad(field, message)`` naming the first node that breaks a condition of
    ``_predictor.trees_are_valid`` (which checks them all in one pass; this is its
    NumPy twin, run only to say what is wrong)."""
    sizes = np.diff(tree_ptr)
    n_nodes = nodes.shape[0]
    where = functools.partial(_first_node, tree_ptr)

    for field in ("is_leaf", "default_left"):
        if np.any(nodes[field] > 1):
            raise bad(f"nodes.{field}", f"{where(nodes[field] > 1)}: expected 0 or 1")
    split = nodes["is_leaf"] == 0
    leaf_values = nodes["value"][~split]
    if not np.all(np.isfinite(leaf_values)):
        raise bad("nodes.value", f"{where(~split & ~np.isfinite(nodes['value']))}: a leaf "
                                 f"value is not finite")
    feature = nodes["feature"]
    out = split & ((feature < 0) | (feature >= n_features))
    if np.any(out):
        raise bad("nodes.feature", f"{where(out)}: splits on feature "
                                   f"{feature[np.argmax(out)]}; the model has {n_features}")
    size_of = np.repeat(sizes, sizes)
    first = np.repeat(tree_ptr[:-1], sizes)
    children = []
    for field in ("left", "right"):
        child = nodes[field].astype(np.int64)
        out = split & ((child < 1) | (child >= size_of))
        if np.any(out):
            raise bad(f"nodes.{field}", f"{where(out)}: child {child[np.argmax(out)]} is not "
                                        f"another node of its tree")
        children.append((first + child)[split])
    children = np.concatenate(children)
    parents = np.bincount(children, minlength=n_nodes)
    expected = np.ones(n_nodes, dtype=np.int64)
    expected[tree_ptr[:-1]] = 0
    if np.any(parents != expected):
        raise bad("nodes.left", f"{where(parents != expected)}: the child of "
                                f"{parents[np.argmax(parents != expected)]} nodes (a tree's "
                                f"root has no parent, every other node one)")
    # each node has one parent: a walk from the roots meets every node once, unless
    # some nodes form a cycle apart from the root
    depth = np.full(n_nodes, -1, dtype=np.int64)
    level, d = tree_ptr[:-1], 0
    while level.size:
        depth[level] = d
        inner = level[split[level]]
        level = np.concatenate([first[inner] + nodes["left"][inner],
                                first[inner] + nodes["right"][inner]])
        d += 1
    if np.any(depth < 0):
        raise bad("nodes.left", f"{where(depth < 0)}: not reached from its tree's root (a "
                                f"cycle)")
    if np.any(nodes["depth"] != depth):
        raise bad("nodes.depth", f"{where(nodes['depth'] != depth)}: not the node's depth")


def add_trees_to_raw(X, trees, outputs, out, n_threads=1, absent=0.0):
    """``out[:, outputs[j]] += trees[j](X)`` for a few new trees (NODE_DTYPE arrays).

    X may be a CSR matrix, whose absent entries have the value ``absent``.
    """
    sizes = np.array([t.shape[0] for t in trees], dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    forest = Forest(np.concatenate(trees), ptr, np.asarray(outputs, dtype=np.int32), X.shape[1],
                    out.shape[1])
    _predict_raw(X, forest, 0, forest.n_trees, out, n_threads, absent)


def csr_parts(X):
    """``(data, indices, indptr, n_features)`` of a canonical CSR matrix, in the
    kernels' types (indptr is widened to int64: it is small)."""
    if X.format != "csr":
        raise TypeError(f"sparse X must be in CSR format, got {X.format!r}")
    data, indices, indptr = csr_arrays(X)
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    return data, indices, indptr, X.shape[1]


def _predict_raw(X, forest, start, stop, out, n_threads, absent):
    """``out += `` trees ``start <= t < stop`` of ``forest`` on the rows of X: a dense
    array, or a CSR matrix (``predict_raw_csr``)."""
    if sp.issparse(X):
        data, indices, indptr, n_features = csr_parts(X)
        predict_raw_csr(data, indices, indptr, n_features, absent, forest.compact,
                        forest.tree_ptr[start:stop + 1], forest.tree_class[start:stop], out,
                        n_threads)
    else:
        forest.add_raw(kernel_array(X), out, start, stop, n_threads)


def _predict_binned(X_binned, missing_bin, nodes, tree_ptr, tree_class, rows, out, n_threads):
    """``_predictor.predict_binned`` on the binned training matrix, dense or a
    ``binning.SparseBinned``."""
    if isinstance(X_binned, np.ndarray):
        _predictor.predict_binned(X_binned, missing_bin, nodes, tree_ptr, tree_class, rows, out,
                                  n_threads)
    else:
        _sparse_predictor.predict_binned_csr(X_binned.indptr, X_binned.indices, X_binned.bins,
                                             X_binned.default_bin, missing_bin, nodes, tree_ptr,
                                             tree_class, rows, out, n_threads)


def add_tree_binned_rows(X_binned, missing_bin, tree, rows, out, output, n_threads=1):
    """``out[r, output] += tree(X_binned[r])`` for the listed rows of the binned
    training matrix (dense, or a ``binning.SparseBinned``)."""
    _predict_binned(X_binned, missing_bin, tree, np.array([0, tree.shape[0]], dtype=np.int64),
                    np.array([output], dtype=np.int32), rows, out, n_threads)
