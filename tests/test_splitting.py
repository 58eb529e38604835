import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import _reference as ref
from gbtree.kernels._partition import partition_ranges, split_rows_level
from gbtree.kernels._splitting import py_find_best_split, py_leaf_weight

REGULARISERS = [
    {},
    dict(reg_lambda=0.0),
    dict(reg_lambda=10.0),
    dict(reg_alpha=3.0),
    dict(min_child_weight=20.0),
    dict(max_delta_step=0.1),
    dict(max_delta_step=0.3, reg_alpha=1.0),
    dict(gamma=5.0),
    dict(gamma=1e6),
]


def _hist(rng, n_features, max_bins, missing_rate):
    n_bins = rng.randint(1, max_bins, size=n_features).astype(np.int32)
    offsets = np.zeros(n_features + 1, dtype=np.int32)
    np.cumsum(n_bins + 1, out=offsets[1:])
    # one underlying node: every feature's histogram sums to the same totals
    n_rows = 400
    g = rng.normal(size=n_rows) + 0.3
    h = rng.uniform(0.1, 1.0, size=n_rows)
    hist = np.zeros((offsets[-1], 2))
    for f in range(n_features):
        b = rng.randint(0, n_bins[f], size=n_rows)
        b[rng.rand(n_rows) < missing_rate] = n_bins[f]
        np.add.at(hist, offsets[f] + b, np.column_stack([g, h]))
    return hist, n_bins, offsets, g.sum(), h.sum()


@pytest.mark.parametrize("bounds", [(-np.inf, np.inf), (-0.05, 0.08)])
@pytest.mark.parametrize("missing_rate", [0.0, 0.2])
def test_best_split_under_masks_and_monotone_constraints_matches_reference(bounds,
                                                                          missing_rate):
    for seed in range(20):
        rng = np.random.RandomState(seed)
        hist, n_bins, offsets, G, H = _hist(rng, 5, 20, missing_rate)
        allowed = (rng.rand(5) < 0.7).astype(np.uint8)
        monotone = rng.randint(-1, 2, size=5).astype(np.int8)
        extra = dict(allowed=allowed, monotone=monotone, lower=bounds[0], upper=bounds[1])
        got = py_find_best_split(hist, n_bins, offsets, G, H, **extra)
        expected = ref.find_best_split(hist, n_bins, offsets, G, H, **extra)
        assert got["feature"] == expected["feature"]
        if expected["feature"] >= 0:
            assert allowed[got["feature"]]
            assert got["bin"] == expected["bin"]
            assert got["default_left"] == expected["default_left"]
            np.testing.assert_allclose(got["gain"], expected["gain"], rtol=1e-9)
    with pytest.raises(ValueError, match="do not match"):
        py_find_best_split(hist, n_bins, offsets, G, H, allowed=np.ones(4, dtype=np.uint8))


@pytest.mark.parametrize("reg", REGULARISERS, ids=lambda r: ",".join(map(str, r.items())) or "default")
@pytest.mark.parametrize("missing_rate", [0.0, 0.2])
def test_best_split_matches_reference(reg, missing_rate):
    for seed in range(20):
        rng = np.random.RandomState(seed)
        hist, n_bins, offsets, G, H = _hist(rng, 5, 20, missing_rate)
        got = py_find_best_split(hist, n_bins, offsets, G, H, **reg)
        expected = ref.find_best_split(hist, n_bins, offsets, G, H, **reg)
        assert got["feature"] == expected["feature"]
        if expected["feature"] >= 0:
            assert got["bin"] == expected["bin"]
            assert got["default_left"] == expected["default_left"]
            np.testing.assert_allclose(got["gain"], expected["gain"], rtol=1e-9)
            np.testing.assert_allclose(got["sum_g_left"], expected["sum_g_left"], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("reg", [{}, dict(reg_lambda=0.0), dict(min_child_weight=20.0), dict(gamma=5.0)])
def test_plain_scan_equals_general_scan_bit_for_bit(reg):
    # features without missing rows take the vectorised scan; it must give the
    # very same split, gain and sums as the general one
    for seed in range(30):
        rng = np.random.RandomState(seed)
        hist, n_bins, offsets, G, H = _hist(rng, 8, 255, 0.0)
        fast = py_find_best_split(hist, n_bins, offsets, G, H, **reg)
        slow = py_find_best_split(hist, n_bins, offsets, G, H, plain_scan=False, **reg)
        assert fast == slow


def test_parallel_split_scan_is_identical(rng):
    hist, n_bins, offsets, G, H = _hist(rng, 300, 120, 0.1)   # many entries: parallel path
    assert offsets[-1] > 16384
    a = py_find_best_split(hist, n_bins, offsets, G, H, n_threads=1)
    b = py_find_best_split(hist, n_bins, offsets, G, H, n_threads=2)
    assert a == b
    assert a["feature"] == ref.find_best_split(hist, n_bins, offsets, G, H)["feature"]


def test_missing_values_choose_their_side():
    # one feature, bins 0..2 and missing; missing rows look like bin 2 rows
    n_bins = np.array([3], dtype=np.int32)
    offsets = np.array([0, 4], dtype=np.int32)
    hist = np.array([[-10.0, 10.0], [-10.0, 10.0], [10.0, 10.0], [10.0, 10.0]])
    s = py_find_best_split(hist, n_bins, offsets, 0.0, 40.0, reg_lambda=0.0)
    assert (s["bin"], s["default_left"]) == (1, False)
    hist[3] = [-10.0, 10.0]   # now missing rows look like the low bins
    s = py_find_best_split(hist, n_bins, offsets, -20.0, 40.0, reg_lambda=0.0)
    assert (s["bin"], s["default_left"]) == (1, True)


def test_gamma_and_min_child_weight_block_splits():
    n_bins = np.array([2], dtype=np.int32)
    offsets = np.array([0, 3], dtype=np.int32)
    hist = np.array([[-4.0, 4.0], [4.0, 4.0], [0.0, 0.0]])
    base = py_find_best_split(hist, n_bins, offsets, 0.0, 8.0, reg_lambda=0.0)
    assert base["feature"] == 0
    np.testing.assert_allclose(base["gain"], 16 / 4 + 16 / 4)   # G_L^2/H_L + G_R^2/H_R - 0
    assert py_find_best_split(hist, n_bins, offsets, 0.0, 8.0, reg_lambda=0.0, gamma=8.0)["feature"] == 0
    assert py_find_best_split(hist, n_bins, offsets, 0.0, 8.0, reg_lambda=0.0, gamma=8.01)["feature"] == -1
    assert py_find_best_split(hist, n_bins, offsets, 0.0, 8.0, reg_lambda=0.0,
                              min_child_weight=4.01)["feature"] == -1


@settings(max_examples=200, deadline=None)
@given(G=st.floats(-100, 100), H=st.floats(0, 100), lam=st.floats(0, 10), alpha=st.floats(0, 10),
       mcw=st.floats(0, 5), mds=st.floats(0, 2))
def test_leaf_weight_matches_reference(G, H, lam, alpha, mcw, mds):
    got = py_leaf_weight(G, H, lam, alpha, mcw, mds)
    expected = ref.leaf_weight(G, H, lam, alpha, mcw, mds)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


def test_leaf_weight_is_the_minimiser_of_the_regularised_leaf_loss():
    G, H, lam, alpha = 7.0, 3.0, 1.5, 2.0
    grid = np.linspace(-5, 5, 200001)
    loss = G * grid + 0.5 * (H + lam) * grid ** 2 + alpha * np.abs(grid)
    np.testing.assert_allclose(py_leaf_weight(G, H, lam, alpha, 0.0), grid[np.argmin(loss)], atol=1e-4)


def partition_rows(X, rows, feature, bin, missing_bin, default_left, n_threads, simd=-1):
    """``partition_ranges`` of ``rows`` (in place) by one split of the binned rows X
    (dense, or a ``binning.SparseBinned``), the vector loop capped at ``simd``."""
    columns = np.ascontiguousarray(X.T) if isinstance(X, np.ndarray) else X
    return int(partition_ranges(columns, rows, np.array([[0, len(rows)]]),
                                np.array([feature], dtype=np.intc),
                                np.array([bin], dtype=np.intc),
                                np.array([missing_bin], dtype=np.intc),
                                np.array([default_left], dtype=np.uint8), n_threads, simd)[0])


# the partition's loops on this CPU: the portable one, and the AVX-512 one where it runs
SPLIT_LEVELS = [0] + ([2] if split_rows_level() == 2 else [])


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 200_000), default_left=st.booleans(),
       n_threads=st.sampled_from([1, 2, 3, 4]),     # 4: more chunks than this machine's cores
       n_bins=st.integers(1, 255))
@example(seed=1, n=5000, default_left=True, n_threads=1, n_bins=255)   # the last bin missing
@example(seed=2, n=5000, default_left=False, n_threads=2, n_bins=255)
@example(seed=3, n=50_001, default_left=True, n_threads=3, n_bins=7)   # uneven last chunk
@pytest.mark.parametrize("simd", SPLIT_LEVELS)
def test_partition_matches_reference(simd, seed, n, default_left, n_threads, n_bins):
    rng = np.random.RandomState(seed)
    bin = rng.randint(0, n_bins)
    X = rng.randint(0, n_bins + 1, size=(n, 2)).astype(np.uint8)   # bin n_bins is missing
    rows = np.sort(rng.choice(n, size=rng.randint(1, n + 1), replace=False)).astype(np.uint32)
    expected, n_left_ref = ref.partition(X, rows, 1, bin, n_bins, default_left)
    n_left = partition_rows(X, rows, 1, bin, n_bins, default_left, n_threads, simd)
    assert n_left == n_left_ref
    np.testing.assert_array_equal(rows, expected)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30_000), m=st.integers(0, 12),
       n_threads=st.sampled_from([1, 2, 3]))
@example(seed=4, n=20_000, m=1, n_threads=2)   # one range split by every thread
@example(seed=5, n=20_000, m=9, n_threads=2)   # ranges shared out, one thread each
@pytest.mark.parametrize("layout, simd", [("dense", level) for level in SPLIT_LEVELS]
                         + [("sparse", -1), ("sparse without column copies", -1)])
def test_partition_ranges_matches_reference(layout, simd, seed, n, m, n_threads):
    # a level of a depthwise tree: each range of the rows split by its own feature, bin
    # and missing direction, in one call; the bins dense (by columns) or a SparseBinned
    # (its features of many entries copied densely, the others column-wise, or found in
    # each row's entries); dense rows in any order (rows 0-2, which the AVX-512 loop
    # cannot gather, in any of its steps)
    from gbtree.kernels._partition import partition_ranges
    rng = np.random.RandomState(seed)
    n_features = 5
    n_bins = rng.randint(1, 40, size=n_features)
    X = np.stack([rng.randint(0, b + 1, size=n) for b in n_bins], 1).astype(np.uint8)
    columns = np.ascontiguousarray(X.T)
    if layout != "dense":
        default = np.array([rng.randint(0, b + 1) for b in n_bins], dtype=np.uint8)
        absent = rng.rand(n, n_features) < rng.choice([0.3, 0.95, 0.999], size=n_features)
        X[absent] = np.broadcast_to(default, X.shape)[absent]
        columns = _sparse_binned(X, n_bins, default, layout == "sparse")
    rows = rng.permutation(n)[:rng.randint(0, n + 1)].astype(np.uint32)
    if layout != "dense":   # (the sparse partition walks a node's rows in increasing order)
        rows.sort()
    edges = np.sort(rng.randint(0, rows.shape[0] + 1, size=max(m - 1, 0)))
    bounds = np.ascontiguousarray(np.stack([np.r_[0, edges], np.r_[edges, rows.shape[0]]], 1)
                                  if m else np.zeros((0, 2)), dtype=np.int64)
    features = rng.randint(0, n_features, size=m).astype(np.intc)
    bins = np.array([rng.randint(0, n_bins[f]) for f in features], dtype=np.intc)
    missing = n_bins[features].astype(np.intc)
    default_left = rng.randint(0, 2, size=m).astype(np.uint8)
    mine = rows.copy()
    n_left = partition_ranges(columns, mine, bounds, features, bins, missing, default_left,
                              n_threads, simd)
    assert n_left.shape == (m,)
    for i, (lo, hi) in enumerate(bounds):
        order, want_left = ref.partition(X, rows[lo:hi], features[i], bins[i], missing[i],
                                         bool(default_left[i]))
        assert n_left[i] == want_left
        np.testing.assert_array_equal(mine[lo:hi], order)


def _sparse_binned(X, n_bins, default, column_copies):
    """X's bins (uint8) as a ``SparseBinned`` whose absent entries are ``default``."""
    from gbtree.data.binning import SparseBinned
    offsets = np.r_[0, np.cumsum(n_bins + 1)].astype(np.int32)
    stored = X != default[None, :]
    r, f = np.nonzero(stored)
    indptr = np.r_[0, np.cumsum(stored.sum(axis=1))].astype(np.int64)
    entries = (offsets[f] + X[r, f]).astype(np.uint16)
    none = dict(columns=(None, None, None, np.full(X.shape[1], -1, dtype=np.int32),
                         np.empty((0, X.shape[0]), dtype=np.uint8)))
    return SparseBinned(indptr, entries, default_bin=default, shape=X.shape,
                        bin_offsets=offsets, **({} if column_copies else none))


def test_partition_ranges_refuses_what_is_not_a_range_or_a_column():
    from gbtree.kernels._partition import partition_ranges
    columns = np.zeros((2, 10), dtype=np.uint8)
    rows = np.arange(10, dtype=np.uint32)
    one = (np.array([0], dtype=np.intc), np.array([0], dtype=np.intc),
           np.array([1], dtype=np.intc), np.array([1], dtype=np.uint8))
    with pytest.raises(ValueError, match="is not a range of rows"):
        partition_ranges(columns, rows, np.array([[3, 11]], dtype=np.int64), *one)
    with pytest.raises(ValueError, match="is not a column"):
        partition_ranges(columns, rows, np.array([[0, 5]], dtype=np.int64),
                         np.array([2], dtype=np.intc), *one[1:])
    with pytest.raises(ValueError, match="one entry per range"):
        partition_ranges(columns, rows, np.array([[0, 5], [5, 10]], dtype=np.int64), *one)


@pytest.mark.parametrize("n", [4096, 4097, 70_001])
@pytest.mark.parametrize("side", ["all left", "all right", "first half left", "last half left",
                                  "mixed"])
@pytest.mark.parametrize("simd", SPLIT_LEVELS)
def test_two_thread_partition_at_its_extremes(n, side, simd):
    # two threads split the rows in two halves, the second one read backwards: every
    # way the left rows can fall across the halves gives the reference's order
    rng = np.random.RandomState(n)
    X = np.zeros((n, 2), dtype=np.uint8)
    rows = np.arange(n, dtype=np.uint32)
    if side == "all right":
        X[:, 1] = 2
    elif side == "first half left":
        X[n // 2:, 1] = 2
    elif side == "last half left":
        X[:n // 2, 1] = 2
    elif side == "mixed":
        X[:, 1] = rng.randint(0, 4, size=n)   # 3 is the missing bin, sent right
    expected, n_left_ref = ref.partition(X, rows, 1, 1, 3, False)
    n_left = partition_rows(X, rows, 1, 1, 3, False, 2, simd)
    assert n_left == n_left_ref
    np.testing.assert_array_equal(rows, expected)
