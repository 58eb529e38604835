from libc.math cimport fabs
from libc.stdint cimport int64_t

from ._typedefs cimport SUM_C, hist_entry

cdef enum:
    # Feature scans run in parallel only above this many histogram entries.
    MIN_PARALLEL_ENTRIES = 16384

cdef struct split_params:
    double reg_lambda
    double reg_alpha
    double min_child_weight
    double max_delta_step
    double gamma
    bint plain_scan     # the vectorised scan of features without missing rows (the
                        # tests switch it off to check it against the general scan)

cdef struct split_info:
    double gain          # score_left + score_right - score_parent (no 1/2, as XGBoost)
    int feature          # -1 when the node has no valid split
    int bin              # non-missing rows with bin <= bin go left
    unsigned char default_left
    SUM_C sum_g_left     # left child's sums, missing rows included when default_left
    SUM_C sum_h_left
    Py_ssize_t n_left    # filled by the partition, not by the scan



cdef inline split_params make_split_params(double reg_lambda, double reg_alpha,
                                           double min_child_weight, double max_delta_step,
                                           double gamma, bint plain_scan) noexcept nogil:
    cdef split_params p
    p.reg_lambda = reg_lambda
    p.reg_alpha = reg_alpha
    p.min_child_weight = min_child_weight
    p.max_delta_step = max_delta_step
    p.gamma = gamma
    p.plain_scan = plain_scan
    return p


# The regularised objective, inline for the scans and growers of every module.
cdef inline double threshold_l1(double g, double alpha) noexcept nogil:
    if g > alpha:
        return g - alpha
    if g < -alpha:
        return g + alpha
    return 0.0


cdef inline double weight(SUM_C sum_g, SUM_C sum_h, const split_params* p) noexcept nogil:
    """Optimal weight ``-T_alpha(G) / (H + lambda)``, clipped to max_delta_step;
    0 below min_child_weight."""
    cdef double w
    if sum_h <= 0.0 or sum_h < p.min_child_weight:
        return 0.0
    w = -threshold_l1(sum_g, p.reg_alpha) / (sum_h + p.reg_lambda)
    if p.max_delta_step > 0.0:
        if w > p.max_delta_step:
            w = p.max_delta_step
        elif w < -p.max_delta_step:
            w = -p.max_delta_step
    return w


cdef inline double score(SUM_C sum_g, SUM_C sum_h, const split_params* p) noexcept nogil:
    """``-2 x`` the minimal regularised loss ``G w + (H + lambda) w^2 / 2 + alpha |w|``
    at ``w = weight(G, H)``: ``T_alpha(G)^2 / (H + lambda)`` without max_delta_step."""
    cdef double t, w
    if sum_h <= 0.0 or sum_h < p.min_child_weight:
        return 0.0
    if p.max_delta_step <= 0.0:
        t = threshold_l1(sum_g, p.reg_alpha)
        return t * t / (sum_h + p.reg_lambda)
    w = weight(sum_g, sum_h, p)
    return -(2.0 * sum_g * w + (sum_h + p.reg_lambda) * w * w + 2.0 * p.reg_alpha * fabs(w))

cdef split_info find_best_split(const hist_entry* hist, const int* n_bins,
                                const int* bin_offsets, int n_features,
                                SUM_C sum_g, SUM_C sum_h, const split_params* p,
                                split_info* per_feature, int n_threads,
                                const unsigned char* allowed=*, const signed char* monotone=*,
                                double lower=*, double upper=*, const int64_t* packed=*,
                                const double* steps=*) noexcept nogil
cdef double bounded_weight(SUM_C sum_g, SUM_C sum_h, const split_params* p,
                           double lower, double upper) noexcept nogil
