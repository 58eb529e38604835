"""Checks of the estimators' arguments: numbers, lists, DataFrames, and errors
that name the argument that is wrong."""
import functools
import math
import numbers
import re
from typing import Any

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

# the type hints' name for the data the estimators take: any array, frame or sparse
# matrix that their checks accept (and name when they do not)
ArrayLike = Any



def _is_str(value, *choices):
    """``value`` is one of the strings ``choices`` (False, not an error, for a list or
    an array, which ``==`` and ``in`` would compare element-wise or try to hash)."""
    return isinstance(value, str) and value in choices


def check_labels(y, name="y", classes=False, infinite=False):
    """Raise ValueError naming ``name`` unless a fit's labels ``y`` can be fitted, the
    one check of every way of fitting (in memory, chunk by chunk out of core, partition
    by partition on Dask): class labels (``classes``) of any type but missing (NaN,
    None) or infinite ones; other labels numbers, and finite but for +-inf where
    ``infinite`` (the open end of an interval: aft's bounds). Returns numeric labels
    as a float64 array, class labels as given."""
    a = np.asarray(y)
    if classes:
        if a.dtype.kind == "f":
            nan, inf = np.isnan(a), np.isinf(a)
        elif a.dtype == object:
            nan = np.frompyfunc(_missing_label, 1, 1)(a).astype(bool)
            inf = np.frompyfunc(_infinite_label, 1, 1)(a).astype(bool)
        else:
            return y
    else:
        if a.dtype.kind == "c":
            raise ValueError(f"{name}: Complex data not supported")
        if a.dtype.kind in "USVO":
            try:
                a = a.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name} must hold numbers: {exc}") from None
        elif a.dtype.kind not in "fiub":
            raise ValueError(f"{name} must hold numbers, got dtype {a.dtype}")
        a = a.astype(np.float64, copy=False)
        nan, inf = np.isnan(a), np.isinf(a) & (not infinite)
    if np.any(nan):
        raise ValueError(f"{name} contains NaN (a missing label, at row "
                         f"{int(np.flatnonzero(nan.ravel())[0]) // max(a.shape[1:] or [1])})"
                         f": every row needs a label")
    if np.any(inf):
        raise ValueError(f"{name} contains infinity (at row "
                         f"{int(np.flatnonzero(inf.ravel())[0]) // max(a.shape[1:] or [1])})"
                         f": labels must be finite")
    return y if classes else a


def _missing_label(v):
    return v is None or (isinstance(v, numbers.Real) and v != v) or type(v).__name__ == "NAType"


def _infinite_label(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and v in (np.inf, -np.inf)


def _check_choice(name, value, choices):
    """Raise ValueError naming ``name`` unless ``value`` is one of the strings
    ``choices`` (a list, an array or a dict is refused as any other value)."""
    if not _is_str(value, *choices):
        listed = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
        raise ValueError(f"{name} must be {listed}, got {value!r}")


def _check_number(name, value, kind, low=None, high=None, low_open=False, high_open=False):
    """Raise TypeError/ValueError naming ``name`` unless ``value`` is a valid number."""
    base = numbers.Integral if kind == "int" else numbers.Real
    if isinstance(value, bool) or not isinstance(value, base):
        raise TypeError(f"{name} must be {'an integer' if kind == 'int' else 'a real number'}, "
                        f"got {value!r} of type {type(value).__name__}")
    if kind == "real":
        try:
            finite = math.isfinite(value)
        except OverflowError:   # (an integer beyond float64)
            finite = False
        if not finite:
            raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high}, got {value!r}")


def _text_columns(X):
    """Names of a pandas DataFrame's columns that do not hold numbers or booleans
    (``[]`` for anything else)."""
    if not type(X).__module__.startswith("pandas") or not hasattr(X, "dtypes"):
        return []
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    def numbers(dtype):
        # a categorical of numbers converts like its categories
        dtype = getattr(getattr(dtype, "categories", None), "dtype", dtype)
        return is_numeric_dtype(dtype) or is_bool_dtype(dtype)
    return [str(name) for name, dtype in X.dtypes.items() if not numbers(dtype)]


def _sparse_frame_for_scipy(X):
    """A pandas DataFrame whose columns are all sparse, with a fill value other than 0
    or float16 values, as a dense frame; anything else as it is. (scikit-learn turns a
    frame of sparse columns into a scipy.sparse matrix, which holds neither: absent
    entries there are 0, and float16 is not one of its types.)"""
    if not type(X).__module__.startswith("pandas") or not hasattr(X, "dtypes"):
        return X
    import pandas as pd

    dtypes = list(X.dtypes)
    if not dtypes or not all(isinstance(d, pd.SparseDtype) for d in dtypes):
        return X
    if all(not pd.isna(d.fill_value) and d.fill_value == 0 and d.subtype != np.float16
           for d in dtypes):
        return X
    return X.sparse.to_dense()


def _same_kind(exc):
    """TypeError or ValueError, as ``exc`` is (a subclass's constructor may want more)."""
    return TypeError if isinstance(exc, TypeError) else ValueError


def _conversion_error(msg):
    """numpy's message for a value that is not a number; pandas' when it casts a
    categorical column of text."""
    return "could not convert" in msg or msg.startswith("Cannot cast")


def _naming_the_argument(exc, X, x_alone_fails):
    """The error of scikit-learn's validation, saying which argument is wrong: its
    shape messages ("Found array with 0 sample(s)", "Expected 2D array",
    "inconsistent numbers of samples") name none, and its conversion message names
    only the value (here: which argument holds text, and in a DataFrame which
    columns). ``x_alone_fails()``: whether X fails the validation without y."""
    msg = str(exc)
    if "inconsistent numbers of samples" in msg:
        return ValueError(f"X and y: {msg}")
    if not _conversion_error(msg) and re.search(r"\b[Xy]\b", msg):
        return exc   # "X has 3 features, but ...", "Input y contains NaN": named already
    name = "X" if x_alone_fails() else "y"
    if not _conversion_error(msg):
        return _same_kind(exc)(f"{name}: {msg}")
    if name == "y":
        return ValueError(f"y must hold numbers: {msg}")
    columns = _text_columns(X)
    where = (f" (column{'s' * (len(columns) > 1)} {', '.join(map(repr, columns))})"
             if columns else "")
    return ValueError(f"X must hold numbers{where}; name text or categorical columns in "
                      f"categorical_features, or encode them first: {msg}")


def _check_split(objective, y, sample_weight, train, val, fraction):
    """The two sides of a ``validation_fraction`` split must still be usable: the
    training rows fit for the objective, and both sides with some weight."""
    try:
        objective.check_target(y[train])
    except ValueError as exc:
        raise ValueError(f"validation_fraction={fraction} held out rows that the training "
                         f"rows need: on the rows left, {exc}") from None
    if sample_weight is not None:
        for side, rows in (("training", train), ("held-out", val)):
            if not np.any(sample_weight[rows] > 0):
                raise ValueError(f"validation_fraction={fraction} left the {side} rows with "
                                 f"sample_weight all 0")


def _all_or_nothing(fit):
    """A ``fit`` that raises leaves the estimator as it was before the call, fitted or
    not (scikit-learn's validation sets ``n_features_in_`` and the classifier its
    ``classes_`` before the rest is checked: a model with the old trees and the new
    width would read past the rows it is given)."""
    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        before = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
    return wrapper


def feature_index(param, v, names, n, tail=" or a feature name"):
    """The column of the ``n`` features that ``v``, an entry of the parameter ``param``,
    names: a column name (of ``names``; None: X has none) or an index (not a bool);
    else a ValueError, ``tail`` ending its message."""
    if isinstance(v, str):
        if names is None:
            raise ValueError(f"{param} names a feature {v!r}, but X has no column names "
                             f"(pass a DataFrame, or indices)")
        if v not in names:
            raise ValueError(f"{param} names an unknown feature {v!r}")
        return names.index(v)
    if (isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
            and 0 <= v < n):
        return int(v)
    raise ValueError(f"{param}: {v!r} is not a feature index in [0, {n}){tail}")


def _check_list(name, value, what="a list with one entry per eval set"):
    """TypeError naming ``name`` unless ``value`` is None, a list or a tuple."""
    if value is not None and not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")


def _is_missing(values):
    """Elementwise "is NaN or None" for an array of any dtype."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and v != v) for v in values],
                        dtype=bool)
    return np.zeros(values.shape, dtype=bool)


def check_base_margin(margin, n_rows, n_outputs, name="base_margin"):
    """``margin`` as a C-ordered float64 array of shape ``(n_rows, n_outputs)`` (None
    stays None): a per-row starting raw score, one value per row for a model of one
    output, ``(n_rows, n_outputs)`` otherwise. ValueError naming ``name`` unless it is
    finite and of that shape."""
    if margin is None:
        return None
    try:
        m = np.asarray(margin, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers: {exc}") from None
    if m.ndim == 1 and n_outputs == 1:
        m = m[:, None]
    if m.shape != (n_rows, n_outputs):
        want = f"({n_rows},)" if n_outputs == 1 else f"({n_rows}, {n_outputs})"
        raise ValueError(f"{name} must have shape {want}, one value per row"
                         f"{'' if n_outputs == 1 else ' and output'}, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} contains NaN or infinity")
    return np.array(m, dtype=np.float64, order="C")   # a copy: the fit writes raw scores


def check_class_weight(class_weight):
    """A ValueError unless ``class_weight`` is "balanced" or a dict of weights >= 0."""
    if not (_is_str(class_weight, "balanced") or isinstance(class_weight, dict)):
        raise ValueError(f"class_weight must be 'balanced', a dict or None, got "
                         f"{class_weight!r}")
    if isinstance(class_weight, dict):
        bad = {k: v for k, v in class_weight.items()
               if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real)
               or not np.isfinite(v) or v < 0}
        if bad:
            raise ValueError(f"class_weight values must be finite numbers >= 0, got {bad!r}")


def class_factors(class_weight, classes, counts):
    """Each class's weight under ``class_weight`` (checked; None: None), as
    ``compute_sample_weight`` gives it to the class's rows, from the classes' row
    counts ``counts`` (a fit that does not hold its labels in one array): "balanced"
    is ``n / (n_classes * count)``, a dict its value (1 for a class it leaves out).
    A ValueError when every row would weigh 0."""
    if class_weight is None:
        return None
    check_class_weight(class_weight)
    counts = np.asarray(counts, dtype=np.float64)
    if _is_str(class_weight, "balanced"):
        factors = np.sum(counts) / (classes.shape[0] * counts)
    else:
        factors = compute_class_weight(class_weight, classes=classes, y=classes)
    if not np.any(factors[counts > 0] > 0):
        raise ValueError("class_weight gives every row weight 0")
    return factors
