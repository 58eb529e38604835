"""Exact greedy split finding over sorted column blocks (the XGBoost paper's
Algorithms 1 and 3).

Each feature's non-missing values are sorted once per fit (``sort_columns``,
a column block: the rows and float32 values of one feature, in increasing
value). For one level of a tree, ``level_splits`` walks every block once and
finds the best split of every open node of the level at once: a row's node is
``pos`` of the row's state (-1: the row is in no open node), each node keeps its running
gradient sums, and a candidate is tried between every two distinct
consecutive values of the node's rows. A block is walked in increasing value
(missing rows to the right child) when the feature has missing values, and
always in decreasing value (missing rows to the left child): the sparsity-aware
enumeration, which visits only the stored entries. Features run in parallel.
The positions and gradients of the next ``buffer`` entries are gathered into a
buffer of the thread's before they are used (the paper's cache-aware access).
"""
import numpy as np

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport fabs, isnan, INFINITY
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.stdlib cimport malloc, free
from libcpp.algorithm cimport sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from ._splitting cimport make_split_params, split_params, score
from ._typedefs cimport GBT_PREFETCH

# A split must improve the objective by more than this fraction of the
# children's scores (as in the histogram scan).
cdef double REL_EPS = 1e-10
# The offset past the last value of the split "every stored value on one side"
# (XGBoost's kRtEps).
cdef double END_GAP = 1e-6

cdef enum:
    MAX_BUFFER = 256


cdef packed struct row_state:
    # what the walks read of a row, in one place (one cache line holds four rows)
    float g
    float h
    int32_t pos         # the row's node in the level, -1: none
    int32_t pad


ROW_STATE = np.dtype([("g", np.float32), ("h", np.float32), ("pos", np.int32),
                      ("pad", np.int32)])
assert ROW_STATE.itemsize == sizeof(row_state)


def row_states(grad, hess, pos):
    """The ``ROW_STATE`` array of rows with these gradients, hessians and nodes."""
    out = np.zeros(len(pos), dtype=ROW_STATE)
    out["g"], out["h"], out["pos"] = grad, hess, pos
    return out


cdef struct node_acc:
    double g            # running sums of the node's entries walked so far
    double h
    float last          # the value of the last of them
    int32_t last_bin    # and its proposal bin (approx)


cdef struct split_cand:
    double gain         # -inf: none
    double g_left       # the left child's sums (missing rows included when default_left)
    double h_left
    double threshold    # rows with value <= threshold go left
    uint8_t default_left


def sort_columns(const float[:, ::1] XT, int n_threads=1):
    """Column blocks of a column-major float32 matrix ``XT`` (n_features, n_rows):
    ``(col_ptr, rows, values)`` with feature f's non-NaN entries at
    ``col_ptr[f]:col_ptr[f + 1]``, in increasing value (ties by row)."""
    cdef Py_ssize_t F = XT.shape[0], n = XT.shape[1], f, i, k
    counts = np.zeros(F + 1, dtype=np.int64)
    cdef int64_t[::1] c = counts
    for f in prange(F, nogil=True, num_threads=n_threads, schedule='dynamic'):
        for i in range(n):
            if not isnan(XT[f, i]):
                c[f + 1] += 1
    col_ptr = np.cumsum(counts)
    cdef const int64_t[::1] ptr = col_ptr
    rows = np.empty(col_ptr[F], dtype=np.uint32)
    values = np.empty(col_ptr[F], dtype=np.float32)
    cdef uint32_t[::1] r = rows
    cdef float[::1] v = values
    cdef vector[pair[float, uint32_t]]* buf
    with nogil, parallel(num_threads=n_threads):
        buf = new vector[pair[float, uint32_t]]()
        for f in prange(F, schedule='dynamic'):
            buf.clear()
            for i in range(n):
                if not isnan(XT[f, i]):
                    buf.push_back(pair[float, uint32_t](XT[f, i], <uint32_t>i))
            sort(buf.begin(), buf.end())
            for k in range(<Py_ssize_t>buf.size()):
                v[ptr[f] + k] = buf.at(k).first
                r[ptr[f] + k] = buf.at(k).second
        del buf
    return col_ptr, rows, values


cdef inline double _between(float a, float b) noexcept nogil:
    """A threshold t with min(a, b) <= t < max(a, b): the midpoint of the two
    distinct float32 values, in float64 (XGBoost takes it in float32, which can
    round onto one of them), or the smaller value when the larger is +inf."""
    cdef double lo = a if a < b else b
    cdef double hi = b if a < b else a
    cdef double t = (lo + hi) * 0.5
    return t if t < hi else lo


cdef inline double _gain(double gl, double hl, double gr, double hr, double parent,
                         const split_params* p) noexcept nogil:
    """The gain of a split into children of these sums, -inf when it is not valid."""
    cdef double sl, sr, gain
    if hl < p.min_child_weight or hr < p.min_child_weight or hl <= 0.0 or hr <= 0.0:
        return -INFINITY
    sl = score(gl, hl, p)
    sr = score(gr, hr, p)
    gain = sl + sr - parent
    return gain if gain > REL_EPS * (sl + sr) else -INFINITY


cdef inline void _keep(split_cand* best, double gain, double gl, double hl, double threshold,
                       uint8_t default_left) noexcept nogil:
    best.gain = gain
    best.g_left = gl
    best.h_left = hl
    best.threshold = threshold
    best.default_left = default_left


cdef inline void _try(split_cand* best, double gl, double hl, double gr, double hr,
                      double parent, double threshold, uint8_t default_left,
                      const split_params* p) noexcept nogil:
    cdef double gain = _gain(gl, hl, gr, hr, parent, p)
    if gain > best.gain:
        _keep(best, gain, gl, hl, threshold, default_left)


cdef extern from *:
    """
    #include "_clones.h"
    /* The gains of n candidates of the plain objective (alpha = 0,
       max_delta_step = 0): one child's sums (gl, hl), the node's (G, H) and
       parent score; -inf where a child is below min_child_weight or empty, or
       the gain is rounding noise. Divisions for every candidate, then masked:
       the compiler vectorises that. */
    GBT_CLONES
    static void gbt_exact_gains(const double* __restrict gl, const double* __restrict hl,
                                const double* __restrict G, const double* __restrict H,
                                const double* __restrict parent, int n, double lam,
                                double mcw, double rel_eps, double* __restrict gains) {
        for (int i = 0; i < n; ++i) {
            double gr = G[i] - gl[i], hr = H[i] - hl[i];
            double sl = gl[i] * gl[i] / (hl[i] + lam);
            double sr = gr * gr / (hr + lam);
            double gain = sl + sr - parent[i];
            int ok = (hl[i] >= mcw) & (hr >= mcw) & (hl[i] > 0.0) & (hr > 0.0)
                     & (gain > rel_eps * (sl + sr));
            gains[i] = ok ? gain : -INFINITY;
        }
    }
    """
    void gbt_exact_gains(const double* gl, const double* hl, const double* G, const double* H,
                         const double* parent, int n, double lam, double mcw, double rel_eps,
                         double* gains) noexcept nogil


cdef void _walk(const uint32_t* rows, const float* values, const int32_t* bins,
                Py_ssize_t n, int step, const row_state* state, const double* sums,
                const double* parents, int m, node_acc* acc, split_cand* best,
                const uint8_t* allowed, int F, int f, const split_params* p,
                int buffer) noexcept nogil:
    """One direction of one feature's block (``step`` +1: increasing values, the
    walked rows are the left child, missing rows go right; -1: decreasing, the
    walked rows are the right child, missing rows go left); ``best[node]`` keeps
    the best candidate of each node over the calls. A candidate lies between two
    consecutive entries of a node with distinct values, or with ``bins`` (approx)
    in distinct proposal bins.

    The entries go ``buffer`` at a time: their rows' positions and gradients are
    gathered first (independent loads, which the CPU overlaps), then the running
    sums advance and each candidate is recorded, then the candidates' gains are
    computed together and the best kept in their order."""
    cdef int32_t buf_pos[MAX_BUFFER]
    cdef float buf_g[MAX_BUFFER]
    cdef float buf_h[MAX_BUFFER]
    # the candidates of the buffer: node, walked side's sums, node sums, threshold
    cdef int c_node[MAX_BUFFER]
    cdef double c_g[MAX_BUFFER]
    cdef double c_h[MAX_BUFFER]
    cdef double c_G[MAX_BUFFER]
    cdef double c_H[MAX_BUFFER]
    cdef double c_par[MAX_BUFFER]
    cdef double c_t[MAX_BUFFER]
    cdef double gains[MAX_BUFFER]
    cdef bint plain = p.reg_alpha == 0.0 and p.max_delta_step <= 0.0
    cdef Py_ssize_t start, j, e, n_buf
    cdef int nid, nc, c
    cdef uint32_t r
    cdef float v
    cdef double cg, ch, gap
    cdef node_acc* a
    for nid in range(m):
        acc[nid].g = 0.0
        acc[nid].h = 0.0
        acc[nid].last = 0.0
        acc[nid].last_bin = -1
    if buffer < 1:
        buffer = 1
    if buffer > MAX_BUFFER:
        buffer = MAX_BUFFER
    start = 0
    while start < n:
        n_buf = buffer if n - start > buffer else n - start
        for j in range(n_buf):
            e = start + j if step > 0 else n - 1 - start - j
            r = rows[e]
            buf_pos[j] = state[r].pos
            buf_g[j] = state[r].g
            buf_h[j] = state[r].h
            # and the rows of the next buffer on their way into the cache
            e = e + step * buffer
            if 0 <= e < n:
                GBT_PREFETCH(&state[rows[e]])
        nc = 0
        for j in range(n_buf):
            nid = buf_pos[j]
            if nid < 0 or (allowed != NULL and not allowed[<Py_ssize_t>nid * F + f]):
                continue
            e = start + j if step > 0 else n - 1 - start - j
            v = values[e]
            a = &acc[nid]
            if (a.h != 0.0 and a.h >= p.min_child_weight
                    and (v != a.last if bins == NULL else bins[e] != a.last_bin)):
                c_node[nc] = nid
                c_g[nc] = a.g
                c_h[nc] = a.h
                c_G[nc] = sums[2 * nid]
                c_H[nc] = sums[2 * nid + 1]
                c_par[nc] = parents[nid]
                c_t[nc] = _between(v, a.last)
                nc = nc + 1
            a.g += buf_g[j]
            a.h += buf_h[j]
            a.last = v
            if bins != NULL:
                a.last_bin = bins[e]
        if nc == 0:
            start += n_buf
            continue
        if plain:
            gbt_exact_gains(c_g, c_h, c_G, c_H, c_par, nc, p.reg_lambda, p.min_child_weight,
                            REL_EPS, gains)
        else:
            for c in range(nc):
                gains[c] = _gain(c_g[c], c_h[c], c_G[c] - c_g[c], c_H[c] - c_h[c], c_par[c], p)
        for c in range(nc):
            if gains[c] > best[c_node[c]].gain:
                if step > 0:
                    _keep(&best[c_node[c]], gains[c], c_g[c], c_h[c], c_t[c], 0)
                else:
                    _keep(&best[c_node[c]], gains[c], c_G[c] - c_g[c], c_H[c] - c_h[c],
                          c_t[c], 1)
        start += n_buf
    # every walked value on one side, the missing rows on the other
    for nid in range(m):
        a = &acc[nid]
        if a.h == 0.0:
            continue
        cg = sums[2 * nid] - a.g
        ch = sums[2 * nid + 1] - a.h
        gap = fabs(a.last) + END_GAP
        if step > 0:
            _try(&best[nid], a.g, a.h, cg, ch, parents[nid], a.last + gap, 0, p)
        elif a.last - gap < a.last:     # (no threshold below -inf)
            _try(&best[nid], cg, ch, a.g, a.h, parents[nid], a.last - gap, 1, p)


def level_splits(const int64_t[::1] col_ptr, const uint32_t[::1] col_rows,
                 const float[::1] col_values, const uint8_t[::1] has_missing,
                 const row_state[::1] state, const double[:, ::1] sums,
                 const uint8_t[:, ::1] allowed, double reg_lambda=1.0, double reg_alpha=0.0,
                 double min_child_weight=1.0, double max_delta_step=0.0, int buffer=32,
                 int n_threads=1, const int32_t[::1] bins=None):
    """The best split of each of the ``m`` open nodes of a level.

    ``state`` (``ROW_STATE``): each row's gradient, hessian and node (0..m-1, or
    -1); ``sums`` (m, 2) each node's sums; ``allowed`` (m,
    n_features) uint8, the features each node may split on, or None for all;
    ``has_missing[f]``: feature f has rows without a value (then its block is
    walked in both directions). ``bins`` (approx; None: exact): each entry's
    proposal bin, laid out as the blocks; candidates then lie between bins only. Ties go to the lower feature, then to the first
    candidate of the walks. Returns ``(gain, feature, threshold, default_left,
    left)``: per node the gain (-inf and feature -1: no valid split), the
    threshold (rows with ``value <= threshold`` go left: the midpoint of the two
    values it separates), where missing rows go, and the left child's (m, 2)
    sums.
    """
    cdef int F = col_ptr.shape[0] - 1, m = sums.shape[0], f, nid, step
    if (has_missing.shape[0] != F or sums.shape[1] != 2
            or (allowed is not None and (allowed.shape[0] != m or allowed.shape[1] != F))):
        raise ValueError("col_ptr, has_missing, sums and allowed do not match")
    if col_rows.shape[0] != col_values.shape[0] or col_ptr[F] != col_rows.shape[0]:
        raise ValueError("col_ptr, col_rows and col_values do not match")
    if bins is not None and bins.shape[0] != col_rows.shape[0]:
        raise ValueError("bins must have one entry per block entry")
    if buffer < 0 or buffer > MAX_BUFFER:
        raise ValueError(f"buffer must be in 0..{MAX_BUFFER}, got {buffer}")
    cdef split_params p = make_split_params(reg_lambda, reg_alpha, min_child_weight,
                                            max_delta_step, 0.0, False)
    parents = np.empty(m)
    cdef double[::1] par = parents
    for nid in range(m):
        par[nid] = score(sums[nid, 0], sums[nid, 1], &p)
    cdef vector[split_cand] best = vector[split_cand](<size_t>max(F * m, 1))
    cdef Py_ssize_t k
    for k in range(<Py_ssize_t>F * m):
        best[k].gain = -INFINITY
    cdef const uint8_t* allowed_ptr = &allowed[0, 0] if allowed is not None and m > 0 else NULL
    cdef const uint32_t* rows_ptr = &col_rows[0] if col_rows.shape[0] > 0 else NULL
    cdef const float* values_ptr = &col_values[0] if col_values.shape[0] > 0 else NULL
    cdef const row_state* state_ptr = &state[0] if state.shape[0] > 0 else NULL
    cdef const int32_t* bins_ptr = &bins[0] if bins is not None and bins.shape[0] > 0 else NULL
    cdef const double* sums_ptr = &sums[0, 0] if m > 0 else NULL
    cdef node_acc* acc
    failed = np.zeros(1, dtype=np.int32)
    cdef int32_t[::1] fail = failed
    if m == 0:
        return (np.empty(0), np.empty(0, dtype=np.int32), np.empty(0),
                np.empty(0, dtype=bool), np.empty((0, 2)))
    with nogil, parallel(num_threads=n_threads):
        acc = <node_acc*>malloc(m * sizeof(node_acc))
        if acc != NULL:
            for f in prange(F, schedule='dynamic'):
                # in increasing values (only with missing rows), then in decreasing
                for step in range(1 if has_missing[f] else -1, -2, -2):
                    _walk(rows_ptr + col_ptr[f], values_ptr + col_ptr[f],
                          bins_ptr + col_ptr[f] if bins_ptr != NULL else NULL,
                          col_ptr[f + 1] - col_ptr[f], step, state_ptr, sums_ptr,
                          &par[0], m, acc, &best[<Py_ssize_t>f * m], allowed_ptr, F, f, &p,
                          buffer)
            free(acc)
        else:
            fail[0] = 1
    if fail[0]:
        raise MemoryError("could not allocate the walks' node sums")
    gain = np.full(m, -np.inf)
    feature = np.full(m, -1, dtype=np.int32)
    threshold = np.zeros(m)
    default_left = np.zeros(m, dtype=bool)
    left = np.zeros((m, 2))
    cdef double[::1] g_v = gain
    cdef int32_t[::1] f_v = feature
    cdef double[::1] t_v = threshold
    cdef uint8_t[::1] d_v = default_left.view(np.uint8)
    cdef double[:, ::1] l_v = left
    cdef const split_cand* s
    for nid in range(m):
        for f in range(F):      # the lower feature on ties
            s = &best[<Py_ssize_t>f * m + nid]
            if s.gain > g_v[nid]:
                g_v[nid] = s.gain
                f_v[nid] = f
                t_v[nid] = s.threshold
                d_v[nid] = s.default_left
                l_v[nid, 0] = s.g_left
                l_v[nid, 1] = s.h_left
    return gain, feature, threshold, default_left, left


cdef inline float _csr_value(const int64_t* indptr, const int32_t* indices, const float* data,
                             Py_ssize_t r, int f, float absent) noexcept nogil:
    """Row r's value of feature f in a CSR matrix with sorted indices."""
    cdef int64_t lo = indptr[r], hi = indptr[r + 1], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and indices[lo] == f:
        return data[lo]
    return absent


def split_positions(row_state[::1] state, int32_t[::1] leaf_of, const int32_t[::1] node_id,
                    const int32_t[::1] feature, const double[::1] threshold,
                    const uint8_t[::1] default_left, const int32_t[::1] left_pos, X,
                    int n_threads=1):
    """Move the rows of a level to the next one, in place: a row of node ``i``
    (``state[row].pos == i``) that was split goes to position ``left_pos[i]`` (its
    left child) when its value of ``feature[i]`` is ``<= threshold[i]`` (missing:
    ``default_left[i]``), else ``left_pos[i] + 1`` (its right child); a row of a
    node that stays a leaf gets ``pos = -1`` and ``leaf_of[row] = node_id[i]``.
    Nodes without a split have ``feature[i] == -1``.

    ``X``: the values, a column-major float32 array (n_features, n_rows), or
    ``(indptr, indices, data, absent)`` of a CSR matrix (sorted int32 indices,
    float32 data) whose absent entries have the value ``absent`` (NaN: missing).
    """
    cdef const float[:, ::1] XT
    cdef const int64_t[::1] indptr
    cdef const int32_t[::1] indices
    cdef const float[::1] data
    cdef float absent = 0.0
    cdef bint dense = not isinstance(X, tuple)
    cdef const int32_t* ind = NULL
    cdef const float* dat = NULL
    cdef const int64_t* ptr = NULL
    if dense:
        XT = X
    else:
        indptr, indices, data, absent = X
        ptr = &indptr[0]
        ind = &indices[0] if indices.shape[0] > 0 else NULL
        dat = &data[0] if data.shape[0] > 0 else NULL
    cdef Py_ssize_t r, n = state.shape[0]
    cdef int i
    cdef float v
    for r in prange(n, nogil=True, num_threads=n_threads, schedule='static'):
        i = state[r].pos
        if i < 0:
            continue
        if feature[i] < 0:
            leaf_of[r] = node_id[i]
            state[r].pos = -1
            continue
        if dense:
            v = XT[feature[i], r]
        else:
            v = _csr_value(ptr, ind, dat, r, feature[i], absent)
        if isnan(v):
            state[r].pos = left_pos[i] + (0 if default_left[i] else 1)
        else:
            state[r].pos = left_pos[i] + (0 if v <= threshold[i] else 1)


def local_bins(const int64_t[::1] col_ptr, const uint32_t[::1] col_rows,
               const float[::1] col_values, const row_state[::1] state, int m, int n_parts,
               int n_threads=1):
    """Each block entry's proposal bin within its node (the approx method's
    proposals): a node's entries of feature f, in increasing value, are cut into
    ``n_parts`` parts of equal hessian (its exact hessian-weighted quantiles; each
    part holds at most ``1 / n_parts`` of the hessian, a single heavier value
    aside), entries of one value in one bin. Entries of rows in no node get -1."""
    cdef Py_ssize_t F = col_ptr.shape[0] - 1, f, e
    cdef int nid
    cdef uint32_t r
    if col_rows.shape[0] != col_values.shape[0] or col_ptr[F] != col_rows.shape[0]:
        raise ValueError("col_ptr, col_rows and col_values do not match")
    if n_parts < 2:
        raise ValueError(f"n_parts must be >= 2, got {n_parts}")
    out = np.full(col_rows.shape[0], -1, dtype=np.int32)
    cdef int32_t[::1] bins = out
    cdef double parts = n_parts
    failed = np.zeros(1, dtype=np.int32)
    cdef int32_t[::1] fail = failed
    cdef double* total
    cdef double* cum
    cdef float* last
    cdef int32_t* cur
    if m <= 0:
        return out
    with nogil, parallel(num_threads=n_threads):
        total = <double*>malloc(2 * m * sizeof(double))
        last = <float*>malloc(m * sizeof(float))
        cur = <int32_t*>malloc(m * sizeof(int32_t))
        if total != NULL and last != NULL and cur != NULL:
            cum = total + m
            for f in prange(F, schedule='dynamic'):
                for nid in range(m):
                    total[nid] = 0.0
                    cum[nid] = 0.0
                    cur[nid] = -1
                for e in range(col_ptr[f], col_ptr[f + 1]):
                    nid = state[col_rows[e]].pos
                    if nid >= 0:
                        total[nid] += state[col_rows[e]].h
                for e in range(col_ptr[f], col_ptr[f + 1]):
                    r = col_rows[e]
                    nid = state[r].pos
                    if nid < 0:
                        continue
                    if cur[nid] < 0:
                        cur[nid] = 0
                    elif col_values[e] != last[nid] and total[nid] > 0.0:
                        cur[nid] = <int32_t>(cum[nid] * parts / total[nid])
                    bins[e] = cur[nid]
                    cum[nid] += state[r].h
                    last[nid] = col_values[e]
        else:
            fail[0] = 1
        free(total)
        free(last)
        free(cur)
    if fail[0]:
        raise MemoryError("could not allocate the proposals' node sums")
    return out


def global_cuts(const int64_t[::1] col_ptr, const uint32_t[::1] col_rows,
                const float[::1] col_values, const float[::1] weights, int n_parts,
                int n_threads=1):
    """The global proposals of a tree as bin edges: each feature's entries of the
    tree's rows (``weights``: each row's hessian, NaN for a row outside the tree),
    in increasing value, cut into ``n_parts`` parts of equal weight by
    ``local_bins``' rule (one node), each cut between two values of the tree's
    rows (``_between``). Returns ``(cuts, cut_ptr)`` as ``BinMapper.cuts_`` and
    ``cut_ptr_``: feature f's increasing edges ``cuts[cut_ptr[f]:cut_ptr[f + 1]]``,
    at most ``n_parts - 1`` of them (a last part of zero weight joins the one
    before)."""
    cdef Py_ssize_t F = col_ptr.shape[0] - 1, f, e
    if col_rows.shape[0] != col_values.shape[0] or col_ptr[F] != col_rows.shape[0]:
        raise ValueError("col_ptr, col_rows and col_values do not match")
    if n_parts < 2:
        raise ValueError(f"n_parts must be >= 2, got {n_parts}")
    cdef int parts = n_parts
    out = np.empty((F, max(parts - 1, 1)), dtype=np.float64)
    counts = np.zeros(F, dtype=np.int32)
    cdef double[:, ::1] cut = out
    cdef int32_t[::1] count = counts
    cdef double total, cum
    cdef float w, last
    cdef int cur, p
    cdef bint seen
    for f in prange(F, nogil=True, num_threads=n_threads, schedule='dynamic'):
        total = 0.0
        for e in range(col_ptr[f], col_ptr[f + 1]):
            w = weights[col_rows[e]]
            if not isnan(w):
                total = total + w
        cum = 0.0
        cur = 0
        seen = False
        last = 0.0
        for e in range(col_ptr[f], col_ptr[f + 1]):
            w = weights[col_rows[e]]
            if isnan(w):
                continue
            if seen and col_values[e] != last and total > 0.0:
                p = <int>(cum * parts / total)
                if p > parts - 1:
                    p = parts - 1
                if p != cur:
                    cut[f, count[f]] = _between(last, col_values[e])
                    count[f] += 1
                    cur = p
            seen = True
            cum = cum + w
            last = col_values[e]
    cut_ptr = np.zeros(F + 1, dtype=np.int32)
    np.cumsum(counts, out=cut_ptr[1:])
    return out[np.arange(out.shape[1]) < counts[:, None]], cut_ptr
