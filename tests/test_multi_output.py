"""GBTRegressor on a y of several columns: one output, one tree per round, per column."""
import numpy as np
import pytest

import gbtree
from gbtree import GBTRegressor


def targets(seed, n=1500):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    Y = np.column_stack([X[:, 0] ** 2, np.sin(2 * X[:, 1]) - X[:, 2], 3 * X[:, 3]])
    return X, Y + 0.2 * rng.normal(size=Y.shape)


def test_each_column_is_the_model_of_that_column_alone():
    X, Y = targets(0)
    w = np.random.RandomState(1).uniform(0.5, 2, size=len(X))
    # (float gradients: quantised ones are rounded by output, another draw alone)
    kw = dict(n_estimators=20, max_depth=4, grad_quant_bins=None)
    joint = GBTRegressor(**kw).fit(X, Y, sample_weight=w)
    pred = joint.predict(X)
    assert pred.shape == Y.shape and joint.n_trees_ == 60
    for k in range(Y.shape[1]):
        alone = GBTRegressor(**kw).fit(X, Y[:, k], sample_weight=w)
        np.testing.assert_allclose(pred[:, k], alone.predict(X), rtol=1e-9, atol=1e-9)
    # a column vector is one target
    one = GBTRegressor(n_estimators=5).fit(X, Y[:, :1])
    assert one.predict(X).shape == (len(X),)


def test_multi_output_against_xgboost_metrics_files_and_shap(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, Y = targets(2)
    Xt, Yt = targets(3)
    ours = GBTRegressor(n_estimators=50, max_depth=4, eval_metric="rmse").fit(
        X, Y, eval_set=[(Xt, Yt)])
    theirs = xgb.XGBRegressor(n_estimators=50, max_depth=4, tree_method="hist",
                              multi_strategy="one_output_per_tree").fit(X, Y)
    rmse = lambda P: np.mean(np.sqrt(np.mean((Yt - P) ** 2, axis=0)))  # noqa: E731
    assert rmse(ours.predict(Xt)) <= rmse(theirs.predict(Xt)) * 1.02
    assert ours.evals_result_["validation_0"]["rmse"][-1] == pytest.approx(rmse(ours.predict(Xt)))
    assert ours.score(Xt, Yt) > 0.8
    for suffix in (".json", ".gbt"):
        ours.save_model(tmp_path / f"m{suffix}")
        np.testing.assert_array_equal(gbtree.load_model(tmp_path / f"m{suffix}").predict(Xt),
                                      ours.predict(Xt))
    contribs = ours.predict(Xt[:20], pred_contribs=True)
    assert contribs.shape == (20, 3, 5)
    np.testing.assert_allclose(contribs.sum(axis=-1), ours.predict(Xt[:20]), atol=1e-9)


def test_multi_output_refuses_what_it_does_not_support():
    X, Y = targets(4, 200)
    with pytest.raises(ValueError, match="a y of 3 columns needs objective='squared_error'"):
        GBTRegressor(objective="absolute_error").fit(X, Y)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: y must have shape \(200, 3\)"):
        GBTRegressor(n_estimators=2).fit(X, Y, eval_set=[(X, Y[:, 0])])
    with pytest.raises(ValueError, match="eval_metric 'logloss' does not apply"):
        GBTRegressor(n_estimators=2, eval_metric="logloss").fit(X, Y)
    with pytest.raises(ValueError, match="multi_strategy must be 'one_output_per_tree' or"):
        GBTRegressor(multi_strategy="vector").fit(X, Y)
    with pytest.raises(ValueError, match="no known transform to export"):
        GBTRegressor(n_estimators=2).fit(X, Y).to_onnx()
