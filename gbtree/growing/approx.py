"""The approximate algorithm with global proposals (``tree_method="approx"``,
``approx_proposal="global"``): the XGBoost paper's Algorithm 2 with the
candidates proposed once per tree.

Each tree's candidates are the hessian-weighted quantiles of every feature over
the tree's rows, ``n_parts`` parts of equal hessian, taken exactly
from the column blocks sorted once per fit (``_exact.global_cuts``). They become
the bin edges of that tree: the rows are binned with them (``BinMapper``) and
the tree grows on histograms (``TreeGrower``), which sums a node's gradients by
bin once instead of walking the sorted blocks at every level. A threshold is
the midpoint of the two values around its cut, as in exact.
"""
import numpy as np

from ..kernels._exact import global_cuts
from ._expand_ahead import TreeGrower
from ..data.binning import BinMapper
from .exact import check_depthwise, column_blocks
from .grower_params import check_pairs

# a tree's bins are uint8 with a missing bin: at most 255 parts of the hessian
MAX_PARTS = 255


class GlobalApproxGrower:
    """Grows each tree on histograms of bins proposed for it.

    ``X``: the training matrix (dense, NaN = missing, or CSR whose absent entries
    are 0, or missing with ``absent_as_missing``); ``params``: a ``GrowerParams``
    (depthwise to ``max_depth``; constraints and quantised gradients refused, as
    with the other approx proposals); ``n_parts``: 2 to 255.
    """

    def __init__(self, X, params, n_threads, absent_as_missing=False, n_parts=MAX_PARTS):
        if not 2 <= n_parts <= MAX_PARTS:
            raise ValueError(f"approx_proposal='global' cuts a tree's rows into 2 to "
                             f"{MAX_PARTS} parts (its candidates become a tree's bins), "
                             f"got {n_parts!r}")
        check_depthwise(params, "tree_method='approx'")
        self.X, self.params, self.n_threads, self.n_parts = X, params, n_threads, n_parts
        self.absent_as_missing = absent_as_missing
        self.blocks = column_blocks(X, absent_as_missing, n_threads)[0]
        self._grower = None

    def bins(self, hess, sample=None):
        """The ``BinMapper`` of a tree grown on rows ``sample`` (None: all) with
        these hessians."""
        weights = np.full(self.X.shape[0], np.nan, dtype=np.float32)
        rows = slice(None) if sample is None else sample
        weights[rows] = hess[rows]
        cuts, cut_ptr = global_cuts(*self.blocks, weights, self.n_parts, self.n_threads)
        return BinMapper.from_cuts(cuts, cut_ptr, self.absent_as_missing)

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        """As ``TreeGrower.grow``, on the bins of ``bins(hess, sample)``."""
        check_pairs(pairs.shape, self.X.shape[0], 1)
        mapper = self.bins(pairs[0, :, 1], sample)
        self._grower = TreeGrower(mapper.transform(self.X, self.n_threads), mapper.n_bins_,
                                  mapper.bin_offsets_, mapper.bin_thresholds(), self.params,
                                  self.n_threads, default_bin=mapper.default_bins())
        return self._grower.grow(pairs, learning_rate, raw, output, sample, seed)

    def node_bounds(self):
        """As ``TreeGrower.node_bounds``, for the last tree."""
        return self._grower.node_bounds()

    def leaf_rows(self):
        """As ``TreeGrower.leaf_rows``, for the last tree."""
        return self._grower.leaf_rows()
