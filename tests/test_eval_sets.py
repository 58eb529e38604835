"""Eval sets, evaluation metrics and early stopping."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, train_test_split

from gbtree import GBTClassifier, GBTRegressor
from gbtree.callback import EarlyStopping


def test_eval_set_records_the_objective_metric(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression
    model = GBTRegressor(n_estimators=15).fit(Xtr, ytr, eval_set=[(Xtr, ytr), (Xte, yte)])
    res = model.evals_result_
    assert list(res) == ["validation_0", "validation_1"] and list(res["validation_0"]) == ["rmse"]
    assert len(res["validation_1"]["rmse"]) == 15
    staged = list(model.staged_predict(Xte))
    for r in (0, 7, 14):
        assert res["validation_1"]["rmse"][r] == pytest.approx(np.sqrt(np.mean((staged[r] - yte) ** 2)))
    train_curve = res["validation_0"]["rmse"]
    assert all(b < a for a, b in zip(train_curve, train_curve[1:]))
    assert model.best_iteration_ == 14 and model.best_score_ == res["validation_1"]["rmse"][-1]


def test_early_stopping_stops_at_the_right_round_and_keeps_the_best(noisy_regression):
    # deep trees and a large learning rate on noisy data: validation loss soon rises
    Xtr, Xte, ytr, yte = noisy_regression
    model = GBTRegressor(n_estimators=300, learning_rate=0.5, max_depth=8, early_stopping_rounds=10,
                         eval_metric=["mae", "rmse"]).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    curve = np.array(model.evals_result_["validation_0"]["rmse"])   # the last metric decides
    best = int(np.argmin(curve))
    assert model.best_iteration_ == best and model.best_score_ == curve[best]
    assert model.n_estimators_ == best + 11 == len(curve) < 300
    assert np.all(curve[best + 1:] > curve[best])
    full = model.predict(Xte, iteration_range=(0, model.n_estimators_))
    np.testing.assert_array_equal(model.predict(Xte), model.predict(Xte, iteration_range=(0, best + 1)))
    assert np.sqrt(np.mean((model.predict(Xte) - yte) ** 2)) == pytest.approx(curve[best])
    assert np.sqrt(np.mean((full - yte) ** 2)) > curve[best]


def test_early_stopping_on_a_greater_is_better_metric():
    X, y = make_classification(2000, 10, flip_y=0.3, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    model = GBTClassifier(n_estimators=300, learning_rate=0.5, early_stopping_rounds=5,
                          eval_metric="auc").fit(Xtr, ytr, eval_set=[(Xte, yte)])
    curve = np.array(model.evals_result_["validation_0"]["auc"])
    assert model.best_iteration_ == int(np.argmax(curve)) and model.n_estimators_ < 300


def test_validation_fraction_enables_early_stopping_in_grid_search():
    X, y = make_classification(1500, 10, flip_y=0.3, random_state=0)
    est = GBTClassifier(n_estimators=400, learning_rate=0.3, early_stopping_rounds=5,
                        validation_fraction=0.2)
    grid = GridSearchCV(est, {"max_depth": [2, 6]}, cv=2).fit(X, y)
    best = grid.best_estimator_
    assert best.n_estimators_ < 400 and list(best.evals_result_) == ["validation"]
    assert best.best_iteration_ == int(np.argmin(best.evals_result_["validation"]["logloss"]))
    # the split is stratified and seeded: the same model twice
    a = GBTClassifier(n_estimators=30, validation_fraction=0.2).fit(X, y)
    b = GBTClassifier(n_estimators=30, validation_fraction=0.2).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_eval_set_errors(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression
    with pytest.raises(ValueError, match="eval_set"):
        GBTRegressor(n_estimators=2, early_stopping_rounds=3).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="sample_weight_eval_set"):
        GBTRegressor(n_estimators=2).fit(Xtr, ytr, eval_set=[(Xte, yte)],
                                        sample_weight_eval_set=[None, None])
    with pytest.raises(ValueError, match="features"):
        GBTRegressor(n_estimators=2).fit(Xtr, ytr, eval_set=[(Xte[:, :3], yte)])
    X, y = make_classification(200, 4, random_state=0)
    with pytest.raises(ValueError, match="not seen in training"):
        GBTClassifier(n_estimators=2).fit(X, y, eval_set=[(X, y + 5)])
    with pytest.raises(ValueError, match="iteration_range"):
        GBTClassifier(n_estimators=2).fit(X, y).predict(X, iteration_range=(0, 3))


def test_weighted_eval_set(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression
    w = np.where(np.arange(len(yte)) % 2 == 0, 1.0, 0.0)
    model = GBTRegressor(n_estimators=5).fit(Xtr, ytr, eval_set=[(Xte, yte)],
                                             sample_weight_eval_set=[w])
    pred = model.predict(Xte)
    assert model.evals_result_["validation_0"]["rmse"][-1] == pytest.approx(
        np.sqrt(np.mean((pred - yte)[w == 1] ** 2)))


def test_callable_eval_metric(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression

    def max_error(y_true, y_pred, sample_weight=None):
        return float(np.max(np.abs(y_true - y_pred)))
    model = GBTRegressor(n_estimators=3, eval_metric=max_error).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    assert model.evals_result_["validation_0"]["max_error"][-1] == max_error(yte, model.predict(Xte))


def test_eval_set_through_metadata_routing():
    import sklearn
    from sklearn.model_selection import cross_validate
    X, y = make_classification(600, 5, random_state=0)
    Xv, yv = make_classification(200, 5, random_state=1)
    with sklearn.config_context(enable_metadata_routing=True):
        est = (GBTClassifier(n_estimators=200, learning_rate=0.5, early_stopping_rounds=3)
               .set_fit_request(eval_set=True, sample_weight=True)
               .set_score_request(sample_weight=False))
        grid = GridSearchCV(est, {"max_depth": [2, 3]}, cv=2).fit(
            X, y, eval_set=[(Xv, yv)], sample_weight=np.ones(600))
        assert list(grid.best_estimator_.evals_result_) == ["validation_0"]
        assert grid.best_estimator_.n_estimators_ < 200
        res = cross_validate(est, X, y, cv=2, return_estimator=True,
                             params={"eval_set": [(Xv, yv)], "sample_weight": np.ones(600)})
        assert all(e.n_estimators_ < 200 for e in res["estimator"])


def test_eval_metric_must_fit_the_task():
    X, y = make_classification(300, 4, random_state=0)
    with pytest.raises(ValueError, match="eval_metric 'logloss' does not apply to a regression"):
        GBTRegressor(n_estimators=2, eval_metric="logloss").fit(X, y.astype(float), eval_set=[(X, y)])
    with pytest.raises(ValueError, match="eval_metric 'rmse' does not apply to a binary"):
        GBTClassifier(n_estimators=2, eval_metric="rmse").fit(X, y, eval_set=[(X, y)])
    Xm, ym = make_classification(300, 5, n_informative=3, n_classes=3, random_state=0)
    with pytest.raises(ValueError, match="eval_metric 'logloss' does not apply to a multiclass"):
        GBTClassifier(n_estimators=2, eval_metric="logloss").fit(Xm, ym, eval_set=[(Xm, ym)])
    GBTClassifier(n_estimators=2, eval_metric=["auc", "merror"]).fit(Xm, ym, eval_set=[(Xm, ym)])


def test_eval_labels_outside_the_objective_domain_are_an_error():
    # gamma on an eval y with a 0 gave an inf deviance: early stopping kept round 0
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.exp(X[:, 0])
    with pytest.raises(ValueError, match=r"eval_set\[1\]: objective='gamma' needs y > 0"):
        GBTRegressor(objective="gamma", early_stopping_rounds=3).fit(
            X, y, eval_set=[(X, y), (X, np.r_[0.0, y[1:]])])
    with pytest.raises(ValueError, match=r"eval_set\[0\]: objective='poisson' needs y >= 0$"):
        GBTRegressor(objective="poisson", n_estimators=3).fit(X, y, eval_set=[(X, -y)])
    # counts of 0 only are a valid eval set (its deviance is finite); only the
    # training labels need one y > 0, for the starting value
    for objective in ("poisson", "tweedie"):
        m = GBTRegressor(objective=objective, n_estimators=3).fit(
            X, y, eval_set=[(X[:10], np.zeros(10))])
        (values,) = m.evals_result_["validation_0"].values()
        assert np.isfinite(values).all()


def test_early_stopping_on_a_nan_metric_is_an_error():
    # AUC of an eval set with one class is NaN, which is never better than round 0:
    # the model kept one tree, silently
    X, y = make_classification(300, 4, random_state=0)
    with pytest.raises(ValueError, match="early stopping: auc on validation_0 is NaN in round 0"):
        GBTClassifier(eval_metric="auc", early_stopping_rounds=3).fit(
            X, y, eval_set=[(X, np.ones_like(y))])
    # without early stopping the NaN is only recorded
    m = GBTClassifier(eval_metric="auc", n_estimators=3).fit(X, y, eval_set=[(X, np.ones_like(y))])
    assert np.isnan(m.evals_result_["validation_0"]["auc"]).all()


def test_early_stopping_data_name_must_be_an_eval_set():
    X, y = make_regression(100, 3, random_state=0)
    with pytest.raises(ValueError, match="data_name 'nope' is not an eval set; the eval sets "
                                         "are 'validation_0'"):
        GBTRegressor(callbacks=[EarlyStopping(2, data_name="nope")]).fit(X, y, eval_set=[(X, y)])


def test_custom_metrics_with_and_without_weights():
    X, y = make_regression(200, 3, random_state=0)
    w = np.linspace(0.1, 2, 200)

    def mae(y_true, y_pred):                       # no weights: evaluated unweighted
        return float(np.mean(np.abs(y_true - y_pred)))

    def wmae(y_true, y_pred, sample_weight):       # positional weights
        return float(np.average(np.abs(y_true - y_pred), weights=sample_weight))

    def kw_wmae(y_true, y_pred, *, sample_weight=None):   # keyword-only weights
        return float(np.average(np.abs(y_true - y_pred), weights=sample_weight))
    fits = {f.__name__: GBTRegressor(n_estimators=5, eval_metric=f).fit(
        X, y, eval_set=[(X, y)], sample_weight_eval_set=[w]) for f in (mae, wmae, kw_wmae)}
    pred = fits["mae"].predict(X)
    assert fits["mae"].evals_result_["validation_0"]["mae"][-1] == pytest.approx(
        np.mean(np.abs(y - pred)))
    for name in ("wmae", "kw_wmae"):
        assert fits[name].evals_result_["validation_0"][name][-1] == pytest.approx(
            np.average(np.abs(y - pred), weights=w))

    def array_metric(y_true, y_pred):
        return np.abs(y_true - y_pred)
    with pytest.raises(TypeError, match="the eval_metric 'array_metric' must return a number"):
        GBTRegressor(n_estimators=2, eval_metric=array_metric).fit(X, y, eval_set=[(X, y)])


@pytest.mark.parametrize("kw,message", [
    (dict(rounds=1.5), "early_stopping_rounds must be an integer >= 1, got 1.5"),
    (dict(rounds="2"), "early_stopping_rounds must be an integer >= 1, got '2'"),
    (dict(rounds=2, min_delta=np.nan), "min_delta must be a finite number >= 0, got nan"),
    (dict(rounds=2, min_delta=-1), "min_delta must be a finite number >= 0"),
])
def test_early_stopping_arguments_are_checked(kw, message):
    # min_delta NaN stopped after rounds + 1 rounds keeping round 0; "2" was a bare
    # comparison TypeError
    with pytest.raises(ValueError, match=message):
        EarlyStopping(**kw)
