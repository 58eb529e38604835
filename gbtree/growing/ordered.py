"""Ordered boosting (``boosting_type="ordered"``): CatBoost's answer to prediction
shift (Prokhorenkova et al., "CatBoost: unbiased boosting with categorical
features", 2018).

In plain boosting the gradient of a row is taken at a model fitted on that same
row, so the trees chase the training rows' noise. Ordered boosting takes each
row's gradient from a model that has not seen the row. ``permutation_count``
random orders of the rows are drawn once per fit; for each order and each
``k >= 0`` a supporting model is kept, boosted on the first ``2**k`` rows of the
order only (the paper's prefixes of doubling length). A row at position
``p >= 1`` of an order reads the supporting model of the largest prefix
``2**k <= p``, which holds only rows before it; the row at position 0 reads the
starting score. Each tree:

1. picks one order at random and grows its structure (any ``grow_policy``) on
   the gradients the rows read from that order's supporting models;
2. takes its leaf values and covers from the gradients of the model being built
   (every row, as plain boosting does), which is what ``predict`` adds;
3. adds the same structure to every supporting model of every order, each leaf
   valued from that prefix's rows alone (a Newton step on them).

It costs about ``permutation_count`` times two gradient passes more per tree
than plain boosting and ``4 * permutation_count`` floats a row; it is meant for
small data sets (up to some tens of thousands of rows), where the shift matters.
"""
import numpy as np

from ..kernels._splitting import leaf_weights
from .grower_params import check_pairs


class OrderedBoosting:
    """A grower whose trees take their structure from ordered gradients.

    Wraps ``grower`` (a ``TreeGrower``, ``SymmetricGrower``, ...: anything with
    ``grow`` and ``leaf_rows``) for one output. ``objective``, ``y`` and
    ``sample_weight`` give the gradients; ``start`` (n_rows,) is each row's
    starting raw score (``base_score`` or the row's offset); ``params`` a
    ``GrowerParams`` (the leaves' regularisation); ``permutation_count`` orders
    drawn from ``seed``.
    """

    def __init__(self, grower, objective, y, sample_weight, start, params, permutation_count,
                 seed, n_threads):
        if (objective.n_outputs != 1 or objective.needs_refit
                or objective.task not in ("regression", "binary", "survival-aft")):
            raise ValueError(f"boosting_type='ordered' needs a loss of one output whose rows' "
                             f"gradients are their own (squared error, logistic, Poisson, "
                             f"gamma, Tweedie, AFT, custom), without leaf refits; got "
                             f"{objective.name!r}")
        if permutation_count < 1:
            raise ValueError(f"permutation_count must be >= 1, got {permutation_count}")
        self.inner, self.objective, self.params = grower, objective, params
        self.n_threads = n_threads
        self.y, self.w = y, sample_weight
        n = self.n_rows = y.shape[0]
        rng = np.random.default_rng([seed, 0x0DE])
        self.orders = [rng.permutation(n) for _ in range(permutation_count)]
        self.start = np.asarray(start, dtype=np.float64)
        # the prefix each position reads (-1: position 0, the starting score)
        self.prefix = np.full(n, -1, dtype=np.intp)
        if n > 1:
            self.prefix[1:] = np.floor(np.log2(np.arange(1, n))).astype(np.intp)
        n_prefixes = int(self.prefix[-1]) + 1 if n > 1 else 0
        # supporting[r][k]: the scores of prefix model k on the first min(2**(k+1), n)
        # positions of order r (its own rows, then the rows that read it)
        self.supporting = [[self.start[order[:min(2 ** (k + 1), n)]].copy()
                            for k in range(n_prefixes)] for order in self.orders]
        self._leaf_rows = None

    @property
    def n_threads(self):
        """The threads of the next tree (those of the grower it wraps)."""
        return self.inner.n_threads

    @n_threads.setter
    def n_threads(self, n):
        self.inner.n_threads = n

    def _gradients(self, rows, raw):
        """(grad, hess), float64, of ``rows`` at raw scores ``raw`` (one per row)."""
        pairs = np.empty((1, rows.shape[0], 2), dtype=np.float32)
        w = None if self.w is None else self.w[rows]
        self.objective.gradient(self.y[rows], np.ascontiguousarray(raw[:, None]), w,
                                pairs[:, :, 0], pairs[:, :, 1], 1)
        return pairs[0, :, 0].astype(np.float64), pairs[0, :, 1].astype(np.float64)

    def ordered_scores(self, r):
        """Each row's score under the supporting model it reads in order ``r``."""
        order, out = self.orders[r], np.empty(self.n_rows)
        out[order[0]] = self.start[order[0]]
        for k, scores in enumerate(self.supporting[r]):
            lo, hi = 2 ** k, min(2 ** (k + 1), self.n_rows)
            out[order[lo:hi]] = scores[lo:hi]
        return out

    def _values(self, sums_g, sums_h, learning_rate):
        return learning_rate * leaf_weights(sums_g, sums_h, *self.params.penalties)

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        """Grow one tree: its structure from the ordered gradients of a random order,
        its values and covers from ``pairs`` (1, n_rows, 2) (the model's own, every
        row), added to ``raw[:, output]``; then the supporting models take it.
        Returns ``[the tree]``."""
        if sample is not None:
            raise ValueError("boosting_type='ordered' grows every tree on every row (no "
                             "subsample or GOSS)")
        n = self.n_rows
        check_pairs(pairs.shape, n, 1)
        r = int(np.random.default_rng(seed).integers(len(self.orders)))
        g_ord, h_ord = self._gradients(np.arange(n), self.ordered_scores(r))
        ordered = np.empty((1, n, 2), dtype=np.float32)
        ordered[0, :, 0], ordered[0, :, 1] = g_ord, h_ord
        nodes = self.inner.grow(ordered, learning_rate, np.zeros((n, 1)), 0, None, seed)[0]
        rows, starts, ends = self.inner.leaf_rows()
        leaf_of = self._leaf_of(nodes, rows, starts, ends)
        # the model's values and covers: its own gradients on every row
        g, h = pairs[0, :, 0].astype(np.float64), pairs[0, :, 1].astype(np.float64)
        sums_g, sums_h = self._node_sums(nodes, leaf_of, g, h)
        nodes["value"] = self._values(sums_g, sums_h, learning_rate)
        nodes["cover"] = sums_h
        raw[:, output] += nodes["value"][leaf_of]
        self._update_supporting(nodes, leaf_of, learning_rate)
        self._leaf_rows = (rows, starts, ends)
        return [nodes]

    @staticmethod
    def _leaf_of(nodes, rows, starts, ends):
        """Each row's leaf (node index) from the grower's partition."""
        leaf_of = np.empty(rows.shape[0], dtype=np.intp)
        for i in np.flatnonzero(nodes["is_leaf"]):
            leaf_of[rows[starts[i]:ends[i]]] = i
        return leaf_of

    @staticmethod
    def _node_sums(nodes, leaf_of, g, h):
        """(sum of g, sum of h) of every node's rows: the leaves' sums, then each inner
        node's from its children (children come after their parents)."""
        m = nodes.shape[0]
        sums_g = np.bincount(leaf_of, weights=g, minlength=m)
        sums_h = np.bincount(leaf_of, weights=h, minlength=m)
        for i in range(m - 1, -1, -1):
            if not nodes["is_leaf"][i]:
                sums_g[i] = sums_g[nodes["left"][i]] + sums_g[nodes["right"][i]]
                sums_h[i] = sums_h[nodes["left"][i]] + sums_h[nodes["right"][i]]
        return sums_g, sums_h

    def _update_supporting(self, nodes, leaf_of, learning_rate):
        """Every supporting model adds the tree, its leaves valued from its prefix."""
        m, n = nodes.shape[0], self.n_rows
        for order, models in zip(self.orders, self.supporting):
            leaves = leaf_of[order]            # by position
            for k, scores in enumerate(models):
                size = 2 ** k
                g, h = self._gradients(order[:size], scores[:size])
                values = self._values(np.bincount(leaves[:size], weights=g, minlength=m),
                                      np.bincount(leaves[:size], weights=h, minlength=m),
                                      learning_rate)
                scores += values[leaves[:min(2 * size, n)]]

    def node_bounds(self):
        """``(lower, upper)`` bounds on each node's weight in the last tree: none."""
        n = self._leaf_rows[1].shape[0]
        return np.full(n, -np.inf), np.full(n, np.inf)

    def leaf_rows(self):
        """As ``TreeGrower.leaf_rows``, for the last tree."""
        return self._leaf_rows
