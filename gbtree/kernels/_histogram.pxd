from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t

from ._typedefs cimport X_BINNED_C, G_H_C, SUM_C, IDX_C, hist_entry, acc_t

cdef struct sparse_binned:
    # A binned sparse matrix, row-wise: row r's stored entries are
    # k = indptr[r] .. indptr[r + 1] - 1, each the histogram entry
    # bin_offsets[f] + bin of its feature f; an absent entry of feature f is in
    # f's default bin.
    const int64_t* indptr
    const uint32_t* entries     # one of the two is set: uint16 when
    const uint16_t* entries16   # the histogram has at most 65,536 entries
    double row_entries      # stored entries per row, on average (decides the threads)

cdef struct hist_plan:
    # How a histogram build is cut into tasks (row chunk x feature block).
    # The row chunks depend only on the data shape, never on the thread count,
    # so sums are bit-for-bit the same at any n_jobs: each task sums its rows
    # in order and chunks are reduced in chunk order.
    int n_chunks        # row chunks; each chunk > 1 gets a private buffer
    int n_fblocks       # feature blocks per chunk
    Py_ssize_t chunk_rows
    # Buffers the scratch holds (>= n_chunks; make_plan sets n_chunks): the
    # lower half of the chunks use the first buffers, the upper half the last
    # ones (``chunk_buffer``), so that with two threads taking the chunks from
    # both ends, each mostly zeroes and fills buffers it filled before.
    int scratch_chunks

cdef hist_plan make_plan(Py_ssize_t n_rows, int n_features, Py_ssize_t n_entries,
                         int max_chunks, int n_threads) noexcept nogil

cdef void build_histogram(const X_BINNED_C* X, const sparse_binned* S,
                          const IDX_C* rows, Py_ssize_t n_rows,
                          const IDX_C* rows_hi, Py_ssize_t n_lo,
                          const void* values,
                          const int* bin_offsets, int n_features,
                          acc_t* out, acc_t* scratch,
                          hist_plan plan, int n_threads,
                          const X_BINNED_C* default_bin, acc_t* totals) noexcept nogil

cdef void subtract_histograms(acc_t* parent, const acc_t* child,
                              Py_ssize_t n_entries, int n_threads) noexcept nogil

cdef void unpack_histogram(const int64_t* packed, Py_ssize_t n_entries, const double* scales,
                           hist_entry* out) noexcept nogil
