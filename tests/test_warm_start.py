"""warm_start: a continued fit is one long fit, and what it refuses to continue."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from gbtree import GBTClassifier, GBTRegressor


@pytest.mark.parametrize("Est,kind,params", [
    (GBTRegressor, "regression", {}),
    (GBTRegressor, "regression", {"objective": "absolute_error"}),
    (GBTClassifier, "binary", {}),
    (GBTClassifier, "multiclass", {"grow_policy": "lossguide", "max_leaves": 8}),
])
def test_warm_start_equals_one_long_fit(Est, kind, params):
    if kind == "regression":
        X, y = make_regression(600, 5, noise=5.0, random_state=0)
    else:
        X, y = make_classification(600, 5, n_informative=3, n_classes=2 if kind == "binary" else 3,
                                   random_state=0)
    X[::7, 1] = np.nan
    once = Est(n_estimators=20, **params).fit(X, y)
    warm = Est(n_estimators=8, warm_start=True, **params).fit(X, y)
    warm.set_params(n_estimators=20).fit(X, y)
    assert warm.n_estimators_ == 20 and warm.n_trees_ == once.n_trees_
    np.testing.assert_array_equal(warm._ensemble.nodes, once._ensemble.nodes)
    np.testing.assert_array_equal(warm.predict(X), once.predict(X))
    warm.fit(X, y)   # nothing to add
    assert warm.n_estimators_ == 20
    with pytest.raises(ValueError, match="n_estimators=5 must be >= n_estimators_=20"):
        warm.set_params(n_estimators=5).fit(X, y)
    cold = Est(n_estimators=8, **params).fit(X, y)
    cold.set_params(n_estimators=20).fit(X, y)   # warm_start=False refits from scratch
    np.testing.assert_array_equal(cold.predict(X), once.predict(X))


def test_warm_start_refuses_a_changed_objective_or_classes():
    X, y = make_regression(200, 3, random_state=0)
    model = GBTRegressor(n_estimators=3, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="objective"):
        model.set_params(objective="absolute_error", n_estimators=6).fit(X, y)
    Xc, yc = make_classification(200, 3, n_informative=2, n_redundant=0, random_state=0)
    clf = GBTClassifier(n_estimators=3, warm_start=True).fit(Xc, yc)
    with pytest.raises(ValueError, match="classes"):
        clf.set_params(n_estimators=6).fit(Xc, yc + 1)


def test_warm_start_refuses_other_columns():
    X, y = make_regression(200, 4, random_state=0)
    model = GBTRegressor(n_estimators=3, warm_start=True).fit(X, y)
    for other in (np.hstack([X, X]), X[:, :2]):
        with pytest.raises(ValueError, match="features"):
            model.set_params(n_estimators=6).fit(other, y)
    assert model.n_features_in_ == 4 and model.n_estimators_ == 3
    np.testing.assert_array_equal(model.predict(X), GBTRegressor(n_estimators=3).fit(X, y).predict(X))


def test_warm_start_keeps_the_histories_and_the_best_round(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression
    params = dict(learning_rate=0.5, max_depth=8, early_stopping_rounds=5, subsample=0.8)
    once = GBTRegressor(n_estimators=300, **params).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    warm = GBTRegressor(n_estimators=300, warm_start=True, **params).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    first_best, first_rounds = warm.best_iteration_, warm.n_estimators_
    warm.set_params(n_estimators=first_rounds + 10).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    curve = warm.evals_result_["validation_0"]["rmse"]
    assert len(curve) == warm.n_estimators_ == len(warm.oob_scores_) == len(warm.oob_improvement_)
    assert warm.best_score_ == min(curve) and curve[warm.best_iteration_] == warm.best_score_
    assert warm.best_iteration_ == first_best == once.best_iteration_


def test_warm_start_oob_histories_cover_every_round_when_sampling_changes():
    # turning subsample on (or off) between fits left oob_* with the last fit's rounds
    # only: 5 entries for a model of 10
    X, y = make_regression(300, 4, noise=5.0, random_state=0)
    on = GBTRegressor(n_estimators=5, warm_start=True).fit(X, y)
    on.set_params(n_estimators=10, subsample=0.5).fit(X, y)
    off = GBTRegressor(n_estimators=5, warm_start=True, subsample=0.5).fit(X, y)
    first = off.oob_scores_.copy()
    off.set_params(n_estimators=10, subsample=1.0).fit(X, y)
    for model in (on, off):
        assert len(model.oob_scores_) == len(model.oob_improvement_) == model.n_estimators_ == 10
    assert np.all(np.isnan(on.oob_scores_[:5])) and np.all(np.isfinite(on.oob_scores_[5:]))
    np.testing.assert_array_equal(off.oob_scores_[:5], first)
    assert np.all(np.isnan(off.oob_scores_[5:]))


def test_a_continued_fit_that_diverges_says_so():
    # the first round of a continued fit is not the model's first: not "rescale y"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.exp(X[:, 0])
    m = GBTRegressor(objective="poisson", learning_rate=50.0, n_estimators=1, warm_start=True)
    with np.errstate(all="ignore"):
        m.fit(X, y)
        with pytest.raises(ValueError, match="of round 1 are inf or NaN: the model diverges"):
            m.set_params(n_estimators=5).fit(X, y)
