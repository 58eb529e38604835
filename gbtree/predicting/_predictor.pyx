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
children, reading one column in a tight loop (any CPU, any strides; with AVX-512
it may take 16 rows a step: their values gathered, the two sides' ids
compressed). Fewer rows
go down a tree eight side by side (the portable walk); on a CPU with AVX-512 or
AVX2 (checked at run time; the build needs no flag) blocks of C-ordered rows go
down eight to a vector, with gathers: float32 rows over 8-byte copies of the
nodes that hold the threshold rounded down to float32 (exact for float32
values), float64 rows (AVX-512 only) over the 16-byte nodes. With AVX-512 a
``Forest`` times, on its first large call, the partition walk with either loop
and the AVX-512 row walk, and keeps the fastest for many rows (``Forest._walk``;
the partition walk with the portable loop until then). A ``Forest`` walks fewer
than ``FEW_ROWS`` rows itself, each row down eight trees side by side. Every walk
reaches the same leaves and adds the same values in the same order.

The walks the CSR kernels share (_sparse_predictor.pyx) are inline in
_predictor.pxd.
"""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, INT32_MIN

import os
import time

import numpy as np

from ..kernels.simd import simd_cap
from ._symmetric_walk import predict_symmetric, symmetric_trees

cimport numpy as cnp

from ._symmetric_walk cimport sym_rows, sym_tables, sym_tables_of, sym_walk
from ..kernels._typedefs cimport X_BINNED_C, check_item_strides, node_struct

cnp.import_array()

cdef int _SIMD_LEVEL = min(gbt_simd_level(), simd_cap())
# GBTREE_SIMD names the walk: no timing picks another (see ``Forest._walk``)
cdef bint _SIMD_NAMED = os.environ.get("GBTREE_SIMD", "").strip() != ""


cdef int machine_simd_level() noexcept nogil:
    return _SIMD_LEVEL


def simd_level():
    """The vector walk ``predict_raw`` uses for C-ordered rows: the best this CPU has,
    at most what GBTREE_SIMD names: 2 = AVX-512, 1 = AVX2, 0 = the portable walk."""
    return _SIMD_LEVEL


cdef inline uint64_t _packed_record(const compact_node* cn) noexcept nogil:
    """The 8-byte record of a compact node (see ``gbt_walk_avx512_f32``)."""
    cdef float t32
    cdef uint32_t bits, meta
    if cn.left < 0:
        return 0
    t32 = gbt_floor_f32(cn.value)
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


def l2_cache_bytes():
    """The L2 cache of a core in bytes, as Linux reports it (0 elsewhere or unknown)."""
    units = {"K": 1 << 10, "M": 1 << 20}
    for index in range(8):
        folder = f"/sys/devices/system/cpu/cpu0/cache/index{index}"
        try:
            with open(f"{folder}/level") as f, open(f"{folder}/size") as g:
                level, size = f.read().strip(), g.read().strip()
        except OSError:
            return 0
        if level == "2":
            try:
                return int(size[:-1]) * units[size[-1]] if size[-1:] in units else int(size)
            except ValueError:   # (an empty or odd file: unknown)
                return 0
    return 0


cdef enum:
    # below PARTITION_MIN_ROWS rows a block's nodes cost more than its rows, and the
    # rows go down the trees side by side instead
    PARTITION_MIN_ROWS = 512

# The partition walk's block: its columns stay in L2 while the trees walk it, 7/8 of
# the L2 cache (512 KiB when unknown), 4,096 rows per 448 KiB at most
cdef Py_ssize_t PARTITION_BYTES = 7 * max(min(l2_cache_bytes(), 8 << 20), 512 << 10) // 8
cdef Py_ssize_t PARTITION_MAX_ROWS = 4096 * (PARTITION_BYTES // (448 << 10))


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
                            Py_ssize_t row_lo, Py_ssize_t row_hi, int split) noexcept nogil:
    """Rows row_lo..row_hi-1 in blocks of R through the partition walk (``scratch``:
    this worker's ``_partition_scratch`` bytes), its nodes' rows handed on with
    AVX-512 when ``split`` is 2."""
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
            if split == 2:
                gbt_partition_walk_avx512_f32(nodes, tree_ptr, tree_class, 0, n_trees, slot, col,
                                              S, R, n, out + lo * out_stride, out_stride, ids,
                                              rng, side)
            else:
                gbt_partition_walk_f32(nodes, tree_ptr, tree_class, 0, n_trees, slot, col, S, R,
                                       n, out + lo * out_stride, out_stride, ids, rng, side)
        else:
            gbt_partition_walk_f64_load(X, lo, n, row_stride, col_stride, used, n_used, col, S)
            if split == 2:
                gbt_partition_walk_avx512_f64(nodes, tree_ptr, tree_class, 0, n_trees, slot, col,
                                              S, R, n, out + lo * out_stride, out_stride, ids,
                                              rng, side)
            else:
                gbt_partition_walk_f64(nodes, tree_ptr, tree_class, 0, n_trees, slot, col, S, R,
                                       n, out + lo * out_stride, out_stride, ids, rng, side)
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
                Py_ssize_t block_rows=0, int split_simd=0):
    """``out[i, tree_class[t]] += value of the leaf of row i in tree t``, for every
    tree in order; ``compact`` comes from ``compact_nodes``. ``simd`` caps the
    vector walk (see ``simd_level``; -1: the best there is, 0: no vector walk);
    ``columns`` is ``split_columns`` of these trees (worked out when None);
    ``block_rows`` > 0 runs the partition walk in blocks of that many rows, -1
    never (0: for enough rows, in blocks sized to the L2 cache); ``split_simd`` names
    the loop that hands a node's rows on in the partition walk: 0 the portable one,
    2 (or -1, the best there is) the AVX-512 one where the CPU has it (a ``Forest``
    times them)."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i, lo, hi, t
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(floating)
    cdef Py_ssize_t col_stride = X.strides[1] // sizeof(floating)
    cdef const compact_node* nodes
    cdef const floating* base
    cdef int level, n_workers, w, split
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
    level = _walk_kind(_SIMD_LEVEL, simd, X.shape[1], row_stride, col_stride, &tree_ptr[0], n_trees, base)
    if n_rows * n_trees < 4096:
        n_threads = 1
    if block_rows >= 0:
        # the partition walk for many rows (the vector walks for the others)
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
            split = _SIMD_LEVEL if split_simd < 0 else min(split_simd, _SIMD_LEVEL)
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
                                  min(n_blocks * (w + 1) // n_workers * R, n_rows), split)
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

# A call of at least TIMED_CALL C-ordered rows, on a CPU with AVX-512, times the
# walks of ``WALKS`` on its first TIMED_ROWS rows (once per Forest and dtype) and
# takes the fastest from then on (the partition walk, portable loop, before).
TIMED_CALL = 65536
TIMED_ROWS = 8192
# the walks a Forest may take for many rows: (block_rows, split_simd) of predict_raw
WALKS = {"partition": (0, 0), "partition-avx512": (0, 2), "row-avx512": (-1, 0)}


def faster_walk(run, clock, walks=tuple(WALKS)):
    """Of ``walks``, the one whose ``run(walk)`` finishes soonest by ``clock()``, the
    best of two runs each, taken in turn (ties: the first)."""
    best = dict.fromkeys(walks, float("inf"))
    for walk in walks + walks:
        t = clock()
        run(walk)
        best[walk] = min(best[walk], clock() - t)
    return min(walks, key=lambda walk: best[walk])


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
    cdef readonly object timed_walks   # {"float32"/"float64": a name of WALKS}

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
        self.timed_walks = {}
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
        cdef cnp.ndarray arr
        cdef Py_ssize_t i, n_rows, x_rows, x_cols
        cdef int status
        cdef bint f32
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
        if (cnp.PyArray_Check(X) and cnp.PyArray_NDIM(<cnp.ndarray>X) == 2
                and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>X)
                and cnp.PyArray_ISALIGNED(<cnp.ndarray>X)
                and cnp.PyArray_TYPE(<cnp.ndarray>X) in (cnp.NPY_FLOAT32, cnp.NPY_FLOAT64)):
            # C-ordered float rows: a few walk here, in the calling thread; many rows of
            # symmetric trees take the symmetric walk directly
            arr = <cnp.ndarray>X
            f32 = cnp.PyArray_TYPE(arr) == cnp.NPY_FLOAT32
            n_rows = cnp.PyArray_DIM(arr, 0)
            dst = <double*>cnp.PyArray_DATA(<cnp.ndarray>out)
            if self.symmetric is not None:
                if n_rows < FEW_ROWS:
                    sym_rows(cnp.PyArray_DATA(arr), f32, self.n_features, n_rows, &self._sym,
                             start, stop, dst, self.n_outputs)
                    return 0
                with nogil:
                    status = sym_walk(cnp.PyArray_DATA(arr), f32, self.n_features, 1, n_rows,
                                      &self._sym, start, stop, dst, self.n_outputs, n_threads,
                                      _SIMD_LEVEL)
                if status < 0:
                    raise MemoryError("could not allocate the blocks of the symmetric walk")
                return 0
            if n_rows < FEW_ROWS:
                if f32:
                    for i in range(n_rows):
                        gbt_row_walk_f32(self._compact, self._ptr, self._cls, start, stop,
                                         <const float*>cnp.PyArray_DATA(arr) + i * self.n_features,
                                         dst + i * self.n_outputs)
                else:
                    for i in range(n_rows):
                        gbt_row_walk_f64(self._compact, self._ptr, self._cls, start, stop,
                                         <const double*>cnp.PyArray_DATA(arr) + i * self.n_features,
                                         dst + i * self.n_outputs)
                return 0
        if self.symmetric is not None:
            predict_symmetric(X, self.symmetric, self.tree_class, start, stop, out, n_threads,
                              _SIMD_LEVEL)
        else:
            block_rows, split_simd = WALKS[self._walk(X, start, stop, n_threads)]
            predict_raw(X, self.compact, self.tree_ptr[start:stop + 1],
                        self.tree_class[start:stop], out, n_threads, columns=self.columns,
                        block_rows=block_rows, split_simd=split_simd)
        return 0

    def _walk(self, X, Py_ssize_t start, Py_ssize_t stop, int n_threads, clock=None):
        """The walk of ``WALKS`` for many rows of X: the partition walk with its portable
        loop, or on a CPU with AVX-512 (GBTREE_SIMD unset), for C-ordered float rows,
        whichever of ``WALKS`` was fastest on this CPU and these trees (which one is
        depends on the CPU: their predictions are the same bit for bit), timed on the
        first call of at least TIMED_CALL rows."""
        if (_SIMD_LEVEL < 2 or _SIMD_NAMED or not isinstance(X, np.ndarray)
                or X.dtype not in (np.float32, np.float64) or not X.flags.c_contiguous):
            return "partition"
        walk = self.timed_walks.get(X.dtype.name, "partition")
        if X.dtype.name not in self.timed_walks and X.shape[0] >= TIMED_CALL:
            rows = X[:TIMED_ROWS]
            out = np.zeros((TIMED_ROWS, self.n_outputs))
            ptr, cls = self.tree_ptr[start:stop + 1], self.tree_class[start:stop]
            walk = self.timed_walks[X.dtype.name] = faster_walk(
                lambda w: predict_raw(rows, self.compact, ptr, cls, out, n_threads,
                                      columns=self.columns, block_rows=WALKS[w][0],
                                      split_simd=WALKS[w][1]),
                clock or time.perf_counter)
        return walk


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
                   const int32_t[::1] tree_class, const uint32_t[::1] rows,
                   double[:, ::1] out, int n_threads):
    """``predict_raw`` on the binned matrix the model was trained on, adding to ``out``:
    for the listed ``rows`` (None: every row), the trees in order."""
    cdef Py_ssize_t n = X_binned.shape[0] if rows is None else rows.shape[0]
    cdef Py_ssize_t n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, j, r, lo, hi, t
    cdef bint listed = rows is not None
    cdef const node_struct* tree
    if n == 0 or n_trees == 0:
        return
    if n * n_trees < 4096:
        n_threads = 1
    for blk in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
        lo = blk * ROW_BLOCK
        hi = lo + ROW_BLOCK
        if hi > n:
            hi = n
        for t in range(n_trees):
            tree = &nodes[tree_ptr[t]]
            for j in range(lo, hi):
                r = rows[j] if listed else j
                out[r, tree_class[t]] += tree[_leaf_binned(tree, &X_binned[r, 0], &missing_bin[0])].value


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


