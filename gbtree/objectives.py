"""Losses: gradient and hessian (kernels in _objectives.pyx), link, starting value.

Each objective maps the labels ``y`` (float64, classes already encoded as
0..K-1) and the raw prediction ``F`` of shape (n_rows, n_outputs) to per-row
gradients and hessians, gives the starting value ``F0 = argmin_c sum_i w_i
L(y_i, c)`` and turns raw predictions into the user's scale.
"""
import numpy as np
from scipy.special import expit, softmax

from . import _objectives

_EPS = 1e-15


def _weighted_mean(y, sample_weight):
    return float(np.average(y, weights=sample_weight))


class Objective:
    """Interface of a loss; see the subclasses."""

    name = None
    n_outputs = 1

    def init_raw(self, y, sample_weight):
        """Starting raw prediction F0, shape (n_outputs,)."""
        raise NotImplementedError

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        """Write gradients and hessians (float32, shape (n_outputs, n_rows))."""
        weighted = sample_weight is not None
        w = sample_weight if weighted else np.empty(1, dtype=np.float64)
        self._kernel(y, raw, w, weighted, grad, hess, n_threads)

    def loss(self, y, raw, sample_weight=None):
        """Weighted mean loss, for logging and tests."""
        raise NotImplementedError

    def transform(self, raw):
        """Raw predictions to the user's scale (identity, probabilities...)."""
        raise NotImplementedError


class SquaredError(Objective):
    """``L = 1/2 (y - F)^2``; identity link; F0 is the weighted mean."""

    name = "squared_error"
    _kernel = staticmethod(_objectives.squared_error_grad)

    def init_raw(self, y, sample_weight):
        return np.array([_weighted_mean(y, sample_weight)])

    def loss(self, y, raw, sample_weight=None):
        return 0.5 * float(np.average((y - raw[:, 0]) ** 2, weights=sample_weight))

    def transform(self, raw):
        return raw[:, 0]


class Logistic(Objective):
    """Binary log loss on y in {0, 1}; logit link; F0 = log(p / (1 - p))."""

    name = "logistic"
    _kernel = staticmethod(_objectives.logistic_grad)

    def init_raw(self, y, sample_weight):
        p = np.clip(_weighted_mean(y, sample_weight), _EPS, 1 - _EPS)
        return np.array([np.log(p / (1 - p))])

    def loss(self, y, raw, sample_weight=None):
        f = raw[:, 0]
        # log(1 + exp(f)) - y f, computed without overflow
        return float(np.average(np.logaddexp(0.0, f) - y * f, weights=sample_weight))

    def transform(self, raw):
        p = expit(raw[:, 0])
        return np.column_stack([1 - p, p])


class Softmax(Objective):
    """Multinomial log loss, one output per class; F0 = the log class priors."""

    name = "softmax"
    _kernel = staticmethod(_objectives.softmax_grad)

    def __init__(self, n_classes):
        self.n_outputs = n_classes

    def init_raw(self, y, sample_weight):
        w = np.ones_like(y) if sample_weight is None else sample_weight
        prior = np.bincount(y.astype(np.intp), weights=w, minlength=self.n_outputs)
        prior = np.clip(prior / prior.sum(), _EPS, None)
        return np.log(prior)

    def loss(self, y, raw, sample_weight=None):
        m = raw.max(axis=1, keepdims=True)
        log_z = m[:, 0] + np.log(np.exp(raw - m).sum(axis=1))
        picked = raw[np.arange(len(y)), y.astype(np.intp)]
        return float(np.average(log_z - picked, weights=sample_weight))

    def transform(self, raw):
        return softmax(raw, axis=1)
