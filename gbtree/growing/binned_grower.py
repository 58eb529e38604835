"""What the growers written in Python over a binned matrix share
(``vector_grower.VectorLeafGrower``, ``symmetric_grower.SymmetricGrower``): the
matrix as their kernels read it, and the answers the booster asks of a grower
after a tree."""
import numpy as np

from ..kernels._binned_matrix import columns_of


class BinnedGrower:
    """The construction of ``_expand_ahead.TreeGrower`` (the binned matrix, dense or a
    ``binning.SparseBinned``, its bins and thresholds, a ``GrowerParams``), minus
    what these growers refuse: monotone and interaction constraints and quantised
    gradients (a subclass may take interaction constraints). A subclass's ``grow``
    sets ``_last`` to ``(rows, starts, ends)``."""

    # what the subclass grows, for its error messages, and whether it takes
    # interaction constraints
    kind = "trees"
    interactions = False

    def __init__(self, X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                 default_bin=None):
        if (params.monotone_constraints is not None or params.quant_levels
                or (params.interaction_groups and not self.interactions)):
            refused = "monotone constraints, quantised gradients" + (
                "" if self.interactions else " or interaction constraints")
            raise ValueError(f"{self.kind} do not support {refused}")
        self.dense = isinstance(X_binned, np.ndarray)
        self.X = X_binned
        self.columns = columns_of(X_binned, n_threads) if self.dense else None
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.intc)
        self.bin_offsets = np.ascontiguousarray(bin_offsets, dtype=np.intc)
        self.thresholds = np.asarray(bin_thresholds, dtype=np.float64)
        self.params = params
        self.n_threads = n_threads
        self.default_bin = None if self.dense else np.ascontiguousarray(default_bin)
        self.n_rows, self.n_features = X_binned.shape
        self._last = None

    def node_bounds(self):
        """``(lower, upper)`` bounds on each node's weight in the last tree: none."""
        n = self._last[1].shape[0]
        return np.full(n, -np.inf), np.full(n, np.inf)

    def leaf_rows(self):
        """As ``TreeGrower.leaf_rows``: the row array of the last tree and each node's
        (start, end) in it, a node's range holding its left child's, then its
        right child's; each leaf's rows increasing."""
        return self._last
