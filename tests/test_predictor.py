import numpy as np
import pytest

from gbtree import GBTClassifier, GBTRegressor
from gbtree import _reference as ref
from gbtree.binning import BinMapper


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_predict_matches_reference(rng, dtype, order):
    X = rng.normal(size=(600, 5))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    y = rng.randint(0, 3, size=600)
    model = GBTClassifier(n_estimators=5, max_depth=4).fit(X, y)
    ens = model._ensemble
    Xp = np.asarray(X, dtype=dtype, order=order)
    got = ens.predict_raw(Xp, n_threads=2)
    expected = ref.predict_raw(Xp, ens.nodes, ens.tree_ptr, ens.tree_class, ens.base_score)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_binned_and_raw_prediction_agree_on_training_data(rng):
    X = rng.normal(size=(3000, 6))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2
    model = GBTRegressor(n_estimators=10).fit(X, y)
    mapper = BinMapper(model.max_bin, random_state=np.random.RandomState(model.random_state)).fit(X)
    Xb = mapper.transform(X)
    raw = model._ensemble.predict_raw(X)
    np.testing.assert_array_equal(model._ensemble.predict_raw_binned(Xb, mapper.n_bins_), raw)


def test_apply_returns_leaves(rng):
    X = rng.normal(size=(500, 3))
    y = X[:, 0]
    model = GBTRegressor(n_estimators=4, max_depth=3).fit(X, y)
    leaves = model._ensemble.apply(X)
    for t in range(4):
        tree = model._ensemble.tree(t)
        assert tree["is_leaf"][leaves[:, t]].all()
        np.testing.assert_allclose(
            model._ensemble.base_score[0] + sum(model._ensemble.tree(u)["value"][leaves[:, u]] for u in range(4)),
            model.predict(X))


def test_traversal_copy_follows_the_trees(rng):
    # predict_raw walks a cached compact copy of the trees: it must be rebuilt
    # when trees are added or dropped, and is not pickled
    import pickle
    X = rng.normal(size=(400, 4))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    model = GBTRegressor(n_estimators=6, max_depth=5).fit(X, np.nan_to_num(X[:, 0]) * 3 + rng.normal(size=400))
    ens = model._ensemble
    full = ens.predict_raw(X)
    ens.truncate(3)
    expected = ref.predict_raw(X, ens.nodes, ens.tree_ptr, ens.tree_class, ens.base_score)
    np.testing.assert_allclose(ens.predict_raw(X), expected, rtol=1e-12)
    ens.add_tree(ens.tree(0).copy(), 0)
    expected = ref.predict_raw(X, ens.nodes, ens.tree_ptr, ens.tree_class, ens.base_score)
    np.testing.assert_allclose(ens.predict_raw(X), expected, rtol=1e-12)
    clone = pickle.loads(pickle.dumps(ens))
    assert "_compact" not in ens.__getstate__()
    np.testing.assert_array_equal(clone.predict_raw(X), ens.predict_raw(X))
    assert not np.array_equal(full, ens.predict_raw(X))
