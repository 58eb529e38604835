from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t

from ._typedefs cimport sparse_feature, X_BINNED_C
from ._histogram cimport sparse_binned


cdef class BinnedMatrix:
    cdef readonly Py_ssize_t n_rows
    cdef readonly int n_features
    cdef readonly Py_ssize_t n_entries        # histogram entries: bin_offsets[n_features]
    cdef readonly bint is_sparse
    cdef const int[::1] n_bins
    cdef const int[::1] bin_offsets
    cdef const X_BINNED_C* default_bin        # per feature, or NULL
    cdef const X_BINNED_C[::1] default_bin_v
    # dense: the rows (histograms) and the columns (partition)
    cdef const X_BINNED_C[:, ::1] X_binned
    cdef const X_BINNED_C[:, ::1] X_columns
    cdef const X_BINNED_C* X_ptr              # &X_binned[0, 0]; NULL when sparse
    # sparse: the row-wise entries, and for the partition a column-wise copy
    # (when made) and the features stored densely
    cdef sparse_binned S
    cdef object sparse_source
    cdef bint has_columns
    cdef const int64_t[::1] col_ptr
    cdef const uint32_t[::1] col_rows
    cdef const X_BINNED_C[::1] col_bins
    cdef const int32_t[::1] dense_index       # row of dense_cols holding feature f, or -1
    cdef const X_BINNED_C[:, ::1] dense_cols

    cdef const sparse_binned* sparse(self) noexcept nogil
    cdef const X_BINNED_C* column(self, int f, sparse_feature* col) noexcept nogil


cdef void sparse_view(X_binned, sparse_binned* S)
