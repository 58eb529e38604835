"""Objectives at the estimator level, eval sets, early stopping, callbacks, staged
predictions, class weights."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.utils.class_weight import compute_sample_weight

from gbtree import GBTClassifier, GBTRegressor
from gbtree.callback import Callback, EarlyStopping, LearningRateScheduler, RecordEvaluation


@pytest.fixture(scope="module")
def noisy_regression():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(3000, 5))
    y = np.sin(3 * X[:, 0]) + X[:, 1] + rng.normal(scale=1.0, size=3000)
    return train_test_split(X, y, random_state=0)


# ---------------------------------------------------------------- objectives
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("grow_policy", ["depthwise", "lossguide"])
def test_custom_squared_error_reproduces_the_builtin_exactly(noisy_regression, weighted, grow_policy):
    Xtr, Xte, ytr, _ = noisy_regression
    w = np.random.RandomState(1).uniform(0.2, 2, size=len(ytr)) if weighted else None

    def squared_error(y_true, raw):
        return raw - y_true, np.ones_like(raw)

    params = dict(n_estimators=30, grow_policy=grow_policy, max_leaves=16)
    builtin = GBTRegressor(**params).fit(Xtr, ytr, sample_weight=w)
    custom = GBTRegressor(objective=squared_error, **params).fit(Xtr, ytr, sample_weight=w)
    np.testing.assert_array_equal(custom.predict(Xte), builtin.predict(Xte))
    np.testing.assert_array_equal(custom._ensemble.nodes, builtin._ensemble.nodes)


def test_custom_objective_with_sample_weight_argument_and_bad_returns(noisy_regression):
    Xtr, _, ytr, _ = noisy_regression
    w = np.linspace(0.5, 2, len(ytr))
    seen = {}

    def weighted_se(y_true, raw, sample_weight):
        seen["w"] = sample_weight
        return (raw - y_true) * sample_weight, sample_weight

    GBTRegressor(objective=weighted_se, n_estimators=2).fit(Xtr, ytr, sample_weight=w)
    np.testing.assert_array_equal(seen["w"], w)
    with pytest.raises(ValueError, match="grad of shape"):
        GBTRegressor(objective=lambda y, f: (f[:5], f), n_estimators=2).fit(Xtr, ytr)
    with pytest.raises(TypeError, match="pair"):
        GBTRegressor(objective=lambda y, f: f, n_estimators=2).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="negative values in hess"):
        GBTRegressor(objective=lambda y, f: (f - y, np.full_like(f, -1.0)),
                     n_estimators=2).fit(Xtr, ytr)
    # finite as float64 but not as float32: the message blamed y ("rescale y")
    with pytest.raises(ValueError, match="returned values in grad beyond float32's range"):
        GBTRegressor(objective=lambda y, f: (f - y + 1e39, np.ones_like(f)),
                     n_estimators=2).fit(Xtr, ytr)


def test_custom_logistic_objective_in_the_classifier():
    X, y = make_classification(800, 5, random_state=0)

    def logistic(y_true, raw):
        p = 1 / (1 + np.exp(-raw))
        return p - y_true, p * (1 - p)

    ours = GBTClassifier(objective=logistic, n_estimators=20).fit(X, y)
    builtin = GBTClassifier(n_estimators=20).fit(X, y)
    # same loss; F0 differs (one Newton step from 0 against the exact log-odds)
    np.testing.assert_allclose(ours.predict_proba(X), builtin.predict_proba(X), atol=0.05)
    assert (ours.predict(X) == y).mean() > 0.9


@pytest.mark.parametrize("objective,alpha", [("absolute_error", 0.5), ("quantile", 0.2),
                                             ("quantile", 0.9)])
def test_leaves_are_refit_to_the_residual_quantile(noisy_regression, objective, alpha):
    Xtr, _, ytr, _ = noisy_regression
    model = GBTRegressor(objective=objective, quantile_alpha=alpha, n_estimators=1,
                         learning_rate=1.0, max_depth=2).fit(Xtr, ytr)
    leaf = model._ensemble.apply(Xtr)[:, 0]
    f0 = model._ensemble.base_score[0]
    pred = model.predict(Xtr)
    for k in np.unique(leaf):
        r = ytr[leaf == k] - f0
        # F0 + the leaf value is the alpha-quantile of the leaf's labels
        lower = np.sort(r)[int(np.ceil(alpha * len(r) * (1 - 1e-12))) - 1]
        assert pred[leaf == k][0] - f0 == pytest.approx(lower, abs=1e-12)
    # the fitted alpha-quantile covers about alpha of the rows
    many = GBTRegressor(objective=objective, quantile_alpha=alpha, n_estimators=50).fit(Xtr, ytr)
    assert abs(np.mean(ytr <= many.predict(Xtr)) - alpha) < 0.05


def test_huber_is_robust_to_outliers(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression
    y_bad = ytr.copy()
    y_bad[::20] += 200.0   # 5% gross outliers
    se = GBTRegressor(n_estimators=50).fit(Xtr, y_bad)
    huber = GBTRegressor(objective="huber", huber_delta=1.0, n_estimators=50).fit(Xtr, y_bad)
    l1 = GBTRegressor(objective="absolute_error", n_estimators=50).fit(Xtr, y_bad)

    def mae(m):
        return np.mean(np.abs(m.predict(Xte) - yte))
    # squared error is dragged by ~10 (200 x 5%); the robust losses are not
    assert mae(se) > 10 and mae(huber) < 0.2 * mae(se) and mae(l1) < 0.15 * mae(se)


@pytest.mark.parametrize("objective,bad_y,match", [
    ("poisson", -1.0, "y >= 0"), ("gamma", 0.0, "y > 0"), ("tweedie", -0.5, "y >= 0")])
def test_targets_outside_the_domain_are_rejected(objective, bad_y, match):
    X = np.random.RandomState(0).normal(size=(20, 2))
    y = np.ones(20)
    y[3] = bad_y
    with pytest.raises(ValueError, match=match):
        GBTRegressor(objective=objective, n_estimators=2).fit(X, y)


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


def test_log_link_predictions_are_positive_means():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(5000, 3))
    mu = np.exp(2 * X[:, 0])
    y = rng.poisson(mu).astype(float)
    model = GBTRegressor(objective="poisson", n_estimators=100, max_depth=3).fit(X, y)
    pred = model.predict(X)
    assert np.all(pred > 0)
    assert model._ensemble.base_score[0] == pytest.approx(np.log(y.mean()))
    assert np.corrcoef(pred, mu)[0, 1] > 0.9


def test_class_weight_is_a_sample_weight():
    X, y = make_classification(600, 5, weights=[0.85], random_state=0)
    balanced = GBTClassifier(class_weight="balanced", n_estimators=20).fit(X, y)
    manual = GBTClassifier(n_estimators=20).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    plain = GBTClassifier(n_estimators=20).fit(X, y)
    np.testing.assert_array_equal(balanced.predict_proba(X), manual.predict_proba(X))
    # balancing raises the predicted share of the minority class
    assert balanced.predict_proba(X)[:, 1].mean() > plain.predict_proba(X)[:, 1].mean() + 0.05
    as_dict = GBTClassifier(class_weight={0: 1.0, 1: 3.0}, n_estimators=5).fit(X, y)
    manual = GBTClassifier(n_estimators=5).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_array_equal(as_dict.predict_proba(X), manual.predict_proba(X))
    with pytest.raises(ValueError, match="class_weight"):
        GBTClassifier(class_weight="uniform").fit(X, y)


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf, "2", True, None])
def test_class_weight_values_must_be_finite_and_not_negative(bad):
    # A negative weight made every probability 1, NaN or inf made them NaN: refused
    X, y = make_classification(200, 5, random_state=0)
    with pytest.raises(ValueError, match="class_weight values must be finite numbers >= 0"):
        GBTClassifier(n_estimators=3, class_weight={0: bad, 1: 1.0}).fit(X, y)


def test_class_weight_that_zeroes_every_row_is_refused():
    X, y = make_classification(200, 5, random_state=0)
    with pytest.raises(ValueError, match="class_weight gives every row weight 0$"):
        GBTClassifier(n_estimators=3, class_weight={0: 0, 1: 0}).fit(X, y)
    # the rows with weight are all in the class weighted 0
    with pytest.raises(ValueError, match=r"every row weight 0 \(with sample_weight\)"):
        GBTClassifier(n_estimators=3, class_weight={0: 0.0, 1: 1}).fit(
            X, y, sample_weight=(y == 0).astype(float))
    # a class weighted 0 is allowed while other rows keep weight: that class is ignored
    proba = GBTClassifier(n_estimators=20, class_weight={0: 0.0, 1: 1}).fit(
        X, y, sample_weight=np.ones(200)).predict_proba(X)
    assert proba[:, 1].min() > 0.9


# ---------------------------------------------------------------- eval sets and early stopping
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


# ---------------------------------------------------------------- callbacks
def test_callbacks_see_every_round_and_can_stop(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression

    class StopAtThree(Callback):
        def __init__(self):
            self.calls = []

        def before_training(self, state):
            self.calls.append("start")

        def before_iteration(self, state):
            self.calls.append(("before", state.iteration))
            return False

        def after_iteration(self, state):
            self.calls.append(("after", state.iteration))
            return state.iteration == 2

        def after_training(self, state):
            self.calls.append("end")

    cb = StopAtThree()
    model = GBTRegressor(n_estimators=10, callbacks=[cb]).fit(Xtr, ytr)
    assert model.n_estimators_ == 3 and model.n_trees_ == 3
    assert cb.calls == ["start", ("before", 0), ("after", 0), ("before", 1), ("after", 1),
                        ("before", 2), ("after", 2), "end"]
    record = {}
    model = GBTRegressor(n_estimators=4, callbacks=[RecordEvaluation(record)]).fit(
        Xtr, ytr, eval_set=[(Xte, yte)])
    assert record == model.evals_result_
    with pytest.raises(TypeError, match="callbacks"):
        GBTRegressor(callbacks=[object()]).fit(Xtr, ytr)


def test_learning_rate_schedule(noisy_regression):
    Xtr, Xte, ytr, _ = noisy_regression
    const = GBTRegressor(n_estimators=5, learning_rate=0.3).fit(Xtr, ytr)
    sched = GBTRegressor(n_estimators=5, callbacks=[LearningRateScheduler(lambda r: 0.3)]).fit(Xtr, ytr)
    np.testing.assert_array_equal(const.predict(Xte), sched.predict(Xte))
    decay = GBTRegressor(n_estimators=5, callbacks=[
        LearningRateScheduler([0.3, 0.3, 0.1, 0.1, 0.1])]).fit(Xtr, ytr)
    np.testing.assert_array_equal(decay.predict(Xte, iteration_range=(0, 2)),
                                  const.predict(Xte, iteration_range=(0, 2)))
    assert not np.array_equal(decay.predict(Xte), const.predict(Xte))
    with pytest.raises(ValueError, match="learning-rate schedule"):
        GBTRegressor(n_estimators=2, callbacks=[LearningRateScheduler([0.1, 0.0])]).fit(Xtr, ytr)
    # inf gave NaN predictions; text a TypeError that named nothing
    with pytest.raises(ValueError, match=r"schedule gave inf for round 1; it must be finite"):
        GBTRegressor(n_estimators=2, callbacks=[LearningRateScheduler([0.1, np.inf])]).fit(Xtr, ytr)
    with pytest.raises(TypeError, match=r"schedule gave 'fast' for round 0; it must be a number"):
        GBTRegressor(n_estimators=2, callbacks=[LearningRateScheduler(["fast"] * 2)]).fit(Xtr, ytr)


def test_logging_every_log_period_rounds(noisy_regression, capsys):
    Xtr, Xte, ytr, yte = noisy_regression
    GBTRegressor(n_estimators=25, verbosity=1, log_period=10).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if " round " in ln]
    assert [ln.split()[2] for ln in lines] == ["1/25", "10/25", "20/25", "25/25"]
    assert all("validation_0-rmse=" in ln and "elapsed=" in ln for ln in lines)


def test_staged_predictions_end_at_predict():
    X, y = make_classification(300, 5, n_classes=3, n_informative=3, random_state=0)
    model = GBTClassifier(n_estimators=7).fit(X, y)
    stages = list(model.staged_predict_proba(X))
    assert len(stages) == 7
    np.testing.assert_allclose(stages[-1], model.predict_proba(X), rtol=1e-12)
    np.testing.assert_allclose(stages[2], model.predict_proba(X, iteration_range=(0, 3)), rtol=1e-12)
    np.testing.assert_array_equal(list(model.staged_predict(X))[-1], model.predict(X))


# ---------------------------------------------------------------- warm start
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


# ---------------------------------------------------------------- found by a new-user review
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


def test_small_api_mistakes_are_clear():
    from sklearn.exceptions import NotFittedError
    from gbtree.callback import EarlyStopping
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


def test_log_shows_the_round_training_stopped_at(noisy_regression, capsys):
    Xtr, Xte, ytr, yte = noisy_regression
    model = GBTRegressor(n_estimators=200, learning_rate=0.5, max_depth=8, early_stopping_rounds=5,
                         verbosity=1, log_period=50).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if " round " in ln]
    assert lines[-1].split()[2] == f"{model.n_estimators_}/200"
    from gbtree import ndcg_at_k
    with pytest.raises(ValueError, match="k must be >= 1"):
        ndcg_at_k([1, 0], [0.5, 0.2], group=[2], k=0)
    with pytest.raises(ValueError, match=r"sample_weight_eval_set\[0\]"):
        GBTRegressor(n_estimators=2).fit(Xtr, ytr, eval_set=[(Xte, yte)],
                                        sample_weight_eval_set=[np.ones(3)])


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


def test_user_functions_get_read_only_views():
    # A custom objective doing `y += 1` changed the caller's y, `w *= 2` its weights,
    # and a metric writing into y_pred the eval set's running predictions
    X, y = make_regression(200, 3, random_state=0)
    w = np.ones(200)
    y0 = y.copy()

    def bumps_y(y_true, raw):
        y_true += 1
        return raw - y_true, np.ones_like(raw)

    def doubles_w(y_true, raw, weight):
        weight *= 2
        return raw - y_true, np.ones_like(raw)

    def writes_pred(y_true, y_pred):
        y_pred[:] = 0
        return 0.0
    for objective in (bumps_y, doubles_w):
        with pytest.raises(ValueError, match="read-only"):
            GBTRegressor(objective=objective, n_estimators=2).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="read-only"):
        GBTRegressor(n_estimators=2, eval_metric=writes_pred).fit(X, y, eval_set=[(X, y)])
    np.testing.assert_array_equal(y, y0)
    assert (w == 1).all()


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


@pytest.mark.parametrize("field,value,message", [
    ("best_iteration", -5, r"best_iteration \(set by a callback\) must be a round of this fit, 0..4"),
    ("best_iteration", 100, r"must be a round of this fit, 0..4, got 100"),
    ("learning_rate", 0.0, r"the learning rate of round 0 \(a callback may set it\) must be a finite"),
    ("learning_rate", "0.1", r"must be a finite number > 0, got '0.1'"),
])
def test_training_state_a_callback_sets_is_checked(field, value, message):
    # best_iteration -5 kept a truncated, mismatched set of trees; a learning rate of
    # 0 or below trained silently the wrong way
    class Sets(Callback):
        def before_iteration(self, state):
            if field == "learning_rate":
                state.learning_rate = value

        def after_training(self, state):
            if field == "best_iteration":
                state.best_iteration = value
    X, y = make_regression(100, 3, random_state=0)
    with pytest.raises(ValueError, match=message):
        GBTRegressor(n_estimators=5, callbacks=[Sets()]).fit(X, y)


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


def test_callback_constructors_check_their_argument():
    # RecordEvaluation(None) failed at the first round with an AttributeError, a
    # scheduler of None or 3 with "has no len()"
    with pytest.raises(TypeError, match="RecordEvaluation needs a dict"):
        RecordEvaluation(None)
    for bad in (None, 3):
        with pytest.raises(TypeError, match="LearningRateScheduler needs a function"):
            LearningRateScheduler(bad)


@pytest.mark.parametrize("answer,rounds", [(None, 4), (False, 4), (np.False_, 4), (0, 4),
                                           (True, 1), (np.True_, 1), (1, 1)])
def test_a_round_hook_answers_true_false_or_none(answer, rounds):
    class Answers(Callback):
        def after_iteration(self, state):
            return answer
    X, y = make_regression(60, 3, random_state=0)
    assert GBTRegressor(n_estimators=4, callbacks=[Answers()]).fit(X, y).n_estimators_ == rounds


@pytest.mark.parametrize("hook", ["before_iteration", "after_iteration"])
def test_a_round_hook_returning_an_array_is_a_type_error(hook):
    # was NumPy's "truth value of an array ... is ambiguous", naming no callback
    class ReturnsArray(Callback):
        pass
    setattr(ReturnsArray, hook, lambda self, state: np.array([False, True]))
    X, y = make_regression(60, 3, random_state=0)
    with pytest.raises(TypeError, match=f"ReturnsArray.{hook} must return True, False or None"):
        GBTRegressor(n_estimators=3, callbacks=[ReturnsArray()]).fit(X, y)


def test_the_internal_train_checks_its_arguments():
    # gbtree.booster.train is not exported, but before these checks a y of another
    # length than X trained silently, a class code of 3 with three classes segfaulted
    # (the softmax kernel indexes the raw scores by y) and n_threads=-3 aborted libgomp
    from gbtree.booster import BoostParams, train
    from gbtree.objectives import Logistic, Softmax, SquaredError
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


@pytest.mark.parametrize("objective", ["absolute_error", "squared_error", "huber"])
def test_a_split_that_leaves_one_side_without_weight_is_an_error(objective):
    # absolute_error fitted a model whose predictions were all NaN; squared_error
    # raised ZeroDivisionError, huber a NumPy reduction error
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 5))
    y = np.abs(X[:, 0]) + 0.5
    w = np.zeros(200)
    w[0] = 1.0
    for random_state in range(5):   # the one weighted row lands on either side
        with pytest.raises(ValueError, match=r"^validation_fraction=0.5 left the "
                                             r"(training|held-out) rows with sample_weight all 0"):
            GBTRegressor(objective=objective, n_estimators=3, validation_fraction=0.5,
                         random_state=random_state).fit(X, y, sample_weight=w)


def test_a_split_that_holds_out_every_positive_target_says_so():
    X = np.random.RandomState(0).normal(size=(100, 3))
    y = np.r_[np.zeros(99), 3.0]
    with pytest.raises(ValueError, match=r"^validation_fraction=0.2 held out rows that the "
                                         r"training rows need: on the rows left, objective="):
        for seed in range(20):   # some split holds out the one y > 0
            GBTRegressor(objective="poisson", n_estimators=2, validation_fraction=0.2,
                         random_state=seed).fit(X, y)


@pytest.mark.parametrize("objective", ["poisson", "tweedie"])
def test_log_link_needs_a_weighted_positive_mean(objective):
    # every y > 0 with weight 0: poisson started at log(0) = -inf (all predictions 0),
    # tweedie blamed float32 overflow
    X = np.random.RandomState(0).normal(size=(200, 3))
    y = np.r_[np.zeros(100), np.ones(100)]
    w = np.r_[np.ones(100), np.zeros(100)]
    with pytest.raises(ValueError, match=f"^objective='{objective}' needs a y > 0 with a "
                                         f"sample_weight > 0"):
        GBTRegressor(objective=objective, n_estimators=3).fit(X, y, sample_weight=w)


def test_a_custom_objective_returning_text_names_itself():
    X, y = make_regression(50, 3, random_state=0)
    with pytest.raises(TypeError, match="^a custom objective must return arrays of numbers"):
        GBTRegressor(n_estimators=2, objective=lambda t, p: (["x"] * len(t), ["y"] * len(t))
                     ).fit(X, y)
