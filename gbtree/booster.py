"""The boosting loop shared by every estimator.

``train`` bins the data, sets the starting value F0, then for each round
computes gradients and hessians at the current raw prediction and grows one
tree per output on them; each tree's leaf values (times the learning rate) are
added to the raw predictions of the training rows straight from the grower's
row partition.
"""
import time
from dataclasses import dataclass

import numpy as np

from ._grower import TreeGrower
from ._typedefs import G_H_DTYPE
from .binning import BinMapper
from .tree import TreeEnsemble


@dataclass
class BoostParams:
    """Engine parameters, already validated (see sklearn.py for their meaning)."""

    n_estimators: int = 100
    learning_rate: float = 0.1
    max_depth: int = 6
    max_leaves: int = 0
    grow_policy: str = "depthwise"
    max_bin: int = 256
    min_child_weight: float = 1.0
    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    gamma: float = 0.0
    max_delta_step: float = 0.0
    verbosity: int = 0


def train(X, y, objective, params, sample_weight=None, n_threads=1, random_state=None):
    """Fit a boosted ensemble.

    Parameters
    ----------
    X : ndarray (n_rows, n_features), float32 or float64, NaN = missing
    y : ndarray (n_rows,), float64 (class codes for classifiers)
    objective : objectives.Objective
    params : BoostParams
    sample_weight : ndarray (n_rows,) or None
    n_threads : int
    random_state : numpy.random.RandomState (drives the binning subsample)

    Returns
    -------
    ensemble : TreeEnsemble
    info : dict with ``bin_seconds``, ``boost_seconds``, ``train_loss`` (if verbose)
    """
    t0 = time.perf_counter()
    mapper = BinMapper(params.max_bin, random_state=random_state).fit(X, sample_weight)
    X_binned = mapper.transform(X, n_threads)
    t1 = time.perf_counter()

    n_rows = X.shape[0]
    K = objective.n_outputs
    base = objective.init_raw(y, sample_weight)
    ensemble = TreeEnsemble(X.shape[1], base)
    raw = np.empty((n_rows, K), dtype=np.float64)
    raw[:] = base
    grad = np.empty((K, n_rows), dtype=G_H_DTYPE)
    hess = np.empty((K, n_rows), dtype=G_H_DTYPE)
    grower = TreeGrower(
        X_binned, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
        params.max_depth, params.max_leaves, params.grow_policy == "lossguide",
        params.reg_lambda, params.reg_alpha, params.min_child_weight,
        params.max_delta_step, params.gamma, n_threads,
    )
    for it in range(params.n_estimators):
        objective.gradient(y, raw, sample_weight, grad, hess, n_threads)
        for k in range(K):
            nodes = grower.grow(grad[k], hess[k], params.learning_rate, raw, k)
            ensemble.add_tree(nodes, k)
        if params.verbosity >= 2:
            print(f"[gbtree] round {it + 1}/{params.n_estimators} "
                  f"train-{objective.name}={objective.loss(y, raw, sample_weight):.6g} "
                  f"elapsed={time.perf_counter() - t0:.3f}s")
    t2 = time.perf_counter()
    info = {"bin_seconds": t1 - t0, "boost_seconds": t2 - t1}
    if params.verbosity >= 1:
        print(f"[gbtree] binning {info['bin_seconds']:.3f}s, boosting {info['boost_seconds']:.3f}s, "
              f"{ensemble.n_trees} trees, {int((ensemble.nodes['is_leaf'] == 1).sum())} leaves")
    return ensemble, info
