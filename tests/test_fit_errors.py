"""Mistakes of a fit get errors that say what is wrong: parameters, labels too large
for the gradients, a model that diverges, the internal loop's own checks."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from gbtree import GBTClassifier, GBTRegressor
from gbtree.callback import EarlyStopping, LearningRateScheduler


@pytest.mark.parametrize("param,value", [
    ("objective", "hinge"), ("quantile_alpha", 1.0), ("huber_delta", 0.0),
    ("tweedie_variance_power", 2.0), ("early_stopping_rounds", 0), ("validation_fraction", 1.0),
    ("eval_metric", "accuracy"), ("log_period", 0)])
def test_invalid_training_parameters_name_themselves(param, value):
    X, y = make_regression(50, 3, random_state=0)
    y = np.abs(y) + 1
    objective = {"quantile_alpha": "quantile", "huber_delta": "huber",
                 "tweedie_variance_power": "tweedie"}.get(param, "squared_error")
    params = {"objective": objective, "n_estimators": 2,
              "validation_fraction": 0.2 if param == "early_stopping_rounds" else 0.0}
    params[param] = value
    with pytest.raises(ValueError, match=param):
        GBTRegressor(**params).fit(X, y)


@pytest.mark.parametrize("param,value,error", [
    ("huber_delta", -5, ValueError), ("quantile_alpha", 7, ValueError),
    ("tweedie_variance_power", "x", TypeError)])
def test_objective_parameters_are_checked_under_any_objective(param, value, error):
    # a bad value used to pass unnoticed unless its own objective was chosen
    X, y = make_regression(50, 3, random_state=0)
    with pytest.raises(error, match=param):
        GBTRegressor(n_estimators=2, **{param: value}).fit(X, y)


def test_small_api_mistakes_are_clear():
    from sklearn.exceptions import NotFittedError
    X, y = make_regression(100, 3, random_state=0)
    with pytest.raises(NotFittedError):
        GBTRegressor().get_dump()
    with pytest.raises(TypeError, match="callbacks must be a list"):
        GBTRegressor(callbacks=EarlyStopping(3)).fit(X, y)
    with pytest.raises(ValueError, match="schedule has 2 values"):
        GBTRegressor(n_estimators=5, callbacks=[LearningRateScheduler([0.1, 0.1])]).fit(X, y)
    model = GBTRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match="iteration_range"):
        model.predict(X, iteration_range=(1, 1.5))
    assert model.base_score_ == pytest.approx(y.mean())
    np.testing.assert_allclose(model.predict(X, iteration_range=(0, 0)), model.base_score_)

    def weighted_se(y_true, raw, sample_weight):   # gets ones when fit has no weights
        return (raw - y_true) * sample_weight, sample_weight.copy()
    np.testing.assert_array_equal(GBTRegressor(objective=weighted_se, n_estimators=3).fit(X, y).predict(X),
                                  model.predict(X))


@pytest.mark.parametrize("grad_quant_bins", [None, 16])
def test_labels_or_weights_too_large_for_float32_gradients_are_an_error(grad_quant_bins):
    # |y| beyond float32's range made the gradients inf: a model of one leaf, silently
    X, y = make_regression(300, 3, random_state=0)
    with pytest.raises(ValueError, match=r"gradients or hessians of round 0 are inf or NaN: "
                                         r"y or sample_weight is too large .*\|y\| up to 3.6"):
        GBTRegressor(n_estimators=3, grad_quant_bins=grad_quant_bins).fit(X, y * 1e38)
    # within the range the same data train as usual
    assert GBTRegressor(n_estimators=20, grad_quant_bins=grad_quant_bins).fit(
        X, y * 1e30).score(X, y * 1e30) > 0.8
    Xc, yc = make_classification(300, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="sample_weight up to 1e"):
        GBTClassifier(n_estimators=3, grad_quant_bins=grad_quant_bins).fit(
            Xc, yc, sample_weight=np.full(300, 1e300))


@pytest.mark.parametrize("objective,learning_rate,message", [
    ("poisson", 50.0, r"gradients or hessians of round 1 are inf or NaN: the model diverges"),
    ("squared_error", 1e300, r"the model diverges \(raw predictions up to"),
    ("absolute_error", 1e300, r"a leaf value of round 1 is inf or NaN: the model diverges"),
])
def test_a_diverging_model_is_an_error_not_nan_predictions(objective, learning_rate, message):
    # A learning rate far too large overflowed the raw predictions: predictions of
    # NaN or inf, or trees without splits, with only numpy's overflow warnings
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.exp(X[:, 0])
    with np.errstate(all="ignore"), pytest.raises(ValueError, match=message + ".*lower learning_rate"):
        GBTRegressor(objective=objective, learning_rate=learning_rate, n_estimators=20).fit(X, y)


def test_the_internal_train_checks_its_arguments():
    # gbtree.boosting.booster.train is not exported, but before these checks a y of another
    # length than X trained silently, a class code of 3 with three classes segfaulted
    # (the softmax kernel indexes the raw scores by y) and n_threads=-3 aborted libgomp
    from gbtree.boosting.booster import BoostParams, train
    from gbtree.boosting.objectives import Logistic, Softmax, SquaredError
    rng = np.random.RandomState(0)
    X = rng.normal(size=(50, 3))
    y = rng.normal(size=50)
    codes = rng.randint(0, 3, size=50).astype(np.float64)
    params = BoostParams(n_estimators=2)
    cases = [
        (dict(X=X, y=y[:40], objective=SquaredError()), ValueError,
         r"y must be a float64 ndarray of shape \(50,\), got float64 of shape \(40,\)"),
        (dict(X=X, y=y.astype(np.float32), objective=SquaredError()), ValueError,
         "y must be a float64 ndarray"),
        (dict(X=X, y=np.r_[y[:-1], np.nan], objective=SquaredError()), ValueError,
         "y must be finite"),
        (dict(X=X, y=y, objective=SquaredError(), sample_weight=np.ones(7)), ValueError,
         r"sample_weight must be a float64 ndarray of shape \(50,\)"),
        (dict(X=X, y=y, objective=SquaredError(), n_threads=-3), ValueError,
         "n_threads must be an integer in 1.."),
        (dict(X=X, y=y, objective=SquaredError(), n_threads=True), ValueError,
         "n_threads must be an integer"),
        (dict(X=X[0], y=y, objective=SquaredError()), TypeError, "X must be a 2-d ndarray"),
        (dict(X=X, y=np.r_[codes[:-1], 3.0], objective=Softmax(3)), ValueError,
         r"objective='softmax' needs the class codes 0..2"),
        (dict(X=X, y=np.r_[codes[:-1], 0.5], objective=Softmax(3)), ValueError,
         "needs the class codes"),
        (dict(X=X, y=np.r_[np.zeros(49), 2.0], objective=Logistic()), ValueError,
         r"objective='logistic' needs y in \[0, 1\]"),
    ]
    for kw, error, message in cases:
        with pytest.raises(error, match=message):
            train(params=params, **kw)
    ensemble, info = train(X, codes, Softmax(3), params)
    assert ensemble.n_trees == 6 and info["n_rounds"] == 2
