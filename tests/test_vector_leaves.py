"""Trees whose leaves hold a vector (multi_strategy="multi_output_tree")."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import _reference as ref
import gbtree
from gbtree import GBTClassifier, GBTRegressor
from gbtree.kernels._node_histograms import level_histograms, py_build_histogram
from gbtree.kernels._splitting import find_best_split_outputs
from gbtree.data.binning import BinMapper

VECTOR = dict(multi_strategy="multi_output_tree")
REGULARISERS = [{}, dict(reg_lambda=0.0), dict(reg_alpha=2.0), dict(min_child_weight=30.0),
                dict(max_delta_step=0.2), dict(gamma=3.0)]


def targets(seed, n=1500, missing=0.05):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    base = X[:, 0] ** 2 + np.sin(2 * X[:, 1]) - X[:, 2] * X[:, 3]
    Y = np.column_stack([base + 0.5 * X[:, 4], base - 0.5 * X[:, 4], 2 * base])
    X[rng.rand(*X.shape) < missing] = np.nan
    return X, Y + 0.3 * rng.normal(size=Y.shape)


def _histograms(rng, K, n_features, max_bins, missing_rate, n_rows=300):
    n_bins = rng.randint(1, max_bins, size=n_features).astype(np.int32)
    offsets = np.zeros(n_features + 1, dtype=np.int32)
    np.cumsum(n_bins + 1, out=offsets[1:])
    g = rng.normal(size=(K, n_rows)) + 0.3
    h = rng.uniform(0.1, 1.0, size=(K, n_rows))
    hist = np.zeros((K, offsets[-1], 2))
    for f in range(n_features):
        b = rng.randint(0, n_bins[f], size=n_rows)
        b[rng.rand(n_rows) < missing_rate] = n_bins[f]
        for k in range(K):
            np.add.at(hist[k], offsets[f] + b, np.column_stack([g[k], h[k]]))
    sums = np.stack([g.sum(axis=1), h.sum(axis=1)], axis=1)
    return hist, n_bins, offsets, sums


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), K=st.integers(1, 4),
       missing=st.sampled_from([0.0, 0.3]), reg=st.sampled_from(REGULARISERS))
def test_vector_split_scan_matches_reference(seed, K, missing, reg):
    hist, n_bins, offsets, sums = _histograms(np.random.RandomState(seed), K, 4, 12, missing)
    got = find_best_split_outputs(hist, n_bins, offsets, sums, **reg)
    expected = ref.find_best_split_outputs(hist, n_bins, offsets, sums, **reg)
    assert (got is None) == (expected is None)
    if got is not None:
        assert got[1:4] == expected[1:4]
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-9)
        np.testing.assert_allclose(got[4], expected[4], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[5].sum(), got[0], rtol=1e-9)   # the outputs' parts


def test_vector_split_scan_is_the_same_on_two_threads(rng):
    hist, n_bins, offsets, sums = _histograms(rng, 3, 100, 120, 0.1, n_rows=2000)
    assert hist.shape[0] * offsets[-1] > 16384    # the parallel scan
    one = find_best_split_outputs(hist, n_bins, offsets, sums, n_threads=1)
    two = find_best_split_outputs(hist, n_bins, offsets, sums, n_threads=2)
    assert one[:4] == two[:4] and np.array_equal(one[4], two[4])
    mask = np.ones(100, dtype=np.uint8)
    mask[one[1]] = 0    # the best feature masked out: another one wins
    assert find_best_split_outputs(hist, n_bins, offsets, sums, allowed=mask)[1] != one[1]


@pytest.mark.parametrize("sparse, every_row", [(False, False), (True, False), (False, True)])
def test_each_outputs_histogram_is_the_rows_histogram(rng, sparse, every_row):
    # the histograms of a node for each output of a tree of vector leaves, and of every
    # row in order (rows=None, dense only), as one node's histogram is built
    X = rng.normal(size=(600, 6))
    X[rng.rand(*X.shape) < 0.5] = 0.0
    X[rng.rand(*X.shape) < 0.05] = np.nan
    Xin = sp.csr_matrix(np.nan_to_num(X, nan=7.0)) if sparse else X
    mapper = BinMapper(32).fit(Xin)
    Xb = mapper.transform(Xin)
    pairs = rng.uniform(0.1, 1, size=(3, 600, 2)).astype(np.float32)
    rows = (np.arange(600, dtype=np.uint32) if every_row
            else np.sort(rng.choice(600, 250, replace=False)).astype(np.uint32))
    default_bin = mapper.default_bins() if sparse else None
    out = np.empty((3, mapper.bin_offsets_[-1], 2))
    for k in range(3):
        total = level_histograms(Xb, None if every_row else rows, np.array([[0, len(rows)]]),
                                 pairs[k], mapper.bin_offsets_, default_bin, out,
                                 np.array([k]), 2)
        alone, (g, h) = py_build_histogram(Xb, rows, pairs[k, :, 0], pairs[k, :, 1],
                                           mapper.bin_offsets_, default_bin=default_bin,
                                           return_totals=True)
        np.testing.assert_array_equal(out[k], alone)
        assert tuple(total[0]) == (g, h)


@pytest.mark.parametrize("params", [dict(max_depth=4), dict(grow_policy="lossguide", max_leaves=12,
                                                             max_depth=0),
                                    dict(max_depth=3, reg_alpha=0.5, max_delta_step=0.3,
                                         gamma=0.1, min_child_weight=5),
                                    dict(max_depth=4, subsample=0.7, colsample_bytree=0.8),
                                    dict(grow_policy="lossguide", max_leaves=12, max_depth=0,
                                         colsample_bylevel=0.7, colsample_bynode=0.6)])
@pytest.mark.parametrize("sparse", [False, True])
def test_with_one_output_it_grows_the_usual_trees(params, sparse):
    X, Y = targets(0)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(np.nan_to_num(X)) < 0.7, 0.0, np.nan_to_num(X)))
    w = np.random.RandomState(1).uniform(0.5, 2, size=X.shape[0])
    # vector leaves sum float gradients, the usual trees too with grad_quant_bins=None
    usual = GBTRegressor(n_estimators=15, **params, grad_quant_bins=None).fit(
        X, Y[:, 0], sample_weight=w)
    vector = GBTRegressor(n_estimators=15, **params, **VECTOR).fit(X, Y[:, 0], sample_weight=w)
    np.testing.assert_array_equal(vector._ensemble.nodes, usual._ensemble.nodes)


def test_the_outputs_share_each_trees_structure():
    X, Y = targets(2)
    m = GBTRegressor(n_estimators=10, max_depth=4, **VECTOR).fit(X, Y)
    ens = m._ensemble
    assert m.n_trees_ == 30 and list(ens.tree_class[:6]) == [0, 1, 2, 0, 1, 2]
    for r in range(10):
        a, b, c = (ens.tree(3 * r + k) for k in range(3))
        for field in ("feature", "bin_threshold", "threshold", "left", "right", "count",
                      "default_left", "is_leaf"):
            np.testing.assert_array_equal(a[field], b[field])
            np.testing.assert_array_equal(a[field], c[field])
        assert not np.array_equal(a["value"], c["value"])   # each output its values
    # not so one tree per output: their structures differ
    per = GBTRegressor(n_estimators=10, max_depth=4).fit(X, Y)._ensemble
    assert any(not np.array_equal(per.tree(3 * r)["feature"], per.tree(3 * r + 2)["feature"])
               for r in range(10))


@pytest.mark.parametrize("params", [{}, dict(reg_alpha=1.0, reg_lambda=5.0, gamma=0.5),
                                    dict(grow_policy="lossguide", max_leaves=16, max_depth=0)])
def test_same_trees_as_xgboost_multi_output_tree(params):
    # integer features: both libraries bin every value alone, so the trees can agree
    xgb = pytest.importorskip("xgboost")
    rng = np.random.RandomState(0)
    X = rng.randint(0, 40, size=(4000, 6)).astype(float)
    Y = np.column_stack([(X[:, 0] - 20) ** 2 / 100, np.sin(X[:, 1] / 5)
                         - (X[:, 2] - 20) * (X[:, 3] - 20) / 200, X[:, 4] / 10])
    Y += 0.3 * rng.normal(size=Y.shape)
    X[rng.rand(*X.shape) < 0.05] = np.nan
    w = rng.uniform(0.5, 2, size=len(X))
    M = np.zeros_like(Y)    # the same starting scores (offsets) in both
    kw = dict(n_estimators=20, learning_rate=0.1, max_depth=params.pop("max_depth", 4),
              n_jobs=1, **params, **VECTOR)
    ours = GBTRegressor(**kw).fit(X, Y, sample_weight=w, base_margin=M)
    theirs = xgb.XGBRegressor(tree_method="hist", **kw).fit(X, Y, sample_weight=w,
                                                             base_margin=M)
    assert theirs.get_booster().num_boosted_rounds() == 20
    np.testing.assert_allclose(ours.predict(X, base_margin=M),
                               theirs.predict(X, base_margin=M), atol=1e-5)


def test_multiclass_multi_quantile_files_and_shap(tmp_path):
    X, Y = targets(3)
    y = np.digitize(Y[:, 0], [0.0, 1.5])
    clf = GBTClassifier(n_estimators=30, max_depth=4, **VECTOR).fit(X, y)
    usual = GBTClassifier(n_estimators=30, max_depth=4).fit(X, y)
    assert clf.n_trees_ == 90 and clf.score(X, y) > usual.score(X, y) - 0.03
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    q = GBTRegressor(objective="quantile", quantile_alpha=[0.1, 0.5, 0.9], n_estimators=30,
                     max_depth=3, **VECTOR).fit(X, Y[:, 0])
    P = q.predict(X)
    assert np.all(np.diff(P, axis=1) >= 0)    # still no crossing
    cover = [(Y[:, 0] <= P[:, j]).mean() for j in range(3)]
    assert cover[0] < 0.25 and 0.35 < cover[1] < 0.65 and cover[2] > 0.75
    for model in (clf, q):
        model.save_model(tmp_path / "m.json")
        back = gbtree.load_model(tmp_path / "m.json")
        np.testing.assert_array_equal(back.predict(X), model.predict(X))
    contribs = clf.predict(X[:20], pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=-1), clf.decision_function(X[:20]),
                               atol=1e-9)


def test_continuing_and_row_sampling_keep_the_training_scores():
    # continuing recomputes the training rows' scores from the trees: equal only if
    # the fit kept them right (rows out of the sample included)
    X, Y = targets(4)
    for extra in ({}, dict(subsample=0.6), dict(sampling_method="goss"),
                  dict(num_parallel_tree=2, subsample=0.7)):
        kw = dict(max_depth=4, **VECTOR, **extra)
        whole = GBTRegressor(n_estimators=12, **kw).fit(X, Y)
        part = GBTRegressor(n_estimators=6, warm_start=True, **kw).fit(X, Y)
        part.set_params(n_estimators=12).fit(X, Y)
        np.testing.assert_allclose(part.predict(X), whole.predict(X), rtol=1e-12, atol=1e-12)


def test_column_sampling_uses_the_drawn_features():
    X, Y = targets(5)
    m = GBTRegressor(n_estimators=20, max_depth=3, colsample_bytree=0.4, **VECTOR).fit(X, Y)
    ens = m._ensemble
    for t in range(0, ens.n_trees, 3):
        used = set(ens.tree(t)["feature"][ens.tree(t)["feature"] >= 0])
        assert len(used) <= 2      # 2 of the 5 features a tree
    a = GBTRegressor(n_estimators=5, colsample_bynode=0.5, n_jobs=1, **VECTOR).fit(X, Y)
    b = GBTRegressor(n_estimators=5, colsample_bynode=0.5, n_jobs=2, **VECTOR).fit(X, Y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("param, value", [("monotone_constraints", [1, 0, 0, 0, 0]),
                                          ("interaction_constraints", [[0, 1]]),
                                          ("grad_quant_bins", 16)])
def test_refuses_what_it_does_not_support(param, value):
    X, Y = targets(6, 200)
    with pytest.raises(ValueError, match=f"{param} cannot be used with multi_strategy="):
        GBTRegressor(n_estimators=2, **{param: value}, **VECTOR).fit(X, Y)
