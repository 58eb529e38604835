"""The prange kernels of binning: raw values to bins (dense or CSR), the
distinct-value edges of sparse columns, the sketch's rows and their radix sort."""
from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.math cimport isnan, rint, INFINITY
from libcpp cimport bool as cbool
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

import numpy as np

from ..kernels._typedefs cimport X_BINNED_C, check_item_strides

cdef enum:
    ROW_BLOCK = 256     # rows binned together, feature by feature


cdef extern from *:
    """
    /* Number of cuts < x, by a binary search without branches: the step is masked
       in integer arithmetic, so no compiler turns it into an (unpredictable) jump. */
    static inline int gbt_count_below(double x, const double* cuts, int n) {
        const double* first = cuts;
        int length = n;
        while (length > 0) {
            int half = length >> 1;
            first += (-(int)(first[half] < x)) & (length - half);
            length = half;
        }
        return (int)(first - cuts);
    }
    /* The same search for 8 values in lock step: the halving lengths do not
       depend on the values, so the 8 chains of loads overlap instead of one
       search waiting on each of its loads in turn. NaN compares false: 0. */
    static inline void gbt_count_below_8(const double* xs, const double* cuts, int n,
                                         int* out) {
        int pos[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int length = n;
        while (length > 0) {
            int half = length >> 1, step = length - half;
            for (int k = 0; k < 8; ++k)
                pos[k] += (-(int)(cuts[pos[k] + half] < xs[k])) & step;
            length = half;
        }
        for (int k = 0; k < 8; ++k)
            out[k] = pos[k];
    }
    """
    int gbt_count_below(double x, const double* cuts, int n) noexcept nogil
    void gbt_count_below_8(const double* xs, const double* cuts, int n, int* out) noexcept nogil


cdef inline X_BINNED_C _bin_one(double x, const double* cuts, int n_cuts) noexcept nogil:
    # Bin b holds cuts[b-1] < x <= cuts[b]: the number of cuts < x.
    if isnan(x):
        return <X_BINNED_C>(n_cuts + 1)          # the missing bin, right after the last value bin
    return <X_BINNED_C>gbt_count_below(x, cuts, n_cuts)


cdef void _bin_rows(const floating* x, Py_ssize_t x_step, Py_ssize_t n,
                    const double* cuts, int n_cuts, X_BINNED_C* out,
                    Py_ssize_t out_step) noexcept nogil:
    """``out[i * out_step]`` = the bin of ``x[i * x_step]`` for i < n: eight
    values at a time (``gbt_count_below_8``), then one by one."""
    cdef double xs[8]
    cdef int found[8]
    cdef Py_ssize_t i = 0
    cdef int k
    while i + 8 <= n:
        for k in range(8):
            xs[k] = x[(i + k) * x_step]
        gbt_count_below_8(xs, cuts, n_cuts, found)
        for k in range(8):
            out[(i + k) * out_step] = <X_BINNED_C>(n_cuts + 1 if isnan(xs[k]) else found[k])
        i += 8
    while i < n:
        out[i * out_step] = _bin_one(x[i * x_step], cuts, n_cuts)
        i += 1


def map_to_bins(const floating[:, :] X, const double[::1] cuts, const int[::1] cut_ptr,
                X_BINNED_C[:, ::1] binned, int n_threads):
    """Fill ``binned[i, f]`` with the bin of ``X[i, f]``.

    ``cuts[cut_ptr[f]:cut_ptr[f + 1]]`` are the sorted upper edges of feature
    f's value bins; NaN goes to the missing bin ``n_cuts_f + 1``.
    """
    cdef Py_ssize_t n_rows = X.shape[0], n_features = X.shape[1]
    cdef Py_ssize_t i, f, blk, lo, hi, n_blocks
    cdef int start, n_cuts
    cdef Py_ssize_t x_step = X.strides[0] // sizeof(floating)
    check_item_strides(n_rows, X.strides[0], n_features, X.strides[1], sizeof(floating))
    if n_rows == 0:
        return
    if X.strides[0] < X.strides[1]:
        # Fortran-ordered input: walk each column contiguously.
        for f in prange(n_features, schedule='static', num_threads=n_threads, nogil=True):
            start = cut_ptr[f]
            n_cuts = cut_ptr[f + 1] - start
            _bin_rows(&X[0, f], x_step, n_rows, &cuts[start], n_cuts, &binned[0, f],
                      n_features)
    else:
        # Blocks of rows, feature by feature within a block: one feature's edges stay
        # in L1 and the block's searches are independent (they overlap), instead of
        # one search per feature in turn, each a chain of L2 loads.
        # (dynamic: the two threads do not run at one speed here (the output's fresh
        # pages, a busy host), and a static half each left one idle for up to a third)
        n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
        for blk in prange(n_blocks, schedule='dynamic', chunksize=8, num_threads=n_threads,
                          nogil=True):
            lo = blk * ROW_BLOCK
            hi = lo + ROW_BLOCK
            if hi > n_rows:
                hi = n_rows
            for f in range(n_features):
                start = cut_ptr[f]
                n_cuts = cut_ptr[f + 1] - start
                _bin_rows(&X[lo, f], x_step, hi - lo, &cuts[start], n_cuts,
                          &binned[lo, f], n_features)


def bin_sparse(const floating[::1] data, const int32_t[::1] indices, const int64_t[::1] indptr,
               const double[::1] cuts, const int[::1] cut_ptr,
               const X_BINNED_C[::1] default_bin, const int[::1] bin_offsets, int n_threads):
    """Bin a canonical CSR matrix, keeping only the entries whose bin is not their
    feature's default bin. Returns ``(indptr, entries)``: row r's entries are
    ``entries[indptr[r]:indptr[r + 1]]``, each the histogram entry
    ``bin_offsets[f] + bin`` (increasing within a row), uint16 when the histogram
    has at most 65,536 entries, else uint32."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, nnz = data.shape[0], i, k, pos
    cdef int ff
    cdef bint narrow = bin_offsets[bin_offsets.shape[0] - 1] <= 65536
    bins_np = np.empty(max(nnz, 1), dtype=np.uint8)
    cdef X_BINNED_C[::1] bins = bins_np
    row_kept_np = np.zeros(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] row_kept = row_kept_np
    cdef int64_t kept
    cdef X_BINNED_C b
    with nogil:
        for i in prange(n_rows, schedule='static', num_threads=n_threads):
            kept = 0
            for k in range(indptr[i], indptr[i + 1]):
                ff = indices[k]
                b = _bin_one(data[k], &cuts[cut_ptr[ff]], cut_ptr[ff + 1] - cut_ptr[ff])
                bins[k] = b
                if b != default_bin[ff]:
                    kept = kept + 1
            row_kept[i + 1] = kept
        for i in range(n_rows):
            row_kept[i + 1] += row_kept[i]
    entries_np = np.empty(row_kept[n_rows], dtype=np.uint16 if narrow else np.uint32)
    cdef uint16_t[::1] e16
    cdef uint32_t[::1] e32
    if narrow:
        e16 = entries_np
    else:
        e32 = entries_np
    with nogil:
        for i in prange(n_rows, schedule='static', num_threads=n_threads):
            pos = row_kept[i]
            for k in range(indptr[i], indptr[i + 1]):
                ff = indices[k]
                if bins[k] != default_bin[ff]:
                    if narrow:
                        e16[pos] = <uint16_t>(bin_offsets[ff] + bins[k])
                    else:
                        e32[pos] = <uint32_t>(bin_offsets[ff] + bins[k])
                    pos = pos + 1
    return row_kept_np, entries_np


cdef inline bint _insert_distinct(vector[double]& buf, double v, int limit) noexcept nogil:
    """Insert v into the sorted distinct values ``buf`` unless present; False when
    that would make more than ``limit`` of them."""
    cdef Py_ssize_t lo = 0, hi = <Py_ssize_t>buf.size(), mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if buf[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < <Py_ssize_t>buf.size() and buf[lo] == v:
        return True
    if <Py_ssize_t>buf.size() >= limit:
        return False
    buf.insert(buf.begin() + lo, v)
    return True


def sparse_distinct_cuts(const floating[::1] data, const int32_t[::1] rows,
                         const int64_t[::1] col_ptr, Py_ssize_t n_rows,
                         const unsigned char[::1] positive, bint absent_zero,
                         int max_value_bins):
    """Edges of the columns of a CSC matrix that have at most ``max_value_bins``
    distinct finite values (their midpoints, as ``binning._weighted_cuts``).

    Entries of rows with ``positive[row] == 0`` (zero weight) are ignored; with
    ``absent_zero`` the absent entries of rows of positive weight count as
    0.0. Returns ``(cuts, counts, quantile)``: column f's edges are the next
    ``counts[f]`` values of ``cuts``; ``quantile[f]`` marks the columns with more
    distinct values, which get no edges here.
    """
    cdef Py_ssize_t n_cols = col_ptr.shape[0] - 1, f, k, n, j, n_distinct
    cdef Py_ssize_t n_positive = n_rows
    cdef bint weighted = positive.shape[0] > 0
    cdef vector[double] buf
    cdef vector[double] out
    cdef double v
    counts_np = np.zeros(n_cols, dtype=np.int32)
    quantile_np = np.zeros(n_cols, dtype=bool)
    cdef int[::1] counts = counts_np
    cdef cbool[::1] quantile = quantile_np
    if weighted:
        n_positive = 0
        for k in range(n_rows):
            n_positive += positive[k] != 0
    with nogil:
        for f in range(n_cols):
            # the distinct values, kept sorted; give up past max_value_bins of them
            buf.clear()
            n = 0
            for k in range(col_ptr[f], col_ptr[f + 1]):
                if weighted and not positive[rows[k]]:
                    continue
                n += 1
                v = data[k]
                if isnan(v) or v == INFINITY or v == -INFINITY:
                    continue
                if not _insert_distinct(buf, v, max_value_bins):
                    quantile[f] = True
                    break
            if quantile[f]:
                continue
            if absent_zero and n_positive - n > 0:
                if not _insert_distinct(buf, 0.0, max_value_bins):
                    quantile[f] = True
                    continue
            n_distinct = <Py_ssize_t>buf.size()
            for j in range(n_distinct - 1):
                out.push_back(_midpoint(buf[j], buf[j + 1]))
            counts[f] = <int>(n_distinct - 1 if n_distinct > 1 else 0)
    cuts_np = np.empty(out.size(), dtype=np.float64)
    for j in range(<Py_ssize_t>out.size()):
        cuts_np[j] = out[j]
    return cuts_np, counts_np, quantile_np


def sparse_columns(const int64_t[::1] indptr, const uint16_t[::1] entries,
                   const int[::1] bin_offsets):
    """The column-wise copy of a binned sparse matrix with uint16 entries:
    ``(col_ptr, col_rows, col_bins)``, rows increasing within each column."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_features = bin_offsets.shape[0] - 1
    cdef Py_ssize_t i, k, f
    cdef int e
    owner_np = np.repeat(np.arange(n_features, dtype=np.int32), np.diff(bin_offsets))
    cdef const int32_t[::1] owner = owner_np
    col_ptr_np = np.zeros(n_features + 1, dtype=np.int64)
    cdef int64_t[::1] col_ptr = col_ptr_np
    col_rows_np = np.empty(entries.shape[0], dtype=np.uint32)
    col_bins_np = np.empty(entries.shape[0], dtype=np.uint8)
    cdef uint32_t[::1] col_rows = col_rows_np
    cdef X_BINNED_C[::1] col_bins = col_bins_np
    fill_np = np.empty(n_features, dtype=np.int64)
    cdef int64_t[::1] fill = fill_np
    with nogil:
        for k in range(entries.shape[0]):
            col_ptr[owner[entries[k]] + 1] += 1
        for f in range(n_features):
            col_ptr[f + 1] += col_ptr[f]
            fill[f] = col_ptr[f]
        for i in range(n_rows):
            for k in range(indptr[i], indptr[i + 1]):
                e = entries[k]
                f = owner[e]
                col_rows[fill[f]] = <uint32_t>i
                col_bins[fill[f]] = <X_BINNED_C>(e - bin_offsets[f])
                fill[f] += 1
    return col_ptr_np, col_rows_np, col_bins_np


# ------------------------------------------------------------ sorting the sketch
# The edges need each feature's sample sorted. An LSD radix sort of the values'
# bit patterns (made to sort as unsigned integers: the sign bit flipped for
# positive values, every bit for negative ones) takes a few passes over the
# column, features in parallel, where a comparison sort took the bulk of fit().

cdef enum:
    RADIX_BITS = 11
    RADIX_SIZE = 2048     # 1 << RADIX_BITS


cdef inline uint32_t _key32(float x) noexcept nogil:
    cdef uint32_t u = (<uint32_t*>&x)[0]
    return u ^ (<uint32_t>(-<int32_t>(u >> 31)) | <uint32_t>0x80000000)


cdef inline float _value32(uint32_t k) noexcept nogil:
    cdef uint32_t u = k ^ (<uint32_t>0x80000000 if k >> 31 else <uint32_t>0xFFFFFFFF)
    return (<float*>&u)[0]


cdef inline uint64_t _key64(double x) noexcept nogil:
    cdef uint64_t u = (<uint64_t*>&x)[0]
    return u ^ (<uint64_t>(-<int64_t>(u >> 63)) | (<uint64_t>1 << 63))


cdef inline double _value64(uint64_t k) noexcept nogil:
    cdef uint64_t u = k ^ ((<uint64_t>1 << 63) if k >> 63 else <uint64_t>0xFFFFFFFFFFFFFFFF)
    return (<double*>&u)[0]


cdef uint64_t* _radix_sort(uint64_t* a, uint64_t* tmp, Py_ssize_t n, int key_bits,
                           Py_ssize_t* counts) noexcept nogil:
    """Sort ``a[:n]`` (unsigned keys of ``key_bits`` bits) with ``tmp`` as the other
    buffer; returns the buffer holding the result. ``counts`` has room for
    ``ceil(key_bits / RADIX_BITS) * RADIX_SIZE`` counters. A pass whose digit is
    the same for every key is skipped."""
    cdef int n_passes = (key_bits + RADIX_BITS - 1) // RADIX_BITS, p, d
    cdef Py_ssize_t i, total, c
    cdef uint64_t* src = a
    cdef uint64_t* dst = tmp
    cdef uint64_t* swap
    cdef Py_ssize_t* cnt
    for i in range(n_passes * RADIX_SIZE):
        counts[i] = 0
    for i in range(n):
        for p in range(n_passes):
            counts[p * RADIX_SIZE + ((a[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1))] += 1
    for p in range(n_passes):
        cnt = counts + p * RADIX_SIZE
        if n == 0 or cnt[(a[0] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)] == n:
            continue
        total = 0
        for d in range(RADIX_SIZE):      # counts become each digit's first place
            c = cnt[d]
            cnt[d] = total
            total += c
        for i in range(n):
            d = (src[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)
            dst[cnt[d]] = src[i]
            cnt[d] += 1
        swap = src
        src = dst
        dst = swap
    return src


def take_rows(const floating[:, ::1] X, const int64_t[::1] rows, floating[:, ::1] out,
              int n_threads):
    """``out[i] = X[rows[i]]`` (the sketch's subsample) on ``n_threads``: a fresh
    ``out`` has its pages first touched on every thread too, where ``X[rows]``
    copies and faults on one. Rows out of range raise ``IndexError``."""
    cdef Py_ssize_t i, n = rows.shape[0], p = X.shape[1], n_rows = X.shape[0]
    cdef size_t row_bytes = p * sizeof(floating)
    if out.shape[0] != n or out.shape[1] != p:
        raise ValueError(f"out has shape {(out.shape[0], out.shape[1])}, expected {(n, p)}")
    for i in range(n):
        if rows[i] < 0 or rows[i] >= n_rows:
            raise IndexError(f"row {rows[i]} out of range for {n_rows} rows")
    if p == 0:
        return
    for i in prange(n, schedule='dynamic', chunksize=1024, num_threads=n_threads, nogil=True):
        memcpy(&out[i, 0], &X[rows[i], 0], row_bytes)


def sorted_finite_columns(const floating[:, :] X, int f_lo, int f_hi, floating[:, ::1] out,
                          int64_t[::1] lengths, uint64_t[:, :, ::1] scratch,
                          Py_ssize_t[:, ::1] counts, int n_threads):
    """``out[k, :lengths[k]]`` = the finite values of column ``f_lo + k`` of X, sorted
    ascending (-0.0 before 0.0), for ``f_lo <= f < f_hi``. ``scratch`` (n_threads,
    2, n_rows) and ``counts`` (n_threads, 6 * 2048) are the threads' buffers."""
    cdef Py_ssize_t n = X.shape[0], i, m
    cdef int f, t, key_bits = 32 if floating is float else 64
    cdef uint64_t* keys
    cdef uint64_t* res
    cdef floating x
    if scratch.shape[0] < n_threads or scratch.shape[2] < n or counts.shape[0] < n_threads:
        raise ValueError("scratch buffers too small")
    for f in prange(f_lo, f_hi, schedule='dynamic', num_threads=n_threads, nogil=True):
        t = threadid()
        keys = &scratch[t, 0, 0]
        m = 0
        for i in range(n):
            x = X[i, f]
            if x - x == 0:        # finite: not NaN, not +-inf
                if floating is float:
                    keys[m] = _key32(x)
                else:
                    keys[m] = _key64(x)
                m = m + 1
        res = _radix_sort(keys, &scratch[t, 1, 0], m, key_bits, &counts[t, 0])
        for i in range(m):
            if floating is float:
                out[f - f_lo, i] = _value32(<uint32_t>res[i])
            else:
                out[f - f_lo, i] = _value64(res[i])
        lengths[f - f_lo] = m


cdef inline double _midpoint(double lo, double hi) noexcept nogil:
    """The edge between two values lo < hi (``binning._midpoints``): halved apart
    when their difference overflows."""
    cdef double gap = hi - lo
    if gap == INFINITY:
        return lo / 2.0 + hi / 2.0
    return lo + gap / 2.0


cdef Py_ssize_t _midpoints(const double* d, Py_ssize_t n, double* out) noexcept nogil:
    """The n - 1 midpoints of the sorted distinct values d[:n] (n >= 1)."""
    cdef Py_ssize_t i
    for i in range(n - 1):
        out[i] = _midpoint(d[i], d[i + 1])
    return n - 1


cdef Py_ssize_t _quantile_edges(const double* d, const double* w, Py_ssize_t n, int n_bins,
                                double* out) noexcept nogil:
    """``binning._quantile_cuts`` of d[:n] with weights w[:n]: the midpoint after the
    first value whose cumulative weight reaches each ``total * k / n_bins``, once
    each. The weights are counts, so every cumulative sum is exact."""
    cdef Py_ssize_t i, idx, last = -1, m = 0
    cdef double total = 0.0, cum = 0.0
    cdef int k = 1
    if n <= 1 or n_bins <= 1:
        return 0
    if n <= n_bins:
        return _midpoints(d, n, out)
    for i in range(n):
        total += w[i]
    for i in range(n):
        cum += w[i]
        # the levels this value is the first to reach (np.searchsorted, side='left')
        while k < n_bins and total * <double>k / <double>n_bins <= cum:
            idx = i if i < n - 2 else n - 2
            if idx != last:
                out[m] = _midpoint(d[idx], d[idx + 1])
                m += 1
                last = idx
            k += 1
    return m


cdef Py_ssize_t _sorted_edges(const floating* v, Py_ssize_t n_values, int max_value_bins,
                              double* distinct, double* weight, double* out) noexcept nogil:
    """``binning._weighted_cuts(v, None, max_value_bins, presorted=True)`` of the sorted
    finite values v[:n_values]; ``distinct`` and ``weight`` have room for n_values.
    Returns the number of edges written to ``out`` (at most max_value_bins - 1)."""
    cdef Py_ssize_t i, n = 0, z, m
    cdef double w_neg = 0.0, w_pos = 0.0
    cdef int n_neg, n_pos
    for i in range(n_values):
        if i == 0 or v[i] != v[i - 1]:      # -0.0 and 0.0 are one value, the first kept
            distinct[n] = <double>v[i]
            weight[n] = 1.0
            n += 1
        else:
            weight[n - 1] += 1.0
    if n <= 1:
        return 0
    if n <= max_value_bins:
        return _midpoints(distinct, n, out)
    z = 0
    while z < n and distinct[z] < 0.0:
        z += 1
    if not (z < n and distinct[z] == 0.0 and max_value_bins >= 3):
        return _quantile_edges(distinct, weight, n, max_value_bins, out)
    # 0 keeps a bin of its own; the negative and positive values share the others
    for i in range(z):
        w_neg += weight[i]
    for i in range(z + 1, n):
        w_pos += weight[i]
    n_neg = 0
    if z > 0:
        # rint: half to even, as Python's round
        n_neg = <int>rint(<double>(max_value_bins - 1) * w_neg / (w_neg + w_pos))
        n_neg = min(max(1, n_neg), max_value_bins - 2)
    if z == n - 1:
        n_neg = max_value_bins - 1
    n_pos = max_value_bins - 1 - n_neg
    m = _quantile_edges(distinct, weight, z, n_neg, out)
    if z > 0:
        out[m] = distinct[z - 1] + (0.0 - distinct[z - 1]) / 2.0
        m += 1
    if z < n - 1:
        out[m] = 0.0 + (distinct[z + 1] - 0.0) / 2.0
        m += 1
    return m + _quantile_edges(distinct + z + 1, weight + z + 1, n - z - 1, n_pos, out + m)


def sorted_column_edges(const floating[:, ::1] values, const int64_t[::1] lengths,
                        int max_value_bins, double[:, ::1] edges, int64_t[::1] n_edges,
                        double[:, :, ::1] scratch, int n_threads):
    """The edges of sorted columns: ``edges[k, :n_edges[k]]`` =
    ``binning._weighted_cuts(values[k, :lengths[k]], None, max_value_bins,
    presorted=True)`` for every row k of ``values`` (the output of
    ``sorted_finite_columns``), the columns in parallel. ``edges`` has at least
    ``max_value_bins - 1`` columns; ``scratch`` (n_threads, 2, n) holds each
    thread's distinct values and their counts."""
    cdef Py_ssize_t n_cols = lengths.shape[0], k
    cdef int t
    if max_value_bins < 1:
        raise ValueError(f"max_value_bins must be >= 1, got {max_value_bins}")
    if values.shape[0] < n_cols or edges.shape[0] < n_cols or n_edges.shape[0] < n_cols:
        raise ValueError("values, edges and n_edges need a row per column")
    if edges.shape[1] < max_value_bins - 1:
        raise ValueError(f"edges has {edges.shape[1]} columns, needs {max_value_bins - 1}")
    if scratch.shape[0] < n_threads or scratch.shape[1] < 2:
        raise ValueError("scratch buffers too small")
    for k in range(n_cols):
        if lengths[k] < 0 or lengths[k] > values.shape[1] or lengths[k] > scratch.shape[2]:
            raise ValueError(f"lengths[{k}] = {lengths[k]} is out of range")
    for k in prange(n_cols, schedule='dynamic', num_threads=n_threads, nogil=True):
        t = threadid()
        n_edges[k] = _sorted_edges(&values[k, 0], lengths[k], max_value_bins,
                                   &scratch[t, 0, 0], &scratch[t, 1, 0], &edges[k, 0])
