"""What the tests of the level-wise trainers (gbtree.dask, ExternalData) share: data
whose bin edges every fit finds alike, and the check that two fits grew the same trees."""
import numpy as np


def integer_data(n=3000, p=5, seed=0):
    """Integer features of at most 40 values (the edges are the midpoints between them
    however they are found; NaN is missing) and a regression target."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 40, size=(n, p)).astype(np.float64)
    X[rng.random((n, p)) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    y = 0.3 * Z[:, 0] - Z[:, 1] ** 1.5 / 20 + np.sin(Z[:, 2]) + rng.normal(size=n)
    return X, y


def assert_same_trees(a, b, atol=1e-9):
    """Fitted estimators ``a`` and ``b`` have the same bin edges and trees (leaf values
    within ``atol``)."""
    np.testing.assert_array_equal(a._bin_mapper.cuts_, b._bin_mapper.cuts_)
    na, nb = a._ensemble.nodes, b._ensemble.nodes
    for field in ("feature", "bin_threshold", "default_left", "left", "right", "is_leaf",
                  "count", "depth"):
        np.testing.assert_array_equal(na[field], nb[field])
    np.testing.assert_allclose(na["value"], nb["value"], rtol=0, atol=atol)


def assert_saves_loads_and_explains(model, X, folder):
    """A fitted model saved to a file in ``folder`` loads with the same predictions, and
    its SHAP values add up to its predictions."""
    from gbtree import load_model
    model.save_model(folder / "m.json")
    again = load_model(folder / "m.json")
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    contrib = model.predict(X[:50], pred_contribs=True)
    np.testing.assert_allclose(contrib.sum(axis=1), model.predict(X[:50]), atol=1e-9)


# monotone in features 0 (rising) and 1 (falling); paths within {0, 2} or {1, 3, 4}
CONSTRAINTS = dict(monotone_constraints=[1, -1, 0, 0, 0],
                   interaction_constraints=[[0, 2], [1, 3, 4]])


def assert_constrained(model, X):
    """A regressor fitted with ``CONSTRAINTS`` on ``integer_data`` keeps them: its
    predictions rise with feature 0 and fall with feature 1 (the others held), and
    every root-to-leaf path of its trees uses features of one group."""
    from test_sampling import _paths, _trees
    grid = np.r_[np.nan, np.arange(-1.0, 41.0)]
    for f, sign in ((0, 1), (1, -1)):
        Z = np.repeat(X[:20], grid.size, axis=0)
        Z[:, f] = np.tile(grid[1:].tolist() + [grid[0]], 20)   # (NaN last: its own bin)
        pred = model.predict(Z).reshape(20, grid.size)[:, :-1]
        assert np.all(sign * np.diff(pred, axis=1) >= -1e-12)
    paths = [path for t in _trees(model) for path in _paths(t)]
    assert all(path <= {0, 2} or path <= {1, 3, 4} for path in paths)
    assert any(0 in path for path in paths) and any(1 in path for path in paths)
