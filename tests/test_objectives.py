import numpy as np
import pytest
from scipy.optimize import minimize

from gbtree import _reference as ref
from gbtree.objectives import Logistic, Softmax, SquaredError


def _grad(obj, y, raw, w, n_threads=1):
    K, n = raw.shape[1], raw.shape[0]
    grad = np.empty((K, n), dtype=np.float32)
    hess = np.empty((K, n), dtype=np.float32)
    obj.gradient(y, raw, w, grad, hess, n_threads)
    return grad, hess


CASES = [
    (SquaredError(), lambda rng, n: rng.normal(size=n) * 3, ref.squared_error_grad, 1),
    (Logistic(), lambda rng, n: rng.randint(0, 2, size=n).astype(float), ref.logistic_grad, 1),
    (Softmax(4), lambda rng, n: rng.randint(0, 4, size=n).astype(float), ref.softmax_grad, 4),
]


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
            up, down = raw.copy(), raw.copy()
            up[i, k] += eps
            down[i, k] -= eps
            lu = obj.loss(y[i:i + 1], up[i:i + 1])
            ld = obj.loss(y[i:i + 1], down[i:i + 1])
            l0 = obj.loss(y[i:i + 1], raw[i:i + 1])
            np.testing.assert_allclose(grad[k, i], (lu - ld) / (2 * eps), rtol=1e-4, atol=1e-5)
            if K == 1:   # exact second derivative (softmax uses a scaled diagonal)
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

    best = minimize(total, np.zeros(K), method="BFGS", options=dict(gtol=1e-10)).x
    assert total(f0) <= total(best) + 1e-9
    np.testing.assert_allclose(total(f0), total(best), rtol=1e-7)


def test_transforms():
    raw = np.array([[0.0, 1.0, -1.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(Softmax(3).transform(raw).sum(axis=1), 1.0)
    np.testing.assert_allclose(Softmax(3).transform(raw)[1], 1 / 3)
    p = Logistic().transform(np.array([[0.0], [np.log(3.0)]]))
    np.testing.assert_allclose(p, [[0.5, 0.5], [0.25, 0.75]])
    np.testing.assert_array_equal(SquaredError().transform(raw[:, :1]), raw[:, 0])
