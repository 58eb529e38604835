"""The level-wise trainer's own pieces (``gbtree.distributed.levelwise`` and its modules)
against their NumPy twins; the fits that use them are tested in test_external.py and test_dask.py."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gbtree.kernels._leaf_rows import leaf_sums
from gbtree.distributed.leaf_quantiles import select_quantiles
from gbtree.boosting.objectives import grouped_weighted_quantile


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 400), n_groups=st.integers(1, 6),
       alpha=st.floats(0.01, 0.99), kind=st.sampled_from(["normal", "ties", "wide", "signs"]),
       weights=st.sampled_from(["none", "uniform", "zeros"]))
def test_the_selection_is_the_grouped_weighted_quantile(seed, n, n_groups, alpha, kind,
                                                        weights):
    # ties, values spread over many binades, +-0 and negative values, rows of weight 0
    # and groups without weight (NaN)
    rng = np.random.default_rng(seed)
    values = {"normal": lambda: rng.normal(size=n),
              "ties": lambda: rng.integers(-3, 4, size=n).astype(np.float64),
              "wide": lambda: rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n),
              "signs": lambda: rng.choice([-0.0, 0.0, -1e-310, 1e-310, -2.5, 7.0], size=n)}[kind]()
    groups = rng.integers(0, n_groups, size=n)
    w = {"none": None, "uniform": rng.uniform(0.1, 5.0, size=n),
         "zeros": rng.choice([0.0, 1.0, 2.5], size=n)}[weights]
    got = select_quantiles(values, w, groups, n_groups, alpha, lambda a: a)   # (one shard)
    want = grouped_weighted_quantile(values, w, groups, n_groups, alpha)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(0, 9000), m=st.integers(1, 9),
       n_threads=st.sampled_from([1, 2, 3]))
def test_leaf_sums_match_their_numpy_twin(seed, n, m, n_threads):
    # each range of a partition's rows summed in order (the exact sums of a leaf)
    rng = np.random.default_rng(seed)
    pairs = rng.normal(size=(n + 5, 2)).astype(np.float32)
    rows = rng.permutation(n + 5)[:n].astype(np.uint32)
    cuts = np.sort(rng.integers(0, n + 1, size=m - 1))
    bounds = np.ascontiguousarray(np.stack([np.r_[0, cuts], np.r_[cuts, n]], 1), dtype=np.int64)
    out = np.full((m, 2), 7.0)
    leaf_sums(rows, bounds, pairs, out, n_threads)
    for i, (a, b) in enumerate(bounds):
        want = np.zeros(2)
        for r in rows[a:b]:   # (in order, in float64)
            want += pairs[r]
        np.testing.assert_array_equal(out[i], want)
