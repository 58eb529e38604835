"""The losses whose starting value and leaf values are weighted quantiles of all
rows (absolute error, quantile, Huber), over rows held by several shards of a
level-wise fit: selected exactly, with a few sums over the shards."""
import numpy as np

from ..boosting import objectives as _obj

# the losses whose starting value is a weighted quantile of y (or Huber's location) and
# whose leaf values are quantiles of their rows' residuals: the shards select them
# together (``select_quantiles``)
SELECTED = (_obj.AbsoluteError, _obj.MultiQuantile, _obj.Huber)


def select_quantiles(values, weights, groups, n_groups, alpha, sum_shards):
    """Per group, the smallest value whose cumulative weight reaches ``alpha`` of
    the group's, over every shard's rows (``objectives.grouped_weighted_quantile``
    of all of them; NaN for a group without weight); ``sum_shards(array)``: its sum
    over every shard (the same on each). A radix selection: each of eight steps
    takes the next 8 bits of the values' order-preserving keys, from the weights of
    the group's rows in each of 256 buckets, summed over the shards (one exchange)."""
    if weights is None:
        weights = np.ones(values.shape[0])
    keep = weights > 0   # (a row of weight 0 is never the answer)
    values, weights, groups = values[keep], weights[keep], groups[keep]
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    keys = np.where(negative, ~bits, bits | np.uint64(1 << 63))
    key = np.zeros(n_groups, dtype=np.uint64)
    below = np.zeros(n_groups)
    total = target = None
    for step in range(8):
        shift = np.uint64(56 - 8 * step)
        bucket = ((keys >> shift) & np.uint64(255)).astype(np.intp)
        hist = sum_shards(np.bincount(groups * 256 + bucket, weights=weights,
                                      minlength=n_groups * 256).reshape(n_groups, 256))
        if target is None:
            total = hist.sum(axis=1)
            target = alpha * total * (1 - 1e-12)
        cum = below[:, None] + np.cumsum(hist, axis=1)
        # the first bucket with rows where the cumulative weight reaches the target
        reached = (cum >= target[:, None]) & (hist > 0)
        # (or the last bucket with rows, should the sums in another order fall an
        # ulp short of the target that an earlier step's reached)
        last = 255 - (hist[:, ::-1] > 0).argmax(axis=1)
        chosen = np.where(reached.any(axis=1), reached.argmax(axis=1), last)
        at = np.arange(n_groups)
        below = cum[at, chosen] - hist[at, chosen]
        key |= chosen.astype(np.uint64) << shift
        stay = bucket == chosen[groups]
        keys, weights, groups = keys[stay], weights[stay], groups[stay]
    negative = ~(key >> np.uint64(63)).astype(bool)
    out = np.where(negative, ~key, key & np.uint64((1 << 63) - 1)).view(np.float64)
    return np.where(total > 0, out, np.nan)

