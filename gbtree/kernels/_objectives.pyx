"""Gradient and hessian kernels of the losses, ``prange`` over rows.

``raw`` is the (n_rows, n_outputs) raw prediction; gradients and hessians are
written into float32 arrays of shape (n_outputs, n_rows) of any strides: the
booster passes the two halves of one (n_outputs, n_rows, 2) array, so that each
tree reads its rows' (gradient, hessian) pairs in place. A sample weight
multiplies both.
"""
from cython.parallel cimport prange, threadid
from libc.math cimport exp

from ._typedefs cimport G_H_C

import numpy as np

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* GCC on x86-64 with glibc compiles the loops below twice more, for AVX-512
       and AVX2, and picks the clone once per process; the arithmetic is the same
       IEEE operations in every clone (no FMA contraction in ISO C++ mode).
       "no-trapping-math" lets GCC turn the clamps into vector selects (their
       results are the same; only floating-point traps, never enabled here,
       would differ): without it the AVX2 and SSE2 loops stay scalar. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    #define GBT_OBJ_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), \
                                          optimize("no-trapping-math")))
    #else
    #define GBT_OBJ_CLONES
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define GBT_ALWAYS_INLINE __attribute__((always_inline))
    #else
    #define GBT_ALWAYS_INLINE
    #endif

    /* exp(x) for |x| <= 708 (clamped there) with no branch and no call, so that a
       loop of it vectorises: x = k ln2 + r with |r| <= ln2 / 2 (Cody-Waite: ln2
       in two parts), exp(r) by its Taylor polynomial to degree 13 (remainder
       below 1e-17 relative), times 2^k built in the exponent bits. Within one
       unit in the last place of NumPy's exp (tests/test_objectives.py). */
    static inline GBT_ALWAYS_INLINE double gbt_exp(double x) {
        const double shifter = 6755399441055744.0;   /* 1.5 * 2^52: rounds to an integer */
        double t, k, r, p, scale;
        int64_t ti, si, ki;
        x = x < -708.0 ? -708.0 : x;
        x = x > 708.0 ? 708.0 : x;
        t = x * 1.4426950408889634 + shifter;
        k = t - shifter;
        r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
        p = 1.0 / 6227020800.0;
        p = p * r + 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        memcpy(&ti, &t, 8);
        memcpy(&si, &shifter, 8);
        ki = ti - si;                                 /* k as an integer */
        si = (ki + 1023) << 52;
        memcpy(&scale, &si, 8);
        return p * scale;
    }

    /* Binary log loss of rows lo..hi-1 into interleaved (gradient, hessian)
       float32 pairs gh[2 i], gh[2 i + 1]; raw is contiguous (one output); w may
       be NULL (no weights). */
    GBT_OBJ_CLONES
    static void gbt_logistic_pairs(const double* __restrict y, const double* __restrict raw,
                                   const double* __restrict w, float* __restrict gh,
                                   Py_ssize_t lo, Py_ssize_t hi, double min_hess) {
        Py_ssize_t i;
        if (w == NULL) {   /* two loops: a conditional load would not vectorise */
            for (i = lo; i < hi; i++) {
                double p = 1.0 / (1.0 + gbt_exp(-raw[i]));
                double h = p * (1.0 - p);
                h = h < min_hess ? min_hess : h;
                gh[2 * i] = (float)(p - y[i]);
                gh[2 * i + 1] = (float)h;
            }
            return;
        }
        for (i = lo; i < hi; i++) {
            double p = 1.0 / (1.0 + gbt_exp(-raw[i]));
            double h = p * (1.0 - p);
            h = h < min_hess ? min_hess : h;
            gh[2 * i] = (float)(w[i] * (p - y[i]));
            gh[2 * i + 1] = (float)(w[i] * h);
        }
    }

    /* Multinomial log loss of rows lo..hi-1 (at most GBT_SOFTMAX_ROWS) into the
       float32 pairs of K outputs, gh[2 (k n + i)] and gh[2 (k n + i) + 1]; raw is
       (n, K) contiguous, w may be NULL. The rows' scores are first copied class by
       class into e (K * GBT_SOFTMAX_ROWS values), so that every step below is a
       loop over rows that vectorises; each row's exps are summed in class order. */
    #define GBT_SOFTMAX_ROWS 64
    GBT_OBJ_CLONES
    static void gbt_softmax_pairs(const double* __restrict y, const double* __restrict raw,
                                  const double* __restrict w, float* __restrict gh,
                                  double* __restrict e, Py_ssize_t n, int K,
                                  Py_ssize_t lo, Py_ssize_t hi, double scale, double min_hess) {
        double m[GBT_SOFTMAX_ROWS], s[GBT_SOFTMAX_ROWS];
        const Py_ssize_t B = hi - lo;
        Py_ssize_t r;
        int k;
        for (r = 0; r < B; r++)
            for (k = 0; k < K; k++) e[k * GBT_SOFTMAX_ROWS + r] = raw[(lo + r) * K + k];
        for (r = 0; r < B; r++) { m[r] = e[r]; s[r] = 0.0; }
        for (k = 1; k < K; k++)
            for (r = 0; r < B; r++) {
                const double x = e[k * GBT_SOFTMAX_ROWS + r];
                m[r] = x > m[r] ? x : m[r];
            }
        for (k = 0; k < K; k++)
            for (r = 0; r < B; r++) {
                const double x = gbt_exp(e[k * GBT_SOFTMAX_ROWS + r] - m[r]);
                e[k * GBT_SOFTMAX_ROWS + r] = x;
                s[r] += x;
            }
        for (k = 0; k < K; k++) {
            float* out = gh + 2 * (k * n + lo);
            for (r = 0; r < B; r++) {
                const double p = e[k * GBT_SOFTMAX_ROWS + r] / s[r];
                const double wr = w == NULL ? 1.0 : w[lo + r];
                double h = scale * p * (1.0 - p);
                h = h < min_hess ? min_hess : h;
                out[2 * r] = (float)(wr * (p - ((int)y[lo + r] == k ? 1.0 : 0.0)));
                out[2 * r + 1] = (float)(wr * h);
            }
        }
    }
    """
    void gbt_softmax_pairs(const double* y, const double* raw, const double* w, float* gh,
                           double* e, Py_ssize_t n, int K, Py_ssize_t lo, Py_ssize_t hi,
                           double scale, double min_hess) noexcept nogil
    void gbt_logistic_pairs(const double* y, const double* raw, const double* w, float* gh,
                            Py_ssize_t lo, Py_ssize_t hi, double min_hess) noexcept nogil
    double gbt_exp(double x) noexcept nogil


# ---------------------------------------------------------------- for the tests only
# (the C-level functions above called from Python by tests/; gbtree itself does not)
def py_exp(const double[::1] x):
    """``gbt_exp`` of every value."""
    out = np.empty(x.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(x.shape[0]):
        o[i] = gbt_exp(x[i])
    return out

cdef enum:
    MIN_PARALLEL_ROWS = 32768
    # rows a task of the vectorised logistic loop
    LOGISTIC_BLOCK = 16384
    # rows a task of the vectorised softmax loop (its GBT_SOFTMAX_ROWS)
    SOFTMAX_ROWS = 64

cdef double MIN_HESS = 1e-16


def logistic_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                  bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """Binary log loss with y in {0, 1}: ``g = w (p - y)``, ``h = w p (1 - p)``,
    ``p = 1 / (1 + exp(-F))`` with ``gbt_exp`` (a vectorised loop when the
    gradients and hessians are interleaved pairs, as the booster passes them)."""
    cdef Py_ssize_t i, n = y.shape[0], c, n_blocks
    cdef double wi, p, h
    cdef float* gh
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    if (n > 0 and raw.shape[1] == 1
            and grad.strides[1] == 2 * sizeof(float) and hess.strides[1] == 2 * sizeof(float)
            and <char*>&hess[0, 0] == <char*>&grad[0, 0] + sizeof(float)):
        gh = <float*>&grad[0, 0]
        n_blocks = (n + LOGISTIC_BLOCK - 1) // LOGISTIC_BLOCK
        for c in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
            gbt_logistic_pairs(&y[0], &raw[0, 0], &w[0] if weighted else NULL, gh,
                               c * LOGISTIC_BLOCK, min(n, (c + 1) * LOGISTIC_BLOCK), MIN_HESS)
        return
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        p = 1.0 / (1.0 + gbt_exp(-raw[i, 0]))
        h = p * (1.0 - p)
        if h < MIN_HESS:
            h = MIN_HESS
        grad[0, i] = <G_H_C>(wi * (p - y[i]))
        hess[0, i] = <G_H_C>(wi * h)


def softmax_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                 bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """Multinomial log loss, y the class code in 0..K-1.

    ``g_k = w (p_k - [y = k])`` and ``h_k = w K/(K-1) p_k (1 - p_k)``: the
    diagonal hessian scaled by K/(K-1), Friedman's (2001) multiclass step;
    ``p = softmax(F)`` with ``gbt_exp`` (a vectorised loop when the gradients and
    hessians are the pairs of one (K, n, 2) array, as the booster passes them)."""
    cdef Py_ssize_t i, n = y.shape[0], c, n_blocks
    cdef int k, K = raw.shape[1], yi
    cdef double wi, m, s, p, h
    cdef double scale = K / (K - 1.0)
    cdef double[:, ::1] e
    if n * K < MIN_PARALLEL_ROWS:
        n_threads = 1
    if (n > 0 and grad.strides[1] == 2 * sizeof(float) and hess.strides[1] == 2 * sizeof(float)
            and grad.strides[0] == 2 * n * <Py_ssize_t>sizeof(float) and hess.strides[0] == grad.strides[0]
            and <char*>&hess[0, 0] == <char*>&grad[0, 0] + sizeof(float)):
        n_blocks = (n + SOFTMAX_ROWS - 1) // SOFTMAX_ROWS
        e = np.empty((n_threads, K * SOFTMAX_ROWS))
        for c in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
            gbt_softmax_pairs(&y[0], &raw[0, 0], &w[0] if weighted else NULL,
                              <float*>&grad[0, 0], &e[threadid(), 0], n, K, c * SOFTMAX_ROWS,
                              min(n, (c + 1) * SOFTMAX_ROWS), scale, MIN_HESS)
        return
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        yi = <int>y[i]
        m = raw[i, 0]
        for k in range(1, K):
            if raw[i, k] > m:
                m = raw[i, k]
        s = 0.0
        for k in range(K):
            s = s + gbt_exp(raw[i, k] - m)
        for k in range(K):
            p = gbt_exp(raw[i, k] - m) / s
            h = scale * p * (1.0 - p)
            if h < MIN_HESS:
                h = MIN_HESS
            grad[k, i] = <G_H_C>(wi * (p - (1.0 if k == yi else 0.0)))
            hess[k, i] = <G_H_C>(wi * h)


def absolute_error_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                        bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """``L = |y - F|``: ``g = w sign(F - y)``, ``h = w`` (leaves are refit to the median)."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, d
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        d = raw[i, 0] - y[i]
        grad[0, i] = <G_H_C>(wi * (1.0 if d > 0 else (-1.0 if d < 0 else 0.0)))
        hess[0, i] = <G_H_C>wi


def quantile_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                  bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads,
                  double alpha):
    """Pinball loss: ``g = w (1 - alpha)`` if F > y, ``-w alpha`` if F < y; ``h = w``."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, d
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        d = raw[i, 0] - y[i]
        grad[0, i] = <G_H_C>(wi * ((1.0 - alpha) if d > 0 else (-alpha if d < 0 else 0.0)))
        hess[0, i] = <G_H_C>wi


def huber_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
               bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads,
               double delta):
    """Huber: ``g = w (F - y)`` within ``delta``, ``w delta sign(F - y)`` beyond; ``h = w``
    (squared error: ``delta = inf``)."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, d
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        d = raw[i, 0] - y[i]
        if d > delta:
            d = delta
        elif d < -delta:
            d = -delta
        grad[0, i] = <G_H_C>(wi * d)
        hess[0, i] = <G_H_C>wi


def poisson_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                 bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads,
                 double hess_shift):
    """``L = exp(F) - y F``: ``g = w (exp(F) - y)``, ``h = w exp(F + hess_shift)``."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, mu
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        mu = exp(raw[i, 0])
        grad[0, i] = <G_H_C>(wi * (mu - y[i]))
        hess[0, i] = <G_H_C>(wi * exp(raw[i, 0] + hess_shift))


def gamma_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
               bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """``L = y exp(-F) + F``: ``g = w (1 - y exp(-F))``, ``h = w y exp(-F)``."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, t
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        t = y[i] * exp(-raw[i, 0])
        grad[0, i] = <G_H_C>(wi * (1.0 - t))
        hess[0, i] = <G_H_C>(wi * (t if t > MIN_HESS else MIN_HESS))


def tweedie_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                 bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads,
                 double power):
    """``L = -y e^{(1-p)F}/(1-p) + e^{(2-p)F}/(2-p)``, variance power p in (1, 2)."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, a, b
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        a = exp((1.0 - power) * raw[i, 0])
        b = exp((2.0 - power) * raw[i, 0])
        grad[0, i] = <G_H_C>(wi * (b - y[i] * a))
        hess[0, i] = <G_H_C>(wi * ((2.0 - power) * b - (1.0 - power) * y[i] * a))


ctypedef fused label_t:
    signed char
    short
    int
    long long
    unsigned char
    unsigned short
    unsigned int
    unsigned long long
    float
    double


def encode_labels(const label_t[::1] y, const label_t[::1] classes, double[::1] out,
                  int n_threads):
    """``out[i] = np.searchsorted(classes, y[i])``, as float64 (the class codes the
    classification losses read): a binary search of the sorted, NaN-free ``classes``
    per row, on ``n_threads`` (the output's fresh pages are touched on every thread)."""
    cdef Py_ssize_t i, n = y.shape[0], lo, hi, mid
    cdef Py_ssize_t n_classes = classes.shape[0]
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} rows, y has {n}")
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        lo = 0
        hi = n_classes
        while lo < hi:
            mid = (lo + hi) // 2
            if classes[mid] < y[i]:
                lo = mid + 1
            else:
                hi = mid
        out[i] = <double>lo
