"""What the estimators do around a level-wise fit (``levelwise``: out of core and
on Dask): which of their parameters it takes, its loss, its warm start, and the
fitted local estimator it makes."""
import inspect

import numpy as np

from ..boosting import booster
from ..boosting import objectives as _obj
from ..boosting import ranking
from . import params as _params
from ..distributed.leaf_quantiles import SELECTED
from ..boosting.callback import training_callbacks
from ..boosting.metrics import eval_metrics
from ..growing.grower_params import GrowerParams
from ..kernels._threads import effective_n_threads

# the parameters a level-wise fit takes (the others must stay at their defaults)
SUPPORTED = {"objective", "n_estimators", "learning_rate", "max_depth", "max_leaves",
             "grow_policy", "max_bin",
             "min_child_weight", "reg_lambda", "reg_alpha", "gamma", "max_delta_step",
             "colsample_bytree", "colsample_bylevel", "colsample_bynode", "feature_weights",
             "subsample", "interaction_constraints", "monotone_constraints", "num_parallel_tree",
             "booster", "rate_drop", "skip_drop", "one_drop", "normalize_type", "sample_type",
             "class_weight", "absent_as_missing", "grad_quant_bins", "warm_start",
             "multi_strategy", "n_jobs",
             "random_state", "verbosity", "importance_type", "log_period", "eval_metric",
             "early_stopping_rounds", "callbacks", "tweedie_variance_power", "quantile_alpha",
             "huber_delta", "aft_loss_distribution", "aft_loss_distribution_scale",
             "lambdarank_truncation_level", "lambdarank_num_pair_per_sample",
             "lambdarank_norm", "ndcg_exp_gain"}

# the losses whose starting value and gradients a level-wise fit computes part by part
OBJECTIVES = ("squared_error", "poisson", "gamma", "tweedie", "log_loss", "a callable",
              "absolute_error", "quantile", "huber")



def local_params(estimator, local_class):
    """The parameters of ``local_class`` (a local estimator class) read off ``estimator``."""
    names = inspect.signature(local_class.__init__).parameters
    return {k: getattr(estimator, k) for k in names if k != "self"}


# the parameters of categorical columns (a fit that encodes them: gbtree.dask)
CATEGORICAL = {"categorical_features", "max_cat_to_ordinal", "max_cat_to_onehot", "cat_smooth"}

# the parameters of GOSS (a fit whose rows are all in one shard: out of core); its
# rows are those with the largest gradients of all rows, in the order one sort leaves
GOSS = {"sampling_method", "top_rate", "other_rate"}


def check_params(estimator, local_class, fit_name, also_supported=()):
    """A ValueError naming the first parameter of ``estimator`` a level-wise fit does
    not support (``fit_name`` names the fit in the message; ``also_supported``: parameters it
    supports beside ``SUPPORTED``)."""
    defaults = local_class().get_params()
    for name, value in local_params(estimator, local_class).items():
        if name in SUPPORTED or name in also_supported:
            continue
        default = defaults[name]
        same = value is default or (not isinstance(value, (list, dict, np.ndarray))
                                    and value == default)
        if not same:
            raise ValueError(f"{fit_name} does not support {name}={value!r} yet: leave it at its "
                             f"default ({default!r}) or fit in memory")
    if local_class._kind == "regressor":
        make_objective(estimator, 0, fit_name)   # (a classifier's loss needs its classes)
    if estimator.sampling_method == "goss" and estimator.num_parallel_tree > 1:
        raise ValueError(f"{fit_name} does not support sampling_method='goss' with "
                         f"num_parallel_tree={estimator.num_parallel_tree!r} yet: grow one "
                         f"tree per output a round, or fit in memory")
    if estimator.grow_policy not in ("depthwise", "lossguide", "symmetric"):
        raise ValueError(f"{fit_name} grows depthwise, lossguide or symmetric trees, not "
                         f"grow_policy={estimator.grow_policy!r}")
    if not (estimator.max_depth in range(1, 33)
            or (estimator.max_depth == 0 and estimator.max_leaves)):
        raise ValueError(f"{fit_name}: max_depth must be in 1..32, or 0 with max_leaves set; got "
                         f"max_depth={estimator.max_depth!r}")


def make_objective(estimator, n_classes, fit_name, n_targets=0):
    """The loss of a level-wise fit: a classifier's of ``n_classes`` classes, or (0) a
    regressor's (of a y of ``n_targets`` columns, 0: one); a ValueError naming
    ``fit_name`` for a loss whose starting value or leaf values need all rows at once."""
    if n_classes:
        objective = _obj.classification_objective(estimator.objective, n_classes)
    else:
        objective = estimator._make_objective(n_targets)
    if not (isinstance(objective, SELECTED)
            or (objective.summable_start and not objective.needs_refit)):
        raise ValueError(f"{fit_name} does not support objective={estimator.objective!r} yet (its "
                         f"starting value or leaf values need all rows at once): use one of "
                         f"{', '.join(OBJECTIVES)}, or fit in memory")
    return objective


def prepare(model, params, n_features, encoder, names, eval_sets_fn):
    """``model`` (a local estimator) told the data before a level-wise fit: the
    ``n_features`` columns the trees see (X's, with its categorical columns'
    ``encoder``'s indicator columns; ``encoder``: fitted, None: none) and X's column
    ``names`` (None: none); ``params``' per-feature parameters set from it, as a local
    fit sets them. Returns (the eval sets: ``eval_sets_fn()``, which checks them against
    the model so told, their X encoded as the trees read it; the ``GrowerParams``)."""
    n = model.n_features_in_ = n_features if encoder is None else encoder.width
    model._cat_encoder = encoder
    model.is_categorical_ = None if encoder is None else np.isin(np.arange(n), encoder.columns)
    if names is not None:
        model.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(model, "feature_names_in_"):
        del model.feature_names_in_
    params.feature_weights = _params.feature_weights(model, n)
    params.interaction_constraints = _params.interaction_groups(model, n)
    params.monotone_constraints = _params.monotone_constraints(model, n)
    if encoder is not None and encoder.parents().shape[0] > n:
        _params.widen(params, encoder.parents())
    grower_params = GrowerParams.from_boost(params)
    eval_sets = eval_sets_fn()
    if encoder is not None:   # (the codes: the statistics and indicators too)
        for ev in eval_sets:
            ev.X = encoder.transform(ev.X)
    return eval_sets, grower_params


def continued(model, objective, n_features, fit_name, params):
    """What a warm start of ``model`` (a fitted local estimator, its parameters set;
    ``objective``: this fit's loss, which takes over the fitted one's state)
    continues: (its ensemble, its bin mapper, its rounds), ``params.n_estimators``
    made the rounds still to grow; or (None, None, 0) when the fit starts anew. A
    ValueError when the model cannot be continued by a level-wise fit (``fit_name``
    names it) on ``n_features`` columns."""
    init, done = model._warm_start_model(None, objective)
    if init is None:
        return None, None, 0
    ensemble, mapper = init
    if ensemble.n_features != n_features:
        raise ValueError(f"X has {n_features} features, but the model to continue has "
                         f"{ensemble.n_features}")
    if not booster._on_bin_edges(ensemble, mapper):
        raise ValueError(f"{fit_name} continues models whose trees split at their bin edges; "
                         f"this one's do not (tree_method='exact' or 'approx'): set "
                         f"warm_start=False to refit")
    params.n_estimators -= done
    return ensemble, mapper, done


def fitted(model, ensemble, objective, mapper, n_rounds, state, fit_info, done=0):
    """``model`` (a local estimator, ``prepare``d) made the fitted model of
    ``ensemble``, built in ``n_rounds`` rounds after the ``done`` rounds of the
    model a warm start continued; ``state``: the fit's ``TrainingState``."""
    if isinstance(objective, ranking.Ranking):
        # (the shards' losses drew that many rounds of pairs)
        objective._round = done + n_rounds
    return model._set_fitted(ensemble, objective, {
        "bin_mapper": mapper, "n_rounds": n_rounds, "best_iteration": state.best_iteration,
        "evals_result": state.evals_result, "best_score": state.best_score}, fit_info, done)


def round_settings(model, objective, rng=None):
    """What the rounds of a level-wise fit (``levelwise.boost``) take of the local
    estimator ``model``: the seed of their draws (drawn as the local fit draws it,
    from ``rng`` if given, else from its ``random_state``), its metrics and
    callbacks, and the threads of the caller's own work (the eval sets)."""
    return dict(seed=int((model._rng() if rng is None else rng).randint(0, 2 ** 31 - 1)),
                metrics=eval_metrics(model.eval_metric, objective, type(model).__name__),
                callbacks=training_callbacks(model.callbacks, model.early_stopping_rounds),
                n_threads=effective_n_threads(model.n_jobs))
