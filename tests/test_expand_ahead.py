"""Expanding small nodes ahead, one per thread (``_expand_ahead``), must grow the
tree that one split at a time grows: same nodes, same raw updates, and the
same row order inside every leaf (also where an expansion made ahead is undone
because the leaf budget ran out first)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from gbtree.growing._expand_ahead import TreeGrower
from gbtree.growing.grower_params import GrowerParams
from gbtree.kernels._openmp_helpers import openmp_enabled
from gbtree.data.binning import BinMapper


def _data(rng, n=20_000, p=6, max_bin=64):
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) < 0.05] = np.nan
    Z = np.nan_to_num(X[:, np.arange(4) % p])
    y = Z[:, 0] * 2 + np.sin(Z[:, 1] * 3) + Z[:, 2] * Z[:, 3] + rng.normal(scale=0.3, size=n)
    mapper = BinMapper(max_bin).fit(X)
    return mapper, mapper.transform(X), y


def _grow_trees(mapper, Xb, y, ahead, n_threads, n_trees=3, sample=None, **kw):
    """Grow n_trees rounds of weighted squared error; returns every tree, the raw
    scores, each tree's leaf_rows() and the grower."""
    params = dict(max_depth=0, max_leaves=63, lossguide=True, min_child_weight=0.0)
    params.update(kw)
    g = TreeGrower(Xb, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                   GrowerParams(expand_ahead=ahead, **params), n_threads,
                   default_bin=mapper.default_bins())
    raw = np.zeros((y.shape[0], 1))
    # row weights over twelve orders of magnitude: the histogram sums round, so
    # a histogram built from rows differs from one got by subtraction
    w = 10.0 ** np.random.RandomState(1).uniform(-6, 6, size=y.shape[0])
    out = []
    for k in range(n_trees):
        pairs = np.empty((y.shape[0], 2), dtype=np.float32)
        pairs[:, 0] = (raw[:, 0] - y) * w
        pairs[:, 1] = w
        tree = g.grow(pairs[None], 0.3, raw, 0, sample=sample, seed=k)[0]
        out.append((tree, g.leaf_rows()))
    return out, raw, g


def _assert_same(a, b):
    (trees_a, raw_a, _), (trees_b, raw_b, _) = a, b
    assert len(trees_a) == len(trees_b)
    for (ta, (rows_a, sa, ea)), (tb, (rows_b, sb, eb)) in zip(trees_a, trees_b):
        assert ta.tobytes() == tb.tobytes()
        np.testing.assert_array_equal(rows_a, rows_b)   # the order inside each leaf too
        np.testing.assert_array_equal(sa, sb)
        np.testing.assert_array_equal(ea, eb)
    np.testing.assert_array_equal(raw_a, raw_b)


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("kw", [
    dict(),                                               # lossguide, 63 leaves
    dict(lossguide=False, max_depth=7, max_leaves=0),     # depthwise, no leaf budget
    dict(lossguide=False, max_depth=0, max_leaves=50),    # depthwise with a leaf budget
    dict(max_depth=5, max_leaves=40),                     # both limits
    dict(quant_levels=16),                                # quantised: leaves renewed in row order
    dict(max_leaves=255),
])
def test_expanding_ahead_grows_the_tree_of_one_split_at_a_time(rng, n_threads, kw):
    mapper, Xb, y = _data(rng)
    reference = _grow_trees(mapper, Xb, y, False, 1, **kw)
    ahead = _grow_trees(mapper, Xb, y, True, n_threads, **kw)
    _assert_same(reference, ahead)
    assert ahead[2].n_ahead_expanded > 0        # it did expand nodes ahead
    assert reference[2].n_ahead_expanded == 0
    # one thread never expands ahead (it would only reorder the work)
    assert _grow_trees(mapper, Xb, y, True, 1, n_trees=1, **kw)[2].n_ahead_expanded == 0
    _assert_same(_grow_trees(mapper, Xb, y, False, n_threads, **kw), reference)


@pytest.mark.parametrize("options", [dict(ahead_max_rows=2_000), dict(ahead_max_rows=10 ** 9),
                                     dict(ahead_tasks_per_thread=1),
                                     dict(ahead_tasks_per_thread=8, ahead_max_rows=8_000)])
def test_the_expand_ahead_options_change_the_work_not_the_trees(rng, options):
    mapper, Xb, y = _data(rng)
    reference = _grow_trees(mapper, Xb, y, False, 1)
    default = _grow_trees(mapper, Xb, y, True, 2)
    other = _grow_trees(mapper, Xb, y, True, 2, **options)
    _assert_same(reference, other)
    assert other[2].n_ahead_expanded > 0
    assert other[2].ahead_max_rows == options.get("ahead_max_rows", 65536)
    if options.get("ahead_max_rows") == 2_000:
        # nodes of 2,000 to 65,535 rows now take every thread, one at a time
        assert other[2].n_ahead_expanded < default[2].n_ahead_expanded


@pytest.mark.parametrize("bad", [dict(ahead_max_rows=0), dict(ahead_tasks_per_thread=0)])
def test_the_expand_ahead_options_are_checked(rng, bad):
    mapper, Xb, y = _data(rng, n=500)
    with pytest.raises(ValueError, match="ahead_max_rows and ahead_tasks_per_thread"):
        _grow_trees(mapper, Xb, y, True, 2, n_trees=1, **bad)


@pytest.mark.parametrize("n_threads", [3, 4])
def test_expanding_ahead_from_a_shared_queue_gives_the_same_trees_every_time(rng, n_threads):
    # The threads take expansions from a queue that any of them refills and
    # thread 0 commits in order; how the work lands on the threads changes from
    # run to run (more threads than this machine's cores: preempted mid-way).
    # Every run must grow the one-split-at-a-time trees.
    mapper, Xb, y = _data(rng, n=30_000)
    kw = dict(n_trees=2, max_leaves=255)
    reference = _grow_trees(mapper, Xb, y, False, 1, **kw)
    for _ in range(4):
        _assert_same(reference, _grow_trees(mapper, Xb, y, True, n_threads, **kw))


@pytest.mark.skipif(not openmp_enabled(),
                    reason="without OpenMP one thread runs the queue in the order the "
                           "tree needs it: no expansion made ahead is left to undo")
@pytest.mark.parametrize("lifo", [False, True])
def test_expansions_made_ahead_are_undone_exactly(rng, lifo):
    # With a leaf budget, lossguide expands ahead nodes whose turn never comes:
    # they stay leaves, their rows back in increasing order, their buffers freed.
    # How many depends on the threads' timing (on a busy machine the second
    # thread may run none); run last-queued-first, thread 0 alone expands nodes
    # ahead of the node whose turn it is, and some of them are undone.
    mapper, Xb, y = _data(rng, n=30_000)
    reference = _grow_trees(mapper, Xb, y, False, 1, n_trees=6, max_leaves=31)
    ahead = _grow_trees(mapper, Xb, y, True, 2, n_trees=6, max_leaves=31, ahead_lifo=lifo)
    _assert_same(reference, ahead)
    if lifo:
        assert ahead[2].n_ahead_undone > 0
    for tree, (rows, starts, ends) in ahead[0]:
        for k in np.flatnonzero(tree["is_leaf"]):
            assert np.all(np.diff(rows[starts[k]:ends[k]].astype(np.int64)) > 0)


def test_expanding_ahead_on_a_row_sample(rng):
    mapper, Xb, y = _data(rng)
    sample = np.flatnonzero(rng.rand(y.shape[0]) < 0.6).astype(np.uint32)
    _assert_same(_grow_trees(mapper, Xb, y, False, 1, sample=sample),
                 _grow_trees(mapper, Xb, y, True, 2, sample=sample))


@pytest.mark.parametrize("n_histograms", [6, 12, 24])
def test_expanding_ahead_keeps_the_memory_budget_decisions(rng, n_histograms):
    # Past the budget a new open node drops its histogram (its children are then
    # both built, whose float sums differ from a subtraction's in the last bits).
    # Buffers held by nodes expanded ahead count as their parent's one, so the
    # same nodes drop theirs: the same trees.
    mapper, Xb, y = _data(rng)
    budget = n_histograms * int(mapper.bin_offsets_[-1]) * 16
    reference = _grow_trees(mapper, Xb, y, False, 1, max_leaves=127, hist_memory_bytes=budget)
    ahead = _grow_trees(mapper, Xb, y, True, 2, max_leaves=127, hist_memory_bytes=budget)
    _assert_same(reference, ahead)
    assert ahead[2].n_ahead_expanded > 0


def test_expanding_ahead_with_sparse_input(rng):
    n, p = 8000, 12
    X = sp.random(n, p, density=0.4, format="csr", random_state=rng, dtype=np.float64)
    y = X[:, :4].toarray() @ np.array([1.0, -2.0, 0.5, 3.0]) + 0.1 * rng.normal(size=n)
    mapper = BinMapper(64).fit(X)
    Xb = mapper.transform(X)
    assert not isinstance(Xb, np.ndarray)       # the sparse binned matrix
    reference = _grow_trees(mapper, Xb, y, False, 1, n_trees=5)
    ahead = _grow_trees(mapper, Xb, y, True, 2, n_trees=5)
    _assert_same(reference, ahead)
    assert ahead[2].n_ahead_expanded > 0


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("n_histograms", [8, 16, 32])
def test_nodes_expanded_ahead_stay_within_the_histogram_memory_budget(rng, n_threads,
                                                                     n_histograms):
    # Nodes are expanded ahead only while the buffers they may take (two each)
    # fit in the budget; those waiting for their turn keep theirs, so the grower
    # holds at most two buffers per node expanded at once (ahead_tasks_per_thread
    # per thread) beyond what the budget (or one split at a time) allows.
    mapper, Xb, y = _data(rng)
    kw = dict(n_trees=2, max_leaves=127,
              hist_memory_bytes=n_histograms * int(mapper.bin_offsets_[-1]) * 16)
    one = _grow_trees(mapper, Xb, y, False, n_threads, **kw)[2]
    ahead = _grow_trees(mapper, Xb, y, True, n_threads, **kw)[2]
    assert ahead.n_ahead_expanded > 0
    allowed = (max(one.n_histogram_buffers, n_histograms)
               + 2 * ahead.ahead_tasks_per_thread * n_threads)
    assert ahead.n_histogram_buffers <= allowed


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n_rows=st.integers(200, 6000), n_features=st.integers(1, 8),
       lossguide=st.booleans(), max_leaves=st.sampled_from([0, 7, 31, 200]),
       max_depth=st.sampled_from([0, 1, 3, 9]), quant_levels=st.sampled_from([0, 8]),
       n_threads=st.integers(2, 4), n_histograms=st.sampled_from([0, 4, 9]),
       subsample=st.booleans())
def test_random_trees_are_grown_alike_ahead_or_one_split_at_a_time(
        seed, n_rows, n_features, lossguide, max_leaves, max_depth, quant_levels, n_threads,
        n_histograms, subsample):
    if max_leaves == 0 and max_depth == 0:
        max_depth = 6    # some limit (depthwise without one grows every row apart)
    rng = np.random.RandomState(seed)
    mapper, Xb, y = _data(rng, n=n_rows, p=n_features, max_bin=int(rng.choice([3, 16, 64])))
    sample = None
    if subsample:
        sample = np.flatnonzero(rng.rand(n_rows) < 0.7).astype(np.uint32)
        if sample.shape[0] == 0:
            sample = np.array([0], dtype=np.uint32)
    kw = dict(lossguide=lossguide, max_leaves=max_leaves, max_depth=max_depth,
              quant_levels=quant_levels, n_trees=2, sample=sample)
    if n_histograms:
        kw["hist_memory_bytes"] = n_histograms * int(mapper.bin_offsets_[-1]) * 16
    reference = _grow_trees(mapper, Xb, y, False, 1, **kw)
    ahead = _grow_trees(mapper, Xb, y, True, n_threads, **kw)
    _assert_same(reference, ahead)
