"""Evaluation metrics for eval sets and early stopping.

Every metric takes ``(y, pred, sample_weight)`` where ``pred`` is on the
user's scale: predictions for regression (the mean, for log-link losses),
class probabilities of shape (n, K) for classification. Names follow XGBoost.
Ranking metrics (``ndcg@k``, ``map@k``, ``ndcg``, ``map``) also need the query
groups: ``group_ptr``, the ``n_groups + 1`` row offsets of rows sorted by query
(``Metric.needs_group``); their weight is per query (the weight of its rows).
"""
import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import gammaln, xlogy

from sklearn.utils.validation import _check_sample_weight

from . import survival
from .objectives import read_only
from ..data.queries import _check_group_weights, _take, query_groups
from ..data.validation import _check_number

_EPS = 1e-15


@dataclass(frozen=True)
class Metric:
    """A named metric; ``greater_is_better`` decides what early stopping keeps."""

    name: str
    func: Callable
    greater_is_better: bool = False
    needs_group: bool = False
    tasks: frozenset | None = None   # the model tasks it applies to (None: any, for callables)

    def __call__(self, y, pred, sample_weight=None, group_ptr=None):
        if not self.needs_group:
            return float(self.func(y, pred, sample_weight))
        if group_ptr is None:
            raise ValueError(f"the metric {self.name!r} needs query groups (GBTRanker with "
                             f"qid or group for every eval set)")
        return float(self.func(y, pred, sample_weight, group_ptr))


def _weight_argument(func):
    """How a metric ``func`` takes the weights: "keyword" (a ``sample_weight``
    parameter), "positional" (a third positional one), or None: ``f(y_true, y_pred)``
    is evaluated without weights."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return "keyword"
    if any(p.name == "sample_weight" and p.kind != p.POSITIONAL_ONLY for p in params) or any(
            p.kind == p.VAR_KEYWORD for p in params):
        return "keyword"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                                  p.VAR_POSITIONAL)]
    return "positional" if len(positional) >= 3 or any(
        p.kind == p.VAR_POSITIONAL for p in positional) else None


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


def cox_nloglik(y, pred, w=None):
    """The Cox model's negative log partial likelihood (Breslow) per unit of event
    weight, of hazard ratios ``pred`` for labels y (time, negative when censored)."""
    return survival.cox_nloglik(y, np.log(np.maximum(pred, _EPS)), w)


def aft_nloglik(distribution, sigma):
    """The AFT model's mean negative log-likelihood of predicted times ``pred`` for
    interval labels y (n, 2)."""
    def nloglik(y, pred, w=None):
        raw = np.log(np.maximum(pred, _EPS))
        return _avg(survival.aft_nloglik(y, raw, distribution, sigma), w)
    return nloglik


def concordance_index(y, pred, w=None):
    """Harrell's concordance index of risk scores ``pred`` (higher: the event comes
    sooner) for survival labels y (time, negative when censored).

    A pair is comparable when the row with the earlier time had its event (an event
    is also compared with the rows censored at its own time); it is concordant when
    that row has the higher score, and counts one half when the scores tie. Pairs
    weigh ``w_i * w_j``. 0.5 when no pair is comparable."""
    t, event = np.abs(y), y > 0
    w = np.ones(t.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    _, rank = np.unique(pred, return_inverse=True)
    size = int(rank.max()) + 2 if rank.size else 1
    fenwick = np.zeros(size)      # weights of the rows of later times, by score rank

    def below(r):                 # total weight of ranks < r
        total, i = 0.0, r
        while i > 0:
            total += fenwick[i]
            i -= i & -i
        return total

    def insert(r, weight):
        i = r + 1
        while i < size:
            fenwick[i] += weight
            i += i & -i

    order = np.argsort(-t, kind="stable")
    concordant = tied = comparable = 0.0
    lo = 0
    while lo < order.shape[0]:
        hi = lo
        while hi < order.shape[0] and t[order[hi]] == t[order[lo]]:
            hi += 1
        group = order[lo:hi]
        for i in group[~event[group]]:
            insert(rank[i], w[i])
        everyone = below(size - 1)
        for i in group[event[group]]:
            lower, upto = below(rank[i]), below(rank[i] + 1)
            concordant += w[i] * lower
            tied += w[i] * (upto - lower)
            comparable += w[i] * everyone
        for i in group[event[group]]:
            insert(rank[i], w[i])
        lo = hi
    return float((concordant + 0.5 * tied) / comparable) if comparable > 0 else 0.5


def quantile_loss(alpha):
    """The pinball loss at ``alpha``; for a tuple of alphas and predictions of one
    column per alpha, the mean of the columns' losses."""
    def pinball(y, pred, w=None):
        if np.ndim(pred) == 2:
            return float(np.mean([quantile_loss(a)(y, pred[:, k], w)
                                  for k, a in enumerate(alpha)]))
        d = y - pred
        return _avg(np.where(d >= 0, alpha * d, (alpha - 1) * d), w)
    return pinball


# ---------------------------------------------------------------- ranking
def _ranking_arrays(y, pred, group_ptr):
    """``(y, pred, group_ptr, group of each row, number of groups)`` in the types the
    per-query metrics compute with."""
    group_ptr = np.asarray(group_ptr, dtype=np.intp)
    sizes = np.diff(group_ptr)
    return (np.asarray(y, dtype=np.float64), np.asarray(pred, dtype=np.float64), group_ptr,
            np.repeat(np.arange(sizes.size), sizes), sizes.size)


def _query_mean(values, w, group_ptr):
    """Mean of per-query values, weighted by each query's (first row's) weight."""
    qw = None if w is None else w[group_ptr[:-1]]
    return float(np.average(values, weights=qw))


def _positions(gid, group_ptr, order):
    """0-based position within its group of each row of ``order`` (sorted by group)."""
    return np.arange(order.size) - group_ptr[gid[order]]


def ndcg_per_query(y, pred, group_ptr, k=None, exp_gain=True):
    """NDCG@k of every query (k=None: every position).

    DCG@k = sum over the top k positions of gain / log2(position + 2), gain
    ``2^y - 1`` (``exp_gain``) or ``y``. Documents with tied scores share
    their positions: each gets the mean discount of the tied block
    (scikit-learn's ``ndcg_score``, so a constant scorer is not rewarded by the
    row order). A query without relevant documents (ideal DCG 0) scores 1.
    """
    y, pred, group_ptr, gid, n_groups = _ranking_arrays(y, pred, group_ptr)
    gain = np.exp2(y) - 1.0 if exp_gain else y
    kk = np.inf if k is None else k
    # actual ranking with tie-averaged discounts
    order = np.lexsort((-pred, gid))
    pos = _positions(gid, group_ptr, order)
    disc = np.where(pos < kk, 1.0 / np.log2(pos + 2.0), 0.0)
    g_sorted, p_sorted = gid[order], pred[order]
    new_block = np.r_[True, (g_sorted[1:] != g_sorted[:-1]) | (p_sorted[1:] != p_sorted[:-1])]
    block = np.cumsum(new_block) - 1
    n_blocks = block[-1] + 1 if block.size else 0
    block_gain = np.bincount(block, weights=gain[order], minlength=n_blocks)
    block_disc = np.bincount(block, weights=disc, minlength=n_blocks)
    block_size = np.bincount(block, minlength=n_blocks)
    block_group = g_sorted[new_block]
    dcg = np.bincount(block_group, weights=block_gain / block_size * block_disc,
                      minlength=n_groups)
    # ideal ranking
    ideal = np.lexsort((-gain, gid))
    ipos = _positions(gid, group_ptr, ideal)
    idisc = np.where(ipos < kk, 1.0 / np.log2(ipos + 2.0), 0.0)
    idcg = np.bincount(gid[ideal], weights=gain[ideal] * idisc, minlength=n_groups)
    out = np.ones(n_groups)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def map_per_query(y, pred, group_ptr, k=None):
    """AP@k of every query (k=None: every position); relevant means ``y > 0``.

    ``AP@k = sum_{p <= k, doc at p relevant} precision@p / min(k, R)``, R the
    query's relevant documents. Documents with tied scores are ordered
    pessimistically (irrelevant ones first). A query without relevant
    documents scores 1.
    """
    y, pred, group_ptr, gid, n_groups = _ranking_arrays(y, pred, group_ptr)
    rel = (y > 0).astype(np.float64)
    kk = np.inf if k is None else k
    order = np.lexsort((rel, -pred, gid))
    pos = _positions(gid, group_ptr, order)
    r_sorted = rel[order]
    cum = np.cumsum(r_sorted)
    before = np.r_[0.0, cum][group_ptr[:-1]]
    hits = cum - before[gid[order]]
    contrib = np.where(pos < kk, r_sorted * hits / (pos + 1.0), 0.0)
    ap_sum = np.bincount(gid[order], weights=contrib, minlength=n_groups)
    n_rel = np.bincount(gid, weights=rel, minlength=n_groups)
    denom = np.minimum(n_rel, kk)
    out = np.ones(n_groups)
    np.divide(ap_sum, denom, out=out, where=n_rel > 0)
    return out


def ndcg_metric(k=None, exp_gain=True):
    def ndcg(y, pred, w, group_ptr):
        return _query_mean(ndcg_per_query(y, pred, group_ptr, k, exp_gain), w, group_ptr)
    return ndcg


def map_metric(k=None):
    def mean_ap(y, pred, w, group_ptr):
        return _query_mean(map_per_query(y, pred, group_ptr, k), w, group_ptr)
    return mean_ap


def _parse_ranking_metric(spec):
    """``("ndcg" | "map", k or None)`` for a ranking metric name, else None."""
    if not isinstance(spec, str):
        return None
    base, at, cut = spec.partition("@")
    if base not in ("ndcg", "map"):
        return None
    if not at:
        return base, None
    if not (cut.isascii() and cut.isdigit()) or int(cut) < 1:   # (not "²": int() fails)
        raise ValueError(f"eval_metric {spec!r}: the cut-off after '@' must be a positive "
                         f"integer")
    return base, int(cut)


# metrics that a model of several targets reports as the mean over its columns
_PER_COLUMN = ("rmse", "mae", "mape", "r2")


def _per_column(func):
    def mean_over_columns(y, pred, w=None):
        return float(np.mean([func(y[:, k], pred[:, k], w) for k in range(y.shape[1])]))
    return mean_over_columns


_REGRESSION = frozenset({"regression", "ranking"})
_BINARY, _MULTICLASS = frozenset({"binary"}), frozenset({"multiclass"})
_SURVIVAL = frozenset({"survival"})
# name: (function, greater_is_better, the model tasks it applies to)
_FIXED = {
    "rmse": (rmse, False, _REGRESSION), "mae": (mae, False, _REGRESSION),
    "mape": (mape, False, _REGRESSION), "r2": (r2, True, _REGRESSION),
    "logloss": (logloss, False, _BINARY), "error": (error, False, _BINARY),
    "auc": (auc, True, _BINARY | _MULTICLASS),
    "mlogloss": (mlogloss, False, _MULTICLASS), "merror": (merror, False, _MULTICLASS),
    "poisson-nloglik": (poisson_nloglik, False, _REGRESSION),
    "gamma-deviance": (gamma_deviance, False, _REGRESSION),
    "cox-nloglik": (cox_nloglik, False, _SURVIVAL),
    "concordance": (concordance_index, True, _SURVIVAL),
}
METRIC_NAMES = tuple(_FIXED) + ("tweedie-deviance", "quantile", "aft-nloglik", "ndcg", "ndcg@k",
                                 "map", "map@k")


def get_metric(spec, objective):
    """A ``Metric`` from a name or a callable.

    ``tweedie-deviance`` takes its power and ``quantile`` its alpha from the
    objective when it has them (else 1.5 and 0.5); ``ndcg`` and ``ndcg@k`` take
    the gain (exponential unless the objective says ``exp_gain=False``). A callable
    ``f(y_true, y_pred[, sample_weight]) -> float`` is minimised unless it
    has an attribute ``greater_is_better = True``.
    """
    if callable(spec):
        name = getattr(spec, "__name__", "custom")
        weight_as = _weight_argument(spec)

        def call(y, pred, w):
            # read-only views: the eval set's labels and running predictions are not
            # the metric's to change
            args = (read_only(np.asarray(y)), read_only(np.asarray(pred)))
            if w is None or weight_as is None:
                value = spec(*args)
            elif weight_as == "keyword":
                value = spec(*args, sample_weight=read_only(np.asarray(w)))
            else:
                value = spec(*args, read_only(np.asarray(w)))
            try:
                return float(value)
            except (TypeError, ValueError):
                raise TypeError(f"the eval_metric {name!r} must return a number, got "
                                f"{type(value).__name__}") from None
        return Metric(name, call, bool(getattr(spec, "greater_is_better", False)))
    if not isinstance(spec, str):   # (a list is unhashable: "in _FIXED" would fail)
        raise ValueError(f"eval_metric must be a callable or one of {METRIC_NAMES}, "
                         f"got {spec!r}")
    if spec in _FIXED:
        func, greater, tasks = _FIXED[spec]
        if spec in _PER_COLUMN and getattr(objective, "task", None) == "multi-output":
            return Metric(spec, _per_column(func), greater, tasks=frozenset({"multi-output"}))
        return Metric(spec, func, greater, tasks=tasks)
    if spec == "aft-nloglik":
        return Metric(spec, aft_nloglik(getattr(objective, "distribution", "normal"),
                                        getattr(objective, "sigma", 1.0)),
                      tasks=frozenset({"survival-aft"}))
    if spec == "tweedie-deviance":
        return Metric(spec, tweedie_deviance(getattr(objective, "power", 1.5)), tasks=_REGRESSION)
    if spec == "quantile":
        alpha = getattr(objective, "alphas", getattr(objective, "alpha", 0.5))
        return Metric(spec, quantile_loss(alpha), tasks=_REGRESSION | {"multi-quantile"})
    ranking = _parse_ranking_metric(spec)
    if ranking is not None:
        base, k = ranking
        func = (ndcg_metric(k, getattr(objective, "exp_gain", True)) if base == "ndcg"
                else map_metric(k))
        return Metric(spec, func, greater_is_better=True, needs_group=True,
                      tasks=frozenset({"ranking"}))
    raise ValueError(f"eval_metric must be a callable or one of {METRIC_NAMES}, got {spec!r}")


def ndcg_at_k(y_true, y_score, *, qid=None, group=None, sample_weight=None, k=10,
              exp_gain=True):
    """Mean NDCG@k over the queries given by ``qid`` (any order) or ``group`` (sizes).

    Gain ``2^y - 1`` (``exp_gain``) or ``y``; documents with tied scores share
    their positions (mean discount); a query without relevant documents
    scores 1. ``sample_weight`` (equal within a query) weighs the queries.
    """
    _check_number("k", k, "int", 1)
    y_true = np.asarray(y_true, dtype=np.float64)
    y_score = np.asarray(y_score, dtype=np.float64)
    if y_true.shape != y_score.shape or y_true.ndim != 1:
        raise ValueError("y_true and y_score must be 1-D arrays of the same length")
    if y_true.shape[0] == 0:
        raise ValueError("ndcg_at_k: y_true is empty")
    if not np.all(np.isfinite(y_true)):
        raise ValueError("ndcg_at_k: y_true (relevance) must be finite")
    if np.any(y_true < 0):   # a negative gain can give NDCG > 1 (or 1 for a wrong order)
        raise ValueError(f"ndcg_at_k: y_true (relevance) must be >= 0, got {y_true.min():g}")
    if exp_gain and np.any(y_true > 1023):
        raise ValueError(f"ndcg_at_k: with exp_gain=True the gain 2**y - 1 overflows for y > "
                         f"1023 (the largest y is {y_true.max():g}); pass exp_gain=False "
                         f"(GBTRanker.score: set ndcg_exp_gain=False)")
    if np.any(np.isnan(y_score)):
        raise ValueError("ndcg_at_k: y_score contains NaN")
    order, ptr = query_groups(y_true.shape[0], group, qid, "ndcg_at_k")
    if sample_weight is not None:
        try:
            sample_weight = _check_sample_weight(sample_weight, y_true, dtype=np.float64,
                                                 ensure_non_negative=True)
        except ValueError as exc:
            raise ValueError(f"ndcg_at_k: {exc}") from None
        if not np.any(sample_weight > 0):   # (not refused by every scikit-learn version)
            raise ValueError("ndcg_at_k: sample_weight is 0 everywhere")
    w = None if sample_weight is None else _check_group_weights(
        sample_weight[order if order is not None else slice(None)], ptr, "ndcg_at_k")
    per_query = ndcg_per_query(_take(y_true, order), _take(y_score, order), ptr, k, exp_gain)
    return _query_mean(per_query, w, ptr)


def eval_metrics(spec, objective, estimator="the estimator"):
    """The ``Metric`` list of an ``eval_metric`` value (None: the objective's own), each
    one checked to apply to the objective's task."""
    given = spec
    if spec is None:
        spec = [objective.default_metric]
    elif isinstance(spec, str) or callable(spec):
        spec = [spec]
    elif not isinstance(spec, (list, tuple)) or not spec:
        raise ValueError(f"eval_metric must be a name, a callable, a non-empty list of "
                         f"them or None, got {given!r}")
    metrics = [get_metric(m, objective) for m in spec]
    for m in metrics:
        if m.needs_group and not getattr(objective, "needs_groups", False):
            raise ValueError(f"eval_metric {m.name!r} is a ranking metric: it needs query "
                             f"groups, which only GBTRanker has")
        task = objective.task
        if m.tasks is not None and task not in m.tasks:
            raise ValueError(f"eval_metric {m.name!r} does not apply to a {task} model "
                             f"({estimator}); it is for {' / '.join(sorted(m.tasks))} models")
    if len({m.name for m in metrics}) != len(metrics):
        raise ValueError(f"eval_metric has the same metric twice: {given!r}")
    return metrics
