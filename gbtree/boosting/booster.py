"""The boosting loop shared by every estimator.

``train`` bins the data, sets the starting value F0, then for each round
computes gradients and hessians at the current raw prediction and grows one
tree per output on them; each tree's leaf values (times the learning rate) are
added to the raw predictions of the training rows straight from the grower's
row partition. Objectives that refit leaves (absolute error, quantile, Huber)
replace the Newton values by their line search on the same partition. After
each round the eval sets' raw predictions get the round's trees, the metrics
are recorded, and the callbacks (early stopping, logging, schedules) may stop
the loop.
"""
import copy
import numbers
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..kernels._threads import ThreadBudget, max_threads
from ..kernels._typedefs import G_H_DTYPE
from ..data.binning import BinMapper, canonical_csr, kernel_array
from .callback import LogEvaluation, TrainingState
from .dart import Dart
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


def _draws(params, rng, grad, hess, sample_weight, needs_refit):
    """The random draws of one set of trees (one per output), in this order: the rows
    they grow on (None: all) and those left out (or None), the weights of the leaf
    refit (GOSS's amplified rows weigh more), the trees' seeds."""
    n_rows, K = grad.shape[1], grad.shape[0]
    rows, amplified = _sample_rows(params, rng, n_rows, grad, hess)
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
    """A ValueError when ``params.grad_quant_bins`` levels are too many for ``n_rows``
    rows: the integer sums of a histogram entry must stay below 2**31."""
    if params.grad_quant_bins and n_rows * (params.grad_quant_bins + 1) >= 2 ** 31:
        raise ValueError(f"grad_quant_bins={params.grad_quant_bins} is too large for "
                         f"{n_rows} rows: the integer sums must stay below 2**31, so "
                         f"grad_quant_bins must be <= {(2 ** 31 - 1) // n_rows - 1}")


def _sample_rows(params, rng, n_rows, grad, hess):
    """Rows for this round's trees (None = all) and the GOSS-amplified ones.

    ``subsample < 1``: each row kept with that probability (Friedman's stochastic
    boosting). GOSS: the ``top_rate`` share with the largest |gradient| (summed over
    outputs) plus a uniform ``other_rate`` share of the rest, whose gradients and
    hessians are multiplied by ``(1 - top_rate) / other_rate`` (in place).
    """
    if params.sampling_method == "goss":
        n_top = max(1, int(params.top_rate * n_rows))
        n_other = int(params.other_rate * n_rows)
        if n_top + n_other >= n_rows:
            return None, None
        score = np.abs(grad).sum(axis=0)
        by_size = np.argpartition(-score, n_top - 1)
        top, rest = by_size[:n_top], by_size[n_top:]
        other = rng.choice(rest, n_other, replace=False) if n_other else rest[:0]
        factor = (1.0 - params.top_rate) / params.other_rate
        grad[:, other] *= factor
        hess[:, other] *= factor
        return np.sort(np.concatenate([top, other])).astype(np.uint32), other
    if params.subsample < 1.0:
        rows = np.flatnonzero(rng.random(n_rows) < params.subsample).astype(np.uint32)
        if rows.shape[0] == 0:
            rows = np.array([rng.integers(n_rows)], dtype=np.uint32)
        return rows, None
    return None, None


def _grow_set(grower, vector_leaves, pairs, learning_rate, raw, rows, seeds):
    """The trees of one set, as (output, nodes): one tree per output, each grown when
    the caller asks for it (after it has finished the one before), or the K trees
    of one tree whose leaves hold a vector."""
    if vector_leaves:
        yield from enumerate(grower.grow(pairs, learning_rate, raw, rows, seeds[0]))
        return
    for k in range(pairs.shape[0]):
        yield k, grower.grow(pairs[k, :, 0], pairs[k, :, 1], learning_rate, raw, k, rows,
                             seeds[k])


# what a grower's ValueError says when the gradients' sums are not finite
NOT_FINITE = "grad and hess must be finite"


def not_finite(round_number, first, lr, y=None, sample_weight=None, raw=None):
    """Why a round's gradients or hessians are inf or NaN: y or the weights are too
    large for float32 (the model's first round), or the model diverged. ``y``,
    ``sample_weight``, ``raw``: the rows' (a fit that holds them), for their sizes."""
    if first:
        sizes = "" if y is None else f" (|y| up to {float(np.max(np.abs(y))):.3g}" + (
            "" if sample_weight is None
            else f", sample_weight up to {float(np.max(sample_weight)):.3g}") + ")"
        return (f"the gradients or hessians of round {round_number} are inf or NaN: y or "
                f"sample_weight is too large for their float32 values{sizes}; rescale y or "
                f"sample_weight")
    sizes = ("" if raw is None
             else f" (raw predictions up to {float(np.max(np.abs(raw))):.3g})")
    return (f"the gradients or hessians of round {round_number} are inf or NaN: the model "
            f"diverges{sizes}; lower learning_rate (now {lr:g}) or set max_delta_step")


def check_leaf_values(nodes, round_number, lr):
    """ValueError unless a new tree's values are finite (else the model diverges)."""
    if not np.isfinite(nodes["value"]).all():
        raise ValueError(f"a leaf value of round {round_number} is inf or NaN: the model "
                         f"diverges; lower learning_rate (now {lr:g})")


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


def round_learning_rate(state, round_number):
    """The learning rate of a round (a callback may have set it), checked."""
    lr = state.learning_rate
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not 0 < lr < np.inf:
        raise ValueError(f"the learning rate of round {round_number} (a callback may "
                         f"set it) must be a finite number > 0, got {lr!r}")
    return lr


def evaluate_round(eval_sets, trees, outputs, objective, state, callbacks, n_threads,
                   absent=np.nan):
    """After a round: its ``trees`` (tree j feeds output ``outputs[j]``) added to each
    eval set's raw scores, every metric of ``state`` recorded, the callbacks' round
    ends called; whether one of them stops the fit."""
    for ev in eval_sets:
        add_trees_to_raw(ev.X, trees, outputs, ev.raw, n_threads, absent=absent)
        pred = objective.transform(ev.raw)
        for m in state.metrics:
            state.evals_result[ev.name][m.name].append(
                m(ev.y, pred, ev.sample_weight, ev.group_ptr))
    return stop_asked(callbacks, "after_iteration", state)


def settle_best(state, n_rounds, eval_sets):
    """``state``'s best round and score once the fit has built ``n_rounds`` rounds: a
    callback's choice (checked), else the last round and its last metric."""
    if state.best_iteration is not None and not (
            isinstance(state.best_iteration, numbers.Integral)
            and 0 <= state.best_iteration < n_rounds):
        raise ValueError(f"best_iteration (set by a callback) must be a round of this fit, "
                         f"0..{n_rounds - 1}, got {state.best_iteration!r}")
    if state.best_iteration is None:
        state.best_iteration = n_rounds - 1
        if eval_sets and state.metrics and n_rounds > 0:
            state.best_score = state.evals_result[eval_sets[-1].name][state.metrics[-1].name][-1]


def stop_asked(callbacks, hook, state):
    """Call ``hook`` of every callback (all of them, in order); whether one returned True.
    A hook returns True, False or None (an integer counts as its truth value)."""
    stop = False
    for cb in callbacks:
        answer = getattr(cb, hook)(state)
        if answer is not None and not isinstance(answer, (bool, np.bool_, numbers.Integral)):
            raise TypeError(f"{type(cb).__name__}.{hook} must return True, False or None (True "
                            f"stops training), got {type(answer).__name__}")
        stop = stop or bool(answer)
    return stop


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

    n_rows, K = X.shape[0], objective.n_outputs
    check_quant_bins(params, n_rows)
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
    for ev in eval_sets:
        ev.raw = ensemble.predict_raw(ev.X, n, absent=absent, base_margin=ev.base_margin)
    # (gradient, hessian) pairs: the histogram kernels read each output's rows in place
    pairs = np.empty((K, n_rows, 2), dtype=G_H_DTYPE)
    grad, hess = pairs[:, :, 0], pairs[:, :, 1]
    vector_leaves = params.multi_strategy == "multi_output_tree"
    if params.boosting_type == "ordered" and init_model is not None:
        raise ValueError("boosting_type='ordered' cannot continue a fitted model: its "
                         "supporting models would start from scores that saw every row")
    grower = make_grower(params, X, X_binned, mapper, n,
                         (objective, y, sample_weight, raw[:, 0].copy()))
    # warm start: round numbers continue
    rounds_before = ensemble.n_trees // (K * params.num_parallel_tree)
    P = params.num_parallel_tree
    oob = params.subsample < 1.0 and params.sampling_method == "uniform" and P == 1
    oob_improvement, oob_scores = [], []
    state = TrainingState(params.n_estimators, params.learning_rate, metrics,
                          [ev.name for ev in eval_sets])
    callbacks = list(callbacks)
    if params.verbosity >= 1:
        period = 1 if params.verbosity >= 2 else params.log_period
        callbacks.append(LogEvaluation(period, lambda: (objective.name,
                                                        objective.loss(y, raw, sample_weight))))
    for cb in callbacks:
        cb.before_training(state)
    n_rounds = 0
    dart = None if params.dart is None else Dart(params.dart, ensemble.n_trees)
    for it in range(params.n_estimators):
        state.iteration = it
        if stop_asked(callbacks, "before_iteration", state):
            break
        lr = round_learning_rate(state, rounds_before + it)
        # (the model is the same at any thread count: each round takes what is free)
        n = grower.n_threads = training_rows.n_threads = threads.n
        dropped = np.empty(0, dtype=np.intp)
        raw_all = raw
        if dart is not None:
            # (a generator of its own: the round's other draws stay those of plain boosting)
            dropped = dart.drop(np.random.default_rng([params.seed, rounds_before + it, 1]))
        if dropped.size:
            # the new trees fit what the trees not dropped leave
            dropped_trees = [ensemble.tree(t).copy() for t in dropped]
            dropped_out = ensemble.tree_class[dropped]
            contrib = training_rows.contributions(dropped_trees, dropped_out, K)
            raw_all = raw.copy()
            raw -= contrib
            raw_dropped = raw.copy()
        objective.gradient(y, raw, sample_weight, grad, hess, n)
        # every random draw of a round depends on (seed, round) only: any n_jobs, warm start
        rows, left_out, refit_weight, tree_seeds = _draws(
            params, np.random.default_rng([params.seed, rounds_before + it]), grad, hess,
            sample_weight, objective.needs_refit)
        if oob and left_out is not None:
            oob_before = _loss_on(objective, y, raw_all, sample_weight, left_out)
        trees = []
        # a forest's P trees per output all fit the round's gradients, each on rows and
        # columns of its own, and add lr / P each (the first draws as plain boosting's)
        round_start = raw.copy() if P > 1 and objective.needs_refit else None
        for p in range(P):
            if p > 0:
                rows, left_out, refit_weight, tree_seeds = _draws(
                    params, np.random.default_rng([params.seed, rounds_before + it, 2, p]),
                    grad, hess, sample_weight, objective.needs_refit)
            raw_set = raw.copy() if objective.needs_refit else None
            try:
                for k, nodes in _grow_set(grower, vector_leaves, pairs, lr / P, raw, rows,
                                          tree_seeds):
                    if objective.needs_refit:
                        _refit(objective, grower, nodes, y, raw, raw_set[:, k].copy(),
                               refit_weight, k, lr / P,
                               None if round_start is None else round_start[:, k])
                    check_leaf_values(nodes, rounds_before + it, lr)
                    if left_out is not None and not dropped.size:
                        training_rows.add(nodes, left_out, raw, k)
                    trees.append(nodes)
            except ValueError as exc:
                if NOT_FINITE not in str(exc):
                    raise
                round_number = rounds_before + it
                raise ValueError(not_finite(round_number, round_number == 0, lr, y,
                                            sample_weight, raw)) from None
        outputs = [j % K for j in range(len(trees))]   # tree j of the round feeds output j % K
        if dart is not None:
            factor, weight = dart.factors(dropped.size, len(trees), lr)
            dart.scale(ensemble, trees, dropped, factor, weight)
        if dropped.size:
            # every row's raw score again: the others, the scaled dropped trees, the new ones
            raw[:] = raw_dropped + factor * contrib + training_rows.contributions(
                trees, outputs, K)
            Dart.rescale_eval_sets(eval_sets, dropped_trees, dropped_out, factor, n, absent)
        for nodes, k in zip(trees, outputs):
            ensemble.add_tree(nodes, k)
        if oob:
            after = _loss_on(objective, y, raw, sample_weight, left_out)
            oob_improvement.append(oob_before - after)
            oob_scores.append(after)
        n_rounds += 1
        stop = evaluate_round(eval_sets, trees, outputs, objective, state, callbacks, n, absent)
        threads.round_done()
        if stop:
            break
    for cb in callbacks:
        cb.after_training(state)
    objective.fit_done()
    ensemble._flush()   # the fitted model holds no pending trees (threads may predict at once)
    t2 = time.perf_counter()
    settle_best(state, n_rounds, eval_sets)
    info = {"bin_seconds": t1 - t0, "boost_seconds": t2 - t1, "n_rounds": n_rounds,
            "evals_result": state.evals_result, "best_iteration": state.best_iteration,
            "best_score": state.best_score, "bin_mapper": mapper}
    if oob:
        info["oob_improvement"] = np.array(oob_improvement)
        info["oob_scores"] = np.array(oob_scores)
    if params.verbosity >= 1:
        print(f"[gbtree] binning {info['bin_seconds']:.3f}s, boosting {info['boost_seconds']:.3f}s, "
              f"{n_rounds} iterations, {ensemble.n_trees} trees, "
              f"{int((ensemble.nodes['is_leaf'] == 1).sum())} leaves")
    return ensemble, info
