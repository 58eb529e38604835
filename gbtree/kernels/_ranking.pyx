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
within a group) multiplies both. NumPy reference: ``ranking_grad`` in tests/_reference.py.

How it is computed (per group, all in rank order once the documents are sorted):

- the ranking is found by insertion sort from the previous round's ranking
  (``order``, kept by the caller) when one is given: scores move little between
  rounds, so this costs about ``n`` plus the number of swapped pairs (a full
  sort past a budget; any starting permutation gives the same ranking);
- ``rho = ex_lo / (ex_hi + ex_lo)`` with ``ex = exp(s - max s)``: one ``exp``
  per document, none per pair;
- the ideal DCG comes from counting the labels (integer labels 0..31; a
  partial sort otherwise) and the discounts from a table made once per call;
- LambdaMART's truncated pairs (the default) run through one branch-free loop
  per top position, vectorised over the other documents (``omp simd``), with
  one division per pair: its sums are added in another order and ``Z rho`` and
  ``Z rho (1 - rho)`` are rounded differently from the direct formula, a few
  units in the last place of a double (far below the float32 the gradients
  are stored in). Every other case (RankNet, MAP, sampled pairs, scores so far
  apart that ``exp`` underflows among the top documents) takes the direct
  per-pair formula.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport exp, exp2, fabs, log2
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc

from ._typedefs cimport G_H_C, splitmix64

cdef extern from *:
    """
    #include <algorithm>
    #include <cmath>
    #include <cstddef>
    /* idx = 0..n-1 sorted by key descending, ties in index order (a stable sort
       without the temporary buffer std::stable_sort allocates on every call). */
    static void gbt_argsort_desc(const double* key, int* idx, int n) {
        for (int i = 0; i < n; ++i) idx[i] = i;
        std::sort(idx, idx + n, [key](int a, int b) {
            return key[a] > key[b] || (key[a] == key[b] && a < b);
        });
    }
    /* The same order as gbt_argsort_desc, by insertion from idx (any permutation of
       0..n-1, e.g. the last round's ranking); ks gets the sorted keys. About n plus
       the number of out-of-order pairs; past `budget` moves, the full sort. */
    static void gbt_resort_desc(const double* key, int* idx, double* ks, int n, long budget) {
        for (int p = 0; p < n; ++p) ks[p] = key[idx[p]];
        long moves = 0;
        for (int p = 1; p < n; ++p) {
            const double k = ks[p];
            const int i = idx[p];
            int q = p;
            while (q > 0 && (ks[q - 1] < k || (ks[q - 1] == k && idx[q - 1] > i))) {
                ks[q] = ks[q - 1];
                idx[q] = idx[q - 1];
                --q;
            }
            ks[q] = k;
            idx[q] = i;
            moves += p - q;
            if (moves > budget) {
                gbt_argsort_desc(key, idx, n);
                for (int r = 0; r < n; ++r) ks[r] = key[idx[r]];
                return;
            }
        }
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
    /* count[v] = how many of the labels y[0..n) equal v, when they are all integers
       0..31 (true); false otherwise. */
    static bool gbt_label_counts(const double* y, int n, int* count) {
        std::fill(count, count + 32, 0);
        for (int i = 0; i < n; ++i) {
            const double v = y[i];
            if (!(v >= 0.0 && v <= 31.0) || v != (double)(int)v) return false;
            ++count[(int)v];
        }
        return true;
    }
    /* gbt_top_dcg of the gains gain_of[v] of those labels, from their counts. */
    static double gbt_top_dcg_counts(const int* count, int k, const double* gain_of,
                                     const double* disc) {
        double acc = 0.0;
        int p = 0;
        for (int v = 31; v >= 0 && p < k; --v)
            for (int c = 0; c < count[v] && p < k; ++c, ++p) acc += gain_of[v] * disc[p];
        return acc;
    }
    /* One label block of LambdaMART's pairs of the document at rank a (score sa,
       ea = exp(sa - max s), discount da) with the documents j0 <= j < j1 of one other
       label (their scores s, e = exp(s - max s), discounts d; all of a lower rank
       than a), w = |gain difference| / ideal DCG. Z = w (da - d[j]); with q =
       q_add + q_mul |sa - s[j]| (0.01 + |d| under the normalisation, else 1),
       rho = e_worse / (ea + e[j]): Z rho / q and Z rho (1 - rho) / q go to the
       other documents' lam and hh; their sums to *sz, *sh. One division per pair,
       vectorised (a 64-bit counter: under -fwrapv, Python's flag, GCC does not
       vectorise a loop over an int). */
    static void gbt_ndcg_block(bool a_better, std::ptrdiff_t j0, std::ptrdiff_t j1,
                               const double* s, const double* e, const double* d,
                               double sa, double ea, double da, double w, double q_add,
                               double q_mul, double* lam, double* hh, double* sz, double* sh) {
        double tz = 0.0, th = 0.0;
        if (a_better) {
            #pragma omp simd reduction(+:tz, th)
            for (std::ptrdiff_t j = j0; j < j1; ++j) {
                const double z = w * (da - d[j]);
                const double q = q_add + q_mul * std::fabs(sa - s[j]);
                const double r = 1.0 / ((ea + e[j]) * q);
                const double zr = z * e[j] * r;
                const double zrr = zr * (ea * q * r);
                lam[j] += zr;
                hh[j] += zrr;
                tz += zr;
                th += zrr;
            }
        } else {
            #pragma omp simd reduction(+:tz, th)
            for (std::ptrdiff_t j = j0; j < j1; ++j) {
                const double z = w * (da - d[j]);
                const double q = q_add + q_mul * std::fabs(sa - s[j]);
                const double r = 1.0 / ((ea + e[j]) * q);
                const double zr = z * ea * r;
                const double zrr = zr * (e[j] * q * r);
                lam[j] -= zr;
                hh[j] += zrr;
                tz += zr;
                th += zrr;
            }
        }
        *sz = tz;
        *sh = th;
    }
    /* LambdaMART's pairs (a, b), a < top, a < b < n, of one group whose labels are
       integers 0..31 (label[p], count[v]), in rank order p: ss the scores, es =
       exp(s - max s) with es[top - 1] > 1e-250 (no denominator vanishes), disc the
       discounts, gain_of the gain of each label. The documents are laid out by label
       (then rank), so that the pairs of a with each other label are one contiguous
       loop and pairs of equal labels (Z = 0) are skipped. Writes lam and hh in rank
       order and returns the sum of 2 Z rho. Work arrays: 5 n doubles, 2 n + 64 ints. */
    static double gbt_ndcg_pairs(int n, int top, const int* label, const int* count,
                                 const double* ss, const double* es, const double* disc,
                                 const double* gain_of, double inv_ideal, bool score_norm,
                                 double* lam, double* hh, double* work, int* iwork) {
        double* s_l = work;
        double* e_l = work + n;
        double* d_l = work + 2 * n;
        double* lam_l = work + 3 * n;
        double* hh_l = work + 4 * n;
        int* at = iwork;              /* at[p]: where rank p is in the label layout */
        int* first = iwork + n;       /* first[v]: next document of label v not yet passed */
        int* end = iwork + n + 32;    /* end[v]: the end of label v's block */
        int used[32], n_used = 0;
        int pos = 0;
        for (int v = 31; v >= 0; --v) {
            first[v] = pos;
            pos += count[v];
            end[v] = pos;
            if (count[v] > 0) used[n_used++] = v;
        }
        for (int p = 0; p < n; ++p) {
            const int j = first[label[p]]++;
            at[p] = j;
            s_l[j] = ss[p];
            e_l[j] = es[p];
            d_l[j] = disc[p];
            lam_l[j] = 0.0;
            hh_l[j] = 0.0;
        }
        for (int u = 0; u < n_used; ++u) first[used[u]] = end[used[u]] - count[used[u]];
        const double q_add = score_norm ? 0.01 : 1.0, q_mul = score_norm ? 1.0 : 0.0;
        double total = 0.0;
        for (int a = 0; a < top; ++a) {
            const int va = label[a], ja = at[a];
            ++first[va];              /* the documents of a's label below it follow it */
            double la = 0.0, ha = 0.0, sz, sh;
            for (int u = 0; u < n_used; ++u) {
                const int v = used[u];
                if (v == va || first[v] == end[v]) continue;
                const double w = std::fabs(gain_of[va] - gain_of[v]) * inv_ideal;
                gbt_ndcg_block(va > v, first[v], end[v], s_l, e_l, d_l, ss[a], es[a],
                               disc[a], w, q_add, q_mul, lam_l, hh_l, &sz, &sh);
                la += va > v ? sz : -sz;
                ha += sh;
                total += 2.0 * sz;
            }
            lam_l[ja] -= la;
            hh_l[ja] += ha;
        }
        for (int p = 0; p < n; ++p) {
            lam[p] = lam_l[at[p]];
            hh[p] = hh_l[at[p]];
        }
        return total;
    }
    """
    void gbt_argsort_desc(const double* key, int* idx, int n) noexcept nogil
    void gbt_resort_desc(const double* key, int* idx, double* ks, int n, long budget) noexcept nogil
    double gbt_top_dcg(const double* gain, double* tmp, int n, int k,
                       const double* disc) noexcept nogil
    bint gbt_label_counts(const double* y, int n, int* count) noexcept nogil
    double gbt_top_dcg_counts(const int* count, int k, const double* gain_of,
                              const double* disc) noexcept nogil
    double gbt_ndcg_pairs(int n, int top, const int* label, const int* count,
                          const double* ss, const double* es, const double* disc,
                          const double* gain_of, double inv_ideal, bint score_norm,
                          double* lam, double* hh, double* work, int* iwork) noexcept nogil

cdef enum:
    KIND_PAIRWISE = 0
    KIND_NDCG = 1
    KIND_MAP = 2
    N_BUFFERS = 13
    N_IBUFFERS = 6

KINDS = {"pairwise": KIND_PAIRWISE, "ndcg": KIND_NDCG, "map": KIND_MAP}


cdef inline double _pair_weight(int kind, int a, int b, const double* ys, const double* gs,
                                double inv_ideal, const double* hits,
                                const double* inv_rank_sum, const double* disc) noexcept nogil:
    """|delta metric| of swapping the documents at ranks a < b (arrays in rank order)."""
    cdef double d, between
    cdef bint rel_a
    if kind == KIND_NDCG:
        return fabs(gs[a] - gs[b]) * (disc[a] - disc[b]) * inv_ideal
    if kind == KIND_MAP:
        rel_a = ys[a] > 0
        if rel_a == (ys[b] > 0):
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
    """Accumulate the pair (hi better than lo, ranks) with weight z; returns 2 z rho.

    ``ex[p] = exp(s_p - max s)`` turns ``rho = 1 / (1 + exp(s_hi - s_lo))`` into a
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


cdef inline void _rank(const double* s, int n, int* order, int* by_score, double* ss,
                       int* mark) noexcept nogil:
    """by_score = the documents by score (descending, ties by row order), ss their scores.

    ``order`` (or NULL): the group's ranking of the last call, the starting point of an
    insertion sort (any content: what is not a permutation of 0..n-1 is ignored); it
    gets the new ranking.
    """
    cdef int p, i
    cdef bint valid = order != NULL
    if valid:
        for i in range(n):
            mark[i] = 0
        for p in range(n):
            i = order[p]
            if i < 0 or i >= n or mark[i]:
                valid = False
                break
            mark[i] = 1
            by_score[p] = i
    if valid:
        gbt_resort_desc(s, by_score, ss, n, 16 * <long>n)
    else:
        gbt_argsort_desc(s, by_score, n)
        for p in range(n):
            ss[p] = s[by_score[p]]
    if order != NULL:
        for p in range(n):
            order[p] = by_score[p]


cdef bint _group_grad(const double* y, const double* s, int n, Py_ssize_t group,
                      int kind, int truncation, bint exp_gain, bint norm, int n_pair,
                      uint64_t seed, const double* disc, const double* gain_of, int* order,
                      double* buf, int* ibuf) noexcept nogil:
    """One group's gradients (buf[0:n]) and hessians (buf[n:2n]) before its weight, in rank
    order: position p is the document ibuf[p]. False when the group has no pair (all zero,
    buffers not filled). ``gain_of[v]``: the gain of label v = 0..31."""
    cdef double* lam = buf
    cdef double* hh = buf + n
    cdef double* gs = buf + 2 * n
    cdef double* hits = buf + 3 * n
    cdef double* inv_rank_sum = buf + 4 * n
    cdef double* ss = buf + 5 * n
    cdef double* es = buf + 6 * n
    cdef double* ys = buf + 7 * n
    cdef int* by_score = ibuf
    cdef int* rank = ibuf + n
    cdef int* by_label = ibuf + 2 * n
    cdef int* tie_lo = ibuf + 3 * n
    cdef int* label = ibuf + 4 * n
    cdef int count[32]
    cdef int a, b, i, j, p, q, t, top, n_other, lo, hi, k
    cdef double inv_ideal = 1.0, total = 0.0, acc, count_rel, factor, idcg
    cdef bint score_norm, small_labels = False
    cdef uint64_t state, r
    if n < 2:
        return False
    for i in range(1, n):
        if y[i] != y[0]:
            break
    else:
        return False   # all labels tie: no pairs
    _rank(s, n, order, by_score, ss, rank)
    for p in range(n):
        lam[p] = 0.0
        hh[p] = 0.0
        ys[p] = y[by_score[p]]
        es[p] = exp(ss[p] - ss[0])
    score_norm = norm and ss[0] != ss[n - 1]
    top = min(truncation, n - 1)
    if kind == KIND_NDCG:
        small_labels = gbt_label_counts(y, n, count)
        k = min(truncation, n)
        if small_labels:
            for p in range(n):
                label[p] = <int>ys[p]
                gs[p] = gain_of[label[p]]
            idcg = gbt_top_dcg_counts(count, k, gain_of, disc)
        else:
            for p in range(n):
                gs[p] = exp2(ys[p]) - 1.0 if exp_gain else ys[p]
            idcg = gbt_top_dcg(gs, hits, n, k, disc)
        inv_ideal = 1.0 / idcg
    elif kind == KIND_MAP:
        count_rel = 0.0
        acc = 0.0
        for p in range(n):
            if ys[p] > 0:
                count_rel = count_rel + 1.0
                acc = acc + 1.0 / (p + 1.0)
            hits[p] = count_rel
            inv_rank_sum[p] = acc
        inv_ideal = 1.0 / count_rel

    if n_pair <= 0 and small_labels and es[top - 1] > 1e-250:
        total = gbt_ndcg_pairs(n, top, label, count, ss, es, disc, gain_of, inv_ideal,
                               score_norm, lam, hh, buf + 8 * n, ibuf + 5 * n)
    elif n_pair <= 0:
        for a in range(top):
            for b in range(a + 1, n):
                if ys[a] == ys[b]:
                    continue
                k = a if ys[a] > ys[b] else b   # (the pair's higher label first)
                total = total + _add_pair(k, a + b - k, _pair_weight(
                    kind, a, b, ys, gs, inv_ideal, hits, inv_rank_sum, disc),
                    ss, es, score_norm, lam, hh)
    else:
        for p in range(n):
            rank[by_score[p]] = p
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
                    r = splitmix64(state) % <uint64_t>n_other
                    state = state + <uint64_t>0x9E3779B97F4A7C15ULL
                    j = by_label[<int>r if <int>r < lo else <int>r + (hi - lo)]
                    a = min(rank[i], rank[j])
                    b = max(rank[i], rank[j])
                    k = rank[i] if y[i] > y[j] else rank[j]   # (the higher label first)
                    total = total + _add_pair(k, a + b - k, _pair_weight(
                        kind, a, b, ys, gs, inv_ideal, hits, inv_rank_sum, disc),
                        ss, es, score_norm, lam, hh)
            p = hi
    if norm and total > 0:
        factor = log2(1.0 + total) / total
        for p in range(n):
            lam[p] = lam[p] * factor
            hh[p] = hh[p] * factor
    return True


def ranking_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                 bint weighted, const Py_ssize_t[::1] group_ptr, G_H_C[:, :] grad,
                 G_H_C[:, :] hess, int n_threads, int kind, int truncation, bint exp_gain,
                 bint norm, int n_pair, unsigned long long seed, int[::1] order=None,
                 const int64_t[::1] group_ids=None):
    """Write the ranking gradients and hessians of every group (see the module docstring).

    ``kind`` is ``KINDS[name]``; ``raw`` has one column; ``group_ptr`` has
    ``n_groups + 1`` increasing offsets from 0 to ``n_rows``. ``order`` (optional,
    int32, ``n_rows``): kept between calls, each group's ranking of the last call
    (start it with -1); it only makes the sorting faster, never changes a result.
    ``group_ids`` (optional, ``n_groups``): each group's number among all groups of
    the training data, which seeds its pair sampling (default: its index here), so
    that a part of the groups gets the draws the whole would give them.
    """
    cdef Py_ssize_t n_groups = group_ptr.shape[0] - 1
    cdef Py_ssize_t g, start, k, gid
    cdef int n, max_n = 1, p
    cdef double wi
    cdef double* buf = NULL
    cdef int* ibuf = NULL
    cdef double* disc = NULL
    cdef int* order_ptr = NULL
    cdef double gain_of[32]
    cdef bint has_order = order is not None
    if has_order and order.shape[0] != y.shape[0]:
        raise ValueError(f"order has {order.shape[0]} entries, expected {y.shape[0]}")
    cdef bint has_ids = group_ids is not None
    if has_ids and group_ids.shape[0] != n_groups:
        raise ValueError(f"group_ids has {group_ids.shape[0]} entries, expected {n_groups}")
    for g in range(n_groups):
        max_n = max(max_n, <int>(group_ptr[g + 1] - group_ptr[g]))
    disc = <double*>malloc(max_n * sizeof(double))
    if disc == NULL:
        raise MemoryError()
    for p in range(max_n):
        disc[p] = 1.0 / log2(p + 2.0)
    for p in range(32):
        gain_of[p] = exp2(p) - 1.0 if exp_gain else p
    if n_groups < 4 or group_ptr[n_groups] < 4096:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        buf = <double*>malloc(N_BUFFERS * max_n * sizeof(double))
        ibuf = <int*>malloc((N_IBUFFERS * max_n + 64) * sizeof(int))
        for g in prange(n_groups, schedule='dynamic', chunksize=16):
            start = group_ptr[g]
            n = <int>(group_ptr[g + 1] - start)
            order_ptr = &order[start] if has_order and n > 0 else NULL
            wi = w[start] if weighted else 1.0
            gid = group_ids[g] if has_ids else g
            if _group_grad(&y[start], &raw[start, 0], n, gid, kind, truncation, exp_gain, norm,
                           n_pair, <uint64_t>seed, disc, gain_of, order_ptr, buf, ibuf):
                for p in range(n):
                    k = start + ibuf[p]
                    grad[0, k] = <G_H_C>(wi * buf[p])
                    hess[0, k] = <G_H_C>(wi * buf[n + p])
            else:
                for k in range(start, start + n):
                    grad[0, k] = <G_H_C>(wi * 0.0)
                    hess[0, k] = <G_H_C>(wi * 0.0)
        free(buf)
        free(ibuf)
    free(disc)
