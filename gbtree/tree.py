"""The fitted ensemble as flat NumPy arrays (the model format).

All trees' nodes live in one ``NODE_DTYPE`` array; tree t owns
``nodes[tree_ptr[t]:tree_ptr[t + 1]]`` (its node 0 is the root; ``left`` and
``right`` index within the tree) and adds its leaf values to raw output
``tree_class[t]``. A raw prediction is ``base_score + sum of leaf values``
(leaf values already include the learning rate). Everything is a plain array,
so the model pickles as such.
"""
import numpy as np

from ._predictor import apply_raw, compact_nodes, predict_binned, predict_raw
from ._typedefs import NODE_DTYPE

IMPORTANCE_TYPES = ("weight", "gain", "cover", "total_gain", "total_cover")


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
        self._compact = None

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
        new_nodes = [n for n, _ in self._pending]
        sizes = np.array([n.shape[0] for n in new_nodes], dtype=np.int64)
        self._nodes = np.concatenate([self._nodes] + new_nodes)
        self._tree_ptr = np.concatenate([self._tree_ptr, self._tree_ptr[-1] + np.cumsum(sizes)])
        self._tree_class = np.concatenate(
            [self._tree_class, np.array([o for _, o in self._pending], dtype=np.int32)])
        self._pending = []
        self._compact = None

    def truncate(self, n_trees):
        """Keep the first ``n_trees`` trees."""
        self._flush()
        self._nodes = self._nodes[: self._tree_ptr[n_trees]].copy()
        self._tree_ptr = self._tree_ptr[: n_trees + 1].copy()
        self._tree_class = self._tree_class[:n_trees].copy()
        self._compact = None

    def __getstate__(self):
        self._flush()
        return {k: v for k, v in self.__dict__.items() if k not in ("_pending", "_compact")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._pending = []
        self._compact = None

    def tree(self, t):
        """The nodes of tree t (a view)."""
        return self.nodes[self.tree_ptr[t]:self.tree_ptr[t + 1]]

    def predict_raw(self, X, n_threads=1):
        """Raw predictions, shape (n_rows, n_outputs), for float32/float64 X."""
        out = np.empty((X.shape[0], self.n_outputs), dtype=np.float64)
        out[:] = self.base_score
        self._flush()
        if self._compact is None:   # the traversal copy, rebuilt when trees change
            self._compact = compact_nodes(self._nodes, self._tree_ptr)
        predict_raw(X, self._compact, self._tree_ptr, self._tree_class, out, n_threads)
        return out

    def predict_raw_binned(self, X_binned, missing_bin, n_threads=1):
        """Raw predictions from the binned matrix the model was trained on."""
        out = np.empty((X_binned.shape[0], self.n_outputs), dtype=np.float64)
        out[:] = self.base_score
        predict_binned(X_binned, missing_bin, self.nodes, self.tree_ptr, self.tree_class,
                       out, n_threads)
        return out

    def apply(self, X, n_threads=1):
        """Index (within its tree) of the leaf each row reaches, shape (n_rows, n_trees)."""
        out = np.empty((X.shape[0], self.n_trees), dtype=np.int32)
        apply_raw(X, self.nodes, self.tree_ptr, out, n_threads)
        return out

    def feature_importances(self, importance_type="total_gain"):
        """Per-feature importance over all split nodes (not normalised).

        ``weight``: number of splits; ``total_gain`` / ``total_cover``: summed
        split gain / hessian cover; ``gain`` / ``cover``: those sums divided by
        the number of splits (0 for unused features).
        """
        if importance_type not in IMPORTANCE_TYPES:
            raise ValueError(
                f"importance_type must be one of {IMPORTANCE_TYPES}, got {importance_type!r}")
        split = self.nodes["is_leaf"] == 0
        feat = self.nodes["feature"][split]
        weight = np.bincount(feat, minlength=self.n_features).astype(np.float64)
        if importance_type == "weight":
            return weight
        field = "gain" if importance_type.endswith("gain") else "cover"
        total = np.bincount(feat, weights=self.nodes[field][split], minlength=self.n_features)
        if importance_type.startswith("total_"):
            return total
        return np.divide(total, weight, out=np.zeros_like(total), where=weight > 0)
