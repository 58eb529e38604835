"""The rows of a tree's nodes (the data partition).

One array holds every node's rows, in two halves: a node's rows are
``rows[lo[0]:hi[0]]`` (in the array's first half) and ``rows[lo[1]:hi[1]]`` (in
its second), increasing in each. A split partitions each half in place, stably,
the left child's rows first, so a leaf's rows stay increasing. With two threads
each thread partitions one half, the one whose rows it wrote last time, in its
own core's caches; when the halves differ by more than a quarter of the rows
(ordered data), each half is partitioned on every thread instead.

``partition`` is the stable partition of a list of rows by one split (a row's
side from a 256-entry table of its bin, or with AVX-512 16 rows a step, their
bins gathered and their ids compressed (_split_rows.h); a sparse column read
first; on two threads the second half is read backwards, so each side of each
half lands in place or in the buffer its thread wrote); ``partition_ranges``
calls it for the rows in blocks (``growing/row_blocks``)."""
import numpy as np

from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport uint8_t, uint32_t, int64_t
from libc.string cimport memcpy, memmove
from libcpp.vector cimport vector

from ._typedefs cimport X_BINNED_C, IDX_C, entry_t, GBT_PREFETCH, first_at_least, sparse_feature
from ._binned_matrix cimport BinnedMatrix
from .simd import simd_cap


cdef extern from "_split_rows.h":
    int gbt_split_rows_level() noexcept nogil
    Py_ssize_t gbt_split_forward_avx512(const X_BINNED_C* X, const IDX_C* rows, Py_ssize_t lo,
                                        Py_ssize_t hi, int bin, int missing_bin,
                                        int default_left, const unsigned char* goes_left,
                                        IDX_C* left_out, IDX_C* right_out,
                                        Py_ssize_t step) noexcept nogil
    Py_ssize_t gbt_split_back_avx512(const X_BINNED_C* X, const IDX_C* rows, Py_ssize_t lo,
                                     Py_ssize_t hi, int bin, int missing_bin,
                                     int default_left, const unsigned char* goes_left,
                                     IDX_C* left_end, IDX_C* right_end) noexcept nogil

# 2 when the dense partition takes 16 rows a step with AVX-512 (this CPU has it and
# GBTREE_SIMD does not cap it), else 0
cdef int _SPLIT_LEVEL = gbt_split_rows_level() if simd_cap() >= 2 else 0


def split_rows_level():
    """2 when the partition of dense rows uses AVX-512 (see ``partition``), else 0."""
    return _SPLIT_LEVEL


cdef struct split_rule:
    # a split's rows' sides: bin <= bin, the missing bin to the left when default_left;
    # simd 2 takes the AVX-512 loop (the same rows in the same places)
    int bin, missing_bin, default_left, simd


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
                left_in[h] = partition(column, rows + lo[h], hi[h] - lo[h], bin,
                                       missing_bin, default_left, buffer + lo[h],
                                       chunk_counts, 1, sparse)
        else:
            for h in range(2):
                left_in[h] = partition(column, rows + lo[h], hi[h] - lo[h], bin,
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


ctypedef const X_BINNED_C* bins_ptr
ctypedef const sparse_feature* feature_ptr


def partition_ranges(columns, IDX_C[::1] rows, const int64_t[:, ::1] bounds,
                     const int[::1] features, const int[::1] bins, const int[::1] missing_bins,
                     const uint8_t[::1] default_left, int n_threads=1, int simd=-1):
    """``partition`` of every range ``rows[bounds[i, 0]:bounds[i, 1]]`` by its own
    split: feature ``features[i]`` (whose bins are ``columns[features[i]]``, a row of a
    column-major binned matrix, or a feature of a ``binning.SparseBinned``),
    ``bins[i]``, ``missing_bins[i]``, ``default_left[i]`` (a level of a depthwise tree
    in one call); returns each range's number of left rows (int64). With fewer
    ranges than twice the threads each is split by all the threads, else the ranges
    are shared out, each split by one thread. ``simd`` caps the vector loop (-1: the
    best there is, 0: none): the tests compare them."""
    cdef Py_ssize_t m = bounds.shape[0], i, most = 1
    cdef bint shared = m >= 2 * n_threads and n_threads > 1
    cdef bint dense = isinstance(columns, np.ndarray)
    cdef const X_BINNED_C[:, ::1] cols
    cdef BinnedMatrix matrix
    cdef Py_ssize_t n_columns = columns.shape[0] if dense else columns.shape[1]
    cdef Py_ssize_t n_rows = columns.shape[1] if dense else columns.shape[0]
    cdef int t
    if not (features.shape[0] == bins.shape[0] == missing_bins.shape[0]
            == default_left.shape[0] == m):
        raise ValueError("features, bins, missing_bins and default_left need one entry per range")
    for i in range(m):
        if not 0 <= bounds[i, 0] <= bounds[i, 1] <= rows.shape[0]:
            raise ValueError(f"bounds[{i}] is not a range of rows")
        if not 0 <= features[i] < n_columns:
            raise ValueError(f"features[{i}] is not a column")
        if bounds[i, 1] > bounds[i, 0] and n_rows == 0:
            raise ValueError("the columns have no rows")
        most = max(most, bounds[i, 1] - bounds[i, 0])
    n_left = np.zeros(m, dtype=np.int64)
    cdef int64_t[::1] n_left_v = n_left
    if rows.shape[0] == 0:
        return n_left
    # each split's column: its bins, one a row (``column``), or NULL and its stored
    # entries (``sparse``)
    cdef vector[bins_ptr] column = vector[bins_ptr](m, NULL)
    cdef vector[sparse_feature] sparse = vector[sparse_feature](max(m, 1))
    cdef vector[feature_ptr] entries = vector[feature_ptr](m, NULL)
    if dense:
        cols = columns
        for i in range(m if n_rows > 0 else 0):   # (no rows: no range is split)
            column[i] = &cols[features[i], 0]
    else:   # (the features as the histogram grower reads them)
        matrix = BinnedMatrix(columns, np.diff(columns.bin_offsets).astype(np.intc) - 1,
                              np.asarray(columns.bin_offsets, dtype=np.intc), 1,
                              columns.default_bin)
        for i in range(m):
            column[i] = matrix.column(features[i], &sparse[i])
            if column[i] == NULL:
                entries[i] = &sparse[i]
    cdef int buffers = n_threads if shared else 1
    buffer = np.empty((buffers, most), dtype=np.uint32)
    counts = np.empty((buffers, MAX_PARTITION_CHUNKS), dtype=np.intp)
    cdef IDX_C[:, ::1] buf_v = buffer
    cdef Py_ssize_t[:, ::1] counts_v = counts
    if not shared:
        with nogil:
            for i in range(m):
                if bounds[i, 1] > bounds[i, 0]:
                    n_left_v[i] = partition(column[i], &rows[bounds[i, 0]],
                                            bounds[i, 1] - bounds[i, 0], bins[i],
                                            missing_bins[i], default_left[i], &buf_v[0, 0],
                                            &counts_v[0, 0], n_threads, entries[i], simd)
        return n_left
    with nogil, parallel(num_threads=n_threads):
        t = threadid()
        for i in prange(m, schedule='dynamic'):
            if bounds[i, 1] > bounds[i, 0]:
                n_left_v[i] = partition(column[i], &rows[bounds[i, 0]],
                                        bounds[i, 1] - bounds[i, 0], bins[i], missing_bins[i],
                                        default_left[i], &buf_v[t, 0], &counts_v[t, 0], 1,
                                        entries[i], simd)
    return n_left


cdef inline int _goes_left(X_BINNED_C b, int bin, int missing_bin, bint default_left) noexcept nogil:
    # 0 or 1 without a branch: the direction of a row is unpredictable
    return ((b <= bin) & (b != missing_bin)) | ((b == missing_bin) & default_left)


cdef Py_ssize_t _split_chunk(const X_BINNED_C* X, const IDX_C* rows,
                             Py_ssize_t lo, Py_ssize_t hi, const unsigned char* goes_left,
                             IDX_C* left_out, IDX_C* right_out,
                             Py_ssize_t right_step, const split_rule* split) noexcept nogil:
    """One pass over ``rows[lo:hi]``: its left rows go to ``left_out[lo:]`` in
    their order, its right rows to ``right_out[0]``, ``right_out[right_step]``,
    ``right_out[2 * right_step]``, ... (``right_step`` 1 or -1). Returns the
    number of left rows. ``X``
    already points at the split feature's column; ``goes_left[b]`` is 1 when a
    row of bin b goes left (a table: one load instead of the comparisons).

    ``left_out`` may be ``rows`` itself (the write never passes the read); with
    ``right_out = out + hi - 1`` and ``right_step = -1`` both sides fill
    ``out[lo:hi]`` from its two ends (the right rows in reverse order).
    ``split``: the split, and whether the AVX-512 loop takes the rows.
    """
    cdef Py_ssize_t i, nl = lo, pf_end = hi - PREFETCH_ROWS
    cdef IDX_C r
    if split.simd == 2:
        return gbt_split_forward_avx512(X, rows, lo, hi, split.bin, split.missing_bin,
                                        split.default_left, goes_left, left_out, right_out,
                                        right_step)
    # Without a branch: the row is written to both sides, at the next left place
    # and at the next right one (i - nl rows went right before it), and only the
    # left count moves on (the other copy is overwritten later). One loop per step:
    # a shared inline loop of the step compiled 5-10 % slower.
    if right_step == 1:
        for i in range(lo, hi):
            if i < pf_end:
                GBT_PREFETCH(X + rows[i + PREFETCH_ROWS])
            r = rows[i]
            left_out[nl] = r
            right_out[i - nl] = r
            nl += goes_left[X[r]]
    else:
        for i in range(lo, hi):
            if i < pf_end:
                GBT_PREFETCH(X + rows[i + PREFETCH_ROWS])
            r = rows[i]
            left_out[nl] = r
            right_out[nl - i] = r
            nl += goes_left[X[r]]
    return nl - lo


cdef Py_ssize_t _split_chunk_back(const X_BINNED_C* X, IDX_C* rows,
                                  Py_ssize_t lo, Py_ssize_t hi, const unsigned char* goes_left,
                                  IDX_C* left_end, IDX_C* right_end,
                                  const split_rule* split) noexcept nogil:
    """``_split_chunk`` from the last row of ``rows[lo:hi]`` back to the first: its
    right rows go to ``right_end[0]``, ``right_end[-1]``, ... and its left rows to
    ``left_end[0]``, ``left_end[-1]``, ..., so that each side ends at its pointer in
    the rows' order. ``right_end`` may be ``rows + hi - 1`` itself (the write never
    passes the read). Returns the number of left rows."""
    cdef Py_ssize_t i, nl = 0
    cdef IDX_C r
    if split.simd == 2:
        return gbt_split_back_avx512(X, rows, lo, hi, split.bin, split.missing_bin,
                                     split.default_left, goes_left, left_end, right_end)
    for i in range(hi - 1, lo - 1, -1):
        if i - PREFETCH_ROWS >= lo:
            GBT_PREFETCH(X + rows[i - PREFETCH_ROWS])
        r = rows[i]
        # (as in _split_chunk: hi - 1 - i - nl rows went right before it)
        left_end[-nl] = r
        right_end[nl - (hi - 1 - i)] = r
        nl += goes_left[X[r]]
    return nl


cdef inline Py_ssize_t _find_entry(const entry_t* e, Py_ssize_t n, Py_ssize_t e_lo) noexcept nogil:
    """The first of e[0:n] (increasing) that is >= e_lo, or e_lo - 1 if none:
    a binary search without branches (conditional moves)."""
    cdef const entry_t* first = e
    cdef Py_ssize_t half
    if n == 0:
        return e_lo - 1
    while n > 1:
        half = n >> 1
        first = first + half if first[half - 1] < e_lo else first
        n = n - half
    return first[0] if first[0] >= e_lo else e_lo - 1


cdef Py_ssize_t _split_sparse_rows(const int64_t* indptr, const entry_t* entries,
                                   Py_ssize_t e_lo, Py_ssize_t e_hi, bint absent_left,
                                   IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi, int bin,
                                   int missing_bin, bint default_left,
                                   IDX_C* right) noexcept nogil:
    cdef Py_ssize_t i, nl = lo, nr = 0, e, pf_end = hi - 2 * SPARSE_PREFETCH_ROWS
    cdef IDX_C r
    cdef int left, present
    if pf_end < lo:
        pf_end = lo
    for i in range(lo, hi):
        if i < pf_end:
            GBT_PREFETCH(indptr + rows[i + 2 * SPARSE_PREFETCH_ROWS])
            GBT_PREFETCH(entries + indptr[rows[i + SPARSE_PREFETCH_ROWS]])
        r = rows[i]
        e = _find_entry(entries + indptr[r], indptr[r + 1] - indptr[r], e_lo)
        present = (e >= e_lo) & (e < e_hi)
        left = ((present & _goes_left(<X_BINNED_C>(e - e_lo), bin, missing_bin, default_left))
                | ((1 - present) & absent_left))
        rows[nl] = r          # both sides, as in _split_chunk
        right[nr] = r
        nl += left
        nr += 1 - left
    return nl - lo


cdef Py_ssize_t _split_column(const sparse_feature* col, bint absent_left, IDX_C* rows,
                              Py_ssize_t lo, Py_ssize_t hi, int bin, int missing_bin,
                              bint default_left, IDX_C* right) noexcept nogil:
    """The split feature's column walked beside the (increasing) rows: the rows
    before the next stored one go to the absent rows' side in a tight loop; the
    column is galloped over the entries of other rows."""
    cdef Py_ssize_t i = lo, nl = lo, nr = 0, pos = 0
    cdef int64_t nxt
    cdef IDX_C r
    cdef int left
    while i < hi:
        pos = first_at_least(col.col_rows, pos, col.col_len, rows[i])
        nxt = col.col_rows[pos] if pos < col.col_len else <int64_t>1 << 40
        if absent_left:
            while i < hi and rows[i] < nxt:
                rows[nl] = rows[i]
                nl += 1
                i += 1
        else:
            while i < hi and rows[i] < nxt:
                right[nr] = rows[i]
                nr += 1
                i += 1
        if i < hi and rows[i] == nxt:
            r = rows[i]
            left = _goes_left(col.col_bins[pos], bin, missing_bin, default_left)
            rows[nl] = r      # both sides, as in _split_chunk
            right[nr] = r
            nl += left
            nr += 1 - left
            i += 1
            pos += 1
    return nl - lo


cdef Py_ssize_t _split_chunk_sparse(const sparse_feature* col, IDX_C* rows,
                                    Py_ssize_t lo, Py_ssize_t hi, int bin, int missing_bin,
                                    bint default_left, IDX_C* right) noexcept nogil:
    """``_split_chunk`` for a sparse matrix: from the feature's column when the
    matrix has one, else from each row's entries by binary search (absent: the
    default bin)."""
    cdef bint absent_left = _goes_left(col.default_bin, bin, missing_bin, default_left)
    if col.has_column:
        return _split_column(col, absent_left, rows, lo, hi, bin, missing_bin, default_left,
                             right)
    if col.entries16 != NULL:
        return _split_sparse_rows(col.indptr, col.entries16, col.e_lo, col.e_hi, absent_left,
                                  rows, lo, hi, bin, missing_bin, default_left, right)
    if col.entries != NULL:
        return _split_sparse_rows(col.indptr, col.entries, col.e_lo, col.e_hi, absent_left,
                                  rows, lo, hi, bin, missing_bin, default_left, right)
    return _split_sparse_rows(col.indptr, <const uint32_t*>NULL, col.e_lo, col.e_hi,
                              absent_left, rows, lo, hi, bin, missing_bin, default_left, right)


cdef inline void _copy_reversed(IDX_C* dst, const IDX_C* src, Py_ssize_t n) noexcept nogil:
    """``dst[j] = src[n - 1 - j]``: the right rows back in their order."""
    cdef Py_ssize_t j
    for j in range(n):
        dst[j] = src[n - 1 - j]


cdef void _fill_range(IDX_C* rows, const IDX_C* buffer, const Py_ssize_t* chunk_counts,
                      Py_ssize_t n_chunks, Py_ssize_t chunk, Py_ssize_t n_rows,
                      Py_ssize_t d_lo, Py_ssize_t d_hi, bint forward_right) noexcept nogil:
    """rows[d_lo:d_hi] of the partitioned rows: chunk k's left rows go to
    rows[before_k:], its right rows after all left rows and the earlier chunks'
    right rows (in buffer[lo_k + count_k:hi_k], forward or from the end)."""
    cdef Py_ssize_t k, lo, hi, before = 0, total = 0, s, m, a, b
    for k in range(n_chunks):
        total += chunk_counts[k]
    for k in range(n_chunks):
        lo = k * chunk
        hi = min(lo + chunk, n_rows)
        m = chunk_counts[k]
        # left rows: rows[before:before + m] = buffer[lo:lo + m]
        a = max(before, d_lo)
        b = min(before + m, d_hi)
        if a < b:
            memcpy(rows + a, buffer + lo + (a - before), (b - a) * sizeof(IDX_C))
        # right rows: rows[s:s + hi - lo - m]
        s = total + lo - before
        a = max(s, d_lo)
        b = min(s + hi - lo - m, d_hi)
        if a < b:
            if forward_right:
                memcpy(rows + a, buffer + lo + m + (a - s), (b - a) * sizeof(IDX_C))
            else:
                _copy_reversed(rows + a, buffer + hi - (b - s), b - a)
        before += m


cdef Py_ssize_t partition(const X_BINNED_C* column, IDX_C* rows,
                          Py_ssize_t n_rows, int bin, int missing_bin, bint default_left,
                          IDX_C* buffer, Py_ssize_t* chunk_counts,
                          int n_threads, const sparse_feature* sparse=NULL,
                          int simd=-1) noexcept nogil:
    """Stable in-place partition of ``rows[0:n_rows]``: left rows first, order kept.

    Row r's bin of the split feature is ``column[r]`` (a row of a column-major
    copy: the rows of a node are increasing, so their bins share cache lines).

    Returns the number of left rows. ``buffer`` holds n_rows indices and
    ``chunk_counts`` ``MAX_PARTITION_CHUNKS`` counters. The result is the same
    whatever the chunking, so the chunks may follow the thread count.
    With ``sparse`` the bins come from that feature of a sparse binned matrix
    instead of ``column``. ``simd`` caps the vector loop (-1: the best there is,
    0: none): the same partition.
    """
    cdef Py_ssize_t n_chunks = n_rows // MIN_PARTITION_ROWS
    cdef Py_ssize_t chunk, c, lo, hi, n_left = 0
    cdef const X_BINNED_C* X = column
    cdef unsigned char goes_left[256]
    cdef int b
    cdef split_rule split
    split.bin = bin
    split.missing_bin = missing_bin
    split.default_left = default_left
    split.simd = _SPLIT_LEVEL if simd < 0 or simd > _SPLIT_LEVEL else simd
    if sparse == NULL:
        for b in range(256):
            goes_left[b] = _goes_left(<X_BINNED_C>b, bin, missing_bin, default_left)
    if n_chunks > n_threads:
        n_chunks = n_threads
    if n_chunks > MAX_PARTITION_CHUNKS:
        n_chunks = MAX_PARTITION_CHUNKS
    if n_chunks < 2:
        if sparse != NULL:
            n_left = _split_chunk_sparse(sparse, rows, 0, n_rows, bin, missing_bin,
                                         default_left, buffer)
        else:
            n_left = _split_chunk(X, rows, 0, n_rows, goes_left, rows, buffer, 1, &split)
        memcpy(rows + n_left, buffer, (n_rows - n_left) * sizeof(IDX_C))
        return n_left
    chunk = (n_rows + n_chunks - 1) // n_chunks
    if n_chunks == 2 and sparse == NULL:
        # Two halves: the first splits forward (left rows in place, right rows to
        # the buffer's start), the second backward (right rows in place at the
        # end, left rows to the buffer's end); then each thread copies the side it
        # wrote to the buffer into the middle. Every row moves once and about half
        # of them a second time, from their own thread's buffer. (The general
        # scheme below moves every row twice, the second time mostly from the
        # other thread's buffer.)
        with parallel(num_threads=2):
            for c in prange(2, schedule='static'):
                if c == 0:
                    chunk_counts[0] = _split_chunk(X, rows, 0, chunk, goes_left,
                                                   rows, buffer, 1, &split)
                else:
                    chunk_counts[1] = _split_chunk_back(X, rows, chunk, n_rows,
                                                        goes_left, buffer + n_rows - 1,
                                                        rows + n_rows - 1, &split)
            for c in prange(2, schedule='static'):
                if c == 0:
                    # the first half's right rows follow all left rows
                    memcpy(rows + chunk_counts[0] + chunk_counts[1], buffer,
                           (chunk - chunk_counts[0]) * sizeof(IDX_C))
                else:
                    # the second half's left rows follow the first half's
                    memcpy(rows + chunk_counts[0], buffer + n_rows - chunk_counts[1],
                           chunk_counts[1] * sizeof(IDX_C))
        return chunk_counts[0] + chunk_counts[1]
    with parallel(num_threads=n_threads):
        # 1. each chunk splits itself into buffer[lo:hi], left rows first, right
        #    rows from the end backwards
        for c in prange(n_chunks, schedule='static'):
            lo = c * chunk
            hi = min(lo + chunk, n_rows)
            if sparse != NULL:
                chunk_counts[c] = _split_chunk_sparse(sparse, rows, lo, hi, bin, missing_bin,
                                                      default_left, buffer + lo)
                # left rows in place, right rows at buffer[lo:]: both into buffer,
                # right rows after the left ones (in their order)
                memmove(buffer + lo + chunk_counts[c], buffer + lo,
                        (hi - lo - chunk_counts[c]) * sizeof(IDX_C))
                memcpy(buffer + lo, rows + lo, chunk_counts[c] * sizeof(IDX_C))
            else:
                chunk_counts[c] = _split_chunk(X, rows, lo, hi, goes_left, buffer,
                                               buffer + hi - 1, -1, &split)
        # 2. every chunk fills its own range rows[lo:hi] (the rows it read in 1.)
        #    from the chunks' sides that land there
        for c in prange(n_chunks, schedule='static'):
            lo = c * chunk
            hi = min(lo + chunk, n_rows)
            _fill_range(rows, buffer, chunk_counts, n_chunks, chunk, n_rows, lo, hi,
                        sparse != NULL)
    for c in range(n_chunks):
        n_left += chunk_counts[c]
    return n_left


# ---------------------------------------------------------------- Python entry points
