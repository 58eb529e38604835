"""Binning: per-feature bin edges from a weighted quantile sketch, and the binned matrix.

Every feature gets at most ``max_bin - 1`` value bins plus one bin of its own
for missing values (NaN), so the binned matrix fits in uint8 with the default
``max_bin=256``. Bin ``b`` of feature ``f`` holds the values
``cuts[b - 1] < x <= cuts[b]``; the missing bin is ``n_bins_[f]``.
"""
import numpy as np

from ._binning import map_to_bins
from ._typedefs import X_BINNED_DTYPE

#: The edges are computed on at most this many rows (a seeded subsample).
SKETCH_SUBSAMPLE = 200_000


def _weighted_cuts(values, weights, max_value_bins):
    """Upper bin edges for one feature (finite values only, NaN already removed).

    With at most ``max_value_bins`` distinct values every value gets its own
    bin and the edges are the midpoints between consecutive distinct values.
    Otherwise the edges are weighted quantiles: the distinct values where the
    cumulative weight crosses ``k / max_value_bins`` (k = 1 .. max_value_bins-1),
    each turned into the midpoint to the next distinct value. Duplicates are
    merged, so a feature may get fewer bins than asked.

    ``weights=None`` means every value weighs 1 (then a plain sort is enough).
    """
    if values.size == 0:
        return np.empty(0, dtype=np.float64)
    if weights is None:
        v = np.sort(values)
        w = None
    else:
        order = np.argsort(values, kind="stable")
        v = values[order]
        w = weights[order]
    # first index of each distinct value in the sorted array (np.unique's
    # return_index, without sorting a second time)
    new_value = np.empty(v.size, dtype=bool)
    new_value[0] = True
    np.not_equal(v[1:], v[:-1], out=new_value[1:])
    first = np.flatnonzero(new_value)
    distinct = v[first]
    if distinct.size <= 1:
        return np.empty(0, dtype=np.float64)
    if distinct.size <= max_value_bins:
        return (distinct[:-1] + (distinct[1:] - distinct[:-1]) / 2.0).astype(np.float64)
    if w is None:
        w_per_value = np.diff(np.append(first, v.size)).astype(np.float64)
    else:
        w_per_value = np.add.reduceat(w, first)
    cum = np.cumsum(w_per_value)
    total = cum[-1]
    if total <= 0:  # all weights zero: fall back to unweighted ranks
        cum = np.cumsum(np.diff(np.append(first, v.size)))
        total = cum[-1]
    levels = total * np.arange(1, max_value_bins) / max_value_bins
    # index of the first distinct value whose cumulative weight reaches each level
    idx = np.searchsorted(cum, levels, side="left")
    idx = np.unique(np.clip(idx, 0, distinct.size - 2))
    lo = distinct[idx]
    hi = distinct[idx + 1]
    return (lo + (hi - lo) / 2.0).astype(np.float64)


class BinMapper:
    """Learn per-feature bin edges and map raw values to uint8 bins.

    Parameters
    ----------
    max_bin : int
        Bins per feature including the missing-value bin (2..256).
    subsample : int
        Edges are computed on at most this many rows, drawn without
        replacement with ``random_state``.
    random_state : int or numpy.random.RandomState

    Attributes
    ----------
    cuts_ : ndarray of float64
        Upper edges of all features' value bins, concatenated.
    cut_ptr_ : ndarray of int32, shape (n_features + 1,)
        Feature f's edges are ``cuts_[cut_ptr_[f]:cut_ptr_[f + 1]]``.
    n_bins_ : ndarray of int32, shape (n_features,)
        Number of value bins per feature (>= 1); the missing bin is ``n_bins_[f]``.
    bin_offsets_ : ndarray of int32, shape (n_features + 1,)
        Feature f's histogram entries are ``bin_offsets_[f]:bin_offsets_[f + 1]``
        (its value bins, then its missing bin).
    """

    def __init__(self, max_bin=256, subsample=SKETCH_SUBSAMPLE, random_state=0):
        self.max_bin = max_bin
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X, sample_weight=None):
        n_rows, n_features = X.shape
        rng = np.random.RandomState(self.random_state) if not isinstance(
            self.random_state, np.random.RandomState) else self.random_state
        if n_rows > self.subsample:
            rows = np.sort(rng.choice(n_rows, self.subsample, replace=False))
            X = X[rows]
            sample_weight = None if sample_weight is None else sample_weight[rows]
        max_value_bins = self.max_bin - 1

        def feature_cuts(f):
            col = np.asarray(X[:, f], dtype=np.float64)
            finite = np.isfinite(col)
            if sample_weight is None:
                return _weighted_cuts(col if finite.all() else col[finite], None, max_value_bins)
            # zero-weight rows carry no information: they do not place edges
            keep = finite & (sample_weight > 0)
            return _weighted_cuts(col[keep], sample_weight[keep], max_value_bins)

        # (Sketching features on a thread pool saved ~0.1 s on 500k x 28 but
        # raised peak RSS by ~26 MiB through the threads' malloc arenas.)
        cuts = [feature_cuts(f) for f in range(n_features)]
        lengths = np.array([c.size for c in cuts], dtype=np.int32)
        self.cut_ptr_ = np.zeros(n_features + 1, dtype=np.int32)
        np.cumsum(lengths, out=self.cut_ptr_[1:])
        self.cuts_ = np.concatenate(cuts) if cuts else np.empty(0)
        self.n_bins_ = lengths + 1
        self.bin_offsets_ = np.zeros(n_features + 1, dtype=np.int32)
        np.cumsum(self.n_bins_ + 1, out=self.bin_offsets_[1:])
        return self

    def transform(self, X, n_threads=1):
        """Binned copy of X: C-ordered uint8 of shape (n_rows, n_features)."""
        binned = np.empty(X.shape, dtype=X_BINNED_DTYPE)
        map_to_bins(X, self.cuts_, self.cut_ptr_, binned, n_threads)
        return binned

    def bin_thresholds(self):
        """Raw-value threshold of every histogram entry, flat like a histogram.

        Entry ``bin_offsets_[f] + b`` is the largest value that bin ``b`` holds
        (``+inf`` for the last value bin, NaN for the missing bin), so a split
        "bin <= b" on binned data is "x <= threshold" on raw data.
        """
        out = np.full(self.bin_offsets_[-1], np.nan)
        for f in range(self.n_bins_.size):
            start = self.bin_offsets_[f]
            n_cuts = self.n_bins_[f] - 1
            out[start:start + n_cuts] = self.cuts_[self.cut_ptr_[f]:self.cut_ptr_[f + 1]]
            out[start + n_cuts] = np.inf
        return out
