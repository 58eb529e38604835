"""Sparse input: kernels against their dense references, and models fit on a
scipy.sparse matrix equal (bit for bit) to those fit on its ``.toarray()``."""
import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from gbtree import GBTClassifier, GBTRanker, GBTRegressor
import _reference as ref
from gbtree.growing._expand_ahead import TreeGrower
from gbtree.kernels._node_histograms import py_build_histogram, py_plan
from gbtree.kernels._quantizer import py_quantize
from test_splitting import partition_rows
from gbtree.data.binning import BinMapper, SparseBinned
from gbtree.growing.grower_params import GrowerParams


def _sparse(rng, n_rows, n_features, density, nan=0.0, zeros=0.0, inf=0.0, distinct=None):
    """A random CSR matrix; some stored entries NaN, explicit 0 or inf."""
    X = sp.random(n_rows, n_features, density=density, format="csr",
                  random_state=rng.randint(2 ** 31 - 1), data_rvs=rng.standard_normal)
    if distinct is not None:   # few distinct values
        X.data = np.round(X.data * distinct) / distinct
    for share, value in ((nan, np.nan), (zeros, 0.0), (inf, np.inf)):
        X.data[rng.uniform(size=X.nnz) < share] = value
    return X


def _dense(X, absent=0.0):
    """X.toarray() with absent entries set to ``absent``."""
    D = np.full(X.shape, absent)
    coo = X.tocoo()
    D[coo.row, coo.col] = coo.data
    return D


def _same_trees(a, b):
    na, nb = a._ensemble.nodes, b._ensemble.nodes
    return na.shape == nb.shape and all(np.array_equal(na[f], nb[f], equal_nan=True)
                                        for f in na.dtype.names)


# ----------------------------------------------------------------- kernels

@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("absent_as_missing", [False, True])
def test_bin_edges_equal_dense(rng, weighted, absent_as_missing):
    X = _sparse(rng, 3000, 12, 0.3, nan=0.05, zeros=0.05, inf=0.01)
    stored_zeros = sp.csr_matrix((np.zeros(3000), (np.arange(3000), np.zeros(3000, int))),
                                 shape=(3000, 1))
    X = sp.hstack([X, stored_zeros, _sparse(rng, 3000, 1, 1.0)], format="csr")
    assert X[:, 12].nnz == 3000 and X[:, 13].nnz == 3000   # stored zeros / a full column
    w = rng.uniform(0, 2, size=3000) if weighted else None
    if weighted:
        w[rng.uniform(size=3000) < 0.1] = 0.0
    D = _dense(X, np.nan if absent_as_missing else 0.0)
    for max_bin, subsample in ((256, 200_000), (16, 1000)):   # midpoints / quantiles, subsample
        a = BinMapper(max_bin, subsample=subsample, random_state=3,
                      absent_as_missing=absent_as_missing).fit(D, w)
        b = BinMapper(max_bin, subsample=subsample, random_state=3,
                      absent_as_missing=absent_as_missing).fit(X, w)
        np.testing.assert_array_equal(a.cut_ptr_, b.cut_ptr_)
        np.testing.assert_array_equal(a.cuts_, b.cuts_)
        # the binned sparse matrix stores only non-default bins and equals the dense one
        Bs, Bd = b.transform(X), a.transform(D)
        assert isinstance(Bs, SparseBinned)
        assert not np.any(Bs.bins == Bs.default_bin[Bs.indices])
        np.testing.assert_array_equal(ref.dense_bins(Bs), Bd)
        np.testing.assert_array_equal(ref.map_to_bins(D, b.cuts_, b.cut_ptr_), Bd)


def test_default_bin_is_the_bin_of_zero(rng):
    D = rng.normal(size=(500, 5))
    D[:, 1] = np.abs(D[:, 1]) + 1          # zero below every value: bin 0
    D[:, 2] = -np.abs(D[:, 2]) - 1         # zero above every value: the last value bin
    m = BinMapper(32).fit(D)
    zero_bins = ref.map_to_bins(np.zeros((1, 5)), m.cuts_, m.cut_ptr_)[0]
    np.testing.assert_array_equal(m.default_bins(False), zero_bins)
    np.testing.assert_array_equal(m.default_bins(True), m.n_bins_)   # the missing bin


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n_rows=st.integers(1, 2500),
       n_features=st.integers(1, 15), density=st.floats(0.0, 1.0),
       n_threads=st.sampled_from([1, 2]))
def test_sparse_histogram_matches_dense_and_reference(seed, n_rows, n_features, density,
                                                      n_threads):
    rng = np.random.RandomState(seed)
    X = _sparse(rng, n_rows, n_features, density, nan=0.1, zeros=0.1)
    mapper = BinMapper(rng.randint(3, 257)).fit(X)
    Bs = mapper.transform(X)
    Bd = ref.dense_bins(Bs)
    default = mapper.default_bins()
    grad = rng.normal(size=n_rows).astype(np.float32)
    hess = rng.uniform(0.1, 1, size=n_rows).astype(np.float32)
    rows = np.sort(rng.choice(n_rows, size=rng.randint(0, n_rows + 1),
                              replace=False)).astype(np.uint32)
    off = mapper.bin_offsets_
    hs, ts = py_build_histogram(Bs, rows, grad, hess, off, n_threads, default_bin=default,
                                return_totals=True)
    hd, td = py_build_histogram(Bd, rows, grad, hess, off, n_threads, default_bin=default,
                                return_totals=True)
    np.testing.assert_array_equal(hs, hd)          # bit for bit: sparse == dense
    assert ts == td
    # the list in two ranges (the grower's halves): the same sums
    k = rng.randint(0, rows.shape[0] + 1)
    h2, t2 = py_build_histogram(Bs, rows, grad, hess, off, n_threads, default_bin=default,
                                return_totals=True, split=k)
    np.testing.assert_array_equal(h2, hs)
    assert t2 == ts
    np.testing.assert_allclose(hs, ref.build_histogram(Bd, rows, grad, hess, off),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ts, [grad[rows].astype(np.float64).sum(),
                                    hess[rows].astype(np.float64).sum()], rtol=1e-9, atol=1e-9)
    # quantised gradients: the packed sums are exact, so sparse, dense and reference agree
    packed, _ = py_quantize(grad, hess, 64, seed)
    ps, pts = py_build_histogram(Bs, rows, None, None, off, n_threads, default_bin=default,
                                 return_totals=True, packed=packed)
    pd = py_build_histogram(Bd, rows, None, None, off, n_threads, default_bin=default,
                            packed=packed)
    np.testing.assert_array_equal(ps, pd)
    np.testing.assert_array_equal(ps, ref.build_packed_histogram(Bd, rows, packed, off))
    assert pts == ref.widen(packed)[rows].sum()


def test_sparse_histogram_chunked_and_thread_independent(rng):
    n_rows = 70_000
    X = _sparse(rng, n_rows, 30, 0.05)
    mapper = BinMapper(64).fit(X)
    Bs, default = mapper.transform(X), mapper.default_bins()
    assert py_plan(n_rows, 30, mapper.bin_offsets_[-1])[0] >= 2   # row chunks exercised
    grad = rng.normal(size=n_rows).astype(np.float32)
    hess = rng.uniform(0.1, 1, size=n_rows).astype(np.float32)
    rows = np.arange(n_rows, dtype=np.uint32)
    off = mapper.bin_offsets_
    h1 = py_build_histogram(Bs, rows, grad, hess, off, 1, default_bin=default)
    h2 = py_build_histogram(Bs, rows, grad, hess, off, 2, default_bin=default)
    hd = py_build_histogram(ref.dense_bins(Bs), rows, grad, hess, off, 2,
                            default_bin=default)
    np.testing.assert_array_equal(h1, h2)
    np.testing.assert_array_equal(h1, hd)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n_rows=st.integers(1, 60_000),
       density=st.floats(0.0, 1.0), share=st.floats(0.0, 1.0), default_left=st.booleans(),
       n_threads=st.sampled_from([1, 2]), absent_as_missing=st.booleans())
def test_sparse_partition_matches_dense(seed, n_rows, density, share, default_left, n_threads,
                                        absent_as_missing):
    # each feature of a binned sparse matrix against the dense partition of its
    # .toarray(); large nodes take the parallel chunks
    rng = np.random.RandomState(seed)
    X = _sparse(rng, n_rows, 4, density, nan=0.1, zeros=0.1)
    mapper = BinMapper(rng.randint(3, 257), absent_as_missing=absent_as_missing).fit(X)
    Bs = mapper.transform(X)
    Bd = ref.dense_bins(Bs)
    entries_only = SparseBinned(Bs.indptr, Bs.entries, default_bin=Bs.default_bin, shape=Bs.shape,
                                bin_offsets=Bs.bin_offsets,
                                columns=(None, None, None, np.full(4, -1, dtype=np.int32),
                                         np.empty((0, n_rows), dtype=np.uint8)))
    rows = np.flatnonzero(rng.uniform(size=n_rows) < share).astype(np.uint32)
    for f in range(4):
        split_bin = rng.randint(0, mapper.n_bins_[f])
        expected = ref.partition(Bd, rows, f, split_bin, mapper.n_bins_[f], default_left)
        for B in (Bs, entries_only):   # column-wise copies / rows' own entries
            got = rows.copy()
            n_left = partition_rows(B, got, f, split_bin, mapper.n_bins_[f], default_left,
                                    n_threads)
            np.testing.assert_array_equal(got, expected[0])
            assert n_left == expected[1]
        dense_rows = rows.copy()
        assert n_left == partition_rows(Bd, dense_rows, f, split_bin, mapper.n_bins_[f],
                                        default_left, n_threads)


# ------------------------------------------------------- estimators: sparse == dense

FORMATS = [(fmt, kind) for fmt in ("csr", "csc", "coo")
           for kind in (sp.csr_matrix, sp.csr_array)]


@pytest.mark.parametrize("fmt,kind", FORMATS)
def test_regressor_sparse_equals_dense(rng, fmt, kind):
    X = _sparse(rng, 2000, 20, 0.2, nan=0.05, zeros=0.05)
    D = X.toarray()
    y = np.nan_to_num(D[:, :4]).sum(axis=1) + 0.1 * rng.normal(size=2000)
    Xs = kind(X).asformat(fmt)
    kw = dict(n_estimators=15, eval_metric="rmse")
    a = GBTRegressor(**kw).fit(D, y, eval_set=[(D, y)])
    b = GBTRegressor(**kw).fit(Xs, y, eval_set=[(Xs, y)])
    assert _same_trees(a, b)
    assert a.evals_result_ == b.evals_result_
    np.testing.assert_array_equal(a.predict(D), b.predict(Xs))
    np.testing.assert_array_equal(a.predict(D), b.predict(D))
    np.testing.assert_array_equal(a.apply(D), b.apply(Xs))
    for pa, pb in zip(a.staged_predict(D), b.staged_predict(Xs)):
        np.testing.assert_array_equal(pa, pb)


@pytest.mark.parametrize("fmt,kind", FORMATS)
def test_classifier_sparse_equals_dense(rng, fmt, kind):
    X = _sparse(rng, 2400, 15, 0.25, nan=0.05)
    D = X.toarray()
    y = np.digitize(np.nan_to_num(D[:, :3]).sum(axis=1), [-0.5, 0.5])   # 3 classes
    Xs = kind(X).asformat(fmt)
    a = GBTClassifier(n_estimators=10).fit(D, y)
    b = GBTClassifier(n_estimators=10).fit(Xs, y)
    assert _same_trees(a, b)
    np.testing.assert_array_equal(a.predict_proba(D), b.predict_proba(Xs))
    assert a.score(D, y) == b.score(Xs, y)


@pytest.mark.parametrize("kw", [
    dict(weights=True),
    dict(grow_policy="lossguide", max_leaves=31, max_depth=0),
    dict(subsample=0.6), dict(sampling_method="goss"),
    dict(colsample_bynode=0.5, colsample_bylevel=0.7),
    dict(monotone_constraints={0: 1}), dict(interaction_constraints=[[0, 1], [2, 3, 4]]),
    dict(max_bin=8), dict(objective="absolute_error"),
])
def test_training_options_sparse_equals_dense(rng, kw):
    kw = dict(kw)
    X = _sparse(rng, 3000, 12, 0.3, nan=0.05, zeros=0.05, distinct=4)
    D = X.toarray()
    y = np.nan_to_num(D[:, :5]).sum(axis=1) + 0.2 * rng.normal(size=3000)
    w = rng.uniform(0.2, 2, size=3000) if kw.pop("weights", False) else None
    a = GBTRegressor(n_estimators=12, **kw).fit(D, y, sample_weight=w)
    b = GBTRegressor(n_estimators=12, **kw).fit(X, y, sample_weight=w)
    assert _same_trees(a, b)
    np.testing.assert_array_equal(a.predict(D), b.predict(X))


def test_ranker_sparse_equals_dense(rng):
    X = _sparse(rng, 1500, 10, 0.3)
    D = X.toarray()
    y = rng.randint(0, 4, size=1500)
    qid = rng.randint(0, 60, size=1500)      # unsorted query ids
    a = GBTRanker(n_estimators=10).fit(D, y, qid=qid)
    b = GBTRanker(n_estimators=10).fit(X, y, qid=qid)
    assert _same_trees(a, b)
    np.testing.assert_array_equal(a.predict(D), b.predict(X))
    assert a.score(D, y, qid=qid) == b.score(X, y, qid=qid)


def test_memory_budget_drops_histograms_without_changing_the_model(rng):
    X = _sparse(rng, 3000, 40, 0.3)
    y = X[:, :5].toarray().sum(axis=1) + 0.1 * rng.normal(size=3000)
    mapper = BinMapper(256).fit(X)
    Xb = mapper.transform(X)
    grown = []
    for budget in (128 * 2 ** 20, 1):       # 1: every node beyond the minimum drops its histogram
        params = GrowerParams(max_depth=0, max_leaves=31, lossguide=True,
                              hist_memory_bytes=budget)
        g = TreeGrower(Xb, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                       params, 1, default_bin=mapper.default_bins())
        raw = np.zeros((X.shape[0], 1))
        trees = []
        for k in range(8):
            grad = (raw[:, 0] - y).astype(np.float32)
            tree = g.grow(ref.gradient_pairs(grad, np.ones_like(grad)), 0.3, raw, 0)[0]
            trees.append(tree.tobytes())
        grown.append((trees, raw, g.n_histogram_buffers))
    (roomy, raw_roomy, buffers_roomy), (tight, raw_tight, buffers_tight) = grown
    assert tight == roomy
    np.testing.assert_array_equal(raw_tight, raw_roomy)
    assert buffers_tight < buffers_roomy


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n_rows=st.integers(20, 600),
       n_features=st.integers(1, 8), density=st.floats(0.0, 1.0), nan=st.floats(0.0, 0.5),
       absent_as_missing=st.booleans())
def test_random_sparsity_patterns_and_nan_masks(seed, n_rows, n_features, density, nan,
                                                absent_as_missing):
    rng = np.random.RandomState(seed)
    X = _sparse(rng, n_rows, n_features, density, nan=nan, zeros=0.1)
    D = _dense(X, np.nan if absent_as_missing else 0.0)
    y = rng.normal(size=n_rows)
    kw = dict(n_estimators=4, max_depth=3, absent_as_missing=absent_as_missing)
    a = GBTRegressor(**kw).fit(D, y)
    b = GBTRegressor(**kw).fit(X, y)
    assert _same_trees(a, b)
    np.testing.assert_array_equal(a.predict(D), b.predict(X))


# ------------------------------------------------------- absent entries: 0 or missing

def test_absent_as_missing_separates_absent_from_stored_zero():
    # one feature: a third of the rows store 0.0 (y=0), a third store 1.0 (y=0) and a
    # third store nothing (y=10). As zeros, absent rows cannot be told from stored
    # zeros; as missing values they get their own default direction.
    n = 900
    rows = np.arange(n)
    kind = rows % 3
    X = sp.csr_matrix((np.where(kind[kind < 2] == 0, 0.0, 1.0), (rows[kind < 2],
                       np.zeros(np.count_nonzero(kind < 2), dtype=int))), shape=(n, 1))
    assert X.nnz == 600      # the stored zeros are kept
    y = np.where(kind == 2, 10.0, 0.0)
    kw = dict(n_estimators=50, learning_rate=0.5, max_depth=2, reg_lambda=0.0)
    as_zero = GBTRegressor(**kw).fit(X, y)
    as_missing = GBTRegressor(absent_as_missing=True, **kw).fit(X, y)
    p0, pm = as_zero.predict(X), as_missing.predict(X)
    np.testing.assert_allclose(p0[kind == 0], 5.0, atol=1e-3)    # absent = 0: mixed
    np.testing.assert_allclose(pm[kind == 0], 0.0, atol=1e-3)
    np.testing.assert_allclose(pm[kind == 2], 10.0, atol=1e-3)
    # missing-mode model == dense fit with NaN for the absent entries
    D = _dense(X, np.nan)
    dense = GBTRegressor(absent_as_missing=True, **kw).fit(D, y)
    assert _same_trees(dense, as_missing)
    np.testing.assert_array_equal(dense.predict(D), pm)


def test_stored_nan_is_missing_in_both_modes(rng):
    X = _sparse(rng, 1000, 6, 0.5, nan=0.2)
    D = X.toarray()                       # stored NaN stay NaN, absent become 0
    y = rng.normal(size=1000)
    a = GBTRegressor(n_estimators=5).fit(D, y)
    b = GBTRegressor(n_estimators=5).fit(X, y)
    assert _same_trees(a, b)
    m = GBTRegressor(n_estimators=5, absent_as_missing=True).fit(X, y)
    assert m._bin_mapper.transform(X).nnz < X.nnz   # stored NaN: in the default (missing) bin


def test_warm_start_with_sparse_continues_exactly(rng):
    X = _sparse(rng, 1500, 10, 0.3)
    y = X[:, :3].toarray().sum(axis=1)
    m = GBTRegressor(n_estimators=6, subsample=0.7, warm_start=True).fit(X, y)
    m.set_params(n_estimators=12).fit(X, y)
    np.testing.assert_array_equal(m.predict(X),
                                  GBTRegressor(n_estimators=12, subsample=0.7).fit(X, y).predict(X))
    with pytest.raises(ValueError, match="absent_as_missing"):
        m.set_params(n_estimators=14, absent_as_missing=True).fit(X, y)


def test_sklearn_tools_with_sparse(rng):
    X = _sparse(rng, 600, 8, 0.4)
    y = (X[:, :2].toarray().sum(axis=1) > 0).astype(int)
    gs = GridSearchCV(GBTClassifier(n_estimators=5), {"max_depth": [2, 3]}, cv=3).fit(X, y)
    assert gs.best_estimator_.predict(X).shape == (600,)
    m = pickle.loads(pickle.dumps(gs.best_estimator_))
    np.testing.assert_array_equal(m.predict_proba(X), gs.best_estimator_.predict_proba(X))
    cats = rng.randint(0, 40, size=(600, 3))
    yc = (cats[:, 0] % 4 == 0).astype(int)
    pipe = make_pipeline(OneHotEncoder(), GBTClassifier(n_estimators=30)).fit(cats, yc)
    assert pipe.score(cats, yc) == 1.0      # one-hot columns arrive sparse


def test_bad_sparse_input_is_a_clear_error(rng):
    X = _sparse(rng, 100, 5, 0.5)
    y = rng.normal(size=100)
    m = GBTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="5 features"):
        m.predict(X[:, :4])
    with pytest.raises(ValueError):
        GBTRegressor().fit(sp.csr_matrix((0, 5)), np.empty(0))
    with pytest.raises(TypeError, match="absent_as_missing"):
        GBTRegressor(absent_as_missing="yes").fit(X, y)


def _malformed():
    """(description, matrix) pairs whose index arrays do not fit their shape (3 x 2)."""
    def csr(indices, indptr, data=np.ones(3)):
        X = sp.csr_matrix(np.eye(3, 2))
        X.data, X.indices, X.indptr = data, np.asarray(indices, np.int32), np.asarray(indptr, np.int32)
        return X
    csc = sp.csc_matrix(np.eye(3, 2))
    csc.indices = np.array([0, 7], dtype=np.int32)
    coo = sp.coo_matrix(np.eye(3, 2))
    coo.col = np.array([0, 5], dtype=coo.col.dtype)
    return [
        ("column index", "a column index is outside 0..1", csr([0, 5, 1], [0, 1, 2, 3])),
        ("negative index", "a column index is outside 0..1", csr([0, -1, 1], [0, 1, 2, 3])),
        ("indptr decreases", "indptr decreases", csr([0, 1, 1], [0, 2, 1, 3])),
        ("indptr past the entries", "beyond the 3 stored entries", csr([0, 1, 1], [0, 1, 2, 9])),
        ("indptr too short", "indptr has 3 entries for 3 rows", csr([0, 1, 1], [0, 1, 3])),
        ("indptr not from 0", "indptr starts at 1", csr([0, 1, 1], [1, 1, 2, 3])),
        ("csc row index", "CSC sparse matrix: a row index is outside 0..2", csc),
        ("coo column", "COO sparse matrix: a row or column index", coo),
    ]


@pytest.mark.parametrize("case", range(8))
def test_malformed_sparse_input_is_an_error_not_a_crash(case):
    # scipy's conversions and the kernels trust the index arrays: a column index out
    # of range crashed fit (a segfault, or glibc's "double free") before this check
    what, message, X = _malformed()[case]
    before = [a.copy() for a in (X.data, *(
        (X.indices, X.indptr) if X.format != "coo" else (X.row, X.col)))]
    y = np.arange(3.0)
    fitted = GBTRegressor(n_estimators=2).fit(np.eye(3, 2), y)
    calls = [
        lambda: GBTRegressor(n_estimators=2).fit(X, y),
        lambda: GBTClassifier(n_estimators=2).fit(X, [0, 1, 0]),
        lambda: GBTRanker(n_estimators=2).fit(X, [0, 1, 2], group=[3]),
        lambda: GBTRegressor(n_estimators=2).fit(np.eye(3, 2), y, eval_set=[(X, y)]),
        lambda: fitted.predict(X),
        lambda: fitted.apply(X),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=f"X is a malformed .*{message}"):
            call()
    after = [X.data, *((X.indices, X.indptr) if X.format != "coo" else (X.row, X.col))]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def _malformed_other_formats():
    bsr = sp.bsr_matrix(np.eye(3, 2))
    bsr.indices = np.array([0, 5, 1], dtype=bsr.indices.dtype)   # block column 5 of 2
    lil = sp.lil_matrix((3, 2))
    lil[0, 0] = 1.0
    lil.rows[1], lil.data[1] = [9], [2.0]                        # column 9 of 2
    return {"bsr": bsr, "lil": lil}


@pytest.mark.parametrize("fmt", ["bsr", "lil"])
def test_malformed_bsr_and_lil_input_is_an_error_not_a_crash(fmt):
    # scikit-learn converts them to CSR, and scipy's conversion keeps the bad
    # column index: fit segfaulted (exit 139) before the converted matrix was checked
    X = _malformed_other_formats()[fmt]
    y = np.arange(3.0)
    fitted = GBTRegressor(n_estimators=2).fit(np.eye(3, 2), y)
    message = rf"^X \(converted from {fmt.upper()}\) is a malformed CSR sparse matrix: "
    with pytest.raises(ValueError, match=message):
        GBTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=message):
        fitted.predict(X)


def test_one_dimensional_sparse_arrays_get_scikit_learns_message():
    X = sp.csr_array(np.ones(5)) if hasattr(sp, "csr_array") else None
    if X is None or X.ndim != 1:
        pytest.skip("this SciPy makes no 1-D sparse arrays")
    with pytest.raises(ValueError, match="Expected 2D"):
        GBTRegressor(n_estimators=2).fit(X, np.arange(5.0))


def test_wide_sparse_fit_never_densifies(rng):
    # 4000 x 50,000 would be 1.6 GB dense; NumPy allocations stay far below that
    X = sp.random(4000, 50_000, density=2e-4, format="csr", random_state=0,
                  data_rvs=rng.standard_normal)
    y = (X[:, :200].sum(axis=1).A.ravel() > 0).astype(int)
    tracemalloc.start()
    try:
        m = GBTClassifier(n_estimators=3, max_depth=3).fit(X, y)
        m.predict_proba(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2 ** 20, peak


def test_a_csr_matrix_of_strided_arrays_is_accepted():
    # a valid CSR whose data is a column of a 2-D array: "ndarray is not C-contiguous"
    rng = np.random.RandomState(0)
    A = rng.normal(size=(60, 2))
    indptr = np.arange(0, 61, 2)
    S = sp.csr_matrix((A[:, 0], np.tile([0, 1], 30), indptr), shape=(30, 2))
    assert not S.data.flags.c_contiguous
    y = rng.normal(size=30)
    dense = GBTRegressor(n_estimators=3).fit(S.toarray(), y)
    sparse = GBTRegressor(n_estimators=3).fit(S, y)
    np.testing.assert_array_equal(sparse.predict(S), dense.predict(S.toarray()))
