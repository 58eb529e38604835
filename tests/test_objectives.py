import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import minimize, minimize_scalar

import _reference as ref
from gbtree.boosting.objectives import (AbsoluteError, Gamma, Huber, Logistic, Poisson, Quantile,
                               Softmax, SquaredError, Tweedie, grouped_weighted_quantile)


def _grad(obj, y, raw, w, n_threads=1):
    K, n = raw.shape[1], raw.shape[0]
    grad = np.empty((K, n), dtype=np.float32)
    hess = np.empty((K, n), dtype=np.float32)
    obj.gradient(y, raw, w, grad, hess, n_threads)
    return grad, hess


def _counts(rng, n):
    return rng.poisson(2.0, size=n).astype(float)


def _positive(rng, n):
    return rng.gamma(2.0, 1.5, size=n)


CASES = [
    (SquaredError(), lambda rng, n: rng.normal(size=n) * 3, ref.squared_error_grad, 1),
    (Logistic(), lambda rng, n: rng.randint(0, 2, size=n).astype(float), ref.logistic_grad, 1),
    (Softmax(4), lambda rng, n: rng.randint(0, 4, size=n).astype(float), ref.softmax_grad, 4),
    (AbsoluteError(), lambda rng, n: rng.standard_t(3, size=n), ref.absolute_error_grad, 1),
    (Quantile(0.8), lambda rng, n: rng.standard_t(3, size=n),
     lambda y, raw, w: ref.quantile_grad(y, raw, w, alpha=0.8), 1),
    (Huber(1.5), lambda rng, n: rng.standard_t(2, size=n) * 2,
     lambda y, raw, w: ref.huber_grad(y, raw, w, delta=1.5), 1),
    (Poisson(), _counts, ref.poisson_grad, 1),
    (Gamma(), _positive, ref.gamma_grad, 1),
    (Tweedie(1.3), lambda rng, n: _counts(rng, n) * _positive(rng, n),
     lambda y, raw, w: ref.tweedie_grad(y, raw, w, power=1.3), 1),
]
# The hessian is the loss's exact second derivative for these; the others use a
# constant (absolute error, quantile, Huber: leaves are refit), a damped one
# (Poisson: exp(F + 0.7)) or a scaled diagonal (softmax).
EXACT_HESSIAN = {"squared_error", "logistic", "gamma", "tweedie"}


@pytest.mark.parametrize("obj,make_y,reference,K", CASES, ids=lambda c: getattr(c, "name", ""))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [10, 50_000])   # serial and parallel paths
def test_gradients_match_reference(rng, obj, make_y, reference, K, weighted, n):
    y = make_y(rng, n)
    raw = rng.normal(size=(n, K)) * 2
    w = rng.uniform(0, 3, size=n) if weighted else None
    grad, hess = _grad(obj, y, raw, w, n_threads=2)
    g_ref, h_ref = reference(y, raw, w)
    np.testing.assert_allclose(grad, np.reshape(g_ref, (K, n)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hess, np.reshape(h_ref, (K, n)), rtol=1e-6, atol=1e-7)


def test_vectorised_exp_is_within_one_unit_in_the_last_place():
    from gbtree.kernels._objectives import py_exp
    rng = np.random.RandomState(0)
    x = np.concatenate([np.linspace(-708, 708, 100_001), rng.normal(size=100_000) * 5,
                        [0.0, -0.0, 1e-300, -1e-300, 0.5 * np.log(2), -0.5 * np.log(2)]])
    got, want = py_exp(x), np.exp(x)
    assert np.all(np.abs(got - want) <= np.spacing(want))
    # beyond +-708 it is clamped there (the sigmoid is 0 or 1 in double either way)
    np.testing.assert_array_equal(py_exp(np.array([-1e4, -709.0, 709.0, 1e4])),
                                  py_exp(np.array([-708.0, -708.0, 708.0, 708.0])))
    assert np.all(np.isfinite(py_exp(np.array([-np.inf, np.inf]))))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [1, 16_383, 16_385, 50_001])   # block edges of the vector loop
@pytest.mark.parametrize("n_threads", [1, 2])
def test_logistic_pairs_match_the_general_loop_and_the_reference(rng, weighted, n, n_threads):
    # the booster passes interleaved (gradient, hessian) pairs: the vectorised loop
    y = rng.randint(0, 2, size=n).astype(float)
    raw = rng.normal(size=(n, 1)) * 4
    raw[::97] *= 300   # saturated rows: p is 0 or 1
    w = rng.uniform(0, 3, size=n) if weighted else None
    pairs = np.full((1, n, 2), np.nan, dtype=np.float32)
    Logistic().gradient(y, raw, w, pairs[:, :, 0], pairs[:, :, 1], n_threads)
    grad, hess = _grad(Logistic(), y, raw, w, n_threads)   # separate arrays: the general loop
    np.testing.assert_array_equal(pairs[0, :, 0], grad[0])
    np.testing.assert_array_equal(pairs[0, :, 1], hess[0])
    with np.errstate(over="ignore"):   # NumPy's exp overflows to inf there: p = 0
        g_ref, h_ref = ref.logistic_grad(y, raw, w)
    np.testing.assert_allclose(pairs[0, :, 0], g_ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(pairs[0, :, 1], h_ref, rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [1, 63, 65, 50_001])   # block edges of the vector loop
@pytest.mark.parametrize("K", [2, 3, 10])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_softmax_pairs_match_the_general_loop_and_the_reference(rng, weighted, n, K, n_threads):
    # the booster passes the pairs of one (K, n, 2) array: the vectorised loop
    y = rng.randint(0, K, size=n).astype(float)
    raw = rng.normal(size=(n, K)) * 4
    raw[::97] *= 300   # saturated rows: some p are 0 or 1
    w = rng.uniform(0, 3, size=n) if weighted else None
    pairs = np.full((K, n, 2), np.nan, dtype=np.float32)
    Softmax(K).gradient(y, raw, w, pairs[:, :, 0], pairs[:, :, 1], n_threads)
    grad, hess = _grad(Softmax(K), y, raw, w, n_threads)   # separate arrays: the general loop
    np.testing.assert_array_equal(pairs[:, :, 0], grad)
    np.testing.assert_array_equal(pairs[:, :, 1], hess)
    g_ref, h_ref = ref.softmax_grad(y, raw, w)
    np.testing.assert_allclose(pairs[:, :, 0], g_ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(pairs[:, :, 1], h_ref, rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("obj,make_y,reference,K", CASES, ids=lambda c: getattr(c, "name", ""))
def test_gradient_is_the_derivative_of_the_loss(rng, obj, make_y, reference, K):
    # finite differences of the per-row loss against the kernel's gradient
    n = 20
    y = make_y(rng, n)
    raw = rng.normal(size=(n, K))
    grad, hess = _grad(obj, y, raw, None)
    eps = 1e-5
    for k in range(K):
        for i in range(n):
            if obj.name in ("absolute_error", "quantile") and abs(raw[i, k] - y[i]) < 10 * eps:
                continue   # the kink: no derivative there
            up, down = raw.copy(), raw.copy()
            up[i, k] += eps
            down[i, k] -= eps
            lu = obj.loss(y[i:i + 1], up[i:i + 1])
            ld = obj.loss(y[i:i + 1], down[i:i + 1])
            l0 = obj.loss(y[i:i + 1], raw[i:i + 1])
            np.testing.assert_allclose(grad[k, i], (lu - ld) / (2 * eps), rtol=1e-4, atol=1e-5)
            if obj.name in EXACT_HESSIAN:
                np.testing.assert_allclose(hess[k, i], (lu - 2 * l0 + ld) / eps ** 2, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("obj,make_y,reference,K", CASES, ids=lambda c: getattr(c, "name", ""))
@pytest.mark.parametrize("weighted", [False, True])
def test_starting_value_minimises_the_loss(rng, obj, make_y, reference, K, weighted):
    n = 500
    y = make_y(rng, n)
    w = rng.uniform(0, 2, size=n) if weighted else None
    f0 = obj.init_raw(y, w)

    def total(c):
        return obj.loss(y, np.tile(c, (n, 1)), w)

    if K == 1:   # bounded scalar search also handles the non-smooth losses
        best = np.array([minimize_scalar(total, bounds=(y.min() - 1, y.max() + 1) if
                                         obj.name not in ("poisson", "gamma", "tweedie") else
                                         (-5, 5), method="bounded",
                                         options=dict(xatol=1e-10)).x])
    else:
        best = minimize(total, np.zeros(K), method="BFGS", options=dict(gtol=1e-10)).x
    assert total(f0) <= total(best) + 1e-9
    np.testing.assert_allclose(total(f0), total(best), rtol=1e-7)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_grouped_weighted_quantile_matches_a_loop(rng, alpha):
    n, G = 300, 7
    v, w, g = rng.normal(size=n), rng.uniform(0, 2, size=n), rng.randint(0, G, size=n)
    w[::11] = 0.0
    got = grouped_weighted_quantile(v, w, g, G, alpha)
    for k in range(G):
        vk, wk = v[g == k], w[g == k]
        order = np.argsort(vk)
        cum = np.cumsum(wk[order])
        first = np.flatnonzero((cum >= alpha * cum[-1] * (1 - 1e-12)) & (wk[order] > 0))[0]
        assert got[k] == vk[order][first]
        # it minimises the weighted pinball loss of the group
        loss = lambda c: np.sum(wk * np.where(vk >= c, alpha * (vk - c), (1 - alpha) * (c - vk)))
        assert loss(got[k]) <= min(loss(c) for c in vk) + 1e-9


def test_transforms():
    raw = np.array([[0.0, 1.0, -1.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(Softmax(3).transform(raw).sum(axis=1), 1.0)
    np.testing.assert_allclose(Softmax(3).transform(raw)[1], 1 / 3)
    p = Logistic().transform(np.array([[0.0], [np.log(3.0)]]))
    np.testing.assert_allclose(p, [[0.5, 0.5], [0.25, 0.75]])
    np.testing.assert_array_equal(SquaredError().transform(raw[:, :1]), raw[:, 0])


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                              np.uint32, np.uint64, np.float32, np.float64, bool, "U2", object]),
       labels=st.lists(st.integers(-40, 40), min_size=1, max_size=8, unique=True),
       n=st.sampled_from([1, 17, 70_000]), n_threads=st.sampled_from([1, 2, 3]),
       seed=st.integers(0, 2 ** 16))
def test_class_codes_are_the_labels_sorted_positions(dtype, labels, n, n_threads, seed):
    # the codes the classifier trains on: np.searchsorted of the sorted distinct labels,
    # for every label dtype (-0.0 and 0.0 are one label; more rows than a thread's share)
    from gbtree.boosting.objectives import class_codes
    rng = np.random.default_rng(seed)
    values = np.asarray(labels)
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    y = values[rng.integers(0, values.size, size=n)].astype(dtype)
    if np.dtype(dtype).kind == "f":
        y[y == 0] = np.where(rng.random(int((y == 0).sum())) < 0.5, -0.0, 0.0)
    classes = np.unique(y)
    got = class_codes(y, classes, n_threads)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.searchsorted(classes, y).astype(np.float64))
    if np.dtype(dtype).kind in "iuf" and np.dtype(dtype).itemsize > 1:
        swapped = y.astype(y.dtype.newbyteorder())   # the same labels, other byte order
        np.testing.assert_array_equal(class_codes(swapped, np.unique(swapped), n_threads), got)
    if np.dtype(dtype).kind == "f":
        # (NaN labels never reach the losses: fit rejects them) NaN sorts last, as
        # np.unique and np.searchsorted place it
        y[::3] = np.nan
        classes = np.unique(y)
        np.testing.assert_array_equal(class_codes(y, classes, n_threads),
                                      np.searchsorted(classes, y).astype(np.float64))
