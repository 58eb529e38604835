"""Categorical features: ordered target statistics (gbtree/data/categorical.py)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV

from gbtree import GBTClassifier, GBTRanker, GBTRegressor, ndcg_at_k
import _reference as ref
from gbtree.data.categorical import CategoricalEncoder, empirical_bayes_smooth, ordered_statistics


def _rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def _category_data(n, n_cats, seed=0, noise=0.5):
    """A high-cardinality category with an effect per category, and a numeric feature."""
    rng = np.random.RandomState(seed)
    effect = np.random.RandomState(99).normal(0, 1, n_cats)
    cat = rng.randint(0, n_cats, n)
    x = rng.normal(size=n)
    y = effect[cat] + 0.5 * x + rng.normal(0, noise, n)
    return np.c_[cat, x].astype(np.float64), y


# ---------------------------------------------------------------------- the statistics
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), n_cats=st.integers(1, 20), seed=st.integers(0, 2 ** 31 - 1),
       smooth=st.floats(0.01, 100.0))
def test_ordered_statistics_match_the_reference_loop(n, n_cats, seed, smooth):
    rng = np.random.RandomState(seed)
    codes = rng.randint(-1, n_cats, n).astype(np.float64)   # -1: a category not seen at fit
    codes[rng.uniform(size=n) < 0.1] = np.nan
    target = rng.normal(size=n) * 10 ** rng.uniform(-3, 3)
    weight = rng.uniform(0, 2, n) * (rng.uniform(size=n) < 0.9)
    prior = float(rng.normal())
    perm = rng.permutation(n)
    np.testing.assert_allclose(ordered_statistics(codes, target, weight, prior, smooth, perm),
                               ref.ordered_statistics(codes, target, weight, prior, smooth, perm),
                               rtol=1e-9, atol=1e-9 * np.abs(target).max())


def test_a_rows_own_label_never_enters_its_statistic():
    # every category seen once: every training row gets the prior, whatever its label
    rng = np.random.RandomState(0)
    y = rng.normal(size=50)
    X = np.c_[np.arange(50.0)]
    enc = CategoricalEncoder([0], smooth=2.0).fit_categories(X)
    out = enc.fit_ordered(enc.codes(X), y, None, seed=1)
    np.testing.assert_array_equal(out[:, 0], np.full(50, y.mean()))
    # at predict the statistic is over all training rows of the category
    np.testing.assert_allclose(enc.transform(enc.codes(X))[:, 0], (y + 2 * y.mean()) / 3)


def test_predict_statistics_by_hand():
    X = np.array([["a"], ["b"], ["a"], [None], ["a"]], dtype=object)
    y = np.array([1.0, 0.0, 0.0, 5.0, 1.0])
    w = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
    enc = CategoricalEncoder([0], smooth=1.0).fit_categories(X)
    enc.fit_ordered(enc.codes(X), y, w, seed=0)
    p = np.sum(w * y) / np.sum(w)
    new = np.array([["a"], ["b"], ["z"], [np.nan]], dtype=object)
    np.testing.assert_allclose(enc.transform(enc.codes(new))[:, 0],
                               [(1 + 0 + 3 + p) / (1 + 1 + 3 + 1), (0 + p) / (2 + 1), p, np.nan])


# ---------------------------------------------------------------------- the effect
def test_a_high_cardinality_category_is_learned():
    X, y = _category_data(6000, 400)
    Xt, yt = _category_data(6000, 400, seed=1)
    params = dict(n_estimators=100, random_state=0)
    as_numbers = _rmse(GBTRegressor(**params).fit(X, y).predict(Xt), yt)
    ordered = _rmse(GBTRegressor(categorical_features=[0], **params).fit(X, y).predict(Xt), yt)
    assert ordered < 0.75 * as_numbers, (ordered, as_numbers)
    # as good as scikit-learn's cross-fitted target encoding in front of the same model
    from sklearn.preprocessing import TargetEncoder
    te = TargetEncoder(target_type="continuous", cv=5)
    Z, Zt = X.copy(), Xt.copy()
    Z[:, 0] = te.fit_transform(X[:, [0]], y)[:, 0]
    Zt[:, 0] = te.transform(Xt[:, [0]])[:, 0]
    cross_fitted = _rmse(GBTRegressor(**params).fit(Z, y).predict(Zt), yt)
    assert ordered < 1.05 * cross_fitted, (ordered, cross_fitted)


def test_ordered_statistics_do_not_leak_the_label_as_greedy_ones_do():
    # an id shared by pairs of rows, unrelated to y: the mean label of a row's id over
    # all rows (greedy) holds the row's own label, and the model learns it; the ordered
    # statistic does not, and the model is about as good as without the id
    rng = np.random.RandomState(0)
    n = 4000
    x = rng.normal(size=(2 * n, 2))
    y = x[:, 0] + np.sin(3 * x[:, 1]) + rng.normal(0, 1.0, 2 * n)
    ids = rng.permutation(np.repeat(np.arange(n), 2)).astype(np.float64)
    train, test = np.arange(n), np.arange(n, 2 * n)
    params = dict(n_estimators=100, random_state=0)
    without = _rmse(GBTRegressor(**params).fit(x[train], y[train]).predict(x[test]), y[test])
    X = np.c_[ids, x]
    ordered = _rmse(GBTRegressor(categorical_features=[0], **params)
                    .fit(X[train], y[train]).predict(X[test]), y[test])
    sums = np.bincount(ids[train].astype(int), y[train], minlength=n)
    counts = np.bincount(ids[train].astype(int), minlength=n)
    prior = y[train].mean()
    greedy = (sums + prior) / (counts + 1)
    G = X.copy()
    G[:, 0] = greedy[ids.astype(int)]
    G[test, 0] = np.where(counts[ids[test].astype(int)] > 0, G[test, 0], prior)
    leaky = _rmse(GBTRegressor(**params).fit(G[train], y[train]).predict(G[test]), y[test])
    assert ordered < 1.03 * without, (ordered, without)
    assert leaky > 1.1 * without, (leaky, without)


def test_binary_classifier_and_ranker_learn_a_category():
    X, y = _category_data(6000, 300)
    Xt, yt = _category_data(6000, 300, seed=1)
    label, label_t = (y > 0).astype(int), (yt > 0).astype(int)
    params = dict(n_estimators=60, random_state=0)
    auc_numbers = roc_auc_score(label_t, GBTClassifier(**params).fit(X, label)
                                .predict_proba(Xt)[:, 1])
    auc_ordered = roc_auc_score(label_t, GBTClassifier(categorical_features=[0], **params)
                                .fit(X, label).predict_proba(Xt)[:, 1])
    assert auc_ordered > auc_numbers + 0.03, (auc_ordered, auc_numbers)
    rel = np.digitize(y, [-1, 0, 1])
    rel_t = np.digitize(yt, [-1, 0, 1])
    group = [30] * 200
    ndcg_numbers = ndcg_at_k(rel_t, GBTRanker(**params).fit(X, rel, group=group).predict(Xt),
                             group=group)
    ndcg_ordered = ndcg_at_k(rel_t, GBTRanker(categorical_features=[0], **params)
                             .fit(X, rel, group=group).predict(Xt), group=group)
    assert ndcg_ordered > ndcg_numbers + 0.02, (ndcg_ordered, ndcg_numbers)


def test_a_missing_category_follows_the_learned_default_direction():
    rng = np.random.RandomState(0)
    cat = rng.randint(0, 20, 3000).astype(np.float64)
    y = cat % 2 + rng.normal(0, 0.1, 3000)
    cat[:300] = np.nan
    y[:300] = 5.0
    model = GBTRegressor(n_estimators=50, categorical_features=[0]).fit(cat[:, None], y)
    pred = model.predict(np.array([[np.nan], [2.0], [3.0]]))
    assert pred[0] == pytest.approx(5.0, abs=0.1)
    assert pred[1] == pytest.approx(0.0, abs=0.1) and pred[2] == pytest.approx(1.0, abs=0.1)


def test_few_categories_keep_a_bin_each_and_their_interactions():
    # a category's effect that flips with x0 for every other category: statistics give
    # categories of similar mean the same values, ordinal codes keep them apart
    def data(n, seed):
        rng = np.random.default_rng(seed)
        effect = np.random.default_rng(5).normal(0, 1, 20)
        cat = rng.integers(0, 20, n)
        x = rng.normal(size=(n, 2))
        y = effect[cat] + x[:, 1] + np.where(cat % 2 == 0, 1, -1) * x[:, 0] + rng.normal(0, 1, n)
        return np.c_[cat, x], y
    X, y = data(8000, 0)
    Xt, yt = data(8000, 1)
    params = dict(n_estimators=100, categorical_features=[0], random_state=0,
                  max_cat_to_onehot=0)
    ordinal = GBTRegressor(**params).fit(X, y)
    statistics = GBTRegressor(max_cat_to_ordinal=0, **params).fit(X, y)
    assert ordinal._cat_encoder.ordinal == [0] and statistics._cat_encoder.ordinal == []
    assert _rmse(ordinal.predict(Xt), yt) < 0.95 * _rmse(statistics.predict(Xt), yt)
    # the codes are the categories' sorted positions; an unseen one is missing
    enc = ordinal._cat_encoder
    np.testing.assert_array_equal(enc.transform(enc.codes(np.array([[19.0, 0, 0], [0.0, 0, 0],
                                                                    [25.0, 0, 0]])))[:, 0],
                                  [19.0, 0.0, np.nan])
    # no target is read: a classifier of several classes takes them
    labels = np.digitize(y, [-1, 1])
    model = GBTClassifier(n_estimators=20, categorical_features=[0]).fit(X, labels)
    assert model.score(Xt, np.digitize(yt, [-1, 1])) > 0.6


def test_ordinal_codes_of_text_follow_the_sorted_values():
    X = np.array([["b"], ["c"], ["a"], [None]], dtype=object)
    enc = CategoricalEncoder([0], smooth=1.0, max_ordinal=3).fit_categories(X)
    enc.fit_ordered(enc.codes(X), np.zeros(4), None, seed=0)
    out = enc.transform(enc.codes(np.array([["a"], ["b"], ["c"], ["d"], [None]], dtype=object)))
    np.testing.assert_array_equal(out[:, 0], [0.0, 1.0, 2.0, np.nan, np.nan])


# ---------------------------------------------------------------------- indicator columns
def _parity_data(n, seed, n_cats=20):
    """A category's effect, and x0's effect that flips sign with the category's parity:
    one-vs-rest splits find it, thresholds on the codes need many."""
    rng = np.random.default_rng(seed)
    effect = np.random.default_rng(5).normal(0, 1, n_cats)
    cat = rng.integers(0, n_cats, n)
    x = rng.normal(size=(n, 2))
    y = effect[cat] + x[:, 1] + np.where(cat % 2 == 0, 1, -1) * x[:, 0] + rng.normal(0, 1, n)
    return np.c_[cat, x], y


def test_indicator_columns_by_hand():
    X = np.array([[2.0, 0.1], [5.0, 0.2], [7.0, 0.3], [5.0, 0.4], [9.0, 0.5], [40.0, 0.6]])
    enc = CategoricalEncoder([0], smooth=1.0, max_ordinal=0, max_onehot=5).fit_categories(X)
    # 5 categories at fit; the last row (40) is held out of the training rows
    enc.fit_ordered(enc.codes(X[:5]), np.arange(5.0), None, seed=0)
    np.testing.assert_array_equal(enc.indicators, [[0, 0], [0, 1], [0, 2], [0, 3]])
    rows = np.array([[5.0, 1.0], [9.0, 1.0], [40.0, 1.0], [3.0, 1.0], [np.nan, 1.0]])
    out = enc.transform(enc.codes(rows))
    assert out.shape == (5, 2 + 4)
    np.testing.assert_array_equal(out[:, 2:], [[0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0],
                                               [0, 0, 0, 0], [np.nan] * 4])
    np.testing.assert_array_equal(out[:, :2], enc.transform(enc.codes(rows))[:, :2])
    assert enc.feature_names(["shop", "x"])[2:] == ["shop==2.0", "shop==5.0", "shop==7.0",
                                                    "shop==9.0"]
    # the training rows get the same indicators with their ordered statistics
    np.testing.assert_array_equal(enc.ordered(enc.codes(X[:5]), np.arange(5.0), None)[:, 2:],
                                  np.eye(4)[[0, 1, 2, 1, 3]])
    # 2 categories: a threshold on the codes is a one-vs-rest split already
    two = CategoricalEncoder([0], 1.0, 0, max_onehot=5).fit_categories(X[:2])
    assert two.onehot_columns() == []


def test_indicator_columns_make_one_vs_rest_splits():
    X, y = _parity_data(8000, 0)
    Xt, yt = _parity_data(8000, 1)
    for shape in (dict(), dict(grow_policy="symmetric", max_depth=6)):
        params = dict(n_estimators=100, categorical_features=[0], random_state=0, **shape)
        with_ = GBTRegressor(**params).fit(X, y)
        without = GBTRegressor(max_cat_to_onehot=0, **params).fit(X, y)
        assert with_._cat_encoder.indicators.shape == (20, 2)
        assert without._cat_encoder.indicators.shape == (0, 2)
        assert with_._ensemble.n_features == 23 and with_.n_features_in_ == 3
        used = np.unique(with_._ensemble.nodes["feature"][with_._ensemble.nodes["is_leaf"] == 0])
        assert np.any(used >= 3)
        # the error above the noise's (variance 1)
        excess = [_rmse(m.predict(Xt), yt) ** 2 - 1 for m in (with_, without)]
        assert excess[0] < 0.8 * excess[1], (shape, excess)


def test_indicator_values_are_added_to_their_column():
    X, y = _parity_data(3000, 2, n_cats=6)
    model = GBTRegressor(n_estimators=30, max_depth=4, categorical_features=[0]).fit(X, y)
    wide = model._cat_encoder.transform(model._cat_encoder.codes(X))
    assert wide.shape == (3000, 3 + 6)
    parents = model._cat_encoder.parents()
    np.testing.assert_array_equal(parents, [0, 1, 2, 0, 0, 0, 0, 0, 0])
    # importances of every kind
    for kind in ("weight", "gain", "total_gain", "cover", "total_cover"):
        model.set_params(importance_type=kind)
        raw = model._ensemble.feature_importances(kind)
        assert raw[3:].sum() > 0
        expected = np.bincount(parents, raw, minlength=3)
        np.testing.assert_allclose(model.feature_importances_, expected / expected.sum())
    # SHAP values and interaction values, against the trees' own features
    from gbtree.explaining.explain import shap_values
    for mode, axes in (("contribs", 2), ("approx", 2), ("interactions", 3)):
        wide_values = shap_values(model._ensemble, wide[:200], mode)[:, 0]
        got = model.predict(X[:200], pred_contribs=mode != "interactions",
                            approx_contribs=mode == "approx",
                            pred_interactions=mode == "interactions")
        assert got.shape == (200,) + (4,) * (axes - 1)
        groups = np.r_[parents, 9]   # (the bias)
        folded = np.zeros((200,) + (4,) * (axes - 1))
        for i in range(10):
            if mode == "interactions":
                for k in range(10):
                    folded[:, min(groups[i], 3) if i < 9 else 3,
                           min(groups[k], 3) if k < 9 else 3] += wide_values[:, i, k]
            else:
                folded[:, groups[i] if i < 9 else 3] += wide_values[:, i]
        np.testing.assert_allclose(got, folded, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.predict(X[:200], pred_contribs=True).sum(axis=1),
                               model.predict(X[:200]), rtol=1e-9, atol=1e-9)


def test_indicator_columns_take_their_columns_constraints_and_weights():
    X, y = _parity_data(3000, 3, n_cats=6)
    X = np.c_[X, np.random.default_rng(0).normal(size=3000)]
    base = dict(n_estimators=20, max_depth=4, categorical_features=[0])
    # feature weight 0 on the categorical column: neither it nor its indicators split
    model = GBTRegressor(colsample_bynode=0.5, feature_weights=[0, 1, 1, 1], **base).fit(X, y)
    split = model._ensemble.nodes["feature"][model._ensemble.nodes["is_leaf"] == 0]
    assert split.size and not np.any(np.isin(split, [0] + list(range(4, 10))))
    # interaction groups: an indicator belongs to its column's groups
    model = GBTRegressor(interaction_constraints=[[0, 2], [1, 3]], **base).fit(X, y)
    parents = model._cat_encoder.parents()
    assert np.any(model._ensemble.nodes["feature"] >= 4)
    for t in range(model.n_trees_):
        tree = model._ensemble.tree(t)
        used = set(parents[tree["feature"][tree["is_leaf"] == 0]].tolist())
        assert used <= {0, 2} or used <= {1, 3}, used
    # a monotone constraint on a numeric column holds with indicators beside it
    model = GBTRegressor(monotone_constraints=[0, 0, 1, 0], **base).fit(X, y)
    grid = np.repeat(X[:50], 20, axis=0)
    grid[:, 2] = np.tile(np.linspace(-3, 3, 20), 50)
    assert np.all(np.diff(model.predict(grid).reshape(50, 20), axis=1) >= -1e-12)


def test_warm_start_keeps_the_indicator_columns():
    X, y = _parity_data(2000, 4, n_cats=8)
    one = GBTRegressor(n_estimators=10, categorical_features=[0]).fit(X, y)
    two = GBTRegressor(n_estimators=5, categorical_features=[0], warm_start=True).fit(X, y)
    two.set_params(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(two.predict(X), one.predict(X))
    with pytest.raises(ValueError, match="max_cat_to_onehot"):
        two.set_params(n_estimators=12, max_cat_to_onehot=0).fit(X, y)


# ---------------------------------------------------------------------- inputs
def _frames(cat_text, x):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    as_list = [[c, v] for c, v in zip(cat_text, x)]
    return {
        "pandas category": pd.DataFrame({"c": pd.Categorical(cat_text), "x": x}),
        "pandas object": pd.DataFrame({"c": np.array(cat_text, dtype=object), "x": x}),
        "polars": pl.DataFrame({"c": pl.Series(list(cat_text), dtype=pl.Categorical), "x": x}),
        "pyarrow": pa.table({"c": pa.array(list(cat_text)).dictionary_encode(), "x": x}),
        "numpy object": np.array(as_list, dtype=object),
        "list": as_list,
    }


def test_every_input_type_gives_the_same_model():
    # the statistics depend only on which rows share a value: text, codes, frames alike
    X, y = _category_data(1500, 40)
    text = np.array([f"city{int(c)}" for c in X[:, 0]])
    params = dict(n_estimators=20, categorical_features=[0])
    expected = GBTRegressor(**params).fit(X, y).predict(X)
    for name, frame in _frames(text, X[:, 1]).items():
        model = GBTRegressor(**params).fit(frame, y)
        np.testing.assert_array_equal(model.predict(frame), expected, err_msg=name)
        np.testing.assert_array_equal(model.is_categorical_, [True, False])


def test_from_dtype_and_names_select_the_columns():
    pd = pytest.importorskip("pandas")
    X, y = _category_data(1000, 30)
    df = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    by_dtype = GBTRegressor(n_estimators=10, categorical_features="from_dtype").fit(df, y)
    by_name = GBTRegressor(n_estimators=10, categorical_features=["c"]).fit(df, y)
    by_mask = GBTRegressor(n_estimators=10, categorical_features=[True, False]).fit(df, y)
    expected = GBTRegressor(n_estimators=10, categorical_features=[0]).fit(X, y).predict(X)
    for model in (by_dtype, by_name, by_mask):
        np.testing.assert_array_equal(model.predict(df), expected)
    # a numeric array has no dtypes to read: no categorical column, as without the option
    plain = GBTRegressor(n_estimators=10, categorical_features="from_dtype").fit(X, y)
    assert plain.is_categorical_ is None
    np.testing.assert_array_equal(plain.predict(X),
                                  GBTRegressor(n_estimators=10).fit(X, y).predict(X))


def test_the_input_is_not_changed():
    pd = pytest.importorskip("pandas")
    X, y = _category_data(500, 10)
    df = pd.DataFrame({"c": pd.Categorical(X[:, 0].astype(int).astype(str)), "x": X[:, 1]})
    before_df, before_X = df.copy(), X.copy()
    GBTRegressor(n_estimators=5, categorical_features=["c"]).fit(df, y).predict(df)
    GBTRegressor(n_estimators=5, categorical_features=[0]).fit(X, y).predict(X)
    pd.testing.assert_frame_equal(df, before_df)
    np.testing.assert_array_equal(X, before_X)


def test_unseen_categories_get_the_prior_at_predict():
    X = np.array([[0.0], [0.0], [1.0], [1.0]] * 10)
    y = np.array([0.0, 0.0, 10.0, 10.0] * 10)
    model = GBTRegressor(n_estimators=30, categorical_features=[0], max_cat_to_ordinal=0,
                         min_child_weight=0).fit(X, y)
    enc = model._cat_encoder
    assert enc.transform(enc.codes(np.array([[7.0]])))[0, 0] == pytest.approx(5.0)
    seen0, seen1, unseen = model.predict(np.array([[0.0], [1.0], [7.0]]))
    assert seen0 < unseen < seen1


# ---------------------------------------------------------------------- the estimator's contract
def test_eval_sets_and_the_hold_out_use_the_statistics_of_the_training_rows():
    X, y = _category_data(3000, 100)
    Xv, yv = _category_data(1000, 100, seed=1)
    model = GBTRegressor(n_estimators=20, categorical_features=[0], validation_fraction=0.2,
                         eval_metric="rmse").fit(X, y, eval_set=[(Xv, yv)])
    assert model.evals_result_["validation_0"]["rmse"][-1] == pytest.approx(
        _rmse(model.predict(Xv), yv), rel=1e-6)
    assert "validation" in model.evals_result_


def test_warm_start_equals_one_fit():
    X, y = _category_data(2000, 50)
    one = GBTRegressor(n_estimators=10, categorical_features=[0]).fit(X, y)
    two = GBTRegressor(n_estimators=5, categorical_features=[0], warm_start=True).fit(X, y)
    two.set_params(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(two.predict(X), one.predict(X))
    for change in (dict(categorical_features=None), dict(cat_smooth=3.0),
                   dict(max_cat_to_ordinal=100)):
        with pytest.raises(ValueError, match="warm_start=True continues the fitted model, "
                                             "whose categorical columns"):
            two_changed = pickle.loads(pickle.dumps(two)).set_params(n_estimators=12, **change)
            two_changed.fit(X, y)


def test_threads_pickle_clone_and_grid_search():
    X, y = _category_data(2000, 50)
    one = GBTRegressor(n_estimators=10, categorical_features=[0], n_jobs=1).fit(X, y)
    two = GBTRegressor(n_estimators=10, categorical_features=[0], n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(one)).predict(X), one.predict(X))
    assert clone(one).get_params()["categorical_features"] == [0]
    search = GridSearchCV(GBTRegressor(n_estimators=10, categorical_features=[0]),
                          {"cat_smooth": [0.5, 20.0]}, cv=2).fit(X, y)
    assert search.best_params_["cat_smooth"] in (0.5, 20.0)


def test_cat_smooth_pulls_rare_categories_to_the_prior():
    X, y = _category_data(2000, 50)
    low = GBTRegressor(n_estimators=5, categorical_features=[0], cat_smooth=0.1).fit(X, y)
    high = GBTRegressor(n_estimators=5, categorical_features=[0], cat_smooth=1000.0).fit(X, y)
    spread = [np.std(m._cat_encoder.tables[0]) for m in (low, high)]
    assert spread[1] < 0.2 * spread[0]


@pytest.mark.parametrize("spec, error, match", [
    ([5], ValueError, r"categorical_features: 5 is not a feature index in \[0, 2\)"),
    ([-1], ValueError, "is not a feature index"),
    ([0, 0], ValueError, "lists a feature twice"),
    ([True], ValueError, r"boolean mask must have one entry per feature \(2\), got 1"),
    (["city"], ValueError, "X has no column names"),
    ("auto", ValueError, "categorical_features must be None, 'from_dtype'"),
    (3, TypeError, "categorical_features must be None, 'from_dtype'"),
    ([1.5], ValueError, "1.5 is not a feature index"),
])
def test_bad_categorical_features_name_themselves(spec, error, match):
    X, y = _category_data(100, 5)
    with pytest.raises(error, match=match):
        GBTRegressor(n_estimators=2, categorical_features=spec).fit(X, y)


@pytest.mark.parametrize("param, value, error", [
    ("cat_smooth", 0, ValueError), ("cat_smooth", -1.0, ValueError),
    ("cat_smooth", np.inf, ValueError), ("cat_smooth", "1", ValueError),
    ("cat_smooth", None, TypeError),
    ("max_cat_to_ordinal", -1, ValueError), ("max_cat_to_ordinal", 2.5, TypeError),
    ("max_cat_to_onehot", -1, ValueError), ("max_cat_to_onehot", 2.5, TypeError),
])
def test_bad_categorical_numbers_name_themselves(param, value, error):
    X, y = _category_data(100, 5)
    with pytest.raises(error, match=f"{param} must"):
        GBTRegressor(n_estimators=2, categorical_features=[0], **{param: value}).fit(X, y)


def test_what_categorical_features_cannot_take_is_refused_clearly():
    X, y = _category_data(300, 5)
    with pytest.raises(ValueError, match="not a classifier of 3 classes"):
        GBTClassifier(n_estimators=2, categorical_features=[0], max_cat_to_ordinal=4).fit(
            X, np.arange(300) % 3)
    with pytest.raises(ValueError, match="cannot be used with a scipy.sparse X"):
        GBTRegressor(n_estimators=2, categorical_features=[0]).fit(sp.csr_matrix(X), y)
    model = GBTRegressor(n_estimators=2, categorical_features=[0]).fit(X, y)
    # text in a column of numbers: another value (as in a dict), so an unseen category
    np.testing.assert_array_equal(model.predict(np.array([["2", 1.0], ["a", 1.0]], dtype=object)),
                                  model.predict(np.array([[1e9, 1.0], [1e9, 1.0]])))
    with pytest.raises(TypeError, match=r"X: categorical feature \(column 0\): its values must be "
                                        r"hashable"):
        GBTRegressor(n_estimators=2, categorical_features=[0]).fit(
            np.array([[[1], 1.0], [[2], 2.0]] * 5, dtype=object), np.arange(10.0))
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"c": ["a", "b"] * 5, "x": np.arange(10.0)})
    with pytest.raises(ValueError, match="unknown feature 'd'"):
        GBTRegressor(n_estimators=2, categorical_features=["d"]).fit(df, np.arange(10.0))
    # a text column not named categorical: the error says how to name it
    with pytest.raises(ValueError, match=r"column 'c'.*categorical_features"):
        GBTRegressor(n_estimators=2).fit(df, np.arange(10.0))


def test_factorize_without_pandas_matches_pandas():
    # pandas' hash table when it is installed, a dict otherwise: the same groups
    pytest.importorskip("pandas")
    from gbtree.data.categorical import _factorize
    rng = np.random.RandomState(0)
    pool = np.array(["a", "b", 3, 3.0, None, np.nan, "c", 7], dtype=object)
    col = pool[rng.randint(0, len(pool), 500)]
    u_pd, inv_pd = _factorize(col, "X: c")
    u_py, inv_py = _factorize(col, "X: c", use_pandas=False)
    assert len(u_pd) == len(u_py) == 5   # a, b, 3 (= 3.0), c, 7
    as_values = lambda u, inv: [None if i < 0 else u[i] for i in inv]  # noqa: E731
    assert as_values(u_pd, inv_pd) == as_values(u_py, inv_py)
    assert np.array_equal(inv_pd < 0, inv_py < 0)


def test_declared_but_absent_pandas_categories_do_not_count():
    pd = pytest.importorskip("pandas")
    values = np.arange(100) % 3
    df = pd.DataFrame({"c": pd.Categorical(values, categories=range(50))})
    model = GBTRegressor(n_estimators=5, categorical_features="from_dtype").fit(df, values * 1.0)
    assert len(model._cat_encoder.categories[0]) == 3 and model._cat_encoder.ordinal == [0]


def test_ranker_with_a_query_column_and_a_named_category():
    # the query-id column is taken out first; the categorical names refer to the rest
    pd = pytest.importorskip("pandas")
    X, y = _category_data(3000, 200)
    rel = np.digitize(y, [-1, 0, 1])
    df = pd.DataFrame({"q": np.repeat(np.arange(100), 30), "shop": X[:, 0].astype(int),
                       "x": X[:, 1]})
    model = GBTRanker(n_estimators=20, categorical_features=["shop"]).fit(df, rel, qid="q")
    np.testing.assert_array_equal(model.is_categorical_, [True, False])
    expected = GBTRanker(n_estimators=20, categorical_features=[0]).fit(
        X, rel, group=[30] * 100).predict(X)
    np.testing.assert_array_equal(model.predict(df), expected)


# ---------------------------------------------------------------------- found by a review
def test_missing_values_stay_missing_in_every_frame():
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    y = np.array([0.0, 10.0, 20.0] * 20)
    text = np.array(["a", None, "b"] * 20, dtype=object)
    as_objects = GBTRegressor(n_estimators=20, categorical_features=[0]).fit(text[:, None], y)
    expected = as_objects.predict(text[:3, None])
    # a pyarrow dictionary column read its nulls as values
    table = pa.table({"c": pa.array(list(text)).dictionary_encode()})
    model = GBTRegressor(n_estimators=20, categorical_features="from_dtype").fit(table, y)
    np.testing.assert_array_equal(model.predict(table)[:3], expected)
    # a pandas categorical NaN, for a column fitted as numbers, was read as the last
    # category (or raised IndexError when every value was missing)
    numbers = GBTRegressor(n_estimators=20, categorical_features=["c"]).fit(
        pd.DataFrame({"c": [0.0, 1.0, 2.0] * 20}), y)
    np.testing.assert_array_equal(
        numbers.predict(pd.DataFrame({"c": pd.Categorical([np.nan, 2.0])})),
        numbers.predict(pd.DataFrame({"c": [np.nan, 2.0]})))
    empty = GBTRegressor(n_estimators=2, categorical_features=[0]).fit(
        pd.DataFrame({"c": [np.nan] * 60}), y)
    assert empty.predict(pd.DataFrame({"c": pd.Categorical([np.nan])})).shape == (1,)


def test_integer_categories_beyond_float_precision_stay_apart():
    ids = np.array([2 ** 53, 2 ** 53 + 1] * 30, dtype=np.int64)
    y = np.array([0.0, 10.0] * 30)
    model = GBTRegressor(n_estimators=50, categorical_features=[0], min_child_weight=0).fit(
        ids[:, None], y)
    assert len(model._cat_encoder.categories[0]) == 2
    np.testing.assert_allclose(model.predict(ids[:2, None]), [0.0, 10.0], atol=0.1)


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_other_columns_at_predict_get_the_usual_messages():
    pd = pytest.importorskip("pandas")
    y = np.array([0.0, 10.0, 20.0] * 20)
    df = pd.DataFrame({"x": y, "c": ["a", "b", "c"] * 20})
    model = GBTRegressor(n_estimators=2, categorical_features=["c"]).fit(df, y)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(pd.DataFrame({"x": [1.0]}))
    with pytest.raises(ValueError, match="X has 1 features, but GBTRegressor is expecting 2"):
        model.predict(np.ones((1, 1)))
    with pytest.raises(ValueError, match="^X: Expected a 2D array"):
        model.predict(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(df[["c", "x"]])
    with pytest.raises(ValueError, match=r"^eval_set\[0\]: X: The feature names should match"):
        GBTRegressor(n_estimators=2, categorical_features=[1]).fit(
            df, y, eval_set=[(pd.DataFrame({"x": y}), y)])
    with pytest.raises(ValueError, match="^X: "):
        GBTRegressor(categorical_features=[0]).fit([["a", 0.5], ["b"]], [1.0, 2.0])


def test_a_data_frame_subclass_is_a_frame():
    pd = pytest.importorskip("pandas")

    class Frame(pd.DataFrame):
        @property
        def _constructor(self):
            return Frame

    y = np.array([0.0, 10.0] * 30)
    df = Frame({"c": pd.Categorical(list("ab") * 30), "x": y})
    for spec in (["c"], "from_dtype"):
        model = GBTRegressor(n_estimators=5, categorical_features=spec).fit(df, y)
        np.testing.assert_array_equal(model.is_categorical_, [True, False])


def test_categorical_numbers_are_checked_without_categorical_features():
    X, y = _category_data(100, 5)
    with pytest.raises(ValueError, match="cat_smooth must be > 0"):
        GBTRegressor(n_estimators=2, cat_smooth=-1).fit(X, y)
    with pytest.raises(TypeError, match="max_cat_to_ordinal must be an integer"):
        GBTRegressor(n_estimators=2, max_cat_to_ordinal="x").fit(X, y)


def test_a_category_only_in_the_hold_out_is_unseen():
    # its ordinal code was binned and predicted like its neighbour in sorted order
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    c = rng.choice(["a", "c", "e"], 400).astype(object)
    c[0] = "d"
    y = np.select([c == "a", c == "c", c == "e"], [0.0, 10.0, 20.0], 5.0)
    model = GBTRegressor(n_estimators=50, categorical_features=["c"], validation_fraction=0.5,
                         random_state=1, min_child_weight=0).fit(pd.DataFrame({"c": c}), y)
    assert not model._cat_encoder.observed[0][model._cat_encoder.categories[0]["d"]]
    d, missing, unseen = model.predict(pd.DataFrame({"c": ["d", None, "zzz"]}))
    assert d == missing == unseen


def test_mixed_types_sort_by_type_then_value_whatever_the_row_order():
    values = np.array(["b", 1, "a", 2, 1.5], dtype=object)[:, None]
    one = CategoricalEncoder([0], 1.0, 32).fit_categories(values)
    other = CategoricalEncoder([0], 1.0, 32).fit_categories(values[::-1])
    assert one.categories[0] == other.categories[0] == {1.5: 0, 1: 1, 2: 2, "a": 3, "b": 4}


def test_statistics_keep_their_precision_next_to_large_targets():
    rng = np.random.default_rng(0)
    codes = np.repeat([0.0, 1.0, 2.0], 1000)
    y = np.r_[np.full(1000, 1e12), rng.normal(1, 1, 1000), np.full(1000, -1e12)]
    w, perm = np.ones(3000), rng.permutation(3000)
    fast = ordered_statistics(codes, y, w, 0.3, 1.0, perm)
    slow = ref.ordered_statistics(codes, y, w, 0.3, 1.0, perm)
    np.testing.assert_allclose(fast[codes == 1], slow[codes == 1], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- cat_smooth="auto"
def _auto(codes, y, w):
    n_cats = int(codes.max()) + 1
    sum_wy = np.bincount(codes, w * y, minlength=n_cats)
    sum_w = np.bincount(codes, w, minlength=n_cats)
    return empirical_bayes_smooth(sum_wy, sum_w, codes.astype(np.float64), y, w)


def test_auto_smoothing_recovers_the_variance_ratio_at_any_weight_scale():
    # category means of variance 1, y within a category of variance 0.25: a = 0.25
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 500, 50_000)
    y = rng.normal(0, 1, 500)[codes] + rng.normal(0, 0.5, codes.size)
    a = _auto(codes, y, np.ones(codes.size))
    assert a == pytest.approx(0.25, rel=0.2)
    # weights in other units: a in those units, the same statistics
    assert _auto(codes, y, np.full(codes.size, 1000.0)) == pytest.approx(1000 * a, rel=1e-9)


def test_auto_smoothing_of_a_column_without_signal_keeps_the_prior():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 300, (6000, 1)).astype(np.float64)
    y = rng.normal(size=6000)
    model = GBTRegressor(n_estimators=5, categorical_features=[0]).fit(X, y)
    enc = model._cat_encoder
    assert enc.smooths[0] == pytest.approx(6000.0)
    assert np.ptp(enc.tables[0]) < 0.05 * np.std(y)
    # (a fixed weight of 1 spreads the same column's statistics over the noise)
    loose = GBTRegressor(n_estimators=5, categorical_features=[0], cat_smooth=1.0).fit(X, y)
    assert np.ptp(loose._cat_encoder.tables[0]) > 10 * np.ptp(enc.tables[0])


def test_auto_smoothing_at_the_edges_gives_a_positive_weight():
    ones = np.ones(6)
    # one category: the total weight; every category a single row: one row's weight
    # (both in the weights' units, so that scaling the weights changes nothing)
    for scale in (1.0, 100.0):
        assert _auto(np.zeros(6, dtype=np.intp), np.arange(6.0), scale * ones) == 6 * scale
        assert _auto(np.arange(6), np.arange(6.0), scale * ones) == scale
    # y constant within each category: a > 0, and no 0/0 in the statistics
    codes = np.array([0, 0, 1, 1, 2, 2])
    a = _auto(codes, np.array([1.0, 1.0, 5.0, 5.0, 9.0, 9.0]), ones)
    assert 0 < a < 1e-6
    values = ordered_statistics(codes.astype(np.float64), np.array([1.0, 1, 5, 5, 9, 9]), ones,
                                5.0, a, np.arange(6))
    np.testing.assert_allclose(values, [5.0, 1.0, 5.0, 5.0, 5.0, 9.0])


def test_integer_ids_with_nulls_in_polars_and_pyarrow_stay_apart():
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    big = 2 ** 53
    ids = [big, big + 1] * 30 + [None]
    y = np.r_[np.tile([0.0, 10.0], 30), 5.0]
    for frame in (pa.table({"c": pa.array(ids, pa.int64())}),
                  pl.DataFrame({"c": pl.Series(ids, dtype=pl.Int64)})):
        model = GBTRegressor(n_estimators=50, categorical_features=["c"],
                             min_child_weight=0).fit(frame, y)
        assert len(model._cat_encoder.categories[0]) == 2
        np.testing.assert_allclose(model.predict(frame)[:2], [0.0, 10.0], atol=0.5)


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_other_columns_with_text_in_them_get_the_column_message():
    # scikit-learn's own check first stumbled on the text: "X must hold numbers"
    pd = pytest.importorskip("pandas")
    X = np.array([["a", 0.0], ["b", 1.0]] * 20, dtype=object)
    model = GBTRegressor(n_estimators=2, categorical_features=[0]).fit(X, np.arange(40.0))
    with pytest.raises(ValueError, match="X has 1 features, but GBTRegressor is expecting 2"):
        model.predict(X[:, :1])
    with pytest.raises(ValueError, match="X has 1 features, but GBTRegressor is expecting 2"):
        model.predict([["a"]])
    with pytest.raises(ValueError, match=r"^X: Expected a 2D array or data frame with 2 columns"):
        model.predict(np.array(["a", 1.0], dtype=object))
    with pytest.raises(ValueError, match=r"^eval_set\[0\]: X has 1 features"):
        GBTRegressor(n_estimators=2, categorical_features=[0]).fit(
            X, np.arange(40.0), eval_set=[(X[:, :1], np.arange(40.0))])
    df = pd.DataFrame(X)   # integer column names, which scikit-learn does not compare
    named = GBTRegressor(n_estimators=2, categorical_features=[0]).fit(df, np.arange(40.0))
    with pytest.raises(ValueError, match="feature names should match"):
        named.predict(df[[1, 0]])


def test_warm_start_on_reordered_columns_says_so():
    pd = pytest.importorskip("pandas")
    X, y = _category_data(500, 40)
    df = pd.DataFrame({"c": X[:, 0], "x": X[:, 1]})
    model = GBTRegressor(n_estimators=3, categorical_features=["c"], warm_start=True).fit(df, y)
    with pytest.raises(ValueError, match="feature names should match"):
        model.set_params(n_estimators=6).fit(df[["x", "c"]], y)
