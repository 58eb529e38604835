"""scikit-learn estimators: their own parameters, validation, fit/predict; the shared
parameters are in params.py, the work in booster.py."""
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (_check_sample_weight, check_is_fitted,
                                      validate_data)

from sklearn.model_selection import GroupShuffleSplit, train_test_split
from sklearn.utils.class_weight import compute_sample_weight

from ..boosting import booster
from ..explaining import explain
from ..io import model_io
from . import params as _params
from ..boosting import objectives as _obj
from ..predicting._predictor import binary_labels
from ..kernels._threads import call_threads, effective_n_threads
from ..boosting.callback import training_callbacks
from ..boosting.metrics import eval_metrics, ndcg_at_k
from ..data.queries import _check_group_weights, _pop_qid_column, _take, query_groups
from ..data.validation import (_all_or_nothing, _check_choice, _check_list,
                         _check_number, _check_split, _is_str, _naming_the_argument,
                         _same_kind, _sparse_frame_for_scipy, check_base_margin,
                         check_class_weight, check_labels)
from ..data.binning import canonical_csr, check_sparse_structure
from ..data.categorical import CategoricalEncoder, resolve_columns
from ..data.external import ExternalData
from .external_fit import fit_external
from ..predicting.tree import add_trees_to_raw, check_importance_type
from ..explaining.inspection import ModelAccess

_INPUT_DTYPES = [np.float64, np.float32]
_SPARSE_FORMATS = ("csr", "csc", "coo")
_FAST_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))




class _GBTModel(ModelAccess, BaseEstimator):
    """Parameters and fitting logic shared by the estimators (see the subclasses)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ validation
    def _boost_params(self):
        return _params.boost_params(self)

    def _check_x(self, X, reset, y="no_validation", y_numeric=False, multi_output=False):
        """validate_data with sparse matrices accepted (as canonical CSR, never dense);
        returns X, or (X, y) when y is given (fit; a 2-D y with ``multi_output``)."""
        with_y = not (isinstance(y, str) and y == "no_validation")
        extra = dict(y_numeric=y_numeric, multi_output=multi_output) if with_y else {}
        if reset:
            self._cat_encoder = self._categorical_encoder(X)
        encoder = getattr(self, "_cat_encoder", None)
        if encoder is not None:
            encoder.check_columns(X, self)
            X = encoder.codes(X)   # a new X: the categorical columns as float codes
        X = _sparse_frame_for_scipy(X)
        fmt = X.format if sp.issparse(X) else None
        if fmt in _SPARSE_FORMATS:
            check_sparse_structure(X)   # before scipy touches its indices

        def validate(*y_arg, **y_options):
            return validate_data(self, X, *y_arg, dtype=_INPUT_DTYPES, ensure_all_finite=False,
                                 accept_sparse=_SPARSE_FORMATS, reset=reset, **y_options)

        def x_alone_fails():
            if not with_y:
                return True
            try:
                validate()   # (a fit that raises restores the estimator's attributes)
            except (TypeError, ValueError):
                return True
            return False

        try:
            out = validate(y, **extra) if with_y else validate()
        except (TypeError, ValueError) as exc:
            named = _naming_the_argument(exc, X, x_alone_fails)
            if named is exc:
                raise
            raise named from exc
        X = out[0] if with_y else out
        if sp.issparse(X):
            if fmt not in _SPARSE_FORMATS:
                # BSR, LIL, DIA, DOK: scipy converted them to CSR without checking
                source = fmt.upper() if fmt else f"a {type(X).__name__} of sparse columns"
                check_sparse_structure(X, name=f"X (converted from {source})")
            X = canonical_csr(X)
            if X.dtype not in _FAST_DTYPES:   # (scikit-learn keeps a sparse frame's bools)
                X = X.astype(np.float64)
        return (X, out[1]) if with_y else X

    def _categorical_encoder(self, X):
        """The encoder of the columns ``categorical_features`` names in X, fitted on
        their values, or None (no categorical feature); sets ``is_categorical_``."""
        self.is_categorical_ = None
        # (checked whether or not a column is categorical, as every parameter is)
        if isinstance(self.cat_smooth, str):
            if self.cat_smooth != "auto":
                raise ValueError(f"cat_smooth must be 'auto' or a real number > 0, got "
                                 f"{self.cat_smooth!r}")
        else:
            _check_number("cat_smooth", self.cat_smooth, "real", 0, low_open=True)
        _check_number("max_cat_to_ordinal", self.max_cat_to_ordinal, "int", 0)
        _check_number("max_cat_to_onehot", self.max_cat_to_onehot, "int", 0)
        if self.categorical_features is None:
            return None
        columns = resolve_columns(self.categorical_features, X)
        if not columns:
            return None
        encoder = CategoricalEncoder(columns, self.cat_smooth, self.max_cat_to_ordinal,
                                     self.max_cat_to_onehot).fit_categories(X)
        self.is_categorical_ = np.isin(np.arange(np.shape(X)[1]), columns)
        return encoder

    def _fit_external(self, data, local_class, y, sample_weight, eval_set,
                      sample_weight_eval_set, base_margin, base_margin_eval_set):
        """``fit`` on an ``ExternalData``, which holds the labels and weights; the eval
        sets are in memory."""
        if any(v is not None for v in (y, sample_weight, base_margin)):
            raise ValueError("with ExternalData, the labels, weights and base margins come "
                             "from the data: y, sample_weight and base_margin must be None")

        def eval_sets(objective):
            return self._checked_eval_sets(eval_set, sample_weight_eval_set, objective,
                                           base_margin_eval_set)

        return fit_external(self, local_class, data, eval_sets)

    def _checked_eval_sets(self, eval_set, sample_weight_eval_set, objective,
                           base_margin_eval_set=None):
        """The eval sets of a fit, their labels checked for ``objective``."""
        sets = self._eval_sets(eval_set, sample_weight_eval_set, self._eval_labels,
                               base_margin_eval_set, objective.n_outputs, objective.y_columns)
        _check_eval_targets(sets, objective)
        return sets

    def _continues(self):
        """Whether a fit continues the fitted model (``warm_start=True``; any other
        value is checked with the parameters)."""
        return (isinstance(self.warm_start, (bool, np.bool_)) and bool(self.warm_start)
                and hasattr(self, "_ensemble"))

    def _validate_fit_data(self, X, y, sample_weight, y_numeric, multi_output=False):
        if y is not None and not sp.issparse(y):   # (scikit-learn names those)
            check_labels(y, classes=not y_numeric)
        # continuing a model: X must have the fitted model's columns
        continuing = self._continues()
        if continuing:
            self._check_same_categorical(X)
        X, y = self._check_x(X, not continuing, y, y_numeric, multi_output)
        if multi_output:
            if sp.issparse(y):
                raise TypeError("y must be dense: a sparse y is not supported")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y[:, 0]   # a column vector: one target
            y = np.ascontiguousarray(y)   # (a column of a larger array is a strided view)
        if y_numeric:   # scikit-learn converts only an object y
            try:
                y = y.astype(np.float64, copy=False)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"y must hold numbers: {exc}") from None
        if sample_weight is not None:
            # rejects wrong lengths, NaN/inf, negative values and all zeros
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        return X, y, sample_weight

    def _check_same_categorical(self, X):
        encoder = getattr(self, "_cat_encoder", None)
        if encoder is not None:
            encoder.check_columns(X, self)   # other columns: that is what to say
        columns = (None if self.categorical_features is None
                   else resolve_columns(self.categorical_features, X))
        before = ((encoder.columns, encoder.smooth, encoder.max_ordinal, encoder.max_onehot)
                  if encoder is not None else
                  ([], self.cat_smooth, self.max_cat_to_ordinal, self.max_cat_to_onehot))
        now = (columns or [], self.cat_smooth, self.max_cat_to_ordinal, self.max_cat_to_onehot)
        if before != now:
            raise ValueError(f"warm_start=True continues the fitted model, whose categorical "
                             f"columns, cat_smooth, max_cat_to_ordinal and max_cat_to_onehot "
                             f"are {before}; these "
                             f"parameters on this X give {now}. Set warm_start=False to refit")

    def _validate_predict_data(self, X):
        if not hasattr(self, "_ensemble"):   # (check_is_fitted costs microseconds a call)
            check_is_fitted(self, "_ensemble")
        encoder = getattr(self, "_cat_encoder", None)
        if encoder is not None:
            return encoder.transform(self._check_x(X, reset=False))
        # Fast path for the common case, same outcome as validate_data: a non-empty 2-D
        # float ndarray with the fitted width, for a model fitted without feature names
        # (one-row latency is dominated by validation otherwise).
        if (type(X) is np.ndarray and X.ndim == 2 and X.dtype in _FAST_DTYPES
                and X.shape[0] > 0 and X.shape[1] == self.n_features_in_
                and not hasattr(self, "feature_names_in_")):
            return X
        return self._check_x(X, reset=False)

    # ------------------------------------------------------------------ fit / predict
    def _eval_sets(self, eval_set, sample_weight_eval_set, encode_y, base_margin_eval_set=None,
                   n_outputs=1, y_columns=0):
        if eval_set is None:
            for name, value in (("sample_weight_eval_set", sample_weight_eval_set),
                                ("base_margin_eval_set", base_margin_eval_set)):
                if value is not None:
                    raise ValueError(f"{name} is given without eval_set")
            return []
        if not isinstance(eval_set, (list, tuple)):
            raise TypeError("eval_set must be a list of (X, y) pairs")
        for name, value in (("sample_weight_eval_set", sample_weight_eval_set),
                            ("base_margin_eval_set", base_margin_eval_set)):
            _check_list(name, value)
            if value is not None and len(value) != len(eval_set):
                raise ValueError(f"{name} has {len(value)} entries but eval_set has "
                                 f"{len(eval_set)}")
        sets = []
        for i, pair in enumerate(eval_set):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"eval_set[{i}] must be an (X, y) pair")
            try:
                X_val = self._check_x(pair[0], reset=False)
            except (TypeError, ValueError) as exc:
                raise _same_kind(exc)(f"eval_set[{i}]: {exc}") from None
            try:
                y_val = np.asarray(pair[1])
            except ValueError as exc:   # (a ragged list)
                raise ValueError(f"eval_set[{i}]: y must be 1-D with one value per row of X: "
                                 f"{exc}") from None
            if y_columns and y_val.shape != (X_val.shape[0], y_columns):
                raise ValueError(f"eval_set[{i}]: y must have shape ({X_val.shape[0]}, "
                                 f"{y_columns}), one row per row of X and the training "
                                 f"y's columns, got {y_val.shape}")
            if not y_columns and (y_val.ndim != 1 or y_val.shape[0] != X_val.shape[0]):
                raise ValueError(f"eval_set[{i}]: y must be 1-D with one value per row of X")
            y_val = encode_y(y_val, f"eval_set[{i}]")
            w_val = None
            if sample_weight_eval_set is not None and sample_weight_eval_set[i] is not None:
                try:
                    w_val = _check_sample_weight(sample_weight_eval_set[i], X_val,
                                                 dtype=np.float64, ensure_non_negative=True)
                except ValueError as exc:
                    raise ValueError(f"sample_weight_eval_set[{i}]: {exc}") from None
            m_val = check_base_margin(
                None if base_margin_eval_set is None else base_margin_eval_set[i],
                X_val.shape[0], n_outputs, f"base_margin_eval_set[{i}]")
            sets.append(booster.EvalSet(f"validation_{i}", X_val, y_val, w_val,
                                        base_margin=m_val))
        return sets

    def _rng(self):
        try:
            return check_random_state(self.random_state)
        except ValueError as exc:
            raise ValueError(f"random_state must be None, an int or a RandomState instance, "
                             f"got {self.random_state!r}") from exc

    def _fit(self, X, y, sample_weight, objective, eval_set=None, sample_weight_eval_set=None,
             encode_y=None, stratify=False, eval_sets=None, rng=None, base_margin=None,
             base_margin_eval_set=None):
        """Validate the parameters and train.

        ``eval_sets`` (a list of ``booster.EvalSet``) and ``rng`` are given by an
        estimator that has built its eval sets and any ``validation_fraction``
        hold-out itself (the ranker, which splits by query); then ``eval_set``
        and ``base_margin_eval_set`` are not read and no hold-out is made here.
        ``base_margin`` is already checked (``check_base_margin``).
        """
        params = self._boost_params()
        check_importance_type(self.importance_type)
        n_threads = effective_n_threads(self.n_jobs)
        prepared = eval_sets is not None
        rng = self._rng() if rng is None else rng
        params.seed = int(rng.randint(0, 2 ** 31 - 1))
        params.feature_weights = _params.feature_weights(self, X.shape[1])
        params.interaction_constraints = _params.interaction_groups(self, X.shape[1])
        params.monotone_constraints = _params.monotone_constraints(self, X.shape[1])
        metrics = eval_metrics(self.eval_metric, objective, type(self).__name__)
        callbacks = training_callbacks(self.callbacks, self.early_stopping_rounds)
        if not prepared:
            eval_sets = self._eval_sets(eval_set, sample_weight_eval_set, encode_y,
                                        base_margin_eval_set, objective.n_outputs,
                                        y.shape[1] if y.ndim == 2 else 0)
            _check_eval_targets(eval_sets, objective)
        objective.check_target(y)
        init_model, done = self._warm_start_model(X, objective)
        if init_model is not None:
            if params.n_estimators == done:
                return self
            params.n_estimators -= done
        if self.validation_fraction > 0 and not prepared:
            idx = np.arange(X.shape[0])
            try:
                train, val = train_test_split(idx, test_size=self.validation_fraction,
                                              random_state=rng, stratify=y if stratify else None)
            except ValueError as exc:
                raise ValueError(f"validation_fraction={self.validation_fraction} cannot split "
                                 f"these {X.shape[0]} rows: {exc}") from exc
            _check_split(objective, y, sample_weight, train, val, self.validation_fraction)
            eval_sets.append(booster.EvalSet("validation", X[val], y[val],
                                             _take(sample_weight, val),
                                             base_margin=_take(base_margin, val)))
            X, y = X[train], y[train]
            sample_weight, base_margin = _take(sample_weight, train), _take(base_margin, train)
        X = self._target_statistics(X, y, sample_weight, objective, params.seed, eval_sets,
                                    continuing=init_model is not None)
        if X.shape[1] > self.n_features_in_:   # indicator columns follow X's
            _params.widen(params, self._cat_encoder.parents())
        self._ensemble, info = booster.train(
            X, y, objective, params, sample_weight=sample_weight, n_threads=n_threads,
            random_state=rng, eval_sets=eval_sets, metrics=metrics, callbacks=callbacks,
            init_model=init_model, base_margin=base_margin)
        self._objective = objective
        self._bin_mapper = info["bin_mapper"]
        self.fit_info_ = {"bin_seconds": info["bin_seconds"],
                          "boost_seconds": info["boost_seconds"]}
        previous = {k: getattr(self, k) for k in ("evals_result_", "best_score_",
                                                  "best_iteration_", "oob_improvement_",
                                                  "oob_scores_", "oob_score_")
                    if hasattr(self, k)}
        for k in previous:
            delattr(self, k)
        self.n_estimators_ = done + info["n_rounds"]
        self.best_iteration_ = done + info["best_iteration"]
        if eval_sets:
            self.evals_result_ = info["evals_result"]
            self.best_score_ = info["best_score"]
        if "oob_scores" in info:
            self.oob_improvement_ = info["oob_improvement"]
            self.oob_scores_ = info["oob_scores"]
        if done:
            self._continue_histories(previous, metrics, info["n_rounds"])
        if "oob_scores" in info and len(self.oob_scores_) > 0:
            self.oob_score_ = float(self.oob_scores_[-1])
        return self

    def _target_statistics(self, X, y, sample_weight, objective, seed, eval_sets, continuing):
        """The training X with the categorical columns' ordered target statistics, and
        the eval sets' X with the statistics of all training rows (docs/index.md)."""
        encoder = getattr(self, "_cat_encoder", None)
        if encoder is None:
            return X
        if (objective.n_outputs > 1 or y.ndim == 2) and encoder.statistics_columns():
            raise ValueError("categorical_features: the target statistics of a column of more "
                             "than max_cat_to_ordinal values need one target: a regressor, a "
                             "binary classifier or a ranker, not a classifier of "
                             f"{objective.n_outputs} classes; encode those columns first "
                             "(sklearn.preprocessing.TargetEncoder handles several classes)")
        if continuing:
            X = encoder.ordered(X, y, sample_weight)
        else:
            X = encoder.fit_ordered(X, y, sample_weight, seed)
        for ev in eval_sets:
            ev.X = encoder.transform(ev.X)
        return X

    def _continue_histories(self, previous, metrics, n_new):
        """Warm start: the histories cover every round, and early stopping keeps the best
        round of all fits."""
        old = previous.get("evals_result_")
        if old is not None and hasattr(self, "evals_result_") and all(
                old.get(d, {}).keys() == ms.keys() for d, ms in self.evals_result_.items()):
            self.evals_result_ = {d: {m: old[d][m] + v for m, v in ms.items()}
                                  for d, ms in self.evals_result_.items()}
        if "oob_scores_" in previous or hasattr(self, "oob_scores_"):
            # NaN for the rounds of a fit without row sampling (no rows left out)
            n_old = (len(previous["oob_scores_"]) if "oob_scores_" in previous
                     else self.n_estimators_ - n_new)
            for name in ("oob_improvement_", "oob_scores_"):
                old_part = previous.get(name, np.full(n_old, np.nan))
                new_part = getattr(self, name, np.full(n_new, np.nan))
                setattr(self, name, np.concatenate([old_part, new_part]))
        if (self.early_stopping_rounds is not None and previous.get("best_score_") is not None
                and getattr(self, "best_score_", None) is not None):
            sign = 1.0 if metrics[-1].greater_is_better else -1.0
            if sign * (previous["best_score_"] - self.best_score_) >= 0:
                self.best_iteration_ = previous["best_iteration_"]
                self.best_score_ = previous["best_score_"]

    def _warm_start_model(self, X, objective):
        """(model to continue, its rounds) under ``warm_start``, else (None, 0)."""
        if not self._continues():
            return None, 0
        # the loss and its parameters; not the training data a ranker's objective holds
        ignore = ("func", "_round")
        new = {k: v for k, v in objective.state().items() if k not in ignore}
        old = {k: v for k, v in self._objective.state().items() if k not in ignore}
        same = (type(objective) is type(self._objective)
                and objective.n_outputs == self._objective.n_outputs
                and getattr(objective, "func", None) is getattr(self._objective, "func", None)
                and new.keys() == old.keys()
                and all(np.all(v == old[k]) for k, v in new.items()))
        if not same:
            raise ValueError("warm_start=True continues the fitted model, but the objective or "
                             "its parameters changed; set warm_start=False to refit")
        if self.num_parallel_tree * self._ensemble.n_outputs * self.n_estimators_ != \
                self._ensemble.n_trees:
            raise ValueError("warm_start=True continues the fitted model, but "
                             "num_parallel_tree changed; set warm_start=False to refit")
        if bool(self.absent_as_missing) != (self._absent() != 0.0):
            raise ValueError("warm_start=True continues the fitted model, but absent_as_missing "
                             "changed; set warm_start=False to refit")
        if self.n_estimators < self.n_estimators_:
            raise ValueError(f"n_estimators={self.n_estimators} must be >= n_estimators_="
                             f"{self.n_estimators_} when warm_start=True")
        objective.continue_from(self._objective)
        return (self._ensemble, self._bin_mapper), self.n_estimators_

    def _trees_per_round(self):
        ens = self._ensemble
        return ens.n_trees // self.n_estimators_ if self.n_estimators_ else ens.n_outputs

    def _tree_range(self, iteration_range):
        """Trees for rounds ``[start, stop)``; the default stops after the best round."""
        K = self._trees_per_round()
        if iteration_range is None:
            return 0, (self.best_iteration_ + 1) * K
        try:
            start, stop = iteration_range
            if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                       for v in (start, stop)):
                raise TypeError
            start, stop = int(start), int(stop)
        except (TypeError, ValueError):
            raise TypeError(f"iteration_range must be a pair (start, stop), "
                            f"got {iteration_range!r}") from None
        if not 0 <= start <= stop <= self.n_estimators_:
            raise ValueError(f"iteration_range must satisfy 0 <= start <= stop <= "
                             f"n_estimators_={self.n_estimators_}, got {iteration_range!r}")
        return start * K, stop * K

    def _raw_predict(self, X, iteration_range=None, base_margin=None):
        X = self._validate_predict_data(X)
        if base_margin is not None:
            base_margin = check_base_margin(base_margin, X.shape[0], self._ensemble.n_outputs)
        # (every tree: no range to work out, the common case)
        trees = (None if iteration_range is None and self.best_iteration_ + 1 == self.n_estimators_
                 else self._tree_range(iteration_range))
        n_threads = call_threads(self.n_jobs, X.shape[0], self._ensemble.n_trees)
        return self._ensemble.predict_raw(X, n_threads, trees,
                                          absent=self._absent(), base_margin=base_margin)

    def _staged_raw(self, X, base_margin=None):
        X = self._validate_predict_data(X)
        ens = self._ensemble
        n_threads = call_threads(self.n_jobs, X.shape[0], self._trees_per_round())
        K, per_round = ens.n_outputs, self._trees_per_round()
        raw = ens._starting_raw(X.shape[0], check_base_margin(base_margin, X.shape[0], K))
        for r in range(self.n_estimators_):
            trees = range(r * per_round, (r + 1) * per_round)
            add_trees_to_raw(X, [ens.tree(t) for t in trees], ens.tree_class[trees.start:trees.stop],
                             raw, n_threads, absent=self._absent())
            yield raw.copy()   # the caller may keep every stage

    @property
    def base_score_(self):
        """The starting raw prediction F0 (one value per output): a raw prediction is
        ``base_score_`` plus the leaf values of the trees (see ``get_dump``)."""
        check_is_fitted(self, "_ensemble")
        b = self._ensemble.base_score
        return float(b[0]) if b.shape[0] == 1 else b.copy()

    @property
    def n_trees_(self):
        """Number of trees in the model (rounds x outputs)."""
        check_is_fitted(self, "_ensemble")
        return self._ensemble.n_trees

    @property
    def feature_importances_(self):
        """Importance per feature of the kind ``importance_type`` names (total split
        gain by default), normalised to sum to 1 (all 0 if no tree split)."""
        check_is_fitted(self, "_ensemble")
        check_importance_type(self.importance_type)
        imp = self._ensemble.feature_importances(self.importance_type)
        encoder = getattr(self, "_cat_encoder", None)
        if encoder is not None:   # indicator columns' importances added to their column's
            imp = encoder.fold(imp, (0,))
        total = imp.sum()
        return imp / total if total > 0 else imp

    def _absent(self):
        """The value of an absent entry of a sparse X for this fitted model."""
        return np.nan if getattr(self._bin_mapper, "absent_as_missing", False) else 0.0

    def _output_names(self):
        return getattr(self, "classes_", None) if self._ensemble.n_outputs > 1 else None

    def __getstate__(self):
        # a fitted model pickles as its model document, and is checked when unpickled
        return model_io.pickle_state(self, super().__getstate__())

    def __setstate__(self, state):
        model_io.restore_pickle_state(self, state, super().__setstate__)


@model_io.estimator_class
class GBTRegressor(RegressorMixin, _GBTModel):
    __module__ = "gbtree.sklearn"   # pickles and docs name the public module
    _kind = "regressor"   # (what a fit out of core or on Dask reads of it)
    # (a docstring joined with "+" is an expression, not a docstring: hence __doc__)
    __doc__ = """Gradient-boosted trees for regression.

    Parameters
    ----------
    objective : str or callable, default="squared_error"
        ``"squared_error"``, ``"absolute_error"``, ``"huber"``, ``"quantile"``,
        ``"poisson"``, ``"gamma"`` or ``"tweedie"`` (the last three with a log
        link: ``predict`` returns ``exp(raw)``), ``"cox"`` (survival: y is the
        time of the event, negative for a censored row; ``predict`` returns
        the hazard ratio ``exp(raw)``), ``"aft"`` (survival, accelerated
        failure time: y of shape (n, 2), each row's lower and upper bound on
        the time; ``predict`` returns the time ``exp(raw)``), or a callable
        ``f(y_true, raw_prediction[, sample_weight]) -> (grad, hess)`` (see
        ``gbtree.boosting.objectives.Custom``). Absolute error, quantile and Huber refit
        each leaf on its rows' residuals after the tree is grown.
    huber_delta : float, default=1.0
        Residual size where the Huber loss turns from quadratic to linear.
    quantile_alpha : float or list of float, default=0.5
        The quantile that ``objective="quantile"`` estimates, in (0, 1); a
        list of increasing values fits one model of them all (one tree per
        value and round), whose ``predict`` returns one column per value,
        sorted in each row so that the quantiles never cross.
    tweedie_variance_power : float, default=1.5
        Variance power of ``objective="tweedie"``, in (1, 2).
    aft_loss_distribution : {"normal", "logistic", "extreme"}, default="normal"
        The distribution of Z in ``objective="aft"``'s ``log T = F + sigma Z``.
    aft_loss_distribution_scale : float, default=1.0
        ``sigma`` of ``objective="aft"``, > 0.
""" + _params.SHARED_PARAMS_DOC

    def __init__(self, *, objective="squared_error", huber_delta=1.0, quantile_alpha=0.5,
                 tweedie_variance_power=1.5, aft_loss_distribution="normal",
                 aft_loss_distribution_scale=1.0,
                 n_estimators=100, learning_rate=0.1, max_depth=6,
                 max_leaves=0, grow_policy="depthwise", max_bin=256, min_child_weight=1.0,
                 reg_lambda=1.0, reg_alpha=0.0, gamma=0.0, max_delta_step=0.0, eval_metric=None,
                 early_stopping_rounds=None, validation_fraction=0.0, callbacks=None,
                 log_period=10, n_jobs=None, random_state=0, verbosity=0,
                 importance_type="total_gain", warm_start=False, subsample=1.0,
                 sampling_method="uniform", top_rate=0.2, other_rate=0.1, colsample_bytree=1.0,
                 colsample_bylevel=1.0, colsample_bynode=1.0, feature_weights=None,
                 interaction_constraints=None, monotone_constraints=None,
                 absent_as_missing=False, grad_quant_bins=None, categorical_features=None,
                 cat_smooth="auto", max_cat_to_ordinal=32,
                 max_cat_to_onehot=32,
                 booster="gbtree", rate_drop=0.0, skip_drop=0.0, one_drop=False,
                 normalize_type="tree", sample_type="uniform", num_parallel_tree=1,
                 multi_strategy="one_output_per_tree", tree_method="hist", sketch_eps=None,
                 approx_proposal="global", boosting_type="plain", permutation_count=4):
        self.objective = objective
        self.huber_delta = huber_delta
        self.quantile_alpha = quantile_alpha
        self.tweedie_variance_power = tweedie_variance_power
        self.aft_loss_distribution = aft_loss_distribution
        self.aft_loss_distribution_scale = aft_loss_distribution_scale
        _params.set_shared(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True   # a y of several columns (squared error)
        return tags

    def _make_objective(self, n_targets=0):
        # checked whichever objective is used, as every other parameter is
        _check_number("huber_delta", self.huber_delta, "real", 0, low_open=True)
        alphas = self._quantile_alphas()
        _check_number("tweedie_variance_power", self.tweedie_variance_power, "real", 1, 2,
                      low_open=True, high_open=True)
        _check_choice("aft_loss_distribution", self.aft_loss_distribution,
                      tuple(_obj.AFT_DISTRIBUTIONS))
        _check_number("aft_loss_distribution_scale", self.aft_loss_distribution_scale, "real", 0,
                      low_open=True)
        obj = self.objective
        if _is_str(obj, "aft"):
            if n_targets != 2 and n_targets != 0:
                raise ValueError("objective='aft' needs y of shape (n_samples, 2): each row's "
                                 "lower and upper bound on the time (equal for an observed "
                                 "time, inf above a right-censored one)")
            return _obj.AFT(self.aft_loss_distribution, self.aft_loss_distribution_scale)
        if n_targets > 1 and not _is_str(obj, "squared_error"):
            raise ValueError(f"a y of {n_targets} columns needs objective='squared_error' (one "
                             f"output per column), got objective={obj!r}")
        if n_targets > 1:
            return _obj.MultiSquaredError(n_targets)
        if callable(obj):
            return _obj.Custom(obj)
        if not _is_str(obj, *_obj.REGRESSION_OBJECTIVES):
            raise ValueError(f"objective must be a callable or one of "
                             f"{_obj.REGRESSION_OBJECTIVES}, got {obj!r}")
        if obj == "huber":
            return _obj.Huber(self.huber_delta)
        if obj == "quantile":
            return _obj.Quantile(alphas[0]) if len(alphas) == 1 else _obj.MultiQuantile(alphas)
        if obj == "tweedie":
            return _obj.Tweedie(self.tweedie_variance_power)
        simple = {"squared_error": _obj.SquaredError, "absolute_error": _obj.AbsoluteError,
                  "poisson": _obj.Poisson, "gamma": _obj.Gamma, "cox": _obj.Cox}
        return simple[obj]()

    def _quantile_alphas(self):
        """``quantile_alpha`` as a tuple of increasing numbers in (0, 1)."""
        value = self.quantile_alpha
        if isinstance(value, (list, tuple, np.ndarray)):
            alphas = list(np.asarray(value).ravel()) if isinstance(value, np.ndarray) else value
            if len(alphas) == 0:
                raise ValueError("quantile_alpha must hold at least one value")
            for i, a in enumerate(alphas):
                _check_number(f"quantile_alpha[{i}]", a, "real", 0, 1, low_open=True,
                              high_open=True)
            if any(a >= b for a, b in zip(alphas, alphas[1:])):
                raise ValueError(f"quantile_alpha must be increasing, got {value!r}")
            return tuple(float(a) for a in alphas)
        _check_number("quantile_alpha", value, "real", 0, 1, low_open=True, high_open=True)
        return (float(value),)

    @_all_or_nothing
    def fit(self, X, y=None, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            base_margin=None, base_margin_eval_set=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or ExternalData
            NaN marks a missing value. An ``ExternalData`` is read in chunks and
            trained on out of core (it holds the labels and weights: the other
            arguments stay None; see ``gbtree.estimators.external_fit``).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Several columns (``objective="squared_error"`` only): one output, and
            one tree per round, per column; ``predict`` returns one column each.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.
        eval_set : list of (X, y) pairs, default=None
            Data evaluated with ``eval_metric`` after every round (named
            ``validation_0``, ``validation_1``, ... in ``evals_result_``).
        sample_weight_eval_set : list of array-like or None, default=None
            Weights of each eval set.
        base_margin : array-like of shape (n_samples,), default=None
            An offset: each row's starting raw score (on the link scale, e.g.
            the log of exposure for ``objective="poisson"``), in place of the
            fitted starting value; the trees fit what it leaves. Pass the
            rows' offsets to ``predict`` too.
        base_margin_eval_set : list of array-like or None, default=None
            The offsets of each eval set.
        """
        if isinstance(X, ExternalData):
            return self._fit_external(X, GBTRegressor, y, sample_weight, eval_set,
                                      sample_weight_eval_set, base_margin, base_margin_eval_set)
        aft = isinstance(self._make_objective(), _obj.AFT)   # (checks the parameters first)
        if aft:
            # interval labels may hold inf, which scikit-learn's checks of y refuse: they
            # check the finite lower bounds, and the objective the intervals
            bounds = _aft_bounds(y)
            X, _, sample_weight = self._validate_fit_data(X, bounds[:, 0], sample_weight,
                                                          y_numeric=True)
            y = bounds
        else:
            X, y, sample_weight = self._validate_fit_data(X, y, sample_weight, y_numeric=True,
                                                          multi_output=True)
        objective = self._make_objective(y.shape[1] if y.ndim == 2 else 1)
        base_margin = check_base_margin(base_margin, X.shape[0], objective.n_outputs)
        return self._fit(X, y, sample_weight, objective, eval_set, sample_weight_eval_set,
                         self._eval_labels, base_margin=base_margin,
                         base_margin_eval_set=base_margin_eval_set)

    def _eval_labels(self, y_val, name):
        """An eval set's labels as numbers (finite, but for AFT's unbounded intervals)."""
        try:
            y_val = y_val.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: y must hold numbers") from None
        aft = _is_str(self.objective, "aft")
        if np.any(np.isnan(y_val)) or (not aft and not np.all(np.isfinite(y_val))):
            raise ValueError(f"{name}: y contains NaN or infinity")
        return y_val

    def predict(self, X, iteration_range=None, *, base_margin=None, pred_contribs=False,
                approx_contribs=False, pred_interactions=False):
        """Predicted values, shape (n_samples,), or (n_samples, n_alphas) for several
        ``quantile_alpha``, or (n_samples, n_targets) for a y of several columns.

        ``iteration_range=(start, stop)`` uses the trees of rounds
        ``start <= r < stop``; by default all rounds up to the best one.
        ``base_margin``: the rows' offsets (see :meth:`fit`), in place of the
        starting value. ``pred_contribs``, ``approx_contribs``,
        ``pred_interactions``: see :meth:`to_shap`.
        """
        mode = explain.explain_mode(pred_contribs, approx_contribs, pred_interactions)
        if mode is not None:
            return explain.predict_explained(self, X, iteration_range, mode, base_margin)
        raw = self._raw_predict(X, iteration_range, base_margin)   # checks that it is fitted
        return self._objective.transform(raw)

    def staged_predict(self, X, base_margin=None):
        """Predictions after each round, as a generator of arrays."""
        for raw in self._staged_raw(X, base_margin):
            yield self._objective.transform(raw)


@model_io.estimator_class
class GBTClassifier(ClassifierMixin, _GBTModel):
    __module__ = "gbtree.sklearn"   # pickles and docs name the public module
    _kind = "classifier"   # (what a fit out of core or on Dask reads of it)
    __doc__ = """Gradient-boosted trees for classification: binary log loss, or
    multinomial (softmax, one tree per class per round) for 3+ classes.

    Parameters
    ----------
    objective : "log_loss" or callable, default="log_loss"
        ``"log_loss"``: the logistic loss for two classes, softmax for more. A
        callable ``f(y_true, raw_prediction[, sample_weight]) -> (grad, hess)``
        receives the class codes 0..K-1 and raw scores of shape (n,) for two
        classes or (n, K); ``predict_proba`` then applies the sigmoid / softmax.
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplied into ``sample_weight`` (scikit-learn's
        convention; ``"balanced"`` is ``n_samples / (n_classes * count)``).
""" + _params.SHARED_PARAMS_DOC

    def __init__(self, *, objective="log_loss", class_weight=None, n_estimators=100,
                 learning_rate=0.1, max_depth=6, max_leaves=0, grow_policy="depthwise",
                 max_bin=256, min_child_weight=1.0, reg_lambda=1.0, reg_alpha=0.0, gamma=0.0,
                 max_delta_step=0.0, eval_metric=None, early_stopping_rounds=None,
                 validation_fraction=0.0, callbacks=None, log_period=10, n_jobs=None,
                 random_state=0, verbosity=0, importance_type="total_gain", warm_start=False,
                 subsample=1.0, sampling_method="uniform", top_rate=0.2, other_rate=0.1,
                 colsample_bytree=1.0, colsample_bylevel=1.0, colsample_bynode=1.0,
                 feature_weights=None, interaction_constraints=None,
                 monotone_constraints=None, absent_as_missing=False, grad_quant_bins=None,
                 categorical_features=None, cat_smooth="auto", max_cat_to_ordinal=32,
                 max_cat_to_onehot=32,
                 booster="gbtree", rate_drop=0.0, skip_drop=0.0, one_drop=False,
                 normalize_type="tree", sample_type="uniform", num_parallel_tree=1,
                 multi_strategy="one_output_per_tree", tree_method="hist", sketch_eps=None,
                 approx_proposal="global", boosting_type="plain", permutation_count=4):
        self.objective = objective
        self.class_weight = class_weight
        _params.set_shared(self, locals())

    @_all_or_nothing
    def fit(self, X, y=None, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            base_margin=None, base_margin_eval_set=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or ExternalData
            NaN marks a missing value. An ``ExternalData`` is read in chunks and
            trained on out of core (it holds the labels and weights: the other
            arguments stay None; see ``gbtree.estimators.external_fit``).
        y : array-like of shape (n_samples,)
            Class labels of any type (at least two distinct).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.
        eval_set : list of (X, y) pairs, default=None
            Data evaluated with ``eval_metric`` after every round; its labels
            must be among the training classes.
        sample_weight_eval_set : list of array-like or None, default=None
            Weights of each eval set.
        base_margin : array-like of shape (n_samples,) or (n_samples, n_classes), default=None
            An offset: each row's starting raw score (log-odds of ``classes_[1]``
            for two classes, one score per class otherwise), in place of the
            fitted starting value. Pass the rows' offsets to ``predict`` too.
        base_margin_eval_set : list of array-like or None, default=None
            The offsets of each eval set.
        """
        if not (callable(self.objective) or _is_str(self.objective, "log_loss")):
            raise ValueError(f"objective must be 'log_loss' or a callable, got {self.objective!r}")
        if isinstance(X, ExternalData):
            return self._fit_external(X, GBTClassifier, y, sample_weight, eval_set,
                                      sample_weight_eval_set, base_margin, base_margin_eval_set)
        X, y, sample_weight = self._validate_fit_data(X, y, sample_weight, y_numeric=False)
        try:
            check_classification_targets(y)
        except (TypeError, ValueError) as exc:   # (which one depends on the labels' order)
            kinds = sorted({type(v).__name__ for v in y}) if y.dtype == object else []
            if len(kinds) > 1:
                raise ValueError(f"y mixes {' and '.join(kinds)} labels: the class labels "
                                 f"must all be of one type") from None
            raise ValueError(f"y: {exc}") from None
        # (the codes by search in the sorted classes: np.unique's return_inverse
        # argsorts y, 60 ms against 15 ms for a million labels)
        classes = np.unique(y)
        y_enc = _obj.class_codes(y, classes, call_threads(self.n_jobs, y.shape[0]))
        self._set_classes(classes)
        n_classes = self.classes_.shape[0]
        if n_classes < 2:
            raise ValueError(f"y must contain at least two classes; got 1 class: {self.classes_[0]!r}")
        if self.class_weight is not None:
            check_class_weight(self.class_weight)
            cw = compute_sample_weight(self.class_weight, y)
            sample_weight = cw if sample_weight is None else sample_weight * cw
            if not np.any(sample_weight > 0):
                raise ValueError("class_weight gives every row weight 0"
                                 + ("" if sample_weight is cw else " (with sample_weight)"))
        objective = _obj.classification_objective(self.objective, n_classes)
        base_margin = check_base_margin(base_margin, X.shape[0], objective.n_outputs)
        return self._fit(X, y_enc, sample_weight, objective, eval_set,
                         sample_weight_eval_set, self._eval_labels, stratify=True,
                         base_margin=base_margin, base_margin_eval_set=base_margin_eval_set)

    def _set_classes(self, classes):
        """Take the classes of y (sorted); a warm start's must be the fitted model's."""
        if (self._continues()
                and not np.array_equal(classes, self.classes_)):
            raise ValueError(f"warm_start=True continues the fitted model, whose classes are "
                             f"{self.classes_!r}; y has {classes!r}")
        self.classes_ = classes

    def _eval_labels(self, y_val, name):
        """An eval set's labels as the class codes (every label must be a class)."""
        try:
            codes = np.searchsorted(self.classes_, y_val)
        except TypeError:   # labels that do not compare with the classes
            raise ValueError(f"{name}: y has labels not seen in training, of another "
                             f"type than the classes {self.classes_[:5]!r}") from None
        codes = np.clip(codes, 0, self.classes_.shape[0] - 1)
        unknown = self.classes_[codes] != y_val
        if np.any(unknown):
            raise ValueError(f"{name}: y has labels not seen in training: "
                             f"{np.unique(y_val[unknown])[:5]!r}")
        return codes.astype(np.float64)

    def decision_function(self, X, iteration_range=None, *, base_margin=None):
        """Raw scores: log-odds of ``classes_[1]`` (binary, shape (n,)) or per-class (n, K);
        ``base_margin``: the rows' offsets (see :meth:`fit`)."""
        raw = self._raw_predict(X, iteration_range, base_margin)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X, iteration_range=None, *, base_margin=None):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order;
        ``base_margin``: the rows' offsets (see :meth:`fit`)."""
        raw = self._raw_predict(X, iteration_range, base_margin)   # checks that it is fitted
        return self._objective.transform(raw)

    def predict(self, X, iteration_range=None, *, base_margin=None, pred_contribs=False,
                approx_contribs=False, pred_interactions=False):
        """Most probable class label per row; ``base_margin``: the rows' offsets (see
        :meth:`fit`); ``pred_contribs``, ``approx_contribs``, ``pred_interactions``:
        see :meth:`to_shap`."""
        mode = explain.explain_mode(pred_contribs, approx_contribs, pred_interactions)
        if mode is not None:
            return explain.predict_explained(self, X, iteration_range, mode, base_margin)
        raw = self._raw_predict(X, iteration_range, base_margin)
        # the link is monotone: the arg max of the raw scores is that of the probabilities
        if raw.shape[1] == 1:
            return binary_labels(raw, self.classes_)
        return self.classes_[np.argmax(raw, axis=1)]

    def staged_predict_proba(self, X, base_margin=None):
        """Class probabilities after each round, as a generator."""
        for raw in self._staged_raw(X, base_margin):
            yield self._objective.transform(raw)

    def staged_predict(self, X, base_margin=None):
        """Predicted labels after each round, as a generator."""
        for proba in self.staged_predict_proba(X, base_margin):
            yield self.classes_[np.argmax(proba, axis=1)]


_RANKER_PARAMS_DOC = """
    objective : {"rank:ndcg", "rank:pairwise", "rank:map"}, default="rank:ndcg"
        ``rank:ndcg``: LambdaMART, the pairwise logistic loss of each pair of
        documents with different labels weighted by the ``|delta NDCG|`` of
        swapping them; ``rank:pairwise``: RankNet, unweighted pairs;
        ``rank:map``: pairs weighted by ``|delta AP|`` (relevant: label > 0).
        See docs/ranking.md for the formulas.
    lambdarank_truncation_level : int, default=30
        Pairs are formed only when the better-ranked document of the pair (by
        the current scores) is in the top ``lambdarank_truncation_level`` of its
        query; the ideal DCG of ``rank:ndcg`` is taken at this level. Ignored
        when ``lambdarank_num_pair_per_sample`` is set.
    lambdarank_num_pair_per_sample : int or None, default=None
        If set, instead of the truncated pairs each document is paired with this
        many documents drawn at random (with replacement, seeded by
        ``random_state``) among the documents of its query with another label.
    lambdarank_norm : bool, default=True
        LightGBM's and XGBoost's normalisation: each pair weight is divided by
        ``0.01 + |s_i - s_j|`` (unless every score of the query is equal) and a
        query's gradients and hessians are scaled by ``log2(1 + L) / L``, ``L``
        the sum of its pair lambdas.
    ndcg_exp_gain : bool, default=True
        Gain ``2^label - 1`` (labels up to 31) in ``rank:ndcg``, the ``ndcg``
        metrics and ``score``; False: the label itself (linear gain).
"""


@model_io.estimator_class
class GBTRanker(_GBTModel):
    __module__ = "gbtree.sklearn"   # pickles and docs name the public module
    _kind = "ranker"   # (what a fit out of core or on Dask reads of it)
    __doc__ = """Gradient-boosted trees for learning to rank (LambdaMART, RankNet, MAP).

    Rows are documents; every row belongs to a query, given at ``fit`` by
    ``qid`` (one id per row, any order) or ``group`` (query sizes, in row
    order). ``predict`` returns scores: higher means ranked higher within its
    query. ``score`` is the mean NDCG@10 over queries.

    Parameters
    ----------
""" + _RANKER_PARAMS_DOC + _params.SHARED_PARAMS_DOC + """
    Notes
    -----
    ``sample_weight`` is per row and must be equal within a query: it weighs
    the query's gradients and, in the metrics, the query's score.
    ``validation_fraction`` holds out that share of the *queries*. The default
    ``eval_metric`` is ``ndcg@10`` (``map@10`` for ``rank:map``). With
    ``qid="column"`` at ``fit`` (X a DataFrame), the column is taken out of the
    features and ``predict`` / ``score`` read and drop it when present.
    """

    def __init__(self, *, objective="rank:ndcg", lambdarank_truncation_level=30,
                 lambdarank_num_pair_per_sample=None, lambdarank_norm=True, ndcg_exp_gain=True,
                 n_estimators=100, learning_rate=0.1, max_depth=6, max_leaves=0,
                 grow_policy="depthwise", max_bin=256, min_child_weight=1.0, reg_lambda=1.0,
                 reg_alpha=0.0, gamma=0.0, max_delta_step=0.0, eval_metric=None,
                 early_stopping_rounds=None, validation_fraction=0.0, callbacks=None,
                 log_period=10, n_jobs=None, random_state=0, verbosity=0,
                 importance_type="total_gain", warm_start=False, subsample=1.0,
                 sampling_method="uniform", top_rate=0.2, other_rate=0.1, colsample_bytree=1.0,
                 colsample_bylevel=1.0, colsample_bynode=1.0, feature_weights=None,
                 interaction_constraints=None, monotone_constraints=None,
                 absent_as_missing=False, grad_quant_bins=None, categorical_features=None,
                 cat_smooth="auto", max_cat_to_ordinal=32,
                 max_cat_to_onehot=32,
                 booster="gbtree", rate_drop=0.0, skip_drop=0.0, one_drop=False,
                 normalize_type="tree", sample_type="uniform", num_parallel_tree=1,
                 multi_strategy="one_output_per_tree", tree_method="hist", sketch_eps=None,
                 approx_proposal="global", boosting_type="plain", permutation_count=4):
        self.objective = objective
        self.lambdarank_truncation_level = lambdarank_truncation_level
        self.lambdarank_num_pair_per_sample = lambdarank_num_pair_per_sample
        self.lambdarank_norm = lambdarank_norm
        self.ndcg_exp_gain = ndcg_exp_gain
        _params.set_shared(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _make_objective(self, seed):
        if not _is_str(self.objective, *_obj.RANKING_OBJECTIVES):
            raise ValueError(f"objective must be one of {_obj.RANKING_OBJECTIVES}, "
                             f"got {self.objective!r}")
        _check_number("lambdarank_truncation_level", self.lambdarank_truncation_level, "int", 1,
                      _params.C_INT_MAX)
        if self.lambdarank_num_pair_per_sample is not None:
            _check_number("lambdarank_num_pair_per_sample", self.lambdarank_num_pair_per_sample,
                          "int", 1, _params.C_INT_MAX)
        for name in ("lambdarank_norm", "ndcg_exp_gain"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        return _obj.Ranking(
            np.zeros(1, dtype=np.intp), kind=self.objective.split(":")[1],
            truncation_level=self.lambdarank_truncation_level,
            num_pair_per_sample=self.lambdarank_num_pair_per_sample,
            norm=self.lambdarank_norm, exp_gain=self.ndcg_exp_gain, seed=seed)

    def _seeded_objective(self):
        """The loss with its pair-sampling seed, and the random state the fit goes on
        drawing from (every ranker fit draws in this order)."""
        rng = self._rng()
        return self._make_objective(seed=int(rng.randint(np.iinfo(np.int32).max))), rng

    def _split_qid_column(self, X, qid, where):
        """X without the query-id column and the query ids (qid may name the column)."""
        if isinstance(qid, str):
            return _pop_qid_column(X, qid, where)
        column = getattr(self, "qid_column_", None)
        if qid is None and column is not None and hasattr(X, "columns"):
            return _pop_qid_column(X, column, where, required=False)
        return X, qid

    @_all_or_nothing
    def fit(self, X, y=None, *, group=None, qid=None, sample_weight=None, base_margin=None,
            eval_set=None, eval_group=None, eval_qid=None, sample_weight_eval_set=None,
            base_margin_eval_set=None):
        """Fit the ranker.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or ExternalData
            One row per document; NaN marks a missing value. An ``ExternalData``
            whose chunks hold the query ids (sorted) is trained on out of core
            (y, group, qid and sample_weight stay None).
        y : array-like of shape (n_samples,)
            Relevance labels: non-negative integers for ``rank:ndcg`` (at most
            31 with the exponential gain) and ``rank:map`` (relevant: > 0); any
            finite numbers for ``rank:pairwise``. Higher is more relevant.
        group : array-like of int, default=None
            Query sizes, in row order (rows of a query contiguous).
        qid : array-like of shape (n_samples,) or str, default=None
            Query id of every row, in any order (sorted stably inside); or the
            name of a column of the DataFrame ``X`` holding it (the column is
            not a feature). Exactly one of ``group`` and ``qid`` is required.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights, equal within each query (a query's weight).
        base_margin : array-like of shape (n_samples,), default=None
            An offset: each row's starting score, in place of the fitted
            starting value; pass the rows' offsets to ``predict`` too.
        eval_set : list of (X, y) pairs, default=None
            Evaluated with ``eval_metric`` after every round.
        eval_group, eval_qid : list, default=None
            Query sizes or query ids of each eval set (one of the two per set;
            with ``qid="column"`` the eval sets' own column is used).
        sample_weight_eval_set : list of array-like or None, default=None
            Per-row weights of each eval set, equal within each query.
        base_margin_eval_set : list of array-like or None, default=None
            The offsets of each eval set.
        """
        if isinstance(X, ExternalData):
            if any(v is not None for v in (y, group, qid, sample_weight, base_margin,
                                           base_margin_eval_set)):
                raise ValueError("with ExternalData, the labels, query ids and weights come "
                                 "from the data: y, group, qid, sample_weight and the base "
                                 "margins must be None")

            def eval_sets(objective):
                return self._ranking_eval_sets(eval_set, eval_group, eval_qid,
                                               sample_weight_eval_set, objective)

            return fit_external(self, GBTRanker, X, eval_sets)
        self.qid_column_ = qid if isinstance(qid, str) else None
        X, qid = self._split_qid_column(X, qid, "fit")
        X, y, sample_weight = self._validate_fit_data(X, y, sample_weight, y_numeric=True)
        base_margin = check_base_margin(base_margin, X.shape[0], 1)
        order, group_ptr = query_groups(X.shape[0], group, qid, "fit")
        X, y, sample_weight = _take(X, order), _take(y, order), _take(sample_weight, order)
        base_margin = _take(base_margin, order)
        sample_weight = _check_group_weights(sample_weight, group_ptr, "fit")

        objective, rng = self._seeded_objective()
        objective.check_target(y)
        eval_sets = self._ranking_eval_sets(eval_set, eval_group, eval_qid,
                                            sample_weight_eval_set, objective,
                                            base_margin_eval_set)
        self._boost_params()   # validates validation_fraction, used here
        if self.validation_fraction > 0:
            n_groups = group_ptr.shape[0] - 1
            gid = np.repeat(np.arange(n_groups), np.diff(group_ptr))
            try:
                train, val = next(GroupShuffleSplit(
                    1, test_size=self.validation_fraction, random_state=rng
                ).split(np.empty((n_groups, 1)), groups=np.arange(n_groups)))
            except ValueError as exc:
                raise ValueError(f"validation_fraction={self.validation_fraction} cannot split "
                                 f"these {n_groups} queries: {exc}") from exc
            train_rows = np.flatnonzero(np.isin(gid, train))
            val_rows = np.flatnonzero(np.isin(gid, val))
            _check_split(objective, y, sample_weight, train_rows, val_rows,
                         self.validation_fraction)
            sizes = np.diff(group_ptr)
            val_ptr = np.r_[0, np.cumsum(sizes[np.sort(val)])].astype(np.intp)
            group_ptr = np.r_[0, np.cumsum(sizes[np.sort(train)])].astype(np.intp)
            eval_sets.append(booster.EvalSet("validation", X[val_rows], y[val_rows],
                                             _take(sample_weight, val_rows), val_ptr,
                                             base_margin=_take(base_margin, val_rows)))
            X, y, sample_weight = X[train_rows], y[train_rows], _take(sample_weight, train_rows)
            base_margin = _take(base_margin, train_rows)
        objective.group_ptr = group_ptr
        self._fit(X, y, sample_weight, objective, eval_sets=eval_sets, rng=rng,
                  base_margin=base_margin)
        objective.group_ptr = None   # the training queries are not part of the model
        return self

    def _ranking_eval_sets(self, eval_set, eval_group, eval_qid, sample_weight_eval_set,
                           objective, base_margin_eval_set=None):
        _check_list("eval_set", eval_set, "a list of (X, y) pairs")
        _check_list("sample_weight_eval_set", sample_weight_eval_set)
        n_sets = 0 if eval_set is None else len(eval_set)
        for name, value in (("eval_group", eval_group), ("eval_qid", eval_qid)):
            _check_list(name, value)
            if value is not None and (eval_set is None or len(value) != n_sets):
                raise ValueError(f"{name} must have one entry per eval_set entry")
        qids, prepared = [], []
        for i in range(n_sets):
            pair = eval_set[i]
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"eval_set[{i}] must be an (X, y) pair")
            g = None if eval_group is None else eval_group[i]
            q = None if eval_qid is None else eval_qid[i]
            X_val, q = self._split_qid_column(pair[0], q, f"eval_set[{i}]")
            if g is None and q is None:
                raise ValueError(f"eval_set[{i}] has no query ids: pass eval_qid (a list with "
                                 f"one qid array per eval set) or eval_group")
            qids.append((g, q))
            prepared.append((X_val, pair[1]))

        def encode(y_val, name):
            try:
                y_val = y_val.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{name}: y must hold numbers") from None
            try:
                objective.check_target(y_val)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
            return y_val

        sets = self._eval_sets(prepared if eval_set is not None else None,
                               sample_weight_eval_set, encode, base_margin_eval_set)
        for i, ev in enumerate(sets):
            order, ptr = query_groups(ev.X.shape[0], *qids[i], where=f"eval_set[{i}]")
            ev.X, ev.y = _take(ev.X, order), _take(ev.y, order)
            ev.base_margin = _take(ev.base_margin, order)
            ev.sample_weight = _check_group_weights(_take(ev.sample_weight, order), ptr,
                                                    f"sample_weight_eval_set[{i}]")
            ev.group_ptr = ptr
        return sets

    def predict(self, X, iteration_range=None, *, base_margin=None, pred_contribs=False,
                approx_contribs=False, pred_interactions=False):
        """Ranking scores, shape (n_samples,), in the rows' order (higher ranks first).

        With ``qid="column"`` at fit, a DataFrame's query-id column is dropped.
        ``base_margin``: the rows' offsets (see :meth:`fit`). ``pred_contribs``,
        ``approx_contribs``, ``pred_interactions``: see :meth:`to_shap`.
        """
        X, _ = self._split_qid_column(X, None, "predict")
        mode = explain.explain_mode(pred_contribs, approx_contribs, pred_interactions)
        if mode is not None:
            return explain.predict_explained(self, X, iteration_range, mode, base_margin)
        return self._raw_predict(X, iteration_range, base_margin)[:, 0]

    def staged_predict(self, X, base_margin=None):
        """Scores after each round, as a generator of arrays."""
        X, _ = self._split_qid_column(X, None, "staged_predict")
        for raw in self._staged_raw(X, base_margin):
            yield raw[:, 0]

    def score(self, X, y, qid=None, group=None, sample_weight=None):
        """Mean NDCG@10 over the queries (gain as ``ndcg_exp_gain``; a query without
        relevant documents scores 1; tied scores share their positions).

        ``qid`` (ids per row, any order, or a column name), or ``group`` (sizes
        in row order); with ``qid="column"`` at fit, a DataFrame's column is used
        when neither is given. ``sample_weight`` (equal within a query) weighs
        the queries.
        """
        X, qid = self._split_qid_column(X, qid, "score")
        if qid is None and group is None:
            raise ValueError("score needs the queries: pass qid or group (in GridSearchCV, "
                             "route them with set_score_request(qid=True), or give qid as a "
                             "DataFrame column name at fit)")
        scores = self.predict(X)
        return ndcg_at_k(y, scores, qid=qid, group=group, sample_weight=sample_weight, k=10,
                         exp_gain=self.ndcg_exp_gain)


def _check_eval_targets(eval_sets, objective):
    """Each eval set's labels in ``objective``'s domain (an error names the set)."""
    for i, ev in enumerate(eval_sets):
        try:
            objective.check_eval_target(ev.y)
        except ValueError as exc:
            raise ValueError(f"eval_set[{i}]: {exc}") from None


def _aft_bounds(y):
    """``objective="aft"``'s labels as a float64 (n, 2) array of lower and upper bounds."""
    try:
        bounds = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must hold numbers: {exc}") from None
    if bounds.ndim != 2 or bounds.shape[1] != 2:
        raise ValueError("objective='aft' needs y of shape (n_samples, 2): each row's lower "
                         "and upper bound on the time (equal for an observed time, inf above "
                         f"a right-censored one), got shape {bounds.shape}")
    check_labels(bounds, infinite=True)
    _obj.AFT().check_target(bounds)
    return np.ascontiguousarray(bounds)
