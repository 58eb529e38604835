"""Symmetric (oblivious) trees: grow_policy="symmetric" and the symmetric walk."""
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import _reference as ref
import gbtree
from gbtree import GBTClassifier, GBTRanker, GBTRegressor
from gbtree.kernels._quantizer import py_quantize
from gbtree.predicting._predictor import predict_raw, simd_level
from gbtree.predicting._symmetric_walk import predict_symmetric, symmetric_trees
from gbtree.data.binning import BinMapper
from gbtree.growing.grower_params import GrowerParams
from gbtree.growing.row_blocks import SymmetricGrower

SYMMETRIC = dict(grow_policy="symmetric")


def data(seed, n=1200, n_features=5, missing=0.1):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_features))
    y = X[:, 0] ** 2 + np.sin(2 * X[:, 1]) - X[:, 2] * X[:, 3] + 0.3 * rng.normal(size=n)
    X[rng.rand(*X.shape) < missing] = np.nan
    return X, y


def assert_symmetric(nodes, max_depth):
    """Complete to its depth, numbered level by level, one split per level."""
    depth = int(np.log2(nodes.shape[0] + 1)) - 1
    assert nodes.shape[0] == 2 ** (depth + 1) - 1 and depth <= max_depth
    for d in range(depth + 1):
        level = nodes[2 ** d - 1:2 ** (d + 1) - 1]
        assert np.all(level["depth"] == d)
        if d == depth:
            assert np.all(level["is_leaf"] == 1)
            continue
        assert np.all(level["is_leaf"] == 0)
        for field in ("feature", "threshold", "default_left", "bin_threshold"):
            assert np.all(level[field] == level[field][0]), field
        ids = np.arange(2 ** d - 1, 2 ** (d + 1) - 1)
        np.testing.assert_array_equal(level["left"], 2 * ids + 1)
        np.testing.assert_array_equal(level["right"], 2 * ids + 2)
    # a node's rows are its children's
    inner = nodes[nodes["is_leaf"] == 0]
    np.testing.assert_array_equal(inner["count"], nodes["count"][inner["left"]]
                                  + nodes["count"][inner["right"]])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), depth=st.integers(1, 6),
       params=st.sampled_from([{}, dict(reg_lambda=0.0), dict(reg_alpha=1.0),
                               dict(min_child_weight=40.0), dict(max_delta_step=0.3),
                               dict(gamma=5.0), dict(subsample=0.6),
                               dict(colsample_bylevel=0.5, colsample_bynode=0.7),
                               dict(max_bin=8)]),
       sparse=st.booleans())
def test_every_tree_has_one_split_per_level(seed, depth, params, sparse):
    X, y = data(seed % 1000, n=400)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(np.nan_to_num(X)) < 0.5, 0.0, X))
    m = GBTRegressor(n_estimators=4, max_depth=depth, random_state=seed % 97, **params,
                     **SYMMETRIC).fit(X, y)
    for t in range(m._ensemble.n_trees):
        assert_symmetric(m._ensemble.tree(t), depth)
    # the training scores the booster kept are the model's predictions
    np.testing.assert_allclose(m.predict(X), m.predict(X.toarray() if sparse else X),
                               rtol=1e-12)


@pytest.mark.parametrize("params", [{}, dict(reg_lambda=0.0), dict(reg_alpha=1.5),
                                    dict(min_child_weight=60.0), dict(max_delta_step=0.2),
                                    dict(gamma=20.0)])
def test_level_splits_maximise_the_gain_summed_over_the_nodes(params):
    X, y = data(3, n=600)
    X[:, 4] = np.round(X[:, 4])       # few values: bins of several rows
    mapper = BinMapper(max_bin=16).fit(X)
    Xb = mapper.transform(X)
    grad = (0.3 - y).astype(np.float32)
    hess = np.random.RandomState(4).uniform(0.5, 1.5, size=len(y)).astype(np.float32)
    grower = SymmetricGrower(Xb, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                             GrowerParams(max_depth=4, **params), 1)
    raw = np.zeros((len(y), 1))
    nodes = grower.grow(ref.gradient_pairs(grad, hess), 0.5, raw, 0)[0]
    splits, values = ref.grow_symmetric(Xb, mapper.n_bins_, mapper.bin_offsets_, grad, hess, 4,
                                        learning_rate=0.5, **params)
    depth = len(splits)
    assert nodes.shape[0] == 2 ** (depth + 1) - 1
    for d, (f, b, default_left) in enumerate(splits):
        node = nodes[2 ** d - 1]
        assert (node["feature"], node["bin_threshold"], bool(node["default_left"])) == \
            (f, b, default_left)
    np.testing.assert_allclose(nodes["value"][2 ** depth - 1:], values, rtol=1e-9, atol=1e-12)
    # the rows' scores: their leaves' values
    leaf = np.zeros(len(y), dtype=np.intp)
    for f, b, default_left in splits:
        col = Xb[:, f]
        right = np.where(col == mapper.n_bins_[f], not default_left, col > b)
        leaf = 2 * leaf + right
    np.testing.assert_allclose(raw[:, 0], values[leaf], rtol=1e-12)


def test_depth_one_is_the_depthwise_stump():
    X, y = data(5)
    kw = dict(n_estimators=10, max_depth=1, learning_rate=0.3, grad_quant_bins=None)
    a = GBTRegressor(**kw, **SYMMETRIC).fit(X, y)
    b = GBTRegressor(**kw).fit(X, y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12)


def test_interaction_constraints_hold_on_every_path():
    X, y = data(10, n=800, n_features=6)
    groups = [[0, 2], [1, 3]]
    m = GBTRegressor(n_estimators=15, max_depth=4, interaction_constraints=groups,
                     **SYMMETRIC).fit(X, y)
    for t in range(m._ensemble.n_trees):
        nodes = m._ensemble.tree(t)
        used = set(nodes["feature"][nodes["is_leaf"] == 0].tolist())
        # one path holds every level: its features lie in one group, or are one
        # feature in no group
        assert any(used <= set(g) for g in groups) or len(used) <= 1, used
    free = GBTRegressor(n_estimators=15, max_depth=4, **SYMMETRIC).fit(X, y)
    assert any(not any(set(free._ensemble.tree(t)["feature"][
        free._ensemble.tree(t)["is_leaf"] == 0].tolist()) <= set(g) for g in groups)
        for t in range(free._ensemble.n_trees))


@pytest.mark.parametrize("params, match", [
    (dict(max_leaves=8), "needs max_leaves=0"),
    (dict(max_depth=0, max_leaves=8), "needs max_leaves=0"),
    (dict(max_depth=17), "1 <= max_depth <= 16"),
    (dict(monotone_constraints=[1, 0, 0, 0, 0]), "monotone_constraints cannot"),
    (dict(grad_quant_bins=16), "grad_quant_bins cannot"),
    (dict(multi_strategy="multi_output_tree"), "whose leaves hold a vector"),
    (dict(tree_method="exact"), "grows depthwise"),
])
def test_refuses_what_it_does_not_support(params, match):
    X, y = data(6, n=100)
    with pytest.raises(ValueError, match=match):
        GBTRegressor(n_estimators=2, **{**SYMMETRIC, **params}).fit(X, y)


# ------------------------------------------------------------------ the symmetric walk

def _walk_all(ensemble, X, start, stop, simd, n_threads):
    forest = ensemble._traversal()
    base = np.tile(ensemble.base_score, (X.shape[0], 1))
    generic = base.copy()
    predict_raw(X, forest.compact, forest.tree_ptr[start:stop + 1],
                forest.tree_class[start:stop], generic, n_threads)
    mine = base.copy()
    predict_symmetric(X, forest.symmetric, forest.tree_class, start, stop, mine, n_threads,
                      simd)
    return generic, mine


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n_rows=st.sampled_from([1, 3, 15, 16, 17, 64, 65, 300]),
       dtype=st.sampled_from([np.float32, np.float64]), fortran=st.booleans(),
       multiclass=st.booleans(), n_threads=st.sampled_from([1, 2]))
def test_the_symmetric_walk_reaches_the_generic_walks_leaves(seed, n_rows, dtype, fortran,
                                                             multiclass, n_threads):
    rng = np.random.RandomState(seed)
    X, y = data(seed % 50, n=500)
    X[rng.rand(*X.shape) < 0.02] = np.inf
    X[rng.rand(*X.shape) < 0.02] = -np.inf
    if multiclass:
        m = GBTClassifier(n_estimators=6, max_depth=5, **SYMMETRIC).fit(X, np.digitize(y, [0, 1]))
    else:
        m = GBTRegressor(n_estimators=12, max_depth=rng.randint(1, 8), **SYMMETRIC).fit(X, y)
    ens = m._ensemble
    assert ens._traversal().symmetric is not None
    Xt = X[rng.randint(0, 500, size=n_rows)].astype(dtype)
    Xt[rng.rand(*Xt.shape) < 0.1] = np.nan
    if fortran:
        Xt = np.asfortranarray(Xt)
    start = rng.randint(0, ens.n_trees)
    stop = rng.randint(start, ens.n_trees + 1)
    for simd in range(simd_level() + 1):
        generic, mine = _walk_all(ens, Xt, start, stop, simd, n_threads)
        np.testing.assert_array_equal(mine, generic)
    # and through the ensemble: its few-row and block paths
    full = ens.predict_raw(Xt)
    generic, _ = _walk_all(ens, Xt, 0, ens.n_trees, 0, 1)
    np.testing.assert_array_equal(full, generic)


def test_only_forests_of_symmetric_trees_take_the_symmetric_walk():
    X, y = data(7)
    sym = GBTRegressor(n_estimators=3, max_depth=3, **SYMMETRIC).fit(X, y)._ensemble
    tables = symmetric_trees(sym.nodes, sym.tree_ptr)
    np.testing.assert_array_equal(tables["depth"], [3, 3, 3])
    t0 = sym.tree(0)
    # the leaves in the order of their paths' bits
    np.testing.assert_array_equal(tables["leaves"][:8], t0["value"][7:])
    np.testing.assert_array_equal(tables["used"][tables["feature"]][:3],
                                  t0["feature"][[0, 1, 3]])
    deep = GBTRegressor(n_estimators=3, max_depth=3).fit(X, y)._ensemble
    assert symmetric_trees(deep.nodes, deep.tree_ptr) is None
    assert deep._traversal().symmetric is None
    # continuing a symmetric model with other trees: the generic walk for all
    mixed = GBTRegressor(n_estimators=3, max_depth=3, warm_start=True, **SYMMETRIC).fit(X, y)
    before = mixed.predict(X)
    mixed.set_params(n_estimators=5, grow_policy="depthwise").fit(X, y)
    assert mixed._ensemble.n_trees == 5
    assert mixed._ensemble._traversal().symmetric is None
    np.testing.assert_array_equal(mixed.predict(X, iteration_range=(0, 3)), before)
    # deeper than the walk's limit: not symmetric for it
    assert symmetric_trees(sym.nodes, sym.tree_ptr, max_depth=2) is None


def test_symmetric_models_save_load_explain_and_pickle(tmp_path):
    X, y = data(8, n=300)
    # depth 6 on 300 rows: some leaves are empty
    m = GBTRegressor(n_estimators=5, max_depth=6, **SYMMETRIC).fit(X, y)
    assert np.any(m._ensemble.nodes["count"] == 0)
    for name in ("model.json", "model.gbt"):
        m.save_model(tmp_path / name)
        loaded = gbtree.load_model(tmp_path / name)
        np.testing.assert_array_equal(loaded.predict(X), m.predict(X))
        assert loaded._ensemble._traversal().symmetric is not None
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).predict(X), m.predict(X))
    contribs = m.predict(X, pred_contribs=True)
    assert np.all(np.isfinite(contribs))
    np.testing.assert_allclose(contribs.sum(axis=1), m.predict(X), rtol=1e-9, atol=1e-9)


def test_every_estimator_and_refit_objectives():
    X, y = data(9)
    q = GBTRegressor(objective="quantile", quantile_alpha=0.8, n_estimators=40,
                     **SYMMETRIC).fit(X, y)
    assert 0.72 < np.mean(y <= q.predict(X)) < 0.88
    classes = np.digitize(y, [0.0, 1.0])
    kw = dict(n_estimators=60, max_depth=4, learning_rate=0.3)
    clf = GBTClassifier(**kw, **SYMMETRIC).fit(X, classes)
    majority = np.bincount(classes).max() / len(classes)
    assert clf.score(X, classes) > majority + 0.15
    assert clf.score(X, classes) > GBTClassifier(**kw).fit(X, classes).score(X, classes) - 0.1
    qid = np.repeat(np.arange(40), 30)
    rank = GBTRanker(n_estimators=10, **SYMMETRIC).fit(X, np.clip(np.round(y), 0, 3), qid=qid)
    assert rank.predict(X).shape == (len(y),)


def test_as_accurate_as_catboosts_symmetric_trees_on_real_data():
    catboost = pytest.importorskip("catboost")
    from sklearn.metrics import roc_auc_score
    data = np.loadtxt(Path(__file__).parent / "data" / "binary.train")
    X, y = data[:, 1:], data[:, 0]
    kw = dict(max_depth=6, n_estimators=200, learning_rate=0.05)
    ours = GBTClassifier(**kw, **SYMMETRIC, n_jobs=2).fit(X[:5000], y[:5000])
    # CatBoost's defaults (symmetric trees) at the same depth, rounds and learning rate
    theirs = catboost.CatBoostClassifier(depth=6, iterations=200, learning_rate=0.05,
                                         thread_count=2, random_seed=0, verbose=False,
                                         allow_writing_files=False).fit(X[:5000], y[:5000])
    auc = [roc_auc_score(y[5000:], m.predict_proba(X[5000:])[:, 1]) for m in (ours, theirs)]
    assert auc[0] > auc[1] - 0.01, auc


# ------------------------------------------------------------------ the level kernels

@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), m=st.integers(1, 9), n_threads=st.sampled_from([1, 2, 3]),
       sparse=st.booleans())
def test_level_kernels_match_their_numpy_twins(seed, m, n_threads, sparse):
    from gbtree.kernels._node_histograms import level_histograms
    from gbtree.kernels._leaf_rows import add_leaf_values
    rng = np.random.RandomState(seed)
    n = 500
    X = np.round(rng.normal(size=(n, 4)), 1)
    X[rng.rand(n, 4) < 0.1] = np.nan
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(np.nan_to_num(X)) < 0.4, 0.0, X))
    mapper = BinMapper(max_bin=12).fit(X)
    Xb = mapper.transform(X)
    dense_b = Xb if isinstance(Xb, np.ndarray) else ref.dense_bins(Xb)
    pairs = np.ascontiguousarray(rng.normal(size=(n, 2)).astype(np.float32))
    rows = np.sort(rng.choice(n, size=rng.randint(1, n), replace=False)).astype(np.uint32)
    edges = np.sort(rng.randint(0, rows.shape[0] + 1, size=m - 1))
    bounds = np.ascontiguousarray(np.stack([np.r_[0, edges], np.r_[edges, rows.shape[0]]], 1),
                                  dtype=np.int64)
    # histograms of each range, written where ``targets`` says
    targets = rng.permutation(m + 2)[:m].astype(np.int64)
    default = None if isinstance(Xb, np.ndarray) else mapper.default_bins()
    out = np.full((m + 2, mapper.bin_offsets_[-1], 2), 7.0)
    totals = level_histograms(Xb, rows, bounds, pairs, mapper.bin_offsets_, default, out,
                              targets, n_threads)
    # and of packed quantised values (the level-wise trainer's grad_quant_bins)
    values, _ = py_quantize(pairs[:, 0].copy(), pairs[:, 1].copy(), 64, seed)
    packed = np.full((m + 2, mapper.bin_offsets_[-1]), 7, dtype=np.int64)
    packed_totals = level_histograms(Xb, rows, bounds, values, mapper.bin_offsets_, default,
                                     packed, targets, n_threads)
    for i, (a, b) in enumerate(bounds):
        want = ref.build_histogram(dense_b, rows[a:b], pairs[:, 0], pairs[:, 1],
                                   mapper.bin_offsets_)
        np.testing.assert_allclose(out[targets[i]], want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(totals[i], pairs[rows[a:b]].sum(axis=0, dtype=np.float64),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(
            packed[targets[i]],
            ref.build_packed_histogram(dense_b, rows[a:b], values, mapper.bin_offsets_))
        assert packed_totals[i] == ref.widen(values)[rows[a:b]].sum()
    untouched = np.setdiff1d(np.arange(m + 2), targets)
    assert np.all(out[untouched] == 7.0) and np.all(packed[untouched] == 7)
    values = rng.normal(size=m)
    raw = rng.normal(size=(n, 2))
    want = raw.copy()
    for i, (lo, hi) in enumerate(bounds):
        want[rows[lo:hi], 1] += values[i]
    add_leaf_values(rows, bounds, values, raw, 1, n_threads)
    np.testing.assert_array_equal(raw, want)
