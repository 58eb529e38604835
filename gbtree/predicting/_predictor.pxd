# The walks the dense and the CSR kernels share (_predictor.pyx, _sparse_predictor.pyx):
# the trees' compact layout, the walks in C and the inline walks over a block of rows.
from cython cimport floating
from libc.math cimport isnan
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from ..kernels._typedefs cimport X_BINNED_C, node_struct

cdef enum:
    ROW_BLOCK = 256

# One node of the compact traversal copy. Inner node: ``value`` is the
# threshold, ``left`` the index (within the tree) of its left child, the right
# child being ``left + 1``; ``feature`` has bit 31 set when missing values go
# left. Leaf: ``left == -1`` and ``value`` is the leaf value.
cdef packed struct compact_node:
    double value
    int32_t feature
    int32_t left


# ---------------------------------------------------------------------------
# The walks in C (_walks.h): portable ones for C-ordered rows, the one-row walk over
# several trees, and the vector walks of x86-64 (AVX2, AVX-512; chosen at run time).

cdef extern from "_walks.h":
    int gbt_simd_level() noexcept nogil
    float gbt_floor_f32(double v) noexcept nogil
    void gbt_walk_avx2_f32(const void* tree, const float* base, Py_ssize_t lo,
                           Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) noexcept nogil
    void gbt_walk_avx512_f32(const void* tree, const float* base, Py_ssize_t lo,
                             Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) noexcept nogil
    void gbt_walk_avx512_f64(const void* tree, const double* base, Py_ssize_t lo,
                             Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) noexcept nogil
    void gbt_walk_portable_f32(const void* tree, const float* base, Py_ssize_t lo,
                               Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) noexcept nogil
    void gbt_walk_portable_f64(const void* tree, const double* base, Py_ssize_t lo,
                               Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) noexcept nogil
    void gbt_row_walk_f32(const void* nodes, const int64_t* tree_ptr, const int32_t* tree_class,
                          Py_ssize_t t0, Py_ssize_t t1, const float* row, double* out) noexcept nogil
    void gbt_row_walk_f64(const void* nodes, const int64_t* tree_ptr, const int32_t* tree_class,
                          Py_ssize_t t0, Py_ssize_t t1, const double* row, double* out) noexcept nogil
    void gbt_partition_walk_f32(const void* nodes, const int64_t* tree_ptr,
                                const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,
                                const int32_t* slot, const float* col, Py_ssize_t S,
                                Py_ssize_t R, Py_ssize_t n, double* out, Py_ssize_t out_stride, int32_t* ids,
                                int32_t* range, uint8_t* side) noexcept nogil
    void gbt_partition_walk_f64(const void* nodes, const int64_t* tree_ptr,
                                const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,
                                const int32_t* slot, const double* col, Py_ssize_t S,
                                Py_ssize_t R, Py_ssize_t n, double* out, Py_ssize_t out_stride, int32_t* ids,
                                int32_t* range, uint8_t* side) noexcept nogil
    void gbt_partition_walk_avx512_f32(const void* nodes, const int64_t* tree_ptr,
                                       const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,
                                       const int32_t* slot, const float* col, Py_ssize_t S,
                                       Py_ssize_t R, Py_ssize_t n, double* out,
                                       Py_ssize_t out_stride, int32_t* ids, int32_t* range,
                                       uint8_t* side) noexcept nogil
    void gbt_partition_walk_avx512_f64(const void* nodes, const int64_t* tree_ptr,
                                       const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,
                                       const int32_t* slot, const double* col, Py_ssize_t S,
                                       Py_ssize_t R, Py_ssize_t n, double* out,
                                       Py_ssize_t out_stride, int32_t* ids, int32_t* range,
                                       uint8_t* side) noexcept nogil
    void gbt_partition_walk_f32_load(const float* X, Py_ssize_t lo, Py_ssize_t n,
                                     Py_ssize_t row_stride, Py_ssize_t col_stride,
                                     const int32_t* used, Py_ssize_t n_used, float* col,
                                     Py_ssize_t S) noexcept nogil
    void gbt_partition_walk_f64_load(const double* X, Py_ssize_t lo, Py_ssize_t n,
                                     Py_ssize_t row_stride, Py_ssize_t col_stride,
                                     const int32_t* used, Py_ssize_t n_used, double* col,
                                     Py_ssize_t S) noexcept nogil



cdef int machine_simd_level() noexcept nogil

cdef inline int32_t _leaf_raw(const node_struct* nodes, const floating* x,
                              Py_ssize_t x_stride) noexcept nogil:
    cdef int32_t n = 0
    cdef double v
    while not nodes[n].is_leaf:
        v = x[nodes[n].feature * x_stride]
        if isnan(v):
            n = nodes[n].left if nodes[n].default_left else nodes[n].right
        elif v <= nodes[n].threshold:
            n = nodes[n].left
        else:
            n = nodes[n].right
    return n


cdef inline int32_t _leaf_binned(const node_struct* nodes, const X_BINNED_C* x,
                                 const int* missing_bin) noexcept nogil:
    cdef int32_t n = 0
    cdef int f
    cdef X_BINNED_C b
    while not nodes[n].is_leaf:
        f = nodes[n].feature
        b = x[f]
        if b == missing_bin[f]:
            n = nodes[n].left if nodes[n].default_left else nodes[n].right
        elif b <= nodes[n].bin_threshold:
            n = nodes[n].left
        else:
            n = nodes[n].right
    return n


cdef enum:
    # the AVX-512 walks address a block's values with 32-bit offsets: 2**31 // ROW_BLOCK
    MAX_SIMD_STRIDE = 1 << 23

cdef enum:
    # Fewer rows than this take the portable walk: a vector step waits for two
    # dependent gathers, so a few rows are faster one load at a time.
    SIMD_MIN_ROWS = 16
    # the packed records' limits: a 16-bit child index, a 15-bit feature
    PACKED_MAX_NODES = 1 << 16
    PACKED_MAX_FEATURES = 1 << 15


cdef enum:
    LANES = 8     # rows walked down one tree side by side (independent loads overlap)


cdef inline void _add_leaf_values(const compact_node* tree, const floating* base,
                                  Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t row_stride,
                                  Py_ssize_t col_stride, double* out,
                                  Py_ssize_t out_stride) noexcept nogil:
    """``out[i * out_stride] += leaf value of row i`` for rows lo..hi-1 of one tree."""
    cdef int32_t cur[LANES]
    cdef const floating* row[LANES]
    cdef Py_ssize_t i0, k, m
    cdef int32_t n, f
    cdef double v
    cdef bint moving
    cdef int go_right
    i0 = lo
    while i0 < hi:
        m = hi - i0
        if m > LANES:
            m = LANES
        for k in range(m):
            cur[k] = 0
            row[k] = base + (i0 + k) * row_stride
        moving = True
        while moving:
            moving = False
            for k in range(m):
                n = cur[k]
                if tree[n].left >= 0:
                    f = tree[n].feature
                    v = row[k][(f & 0x7fffffff) * col_stride]
                    # NaN fails both tests: it goes right unless its default is left
                    go_right = (not (v <= tree[n].value)) & ((v == v) | (f >= 0))
                    cur[k] = tree[n].left + go_right
                    moving = True
        for k in range(m):
            out[(i0 + k) * out_stride] += tree[cur[k]].value
        i0 += LANES


cdef inline void _add_leaf_values_walk(const compact_node* tree, const uint64_t* packed,
                                       const floating* base,
                                       Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t row_stride,
                                       double* out, Py_ssize_t out_stride,
                                       int walk) noexcept nogil:
    """``_add_leaf_values`` for C-ordered rows through ``walk`` (see ``_walk_kind``;
    same leaves, same additions in the same order); float32 rows walk the tree's
    ``packed`` records."""
    cdef int32_t leaf[ROW_BLOCK]
    cdef Py_ssize_t i
    if floating is float:
        if walk == WALK_AVX512:
            gbt_walk_avx512_f32(packed, base, lo, hi, row_stride, leaf)
        elif walk == WALK_AVX2:
            gbt_walk_avx2_f32(packed, base, lo, hi, row_stride, leaf)
        else:
            gbt_walk_portable_f32(packed, base, lo, hi, row_stride, leaf)
    else:
        if walk == WALK_AVX512:
            gbt_walk_avx512_f64(tree, base, lo, hi, row_stride, leaf)
        else:
            gbt_walk_portable_f64(tree, base, lo, hi, row_stride, leaf)
    for i in range(lo, hi):
        out[i * out_stride] += tree[leaf[i - lo]].value


cdef inline void _add_tree(const compact_node* tree, const uint64_t* packed,
                           const floating* base, Py_ssize_t lo, Py_ssize_t hi,
                           Py_ssize_t row_stride, Py_ssize_t col_stride, double* out,
                           Py_ssize_t out_stride, int walk) noexcept nogil:
    """Rows lo..hi-1 (at most ROW_BLOCK) through one tree, by ``walk``."""
    if walk > WALK_PORTABLE and hi - lo < SIMD_MIN_ROWS:
        walk = WALK_PORTABLE
    if walk >= WALK_PORTABLE:
        _add_leaf_values_walk(tree, packed, base, lo, hi, row_stride, out, out_stride, walk)
    elif col_stride == 1:     # C order: the inlined walk loses a multiply a step
        _add_leaf_values(tree, base, lo, hi, row_stride, 1, out, out_stride)
    else:
        _add_leaf_values(tree, base, lo, hi, row_stride, col_stride, out, out_stride)


cdef enum:
    # the walks of predict_raw
    WALK_STRIDED = -1   # any strides: _add_leaf_values
    WALK_PORTABLE = 0   # C-ordered rows, any CPU
    WALK_AVX2 = 1       # C-ordered float32 rows
    WALK_AVX512 = 2     # C-ordered float32 and float64 rows


cdef inline int _walk_kind(int machine, int simd, Py_ssize_t n_features, Py_ssize_t row_stride,
                    Py_ssize_t col_stride, const int64_t* tree_ptr, Py_ssize_t n_trees,
                    const floating* kind) noexcept nogil:
    """The walk that runs: the best this machine has (``machine``, ``simd_level``), at
    most ``simd`` (-1: no cap),
    for C-ordered rows whose block fits the vector walks' 32-bit offsets; float32
    rows need trees that fit the packed records, float64 rows AVX-512 for a vector
    walk."""
    cdef Py_ssize_t t
    cdef int level = machine
    if 0 <= simd < level:
        level = simd
    if row_stride < 0:
        row_stride = -row_stride
    if col_stride != 1 or row_stride >= MAX_SIMD_STRIDE:
        return WALK_STRIDED
    if floating is double:
        return WALK_AVX512 if level == 2 else WALK_PORTABLE   # 16-byte records: no limits
    else:
        if n_features > PACKED_MAX_FEATURES:
            return WALK_STRIDED
        for t in range(n_trees):
            if tree_ptr[t + 1] - tree_ptr[t] > PACKED_MAX_NODES:
                return WALK_STRIDED
        return level


cdef inline const uint64_t* _packed_section(const unsigned char[::1] compact) noexcept nogil:
    # compact_nodes: n_nodes 16-byte records, then n_nodes 8-byte ones
    return <const uint64_t*>(&compact[0] + (compact.shape[0] // 24) * 16)


cdef inline int _n_workers(int n_threads, Py_ssize_t n_blocks) noexcept nogil:
    # threads that each take whole blocks of rows
    return <int>max(1, min(<Py_ssize_t>n_threads, n_blocks))
