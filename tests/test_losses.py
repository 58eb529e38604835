"""Losses at the estimator level: custom objectives, leaf refits, log links, the
labels each loss takes, class weights."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.class_weight import compute_sample_weight

from gbtree import GBTClassifier, GBTRegressor


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
