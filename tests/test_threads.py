import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import gbtree
from gbtree import GBTClassifier, GBTRegressor
from gbtree.kernels._openmp_helpers import openmp_enabled
from gbtree.kernels._threads import effective_n_threads
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
    code = "from gbtree.kernels._threads import effective_n_threads as e; print(e(None), e(-1))"
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


# ---------------------------------------------------------------- thread counts that change
class _Forced:
    """A ``ThreadBudget`` that changes the thread count every round, from ``COUNTS``
    (forced, not measured): a fit starts on 1 thread, its rounds run on 3, 2, 1, 3,
    ... threads."""
    COUNTS = (1, 3, 2, 1, 3, 2)
    made = []

    def __init__(self, limit):
        self.limit, self.i = limit, 0
        self.n = min(limit, self.COUNTS[0])
        _Forced.made.append(self)

    def round_done(self):
        self.i += 1
        self.n = min(self.limit, self.COUNTS[self.i % len(self.COUNTS)])
        return self.n


def _kinds():
    """(name, estimator, fit arguments) of every grower and round of the engine."""
    from gbtree import GBTRanker
    rng = np.random.RandomState(3)
    X = rng.normal(size=(3000, 6))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    y = Z[:, 0] * 2 + np.sin(Z[:, 1] * 3) + rng.normal(size=3000)
    yc = np.digitize(y, [-1, 1])
    kw = dict(n_estimators=6, max_depth=4)
    return [
        ("hist depthwise", GBTRegressor(**kw), (X, y)),
        ("hist lossguide", GBTRegressor(n_estimators=6, max_depth=0, max_leaves=24,
                                        grow_policy="lossguide"), (X, y)),
        ("multiclass", GBTClassifier(**kw), (X, yc)),
        ("ranker", GBTRanker(**kw), (X, np.clip(np.round(y), 0, 3)),
         dict(qid=np.arange(3000) // 30)),
        ("sampling, GOSS", GBTRegressor(sampling_method="goss", **kw), (X, y)),
        ("row and column sampling", GBTRegressor(subsample=0.7, colsample_bynode=0.6, **kw),
         (X, y)),
        ("quantised gradients", GBTRegressor(grad_quant_bins=16, **kw), (X, y)),
        ("constraints", GBTRegressor(monotone_constraints=[1, 0, 0, 0, 0, 0],
                                     interaction_constraints=[[0, 1], [2, 3, 4, 5]], **kw),
         (X, y)),
        ("dart", GBTRegressor(booster="dart", rate_drop=0.3, **kw), (X, y)),
        ("forest", GBTRegressor(num_parallel_tree=3, subsample=0.8, **kw), (X, y)),
        ("symmetric", GBTRegressor(grow_policy="symmetric", **kw), (X, y)),
        ("ordered", GBTRegressor(boosting_type="ordered", **kw), (X, y)),
        ("vector leaves", GBTClassifier(multi_strategy="multi_output_tree", **kw), (X, yc)),
        ("exact", GBTRegressor(tree_method="exact", **kw), (X, y)),
        ("approx global", GBTRegressor(tree_method="approx", **kw), (X, y)),
        ("approx local", GBTRegressor(tree_method="approx", approx_proposal="local", **kw),
         (X, y)),
        ("quantile refit", GBTRegressor(objective="quantile", quantile_alpha=[0.2, 0.8], **kw),
         (X, y)),
    ]


@needs_openmp
@pytest.mark.parametrize("case", _kinds(), ids=lambda case: case[0])
def test_thread_counts_changed_between_rounds_grow_the_same_model(case, monkeypatch):
    from gbtree.boosting import booster
    name, est, args, *more = case
    fit_kw = more[0] if more else {}
    X = args[0]
    want = est.set_params(n_jobs=1).fit(*args, **fit_kw)
    want_nodes, want_pred = want._ensemble.nodes.copy(), want.predict(X)
    _Forced.made.clear()
    monkeypatch.setattr(booster, "ThreadBudget", _Forced)
    got = est.set_params(n_jobs=3).fit(*args, **fit_kw)
    assert _Forced.made and _Forced.made[-1].i >= 5   # (the counts did change)
    assert got._ensemble.nodes.tobytes() == want_nodes.tobytes(), name
    np.testing.assert_array_equal(got.predict(X), want_pred)


@needs_openmp
@pytest.mark.parametrize("params", [dict(max_depth=4), dict(max_depth=0, max_leaves=20,
                                                              grow_policy="lossguide"),
                                    dict(max_depth=3, grow_policy="symmetric"),
                                    dict(max_depth=4, grad_quant_bins=16)],
                         ids=["depthwise", "lossguide", "symmetric", "quantised"])
def test_thread_counts_changed_between_rounds_out_of_core(params, monkeypatch, tmp_path):
    from gbtree import ExternalData
    from gbtree.distributed import row_shard
    rng = np.random.RandomState(4)
    X = rng.normal(size=(3000, 5))
    y = X[:, 0] + X[:, 1] ** 2 + rng.normal(size=3000)

    def chunks():
        return iter([(X[:1700], y[:1700]), (X[1700:], y[1700:])])

    kw = dict(n_estimators=6, **params)
    want = GBTRegressor(n_jobs=1, **kw).fit(ExternalData(chunks, cache_dir=tmp_path,
                                                         block_rows=1000))
    _Forced.made.clear()
    monkeypatch.setattr(row_shard, "ThreadBudget", _Forced)
    got = GBTRegressor(n_jobs=3, **kw).fit(ExternalData(chunks, cache_dir=tmp_path,
                                                        block_rows=1000))
    assert _Forced.made and _Forced.made[-1].i >= 5
    assert got._ensemble.nodes.tobytes() == want._ensemble.nodes.tobytes()


class _Machine:
    """What a ``ThreadBudget`` reads, played: a clock, the calling thread's wait for a
    CPU, the process's CPU time and the threads runnable elsewhere (None: unknown)."""

    def __init__(self, others, cpus=2):
        self.now = self.delay = self.cpu = 0.0
        self.others, self.cpus = others, cpus

    def round(self, seconds, n, waited=0.0):
        """A round of ``seconds`` on ``n`` threads, each waiting ``waited`` of it."""
        self.now += seconds
        self.delay += waited * seconds
        self.cpu += n * (1.0 - waited) * seconds

    def install(self, monkeypatch, schedstat=True):
        from gbtree.kernels import _threads
        clock = type("Clock", (), {"perf_counter": lambda _: self.now,
                                   "process_time": lambda _: self.cpu})()
        monkeypatch.setattr(_threads, "time", clock)
        monkeypatch.setattr(_threads, "_run_delay", lambda: self.delay if schedstat else None)
        monkeypatch.setattr(_threads, "runnable_elsewhere", lambda: self.others)
        monkeypatch.setattr(_threads, "_host_cpus", lambda: self.cpus)


def test_a_fit_takes_the_threads_the_cores_have_free(monkeypatch):
    from gbtree.kernels._threads import ThreadBudget
    machine = _Machine(others=0)
    machine.install(monkeypatch)
    budget = ThreadBudget(2)
    assert budget.n == 2                      # an idle machine: every thread
    for _ in range(5):
        machine.round(0.01, budget.n)
        budget.round_done()
    assert budget.n == 2
    # another process starts: the calling thread waits for a CPU, the fit takes one
    machine.others = 1
    machine.round(0.01, budget.n, waited=0.3)
    assert budget.round_done() == 1
    for _ in range(5):
        machine.round(0.01, budget.n)         # (one thread waits for no one)
        assert budget.round_done() == 1
    # it stops: the fit takes both threads again (at two looks in a row that find a
    # CPU free; while none is, the looks are further and further apart)
    machine.others = 0
    rounds = 0
    while budget.n == 1:
        machine.round(0.01, 1)
        budget.round_done()
        rounds += 1
    assert 2 <= rounds <= 64 + 2
    # rounds shorter than a look are looked at together
    machine.others = 2
    machine.round(ThreadBudget.WINDOW / 4, 2, waited=0.5)
    assert budget.round_done() == 2
    for _ in range(4):
        machine.round(ThreadBudget.WINDOW / 4, 2, waited=0.5)
        budget.round_done()
    assert budget.n == 1


def test_a_fit_starts_on_the_cores_other_processes_leave(monkeypatch):
    from gbtree.kernels._threads import ThreadBudget, available_threads
    machine = _Machine(others=2, cpus=2)
    machine.install(monkeypatch)
    assert ThreadBudget(2).n == 1 and available_threads(2) == 1
    machine.others, machine.cpus = 3, 8
    assert ThreadBudget(8).n == 5 and available_threads(4) == 4
    assert ThreadBudget(1).n == 1


def test_without_the_schedulers_counts_a_fit_reads_its_cpu_time(monkeypatch):
    from gbtree.kernels._threads import ThreadBudget
    machine = _Machine(others=None)
    machine.install(monkeypatch, schedstat=False)
    budget = ThreadBudget(2)
    assert budget.n == 2
    machine.round(0.01, 2, waited=0.5)        # two threads, half the CPU time: shared
    assert budget.round_done() == 1
    tried = []
    for _ in range(40):
        machine.round(0.01, budget.n, waited=0.5 if budget.n == 2 else 0.0)
        tried.append(budget.round_done())
    # it tries two threads again, less and less often while they do not pay
    ups = [i for i in range(1, len(tried)) if tried[i] == 2 and tried[i - 1] == 1]
    gaps = np.diff(ups)
    assert len(ups) >= 3 and np.all(np.diff(gaps) > 0), ups


# ---------------------------------------------------------------- a round's trees at once
class _Fixed:
    """A ``ThreadBudget`` that keeps ``n_jobs`` threads, whatever the machine has free."""

    def __init__(self, limit):
        self.limit = self.n = limit

    def round_done(self):
        return self.n


def _lanes_spied(monkeypatch):
    """Fits keep their ``n_jobs`` threads (``_Fixed``); returns the list to which
    each call of ``run_in_lanes`` appends (its lanes, its trees)."""
    from gbtree.boosting import booster
    calls, real = [], booster.run_in_lanes

    def spy(grow_one, lanes, n_tasks):
        calls.append((len(lanes), n_tasks))
        return real(grow_one, lanes, n_tasks)
    monkeypatch.setattr(booster, "run_in_lanes", spy)
    monkeypatch.setattr(booster, "ThreadBudget", _Fixed)
    return calls


def test_run_in_lanes_gives_every_result_in_order_and_raises_the_first_error():
    from gbtree.growing._lanes import run_in_lanes
    seen = []

    def one(lane, k):
        seen.append((lane, k))
        return 10 * k
    for lanes in (["a"], ["a", "b"], ["a", "b", "c"]):
        seen.clear()
        assert run_in_lanes(one, lanes, 7) == [10 * k for k in range(7)]
        assert sorted(k for _, k in seen) == list(range(7))
        assert {lane for lane, _ in seen} <= set(lanes)
    assert run_in_lanes(one, ["a", "b"], 0) == []

    def fails(lane, k):
        if k == 2:
            raise ValueError(f"tree {k}")
        return k
    with pytest.raises(ValueError, match="tree 2"):
        run_in_lanes(fails, ["a", "b"], 6)
    with pytest.raises(ValueError, match="at least one lane"):
        run_in_lanes(one, [], 3)


def test_a_twin_grower_shares_the_binned_rows_and_grows_the_same_tree():
    from gbtree.boosting.booster import BoostParams
    from gbtree.data.binning import BinMapper
    from gbtree.growing.growers import make_grower
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20_000, 5))
    Xb = (mapper := BinMapper(64).fit(X)).transform(X)
    grower = make_grower(BoostParams(max_depth=0, max_leaves=15, grow_policy="lossguide",
                                     colsample_bynode=0.6), X, Xb, mapper, 2)
    twin = grower.twin(1)
    assert type(twin) is type(grower) and twin.n_threads == 1
    pairs = np.stack([np.sin(3 * X[:, 0]) + X[:, 1], np.ones(len(X))], axis=1)
    pairs = pairs.astype(np.float32)[None].copy()
    raws = [np.zeros((len(X), 1)) for _ in range(2)]
    a = grower.grow(pairs, 0.1, raws[0], 0, seed=7)[0]
    b = twin.grow(pairs, 0.1, raws[1], 0, seed=7)[0]
    assert a.shape[0] == 29 and a.tobytes() == b.tobytes()
    np.testing.assert_array_equal(raws[0], raws[1])


@needs_openmp
@pytest.mark.parametrize("n_classes", [3, 4, 7])
@pytest.mark.parametrize("params", [
    dict(max_depth=0, max_leaves=20, grow_policy="lossguide"),
    dict(max_depth=4, subsample=0.7, colsample_bynode=0.6, colsample_bytree=0.8),
    dict(max_depth=4, sampling_method="goss"),
    dict(max_depth=4, grad_quant_bins=16),
    dict(max_depth=4, booster="dart", rate_drop=0.3),
    dict(max_depth=4, monotone_constraints=[1, 0, 0, 0, 0, -1],
         interaction_constraints=[[0, 1], [2, 3, 4, 5]]),
], ids=["lossguide", "sampling", "goss", "quantised", "dart", "constraints"])
def test_the_trees_of_a_round_grown_at_once_are_those_grown_one_at_a_time(
        n_classes, params, monkeypatch):
    # with several threads the round's first K - K % n trees grow at once, one a
    # thread, the rest on every thread: the model is that of one thread
    rng = np.random.RandomState(1)
    X = rng.normal(size=(6000, 6))
    X[rng.rand(*X.shape) < 0.03] = np.nan
    Z = np.nan_to_num(X)
    y = np.digitize(Z[:, 0] + np.sin(2 * Z[:, 1]) + rng.normal(size=len(X)) * 0.5,
                    np.linspace(-1.5, 1.5, n_classes - 1))
    assert len(np.unique(y)) == n_classes
    kw = dict(n_estimators=5, random_state=3, **params)
    want = GBTClassifier(n_jobs=1, **kw).fit(X, y)
    calls = _lanes_spied(monkeypatch)
    for n_jobs in (2, 3):
        calls.clear()
        got = GBTClassifier(n_jobs=n_jobs, **kw).fit(X, y)
        lanes = min(n_jobs, n_classes)
        assert calls and set(calls) == {(lanes, n_classes - n_classes % lanes)}, calls
        assert got._ensemble.nodes.tobytes() == want._ensemble.nodes.tobytes()
        np.testing.assert_array_equal(got.predict_proba(X), want.predict_proba(X))


@needs_openmp
@pytest.mark.parametrize("Est,n_classes", [(GBTRegressor, 0), (GBTClassifier, 2),
                                           (GBTClassifier, 3)])
@pytest.mark.parametrize("params", [
    dict(num_parallel_tree=5, subsample=0.8, colsample_bynode=0.6),
    dict(num_parallel_tree=4, max_depth=0, max_leaves=12, grow_policy="lossguide",
         colsample_bytree=0.7),
    dict(num_parallel_tree=3, subsample=0.7, booster="dart", rate_drop=0.5),
], ids=["sampling", "lossguide", "dart"])
def test_a_forests_trees_grown_at_once_are_those_grown_one_at_a_time(
        Est, n_classes, params, monkeypatch):
    # a forest's round grows its K * P trees n at a time, one a thread, each into a
    # buffer of its own added to the raw scores in the trees' order: the model of
    # one thread, its rows left out of the sample scored as well
    rng = np.random.RandomState(2)
    X = rng.normal(size=(5000, 6))
    X[rng.rand(*X.shape) < 0.03] = np.nan
    Z = np.nan_to_num(X)
    y = Z[:, 0] + np.sin(2 * Z[:, 1]) + rng.normal(size=len(X)) * 0.5
    if n_classes:
        y = np.digitize(y, np.linspace(-1, 1, n_classes - 1))
    kw = dict(dict(n_estimators=4, max_depth=4, random_state=5), **params)
    want = Est(n_jobs=1, **kw).fit(X, y)
    calls = _lanes_spied(monkeypatch)
    trees = max(n_classes, 1) if n_classes != 2 else 1
    trees *= params["num_parallel_tree"]
    for n_jobs in (2, 3):
        calls.clear()
        got = Est(n_jobs=n_jobs, **kw).fit(X, y)
        assert all(n_lanes == n_tasks for n_lanes, n_tasks in calls), calls
        assert max(n_tasks for _, n_tasks in calls) == min(n_jobs, trees)
        assert sum(n_tasks for _, n_tasks in calls) == kw["n_estimators"] * trees
        assert got._ensemble.nodes.tobytes() == want._ensemble.nodes.tobytes()
        np.testing.assert_array_equal(got.predict(X), want.predict(X))


@needs_openmp
@pytest.mark.parametrize("data", ["sparse", "categorical", "several targets"])
def test_trees_grown_at_once_on_sparse_categorical_and_multi_target_data(data, monkeypatch):
    # a twin grower shares the binned rows of every kind (stored entries of a CSR
    # matrix, categorical bins) and grows the trees of one thread
    import pandas as pd
    import scipy.sparse as sp
    rng = np.random.RandomState(4)
    n = 6000
    Z = rng.normal(size=(n, 5))
    Est, y = GBTClassifier, np.digitize(Z[:, 0] + rng.normal(size=n) * 0.5, [-1, 0, 1])
    if data == "sparse":
        X = sp.random(n, 40, density=0.08, random_state=1, format="csr")
        y = np.digitize(np.asarray(X[:, :4].sum(axis=1)).ravel() + rng.normal(size=n) * 0.05,
                        [0.05, 0.15, 0.3])
    elif data == "categorical":
        X = pd.DataFrame(Z, columns=list("abcde"))
        X["c"] = pd.Categorical(rng.randint(0, 12, size=n))
        y = np.digitize(Z[:, 0] + (X["c"].cat.codes % 3) - 1, [-1, 0, 1])
    else:
        Est, X = GBTRegressor, Z
        y = np.stack([Z[:, 0] + Z[:, 1], 2 * Z[:, 2], np.sin(Z[:, 3])], axis=1)
    kw = dict(n_estimators=4, max_depth=5, random_state=0)
    want = Est(n_jobs=1, **kw).fit(X, y)
    calls = _lanes_spied(monkeypatch)
    got = Est(n_jobs=2, **kw).fit(X, y)
    assert calls and all(n_lanes == 2 and n_trees >= 2 for n_lanes, n_trees in calls), calls
    assert got._ensemble.nodes.tobytes() == want._ensemble.nodes.tobytes()
    np.testing.assert_array_equal(got.predict(X), want.predict(X))
