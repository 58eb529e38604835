import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gbtree.data.sketch import Sketch, Summary


def true_ranks(values, weights, y):
    """``(r-, r+, w)`` of each y in the weighted data: weight below, up to, and at y."""
    keep = ~np.isnan(values)
    v, w = values[keep], weights[keep]
    below = np.array([w[v < t].sum() for t in y])
    at = np.array([w[v == t].sum() for t in y])
    return below, below + at, at


def rank_gap(summary):
    """The largest ``r+(y) - r-(y) - w(y)`` over all y, as a fraction of the total
    weight: at most the summary's ``eps`` (0 for an exact summary)."""
    if len(summary) == 0 or summary.total == 0:
        return 0.0
    at = summary.rmax - summary.rmin - summary.w
    between = (summary.rmax[1:] - summary.w[1:]) - (summary.rmin[:-1] + summary.w[:-1])
    return float(max(at.max(), between.max(initial=0.0), 0.0)) / summary.total


def weighted_stream(seed, n, kind):
    """Values and weights made to be hard on a sketch: sorted, reversed, few distinct
    values, one weight dominating, weights spanning twelve orders, NaN and zeros."""
    rs = np.random.RandomState(seed)
    values = rs.normal(size=n)
    weights = rs.exponential(size=n)
    if kind == "sorted":
        values.sort()
    elif kind == "reversed":
        values = -np.sort(values)
    elif kind == "ties":
        values = rs.randint(0, 5, size=n).astype(float)
    elif kind == "heavy":
        weights[rs.randint(n)] = weights.sum() * 10
    elif kind == "spread":
        weights = 10.0 ** rs.uniform(-6, 6, size=n)
    elif kind == "holes":
        values[rs.rand(n) < 0.2] = np.nan
        weights[rs.rand(n) < 0.2] = 0.0
    return values, weights


def check_summary(summary, values, weights, eps):
    """The summary's bounds hold for the data, its rank gap is within its eps and eps
    within the promised one, and its queries land within eps * total / 2 of the rank."""
    total = weights[~np.isnan(values)].sum()
    tol = 1e-9 * total
    assert summary.total == pytest.approx(total, rel=1e-9)
    assert summary.eps <= eps + 1e-12
    assert rank_gap(summary) <= summary.eps + 1e-9
    below, upto, at = true_ranks(values, weights, summary.values)
    assert np.all(summary.rmin <= below + tol)
    assert np.all(summary.rmax >= upto - tol)
    assert np.all(summary.w <= at + tol)
    d = np.linspace(0, total, 41)
    y = summary.query(d)
    below, upto, _ = true_ranks(values, weights, y)
    slack = summary.eps * total / 2 + tol
    assert np.all(below - slack <= d) and np.all(d <= upto + slack)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 300),
       kind=st.sampled_from(["random", "sorted", "reversed", "ties", "heavy", "spread",
                             "holes"]))
def test_exact_summary_has_the_true_ranks(seed, n, kind):
    values, weights = weighted_stream(seed, n, kind)
    s = Summary.from_data(values, weights)
    keep = ~np.isnan(values) & (weights > 0)
    np.testing.assert_array_equal(s.values, np.unique(values[keep]))
    below, upto, at = true_ranks(values, weights, s.values)
    np.testing.assert_allclose(s.rmin, below, rtol=1e-12, atol=1e-12 * weights.sum())
    np.testing.assert_allclose(s.rmax, upto, rtol=1e-12, atol=1e-12 * weights.sum())
    np.testing.assert_allclose(s.w, at, rtol=1e-12)
    assert s.eps == 0 and rank_gap(s) <= 1e-12
    if len(s):
        check_summary(s, values, weights, 0.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 400), cut=st.floats(0, 1),
       kind=st.sampled_from(["random", "sorted", "ties", "heavy", "holes"]))
def test_merging_exact_summaries_is_exact(seed, n, cut, kind):
    values, weights = weighted_stream(seed, n, kind)
    k = int(cut * n)
    merged = Summary.from_data(values[:k], weights[:k]).merge(
        Summary.from_data(values[k:], weights[k:]))
    whole = Summary.from_data(values, weights)
    np.testing.assert_array_equal(merged.values, whole.values)
    for field in ("rmin", "rmax", "w"):
        np.testing.assert_allclose(getattr(merged, field), getattr(whole, field), rtol=1e-12,
                                   atol=1e-12 * weights.sum())


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(50, 3000), b=st.integers(1, 40),
       kind=st.sampled_from(["random", "sorted", "reversed", "ties", "heavy", "spread",
                             "holes"]))
def test_pruning_and_merging_keep_the_paper_bound(seed, n, b, kind):
    # pruning adds 1/b to the error; merging takes the larger error; the bounds,
    # the rank gap and the queries hold for the data throughout
    values, weights = weighted_stream(seed, n, kind)
    if not np.any((weights > 0) & ~np.isnan(values)):
        return
    parts = np.array_split(np.arange(n), 4)
    pruned = [Summary.from_data(values[p], weights[p]).prune(b) for p in parts]
    for s, p in zip(pruned, parts):
        assert len(s) <= b + 1
        if len(s):
            check_summary(s, values[p], weights[p], 1.0 / b)
    left = pruned[0].merge(pruned[1])
    right = pruned[2].merge(pruned[3]).prune(2 * b)
    whole = left.merge(right).prune(b)
    assert len(whole) <= b + 1
    check_summary(whole, values, weights, 1.0 / b + 1.0 / (2 * b) + 1.0 / b)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3000), b=st.integers(1, 40),
       kind=st.sampled_from(["random", "sorted", "reversed", "ties", "holes"]))
def test_pruned_summary_of_unweighted_data_keeps_the_bound(seed, n, b, kind):
    # from_data(values, b=b) of unweighted values picks evenly spaced sorted values
    # with their exact ranks instead of building the exact summary first: at most
    # b + 1 entries within 1/b; exact (the same summary) when few values are distinct
    values, _ = weighted_stream(seed, n, kind)
    ones = np.ones_like(values)
    s = Summary.from_data(values, b=b)
    if not np.any(~np.isnan(values)):
        assert len(s) == 0
        return
    assert len(s) <= b + 1
    check_summary(s, values, ones, 1.0 / b)
    exact = Summary.from_data(values)
    if len(exact) <= b + 1:
        assert s.eps == 0
        for field in ("values", "rmin", "rmax", "w"):
            np.testing.assert_array_equal(getattr(s, field), getattr(exact, field))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_chunks=st.integers(1, 40),
       chunk=st.integers(1, 500), eps=st.sampled_from([0.3, 0.1, 0.05, 0.01]),
       kind=st.sampled_from(["random", "sorted", "reversed", "ties", "heavy", "spread",
                             "holes"]))
def test_streaming_sketch_is_within_eps(seed, n_chunks, chunk, eps, kind):
    values, weights = weighted_stream(seed, n_chunks * chunk, kind)
    if not np.any((weights > 0) & ~np.isnan(values)):
        return
    sketch = Sketch(eps)
    for c in range(n_chunks):
        sketch.push(values[c * chunk:(c + 1) * chunk], weights[c * chunk:(c + 1) * chunk])
    summary = sketch.summary()
    assert len(summary) <= np.ceil(2 / eps) + 1
    check_summary(summary, values, weights, eps)


def test_summary_refuses_bad_weights_and_empty_queries():
    with pytest.raises(ValueError, match="one value per value"):
        Summary.from_data([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="finite and non-negative"):
        Summary.from_data([1.0, 2.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="finite and non-negative"):
        Summary.from_data([1.0, 2.0], [1.0, np.inf])
    with pytest.raises(ValueError, match="no quantiles"):
        Summary.from_data([np.nan]).query([0.0])
    with pytest.raises(ValueError, match="b must be at least 1"):
        Summary.from_data([1.0, 2.0, 3.0]).prune(0)
    with pytest.raises(ValueError, match=r"eps must be in \(0, 1\)"):
        Sketch(0.0)
    assert len(Sketch(0.1).summary()) == 0
