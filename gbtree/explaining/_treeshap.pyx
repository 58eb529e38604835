"""SHAP values of tree ensembles: exact path-dependent TreeSHAP, its interaction
values, and Saabas' path attributions.

TreeSHAP is Algorithm 2 of Lundberg, Erion and Lee (2018), "Consistent
individualized feature attribution for tree ensembles": one walk down every
branch of a tree keeps, for the unique features met on the path, the weights of
the subsets of them that reach the current node; at a leaf each feature's share
follows by "unwinding" it from those weights. Interaction values condition the
same walk on one feature being present or absent (section 4.2 of the paper).

Each node's fractions are cover-weighted: a node's cover is the sum of its
leaves' covers (``shap_nodes``), so the two fractions of a split add up to one
and a tree's expected value is the cover-weighted mean of its leaves.

Rows go down exactly the branches prediction takes (``_predictor._leaf_raw``):
NaN follows the split's default direction, else ``x <= threshold`` goes left.
Rows run in parallel, in blocks that walk every tree in turn; each row is
computed by one thread in a fixed order, so results do not depend on the
number of threads. Each thread owns one path buffer and, for interactions, two
rows of conditioned values.

Speed-ups over the paper's code (the same numbers up to rounding): a path
element's one-fraction is 0 or 1, so divisions become multiplications by a
table of reciprocals; at a leaf, every "cold" element (one-fraction 0) has the
same unwound contribution, computed once (as in Fast TreeSHAP v1, Yang 2021),
and the "hot" ones are unwound four at a time (independent chains of
multiplications that the CPU overlaps: 1.7x faster on workload-1 trees);
a cold branch of zero cover adds nothing and is not walked; interaction values
condition only on the features a tree splits on (for the others the
conditioned walks are equal and cancel). Fast TreeSHAP v2's precomputation is
not used: it stores about 2**depth values per leaf, and best-first trees of 255
leaves reach depth 15 to 20.
"""
from cython.parallel cimport prange, threadid
from libc.math cimport isnan
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t
from cython cimport floating

import numpy as np

from ..kernels._typedefs cimport check_item_strides, node_struct

cdef enum:
    ROW_BLOCK = 32


# A node as the SHAP walks read it. Inner: ``zero_left``/``zero_right`` are the
# fractions of its cover that go left/right; leaf: ``feature == -1``. ``mean``
# is the cover-weighted mean of the leaf values below (the leaf value of a leaf).
cdef packed struct shap_node:
    double threshold
    double mean
    double zero_left
    double zero_right
    int32_t feature
    int32_t left
    int32_t right
    int32_t default_left


# One element of the unique path: a feature, the fraction of the subsets in which
# it is absent (zero) or present (one) that reach the node, and the weight of the
# subsets of each size (pweight).
cdef struct path_elem:
    double pweight
    double zero
    double one
    int32_t feature


cdef double _fill(const node_struct* tree, int32_t n, shap_node* out) noexcept nogil:
    """Fill ``out[n]`` and its subtree; returns the node's cover (its leaves' sum)."""
    cdef double cl, cr, c
    out[n].threshold = tree[n].threshold
    out[n].left = tree[n].left
    out[n].right = tree[n].right
    out[n].default_left = tree[n].default_left
    if tree[n].is_leaf:
        out[n].feature = -1
        out[n].mean = tree[n].value
        out[n].zero_left = out[n].zero_right = 0.0
        return tree[n].cover
    out[n].feature = tree[n].feature
    cl = _fill(tree, tree[n].left, out)
    cr = _fill(tree, tree[n].right, out)
    c = cl + cr
    if c > 0:
        out[n].zero_left = cl / c
        out[n].zero_right = cr / c
    else:     # no training row below: weigh both sides equally
        out[n].zero_left = out[n].zero_right = 0.5
    out[n].mean = (out[n].zero_left * out[out[n].left].mean
                   + out[n].zero_right * out[out[n].right].mean)
    return c


def shap_nodes(const node_struct[::1] nodes, const int64_t[::1] tree_ptr):
    """The trees as ``shap_node`` records (same ``tree_ptr``), as a uint8 array."""
    cdef Py_ssize_t n_nodes = nodes.shape[0], t
    out = np.zeros(max(n_nodes, 1) * sizeof(shap_node), dtype=np.uint8)
    cdef unsigned char[::1] out_v = out
    cdef shap_node* s = <shap_node*>&out_v[0]
    for t in range(tree_ptr.shape[0] - 1):
        if tree_ptr[t + 1] > tree_ptr[t]:
            _fill(&nodes[tree_ptr[t]], 0, s + tree_ptr[t])
    return out


def shap_means(const unsigned char[::1] snodes, const int64_t[::1] tree_ptr):
    """Each tree's expected value: the cover-weighted mean of its leaf values."""
    cdef const shap_node* s = <const shap_node*>&snodes[0]
    cdef Py_ssize_t t, n_trees = tree_ptr.shape[0] - 1
    out = np.zeros(n_trees, dtype=np.float64)
    for t in range(n_trees):
        if tree_ptr[t + 1] > tree_ptr[t]:
            out[t] = s[tree_ptr[t]].mean
    return out


cdef double _cover_below(const node_struct* tree, int32_t n, double* cover) noexcept nogil:
    if tree[n].is_leaf:
        cover[n] = tree[n].cover
    else:
        cover[n] = (_cover_below(tree, tree[n].left, cover)
                    + _cover_below(tree, tree[n].right, cover))
    return cover[n]


def tree_stats(const node_struct[::1] tree):
    """``(means, covers)`` of one tree's nodes as the SHAP walks use them: the
    cover-weighted mean of the leaf values below, the sum of the leaves' covers."""
    cdef Py_ssize_t n = tree.shape[0], k
    means = np.zeros(n, dtype=np.float64)
    covers = np.zeros(n, dtype=np.float64)
    if n == 0:
        return means, covers
    cdef unsigned char[::1] snodes = shap_nodes(tree, np.array([0, n], dtype=np.int64))
    cdef const shap_node* s = <const shap_node*>&snodes[0]
    cdef double[::1] m = means
    for k in range(n):
        m[k] = s[k].mean
    cdef double[::1] c = covers
    _cover_below(&tree[0], 0, &c[0])
    return means, covers


# ---------------------------------------------------------------------------- the walk
cdef inline void _extend(path_elem* path, int d, double zero, double one, int32_t feature,
                         const double* inv) noexcept nogil:
    cdef int i
    cdef double inv_d1 = inv[d + 1]
    path[d].feature = feature
    path[d].zero = zero
    path[d].one = one
    path[d].pweight = 1.0 if d == 0 else 0.0
    if one != 0:
        for i in range(d - 1, -1, -1):
            path[i + 1].pweight += path[i].pweight * (i + 1) * inv_d1
            path[i].pweight = zero * path[i].pweight * (d - i) * inv_d1
    else:
        for i in range(d - 1, -1, -1):
            path[i].pweight = zero * path[i].pweight * (d - i) * inv_d1


cdef inline void _unwind(path_elem* path, int d, int k, const double* inv) noexcept nogil:
    """Remove element k from a path of d + 1 elements."""
    cdef double one = path[k].one, zero = path[k].zero
    cdef double next_one = path[d].pweight, tmp
    cdef int i
    if one != 0:
        for i in range(d - 1, -1, -1):
            tmp = path[i].pweight
            path[i].pweight = next_one * (d + 1) * inv[i + 1]
            next_one = tmp - path[i].pweight * zero * (d - i) * inv[d + 1]
    else:
        for i in range(d - 1, -1, -1):
            path[i].pweight = path[i].pweight * (d + 1) * inv[d - i] / zero
    for i in range(k, d):
        path[i].feature = path[i + 1].feature
        path[i].zero = path[i + 1].zero
        path[i].one = path[i + 1].one


cdef inline void _unwound_sums_hot(const path_elem* path, int d, const double* zero,
                                   double* total, const double* inv) noexcept nogil:
    """Sums of the weights with a present (one-fraction 1) element unwound, for four
    such elements of zero-fractions ``zero[0..3]`` at once: four independent
    chains of multiplications, which the CPU overlaps."""
    cdef double n0 = path[d].pweight, n1 = n0, n2 = n0, n3 = n0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, t0, t1, t2, t3, a, b, p
    cdef double c0 = zero[0] * inv[d + 1], c1 = zero[1] * inv[d + 1]
    cdef double c2 = zero[2] * inv[d + 1], c3 = zero[3] * inv[d + 1]
    cdef int i
    for i in range(d - 1, -1, -1):
        a = (d + 1) * inv[i + 1]
        b = d - i
        p = path[i].pweight
        t0 = n0 * a
        t1 = n1 * a
        t2 = n2 * a
        t3 = n3 * a
        s0 += t0
        s1 += t1
        s2 += t2
        s3 += t3
        n0 = p - t0 * c0 * b
        n1 = p - t1 * c1 * b
        n2 = p - t2 * c2 * b
        n3 = p - t3 * c3 * b
    total[0] = s0
    total[1] = s1
    total[2] = s2
    total[3] = s3


cdef inline void _add_hot(const path_elem* path, int d, const int* hot_k, const double* zeros,
                          int m, double* phi, double v, const double* inv) noexcept nogil:
    """A leaf's shares for m <= 4 present elements (``path[hot_k[j]]``)."""
    cdef double total[4]
    cdef int j
    _unwound_sums_hot(path, d, zeros, total, inv)
    for j in range(m):
        phi[path[hot_k[j]].feature] += total[j] * (1.0 - zeros[j]) * v


cdef void _walk(const shap_node* tree, int32_t n, const floating* x, Py_ssize_t x_stride,
                double* phi, path_elem* parent, int d, double zero, double one,
                int32_t feature, int condition, int32_t cond_feature, double cond_fraction,
                const double* inv) noexcept nogil:
    """TreeSHAP below node n, which the path reaches as element d (fractions zero,
    one, of ``feature``); adds to ``phi``. ``condition`` +1/-1: conditioned on
    ``cond_feature`` present/absent (0: unconditioned; the conditioned feature
    never enters the path)."""
    cdef path_elem* path = parent + d + 1
    cdef int i, k
    cdef double w, cold_sum, v, incoming_zero, incoming_one, hot_zero, cold_zero
    cdef double hot_cond, cold_cond
    cdef double zeros[4]
    cdef int hot_k[4]
    cdef int n_hot
    cdef int32_t f, hot, cold
    cdef bint go_left
    memcpy(path, parent, (d + 1) * sizeof(path_elem))
    if condition == 0 or cond_feature != feature:
        _extend(path, d, zero, one, feature, inv)
    if tree[n].feature < 0:
        v = tree[n].mean * cond_fraction
        # every absent element contributes the same: -v * (its unwound sum * zero)
        cold_sum = 0.0
        for i in range(d):
            cold_sum += path[i].pweight * (d + 1) * inv[d - i]
        n_hot = 0
        for k in range(1, d + 1):
            if path[k].one != 0:
                hot_k[n_hot & 3] = k
                zeros[n_hot & 3] = path[k].zero
                n_hot += 1
                if n_hot & 3 == 0:
                    _add_hot(path, d, hot_k, zeros, 4, phi, v, inv)
            else:
                phi[path[k].feature] -= cold_sum * v
        if n_hot & 3:
            for i in range(n_hot & 3, 4):
                zeros[i] = 0.0
            _add_hot(path, d, hot_k, zeros, n_hot & 3, phi, v, inv)
        return
    f = tree[n].feature
    v = x[f * x_stride]
    if isnan(v):
        go_left = tree[n].default_left != 0
    else:
        go_left = v <= tree[n].threshold
    if go_left:
        hot, cold = tree[n].left, tree[n].right
        hot_zero, cold_zero = tree[n].zero_left, tree[n].zero_right
    else:
        hot, cold = tree[n].right, tree[n].left
        hot_zero, cold_zero = tree[n].zero_right, tree[n].zero_left
    incoming_zero = 1.0
    incoming_one = 1.0
    # a feature met again: take its element off the path, its fractions carry on
    for k in range(1, d + 1):
        if path[k].feature == f:
            incoming_zero = path[k].zero
            incoming_one = path[k].one
            _unwind(path, d, k, inv)
            d -= 1
            break
    hot_cond = cond_fraction
    cold_cond = cond_fraction
    if condition != 0 and f == cond_feature:
        if condition > 0:
            cold_cond = 0.0
        else:
            hot_cond = hot_cond * hot_zero
            cold_cond = cold_cond * cold_zero
        d -= 1
    # a branch whose element has both fractions 0 has all its weights 0: skipped
    if hot_cond != 0 and (incoming_one != 0 or hot_zero * incoming_zero != 0):
        _walk(tree, hot, x, x_stride, phi, path, d + 1, hot_zero * incoming_zero,
              incoming_one, f, condition, cond_feature, hot_cond, inv)
    if cold_cond != 0 and cold_zero * incoming_zero != 0:
        _walk(tree, cold, x, x_stride, phi, path, d + 1, cold_zero * incoming_zero,
              0.0, f, condition, cond_feature, cold_cond, inv)


cdef void _saabas(const shap_node* tree, const floating* x, Py_ssize_t x_stride,
                  double* phi) noexcept nogil:
    """Saabas: each split on the row's path gives its feature the change of the
    cover-weighted mean from the node to the child the row takes."""
    cdef int32_t n = 0, nxt
    cdef double v
    while tree[n].feature >= 0:
        v = x[tree[n].feature * x_stride]
        if isnan(v):
            nxt = tree[n].left if tree[n].default_left else tree[n].right
        elif v <= tree[n].threshold:
            nxt = tree[n].left
        else:
            nxt = tree[n].right
        phi[tree[n].feature] += tree[nxt].mean - tree[n].mean
        n = nxt


cdef void _interactions(const shap_node* tree, const int32_t* used, Py_ssize_t n_used,
                        const floating* x, Py_ssize_t x_stride, double* out, Py_ssize_t m1,
                        path_elem* path, double* buf, const double* inv) noexcept nogil:
    """One tree's SHAP interaction values of one row, added to the (m1, m1) ``out``:
    off the diagonal half the change of feature j's value between feature i
    conditioned present and absent; on the diagonal the rest of i's value. Only
    the features the tree splits on (``used``) can have a change."""
    cdef double* phi = buf
    cdef double* on = buf + m1
    cdef double* off = buf + 2 * m1
    cdef Py_ssize_t a, b
    cdef int32_t i, j
    cdef double h
    for a in range(n_used):
        phi[used[a]] = 0.0
    _walk(tree, 0, x, x_stride, phi, path, 0, 1.0, 1.0, -1, 0, 0, 1.0, inv)
    for a in range(n_used):
        i = used[a]
        out[i * m1 + i] += phi[i]
        for b in range(n_used):
            on[used[b]] = 0.0
            off[used[b]] = 0.0
        _walk(tree, 0, x, x_stride, on, path, 0, 1.0, 1.0, -1, 1, i, 1.0, inv)
        _walk(tree, 0, x, x_stride, off, path, 0, 1.0, 1.0, -1, -1, i, 1.0, inv)
        for b in range(n_used):
            j = used[b]
            if j != i:
                h = 0.5 * (on[j] - off[j])
                out[i * m1 + j] += h
                out[i * m1 + i] -= h


cdef enum:
    CONTRIBS = 0
    APPROX = 1
    INTERACTIONS = 2


cdef void _block(int mode, const shap_node* nodes, const int64_t* tree_ptr,
                 const int32_t* tree_class, Py_ssize_t n_trees, const int64_t* used_ptr,
                 const int32_t* used, const floating* X, Py_ssize_t row_stride,
                 Py_ssize_t col_stride, Py_ssize_t n_rows, double* out, Py_ssize_t m1,
                 Py_ssize_t out_row, path_elem* path, double* buf,
                 const double* inv) noexcept nogil:
    """Rows 0..n_rows-1 of X (a block) through every tree, tree by tree: the tree
    stays in cache across the block's rows."""
    cdef Py_ssize_t t, i, per_class = m1 * m1 if mode == INTERACTIONS else m1
    cdef const shap_node* tree
    cdef double* o
    for t in range(n_trees):
        tree = nodes + tree_ptr[t]
        if tree_ptr[t + 1] == tree_ptr[t]:
            continue
        for i in range(n_rows):
            o = out + i * out_row + tree_class[t] * per_class
            if mode == CONTRIBS:
                _walk(tree, 0, X + i * row_stride, col_stride, o, path, 0, 1.0, 1.0, -1,
                      0, 0, 1.0, inv)
            elif mode == APPROX:
                _saabas(tree, X + i * row_stride, col_stride, o)
            else:
                _interactions(tree, used + used_ptr[t], used_ptr[t + 1] - used_ptr[t],
                              X + i * row_stride, col_stride, o, m1, path, buf, inv)


cdef class _Work:
    """Per-thread buffers and the tables shared by the threads."""
    cdef double[::1] inv
    cdef path_elem* paths
    cdef object paths_arr
    cdef Py_ssize_t path_size
    cdef double[::1] bufs
    cdef Py_ssize_t buf_size

    def __init__(self, int max_depth, int n_threads, Py_ssize_t m1):
        cdef Py_ssize_t k
        # the path of a node at depth k starts at (k + 1)(k + 2) / 2 and has at
        # most k + 2 elements (one read past it when copied)
        self.path_size = (max_depth + 3) * (max_depth + 4) // 2 + 1
        self.inv = np.zeros(max_depth + 4, dtype=np.float64)
        for k in range(1, max_depth + 4):
            self.inv[k] = 1.0 / k
        self.paths_arr = np.zeros(n_threads * self.path_size * sizeof(path_elem), dtype=np.uint8)
        cdef unsigned char[::1] pv = self.paths_arr
        self.paths = <path_elem*>&pv[0]
        self.buf_size = 3 * m1
        self.bufs = np.zeros(n_threads * self.buf_size, dtype=np.float64)


cdef int _depth(const shap_node* tree, int32_t n) noexcept nogil:
    if tree[n].feature < 0:
        return 0
    return 1 + max(_depth(tree, tree[n].left), _depth(tree, tree[n].right))


cdef int _check(const unsigned char[::1] snodes, const int64_t[::1] tree_ptr,
                const int32_t[::1] tree_class, const int64_t[::1] used_ptr,
                const int32_t[::1] used, Py_ssize_t n_outputs, Py_ssize_t n_features,
                int mode) except -1:
    """The trees' largest depth, once checked: the walks read features, outputs and
    children without bounds checks."""
    cdef const shap_node* s = <const shap_node*>&snodes[0]
    cdef Py_ssize_t t, k, size
    cdef int depth = 0
    if mode not in (CONTRIBS, APPROX, INTERACTIONS):
        raise ValueError(f"mode must be 0 (TreeSHAP), 1 (Saabas) or 2 (interactions), got {mode}")
    if used_ptr.shape[0] != tree_ptr.shape[0] or tree_class.shape[0] != tree_ptr.shape[0] - 1:
        raise ValueError("tree_class and used_ptr must have one entry per tree (used_ptr "
                         "one more)")
    if (used_ptr[0] != 0 or np.any(np.diff(used_ptr) < 0)
            or used_ptr[used_ptr.shape[0] - 1] != used.shape[0]
            or (used.shape[0] > 0 and not 0 <= np.min(used) <= np.max(used) < n_features)):
        raise ValueError("used_ptr and used must list features < n_features, tree by tree")
    if snodes.shape[0] < tree_ptr[tree_ptr.shape[0] - 1] * sizeof(shap_node):
        raise ValueError("snodes has fewer records than tree_ptr says")
    for t in range(tree_class.shape[0]):
        if not 0 <= tree_class[t] < n_outputs:
            raise ValueError(f"tree {t} feeds output {tree_class[t]}; out has {n_outputs}")
        size = tree_ptr[t + 1] - tree_ptr[t]
        for k in range(tree_ptr[t], tree_ptr[t + 1]):
            if s[k].feature >= n_features or (s[k].feature >= 0 and not (
                    0 <= s[k].left < size and 0 <= s[k].right < size)):
                raise ValueError(f"tree {t} splits on feature {s[k].feature} of "
                                 f"{n_features}, or has a child out of the tree")
        if size > 0:
            depth = max(depth, _depth(s + tree_ptr[t], 0))
    return depth


def tree_shap(int mode, const floating[:, :] X, const unsigned char[::1] snodes,
              const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
              const int64_t[::1] used_ptr, const int32_t[::1] used, double[::1] out,
              Py_ssize_t n_outputs, int n_threads):
    """Add the trees' values of every row of dense X to ``out``: C-ordered, shape
    (n_rows, n_outputs, n_features + 1) for mode 0 (TreeSHAP) and 1 (Saabas),
    (n_rows, n_outputs, n_features + 1, n_features + 1) for mode 2 (interaction
    values). Trees may split only on features < n_features (``shap_nodes``
    records); ``used[used_ptr[t]:used_ptr[t + 1]]`` lists the features tree t
    splits on. The bias column is left to the caller."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t m1 = X.shape[1] + 1
    cdef Py_ssize_t out_row = n_outputs * (m1 * m1 if mode == INTERACTIONS else m1)
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(floating)
    cdef Py_ssize_t col_stride = X.strides[1] // sizeof(floating)
    cdef Py_ssize_t n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK, blk, lo
    cdef int tid
    check_item_strides(n_rows, X.strides[0], X.shape[1], X.strides[1], sizeof(floating))
    if out.shape[0] != n_rows * out_row:
        raise ValueError(f"out has {out.shape[0]} values for {n_rows} rows of {out_row}")
    cdef int max_depth = _check(snodes, tree_ptr, tree_class, used_ptr, used, n_outputs,
                                X.shape[1], mode)
    if n_rows == 0 or n_trees == 0:
        return
    n_threads = max(1, min(n_threads, n_blocks))
    work = _Work(max_depth, n_threads, m1)
    cdef _Work w = work
    cdef const shap_node* nodes = <const shap_node*>&snodes[0]
    cdef const floating* base = &X[0, 0]
    cdef const int32_t* used_p = &used[0] if used.shape[0] > 0 else NULL
    for blk in prange(n_blocks, schedule="static", num_threads=n_threads, nogil=True):
        tid = threadid()
        lo = blk * ROW_BLOCK
        _block(mode, nodes, &tree_ptr[0], &tree_class[0], n_trees, &used_ptr[0], used_p,
               base + lo * row_stride, row_stride, col_stride,
               min(ROW_BLOCK, n_rows - lo), &out[lo * out_row], m1, out_row,
               w.paths + tid * w.path_size, &w.bufs[tid * w.buf_size], &w.inv[0])


def tree_shap_csr(int mode, const floating[::1] data, const int32_t[::1] indices,
                  const int64_t[::1] indptr, Py_ssize_t n_features, double absent,
                  const unsigned char[::1] snodes, const int64_t[::1] tree_ptr,
                  const int32_t[::1] tree_class, const int64_t[::1] used_ptr,
                  const int32_t[::1] used, double[::1] out, Py_ssize_t n_outputs,
                  int n_threads):
    """``tree_shap`` on a canonical CSR matrix whose absent entries have the value
    ``absent``: each thread scatters a block of rows into its own dense block."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t m1 = n_features + 1, nnz = data.shape[0]
    cdef Py_ssize_t out_row = n_outputs * (m1 * m1 if mode == INTERACTIONS else m1)
    cdef Py_ssize_t block_rows = max(1, min(<Py_ssize_t>ROW_BLOCK, 65536 // max(n_features, 1)))
    cdef Py_ssize_t n_blocks = (n_rows + block_rows - 1) // block_rows, blk, lo, hi, i, k
    cdef Py_ssize_t size = block_rows * n_features
    cdef floating* scratch_p
    cdef int tid
    if out.shape[0] != n_rows * out_row:
        raise ValueError(f"out has {out.shape[0]} values for {n_rows} rows of {out_row}")
    if indices.shape[0] != nnz or n_rows < 0:
        raise ValueError("malformed CSR arrays")
    if nnz > 0 and (np.min(indices) < 0 or np.max(indices) >= n_features
                    or indptr[0] != 0 or indptr[n_rows] != nnz
                    or np.any(np.diff(indptr) < 0)):
        raise ValueError("the CSR matrix is malformed: indptr is not non-decreasing "
                         "within bounds, or a column index is out of range")
    cdef int max_depth = _check(snodes, tree_ptr, tree_class, used_ptr, used, n_outputs,
                                n_features, mode)
    if n_rows == 0 or n_trees == 0:
        return
    n_threads = max(1, min(n_threads, n_blocks))
    work = _Work(max_depth, n_threads, m1)
    cdef _Work w = work
    scratch = np.full(max(n_threads * size, 1), absent,
                      dtype=np.float32 if floating is float else np.float64)
    cdef floating[::1] scratch_v = scratch
    scratch_p = &scratch_v[0]
    cdef floating absent_f = <floating>absent
    cdef const shap_node* nodes = <const shap_node*>&snodes[0]
    cdef const int32_t* used_p = &used[0] if used.shape[0] > 0 else NULL
    for blk in prange(n_blocks, schedule="static", num_threads=n_threads, nogil=True):
        tid = threadid()
        lo = blk * block_rows
        hi = min(lo + block_rows, n_rows)
        for i in range(lo, hi):
            for k in range(indptr[i], indptr[i + 1]):
                scratch_p[tid * size + (i - lo) * n_features + indices[k]] = data[k]
        _block(mode, nodes, &tree_ptr[0], &tree_class[0], n_trees, &used_ptr[0], used_p,
               scratch_p + tid * size, n_features, 1, hi - lo, &out[lo * out_row], m1,
               out_row, w.paths + tid * w.path_size, &w.bufs[tid * w.buf_size], &w.inv[0])
        for i in range(lo, hi):
            for k in range(indptr[i], indptr[i + 1]):
                scratch_p[tid * size + (i - lo) * n_features + indices[k]] = absent_f
