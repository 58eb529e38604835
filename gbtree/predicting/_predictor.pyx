"""Tree traversal over rows: raw values, binned values, leaf indices.

The ensemble is a flat array of ``node_struct`` records; tree t owns records
``tree_ptr[t]:tree_ptr[t + 1]`` and adds its leaf value to output column
``tree_class[t]``. Rows are processed in blocks, each block walking every tree,
so a tree's nodes stay in cache across the rows of a block.

``predict_raw`` walks a compact copy of the trees (``compact_nodes``, held by
a ``Forest``): 16-byte nodes renumbered breadth first so that a node's children
are neighbours, which makes the step down the tree branch-free:
``next = left + (row goes right)``. Many rows (blocks of at least
``PARTITION_MIN_ROWS`` per thread) take the partition walk: a block's rows are
copied by columns, and each node hands the rows that reach it on to its two
children, reading one column in a tight loop (any CPU, any strides). Fewer rows
go down a tree eight side by side (the portable walk); on a CPU with AVX-512 or
AVX2 (checked at run time; the build needs no flag) blocks of C-ordered rows go
down eight to a vector, with gathers: float32 rows over 8-byte copies of the
nodes that hold the threshold rounded down to float32 (exact for float32
values), float64 rows (AVX-512 only) over the 16-byte nodes. With AVX-512 the
vector walk takes the blocks of many rows too. A ``Forest`` walks fewer than
``FEW_ROWS`` rows itself, each row down eight trees side by side. Every walk
reaches the same leaves and adds the same values in the same order.

The ``*_csr`` kernels take a CSR matrix (canonical: sorted indices, no
duplicates; int64 ``indptr``, int32 ``indices``) and never densify it: each
thread owns a scratch block of ``rows x n_features`` values filled with the
value of an absent entry, scatters a block of rows' stored entries into it,
runs the dense traversal on the block, then puts back only the entries it
touched. Results are bit-for-bit those of the dense kernel on the dense
equivalent (same trees, same order of additions).
"""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isfinite, isnan, nextafterf, INFINITY
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, INT32_MIN

import os

import numpy as np

from ._symmetric_walk import predict_symmetric, symmetric_trees

cimport numpy as cnp

from ._symmetric_walk cimport sym_rows, sym_tables, sym_tables_of, sym_walk
from ..kernels._typedefs cimport X_BINNED_C, check_item_strides, node_struct

cnp.import_array()

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
    void gbt_partition_walk_f32_load(const float* X, Py_ssize_t lo, Py_ssize_t n,
                                     Py_ssize_t row_stride, Py_ssize_t col_stride,
                                     const int32_t* used, Py_ssize_t n_used, float* col,
                                     Py_ssize_t S) noexcept nogil
    void gbt_partition_walk_f64_load(const double* X, Py_ssize_t lo, Py_ssize_t n,
                                     Py_ssize_t row_stride, Py_ssize_t col_stride,
                                     const int32_t* used, Py_ssize_t n_used, double* col,
                                     Py_ssize_t S) noexcept nogil


SIMD_NAMES = ("none", "avx2", "avx512")


def _simd_cap():
    """The level GBTREE_SIMD asks for (unset: no cap), so that every walk can be tested
    and measured on a machine that has a better one."""
    value = os.environ.get("GBTREE_SIMD", "").strip().lower()
    if value == "":
        return len(SIMD_NAMES) - 1
    if value not in SIMD_NAMES:
        raise ValueError(f"GBTREE_SIMD must be one of {', '.join(SIMD_NAMES)}, got "
                         f"{os.environ['GBTREE_SIMD']!r}")
    return SIMD_NAMES.index(value)


cdef int _SIMD_LEVEL = min(gbt_simd_level(), _simd_cap())


def simd_level():
    """The vector walk ``predict_raw`` uses for C-ordered rows: the best this CPU has,
    at most what GBTREE_SIMD names: 2 = AVX-512, 1 = AVX2, 0 = the portable walk."""
    return _SIMD_LEVEL


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


# the AVX-512 walks address a block's values with 32-bit offsets
cdef Py_ssize_t MAX_SIMD_STRIDE = (<Py_ssize_t>1 << 31) // ROW_BLOCK

cdef enum:
    # Fewer rows than this take the portable walk: a vector step waits for two
    # dependent gathers, so a few rows are faster one load at a time.
    SIMD_MIN_ROWS = 16
    # the packed records' limits: a 16-bit child index, a 15-bit feature
    PACKED_MAX_NODES = 1 << 16
    PACKED_MAX_FEATURES = 1 << 15


cdef inline uint64_t _packed_record(const compact_node* cn) noexcept nogil:
    """The 8-byte record of a compact node (see ``gbt_walk_avx512_f32``)."""
    cdef float t32
    cdef uint32_t bits, meta
    if cn.left < 0:
        return 0
    # the largest float32 <= the threshold: for a float32 x, x <= t32 iff x <= threshold
    t32 = <float>cn.value
    if <double>t32 > cn.value:
        t32 = nextafterf(t32, -INFINITY)
    memcpy(&bits, &t32, 4)
    meta = (<uint32_t>cn.left | ((<uint32_t>cn.feature & 0x7FFF) << 16)
            | (<uint32_t>cn.feature & (<uint32_t>1 << 31)))
    return (<uint64_t>meta << 32) | bits


def trees_are_valid(const node_struct[::1] nodes, const int64_t[::1] tree_ptr,
                    int64_t n_features):
    """Whether every tree is one the walks can follow (``tree_ptr`` already checked:
    offsets rising from 0 to the number of nodes): a depth-first walk from each
    root reaches every node of its tree once, through children inside the tree,
    with flags of 0 or 1, split features below ``n_features``, finite leaf values
    and each node's ``depth`` one more than its parent's (0 at the root). The
    conditions of ``tree._tree_errors``, which names the first one broken."""
    cdef Py_ssize_t n_nodes = nodes.shape[0]
    cdef uint8_t[::1] seen = np.zeros(max(n_nodes, 1), dtype=np.uint8)
    cdef int32_t[::1] stack = np.empty(max(n_nodes, 1), dtype=np.int32)
    cdef bint ok
    with nogil:
        ok = _trees_valid(&nodes[0] if n_nodes > 0 else NULL, &tree_ptr[0],
                          tree_ptr.shape[0] - 1, n_features, &seen[0], &stack[0])
    return ok


cdef bint _trees_valid(const node_struct* nodes, const int64_t* tree_ptr, Py_ssize_t n_trees,
                       int64_t n_features, uint8_t* seen, int32_t* stack) noexcept nogil:
    cdef Py_ssize_t t, base, size, top, reached
    cdef int32_t k, child
    cdef int side
    cdef const node_struct* tree
    cdef const node_struct* nd
    for t in range(n_trees):
        base = tree_ptr[t]
        size = tree_ptr[t + 1] - base
        tree = nodes + base
        if tree[0].depth != 0:
            return False
        stack[0] = 0
        top = 1
        reached = 0
        while top > 0:
            top -= 1
            k = stack[top]
            nd = tree + k
            reached += 1
            if nd.is_leaf > 1 or nd.default_left > 1:
                return False
            if nd.is_leaf:
                if not isfinite(nd.value):
                    return False
                continue
            if nd.feature < 0 or nd.feature >= n_features:
                return False
            for side in range(2):
                child = nd.left if side == 0 else nd.right
                if child < 1 or child >= size or seen[base + child]:
                    return False
                if <int64_t>tree[child].depth != <int64_t>nd.depth + 1:
                    return False
                seen[base + child] = 1
                stack[top] = child
                top += 1
        if reached != size:
            return False
    return True


def compact_nodes(const node_struct[::1] nodes, const int64_t[::1] tree_ptr):
    """The compact traversal copy of the trees (same tree_ptr), as a uint8 array of
    ``n_nodes x 24`` bytes: ``n_nodes`` 16-byte records (``compact_node``),
    children renumbered breadth first, left then right; then the same nodes as
    8-byte records for the float32 AVX-512 walk (filled for trees of at most
    ``PACKED_MAX_NODES`` nodes)."""
    cdef Py_ssize_t n_trees = tree_ptr.shape[0] - 1, n_nodes = nodes.shape[0]
    out = np.zeros(n_nodes * (sizeof(compact_node) + sizeof(uint64_t)), dtype=np.uint8)
    cdef unsigned char[::1] out_v = out
    cdef compact_node* c = <compact_node*>&out_v[0] if n_nodes > 0 else NULL
    cdef uint64_t* packed = <uint64_t*>(c + n_nodes) if n_nodes > 0 else NULL
    cdef int32_t[::1] order = np.empty(max(n_nodes, 1), dtype=np.int32)
    cdef Py_ssize_t t, base, size, head, tail
    cdef int32_t old
    cdef const node_struct* tree
    cdef compact_node* cn
    with nogil:
        for t in range(n_trees):
            base = tree_ptr[t]
            size = tree_ptr[t + 1] - base
            if size == 0:
                continue
            tree = &nodes[base]
            # order[new index] = old index, filled breadth first
            order[base] = 0
            head = 0
            tail = 1
            while head < tail:
                old = order[base + head]
                cn = &c[base + head]
                if tree[old].is_leaf:
                    cn.value = tree[old].value
                    cn.feature = 0
                    cn.left = -1
                else:
                    cn.value = tree[old].threshold
                    cn.feature = tree[old].feature
                    if tree[old].default_left:
                        cn.feature = cn.feature | INT32_MIN
                    cn.left = <int32_t>tail
                    order[base + tail] = tree[old].left
                    order[base + tail + 1] = tree[old].right
                    tail += 2
                head += 1
            if size <= PACKED_MAX_NODES:
                for head in range(size):
                    packed[base + head] = _packed_record(&c[base + head])
    return out


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


cdef int _walk_kind(int simd, Py_ssize_t n_features, Py_ssize_t row_stride,
                    Py_ssize_t col_stride, const int64_t* tree_ptr, Py_ssize_t n_trees,
                    const floating* kind) noexcept nogil:
    """The walk that runs: the best this machine has, at most ``simd`` (-1: no cap),
    for C-ordered rows whose block fits the vector walks' 32-bit offsets; float32
    rows need trees that fit the packed records, float64 rows AVX-512 for a vector
    walk."""
    cdef Py_ssize_t t
    cdef int level = _SIMD_LEVEL
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


def split_columns(const unsigned char[::1] compact, const int64_t[::1] tree_ptr,
                  Py_ssize_t n_features):
    """``(used, slot)``: the features the trees split on, ascending (int32), and each
    feature's index in ``used`` (-1 for the others): the columns of the partition
    walk's blocks."""
    cdef Py_ssize_t n_trees = tree_ptr.shape[0] - 1, k, f, n_used = 0
    cdef const compact_node* nodes
    slot = np.full(n_features, -1, dtype=np.int32)
    cdef int32_t[::1] slot_v = slot
    if n_trees > 0 and tree_ptr[n_trees] > tree_ptr[0]:
        nodes = <const compact_node*>&compact[0]
        for k in range(tree_ptr[0], tree_ptr[n_trees]):
            if nodes[k].left >= 0:
                f = nodes[k].feature & 0x7fffffff
                if f >= n_features:
                    raise ValueError(f"the trees split on feature {f} but there are "
                                     f"{n_features} features")
                slot_v[f] = 0
    for f in range(n_features):
        if slot_v[f] == 0:
            slot_v[f] = <int32_t>n_used
            n_used += 1
    used = np.flatnonzero(slot >= 0).astype(np.int32)
    return used, slot


cdef enum:
    # The partition walk's block: its columns stay in L2 while the trees walk it (at
    # most PARTITION_BYTES, PARTITION_MAX_ROWS rows); below PARTITION_MIN_ROWS rows a
    # block's nodes cost more than its rows, and the rows go down the trees side by
    # side instead.
    PARTITION_BYTES = 448 * 1024
    PARTITION_MAX_ROWS = 4096
    PARTITION_MIN_ROWS = 512


cdef Py_ssize_t _partition_rows(Py_ssize_t n_rows, Py_ssize_t n_used, Py_ssize_t itemsize,
                                int n_threads) noexcept nogil:
    """Rows per block of the partition walk (every thread gets a block), 0 when the
    blocks would be too small for it."""
    cdef Py_ssize_t rows = PARTITION_BYTES // (max(n_used, 1) * itemsize)
    rows = min(rows, PARTITION_MAX_ROWS, (n_rows + n_threads - 1) // max(n_threads, 1))
    return rows if rows >= PARTITION_MIN_ROWS else 0


cdef void _partition_worker(const floating* X, Py_ssize_t row_stride, Py_ssize_t col_stride,
                            const compact_node* nodes, const int64_t* tree_ptr,
                            const int32_t* tree_class, Py_ssize_t n_trees,
                            const int32_t* used, Py_ssize_t n_used, const int32_t* slot,
                            double* out, Py_ssize_t out_stride, Py_ssize_t R,
                            unsigned char* scratch, Py_ssize_t max_nodes,
                            Py_ssize_t row_lo, Py_ssize_t row_hi) noexcept nogil:
    """Rows row_lo..row_hi-1 in blocks of R through the partition walk (``scratch``:
    this worker's ``_partition_scratch`` bytes)."""
    cdef floating* col = <floating*>scratch
    cdef Py_ssize_t S = _column_stride(R, sizeof(floating))
    cdef int32_t* ids = <int32_t*>(scratch + _round64(S * n_used * sizeof(floating)))
    cdef int32_t* rng = ids + 2 * R
    cdef uint8_t* side = <uint8_t*>(rng + 2 * max_nodes)
    cdef Py_ssize_t lo = row_lo, n
    while lo < row_hi:
        n = min(R, row_hi - lo)
        if floating is float:
            gbt_partition_walk_f32_load(X, lo, n, row_stride, col_stride, used, n_used, col, S)
            gbt_partition_walk_f32(nodes, tree_ptr, tree_class, 0, n_trees, slot, col, S, R, n,
                                   out + lo * out_stride, out_stride, ids, rng, side)
        else:
            gbt_partition_walk_f64_load(X, lo, n, row_stride, col_stride, used, n_used, col, S)
            gbt_partition_walk_f64(nodes, tree_ptr, tree_class, 0, n_trees, slot, col, S, R, n,
                                   out + lo * out_stride, out_stride, ids, rng, side)
        lo += n


cdef inline Py_ssize_t _column_stride(Py_ssize_t R, Py_ssize_t itemsize) noexcept nogil:
    # a column of R values and one cache line more, so that columns do not start on
    # the same cache sets (R is often a power of 2)
    return R + 64 // itemsize


cdef inline Py_ssize_t _round64(Py_ssize_t n) noexcept nogil:
    return (n + 63) & ~(<Py_ssize_t>63)


cdef Py_ssize_t _partition_scratch(Py_ssize_t R, Py_ssize_t n_used, Py_ssize_t itemsize,
                                   Py_ssize_t max_nodes) noexcept nogil:
    """Bytes of one worker's scratch: the block's columns, two id buffers, each
    node's range and side."""
    return (_round64(_column_stride(R, itemsize) * n_used * itemsize)
            + _round64(2 * R * sizeof(int32_t))
            + _round64(max_nodes * (2 * sizeof(int32_t) + 1)))


def predict_raw(const floating[:, :] X, const unsigned char[::1] compact,
                const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
                double[:, ::1] out, int n_threads, int simd=-1, columns=None,
                Py_ssize_t block_rows=0):
    """``out[i, tree_class[t]] += value of the leaf of row i in tree t``, for every
    tree in order; ``compact`` comes from ``compact_nodes``. ``simd`` caps the
    vector walk (see ``simd_level``; -1: the best there is, 0: no vector walk);
    ``columns`` is ``split_columns`` of these trees (worked out when None);
    ``block_rows`` > 0 runs the partition walk in blocks of that many rows, -1
    never (0: as the rows and the CPU call for): the tests compare them."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i, lo, hi, t
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(floating)
    cdef Py_ssize_t col_stride = X.strides[1] // sizeof(floating)
    cdef const compact_node* nodes
    cdef const floating* base
    cdef int level, n_workers, w
    cdef const uint64_t* packed
    cdef Py_ssize_t R, max_nodes, size, n_used
    cdef const int32_t[::1] used_v
    cdef const int32_t[::1] slot_v
    cdef unsigned char* scratch_p
    check_item_strides(n_rows, X.strides[0], X.shape[1], X.strides[1], sizeof(floating))
    if n_rows == 0 or n_trees == 0:
        return
    nodes = <const compact_node*>&compact[0]
    packed = _packed_section(compact)
    base = &X[0, 0]
    level = _walk_kind(simd, X.shape[1], row_stride, col_stride, &tree_ptr[0], n_trees, base)
    if n_rows * n_trees < 4096:
        n_threads = 1
    if level != WALK_AVX512 and block_rows >= 0:
        # the AVX-512 walk where the CPU has it, else the partition walk for many rows
        used, slot = split_columns(compact, tree_ptr, X.shape[1]) if columns is None else columns
        used_v = used
        slot_v = slot
        n_used = used_v.shape[0]
        R = block_rows if block_rows > 0 else _partition_rows(n_rows, n_used, sizeof(floating),
                                                               n_threads)
        if R > 0:
            max_nodes = 1
            for t in range(n_trees):
                max_nodes = max(max_nodes, tree_ptr[t + 1] - tree_ptr[t])
            n_blocks = (n_rows + R - 1) // R
            n_workers = _n_workers(n_threads, n_blocks)
            size = _partition_scratch(R, n_used, sizeof(floating), max_nodes)
            scratch = np.empty(n_workers * size + 64, dtype=np.uint8)
            scratch_p = <unsigned char*>cnp.PyArray_DATA(scratch)
            scratch_p += (64 - (<size_t>scratch_p) % 64) % 64
            for w in prange(n_workers, schedule='static', num_threads=n_workers, nogil=True):
                _partition_worker(base, row_stride, col_stride, nodes, &tree_ptr[0],
                                  &tree_class[0], n_trees, &used_v[0] if n_used > 0 else NULL,
                                  n_used, &slot_v[0] if slot_v.shape[0] > 0 else NULL,
                                  &out[0, 0], out.shape[1], R, scratch_p + w * size,
                                  max_nodes, min(n_blocks * w // n_workers * R, n_rows),
                                  min(n_blocks * (w + 1) // n_workers * R, n_rows))
            return
    for blk in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
        lo = blk * ROW_BLOCK
        hi = lo + ROW_BLOCK
        if hi > n_rows:
            hi = n_rows
        for t in range(n_trees):
            _add_tree(nodes + tree_ptr[t], packed + tree_ptr[t], base, lo, hi, row_stride,
                      col_stride, &out[0, tree_class[t]], out.shape[1], level)


cdef enum:
    # Calls with fewer rows walk each row through the trees side by side in the
    # calling thread: a single row has no other rows to overlap with, and starting
    # threads would cost more than the walk.
    FEW_ROWS = 16


cdef class Forest:
    """The trees of an ensemble laid out for the walks, built once per set of
    trees: ``compact`` (from ``compact_nodes``), ``tree_ptr``, ``tree_class``. The
    trees are ones ``trees_are_valid`` accepts for ``n_features`` (a fitted model's,
    or a loaded one's after ``tree.check_ensemble``): the walks read the features
    they split on without bounds checks."""
    cdef readonly object compact, tree_ptr, tree_class, symmetric, columns
    cdef readonly Py_ssize_t n_trees, n_features, n_outputs
    cdef const unsigned char* _compact
    cdef const int64_t* _ptr
    cdef const int32_t* _cls
    cdef sym_tables _sym

    def __init__(self, nodes, tree_ptr, tree_class, Py_ssize_t n_features,
                 Py_ssize_t n_outputs):
        cdef const int64_t[::1] ptr = tree_ptr
        cdef const int32_t[::1] cls = tree_class
        cdef const unsigned char[::1] compact
        cdef Py_ssize_t t
        if cls.shape[0] != ptr.shape[0] - 1:
            raise ValueError("tree_class must have one entry per tree")
        for t in range(cls.shape[0]):
            if not 0 <= cls[t] < n_outputs:
                raise ValueError(f"tree_class[{t}] = {cls[t]} is not an output of {n_outputs}")
        self.compact = compact_nodes(nodes, ptr)
        self.columns = split_columns(self.compact, ptr, n_features)
        self.tree_ptr, self.tree_class = tree_ptr, tree_class
        self.n_trees, self.n_features, self.n_outputs = cls.shape[0], n_features, n_outputs
        compact = self.compact
        self._compact = &compact[0] if compact.shape[0] > 0 else NULL
        self._ptr = &ptr[0]
        self._cls = &cls[0] if cls.shape[0] > 0 else NULL
        # every tree symmetric (CatBoost's oblivious trees): the symmetric walk
        self.symmetric = symmetric_trees(nodes, ptr) if cls.shape[0] > 0 else None
        if self.symmetric is not None:
            self._sym = sym_tables_of(self.symmetric, cls)

    def predict_raw(self, X, base_score, Py_ssize_t start, Py_ssize_t stop, int n_threads):
        """``base_score`` (one value per output) plus the leaf values of trees
        ``start <= t < stop`` for each row of X (see ``add_raw``), shape
        ``(n_rows, n_outputs)``."""
        cdef Py_ssize_t i, k, n_rows = X.shape[0]
        cdef double* dst
        cdef const double* base
        cdef cnp.npy_intp dims[2]
        if not (cnp.PyArray_Check(base_score)
                and cnp.PyArray_TYPE(<cnp.ndarray>base_score) == cnp.NPY_FLOAT64
                and cnp.PyArray_NDIM(<cnp.ndarray>base_score) == 1
                and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>base_score)
                and cnp.PyArray_DIM(<cnp.ndarray>base_score, 0) == self.n_outputs):
            raise ValueError(f"base_score must be a float64 array of {self.n_outputs} values")
        base = <const double*>cnp.PyArray_DATA(<cnp.ndarray>base_score)
        dims[0] = n_rows
        dims[1] = self.n_outputs
        out = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT64, 0)
        dst = <double*>cnp.PyArray_DATA(<cnp.ndarray>out)
        for i in range(n_rows):
            for k in range(self.n_outputs):
                dst[i * self.n_outputs + k] = base[k]
        self._add(X, out, start, stop, n_threads)
        return out

    def add_raw(self, X, out, Py_ssize_t start, Py_ssize_t stop, int n_threads):
        """``out[i, tree_class[t]] += value of the leaf of row i in tree t`` for trees
        ``start <= t < stop`` in order; X a 2-D float32 or float64 array of
        ``n_features`` columns, ``out`` a C-ordered float64 array of one row per row
        of X and ``n_outputs`` columns (``predict_raw``)."""
        self._add(X, out, start, stop, n_threads)

    cdef int _add(self, X, out, Py_ssize_t start, Py_ssize_t stop, int n_threads) except -1:
        cdef cnp.ndarray arr, res
        cdef Py_ssize_t i, n_rows, x_rows, x_cols
        cdef int kind
        cdef double* dst
        if not 0 <= start <= stop <= self.n_trees:
            raise ValueError(f"trees {start}..{stop} are not within 0..{self.n_trees}")
        if cnp.PyArray_Check(X) and cnp.PyArray_NDIM(<cnp.ndarray>X) == 2:
            x_rows = cnp.PyArray_DIM(<cnp.ndarray>X, 0)
            x_cols = cnp.PyArray_DIM(<cnp.ndarray>X, 1)
        else:
            x_rows = X.shape[0]
            x_cols = X.shape[1]
        if not (cnp.PyArray_Check(out) and cnp.PyArray_TYPE(<cnp.ndarray>out) == cnp.NPY_FLOAT64
                and cnp.PyArray_NDIM(<cnp.ndarray>out) == 2
                and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>out)
                and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>out)
                and cnp.PyArray_DIM(<cnp.ndarray>out, 0) == x_rows
                and cnp.PyArray_DIM(<cnp.ndarray>out, 1) == self.n_outputs):
            raise ValueError(f"out must be a writeable C-ordered float64 array of shape "
                             f"({x_rows}, {self.n_outputs})")
        if x_cols != self.n_features:
            raise ValueError(f"X has {x_cols} features, but the model has "
                             f"{self.n_features}")
        if self.symmetric is not None:
            self._add_symmetric(X, out, start, stop, n_threads)
            return 0
        if (cnp.PyArray_Check(X) and cnp.PyArray_NDIM(<cnp.ndarray>X) == 2
                and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>X)
                and cnp.PyArray_ISALIGNED(<cnp.ndarray>X)
                and cnp.PyArray_DIM(<cnp.ndarray>X, 0) < FEW_ROWS):
            arr = <cnp.ndarray>X
            res = <cnp.ndarray>out
            kind = cnp.PyArray_TYPE(arr)
            n_rows = cnp.PyArray_DIM(arr, 0)
            dst = <double*>cnp.PyArray_DATA(res)
            if kind == cnp.NPY_FLOAT32:
                for i in range(n_rows):
                    gbt_row_walk_f32(self._compact, self._ptr, self._cls, start, stop,
                                     <const float*>cnp.PyArray_DATA(arr) + i * self.n_features,
                                     dst + i * self.n_outputs)
                return 0
            if kind == cnp.NPY_FLOAT64:
                for i in range(n_rows):
                    gbt_row_walk_f64(self._compact, self._ptr, self._cls, start, stop,
                                     <const double*>cnp.PyArray_DATA(arr) + i * self.n_features,
                                     dst + i * self.n_outputs)
                return 0
        predict_raw(X, self.compact, self.tree_ptr[start:stop + 1],
                    self.tree_class[start:stop], out, n_threads, columns=self.columns)
        return 0

    cdef _add_symmetric(self, X, out, Py_ssize_t start, Py_ssize_t stop, int n_threads):
        """``add_raw`` of a forest of symmetric trees (``out`` checked)."""
        cdef cnp.ndarray arr
        cdef int kind, status
        cdef Py_ssize_t n_rows
        cdef double* dst = <double*>cnp.PyArray_DATA(<cnp.ndarray>out)
        if (cnp.PyArray_Check(X) and cnp.PyArray_NDIM(<cnp.ndarray>X) == 2
                and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>X)
                and cnp.PyArray_ISALIGNED(<cnp.ndarray>X)
                and cnp.PyArray_TYPE(<cnp.ndarray>X) in (cnp.NPY_FLOAT32, cnp.NPY_FLOAT64)):
            arr = <cnp.ndarray>X
            kind = cnp.PyArray_TYPE(arr)
            n_rows = cnp.PyArray_DIM(arr, 0)
            if n_rows < FEW_ROWS:
                sym_rows(cnp.PyArray_DATA(arr), kind == cnp.NPY_FLOAT32, self.n_features, n_rows,
                         &self._sym, start, stop, dst, self.n_outputs)
                return
            with nogil:
                status = sym_walk(cnp.PyArray_DATA(arr), kind == cnp.NPY_FLOAT32,
                                  self.n_features, 1, n_rows, &self._sym, start, stop, dst,
                                  self.n_outputs, n_threads, _SIMD_LEVEL)
            if status < 0:
                raise MemoryError("could not allocate the blocks of the symmetric walk")
            return
        predict_symmetric(X, self.symmetric, self.tree_class, start, stop, out, n_threads,
                          _SIMD_LEVEL)


def binary_labels(raw, classes):
    """``classes.take(raw[:, 0] > 0)``: a binary classifier's labels from its raw
    scores (a C-ordered float64 array of one column)."""
    cdef cnp.npy_intp n
    cdef cnp.npy_intp* idx
    cdef const double* r
    cdef Py_ssize_t i
    if not (cnp.PyArray_Check(raw) and cnp.PyArray_TYPE(<cnp.ndarray>raw) == cnp.NPY_FLOAT64
            and cnp.PyArray_NDIM(<cnp.ndarray>raw) == 2
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>raw)
            and cnp.PyArray_DIM(<cnp.ndarray>raw, 1) == 1 and cnp.PyArray_Check(classes)):
        raise ValueError("raw must be a C-ordered float64 array of one column")
    n = cnp.PyArray_DIM(<cnp.ndarray>raw, 0)
    picked = cnp.PyArray_EMPTY(1, &n, cnp.NPY_INTP, 0)
    idx = <cnp.npy_intp*>cnp.PyArray_DATA(<cnp.ndarray>picked)
    r = <const double*>cnp.PyArray_DATA(<cnp.ndarray>raw)
    for i in range(n):
        idx[i] = r[i] > 0
    return classes.take(picked)


def predict_binned(const X_BINNED_C[:, ::1] X_binned, const int[::1] missing_bin,
                   const node_struct[::1] nodes, const int64_t[::1] tree_ptr,
                   const int32_t[::1] tree_class, double[:, ::1] out, int n_threads):
    """Same as ``predict_raw`` on the binned matrix the model was trained on."""
    cdef Py_ssize_t n_rows = X_binned.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i, lo, hi, t
    cdef const node_struct* tree
    if n_rows == 0 or n_trees == 0:
        return
    if n_rows * n_trees < 4096:
        n_threads = 1
    for blk in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
        lo = blk * ROW_BLOCK
        hi = lo + ROW_BLOCK
        if hi > n_rows:
            hi = n_rows
        for t in range(n_trees):
            tree = &nodes[tree_ptr[t]]
            for i in range(lo, hi):
                out[i, tree_class[t]] += tree[_leaf_binned(tree, &X_binned[i, 0], &missing_bin[0])].value


def apply_raw(const floating[:, :] X, const node_struct[::1] nodes,
              const int64_t[::1] tree_ptr, int32_t[:, ::1] out, int n_threads):
    """``out[i, t]`` = index (within tree t) of the leaf that row i reaches."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t i, t
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(floating)
    cdef Py_ssize_t col_stride = X.strides[1] // sizeof(floating)
    cdef const floating* base
    check_item_strides(n_rows, X.strides[0], X.shape[1], X.strides[1], sizeof(floating))
    if n_rows == 0 or n_trees == 0:
        return
    base = &X[0, 0]
    for i in prange(n_rows, schedule='static', num_threads=n_threads, nogil=True):
        for t in range(n_trees):
            out[i, t] = _leaf_raw(&nodes[tree_ptr[t]], base + i * row_stride, col_stride)


def add_tree_binned_rows(const X_BINNED_C[:, ::1] X_binned, const int[::1] missing_bin,
                         const node_struct[::1] tree, const uint32_t[::1] rows,
                         double[:, ::1] out, int output, int n_threads):
    """``out[r, output] += tree(X_binned[r])`` for the listed rows only (one tree).

    The rows a subsampled tree was not grown on get its predictions this way.
    """
    cdef Py_ssize_t j, n = rows.shape[0]
    if n == 0:
        return
    if n < 4096:
        n_threads = 1
    for j in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        out[rows[j], output] += tree[_leaf_binned(&tree[0], &X_binned[rows[j], 0],
                                                  &missing_bin[0])].value


# ---------------------------------------------------------------------------
# CSR input

cdef enum:
    # Bytes of one thread's scratch block: small enough to stay in L2 while the
    # trees walk it; wide data gets fewer rows per block (at least one).
    SCRATCH_BYTES = 1 << 20


cdef Py_ssize_t _block_rows(Py_ssize_t n_rows, Py_ssize_t n_features,
                            Py_ssize_t itemsize) noexcept nogil:
    cdef Py_ssize_t rows = SCRATCH_BYTES // (max(n_features, 1) * itemsize)
    return max(1, min(rows, ROW_BLOCK, n_rows))


ctypedef fused scatter_t:      # raw values (float32, float64) or bins (uint8)
    float
    double
    X_BINNED_C


cdef int _scatter(const scatter_t* values, const int32_t* indices, const int64_t* indptr,
                  Py_ssize_t nnz, Py_ssize_t row, Py_ssize_t n_features,
                  scatter_t* dst) noexcept nogil:
    """Write the stored entries of one row into its dense scratch row.

    Returns 1 (and writes nothing out of bounds) when ``indptr``/``indices``
    do not describe a CSR row of width ``n_features``."""
    cdef int64_t k, lo = indptr[row], hi = indptr[row + 1]
    cdef int bad = 0
    if lo < 0 or hi < lo or hi > nnz:
        return 1
    for k in range(lo, hi):
        if <size_t>indices[k] < <size_t>n_features:
            dst[indices[k]] = values[k]
        else:
            bad = 1
    return bad


cdef void _restore_raw(const int32_t* indices, const int64_t* indptr, Py_ssize_t nnz,
                       Py_ssize_t row, Py_ssize_t n_features, floating* dst,
                       floating absent) noexcept nogil:
    cdef int64_t k, lo = indptr[row], hi = indptr[row + 1]
    if lo < 0 or hi < lo or hi > nnz:
        return
    for k in range(lo, hi):
        if <size_t>indices[k] < <size_t>n_features:
            dst[indices[k]] = absent


cdef void _restore_binned(const int32_t* indices, const int64_t* indptr, Py_ssize_t nnz,
                          Py_ssize_t row, Py_ssize_t n_features, X_BINNED_C* dst,
                          const X_BINNED_C* default_bin) noexcept nogil:
    cdef int64_t k, lo = indptr[row], hi = indptr[row + 1]
    if lo < 0 or hi < lo or hi > nnz:
        return
    for k in range(lo, hi):
        if <size_t>indices[k] < <size_t>n_features:
            dst[indices[k]] = default_bin[indices[k]]


cdef int _predict_raw_csr_worker(const floating* data, const int32_t* indices,
                                 const int64_t* indptr, Py_ssize_t nnz, Py_ssize_t n_features,
                                 floating absent, const compact_node* nodes,
                                 const uint64_t* packed, int level,
                                 const int64_t* tree_ptr, const int32_t* tree_class,
                                 Py_ssize_t n_trees, double* out, Py_ssize_t n_out,
                                 floating* scratch, Py_ssize_t block_rows,
                                 Py_ssize_t row_lo, Py_ssize_t row_hi) noexcept nogil:
    """Rows row_lo..row_hi-1, in blocks of block_rows, through one scratch block."""
    cdef Py_ssize_t lo, hi, i, t
    cdef int bad = 0
    lo = row_lo
    while lo < row_hi:
        hi = min(lo + block_rows, row_hi)
        for i in range(lo, hi):
            bad |= _scatter(data, indices, indptr, nnz, i, n_features,
                                scratch + (i - lo) * n_features)
        for t in range(n_trees):
            _add_tree(nodes + tree_ptr[t], packed + tree_ptr[t], <const floating*>scratch, 0,
                      hi - lo, n_features, 1, out + lo * n_out + tree_class[t], n_out,
                      level)
        for i in range(lo, hi):
            _restore_raw(indices, indptr, nnz, i, n_features,
                         scratch + (i - lo) * n_features, absent)
        lo = hi
    return bad


cdef int _apply_raw_csr_worker(const floating* data, const int32_t* indices,
                               const int64_t* indptr, Py_ssize_t nnz, Py_ssize_t n_features,
                               floating absent, const node_struct* nodes,
                               const int64_t* tree_ptr, Py_ssize_t n_trees, int32_t* out,
                               floating* scratch, Py_ssize_t block_rows,
                               Py_ssize_t row_lo, Py_ssize_t row_hi) noexcept nogil:
    cdef Py_ssize_t lo, hi, i, t
    cdef int bad = 0
    lo = row_lo
    while lo < row_hi:
        hi = min(lo + block_rows, row_hi)
        for i in range(lo, hi):
            bad |= _scatter(data, indices, indptr, nnz, i, n_features,
                                scratch + (i - lo) * n_features)
        for i in range(lo, hi):
            for t in range(n_trees):
                out[i * n_trees + t] = _leaf_raw(nodes + tree_ptr[t],
                                                 <const floating*>scratch + (i - lo) * n_features, 1)
        for i in range(lo, hi):
            _restore_raw(indices, indptr, nnz, i, n_features,
                         scratch + (i - lo) * n_features, absent)
        lo = hi
    return bad


cdef int _binned_csr_worker(const X_BINNED_C* bins, const int32_t* indices,
                            const int64_t* indptr, Py_ssize_t nnz, Py_ssize_t n_features,
                            const X_BINNED_C* default_bin, const int* missing_bin,
                            const node_struct* nodes, const int64_t* tree_ptr,
                            const int32_t* tree_class, Py_ssize_t n_trees,
                            const uint32_t* rows, Py_ssize_t n_csr_rows,
                            double* out, Py_ssize_t n_out, X_BINNED_C* scratch,
                            Py_ssize_t block_rows, Py_ssize_t j_lo,
                            Py_ssize_t j_hi) noexcept nogil:
    """Binned traversal of rows j_lo..j_hi-1; these are CSR rows ``rows[j]`` when
    ``rows`` is given (their results go to out row ``rows[j]``), else rows j."""
    cdef Py_ssize_t lo, hi, j, t, r
    cdef const node_struct* tree
    cdef int bad = 0
    lo = j_lo
    while lo < j_hi:
        hi = min(lo + block_rows, j_hi)
        for j in range(lo, hi):
            r = rows[j] if rows != NULL else j
            if r >= n_csr_rows:
                bad = 1
                continue
            bad |= _scatter(bins, indices, indptr, nnz, r, n_features,
                                   scratch + (j - lo) * n_features)
        for t in range(n_trees):
            tree = nodes + tree_ptr[t]
            for j in range(lo, hi):
                r = rows[j] if rows != NULL else j
                if r < n_csr_rows:
                    out[r * n_out + tree_class[t]] += tree[_leaf_binned(
                        tree, scratch + (j - lo) * n_features, missing_bin)].value
        for j in range(lo, hi):
            r = rows[j] if rows != NULL else j
            if r < n_csr_rows:
                _restore_binned(indices, indptr, nnz, r, n_features,
                                scratch + (j - lo) * n_features, default_bin)
        lo = hi
    return bad


cdef _check_csr(Py_ssize_t indptr_len, Py_ssize_t n_indices, Py_ssize_t n_values,
                Py_ssize_t n_rows, Py_ssize_t n_features):
    """Cheap sanity of the CSR arrays (shapes only; entries are checked as read)."""
    if indptr_len != n_rows + 1:
        raise ValueError(f"indptr has {indptr_len} entries for {n_rows} rows "
                         f"(expected {n_rows + 1})")
    if n_indices != n_values:
        raise ValueError(f"indices has {n_indices} entries but data has {n_values}")
    if n_features < 0:
        raise ValueError(f"n_features must be >= 0, got {n_features}")


cdef _check_node_features(const node_struct* nodes, Py_ssize_t n_nodes,
                          Py_ssize_t n_features):
    cdef Py_ssize_t k
    for k in range(n_nodes):
        if not nodes[k].is_leaf and not (0 <= nodes[k].feature < n_features):
            raise ValueError(f"the trees split on feature {nodes[k].feature} but the "
                             f"matrix has {n_features} features")


cdef _bad_csr():
    raise ValueError("the CSR matrix is malformed: indptr is not non-decreasing within "
                     "bounds, or a column index (or row) is out of range")


cdef int _n_workers(int n_threads, Py_ssize_t n_blocks) noexcept nogil:
    return <int>max(1, min(<Py_ssize_t>n_threads, n_blocks))


def predict_raw_csr(const floating[::1] data, const int32_t[::1] indices,
                    const int64_t[::1] indptr, Py_ssize_t n_features, double absent,
                    const unsigned char[::1] compact, const int64_t[::1] tree_ptr,
                    const int32_t[::1] tree_class, double[:, ::1] out, int n_threads,
                    int simd=-1):
    """``predict_raw`` on a CSR matrix whose absent entries have the value ``absent``
    (0.0, or NaN for missing); ``out`` has one row per CSR row. ``simd`` as in
    ``predict_raw``."""
    cdef Py_ssize_t n_rows = out.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t nnz = data.shape[0], k, block_rows, n_blocks, w, size
    cdef int n_workers, bad = 0
    cdef const compact_node* nodes
    cdef const uint64_t* packed
    cdef int level
    cdef floating* scratch_p
    cdef floating absent_f = <floating>absent
    _check_csr(indptr.shape[0], indices.shape[0], nnz, n_rows, n_features)
    if n_rows == 0 or n_trees == 0:
        return
    nodes = <const compact_node*>&compact[0]
    for k in range(tree_ptr[0], tree_ptr[n_trees]):
        if nodes[k].left >= 0 and (nodes[k].feature & 0x7fffffff) >= n_features:
            raise ValueError(f"the trees split on feature {nodes[k].feature & 0x7fffffff} "
                             f"but the matrix has {n_features} features")
    for k in range(n_trees):
        if not (0 <= tree_class[k] < out.shape[1]):
            raise ValueError(f"tree {k} feeds output {tree_class[k]}; out has {out.shape[1]}")
    if n_rows * n_trees < 4096:
        n_threads = 1
    block_rows = _block_rows(n_rows, n_features, sizeof(floating))
    n_blocks = (n_rows + block_rows - 1) // block_rows
    n_workers = _n_workers(n_threads, n_blocks)
    size = block_rows * n_features
    scratch = np.full(max(n_workers * size, 1), absent,
                      dtype=np.float32 if floating is float else np.float64)
    cdef floating[::1] scratch_v = scratch
    scratch_p = &scratch_v[0]
    packed = _packed_section(compact)
    level = _walk_kind(simd, n_features, n_features, 1, &tree_ptr[0], n_trees, scratch_p)
    for w in prange(n_workers, schedule='static', num_threads=n_workers, nogil=True):
        bad += _predict_raw_csr_worker(
            &data[0] if nnz > 0 else NULL, &indices[0] if nnz > 0 else NULL, &indptr[0],
            nnz, n_features, absent_f, nodes, packed, level, &tree_ptr[0], &tree_class[0],
            n_trees, &out[0, 0], out.shape[1], scratch_p + w * size, block_rows,
            min(n_blocks * w // n_workers * block_rows, n_rows),
            min(n_blocks * (w + 1) // n_workers * block_rows, n_rows))
    if bad:
        _bad_csr()


def apply_raw_csr(const floating[::1] data, const int32_t[::1] indices,
                  const int64_t[::1] indptr, Py_ssize_t n_features, double absent,
                  const node_struct[::1] nodes, const int64_t[::1] tree_ptr,
                  int32_t[:, ::1] out, int n_threads):
    """``apply_raw`` on a CSR matrix whose absent entries have the value ``absent``."""
    cdef Py_ssize_t n_rows = out.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t nnz = data.shape[0], block_rows, n_blocks, w, size
    cdef int n_workers, bad = 0
    cdef floating* scratch_p
    cdef floating absent_f = <floating>absent
    _check_csr(indptr.shape[0], indices.shape[0], nnz, n_rows, n_features)
    if out.shape[1] != n_trees:
        raise ValueError(f"out has {out.shape[1]} columns for {n_trees} trees")
    if n_rows == 0 or n_trees == 0:
        return
    _check_node_features(&nodes[tree_ptr[0]], tree_ptr[n_trees] - tree_ptr[0], n_features)
    block_rows = _block_rows(n_rows, n_features, sizeof(floating))
    n_blocks = (n_rows + block_rows - 1) // block_rows
    n_workers = _n_workers(n_threads, n_blocks)
    size = block_rows * n_features
    scratch = np.full(max(n_workers * size, 1), absent,
                      dtype=np.float32 if floating is float else np.float64)
    cdef floating[::1] scratch_v = scratch
    scratch_p = &scratch_v[0]
    for w in prange(n_workers, schedule='static', num_threads=n_workers, nogil=True):
        bad += _apply_raw_csr_worker(
            &data[0] if nnz > 0 else NULL, &indices[0] if nnz > 0 else NULL, &indptr[0],
            nnz, n_features, absent_f, &nodes[0], &tree_ptr[0], n_trees, &out[0, 0],
            scratch_p + w * size, block_rows,
            min(n_blocks * w // n_workers * block_rows, n_rows),
            min(n_blocks * (w + 1) // n_workers * block_rows, n_rows))
    if bad:
        _bad_csr()


cdef _binned_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                 const X_BINNED_C[::1] bins, const X_BINNED_C[::1] default_bin,
                 const int[::1] missing_bin, const node_struct[::1] nodes,
                 const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
                 const uint32_t* rows, Py_ssize_t n_jobs, double[:, ::1] out,
                 int n_threads):
    """Shared body of the binned CSR kernels: ``n_jobs`` rows (``rows[j]``, or j
    when ``rows`` is NULL) through every tree of ``tree_ptr``."""
    cdef Py_ssize_t n_csr_rows = indptr.shape[0] - 1, n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t nnz = bins.shape[0], n_features = default_bin.shape[0]
    cdef Py_ssize_t block_rows, n_blocks, w, size
    cdef int n_workers, bad = 0
    cdef X_BINNED_C* scratch_p
    if n_csr_rows < 0:
        raise ValueError("indptr must have at least one entry")
    if indices.shape[0] != nnz:
        raise ValueError(f"indices has {indices.shape[0]} entries but bins has {nnz}")
    if missing_bin.shape[0] != n_features:
        raise ValueError(f"missing_bin has {missing_bin.shape[0]} entries, "
                         f"default_bin has {n_features}")
    if out.shape[0] < n_csr_rows:
        raise ValueError(f"out has {out.shape[0]} rows for {n_csr_rows} CSR rows")
    if n_jobs == 0 or n_trees == 0:
        return
    _check_node_features(&nodes[tree_ptr[0]], tree_ptr[n_trees] - tree_ptr[0], n_features)
    for w in range(n_trees):
        if not (0 <= tree_class[w] < out.shape[1]):
            raise ValueError(f"tree {w} feeds output {tree_class[w]}; out has {out.shape[1]}")
    block_rows = _block_rows(n_jobs, n_features, sizeof(X_BINNED_C))
    n_blocks = (n_jobs + block_rows - 1) // block_rows
    n_workers = _n_workers(n_threads, n_blocks)
    size = block_rows * n_features
    scratch = np.tile(np.asarray(default_bin), n_workers * block_rows) if size > 0 \
        else np.zeros(1, dtype=np.uint8)
    cdef X_BINNED_C[::1] scratch_v = scratch
    scratch_p = &scratch_v[0]
    for w in prange(n_workers, schedule='static', num_threads=n_workers, nogil=True):
        bad += _binned_csr_worker(
            &bins[0] if nnz > 0 else NULL, &indices[0] if nnz > 0 else NULL, &indptr[0],
            nnz, n_features, &default_bin[0] if n_features > 0 else NULL,
            &missing_bin[0] if n_features > 0 else NULL, &nodes[0], &tree_ptr[0],
            &tree_class[0], n_trees, rows, n_csr_rows, &out[0, 0], out.shape[1],
            scratch_p + w * size, block_rows,
            min(n_blocks * w // n_workers * block_rows, n_jobs),
            min(n_blocks * (w + 1) // n_workers * block_rows, n_jobs))
    if bad:
        _bad_csr()


def predict_binned_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                       const uint8_t[::1] bins, const uint8_t[::1] default_bin,
                       const int[::1] missing_bin, const node_struct[::1] nodes,
                       const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
                       double[:, ::1] out, int n_threads):
    """``predict_binned`` on a binned matrix stored as CSR: the entries whose bin is
    the feature's ``default_bin`` are not stored."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_trees = tree_ptr.shape[0] - 1
    if out.shape[0] != n_rows:
        raise ValueError(f"out has {out.shape[0]} rows for {n_rows} CSR rows")
    if n_rows * n_trees < 4096:
        n_threads = 1
    _binned_csr(indptr, indices, bins, default_bin, missing_bin, nodes, tree_ptr,
                tree_class, NULL, n_rows, out, n_threads)


def add_tree_binned_rows_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                             const uint8_t[::1] bins, const uint8_t[::1] default_bin,
                             const int[::1] missing_bin, const node_struct[::1] tree,
                             const uint32_t[::1] rows, double[:, ::1] out, int output,
                             int n_threads):
    """``add_tree_binned_rows`` on a binned matrix stored as CSR (see
    ``predict_binned_csr``)."""
    cdef Py_ssize_t n = rows.shape[0]
    cdef int64_t[::1] ptr = np.array([0, tree.shape[0]], dtype=np.int64)
    cdef int32_t[::1] cls = np.array([output], dtype=np.int32)
    if n == 0:
        return
    if tree.shape[0] == 0:
        raise ValueError("the tree has no nodes")
    if n < 4096:
        n_threads = 1
    _binned_csr(indptr, indices, bins, default_bin, missing_bin, tree, ptr, cls,
                &rows[0], n, out, n_threads)
