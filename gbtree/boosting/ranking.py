"""The ranking losses over query groups (LambdaMART, RankNet, MAP); their kernel is
kernels/_ranking.pyx."""
import copy

import numpy as np

from ..kernels import _ranking
from .objectives import Objective


MAX_EXP_GAIN_LABEL = 31
"""Largest label the exponential gain ``2^y - 1`` accepts (as LightGBM's default label_gain)."""


class Ranking(Objective):
    """Pairwise ranking losses over query groups (LambdaMART / RankNet); kernel in _ranking.pyx.

    ``group_ptr`` holds the ``n_groups + 1`` row offsets of the groups in the
    (query-sorted) training rows. ``kind``: ``"pairwise"`` (RankNet: every pair
    of documents with different labels, weight 1), ``"ndcg"`` (LambdaMART:
    weight ``|delta NDCG|`` of swapping the pair's ranks, gain ``2^y - 1`` or
    ``y``, ideal DCG at ``truncation_level``), ``"map"`` (weight ``|delta AP|``,
    relevant meaning ``y > 0``). Pairs: those whose better-ranked document is
    among the top ``truncation_level`` by the current score, or with
    ``num_pair_per_sample`` set, that many partners per document drawn among
    the other labels of its group (seeded by ``seed`` and the round). ``norm``:
    LightGBM's and XGBoost's lambdarank normalisation (see ``_ranking.pyx``).
    F0 is 0: a ranking does not depend on a constant.
    """

    name = "ranking"
    task = "ranking"
    needs_groups = True
    default_metric = "ndcg@10"
    summable_start = True
    group_ids = None   # see ``for_groups``

    def __init__(self, group_ptr, kind="ndcg", truncation_level=30, num_pair_per_sample=None,
                 norm=True, exp_gain=True, seed=0):
        if kind not in _ranking.KINDS:
            raise ValueError(f"kind must be one of {tuple(_ranking.KINDS)}, got {kind!r}")
        self.group_ptr = np.ascontiguousarray(group_ptr, dtype=np.intp)
        self.kind = kind
        self.name = f"rank:{kind}"
        if kind == "map":
            self.default_metric = "map@10"
        self.truncation_level = int(truncation_level)
        self.num_pair_per_sample = num_pair_per_sample
        self.norm = bool(norm)
        self.exp_gain = bool(exp_gain)
        self.seed = int(seed)
        self._round = 0

    def continue_from(self, fitted):
        self._round = fitted._round   # pair sampling goes on with the next round's draws

    def check_target(self, y):
        if not np.all(np.isfinite(y)):
            raise ValueError(f"objective='{self.name}' needs finite labels")
        if self.kind == "pairwise":
            return
        if np.any(y < 0) or np.any(y != np.round(y)):
            bad = y[(y < 0) | (y != np.round(y))][:5]
            raise ValueError(f"objective='{self.name}' needs non-negative integer relevance "
                             f"labels, got {bad!r}")
        if self.kind == "ndcg" and self.exp_gain and y.size and y.max() > MAX_EXP_GAIN_LABEL:
            raise ValueError(f"objective='rank:ndcg' with the exponential gain 2^y - 1 accepts "
                             f"labels up to {MAX_EXP_GAIN_LABEL}, got {y.max():g}; use "
                             f"ndcg_exp_gain=False (linear gain) for larger labels")

    def init_raw(self, y, sample_weight):
        return np.zeros(1)

    def start_sums(self, y, sample_weight):
        return np.zeros(1)

    def start_from_sums(self, sums):
        return np.zeros(1)

    def for_groups(self, group_ptr, group_ids):
        """This loss over some of the training groups (a shard's or a block's):
        ``group_ptr`` their row offsets there, ``group_ids`` their numbers among all
        groups, which seed their pair sampling as in a fit over all of them."""
        part = copy.copy(self)
        part.group_ptr = np.ascontiguousarray(group_ptr, dtype=np.intp)
        part.group_ids = np.ascontiguousarray(group_ids, dtype=np.int64)
        part._last_ranking = None
        return part

    def _last_ranking_of(self, n_rows):
        """The buffer in which the ranking kernel keeps each group's ranking between
        rounds (of these training rows: no part of the loss's ``state``). It only speeds
        up sorting: the gradients are the same whatever it holds."""
        last = getattr(self, "_last_ranking", None)
        if last is None or last.shape[0] != n_rows:
            last = self._last_ranking = np.full(n_rows, -1, dtype=np.int32)
        return last

    def gradient(self, y, raw, sample_weight, grad, hess, n_threads):
        weighted = sample_weight is not None
        w = sample_weight if weighted else np.empty(1, dtype=np.float64)
        n_pair = 0 if self.num_pair_per_sample is None else int(self.num_pair_per_sample)
        # a fresh, thread-independent seed per round for the pair sampling
        seed = (self.seed * 1_000_003 + self._round * 7_919 + 1) % (1 << 63)
        self._round += 1
        _ranking.ranking_grad(y, raw, w, weighted, self.group_ptr, grad, hess, n_threads,
                              _ranking.KINDS[self.kind], self.truncation_level, self.exp_gain,
                              self.norm, n_pair, seed, self._last_ranking_of(y.shape[0]),
                              self.group_ids)

    def loss(self, y, raw, sample_weight=None):
        """RankNet loss ``log(1 + exp(-(s_i - s_j)))`` averaged over all pairs ``y_i > y_j``."""
        total, count = 0.0, 0
        for lo, hi in zip(self.group_ptr[:-1], self.group_ptr[1:]):
            yy, s = y[lo:hi], raw[lo:hi, 0]
            # blocks of rows against the whole query: memory O(block x query size),
            # not the square of a large query's size
            for b in range(0, hi - lo, _PAIR_BLOCK):
                yb, sb = yy[b:b + _PAIR_BLOCK, None], s[b:b + _PAIR_BLOCK, None]
                better = yb > yy[None, :]
                total += float(np.logaddexp(0.0, s[None, :] - sb)[better].sum())
                count += int(better.sum())
        return total / count if count else 0.0

    def transform(self, raw):
        return raw[:, 0]


# rows of a query whose pairs the logged ranking loss takes at once
_PAIR_BLOCK = 512
