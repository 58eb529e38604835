"""The boosting loop of every fit: in memory (``booster.train``), out of core and on
Dask (``distributed.levelwise``).

A round: the callbacks' start, its learning rate, DART's drops, the trees grown by
the fit's rows (an object that holds them where they are: in memory, in blocks on
disk, in shards on workers), DART's scaling, the trees added to the model and to the
eval sets' scores, the metrics, the callbacks' end. The rows answer:

- ``n_threads``: set by the loop to the threads of each round;
- ``grow_round(round_number, learning_rate, drop)``: the round's K * P trees (tree
  j feeds output j % K; P: a forest's trees per output), grown on the gradients of
  the scores without DART's ``drop`` (``dart.Dropped``, or None);
- ``round_done(trees, outputs, drop)``: the round's trees, scaled by DART, are final;
- ``training_loss``: a callable () -> (name, loss) for the log, or None;
- ``not_finite(round_number, learning_rate)``: why a round's gradients are not
  finite;
- ``finish()``: the fit is over.
"""
import numbers

import numpy as np

from ..predicting.tree import add_trees_to_raw
from .callback import LogEvaluation, TrainingState
from .dart import Dart, Dropped

# what a grower's ValueError says when the gradients' sums are not finite
NOT_FINITE = "grad and hess must be finite"


def boost(rows, ensemble, objective, params, seed, threads, eval_sets=(), metrics=(),
          callbacks=(), absent=np.nan):
    """The rounds of a fit of ``params`` (``booster.BoostParams``) over ``rows``,
    adding to ``ensemble`` (new, or a warm start's copy, whose round numbers go
    on): (the rounds built, the ``TrainingState`` of the metrics and callbacks).
    ``seed`` keys DART's draws; ``threads`` (``ThreadBudget``) gives each round's
    threads; ``eval_sets`` (``booster.EvalSet``) are evaluated after every round
    with each of ``metrics``, their rows' absent entries ``absent``."""
    K, P = objective.n_outputs, params.num_parallel_tree
    rounds_before = ensemble.n_trees // (K * P)
    dart = None if params.dart is None else Dart(params.dart, ensemble.n_trees)
    for ev in eval_sets:
        ev.raw = ensemble.predict_raw(ev.X, threads.n, absent=absent,
                                      base_margin=ev.base_margin)
    state = TrainingState(params.n_estimators, params.learning_rate, metrics,
                          [ev.name for ev in eval_sets])
    callbacks = list(callbacks)
    if params.verbosity >= 1:
        period = 1 if params.verbosity >= 2 else params.log_period
        callbacks.append(LogEvaluation(period, rows.training_loss))
    for cb in callbacks:
        cb.before_training(state)
    n_rounds = 0
    for it in range(params.n_estimators):
        state.iteration = it
        if stop_asked(callbacks, "before_iteration", state):
            break
        r = rounds_before + it
        lr = round_learning_rate(state, r)
        # (the model is the same at any thread count: each round takes what is free)
        n = rows.n_threads = threads.n
        drop = None
        if dart is not None:
            # (a generator of its own: the round's other draws stay those of plain boosting)
            dropped = dart.drop(np.random.default_rng([seed, r, 1]))
            if dropped.size:
                drop = Dropped([ensemble.tree(t).copy() for t in dropped],
                               ensemble.tree_class[dropped], *dart.factors(dropped.size,
                                                                           K * P, lr))
        try:
            trees = rows.grow_round(r, lr, drop)
        except ValueError as exc:
            if NOT_FINITE not in str(exc):
                raise
            raise ValueError(rows.not_finite(r, lr)) from None
        for nodes in trees:
            check_leaf_values(nodes, r, lr)
        outputs = [j % K for j in range(len(trees))]
        if dart is not None:
            dart.scale(ensemble, trees, dropped,
                       *((1.0, 1.0) if drop is None else (drop.factor, drop.weight)))
        rows.round_done(trees, outputs, drop)
        if drop is not None:
            Dart.rescale_eval_sets(eval_sets, drop, n, absent)
        for nodes, k in zip(trees, outputs):
            ensemble.add_tree(nodes, k)
        n_rounds += 1
        stop = evaluate_round(eval_sets, trees, outputs, objective, state, callbacks, n, absent)
        threads.round_done()
        if stop:
            break
    for cb in callbacks:
        cb.after_training(state)
    rows.finish()
    ensemble._flush()   # the fitted model holds no pending trees (threads may predict at once)
    settle_best(state, n_rounds, eval_sets)
    return n_rounds, state


def not_finite(round_number, lr, y=None, sample_weight=None, raw=None):
    """Why a round's gradients or hessians are inf or NaN: y or the weights are too
    large for float32 (the model's first round), or the model diverged. ``y``,
    ``sample_weight``, ``raw``: the rows' (a fit that holds them), for their sizes."""
    if round_number == 0:
        sizes = "" if y is None else f" (|y| up to {float(np.max(np.abs(y))):.3g}" + (
            "" if sample_weight is None
            else f", sample_weight up to {float(np.max(sample_weight)):.3g}") + ")"
        return (f"the gradients or hessians of round {round_number} are inf or NaN: y or "
                f"sample_weight is too large for their float32 values{sizes}; rescale y or "
                f"sample_weight")
    sizes = ("" if raw is None
             else f" (raw predictions up to {float(np.max(np.abs(raw))):.3g})")
    return (f"the gradients or hessians of round {round_number} are inf or NaN: the model "
            f"diverges{sizes}; lower learning_rate (now {lr:g}) or set max_delta_step")


def check_leaf_values(nodes, round_number, lr):
    """ValueError unless a new tree's values are finite (else the model diverges)."""
    if not np.isfinite(nodes["value"]).all():
        raise ValueError(f"a leaf value of round {round_number} is inf or NaN: the model "
                         f"diverges; lower learning_rate (now {lr:g})")


def round_learning_rate(state, round_number):
    """The learning rate of a round (a callback may have set it), checked."""
    lr = state.learning_rate
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not 0 < lr < np.inf:
        raise ValueError(f"the learning rate of round {round_number} (a callback may "
                         f"set it) must be a finite number > 0, got {lr!r}")
    return lr


def evaluate_round(eval_sets, trees, outputs, objective, state, callbacks, n_threads,
                   absent=np.nan):
    """After a round: its ``trees`` (tree j feeds output ``outputs[j]``) added to each
    eval set's raw scores, every metric of ``state`` recorded, the callbacks' round
    ends called; whether one of them stops the fit."""
    for ev in eval_sets:
        add_trees_to_raw(ev.X, trees, outputs, ev.raw, n_threads, absent=absent)
        pred = objective.transform(ev.raw)
        for m in state.metrics:
            state.evals_result[ev.name][m.name].append(
                m(ev.y, pred, ev.sample_weight, ev.group_ptr))
    return stop_asked(callbacks, "after_iteration", state)


def settle_best(state, n_rounds, eval_sets):
    """``state``'s best round and score once the fit has built ``n_rounds`` rounds: a
    callback's choice (checked), else the last round and its last metric."""
    if state.best_iteration is not None and not (
            isinstance(state.best_iteration, numbers.Integral)
            and 0 <= state.best_iteration < n_rounds):
        raise ValueError(f"best_iteration (set by a callback) must be a round of this fit, "
                         f"0..{n_rounds - 1}, got {state.best_iteration!r}")
    if state.best_iteration is None:
        state.best_iteration = n_rounds - 1
        if eval_sets and state.metrics and n_rounds > 0:
            state.best_score = state.evals_result[eval_sets[-1].name][state.metrics[-1].name][-1]


def stop_asked(callbacks, hook, state):
    """Call ``hook`` of every callback (all of them, in order); whether one returned True.
    A hook returns True, False or None (an integer counts as its truth value)."""
    stop = False
    for cb in callbacks:
        answer = getattr(cb, hook)(state)
        if answer is not None and not isinstance(answer, (bool, np.bool_, numbers.Integral)):
            raise TypeError(f"{type(cb).__name__}.{hook} must return True, False or None (True "
                            f"stops training), got {type(answer).__name__}")
        stop = stop or bool(answer)
    return stop
