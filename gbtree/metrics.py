"""Evaluation metrics for eval sets and early stopping.

Every metric takes ``(y, pred, sample_weight)`` where ``pred`` is on the
user's scale: predictions for regression (the mean, for log-link losses),
class probabilities of shape (n, K) for classification. Names follow XGBoost.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import gammaln, xlogy

_EPS = 1e-15


@dataclass(frozen=True)
class Metric:
    """A named metric; ``greater_is_better`` decides what early stopping keeps."""

    name: str
    func: Callable
    greater_is_better: bool = False

    def __call__(self, y, pred, sample_weight=None):
        return float(self.func(y, pred, sample_weight))


def _avg(values, w):
    return np.average(values, weights=w)


def _positive_proba(pred):
    return pred[:, 1] if pred.ndim == 2 else pred


def rmse(y, pred, w=None):
    return np.sqrt(_avg((y - pred) ** 2, w))


def mae(y, pred, w=None):
    return _avg(np.abs(y - pred), w)


def mape(y, pred, w=None):
    # scikit-learn's convention: |y - pred| / max(|y|, eps)
    return _avg(np.abs(y - pred) / np.maximum(np.abs(y), np.finfo(np.float64).eps), w)


def r2(y, pred, w=None):
    mean = _avg(y, w)
    ss_res = np.sum((y - pred) ** 2 * (1 if w is None else w))
    ss_tot = np.sum((y - mean) ** 2 * (1 if w is None else w))
    return 1 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)


def logloss(y, pred, w=None):
    p = np.clip(_positive_proba(pred), _EPS, 1 - _EPS)
    return _avg(-(y * np.log(p) + (1 - y) * np.log(1 - p)), w)


def error(y, pred, w=None):
    return _avg((_positive_proba(pred) > 0.5) != (y == 1), w)


def mlogloss(y, pred, w=None):
    p = np.clip(pred[np.arange(len(y)), y.astype(np.intp)], _EPS, 1)
    return _avg(-np.log(p), w)


def merror(y, pred, w=None):
    return _avg(np.argmax(pred, axis=1) != y.astype(np.intp), w)


def _binary_auc(y, score, w):
    """Weighted ROC AUC with ties counted half (the Mann-Whitney statistic)."""
    w = np.ones_like(score) if w is None else w
    order = np.argsort(score, kind="mergesort")
    s, yy, ww = score[order], y[order], w[order]
    pos_w, neg_w = ww * (yy == 1), ww * (yy != 1)
    # group equal scores
    boundaries = np.flatnonzero(np.diff(s)) + 1
    starts = np.r_[0, boundaries]
    pos = np.add.reduceat(pos_w, starts)
    neg = np.add.reduceat(neg_w, starts)
    neg_below = np.cumsum(neg) - neg
    total_pos, total_neg = pos.sum(), neg.sum()
    if total_pos == 0 or total_neg == 0:
        return np.nan
    return float(np.sum(pos * (neg_below + 0.5 * neg)) / (total_pos * total_neg))


def auc(y, pred, w=None):
    if pred.ndim == 1 or pred.shape[1] <= 2:
        return _binary_auc(y, _positive_proba(pred), w)
    # one-vs-rest, macro average (scikit-learn's roc_auc_score(multi_class="ovr"))
    return np.mean([_binary_auc((y == k).astype(float), pred[:, k], w)
                    for k in range(pred.shape[1])])


def poisson_nloglik(y, pred, w=None):
    mu = np.maximum(pred, _EPS)
    return _avg(mu - xlogy(y, mu) + gammaln(y + 1), w)


def gamma_deviance(y, pred, w=None):
    mu = np.maximum(pred, _EPS)
    return _avg(2 * (np.log(mu / y) + y / mu - 1), w)


def tweedie_deviance(power):
    def deviance(y, pred, w=None):
        p, mu = power, np.maximum(pred, _EPS)
        dev = 2 * (np.power(np.maximum(y, 0), 2 - p) / ((1 - p) * (2 - p))
                   - y * np.power(mu, 1 - p) / (1 - p) + np.power(mu, 2 - p) / (2 - p))
        return _avg(dev, w)
    return deviance


def quantile_loss(alpha):
    def pinball(y, pred, w=None):
        d = y - pred
        return _avg(np.where(d >= 0, alpha * d, (alpha - 1) * d), w)
    return pinball


_FIXED = {
    "rmse": (rmse, False), "mae": (mae, False), "mape": (mape, False), "r2": (r2, True),
    "logloss": (logloss, False), "error": (error, False), "auc": (auc, True),
    "mlogloss": (mlogloss, False), "merror": (merror, False),
    "poisson-nloglik": (poisson_nloglik, False), "gamma-deviance": (gamma_deviance, False),
}
METRIC_NAMES = tuple(_FIXED) + ("tweedie-deviance", "quantile")


def get_metric(spec, objective):
    """A ``Metric`` from a name or a callable.

    ``tweedie-deviance`` takes its power and ``quantile`` its alpha from the
    objective when it has them (else 1.5 and 0.5). A callable
    ``f(y_true, y_pred[, sample_weight]) -> float`` is minimised unless it
    has an attribute ``greater_is_better = True``.
    """
    if callable(spec):
        name = getattr(spec, "__name__", "custom")

        def call(y, pred, w):
            return spec(y, pred) if w is None else spec(y, pred, sample_weight=w)
        return Metric(name, call, bool(getattr(spec, "greater_is_better", False)))
    if spec in _FIXED:
        func, greater = _FIXED[spec]
        return Metric(spec, func, greater)
    if spec == "tweedie-deviance":
        return Metric(spec, tweedie_deviance(getattr(objective, "power", 1.5)))
    if spec == "quantile":
        return Metric(spec, quantile_loss(getattr(objective, "alpha", 0.5)))
    raise ValueError(f"eval_metric must be a callable or one of {METRIC_NAMES}, got {spec!r}")
