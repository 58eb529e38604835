"""Split finding over histograms (the partition of a node's rows by a split is in
_partition.pyx).

For every feature the value bins are scanned left to right; at each edge the
missing-value bin is tried on both sides (sparsity-aware split finding with a
learned default direction). Gains and weights are those of the regularised
objective (design.md): ``score(G, H) = -(2 G w + (H + lambda) w^2 + 2 alpha |w|)``
at ``w = weight(G, H)``, which is ``T_alpha(G)^2 / (H + lambda)`` when
``max_delta_step`` is 0.
"""
import numpy as np

from cython.parallel cimport prange
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.math cimport fabs, INFINITY
from libc.stdint cimport uint8_t, int64_t
from libcpp.vector cimport vector

from ._typedefs cimport SUM_C, hist_entry

cdef extern from "_unpack.h":
    void gbt_unpack_entries(const int64_t* packed, Py_ssize_t n, double g_step, double h_step,
                            double* out) noexcept nogil

cdef extern from *:
    """
    #include <math.h>
    #include "_clones.h"
    /* Gains of the candidates "bins 0..b left" for b < m, -inf where a child
       is too light or the gain is rounding noise (see _try); plain C so that
       the compiler vectorises it. */
    GBT_CLONES
    static void gbt_plain_gains(const double* __restrict cg, const double* __restrict ch,
                                int m, double G, double H, double lam, double mcw,
                                double parent, double rel_eps, double* __restrict gains) {
        for (int b = 0; b < m; ++b) {
            double gl = cg[b], hl = ch[b];
            double gr = G - gl, hr = H - hl;
            double sl = gl * gl / (hl + lam);
            double sr = gr * gr / (hr + lam);
            double gain = sl + sr - parent;
            int ok = (hl >= mcw) & (hr >= mcw) & (hl > 0.0) & (hr > 0.0)
                     & (gain > rel_eps * (sl + sr));
            gains[b] = ok ? gain : -INFINITY;
        }
    }
    /* One output's part of every candidate "bins 0..b left" of a tree whose
       leaves hold a vector, when alpha = 0 and max_delta_step = 0: the
       children's scores G^2 / (H + lambda) (0 for a child below min_child_weight)
       added to s[b], their hessians to hl_all[b] and hr_all[b]; the left child
       holds bins 0..b plus (gm, hm). (Divisions done for every b, then masked:
       the compiler vectorises that.) */
    GBT_CLONES
    static void gbt_output_scores(const double* __restrict cg, const double* __restrict ch,
                                  int m, double gm, double hm, double G, double H, double lam,
                                  double mcw, double* __restrict s, double* __restrict hl_all,
                                  double* __restrict hr_all) {
        for (int b = 0; b < m; ++b) {
            double gl = cg[b] + gm, hl = ch[b] + hm;
            double gr = G - gl, hr = H - hl;
            double sl = gl * gl / (hl + lam);
            double sr = gr * gr / (hr + lam);
            sl = ((hl > 0.0) & (hl >= mcw)) ? sl : 0.0;
            sr = ((hr > 0.0) & (hr >= mcw)) ? sr : 0.0;
            s[b] += sl + sr;
            hl_all[b] += hl;
            hr_all[b] += hr;
        }
    }
    /* The gains of those candidates over K outputs, -inf where a child's mean
       hessian is below min_child_weight or not > 0, or the gain is rounding
       noise. */
    GBT_CLONES
    static void gbt_output_gains(const double* __restrict s, const double* __restrict hl_all,
                                 const double* __restrict hr_all, int m, int K, double mcw,
                                 double parent, double rel_eps, double* __restrict gains) {
        for (int b = 0; b < m; ++b) {
            double gain = s[b] - parent;
            int ok = (hl_all[b] / K >= mcw) & (hr_all[b] / K >= mcw) & (hl_all[b] > 0.0)
                     & (hr_all[b] > 0.0) & (gain > rel_eps * s[b]);
            gains[b] = ok ? gain : -INFINITY;
        }
    }
    /* The first b with the largest gains[b] (no NaN among them), or -1 when
       they are all -inf: the largest value by a vector reduction (a maximum
       does not depend on the order), then a search for its first place. */
    GBT_CLONES
    static int gbt_first_max(const double* __restrict gains, int m) {
        double best = -INFINITY;
        #pragma omp simd reduction(max:best)
        for (int b = 0; b < m; ++b)
            best = gains[b] > best ? gains[b] : best;
        if (best == -INFINITY)
            return -1;
        for (int b = 0; b < m; ++b)
            if (gains[b] == best)
                return b;
        return -1;
    }
    """
    void gbt_output_scores(const double* cg, const double* ch, int m, double gm, double hm,
                           double G, double H, double lam, double mcw, double* s,
                           double* hl_all, double* hr_all) noexcept nogil
    void gbt_output_gains(const double* s, const double* hl_all, const double* hr_all, int m,
                          int K, double mcw, double parent, double rel_eps,
                          double* gains) noexcept nogil
    void gbt_plain_gains(const double* cg, const double* ch, int m, double G, double H,
                         double lam, double mcw, double parent, double rel_eps,
                         double* gains) noexcept nogil
    int gbt_first_max(const double* gains, int m) noexcept nogil

cdef enum:
    # Features with at most this many value bins take the vectorised scan.
    MAX_FAST_BINS = 256

# A split must improve the objective by more than this fraction of the
# children's scores: rejects splits that only rearrange rounding noise.
cdef double REL_EPS = 1e-10


cdef inline void _no_split(split_info* best) noexcept nogil:
    best.gain = -INFINITY
    best.feature = -1
    best.bin = 0
    best.default_left = 0
    best.sum_g_left = 0.0
    best.sum_h_left = 0.0
    best.n_left = 0


cdef inline void _keep(split_info* best, double gain, int f, int b,
                       unsigned char default_left, double gl, double hl) noexcept nogil:
    best.gain = gain
    best.feature = f
    best.bin = b
    best.default_left = default_left
    best.sum_g_left = gl
    best.sum_h_left = hl


cdef inline void _try(split_info* best, int f, int b, unsigned char default_left,
                      double gl, double hl, double G, double H, double parent_score,
                      const split_params* p) noexcept nogil:
    cdef double gr = G - gl, hr = H - hl, sl, sr, gain
    if hl < p.min_child_weight or hr < p.min_child_weight or hl <= 0.0 or hr <= 0.0:
        return
    sl = score(gl, hl, p)
    sr = score(gr, hr, p)
    gain = sl + sr - parent_score
    if gain > best.gain and gain > REL_EPS * (sl + sr):
        _keep(best, gain, f, b, default_left, gl, hl)


cdef split_info _scan_feature(const hist_entry* h, int f, int nb, double G, double H,
                              double parent_score, const split_params* p) noexcept nogil:
    cdef split_info best
    cdef double gm = h[nb].sum_g, hm = h[nb].sum_h
    cdef bint has_missing = hm != 0.0 or gm != 0.0
    _no_split(&best)
    if (p.plain_scan and not has_missing and p.reg_alpha == 0.0 and p.max_delta_step <= 0.0
            and nb <= MAX_FAST_BINS):
        _scan_plain(&best, h, f, nb, G, H, parent_score, p)
    else:
        _scan_general(&best, h, f, nb, G, H, parent_score, p, gm, hm, has_missing)
    if best.feature >= 0 and not has_missing:
        # No missing value reached this node: send future ones to the heavier child.
        best.default_left = best.sum_h_left >= H - best.sum_h_left
    return best


cdef inline void _scan_plain(split_info* best, const hist_entry* h, int f, int nb,
                             double G, double H, double parent_score,
                             const split_params* p) noexcept nogil:
    """``_scan_general`` for a feature without missing rows when alpha = 0 and
    max_delta_step = 0, where the score is ``G^2 / (H + lambda)``: the same
    arithmetic, laid out so that the compiler vectorises the gains."""
    cdef double cg[MAX_FAST_BINS]
    cdef double ch[MAX_FAST_BINS]
    cdef double gains[MAX_FAST_BINS]
    cdef double gl = 0.0, hl = 0.0
    cdef int b, m = nb - 1, best_b
    for b in range(m):
        gl += h[b].sum_g
        hl += h[b].sum_h
        cg[b] = gl
        ch[b] = hl
    gbt_plain_gains(cg, ch, m, G, H, p.reg_lambda, p.min_child_weight, parent_score,
                    REL_EPS, gains)
    best_b = gbt_first_max(gains, m)
    if best_b >= 0:
        best.gain = gains[best_b]
        best.feature = f
        best.bin = best_b
        best.default_left = 0
        best.sum_g_left = cg[best_b]
        best.sum_h_left = ch[best_b]


cdef inline void _scan_general(split_info* best, const hist_entry* h, int f, int nb,
                               double G, double H, double parent_score,
                               const split_params* p, double gm, double hm,
                               bint has_missing) noexcept nogil:
    cdef double gl = 0.0, hl = 0.0
    cdef int b
    for b in range(nb):
        gl += h[b].sum_g
        hl += h[b].sum_h
        if b < nb - 1:
            _try(best, f, b, 0, gl, hl, G, H, parent_score, p)
            if has_missing:
                _try(best, f, b, 1, gl + gm, hl + hm, G, H, parent_score, p)
        elif has_missing:
            # every non-missing row left, the missing ones right
            _try(best, f, b, 0, gl, hl, G, H, parent_score, p)


cdef double bounded_weight(SUM_C sum_g, SUM_C sum_h, const split_params* p,
                           double lower, double upper) noexcept nogil:
    """``weight`` clipped to the node's monotone-constraint bounds."""
    cdef double w = weight(sum_g, sum_h, p)
    if w < lower:
        return lower
    if w > upper:
        return upper
    return w


cdef inline double _score_given_weight(double G, double H, double w,
                                       const split_params* p) noexcept nogil:
    if H <= 0.0 or H < p.min_child_weight:
        return 0.0
    return -(2.0 * G * w + (H + p.reg_lambda) * w * w + 2.0 * p.reg_alpha * fabs(w))


cdef inline void _try_bounded(split_info* best, int f, int b, unsigned char default_left,
                              double gl, double hl, double G, double H, double parent_score,
                              const split_params* p, int direction, double lower,
                              double upper) noexcept nogil:
    # XGBoost's monotone rule: children weights clipped to the node's bounds, the split
    # refused when they are out of order, the gain taken at the clipped weights
    cdef double gr = G - gl, hr = H - hl, wl, wr, sl, sr, gain
    if hl < p.min_child_weight or hr < p.min_child_weight or hl <= 0.0 or hr <= 0.0:
        return
    wl = bounded_weight(gl, hl, p, lower, upper)
    wr = bounded_weight(gr, hr, p, lower, upper)
    if (direction > 0 and wl > wr) or (direction < 0 and wl < wr):
        return
    sl = _score_given_weight(gl, hl, wl, p)
    sr = _score_given_weight(gr, hr, wr, p)
    gain = sl + sr - parent_score
    if gain > best.gain and gain > REL_EPS * fabs(sl + sr):
        _keep(best, gain, f, b, default_left, gl, hl)


cdef split_info _scan_feature_bounded(const hist_entry* h, int f, int nb, double G, double H,
                                      double parent_score, const split_params* p,
                                      int direction, double lower, double upper) noexcept nogil:
    """``_scan_feature`` under a monotone constraint and / or weight bounds."""
    cdef split_info best
    cdef double gl = 0.0, hl = 0.0
    cdef double gm = h[nb].sum_g, hm = h[nb].sum_h
    cdef bint has_missing = hm != 0.0 or gm != 0.0
    cdef int b
    _no_split(&best)
    for b in range(nb):
        gl += h[b].sum_g
        hl += h[b].sum_h
        if b < nb - 1:
            _try_bounded(&best, f, b, 0, gl, hl, G, H, parent_score, p, direction, lower, upper)
            if has_missing:
                _try_bounded(&best, f, b, 1, gl + gm, hl + hm, G, H, parent_score, p,
                             direction, lower, upper)
        elif has_missing:
            _try_bounded(&best, f, b, 0, gl, hl, G, H, parent_score, p, direction, lower, upper)
    if best.feature >= 0 and not has_missing:
        best.default_left = best.sum_h_left >= H - best.sum_h_left
    return best



cdef split_info _scan_packed(const int64_t* packed, const double* steps, int f, int nb,
                             double G, double H, double parent_score, double bounded_parent,
                             const split_params* p, bint constrained, int direction,
                             double lower, double upper) noexcept nogil:
    """One feature of a packed histogram: its nb + 1 entries (at most 256: bins are
    uint8) unpacked into this call's own buffer, then the usual scan."""
    cdef hist_entry local[256]
    gbt_unpack_entries(packed, nb + 1, steps[0], steps[1], &local[0].sum_g)
    if constrained:
        return _scan_feature_bounded(local, f, nb, G, H, bounded_parent, p, direction,
                                     lower, upper)
    return _scan_feature(local, f, nb, G, H, parent_score, p)


cdef inline split_info _scan_at(const hist_entry* hist, const int* n_bins,
                                const int* bin_offsets, int f, SUM_C sum_g, SUM_C sum_h,
                                const split_params* p, const unsigned char* allowed,
                                const signed char* monotone, double lower, double upper,
                                const int64_t* packed, const double* steps, bint bounded,
                                double parent_score, double bounded_parent) noexcept nogil:
    """Feature f's best split, for ``find_best_split``."""
    cdef split_info none
    if allowed != NULL and not allowed[f]:
        none.feature = -1
        return none
    if packed != NULL:
        return _scan_packed(
            packed + bin_offsets[f], steps, f, n_bins[f], sum_g, sum_h, parent_score,
            bounded_parent, p, bounded or (monotone != NULL and monotone[f] != 0),
            monotone[f] if monotone != NULL else 0, lower, upper)
    if bounded or (monotone != NULL and monotone[f] != 0):
        return _scan_feature_bounded(
            hist + bin_offsets[f], f, n_bins[f], sum_g, sum_h, bounded_parent, p,
            monotone[f] if monotone != NULL else 0, lower, upper)
    return _scan_feature(hist + bin_offsets[f], f, n_bins[f], sum_g, sum_h, parent_score, p)


cdef split_info find_best_split(const hist_entry* hist, const int* n_bins,
                                const int* bin_offsets, int n_features,
                                SUM_C sum_g, SUM_C sum_h, const split_params* p,
                                split_info* per_feature, int n_threads,
                                const unsigned char* allowed=NULL,
                                const signed char* monotone=NULL, double lower=-INFINITY,
                                double upper=INFINITY, const int64_t* packed=NULL,
                                const double* steps=NULL) noexcept nogil:
    """Best split of a node over all features (ties: lowest feature, then lowest bin).

    A split is valid when both children have ``H >= min_child_weight`` and
    ``H > 0`` and its gain is ``>= gamma`` and > 0. ``per_feature`` is a scratch
    array of n_features entries. ``allowed`` (if not NULL) masks the features
    the node may split on (column sampling, interaction constraints).
    ``monotone`` (per feature -1 / 0 / +1, or NULL) and the node's weight
    bounds ``[lower, upper]`` switch to the constrained scan where they apply.
    With ``packed`` (quantised gradients) the histogram is the packed int64 one
    and ``hist`` is not read: each feature's entries are unpacked with ``steps``
    (``gbt_unpack_entries``) into a buffer of its own just before its scan.
    Returns ``feature == -1`` when nothing is valid.
    """
    cdef bint bounded = lower > -INFINITY or upper < INFINITY
    cdef double parent_score = score(sum_g, sum_h, p)
    cdef double bounded_parent = _score_given_weight(
        sum_g, sum_h, bounded_weight(sum_g, sum_h, p, lower, upper), p)
    cdef int f, best_f = -1
    cdef split_info best
    if bin_offsets[n_features] < MIN_PARALLEL_ENTRIES:
        n_threads = 1
    if n_threads == 1:
        # (no thread team: the caller may be one thread of its own team)
        for f in range(n_features):
            per_feature[f] = _scan_at(hist, n_bins, bin_offsets, f, sum_g, sum_h, p, allowed,
                                      monotone, lower, upper, packed, steps, bounded,
                                      parent_score, bounded_parent)
    else:
        for f in prange(n_features, schedule='static', num_threads=n_threads, nogil=True):
            per_feature[f] = _scan_at(hist, n_bins, bin_offsets, f, sum_g, sum_h, p, allowed,
                                      monotone, lower, upper, packed, steps, bounded,
                                      parent_score, bounded_parent)
    for f in range(n_features):
        if per_feature[f].feature >= 0 and per_feature[f].gain >= p.gamma:
            if best_f < 0 or per_feature[f].gain > per_feature[best_f].gain:
                best_f = f
    if best_f < 0:
        best.feature = -1
        best.gain = 0.0
        return best
    return per_feature[best_f]


cdef void _scan_outputs(const double* hist, Py_ssize_t stride, int K, int off, int nb,
                        const double* sums, double parent_score, const split_params* p,
                        double* best_gain, int* best_bin,
                        unsigned char* best_left) noexcept nogil:
    """One feature's best split for ``K`` outputs at once: output k's entry e is
    ``hist[k * stride + 2 * e]`` (g) and ``+ 1`` (h), its node sums
    ``sums[2 k]``, ``sums[2 k + 1]``. The gain is the sum of the outputs' gains
    (a tree whose leaves hold a vector), valid when both children's hessians,
    averaged over the outputs, are > 0 and >= min_child_weight (XGBoost's rule
    for such trees). Every candidate's score is summed over the outputs in
    their order, output by output over all the bins (so that the compiler
    vectorises over the bins); with one output this is ``_scan_feature``'s
    choice. ``best_left`` is 2 when no missing row reached the node."""
    # per candidate "bins 0..b left": the children's scores summed over the
    # outputs and the hessians, missing rows right (0) or left (1)
    cdef double s0[MAX_FAST_BINS]
    cdef double l0[MAX_FAST_BINS]
    cdef double r0[MAX_FAST_BINS]
    cdef double s1[MAX_FAST_BINS]
    cdef double l1[MAX_FAST_BINS]
    cdef double r1[MAX_FAST_BINS]
    cdef double cg[MAX_FAST_BINS]
    cdef double ch[MAX_FAST_BINS]
    cdef bint has_missing = False
    cdef bint plain = p.reg_alpha == 0.0 and p.max_delta_step <= 0.0
    cdef double gl, hl, gm, hm
    cdef int b, k
    cdef const double* e
    # (cg and ch hold the running sums of one output, then the candidates' gains)
    best_gain[0] = -INFINITY
    best_bin[0] = -1
    best_left[0] = 0
    for k in range(K):
        e = hist + k * stride + 2 * (off + nb)
        has_missing = has_missing or e[0] != 0.0 or e[1] != 0.0
    for b in range(nb):
        s0[b] = 0.0
        l0[b] = 0.0
        r0[b] = 0.0
        s1[b] = 0.0
        l1[b] = 0.0
        r1[b] = 0.0
    for k in range(K):
        e = hist + k * stride + 2 * off
        gl = 0.0
        hl = 0.0
        for b in range(nb):
            gl += e[2 * b]
            hl += e[2 * b + 1]
            cg[b] = gl
            ch[b] = hl
        gm = e[2 * nb]
        hm = e[2 * nb + 1]
        _output_scores(cg, ch, nb, 0.0, 0.0, sums[2 * k], sums[2 * k + 1], p, plain, s0, l0, r0)
        if has_missing:
            _output_scores(cg, ch, nb, gm, hm, sums[2 * k], sums[2 * k + 1], p, plain, s1, l1,
                           r1)
    # the first best candidate in the order (bin, missing right before left)
    cdef int b0, b1, m0 = nb if has_missing else nb - 1
    gbt_output_gains(s0, l0, r0, m0, K, p.min_child_weight, parent_score, REL_EPS, cg)
    b0 = gbt_first_max(cg, m0)
    b1 = -1
    if has_missing:
        gbt_output_gains(s1, l1, r1, nb - 1, K, p.min_child_weight, parent_score, REL_EPS, ch)
        b1 = gbt_first_max(ch, nb - 1)
    if b1 >= 0 and (b0 < 0 or ch[b1] > cg[b0] or (ch[b1] == cg[b0] and b1 < b0)):
        best_gain[0] = ch[b1]
        best_bin[0] = b1
        best_left[0] = 1
    elif b0 >= 0:
        best_gain[0] = cg[b0]
        best_bin[0] = b0
        best_left[0] = 0 if has_missing else 2


cdef inline void _output_scores(const double* cg, const double* ch, int m, double gm, double hm,
                                double G, double H, const split_params* p, bint plain,
                                double* s, double* hl_all, double* hr_all) noexcept nogil:
    """One output's part of every candidate: its children's scores added to ``s``,
    their hessians to ``hl_all`` and ``hr_all`` (the left child: bins 0..b plus
    (gm, hm))."""
    cdef double gl, hl
    cdef int b
    if plain:
        gbt_output_scores(cg, ch, m, gm, hm, G, H, p.reg_lambda, p.min_child_weight, s,
                          hl_all, hr_all)
        return
    for b in range(m):
        gl = cg[b] + gm
        hl = ch[b] + hm
        s[b] += score(gl, hl, p) + score(G - gl, H - hl, p)
        hl_all[b] += hl
        hr_all[b] += H - hl


def find_best_split_outputs(const double[:, :, ::1] hist, const int[::1] n_bins,
                            const int[::1] bin_offsets, const double[:, ::1] sums,
                            double reg_lambda=1.0, double reg_alpha=0.0,
                            double min_child_weight=1.0, double max_delta_step=0.0,
                            double gamma=0.0, const unsigned char[::1] allowed=None,
                            int n_threads=1):
    """Best split of a node for several outputs at once (a tree whose leaves hold a
    vector): ``hist`` is (K, n_entries, 2), one histogram per output, ``sums``
    (K, 2) the node's (G, H) per output. The gain of a split is the sum of the
    outputs' gains (``_scan_outputs``); ties go to the lowest feature, then the
    lowest bin; the gain must be >= gamma. ``allowed`` (uint8 per feature, or
    None) masks the features the node may split on.

    Returns None when nothing is valid, else (gain, feature, bin, default_left,
    left_sums, gains) with ``left_sums`` the left child's (K, 2) sums, missing
    rows included when default_left, and ``gains`` each output's part of the
    gain.
    """
    cdef int K = hist.shape[0], n_features = n_bins.shape[0], f, k, b, best_f = -1
    cdef Py_ssize_t n_entries = hist.shape[1], off
    if (K < 1 or sums.shape[0] != K or bin_offsets.shape[0] != n_features + 1
            or n_entries != bin_offsets[n_features] or hist.shape[2] != 2 or sums.shape[1] != 2
            or (allowed is not None and allowed.shape[0] != n_features)):
        raise ValueError("hist, sums, n_bins, bin_offsets and allowed do not match")
    for f in range(n_features):
        if (n_bins[f] < 1 or n_bins[f] > MAX_FAST_BINS
                or bin_offsets[f + 1] - bin_offsets[f] != n_bins[f] + 1):
            raise ValueError(f"every feature needs 1 to {MAX_FAST_BINS} value bins and a "
                             f"missing bin, laid out by bin_offsets")
    cdef split_params p = make_split_params(reg_lambda, reg_alpha, min_child_weight,
                                            max_delta_step, gamma, False)
    cdef double parent_score = 0.0
    for k in range(K):
        parent_score += score(sums[k, 0], sums[k, 1], &p)
    cdef vector[double] gains = vector[double](n_features, -INFINITY)
    cdef vector[int] bins = vector[int](n_features, -1)
    cdef vector[uint8_t] lefts = vector[uint8_t](n_features, 0)
    cdef const double* h_ptr = &hist[0, 0, 0] if n_entries > 0 else NULL
    cdef const double* s_ptr = &sums[0, 0]
    cdef const unsigned char* allowed_ptr = &allowed[0] if allowed is not None else NULL
    if n_entries * K < MIN_PARALLEL_ENTRIES:
        n_threads = 1
    with nogil:
        if n_threads == 1:
            for f in range(n_features):
                if allowed_ptr == NULL or allowed_ptr[f]:
                    _scan_outputs(h_ptr, 2 * n_entries, K, bin_offsets[f], n_bins[f], s_ptr,
                                  parent_score, &p, &gains[f], &bins[f], &lefts[f])
        else:
            for f in prange(n_features, schedule='static', num_threads=n_threads):
                if allowed_ptr == NULL or allowed_ptr[f]:
                    _scan_outputs(h_ptr, 2 * n_entries, K, bin_offsets[f], n_bins[f], s_ptr,
                                  parent_score, &p, &gains[f], &bins[f], &lefts[f])
        for f in range(n_features):   # the first of the largest
            if bins[f] >= 0 and gains[f] >= gamma and (best_f < 0 or gains[f] > gains[best_f]):
                best_f = f
    if best_f < 0:
        return None
    f, b, off = best_f, bins[best_f], bin_offsets[best_f]
    left = np.zeros((K, 2))
    per_output = np.empty(K)
    cdef double[:, ::1] left_v = left
    cdef double[::1] per_v = per_output
    cdef double h_left = 0.0, h_all = 0.0
    for k in range(K):
        for b in range(bins[f] + 1):    # the scan's running sums
            left_v[k, 0] += hist[k, off + b, 0]
            left_v[k, 1] += hist[k, off + b, 1]
        if lefts[f] == 1:
            left_v[k, 0] += hist[k, off + n_bins[f], 0]
            left_v[k, 1] += hist[k, off + n_bins[f], 1]
        h_left += left_v[k, 1]
        h_all += sums[k, 1]
        per_v[k] = (score(left_v[k, 0], left_v[k, 1], &p)
                    + score(sums[k, 0] - left_v[k, 0], sums[k, 1] - left_v[k, 1], &p)
                    - score(sums[k, 0], sums[k, 1], &p))
    if lefts[f] == 2:   # no missing rows: the heavier side
        lefts[f] = h_left >= h_all - h_left
    return gains[f], f, bins[f], bool(lefts[f]), left, per_output


# ---------------------------------------------------------------- Python entry points
# For the growers written in Python, the level-wise fits, and the tests (against
# their NumPy twins in tests/_reference.py).

def py_find_best_split(const double[:, ::1] hist, const int[::1] n_bins,
                       const int[::1] bin_offsets, double sum_g, double sum_h,
                       double reg_lambda=1.0, double reg_alpha=0.0,
                       double min_child_weight=1.0, double max_delta_step=0.0,
                       double gamma=0.0, int n_threads=1, bint plain_scan=True,
                       const unsigned char[::1] allowed=None,
                       const signed char[::1] monotone=None, double lower=-INFINITY,
                       double upper=INFINITY):
    """Best split as a dict (feature -1 when none) for an (n_entries, 2) histogram;
    ``allowed``, ``monotone`` (one value per feature, or None), ``lower`` and
    ``upper``: as in ``find_best_split``."""
    cdef split_params p = make_split_params(reg_lambda, reg_alpha, min_child_weight,
                                            max_delta_step, gamma, plain_scan)
    cdef int n_features = n_bins.shape[0]
    if (bin_offsets.shape[0] != n_features + 1 or n_features == 0
            or hist.shape[0] != bin_offsets[n_features] or hist.shape[1] != 2
            or (allowed is not None and allowed.shape[0] != n_features)
            or (monotone is not None and monotone.shape[0] != n_features)):
        raise ValueError("hist, n_bins, bin_offsets, allowed and monotone do not match")
    cdef const unsigned char* allowed_ptr = &allowed[0] if allowed is not None else NULL
    cdef const signed char* monotone_ptr = &monotone[0] if monotone is not None else NULL
    cdef split_info* scratch = <split_info*> PyMem_Malloc(max(n_features, 1) * sizeof(split_info))
    cdef split_info s
    try:
        s = find_best_split(<const hist_entry*>&hist[0, 0], &n_bins[0], &bin_offsets[0],
                            n_features, sum_g, sum_h, &p, scratch, n_threads, allowed_ptr,
                            monotone_ptr, lower, upper)
    finally:
        PyMem_Free(scratch)
    return dict(gain=s.gain, feature=s.feature, bin=s.bin,
                default_left=bool(s.default_left),
                sum_g_left=s.sum_g_left, sum_h_left=s.sum_h_left) if s.feature >= 0 \
        else dict(gain=0.0, feature=-1)


def py_leaf_weight(double sum_g, double sum_h, double reg_lambda=1.0, double reg_alpha=0.0,
                   double min_child_weight=1.0, double max_delta_step=0.0):
    cdef split_params p = make_split_params(reg_lambda, reg_alpha, min_child_weight,
                                            max_delta_step, 0.0, True)
    return weight(sum_g, sum_h, &p)


def leaf_weights(const double[::1] sum_g, const double[::1] sum_h, double reg_lambda=1.0,
                 double reg_alpha=0.0, double min_child_weight=1.0, double max_delta_step=0.0):
    """``py_leaf_weight`` of every (sum_g[i], sum_h[i]), as a float64 array."""
    cdef split_params p = make_split_params(reg_lambda, reg_alpha, min_child_weight,
                                            max_delta_step, 0.0, True)
    cdef Py_ssize_t i, n = sum_g.shape[0]
    if sum_h.shape[0] != n:
        raise ValueError("sum_g and sum_h must have the same length")
    out = np.empty(n)
    cdef double[::1] out_v = out
    for i in range(n):
        out_v[i] = weight(sum_g[i], sum_h[i], &p)
    return out
