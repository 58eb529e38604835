"""The binned training matrix as the grower's kernels read it: row-wise for the
histograms, one feature at a time for the partition. Dense input is a uint8
matrix in C order (its transpose is made once for the partition); sparse input
is a ``binning.SparseBinned``, whose histograms read the stored entries only."""
import numpy as np

from cython.parallel cimport prange

from ._typedefs cimport sparse_feature, X_BINNED_C
from ._histogram cimport sparse_binned


# Rows per block of the parallel transpose (``columns_of``): the block's rows,
# 4096 x n_features bytes, stay in L2 while its columns are written.
cdef Py_ssize_t TRANSPOSE_ROWS = 4096


cdef class BinnedMatrix:
    """``X_binned`` (uint8 (n_rows, n_features) in C order, or a
    ``binning.SparseBinned``) with its ``n_bins`` and ``bin_offsets`` (from
    ``BinMapper``); ``default_bin``: each feature's default bin, whose histogram
    entry is recovered from the node totals (required for sparse input)."""

    def __cinit__(self, X_binned, const int[::1] n_bins, const int[::1] bin_offsets,
                  int n_threads=1, default_bin=None):
        self.is_sparse = not isinstance(X_binned, np.ndarray)
        self.n_rows = X_binned.shape[0]
        self.n_features = X_binned.shape[1]
        self.X_ptr = NULL
        if self.is_sparse:
            if default_bin is None:
                raise ValueError("sparse input needs default_bin")
            self.sparse_source = X_binned   # (which keeps the arrays ``S`` points at)
            sparse_view(X_binned, &self.S)
            self.has_columns = X_binned.col_ptr is not None
            if self.has_columns:
                self.col_ptr = X_binned.col_ptr
                self.col_rows = X_binned.col_rows
                self.col_bins = X_binned.col_bins
            self.dense_index = X_binned.dense_index
            self.dense_cols = X_binned.dense_cols
        else:
            self.X_binned = X_binned
            self.X_columns = columns_of(X_binned, n_threads)
            if self.n_rows > 0 and self.n_features > 0:
                self.X_ptr = &self.X_binned[0, 0]
        self.default_bin = NULL
        if default_bin is not None:
            self.default_bin_v = np.ascontiguousarray(default_bin, dtype=np.uint8)
            self.default_bin = &self.default_bin_v[0] if self.n_features > 0 else NULL
        self.n_bins = n_bins
        self.bin_offsets = bin_offsets
        self.n_entries = bin_offsets[self.n_features]

    cdef const sparse_binned* sparse(self) noexcept nogil:
        """The row-wise entries of sparse input; NULL when dense."""
        return &self.S if self.is_sparse else NULL

    cdef const X_BINNED_C* column(self, int f, sparse_feature* col) noexcept nogil:
        """Feature f's bins, one per row, when stored densely; else NULL, and ``col``
        describes its stored entries."""
        if not self.is_sparse:
            return &self.X_columns[f, 0]
        if self.dense_index[f] >= 0:
            return &self.dense_cols[self.dense_index[f], 0]
        col.has_column = self.has_columns
        if self.has_columns:
            col.col_len = self.col_ptr[f + 1] - self.col_ptr[f]
            col.col_rows = &self.col_rows[self.col_ptr[f]] if col.col_len > 0 else NULL
            col.col_bins = &self.col_bins[self.col_ptr[f]] if col.col_len > 0 else NULL
        col.indptr = self.S.indptr
        col.entries = self.S.entries
        col.entries16 = self.S.entries16
        col.e_lo = self.bin_offsets[f]
        col.e_hi = self.bin_offsets[f + 1]
        col.default_bin = self.default_bin[f]
        return NULL


cdef void sparse_view(X_binned, sparse_binned* S):
    """Point ``S`` at the arrays of a ``binning.SparseBinned`` (which keeps them)."""
    cdef const int64_t[::1] indptr = X_binned.indptr
    cdef const uint32_t[::1] entries
    cdef const uint16_t[::1] entries16
    S.indptr = &indptr[0]
    S.entries = NULL
    S.entries16 = NULL
    if X_binned.entries.dtype == np.uint16:
        entries16 = X_binned.entries
        if entries16.shape[0] > 0:
            S.entries16 = &entries16[0]
    else:
        entries = X_binned.entries
        if entries.shape[0] > 0:
            S.entries = &entries[0]
    S.row_entries = X_binned.entries.shape[0] / max(indptr.shape[0] - 1, 1)



def columns_of(const X_BINNED_C[:, ::1] X_binned, int n_threads=1):
    """The binned matrix in column-major order, (n_features, n_rows) C-contiguous
    (``np.ascontiguousarray(X_binned.T)``), for the partition: blocks of rows
    transposed in parallel (NumPy's copy runs on one thread, and the grower is
    built on every fit)."""
    cdef Py_ssize_t n_rows = X_binned.shape[0], n_features = X_binned.shape[1]
    cdef Py_ssize_t n_blocks = (n_rows + TRANSPOSE_ROWS - 1) // TRANSPOSE_ROWS, c, r, lo, hi
    cdef Py_ssize_t f
    out = np.empty((n_features, n_rows), dtype=np.uint8)
    cdef X_BINNED_C[:, ::1] cols = out
    if n_rows == 0 or n_features == 0:
        return out
    if n_blocks < 2:
        n_threads = 1
    for c in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
        lo = c * TRANSPOSE_ROWS
        hi = min(lo + TRANSPOSE_ROWS, n_rows)
        for f in range(n_features):
            for r in range(lo, hi):
                cols[f, r] = X_binned[r, f]
    return out
