import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import _reference as ref
from gbtree.kernels._node_histograms import (py_build_histogram, py_plan, py_subtract_histograms,
                                       py_unpack_histogram)
from gbtree.kernels._quantizer import py_quantize


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
@pytest.mark.parametrize("n_rows", [6_000, 70_000])   # two chunks; n_rows // 16384 chunks
def test_chunked_histogram_matches_reference_and_is_thread_independent(rng, n_features, n_rows):
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


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 40_000), n_features=st.integers(1, 12),
       split=st.floats(0.0, 1.0), n_threads=st.sampled_from([1, 2, 3]),
       max_chunks=st.sampled_from([1, 2, 16]))
def test_row_list_in_two_ranges_sums_like_one(seed, n_rows, n_features, split, n_threads,
                                              max_chunks):
    # the grower keeps a node's rows in two halves of its row array: a chunk
    # across them must add its rows in the same order as one list would
    rng = np.random.RandomState(seed)
    X, grad, hess, offsets = _problem(rng, n_rows, n_features, 255)
    rows = np.sort(rng.choice(n_rows, size=rng.randint(0, n_rows + 1), replace=False)).astype(np.uint32)
    k = int(split * rows.shape[0])
    kw = dict(n_threads=n_threads, max_chunks=max_chunks, return_totals=True)
    one, one_total = py_build_histogram(X, rows, grad, hess, offsets, **kw)
    two, two_total = py_build_histogram(X, rows, grad, hess, offsets, split=k, **kw)
    np.testing.assert_array_equal(two, one)   # bit for bit
    assert two_total == one_total
    packed, _ = py_quantize(grad, hess, 64, seed)
    one, one_total = py_build_histogram(X, rows, None, None, offsets, packed=packed, **kw)
    two, two_total = py_build_histogram(X, rows, None, None, offsets, packed=packed, split=k, **kw)
    np.testing.assert_array_equal(two, one)
    assert two_total == one_total
    with pytest.raises(ValueError, match="split"):
        py_build_histogram(X, rows, grad, hess, offsets, split=rows.shape[0] + 1)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 200_000),
       extra=st.integers(0, 20), n_threads=st.sampled_from([1, 2, 3]), packed=st.booleans())
def test_chunks_in_a_larger_scratch_sum_alike(seed, n_rows, extra, n_threads, packed):
    # the grower's scratch has buffers for its largest node's chunks; a smaller
    # node's upper chunks use the last ones (chunk_buffer): the same sums
    rng = np.random.RandomState(seed)
    X, grad, hess, offsets = _problem(rng, n_rows, 3, 255)
    rows = np.sort(rng.choice(n_rows, size=rng.randint(0, n_rows + 1), replace=False)).astype(np.uint32)
    n_chunks = py_plan(rows.shape[0], 3, int(offsets[-1]), 64, n_threads)[0]
    kw = dict(n_threads=n_threads, max_chunks=64, return_totals=True)
    if packed:
        kw["packed"] = py_quantize(grad, hess, 64, seed)[0]
    one, one_total = py_build_histogram(X, rows, grad, hess, offsets, **kw)
    two, two_total = py_build_histogram(X, rows, grad, hess, offsets,
                                        scratch_chunks=n_chunks + extra, **kw)
    np.testing.assert_array_equal(two, one)   # bit for bit
    assert two_total == one_total
    # and both are right (packed builds add a thread's chunks into one buffer)
    if packed:
        np.testing.assert_array_equal(two, ref.build_packed_histogram(X, rows, kw["packed"],
                                                                      offsets))
    else:
        np.testing.assert_allclose(two, ref.build_histogram(X, rows, grad, hess, offsets),
                                   rtol=1e-9, atol=1e-7)


@pytest.mark.parametrize("n_rows", [4_096, 20_000, 49_152, 60_000, 81_920, 115_000, 1_000_000])
def test_row_chunks_come_in_even_numbers(n_rows):
    # two threads then build as many chunks each (3 chunks would leave one idle
    # a third of the time); the count depends on the rows only, never the threads
    plans = {py_plan(n_rows, 28, 28 * 256, n_threads=t)[::2] for t in (1, 2, 3)}
    assert len(plans) == 1
    ((n_chunks, chunk_rows),) = plans
    assert n_chunks >= 2 and n_chunks % 2 == 0
    assert (n_chunks - 1) * chunk_rows < n_rows <= n_chunks * chunk_rows


@pytest.mark.parametrize("packed", [False, True])
def test_more_features_than_one_pass_takes(rng, packed):
    # the dense kernel visits at most 256 features a pass over the rows; 521 = two
    # full passes and an odd one (its last feature alone)
    n = 3000
    X, grad, hess, offsets = _problem(rng, n, 521, 20)
    rows = np.sort(rng.choice(n, size=2000, replace=False)).astype(np.uint32)
    if packed:
        values, _ = py_quantize(grad, hess, 64, 3)
        for n_threads in (1, 2):
            got, total = py_build_histogram(X, rows, None, None, offsets, n_threads,
                                            packed=values, return_totals=True)
            np.testing.assert_array_equal(got, ref.build_packed_histogram(X, rows, values, offsets))
            assert total == ref.widen(values)[rows].sum()
        return
    h1, t1 = py_build_histogram(X, rows, grad, hess, offsets, 1, return_totals=True)
    h2 = py_build_histogram(X, rows, grad, hess, offsets, 2)
    np.testing.assert_array_equal(h1, h2)
    np.testing.assert_allclose(h1, ref.build_histogram(X, rows, grad, hess, offsets),
                               rtol=1e-10, atol=1e-9)
    # the rows' sum is taken once, not once a pass
    np.testing.assert_allclose(t1, (grad[rows].astype(np.float64).sum(),
                                    hess[rows].astype(np.float64).sum()), rtol=1e-9)


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


# ------------------------------------------------------------ quantised gradients

@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3000),
       levels=st.one_of(st.integers(2, 300), st.just(32766)),
       n_threads=st.sampled_from([1, 2]), scale=st.sampled_from([1e-30, 1e-3, 1.0, 1e6]))
def test_quantize_matches_reference(seed, n, levels, n_threads, scale):
    rng = np.random.RandomState(seed)
    grad = (rng.normal(size=n) * scale).astype(np.float32)
    hess = (rng.uniform(0, 1, size=n) * scale).astype(np.float32)
    grad[rng.rand(n) < 0.1] = 0.0
    packed, steps = py_quantize(grad, hess, levels, seed, n_threads)
    want, want_steps = ref.quantize(grad, hess, levels, seed)
    assert packed.dtype == np.int32
    np.testing.assert_array_equal(packed, want)
    assert steps == want_steps
    sums = ref.unpack(ref.widen(packed), *steps)
    # every value is within one step of the exact one, inside the documented range
    assert np.all(np.abs(sums[:, 0] - grad) <= steps[0] * (1 + 1e-9))
    assert np.all(np.abs(sums[:, 1] - hess) <= steps[1] * (1 + 1e-9))
    assert np.abs(sums[:, 0] / steps[0]).max() <= levels // 2 + 1
    assert (sums[:, 1] >= 0).all() and (sums[:, 1] / steps[1]).max() <= levels + 1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3000), levels=st.integers(2, 300),
       n_threads=st.sampled_from([1, 2]))
def test_rows_quantised_at_their_places_get_the_values_of_all_rows(seed, n, levels, n_threads):
    # a shard of the level-wise trainer holds some rows of the data in its own order:
    # with the steps of all rows, each of its rows gets the value it has among all rows
    from gbtree.kernels._quantizer import gradient_extent_of, quantize_places, steps_of
    from gbtree.distributed.row_shard import runs
    rng = np.random.RandomState(seed)
    pairs = np.column_stack([rng.normal(size=n), rng.uniform(0, 2, size=n)]).astype(np.float32)
    tree_seed = int(rng.randint(0, 2**62))
    want, want_steps = ref.quantize(pairs[:, 0], pairs[:, 1], levels,
                                    ref.splitmix64(np.array([tree_seed ^ 0x71A27], np.uint64))[0])
    assert gradient_extent_of(pairs, n_threads) == tuple(np.abs(pairs).max(axis=0))
    steps = steps_of(*np.abs(pairs).max(axis=0), levels)
    assert steps == want_steps
    # runs of consecutive rows, in an order of their own; some rows on other shards
    cut = np.sort(rng.choice(np.arange(1, n + 1), size=min(n, 5), replace=False))
    pieces = [np.arange(a, b) for a, b in zip(np.r_[0, cut[:-1]], cut)]
    mine = np.concatenate([pieces[i] for i in rng.permutation(len(pieces))
                           if rng.rand() < 0.7] + [np.empty(0, dtype=np.int64)])
    out = np.empty(mine.shape[0], dtype=np.int32)
    quantize_places(np.ascontiguousarray(pairs[mine]), levels, tree_seed, *steps,
                    runs(mine), out, n_threads)
    np.testing.assert_array_equal(out, want[mine])
    bad = pairs.copy()
    bad[rng.randint(n), rng.randint(2)] = rng.choice([np.nan, np.inf])
    assert gradient_extent_of(bad, n_threads) is None
    with pytest.raises(ValueError, match="places do not cover"):
        quantize_places(pairs, levels, tree_seed, *steps, np.array([[0, n + 1]]),
                        np.empty(n, dtype=np.int32))


def test_quantize_is_unbiased_and_keeps_grid_values(rng):
    n = 200_000
    grad = rng.normal(size=n).astype(np.float32)
    hess = rng.uniform(0, 1, size=n).astype(np.float32)
    packed, (sg, sh) = py_quantize(grad, hess, 4, 7)
    sums = ref.unpack(ref.widen(packed), sg, sh)
    # four levels: the rounding error of one row is up to a step (0.5 max|g|), but
    # its mean over many rows is ~0 (the standard error is ~0.001 here)
    assert abs(sums[:, 0].mean() - grad.mean()) < 0.005
    assert abs(sums[:, 1].mean() - hess.mean()) < 0.005
    assert np.abs(sums[:, 0] - grad).mean() > 0.1   # it does round
    # values already on the grid (a constant hessian, gradients multiple of the step) stay
    grad = rng.randint(-8, 9, size=n).astype(np.float32) * 0.25
    grad[0] = 2.0
    packed, (sg, sh) = py_quantize(grad, np.ones(n, np.float32), 16, 3)
    np.testing.assert_array_equal(ref.unpack(ref.widen(packed), sg, sh),
                                  np.column_stack([grad, np.ones(n)]))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("n_features", [3, 28, 200])
def test_packed_histogram_matches_reference_exactly(rng, n_features, n_threads):
    n = 40_000   # several row chunks
    X, grad, hess, offsets = _problem(rng, n, n_features, 255)
    packed, steps = py_quantize(grad, hess, 64, 11)
    rows = np.sort(rng.choice(n, size=n * 3 // 4, replace=False)).astype(np.uint32)
    got, total = py_build_histogram(X, rows, None, None, offsets, n_threads, packed=packed,
                                    return_totals=True)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ref.build_packed_histogram(X, rows, packed, offsets))
    assert total == ref.widen(packed)[rows].sum()
    # unpacked, it is the float histogram of the rounded gradients
    rounded = ref.unpack(ref.widen(packed), *steps)
    np.testing.assert_allclose(py_unpack_histogram(got, *steps),
                               ref.build_histogram(X, rows, rounded[:, 0], rounded[:, 1], offsets),
                               rtol=1e-9, atol=1e-9)
    # subtraction gives the sibling, exactly
    left = rows[: rows.shape[0] // 3]
    right = rows[rows.shape[0] // 3:]
    small = py_build_histogram(X, left, None, None, offsets, n_threads, packed=packed)
    np.testing.assert_array_equal(py_subtract_histograms(got.copy(), small, n_threads),
                                  ref.build_packed_histogram(X, right, packed, offsets))


def test_unpack_handles_negative_sums_of_both_parts():
    rng = np.random.RandomState(0)
    g = rng.randint(-2**31 + 1, 2**31 - 1, size=1000, dtype=np.int64)
    h = rng.randint(-2**31 + 1, 2**31 - 1, size=1000, dtype=np.int64)
    packed = g * 2**32 + h
    np.testing.assert_array_equal(py_unpack_histogram(packed, 1.0, 1.0),
                                  np.column_stack([g, h]).astype(np.float64))
    np.testing.assert_array_equal(ref.unpack(packed, 1.0, 1.0), np.column_stack([g, h]))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_all_rows_in_sequence_give_the_gathered_sums(rng, n_threads):
    # the root of a tree grown on every row reads them in sequence, without a row list
    n = 50_000
    X, grad, hess, offsets = _problem(rng, n, 9, 255)
    rows = np.arange(n, dtype=np.uint32)
    gathered = py_build_histogram(X, rows, grad, hess, offsets, n_threads, return_totals=True)
    direct = py_build_histogram(X, rows, grad, hess, offsets, n_threads, return_totals=True,
                                all_rows=True)
    np.testing.assert_array_equal(direct[0], gathered[0])
    assert direct[1] == gathered[1]
    np.testing.assert_allclose(direct[0], ref.build_histogram(X, rows, grad, hess, offsets),
                               rtol=1e-9, atol=1e-7)
    packed, _ = py_quantize(grad, hess, 64, 5)
    np.testing.assert_array_equal(
        py_build_histogram(X, rows, None, None, offsets, n_threads, packed=packed, all_rows=True),
        ref.build_packed_histogram(X, rows, packed, offsets))
    with pytest.raises(ValueError, match="all_rows"):
        py_build_histogram(X, rows[:-1], grad, hess, offsets, all_rows=True)
