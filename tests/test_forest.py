"""num_parallel_tree: several trees per output and round, a random forest at one round."""
import numpy as np
import pytest

import gbtree
from conftest import data_file
from gbtree import GBTClassifier, GBTRegressor

RF = dict(n_estimators=1, learning_rate=1.0, subsample=0.8, colsample_bynode=0.8,
          reg_lambda=1e-5, max_depth=8)


def regression(seed, n=1500):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] ** 2 - X[:, 1] + 0.3 * rng.normal(size=n)


def test_identical_parallel_trees_average_to_the_single_tree():
    # without sampling every parallel tree sees the same rows, columns and gradients
    # (float ones: each tree would round them its own way): P trees of lr / P each are
    # the one tree of lr
    X, y = regression(0)
    kw = dict(n_estimators=3, learning_rate=0.5, max_depth=3, grad_quant_bins=None)
    one = GBTRegressor(**kw).fit(X, y)
    four = GBTRegressor(**kw, num_parallel_tree=4).fit(X, y)
    assert four.n_estimators_ == 3 and four.n_trees_ == 12
    np.testing.assert_allclose(four.predict(X), one.predict(X), rtol=1e-9, atol=1e-12)
    for r in range(3):
        for p in range(4):
            np.testing.assert_allclose(four._ensemble.tree(4 * r + p)["value"] * 4,
                                       one._ensemble.tree(r)["value"], rtol=1e-12)
    # iteration_range and staged predictions count rounds of four trees
    np.testing.assert_allclose(four.predict(X, iteration_range=(0, 2)),
                               one.predict(X, iteration_range=(0, 2)), rtol=1e-9, atol=1e-12)
    stages = list(four.staged_predict(X))
    assert len(stages) == 3
    np.testing.assert_allclose(stages[1], one.predict(X, iteration_range=(0, 2)), rtol=1e-9,
                               atol=1e-12)


def test_random_forest_is_within_noise_of_xgboost_and_scikit_learn():
    xgb = pytest.importorskip("xgboost")
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import roc_auc_score
    data = np.loadtxt(data_file("binary.train"))
    X, y = data[:, 1:], data[:, 0]
    Xtr, Xte, ytr, yte = X[:5000], X[5000:], y[:5000], y[5000:]
    ours = GBTClassifier(num_parallel_tree=100, **RF).fit(Xtr, ytr)
    theirs = xgb.XGBRFClassifier(n_estimators=100, subsample=0.8, colsample_bynode=0.8,
                                 reg_lambda=1e-5, max_depth=8, tree_method="hist").fit(Xtr, ytr)
    forest = RandomForestClassifier(n_estimators=100, max_samples=0.8, max_features=0.8,
                                    max_depth=8, random_state=0).fit(Xtr, ytr)
    auc = {name: roc_auc_score(yte, m.predict_proba(Xte)[:, 1])
           for name, m in (("gbtree", ours), ("xgboost", theirs), ("sklearn", forest))}
    assert auc["gbtree"] >= auc["xgboost"] - 0.01, auc
    assert auc["gbtree"] >= auc["sklearn"] - 0.01, auc


def test_forests_of_multiclass_quantile_and_dart_models_files_and_warm_start(tmp_path):
    X, y = regression(1)
    labels = np.digitize(y, [-1, 1])
    clf = GBTClassifier(n_estimators=4, num_parallel_tree=3, subsample=0.7,
                        colsample_bynode=0.8).fit(X, labels)
    assert clf.n_trees_ == 4 * 3 * 3
    assert clf.predict_proba(X).shape == (len(y), 3)
    assert clf.score(X, labels) > 0.8
    assert not hasattr(clf, "oob_improvement_")   # each tree leaves other rows out
    for suffix in (".json", ".gbt"):
        clf.save_model(tmp_path / f"m{suffix}")
        np.testing.assert_array_equal(gbtree.load_model(tmp_path / f"m{suffix}").predict_proba(X),
                                      clf.predict_proba(X))
    contribs = clf.predict(X[:50], pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=-1), clf.decision_function(X[:50]), atol=1e-9)
    # a forest of quantile trees: each tree's leaves refit to the round's residuals
    q = GBTRegressor(objective="quantile", quantile_alpha=0.8, num_parallel_tree=20,
                     **RF).fit(X, y)
    assert abs(np.mean(y <= q.predict(X)) - 0.8) < 0.05
    GBTRegressor(n_estimators=5, num_parallel_tree=3, booster="dart", rate_drop=0.5,
                 subsample=0.8).fit(X, y)
    # warm start continues a forest with the same number of parallel trees, exactly
    whole = GBTRegressor(n_estimators=4, num_parallel_tree=3, subsample=0.8).fit(X, y)
    part = GBTRegressor(n_estimators=2, num_parallel_tree=3, subsample=0.8,
                        warm_start=True).fit(X, y)
    part.set_params(n_estimators=4).fit(X, y)
    np.testing.assert_array_equal(part.predict(X), whole.predict(X))
    with pytest.raises(ValueError, match="num_parallel_tree changed"):
        part.set_params(n_estimators=6, num_parallel_tree=2).fit(X, y)
    with pytest.raises(ValueError, match="num_parallel_tree must be >= 1"):
        GBTRegressor(num_parallel_tree=0).fit(X, y)
