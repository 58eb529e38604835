"""Column sampling of the growers written in Python (``vector_grower``, ``exact``):
the features a tree, each depth level and each node may split on
(``colsample_bytree``, ``colsample_bylevel``, ``colsample_bynode``, drawn with
``feature_weights``), from one seed per tree. (``_grower.TreeGrower`` draws its
own in C.)"""
import numpy as np


def sample_features(among, fraction, weights, rng):
    """A random subset (bool mask) of the features in ``among``: ``max(1, floor(
    fraction * n))`` of its n features, without replacement, with probability
    proportional to ``weights`` (Efraimidis-Spirakis keys; None: equal)."""
    cand = np.flatnonzero(among if weights is None else among & (weights > 0))
    k = max(1, int(fraction * cand.size))
    out = np.zeros(among.shape[0], dtype=bool)
    if k >= cand.size:
        out[cand] = True
        return out
    w = 1.0 if weights is None else weights[cand]
    keys = np.log(rng.random(cand.size)) / w
    out[cand[np.argsort(-keys, kind="stable")[:k]]] = True
    return out


class ColumnSampler:
    """The column sample of one tree: ``mask(depth)`` is the uint8 mask of the
    features a node at that depth may split on (a new draw per call with
    ``colsample_bynode``), or None when every feature may."""

    def __init__(self, n_features, params, seed):
        w = params.feature_weights
        self.weights = None if w is None else np.asarray(w, dtype=np.float64)
        self.p = params
        self.active = (params.colsample_bytree < 1.0 or params.colsample_bylevel < 1.0
                       or params.colsample_bynode < 1.0 or w is not None)
        self.rng = np.random.default_rng(seed)
        self.tree = None
        if self.active:
            self.tree = sample_features(np.ones(n_features, dtype=bool),
                                        params.colsample_bytree, self.weights, self.rng)
        self.levels = []

    def mask(self, depth):
        if not self.active:
            return None
        p = self.p
        while len(self.levels) <= depth:
            self.levels.append(sample_features(self.tree, p.colsample_bylevel, None, self.rng)
                               if p.colsample_bylevel < 1.0 else self.tree)
        m = self.levels[depth]
        if p.colsample_bynode < 1.0:
            m = sample_features(m, p.colsample_bynode, None, self.rng)
        return m.astype(np.uint8)
