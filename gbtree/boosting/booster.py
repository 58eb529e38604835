"""A fit in memory (``train``): the data binned, the starting value F0, the grower,
and the rows' part of each round of the boosting loop (``rounds.boost``): the
gradients and hessians at the current raw scores, the round's draws (subsample,
GOSS, a forest's trees), one tree per output grown on them, each tree's leaf
values (times the learning rate) added to the training rows' raw scores straight
from the grower's row partition. Objectives that refit leaves (absolute error,
quantile, Huber) replace the Newton values by their line search on the same
partition.
"""
import copy
import numbers
import time
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..kernels._threads import ThreadBudget, max_threads
from ..kernels._typedefs import G_H_DTYPE
from ..data.binning import BinMapper, canonical_csr, kernel_array
from . import rounds, sampling
from .logs import LOGGER
from .rounds import not_finite
from ..growing._lanes import run_in_lanes
from ..growing.growers import make_grower
from ..predicting.tree import TreeEnsemble, add_tree_binned_rows, add_trees_to_raw


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
    log_period: int = 10
    subsample: float = 1.0
    sampling_method: str = "uniform"
    top_rate: float = 0.2
    other_rate: float = 0.1
    colsample_bytree: float = 1.0
    colsample_bylevel: float = 1.0
    colsample_bynode: float = 1.0
    feature_weights: object = None
    interaction_constraints: object = None
    monotone_constraints: object = None
    absent_as_missing: bool = False
    grad_quant_bins: int = 0    # 0: float gradients
    grad_quant_auto: bool = False   # the levels are the default's: float where rows are too many
    dart: object = None         # DartParams, or None: plain boosting
    num_parallel_tree: int = 1
    multi_strategy: str = "one_output_per_tree"   # or "multi_output_tree": vector leaves
    tree_method: str = "hist"   # or "exact", "approx"
    approx_parts: int = 255     # approx: each feature's rows cut into that many parts
    approx_proposal: str = "global"   # approx: candidates per tree ("global") or per node
    boosting_type: str = "plain"      # or "ordered": CatBoost's ordered boosting
    permutation_count: int = 4        # ordered: the random orders of the rows
    seed: int = 0


@dataclass
class DartParams:
    rate_drop: float = 0.0
    skip_drop: float = 0.0
    one_drop: bool = False
    normalize_type: str = "tree"
    sample_type: str = "uniform"


class EvalSet:
    """A validation data set and its running raw predictions.

    ``group_ptr`` (ranking): the ``n_groups + 1`` row offsets of its queries,
    rows sorted by query; ranking metrics need it.
    """

    def __init__(self, name, X, y, sample_weight, group_ptr=None, base_margin=None):
        self.name, self.X = name, X
        self.y, self.sample_weight = kernel_array(y), kernel_array(sample_weight)
        self.group_ptr = group_ptr
        self.base_margin = base_margin   # (n_rows, n_outputs) starting raw scores, or None
        self.raw = None


class _BinnedRows:
    """The training rows as the histogram growers see them, binned: the raw scores
    of trees on them, from each tree's bin thresholds."""

    def __init__(self, X_binned, missing_bin, n_threads):
        self.X, self.missing_bin, self.n_threads = X_binned, missing_bin, n_threads

    def scores(self, ensemble, base_margin):
        """The ensemble's raw scores of every row, shape (n_rows, n_outputs)."""
        return ensemble.predict_raw_binned(self.X, self.missing_bin, self.n_threads,
                                           base_margin)

    def add(self, nodes, rows, raw, k):
        """``raw[rows, k] += tree(rows)``."""
        add_tree_binned_rows(self.X, self.missing_bin, nodes, rows, raw, k, self.n_threads)

    def contributions(self, trees, outputs, K):
        """The sum of ``trees`` (each adding to output ``outputs[j]``) on every row."""
        ens = TreeEnsemble(self.X.shape[1], np.zeros(K))
        for nodes, k in zip(trees, outputs):
            ens.add_tree(nodes, int(k))
        return ens.predict_raw_binned(self.X, self.missing_bin, self.n_threads)


class _RawRows(_BinnedRows):
    """The training rows by their raw values: for trees whose thresholds are not
    bin edges (``tree_method="exact"``)."""

    def __init__(self, X, absent, n_threads):
        self.X, self.absent, self.n_threads = X, absent, n_threads

    def scores(self, ensemble, base_margin):
        return ensemble.predict_raw(self.X, self.n_threads, absent=self.absent,
                                    base_margin=base_margin)

    def add(self, nodes, rows, raw, k):
        values = np.zeros((rows.shape[0], raw.shape[1]))
        add_trees_to_raw(self.X[rows], [nodes], [k], values, self.n_threads, self.absent)
        raw[rows, k] += values[:, k]

    def contributions(self, trees, outputs, K):
        out = np.zeros((self.X.shape[0], K))
        add_trees_to_raw(self.X, trees, outputs, out, self.n_threads, self.absent)
        return out


def _on_bin_edges(ensemble, mapper):
    """Whether every split of the ensemble is at a bin edge of ``mapper`` (its
    trees route the binned rows as the raw ones)."""
    nodes = ensemble.nodes
    inner = nodes["is_leaf"] == 0
    f, b = nodes["feature"][inner], nodes["bin_threshold"][inner].astype(np.int64)
    if np.any(b >= mapper.n_bins_[f]):
        return False
    return bool(np.all(mapper.bin_thresholds()[mapper.bin_offsets_[f] + b]
                       == nodes["threshold"][inner]))


def _refit(objective, grower, nodes, y, raw, raw_before, sample_weight, k, learning_rate,
           residual_base=None):
    """Replace the Newton leaf values by the objective's line search on each leaf's rows
    (the rows the tree was grown on) and update their raw predictions: ``raw_before``
    (output k before this tree) plus the new values. The line search fits the
    residuals of ``residual_base`` (default ``raw_before``; the round's start for the
    parallel trees of a forest)."""
    rows, starts, ends = grower.leaf_rows()
    leaves = np.flatnonzero(nodes["is_leaf"])
    order = np.argsort(starts[leaves])   # leaf segments tile the partition array
    leaf_of_pos = np.empty(rows.shape[0], dtype=np.intp)
    leaf_of_pos[:] = np.repeat(order.astype(np.intp), (ends - starts)[leaves][order])
    before = raw_before[rows]
    base = before if residual_base is None else residual_base[rows]
    w = None if sample_weight is None else sample_weight[rows]
    best = objective.refit_leaves(y[rows], base, w, leaf_of_pos, leaves.shape[0], k)
    values = nodes["value"][leaves]
    refit = ~np.isnan(best)   # a leaf whose rows all have zero weight keeps its value
    # within the bounds of monotone constraints (infinite without them), which keep
    # every tree monotone whatever values its leaves take inside them
    lower, upper = grower.node_bounds()
    best = np.clip(best, lower[leaves], upper[leaves])
    values[refit] = learning_rate * best[refit]
    nodes["value"][leaves] = values
    raw[rows, k] = before + values[leaf_of_pos]


def check_quant_bins(params, n_rows):
    """``params`` for a fit of ``n_rows`` rows: the integer sums of a histogram entry
    must stay below 2**31, so levels that are too many raise a ValueError, or, when
    they are the default's (``grad_quant_auto``), give way to float gradients."""
    if params.grad_quant_bins and n_rows * (params.grad_quant_bins + 1) >= 2 ** 31:
        if params.grad_quant_auto:
            return replace(params, grad_quant_bins=0)
        raise ValueError(f"grad_quant_bins={params.grad_quant_bins} is too large for "
                         f"{n_rows} rows: the integer sums must stay below 2**31, so "
                         f"grad_quant_bins must be <= {(2 ** 31 - 1) // n_rows - 1}")
    return params


def _grow_set(grower, vector_leaves, pairs, learning_rate, raw, rows, seeds, gains=None,
              lanes=()):
    """The trees of one set, as (output, nodes): one tree per output, each grown when
    the caller asks for it (after it has finished the one before), or the K trees
    of one tree whose leaves hold a vector. With ``gains`` (K, n_rows, 1), tree k
    writes its values to ``gains[k]`` instead of adding them to ``raw[:, k]``; then,
    with ``lanes`` (growers of one thread each, see ``_InMemoryRows._lanes``), the
    first trees, as many as fill every lane, grow at once, one a lane
    (``run_in_lanes``), and the rest one at a time on ``grower``'s threads."""
    K = pairs.shape[0]
    at_once = K - K % len(lanes) if gains is not None and len(lanes) > 1 else 0

    def grow_one(lane, k):
        gains[k] = 0.0
        return lane.grow(pairs[k:k + 1], learning_rate, gains[k], 0, rows, seeds[k])[0]

    if at_once:
        yield from enumerate(_grow_at_once(grower, lanes, grow_one, at_once))
    for first, end in [(0, K)] if vector_leaves else [(k, k + 1) for k in range(at_once, K)]:
        if gains is None:
            trees = grower.grow(pairs[first:end], learning_rate, raw, first, rows, seeds[first])
        else:
            gains[first] = 0.0
            trees = grower.grow(pairs[first:end], learning_rate, gains[first], 0, rows,
                                seeds[first])
        yield from zip(range(first, end), trees)


def _grow_at_once(grower, lanes, grow_one, n_trees):
    """``grow_one(lane, i)`` for i < ``n_trees`` (at most ``len(lanes)`` at once, one
    a lane, each lane on one thread; a tree alone on ``grower``'s threads), as
    ``run_in_lanes``; ``grower`` (``lanes[0]``) has its threads back after."""
    n_threads = grower.n_threads
    if n_trees > 1:
        for lane in lanes:
            lane.n_threads = 1
    try:
        return run_in_lanes(grow_one, list(lanes[:n_trees]), n_trees)
    finally:
        grower.n_threads = n_threads


def _loss_on(objective, y, raw, sample_weight, rows):
    """The objective's weighted mean loss on ``rows`` (the out-of-bag rows); NaN when
    they have no weight: none is out of bag, or all weigh 0."""
    w = None if sample_weight is None else sample_weight[rows]
    if rows.shape[0] == 0 or (w is not None and not w.sum() > 0):
        return np.nan
    return objective.loss(y[rows], raw[rows], w)


def _check_arrays(X, y, sample_weight, n_threads, infinite_y=False):
    """``train``'s own preconditions (the estimators check the user's input before)."""
    if not (sp.issparse(X) or (isinstance(X, np.ndarray) and X.ndim == 2)):
        raise TypeError(f"X must be a 2-d ndarray or a scipy.sparse matrix, got "
                        f"{type(X).__name__}")
    for name, a in (("y", y), ("sample_weight", sample_weight)):
        if name == "sample_weight" and a is None:
            continue
        if not (isinstance(a, np.ndarray) and a.dtype == np.float64
                and a.shape[:1] == (X.shape[0],) and (a.ndim == 1 or (name == "y" and a.ndim == 2))):
            raise ValueError(f"{name} must be a float64 ndarray of shape ({X.shape[0]},), got "
                             f"{getattr(a, 'dtype', type(a).__name__)} of shape "
                             f"{getattr(a, 'shape', None)}")
        if not (np.isfinite(a).all() or (name == "y" and infinite_y and not np.isnan(a).any())):
            raise ValueError(f"{name} must be finite")
    if (isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral)
            or not 1 <= n_threads <= max_threads()):
        raise ValueError(f"n_threads must be an integer in 1..{max_threads()}, got {n_threads!r}")


class _InMemoryRows:
    """The rows of a fit in memory, for the boosting loop (``rounds.boost``): each
    round's gradients, draws and trees, the rows' raw scores updated from the
    grower's partition (leaf refits, the rows left out of a sample, DART), and the
    out-of-bag losses of row subsampling."""

    def __init__(self, grower, training_rows, objective, params, y, sample_weight, raw):
        self.grower, self.training_rows, self.objective = grower, training_rows, objective
        self.params, self.y, self.sample_weight, self.raw = params, y, sample_weight, raw
        K, n_rows = objective.n_outputs, y.shape[0]
        # (gradient, hessian) pairs: the histogram kernels read each output's rows in place
        self.pairs = np.empty((K, n_rows, 2), dtype=G_H_DTYPE)
        self.oob = (params.subsample < 1.0 and params.sampling_method == "uniform"
                    and params.num_parallel_tree == 1)
        self.oob_improvement, self.oob_scores = [], []
        # several outputs, one tree each a round, no refit: each tree's values go to a
        # contiguous row of ``gains``, added to the (n_rows, K) scores once a round
        # (a tree adding to its column of them would touch a cache line per row)
        self.gains = (np.empty((K, n_rows, 1)) if K > 1 and params.num_parallel_tree == 1
                      and not objective.needs_refit
                      and params.multi_strategy != "multi_output_tree" else None)
        self.training_loss = lambda: (objective.name, objective.loss(y, self.raw, sample_weight))
        self._twins, self._lane_values = [], None

    def _lanes(self):
        """The growers of a round whose trees grow at once, one a thread: the grower
        and its twins (``twin``: the same binned rows, buffers of their own), one
        per thread up to one per tree of the round, each on one thread; () when the
        trees grow one at a time (one thread, one tree a round, leaves refitted,
        vector leaves, or a grower without twins). The trees are the same either
        way."""
        P = self.params.num_parallel_tree
        n = min(self.grower.n_threads, self.objective.n_outputs * P)
        if (n < 2 or self.objective.needs_refit or not hasattr(self.grower, "twin")
                or self.params.multi_strategy == "multi_output_tree"):
            return ()
        while len(self._twins) < n - 1:
            self._twins.append(self.grower.twin(1))
        return [self.grower] + self._twins[:n - 1]

    def _forest_in_lanes(self, lanes, learning_rate, draw, first, drop):
        """A forest's round (``num_parallel_tree`` P > 1) on ``lanes``: its K * P trees
        (tree set 0's K trees, then set 1's, ...; set s on the rows and seeds of
        ``draw(s)``, set 0's given as ``first``), ``len(lanes)`` at a time, one a
        lane. Each writes its values, and those of its rows left out of the sample,
        into a row of a buffer of its own, added to the raw scores in the trees'
        order: the sums of the trees grown one at a time."""
        K, P = self.objective.n_outputs, self.params.num_parallel_tree
        n_rows = self.raw.shape[0]
        if self._lane_values is None or self._lane_values.shape[0] < len(lanes):
            self._lane_values = np.empty((len(lanes), n_rows, 1))
        values, pairs = self._lane_values, self.pairs
        tasks = [(s, k) for s in range(P) for k in range(K)]
        sets, trees = {0: first}, []
        for b in range(0, len(tasks), len(lanes)):
            batch = tasks[b:b + len(lanes)]
            for s, _ in batch:
                if s not in sets:
                    sets[s] = draw(s)

            def grow_one(lane, i, batch=batch):
                s, k = batch[i]
                values[i] = 0.0
                return lane.grow(pairs[k:k + 1], learning_rate, values[i], 0, sets[s][0],
                                 sets[s][3][k])[0]
            grown = _grow_at_once(self.grower, lanes, grow_one, len(batch))
            for i, ((s, k), nodes) in enumerate(zip(batch, grown)):
                left_out = sets[s][1]
                if left_out is not None and drop is None:
                    self.training_rows.add(nodes, left_out, values[i], 0)
                self.raw[:, k] += values[i, :, 0]
                trees.append(nodes)
            for s in [s for s in sets if s < batch[-1][0]]:
                del sets[s]
        return trees

    @property
    def n_threads(self):
        return self.grower.n_threads

    @n_threads.setter
    def n_threads(self, n):
        self.grower.n_threads = self.training_rows.n_threads = n

    def grow_round(self, round_number, lr, drop):
        params, objective, y, w = self.params, self.objective, self.y, self.sample_weight
        raw, pairs, K = self.raw, self.pairs, self.objective.n_outputs
        P = params.num_parallel_tree
        raw_all = raw
        if drop is not None:
            # the new trees fit what the trees not dropped leave
            self._contrib = self.training_rows.contributions(drop.trees, drop.outputs, K)
            raw_all = raw.copy()
            raw -= self._contrib
            self._raw_dropped = raw.copy()
        objective.gradient(y, raw, w, pairs[:, :, 0], pairs[:, :, 1], self.n_threads)

        # every random draw of a round depends on (seed, round) only: any n_jobs, warm start
        def draw(tree_set):
            return sampling.draws(params, np.random.default_rng(
                sampling.round_key(params.seed, round_number, tree_set)),
                pairs[:, :, 0], pairs[:, :, 1], w, objective.needs_refit)

        rows, left_out, refit_weight, tree_seeds = draw(0)
        self._left_out = left_out
        if self.oob and left_out is not None:
            self._oob_before = _loss_on(objective, y, raw_all, w, left_out)
        lanes = self._lanes()
        if P > 1 and lanes:
            return self._forest_in_lanes(lanes, lr / P, draw,
                                         (rows, left_out, refit_weight, tree_seeds), drop)
        trees = []
        # a forest's P trees per output all fit the round's gradients, each on rows and
        # columns of its own, and add lr / P each (the first draws as plain boosting's)
        round_start = raw.copy() if P > 1 and objective.needs_refit else None
        for tree_set in range(P):
            if tree_set > 0:
                rows, left_out, refit_weight, tree_seeds = draw(tree_set)
            raw_set = raw.copy() if objective.needs_refit else None
            gains = self.gains
            for k, nodes in _grow_set(self.grower, params.multi_strategy == "multi_output_tree",
                                      pairs, lr / P, raw, rows, tree_seeds, gains, lanes):
                if objective.needs_refit:
                    _refit(objective, self.grower, nodes, y, raw, raw_set[:, k].copy(),
                           refit_weight, k, lr / P,
                           None if round_start is None else round_start[:, k])
                if left_out is not None and drop is None:
                    self.training_rows.add(nodes, left_out, *((raw, k) if gains is None
                                                             else (gains[k], 0)))
                trees.append(nodes)
            if gains is not None:
                raw += gains[:, :, 0].T
        return trees

    def round_done(self, trees, outputs, drop):
        if drop is not None:
            # every row's raw score again: the others, the scaled dropped trees, the new ones
            self.raw[:] = self._raw_dropped + drop.factor * self._contrib + \
                self.training_rows.contributions(trees, outputs, self.objective.n_outputs)
        if self.oob:
            after = _loss_on(self.objective, self.y, self.raw, self.sample_weight,
                             self._left_out)
            self.oob_improvement.append(self._oob_before - after)
            self.oob_scores.append(after)

    def not_finite(self, round_number, lr):
        return not_finite(round_number, lr, self.y, self.sample_weight, self.raw)

    def finish(self):
        self.objective.fit_done()


def train(X, y, objective, params, sample_weight=None, n_threads=1, random_state=None,
          eval_sets=(), metrics=(), callbacks=(), init_model=None, base_margin=None,
          threads=None):
    """Fit a boosted ensemble.

    Parameters
    ----------
    X : ndarray (n_rows, n_features), float32 or float64, NaN = missing; or a
        scipy.sparse matrix (absent entries: 0, or missing with
        ``params.absent_as_missing``)
    y : ndarray (n_rows,), float64 (class codes for classifiers)
    objective : objectives.Objective
    params : BoostParams
    sample_weight : ndarray (n_rows,) or None
    n_threads : int
    random_state : numpy.random.RandomState (drives the binning subsample)
    eval_sets : list of EvalSet, evaluated after every round with each of ``metrics``
    metrics : list of metrics.Metric
    callbacks : list of callback.Callback (hooks before / after each round)
    init_model : (TreeEnsemble, BinMapper) or None
        Continue this model: its bins, starting value and trees are kept and
        ``params.n_estimators`` more rounds are added (to a copy).
    base_margin : ndarray (n_rows, n_outputs) or None
        Each row's starting raw score, in place of the ensemble's ``base_score``
        (XGBoost's ``base_margin``): the trees fit what it leaves.
    threads : ThreadBudget or None
        The threads of each round, at most ``n_threads`` (default:
        ``ThreadBudget(n_threads)``, fewer while other processes hold the cores).

    Returns
    -------
    ensemble : TreeEnsemble
    info : dict with ``bin_seconds``, ``boost_seconds``, ``n_rounds`` (rounds built),
        ``evals_result``, ``best_iteration``, ``best_score``, ``bin_mapper``
    """
    t0 = time.perf_counter()
    _check_arrays(X, y, sample_weight, n_threads, objective.infinite_y)
    threads = ThreadBudget(n_threads) if threads is None else threads
    n = threads.n   # (the threads of the next round; the growers take more on demand)
    y, sample_weight = kernel_array(y), kernel_array(sample_weight)   # (aligned loads)
    objective.check_target(y)
    if sp.issparse(X):
        X = canonical_csr(X)
    if init_model is None:
        mapper = BinMapper(params.max_bin, random_state=random_state,
                           absent_as_missing=params.absent_as_missing).fit(X, sample_weight, n)
    else:
        mapper = init_model[1]
        if X.shape[1] != init_model[0].n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the model to continue has "
                             f"{init_model[0].n_features}")
    # trees on sorted column blocks, or on bins of their own: thresholds off the mapper's edges
    exact = params.tree_method in ("exact", "approx")
    X_binned = None if exact else mapper.transform(X, n)
    t1 = time.perf_counter()

    params = check_quant_bins(params, X.shape[0])
    if init_model is None:
        ensemble = TreeEnsemble(X.shape[1], objective.init_raw(y, sample_weight))
    else:
        ensemble = copy.deepcopy(init_model[0])
    absent = np.nan if mapper.absent_as_missing else 0.0
    training_rows = (_BinnedRows(X_binned, mapper.n_bins_, n)
                     if not exact and _on_bin_edges(ensemble, mapper)
                     else _RawRows(X, absent, n))
    # the same sums in the same order as the grower's updates: continuing is exact
    raw = training_rows.scores(ensemble, base_margin)
    if params.boosting_type == "ordered" and init_model is not None:
        raise ValueError("boosting_type='ordered' cannot continue a fitted model: its "
                         "supporting models would start from scores that saw every row")
    grower = make_grower(params, X, X_binned, mapper, n,
                         (objective, y, sample_weight, raw[:, 0].copy()))
    rows = _InMemoryRows(grower, training_rows, objective, params, y, sample_weight, raw)
    n_rounds, state = rounds.boost(rows, ensemble, objective, params, params.seed, threads,
                                   eval_sets, metrics, callbacks, absent)
    t2 = time.perf_counter()
    info = {"bin_seconds": t1 - t0, "boost_seconds": t2 - t1, "n_rounds": n_rounds,
            "evals_result": state.evals_result, "best_iteration": state.best_iteration,
            "best_score": state.best_score, "bin_mapper": mapper}
    if rows.oob:
        info["oob_improvement"] = np.array(rows.oob_improvement)
        info["oob_scores"] = np.array(rows.oob_scores)
    if params.verbosity >= 1:
        LOGGER.info(f"[gbtree] binning {info['bin_seconds']:.3f}s, boosting "
                    f"{info['boost_seconds']:.3f}s, {n_rounds} iterations, {ensemble.n_trees} "
                    f"trees, {int((ensemble.nodes['is_leaf'] == 1).sum())} leaves")
    return ensemble, info
