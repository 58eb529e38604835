"""Every metric against scikit-learn's (or SciPy's) implementation."""
import numpy as np
import pytest
from scipy.stats import poisson
from sklearn import metrics as skm

from gbtree.boosting.metrics import METRIC_NAMES, get_metric
from gbtree.boosting.objectives import Quantile, Tweedie


def _weights(rng, n, weighted):
    return rng.uniform(0.1, 3, size=n) if weighted else None


@pytest.mark.parametrize("weighted", [False, True])
def test_regression_metrics(rng, weighted):
    n = 400
    y = rng.gamma(2.0, 2.0, size=n)
    pred = y * rng.uniform(0.5, 1.5, size=n) + 0.1
    w = _weights(rng, n, weighted)
    expected = {
        "rmse": skm.root_mean_squared_error(y, pred, sample_weight=w),
        "mae": skm.mean_absolute_error(y, pred, sample_weight=w),
        "mape": skm.mean_absolute_percentage_error(y, pred, sample_weight=w),
        "r2": skm.r2_score(y, pred, sample_weight=w),
        "gamma-deviance": skm.mean_gamma_deviance(y, pred, sample_weight=w),
    }
    for name, value in expected.items():
        assert get_metric(name, None)(y, pred, w) == pytest.approx(value, rel=1e-10), name
    counts = rng.poisson(pred)
    nll = -np.average(poisson.logpmf(counts, pred), weights=w)
    assert get_metric("poisson-nloglik", None)(counts, pred, w) == pytest.approx(nll, rel=1e-10)
    tweedie = skm.mean_tweedie_deviance(counts, pred, sample_weight=w, power=1.3)
    assert get_metric("tweedie-deviance", Tweedie(1.3))(counts, pred, w) == pytest.approx(tweedie)
    pinball = skm.mean_pinball_loss(y, pred, sample_weight=w, alpha=0.8)
    assert get_metric("quantile", Quantile(0.8))(y, pred, w) == pytest.approx(pinball)


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_metrics(rng, weighted):
    n = 500
    y = rng.randint(0, 2, size=n).astype(float)
    p = np.clip(0.3 * y + rng.uniform(0, 0.7, size=n), 1e-6, 1 - 1e-6)
    p[:50] = np.round(p[:50], 1)   # ties for the AUC
    proba = np.column_stack([1 - p, p])
    w = _weights(rng, n, weighted)
    assert get_metric("logloss", None)(y, proba, w) == pytest.approx(skm.log_loss(y, p, sample_weight=w))
    assert get_metric("error", None)(y, proba, w) == pytest.approx(
        1 - skm.accuracy_score(y, p > 0.5, sample_weight=w))
    assert get_metric("auc", None)(y, proba, w) == pytest.approx(
        skm.roc_auc_score(y, p, sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_metrics(rng, weighted):
    n, K = 600, 4
    y = rng.randint(0, K, size=n).astype(float)
    logits = rng.normal(size=(n, K)) + 1.5 * np.eye(K)[y.astype(int)]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    w = _weights(rng, n, weighted)
    assert get_metric("mlogloss", None)(y, proba, w) == pytest.approx(
        skm.log_loss(y, proba, sample_weight=w, labels=range(K)))
    assert get_metric("merror", None)(y, proba, w) == pytest.approx(
        1 - skm.accuracy_score(y, proba.argmax(axis=1), sample_weight=w))
    if not weighted:   # scikit-learn's one-vs-rest AUC takes no sample weights in this mode
        assert get_metric("auc", None)(y, proba, w) == pytest.approx(
            skm.roc_auc_score(y, proba, multi_class="ovr", average="macro"))


def test_metric_names_and_callables():
    assert set(METRIC_NAMES) >= {"rmse", "mae", "mape", "r2", "logloss", "error", "auc", "mlogloss",
                                 "merror", "poisson-nloglik", "gamma-deviance", "tweedie-deviance",
                                 "quantile"}
    assert get_metric("auc", None).greater_is_better and not get_metric("rmse", None).greater_is_better

    def my_metric(y, pred, sample_weight=None):
        return float(np.max(np.abs(y - pred)))
    m = get_metric(my_metric, None)
    assert m.name == "my_metric" and m(np.array([1.0, 2.0]), np.array([1.5, 0.0])) == 2.0
    with pytest.raises(ValueError, match="eval_metric"):
        get_metric("accuracy", None)
