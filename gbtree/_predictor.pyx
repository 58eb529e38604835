"""Tree traversal over rows: raw values, binned values, leaf indices.

The ensemble is a flat array of ``node_struct`` records; tree t owns records
``tree_ptr[t]:tree_ptr[t + 1]`` and adds its leaf value to output column
``tree_class[t]``. Rows are processed in blocks, each block walking every tree,
so a tree's nodes stay in cache across the rows of a block.
"""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdint cimport int32_t, int64_t, uint32_t

from ._typedefs cimport X_BINNED_C, node_struct

cdef enum:
    ROW_BLOCK = 64


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


def predict_raw(const floating[:, :] X, const node_struct[::1] nodes,
                const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
                double[:, ::1] out, int n_threads):
    """``out[i, tree_class[t]] += value of the leaf of row i in tree t``, for every tree."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i, lo, hi, t
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(floating)
    cdef Py_ssize_t col_stride = X.strides[1] // sizeof(floating)
    cdef const node_struct* tree
    cdef const floating* base
    if n_rows == 0 or n_trees == 0:
        return
    base = &X[0, 0]
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
                out[i, tree_class[t]] += tree[_leaf_raw(tree, base + i * row_stride, col_stride)].value


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
