"""The level-wise trainer's own pieces (``gbtree.levelwise``) against their NumPy
twins; the fits that use them are tested in test_external.py and test_dask.py."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gbtree.levelwise import RowShard
from gbtree.objectives import grouped_weighted_quantile


def _alone():
    """A shard with no peers and no features: it sums only its own arrays."""
    shard = RowShard()
    shard.n_bins = np.zeros(0, dtype=np.intc)
    shard.bin_offsets = np.zeros(1, dtype=np.intc)
    shard.connect(None, 0, [(0, 0)], None)
    return shard


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
    got = _alone()._select(values, w, groups, n_groups, alpha)
    want = grouped_weighted_quantile(values, w, groups, n_groups, alpha)
    np.testing.assert_array_equal(got, want)
