"""Training callbacks: hooks the boosting loop calls before and after each round.

A callback subclasses ``Callback`` and overrides any of its hooks; a hook that
returns True stops training. The loop passes a ``TrainingState``:

- ``iteration``: the round (0-based) about to run or just run;
- ``n_rounds``: the rounds asked for; ``learning_rate``: the shrinkage of the
  next round (a callback may change it);
- ``evals_result``: ``{eval set name: {metric name: [value per round]}}``;
- ``metrics``: the ``Metric`` objects, in ``eval_metric`` order;
- ``best_iteration`` / ``best_score``: set by early stopping (else the last
  round and its last metric value);
- ``elapsed``: seconds since training started.
"""
import numbers
import time

import numpy as np

from .logs import LOGGER


class TrainingState:
    """What callbacks see and may change (see the module docstring)."""

    def __init__(self, n_rounds, learning_rate, metrics, eval_names):
        self.iteration = 0
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.metrics = list(metrics)
        self.evals_result = {name: {m.name: [] for m in metrics} for name in eval_names}
        self.best_iteration = None
        self.best_score = None
        self.start_time = time.perf_counter()

    @property
    def elapsed(self):
        return time.perf_counter() - self.start_time

    def latest(self, data_name, metric_name):
        return self.evals_result[data_name][metric_name][-1]


class Callback:
    """Base class: every hook does nothing and lets training go on."""

    def before_training(self, state):
        """Called once before the first round."""

    def before_iteration(self, state):
        """Called before each round; return True to stop before it runs."""
        return False

    def after_iteration(self, state):
        """Called after each round (its trees added, its metrics recorded); True stops."""
        return False

    def after_training(self, state):
        """Called once after the last round."""


class EarlyStopping(Callback):
    """Stop when a metric on an eval set has not improved for ``rounds`` rounds.

    By default the last metric on the last eval set decides (XGBoost's rule).
    ``min_delta`` is the improvement that counts. ``best_iteration`` and
    ``best_score`` of the state are set to the best round seen.
    """

    def __init__(self, rounds, metric_name=None, data_name=None, min_delta=0.0):
        if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 1:
            raise ValueError(f"early_stopping_rounds must be an integer >= 1, got {rounds!r}")
        if (isinstance(min_delta, bool) or not isinstance(min_delta, numbers.Real)
                or not 0 <= min_delta < np.inf):
            raise ValueError(f"min_delta must be a finite number >= 0, got {min_delta!r}")
        self.rounds = rounds
        self.metric_name = metric_name
        self.data_name = data_name
        self.min_delta = min_delta

    def before_training(self, state):
        if not state.evals_result:
            raise ValueError("early_stopping_rounds needs an eval_set or validation_fraction > 0")
        self._data = self.data_name or list(state.evals_result)[-1]
        if self._data not in state.evals_result:
            raise ValueError(f"early stopping data_name {self._data!r} is not an eval set; the "
                             f"eval sets are {', '.join(map(repr, state.evals_result))}")
        metric = (state.metrics[-1] if self.metric_name is None
                  else next((m for m in state.metrics if m.name == self.metric_name), None))
        if metric is None:
            raise ValueError(f"early stopping metric {self.metric_name!r} is not in eval_metric")
        self._metric = metric
        self._best = None

    def after_iteration(self, state):
        value = state.latest(self._data, self._metric.name)
        if np.isnan(value):
            # NaN compares as neither better nor worse: round 0 would be kept, silently
            raise ValueError(f"early stopping: {self._metric.name} on {self._data} is NaN in "
                             f"round {state.iteration}, so no round can be called the best "
                             f"(is it defined there? an AUC needs both classes)")
        sign = 1.0 if self._metric.greater_is_better else -1.0
        if self._best is None or sign * (value - self._best) > self.min_delta:
            self._best = value
            state.best_iteration, state.best_score = state.iteration, value
        return state.iteration - state.best_iteration >= self.rounds


class LogEvaluation(Callback):
    """Print the round, every eval set's metrics and the elapsed time every ``period`` rounds
    (and on the first and last round)."""

    def __init__(self, period=1, show_train_loss=None):
        self.period = max(1, int(period))
        self.show_train_loss = show_train_loss   # callable() -> (name, value) or None

    def before_training(self, state):
        self._done = self._logged = -1

    def after_training(self, state):
        # training stopped early (a callback): log the last round that ran
        if self._done >= 0 and self._logged != self._done:
            self._log(state, self._done)

    def after_iteration(self, state):
        it = self._done = state.iteration
        if not (it + 1) % self.period or it in (0, state.n_rounds - 1):
            self._log(state, it)
        return False

    def _log(self, state, it):
        self._logged = it
        parts = [f"[gbtree] round {it + 1}/{state.n_rounds}"]
        if self.show_train_loss is not None:
            name, value = self.show_train_loss()
            parts.append(f"train-{name}={value:.6g}")
        for data, metrics in state.evals_result.items():
            parts += [f"{data}-{m}={values[-1]:.6g}" for m, values in metrics.items() if values]
        parts.append(f"elapsed={state.elapsed:.3f}s")
        LOGGER.info(" ".join(parts))


class Progress(Callback):
    """Rounds done and the time left: a tqdm bar (``bar=True``; None: when tqdm is
    installed), else a line on the "gbtree" logger at most every ``interval``
    seconds and after the last round. Works for fits in memory, out of core and on
    Dask alike."""

    def __init__(self, interval=10.0, bar=None):
        if (isinstance(interval, bool) or not isinstance(interval, numbers.Real)
                or not 0 < interval < np.inf):
            raise ValueError(f"interval must be a number of seconds > 0, got {interval!r}")
        if bar not in (None, True, False):
            raise ValueError(f"bar must be None, True or False, got {bar!r}")
        if bar:
            _tqdm()
        self.interval, self.bar = float(interval), bar
        self._bar = None

    def before_training(self, state):
        self._bar = None
        if self.bar or (self.bar is None and _tqdm(needed=False) is not None):
            self._bar = _tqdm()(total=state.n_rounds, unit="round", desc="gbtree")
        self._shown = time.perf_counter()

    def after_iteration(self, state):
        done = state.iteration + 1
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            return False
        now = time.perf_counter()
        if now - self._shown >= self.interval or done == state.n_rounds:
            self._shown = now
            left = state.elapsed / done * (state.n_rounds - done)
            LOGGER.info(f"[gbtree] {done}/{state.n_rounds} rounds "
                        f"({100 * done / state.n_rounds:.0f} %), {state.elapsed:.1f} s, "
                        f"about {left:.1f} s left")
        return False

    def after_training(self, state):
        if self._bar is not None:
            self._bar.close()
        self._bar = None


def _tqdm(needed=True):
    """tqdm's bar class (the notebook one in Jupyter), or None / an ImportError when
    tqdm is not installed."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if needed:
            raise ImportError("Progress(bar=True) needs tqdm, an optional dependency: "
                              "pip install tqdm (or gbtree[progress])") from None
        return None
    return tqdm


class RecordEvaluation(Callback):
    """Copy every recorded metric into the dict ``record`` as training goes."""

    def __init__(self, record):
        if not isinstance(record, dict):
            raise TypeError(f"RecordEvaluation needs a dict to fill, got {type(record).__name__}")
        self.record = record

    def after_iteration(self, state):
        self.record.clear()
        self.record.update({d: {m: list(v) for m, v in ms.items()}
                            for d, ms in state.evals_result.items()})
        return False


class LearningRateScheduler(Callback):
    """Set the learning rate of each round: ``schedule(round) -> float`` or a list."""

    def __init__(self, schedule):
        if not (callable(schedule) or isinstance(schedule, (list, tuple, np.ndarray))):
            raise TypeError(f"LearningRateScheduler needs a function of the round or a list of "
                            f"learning rates, got {type(schedule).__name__}")
        self.schedule = schedule

    def before_iteration(self, state):
        if callable(self.schedule):
            lr = self.schedule(state.iteration)
        elif state.iteration < len(self.schedule):
            lr = self.schedule[state.iteration]
        else:
            raise ValueError(f"the learning-rate schedule has {len(self.schedule)} values "
                             f"but round {state.iteration} needs one (n_estimators rounds)")
        try:
            lr = float(lr)
        except (TypeError, ValueError):
            raise TypeError(f"the learning-rate schedule gave {lr!r} for round "
                            f"{state.iteration}; it must be a number") from None
        if not 0 < lr < np.inf:
            raise ValueError(f"the learning-rate schedule gave {lr!r} for round "
                             f"{state.iteration}; it must be finite and > 0")
        state.learning_rate = lr
        return False


def training_callbacks(callbacks, early_stopping_rounds=None):
    """The callbacks of a fit: the user's (checked to be ``Callback`` objects) and, with
    ``early_stopping_rounds``, an ``EarlyStopping``."""
    if callbacks is not None and not isinstance(callbacks, (list, tuple)):
        raise TypeError(f"callbacks must be a list of gbtree.callback.Callback instances, "
                        f"got {callbacks!r}")
    out = [] if callbacks is None else list(callbacks)
    for cb in out:
        if isinstance(cb, type) or not all(
                hasattr(cb, h) for h in ("before_training", "before_iteration",
                                         "after_iteration", "after_training")):
            raise TypeError(f"callbacks must be gbtree.callback.Callback instances, "
                            f"got {cb!r}")
    if early_stopping_rounds is not None:
        out.append(EarlyStopping(int(early_stopping_rounds)))
    return out
