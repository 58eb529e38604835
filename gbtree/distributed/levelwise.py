"""The rounds of a level-wise fit (``boost``): the trainer of ``gbtree.dask`` and of
out-of-core fits, over shards of rows (``row_shard.RowShard``) it reaches only
through ``call(method, *args)``."""
import copy

import numpy as np

from ..boosting import booster
from ..boosting.dart import Dart
from ..boosting.callback import TrainingState
from ..predicting.tree import TreeEnsemble


def boost(call, params, objective, base_score, n_features, n_rows, seed, eval_sets=(),
          metrics=(), callbacks=(), n_threads=1, init=None):
    """The rounds of a fit of ``params`` (``booster.BoostParams``) over the shards
    behind ``call`` (``n_rows`` rows in all): (the fitted ensemble, the rounds
    built, the ``TrainingState`` of its metrics and callbacks). ``seed`` keys every
    draw of a round, as in a local fit; ``eval_sets`` (``booster.EvalSet``, in
    memory) are evaluated after every round with each of ``metrics``, on
    ``n_threads`` threads of the caller's; ``callbacks`` are called around each
    round. ``init``: the ensemble a warm start continues (the shards start from its
    scores), whose round numbers go on."""
    booster.check_quant_bins(params, n_rows)
    K, P = objective.n_outputs, params.num_parallel_tree
    ensemble = (TreeEnsemble(n_features, base_score) if init is None
                else copy.deepcopy(init))
    before = ensemble.n_trees // (K * P)   # (a warm start's rounds)
    dart = None if params.dart is None else Dart(params.dart, ensemble.n_trees)
    absent = np.nan if params.absent_as_missing else 0.0   # (of a sparse eval set)
    for ev in eval_sets:
        ev.raw = ensemble.predict_raw(ev.X, n_threads, absent=absent,
                                      base_margin=ev.base_margin)
    state = TrainingState(params.n_estimators, params.learning_rate, metrics,
                          [ev.name for ev in eval_sets])
    for cb in callbacks:
        cb.before_training(state)
    n_rounds = 0
    for it in range(params.n_estimators):
        state.iteration = it
        if booster.stop_asked(callbacks, "before_iteration", state):
            break
        r = before + it   # (the round's number)
        lr = booster.round_learning_rate(state, r)
        # the round's draws, as a local fit's, for each of its P sets of K trees (a
        # forest's): the rows' (each shard draws its own), then the trees' seeds
        samples, seeds = [], []
        for p in range(P):
            draws = np.random.default_rng([seed, r] if p == 0 else [seed, r, 2, p])
            samples.append(None)
            if params.subsample < 1.0:
                samples[-1] = (params.subsample, [seed, r] if p == 0 else [seed, r, 2, p])
                draws.bit_generator.advance(n_rows)
            seeds.append(draws.integers(0, 2 ** 63, size=K, dtype=np.uint64))
        # DART's trees dropped this round (a generator of its own, as in a local fit)
        dropped = (np.empty(0, dtype=np.intp) if dart is None
                   else dart.drop(np.random.default_rng([seed, r, 1])))
        drop = None
        if dropped.size:
            factor, weight = dart.factors(dropped.size, K * P, lr)
            drop = ([ensemble.tree(t).copy() for t in dropped], ensemble.tree_class[dropped],
                    factor, weight)
        try:
            answers = call("grow", K * P, np.concatenate(seeds), lr / P,
                           samples if any(samples) else None, drop)
        except ValueError as exc:
            if booster.NOT_FINITE not in str(exc):
                raise
            raise ValueError(booster.not_finite(r, r == 0, lr)) from None
        trees = answers[0]
        for other in answers[1:]:   # (every shard grows the same trees)
            if len(other) != K * P or not all(np.array_equal(a, b)
                                              for a, b in zip(other, trees)):
                raise RuntimeError("gbtree: the shards of a fit grew different trees")
        for nodes in trees:
            booster.check_leaf_values(nodes, r, lr)
        outputs = [j % K for j in range(K * P)]
        if dart is not None:
            dart.scale(ensemble, trees, dropped, *(drop[2:] if drop else (1.0, 1.0)))
        if drop is not None:
            Dart.rescale_eval_sets(eval_sets, drop[0], drop[1], drop[2], n_threads, absent)
        for nodes, k in zip(trees, outputs):
            ensemble.add_tree(nodes, k)
        n_rounds += 1
        if booster.evaluate_round(eval_sets, trees, outputs, objective, state, callbacks,
                                  n_threads, absent):
            break
    call("finish")
    for cb in callbacks:
        cb.after_training(state)
    ensemble._flush()
    booster.settle_best(state, n_rounds, eval_sets)
    return ensemble, n_rounds, state


