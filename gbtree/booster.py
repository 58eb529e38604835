"""The boosting loop shared by every estimator.

``train`` bins the data, sets the starting value F0, then for each round
computes gradients and hessians at the current raw prediction and grows one
tree per output on them; each tree's leaf values (times the learning rate) are
added to the raw predictions of the training rows straight from the grower's
row partition. Objectives that refit leaves (absolute error, quantile, Huber)
replace the Newton values by their line search on the same partition. After
each round the eval sets' raw predictions get the round's trees, the metrics
are recorded, and the callbacks (early stopping, logging, schedules) may stop
the loop.
"""
import time
from dataclasses import dataclass

import numpy as np

from ._grower import TreeGrower
from ._typedefs import G_H_DTYPE
from .binning import BinMapper
from .callback import LogEvaluation, TrainingState
from .tree import TreeEnsemble, add_trees_to_raw


@dataclass
class BoostParams:
    """Engine parameters, already validated (see sklearn.py for their meaning)."""

    n_estimators: int = 100
    learning_rate: float = 0.1
    max_depth: int = 6
    max_leaves: int = 0
    grow_policy: str = "depthwise"
    max_bin: int = 256
    min_child_weight: float = 1.0
    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    gamma: float = 0.0
    max_delta_step: float = 0.0
    verbosity: int = 0
    log_period: int = 10


class EvalSet:
    """A validation data set and its running raw predictions.

    ``group_ptr`` (ranking): the ``n_groups + 1`` row offsets of its queries,
    rows sorted by query; ranking metrics need it.
    """

    def __init__(self, name, X, y, sample_weight, group_ptr=None):
        self.name, self.X, self.y, self.sample_weight = name, X, y, sample_weight
        self.group_ptr = group_ptr
        self.raw = None


def _leaf_of_row(grower, nodes):
    """Compact leaf number (0..L-1) of every training row, from the grower's partition."""
    rows, starts, ends = grower.leaf_rows()
    leaves = np.flatnonzero(nodes["is_leaf"])
    order = np.argsort(starts[leaves])   # leaf segments tile the partition array
    leaf_of_pos = np.repeat(order.astype(np.intp), (ends - starts)[leaves][order])
    leaf_of_row = np.empty(rows.shape[0], dtype=np.intp)
    leaf_of_row[rows] = leaf_of_pos
    return leaves, leaf_of_row


def _refit(objective, grower, nodes, y, raw, raw_before, sample_weight, k, learning_rate):
    """Replace the Newton leaf values by the objective's line search on each leaf's rows."""
    leaves, leaf_of_row = _leaf_of_row(grower, nodes)
    best = objective.refit_leaves(y, raw_before, sample_weight, leaf_of_row, leaves.shape[0])
    values = nodes["value"][leaves]
    refit = ~np.isnan(best)   # a leaf whose rows all have zero weight keeps its value
    values[refit] = learning_rate * best[refit]
    nodes["value"][leaves] = values
    raw[:, k] = raw_before + values[leaf_of_row]


def train(X, y, objective, params, sample_weight=None, n_threads=1, random_state=None,
          eval_sets=(), metrics=(), callbacks=()):
    """Fit a boosted ensemble.

    Parameters
    ----------
    X : ndarray (n_rows, n_features), float32 or float64, NaN = missing
    y : ndarray (n_rows,), float64 (class codes for classifiers)
    objective : objectives.Objective
    params : BoostParams
    sample_weight : ndarray (n_rows,) or None
    n_threads : int
    random_state : numpy.random.RandomState (drives the binning subsample)
    eval_sets : list of EvalSet, evaluated after every round with each of ``metrics``
    metrics : list of metrics.Metric
    callbacks : list of callback.Callback (hooks before / after each round)

    Returns
    -------
    ensemble : TreeEnsemble
    info : dict with ``bin_seconds``, ``boost_seconds``, ``n_rounds`` (rounds built),
        ``evals_result``, ``best_iteration``, ``best_score``
    """
    t0 = time.perf_counter()
    mapper = BinMapper(params.max_bin, random_state=random_state).fit(X, sample_weight)
    X_binned = mapper.transform(X, n_threads)
    t1 = time.perf_counter()

    n_rows = X.shape[0]
    K = objective.n_outputs
    base = objective.init_raw(y, sample_weight)
    ensemble = TreeEnsemble(X.shape[1], base)
    raw = np.empty((n_rows, K), dtype=np.float64)
    raw[:] = base
    for ev in eval_sets:
        ev.raw = np.empty((ev.X.shape[0], K), dtype=np.float64)
        ev.raw[:] = base
    grad = np.empty((K, n_rows), dtype=G_H_DTYPE)
    hess = np.empty((K, n_rows), dtype=G_H_DTYPE)
    grower = TreeGrower(
        X_binned, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
        params.max_depth, params.max_leaves, params.grow_policy == "lossguide",
        params.reg_lambda, params.reg_alpha, params.min_child_weight,
        params.max_delta_step, params.gamma, n_threads,
    )
    state = TrainingState(params.n_estimators, params.learning_rate, metrics,
                          [ev.name for ev in eval_sets])
    callbacks = list(callbacks)
    if params.verbosity >= 1:
        period = 1 if params.verbosity >= 2 else params.log_period
        callbacks.append(LogEvaluation(period, lambda: (objective.name,
                                                        objective.loss(y, raw, sample_weight))))
    for cb in callbacks:
        cb.before_training(state)
    n_rounds = 0
    for it in range(params.n_estimators):
        state.iteration = it
        if any([cb.before_iteration(state) for cb in callbacks]):
            break
        lr = state.learning_rate
        objective.gradient(y, raw, sample_weight, grad, hess, n_threads)
        trees = []
        for k in range(K):
            raw_before = raw[:, k].copy() if objective.needs_refit else None
            nodes = grower.grow(grad[k], hess[k], lr, raw, k)
            if objective.needs_refit:
                _refit(objective, grower, nodes, y, raw, raw_before, sample_weight, k, lr)
            ensemble.add_tree(nodes, k)
            trees.append(nodes)
        n_rounds += 1
        for ev in eval_sets:
            add_trees_to_raw(ev.X, trees, range(K), ev.raw, n_threads)
            pred = objective.transform(ev.raw)
            for m in metrics:
                state.evals_result[ev.name][m.name].append(
                    m(ev.y, pred, ev.sample_weight, ev.group_ptr))
        if any([cb.after_iteration(state) for cb in callbacks]):
            break
    for cb in callbacks:
        cb.after_training(state)
    t2 = time.perf_counter()
    if state.best_iteration is None:
        state.best_iteration = n_rounds - 1
        if eval_sets and metrics:
            state.best_score = state.evals_result[eval_sets[-1].name][metrics[-1].name][-1]
    info = {"bin_seconds": t1 - t0, "boost_seconds": t2 - t1, "n_rounds": n_rounds,
            "evals_result": state.evals_result, "best_iteration": state.best_iteration,
            "best_score": state.best_score}
    if params.verbosity >= 1:
        print(f"[gbtree] binning {info['bin_seconds']:.3f}s, boosting {info['boost_seconds']:.3f}s, "
              f"{n_rounds} iterations, {ensemble.n_trees} trees, "
              f"{int((ensemble.nodes['is_leaf'] == 1).sum())} leaves")
    return ensemble, info
