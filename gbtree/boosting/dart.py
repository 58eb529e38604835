"""DART (Vinayak and Gilad-Bachrach, 2015, with XGBoost's rules), the part of a
round that drops trees: which trees a round drops, and how the dropped and new
trees are scaled; the boosting loop (rounds.py) calls it."""
from typing import NamedTuple

import numpy as np

from ..predicting.tree import add_trees_to_raw


class Dropped(NamedTuple):
    """The trees a round drops: copies of them, the output each feeds, the factor
    they are scaled by after the round, the weight of the round's new trees."""

    trees: list
    outputs: np.ndarray
    factor: float
    weight: float


class Dart:
    """DART's choices during a fit (Vinayak and Gilad-Bachrach, 2015, with XGBoost's
    rules): which trees a round drops, and how the dropped and new trees are scaled.
    ``weights`` holds each tree's weight (trees of an earlier fit count 1)."""

    def __init__(self, params, n_trees):
        self.params = params
        self.weights = [1.0] * n_trees

    def drop(self, rng):
        """Indices of the trees this round drops (sorted)."""
        n, params = len(self.weights), self.params
        if n == 0 or rng.random() < params.skip_drop:
            return np.empty(0, dtype=np.intp)
        w = np.asarray(self.weights)
        prob = (params.rate_drop * n * w / w.sum() if params.sample_type == "weighted"
                else np.full(n, params.rate_drop))
        drop = np.flatnonzero(rng.random(n) < prob)
        if drop.size == 0 and params.one_drop:
            pick = (rng.choice(n, p=w / w.sum()) if params.sample_type == "weighted"
                    else rng.integers(n))
            drop = np.array([pick], dtype=np.intp)
        return drop

    def factors(self, n_drop, n_new, learning_rate):
        """(the factor of the dropped trees, the weight of the new ones)."""
        if n_drop == 0:
            return 1.0, 1.0
        lr = learning_rate / n_new
        if self.params.normalize_type == "forest":
            return 1.0 / (1.0 + lr), 1.0 / (1.0 + lr)
        return n_drop / (n_drop + lr), 1.0 / (n_drop + lr)

    def scale(self, ensemble, trees, dropped, factor, weight):
        """A round's scaling: the new ``trees``' values by ``weight``, the ``dropped``
        trees of ``ensemble`` by ``factor``; the trees' weights follow."""
        if dropped.size:
            for nodes in trees:
                nodes["value"] *= weight
            ensemble.scale_trees(dropped, factor)
            for t in dropped:
                self.weights[t] *= factor
        self.weights += [weight] * len(trees)

    @staticmethod
    def rescale_eval_sets(eval_sets, drop, n_threads, absent):
        """The eval sets' raw scores with the ``drop``ped trees scaled by its factor."""
        for ev in eval_sets:
            gone = np.zeros_like(ev.raw)
            add_trees_to_raw(ev.X, drop.trees, drop.outputs, gone, n_threads, absent=absent)
            ev.raw += (drop.factor - 1.0) * gone
