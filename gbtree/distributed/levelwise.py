"""A level-wise fit (``boost``): the trainer of ``gbtree.dask`` and of out-of-core
fits, the boosting loop (``boosting.rounds``) over shards of rows
(``row_shard.RowShard``) it reaches only through ``call(method, *args)``."""
import copy

import numpy as np

from ..boosting import booster, rounds
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
        # the round's draws, as a local fit's, for each of its P sets of K trees (a
        # forest's): the rows' (each shard draws its own), then the trees' seeds
        params, K, P = self.params, self.K, self.params.num_parallel_tree
        samples, seeds = [], []
        for tree_set in range(P):
            key = ([self.seed, round_number] if tree_set == 0
                   else [self.seed, round_number, 2, tree_set])
            draws = np.random.default_rng(key)
            samples.append(None)
            if params.sampling_method == "goss":
                # (the shard draws the rows; its draws of the rest go before the seeds)
                samples[-1] = ("goss", params.top_rate, params.other_rate, key)
                n_top, n_other = booster.goss_sizes(params.top_rate, params.other_rate,
                                                    self.n_rows)
                if n_other:
                    draws.choice(self.n_rows - n_top, n_other, replace=False)
            elif params.subsample < 1.0:
                samples[-1] = (params.subsample, key)
                draws.bit_generator.advance(self.n_rows)
            seeds.append(draws.integers(0, 2 ** 63, size=K, dtype=np.uint64))
        answers = self.call("grow", K * P, np.concatenate(seeds), lr / P,
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
    booster.check_quant_bins(params, n_rows)
    ensemble = (TreeEnsemble(n_features, base_score) if init is None
                else copy.deepcopy(init))
    rows = _ShardedRows(call, params, objective.n_outputs, n_rows, seed)
    n_rounds, state = rounds.boost(rows, ensemble, objective, params, seed,
                                   ThreadBudget(n_threads), eval_sets, metrics, callbacks,
                                   np.nan if params.absent_as_missing else 0.0)
    return ensemble, n_rounds, state
