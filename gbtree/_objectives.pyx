"""Gradient and hessian kernels of the losses, ``prange`` over rows.

``raw`` is the (n_rows, n_outputs) raw prediction; gradients and hessians are
written into float32 arrays of shape (n_outputs, n_rows) of any strides: the
booster passes the two halves of one (n_outputs, n_rows, 2) array, so that each
tree reads its rows' (gradient, hessian) pairs in place. A sample weight
multiplies both.
"""
from cython.parallel cimport prange
from libc.math cimport exp

from ._typedefs cimport G_H_C

cdef enum:
    MIN_PARALLEL_ROWS = 32768

cdef double MIN_HESS = 1e-16


def squared_error_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                       bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """``g = w (F - y)``, ``h = w`` (the loss is 1/2 (y - F)^2)."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        grad[0, i] = <G_H_C>(wi * (raw[i, 0] - y[i]))
        hess[0, i] = <G_H_C>wi


def logistic_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                  bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """Binary log loss with y in {0, 1}: ``g = w (p - y)``, ``h = w p (1 - p)``."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double wi, p, h
    if n < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        p = 1.0 / (1.0 + exp(-raw[i, 0]))
        h = p * (1.0 - p)
        if h < MIN_HESS:
            h = MIN_HESS
        grad[0, i] = <G_H_C>(wi * (p - y[i]))
        hess[0, i] = <G_H_C>(wi * h)


def softmax_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                 bint weighted, G_H_C[:, :] grad, G_H_C[:, :] hess, int n_threads):
    """Multinomial log loss, y the class code in 0..K-1.

    ``g_k = w (p_k - [y = k])`` and ``h_k = w K/(K-1) p_k (1 - p_k)``: the
    diagonal hessian scaled by K/(K-1), Friedman's (2001) multiclass step.
    """
    cdef Py_ssize_t i, n = y.shape[0]
    cdef int k, K = raw.shape[1], yi
    cdef double wi, m, s, p, h
    cdef double scale = K / (K - 1.0)
    if n * K < MIN_PARALLEL_ROWS:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        wi = w[i] if weighted else 1.0
        yi = <int>y[i]
        m = raw[i, 0]
        for k in range(1, K):
            if raw[i, k] > m:
                m = raw[i, k]
        s = 0.0
        for k in range(K):
            s = s + exp(raw[i, k] - m)
        for k in range(K):
            p = exp(raw[i, k] - m) / s
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
    """Huber: ``g = w (F - y)`` within ``delta``, ``w delta sign(F - y)`` beyond; ``h = w``."""
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
