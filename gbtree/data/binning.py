"""Binning: per-feature bin edges from a weighted quantile sketch, and the binned matrix.

Every feature gets at most ``max_bin - 1`` value bins plus one bin of its own
for missing values (NaN), so the binned matrix fits in uint8 with the default
``max_bin=256``. Bin ``b`` of feature ``f`` holds the values
``cuts[b - 1] < x <= cuts[b]``; the missing bin is ``n_bins_[f]``.

Every feature also has a *default bin*: the bin of an absent entry of a sparse
matrix (the bin of 0.0, or the missing bin when absent entries are declared
missing). A sparse matrix is binned into ``SparseBinned``, which stores only the
entries whose bin is not the default; the histogram kernels recover the default
bin's sums from the node totals, for dense input too, so that a model fit on a
sparse matrix is bit for bit the model fit on its ``.toarray()``.
"""
import numpy as np
import scipy.sparse as sp

from ._binning import (bin_sparse, map_to_bins, sorted_column_edges, sorted_finite_columns,
                       sparse_columns, sparse_distinct_cuts, take_rows)
from ..kernels._typedefs import X_BINNED_DTYPE

#: The edges are computed on at most this many rows (a seeded subsample).
SKETCH_SUBSAMPLE = 200_000
#: Columns of the sketch sorted at once (and at most as many threads).
SKETCH_SORT_THREADS = 8
#: With a narrow histogram, a sparse column with more than 1/DENSE_COLUMN_SHARE
#: of its rows stored also gets a dense binned copy for the partition.
DENSE_COLUMN_SHARE = 8


def _weighted_cuts(values, weights, max_value_bins, zeros=None, presorted=False):
    """Upper bin edges for one feature (finite values only, NaN already removed).

    With at most ``max_value_bins`` distinct values every value gets its own
    bin and the edges are the midpoints between consecutive distinct values.
    Otherwise the edges are weighted quantiles (``_quantile_cuts``); when 0 is
    one of the values it keeps a bin of its own and the negative and positive
    values get weighted quantiles each, with the other bins shared in
    proportion to their weight. Duplicates are merged, so a feature may get
    fewer bins than asked.

    ``weights=None`` means every value weighs 1 (then a plain sort is enough).

    ``zeros`` (sparse columns): ``(count, weight)`` of the rows whose value is an
    implicit 0.0 not listed in ``values``; ``weight`` is a callable giving the
    weight sum of all the zero rows, summed exactly as the dense column's (only
    called when the weights matter). The edges equal those of the dense column.

    ``presorted``: ``values`` is already sorted (unweighted only).
    """
    n_zeros = 0 if zeros is None else zeros[0]
    if values.size + n_zeros == 0:
        return np.empty(0, dtype=np.float64)
    if weights is None:
        v = values if presorted else np.sort(values)
        w = None
    else:
        order = np.argsort(values, kind="stable")
        v = values[order]
        w = weights[order]
    # first index of each distinct value in the sorted array (np.unique's
    # return_index, without sorting a second time)
    new_value = np.empty(v.size, dtype=bool)
    new_value[:1] = True
    np.not_equal(v[1:], v[:-1], out=new_value[1:])
    first = np.flatnonzero(new_value)
    distinct = v[first].astype(np.float64)
    zero_at, zero_new = -1, False
    if n_zeros:
        # the implicit zeros join the listed ones, or become a distinct value
        zero_at = int(np.searchsorted(distinct, 0.0))
        zero_new = zero_at == distinct.size or distinct[zero_at] != 0.0
        if zero_new:
            distinct = np.insert(distinct, zero_at, 0.0)
    if distinct.size <= 1:
        return np.empty(0, dtype=np.float64)
    if distinct.size <= max_value_bins:
        return _midpoints(distinct[:-1], distinct[1:])
    if w is None:
        w_per_value = np.diff(np.append(first, v.size)).astype(np.float64)
    else:
        w_per_value = np.add.reduceat(w, first) if v.size else np.empty(0)
    if zero_at >= 0:
        if zero_new:
            w_per_value = np.insert(w_per_value, zero_at, 0.0)
        if w is None:
            w_per_value[zero_at] += n_zeros
        else:
            w_per_value[zero_at] = zeros[1]()
    z = int(np.searchsorted(distinct, 0.0))
    if z < distinct.size and distinct[z] == 0.0 and max_value_bins >= 3:
        # 0 gets a bin of its own (LightGBM's zero bin: sparse data are mostly 0,
        # and quantiles would spend every bin on it); the negative and positive
        # values share the other bins in proportion to their weight
        w_neg, w_pos = w_per_value[:z].sum(), w_per_value[z + 1:].sum()
        n_neg = 0 if z == 0 else min(max(1, int(round(
            (max_value_bins - 1) * w_neg / (w_neg + w_pos)))), max_value_bins - 2)
        if z == distinct.size - 1:
            n_neg = max_value_bins - 1
        n_pos = max_value_bins - 1 - n_neg
        parts = [_quantile_cuts(distinct[:z], w_per_value[:z], n_neg)]
        if z > 0:
            parts.append([distinct[z - 1] + (0.0 - distinct[z - 1]) / 2.0])
        if z < distinct.size - 1:
            parts.append([0.0 + (distinct[z + 1] - 0.0) / 2.0])
        parts.append(_quantile_cuts(distinct[z + 1:], w_per_value[z + 1:], n_pos))
        return np.concatenate(parts).astype(np.float64)
    return _quantile_cuts(distinct, w_per_value, max_value_bins)


def _quantile_cuts(distinct, w_per_value, n_bins):
    """At most ``n_bins - 1`` edges splitting the sorted ``distinct`` values into
    bins of about equal weight: the distinct values where the cumulative weight
    crosses ``k / n_bins``, each turned into the midpoint to the next value (all
    midpoints when there are at most ``n_bins`` values)."""
    if distinct.size <= 1 or n_bins <= 1:
        return np.empty(0, dtype=np.float64)
    if distinct.size <= n_bins:
        return _midpoints(distinct[:-1], distinct[1:])
    cum = np.cumsum(w_per_value)
    levels = cum[-1] * np.arange(1, n_bins) / n_bins
    # index of the first distinct value whose cumulative weight reaches each level
    idx = np.searchsorted(cum, levels, side="left")
    idx = np.unique(np.clip(idx, 0, distinct.size - 2))
    return _midpoints(distinct[idx], distinct[idx + 1])


def _midpoints(lo, hi):
    """The edges between the sorted values ``lo < hi`` (float64 arrays): ``lo +
    (hi - lo) / 2``, or ``lo / 2 + hi / 2`` where ``hi - lo`` overflows (values
    of both signs near the float64 limits; the edge would be inf and both values
    would share a bin). The kernels in ``_binning`` compute the same."""
    with np.errstate(over="ignore"):
        gap = hi - lo
    out = lo + gap / 2.0
    over = np.isinf(gap)
    if over.any():
        out[over] = lo[over] / 2.0 + hi[over] / 2.0
    return out.astype(np.float64, copy=False)


def sketch_rows(rng, n_rows, size):
    """The sketch's rows: ``size`` of ``n_rows`` drawn without replacement by
    ``rng.choice``, in increasing order (a mask instead of ``np.sort``: the same
    rows, in linear time)."""
    mask = np.zeros(n_rows, dtype=bool)
    mask[rng.choice(n_rows, size, replace=False)] = True
    return np.flatnonzero(mask)


def _take(X, rows, n_threads):
    """``X[rows]``; a C-ordered float matrix is copied on ``n_threads``."""
    if (isinstance(X, np.ndarray) and X.ndim == 2 and X.flags.c_contiguous
            and X.dtype in (np.float32, np.float64)):
        out = np.empty((rows.size, X.shape[1]), dtype=X.dtype)
        take_rows(X, rows.astype(np.int64, copy=False), out, n_threads)
        return out
    return X[rows]


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

    def __init__(self, max_bin=256, subsample=SKETCH_SUBSAMPLE, random_state=0,
                 absent_as_missing=False):
        self.max_bin = max_bin
        self.subsample = subsample
        self.random_state = random_state
        self.absent_as_missing = absent_as_missing

    def fit(self, X, sample_weight=None, n_threads=1):
        """Learn the edges of every feature of X (dense or scipy.sparse) from at most
        ``subsample`` rows; ``n_threads`` copy and sort the sketch of a dense X."""
        X = kernel_array(X)
        n_rows, n_features = X.shape
        rng = np.random.RandomState(self.random_state) if not isinstance(
            self.random_state, np.random.RandomState) else self.random_state
        if n_rows > self.subsample:
            rows = sketch_rows(rng, n_rows, self.subsample)
            X = _take(X, rows, n_threads)
            sample_weight = None if sample_weight is None else sample_weight[rows]
        max_value_bins = self.max_bin - 1
        if sp.issparse(X):
            return self._set_cuts(self._sparse_cuts(X, sample_weight, max_value_bins))
        if sample_weight is None and X.dtype in (np.float32, np.float64):
            return self._set_cuts(self._sorted_cuts(X, max_value_bins, n_threads))
        # float32 columns are sorted as they are (the same order as float64);
        # the edges are computed in float64 from the distinct values
        sketch_dtype = np.float32 if X.dtype == np.float32 else np.float64

        def feature_cuts(f):
            col = np.asarray(X[:, f], dtype=sketch_dtype)
            finite = np.isfinite(col)
            if sample_weight is None:
                return _weighted_cuts(col if finite.all() else col[finite], None, max_value_bins)
            # zero-weight rows carry no information: they do not place edges
            keep = finite & (sample_weight > 0)
            return _weighted_cuts(col[keep], sample_weight[keep], max_value_bins)

        # (Sketching features on a thread pool saved ~0.1 s on 500k x 28 but
        # raised peak RSS by ~26 MiB through the threads' malloc arenas.)
        return self._set_cuts([feature_cuts(f) for f in range(n_features)])

    @staticmethod
    def _sorted_cuts(X, max_value_bins, n_threads):
        """Unweighted edges of every column of a dense float32 / float64 X: a few
        columns at a time are sorted in parallel (``sorted_finite_columns``, a radix
        sort: the same sorted values as ``np.sort``), then cut in parallel
        (``sorted_column_edges``: the edges of ``_weighted_cuts``)."""
        n_rows, n_features = X.shape
        # at most 8 threads: each holds two key buffers of n_rows
        n_threads = max(1, min(n_threads, n_features, SKETCH_SORT_THREADS))
        batch = SKETCH_SORT_THREADS
        out = np.empty((min(batch, n_features), n_rows), dtype=X.dtype)
        lengths = np.empty(out.shape[0], dtype=np.int64)
        scratch = np.empty((n_threads, 2, n_rows), dtype=np.uint64)
        counts = np.empty((n_threads, 6 * 2048), dtype=np.intp)
        edges = np.empty((out.shape[0], max(max_value_bins - 1, 1)), dtype=np.float64)
        n_edges = np.empty(out.shape[0], dtype=np.int64)
        cuts = []
        for lo in range(0, n_features, batch):
            hi = min(lo + batch, n_features)
            sorted_finite_columns(X, lo, hi, out, lengths, scratch, counts, n_threads)
            # the columns' edges as _weighted_cuts(presorted=True) gives them, in parallel
            sorted_column_edges(out, lengths[:hi - lo], max_value_bins, edges, n_edges,
                                scratch.view(np.float64), n_threads)
            cuts += [edges[k, :n_edges[k]].copy() for k in range(hi - lo)]
        return cuts

    def _sparse_cuts(self, X, sample_weight, max_value_bins):
        """Edges of every column of a sparse matrix: the dense column's edges, found
        from the stored entries and the number of absent ones (never densified)."""
        n_rows = X.shape[0]
        Xc = sp.csc_matrix(X)
        Xc.sum_duplicates()
        absent_zero = not self.absent_as_missing
        positive = None if sample_weight is None else sample_weight > 0
        n_positive = n_rows if positive is None else int(np.count_nonzero(positive))
        # columns with few distinct values in one pass; the others one by one below
        fast, counts, quantile = sparse_distinct_cuts(
            Xc.data, Xc.indices.astype(np.int32, copy=False), Xc.indptr.astype(np.int64),
            n_rows, np.empty(0, np.uint8) if positive is None else positive.view(np.uint8),
            absent_zero, max_value_bins)
        ptr = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        cuts = []
        for f in range(X.shape[1]):
            if not quantile[f]:
                cuts.append(fast[ptr[f]:ptr[f + 1]])
                continue
            lo, hi = Xc.indptr[f], Xc.indptr[f + 1]
            col = np.asarray(Xc.data[lo:hi], dtype=np.float64)
            rows = Xc.indices[lo:hi]
            keep = np.isfinite(col)
            if positive is not None:
                keep &= positive[rows]
            zeros = None
            if absent_zero:
                # rows of weight > 0 whose value is an implicit 0
                n_zeros = n_positive - (hi - lo if positive is None else
                                        int(np.count_nonzero(positive[rows])))
                if n_zeros:
                    zeros = (n_zeros, lambda rows=rows, col=col: self._zero_weight(
                        rows[col != 0.0], sample_weight))
            w = None if sample_weight is None else sample_weight[rows[keep]]
            cuts.append(_weighted_cuts(col[keep], w, max_value_bins, zeros))
        return cuts

    @staticmethod
    def _zero_weight(nonzero_rows, sample_weight):
        """Weight of the rows whose value is 0 (stored or absent), summed as the dense
        path sums them: ``np.add.reduceat`` over those rows in row order."""
        zero = sample_weight > 0
        zero[nonzero_rows] = False
        return np.add.reduceat(sample_weight[zero], [0])[0]

    @classmethod
    def from_cuts(cls, cuts, cut_ptr, absent_as_missing=False):
        """A fitted mapper with these edges (flat and increasing per feature, as
        ``cuts_`` and ``cut_ptr_``), at most 255 per feature."""
        cut_ptr = np.asarray(cut_ptr)
        if np.any(np.diff(cut_ptr) > 254):
            raise ValueError("a feature has more than 254 edges (255 value bins)")
        mapper = cls(absent_as_missing=absent_as_missing)
        cuts = np.asarray(cuts, dtype=np.float64)
        return mapper._set_cuts([cuts[a:b] for a, b in zip(cut_ptr[:-1], cut_ptr[1:])])

    def _set_cuts(self, cuts):
        """Set the fitted attributes from the list of every feature's edges."""
        self.cuts_, cut_ptr = flat_cuts(cuts)
        self.cut_ptr_ = cut_ptr.astype(np.int32)
        self.n_bins_ = np.diff(self.cut_ptr_) + 1
        self.bin_offsets_ = np.zeros(len(cuts) + 1, dtype=np.int32)
        np.cumsum(self.n_bins_ + 1, out=self.bin_offsets_[1:])
        return self

    def transform(self, X, n_threads=1):
        """Binned copy of X: C-ordered uint8 of shape (n_rows, n_features), or a
        ``SparseBinned`` for a sparse X (canonical CSR, see sklearn.py)."""
        if sp.issparse(X):
            return self._transform_sparse(X, n_threads)
        binned = np.empty(X.shape, dtype=X_BINNED_DTYPE)
        map_to_bins(kernel_array(X), self.cuts_, self.cut_ptr_, binned, n_threads)
        return binned

    def default_bins(self, absent_as_missing=None):
        """The bin of an absent sparse entry per feature (uint8): the bin of 0.0,
        or the missing bin when absent entries are missing."""
        if absent_as_missing is None:
            absent_as_missing = self.absent_as_missing
        if absent_as_missing:
            return self.n_bins_.astype(X_BINNED_DTYPE)
        # the bin of 0.0 is the number of the feature's cuts below 0
        below = np.zeros(self.cuts_.size + 1, dtype=np.int64)
        np.cumsum(self.cuts_ < 0.0, out=below[1:])
        return (below[self.cut_ptr_[1:]] - below[self.cut_ptr_[:-1]]).astype(X_BINNED_DTYPE)

    def _transform_sparse(self, X, n_threads):
        default = self.default_bins()
        data, indices, indptr = csr_arrays(X)
        indptr, entries = bin_sparse(data, indices, indptr, self.cuts_, self.cut_ptr_,
                                     default, self.bin_offsets_, n_threads)
        return SparseBinned(indptr, entries, default_bin=default, shape=X.shape,
                            bin_offsets=self.bin_offsets_)

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


def check_sparse_structure(X, name="X"):
    """Raise ValueError unless the index arrays of a CSR, CSC or COO ``X`` describe
    its shape: scipy's conversions and gbtree's kernels trust them, and read or
    write out of bounds (a crash) when they do not. X is not modified."""
    fmt = X.format
    problem = None
    if X.ndim != 2:
        return   # (scikit-learn's validation says a 2-D X is needed)
    if fmt in ("csr", "csc"):
        n_major, n_minor = X.shape if fmt == "csr" else X.shape[::-1]
        major, minor = ("row", "column") if fmt == "csr" else ("column", "row")
        indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
        if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
            problem = f"indptr has {indptr.shape[0]} entries for {n_major} {major}s (needs {n_major + 1})"
        elif indptr[0] != 0:
            problem = f"indptr starts at {indptr[0]}, not 0"
        elif np.any(indptr[1:] < indptr[:-1]):
            problem = "indptr decreases"
        elif indptr[-1] > min(indices.shape[0], np.asarray(X.data).shape[0]):
            problem = (f"indptr ends at {indptr[-1]}, beyond the {min(indices.shape[0], X.data.shape[0])} "
                       f"stored entries")
        elif indptr[-1] > 0 and (indices[:indptr[-1]].min() < 0
                                 or indices[:indptr[-1]].max() >= n_minor):
            problem = f"a {minor} index is outside 0..{n_minor - 1}"
    elif fmt == "coo":
        coords = (np.asarray(X.row), np.asarray(X.col))
        if any(c.shape != np.asarray(X.data).shape for c in coords):
            problem = "its row and column index arrays differ in length from its data"
        elif X.data.shape[0] > 0 and any(c.min() < 0 or c.max() >= n for c, n in zip(coords, X.shape)):
            problem = "a row or column index is outside the matrix's shape"
    if problem is not None:
        raise ValueError(f"{name} is a malformed {fmt.upper()} sparse matrix: {problem}")


def kernel_array(X):
    """X as the dense kernels read it: an ndarray whose address and strides are whole
    multiples of its item size (the kernels step through rows by element counts). A
    view of record fields, or an array over a byte-offset buffer, is copied in C order;
    anything else is returned as it is."""
    if isinstance(X, np.ndarray) and not _whole_items(X):
        # (a copy, always: ascontiguousarray keeps a contiguous array at an odd address)
        return np.array(X, order="C", copy=True)
    return X


def _whole_items(X):
    flags = X.flags
    if not flags.aligned:
        return False
    if flags.c_contiguous or flags.f_contiguous:
        return True
    # (an axis of length 0 or 1 is never stepped along: its stride does not matter)
    return all(n <= 1 or s % X.itemsize == 0 for n, s in zip(X.shape, X.strides))


def canonical_csr(X):
    """A scipy.sparse matrix or array as CSR with sorted, duplicate-free indices
    (duplicates summed, as ``.toarray()`` does); no copy when X already is one.
    X must be well formed (the estimators check it first: ``check_sparse_structure``)."""
    X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def csr_arrays(X):
    """(data, indices as int32, indptr as int64) of a canonical CSR X: the kernels' types,
    contiguous (a valid CSR may hold strided views, such as a column of a 2-D array)."""
    return (np.ascontiguousarray(X.data), np.ascontiguousarray(X.indices, dtype=np.int32),
            np.ascontiguousarray(X.indptr, dtype=np.int64))


class SparseBinned:
    """A binned sparse matrix: only the entries whose bin differs from their
    feature's default bin are stored; absent entries have ``default_bin[f]``.

    Row-wise: row r's entries are ``entries[indptr[r]:indptr[r + 1]]``, each the
    histogram entry ``bin_offsets[f] + bin`` (one load per entry in the histogram
    kernel, increasing within a row so the partition finds a feature's entry by
    binary search); uint16 when the histogram has at most 65,536 entries, else
    uint32. ``indices`` and ``bins`` (feature and bin of each entry) are derived
    on demand, as are the column-wise copies the partition reads (``columns()``),
    unless ``columns`` gives them (made before, of the same entries).
    """

    def __init__(self, indptr, entries, *, default_bin, shape, bin_offsets, columns=None):
        self.indptr, self.entries = indptr, entries
        self.default_bin = default_bin
        self.shape = tuple(shape)
        self.bin_offsets = np.asarray(bin_offsets, dtype=np.int32)
        self._columns = columns

    @property
    def nnz(self):
        return self.entries.shape[0]

    def columns(self):
        """The column-wise copies the partition reads, made on first use: (col_ptr,
        col_rows, col_bins; None without them), the features stored densely
        (``dense_index``: their row of ``dense_cols``, or -1) and ``dense_cols``."""
        if self._columns is None:
            self._columns = self._make_columns()
        return self._columns

    def _make_columns(self):
        n_rows = self.shape[0]
        dense_index = np.full(self.shape[1], -1, dtype=np.int32)
        if self.entries.dtype != np.uint16:
            # Wide data (over 65,536 histogram entries) keep their memory for the
            # histograms: the partition finds each row's entry by binary search
            # among the row's entries.
            return None, None, None, dense_index, np.empty((0, n_rows), dtype=X_BINNED_DTYPE)
        # A narrow histogram leaves memory for a column-wise copy, which the partition
        # walks beside a node's rows, and for a dense copy (a byte a row) of the
        # columns with many entries.
        col_ptr, col_rows, col_bins = sparse_columns(self.indptr, self.entries,
                                                     self.bin_offsets)
        dense = np.flatnonzero(np.diff(col_ptr) * DENSE_COLUMN_SHARE > n_rows)
        dense_index[dense] = np.arange(dense.size, dtype=np.int32)
        dense_cols = np.empty((dense.size, n_rows), dtype=X_BINNED_DTYPE)
        for j, f in enumerate(dense):
            dense_cols[j] = self.default_bin[f]
            lo, hi = col_ptr[f], col_ptr[f + 1]
            dense_cols[j, col_rows[lo:hi]] = col_bins[lo:hi]
        return col_ptr, col_rows, col_bins, dense_index, dense_cols

    col_ptr = property(lambda self: self.columns()[0])
    col_rows = property(lambda self: self.columns()[1])
    col_bins = property(lambda self: self.columns()[2])
    dense_index = property(lambda self: self.columns()[3])
    dense_cols = property(lambda self: self.columns()[4])

    def rows(self, lo, hi):
        """Rows lo..hi as a ``SparseBinned`` (the entries copied)."""
        ptr = self.indptr[lo:hi + 1]
        return SparseBinned(ptr - ptr[0], self.entries[ptr[0]:ptr[-1]].copy(),
                            default_bin=self.default_bin, shape=(hi - lo, self.shape[1]),
                            bin_offsets=self.bin_offsets)

    @staticmethod
    def stack(parts):
        """The rows of ``parts`` (``SparseBinned`` of the same features), one after the
        other."""
        first = parts[0]
        if len(parts) == 1:
            return first
        sizes = [p.indptr[-1] for p in parts]
        ptr = np.concatenate([[0]] + [p.indptr[1:] + start for p, start in
                                      zip(parts, np.cumsum([0] + sizes[:-1]))])
        return SparseBinned(ptr.astype(np.int64), np.concatenate([p.entries for p in parts]),
                            default_bin=first.default_bin,
                            shape=(sum(p.shape[0] for p in parts), first.shape[1]),
                            bin_offsets=first.bin_offsets)

    def _feature_and_bin(self):
        # computed once, on demand (the binned predictor of subsampled or warm-started fits)
        if getattr(self, "_indices", None) is None:
            entries = self.entries.astype(np.int64)
            self._indices = (np.searchsorted(self.bin_offsets, entries, side="right")
                             - 1).astype(np.int32)
            self._bins = (entries - self.bin_offsets[self._indices]).astype(X_BINNED_DTYPE)
        return self._indices, self._bins

    @property
    def indices(self):
        """Feature of each stored entry (int32)."""
        return self._feature_and_bin()[0]

    @property
    def bins(self):
        """Bin of each stored entry (uint8)."""
        return self._feature_and_bin()[1]


def summary_cuts(summary, max_bin):
    """The edges ``BinMapper.fit`` cuts for ``max_bin`` bins from a ``sketch.Summary``
    of a feature's finite values (the same edges when the summary is exact; a pruned
    one spreads the weight between its entries over them)."""
    if not len(summary):
        return np.empty(0)
    return _weighted_cuts(summary.values, summary.masses(), max_bin - 1)


def flat_cuts(cuts):
    """``(cuts, cut_ptr)`` of a list of per-feature edges (``BinMapper.from_cuts``)."""
    ptr = np.zeros(len(cuts) + 1, dtype=np.int64)
    np.cumsum([c.size for c in cuts], out=ptr[1:])
    return (np.concatenate(cuts) if cuts else np.empty(0)), ptr
