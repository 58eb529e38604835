"""The CSR prediction kernels against their dense counterparts, bit for bit.

Every CSR kernel must give exactly what the dense kernel gives on the dense
equivalent: absent entries set to ``absent`` (raw) or to the feature's default
bin (binned); a stored NaN is always missing, a stored zero is a value.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gbtree import GBTClassifier, GBTRegressor
from gbtree.predicting._predictor import apply_raw, compact_nodes, predict_binned, predict_raw
from gbtree.predicting._sparse_predictor import apply_raw_csr, predict_binned_csr, predict_raw_csr
from gbtree.kernels._typedefs import NODE_DTYPE
from gbtree.data.binning import BinMapper
from gbtree.predicting.tree import TreeEnsemble, add_trees_to_raw


# ----------------------------------------------------------------------------- helpers

def random_tree(rng, n_features, max_depth, thresholds=(0.0,), n_bins=None):
    """A random NODE_DTYPE tree; thresholds drawn from ``thresholds`` or N(0, 1)."""
    nodes = []

    def grow(depth):
        k = len(nodes)
        nodes.append(np.zeros(1, dtype=NODE_DTYPE)[0])
        rec = nodes[k]
        rec["depth"] = depth
        rec["value"] = rng.normal()
        if depth == max_depth or (depth > 0 and rng.rand() < 0.2):
            rec["is_leaf"] = 1
            rec["feature"] = -1
            return k
        f = rng.randint(n_features)
        rec["feature"] = f
        rec["threshold"] = (thresholds[rng.randint(len(thresholds))] if rng.rand() < 0.5
                            else rng.normal())
        nb = 255 if n_bins is None else n_bins[f]
        rec["bin_threshold"] = rng.randint(0, max(nb - 1, 1))
        rec["default_left"] = rng.randint(2)
        left = grow(depth + 1)
        right = grow(depth + 1)
        nodes[k]["left"] = left
        nodes[k]["right"] = right
        return k

    grow(0)
    return np.array(nodes, dtype=NODE_DTYPE)


def random_ensemble(rng, n_features, n_trees, n_outputs=2, max_depth=5, n_bins=None):
    ens = TreeEnsemble(n_features, rng.normal(size=n_outputs))
    for t in range(n_trees):
        ens.add_tree(random_tree(rng, n_features, max_depth, n_bins=n_bins), t % n_outputs)
    return ens


def random_csr(rng, n_rows, n_features, density, dtype, nan_frac=0.1, zero_frac=0.1,
               empty_rows=0.1):
    """A canonical CSR matrix with stored NaNs, explicitly stored zeros and empty rows."""
    mask = rng.rand(n_rows, n_features) < density
    mask[rng.rand(n_rows) < empty_rows] = False
    return csr_from_mask(rng, mask, dtype, nan_frac, zero_frac)


def csr_from_mask(rng, mask, dtype, nan_frac, zero_frac, nan_mask=None):
    rows, cols = np.nonzero(mask)      # row-major: canonical CSR order
    values = rng.normal(size=rows.size)
    values[rng.rand(rows.size) < zero_frac] = 0.0
    if nan_mask is None:
        values[rng.rand(rows.size) < nan_frac] = np.nan
    else:
        values[nan_mask[rows, cols]] = np.nan
    X = sp.csr_matrix((values.astype(dtype), (rows, cols)), shape=mask.shape)
    # the COO constructor keeps explicit zeros; make sure nothing was merged away
    assert X.nnz == rows.size and X.has_canonical_format
    return X


def densify(X, absent):
    """The dense equivalent: stored entries as stored, absent ones set to ``absent``."""
    D = np.full(X.shape, absent, dtype=X.dtype)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    D[rows, X.indices] = X.data
    return D


def csr_args(X):
    return X.data, X.indices.astype(np.int32), X.indptr.astype(np.int64), X.shape[1]


def random_binned(rng, n_rows, n_features, density, n_bins, store_defaults=0.0):
    """(dense binned matrix, CSR parts, default_bin): absent entries have the default
    bin; a fraction ``store_defaults`` of the stored entries hold the default bin too."""
    default_bin = (rng.randint(0, 256, size=n_features) % (n_bins + 1)).astype(np.uint8)
    dense = np.tile(default_bin, (n_rows, 1))
    mask = rng.rand(n_rows, n_features) < density
    mask[rng.rand(n_rows) < 0.1] = False
    rows, cols = np.nonzero(mask)
    values = (rng.randint(0, 256, size=rows.size) % (n_bins[cols] + 1)).astype(np.uint8)
    keep = (values != default_bin[cols]) | (rng.rand(rows.size) < store_defaults)
    rows, cols, values = rows[keep], cols[keep], values[keep]
    dense[rows, cols] = values
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return dense, (indptr, cols.astype(np.int32), values), default_bin


def check_raw_kernels(ens, X, absent, n_threads):
    """predict_raw_csr and apply_raw_csr against the dense kernels, bit for bit."""
    D = densify(X, absent)
    data, indices, indptr, n_features = csr_args(X)
    compact = compact_nodes(ens.nodes, ens.tree_ptr)
    start = np.random.RandomState(0).normal(size=(X.shape[0], ens.n_outputs))
    expected, got = start.copy(), start.copy()
    predict_raw(D, compact, ens.tree_ptr, ens.tree_class, expected, n_threads)
    predict_raw_csr(data, indices, indptr, n_features, absent, compact, ens.tree_ptr,
                    ens.tree_class, got, n_threads)
    assert np.array_equal(got, expected)
    leaves_expected = np.empty((X.shape[0], ens.n_trees), dtype=np.int32)
    leaves_got = np.full_like(leaves_expected, -7)
    apply_raw(D, ens.nodes, ens.tree_ptr, leaves_expected, n_threads)
    apply_raw_csr(data, indices, indptr, n_features, absent, ens.nodes, ens.tree_ptr,
                  leaves_got, n_threads)
    assert np.array_equal(leaves_got, leaves_expected)
    return expected


def check_binned_kernels(ens, dense, csr, default_bin, missing_bin, n_threads, rng):
    indptr, indices, bins = csr
    n_rows = dense.shape[0]
    start = rng.normal(size=(n_rows, ens.n_outputs))
    expected, got = start.copy(), start.copy()
    predict_binned(dense, missing_bin, ens.nodes, ens.tree_ptr, ens.tree_class, None, expected,
                   n_threads)
    predict_binned_csr(indptr, indices, bins, default_bin, missing_bin, ens.nodes,
                       ens.tree_ptr, ens.tree_class, None, got, n_threads)
    assert np.array_equal(got, expected)
    # listed rows only, one tree: those rows get the tree's values, the others none
    rows = rng.permutation(n_rows)[: rng.randint(0, n_rows + 1)].astype(np.uint32)
    for t in range(min(ens.n_trees, 3)):
        tree, output = ens.tree(t), int(ens.tree_class[t])
        ptr, cls = np.array([0, tree.shape[0]], dtype=np.int64), np.array([output], np.int32)
        alone = np.zeros_like(start)
        predict_binned(dense, missing_bin, tree, ptr, cls, None, alone, n_threads)
        expected, got = start.copy(), start.copy()
        expected[rows] += alone[rows]
        listed = start.copy()
        predict_binned(dense, missing_bin, tree, ptr, cls, rows, listed, n_threads)
        predict_binned_csr(indptr, indices, bins, default_bin, missing_bin, tree, ptr, cls, rows,
                           got, n_threads)
        assert np.array_equal(listed, expected)
        assert np.array_equal(got, expected)


@pytest.fixture(scope="module")
def fitted():
    """Real models fitted on dense data with many zeros and NaNs (so splits sit near 0)."""
    rng = np.random.RandomState(7)
    X = rng.normal(size=(1500, 12))
    X[rng.rand(*X.shape) < 0.5] = 0.0
    X[rng.rand(*X.shape) < 0.1] = np.nan
    Xz = np.nan_to_num(X)
    y_reg = Xz[:, 0] * 2 + (Xz[:, 1] > 0) - Xz[:, 2] ** 2 + 0.1 * rng.normal(size=1500)
    y_cls = (Xz[:, 0] > 0).astype(int) + (Xz[:, 3] > 0.5)
    reg = GBTRegressor(n_estimators=20, max_depth=5).fit(X, y_reg)
    cls = GBTClassifier(n_estimators=8, max_depth=4).fit(X, y_cls)
    return X, reg, cls


# ----------------------------------------------------------------------------- raw

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("absent", [0.0, np.nan])
@pytest.mark.parametrize("density", [0.0, 0.05, 0.3, 1.0])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_raw_kernels_match_dense_on_fitted_models(fitted, dtype, absent, density, n_threads):
    _, reg, cls = fitted
    rng = np.random.RandomState(int(density * 100) + n_threads)
    X = random_csr(rng, 700, 12, density, dtype)
    for model in (reg, cls):
        check_raw_kernels(model._ensemble, X, absent, n_threads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("absent", [0.0, np.nan])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_raw_kernels_match_dense_on_random_trees(dtype, absent, n_threads):
    rng = np.random.RandomState(3)
    ens = random_ensemble(rng, 40, n_trees=30, n_outputs=3, max_depth=7)
    X = random_csr(rng, 1000, 40, 0.1, dtype)
    out = check_raw_kernels(ens, X, absent, n_threads)
    assert np.isfinite(out).all() and np.unique(out[:, 0]).size > 10


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("absent", [0.0, np.nan])
@pytest.mark.parametrize("shape", [(3, 30000), (40, 30000), (9, 200000)])
def test_raw_kernels_on_wide_matrices(dtype, absent, shape):
    # 30000 float64 features fit 4 rows in a 1 MB scratch block, 200000 only one:
    # rows are then scattered and restored one at a time
    rng = np.random.RandomState(shape[0])
    n_rows, n_features = shape
    ens = random_ensemble(rng, n_features, n_trees=20, n_outputs=2, max_depth=6)
    # 2% stored, but the split features mostly stored, so the trees see the entries
    mask = rng.rand(n_rows, n_features) < 0.02
    used = np.unique(ens.nodes["feature"][ens.nodes["is_leaf"] == 0])
    mask[:, used] |= rng.rand(n_rows, used.size) < 0.8
    X = csr_from_mask(rng, mask, dtype, nan_frac=0.1, zero_frac=0.1)
    for n_threads in (1, 2):
        check_raw_kernels(ens, X, absent, n_threads)


def test_stored_zero_is_a_value_and_stored_nan_is_missing():
    # one split on feature 0 at threshold -1 (0 goes right), NaN goes left
    tree = np.zeros(3, dtype=NODE_DTYPE)
    tree[0] = (0.0, -1.0, 1.0, 1.0, 0, 1, 2, 0, 0, 0, 1, 0)
    tree["is_leaf"][1:] = 1
    tree["feature"][1:] = -1
    tree["value"][1:] = [10.0, 20.0]
    ens = TreeEnsemble(2, [0.0])
    ens.add_tree(tree, 0)
    X = sp.csr_matrix((np.array([0.0, np.nan]), np.array([0, 0]), np.array([0, 1, 2, 2])),
                      shape=(3, 2))
    assert X.nnz == 2
    # row 0: stored 0 -> right; row 1: stored NaN -> left; row 2: absent
    assert ens.predict_raw(X, absent=0.0)[:, 0].tolist() == [20.0, 10.0, 20.0]
    assert ens.predict_raw(X, absent=np.nan)[:, 0].tolist() == [20.0, 10.0, 10.0]
    assert ens.apply(X, absent=np.nan)[:, 0].tolist() == [2, 1, 1]


def test_no_rows_and_no_trees():
    rng = np.random.RandomState(0)
    ens = random_ensemble(rng, 5, n_trees=3)
    X = sp.csr_matrix((0, 5))
    assert ens.predict_raw(X).shape == (0, 2)
    assert ens.apply(X).shape == (0, 3)
    empty = TreeEnsemble(5, [1.5])
    X = random_csr(rng, 4, 5, 0.5, np.float64)
    assert np.array_equal(empty.predict_raw(X), np.full((4, 1), 1.5))
    assert empty.apply(X).shape == (4, 0)


# ----------------------------------------------------------------------------- tree.py

@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
@pytest.mark.parametrize("absent", [0.0, np.nan])
def test_ensemble_dispatches_csr(fitted, container, absent):
    X_train, reg, cls = fitted
    rng = np.random.RandomState(11)
    X = container(random_csr(rng, 300, 12, 0.2, np.float64))
    D = densify(sp.csr_matrix(X), absent)
    for model in (reg, cls):
        ens = model._ensemble
        assert np.array_equal(ens.predict_raw(X, n_threads=2, absent=absent),
                              ens.predict_raw(D, n_threads=2))
        assert np.array_equal(ens.predict_raw(X, tree_range=(2, 5), absent=absent),
                              ens.predict_raw(D, tree_range=(2, 5)))
        assert np.array_equal(ens.apply(X, absent=absent), ens.apply(D))
        trees = [ens.tree(t) for t in range(3)]
        outputs = [int(c) for c in ens.tree_class[:3]]
        got = np.ones((300, ens.n_outputs))
        expected = got.copy()
        add_trees_to_raw(X, trees, outputs, got, n_threads=2, absent=absent)
        add_trees_to_raw(D, trees, outputs, expected, n_threads=2)
        assert np.array_equal(got, expected)
    # a sparse copy of the training matrix (NaN stored, zeros absent) predicts as the model
    Xs = sp.csr_matrix(np.where(X_train == 0, 0, X_train))
    assert np.array_equal(reg._ensemble.predict_raw(Xs).ravel(),
                          reg._ensemble.predict_raw(X_train).ravel())


def test_ensemble_accepts_int64_indices_and_int32_indptr():
    rng = np.random.RandomState(5)
    ens = random_ensemble(rng, 20, n_trees=10)
    X = random_csr(rng, 200, 20, 0.2, np.float32)
    X64 = X.copy()
    X64.indices = X64.indices.astype(np.int64)
    X64.indptr = X64.indptr.astype(np.int64)
    assert X.indptr.dtype == np.int32
    expected = ens.predict_raw(densify(X, 0.0))
    assert np.array_equal(ens.predict_raw(X), expected)
    assert np.array_equal(ens.predict_raw(X64), expected)


# ----------------------------------------------------------------------------- binned

@pytest.mark.parametrize("density", [0.0, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("store_defaults", [0.0, 0.3])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_binned_kernels_match_dense_on_random_trees(density, store_defaults, n_threads):
    rng = np.random.RandomState(int(density * 10) + n_threads)
    n_features = 25
    n_bins = rng.randint(1, 255, size=n_features).astype(np.int32)
    n_bins[:3] = [1, 2, 255]
    ens = random_ensemble(rng, n_features, n_trees=25, n_outputs=3, max_depth=7, n_bins=n_bins)
    dense, csr, default_bin = random_binned(rng, 900, n_features, density, n_bins,
                                            store_defaults)
    check_binned_kernels(ens, dense, csr, default_bin, n_bins, n_threads, rng)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_binned_kernels_match_dense_on_fitted_models(fitted, n_threads):
    X, reg, cls = fitted
    rng = np.random.RandomState(1)
    for model in (reg, cls):
        mapper = BinMapper(model.max_bin,
                           random_state=np.random.RandomState(model.random_state)).fit(X)
        dense = mapper.transform(X)
        # the default bin of a feature is the bin of 0.0, the value a sparse matrix omits
        default_bin = mapper.transform(np.zeros((1, X.shape[1])))[0]
        mask = dense != default_bin
        rows, cols = np.nonzero(mask)
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        csr = (indptr, cols.astype(np.int32), dense[rows, cols])
        ens = model._ensemble
        check_binned_kernels(ens, dense, csr, default_bin, mapper.n_bins_, n_threads, rng)
        # binned and raw prediction agree on the training matrix, as in the dense case
        got = np.tile(ens.base_score, (X.shape[0], 1))
        predict_binned_csr(*csr, default_bin, mapper.n_bins_, ens.nodes, ens.tree_ptr,
                           ens.tree_class, None, got, n_threads)
        assert np.array_equal(got, ens.predict_raw(X))


@pytest.mark.parametrize("shape", [(3, 30000), (9, 1_500_000)])
def test_binned_kernels_on_wide_matrices(shape):
    # 1.5M one-byte bins do not fit a 1 MB block: one row at a time
    rng = np.random.RandomState(2)
    n_rows, n_features = shape
    n_bins = rng.randint(1, 255, size=n_features).astype(np.int32)
    ens = random_ensemble(rng, n_features, n_trees=15, n_outputs=2, max_depth=6, n_bins=n_bins)
    dense, csr, default_bin = random_binned(rng, n_rows, n_features, 0.01, n_bins)
    used = np.unique(ens.nodes["feature"][ens.nodes["is_leaf"] == 0])
    assert np.any(dense[:, used] != default_bin[used])   # some splits see stored entries
    for n_threads in (1, 2):
        check_binned_kernels(ens, dense, csr, default_bin, n_bins, n_threads, rng)


# ----------------------------------------------------------------------------- malformed input

def test_malformed_csr_raises_instead_of_crashing():
    rng = np.random.RandomState(0)
    ens = random_ensemble(rng, 6, n_trees=4)
    compact = compact_nodes(ens.nodes, ens.tree_ptr)
    data = np.ones(4)
    out = np.zeros((2, 2))
    leaves = np.zeros((2, 4), dtype=np.int32)
    good_ptr = np.array([0, 2, 4], dtype=np.int64)
    good_idx = np.array([0, 5, 1, 2], dtype=np.int32)
    cases = [
        (good_idx, np.array([0, 2], dtype=np.int64), "indptr has"),
        (np.array([0, 6, 1, 2], dtype=np.int32), good_ptr, "malformed"),
        (np.array([0, -1, 1, 2], dtype=np.int32), good_ptr, "malformed"),
        (good_idx, np.array([0, 3, 2], dtype=np.int64), "malformed"),
        (good_idx, np.array([0, 2, 9], dtype=np.int64), "malformed"),
    ]
    for indices, indptr, msg in cases:
        with pytest.raises(ValueError, match=msg):
            predict_raw_csr(data, indices, indptr, 6, 0.0, compact, ens.tree_ptr,
                            ens.tree_class, out, 1)
        with pytest.raises(ValueError, match=msg):
            apply_raw_csr(data, indices, indptr, 6, 0.0, ens.nodes, ens.tree_ptr, leaves, 1)
    # fewer features than the trees split on
    with pytest.raises(ValueError, match="features"):
        predict_raw_csr(data, good_idx, good_ptr, 3, 0.0, compact, ens.tree_ptr,
                        ens.tree_class, out, 1)
    bins = np.ones(4, dtype=np.uint8)
    default = np.zeros(6, dtype=np.uint8)
    missing = np.full(6, 255, dtype=np.int32)
    with pytest.raises(ValueError, match="malformed"):
        predict_binned_csr(good_ptr, np.array([0, 9, 1, 2], dtype=np.int32), bins, default,
                           missing, ens.nodes, ens.tree_ptr, ens.tree_class, None, out, 1)
    with pytest.raises(ValueError, match="malformed"):   # a row past the end
        predict_binned_csr(good_ptr, good_idx, bins, default, missing, ens.nodes, ens.tree_ptr,
                           ens.tree_class, np.array([0, 2], dtype=np.uint32), out, 1)


# ----------------------------------------------------------------------------- hypothesis

@st.composite
def sparse_cases(draw):
    n_rows = draw(st.integers(0, 40))
    n_features = draw(st.integers(1, 12))
    stored = draw(hnp.arrays(np.bool_, (n_rows, n_features)))
    nan = draw(hnp.arrays(np.bool_, (n_rows, n_features)))
    return dict(stored=stored, nan=nan,
                dtype=draw(st.sampled_from([np.float32, np.float64])),
                absent=draw(st.sampled_from([0.0, np.nan])),
                n_threads=draw(st.integers(1, 2)),
                seed=draw(st.integers(0, 2**31 - 1)))


@settings(max_examples=60, deadline=None)
@given(sparse_cases())
def test_csr_kernels_match_dense_on_random_patterns(case):
    rng = np.random.RandomState(case["seed"])
    stored, nan = case["stored"], case["nan"]
    n_rows, n_features = stored.shape
    n_bins = rng.randint(1, 20, size=n_features).astype(np.int32)
    ens = random_ensemble(rng, n_features, n_trees=6, n_outputs=2, max_depth=5, n_bins=n_bins)
    # raw: stored entries as drawn (NaN where the NaN mask says so), some stored zeros
    X = csr_from_mask(rng, stored, case["dtype"], 0.0, 0.2, nan_mask=nan)
    check_raw_kernels(ens, X, case["absent"], case["n_threads"])
    # binned: the same pattern; a stored NaN becomes the missing bin
    default_bin = np.minimum(rng.randint(0, 20, size=n_features), n_bins).astype(np.uint8)
    rows, cols = np.nonzero(stored)
    values = (rng.randint(0, 256, size=rows.size) % (n_bins[cols] + 1)).astype(np.uint8)
    values[nan[rows, cols]] = n_bins[cols][nan[rows, cols]]
    dense = np.tile(default_bin, (n_rows, 1))
    dense[rows, cols] = values
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(stored.sum(axis=1), out=indptr[1:])
    check_binned_kernels(ens, dense, (indptr, cols.astype(np.int32), values), default_bin,
                         n_bins, case["n_threads"], rng)
