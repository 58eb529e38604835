import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gbtree import _reference as ref
from gbtree._histogram import interleave, py_build_histogram, py_plan, py_subtract_histograms


def _problem(rng, n_rows, n_features, max_bins):
    n_bins = rng.randint(1, max_bins, size=n_features).astype(np.int32)
    offsets = np.zeros(n_features + 1, dtype=np.int32)
    np.cumsum(n_bins + 1, out=offsets[1:])
    X = np.column_stack([rng.randint(0, nb + 1, size=n_rows) for nb in n_bins]).astype(np.uint8)
    grad = rng.normal(size=n_rows).astype(np.float32)
    hess = rng.uniform(0.1, 1, size=n_rows).astype(np.float32)
    return np.ascontiguousarray(X), grad, hess, offsets


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 3000), n_features=st.integers(1, 12),
       max_bins=st.integers(2, 255), n_threads=st.sampled_from([1, 2]))
def test_histogram_matches_reference(seed, n_rows, n_features, max_bins, n_threads):
    rng = np.random.RandomState(seed)
    X, grad, hess, offsets = _problem(rng, n_rows, n_features, max_bins)
    rows = np.sort(rng.choice(n_rows, size=rng.randint(0, n_rows + 1), replace=False)).astype(np.uint32)
    got = py_build_histogram(X, rows, grad, hess, offsets, n_threads)
    np.testing.assert_allclose(got, ref.build_histogram(X, rows, grad, hess, offsets), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("n_features", [3, 28, 200])
def test_chunked_histogram_matches_reference_and_is_thread_independent(rng, n_features):
    n_rows = 70_000
    X, grad, hess, offsets = _problem(rng, n_rows, n_features, 64)
    rows = np.arange(n_rows, dtype=np.uint32)
    n_chunks, _, _ = py_plan(n_rows, n_features, offsets[-1])
    assert n_chunks >= 2   # the row-chunked path is exercised
    h1 = py_build_histogram(X, rows, grad, hess, offsets, n_threads=1)
    h2 = py_build_histogram(X, rows, grad, hess, offsets, n_threads=2)
    h3 = py_build_histogram(X, rows, grad, hess, offsets, n_threads=3)
    np.testing.assert_array_equal(h1, h2)   # bit for bit
    np.testing.assert_array_equal(h1, h3)
    np.testing.assert_allclose(h1, ref.build_histogram(X, rows, grad, hess, offsets), rtol=1e-9, atol=1e-7)


def test_subtraction_gives_the_sibling(rng):
    X, grad, hess, offsets = _problem(rng, 5000, 6, 40)
    rows = np.arange(5000, dtype=np.uint32)
    left = rows[X[:, 2] < 10]
    right = rows[X[:, 2] >= 10]
    parent = py_build_histogram(X, rows, grad, hess, offsets)
    small = py_build_histogram(X, left, grad, hess, offsets)
    sibling = py_subtract_histograms(parent.copy(), small, 2)
    np.testing.assert_allclose(sibling, ref.build_histogram(X, right, grad, hess, offsets),
                               rtol=1e-9, atol=1e-7)


@pytest.mark.parametrize("n", [0, 1, 1000, 70_000])
def test_interleave_matches_reference(rng, n):
    grad = rng.normal(size=n).astype(np.float32)
    hess = rng.uniform(size=n).astype(np.float32)
    for n_threads in (1, 2):
        np.testing.assert_array_equal(interleave(grad, hess, n_threads), ref.interleave(grad, hess))
