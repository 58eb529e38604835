"""Quantised gradients (``grad_quant_bins``, LightGBM's quantised training): the
histograms sum packed integers; splits are chosen on the rounded sums, and the
leaf values come from the exact gradients. The kernels are tested against the
reference in test_histogram.py and test_sparse.py."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from gbtree import GBTClassifier, GBTRanker, GBTRegressor
import _reference as ref
from gbtree.growing._expand_ahead import TreeGrower
from gbtree.growing.grower_params import GrowerParams
from gbtree.data.binning import BinMapper


def _data(rng, n, p=6, max_bin=64):
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 + np.sin(np.nan_to_num(X[:, 1]) * 3) + rng.normal(scale=0.3, size=n)
    mapper = BinMapper(max_bin).fit(X)
    return X, y, mapper, mapper.transform(X)


def _grow(Xb, mapper, grad, hess, quant_levels=0, n_threads=1, lossguide=True, max_leaves=31,
          max_depth=0, seed=5, **kw):
    params = GrowerParams(max_depth=max_depth, max_leaves=max_leaves, lossguide=lossguide,
                          quant_levels=quant_levels, **kw)
    grower = TreeGrower(Xb, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                        params, n_threads)
    raw = np.zeros((Xb.shape[0], 1))
    tree = grower.grow(ref.gradient_pairs(grad, hess), 0.5, raw, 0, None, seed)[0]
    return tree, raw, grower


@pytest.mark.parametrize("lossguide", [False, True])
def test_gradients_on_the_grid_give_the_exact_tree(rng, lossguide):
    # gradients that are multiples of the step (max |g| = 2, 16 levels: step 0.25) and a
    # constant hessian are not rounded, and their sums are exact in floats too: the
    # quantised grower must build the exact grower's tree, bit for bit
    X, y, mapper, Xb = _data(rng, 50_000)
    grad = np.clip(np.round(-y * 4) / 4, -2, 2).astype(np.float32)
    grad[0] = 2.0
    hess = np.ones(len(y), np.float32)
    kw = dict(lossguide=lossguide, max_leaves=31 if lossguide else 0, max_depth=0 if lossguide else 6)
    exact, raw_exact, _ = _grow(Xb, mapper, grad, hess, **kw)
    quant, raw_quant, _ = _grow(Xb, mapper, grad, hess, quant_levels=16, n_threads=2, **kw)
    assert (exact["is_leaf"] == 1).sum() > 10
    assert quant.tobytes() == exact.tobytes()
    np.testing.assert_array_equal(raw_quant, raw_exact)


def test_leaf_values_and_covers_come_from_the_exact_gradients(rng):
    X, y, mapper, Xb = _data(rng, 20_000)
    grad = (-y).astype(np.float32)
    hess = rng.uniform(0.5, 1.5, size=len(y)).astype(np.float32)
    exact, _, _ = _grow(Xb, mapper, grad, hess)
    tree, raw, grower = _grow(Xb, mapper, grad, hess, quant_levels=4)
    assert tree.tobytes() != exact.tobytes()   # 4 levels: the rounding changes the splits
    rows, starts, ends = grower.leaf_rows()
    for k in range(tree.shape[0]):
        r = rows[starts[k]:ends[k]]
        H = hess[r].astype(np.float64).sum()
        assert tree["count"][k] == r.shape[0]
        np.testing.assert_allclose(tree["cover"][k], H, rtol=1e-12)
        np.testing.assert_allclose(
            tree["value"][k], 0.5 * ref.leaf_weight(grad[r].astype(np.float64).sum(), H), rtol=1e-12)
        if tree["is_leaf"][k]:
            np.testing.assert_array_equal(raw[r, 0], tree["value"][k])


@pytest.mark.parametrize("p,max_bin", [(6, 64), (70, 256)])   # 70 x 256: two-task scans
def test_quantised_tree_is_identical_across_threads(rng, p, max_bin):
    X, y, mapper, Xb = _data(rng, 60_000, p=p, max_bin=max_bin)
    grad = (-y).astype(np.float32)
    hess = rng.uniform(0.5, 1.5, size=len(y)).astype(np.float32)
    trees = [_grow(Xb, mapper, grad, hess, quant_levels=32, n_threads=n)[:2] for n in (1, 2, 3)]
    for tree, raw in trees[1:]:
        assert tree.tobytes() == trees[0][0].tobytes()
        np.testing.assert_array_equal(raw, trees[0][1])


def test_quantised_model_is_close_to_the_exact_one_and_more_levels_are_closer():
    X, y = make_classification(30_000, 20, n_informative=10, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    kw = dict(n_estimators=60, grow_policy="lossguide", max_depth=0, max_leaves=31)
    exact = GBTClassifier(grad_quant_bins=None, **kw).fit(Xtr, ytr)
    p_exact = exact.predict_proba(Xte)[:, 1]
    auc_exact = roc_auc_score(yte, p_exact)
    gap = {}
    for k in (2, 64):
        p = GBTClassifier(grad_quant_bins=k, **kw).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
        assert not np.array_equal(p, p_exact)
        assert roc_auc_score(yte, p) > auc_exact - 0.01
        gap[k] = np.abs(p - p_exact).mean()
    assert gap[64] < gap[2]


def test_quantised_model_is_bit_identical_across_n_jobs_and_sparse_input():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40_000, 8)).astype(np.float32)
    X[rng.rand(*X.shape) < 0.5] = 0.0
    y = X[:, 0] * 2 + np.sin(X[:, 1] * 3) + rng.normal(size=len(X))
    kw = dict(n_estimators=5, grad_quant_bins=16, grow_policy="lossguide", max_depth=0,
              max_leaves=31)
    models = [GBTRegressor(n_jobs=n, **kw).fit(X, y) for n in (1, 2)]
    models.append(GBTRegressor(n_jobs=2, **kw).fit(sp.csr_matrix(X), y))
    for m in models[1:]:
        assert m._ensemble.nodes.tobytes() == models[0]._ensemble.nodes.tobytes()


def test_quantised_ranker_and_multiclass_fit():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(3000, 5))
    y = np.digitize(X[:, 0] + rng.normal(scale=0.5, size=3000), [-1, 0, 1])
    exact = GBTClassifier(n_estimators=20).fit(X, y)
    quant = GBTClassifier(n_estimators=20, grad_quant_bins=64).fit(X, y)
    assert quant.score(X, y) > exact.score(X, y) - 0.02
    qid = np.repeat(np.arange(300), 10)
    ranker = GBTRanker(n_estimators=20, grad_quant_bins=64).fit(X, y, qid=qid)
    exact_ranker = GBTRanker(n_estimators=20, grad_quant_bins=None).fit(X, y, qid=qid)
    assert ranker.score(X, y, qid=qid) > exact_ranker.score(X, y, qid=qid) - 0.02


@pytest.mark.parametrize("value,error", [(1, ValueError), (0, ValueError), (2.5, TypeError),
                                         ("64", TypeError), (32767, ValueError)])
def test_invalid_grad_quant_bins_is_named(value, error):
    X, y = make_classification(50, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(error, match="grad_quant_bins"):
        GBTClassifier(grad_quant_bins=value).fit(X, y)


def test_grad_quant_bins_too_large_for_the_rows_is_named():
    X = np.arange(80_000, dtype=np.float64).reshape(-1, 1)
    y = X[:, 0] % 7
    with pytest.raises(ValueError, match=r"grad_quant_bins=30000 is too large for 80000 rows.*<= 26842"):
        GBTRegressor(n_estimators=2, grad_quant_bins=30000).fit(X, y)
    GBTRegressor(n_estimators=2, grad_quant_bins=26842).fit(X, y)   # the bound itself fits


def test_auto_quantises_where_the_trees_take_it_and_sums_floats_elsewhere():
    X, y = make_classification(3000, 6, random_state=1)

    def proba(**kw):
        return GBTClassifier(n_estimators=8, max_depth=3, **kw).fit(X, y).predict_proba(X)

    np.testing.assert_array_equal(proba(), proba(grad_quant_bins=64))
    assert not np.array_equal(proba(), proba(grad_quant_bins=None))
    for kw in (dict(tree_method="exact"), dict(grow_policy="symmetric"),
               dict(multi_strategy="multi_output_tree"), dict(boosting_type="ordered")):
        np.testing.assert_array_equal(proba(**kw), proba(grad_quant_bins=None, **kw))


def test_auto_falls_back_to_float_gradients_where_the_rows_are_too_many():
    # 33,038,210 rows x 65 levels reach 2**31: an explicit 64 is refused, "auto" sums floats
    from gbtree.boosting.booster import BoostParams, check_quant_bins
    rows = (2 ** 31) // 65 + 1
    assert check_quant_bins(BoostParams(grad_quant_bins=64, grad_quant_auto=True),
                            rows).grad_quant_bins == 0
    assert check_quant_bins(BoostParams(grad_quant_bins=64, grad_quant_auto=True),
                            rows - 1).grad_quant_bins == 64
    with pytest.raises(ValueError, match="grad_quant_bins=64 is too large"):
        check_quant_bins(BoostParams(grad_quant_bins=64), rows)
