"""SHAP values, interaction values and Saabas attributions (``predict(X,
pred_contribs=True)``, ``pred_interactions``, ``approx_contribs``, ``to_shap``):
against brute-force Shapley values on random trees, local accuracy on every
objective family and input kind, and the peers (shap, XGBoost) as oracles."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import _reference
from gbtree import GBTClassifier, GBTRanker, GBTRegressor
from gbtree.kernels._typedefs import NODE_DTYPE
from gbtree.explaining.explain import model_input, shap_values
from gbtree.boosting.objectives import REGRESSION_OBJECTIVES
from gbtree.predicting.tree import TreeEnsemble


def random_tree(rng, n_features, n_leaves, zero_cover=0.0):
    """A random tree (NODE_DTYPE) grown by splitting random leaves: integer
    thresholds 0..3 (rows of values 0..4 and NaN hit them exactly), features may
    repeat on a path, a leaf's cover is 0 with probability ``zero_cover``."""
    nodes = [dict(feature=-1, left=-1, right=-1, depth=0)]
    leaves = [0]
    while len(leaves) < n_leaves:
        n = leaves.pop(rng.integers(len(leaves)))
        d = nodes[n]["depth"] + 1
        nodes[n].update(feature=int(rng.integers(n_features)), left=len(nodes),
                        right=len(nodes) + 1)
        nodes += [dict(feature=-1, left=-1, right=-1, depth=d) for _ in range(2)]
        leaves += [len(nodes) - 2, len(nodes) - 1]
    tree = np.zeros(len(nodes), dtype=NODE_DTYPE)
    for k, node in enumerate(nodes):
        leaf = node["feature"] < 0
        tree[k]["is_leaf"] = leaf
        tree[k]["feature"] = max(node["feature"], 0) if not leaf else -1
        tree[k]["left"], tree[k]["right"] = node["left"], node["right"]
        tree[k]["depth"] = node["depth"]
        tree[k]["threshold"] = rng.integers(4)
        tree[k]["default_left"] = rng.integers(2)
        tree[k]["value"] = rng.normal()
        tree[k]["cover"] = 0.0 if rng.random() < zero_cover else rng.uniform(0.5, 5.0)
    return tree


def random_rows(rng, n, n_features):
    X = rng.integers(5, size=(n, n_features)).astype(np.float64)
    X[rng.random(X.shape) < 0.2] = np.nan
    return X


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_features=st.integers(1, 5),
       n_leaves=st.lists(st.integers(1, 14), min_size=1, max_size=3),
       zero_cover=st.sampled_from([0.0, 0.3]))
def test_kernel_matches_bruteforce_shapley(seed, n_features, n_leaves, zero_cover):
    rng = np.random.default_rng(seed)
    trees = [random_tree(rng, n_features, n, zero_cover) for n in n_leaves]
    ens = TreeEnsemble(n_features, [0.25])
    for tree in trees:
        ens.add_tree(tree, 0)
    X = random_rows(rng, 6, n_features)
    phi = shap_values(ens, X, "contribs")[:, 0]
    inter = shap_values(ens, X, "interactions")[:, 0]
    approx = shap_values(ens, X, "approx")[:, 0]
    for i, x in enumerate(X):
        ref = [_reference.shap_values_bruteforce(t, x, n_features) for t in trees]
        ref_phi = sum(r[0] for r in ref)
        ref_inter = sum(r[1] for r in ref)
        ref_phi[-1] += 0.25
        ref_inter[-1, -1] += 0.25
        np.testing.assert_allclose(phi[i], ref_phi, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(inter[i], ref_inter, rtol=1e-9, atol=1e-10)
        ref_approx = sum(_reference.saabas(t, x, n_features) for t in trees)
        ref_approx[-1] += 0.25
        np.testing.assert_allclose(approx[i], ref_approx, rtol=1e-9, atol=1e-10)
    # interaction rows sum to the SHAP values; the matrix is symmetric
    np.testing.assert_allclose(inter.sum(axis=2), phi, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(inter, inter.transpose(0, 2, 1), rtol=1e-9, atol=1e-10)


def test_multi_output_trees_feed_their_column():
    rng = np.random.default_rng(0)
    ens = TreeEnsemble(3, [0.1, -0.2])
    trees = [random_tree(rng, 3, 6) for _ in range(4)]
    for t, tree in enumerate(trees):
        ens.add_tree(tree, t % 2)
    X = random_rows(rng, 5, 3)
    phi = shap_values(ens, X, "contribs")
    for k in range(2):
        ref = TreeEnsemble(3, [ens.base_score[k]])
        for tree in trees[k::2]:
            ref.add_tree(tree, 0)
        np.testing.assert_array_equal(phi[:, k], shap_values(ref, X, "contribs")[:, 0])


# ---------------------------------------------------------------------------- estimators
def _data(n=400, p=5, seed=0, missing=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(scale=0.3, size=n)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def _raw(est, X):
    return est._raw_predict(X)


def _assert_local_accuracy(contribs, raw):
    # each row sums to its raw score, 1e-6 relative
    total = contribs.sum(axis=-1)
    np.testing.assert_allclose(total, raw, rtol=1e-6, atol=1e-6 * np.abs(raw).max())


@pytest.mark.parametrize("objective", REGRESSION_OBJECTIVES)
def test_local_accuracy_regression(objective):
    X, y = _data()
    if objective in ("poisson", "gamma", "tweedie"):
        y = np.exp(y / 3)
    if objective == "aft":   # observed times: lower bound = upper bound
        y = np.column_stack([np.exp(y / 3)] * 2)
    est = GBTRegressor(objective=objective, n_estimators=15, max_depth=4).fit(X, y)
    c = est.predict(X, pred_contribs=True)
    assert c.shape == (X.shape[0], X.shape[1] + 1)
    _assert_local_accuracy(c, _raw(est, X)[:, 0])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_local_accuracy_classification(n_classes):
    X, y = _data(seed=1)
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    est = GBTClassifier(n_estimators=10, max_leaves=12, grow_policy="lossguide",
                        max_depth=0).fit(X, labels)
    c = est.predict(X, pred_contribs=True)
    I = est.predict(X[:20], pred_interactions=True)
    a = est.predict(X, pred_contribs=True, approx_contribs=True)
    raw = _raw(est, X)
    if n_classes == 2:
        assert c.shape == (X.shape[0], X.shape[1] + 1)
        assert I.shape == (20, X.shape[1] + 1, X.shape[1] + 1)
        raw = raw[:, 0]
    else:
        assert c.shape == (X.shape[0], n_classes, X.shape[1] + 1)
        assert I.shape == (20, n_classes, X.shape[1] + 1, X.shape[1] + 1)
    _assert_local_accuracy(c, raw)
    _assert_local_accuracy(a, raw)
    np.testing.assert_allclose(I.sum(axis=-1), c[:20], rtol=1e-9, atol=1e-10)
    # Saabas and SHAP agree on the bias (the expected value), not on the rest
    np.testing.assert_allclose(a[..., -1], c[..., -1])
    assert not np.allclose(a[..., :-1], c[..., :-1])


def test_local_accuracy_ranking():
    X, y = _data(seed=2)
    rel = np.digitize(y, [-1, 0, 1])
    qid = np.repeat(np.arange(40), 10)
    est = GBTRanker(n_estimators=10, max_depth=3).fit(X, rel, qid=qid)
    c = est.predict(X, pred_contribs=True)
    _assert_local_accuracy(c, est.predict(X))


@pytest.mark.parametrize("absent_as_missing", [False, True])
def test_sparse_equals_dense(absent_as_missing):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    X[rng.random(X.shape) < 0.6] = 0.0
    y = X[:, 0] - 2 * X[:, 1] + X[:, 2] * X[:, 3]
    Xs = sp.csr_matrix(X)
    est = GBTRegressor(n_estimators=8, max_depth=4, absent_as_missing=absent_as_missing).fit(Xs, y)
    dense = X.copy()
    if absent_as_missing:
        dense[X == 0] = np.nan
    for flags in (dict(pred_contribs=True), dict(pred_interactions=True),
                  dict(pred_contribs=True, approx_contribs=True)):
        np.testing.assert_allclose(est.predict(Xs, **flags), est.predict(dense, **flags),
                                   rtol=1e-12, atol=1e-12)
    _assert_local_accuracy(est.predict(Xs, pred_contribs=True), est.predict(Xs))


def test_categorical_column_has_one_value():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    n = 600
    city = rng.choice(["a", "b", "c", "d", "e"], size=n)
    x = rng.normal(size=n)
    y = x + np.array([{"a": 0, "b": 1, "c": -1, "d": 2, "e": 0.5}[c] for c in city])
    frame = pd.DataFrame({"x": x, "city": city, "z": rng.normal(size=n)})
    est = GBTRegressor(n_estimators=10, max_depth=3, categorical_features=["city"]).fit(frame, y)
    c = est.predict(frame, pred_contribs=True)
    assert c.shape == (n, 4)
    _assert_local_accuracy(c, est.predict(frame))
    assert np.abs(c[:, 1]).mean() > 0.3          # the city column carries its effect
    # shap explains the columns as the trees see them
    shap = pytest.importorskip("shap")
    X_codes = model_input(est, frame)   # X's 3 columns, then one indicator per city
    assert X_codes.shape == (n, 3 + 5) and X_codes.dtype.kind == "f"
    np.testing.assert_array_equal(X_codes[:, 3:], X_codes[:, [1]] == np.arange(5))
    theirs = shap.TreeExplainer(est.to_shap()).shap_values(X_codes)
    # an indicator's values are its column's: added to the city's, the same values
    assert np.abs(theirs[:, 3:]).max() > 0.1
    np.testing.assert_allclose(c[:, [0, 2]], theirs[:, [0, 2]], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(c[:, 1], theirs[:, 1] + theirs[:, 3:].sum(axis=1),
                               rtol=1e-7, atol=1e-9)
    plain = GBTRegressor(n_estimators=10, max_depth=3, categorical_features=["city"],
                         max_cat_to_onehot=0).fit(frame, y)
    assert model_input(plain, frame).shape == (n, 3)
    np.testing.assert_allclose(plain.predict(frame, pred_contribs=True)[:, :-1],
                               shap.TreeExplainer(plain.to_shap()).shap_values(
                                   model_input(plain, frame)), rtol=1e-7, atol=1e-9)


def test_iteration_range_and_best_iteration():
    X, y = _data(seed=5)
    est = GBTRegressor(n_estimators=30, max_depth=3).fit(X, y)
    part = est.predict(X, iteration_range=(5, 12), pred_contribs=True)
    raw = est._raw_predict(X, iteration_range=(5, 12))[:, 0]
    _assert_local_accuracy(part, raw)
    assert not np.allclose(part, est.predict(X, pred_contribs=True))
    shap = pytest.importorskip("shap")
    explainer = shap.TreeExplainer(est.to_shap(iteration_range=(5, 12)))
    np.testing.assert_allclose(explainer.shap_values(X), part[:, :-1], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(explainer.expected_value, part[0, -1], rtol=1e-9)
    stopped = GBTRegressor(n_estimators=200, max_depth=3, early_stopping_rounds=3,
                           validation_fraction=0.3, learning_rate=0.5).fit(X, y)
    assert stopped.best_iteration_ + 1 < stopped.n_estimators_
    c = stopped.predict(X, pred_contribs=True)
    _assert_local_accuracy(c, stopped.predict(X))
    np.testing.assert_array_equal(
        c, stopped.predict(X, pred_contribs=True,
                           iteration_range=(0, stopped.best_iteration_ + 1)))


def test_same_values_at_any_n_jobs_and_layout():
    X, y = _data(n=700, seed=6)
    est = GBTRegressor(n_estimators=20, max_depth=5, n_jobs=1).fit(X, y)
    one = est.predict(X, pred_contribs=True)
    one_i = est.predict(X[:60], pred_interactions=True)
    est.set_params(n_jobs=2)
    np.testing.assert_array_equal(est.predict(X, pred_contribs=True), one)
    np.testing.assert_array_equal(est.predict(X[:60], pred_interactions=True), one_i)
    np.testing.assert_array_equal(est.predict(np.asfortranarray(X), pred_contribs=True), one)
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(est.predict(X32, pred_contribs=True),
                                  est.predict(X32.astype(np.float64), pred_contribs=True))


def test_bad_arguments():
    X, y = _data(n=100)
    est = GBTRegressor(n_estimators=3)
    with pytest.raises(ValueError, match="not fitted|fitted"):
        est.predict(X, pred_contribs=True)
    with pytest.raises(ValueError, match="fitted"):
        est.to_shap()
    est.fit(X, y)
    with pytest.raises(ValueError, match="pred_contribs and pred_interactions"):
        est.predict(X, pred_contribs=True, pred_interactions=True)
    with pytest.raises(ValueError, match="approx_contribs=True needs pred_contribs"):
        est.predict(X, approx_contribs=True)
    with pytest.raises(ValueError, match="approx_contribs=True needs pred_contribs"):
        est.predict(X, approx_contribs=True, pred_interactions=True)
    with pytest.raises(TypeError, match="pred_contribs must be True or False"):
        est.predict(X, pred_contribs="yes")
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3], pred_contribs=True)
    with pytest.raises(ValueError, match="iteration_range"):
        est.predict(X, pred_contribs=True, iteration_range=(0, 99))
    # the flags off: the plain prediction
    np.testing.assert_array_equal(est.predict(X, pred_contribs=False), est.predict(X))


# ---------------------------------------------------------------------------- oracles
@pytest.mark.parametrize("n_classes", [1, 2, 3])
def test_shap_tree_explainer_agrees(n_classes):
    shap = pytest.importorskip("shap")
    X, y = _data(seed=7)
    if n_classes == 1:
        est = GBTRegressor(n_estimators=15, max_depth=4).fit(X, y)
    else:
        labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
        est = GBTClassifier(n_estimators=8, max_depth=4).fit(X, labels)
    explainer = shap.TreeExplainer(est.to_shap())
    ours = est.predict(X[:50], pred_contribs=True)
    theirs = np.asarray(explainer.shap_values(X[:50]))
    inter = np.asarray(explainer.shap_interaction_values(X[:10]))
    ours_i = est.predict(X[:10], pred_interactions=True)
    expected = np.atleast_1d(explainer.expected_value)
    if n_classes == 3:      # shap: (rows, features, classes); gbtree: (rows, classes, features)
        theirs = theirs.transpose(0, 2, 1)
        inter = inter.transpose(0, 3, 1, 2)
        np.testing.assert_allclose(ours[:, :, -1], np.broadcast_to(expected, (50, 3)), rtol=1e-9)
        np.testing.assert_allclose(ours[:, :, :-1], theirs, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(ours_i[:, :, :-1, :-1], inter, rtol=1e-7, atol=1e-9)
    else:
        np.testing.assert_allclose(ours[:, -1], expected[0], rtol=1e-9)
        np.testing.assert_allclose(ours[:, :-1], theirs, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(ours_i[:, :-1, :-1], inter, rtol=1e-7, atol=1e-9)


def test_shap_plots_draw():
    shap = pytest.importorskip("shap")
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    X, y = _data(seed=8)
    est = GBTRegressor(n_estimators=10, max_depth=3).fit(X, y)
    names = [f"x{j}" for j in range(X.shape[1])]
    explanation = shap.TreeExplainer(est.to_shap(), feature_names=names)(X[:100])
    np.testing.assert_allclose(explanation.values, est.predict(X[:100], pred_contribs=True)[:, :-1],
                               rtol=1e-7, atol=1e-9)
    for plot in (shap.plots.beeswarm, shap.plots.bar):
        plot(explanation, show=False)
        assert plt.gcf().axes
        plt.close("all")
    shap.plots.waterfall(explanation[0], show=False)
    plt.close("all")
    shap.plots.scatter(explanation[:, 0], show=False)
    plt.close("all")


@pytest.mark.parametrize("classification", [False, True], ids=["regression", "binary"])
def test_xgboost_pred_contribs_on_identical_trees(classification):
    xgb = pytest.importorskip("xgboost")
    # the oracle setting of test_compare_peers: pre-binned integer features, equal
    # parameters and float gradients, so gbtree grows XGBoost's trees
    rng = np.random.RandomState(9)
    X = rng.randint(0, 40, size=(3000, 6)).astype(np.float64)
    signal = np.sin(X[:, 0] / 5) + X[:, 1] / 20 + (X[:, 2] > 20) - 0.5 * (X[:, 3] < 5)
    params = dict(n_estimators=10, learning_rate=0.3, max_depth=4)
    if classification:
        y = (signal + rng.logistic(scale=0.5, size=3000) > 1.0).astype(int)
        ours = GBTClassifier(**params, grad_quant_bins=None).fit(X, y)
        base = 1 / (1 + np.exp(-ours._ensemble.base_score[0]))
        theirs = xgb.XGBClassifier(tree_method="hist", max_bin=256, base_score=base, n_jobs=2,
                                   **params).fit(X, y)
        raw_ours = ours.decision_function(X)
    else:
        y = signal + rng.normal(scale=0.3, size=3000)
        ours = GBTRegressor(**params, grad_quant_bins=None).fit(X, y)
        theirs = xgb.XGBRegressor(tree_method="hist", max_bin=256,
                                  base_score=ours._ensemble.base_score[0], n_jobs=2,
                                  **params).fit(X, y)
        raw_ours = ours.predict(X)
    booster = theirs.get_booster()
    d = xgb.DMatrix(X[:200])
    raw_theirs = booster.predict(d, output_margin=True)
    np.testing.assert_allclose(raw_ours[:200], raw_theirs, rtol=1e-4, atol=1e-5)  # same trees
    scale = np.abs(raw_theirs).max()
    np.testing.assert_allclose(ours.predict(X[:200], pred_contribs=True),
                               booster.predict(d, pred_contribs=True), atol=1e-5 * scale)
    np.testing.assert_allclose(ours.predict(X[:50], pred_interactions=True),
                               booster.predict(xgb.DMatrix(X[:50]), pred_interactions=True),
                               atol=1e-5 * scale)
