"""Losses: gradient and hessian (kernels in _objectives.pyx), link, starting value.

Each objective maps the labels ``y`` (float64, classes already encoded as
0..K-1) and the raw prediction ``F`` of shape (n_rows, n_outputs) to per-row
gradients and hessians, gives the starting value ``F0 = argmin_c sum_i w_i
L(y_i, c)`` and turns raw predictions into the user's scale. Losses whose
hessian says nothing about the leaf's optimum (absolute error, quantile, Huber)
re-estimate each leaf on its rows' residuals after the tree is grown
(Friedman's TreeBoost line search per region): ``refit_leaves``.
"""
import inspect

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, softmax

from ..kernels import _objectives  # type: ignore[attr-defined]

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


def huber_location(y, w, delta, sum_shards=np.asarray, largest=np.asarray):
    """Huber's starting value: the root of the decreasing psi(c) = sum w clip(y - c,
    +-delta) (``w`` None: 1) between the smallest and largest y of weight > 0. Over
    the rows of several shards (a level-wise fit), ``sum_shards(array)`` and
    ``largest(array)`` give its sum and its largest values over every shard (every
    shard searches alike: the sums are the same on each)."""
    w = np.ones_like(y) if w is None else w
    keep = w > 0
    y, w = y[keep], w[keep]
    ends = largest([-y.min() if y.size else -np.inf, y.max() if y.size else -np.inf])
    lo, hi = float(-ends[0]), float(ends[1])

    def psi(c):
        return float(sum_shards([np.sum(w * np.clip(y - c, -delta, delta))])[0])

    if lo == hi or psi(lo) <= 0.0:
        return lo
    if psi(hi) >= 0.0:
        return hi
    return brentq(psi, lo, hi, xtol=1e-12, rtol=1e-15)


# attributes of a loss that hold the training rows' data, then its working buffers
# (none of its ``state``; ``fit_done`` drops the buffers)
_NOT_STATE = ("group_ptr", "group_ids", "_last_ranking")


class Objective:
    """Interface of a loss; see the subclasses."""

    name: str | None = None
    task = "regression"    # what eval metrics apply: regression, binary, multiclass, ranking
    n_outputs = 1
    default_metric = "rmse"
    needs_refit = False
    infinite_y = False     # labels may hold inf (an interval without upper bound)
    summable_start = False  # F0 from sums over parts of the rows (start_sums)
    y_columns = 0          # the columns of a 2-D y (0: y is 1-D)
    _kernel_args: tuple = ()

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
        before the tree (or NaN). The losses that refit to quantiles also take
        ``quantile`` (as ``grouped_weighted_quantile``) and ``sum_shards(array)``: over
        the rows of several shards, their selection and sum (``RowShard._refit``)."""
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
    _kernel = staticmethod(_objectives.huber_grad)
    _kernel_args = (np.inf,)   # Huber's gradient without a clip

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


class _NonNegativeTarget:
    """y >= 0, with at least one y > 0 in training (the log of y's mean starts it)."""

    def check_target(self, y):
        if np.any(y < 0) or not np.any(y > 0):
            raise ValueError(f"objective={self.name!r} needs y >= 0 with at least one y > 0")

    def check_eval_target(self, y):
        if np.any(y < 0):
            raise ValueError(f"objective={self.name!r} needs y >= 0")


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

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0,
                     quantile=grouped_weighted_quantile, sum_shards=np.asarray):
        return quantile(y - raw_before, sample_weight, leaf_of_row, n_leaves, self.alpha)

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

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0,
                     quantile=grouped_weighted_quantile, sum_shards=np.asarray):
        return quantile(y - raw_before, sample_weight, leaf_of_row, n_leaves,
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

    def init_raw(self, y, sample_weight):
        return np.array([huber_location(y, sample_weight, self.delta)])

    def loss(self, y, raw, sample_weight=None):
        a = np.abs(y - raw[:, 0])
        return float(np.average(np.where(a <= self.delta, 0.5 * a * a,
                                         self.delta * (a - 0.5 * self.delta)),
                                weights=sample_weight))

    def refit_leaves(self, y, raw_before, sample_weight, leaf_of_row, n_leaves, output=0,
                     quantile=grouped_weighted_quantile, sum_shards=np.asarray):
        # Friedman's M-step: the median, then the mean of the clipped deviations from it
        r = y - raw_before
        med = quantile(r, sample_weight, leaf_of_row, n_leaves, 0.5)
        w = np.ones_like(r) if sample_weight is None else sample_weight
        dev = np.clip(r - med[leaf_of_row], -self.delta, self.delta)
        num, den = sum_shards([np.bincount(leaf_of_row, weights=w * dev, minlength=n_leaves),
                               np.bincount(leaf_of_row, weights=w, minlength=n_leaves)])
        return med + np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    def transform(self, raw):
        return raw[:, 0]


class Poisson(_NonNegativeTarget, _LogLink, Objective):
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


class Tweedie(_NonNegativeTarget, _LogLink, Objective):
    """Tweedie deviance with log link and variance power ``p`` in (1, 2), y >= 0."""

    name = "tweedie"
    default_metric = "tweedie-deviance"
    _kernel = staticmethod(_objectives.tweedie_grad)

    def __init__(self, power=1.5):
        self.power = float(power)
        self._kernel_args = (self.power,)

    def loss(self, y, raw, sample_weight=None):
        p, f = self.power, raw[:, 0]
        return float(np.average(-y * np.exp((1 - p) * f) / (1 - p) + np.exp((2 - p) * f) / (2 - p),
                                weights=sample_weight))


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


RANKING_OBJECTIVES = ("rank:ndcg", "rank:pairwise", "rank:map")

REGRESSION_OBJECTIVES = ("squared_error", "absolute_error", "huber", "quantile", "poisson",
                         "gamma", "tweedie", "cox", "aft")
