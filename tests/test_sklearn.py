import io
import pickle

import joblib
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.datasets import (load_breast_cancer, load_diabetes, load_iris, make_classification,
                              make_regression)
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn.utils.validation import _num_samples

from gbtree import GBTClassifier, GBTRanker, GBTRegressor


class OneQueryRanker(GBTRanker):
    """GBTRanker with all rows in one query when ``fit`` / ``score`` get no qid or group.

    GBTRanker itself requires the queries (a clear error without them);
    scikit-learn's checks cannot pass any, so they run on this subclass, which is
    GBTRanker in everything else. With ``rank:pairwise`` any real labels are valid.
    """

    @staticmethod
    def _one_query(X):
        try:
            n = _num_samples(X)
        except TypeError:
            return None   # let GBTRanker report the bad input
        return [n] if n > 0 else None

    def fit(self, X, y, **kwargs):
        if kwargs.get("qid") is None and kwargs.get("group") is None:
            kwargs["group"] = self._one_query(X)
            if kwargs["group"] is None:
                kwargs["group"] = [1]
        return super().fit(X, y, **kwargs)

    def score(self, X, y, qid=None, group=None, sample_weight=None):
        if qid is None and group is None:
            group = self._one_query(X)
        return super().score(X, y, qid=qid, group=group, sample_weight=sample_weight)


# Checks that cannot pass, each with the reason; the dict is the place to record
# one, so that nothing is skipped silently.
EXPECTED_FAILED_CHECKS = {
    "OneQueryRanker": {},
    "GBTClassifier/quantised": {
        f"check_sample_weight_equivalence_on_{kind}_data":
            "quantised gradients (the default) are rounded at random row by row: a repeated "
            "row is rounded once a copy, a weighted row once, so the splits can differ "
            "(float gradients pass: GBTClassifier(grad_quant_bins=None) below)"
        for kind in ("dense", "sparse")
    },
    "GBTClassifier/multi_output_tree": {
        f"check_sample_weight_equivalence_on_{kind}_data":
            "a weight multiplies each row's float32 gradient, which differs from the sum of "
            "repeated rows by float32 rounding: the same trees, probabilities within 4e-9 of "
            "each other, past the check's rtol of 1e-7 for the smallest ones"
        for kind in ("dense", "sparse")
    },
    "GBTRegressor/ordered": {
        **{f"check_sample_weight_equivalence_on_{kind}_data":
           "ordered boosting places a repeated row at several positions of its random orders, "
           "a weighted row at one: the supporting models, and so the trees, differ"
           for kind in ("dense", "sparse")},
        "check_regressor_multioutput": "ordered boosting fits losses of one output only",
    },
}


def _expected_failures(est):
    if getattr(est, "boosting_type", None) == "ordered":
        return EXPECTED_FAILED_CHECKS.get(type(est).__name__ + "/ordered", {})
    vector = getattr(est, "multi_strategy", None) == "multi_output_tree"
    quantised = est._boost_params().grad_quant_bins > 0
    return EXPECTED_FAILED_CHECKS.get(type(est).__name__ + ("/multi_output_tree" if vector
                                                             else "/quantised" if quantised
                                                             else ""), {})


@parametrize_with_checks(
    [GBTRegressor(n_estimators=10), GBTClassifier(n_estimators=10),
     GBTClassifier(n_estimators=10, grad_quant_bins=None),
     OneQueryRanker(objective="rank:pairwise", n_estimators=10),
     GBTRegressor(n_estimators=10, multi_strategy="multi_output_tree"),
     GBTClassifier(n_estimators=10, multi_strategy="multi_output_tree"),
     GBTRegressor(n_estimators=10, grow_policy="symmetric"),
     GBTClassifier(n_estimators=10, grow_policy="symmetric"),
     GBTRegressor(n_estimators=10, boosting_type="ordered")],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def binary():
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, random_state=0)


@pytest.fixture(scope="module")
def regression():
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, random_state=0)


# ---------------------------------------------------------------- ecosystem
def test_clone_pipeline_and_grid_search(binary):
    Xtr, Xte, ytr, yte = binary
    est = GBTClassifier(n_estimators=20)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params() and cloned is not est
    pipe = make_pipeline(StandardScaler(), GBTClassifier(n_estimators=30)).fit(Xtr, ytr)
    assert pipe.score(Xte, yte) > 0.9
    grid = GridSearchCV(GBTClassifier(n_estimators=20), {"max_depth": [2, 4], "learning_rate": [0.1, 0.3]},
                        cv=3, n_jobs=2).fit(Xtr, ytr)
    assert set(grid.best_params_) == {"max_depth", "learning_rate"}
    assert grid.score(Xte, yte) > 0.9
    assert cross_val_score(GBTRegressor(n_estimators=20), *load_diabetes(return_X_y=True), cv=3).mean() > 0.2


def test_inner_threads_follow_joblib_limits():
    # each loky worker of GridSearchCV(n_jobs=2) gets cpu_count // 2 OpenMP threads
    from joblib import Parallel, delayed
    from gbtree.kernels._threads import effective_n_threads

    from joblib import cpu_count
    seen = Parallel(n_jobs=2, backend="loky")(delayed(effective_n_threads)(None) for _ in range(2))
    assert all(s == max(1, cpu_count() // 2) for s in seen)


@pytest.mark.parametrize("Est,data", [(GBTRegressor, "regression"), (GBTClassifier, "binary")])
def test_pickle_and_joblib_round_trip(Est, data, request):
    Xtr, Xte, ytr, yte = request.getfixturevalue(data)
    model = Est(n_estimators=30).fit(Xtr, ytr)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(Xte), model.predict(Xte))
    buf = io.BytesIO()
    joblib.dump(model, buf)
    buf.seek(0)
    loaded = joblib.load(buf)
    np.testing.assert_array_equal(loaded.predict(Xte), model.predict(Xte))
    if Est is GBTClassifier:
        np.testing.assert_array_equal(loaded.predict_proba(Xte), model.predict_proba(Xte))


# ---------------------------------------------------------------- estimator behaviour
def test_regressor_learns_as_well_as_scikit_learn(regression):
    from sklearn.ensemble import HistGradientBoostingRegressor
    Xtr, Xte, ytr, yte = regression
    model = GBTRegressor(n_estimators=100, max_depth=3, learning_rate=0.05).fit(Xtr, ytr)
    hgb = HistGradientBoostingRegressor(max_iter=100, max_depth=3, learning_rate=0.05,
                                        early_stopping=False).fit(Xtr, ytr)
    assert model.score(Xte, yte) > hgb.score(Xte, yte) - 0.03
    assert model.n_estimators_ == 100 and model.n_trees_ == 100


def test_multiclass_with_string_labels():
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    model = GBTClassifier(n_estimators=20).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, ["setosa", "versicolor", "virginica"])
    assert model.n_trees_ == 60   # one tree per class per round
    proba = model.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (model.predict(X) == labels).mean() > 0.95
    assert model.decision_function(X).shape == (150, 3)


def test_binary_decision_function_is_the_log_odds(binary):
    Xtr, Xte, ytr, yte = binary
    model = GBTClassifier(n_estimators=10).fit(Xtr, ytr.astype(bool))
    np.testing.assert_array_equal(model.classes_, [False, True])
    d = model.decision_function(Xte)
    np.testing.assert_allclose(model.predict_proba(Xte)[:, 1], 1 / (1 + np.exp(-d)))
    np.testing.assert_array_equal(model.predict(Xte), d > 0)


def test_starting_value_is_the_class_prior():
    y = np.array([0] * 30 + [1] * 10)
    X = np.zeros((40, 1))
    model = GBTClassifier(n_estimators=1).fit(X, y)   # constant X: no split possible
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], 0.25)
    reg = GBTRegressor(n_estimators=3).fit(X, np.arange(40.0), sample_weight=np.r_[np.ones(20), np.zeros(20)])
    np.testing.assert_allclose(reg.predict(X[:1]), 9.5)


def test_sample_weight_changes_the_model():
    X, y = make_classification(2000, 5, flip_y=0.5, random_state=0)   # noisy: no saturation
    w = np.where(y == 1, 10.0, 1.0)
    plain = GBTClassifier(n_estimators=20).fit(X, y)
    weighted = GBTClassifier(n_estimators=20).fit(X, y, sample_weight=w)
    assert weighted.predict_proba(X)[:, 1].mean() > plain.predict_proba(X)[:, 1].mean() + 0.1
    # integer weights are the same as repeating rows
    w_int = np.random.RandomState(0).randint(0, 3, size=len(y))
    # (of float gradients: quantised ones round a repeated row once a copy)
    a = GBTClassifier(n_estimators=10, grad_quant_bins=None).fit(X, y, sample_weight=w_int)
    b = GBTClassifier(n_estimators=10, grad_quant_bins=None).fit(np.repeat(X, w_int, axis=0),
                                                                 np.repeat(y, w_int))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-5)


def test_feature_importances_follow_the_signal():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 5))
    y = 5 * X[:, 2] + X[:, 4] + rng.normal(scale=0.1, size=3000)
    imp = GBTRegressor(n_estimators=30).fit(X, y).feature_importances_
    np.testing.assert_allclose(imp.sum(), 1.0)
    assert np.argmax(imp) == 2 and imp[4] > imp[[0, 1, 3]].max()
    assert (GBTRegressor(n_estimators=2).fit(np.zeros((10, 3)), np.arange(10.0)).feature_importances_ == 0).all()


def test_dataframe_feature_names():
    pytest.importorskip("pandas")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GBTRegressor(n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(model.feature_names_in_, X.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(model.predict(X), model.predict(X.to_numpy()))


def test_missing_values_are_accepted_and_used():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(4000, 2))
    y = (X[:, 0] > 0).astype(int)
    X[y == 1, 1] = np.nan   # missingness carries the label
    model = GBTClassifier(n_estimators=5, max_depth=1).fit(X[:, 1:], y)
    assert model.score(X[:, 1:], y) == 1.0


def test_max_depth_and_max_leaves_shape_the_trees():
    X, y = make_classification(5000, 10, random_state=0)
    m = GBTClassifier(n_estimators=5, max_depth=2).fit(X, y)
    assert m._ensemble.nodes["depth"].max() == 2
    lg = GBTClassifier(n_estimators=5, grow_policy="lossguide", max_depth=0, max_leaves=5).fit(X, y)
    for t in range(5):
        assert (lg._ensemble.tree(t)["is_leaf"] == 1).sum() == 5
    big_gamma = GBTClassifier(n_estimators=3, gamma=1e9).fit(X, y)
    assert big_gamma._ensemble.nodes.shape[0] == 3   # every tree is a single leaf


def test_learning_rate_scales_the_first_tree():
    X, y = make_classification(1000, 4, random_state=0)
    a = GBTRegressor(n_estimators=1, learning_rate=0.1).fit(X, y.astype(float))
    b = GBTRegressor(n_estimators=1, learning_rate=0.3).fit(X, y.astype(float))
    np.testing.assert_allclose(3 * a._ensemble.nodes["value"], b._ensemble.nodes["value"])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("Est", [GBTRegressor, GBTClassifier])
@pytest.mark.parametrize("bad_y,match", [(np.nan, "y contains NaN"), (np.inf, "y contains infinity")])
def test_nan_or_inf_labels_are_rejected(Est, bad_y, match):
    X = np.random.RandomState(0).normal(size=(20, 2))
    y = np.r_[np.zeros(10), np.ones(10)]
    y[3] = bad_y
    with pytest.raises(ValueError, match=match):
        Est(n_estimators=2).fit(X, y)


@pytest.mark.parametrize("Est", [GBTRegressor, GBTClassifier])
def test_bad_shapes_and_weights_are_rejected(Est):
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(20, 3)), np.r_[np.zeros(10), np.ones(10)]
    est = Est(n_estimators=2)
    # scikit-learn's shape messages, prefixed with the argument they are about
    with pytest.raises(ValueError, match="^X: Found array with 0 sample"):
        est.fit(np.empty((0, 3)), np.empty(0))
    with pytest.raises(ValueError, match="^X: Found array with 0 feature"):
        est.fit(np.empty((20, 0)), y)
    with pytest.raises(ValueError, match="^X: Expected 2D array"):
        est.fit(X[:, 0], y)
    with pytest.raises(ValueError, match="^X and y: .*inconsistent numbers of samples"):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError, match=r"^eval_set\[0\]: X: Expected 2D array"):
        est.fit(X, y, eval_set=[(X[:, 0], y)])
    with pytest.raises(ValueError, match="^y: Complex data not supported"):
        est.fit(X, y + 1j)
    # messages that name their argument are left as they are
    warm = Est(n_estimators=2, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="^X has 2 features, but .* is expecting 3"):
        warm.fit(X[:, :2], y)
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=np.ones(19))
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        est.fit(X, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="Sample weights must contain at least one non-zero"):
        est.fit(X, y, sample_weight=np.zeros(20))
    with pytest.raises(ValueError, match="contains NaN"):
        est.fit(X, y, sample_weight=np.r_[np.nan, np.ones(19)])
    est.fit(X, y)
    with pytest.raises(ValueError, match="^X has 2 features, but .* is expecting 3"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="^X: Found array with 0 sample"):
        est.predict(X[:0])
    with pytest.raises(ValueError, match=r"^eval_set\[0\]: X has 2 features"):
        Est(n_estimators=2).fit(X, y, eval_set=[(X[:, :2], y)])
    X_str = X.astype(object)
    X_str[0, 0] = "a"
    with pytest.raises(ValueError, match="X must hold numbers.*could not convert string to float"):
        est.predict(X_str)


def test_single_class_is_rejected():
    with pytest.raises(ValueError, match="at least two classes"):
        GBTClassifier().fit(np.zeros((5, 2)), ["a"] * 5)


def test_continuous_labels_are_rejected_by_the_classifier():
    with pytest.raises(ValueError, match="y: Unknown label type"):
        GBTClassifier().fit(np.zeros((5, 2)), [0.1, 0.2, 0.3, 0.4, 0.5])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 3), st.sampled_from("ab")), min_size=2, max_size=8)
       .filter(lambda labels: len({type(v) for v in labels}) == 2))
def test_labels_of_mixed_types_are_named_in_any_order(labels):
    # scikit-learn's message was "Unknown label type: unknown. Maybe you are trying to
    # fit a classifier ... on a regression target with continuous values", or, with a
    # string first, NumPy's "'<' not supported between instances of 'int' and 'str'"
    with pytest.raises(ValueError, match="y mixes int and str labels: the class labels must"):
        GBTClassifier().fit(np.zeros((len(labels), 2)), np.array(labels, dtype=object))


@pytest.mark.parametrize("param,value,error", [
    ("n_estimators", 0, ValueError), ("n_estimators", 2.5, TypeError),
    ("learning_rate", 0.0, ValueError), ("learning_rate", "fast", TypeError),
    ("learning_rate", np.nan, ValueError),
    ("max_depth", -1, ValueError), ("max_leaves", 1, ValueError), ("max_leaves", -3, ValueError),
    ("grow_policy", "levelwise", ValueError), ("max_bin", 1, ValueError), ("max_bin", 257, ValueError),
    ("min_child_weight", -1.0, ValueError), ("reg_lambda", -0.1, ValueError),
    ("reg_alpha", -1, ValueError), ("gamma", -1, ValueError), ("max_delta_step", -1, ValueError),
    ("n_jobs", 0, ValueError), ("verbosity", 7, ValueError), ("random_state", "seed", ValueError),
    # beyond a C int: an OverflowError that named nothing
    ("max_depth", 2 ** 31, ValueError), ("max_leaves", 10 ** 10, ValueError),
])
def test_invalid_parameters_name_themselves(param, value, error):
    X, y = make_classification(50, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(error, match=param):
        GBTClassifier(**{param: value}).fit(X, y)


@pytest.mark.parametrize("param,edge,beyond,extra", [
    ("quantile_alpha", 1, 1.5, dict(objective="quantile")),
    ("tweedie_variance_power", 2, 3, dict(objective="tweedie")),
    ("validation_fraction", 1, 1.5, {}),
    ("top_rate", 1, 1.5, dict(sampling_method="goss")),
])
def test_open_upper_bounds_say_the_same_at_and_beyond_the_bound(param, edge, beyond, extra):
    # One message for the interval: the bound itself and values past it both fail
    # with "must be < bound" (the bound alone used to say "<", beyond it "<=")
    X, y = make_regression(50, 3, random_state=0)
    y = np.abs(y) + 1
    for value in (edge, beyond):
        with pytest.raises(ValueError, match=rf"^{param} must be < {edge}, got {value!r}$"):
            GBTRegressor(**{param: value}, **extra).fit(X, y)


def test_list_arguments_and_feature_weights_name_themselves():
    X, y = make_regression(50, 3, random_state=0)
    with pytest.raises(TypeError, match="^sample_weight_eval_set must be a list .* got int"):
        GBTRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)], sample_weight_eval_set=5)
    with pytest.raises(ValueError, match=r"^feature_weights must be numbers, got \['a', 'a', 'a'\]"):
        GBTRegressor(n_estimators=2, colsample_bynode=0.5, feature_weights=["a"] * 3).fit(X, y)


def test_unbounded_trees_are_rejected():
    X, y = make_classification(50, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="max_depth and max_leaves"):
        GBTClassifier(max_depth=0, max_leaves=0).fit(X, y)


def test_verbosity_logs(caplog):
    X, y = make_classification(100, 3, n_informative=2, n_redundant=0, random_state=0)
    GBTClassifier(n_estimators=3, verbosity=2).fit(X, y)
    out = "\n".join(r.getMessage() for r in caplog.records if r.name == "gbtree")
    assert out.count("round") == 3 and "binning" in out
    assert {r.levelname for r in caplog.records if r.name == "gbtree"} == {"INFO"}
    caplog.clear()
    GBTClassifier(n_estimators=3).fit(X, y)
    assert [r for r in caplog.records if r.name == "gbtree"] == []


def test_a_fit_that_fails_leaves_the_fitted_model_as_it_was():
    # scikit-learn's validation set n_features_in_ (and the classifier its classes_)
    # before the weights and parameters were checked: after a failed refit the old
    # trees met the new width, and predict read past the rows it was given
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 40))
    y = X[:, 39] + 0.1 * rng.normal(size=300)
    m = GBTRegressor(n_estimators=3, max_depth=2).fit(X, y)
    before = m.predict(X)
    with pytest.raises(ValueError, match="sample_weight"):
        m.fit(X[:, :1], y, sample_weight=np.full(300, np.nan))
    assert m.n_features_in_ == 40
    np.testing.assert_array_equal(m.predict(X), before)
    with pytest.raises(ValueError, match="expecting 40 features"):
        m.predict(np.ascontiguousarray(X[:, :1]))
    c = GBTClassifier(n_estimators=3).fit(X, (X[:, 0] > 0).astype(int))
    with pytest.raises(ValueError, match="gamma must be >= 0"):
        c.set_params(gamma=-1).fit(X, np.where(X[:, 0] > 0, "cat", "dog"))
    assert c.classes_.tolist() == [0, 1]
    # an estimator never fitted stays unfitted
    fresh = GBTRegressor(reg_lambda=-1)
    with pytest.raises(ValueError, match="reg_lambda"):
        fresh.fit(X, y)
    assert not hasattr(fresh, "n_features_in_")
    # the ensemble itself refuses rows of another width (its kernels do not check)
    with pytest.raises(ValueError, match="X has 1 features, but the model has 40"):
        m._ensemble.predict_raw(np.ascontiguousarray(X[:, :1]))
    with pytest.raises(ValueError, match="X has 1 features, but the model has 40"):
        m._ensemble.apply(np.ascontiguousarray(X[:, :1]))


@pytest.mark.parametrize("Est,params,error,match", [
    # each was a numpy or Python error that named nothing ("unhashable type: 'list'",
    # "The truth value of an array ... is ambiguous", "len() of unsized object", ...)
    (GBTRegressor, dict(objective=["huber"]), ValueError, "^objective must be"),
    (GBTRegressor, dict(objective=np.array(["huber"])), ValueError, "^objective must be"),
    (GBTClassifier, dict(objective=np.array(["log_loss"] * 2)), ValueError, "^objective must be"),
    (GBTRanker, dict(objective=["rank:ndcg"]), ValueError, "^objective must be"),
    (GBTClassifier, dict(class_weight=np.array([1, 2])), ValueError, "^class_weight must be"),
    (GBTRegressor, dict(monotone_constraints=np.ones((3, 1))), ValueError,
     r"^monotone_constraints must be 1-D, got an array of shape \(3, 1\)"),
    (GBTRegressor, dict(monotone_constraints=np.array(1)), ValueError,
     "^monotone_constraints must be 1-D"),
    (GBTRegressor, dict(monotone_constraints=[np.array([1, 1]), 0, 0]), ValueError,
     "^monotone_constraints values must be -1, 0 or 1"),
    (GBTRegressor, dict(eval_metric=[["rmse"]]), ValueError, "^eval_metric must be"),
    (GBTRanker, dict(eval_metric="ndcg@\u00b2"), ValueError,
     "^eval_metric 'ndcg@\u00b2': the cut-off after '@' must be a positive integer"),
])
def test_parameters_of_the_wrong_kind_name_themselves(Est, params, error, match):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    fit = dict(group=[60]) if Est is GBTRanker else {}
    if "eval_metric" in params:
        fit.update(eval_set=[(X, y)], **(dict(eval_group=[[60]]) if Est is GBTRanker else {}))
    with pytest.raises(error, match=match):
        Est(n_estimators=2, **params).fit(X, y, **fit)


def test_callback_classes_and_eval_labels_name_the_argument():
    from gbtree.callback import Callback
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    # the class itself, not an instance: was "before_training() missing 1 required
    # positional argument"
    with pytest.raises(TypeError, match="^callbacks must be gbtree.callback.Callback instances"):
        GBTRegressor(n_estimators=2, callbacks=[Callback]).fit(X, y)
    # a ragged eval y: numpy's "inhomogeneous shape", naming no eval set
    with pytest.raises(ValueError, match=r"^eval_set\[0\]: y must be 1-D"):
        GBTRegressor(n_estimators=2).fit(X, y, eval_set=[(X, [1, [2]] * 30)])
    # eval labels that do not compare with the classes: "'<' not supported between ..."
    labels = np.array(["a", "b"], dtype=object)[y]
    with pytest.raises(ValueError, match=r"^eval_set\[0\]: y has labels not seen in training"):
        GBTClassifier(n_estimators=2).fit(X, labels,
                                          eval_set=[(X, np.ones(60, dtype=object))])
