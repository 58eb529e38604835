"""The parameters every estimator shares: their documentation, their defaults, their
check into the engine's ``booster.BoostParams``, and the per-feature ones (weights,
monotone and interaction constraints) read against the training columns."""
import inspect
import numbers
from dataclasses import fields

import numpy as np

from ..boosting import booster
from ..growing.approx import MAX_PARTS
from ..growing.row_blocks import MAX_SYMMETRIC_DEPTH
from ..data.validation import _check_choice, _check_number, feature_index

# the largest value of the integer parameters the kernels take as a C int
C_INT_MAX = 2 ** 31 - 1
# grad_quant_bins="auto": the levels wherever the grower takes quantised gradients
AUTO_QUANT_BINS = 64

SHARED_PARAMS_DOC = """
    n_estimators : int, default=100
        Boosting rounds (one tree per round, or one per class for multiclass).
    learning_rate : float, default=0.1
        Shrinkage ``eta`` applied to every tree's leaf values.
    max_depth : int, default=6
        Maximum tree depth; 0 means no limit (then ``max_leaves`` must be set).
    max_leaves : int, default=0
        Maximum number of leaves per tree; 0 means no limit.
    grow_policy : {"depthwise", "lossguide", "symmetric"}, default="depthwise"
        ``depthwise`` splits every node of a level before the next level;
        ``lossguide`` always splits the leaf with the largest gain (best-first,
        LightGBM style), up to ``max_leaves``; ``symmetric`` grows CatBoost's
        oblivious trees, one split (feature, threshold, missing direction) for
        all the nodes of a level, maximising the gain summed over them, to
        ``max_depth`` (1 to 16) levels; predicted with a walk of their own.
    max_bin : int, default=256
        Bins per feature including the bin for missing values (2..256), so at
        most ``max_bin - 1`` candidate thresholds per feature.
    min_child_weight : float, default=1.0
        Minimum sum of hessians (weighted) in each child of a split.
    reg_lambda : float, default=1.0
        L2 penalty on leaf weights.
    reg_alpha : float, default=0.0
        L1 penalty on leaf weights.
    gamma : float, default=0.0
        Minimum gain to make a split (XGBoost's ``min_split_loss``; gains are
        ``G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - G^2/(H+lambda)``, see docs).
    max_delta_step : float, default=0.0
        If > 0, leaf weights are clipped to ``[-max_delta_step, max_delta_step]``.
    eval_metric : str, callable, list of them, or None, default=None
        Metrics computed on every eval set after each round (names in
        ``gbtree.boosting.metrics.METRIC_NAMES``; a callable ``f(y_true, y_pred[,
        sample_weight])`` on the prediction scale, minimised unless it has
        ``greater_is_better = True``). None: the objective's own metric. The
        last one drives early stopping.
    early_stopping_rounds : int or None, default=None
        Stop when the last metric on the last eval set has not improved for
        this many rounds; predictions then use the best round. None: off.
    validation_fraction : float, default=0.0
        If > 0, this fraction of the training rows (stratified by class for
        classifiers, drawn with ``random_state``) is held out as the eval set
        named ``"validation"`` (after any ``eval_set``), so early stopping works
        inside ``Pipeline`` and ``GridSearchCV``. 0: no hold-out.
    callbacks : list of gbtree.callback.Callback or None, default=None
        Objects whose hooks run before and after each round (see
        ``gbtree.callback``): any hook returning True stops training.
    log_period : int, default=10
        With ``verbosity=1``, print the round, the metrics and the elapsed time
        every ``log_period`` rounds (``verbosity=2``: every round).
    n_jobs : int or None, default=None
        OpenMP threads for the kernels; None or -1 means every core available
        to the process (honouring ``OMP_NUM_THREADS``, cgroups and
        ``threadpoolctl``). The model does not depend on it.
    random_state : int, RandomState instance or None, default=0
        Seeds everything random: the row subsample used to compute the bin
        edges (on data with more than 200,000 rows), the ``validation_fraction``
        split, row sampling (``subsample``, GOSS), column sampling, the
        ranker's pair sampling and the row order of categorical target
        statistics. Each round's draws depend only on it and the
        round number.
    verbosity : int, default=0
        0 silent, 1 a summary per fit and a log every ``log_period`` rounds,
        2 a log line every round.
    importance_type : {"weight", "gain", "cover", "total_gain", "total_cover"}, \
            default="total_gain"
        What ``feature_importances_`` normalises: split counts, average or
        total split gain, average or total hessian cover (see ``get_score``).
    warm_start : bool, default=False
        If True and the model is fitted, ``fit`` keeps the trees (and the bins
        and starting value of the first fit) and adds ``n_estimators -
        n_estimators_`` rounds: the result equals one fit of ``n_estimators``
        rounds on the same data.
    subsample : float, default=1.0
        With ``sampling_method="uniform"``, each round's trees are grown on a
        random share of the rows (each row kept with this probability;
        Friedman's stochastic gradient boosting); < 1 also gives out-of-bag
        estimates (``oob_improvement_``, ``oob_scores_``, ``oob_score_``).
    sampling_method : {"uniform", "goss"}, default="uniform"
        ``"goss"``: LightGBM's gradient-based one-side sampling: each round
        keeps the ``top_rate`` share of rows with the largest ``|gradient|`` and a
        random ``other_rate`` share of the rest, amplified by
        ``(1 - top_rate) / other_rate``.
    top_rate, other_rate : float, default=0.2, 0.1
        GOSS shares (each in (0, 1), their sum <= 1).
    colsample_bytree, colsample_bylevel, colsample_bynode : float, default=1.0
        Share of the features each tree, then each depth level of it, then
        each node of that level may split on (they compose as XGBoost's:
        ``max(1, floor(share * n))`` drawn from the set above).
    feature_weights : array-like of shape (n_features,) or None, default=None
        Non-negative weights for the column sampling (a feature is drawn with
        probability proportional to its weight; 0 = never). None: uniform.
    interaction_constraints : list of lists of features or None, default=None
        Groups of feature indices (or names, when fit on a DataFrame) allowed
        to interact: all the split features on a path from the root must lie
        in one common group. A feature in no group can only interact with
        itself.
    monotone_constraints : list, array or dict, or None, default=None
        Per feature +1 (predictions never decrease as it grows), -1 (never
        increase) or 0: a sequence with one entry per feature, or a dict from
        feature index or name to +1 / -1. XGBoost's rule: leaf weights are kept
        within bounds set by the constrained splits above them (the objectives
        that refit leaves, absolute error, quantile and Huber, refit them
        within those bounds).
    absent_as_missing : bool, default=False
        For a ``scipy.sparse`` X: an absent entry is a 0 (False: the model is
        the one fit on ``X.toarray()``, bit for bit) or a missing value (True,
        XGBoost's convention: absent entries follow each split's learned
        default direction). A stored NaN is always missing, a stored 0 always 0.
        Dense input is not affected.
    grad_quant_bins : "auto", int or None, default="auto"
        "auto": 64 levels wherever the trees take quantised gradients (histogram
        splits, one output per tree, not symmetric, plain boosting, fewer than
        33 million rows), float gradients elsewhere. None: histograms sum the
        float gradients and hessians (the trees of XGBoost's and LightGBM's
        defaults). An int k >= 2: LightGBM's quantised training (its
        ``num_grad_quant_bins``): each tree rounds every gradient to one of the
        integers -k/2 .. k/2 and every hessian to 0 .. k (times a per-tree
        step), at random up or down so that the rounding is unbiased, and the
        histograms sum integers (one integer add per value instead of two float
        adds, half the histogram memory). Splits are chosen on the rounded sums;
        leaf values and covers are then recomputed from the exact gradients.
        Larger k is closer to the exact model at the same cost; with k = 64 the
        test metric stayed the float fit's, within its noise, on every
        benchmark data set and the shipped data (``python -m benchmarks
        quantized-accuracy``), in 0.84x to 0.96x its time on 160,000 rows or
        more. ``n_samples * (k + 1)`` must stay below 2**31.
    categorical_features : "from_dtype", list of indices or names, boolean mask or None, \
            default=None
        Columns that hold categories (numbers or text, any number of distinct
        values). A column of more than ``max_cat_to_ordinal`` distinct values
        is replaced by CatBoost's ordered target statistic before binning: at
        ``fit`` a row gets the smoothed mean target of the rows of its category
        that come before it in a random order (drawn with ``random_state``), so
        its own label never enters its value; at ``predict`` and for eval sets,
        of all training rows of its category; a category not seen at ``fit``
        gets the mean target. A missing value stays missing. ``"from_dtype"``:
        the columns of pandas ``category``, polars ``Categorical`` / ``Enum`` or
        pyarrow dictionary type. Dense X only; a classifier of 3+ classes takes
        only columns of at most ``max_cat_to_ordinal`` values (a statistic
        needs one target). None: no column is categorical. See docs/index.md.
    cat_smooth : "auto" or float, default="auto"
        The prior's weight ``a`` in the statistic ``(sum w*y + a*p) / (sum w +
        a)``, ``p`` the weighted mean target: larger values pull rare
        categories towards ``p``. ``"auto"``: per column, the variance of y
        within a category over the variance of the categories' means,
        estimated on the training rows (empirical Bayes, Buhlmann-Straub): the
        weight that makes each statistic the best linear estimate of its
        category's mean.
    max_cat_to_ordinal : int, default=32
        A categorical column of at most this many distinct values at ``fit``
        gets ordinal codes instead (each category's position among the sorted
        values, a value not among the training rows missing): every category
        keeps a bin of its own (while ``max_bin`` allows), so trees can split
        off any group of categories, which target statistics blur when
        categories of similar mean target interact differently with other
        features. 0: statistics for every categorical column.
    max_cat_to_onehot : int, default=32
        A categorical column of 3 to this many distinct values at ``fit`` also
        gets one indicator column per category of the training rows (1 for the
        category, 0 for any other, missing for a missing value), beside its
        codes or statistic: a split on an indicator separates one category
        from all others (XGBoost's and LightGBM's one-hot splits), which a
        threshold on the codes can do only for the first or last category.
        The trees see the indicators as features; SHAP values, importances
        and ``feature_importances_`` add them to their column's. 0: none.
    booster : {"gbtree", "dart"}, default="gbtree"
        ``"dart"``: DART (Vinayak and Gilad-Bachrach, 2015; XGBoost's names and
        rules): each round drops some earlier trees, fits the new tree to what
        the others leave, then scales the dropped trees and the new one so the
        model does not overshoot. Early stopping is refused with it (every
        round rescales earlier trees). See docs/index.md.
    rate_drop : float, default=0.0
        DART: the chance that each earlier tree is dropped in a round, in [0, 1].
    skip_drop : float, default=0.0
        DART: the chance that a round drops nothing, in [0, 1].
    one_drop : bool, default=False
        DART: drop at least one tree in a round that is not skipped.
    normalize_type : {"tree", "forest"}, default="tree"
        DART: with k trees dropped and learning rate lr, ``"tree"`` weighs the
        new tree ``1 / (k + lr)`` and scales the dropped ones by
        ``k / (k + lr)``; ``"forest"`` weighs the new tree ``1 / (1 + lr)`` and
        scales the dropped ones by as much.
    sample_type : {"uniform", "weighted"}, default="uniform"
        DART: drop trees with equal chances, or in proportion to their weights
        (trees of an earlier ``warm_start`` fit count with weight 1).
    num_parallel_tree : int, default=1
        Trees grown per output and round, all on the round's gradients, each on
        rows (``subsample``) and columns (``colsample_*``) of its own and adding
        ``learning_rate / num_parallel_tree``: with ``n_estimators=1`` and
        ``learning_rate=1``, a random forest (XGBoost's ``XGBRFRegressor``
        builds on the same). See docs/index.md.
    multi_strategy : str, default="one_output_per_tree"
        For a model of several outputs (a y of several columns, several
        quantiles, several classes): one tree per output and round, or
        (``"multi_output_tree"``, XGBoost's name) one tree per round whose
        leaves hold one value per output, each split maximising the gain
        summed over the outputs, so that they share its structure. Such a tree
        is stored as one tree per output with that structure: prediction,
        model files, SHAP values and export read it as such. Monotone and
        interaction constraints and ``grad_quant_bins`` are refused with it.
    tree_method : {"hist", "exact", "approx"}, default="hist"
        How splits are found. ``"hist"``: between the bins of each feature
        (``max_bin``), on histograms. ``"exact"``: the exact greedy algorithm
        of the XGBoost paper, every split between two distinct values of a
        node's rows (read as float32, as XGBoost does), on column blocks sorted
        once per fit. ``"approx"``: the paper's approximate algorithm, only the
        splits between hessian-weighted quantiles of each feature taken from
        the same blocks (``sketch_eps``, ``approx_proposal``); with global
        proposals each tree grows on histograms of its own bins. Both grow depthwise to
        ``max_depth`` only, without monotone or interaction constraints,
        ``grad_quant_bins`` or vector leaves. See docs/index.md.
    sketch_eps : float or None, default=None
        ``tree_method="approx"``: the candidates of a feature cut its rows into
        ``ceil(1 / sketch_eps)`` parts of equal hessian, in (0, 1); at least
        1/255 with global proposals (a tree's bins). None: ``max_bin - 1``
        parts (a bin is kept for missing values), as XGBoost's approx takes
        ``max_bin`` bins.
    approx_proposal : {"global", "local"}, default="global"
        ``tree_method="approx"``: the candidates proposed once per tree from
        its rows (``"global"``), or for each node from its own rows
        (``"local"``, which needs fewer of them for the same accuracy).
    boosting_type : {"plain", "ordered"}, default="plain"
        ``"ordered"``: CatBoost's ordered boosting, each tree's structure grown
        on gradients that every row takes from a supporting model fitted
        without it (on the rows before it in a random order), its leaf values
        from the model's own gradients. Against prediction shift on small data
        sets; it costs about ``2 * permutation_count`` more gradient passes a
        tree. Losses of one output whose rows' gradients are their own only;
        row sampling, DART, forests and monotone constraints are refused.
        See docs/index.md.
    permutation_count : int, default=4
        ``boosting_type="ordered"``: the random orders of the rows (each with
        its supporting models); each tree takes one at random.
"""

SHARED_DEFAULTS = dict(
    n_estimators=100, learning_rate=0.1, max_depth=6, max_leaves=0, grow_policy="depthwise",
    max_bin=256, min_child_weight=1.0, reg_lambda=1.0, reg_alpha=0.0, gamma=0.0,
    max_delta_step=0.0, eval_metric=None, early_stopping_rounds=None, validation_fraction=0.0,
    callbacks=None, log_period=10, n_jobs=None, random_state=0, verbosity=0,
    importance_type="total_gain", warm_start=False, subsample=1.0, sampling_method="uniform",
    top_rate=0.2, other_rate=0.1, colsample_bytree=1.0, colsample_bylevel=1.0,
    colsample_bynode=1.0, feature_weights=None, interaction_constraints=None,
    monotone_constraints=None, absent_as_missing=False, grad_quant_bins="auto",
    categorical_features=None, cat_smooth="auto", max_cat_to_ordinal=32, max_cat_to_onehot=32,
    booster="gbtree",
    rate_drop=0.0, skip_drop=0.0, one_drop=False, normalize_type="tree", sample_type="uniform",
    num_parallel_tree=1, multi_strategy="one_output_per_tree", tree_method="hist",
    sketch_eps=None, approx_proposal="global", boosting_type="plain", permutation_count=4,
)


def set_shared(est, given):
    """Store the shared parameters given to an estimator's ``__init__`` (``**shared``),
    the others at their defaults; an unknown name is Python's TypeError."""
    for name in given:
        if name not in SHARED_DEFAULTS:
            raise TypeError(f"{type(est).__name__}.__init__() got an unexpected keyword "
                            f"argument {name!r}")
    for name, default in SHARED_DEFAULTS.items():
        setattr(est, name, given.get(name, default))


def with_shared_signature(cls):
    """An estimator class whose ``__init__(self, *, <its own>, **shared)`` shows the
    shared parameters with their defaults after its own: the signature ``help()``,
    scikit-learn's ``get_params`` and ``clone`` read."""
    sig = inspect.signature(cls.__init__)
    own = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
              for name, default in SHARED_DEFAULTS.items()]
    cls.__init__.__signature__ = sig.replace(parameters=own + shared)
    return cls


def boost_params(est):
    """The engine's parameters of an estimator, each checked (TypeError/ValueError naming
    the parameter)."""
    _check_number("n_estimators", est.n_estimators, "int", 1, C_INT_MAX)
    _check_number("learning_rate", est.learning_rate, "real", 0, low_open=True)
    _check_number("max_depth", est.max_depth, "int", 0, C_INT_MAX)
    _check_number("max_leaves", est.max_leaves, "int", 0, C_INT_MAX)
    if est.max_leaves == 1:
        raise ValueError("max_leaves must be 0 (no limit) or >= 2, got 1")
    _check_choice("grow_policy", est.grow_policy, ("depthwise", "lossguide", "symmetric"))
    if est.grow_policy == "symmetric":
        if est.max_leaves or not 1 <= est.max_depth <= MAX_SYMMETRIC_DEPTH:
            raise ValueError(f"grow_policy='symmetric' grows every level to max_depth: it "
                             f"needs max_leaves=0 and 1 <= max_depth <= {MAX_SYMMETRIC_DEPTH}")
        _refuse_constraints(est, "grow_policy='symmetric'", interactions=True)
    if est.max_depth == 0 and est.max_leaves == 0:
        raise ValueError("max_depth and max_leaves cannot both be 0 (trees would be "
                         "unbounded); set max_depth > 0 or max_leaves >= 2")
    _check_number("max_bin", est.max_bin, "int", 2, 256)
    for name in ("min_child_weight", "reg_lambda", "reg_alpha", "gamma", "max_delta_step"):
        _check_number(name, getattr(est, name), "real", 0)
    _check_number("verbosity", est.verbosity, "int", 0, 3)
    _check_number("log_period", est.log_period, "int", 1)
    for name in ("warm_start", "absent_as_missing"):
        if not isinstance(getattr(est, name), (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {getattr(est, name)!r}")
    _check_number("validation_fraction", est.validation_fraction, "real", 0, 1,
                  high_open=True)
    if est.early_stopping_rounds is not None:
        _check_number("early_stopping_rounds", est.early_stopping_rounds, "int", 1)
    for name in ("subsample", "colsample_bytree", "colsample_bylevel", "colsample_bynode"):
        _check_number(name, getattr(est, name), "real", 0, 1, low_open=True)
    if isinstance(est.grad_quant_bins, str):
        if est.grad_quant_bins != "auto":
            raise TypeError(f"grad_quant_bins must be 'auto', None or an int, got "
                            f"{est.grad_quant_bins!r}")
    elif est.grad_quant_bins is not None:
        _check_number("grad_quant_bins", est.grad_quant_bins, "int", 2, 32766)
    _check_choice("sampling_method", est.sampling_method, ("uniform", "goss"))
    for name in ("top_rate", "other_rate"):
        _check_number(name, getattr(est, name), "real", 0, 1, low_open=True, high_open=True)
    if est.sampling_method == "goss":
        if est.top_rate + est.other_rate > 1:
            raise ValueError(f"top_rate + other_rate must be <= 1, got "
                             f"{est.top_rate} + {est.other_rate}")
        if est.subsample != 1.0:
            raise ValueError("subsample must be 1.0 with sampling_method='goss' "
                             "(GOSS does its own row sampling)")
    _check_number("num_parallel_tree", est.num_parallel_tree, "int", 1, 100_000)
    _check_choice("booster", est.booster, ("gbtree", "dart"))
    for name in ("rate_drop", "skip_drop"):
        _check_number(name, getattr(est, name), "real", 0, 1)
    if not isinstance(est.one_drop, (bool, np.bool_)):
        raise TypeError(f"one_drop must be a bool, got {est.one_drop!r}")
    _check_choice("normalize_type", est.normalize_type, ("tree", "forest"))
    _check_choice("sample_type", est.sample_type, ("uniform", "weighted"))
    _check_choice("multi_strategy", est.multi_strategy,
                  ("one_output_per_tree", "multi_output_tree"))
    if est.multi_strategy == "multi_output_tree":
        for name in ("monotone_constraints", "interaction_constraints", "grad_quant_bins"):
            if _given(est, name):
                raise ValueError(f"{name} cannot be used with multi_strategy="
                                 f"'multi_output_tree' (trees whose leaves hold a vector)")
    _check_choice("tree_method", est.tree_method, ("hist", "exact", "approx"))
    if est.sketch_eps is None:   # (as XGBoost's approx: max_bin's bins, one for missing values)
        approx_parts = int(est.max_bin) - 1
    else:
        _check_number("sketch_eps", est.sketch_eps, "real", 1e-6, 1, high_open=True)
        approx_parts = int(np.ceil(1.0 / est.sketch_eps))
    _check_choice("approx_proposal", est.approx_proposal, ("global", "local"))
    if (est.tree_method == "approx" and est.approx_proposal == "global"
            and approx_parts > MAX_PARTS):
        raise ValueError(f"approx_proposal='global' needs sketch_eps >= 1/{MAX_PARTS}: its "
                         f"candidates become the bins of a tree (at most {MAX_PARTS}); "
                         f"approx_proposal='local' takes any sketch_eps, got {est.sketch_eps!r}")
    if est.tree_method != "hist":
        method = f"tree_method={est.tree_method!r}"
        if est.grow_policy != "depthwise" or est.max_leaves or est.max_depth == 0:
            raise ValueError(f"{method} grows depthwise to max_depth: it needs "
                             f"grow_policy='depthwise', max_leaves=0 and max_depth >= 1")
        _refuse_constraints(est, method)
    _check_choice("boosting_type", est.boosting_type, ("plain", "ordered"))
    _check_number("permutation_count", est.permutation_count, "int", 1, 1024)
    if est.boosting_type == "ordered":
        refused = {"subsample < 1": est.subsample < 1.0,
                   "sampling_method='goss'": est.sampling_method == "goss",
                   "booster='dart'": est.booster == "dart",
                   "num_parallel_tree > 1": est.num_parallel_tree > 1,
                   "monotone_constraints": est.monotone_constraints is not None,
                   "multi_strategy='multi_output_tree'":
                       est.multi_strategy == "multi_output_tree"}
        for name, given in refused.items():
            if given:
                raise ValueError(f"boosting_type='ordered' cannot be used with {name}: each "
                                 f"tree grows on every row, one output at a time")
    if est.booster == "dart" and est.early_stopping_rounds is not None:
        raise ValueError("early_stopping_rounds cannot be used with booster='dart': each "
                         "round rescales earlier trees, so the model of the best round is "
                         "not the first rounds of the final one")
    # the engine's parameters the estimator has by the same name, as the field's type
    same = {f.name: type(f.default)(getattr(est, f.name)) for f in fields(booster.BoostParams)
            if isinstance(f.default, (int, float, str)) and f.name != "grad_quant_bins"
            and hasattr(est, f.name)}
    return booster.BoostParams(
        **same, approx_parts=approx_parts, grad_quant_bins=_quant_bins(est),
        grad_quant_auto=isinstance(est.grad_quant_bins, str),   # ("auto", the one string)
        dart=None if est.booster == "gbtree" else booster.DartParams(
            float(est.rate_drop), float(est.skip_drop), bool(est.one_drop),
            est.normalize_type, est.sample_type))


def _given(est, name):
    """Whether the parameter ``name`` asks for something: not None, and for
    ``grad_quant_bins`` not "auto" either (which asks only where it applies)."""
    value = getattr(est, name)
    return value is not None and not (isinstance(value, str) and value == "auto")


def _quant_bins(est):
    """The levels of quantised gradients (0: float): "auto" takes ``AUTO_QUANT_BINS``
    wherever the grower takes them (histograms, one output per tree, not symmetric,
    plain boosting)."""
    if est.grad_quant_bins is None:
        return 0
    if isinstance(est.grad_quant_bins, str):
        takes = (est.tree_method == "hist" and est.multi_strategy == "one_output_per_tree"
                 and est.grow_policy != "symmetric" and est.boosting_type == "plain")
        return AUTO_QUANT_BINS if takes else 0
    return int(est.grad_quant_bins)


def _refuse_constraints(est, method, interactions=False):
    """What the growers written in Python do not take: constraints (but interaction
    constraints when ``interactions``), quantised gradients and vector leaves."""
    names = ("monotone_constraints", "grad_quant_bins") + (
        () if interactions else ("interaction_constraints",))
    for name in names:
        if _given(est, name):
            raise ValueError(f"{name} cannot be used with {method}")
    if est.multi_strategy == "multi_output_tree":
        raise ValueError(f"{method} cannot grow trees whose leaves hold a vector "
                         f"(multi_strategy='multi_output_tree')")


def feature_weights(est, n_features):
    """``feature_weights`` checked, scaled to a largest weight of 1 (or None)."""
    if est.feature_weights is None:
        return None
    try:
        w = np.asarray(est.feature_weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"feature_weights must be numbers, got "
                         f"{est.feature_weights!r}") from None
    if w.shape != (n_features,):
        raise ValueError(f"feature_weights must have one weight per feature ({n_features}), "
                         f"got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError("feature_weights must be finite, >= 0, with at least one > 0")
    # the same draws at any scale: the sampling keys log(u) / w overflow to -inf
    # for subnormal weights, and every such feature would tie
    return w / w.max()


def monotone_constraints(est, n_features):
    """``monotone_constraints`` as an int8 array of -1/0/+1 per feature (None: none)."""
    spec = est.monotone_constraints
    if spec is None:
        return None
    out = np.zeros(n_features, dtype=np.int8)
    names = list(getattr(est, "feature_names_in_", []))
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (list, tuple, np.ndarray)):
        if isinstance(spec, np.ndarray) and spec.ndim != 1:
            raise ValueError(f"monotone_constraints must be 1-D, got an array of shape "
                             f"{spec.shape}")
        if len(spec) != n_features:
            raise ValueError(f"monotone_constraints must have one entry per feature "
                             f"({n_features}), got {len(spec)}")
        items = enumerate(spec)
    else:
        raise TypeError(f"monotone_constraints must be a sequence or a dict, got {spec!r}")
    for key, c in items:
        key = feature_index("monotone_constraints", key, names, n_features)
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or c not in (-1, 0, 1):
            raise ValueError(f"monotone_constraints values must be -1, 0 or 1, got {c!r}")
        out[key] = int(c)
    return out if np.any(out) else None


def interaction_groups(est, n_features):
    """``interaction_constraints`` as lists of feature indices (None: none)."""
    if est.interaction_constraints is None:
        return None
    names = list(getattr(est, "feature_names_in_", []))
    groups = []
    try:
        for i, group in enumerate(est.interaction_constraints):
            if isinstance(group, str):
                raise TypeError
            if len(group) == 0:
                raise ValueError(f"interaction_constraints[{i}] is empty: a group lists the "
                                 f"features that may be split on together in a branch")
            groups.append([feature_index("interaction_constraints", f, names, n_features)
                           for f in group])
    except TypeError:
        raise TypeError("interaction_constraints must be a list of lists of feature indices "
                        f"or names, got {est.interaction_constraints!r}") from None
    return groups


def widen(params, parents):
    """The per-feature parameters for the columns the trees see when they are X's
    columns followed by derived ones (``parents[i]``: the column of X that column i
    comes from): a derived column takes its column's feature weight and interaction
    groups, and no monotone constraint."""
    n = parents.shape[0]
    width = int(np.count_nonzero(parents == np.arange(n)))   # (derived columns come last)
    if params.feature_weights is not None:
        params.feature_weights = params.feature_weights[parents]
    if params.monotone_constraints is not None:
        params.monotone_constraints = np.r_[params.monotone_constraints,
                                            np.zeros(n - width, dtype=np.int8)]
    if params.interaction_constraints is not None:
        params.interaction_constraints = [
            group + [i for i in range(width, n) if parents[i] in group]
            for group in params.interaction_constraints]
