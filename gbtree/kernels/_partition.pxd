from ._typedefs cimport IDX_C, GBT_PREFETCH
from ._binned_matrix cimport BinnedMatrix


cdef enum:
    # How many rows ahead ``add_to_rows`` prefetches a leaf's rows: they are
    # scattered, so far enough for a load from memory to arrive in time
    PREFETCH_ROWS = 64


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


cdef inline void add_to_rows(double* raw, Py_ssize_t stride, const IDX_C* rows,
                             Py_ssize_t a, Py_ssize_t b, double v) noexcept nogil:
    """``raw[rows[i] * stride] += v`` for i in a..b-1 (a leaf's rows are scattered:
    their scores are prefetched)."""
    cdef Py_ssize_t i
    for i in range(a, b):
        if i + PREFETCH_ROWS < b:
            GBT_PREFETCH(raw + rows[i + PREFETCH_ROWS] * stride)
        raw[rows[i] * stride] += v
