"""The rows of a tree's nodes (the data partition).

One array holds every node's rows, in two halves: a node's rows are
``rows[lo[0]:hi[0]]`` (in the array's first half) and ``rows[lo[1]:hi[1]]`` (in
its second), increasing in each. A split partitions each half in place, stably,
the left child's rows first, so a leaf's rows stay increasing. With two threads
each thread partitions one half, the one whose rows it wrote last time, in its
own core's caches; when the halves differ by more than a quarter of the rows
(ordered data), each half is partitioned on every thread instead."""
import numpy as np

from cython.parallel cimport prange

from ._typedefs cimport X_BINNED_C, IDX_C
from ._binned_matrix cimport BinnedMatrix
from ._splitting cimport sparse_feature, partition, MAX_PARTITION_CHUNKS, MIN_PARTITION_ROWS


cdef class DataPartition:
    """The partition of ``n_rows`` rows."""

    def __cinit__(self, Py_ssize_t n_rows):
        self.rows = np.empty(n_rows, dtype=np.uint32)
        self.buffer = np.empty(n_rows, dtype=np.uint32)
        self.threads = 0
        self.ensure_threads(1)

    cdef int ensure_threads(self, int threads) except -1:
        """Chunk counts for ``threads`` threads partitioning at once."""
        if threads > self.threads:
            self.chunk_counts = np.empty(threads * MAX_PARTITION_CHUNKS, dtype=np.intp)
            self.threads = threads
        return 0

    cdef void reset(self, const IDX_C* sample, Py_ssize_t n_sample,
                    int n_threads) noexcept nogil:
        """One node of the rows ``sample[:n_sample]`` (increasing), or of all rows
        when ``sample`` is NULL, split in two halves at ``n_sample // 2``."""
        cdef Py_ssize_t i
        cdef IDX_C* rows = &self.rows[0]
        # (on every thread: a serial pass over a million rows left the others idle)
        if sample == NULL:
            for i in prange(n_sample, schedule='static', num_threads=n_threads):
                rows[i] = <IDX_C>i
        else:
            for i in prange(n_sample, schedule='static', num_threads=n_threads):
                rows[i] = sample[i]

    cdef void split(self, BinnedMatrix X, const Py_ssize_t* lo, const Py_ssize_t* hi, int f,
                    int bin, bint default_left, Py_ssize_t* left_in, int tid,
                    int n_threads) noexcept nogil:
        """Partition the node of ranges ``lo``, ``hi`` by feature f's bin <= ``bin``
        (missing rows to the left when ``default_left``), on ``n_threads`` threads
        with the chunk counts of thread ``tid``; ``left_in[h]``: the left rows of half h."""
        cdef Py_ssize_t n0 = hi[0] - lo[0], n1 = hi[1] - lo[1]
        cdef IDX_C* rows = &self.rows[0]
        cdef IDX_C* buffer = &self.buffer[0]
        cdef Py_ssize_t* chunk_counts = &self.chunk_counts[tid * MAX_PARTITION_CHUNKS]
        cdef sparse_feature col
        cdef const X_BINNED_C* column = X.column(f, &col)
        cdef const sparse_feature* sparse = &col if column == NULL else NULL
        cdef int missing_bin = X.n_bins[f], h
        # (two threads only: one per half of the rows; with more, or uneven halves,
        # every thread works on each half in turn)
        if (n_threads == 2 and n0 + n1 >= 2 * MIN_PARTITION_ROWS
                and 4 * (n0 - n1 if n0 > n1 else n1 - n0) <= n0 + n1):
            for h in prange(2, schedule='static', num_threads=2, nogil=True):
                left_in[h] = partition(column, 1, rows + lo[h], hi[h] - lo[h], bin,
                                       missing_bin, default_left, buffer + lo[h],
                                       chunk_counts, 1, sparse)
        else:
            for h in range(2):
                left_in[h] = partition(column, 1, rows + lo[h], hi[h] - lo[h], bin,
                                       missing_bin, default_left, buffer + lo[h],
                                       chunk_counts, n_threads, sparse)

    cdef void merge(self, const Py_ssize_t* lo, const Py_ssize_t* hi,
                    const Py_ssize_t* left_in) noexcept nogil:
        """Undo a split of the node of ranges ``lo``, ``hi``: in each half both
        sides are increasing (the partition is stable), merged back in order."""
        cdef Py_ssize_t i, a, b, n_left, n
        cdef IDX_C* rows
        cdef IDX_C* buf
        cdef int h
        for h in range(2):
            rows = &self.rows[0] + lo[h]
            buf = &self.buffer[0] + lo[h]
            n = hi[h] - lo[h]
            n_left = left_in[h]
            for i in range(n_left):
                buf[i] = rows[i]
            a = 0
            b = n_left
            i = 0
            while a < n_left:
                if b < n and rows[b] < buf[a]:
                    rows[i] = rows[b]
                    b += 1
                else:
                    rows[i] = buf[a]
                    a += 1
                i += 1
