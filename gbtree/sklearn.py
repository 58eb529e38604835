"""scikit-learn estimators: parameters, validation, fit/predict; the work is in booster.py."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import booster
from ._threads import effective_n_threads
from .objectives import Logistic, Softmax, SquaredError
from .tree import IMPORTANCE_TYPES

_INPUT_DTYPES = [np.float64, np.float32]


def _check_number(name, value, kind, low=None, high=None, low_open=False):
    """Raise TypeError/ValueError naming ``name`` unless ``value`` is a valid number."""
    base = numbers.Integral if kind == "int" else numbers.Real
    if isinstance(value, bool) or not isinstance(value, base):
        raise TypeError(f"{name} must be {'an integer' if kind == 'int' else 'a real number'}, "
                        f"got {value!r} of type {type(value).__name__}")
    if kind == "real" and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}")


def _check_importance_type(value, name="importance_type"):
    if not (isinstance(value, str) and value in IMPORTANCE_TYPES):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, IMPORTANCE_TYPES))}, "
                         f"got {value!r}")


class _GBTModel(BaseEstimator):
    """Parameters and fitting logic shared by the estimators.

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds (one tree per round, or one per class for multiclass).
    learning_rate : float, default=0.1
        Shrinkage ``eta`` applied to every tree's leaf values.
    max_depth : int, default=6
        Maximum tree depth; 0 means no limit (then ``max_leaves`` must be set).
    max_leaves : int, default=0
        Maximum number of leaves per tree; 0 means no limit.
    grow_policy : {"depthwise", "lossguide"}, default="depthwise"
        ``depthwise`` splits every node of a level before the next level;
        ``lossguide`` always splits the leaf with the largest gain (best-first,
        LightGBM style), up to ``max_leaves``.
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
    n_jobs : int or None, default=None
        OpenMP threads for the kernels; None or -1 means every core available
        to the process (honouring ``OMP_NUM_THREADS``, cgroups and
        ``threadpoolctl``). The model does not depend on it.
    random_state : int, RandomState instance or None, default=0
        Seeds the row subsample used to compute the bin edges (on data with
        more than 200,000 rows).
    verbosity : int, default=0
        0 silent, 1 a summary per fit, 2 a line per boosting round.
    importance_type : {"weight", "gain", "cover", "total_gain", "total_cover"}, \
            default="total_gain"
        What ``feature_importances_`` normalises: split counts, average or
        total split gain, average or total hessian cover (see ``get_score``).
    """

    def __init__(self, *, n_estimators=100, learning_rate=0.1, max_depth=6, max_leaves=0,
                 grow_policy="depthwise", max_bin=256, min_child_weight=1.0, reg_lambda=1.0,
                 reg_alpha=0.0, gamma=0.0, max_delta_step=0.0, n_jobs=None, random_state=0,
                 verbosity=0, importance_type="total_gain"):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.grow_policy = grow_policy
        self.max_bin = max_bin
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.reg_alpha = reg_alpha
        self.gamma = gamma
        self.max_delta_step = max_delta_step
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbosity = verbosity
        self.importance_type = importance_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------ validation
    def _boost_params(self):
        _check_number("n_estimators", self.n_estimators, "int", 1)
        _check_number("learning_rate", self.learning_rate, "real", 0, low_open=True)
        _check_number("max_depth", self.max_depth, "int", 0)
        _check_number("max_leaves", self.max_leaves, "int", 0)
        if self.max_leaves == 1:
            raise ValueError("max_leaves must be 0 (no limit) or >= 2, got 1")
        if self.grow_policy not in ("depthwise", "lossguide"):
            raise ValueError(
                f"grow_policy must be 'depthwise' or 'lossguide', got {self.grow_policy!r}")
        if self.max_depth == 0 and self.max_leaves == 0:
            raise ValueError("max_depth and max_leaves cannot both be 0 (trees would be "
                             "unbounded); set max_depth > 0 or max_leaves >= 2")
        _check_number("max_bin", self.max_bin, "int", 2, 256)
        for name in ("min_child_weight", "reg_lambda", "reg_alpha", "gamma", "max_delta_step"):
            _check_number(name, getattr(self, name), "real", 0)
        _check_number("verbosity", self.verbosity, "int", 0, 3)
        return booster.BoostParams(
            n_estimators=int(self.n_estimators), learning_rate=float(self.learning_rate),
            max_depth=int(self.max_depth), max_leaves=int(self.max_leaves),
            grow_policy=self.grow_policy, max_bin=int(self.max_bin),
            min_child_weight=float(self.min_child_weight), reg_lambda=float(self.reg_lambda),
            reg_alpha=float(self.reg_alpha), gamma=float(self.gamma),
            max_delta_step=float(self.max_delta_step), verbosity=int(self.verbosity),
        )

    def _validate_fit_data(self, X, y, sample_weight, y_numeric):
        X, y = validate_data(self, X, y, dtype=_INPUT_DTYPES, ensure_all_finite=False,
                             y_numeric=y_numeric)
        if sample_weight is not None:
            # rejects wrong lengths, NaN/inf, negative values and all zeros
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        return X, y, sample_weight

    def _validate_predict_data(self, X):
        check_is_fitted(self, "_ensemble")
        return validate_data(self, X, dtype=_INPUT_DTYPES, ensure_all_finite=False, reset=False)

    # ------------------------------------------------------------------ fit / predict
    def _fit(self, X, y, sample_weight, objective):
        params = self._boost_params()
        _check_importance_type(self.importance_type)
        n_threads = effective_n_threads(self.n_jobs)
        try:
            rng = check_random_state(self.random_state)
        except ValueError as exc:
            raise ValueError(f"random_state must be None, an int or a RandomState instance, "
                             f"got {self.random_state!r}") from exc
        self._ensemble, self.fit_info_ = booster.train(
            X, y, objective, params, sample_weight=sample_weight, n_threads=n_threads,
            random_state=rng)
        self._objective = objective
        self.n_estimators_ = params.n_estimators
        return self

    def _raw_predict(self, X):
        X = self._validate_predict_data(X)
        return self._ensemble.predict_raw(X, effective_n_threads(self.n_jobs))

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
        _check_importance_type(self.importance_type)
        imp = self._ensemble.feature_importances(self.importance_type)
        total = imp.sum()
        return imp / total if total > 0 else imp

    # ------------------------------------------------------------------ inspecting the model
    # Thin wrappers over TreeEnsemble (tree.py), which walks the trees.
    def _inspect_names(self):
        check_is_fitted(self, "_ensemble")
        return getattr(self, "feature_names_in_", None)

    def get_score(self, importance_type="weight"):
        """Importance per feature, as XGBoost's ``Booster.get_score``.

        Parameters
        ----------
        importance_type : {"weight", "gain", "cover", "total_gain", "total_cover"}, \
                default="weight"
            ``weight``: number of splits on the feature; ``total_gain``: sum of
            their gains; ``gain``: average gain; ``total_cover``: sum of the
            hessian sums of the nodes they split; ``cover``: average of those.

        Returns
        -------
        dict
            ``{feature name: importance}``, names from ``feature_names_in_`` (fit
            on a DataFrame) or else ``"f0"``, ``"f1"``, ...; features no split
            uses are left out. Not normalised.
        """
        names = self._inspect_names()
        _check_importance_type(importance_type)
        return self._ensemble.get_score(importance_type, names)

    def apply(self, X):
        """Leaf reached by each row in each tree.

        Returns
        -------
        ndarray of shape (n_samples, n_trees_), int32
            Column t is the id, within tree t, of the leaf the row reaches (the
            ``node`` of ``trees_to_dataframe()``, the number before ``:`` in
            ``get_dump()``). Trees are in fitting order: for K >= 3 classes,
            tree ``t`` belongs to round ``t // K`` and class ``classes_[t % K]``.
        """
        X = self._validate_predict_data(X)
        return self._ensemble.apply(X, effective_n_threads(self.n_jobs))

    def _output_names(self):
        return getattr(self, "classes_", None) if self._ensemble.n_outputs > 1 else None

    def trees_to_dataframe(self):
        """One row per node of every tree, as a pandas DataFrame (needs pandas).

        Columns: ``tree``, ``node`` (id within the tree, as in ``apply``),
        ``depth``, ``feature`` (name; missing for leaves), ``threshold`` (rows
        with ``x <= threshold`` go to ``left``), ``missing`` (``"left"`` or
        ``"right"``: where a missing value goes), ``left``, ``right`` (child
        ids, -1 for leaves), ``gain`` (0 for leaves), ``cover`` (hessian sum of
        the training rows), ``count`` (training rows), ``value`` (learning rate
        x node weight: the leaf value for leaves), ``is_leaf``, and for K >= 3
        classes ``class`` (the label of the class the tree scores).
        """
        names = self._inspect_names()
        return self._ensemble.to_dataframe(names, self._output_names())

    def get_dump(self, with_stats=True):
        """The trees as text, one string per tree, in XGBoost's text-dump format::

            0:[f2<=0.5] yes=1,no=2,missing=1 gain=25.6 cover=8
            \\t1:leaf=-0.5 cover=4

        One line per node in pre-order, indented by depth; ``yes`` is the child
        of ``x <= threshold``. ``with_stats=False`` leaves out gain and cover.
        """
        return self._ensemble.dump(self._inspect_names(), with_stats)

    def dump_model(self, fout=None, with_stats=True):
        """All trees as one text (``booster[t]:`` before each tree's dump); also
        written to the path ``fout`` when given."""
        text = "".join(f"booster[{t}]:\n{tree}" for t, tree in
                       enumerate(self.get_dump(with_stats)))
        if fout is not None:
            with open(fout, "w", encoding="utf-8") as f:
                f.write(text)
        return text


class GBTRegressor(RegressorMixin, _GBTModel):
    __doc__ = ("Gradient-boosted trees for regression (squared error).\n"
               + _GBTModel.__doc__.split("\n", 2)[2])

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.
        """
        X, y, sample_weight = self._validate_fit_data(X, y, sample_weight, y_numeric=True)
        return self._fit(X, y.astype(np.float64, copy=False), sample_weight, SquaredError())

    def predict(self, X):
        """Predicted values, shape (n_samples,)."""
        raw = self._raw_predict(X)
        return self._objective.transform(raw)


class GBTClassifier(ClassifierMixin, _GBTModel):
    __doc__ = ("Gradient-boosted trees for classification: binary log loss, or\n"
               "multinomial (softmax, one tree per class per round) for 3+ classes.\n"
               + _GBTModel.__doc__.split("\n", 2)[2])

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels of any type (at least two distinct).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.
        """
        X, y, sample_weight = self._validate_fit_data(X, y, sample_weight, y_numeric=False)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        n_classes = self.classes_.shape[0]
        if n_classes < 2:
            raise ValueError(f"y must contain at least two classes; got 1 class: {self.classes_[0]!r}")
        objective = Logistic() if n_classes == 2 else Softmax(n_classes)
        return self._fit(X, y_enc.astype(np.float64), sample_weight, objective)

    def decision_function(self, X):
        """Raw scores: log-odds of ``classes_[1]`` (binary, shape (n,)) or per-class (n, K)."""
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        raw = self._raw_predict(X)
        return self._objective.transform(raw)

    def predict(self, X):
        """Most probable class label per row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
