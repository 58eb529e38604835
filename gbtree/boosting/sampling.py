"""The random draws of a round, in one order for every fit: per set of trees (one
per output; a forest has several sets a round), from the generator of
``round_key``, the rows the set grows on (uniform subsample or GOSS), then the
trees' seeds. A fit in memory draws them here (``draws``); a level-wise fit's
client draws the seeds in the same order while each shard draws its rows
(``shard_draws``): row r of the data draws the r-th number, wherever it is held."""
import numpy as np


def round_key(seed, round_number, tree_set=0):
    """The key of the generator of set ``tree_set`` of a round's trees."""
    return [seed, round_number] if tree_set == 0 else [seed, round_number, 2, tree_set]


def draws(params, rng, grad, hess, sample_weight, needs_refit):
    """The random draws of one set of trees (one per output), in this order: the rows
    they grow on (None: all) and those left out (or None), the weights of the leaf
    refit (GOSS's amplified rows weigh more), the trees' seeds."""
    n_rows, K = grad.shape[1], grad.shape[0]
    rows, amplified = sample_rows(params, rng, n_rows, grad, hess)
    left_out = None
    if rows is not None:
        keep = np.zeros(n_rows, dtype=bool)
        keep[rows] = True
        left_out = np.flatnonzero(~keep).astype(np.uint32)
    refit_weight = sample_weight
    if amplified is not None and needs_refit:
        refit_weight = np.ones(n_rows) if sample_weight is None else sample_weight.copy()
        refit_weight[amplified] *= (1.0 - params.top_rate) / params.other_rate
    return rows, left_out, refit_weight, rng.integers(0, 2 ** 63, size=K, dtype=np.uint64)


def sample_rows(params, rng, n_rows, grad, hess):
    """Rows for this round's trees (None = all) and the GOSS-amplified ones.

    ``subsample < 1``: each row kept with that probability (Friedman's stochastic
    boosting). GOSS: the ``top_rate`` share with the largest |gradient| (summed over
    outputs) plus a uniform ``other_rate`` share of the rest, whose gradients and
    hessians are multiplied by ``(1 - top_rate) / other_rate`` (in place).
    """
    if params.sampling_method == "goss":
        return goss_rows(params.top_rate, params.other_rate, rng, grad, hess)
    if params.subsample < 1.0:
        rows = np.flatnonzero(rng.random(n_rows) < params.subsample).astype(np.uint32)
        if rows.shape[0] == 0:
            rows = np.array([rng.integers(n_rows)], dtype=np.uint32)
        return rows, None
    return None, None


def goss_sizes(top_rate, other_rate, n_rows):
    """GOSS's (rows of the largest gradients, rows drawn from the rest) of ``n_rows``;
    (0, 0) when they would be every row (no sample)."""
    n_top, n_other = max(1, int(top_rate * n_rows)), int(other_rate * n_rows)
    return (0, 0) if n_top + n_other >= n_rows else (n_top, n_other)


def goss_rows(top_rate, other_rate, rng, grad, hess):
    """GOSS's rows (None: all) and the amplified ones (those drawn from the rest,
    whose gradients and hessians, shape (outputs, rows), are multiplied in place by
    ``(1 - top_rate) / other_rate``); ``rng`` draws ``goss_sizes``' second number of
    the rest."""
    n_top, n_other = goss_sizes(top_rate, other_rate, grad.shape[1])
    if n_top == 0:
        return None, None
    score = np.abs(grad).sum(axis=0)
    by_size = np.argpartition(-score, n_top - 1)
    top, rest = by_size[:n_top], by_size[n_top:]
    other = rng.choice(rest, n_other, replace=False) if n_other else rest[:0]
    factor = (1.0 - top_rate) / other_rate
    grad[:, other] *= factor
    hess[:, other] *= factor
    return np.sort(np.concatenate([top, other])).astype(np.uint32), other


def shard_draws(params, seed, round_number, n_rows, K):
    """A level-wise round's draws: per set of trees, what its shards draw the rows
    from (None: every row; (subsample, key); ("goss", top_rate, other_rate, key)),
    and the seeds of the round's trees, the ones ``draws`` gives in memory."""
    samples, seeds = [], []
    for tree_set in range(params.num_parallel_tree):
        key = round_key(seed, round_number, tree_set)
        rng = np.random.default_rng(key)
        samples.append(None)
        if params.sampling_method == "goss":
            # (each shard draws the rows; the draws of the rest go before the seeds)
            samples[-1] = ("goss", params.top_rate, params.other_rate, key)
            n_top, n_other = goss_sizes(params.top_rate, params.other_rate, n_rows)
            if n_other:
                rng.choice(n_rows - n_top, n_other, replace=False)
        elif params.subsample < 1.0:
            samples[-1] = (params.subsample, key)
            rng.bit_generator.advance(n_rows)
        seeds.append(rng.integers(0, 2 ** 63, size=K, dtype=np.uint64))
    return samples, np.concatenate(seeds)
