"""Losses: gradient and hessian (kernels in _objectives.pyx), link, starting value.

Each objective maps the labels ``y`` (float64, classes already encoded as
0..K-1) and the raw prediction ``F`` of shape (n_rows, n_outputs) to per-row
gradients and hessians, gives the starting value ``F0 = argmin_c sum_i w_i
L(y_i, c)`` and turns raw predictions into the user's scale. Losses whose
hessian says nothing about the leaf's optimum (absolute error, quantile, Huber)
re-estimate each leaf on its rows' residuals after the tree is grown
(Friedman's TreeBoost line search per region): ``refit_leaves``.
"""
import copy
import inspect

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, ndtr, softmax

from ..kernels import _objectives, _ranking

_EPS = 1e-15


def _weighted_mean(y, sample_weight):
    return float(np.average(y, weights=sample_weight))


def read_only(a):
    """A read-only view of the array ``a`` (what user functions are given)."""
    view = a.view()
    view.flags.writeable = False
    return view


def class_codes(y, classes, n_threads=1):
    """The classification losses' labels: each label's index in ``classes`` (the
    sorted distinct labels of y, every label of y among them), as float64:
    ``np.searchsorted(classes, y)``.
    Numeric labels in the machine's byte order are searched on ``n_threads``
    (``_objectives.encode_labels``); any other dtype, and float labels with NaN
    (which the kernel's comparisons would not place last), by ``np.searchsorted``."""
    y = np.asarray(y)
    classes = np.asarray(classes)
    if y.dtype == bool:
        y, classes = y.view(np.uint8), classes.view(np.uint8)
    if (y.ndim == 1 and y.dtype == classes.dtype and y.dtype.isnative
            and (y.dtype.kind in "iu" or (y.dtype in (np.float32, np.float64)
                                          and not np.isnan(classes).any()))):
        out = np.empty(y.shape[0], dtype=np.float64)
        _objectives.encode_labels(np.ascontiguousarray(y), np.ascontiguousarray(classes), out,
                                  n_threads)
        return out
    return np.searchsorted(classes, y).astype(np.float64)


def grouped_weighted_quantile(values, weights, groups, n_groups, alpha):
    """Per group, the smallest value whose cumulative weight reaches ``alpha`` of the total.

    Vectorised over all groups (one lexsort). Groups with no weight get NaN.
    """
    order = np.lexsort((values, groups))
    g, v = groups[order], values[order]
    w = np.ones_like(v) if weights is None else weights[order]
    total = np.bincount(g, weights=w, minlength=n_groups)
    cum = np.cumsum(w)
    start = np.searchsorted(g, np.arange(n_groups))
    before = np.where(start > 0, cum[np.maximum(start - 1, 0)], 0.0)
    within = cum - before[g]
    reached = within >= alpha * total[g] * (1 - 1e-12)
    reached &= w > 0   # a zero-weight row is never the answer
    out = np.full(n_groups, np.nan)
    idx = np.flatnonzero(reached)
    first_groups, first = np.unique(g[idx], return_index=True)
    out[first_groups] = v[idx[first]]
    return out


def weighted_quantile(values, weights, alpha):
    """The weighted ``alpha``-quantile of ``values`` (lower, no interpolation)."""
    groups = np.zeros(values.shape[0], dtype=np.intp)
    return float(grouped_weighted_quantile(values, weights, groups, 1, alpha)[0])


# attributes of a loss that hold the training rows' data, then its working buffers
# (none of its ``state``; ``fit_done`` drops the buffers)
_NOT_STATE = ("group_ptr", "group_ids", "_last_ranking")


class Objective:
    """Interface of a loss; see the subclasses."""

    name = None
    task = "regression"    # what eval metrics apply: regression, binary, multiclass, ranking
    n_outputs = 1
    default_metric = "rmse"
    needs_refit = False
    infinite_y = False     # labels may hold inf (an interval without upper bound)
    summable_start = False  # F0 from sums over parts of the rows (start_sums)
    y_columns = 0          # the columns of a 2-D y (0: y is 1-D)
    _kernel_args = ()

    def init_raw(self, y, sample_weight):
        """Starting raw prediction F0, shape (n_outputs,)."""
        raise NotImplementedError

    def start_sums(self, y, sample_weight):
        """What F0 needs of some rows, as an array that adds up over parts of the rows
        (fits over shards or blocks of rows; ``summable_start`` losses only):
        ``start_from_sums`` of the total gives F0."""
        raise NotImplementedError(f"objective={self.name!r} needs all rows at once for its "
                                  f"starting value")

    def start_from_sums(self, sums):
        """F0 from the total of ``start_sums`` over all rows."""
        raise NotImplementedError

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        """Write gradients and hessians (float32, shape (n_outputs, n_rows))."""
        weighted = sample_weight is not None
        w = sample_weight if weighted else np.empty(1, dtype=np.float64)
        self._kernel(y, raw, w, weighted, grad, hess, n_threads, *self._kernel_args)

    def check_target(self, y):
        """Raise ValueError if ``y`` is outside the loss's domain."""

    def check_eval_target(self, y):
        """Raise ValueError if an eval set's ``y`` is outside the loss's domain (what
        the starting value alone needs, such as one y > 0, is not asked)."""
        self.check_target(y)

    def continue_from(self, fitted):
        """Take over the running state of ``fitted`` (same loss) when training continues."""

    def fit_done(self):
        """The fit is over: let go of the working buffers of its rows."""
        for name in _NOT_STATE[2:]:
            self.__dict__.pop(name, None)

    def state(self):
        """The loss's parameters and running state, what a model keeps of it: its
        attributes but the training rows' data it holds (a ranking's query offsets and
        numbers) and its working buffers."""
        return {k: v for k, v in vars(self).items() if k not in _NOT_STATE}

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0):
        """Optimal value of each leaf of a tree of ``output`` given the raw predictions
        before the tree (or NaN)."""
        raise NotImplementedError

    def loss(self, y, raw, sample_weight=None):
        """Weighted mean loss, for logging and tests."""
        raise NotImplementedError

    def transform(self, raw):
        """Raw predictions to the user's scale (identity, probabilities...)."""
        raise NotImplementedError


class _MeanStart:
    """F0 from the labels' weighted mean: the sums are (sum of w * y, sum of w)."""

    summable_start = True

    def start_sums(self, y, sample_weight):
        if sample_weight is None:
            return np.array([float(np.sum(y)), float(y.shape[0])])
        return np.array([float(np.dot(sample_weight, y)), float(np.sum(sample_weight))])

    def start_from_sums(self, sums):
        if not sums[1] > 0:
            raise ValueError("the sample weights sum to 0")
        return self.init_raw(np.array([sums[0] / sums[1]]), None)


class SquaredError(_MeanStart, Objective):
    """``L = 1/2 (y - F)^2``; identity link; F0 is the weighted mean."""

    name = "squared_error"
    _kernel = staticmethod(_objectives.squared_error_grad)

    def init_raw(self, y, sample_weight):
        return np.array([_weighted_mean(y, sample_weight)])

    def loss(self, y, raw, sample_weight=None):
        return 0.5 * float(np.average((y - raw[:, 0]) ** 2, weights=sample_weight))

    def transform(self, raw):
        return raw[:, 0]


class Logistic(_MeanStart, Objective):
    """Binary log loss on y in {0, 1}; logit link; F0 = log(p / (1 - p))."""

    name = "logistic"
    task = "binary"
    default_metric = "logloss"
    _kernel = staticmethod(_objectives.logistic_grad)

    def init_raw(self, y, sample_weight):
        p = np.clip(_weighted_mean(y, sample_weight), _EPS, 1 - _EPS)
        return np.array([np.log(p / (1 - p))])

    def loss(self, y, raw, sample_weight=None):
        f = raw[:, 0]
        # log(1 + exp(f)) - y f, computed without overflow
        return float(np.average(np.logaddexp(0.0, f) - y * f, weights=sample_weight))

    def check_target(self, y):
        if not np.all((y >= 0) & (y <= 1)):
            raise ValueError("objective='logistic' needs y in [0, 1] (the class codes 0 and 1)")

    def transform(self, raw):
        proba = np.empty((raw.shape[0], 2))
        p = expit(raw[:, 0], out=proba[:, 1])
        np.subtract(1.0, p, out=proba[:, 0])
        return proba


class Softmax(Objective):
    """Multinomial log loss, one output per class; F0 = the log class priors."""

    name = "softmax"
    task = "multiclass"
    default_metric = "mlogloss"
    _kernel = staticmethod(_objectives.softmax_grad)

    def __init__(self, n_classes):
        self.n_outputs = n_classes

    def check_target(self, y):
        # the kernel reads each row's raw score at column y: a code outside 0..K-1 reads past it
        if np.any((y < 0) | (y >= self.n_outputs) | (y != np.floor(y))):
            raise ValueError(f"objective='softmax' needs the class codes 0..{self.n_outputs - 1}")

    summable_start = True

    def init_raw(self, y, sample_weight):
        return self.start_from_sums(self.start_sums(y, sample_weight))

    def start_sums(self, y, sample_weight):
        w = np.ones_like(y) if sample_weight is None else sample_weight
        return np.bincount(y.astype(np.intp), weights=w, minlength=self.n_outputs)

    def start_from_sums(self, sums):
        if not sums.sum() > 0:
            raise ValueError("the sample weights sum to 0")
        return np.log(np.clip(sums / sums.sum(), _EPS, None))

    def loss(self, y, raw, sample_weight=None):
        m = raw.max(axis=1, keepdims=True)
        log_z = m[:, 0] + np.log(np.exp(raw - m).sum(axis=1))
        picked = raw[np.arange(len(y)), y.astype(np.intp)]
        return float(np.average(log_z - picked, weights=sample_weight))

    def transform(self, raw):
        return softmax(raw, axis=1)


class _LogLink(_MeanStart):
    """Raw predictions are ``log(mean)``: F0 = log of the weighted mean, transform = exp."""

    def init_raw(self, y, sample_weight):
        mean = _weighted_mean(y, sample_weight)
        if not mean > 0:   # every y > 0 has weight 0: log(0) would start at -inf
            raise ValueError(f"objective={self.name!r} needs a y > 0 with a sample_weight "
                             f"> 0 (the starting value is the log of y's weighted mean)")
        return np.array([np.log(mean)])

    def transform(self, raw):
        return np.exp(raw[:, 0])


class AbsoluteError(Objective):
    """``L = |y - F|``; F0 the weighted median; leaves refit to their residuals' median."""

    name = "absolute_error"
    default_metric = "mae"
    needs_refit = True
    _kernel = staticmethod(_objectives.absolute_error_grad)
    alpha = 0.5

    def init_raw(self, y, sample_weight):
        return np.array([weighted_quantile(y, sample_weight, self.alpha)])

    def loss(self, y, raw, sample_weight=None):
        return float(np.average(np.abs(y - raw[:, 0]), weights=sample_weight))

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0):
        return grouped_weighted_quantile(y - raw_before, sample_weight, leaf_of_row, n_leaves,
                                         self.alpha)

    def transform(self, raw):
        return raw[:, 0]


class Quantile(AbsoluteError):
    """Pinball loss ``alpha (y - F)`` if y >= F else ``(1 - alpha)(F - y)``; leaves refit
    to their residuals' weighted alpha-quantile."""

    name = "quantile"
    default_metric = "quantile"
    _kernel = staticmethod(_objectives.quantile_grad)

    def __init__(self, alpha=0.5):
        self.alpha = float(alpha)
        self._kernel_args = (self.alpha,)

    def loss(self, y, raw, sample_weight=None):
        d = y - raw[:, 0]
        return float(np.average(np.where(d >= 0, self.alpha * d, (self.alpha - 1) * d),
                                weights=sample_weight))


class MultiSquaredError(Objective):
    """Squared error on each column of a ``y`` of shape (n, K): output k (one tree per
    round) fits column k; F0 is each column's weighted mean; identity link."""

    name = "squared_error"
    task = "multi-output"
    default_metric = "rmse"

    def __init__(self, n_outputs=2):
        self.n_outputs = self.y_columns = int(n_outputs)

    def check_target(self, y):
        if y.ndim != 2 or y.shape[1] != self.n_outputs:
            raise ValueError(f"y must have {self.n_outputs} columns, got shape {y.shape}")

    summable_start = True

    def init_raw(self, y, sample_weight):
        return np.average(y, axis=0, weights=sample_weight)

    def start_sums(self, y, sample_weight):
        w = np.ones(y.shape[0]) if sample_weight is None else sample_weight
        return np.r_[w @ y, np.sum(w)]

    def start_from_sums(self, sums):
        if not sums[-1] > 0:
            raise ValueError("the sample weights sum to 0")
        return sums[:-1] / sums[-1]

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        w = 1.0 if sample_weight is None else sample_weight[:, None]
        grad[:] = ((raw - y) * w).T
        hess[:] = np.broadcast_to(w, raw.shape).T

    def loss(self, y, raw, sample_weight=None):
        return float(np.average(0.5 * np.mean((y - raw) ** 2, axis=1), weights=sample_weight))

    def transform(self, raw):
        return raw


class MultiQuantile(Objective):
    """Several quantiles in one model: output k (one tree per round) estimates the
    ``alphas[k]`` quantile (alphas increasing) with ``Quantile``'s pinball loss,
    starting value and leaf refit. ``transform`` sorts each row's values, so the
    predicted quantiles never cross: sorting moves each value towards the true
    quantile curve's order and never increases the summed pinball loss of a row
    whose true quantiles are ordered (Chernozhukov, Fernandez-Val and Galichon's
    rearrangement, 2010)."""

    name = "quantile"
    task = "multi-quantile"
    default_metric = "quantile"
    needs_refit = True

    def __init__(self, alphas=(0.25, 0.75)):
        self.alphas = tuple(float(a) for a in alphas)
        self.n_outputs = len(self.alphas)

    def init_raw(self, y, sample_weight):
        return np.array([weighted_quantile(y, sample_weight, a) for a in self.alphas])

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        d = raw - y[:, None]
        a = np.asarray(self.alphas)
        g = np.where(d > 0, 1.0 - a, np.where(d < 0, -a, 0.0))
        w = 1.0 if sample_weight is None else sample_weight[:, None]
        grad[:] = (g * w).T
        hess[:] = np.broadcast_to(w, d.shape).T

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0):
        return grouped_weighted_quantile(y - raw_before, sample_weight, leaf_of_row, n_leaves,
                                         self.alphas[output])

    def loss(self, y, raw, sample_weight=None):
        return float(np.mean([Quantile(a).loss(y, raw[:, [k]], sample_weight)
                              for k, a in enumerate(self.alphas)]))

    def transform(self, raw):
        return np.sort(raw, axis=1)


class Huber(Objective):
    """``L = r^2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta / 2)`` beyond (r = y - F).

    The hessian is taken as 1 everywhere; each leaf is then refit by Friedman's
    (2001) M-regression step: the residuals' median plus the mean of their
    deviations from it clipped to ``delta``.
    """

    name = "huber"
    default_metric = "mae"
    needs_refit = True
    _kernel = staticmethod(_objectives.huber_grad)

    def __init__(self, delta=1.0):
        self.delta = float(delta)
        self._kernel_args = (self.delta,)

    def _m_step(self, r, sample_weight, groups, n_groups):
        med = grouped_weighted_quantile(r, sample_weight, groups, n_groups, 0.5)
        w = np.ones_like(r) if sample_weight is None else sample_weight
        dev = np.clip(r - med[groups], -self.delta, self.delta)
        num = np.bincount(groups, weights=w * dev, minlength=n_groups)
        den = np.bincount(groups, weights=w, minlength=n_groups)
        return med + np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    def init_raw(self, y, sample_weight):
        # the Huber location: the root of the decreasing psi(c) = sum w clip(y - c, +-delta)
        w = np.ones_like(y) if sample_weight is None else sample_weight
        keep = w > 0
        y, w = y[keep], w[keep]

        def psi(c):
            return float(np.sum(w * np.clip(y - c, -self.delta, self.delta)))

        lo, hi = float(y.min()), float(y.max())
        if lo == hi or psi(lo) <= 0.0:
            return np.array([lo])
        if psi(hi) >= 0.0:
            return np.array([hi])
        return np.array([brentq(psi, lo, hi, xtol=1e-12, rtol=1e-15)])

    def loss(self, y, raw, sample_weight=None):
        a = np.abs(y - raw[:, 0])
        return float(np.average(np.where(a <= self.delta, 0.5 * a * a,
                                         self.delta * (a - 0.5 * self.delta)),
                                weights=sample_weight))

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0):
        return self._m_step(y - raw_before, sample_weight, leaf_of_row, n_leaves)

    def transform(self, raw):
        return raw[:, 0]


class Poisson(_LogLink, Objective):
    """Poisson deviance with log link: ``L = exp(F) - y F``, y >= 0.

    The hessian is ``exp(F + 0.7)`` (LightGBM's ``poisson_max_delta_step`` and
    XGBoost's default ``max_delta_step`` for Poisson): a damped Newton step that
    keeps the first rounds from overshooting where the mean is near 0.
    """

    name = "poisson"
    default_metric = "poisson-nloglik"
    hess_shift = 0.7
    _kernel = staticmethod(_objectives.poisson_grad)
    _kernel_args = (hess_shift,)

    def check_target(self, y):
        if np.any(y < 0) or not np.any(y > 0):
            raise ValueError("objective='poisson' needs y >= 0 with at least one y > 0")

    def check_eval_target(self, y):
        if np.any(y < 0):
            raise ValueError("objective='poisson' needs y >= 0")

    def loss(self, y, raw, sample_weight=None):
        return float(np.average(np.exp(raw[:, 0]) - y * raw[:, 0], weights=sample_weight))


class Gamma(_LogLink, Objective):
    """Gamma deviance with log link: ``L = y exp(-F) + F``, y > 0."""

    name = "gamma"
    default_metric = "gamma-deviance"
    _kernel = staticmethod(_objectives.gamma_grad)

    def check_target(self, y):
        if np.any(y <= 0):
            raise ValueError("objective='gamma' needs y > 0")

    def loss(self, y, raw, sample_weight=None):
        return float(np.average(y * np.exp(-raw[:, 0]) + raw[:, 0], weights=sample_weight))


class Tweedie(_LogLink, Objective):
    """Tweedie deviance with log link and variance power ``p`` in (1, 2), y >= 0."""

    name = "tweedie"
    default_metric = "tweedie-deviance"
    _kernel = staticmethod(_objectives.tweedie_grad)

    def __init__(self, power=1.5):
        self.power = float(power)
        self._kernel_args = (self.power,)

    def check_target(self, y):
        if np.any(y < 0) or not np.any(y > 0):
            raise ValueError("objective='tweedie' needs y >= 0 with at least one y > 0")

    def check_eval_target(self, y):
        if np.any(y < 0):
            raise ValueError("objective='tweedie' needs y >= 0")

    def loss(self, y, raw, sample_weight=None):
        p, f = self.power, raw[:, 0]
        return float(np.average(-y * np.exp((1 - p) * f) / (1 - p) + np.exp((2 - p) * f) / (2 - p),
                                weights=sample_weight))


def _risk_sets(y, sample_weight):
    """Rows sorted by time (|y|), with each row's weight, event flag and the first and
    last sorted positions of the rows that share its time."""
    t = np.abs(y)
    order = np.argsort(t, kind="stable")
    ts = t[order]
    w = np.ones(y.shape[0]) if sample_weight is None else sample_weight[order]
    return (order, w, y[order] > 0, np.searchsorted(ts, ts, side="left"),
            np.searchsorted(ts, ts, side="right") - 1)


def cox_gradient(y, raw, sample_weight=None):
    """Gradient and hessian of the negative log partial likelihood of the Cox model
    with Breslow's method for ties,
    ``L = -sum_k d_k w_k (F_k - log sum_{j: t_j >= t_k} w_j exp(F_j))``
    (``t = |y|``, ``d = y > 0``): row i gets ``w_i (e_i r_i - d_i)`` and
    ``w_i e_i r_i - (w_i e_i)**2 s_i`` with ``e = exp(F)``, ``r_i`` and ``s_i`` the
    sums of ``w_k / D_k`` and ``w_k / D_k**2`` over the events at or before ``t_i``,
    ``D_k`` the weighted ``e`` of the rows still at risk at ``t_k``."""
    order, w, event, first, last = _risk_sets(y, sample_weight)
    f = raw[order]
    e = np.exp(f - f.max())    # the ratios e_i / D_k do not change with a common shift
    at_risk = np.cumsum((w * e)[::-1])[::-1][first]
    r = np.cumsum(np.where(event, w / at_risk, 0.0))[last]
    s = np.cumsum(np.where(event, w / at_risk ** 2, 0.0))[last]
    grad, hess = np.empty_like(f), np.empty_like(f)
    grad[order] = w * (e * r - event)
    hess[order] = w * e * r - (w * e) ** 2 * s
    return grad, hess


def cox_nloglik(y, raw, sample_weight=None):
    """The negative log partial likelihood (Breslow) per unit of event weight."""
    order, w, event, first, _ = _risk_sets(y, sample_weight)
    f = raw[order]
    shift = f.max()
    log_risk = np.log(np.cumsum((w * np.exp(f - shift))[::-1])[::-1][first]) + shift
    events = np.sum(w * event)
    return float(-np.sum(np.where(event, w * (f - log_risk), 0.0)) / events) if events else 0.0


class Cox(Objective):
    """Cox proportional hazards: the negative log partial likelihood, Breslow's
    method for tied times (``cox_gradient``). ``y`` is the time of the event, or
    minus the time a row was censored at (XGBoost's convention); the raw score is
    the log hazard ratio and ``transform`` gives the hazard ratio ``exp(F)``.
    F0 = 0: moving every score alike does not change the likelihood."""

    name = "cox"
    task = "survival"
    default_metric = "cox-nloglik"

    def check_target(self, y):
        self.check_eval_target(y)
        if not np.any(y > 0):
            raise ValueError("objective='cox' needs at least one event (a row with y > 0)")

    def check_eval_target(self, y):
        if not np.all(np.isfinite(y)) or np.any(y == 0):
            raise ValueError("objective='cox' needs finite y != 0: the time of the event, or "
                             "minus the time a censored row was last seen")

    def init_raw(self, y, sample_weight):
        return np.zeros(1)

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        grad[0], hess[0] = cox_gradient(y, raw[:, 0], sample_weight)

    def loss(self, y, raw, sample_weight=None):
        return cox_nloglik(y, raw[:, 0], sample_weight)

    def transform(self, raw):
        return np.exp(raw[:, 0])


# The AFT model's distributions of Z: pdf, its first and second derivatives, cdf,
# survival function (1 - cdf, computed apart: exact in the upper tail), log pdf and
# its first and second derivatives (stable where the pdf underflows)
def _normal(z):
    logpdf = -0.5 * z * z - 0.5 * np.log(2 * np.pi)
    pdf = np.exp(logpdf)
    return (pdf, -z * pdf, (z * z - 1) * pdf, ndtr(z), ndtr(-z), logpdf, -z,
            np.full_like(z, -1.0))


def _logistic(z):
    p = expit(z)
    pdf = p * (1 - p)
    logpdf = -np.abs(z) - 2 * np.log1p(np.exp(-np.abs(z)))
    return (pdf, pdf * (1 - 2 * p), pdf * (1 - 6 * p + 6 * p * p), p, expit(-z), logpdf,
            1 - 2 * p, -2 * pdf)


def _extreme(z):
    zc = np.minimum(z, 700.0)
    w = np.exp(zc)
    pdf = w * np.exp(-w)
    return (pdf, pdf * (1 - w), pdf * (w * w - 3 * w + 1), -np.expm1(-w), np.exp(-w),
            zc - w, 1 - w, -w)


AFT_DISTRIBUTIONS = {"normal": _normal, "logistic": _logistic, "extreme": _extreme}
# XGBoost's clips of the AFT gradient and hessian (far in a tail both lose meaning)
_AFT_GRAD, _AFT_HESS = 15.0, (1e-16, 15.0)


def _aft_terms(y, raw, distribution, sigma):
    """Per row: (uncensored?, the probability of the interval, the distribution terms of
    the lower and upper bounds)."""
    lower, upper = y[:, 0], y[:, 1]
    dist = AFT_DISTRIBUTIONS[distribution]
    with np.errstate(divide="ignore"):
        z_lo = (np.log(lower) - raw) / sigma       # log 0 = -inf: a left-censored row
        z_up = (np.log(upper) - raw) / sigma       # log inf = inf: a right-censored row
    exact = lower == upper
    with np.errstate(invalid="ignore", over="ignore"):
        lo, up = dist(z_lo), dist(z_up)
    # at +-inf every density term is 0 (NaN from inf * 0 otherwise)
    lo = [np.where(np.isfinite(z_lo), t, 0.0) for t in lo[:3]] + list(lo[3:])
    up = [np.where(np.isfinite(z_up), t, 0.0) for t in up[:3]] + list(up[3:])
    # the probability of the interval, from the tail where it is not a difference of
    # two numbers near 1
    mass = np.where(z_lo > 0, lo[4] - up[4], up[3] - lo[3])
    return exact, mass, lo, up


def aft_nloglik(y, raw, distribution="normal", sigma=1.0):
    """Per-row negative log-likelihood of the AFT model ``log T = F + sigma Z`` for the
    interval ``y[:, 0] <= T <= y[:, 1]`` (equal bounds: T observed)."""
    exact, mass, lo, up = _aft_terms(y, raw, distribution, sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact_loss = np.log(sigma * y[:, 0]) - lo[5]
        return np.where(exact, exact_loss, -np.log(np.maximum(mass, 1e-300)))


def aft_gradient(y, raw, distribution="normal", sigma=1.0):
    """Gradient and hessian in F of ``aft_nloglik``, clipped as XGBoost clips them."""
    exact, mass, lo, up = _aft_terms(y, raw, distribution, sigma)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g_exact = lo[6] / sigma          # d log pdf / dz, over sigma
        h_exact = -lo[7] / sigma ** 2    # minus d2 log pdf / dz2, over sigma squared
        dp = up[0] - lo[0]
        g_cens = dp / (sigma * mass)
        h_cens = -((up[1] - lo[1]) * mass - dp ** 2) / (sigma ** 2 * mass ** 2)
    g = np.where(exact, g_exact, g_cens)
    h = np.where(exact, h_exact, h_cens)
    # far in a tail the ratios are 0/0: the limit pushes F towards the data
    bad = ~np.isfinite(g)
    g[bad] = np.where(raw[bad] > np.log(np.where(exact, y[:, 0], np.where(
        np.isfinite(y[:, 1]), y[:, 1], y[:, 0] + 1)))[bad], _AFT_GRAD, -_AFT_GRAD)
    h[~np.isfinite(h)] = _AFT_HESS[0]
    return np.clip(g, -_AFT_GRAD, _AFT_GRAD), np.clip(h, *_AFT_HESS)


class AFT(Objective):
    """Accelerated failure time: ``log T = F + sigma Z`` with Z normal, logistic or
    extreme (Gumbel); ``y`` of shape (n, 2) holds each row's lower and upper bound on
    T (XGBoost's convention: equal bounds for an observed time, an infinite upper
    bound for a right-censored row, 0 as lower bound for a left-censored one). The
    loss is the negative log-likelihood (``aft_nloglik``); ``transform`` gives the
    predicted time ``exp(F)``; F0 is the weighted mean of the log lower bounds above 0."""

    name = "aft"
    task = "survival-aft"
    default_metric = "aft-nloglik"
    infinite_y = True
    summable_start = True
    y_columns = 2   # (each row's lower and upper bound)

    def __init__(self, distribution="normal", sigma=1.0):
        self.distribution, self.sigma = distribution, float(sigma)

    def check_target(self, y):
        self.check_eval_target(y)

    def check_eval_target(self, y):
        if y.ndim != 2 or y.shape[1] != 2:
            raise ValueError("objective='aft' needs y of shape (n_samples, 2): each row's "
                             f"lower and upper bound on the time, got shape {y.shape}")
        lower, upper = y[:, 0], y[:, 1]
        if not (np.all(np.isfinite(lower)) and np.all(lower >= 0) and not np.any(np.isnan(upper))
                and np.all(upper >= lower) and np.all(upper > 0)):
            raise ValueError("objective='aft' needs 0 <= lower <= upper bounds, the lower "
                             "finite and the upper > 0 (inf for a right-censored row)")

    def init_raw(self, y, sample_weight):
        keep = y[:, 0] > 0
        if not np.any(keep):
            return np.zeros(1)
        w = None if sample_weight is None else sample_weight[keep]
        if w is not None and not np.any(w > 0):
            return np.zeros(1)
        return np.array([np.average(np.log(y[keep, 0]), weights=w)])

    def start_sums(self, y, sample_weight):
        keep = y[:, 0] > 0
        w = np.ones(int(keep.sum())) if sample_weight is None else sample_weight[keep]
        return np.array([w @ np.log(y[keep, 0]), np.sum(w)])

    def start_from_sums(self, sums):
        return np.array([sums[0] / sums[1]]) if sums[1] > 0 else np.zeros(1)

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        g, h = aft_gradient(y, raw[:, 0], self.distribution, self.sigma)
        if sample_weight is not None:
            g, h = g * sample_weight, h * sample_weight
        grad[0], hess[0] = g, h

    def loss(self, y, raw, sample_weight=None):
        return float(np.average(aft_nloglik(y, raw[:, 0], self.distribution, self.sigma),
                                weights=sample_weight))

    def transform(self, raw):
        return np.exp(raw[:, 0])


class Custom(Objective):
    """A user's loss: ``func(y_true, raw_prediction[, sample_weight]) -> (grad, hess)``.

    ``raw_prediction`` has shape (n,) for one output and (n, K) for K outputs;
    ``grad`` and ``hess`` have the same shape. If ``func`` takes no
    ``sample_weight`` argument, gbtree multiplies both by the weights itself.
    F0 is one Newton step from 0 (exact for a quadratic loss); ``link`` is the
    transform to the user's scale ("identity", "logistic" or "softmax").
    """

    name = "custom"

    def __init__(self, func, n_outputs=1, link="identity"):
        self.func = func
        self.n_outputs = n_outputs
        self.link = link
        self.default_metric = {"identity": "rmse", "logistic": "logloss",
                               "softmax": "mlogloss"}[link]
        self.task = {"identity": "regression", "logistic": "binary",
                     "softmax": "multiclass"}[link]
        try:
            params = inspect.signature(func).parameters.values()
            positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                          p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
            self._takes_weight = (len(positional) >= 3
                                  or any(p.kind == p.VAR_POSITIONAL for p in positional))
        except (TypeError, ValueError):
            self._takes_weight = False

    def _call(self, y, raw, sample_weight):
        n = y.shape[0]
        # read-only views: the user's y and weights, and the training's raw scores,
        # are not the function's to change
        arg = read_only(raw[:, 0] if self.n_outputs == 1 else raw)
        if self._takes_weight:   # a weighted loss always gets weights (ones when none)
            w = np.ones(n) if sample_weight is None else sample_weight
            out = self.func(read_only(y), arg, read_only(w))
        else:
            out = self.func(read_only(y), arg)
        try:
            grad, hess = out
        except (TypeError, ValueError):
            raise TypeError("a custom objective must return a pair (grad, hess)") from None
        try:
            grad = np.asarray(grad, dtype=np.float64)
            hess = np.asarray(hess, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"a custom objective must return arrays of numbers (grad, "
                            f"hess): {exc}") from None
        shape = (n,) if self.n_outputs == 1 else (n, self.n_outputs)
        for name, a in (("grad", grad), ("hess", hess)):
            if a.shape != shape:
                raise ValueError(f"the custom objective returned {name} of shape {a.shape}, "
                                 f"expected {shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"the custom objective returned non-finite values in {name}")
            if a.size and np.abs(a).max() > np.finfo(np.float32).max:
                raise ValueError(f"the custom objective returned values in {name} beyond "
                                 f"float32's range (up to {np.abs(a).max():.3g}), which gbtree "
                                 f"stores them in; rescale them")
        if np.any(hess < 0):
            raise ValueError("the custom objective returned negative values in hess: the Newton "
                             "step needs second derivatives >= 0 (use a positive surrogate "
                             "where the loss is not convex)")
        if sample_weight is not None and not self._takes_weight:
            w = sample_weight if self.n_outputs == 1 else sample_weight[:, None]
            grad, hess = grad * w, hess * w
        return grad.reshape(n, self.n_outputs), hess.reshape(n, self.n_outputs)

    summable_start = True

    def init_raw(self, y, sample_weight):
        return self.start_from_sums(self.start_sums(y, sample_weight))

    def start_sums(self, y, sample_weight):
        """The gradients' and hessians' sums at F = 0, shape (2, n_outputs)."""
        grad, hess = self._call(y, np.zeros((y.shape[0], self.n_outputs)), sample_weight)
        return np.stack([grad.sum(axis=0), hess.sum(axis=0)])

    def start_from_sums(self, sums):
        G, H = sums
        return np.divide(-G, H, out=np.zeros(self.n_outputs), where=H > 0)

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        g, h = self._call(y, raw, sample_weight)
        grad[:] = g.T
        hess[:] = h.T

    def loss(self, y, raw, sample_weight=None):
        return float("nan")   # unknown: only the derivatives are given

    def transform(self, raw):
        if self.link == "logistic":
            p = expit(raw[:, 0])
            return np.column_stack([1 - p, p])
        if self.link == "softmax":
            return softmax(raw, axis=1)
        return raw[:, 0]


def classification_objective(objective, n_classes):
    """A classifier's loss for ``n_classes`` classes: ``"log_loss"`` (logistic for two,
    softmax for more) or a user's callable with the matching link."""
    if callable(objective):
        return Custom(objective, 1 if n_classes == 2 else n_classes,
                      "logistic" if n_classes == 2 else "softmax")
    return Logistic() if n_classes == 2 else Softmax(n_classes)


MAX_EXP_GAIN_LABEL = 31
"""Largest label the exponential gain ``2^y - 1`` accepts (as LightGBM's default label_gain)."""


class Ranking(Objective):
    """Pairwise ranking losses over query groups (LambdaMART / RankNet); kernel in _ranking.pyx.

    ``group_ptr`` holds the ``n_groups + 1`` row offsets of the groups in the
    (query-sorted) training rows. ``kind``: ``"pairwise"`` (RankNet: every pair
    of documents with different labels, weight 1), ``"ndcg"`` (LambdaMART:
    weight ``|delta NDCG|`` of swapping the pair's ranks, gain ``2^y - 1`` or
    ``y``, ideal DCG at ``truncation_level``), ``"map"`` (weight ``|delta AP|``,
    relevant meaning ``y > 0``). Pairs: those whose better-ranked document is
    among the top ``truncation_level`` by the current score, or with
    ``num_pair_per_sample`` set, that many partners per document drawn among
    the other labels of its group (seeded by ``seed`` and the round). ``norm``:
    LightGBM's and XGBoost's lambdarank normalisation (see ``_ranking.pyx``).
    F0 is 0: a ranking does not depend on a constant.
    """

    name = "ranking"
    task = "ranking"
    needs_groups = True
    default_metric = "ndcg@10"
    summable_start = True
    group_ids = None   # see ``for_groups``

    def __init__(self, group_ptr, kind="ndcg", truncation_level=30, num_pair_per_sample=None,
                 norm=True, exp_gain=True, seed=0):
        if kind not in _ranking.KINDS:
            raise ValueError(f"kind must be one of {tuple(_ranking.KINDS)}, got {kind!r}")
        self.group_ptr = np.ascontiguousarray(group_ptr, dtype=np.intp)
        self.kind = kind
        self.name = f"rank:{kind}"
        if kind == "map":
            self.default_metric = "map@10"
        self.truncation_level = int(truncation_level)
        self.num_pair_per_sample = num_pair_per_sample
        self.norm = bool(norm)
        self.exp_gain = bool(exp_gain)
        self.seed = int(seed)
        self._round = 0

    def continue_from(self, fitted):
        self._round = fitted._round   # pair sampling goes on with the next round's draws

    def check_target(self, y):
        if not np.all(np.isfinite(y)):
            raise ValueError(f"objective='{self.name}' needs finite labels")
        if self.kind == "pairwise":
            return
        if np.any(y < 0) or np.any(y != np.round(y)):
            bad = y[(y < 0) | (y != np.round(y))][:5]
            raise ValueError(f"objective='{self.name}' needs non-negative integer relevance "
                             f"labels, got {bad!r}")
        if self.kind == "ndcg" and self.exp_gain and y.size and y.max() > MAX_EXP_GAIN_LABEL:
            raise ValueError(f"objective='rank:ndcg' with the exponential gain 2^y - 1 accepts "
                             f"labels up to {MAX_EXP_GAIN_LABEL}, got {y.max():g}; use "
                             f"ndcg_exp_gain=False (linear gain) for larger labels")

    def init_raw(self, y, sample_weight):
        return np.zeros(1)

    def start_sums(self, y, sample_weight):
        return np.zeros(1)

    def start_from_sums(self, sums):
        return np.zeros(1)

    def for_groups(self, group_ptr, group_ids):
        """This loss over some of the training groups (a shard's or a block's):
        ``group_ptr`` their row offsets there, ``group_ids`` their numbers among all
        groups, which seed their pair sampling as in a fit over all of them."""
        part = copy.copy(self)
        part.group_ptr = np.ascontiguousarray(group_ptr, dtype=np.intp)
        part.group_ids = np.ascontiguousarray(group_ids, dtype=np.int64)
        part._last_ranking = None
        return part

    def _last_ranking_of(self, n_rows):
        """The buffer in which the ranking kernel keeps each group's ranking between
        rounds (of these training rows: no part of the loss's ``state``). It only speeds
        up sorting: the gradients are the same whatever it holds."""
        last = getattr(self, "_last_ranking", None)
        if last is None or last.shape[0] != n_rows:
            last = self._last_ranking = np.full(n_rows, -1, dtype=np.int32)
        return last

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        weighted = sample_weight is not None
        w = sample_weight if weighted else np.empty(1, dtype=np.float64)
        n_pair = 0 if self.num_pair_per_sample is None else int(self.num_pair_per_sample)
        # a fresh, thread-independent seed per round for the pair sampling
        seed = (self.seed * 1_000_003 + self._round * 7_919 + 1) % (1 << 63)
        self._round += 1
        _ranking.ranking_grad(y, raw, w, weighted, self.group_ptr, grad, hess, n_threads,
                              _ranking.KINDS[self.kind], self.truncation_level, self.exp_gain,
                              self.norm, n_pair, seed, self._last_ranking_of(y.shape[0]),
                              self.group_ids)

    def loss(self, y, raw, sample_weight=None):
        """RankNet loss ``log(1 + exp(-(s_i - s_j)))`` averaged over all pairs ``y_i > y_j``."""
        total, count = 0.0, 0
        for lo, hi in zip(self.group_ptr[:-1], self.group_ptr[1:]):
            yy, s = y[lo:hi], raw[lo:hi, 0]
            # blocks of rows against the whole query: memory O(block x query size),
            # not the square of a large query's size
            for b in range(0, hi - lo, _PAIR_BLOCK):
                yb, sb = yy[b:b + _PAIR_BLOCK, None], s[b:b + _PAIR_BLOCK, None]
                better = yb > yy[None, :]
                total += float(np.logaddexp(0.0, s[None, :] - sb)[better].sum())
                count += int(better.sum())
        return total / count if count else 0.0

    def transform(self, raw):
        return raw[:, 0]


# rows of a query whose pairs the logged ranking loss takes at once
_PAIR_BLOCK = 512

RANKING_OBJECTIVES = ("rank:ndcg", "rank:pairwise", "rank:map")

REGRESSION_OBJECTIVES = ("squared_error", "absolute_error", "huber", "quantile", "poisson",
                         "gamma", "tweedie", "cox", "aft")
