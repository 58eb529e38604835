"""objective="quantile" with several quantile_alpha: one model, quantiles that never cross."""
import numpy as np
import pytest

import gbtree
from gbtree import GBTRegressor
from gbtree.boosting.metrics import quantile_loss


def heteroscedastic(seed, n):
    """y = x0 + (0.2 + |x1|) * noise: quantiles that fan out with |x1|."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    return X, X[:, 0] + (0.2 + np.abs(X[:, 1])) * rng.standard_normal(n)


ALPHAS = [0.05, 0.25, 0.5, 0.75, 0.95]
PARAMS = dict(n_estimators=150, learning_rate=0.1, max_depth=4, min_child_weight=5.0)


def test_one_model_of_several_quantiles_never_crosses_and_loses_nothing():
    X, y = heteroscedastic(0, 8000)
    Xt, yt = heteroscedastic(1, 8000)
    model = GBTRegressor(objective="quantile", quantile_alpha=ALPHAS, **PARAMS).fit(X, y)
    pred = model.predict(Xt)
    assert pred.shape == (len(yt), len(ALPHAS))
    assert np.all(np.diff(pred, axis=1) >= 0)
    for k, a in enumerate(ALPHAS):
        alone = GBTRegressor(objective="quantile", quantile_alpha=a, **PARAMS).fit(X, y)
        ours, single = (quantile_loss(a)(yt, pred[:, k]),
                        quantile_loss(a)(yt, alone.predict(Xt)))
        assert ours <= single * 1.01, (a, ours, single)
        # each column covers its share of the held-out rows
        assert abs(np.mean(yt <= pred[:, k]) - a) < 0.03


def test_sorting_is_what_keeps_close_quantiles_from_crossing():
    # with nearly equal alphas the outputs' raw values cross on many rows; predict
    # sorts them, which lowers no alpha's pinball loss by more than it gains
    X, y = heteroscedastic(2, 3000)
    model = GBTRegressor(objective="quantile", quantile_alpha=[0.49, 0.5, 0.51],
                         **PARAMS).fit(X, y)
    raw = model._raw_predict(X)
    assert np.mean(np.any(np.diff(raw, axis=1) < 0, axis=1)) > 0.05
    pred = model.predict(X)
    assert np.all(np.diff(pred, axis=1) >= 0)
    np.testing.assert_array_equal(pred, np.sort(raw, axis=1))
    total = lambda p: sum(quantile_loss(a)(y, p[:, k])   # noqa: E731
                          for k, a in enumerate([0.49, 0.5, 0.51]))
    assert total(pred) <= total(raw) + 1e-12


def test_multi_quantile_against_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = heteroscedastic(3, 8000)
    Xt, yt = heteroscedastic(4, 8000)
    ours = GBTRegressor(objective="quantile", quantile_alpha=ALPHAS, **PARAMS).fit(X, y)
    theirs = xgb.XGBRegressor(objective="reg:quantileerror", quantile_alpha=np.array(ALPHAS),
                              tree_method="hist", **PARAMS).fit(X, y)
    p, q = ours.predict(Xt), theirs.predict(Xt)
    assert np.any(np.diff(q, axis=1) < 0)    # XGBoost's may cross
    for k, a in enumerate(ALPHAS):
        assert quantile_loss(a)(yt, p[:, k]) <= quantile_loss(a)(yt, q[:, k]) * 1.03


def test_multi_quantile_metrics_files_and_errors(tmp_path):
    X, y = heteroscedastic(5, 1000)
    model = GBTRegressor(objective="quantile", quantile_alpha=[0.1, 0.9], n_estimators=20).fit(
        X, y, eval_set=[(X, y)])
    curve = model.evals_result_["validation_0"]["quantile"]
    assert curve[-1] == pytest.approx(quantile_loss((0.1, 0.9))(y, model.predict(X)))
    assert curve[-1] < curve[0]
    for suffix in (".json", ".gbt"):
        model.save_model(tmp_path / f"m{suffix}")
        np.testing.assert_array_equal(gbtree.load_model(tmp_path / f"m{suffix}").predict(X),
                                      model.predict(X))
    with pytest.raises(ValueError, match="quantile_alpha must be increasing"):
        GBTRegressor(objective="quantile", quantile_alpha=[0.9, 0.1]).fit(X, y)
    with pytest.raises(ValueError, match=r"quantile_alpha\[1\] must be < 1"):
        GBTRegressor(objective="quantile", quantile_alpha=[0.5, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="at least one value"):
        GBTRegressor(objective="quantile", quantile_alpha=[]).fit(X, y)
    with pytest.raises(ValueError, match="eval_metric 'rmse' does not apply"):
        GBTRegressor(objective="quantile", quantile_alpha=[0.1, 0.9], eval_metric="rmse").fit(X, y)
    with pytest.raises(ValueError, match="no known transform to export"):
        model.to_onnx() if hasattr(model, "to_onnx") else gbtree.io.export.to_onnx(model)
    # a single alpha in a list is the single-quantile model
    one = GBTRegressor(objective="quantile", quantile_alpha=[0.3], n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(
        one.predict(X),
        GBTRegressor(objective="quantile", quantile_alpha=0.3, n_estimators=5).fit(X, y).predict(X))
