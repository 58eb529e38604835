"""Training callbacks: round hooks, the learning-rate schedule, logging, staged
predictions."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from gbtree import GBTClassifier, GBTRegressor
from gbtree.callback import Callback, LearningRateScheduler, RecordEvaluation


def test_callbacks_see_every_round_and_can_stop(noisy_regression):
    Xtr, Xte, ytr, yte = noisy_regression

    class StopAtThree(Callback):
        def __init__(self):
            self.calls = []

        def before_training(self, state):
            self.calls.append("start")

        def before_iteration(self, state):
            self.calls.append(("before", state.iteration))
            return False

        def after_iteration(self, state):
            self.calls.append(("after", state.iteration))
            return state.iteration == 2

        def after_training(self, state):
            self.calls.append("end")

    cb = StopAtThree()
    model = GBTRegressor(n_estimators=10, callbacks=[cb]).fit(Xtr, ytr)
    assert model.n_estimators_ == 3 and model.n_trees_ == 3
    assert cb.calls == ["start", ("before", 0), ("after", 0), ("before", 1), ("after", 1),
                        ("before", 2), ("after", 2), "end"]
    record = {}
    model = GBTRegressor(n_estimators=4, callbacks=[RecordEvaluation(record)]).fit(
        Xtr, ytr, eval_set=[(Xte, yte)])
    assert record == model.evals_result_
    with pytest.raises(TypeError, match="callbacks"):
        GBTRegressor(callbacks=[object()]).fit(Xtr, ytr)


def test_learning_rate_schedule(noisy_regression):
    Xtr, Xte, ytr, _ = noisy_regression
    const = GBTRegressor(n_estimators=5, learning_rate=0.3).fit(Xtr, ytr)
    sched = GBTRegressor(n_estimators=5, callbacks=[LearningRateScheduler(lambda r: 0.3)]).fit(Xtr, ytr)
    np.testing.assert_array_equal(const.predict(Xte), sched.predict(Xte))
    decay = GBTRegressor(n_estimators=5, callbacks=[
        LearningRateScheduler([0.3, 0.3, 0.1, 0.1, 0.1])]).fit(Xtr, ytr)
    np.testing.assert_array_equal(decay.predict(Xte, iteration_range=(0, 2)),
                                  const.predict(Xte, iteration_range=(0, 2)))
    assert not np.array_equal(decay.predict(Xte), const.predict(Xte))
    with pytest.raises(ValueError, match="learning-rate schedule"):
        GBTRegressor(n_estimators=2, callbacks=[LearningRateScheduler([0.1, 0.0])]).fit(Xtr, ytr)
    # inf gave NaN predictions; text a TypeError that named nothing
    with pytest.raises(ValueError, match=r"schedule gave inf for round 1; it must be finite"):
        GBTRegressor(n_estimators=2, callbacks=[LearningRateScheduler([0.1, np.inf])]).fit(Xtr, ytr)
    with pytest.raises(TypeError, match=r"schedule gave 'fast' for round 0; it must be a number"):
        GBTRegressor(n_estimators=2, callbacks=[LearningRateScheduler(["fast"] * 2)]).fit(Xtr, ytr)


def _logged(caplog):
    """The "gbtree" logger's lines caught so far (and forget them)."""
    lines = [r.getMessage() for r in caplog.records if r.name == "gbtree"]
    caplog.clear()
    return lines


def test_logging_every_log_period_rounds(noisy_regression, caplog):
    Xtr, Xte, ytr, yte = noisy_regression
    GBTRegressor(n_estimators=25, verbosity=1, log_period=10).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    lines = [ln for ln in _logged(caplog) if " round " in ln]
    assert [ln.split()[2] for ln in lines] == ["1/25", "10/25", "20/25", "25/25"]
    assert all("validation_0-rmse=" in ln and "elapsed=" in ln for ln in lines)


def test_staged_predictions_end_at_predict():
    X, y = make_classification(300, 5, n_classes=3, n_informative=3, random_state=0)
    model = GBTClassifier(n_estimators=7).fit(X, y)
    stages = list(model.staged_predict_proba(X))
    assert len(stages) == 7
    np.testing.assert_allclose(stages[-1], model.predict_proba(X), rtol=1e-12)
    np.testing.assert_allclose(stages[2], model.predict_proba(X, iteration_range=(0, 3)), rtol=1e-12)
    np.testing.assert_array_equal(list(model.staged_predict(X))[-1], model.predict(X))


def test_log_shows_the_round_training_stopped_at(noisy_regression, caplog):
    Xtr, Xte, ytr, yte = noisy_regression
    model = GBTRegressor(n_estimators=200, learning_rate=0.5, max_depth=8, early_stopping_rounds=5,
                         verbosity=1, log_period=50).fit(Xtr, ytr, eval_set=[(Xte, yte)])
    lines = [ln for ln in _logged(caplog) if " round " in ln]
    assert lines[-1].split()[2] == f"{model.n_estimators_}/200"
    from gbtree import ndcg_at_k
    with pytest.raises(ValueError, match="k must be >= 1"):
        ndcg_at_k([1, 0], [0.5, 0.2], group=[2], k=0)
    with pytest.raises(ValueError, match=r"sample_weight_eval_set\[0\]"):
        GBTRegressor(n_estimators=2).fit(Xtr, ytr, eval_set=[(Xte, yte)],
                                        sample_weight_eval_set=[np.ones(3)])


@pytest.mark.parametrize("field,value,message", [
    ("best_iteration", -5, r"best_iteration \(set by a callback\) must be a round of this fit, 0..4"),
    ("best_iteration", 100, r"must be a round of this fit, 0..4, got 100"),
    ("learning_rate", 0.0, r"the learning rate of round 0 \(a callback may set it\) must be a finite"),
    ("learning_rate", "0.1", r"must be a finite number > 0, got '0.1'"),
])
def test_training_state_a_callback_sets_is_checked(field, value, message):
    # best_iteration -5 kept a truncated, mismatched set of trees; a learning rate of
    # 0 or below trained silently the wrong way
    class Sets(Callback):
        def before_iteration(self, state):
            if field == "learning_rate":
                state.learning_rate = value

        def after_training(self, state):
            if field == "best_iteration":
                state.best_iteration = value
    X, y = make_regression(100, 3, random_state=0)
    with pytest.raises(ValueError, match=message):
        GBTRegressor(n_estimators=5, callbacks=[Sets()]).fit(X, y)


def test_callback_constructors_check_their_argument():
    # RecordEvaluation(None) failed at the first round with an AttributeError, a
    # scheduler of None or 3 with "has no len()"
    with pytest.raises(TypeError, match="RecordEvaluation needs a dict"):
        RecordEvaluation(None)
    for bad in (None, 3):
        with pytest.raises(TypeError, match="LearningRateScheduler needs a function"):
            LearningRateScheduler(bad)


@pytest.mark.parametrize("answer,rounds", [(None, 4), (False, 4), (np.False_, 4), (0, 4),
                                           (True, 1), (np.True_, 1), (1, 1)])
def test_a_round_hook_answers_true_false_or_none(answer, rounds):
    class Answers(Callback):
        def after_iteration(self, state):
            return answer
    X, y = make_regression(60, 3, random_state=0)
    assert GBTRegressor(n_estimators=4, callbacks=[Answers()]).fit(X, y).n_estimators_ == rounds


@pytest.mark.parametrize("hook", ["before_iteration", "after_iteration"])
def test_a_round_hook_returning_an_array_is_a_type_error(hook):
    # was NumPy's "truth value of an array ... is ambiguous", naming no callback
    class ReturnsArray(Callback):
        pass
    setattr(ReturnsArray, hook, lambda self, state: np.array([False, True]))
    X, y = make_regression(60, 3, random_state=0)
    with pytest.raises(TypeError, match=f"ReturnsArray.{hook} must return True, False or None"):
        GBTRegressor(n_estimators=3, callbacks=[ReturnsArray()]).fit(X, y)


# ---------------------------------------------------------------- logging and progress

_UNCONFIGURED = """
import numpy as np
from gbtree import GBTRegressor
X = np.arange(200.0).reshape(100, 2)
GBTRegressor(n_estimators=3, verbosity=2).fit(X, X[:, 0])
"""


def test_without_logging_configured_the_lines_are_printed(tmp_path):
    # a script that configures no logging sees verbosity's lines on stdout, as print
    # gave them; one that does (basicConfig) gets them through its handler, once
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _UNCONFIGURED], capture_output=True,
                          text=True, check=True, cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert [ln.split()[2] for ln in lines if " round " in ln] == ["1/3", "2/3", "3/3"]
    assert lines[-1].startswith("[gbtree] binning") and done.stderr == ""
    configured = "import logging; logging.basicConfig(level=logging.INFO)\n" + _UNCONFIGURED
    done = subprocess.run([sys.executable, "-c", configured], capture_output=True, text=True,
                          check=True, cwd=tmp_path)
    assert done.stdout == ""
    assert done.stderr.count("INFO:gbtree:[gbtree] round") == 3


def test_progress_lines_give_the_rounds_done_and_the_time_left(noisy_regression, caplog):
    from gbtree.callback import Progress
    Xtr, _, ytr, _ = noisy_regression
    GBTRegressor(n_estimators=4, callbacks=[Progress(interval=1e-9, bar=False)]).fit(Xtr, ytr)
    lines = _logged(caplog)
    assert [ln.split()[1] for ln in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert all(ln.endswith("s left") for ln in lines) and "(100 %)" in lines[-1]
    # a long interval: the last round only
    GBTRegressor(n_estimators=4, callbacks=[Progress(interval=3600, bar=False)]).fit(Xtr, ytr)
    assert [ln.split()[1] for ln in _logged(caplog)] == ["4/4"]


def test_progress_bar_where_tqdm_is(noisy_regression, capsys):
    pytest.importorskip("tqdm")
    from gbtree.callback import Progress
    Xtr, _, ytr, _ = noisy_regression
    progress = Progress(bar=True)
    GBTRegressor(n_estimators=5, callbacks=[progress]).fit(Xtr, ytr)
    err = capsys.readouterr().err
    assert "gbtree" in err and "5/5" in err
    assert progress._bar is None   # closed: the estimator pickles and clones as before
    import pickle
    pickle.dumps(GBTRegressor(callbacks=[progress]))


def test_progress_refuses_bad_arguments(monkeypatch):
    import sys
    from gbtree.callback import Progress
    for bad in (0, -1.0, float("inf"), True, "10"):
        with pytest.raises(ValueError, match="interval must be a number of seconds > 0"):
            Progress(interval=bad)
    with pytest.raises(ValueError, match="bar must be None, True or False"):
        Progress(bar="yes")
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match="pip install tqdm"):
        Progress(bar=True)
    assert Progress()._bar is None   # without tqdm, bar=None logs lines
