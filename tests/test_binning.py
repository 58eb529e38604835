import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import _reference as ref
from gbtree.data.binning import BinMapper


@settings(max_examples=50, deadline=None)
@given(
    X=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=60),
                 elements=st.one_of(st.floats(-1e6, 1e6), st.just(np.nan), st.just(np.inf),
                                    st.just(-np.inf), st.integers(-3, 3).map(float))),
    max_bin=st.integers(2, 256),
    n_threads=st.sampled_from([1, 2]),
)
def test_map_to_bins_matches_reference(X, max_bin, n_threads):
    mapper = BinMapper(max_bin=max_bin).fit(X)
    got = mapper.transform(X, n_threads)
    expected = ref.map_to_bins(X, mapper.cuts_, mapper.cut_ptr_)
    np.testing.assert_array_equal(got, expected)
    assert (mapper.n_bins_ <= max_bin - 1).all()
    # the missing bin is n_bins_ and only NaN goes there
    np.testing.assert_array_equal(got == mapper.n_bins_[None, :], np.isnan(X))


@pytest.mark.parametrize("n_threads", [2, 3])
def test_map_to_bins_of_many_row_blocks_on_threads(rng, n_threads):
    # more rows than one thread's share of blocks: the threads take blocks as they go
    X = rng.normal(size=(40_000, 3)).astype(np.float32)
    X[rng.rand(*X.shape) < 0.05] = np.nan
    mapper = BinMapper(max_bin=64).fit(X)
    got = mapper.transform(X, n_threads)
    np.testing.assert_array_equal(got, ref.map_to_bins(X, mapper.cuts_, mapper.cut_ptr_))
    np.testing.assert_array_equal(got, mapper.transform(X, 1))


def test_float32_and_fortran_input_bin_like_float64(rng):
    X = rng.normal(size=(500, 7))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    mapper = BinMapper(max_bin=32).fit(X)
    expected = mapper.transform(X)
    np.testing.assert_array_equal(mapper.transform(np.asfortranarray(X), 2), expected)
    X32 = X.astype(np.float32)
    m32 = BinMapper(max_bin=32).fit(X32)
    np.testing.assert_array_equal(m32.transform(X32), ref.map_to_bins(X32, m32.cuts_, m32.cut_ptr_))


def test_float32_columns_get_the_edges_of_their_float64_values(rng):
    # float32 columns are sorted in float32 (faster): the edges must be those
    # of the same values in float64, on the quantile path (many distinct
    # values, with zeros and infinities) and on the one-bin-per-value path
    X = rng.normal(size=(3000, 4)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 3)                  # few distinct values
    X[rng.rand(3000) < 0.3, 2] = 0.0                  # a zero bin
    X[:5, 3] = [np.inf, -np.inf, np.nan, 1e30, -1e30]
    for w in (None, rng.uniform(0.0, 2.0, size=3000)):
        m32 = BinMapper(max_bin=64).fit(X, w)
        m64 = BinMapper(max_bin=64).fit(X.astype(np.float64), w)
        np.testing.assert_array_equal(m32.cut_ptr_, m64.cut_ptr_)
        np.testing.assert_array_equal(m32.cuts_, m64.cuts_)
        assert m32.cuts_.dtype == np.float64


def test_few_distinct_values_get_one_bin_each():
    X = np.array([[0.0], [1.0], [1.0], [5.0], [np.nan]])
    mapper = BinMapper(max_bin=256).fit(X)
    np.testing.assert_allclose(mapper.cuts_, [0.5, 3.0])
    np.testing.assert_array_equal(mapper.transform(X)[:, 0], [0, 1, 1, 2, 3])


def test_constant_and_all_missing_features_have_one_value_bin():
    X = np.array([[1.0, np.nan], [1.0, np.nan], [1.0, np.nan]])
    mapper = BinMapper().fit(X)
    np.testing.assert_array_equal(mapper.n_bins_, [1, 1])
    np.testing.assert_array_equal(mapper.transform(X), [[0, 1]] * 3)


def test_quantile_bins_hold_equal_weight(rng):
    x = rng.exponential(size=(100_000, 1))
    mapper = BinMapper(max_bin=11).fit(x)
    counts = np.bincount(mapper.transform(x)[:, 0])
    assert counts.size == 10
    np.testing.assert_allclose(counts / x.shape[0], 0.1, atol=0.002)


def test_sample_weight_moves_the_quantiles(rng):
    x = rng.uniform(size=(50_000, 1))
    w = np.where(x[:, 0] < 0.5, 9.0, 1.0)   # 90% of the weight below 0.5
    mapper = BinMapper(max_bin=11).fit(x, w)
    cuts = mapper.cuts_
    assert cuts.size == 9 and (cuts < 0.45).sum() == 8
    assert (BinMapper(max_bin=11).fit(x).cuts_ < 0.45).sum() == 4   # unweighted
    weight_per_bin = np.bincount(mapper.transform(x)[:, 0], weights=w)
    np.testing.assert_allclose(weight_per_bin / w.sum(), 0.1, atol=0.01)


def test_zero_weight_rows_do_not_shape_the_bins():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    w = np.array([1.0, 0.0, 1.0, 1.0])
    mapper = BinMapper().fit(x, w)
    expected = BinMapper().fit(x[w > 0]).cuts_
    np.testing.assert_array_equal(mapper.cuts_, expected)


def test_infinities_fall_in_the_outer_bins():
    x = np.array([[-np.inf], [0.0], [1.0], [2.0], [np.inf]])
    mapper = BinMapper().fit(x)
    b = mapper.transform(x)[:, 0]
    assert b[0] == 0 and b[-1] == mapper.n_bins_[0] - 1
    assert np.isfinite(mapper.cuts_).all()


def test_values_of_both_signs_near_the_float_limits_get_bins_of_their_own():
    # the edge between -1.7e308 and 1.7e308 is 0, not inf (hi - lo overflows): with
    # an inf edge both values fell into bin 0
    big = np.finfo(np.float64).max / 1.05
    x = np.array([[-big], [big], [-big], [big]])
    mapper = BinMapper().fit(x)
    np.testing.assert_array_equal(mapper.cuts_, [0.0])
    np.testing.assert_array_equal(mapper.transform(x)[:, 0], [0, 1, 0, 1])
    # quantile edges (more values than bins) between the extremes, from the
    # sorted-column kernel, the sparse-column one and the NumPy reference alike
    column = np.concatenate([-big * (1 - np.arange(40) / 1000), big * (1 - np.arange(40) / 1000)])
    for max_value_bins in (255, 9, 2):
        _check_column_edges([column], max_value_bins, 1)
    mapper = BinMapper(max_bin=3).fit(column[:, None])
    np.testing.assert_array_equal(mapper.cuts_, [0.0])
    from scipy import sparse
    stored = sparse.csr_matrix(np.array([[-big], [big], [-big]]))   # no implicit zeros
    np.testing.assert_array_equal(BinMapper().fit(stored).cuts_, [0.0])


def test_subsample_is_seeded(rng):
    X = rng.normal(size=(3000, 3))
    a = BinMapper(max_bin=64, subsample=1000, random_state=1).fit(X).cuts_
    b = BinMapper(max_bin=64, subsample=1000, random_state=1).fit(X).cuts_
    c = BinMapper(max_bin=64, subsample=1000, random_state=2).fit(X).cuts_
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_bin_thresholds_translate_bins_to_raw_values(rng):
    X = rng.normal(size=(1000, 3))
    mapper = BinMapper(max_bin=16).fit(X)
    thr = mapper.bin_thresholds()
    Xb = mapper.transform(X)
    for f in range(3):
        for b in range(mapper.n_bins_[f]):
            t = thr[mapper.bin_offsets_[f] + b]
            np.testing.assert_array_equal(Xb[:, f] <= b, X[:, f] <= t)
        assert np.isnan(thr[mapper.bin_offsets_[f + 1] - 1])



def test_zero_keeps_its_own_bin_and_other_values_keep_their_bins(rng):
    # 99% zeros (a sparse feature): plain weighted quantiles would put almost every
    # edge at 0 and leave the other values one or two bins
    x = np.zeros(100_000)
    x[:600] = rng.uniform(0.1, 5.0, size=600)
    x[600:1000] = -rng.uniform(0.1, 5.0, size=400)
    m = BinMapper(max_bin=256).fit(x[:, None])
    cuts = m.cuts_
    assert m.n_bins_[0] == 255                     # every value bin used
    below, above = cuts[cuts < 0], cuts[cuts > 0]
    assert below.max() > x[x < 0].max() and above.min() < x[x > 0].min()   # 0 alone
    assert abs(below.size / above.size - 400 / 600) < 0.05    # bins in proportion to weight
    b = m.transform(x[:, None])[:, 0]
    assert np.unique(b[x == 0]).size == 1 and not np.isin(b[x != 0], b[x == 0]).any()


_RADIX_VALUES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.floats(-float(np.float32(1e-39)), float(np.float32(1e-39)), width=32),  # subnormals, ±0
    st.sampled_from([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf]),
)



def _float_matrices(min_side, max_side):
    """float32 / float64 matrices of _RADIX_VALUES (NaN, ±inf, ±0, subnormals)."""
    return hnp.arrays(st.sampled_from([np.float32, np.float64]),
                      hnp.array_shapes(min_dims=2, max_dims=2, min_side=min_side,
                                       max_side=max_side),
                      elements=_RADIX_VALUES)


@settings(max_examples=60, deadline=None)
@given(X=_float_matrices(1, 60), n_threads=st.sampled_from([1, 2, 3]), data=st.data())
def test_sorted_finite_columns_match_reference(X, n_threads, data):
    # the radix sort of the sketch against np.sort of each column's finite values;
    # any range of columns, C or Fortran order, more threads than columns
    _check_sorted_columns(X, n_threads, data)


def _check_sorted_columns(X, n_threads, data=None):
    from gbtree.data._binning import sorted_finite_columns
    lo, hi = 0, X.shape[1]
    if data is not None:
        if data.draw(st.booleans()):
            X = np.asfortranarray(X)
        lo = data.draw(st.integers(0, X.shape[1] - 1))
        hi = data.draw(st.integers(lo + 1, X.shape[1]))
    n = X.shape[0]
    out = np.full((hi - lo, n), 7.0, dtype=X.dtype)
    lengths = np.empty(hi - lo, dtype=np.int64)
    scratch = np.empty((n_threads, 2, n), dtype=np.uint64)
    counts = np.empty((n_threads, 6 * 2048), dtype=np.intp)
    sorted_finite_columns(X, lo, hi, out, lengths, scratch, counts, n_threads)
    for k in range(hi - lo):
        expected = ref.sorted_finite_column(X[:, lo + k])
        got = out[k, :lengths[k]]
        np.testing.assert_array_equal(got, expected)
        zeros = np.signbit(got[got == 0])
        assert not (np.diff(zeros.astype(int)) > 0).any()   # -0.0 before 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sorted_finite_columns_large(rng, dtype):
    # enough rows for every radix digit to matter: magnitudes over the whole
    # range, heavy duplicates, specials, a constant and an all-NaN column
    n = 200_000
    X = (rng.normal(size=(n, 6)) * 10.0 ** rng.randint(-300 if dtype == np.float64 else -35,
                                                        300 if dtype == np.float64 else 35,
                                                        size=(n, 6))).astype(dtype)
    X[:, 1] = np.round(X[:, 1] * 0 + rng.normal(size=n) * 3)
    X[rng.rand(n, 6) < 0.05] = np.nan
    X[rng.rand(n, 6) < 0.01] = np.inf
    X[rng.rand(n, 6) < 0.01] = -np.inf
    X[rng.rand(n, 6) < 0.01] = -0.0
    X[rng.rand(n, 6) < 0.01] = 0.0
    X[:, 4] = 2.5
    X[:, 5] = np.nan
    _check_sorted_columns(X, 2)


@settings(max_examples=30, deadline=None)
@given(
    X=hnp.arrays(st.sampled_from([np.float32, np.float64]),
                 hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=60),
                 elements=st.one_of(st.floats(-1e6, 1e6, width=32), st.just(np.nan),
                                    st.integers(-3, 3).map(float))),
    max_bin=st.integers(2, 256),
    n_threads=st.sampled_from([1, 2]),
)
def test_sorted_cuts_equal_the_per_column_sort(X, max_bin, n_threads):
    # the edges from the radix-sorted batches are those of np.sort column by column
    from gbtree.data.binning import _weighted_cuts
    got = BinMapper._sorted_cuts(X, max_bin - 1, n_threads)
    for f in range(X.shape[1]):
        col = X[:, f]
        np.testing.assert_array_equal(got[f], _weighted_cuts(col[np.isfinite(col)], None,
                                                             max_bin - 1))


def _check_column_edges(columns, max_value_bins, n_threads):
    """sorted_column_edges of the sorted columns against _weighted_cuts, bit for bit."""
    from gbtree.data._binning import sorted_column_edges
    from gbtree.data.binning import _weighted_cuts
    n = max([c.size for c in columns] + [1])
    values = np.zeros((len(columns), n), dtype=columns[0].dtype)
    lengths = np.array([c.size for c in columns], dtype=np.int64)
    for k, c in enumerate(columns):
        values[k, :c.size] = np.sort(c)
    edges = np.full((len(columns), max(max_value_bins - 1, 1)), 7.0)
    n_edges = np.empty(len(columns), dtype=np.int64)
    sorted_column_edges(values, lengths, max_value_bins, edges, n_edges,
                        np.empty((n_threads, 2, n)), n_threads)
    for k, c in enumerate(columns):
        expected = _weighted_cuts(values[k, :c.size], None, max_value_bins, presorted=True)
        got = edges[k, :n_edges[k]]
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))


@settings(max_examples=80, deadline=None)
@given(
    columns=st.lists(hnp.arrays(st.just(np.float64), st.integers(0, 300),
                                elements=st.one_of(st.integers(-6, 9).map(float),
                                                   st.sampled_from([-0.0, 0.5, -1e-310, 1e30]),
                                                   st.floats(-1e3, 1e3))),
                     min_size=1, max_size=5),
    max_value_bins=st.integers(1, 40),
    float32=st.booleans(),
    non_positive=st.booleans(),
    n_threads=st.sampled_from([1, 2, 3]),
)
def test_sorted_column_edges_match_weighted_cuts(columns, max_value_bins, float32, non_positive,
                                                 n_threads):
    # few or many distinct values, duplicates, 0 with and without -0.0, values on one
    # side of 0 only (all of them, half the time, at most 0: the zero bin is the last
    # value), subnormals: midpoints, quantiles and the zero bin's split
    if non_positive:
        columns = [-np.abs(c) for c in columns]
    if float32:
        columns = [c.astype(np.float32) for c in columns]
    _check_column_edges(columns, max_value_bins, n_threads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_value_bins", [255, 63, 3, 2])
def test_sorted_column_edges_of_large_columns(rng, max_value_bins, dtype):
    n = 200_000
    normal = rng.normal(size=n)
    zero_heavy = np.where(rng.rand(n) < 0.4, 0.0, rng.exponential(size=n) - 0.3)
    zero_heavy[rng.rand(n) < 0.1] = -0.0
    columns = [normal, zero_heavy, np.round(normal, 1), np.abs(np.round(normal, 2)),
               -np.abs(normal), -np.abs(np.round(normal, 2)), np.round(normal * 100),
               np.full(n, 3.0), normal[:0]]
    _check_column_edges([c.astype(dtype) for c in columns], max_value_bins, 2)


@pytest.mark.parametrize("max_value_bins", [2, 3, 4])
def test_sorted_column_edges_with_zero_and_few_bins(max_value_bins):
    # the zero bin needs 3 bins at least; all values at most 0 give every bin but
    # the last to the negative ones
    columns = [np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), np.array([-5.0, -4, -3, -2, -1, 0, 0]),
               np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([-3.0, 0.0, 0.0, 2.0])]
    _check_column_edges(columns, max_value_bins, 1)
    expected = {2: [-1.5], 3: [-2.5, -0.5], 4: [-3.5, -1.5, -0.5]}[max_value_bins]
    from gbtree.data.binning import _weighted_cuts
    np.testing.assert_array_equal(_weighted_cuts(columns[1], None, max_value_bins), expected)


def test_sorted_column_edges_reject_bad_shapes():
    from gbtree.data._binning import sorted_column_edges
    values = np.zeros((2, 5))
    ok = dict(lengths=np.array([5, 5]), edges=np.empty((2, 9)), n_edges=np.empty(2, np.int64),
              scratch=np.empty((1, 2, 5)))

    def call(**kw):
        a = {**ok, **kw}
        sorted_column_edges(values, a["lengths"], 10, a["edges"], a["n_edges"], a["scratch"], 1)

    call()
    with pytest.raises(ValueError, match="edges has 8 columns"):
        call(edges=np.empty((2, 8)))
    with pytest.raises(ValueError, match="lengths"):
        call(lengths=np.array([5, 6]))
    with pytest.raises(ValueError, match="scratch"):
        call(scratch=np.empty((0, 2, 5)))


@settings(max_examples=40, deadline=None)
@given(X=_float_matrices(0, 40), n_threads=st.sampled_from([1, 2, 3]), data=st.data())
def test_take_rows_matches_fancy_indexing(X, n_threads, data):
    from gbtree.data._binning import take_rows
    rows = np.asarray(data.draw(st.lists(st.integers(0, X.shape[0] - 1), max_size=60))
                      if X.shape[0] > 0 else [], dtype=np.int64)
    out = np.full((rows.size, X.shape[1]), 7, dtype=X.dtype)
    take_rows(X, rows, out, n_threads)
    np.testing.assert_array_equal(out.view(np.uint8), X[rows].view(np.uint8))   # bit for bit


def test_take_rows_rejects_bad_rows_and_shapes():
    from gbtree.data._binning import take_rows
    X = np.arange(12, dtype=np.float64).reshape(4, 3)
    out = np.empty((2, 3))
    for bad in ([0, 4], [-1, 0]):
        with pytest.raises(IndexError, match="out of range"):
            take_rows(X, np.array(bad, dtype=np.int64), out, 2)
    with pytest.raises(ValueError, match="shape"):
        take_rows(X, np.array([0, 1, 2], dtype=np.int64), out, 2)


@pytest.mark.parametrize("n_rows, size", [(10, 3), (1000, 999), (100_000, 20_000)])
def test_sketch_rows_are_the_sorted_draw(n_rows, size):
    from gbtree.data.binning import sketch_rows
    expected = np.sort(np.random.RandomState(5).choice(n_rows, size, replace=False))
    np.testing.assert_array_equal(sketch_rows(np.random.RandomState(5), n_rows, size), expected)


def test_subsampled_edges_do_not_depend_on_layout_or_threads(rng):
    # the parallel copy of the sketch (C-ordered floats) against numpy's X[rows]
    # (any other layout): the same edges
    X = rng.normal(size=(3000, 5)).astype(np.float32)
    X[rng.rand(*X.shape) < 0.1] = np.nan
    base = BinMapper(max_bin=32, subsample=1000, random_state=4).fit(X, n_threads=1).cuts_
    for Xv, t in ((X, 2), (np.asfortranarray(X), 2), (X.astype(np.float64), 3)):
        got = BinMapper(max_bin=32, subsample=1000, random_state=4).fit(Xv, n_threads=t).cuts_
        np.testing.assert_array_equal(got, base)
