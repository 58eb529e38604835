"""Tree traversal over rows: raw values, binned values, leaf indices.

The ensemble is a flat array of ``node_struct`` records; tree t owns records
``tree_ptr[t]:tree_ptr[t + 1]`` and adds its leaf value to output column
``tree_class[t]``. Rows are processed in blocks, each block walking every tree,
so a tree's nodes stay in cache across the rows of a block.

``predict_raw`` walks a compact copy of the trees (``compact_nodes``): 16-byte
nodes renumbered so that a node's children are neighbours, which makes the
step down the tree branch-free: ``next = left + (row goes right)``.
"""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdint cimport int32_t, int64_t, uint32_t, INT32_MIN

import numpy as np

from ._typedefs cimport X_BINNED_C, node_struct

cdef enum:
    ROW_BLOCK = 64

# One node of the compact traversal copy. Inner node: ``value`` is the
# threshold, ``left`` the index (within the tree) of its left child, the right
# child being ``left + 1``; ``feature`` has bit 31 set when missing values go
# left. Leaf: ``left == -1`` and ``value`` is the leaf value.
cdef packed struct compact_node:
    double value
    int32_t feature
    int32_t left


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


def compact_nodes(const node_struct[::1] nodes, const int64_t[::1] tree_ptr):
    """The compact traversal copy of the trees (same tree_ptr), as a uint8 array of
    ``n_nodes x 16`` bytes: children renumbered breadth first, left then right."""
    cdef Py_ssize_t n_trees = tree_ptr.shape[0] - 1, n_nodes = nodes.shape[0]
    out = np.zeros(n_nodes * sizeof(compact_node), dtype=np.uint8)
    cdef unsigned char[::1] out_v = out
    cdef compact_node* c = <compact_node*>&out_v[0] if n_nodes > 0 else NULL
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
    return out


cdef enum:
    LANES = 8     # rows walked down one tree side by side (independent loads overlap)


cdef inline void _add_leaf_values(const compact_node* tree, const floating* base,
                                  Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t row_stride,
                                  Py_ssize_t col_stride, double* out,
                                  Py_ssize_t out_stride) noexcept nogil:
    """``out[i * out_stride] += leaf value of row i`` for rows lo..hi-1 of one tree."""
    cdef int32_t cur[LANES]
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
        moving = True
        while moving:
            moving = False
            for k in range(m):
                n = cur[k]
                if tree[n].left >= 0:
                    f = tree[n].feature
                    v = base[(i0 + k) * row_stride + (f & 0x7fffffff) * col_stride]
                    # NaN fails both tests: it goes right unless its default is left
                    go_right = (not (v <= tree[n].value)) & (not (v != v and f < 0))
                    cur[k] = tree[n].left + go_right
                    moving = True
        for k in range(m):
            out[(i0 + k) * out_stride] += tree[cur[k]].value
        i0 += LANES


def predict_raw(const floating[:, :] X, const unsigned char[::1] compact,
                const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
                double[:, ::1] out, int n_threads):
    """``out[i, tree_class[t]] += value of the leaf of row i in tree t``, for every
    tree in order; ``compact`` comes from ``compact_nodes``."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i, lo, hi, t
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(floating)
    cdef Py_ssize_t col_stride = X.strides[1] // sizeof(floating)
    cdef const compact_node* nodes
    cdef const floating* base
    if n_rows == 0 or n_trees == 0:
        return
    nodes = <const compact_node*>&compact[0]
    base = &X[0, 0]
    if n_rows * n_trees < 4096:
        n_threads = 1
    for blk in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
        lo = blk * ROW_BLOCK
        hi = lo + ROW_BLOCK
        if hi > n_rows:
            hi = n_rows
        for t in range(n_trees):
            _add_leaf_values(nodes + tree_ptr[t], base, lo, hi, row_stride, col_stride,
                             &out[0, tree_class[t]], out.shape[1])


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
