"""The walk of symmetric (oblivious) trees: every node of a level tests the same
feature and threshold, so a row's leaf index is the bits of its comparisons.

``symmetric_trees`` lays out a forest whose trees are all symmetric (per level
a feature, a threshold and a missing direction; per tree its leaf values in the
order of their paths' bits); ``_predictor.Forest`` keeps that layout when it
applies and walks it here: blocks of ``GBT_SYM_BLOCK`` rows copied by columns
(the features the trees test), or a few rows one at a time (``_symmetric.h``).
Every walk reaches the generic walks' leaves and adds their values in the same
order.
"""
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free

import numpy as np

from ..kernels._typedefs cimport check_item_strides, node_struct

cdef extern from "_walks.h":
    int gbt_simd_level() noexcept nogil


cdef extern from "_symmetric.h":
    enum: GBT_SYM_BLOCK
    void gbt_sym_walk_f32(const float* cols, Py_ssize_t n, Py_ssize_t n_trees,
                          const int32_t* depth, const int64_t* level_ptr, const int32_t* feat,
                          const float* thr, const uint8_t* nan_right, const int64_t* leaf_ptr,
                          const double* leaves, const int32_t* tree_class, double* out,
                          Py_ssize_t n_outputs) noexcept nogil
    void gbt_sym_walk_f64(const double* cols, Py_ssize_t n, Py_ssize_t n_trees,
                          const int32_t* depth, const int64_t* level_ptr, const int32_t* feat,
                          const double* thr, const uint8_t* nan_right, const int64_t* leaf_ptr,
                          const double* leaves, const int32_t* tree_class, double* out,
                          Py_ssize_t n_outputs) noexcept nogil
    void gbt_sym_walk_avx2_f32(const float* cols, Py_ssize_t n, Py_ssize_t n_trees,
                               const int32_t* depth, const int64_t* level_ptr,
                               const int32_t* feat, const float* thr, const uint8_t* nan_right,
                               const int64_t* leaf_ptr, const double* leaves,
                               const int32_t* tree_class, double* out,
                               Py_ssize_t n_outputs) noexcept nogil
    void gbt_sym_walk_avx2_f64(const double* cols, Py_ssize_t n, Py_ssize_t n_trees,
                               const int32_t* depth, const int64_t* level_ptr,
                               const int32_t* feat, const double* thr, const uint8_t* nan_right,
                               const int64_t* leaf_ptr, const double* leaves,
                               const int32_t* tree_class, double* out,
                               Py_ssize_t n_outputs) noexcept nogil
    void gbt_sym_row_f32(const float* row, Py_ssize_t n_trees,
                         const int32_t* depth, const int64_t* level_ptr, const int32_t* column,
                         const float* thr, const uint8_t* nan_right, const int64_t* leaf_ptr,
                         const double* leaves, const int32_t* tree_class,
                         double* out) noexcept nogil
    void gbt_sym_row_f64(const double* row, Py_ssize_t n_trees,
                         const int32_t* depth, const int64_t* level_ptr, const int32_t* column,
                         const double* thr, const uint8_t* nan_right, const int64_t* leaf_ptr,
                         const double* leaves, const int32_t* tree_class,
                         double* out) noexcept nogil


def symmetric_trees(const node_struct[::1] nodes, const int64_t[::1] tree_ptr,
                    int max_depth=16):
    """The trees as the symmetric walk reads them, or None unless every tree is
    symmetric: each level's nodes all leaves, or all inner nodes testing one
    feature and threshold with one missing direction, at most ``max_depth``
    levels. A dict of ``depth`` (int32 per tree), ``level_ptr`` (int64: tree t's
    levels are ``level_ptr[t]:level_ptr[t + 1]``), per level ``feature`` (int32:
    its place in ``used``, the features the trees test; ``column``: the feature
    itself), ``threshold``
    (float64), ``threshold32`` (float32, rounded down: for a float32 x, x <=
    threshold32 iff x <= threshold) and ``nan_right`` (uint8), ``leaf_ptr``
    (int64) and ``leaves`` (float64, tree t's ``2**depth[t]`` leaf values in the
    order of their paths' bits, left = 0, the first level's the highest)."""
    cdef Py_ssize_t n_trees = tree_ptr.shape[0] - 1, t, i, m, base
    cdef int d
    cdef const node_struct* first
    cdef const node_struct* nd
    if not 0 <= max_depth <= 20:
        raise ValueError(f"max_depth must be in 0..20, got {max_depth}")
    a = np.empty(1 << max_depth, dtype=np.int32)
    b = np.empty(1 << max_depth, dtype=np.int32)
    cdef int32_t[::1] cur = a
    cdef int32_t[::1] nxt = b
    cdef int32_t[::1] swap
    depth = np.zeros(n_trees, dtype=np.int32)
    features, thresholds, defaults, leaves = [], [], [], []
    for t in range(n_trees):
        base = tree_ptr[t]
        if tree_ptr[t + 1] <= base:
            return None
        cur[0] = 0
        m = 1
        d = 0
        while True:
            first = &nodes[base + cur[0]]
            if first.is_leaf:
                for i in range(m):
                    if not nodes[base + cur[i]].is_leaf:
                        return None
                break
            if d >= max_depth:
                return None
            for i in range(m):
                nd = &nodes[base + cur[i]]
                if (nd.is_leaf or nd.feature != first.feature or nd.threshold != first.threshold
                        or nd.default_left != first.default_left):
                    return None
                nxt[2 * i] = nd.left
                nxt[2 * i + 1] = nd.right
            features.append(first.feature)
            thresholds.append(first.threshold)
            defaults.append(first.default_left)
            swap = cur
            cur = nxt
            nxt = swap
            m *= 2
            d += 1
        depth[t] = d
        leaves.append(np.array([nodes[base + cur[i]].value for i in range(m)]))
    used, feature = np.unique(np.array(features, dtype=np.int32), return_inverse=True)
    threshold = np.array(thresholds, dtype=np.float64)
    threshold32 = threshold.astype(np.float32)
    above = threshold32.astype(np.float64) > threshold
    threshold32[above] = np.nextafter(threshold32[above], np.float32(-np.inf))
    level_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    np.cumsum(depth, out=level_ptr[1:])
    leaf_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    np.cumsum(np.left_shift(1, depth.astype(np.int64)), out=leaf_ptr[1:])
    feature = feature.astype(np.int32).ravel()
    return dict(depth=depth, level_ptr=level_ptr, feature=feature,
                column=np.asarray(used, dtype=np.int32)[feature],
                threshold=threshold, threshold32=threshold32,
                nan_right=(np.array(defaults, dtype=np.uint8) == 0).astype(np.uint8),
                leaf_ptr=leaf_ptr, leaves=np.concatenate(leaves) if leaves else np.empty(0),
                used=used.astype(np.int32))


cdef sym_tables sym_tables_of(dict trees, const int32_t[::1] tree_class) except *:
    cdef sym_tables T
    cdef const int32_t[::1] depth = trees["depth"]
    cdef const int64_t[::1] level_ptr = trees["level_ptr"]
    cdef const int32_t[::1] feat = trees["feature"]
    cdef const double[::1] thr64 = trees["threshold"]
    cdef const float[::1] thr32 = trees["threshold32"]
    cdef const uint8_t[::1] nan_right = trees["nan_right"]
    cdef const int64_t[::1] leaf_ptr = trees["leaf_ptr"]
    cdef const double[::1] leaves = trees["leaves"]
    cdef const int32_t[::1] used = trees["used"]
    cdef const int32_t[::1] column = trees["column"]
    cdef Py_ssize_t n_levels = level_ptr[level_ptr.shape[0] - 1]
    if (tree_class.shape[0] != depth.shape[0] or level_ptr.shape[0] != depth.shape[0] + 1
            or leaf_ptr.shape[0] != depth.shape[0] + 1 or feat.shape[0] != n_levels
            or thr64.shape[0] != n_levels or thr32.shape[0] != n_levels
            or nan_right.shape[0] != n_levels or column.shape[0] != n_levels
            or leaves.shape[0] != leaf_ptr[leaf_ptr.shape[0] - 1]):
        raise ValueError("the arrays of the symmetric trees do not match")
    T.n_used = used.shape[0]
    T.depth = &depth[0] if depth.shape[0] > 0 else NULL
    T.level_ptr = &level_ptr[0]
    T.feat = &feat[0] if n_levels > 0 else NULL
    T.column = &column[0] if n_levels > 0 else NULL
    T.thr64 = &thr64[0] if n_levels > 0 else NULL
    T.thr32 = &thr32[0] if n_levels > 0 else NULL
    T.nan_right = &nan_right[0] if n_levels > 0 else NULL
    T.leaf_ptr = &leaf_ptr[0]
    T.leaves = &leaves[0] if leaves.shape[0] > 0 else NULL
    T.used = &used[0] if used.shape[0] > 0 else NULL
    T.tree_class = &tree_class[0] if tree_class.shape[0] > 0 else NULL
    return T


cdef inline void _sym_block(const floating* X, Py_ssize_t row_stride, Py_ssize_t col_stride,
                            Py_ssize_t lo, Py_ssize_t hi, const sym_tables* T,
                            Py_ssize_t start, Py_ssize_t stop, floating* buf, double* out,
                            Py_ssize_t n_outputs, int level) noexcept nogil:
    """Rows lo..hi-1 (at most GBT_SYM_BLOCK) through trees start..stop-1."""
    cdef Py_ssize_t u, r, f
    for u in range(T.n_used):
        f = T.used[u] * col_stride
        for r in range(hi - lo):
            buf[u * GBT_SYM_BLOCK + r] = X[(lo + r) * row_stride + f]
    if floating is float:
        if level >= 1:
            gbt_sym_walk_avx2_f32(buf, hi - lo, stop - start, T.depth + start,
                                  T.level_ptr + start, T.feat, T.thr32, T.nan_right,
                                  T.leaf_ptr + start, T.leaves, T.tree_class + start,
                                  out + lo * n_outputs, n_outputs)
        else:
            gbt_sym_walk_f32(buf, hi - lo, stop - start, T.depth + start, T.level_ptr + start,
                             T.feat, T.thr32, T.nan_right, T.leaf_ptr + start, T.leaves,
                             T.tree_class + start, out + lo * n_outputs, n_outputs)
    else:
        if level >= 1:
            gbt_sym_walk_avx2_f64(buf, hi - lo, stop - start, T.depth + start,
                                  T.level_ptr + start, T.feat, T.thr64, T.nan_right,
                                  T.leaf_ptr + start, T.leaves, T.tree_class + start,
                                  out + lo * n_outputs, n_outputs)
        else:
            gbt_sym_walk_f64(buf, hi - lo, stop - start, T.depth + start, T.level_ptr + start,
                             T.feat, T.thr64, T.nan_right, T.leaf_ptr + start, T.leaves,
                             T.tree_class + start, out + lo * n_outputs, n_outputs)


cdef int _sym_walk(const floating* X, Py_ssize_t row_stride, Py_ssize_t col_stride,
                   Py_ssize_t n_rows, const sym_tables* T, Py_ssize_t start, Py_ssize_t stop,
                   double* out, Py_ssize_t n_outputs, int n_threads,
                   int level) noexcept nogil:
    """``out[i, tree_class[t]] += value of the leaf of row i in tree t`` for trees
    start..stop-1, rows in blocks of GBT_SYM_BLOCK copied by columns first (the
    features the trees test). Returns -1 when a block buffer cannot be allocated."""
    cdef Py_ssize_t n_blocks = (n_rows + GBT_SYM_BLOCK - 1) // GBT_SYM_BLOCK
    cdef Py_ssize_t blk, lo, hi
    cdef Py_ssize_t size = (T.n_used if T.n_used > 0 else 1) * GBT_SYM_BLOCK * sizeof(floating)
    cdef floating* buf
    cdef int failed = 0
    cdef int* fail = &failed
    if n_rows == 0 or stop <= start:
        return 0
    if n_blocks < 2 or n_rows * (stop - start) < 4096:
        n_threads = 1
    if n_threads == 1:
        buf = <floating*>calloc(1, size)
        if buf == NULL:
            return -1
        for blk in range(n_blocks):
            lo = blk * GBT_SYM_BLOCK
            hi = min(lo + GBT_SYM_BLOCK, n_rows)
            _sym_block(X, row_stride, col_stride, lo, hi, T, start, stop, buf, out,
                       n_outputs, level)
        free(buf)
        return 0
    with parallel(num_threads=n_threads):
        buf = <floating*>calloc(1, size)
        if buf == NULL:
            fail[0] = 1
        else:
            for blk in prange(n_blocks, schedule='static'):
                lo = blk * GBT_SYM_BLOCK
                hi = min(lo + GBT_SYM_BLOCK, n_rows)
                _sym_block(X, row_stride, col_stride, lo, hi, T, start, stop, buf, out,
                           n_outputs, level)
            free(buf)
    return -1 if failed else 0


def predict_symmetric(const floating[:, :] X, dict trees, const int32_t[::1] tree_class,
                      Py_ssize_t start, Py_ssize_t stop, double[:, ::1] out, int n_threads,
                      int simd):
    """``out[i, tree_class[t]] += value of the leaf of row i in tree t`` for the
    trees ``start <= t < stop`` of ``symmetric_trees``' answer ``trees``, in order:
    the leaves ``_predictor.predict_raw`` reaches, added in the same order. ``simd``
    (``_predictor.simd_level``'s levels, never above what the CPU has) picks the
    vector code: the tests compare them."""
    cdef sym_tables T = sym_tables_of(trees, tree_class)
    cdef Py_ssize_t u, t, n_trees = tree_class.shape[0]
    cdef int status
    check_item_strides(X.shape[0], X.strides[0], X.shape[1], X.strides[1], sizeof(floating))
    if not 0 <= start <= stop <= n_trees:
        raise ValueError(f"trees {start}..{stop} are not within 0..{n_trees}")
    if out.shape[0] != X.shape[0]:
        raise ValueError("out must have one row per row of X")
    for u in range(T.n_used):
        if not 0 <= T.used[u] < X.shape[1]:
            raise ValueError(f"the trees test feature {T.used[u]}, but X has {X.shape[1]}")
    for t in range(start, stop):
        if not 0 <= T.tree_class[t] < out.shape[1]:
            raise ValueError(f"tree_class[{t}] is not a column of out")
    if X.shape[0] == 0 or stop == start:
        return
    with nogil:
        status = _sym_walk(&X[0, 0] if X.shape[1] > 0 else NULL,
                           X.strides[0] // sizeof(floating),
                           X.strides[1] // sizeof(floating), X.shape[0], &T, start, stop,
                           &out[0, 0], out.shape[1], n_threads, min(simd, gbt_simd_level()))
    if status < 0:
        raise MemoryError("could not allocate the blocks of the symmetric walk")




cdef int sym_walk(const void* X, bint f32, Py_ssize_t row_stride, Py_ssize_t col_stride,
                  Py_ssize_t n_rows, const sym_tables* T, Py_ssize_t start, Py_ssize_t stop,
                  double* out, Py_ssize_t n_outputs, int n_threads, int level) noexcept nogil:
    """``_sym_walk`` of float32 (``f32``) or float64 rows."""
    if f32:
        return _sym_walk(<const float*>X, row_stride, col_stride, n_rows, T, start, stop, out,
                         n_outputs, n_threads, level)
    return _sym_walk(<const double*>X, row_stride, col_stride, n_rows, T, start, stop, out,
                     n_outputs, n_threads, level)


cdef void sym_rows(const void* X, bint f32, Py_ssize_t n_features, Py_ssize_t n_rows,
                   const sym_tables* T, Py_ssize_t start, Py_ssize_t stop, double* out,
                   Py_ssize_t n_outputs) noexcept nogil:
    """A few C-ordered rows through trees start..stop-1, one at a time, in the calling
    thread (no block copy)."""
    cdef Py_ssize_t i
    for i in range(n_rows):
        if f32:
            gbt_sym_row_f32(<const float*>X + i * n_features, stop - start, T.depth + start,
                            T.level_ptr + start, T.column, T.thr32, T.nan_right,
                            T.leaf_ptr + start, T.leaves, T.tree_class + start,
                            out + i * n_outputs)
        else:
            gbt_sym_row_f64(<const double*>X + i * n_features, stop - start, T.depth + start,
                            T.level_ptr + start, T.column, T.thr64, T.nan_right,
                            T.leaf_ptr + start, T.leaves, T.tree_class + start,
                            out + i * n_outputs)
