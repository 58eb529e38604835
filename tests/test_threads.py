import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import gbtree
from gbtree import GBTClassifier, GBTRegressor
from gbtree._openmp_helpers import openmp_enabled
from gbtree._threads import effective_n_threads
from joblib import cpu_count

needs_openmp = pytest.mark.skipif(not openmp_enabled(), reason="built without OpenMP: always 1 thread")


@needs_openmp
def test_n_jobs_resolution():
    all_cores = min(cpu_count(), effective_n_threads(None))
    assert effective_n_threads(-1) == all_cores
    assert effective_n_threads(3) == 3
    assert effective_n_threads(-2) == max(1, all_cores - 1)
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match="n_jobs"):
            effective_n_threads(bad)
    # more threads than OpenMP can start aborted or crashed the process (libgomp)
    limit = max(256, 4 * cpu_count())
    for bad in (limit + 1, 100_000, 2 ** 31):
        with pytest.raises(ValueError, match=f"n_jobs must be at most {limit}"):
            effective_n_threads(bad)
        with pytest.raises(ValueError, match=f"n_jobs must be at most {limit}"):
            GBTRegressor(n_estimators=2, n_jobs=bad).fit(np.eye(4), np.arange(4.0))


def test_threads_predicting_with_a_just_fitted_model_at_once():
    # The trees of a fit were joined into the model's arrays at its first use, with
    # no lock: several threads' first predicts at once crashed the process (2 runs
    # in 3 of a helper's script). Now the fit joins them (and a join, or the building
    # of the traversal copy, holds a lock).
    import threading
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 5))
    y = X[:, 0] + rng.normal(size=500)
    m = GBTRegressor(n_estimators=50, max_depth=3, n_jobs=1).fit(X, y)
    assert not m._ensemble._pending and m._ensemble._forest is None
    expected = GBTRegressor(n_estimators=50, max_depth=3, n_jobs=1).fit(X, y).predict(X)
    out = [None] * 4

    def predict(i):
        out[i] = m.predict(X)
    threads = [threading.Thread(target=predict, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in out:
        np.testing.assert_array_equal(o, expected)


@needs_openmp
def test_threadpoolctl_limit_is_respected():
    with threadpool_limits(limits=1, user_api="openmp"):
        assert effective_n_threads(None) == 1
        assert effective_n_threads(-1) == 1


@needs_openmp
def test_omp_num_threads_is_respected(tmp_path):
    code = "from gbtree._threads import effective_n_threads as e; print(e(None), e(-1))"
    # the child must import the same gbtree as this process, wherever that lives
    here = os.path.dirname(os.path.dirname(gbtree.__file__))
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    # cwd away from the checkout: from its root, ``python -c`` would find the source folder first
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.split()
    assert out == ["1", "1"]


@pytest.mark.parametrize("Est,make_y", [
    (GBTRegressor, lambda X, rng: X[:, 0] * 2 + np.sin(X[:, 1] * 3) + rng.normal(size=len(X))),
    (GBTClassifier, lambda X, rng: (X[:, 0] + X[:, 1] ** 2 + rng.logistic(size=len(X)) > 1).astype(int)),
    (GBTClassifier, lambda X, rng: np.digitize(X[:, 0] + rng.normal(size=len(X)), [-1, 0, 1])),
])
@pytest.mark.parametrize("grow_policy", ["depthwise", "lossguide"])
def test_model_is_bit_identical_across_n_jobs(Est, make_y, grow_policy):
    # 120k rows: the row-chunked histogram and the parallel partition are both used
    rng = np.random.RandomState(0)
    X = rng.normal(size=(120_000, 6)).astype(np.float32)
    X[rng.rand(*X.shape) < 0.02] = np.nan
    y = make_y(np.nan_to_num(X), rng)
    w = rng.uniform(0.5, 2, size=len(X))
    kw = dict(n_estimators=8, grow_policy=grow_policy, max_leaves=31 if grow_policy == "lossguide" else 0)
    models = [Est(n_jobs=n, **kw).fit(X, y, sample_weight=w) for n in (1, 2, 3)]
    ref = models[0]._ensemble
    for m in models[1:]:
        assert m._ensemble.nodes.tobytes() == ref.nodes.tobytes()
        np.testing.assert_array_equal(m._ensemble.base_score, ref.base_score)
    preds = [m._ensemble.predict_raw(X[:5000], n_threads=n) for n, m in zip((1, 2, 3), models)]
    for p in preds[1:]:
        np.testing.assert_array_equal(p, preds[0])


@needs_openmp
@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork exists on POSIX systems only")
def test_a_child_forked_after_a_threaded_fit_predicts_and_fits_on_one_thread():
    # OpenMP's thread pool does not survive fork(): without the fallback the child's
    # first parallel region waits forever (the alarm ends it, a failure)
    import signal
    import warnings
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20_000, 8))
    y = X[:, 0] - X[:, 1] ** 2 + rng.normal(scale=0.1, size=20_000)
    model = GBTRegressor(n_estimators=10, n_jobs=2).fit(X, y)
    want_pred = model.predict(X)
    want_refit = GBTRegressor(n_estimators=5, n_jobs=1).fit(X, y).predict(X)
    pid = os.fork()
    if pid == 0:   # the child: exit codes say what went wrong
        code = 1
        try:
            signal.alarm(60)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                same_pred = np.array_equal(model.predict(X), want_pred)
                refit = GBTRegressor(n_estimators=5, n_jobs=2).fit(X, y).predict(X)
            warned = any("forked after gbtree had run OpenMP threads" in str(w.message)
                         for w in seen)
            code = 0 if same_pred and np.array_equal(refit, want_refit) and warned else \
                2 + same_pred + 2 * warned
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"the child was ended by signal {os.WTERMSIG(status)}"
    assert os.WEXITSTATUS(status) == 0, {2: "wrong predictions, no warning",
                                         3: "no warning", 4: "wrong predictions",
                                         5: "a different refit"}.get(os.WEXITSTATUS(status))
    # the parent keeps its threads
    np.testing.assert_array_equal(GBTRegressor(n_estimators=10, n_jobs=2).fit(X, y).predict(X),
                                  want_pred)
