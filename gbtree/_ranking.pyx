"""Gradient and hessian kernels of the ranking losses, ``prange`` over query groups.

Rows are sorted by query: group ``g`` owns rows ``group_ptr[g] .. group_ptr[g + 1] - 1``.
Within a group the documents are ranked by the current score (descending,
ties by row order). For each pair ``(i, j)`` with ``y_i > y_j`` that is
considered, with ``d = s_i - s_j``, ``rho = 1 / (1 + exp(d))`` and the pair's
weight ``Z`` (1 for RankNet, ``|delta NDCG|`` or ``|delta AP|`` of swapping the
two documents' ranks):

    g_i -= Z rho,   g_j += Z rho,   h_i += Z rho (1 - rho),   h_j += Z rho (1 - rho)

(the derivatives of ``Z log(1 + exp(-d))``). Pairs considered: every pair whose
better-ranked document is in the top ``truncation`` positions, or, with
``n_pair > 0``, ``n_pair`` partners drawn per document among the documents of
its group with another label (a counter-based RNG seeded by ``seed`` and the
group index, so the result does not depend on the threads). With ``norm``:
``Z`` is divided by ``0.01 + |d|`` (unless all scores of the group are equal)
and the group's gradients and hessians are multiplied by
``log2(1 + L) / L``, ``L`` the sum of ``2 Z rho`` over the group's pairs
(LightGBM's and XGBoost's lambdarank normalisation). A sample weight (constant
within a group) multiplies both. NumPy reference: ``_reference.ranking_grad``.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport exp, exp2, fabs, log2
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc

from ._typedefs cimport G_H_C

cdef extern from *:
    """
    #include <algorithm>
    /* idx = 0..n-1 sorted by key descending, ties in index order (a stable sort
       without the temporary buffer std::stable_sort allocates on every call). */
    static void gbt_argsort_desc(const double* key, int* idx, int n) {
        for (int i = 0; i < n; ++i) idx[i] = i;
        std::sort(idx, idx + n, [key](int a, int b) {
            return key[a] > key[b] || (key[a] == key[b] && a < b);
        });
    }
    /* sum over the k largest of gain[0..n) (k <= n), largest first, of gain x disc[p]. */
    static double gbt_top_dcg(const double* gain, double* tmp, int n, int k,
                              const double* disc) {
        std::copy(gain, gain + n, tmp);
        std::partial_sort(tmp, tmp + k, tmp + n, [](double a, double b) { return a > b; });
        double acc = 0.0;
        for (int p = 0; p < k; ++p) acc += tmp[p] * disc[p];
        return acc;
    }
    """
    void gbt_argsort_desc(const double* key, int* idx, int n) noexcept nogil
    double gbt_top_dcg(const double* gain, double* tmp, int n, int k,
                       const double* disc) noexcept nogil

cdef enum:
    KIND_PAIRWISE = 0
    KIND_NDCG = 1
    KIND_MAP = 2
    N_BUFFERS = 9

KINDS = {"pairwise": KIND_PAIRWISE, "ndcg": KIND_NDCG, "map": KIND_MAP}


cdef inline uint64_t _splitmix(uint64_t* state) noexcept nogil:
    state[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double _discount(int p) noexcept nogil:
    return 1.0 / log2(p + 2.0)


cdef inline double _pair_weight(int kind, int a, int b, int i, int j, const double* y,
                                const double* gain, double inv_ideal, const double* hits,
                                const double* inv_rank_sum, const double* disc) noexcept nogil:
    """|delta metric| of swapping the documents at ranks a < b (i at a, j at b)."""
    cdef double d, between
    cdef bint rel_a
    if kind == KIND_NDCG:
        return fabs(gain[i] - gain[j]) * (disc[a] - disc[b]) * inv_ideal
    if kind == KIND_MAP:
        rel_a = y[i] > 0
        if rel_a == (y[j] > 0):
            return 0.0
        between = inv_rank_sum[b - 1] - inv_rank_sum[a]
        if rel_a:   # the relevant document moves down from a to b
            d = hits[b] / (b + 1.0) - hits[a] / (a + 1.0) - between
        else:       # the relevant document moves up from b to a
            d = (hits[a] + 1.0) / (a + 1.0) - hits[b] / (b + 1.0) + between
        return fabs(d) * inv_ideal
    return 1.0


cdef inline double _add_pair(int hi, int lo, double z, const double* s, const double* ex,
                             bint score_norm, double* lam, double* hh) noexcept nogil:
    """Accumulate the pair (hi better than lo) with weight z; returns 2 z rho.

    ``ex[i] = exp(s_i - max s)`` turns ``rho = 1 / (1 + exp(s_hi - s_lo))`` into a
    division (no exp per pair); both underflowing falls back to the exp.
    """
    cdef double d = s[hi] - s[lo]
    cdef double rho, den = ex[hi] + ex[lo]
    if score_norm:
        z = z / (0.01 + fabs(d))
    rho = ex[lo] / den if den > 0 else 1.0 / (1.0 + exp(d))
    lam[hi] -= z * rho
    lam[lo] += z * rho
    hh[hi] += z * rho * (1.0 - rho)
    hh[lo] += z * rho * (1.0 - rho)
    return 2.0 * z * rho


cdef void _group_grad(const double* y, const double* s, int n, Py_ssize_t group,
                      int kind, int truncation, bint exp_gain, bint norm, int n_pair,
                      uint64_t seed, double* buf, int* ibuf) noexcept nogil:
    """Gradients (buf[0:n]) and hessians (buf[n:2n]) of one group, before its weight."""
    cdef double* lam = buf
    cdef double* hh = buf + n
    cdef double* gain = buf + 2 * n
    cdef double* hits = buf + 3 * n
    cdef double* inv_rank_sum = buf + 4 * n
    cdef double* disc = buf + 5 * n
    cdef double* ex = buf + 6 * n
    cdef int* by_score = ibuf
    cdef int* rank = ibuf + n
    cdef int* by_label = ibuf + 2 * n
    cdef int* tie_lo = ibuf + 3 * n
    cdef int a, b, i, j, p, q, t, top, n_other, lo, hi
    cdef double inv_ideal = 1.0, total = 0.0, acc, count, factor
    cdef bint score_norm
    cdef uint64_t state, r
    for i in range(n):
        lam[i] = 0.0
        hh[i] = 0.0
    if n < 2:
        return
    for i in range(1, n):
        if y[i] != y[0]:
            break
    else:
        return   # all labels tie: no pairs
    gbt_argsort_desc(s, by_score, n)
    for p in range(n):
        rank[by_score[p]] = p
    score_norm = norm and s[by_score[0]] != s[by_score[n - 1]]
    for i in range(n):
        ex[i] = exp(s[i] - s[by_score[0]])
    if kind == KIND_NDCG:
        for p in range(n):
            disc[p] = _discount(p)
    if kind == KIND_NDCG:
        for i in range(n):
            gain[i] = exp2(y[i]) - 1.0 if exp_gain else y[i]
        inv_ideal = 1.0 / gbt_top_dcg(gain, hits, n, min(truncation, n), disc)
    elif kind == KIND_MAP:
        count = 0.0
        acc = 0.0
        for p in range(n):
            if y[by_score[p]] > 0:
                count = count + 1.0
                acc = acc + 1.0 / (p + 1.0)
            hits[p] = count
            inv_rank_sum[p] = acc
        inv_ideal = 1.0 / count

    if n_pair <= 0:
        top = min(truncation, n - 1)
        for a in range(top):
            i = by_score[a]
            for b in range(a + 1, n):
                j = by_score[b]
                if y[i] == y[j]:
                    continue
                if y[i] > y[j]:
                    total = total + _add_pair(i, j, _pair_weight(
                        kind, a, b, i, j, y, gain, inv_ideal, hits, inv_rank_sum, disc),
                        s, ex, score_norm, lam, hh)
                else:
                    total = total + _add_pair(j, i, _pair_weight(
                        kind, a, b, i, j, y, gain, inv_ideal, hits, inv_rank_sum, disc),
                        s, ex, score_norm, lam, hh)
    else:
        # tie blocks of the label order: tie_lo[p] is the first position with by_label[p]'s label
        gbt_argsort_desc(y, by_label, n)
        tie_lo[0] = 0
        for p in range(1, n):
            tie_lo[p] = p if y[by_label[p]] != y[by_label[p - 1]] else tie_lo[p - 1]
        state = seed ^ (<uint64_t>group * <uint64_t>0xD1B54A32D192ED03ULL)
        p = 0
        while p < n:
            lo = tie_lo[p]
            hi = p + 1
            while hi < n and tie_lo[hi] == lo:
                hi = hi + 1
            n_other = n - (hi - lo)
            for q in range(lo, hi):
                i = by_label[q]
                for t in range(n_pair):
                    r = _splitmix(&state) % <uint64_t>n_other
                    j = by_label[<int>r if <int>r < lo else <int>r + (hi - lo)]
                    a = min(rank[i], rank[j])
                    b = max(rank[i], rank[j])
                    if y[i] > y[j]:
                        total = total + _add_pair(i, j, _pair_weight(
                            kind, a, b, by_score[a], by_score[b], y, gain, inv_ideal, hits,
                            inv_rank_sum, disc), s, ex, score_norm, lam, hh)
                    else:
                        total = total + _add_pair(j, i, _pair_weight(
                            kind, a, b, by_score[a], by_score[b], y, gain, inv_ideal, hits,
                            inv_rank_sum, disc), s, ex, score_norm, lam, hh)
            p = hi
    if norm and total > 0:
        factor = log2(1.0 + total) / total
        for i in range(n):
            lam[i] = lam[i] * factor
            hh[i] = hh[i] * factor


def ranking_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                 bint weighted, const Py_ssize_t[::1] group_ptr, G_H_C[:, ::1] grad,
                 G_H_C[:, ::1] hess, int n_threads, int kind, int truncation, bint exp_gain,
                 bint norm, int n_pair, unsigned long long seed):
    """Write the ranking gradients and hessians of every group (see the module docstring).

    ``kind`` is ``KINDS[name]``; ``raw`` has one column; ``group_ptr`` has
    ``n_groups + 1`` increasing offsets from 0 to ``n_rows``.
    """
    cdef Py_ssize_t n_groups = group_ptr.shape[0] - 1
    cdef Py_ssize_t g, start, k
    cdef int n, max_n = 0
    cdef double wi
    cdef double* buf = NULL
    cdef int* ibuf = NULL
    for g in range(n_groups):
        max_n = max(max_n, <int>(group_ptr[g + 1] - group_ptr[g]))
    if n_groups < 4 or group_ptr[n_groups] < 4096:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        buf = <double*>malloc(7 * max(max_n, 1) * sizeof(double))
        ibuf = <int*>malloc(4 * max(max_n, 1) * sizeof(int))
        for g in prange(n_groups, schedule='dynamic', chunksize=16):
            start = group_ptr[g]
            n = <int>(group_ptr[g + 1] - start)
            _group_grad(&y[start], &raw[start, 0], n, g, kind, truncation, exp_gain, norm,
                        n_pair, <uint64_t>seed, buf, ibuf)
            wi = w[start] if weighted else 1.0
            for k in range(n):
                grad[0, start + k] = <G_H_C>(wi * buf[k])
                hess[0, start + k] = <G_H_C>(wi * buf[n + k])
        free(buf)
        free(ibuf)
