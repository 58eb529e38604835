"""A level-wise fit (``boost``): the trainer of ``gbtree.dask`` and of out-of-core
fits, the boosting loop (``boosting.rounds``) over shards of rows
(``row_shard.RowShard``) it reaches only through ``call(method, *args)``."""
import copy

import numpy as np

from ..boosting import booster, rounds, sampling
from ..kernels._threads import ThreadBudget
from ..predicting.tree import TreeEnsemble


class _ShardedRows:
    """The rows of a level-wise fit, in shards, for the boosting loop: every shard
    grows the round's trees on its rows, the shards' histograms summed."""

    training_loss = None   # (held in parts; the log shows the eval sets)

    def __init__(self, call, params, K, n_rows, seed):
        self.call, self.params, self.K, self.n_rows, self.seed = call, params, K, n_rows, seed
        self.n_threads = 1

    def grow_round(self, round_number, lr, drop):
        K, P = self.K, self.params.num_parallel_tree
        samples, seeds = sampling.shard_draws(self.params, self.seed, round_number,
                                              self.n_rows, K)
        answers = self.call("grow", K * P, seeds, lr / P,
                            samples if any(samples) else None, drop)
        trees = answers[0]
        for other in answers[1:]:   # (every shard grows the same trees)
            if len(other) != K * P or not all(np.array_equal(a, b)
                                              for a, b in zip(other, trees)):
                raise RuntimeError("gbtree: the shards of a fit grew different trees")
        return trees

    def round_done(self, trees, outputs, drop):
        pass   # (the shards scale their rows' scores as they grow)

    def not_finite(self, round_number, lr):
        return rounds.not_finite(round_number, lr)

    def finish(self):
        self.call("finish")


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
    params = booster.check_quant_bins(params, n_rows)
    ensemble = (TreeEnsemble(n_features, base_score) if init is None
                else copy.deepcopy(init))
    rows = _ShardedRows(call, params, objective.n_outputs, n_rows, seed)
    n_rounds, state = rounds.boost(rows, ensemble, objective, params, seed,
                                   ThreadBudget(n_threads), eval_sets, metrics, callbacks,
                                   np.nan if params.absent_as_missing else 0.0)
    return ensemble, n_rounds, state
