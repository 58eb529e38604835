"""The survival losses: Cox's proportional hazards (the partial likelihood over
risk sets, in NumPy: one sort and cumulative sums) and the accelerated failure
time model (``log T = F + sigma Z``, Z normal, logistic or extreme)."""
import numpy as np
from scipy.special import expit, ndtr

from .objectives import Objective


def _risk_sets(y, raw, sample_weight):
    """Rows sorted by time (|y|), with each row's weight, event flag, raw score F,
    ``exp(F - shift)`` and the sum of ``w exp(F - shift)`` over the rows still at risk
    at its time (``shift`` = max F: the ratios of the two do not change with it), and
    the last sorted position of the rows that share its time."""
    t = np.abs(y)
    order = np.argsort(t, kind="stable")
    ts = t[order]
    w = np.ones(y.shape[0]) if sample_weight is None else sample_weight[order]
    f = raw[order]
    e = np.exp(f - f.max())
    at_risk = np.cumsum((w * e)[::-1])[::-1][np.searchsorted(ts, ts, side="left")]
    return order, w, y[order] > 0, f, e, at_risk, np.searchsorted(ts, ts, side="right") - 1


def cox_gradient(y, raw, sample_weight=None):
    """Gradient and hessian of the negative log partial likelihood of the Cox model
    with Breslow's method for ties,
    ``L = -sum_k d_k w_k (F_k - log sum_{j: t_j >= t_k} w_j exp(F_j))``
    (``t = |y|``, ``d = y > 0``): row i gets ``w_i (e_i r_i - d_i)`` and
    ``w_i e_i r_i - (w_i e_i)**2 s_i`` with ``e = exp(F)``, ``r_i`` and ``s_i`` the
    sums of ``w_k / D_k`` and ``w_k / D_k**2`` over the events at or before ``t_i``,
    ``D_k`` the weighted ``e`` of the rows still at risk at ``t_k``."""
    order, w, event, f, e, at_risk, last = _risk_sets(y, raw, sample_weight)
    r = np.cumsum(np.where(event, w / at_risk, 0.0))[last]
    s = np.cumsum(np.where(event, w / at_risk ** 2, 0.0))[last]
    grad, hess = np.empty_like(f), np.empty_like(f)
    grad[order] = w * (e * r - event)
    hess[order] = w * e * r - (w * e) ** 2 * s
    return grad, hess


def cox_nloglik(y, raw, sample_weight=None):
    """The negative log partial likelihood (Breslow) per unit of event weight."""
    _, w, event, f, _, at_risk, _ = _risk_sets(y, raw, sample_weight)
    log_risk = np.log(at_risk) + f.max()
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

    def check_target(self, y):   # (also an eval set's: Objective.check_eval_target)
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
