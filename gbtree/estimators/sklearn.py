"""The scikit-learn estimators ``GBTRegressor``, ``GBTClassifier`` and ``GBTRanker``:
their own parameters, their labels and ``fit``/``predict``; what they share is in
base.py, their shared parameters in params.py, the work in the boosting loop."""
from __future__ import annotations


from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.model_selection import GroupShuffleSplit
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets

from ..boosting import booster
from ..boosting import objectives as _obj
from ..boosting import ranking, survival
from ..boosting.metrics import ndcg_at_k
from ..data.external import ExternalData
from ..data.validation import ArrayLike
from ..data.queries import _check_group_weights, _pop_qid_column, _take, query_groups
from ..data.validation import (_all_or_nothing, _check_choice, _check_list, _check_number,
                               _check_split, _is_str, check_base_margin, check_class_weight,
                               check_labels)
from ..explaining import explain
from ..io import model_io
from ..kernels._threads import call_threads
from ..predicting._predictor import binary_labels
from . import params as _params
from .base import _GBTModel
from .external_fit import fit_external

if TYPE_CHECKING:
    from typing_extensions import Self


@model_io.estimator_class
@_params.with_shared_signature
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
                 aft_loss_distribution_scale=1.0, **shared):
        self.objective = objective
        self.huber_delta = huber_delta
        self.quantile_alpha = quantile_alpha
        self.tweedie_variance_power = tweedie_variance_power
        self.aft_loss_distribution = aft_loss_distribution
        self.aft_loss_distribution_scale = aft_loss_distribution_scale
        _params.set_shared(self, shared)

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
                      tuple(survival.AFT_DISTRIBUTIONS))
        _check_number("aft_loss_distribution_scale", self.aft_loss_distribution_scale, "real", 0,
                      low_open=True)
        obj = self.objective
        if _is_str(obj, "aft"):
            if n_targets != 2 and n_targets != 0:
                raise ValueError("objective='aft' needs y of shape (n_samples, 2): each row's "
                                 "lower and upper bound on the time (equal for an observed "
                                 "time, inf above a right-censored one)")
            return survival.AFT(self.aft_loss_distribution, self.aft_loss_distribution_scale)
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
                  "poisson": _obj.Poisson, "gamma": _obj.Gamma, "cox": survival.Cox}
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
    def fit(self, X: ArrayLike, y: ArrayLike = None, sample_weight: ArrayLike = None,
            eval_set: list | None = None, sample_weight_eval_set: list | None = None,
            base_margin: ArrayLike = None, base_margin_eval_set: list | None = None) -> Self:
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
        aft = isinstance(self._make_objective(), survival.AFT)   # (checks the parameters first)
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

    def predict(self, X: ArrayLike, iteration_range: tuple[int, int] | None = None, *,
                base_margin: ArrayLike = None, pred_contribs: bool = False,
                approx_contribs: bool = False, pred_interactions: bool = False) -> np.ndarray:
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

    def staged_predict(self, X: ArrayLike, base_margin: ArrayLike = None) -> Iterator[np.ndarray]:
        """Predictions after each round, as a generator of arrays."""
        for raw in self._staged_raw(X, base_margin):
            yield self._objective.transform(raw)


@model_io.estimator_class
@_params.with_shared_signature
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

    def __init__(self, *, objective="log_loss", class_weight=None, **shared):
        self.objective = objective
        self.class_weight = class_weight
        _params.set_shared(self, shared)

    @_all_or_nothing
    def fit(self, X: ArrayLike, y: ArrayLike = None, sample_weight: ArrayLike = None,
            eval_set: list | None = None, sample_weight_eval_set: list | None = None,
            base_margin: ArrayLike = None, base_margin_eval_set: list | None = None) -> Self:
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

    def decision_function(self, X: ArrayLike, iteration_range: tuple[int, int] | None = None,
                          *, base_margin: ArrayLike = None) -> np.ndarray:
        """Raw scores: log-odds of ``classes_[1]`` (binary, shape (n,)) or per-class (n, K);
        ``base_margin``: the rows' offsets (see :meth:`fit`)."""
        raw = self._raw_predict(X, iteration_range, base_margin)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X: ArrayLike, iteration_range: tuple[int, int] | None = None, *,
                      base_margin: ArrayLike = None) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order;
        ``base_margin``: the rows' offsets (see :meth:`fit`)."""
        raw = self._raw_predict(X, iteration_range, base_margin)   # checks that it is fitted
        return self._objective.transform(raw)

    def predict(self, X: ArrayLike, iteration_range: tuple[int, int] | None = None, *,
                base_margin: ArrayLike = None, pred_contribs: bool = False,
                approx_contribs: bool = False, pred_interactions: bool = False) -> np.ndarray:
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

    def staged_predict_proba(self, X: ArrayLike,
                             base_margin: ArrayLike = None) -> Iterator[np.ndarray]:
        """Class probabilities after each round, as a generator."""
        for raw in self._staged_raw(X, base_margin):
            yield self._objective.transform(raw)

    def staged_predict(self, X: ArrayLike, base_margin: ArrayLike = None) -> Iterator[np.ndarray]:
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
@_params.with_shared_signature
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
                 **shared):
        self.objective = objective
        self.lambdarank_truncation_level = lambdarank_truncation_level
        self.lambdarank_num_pair_per_sample = lambdarank_num_pair_per_sample
        self.lambdarank_norm = lambdarank_norm
        self.ndcg_exp_gain = ndcg_exp_gain
        _params.set_shared(self, shared)

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
        return ranking.Ranking(
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
    def fit(self, X: ArrayLike, y: ArrayLike = None, *, group: ArrayLike = None,
            qid: ArrayLike = None, sample_weight: ArrayLike = None, base_margin: ArrayLike = None,
            eval_set: list | None = None, eval_group: list | None = None,
            eval_qid: list | None = None, sample_weight_eval_set: list | None = None,
            base_margin_eval_set: list | None = None) -> Self:
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

            def eval_sets_of(objective):
                return self._ranking_eval_sets(eval_set, eval_group, eval_qid,
                                               sample_weight_eval_set, objective)

            return fit_external(self, GBTRanker, X, eval_sets_of)
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

    def predict(self, X: ArrayLike, iteration_range: tuple[int, int] | None = None, *,
                base_margin: ArrayLike = None, pred_contribs: bool = False,
                approx_contribs: bool = False, pred_interactions: bool = False) -> np.ndarray:
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

    def staged_predict(self, X: ArrayLike, base_margin: ArrayLike = None) -> Iterator[np.ndarray]:
        """Scores after each round, as a generator of arrays."""
        X, _ = self._split_qid_column(X, None, "staged_predict")
        for raw in self._staged_raw(X, base_margin):
            yield raw[:, 0]

    def score(self, X: ArrayLike, y: ArrayLike, qid: ArrayLike = None, group: ArrayLike = None,
              sample_weight: ArrayLike = None) -> float:
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
    survival.AFT().check_target(bounds)
    return np.ascontiguousarray(bounds)
