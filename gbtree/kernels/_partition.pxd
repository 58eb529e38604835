from ._typedefs cimport X_BINNED_C, IDX_C, GBT_PREFETCH, sparse_feature
from ._binned_matrix cimport BinnedMatrix


cdef enum:
    # How many rows ahead the partition and ``add_to_rows`` prefetch: a row takes
    # about a nanosecond, and the scattered rows of a deep node each have their bin
    # (or raw score) on a cache line of its own, so far enough for a load from memory
    PREFETCH_ROWS = 64
    # The same for a sparse node's rows (two stages: offsets, then entries); not
    # retuned with the dense distance above.
    SPARSE_PREFETCH_ROWS = 16
    # Upper bound on the parallel partition's chunks (size of chunk_counts).
    MAX_PARTITION_CHUNKS = 64
    # The partition runs in parallel, one chunk per thread, when every chunk
    # gets at least this many rows.
    MIN_PARTITION_ROWS = 2048


cdef class DataPartition:
    cdef IDX_C[::1] rows               # each node's rows, in two halves (see the module)
    cdef IDX_C[::1] buffer             # the partition's scratch
    cdef Py_ssize_t[::1] chunk_counts  # MAX_PARTITION_CHUNKS per thread
    cdef int threads                   # threads with their chunk counts

    cdef int ensure_threads(self, int threads) except -1
    cdef void reset(self, const IDX_C* sample, Py_ssize_t n_sample, int n_threads) noexcept nogil
    cdef void split(self, BinnedMatrix X, const Py_ssize_t* lo, const Py_ssize_t* hi, int f,
                    int bin, bint default_left, Py_ssize_t* left_in, int tid,
                    int n_threads) noexcept nogil
    cdef void merge(self, const Py_ssize_t* lo, const Py_ssize_t* hi,
                    const Py_ssize_t* left_in) noexcept nogil

cdef Py_ssize_t partition(const X_BINNED_C* column, IDX_C* rows,
                          Py_ssize_t n_rows, int bin, int missing_bin, bint default_left,
                          IDX_C* buffer, Py_ssize_t* chunk_counts,
                          int n_threads, const sparse_feature* sparse=*,
                          int simd=*) noexcept nogil


cdef inline void add_to_rows(double* raw, Py_ssize_t stride, const IDX_C* rows,
                             Py_ssize_t a, Py_ssize_t b, double v) noexcept nogil:
    """``raw[rows[i] * stride] += v`` for i in a..b-1 (a leaf's rows are scattered:
    their scores are prefetched)."""
    cdef Py_ssize_t i
    for i in range(a, b):
        if i + PREFETCH_ROWS < b:
            GBT_PREFETCH(raw + rows[i + PREFETCH_ROWS] * stride)
        raw[rows[i] * stride] += v
