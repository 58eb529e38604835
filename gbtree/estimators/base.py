"""What the estimators share: input checks, the fit around the boosting loop, eval
sets, warm starts, and the raw predictions their ``predict`` methods turn into
answers (``_GBTModel``)."""
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..boosting import booster
from ..boosting.callback import training_callbacks
from ..boosting.metrics import eval_metrics
from ..data.binning import canonical_csr, check_sparse_structure
from ..data.categorical import CategoricalEncoder, resolve_columns
from ..data.queries import _take
from ..data.validation import (_check_list, _check_number, _check_split, _naming_the_argument,
                               _same_kind, _sparse_frame_for_scipy, check_base_margin,
                               check_labels)
from ..explaining.inspection import ModelAccess
from ..io import model_io
from ..kernels._threads import call_threads, effective_n_threads
from ..predicting.tree import add_trees_to_raw, check_importance_type
from . import params as _params
from .external_fit import fit_external

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
        ensemble, info = booster.train(
            X, y, objective, params, sample_weight=sample_weight, n_threads=n_threads,
            random_state=rng, eval_sets=eval_sets, metrics=metrics, callbacks=callbacks,
            init_model=init_model, base_margin=base_margin)
        return self._set_fitted(ensemble, objective, info, {
            "bin_seconds": info["bin_seconds"], "boost_seconds": info["boost_seconds"]}, done)

    def _set_fitted(self, ensemble, objective, info, fit_info, done):
        """Made the fitted model of ``ensemble``, built by a fit whose ``info`` is in
        ``booster.train``'s format (``bin_mapper``, ``n_rounds``, ``best_iteration``,
        ``evals_result``, ``best_score``, any ``oob_*``) after the ``done`` rounds of
        the model a warm start continued; ``fit_info``: its ``fit_info_``."""
        previous = {k: getattr(self, k) for k in ("evals_result_", "best_score_",
                                                  "best_iteration_", "oob_improvement_",
                                                  "oob_scores_", "oob_score_")
                    if hasattr(self, k)}
        for k in previous:
            delattr(self, k)
        self._ensemble = ensemble
        self._objective = objective
        self._bin_mapper = info["bin_mapper"]
        self.fit_info_ = dict(fit_info)
        self.n_estimators_ = done + info["n_rounds"]
        self.best_iteration_ = done + info["best_iteration"]
        if info["evals_result"]:   # (empty: no eval sets)
            self.evals_result_ = info["evals_result"]
            self.best_score_ = info["best_score"]
        if "oob_scores" in info:
            self.oob_improvement_ = info["oob_improvement"]
            self.oob_scores_ = info["oob_scores"]
        if done:
            self._continue_histories(previous, eval_metrics(
                self.eval_metric, objective, type(self).__name__), info["n_rounds"])
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


def _check_eval_targets(eval_sets, objective):
    """Each eval set's labels in ``objective``'s domain (an error names the set)."""
    for i, ev in enumerate(eval_sets):
        try:
            objective.check_eval_target(ev.y)
        except ValueError as exc:
            raise ValueError(f"eval_set[{i}]: {exc}") from None
