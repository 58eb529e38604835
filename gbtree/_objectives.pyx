"""Gradient and hessian kernels of the losses, ``prange`` over rows.

``raw`` is the (n_rows, n_outputs) raw prediction; gradients and hessians are
written as float32 arrays of shape (n_outputs, n_rows), one contiguous row per
output so each tree reads its own. A sample weight multiplies both.
"""
from cython.parallel cimport prange
from libc.math cimport exp

from ._typedefs cimport G_H_C

cdef enum:
    MIN_PARALLEL_ROWS = 32768

cdef double MIN_HESS = 1e-16


def squared_error_grad(const double[::1] y, const double[:, ::1] raw, const double[::1] w,
                       bint weighted, G_H_C[:, ::1] grad, G_H_C[:, ::1] hess, int n_threads):
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
                  bint weighted, G_H_C[:, ::1] grad, G_H_C[:, ::1] hess, int n_threads):
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
                 bint weighted, G_H_C[:, ::1] grad, G_H_C[:, ::1] hess, int n_threads):
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
