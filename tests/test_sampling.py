"""Row sampling (subsample, GOSS), out-of-bag estimates, column sampling, feature
weights, interaction constraints; all reproducible at any n_jobs."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from gbtree import GBTClassifier, GBTRegressor
from gbtree.callback import Callback


def _trees(model):
    ens = model._ensemble
    return [ens.tree(t) for t in range(ens.n_trees)]


def _paths(tree, node=0, used=()):
    """Feature sets on every root-to-leaf path."""
    if tree[node]["is_leaf"]:
        yield set(used)
        return
    f = int(tree[node]["feature"])
    for child in (tree[node]["left"], tree[node]["right"]):
        yield from _paths(tree, child, used + (f,))


@pytest.fixture(scope="module")
def large_binary():
    X, y = make_classification(60_000, 20, n_informative=8, flip_y=0.05, random_state=0)
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize("params,expected_rows", [
    (dict(subsample=0.5), 0.5), (dict(sampling_method="goss", top_rate=0.2, other_rate=0.1), 0.3)])
def test_row_sampling_grows_trees_on_fewer_rows_and_keeps_accuracy(large_binary, params, expected_rows):
    Xtr, Xte, ytr, yte = large_binary
    common = dict(n_estimators=80, learning_rate=0.2, max_depth=6)
    full = GBTClassifier(**common).fit(Xtr, ytr)
    sampled = GBTClassifier(**common, **params).fit(Xtr, ytr)
    # the root of every tree (so its histogram) holds only the sampled rows
    roots = np.array([t[0]["count"] for t in _trees(sampled)])
    if "subsample" in params:
        assert np.all(np.abs(roots / len(ytr) - expected_rows) < 0.02)
    else:
        assert np.all(roots == int(0.2 * len(ytr)) + int(0.1 * len(ytr)))
    assert all(t[0]["count"] == len(ytr) for t in _trees(full))
    auc_full = roc_auc_score(yte, full.predict_proba(Xte)[:, 1])
    auc_sampled = roc_auc_score(yte, sampled.predict_proba(Xte)[:, 1])
    assert auc_sampled >= 0.99 * auc_full


def test_unsampled_rows_get_the_tree_predictions():
    # the training raw predictions (kept by the loop) must equal a fresh prediction
    X, y = make_regression(3000, 5, noise=10, random_state=0)
    X[::9, 2] = np.nan
    model = GBTRegressor(n_estimators=15, subsample=0.3, eval_metric="rmse").fit(
        X, y, eval_set=[(X, y)])
    rmse = np.sqrt(np.mean((model.predict(X) - y) ** 2))
    assert model.evals_result_["validation_0"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)
    for objective in ("absolute_error", "squared_error"):
        m = GBTRegressor(objective=objective, n_estimators=10, sampling_method="goss").fit(X, y)
        staged = list(m.staged_predict(X))
        np.testing.assert_allclose(staged[-1], m.predict(X), rtol=1e-12)


def test_out_of_bag_improvement():
    X, y = make_regression(4000, 8, noise=20, random_state=0)
    model = GBTRegressor(n_estimators=60, subsample=0.5, learning_rate=0.1).fit(X, y)
    assert model.oob_improvement_.shape == model.oob_scores_.shape == (60,)
    assert model.oob_score_ == model.oob_scores_[-1]
    assert np.all(model.oob_improvement_[:10] > 0)   # early rounds help held-out rows
    assert model.oob_scores_[-1] < model.oob_scores_[0] / 5
    assert not hasattr(GBTRegressor(n_estimators=3).fit(X, y), "oob_improvement_")
    # a fit without sampling drops the estimates of the fit before (oob_score_ stayed)
    model.set_params(subsample=1.0, n_estimators=3).fit(X, y)
    assert not any(hasattr(model, k) for k in ("oob_improvement_", "oob_scores_", "oob_score_"))


def test_out_of_bag_rows_of_weight_zero_give_nan_not_an_error():
    # Only row 0 weighs anything: in rounds that leave it out of bag, the out-of-bag
    # rows weigh 0 in all, which was a ZeroDivisionError from np.average
    X = np.arange(40.0).reshape(-1, 1)
    w = np.zeros(40)
    w[0] = 1.0
    model = GBTRegressor(n_estimators=20, subsample=0.5).fit(X, np.arange(40.0), sample_weight=w)
    row0_drawn = np.isnan(model.oob_scores_)
    assert 0 < row0_drawn.sum() < 20     # row 0 was drawn in some rounds, not all
    assert np.all(np.isnan(model.oob_improvement_[row0_drawn]))
    assert np.all(np.isfinite(model.oob_scores_[~row0_drawn]))


def test_no_round_with_sampling_leaves_no_estimate():
    class StopAtOnce(Callback):
        def before_iteration(self, state):
            return True
    X, y = make_regression(100, 3, random_state=0)
    model = GBTRegressor(subsample=0.5, callbacks=[StopAtOnce()]).fit(X, y, eval_set=[(X, y)])
    assert model.n_estimators_ == 0 and model.best_iteration_ == -1
    assert model.best_score_ is None and model.oob_scores_.shape == (0,)
    assert not hasattr(model, "oob_score_")


def test_column_sampling_never_uses_an_excluded_feature():
    X, y = make_regression(2000, 12, n_informative=12, random_state=0)
    model = GBTRegressor(n_estimators=30, colsample_bytree=0.5, max_depth=4).fit(X, y)
    per_tree = [set(t["feature"][t["is_leaf"] == 0]) for t in _trees(model)]
    assert all(len(s) <= 6 for s in per_tree) and len(set().union(*per_tree)) > 6
    level = GBTRegressor(n_estimators=20, colsample_bytree=0.5, colsample_bylevel=0.5,
                         max_depth=4).fit(X, y)
    for t in _trees(level):
        inner = t[t["is_leaf"] == 0]
        assert len(set(inner["feature"])) <= 6
        for d in np.unique(inner["depth"]):
            assert len(set(inner["feature"][inner["depth"] == d])) <= 3
    weights = np.ones(12)
    weights[[0, 5, 7]] = 0.0
    weighted = GBTRegressor(n_estimators=20, colsample_bynode=0.5, feature_weights=weights).fit(X, y)
    used = set().union(*[set(t["feature"][t["is_leaf"] == 0]) for t in _trees(weighted)])
    assert used.isdisjoint({0, 5, 7}) and len(used) > 5
    node = GBTRegressor(n_estimators=5, colsample_bynode=0.01, max_depth=3).fit(X, y)
    assert all((t["is_leaf"] == 0).sum() >= 3 for t in _trees(node))   # one feature per node still splits


def test_interaction_constraints_hold_on_every_path():
    X, y = make_regression(3000, 6, n_informative=6, random_state=0)
    y = y + 30 * X[:, 0] * X[:, 3]   # an interaction the constraints forbid
    groups = [[0, 1, 2], [2, 3]]
    for policy in ("depthwise", "lossguide"):
        model = GBTRegressor(n_estimators=20, max_depth=5, max_leaves=24, grow_policy=policy,
                             interaction_constraints=groups).fit(X, y)
        for t in _trees(model):
            for path in _paths(t):
                assert (path <= {0, 1, 2} or path <= {2, 3} or len(path) <= 1), path
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=list("abcdef"))
    by_name = GBTRegressor(n_estimators=5, interaction_constraints=[["a", "b", "c"], ["c", "d"]]).fit(df, y)
    by_index = GBTRegressor(n_estimators=5, interaction_constraints=groups).fit(X, y)
    np.testing.assert_array_equal(by_name.predict(df), by_index.predict(X))


@pytest.mark.parametrize("params", [
    dict(subsample=0.6, colsample_bytree=0.7, colsample_bylevel=0.8, colsample_bynode=0.6),
    dict(sampling_method="goss", colsample_bynode=0.5),
])
def test_sampling_is_reproducible_across_n_jobs_and_warm_start(params):
    X, y = make_classification(70_000, 10, random_state=0)   # parallel kernel paths
    a = GBTClassifier(n_estimators=12, n_jobs=1, **params).fit(X, y)
    b = GBTClassifier(n_estimators=12, n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(a._ensemble.nodes, b._ensemble.nodes)
    warm = GBTClassifier(n_estimators=5, warm_start=True, **params).fit(X, y)
    warm.set_params(n_estimators=12).fit(X, y)
    np.testing.assert_array_equal(warm._ensemble.nodes, a._ensemble.nodes)
    other = GBTClassifier(n_estimators=12, random_state=1, **params).fit(X, y)
    assert not np.array_equal(other._ensemble.nodes, a._ensemble.nodes)


@pytest.mark.parametrize("param,value,error", [
    ("subsample", 0.0, ValueError), ("subsample", 1.5, ValueError), ("colsample_bytree", 0, ValueError),
    ("colsample_bynode", 2.0, ValueError), ("sampling_method", "bagging", ValueError),
    ("top_rate", 1.0, ValueError), ("feature_weights", [1.0, 2.0], ValueError),
    ("feature_weights", [-1.0, 1.0, 1.0], ValueError), ("interaction_constraints", [[0, 7]], ValueError),
    ("interaction_constraints", "ab", TypeError),
])
def test_invalid_sampling_parameters_name_themselves(param, value, error):
    X, y = make_regression(50, 3, random_state=0)
    with pytest.raises(error, match=param):
        GBTRegressor(n_estimators=2, **{param: value}).fit(X, y)
    with pytest.raises(ValueError, match="top_rate"):
        GBTRegressor(sampling_method="goss", top_rate=0.7, other_rate=0.5).fit(X, y)


# ---------------------------------------------------------------- monotone constraints
def _grid_predictions(model, X, feature, grid):
    """Predictions for each row of X with ``feature`` swept over ``grid``: (rows, grid)."""
    out = []
    for v in grid:
        Xv = X.copy()
        Xv[:, feature] = v
        out.append(model.predict(Xv) if isinstance(model, GBTRegressor)
                   else model.predict_proba(Xv)[:, 1])
    return np.column_stack(out)


@pytest.mark.parametrize("grow_policy", ["depthwise", "lossguide"])
@pytest.mark.parametrize("Est", [GBTRegressor, GBTClassifier])
@pytest.mark.parametrize("grad_quant_bins", [None, 8])   # 8: renewed leaves stay in bounds
def test_monotone_constraints_hold_on_a_grid(grow_policy, Est, grad_quant_bins):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(4000, 4))
    # non-monotone truth in features 0 and 1: the constraints must override it
    f = np.sin(4 * X[:, 0]) + X[:, 0] - np.sin(4 * X[:, 1]) - X[:, 1] + X[:, 2] * X[:, 3]
    y = f + rng.normal(scale=0.3, size=4000)
    if Est is GBTClassifier:
        y = (y > 0).astype(int)
    params = dict(n_estimators=40, learning_rate=0.3, max_depth=5, max_leaves=24,
                  grow_policy=grow_policy, grad_quant_bins=grad_quant_bins)
    model = Est(monotone_constraints=[1, -1, 0, 0], **params).fit(X, y)
    free = Est(**params).fit(X, y)
    grid = np.linspace(-1.2, 1.2, 61)
    up = _grid_predictions(model, X[:200], 0, grid)
    down = _grid_predictions(model, X[:200], 1, grid)
    assert np.all(np.diff(up, axis=1) >= -1e-12)
    assert np.all(np.diff(down, axis=1) <= 1e-12)
    # the unconstrained model does follow the wiggles
    assert np.any(np.diff(_grid_predictions(free, X[:200], 0, grid), axis=1) < -1e-3)
    as_dict = Est(monotone_constraints={0: 1, 1: -1}, **params).fit(X, y)
    np.testing.assert_array_equal(as_dict._ensemble.nodes, model._ensemble.nodes)


def test_monotone_constraints_by_name_and_errors():
    pd = pytest.importorskip("pandas")
    X, y = make_regression(300, 3, random_state=0)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    by_name = GBTRegressor(n_estimators=5, monotone_constraints={"b": 1}).fit(df, y)
    by_index = GBTRegressor(n_estimators=5, monotone_constraints=[0, 1, 0]).fit(X, y)
    np.testing.assert_array_equal(by_name.predict(df), by_index.predict(X))
    for bad, error in [([1, 0], ValueError), ([2, 0, 0], ValueError), ({"z": 1}, ValueError),
                       ("(1,0,0)", TypeError)]:
        with pytest.raises(error, match="monotone_constraints"):
            GBTRegressor(n_estimators=2, monotone_constraints=bad).fit(df, y)


@pytest.mark.parametrize("objective, extra", [
    ("absolute_error", {}), ("huber", {"huber_delta": 0.5}),
    ("quantile", {"quantile_alpha": 0.8}), ("quantile", {"quantile_alpha": [0.1, 0.5, 0.9]})])
def test_monotone_constraints_hold_for_the_objectives_that_refit_leaves(objective, extra):
    # refit leaves stay within the bounds of the constrained splits above them: every
    # prediction rises with feature 0 and falls with feature 1, on any grid of rows
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(3000, 3))
    y = X[:, 0] - X[:, 1] + np.sin(6 * X[:, 2]) + rng.standard_t(2, size=3000)
    model = GBTRegressor(objective=objective, monotone_constraints=[1, -1, 0], max_depth=6,
                         n_estimators=40, learning_rate=0.3, **extra).fit(X, y)
    grid = np.linspace(-1.2, 1.2, 41)
    for row in rng.uniform(-1, 1, size=(40, 3)):
        for f, sign in ((0, 1), (1, -1)):
            Xg = np.tile(row, (grid.size, 1))
            Xg[:, f] = grid
            pred = model.predict(Xg)
            steps = np.diff(pred, axis=0) * sign
            assert np.all(steps >= -1e-12), (objective, f)
    free = GBTRegressor(objective=objective, max_depth=6, n_estimators=40, learning_rate=0.3,
                        **extra).fit(X, y)
    # (without the constraints the same fit is not monotone: the test can fail)
    rises = []
    for row in rng.uniform(-1, 1, size=(40, 3)):
        Xg = np.tile(row, (grid.size, 1))
        Xg[:, 0] = grid
        rises.append(np.all(np.diff(free.predict(Xg), axis=0) >= 0))
    assert not all(rises)


def test_feature_weights_draw_the_same_at_any_scale():
    # subnormal weights made the sampling keys log(u) / w overflow: every such feature
    # tied at -inf and the first one always won (f4 was never drawn)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] + X[:, 4]
    fits = [GBTRegressor(n_estimators=20, colsample_bytree=0.4, feature_weights=np.array(w) * s)
            .fit(X, y).get_score() for w in ([1, 0, 0, 0, 1],) for s in (1.0, 1e-320, 1e300)]
    assert set(fits[0]) == {"f0", "f4"}
    assert fits[1] == fits[0] and fits[2] == fits[0]
