"""Categorical features: ordinal codes, or CatBoost's ordered target statistics
(Prokhorenkova et al., 2018).

This stage runs before binning, in the estimators. A categorical column is replaced by
numbers, and the rest of the engine sees an ordinary numeric feature. A column of at most
``max_cat_to_ordinal`` distinct values gets its ordinal codes (the category's position
among the sorted values; a value not seen at fit is missing): each category keeps a bin
of its own, so trees can split off any group of categories, and no label is used. A
column of more values gets its ordered target statistic:

- at ``fit``, the rows are put in a random order (the permutation sigma) and row i gets
  ``(sum of w*y over the rows before it with its category + a*p) / (sum of w over those
  rows + a)``: ``p`` is the weighted mean of y, ``a`` is ``cat_smooth`` (by default
  estimated per column, ``empirical_bayes_smooth``). A row's own
  label never enters its value, so a category seen once looks like the prior, not like
  its label (the "greedy" statistic over all rows leaks y into X and overfits);
- at ``predict`` (and for eval sets), a row gets the same formula over all training rows
  of its category; a category not seen at fit gets ``p``; a missing value stays NaN and
  follows each split's learned default direction.

A column of at least 3 and at most ``max_cat_to_onehot`` distinct values also gets one
indicator column per category seen in the training rows (1 for rows of that category, 0
for rows of another or of a category not seen at fit, NaN for a missing value), appended
after X's columns: a split on an indicator is a one-vs-rest split, which a threshold on
the codes or on a statistic can only make for the first or the last category. The trees
see the wider X; SHAP values and importances of the indicators are added to their column's
(``fold``), so that every output speaks of X's own columns.

The work has two steps: ``CategoricalEncoder.codes`` turns the categorical columns of
any input (a pandas, polars or pyarrow frame, a NumPy array, a list) into float codes
before scikit-learn's validation, so that the names and the width of X are checked as
for any other input; ``fit_ordered`` / ``transform`` then turn the validated codes into
statistics.
"""
import numbers
import sys

import numpy as np

from .validation import feature_index

# a code of a value not seen at fit
UNSEEN = -1.0


def _float_copy(X):
    """A copy of the validated X (float64 or float32, kept), as floats."""
    return np.array(X, dtype=X.dtype if X.dtype.kind == "f" else np.float64)


def ordered_statistics(codes, target, weight, prior, smooth, perm):
    """Ordered target statistic of every row (NaN where ``codes`` is NaN).

    ``codes``: float category codes (NaN: missing, -1: a category not in the
    fitted table, which gets ``prior`` as its statistics); ``perm``: the order in
    which the rows are seen. The plain loop is ``ordered_statistics`` in tests/_reference.py.
    """
    n = codes.shape[0]
    out = np.full(n, np.nan)
    c = codes[perm]
    keep = ~np.isnan(c)
    rows = perm[keep]
    c = c[keep]
    wy = (weight * target)[rows]
    w = weight[rows]
    # group the rows by category, each group in the permutation's order
    order = np.argsort(c, kind="stable")
    c, wy, w, rows = c[order], wy[order], w[order], rows[order]
    if c.size == 0:
        return out
    start = np.r_[0, np.flatnonzero(c[1:] != c[:-1]) + 1]
    size = np.diff(np.r_[start, c.size])
    # sums over the rows before each row in its group: a cumulative sum over all rows,
    # less its value at the group's start (exclusive of the row itself). The sum runs
    # over each row's deviation from its group's mean, so that it comes back to about 0
    # at every group's end: a group of targets near 1 after one near 1e12 keeps its
    # precision.
    group_w = np.add.reduceat(w, start)
    group_mean = np.repeat(np.divide(np.add.reduceat(wy, start), group_w,
                                     out=np.zeros(start.size), where=group_w > 0), size)
    dev = wy - w * group_mean
    before_dev = np.cumsum(dev) - dev
    before_w = np.cumsum(w) - w
    before_dev -= np.repeat(before_dev[start], size)
    before_w -= np.repeat(before_w[start], size)
    before_wy = before_dev + group_mean * before_w
    values = (before_wy + smooth * prior) / (before_w + smooth)
    values[c == UNSEEN] = prior
    out[rows] = values
    return out


def empirical_bayes_smooth(sum_wy, sum_w, codes, y, w):
    """``cat_smooth="auto"``: the prior weight ``a`` that makes a category's statistic
    the best linear estimate of its mean (Buhlmann-Straub credibility), ``a =
    sigma^2 / tau^2``: the variance of y within a category (per unit of weight) over
    the variance of the categories' means, both estimated from the training rows of
    the column (``codes``, ``y``, ``w``; ``sum_wy``, ``sum_w`` per category). A column
    whose categories differ no more than chance says (or that has one category) gets
    ``a`` = its total weight, so that every statistic sits near the prior; one without
    two rows in a category to measure the variance within gets one row's mean weight
    (``a`` = 1 for unit weights)."""
    used = sum_w > 0
    n = sum_w[used]
    k, total = n.size, n.sum()
    rows = np.count_nonzero(w > 0)
    if k < 2:
        return float(total) if total > 0 else 1.0
    if rows <= k:
        return float(total / rows)
    mean = sum_wy[used] / n
    overall = np.sum(n * mean) / total
    resid = y - (sum_wy / np.where(used, sum_w, 1.0))[codes.astype(np.intp)]
    within = np.sum(w * resid ** 2) / (rows - k)
    between = (np.sum(n * (mean - overall) ** 2) - (k - 1) * within) / (
        total - np.sum(n ** 2) / total)
    if not between > 0:
        return float(total)
    # (> 0: categories whose y never varies would give a = 0, and 0/0 for a row
    # with no earlier row of its category)
    return float(max(within / between, 1e-9 * total / rows))


def _is_missing_object(v):
    return (v is None or (isinstance(v, (float, np.floating)) and v != v)
            or type(v).__name__ in ("NAType", "NaTType"))


def _as_float(col):
    """(the column as float64 with missing values NaN, mask of the values that are not
    numbers): text such as "2" is another value than 2.0, as in a dict."""
    if col.dtype.kind in "fiub":
        return col.astype(np.float64), np.zeros(col.shape, dtype=bool)
    out = np.full(col.shape, np.nan)
    other = np.zeros(col.shape, dtype=bool)
    for i, v in enumerate(col):
        if isinstance(v, (numbers.Real, np.number)) and not isinstance(v, np.datetime64):
            out[i] = v
        elif not _is_missing_object(v):
            other[i] = True
    return out, other


def _factorize(col, label, use_pandas=True):
    """(distinct values, index of each row's value in them or -1 for a missing value)
    of an object or integer column; pandas' hash table when pandas is there, else a
    dict. ``label`` names the column in errors."""
    try:
        import pandas as pd
    except ImportError:
        use_pandas = False
    try:
        if use_pandas:
            inverse, uniques = pd.factorize(col, use_na_sentinel=True)
            return list(uniques), inverse.astype(np.intp, copy=False)
        index = {}
        inverse = np.empty(col.shape[0], dtype=np.intp)
        for i, v in enumerate(col):
            inverse[i] = -1 if _is_missing_object(v) else index.setdefault(v, len(index))
        return list(index), inverse
    except TypeError as exc:
        raise TypeError(f"{label}: its values must be hashable (numbers or text): "
                        f"{exc}") from None


def _sorted(values):
    """The values sorted; values of several types that do not compare (numbers and
    text) by type name, then value; else in their order of appearance."""
    for key in (None, lambda v: (type(v).__name__, v)):
        try:
            return sorted(values, key=key)
        except TypeError:
            pass
    return list(values)


def _frame_kind(X):
    """"pandas", "polars" or "pyarrow" for a data frame of theirs (or a subclass), else
    None. (A library that is not imported made no frame.)"""
    for kind, names in (("pandas", ("DataFrame",)), ("polars", ("DataFrame",)),
                        ("pyarrow", ("Table", "RecordBatch"))):
        module = sys.modules.get(kind)
        if module is not None and isinstance(X, tuple(getattr(module, n) for n in names)):
            return kind
    return None


def _frame_names(X, kind):
    return list(X.column_names) if kind == "pyarrow" else list(X.columns)


def _frame_column(X, kind, j):
    """Column j of a frame as a 1-D NumPy array (object for text; missing as None/NaN),
    or a pandas categorical column as ``_factorize`` gives it."""
    if kind == "pandas":
        col = X.iloc[:, j]
        if str(col.dtype) == "category":   # factorized already: (values, codes)
            return list(col.cat.categories), col.cat.codes.to_numpy().astype(np.intp)
        if col.dtype.kind in "fb":
            return col.to_numpy(dtype=np.float64, na_value=np.nan)
        if col.dtype.kind in "iu" and not col.hasnans:
            return col.to_numpy(dtype=col.dtype.numpy_dtype
                                if hasattr(col.dtype, "numpy_dtype") else col.dtype)
        return col.to_numpy(dtype=object, na_value=None)
    if kind == "polars":
        col = X.to_series(j)
        if col.dtype.is_integer() and col.null_count():   # (to_numpy: float64)
            return np.array(col.to_list(), dtype=object)
        return col.to_numpy()
    col = X.column(j)
    if str(col.type).startswith("dictionary"):
        # (to_numpy of a dictionary column reads its nulls as values)
        col = col.cast(col.type.value_type)
    if str(col.type).startswith(("int", "uint")) and col.null_count:   # (to_numpy: float64)
        return np.array(col.to_pylist(), dtype=object)
    return col.to_numpy(zero_copy_only=False)


def _frame_with(X, kind, columns):
    """A new frame: X with the columns ``{j: float array}`` replaced (X is not changed)."""
    if kind == "pandas":
        X = X.copy(deep=False)
        for j, values in columns.items():
            X.isetitem(j, values)
        return X
    names = _frame_names(X, kind)
    if kind == "polars":
        import polars as pl
        return X.with_columns([pl.Series(names[j], values) for j, values in columns.items()])
    import pyarrow as pa
    for j, values in columns.items():
        X = X.set_column(j, names[j], pa.array(values))
    return X


def _from_dtype(X, kind):
    """Which columns of a frame have a categorical dtype."""
    if kind == "pandas":
        return [str(dt) == "category" for dt in X.dtypes]
    if kind == "polars":
        return [type(dt).__name__ in ("Categorical", "Enum") for dt in X.dtypes]
    if kind == "pyarrow":
        return [str(t).startswith("dictionary") for t in X.schema.types]
    return []


def _shape(X):
    """The shape of a 2-D array-like X, or None (scikit-learn's validation then says
    what is wrong with it)."""
    try:
        shape = np.shape(X)
    except ValueError:   # a ragged list
        return None
    return shape if len(shape) == 2 else None


def _width_and_names(X):
    """(number of columns, column names or None) of a 2-D X, or None."""
    kind = _frame_kind(X)
    if kind is not None:
        names = [str(name) for name in _frame_names(X, kind)]
        return len(names), names
    if hasattr(X, "format") and hasattr(X, "tocsr"):
        return X.shape[1], None
    shape = _shape(X)
    return None if shape is None else (shape[1], None)


def frame_of_values(meta, columns, values):
    """A pandas frame of the columns of ``meta`` (a frame of X's columns and dtypes)
    whose ``columns`` hold every value of ``values`` (one array each: the values
    of the column, missing ones left out) and the others zeros: the frame on which
    a local encoder learns the categories of rows spread over blocks or workers
    (``CategoricalEncoder.fit_seen``)."""
    import pandas as pd
    n = max(1, max((len(v) for v in values), default=1))
    frame = {}
    for j, name in enumerate(meta.columns):
        col = meta.iloc[:, j]
        if j in columns:
            v = values[columns.index(j)]
            if not len(v):   # (no value but missing ones)
                frame[name] = np.full(n, np.nan)
                continue
            v = np.concatenate([v, np.repeat(v[:1], n - len(v))])
            frame[name] = (pd.Categorical(v) if str(col.dtype) == "category"
                           else pd.Series(v, dtype=col.dtype))
        else:
            frame[name] = np.zeros(n)
    return pd.DataFrame(frame)


def resolve_columns(spec, X):
    """Indices of the categorical columns named by ``categorical_features``."""
    found = _width_and_names(X)
    if found is None:
        return None   # scikit-learn's validation says what is wrong with X
    n, names = found
    wrong = (f"categorical_features must be None, 'from_dtype', or a list of feature "
             f"indices, names or a boolean mask, got {spec!r}")
    if isinstance(spec, str):
        if spec != "from_dtype":
            raise ValueError(wrong)
        return [j for j, m in enumerate(_from_dtype(X, _frame_kind(X))) if m]
    try:
        items = list(spec)
    except TypeError:
        raise TypeError(wrong) from None
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        if len(items) != n:
            raise ValueError(f"categorical_features as a boolean mask must have one entry per "
                             f"feature ({n}), got {len(items)}")
        return [j for j, m in enumerate(items) if m]
    out = [feature_index("categorical_features", v, names, n, ", a feature name or a boolean")
           for v in items]
    if len(set(out)) != len(out):
        raise ValueError(f"categorical_features lists a feature twice: {spec!r}")
    return sorted(out)


class CategoricalEncoder:
    """Ordered target statistics for the columns ``columns`` of X (see the module).

    Fitted in two steps: ``fit_categories`` on the raw X (the values each column
    holds), then ``fit_ordered`` on the validated codes and the target.
    """

    def __init__(self, columns, smooth, max_ordinal=0, max_onehot=0):
        self.columns = list(columns)
        self.smooth = smooth if isinstance(smooth, str) else float(smooth)   # or "auto"
        self.max_ordinal = int(max_ordinal)
        self.max_onehot = int(max_onehot)
        # (column, code) of each indicator column, in the order they follow X's columns
        self.indicators = np.zeros((0, 2), dtype=np.int64)

    def _label(self, j):
        name = "" if self.names is None else f" {self.names[j]!r}"
        return f"X: categorical feature{name} (column {j})"

    def check_columns(self, X, estimator):
        """ValueError unless X has the fitted columns: their names when both have names
        (as scikit-learn says it), else their number. (Before the columns are encoded:
        scikit-learn's own check would first stumble on a column of text.)"""
        found = _width_and_names(X)
        if found is None:
            try:
                shape = f"an array of shape {np.shape(X)}"
            except ValueError:
                shape = "rows of different lengths"
            raise ValueError(f"X: Expected a 2D array or data frame with {self.width} columns, "
                             f"got {shape}")
        width, names = found
        if self.names is not None and names is not None and names != self.names:
            raise ValueError(f"X: The feature names should match those that were passed "
                             f"during fit: got {names}, expected {self.names}")
        if width != self.width:
            raise ValueError(f"X has {width} features, but {type(estimator).__name__} is "
                             f"expecting {self.width} features as input")

    # ------------------------------------------------------------------ raw values -> codes
    def _values(self, X):
        if hasattr(X, "format") and hasattr(X, "tocsr"):
            raise ValueError("categorical_features cannot be used with a scipy.sparse X; "
                             "pass a dense array or a DataFrame")
        kind = _frame_kind(X)
        if kind is not None:
            return kind, {j: _frame_column(X, kind, j) for j in self.columns}
        A = np.asarray(X) if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
        return None, {j: A[:, j] for j in self.columns}

    def fit_categories(self, X):
        """Learn each categorical column's values (and X's width and column names)."""
        self.width, self.names = _width_and_names(X)
        _, values = self._values(X)
        self.categories = {}
        for j, col in values.items():
            if not isinstance(col, tuple) and col.dtype.kind in "fb":
                col = col.astype(np.float64)
                self.categories[j] = np.unique(col[~np.isnan(col)])
                continue
            # integers by value (float64 would merge those above 2**53), text, objects
            uniques, inverse = col if isinstance(col, tuple) else _factorize(col, self._label(j))
            if isinstance(col, tuple):   # a pandas categorical: the values that occur
                uniques = [uniques[i] for i in np.unique(inverse[inverse >= 0])]
            self.categories[j] = {v: i for i, v in enumerate(_sorted(uniques))}
        self.ordinal = [j for j in self.columns if len(self.categories[j]) <= self.max_ordinal]
        return self

    def onehot_columns(self):
        """The columns that get indicator columns."""
        return [j for j in self.columns if 3 <= len(self.categories[j]) <= self.max_onehot]

    def codes(self, X):
        """X with each categorical column replaced by float codes (NaN for a missing
        value, ``UNSEEN`` for a value not seen at fit); X is not changed."""
        kind, values = self._values(X)
        out = {}
        for j, col in values.items():
            cats = self.categories[j]
            if isinstance(cats, np.ndarray):
                if isinstance(col, tuple):   # (index -1, a missing value: the None)
                    col = np.array(list(col[0]) + [None], dtype=object)[col[1]]
                col, other = _as_float(col)
                code = np.full(col.shape, UNSEEN)
                if cats.size:
                    pos = np.minimum(np.searchsorted(cats, col), cats.size - 1)
                    found = cats[pos] == col
                    code[found] = pos[found]
                code[np.isnan(col) & ~other] = np.nan
            else:
                uniques, inverse = col if isinstance(col, tuple) else _factorize(col, self._label(j))
                lookup = np.array([cats.get(v, UNSEEN) for v in uniques] + [np.nan])
                code = lookup[inverse]   # (inverse -1, a missing value: the last entry)
            # float32 holds every code exactly below 2**24 categories, and keeps a
            # float32 X float32
            out[j] = code.astype(np.float32 if len(cats) < 2 ** 24 else np.float64)
        if kind is not None:
            return _frame_with(X, kind, out)
        A = np.asarray(X) if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
        kind = A.dtype.kind
        wide = any(c.dtype == np.float64 for c in out.values())
        A = A.astype(object if kind not in "fiub" else
                     np.float32 if A.dtype == np.float32 and not wide else np.float64)   # a copy
        for j, code in out.items():
            A[:, j] = code
        return A

    # ------------------------------------------------------------------ codes -> statistics
    def statistics_columns(self):
        return [j for j in self.columns if j not in self.ordinal]

    def _ordinal(self, X):
        """The ordinal columns of X (in place): their codes, a value not among the
        training rows made missing (one seen only in a ``validation_fraction``
        hold-out too)."""
        for j in self.ordinal:
            code = X[:, j]
            known = code >= 0   # (NaN compares False)
            known[known] = self.observed[j][code[known].astype(np.intp)]
            X[:, j] = np.where(known, code, np.nan)
        return X

    def fit_ordered(self, X, y, sample_weight, seed):
        """Fit the statistics on the training rows' codes and return X with the
        ordered statistics (a copy; ``seed`` draws the permutation)."""
        X = np.asarray(X, dtype=X.dtype if X.dtype.kind == "f" else np.float64)
        w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        y = np.asarray(y, dtype=np.float64)
        self.prior = float(np.sum(w * y) / np.sum(w))
        self.seed = int(seed)
        self.observed = {}
        for j in self.ordinal:
            code = X[:, j]
            seen = code >= 0
            self.observed[j] = np.bincount(code[seen].astype(np.intp),
                                           minlength=len(self.categories[j])) > 0
        self.indicators = np.array(
            [(j, k) for j in self.onehot_columns()
             for k in np.unique(X[:, j][X[:, j] >= 0]).astype(np.int64)],
            dtype=np.int64).reshape(-1, 2)
        self.tables, self.smooths = {}, {}
        for j in self.statistics_columns():
            code = X[:, j]
            seen = code >= 0   # (NaN compares False)
            index, n_cats = code[seen].astype(np.intp), len(self.categories[j])
            sum_wy = np.bincount(index, (w * y)[seen], minlength=n_cats)
            sum_w = np.bincount(index, w[seen], minlength=n_cats)
            a = self.smooths[j] = (empirical_bayes_smooth(sum_wy, sum_w, code[seen], y[seen],
                                                          w[seen])
                                   if self.smooth == "auto" else self.smooth)
            self.tables[j] = (sum_wy + a * self.prior) / (sum_w + a)
        return self.ordered(X, y, sample_weight)

    def fit_seen(self):
        """The fit of a distributed fit, which learnt the categories from the training
        rows: every category seen in them, every one of a column of indicators gets
        its indicator (as ``fit_ordered`` finds on those rows); a column of target
        statistics, which need the rows in one order, cannot be fitted so."""
        if self.statistics_columns():
            raise ValueError(f"categorical_features: columns of more than "
                             f"max_cat_to_ordinal={self.max_ordinal} categories get target "
                             f"statistics, which a distributed fit does not compute yet "
                             f"(columns {self.statistics_columns()}); raise max_cat_to_ordinal "
                             f"or encode them first")
        self.prior, self.seed = 0.0, 0
        self.observed = {j: np.ones(len(self.categories[j]), dtype=bool) for j in self.ordinal}
        self.indicators = np.array(
            [(j, k) for j in self.onehot_columns() for k in range(len(self.categories[j]))],
            dtype=np.int64).reshape(-1, 2)
        self.tables, self.smooths = {}, {}
        return self

    def ordered(self, X, y, sample_weight):
        """X with the ordered statistics of these rows (a copy), in the permutation
        drawn from the fitted seed: a warm-started fit on the same rows gets the same."""
        w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        y = np.asarray(y, dtype=np.float64)
        perm = np.random.default_rng(self.seed).permutation(X.shape[0])
        out = self._ordinal(_float_copy(X))
        for j in self.statistics_columns():
            out[:, j] = ordered_statistics(out[:, j].astype(np.float64), y, w, self.prior,
                                           self.smooths[j], perm)
        return self._with_indicators(X, out)

    def transform(self, X):
        """X with the statistics over all training rows (a copy)."""
        out = self._ordinal(_float_copy(X))
        for j in self.statistics_columns():
            code = out[:, j].astype(np.float64)
            values = np.full(code.shape, self.prior)
            seen = code >= 0
            values[seen] = self.tables[j][code[seen].astype(np.intp)]
            values[np.isnan(code)] = np.nan
            out[:, j] = values
        return self._with_indicators(X, out)

    # ------------------------------------------------------------------ indicator columns
    def _with_indicators(self, codes, out):
        """``out`` (X's columns as the trees read them) followed by the indicator
        columns of the codes ``codes``."""
        if self.indicators.shape[0] == 0:
            return out
        col = codes[:, self.indicators[:, 0]]
        ind = (col == self.indicators[:, 1]).astype(out.dtype)
        ind[np.isnan(col)] = np.nan
        return np.hstack([out, ind])

    def parents(self):
        """For each column the trees see, the column of X it comes from."""
        return np.r_[np.arange(self.width), self.indicators[:, 0]].astype(np.intp)

    def category_value(self, j, code):
        """The value of column j whose code is ``code``."""
        cats = self.categories[j]
        if isinstance(cats, np.ndarray):
            return cats[code].item()
        return next(v for v, c in cats.items() if c == code)

    def feature_names(self, names):
        """Names of the columns the trees see: X's names (``names``, or "f0", "f1",
        ...) and ``"name==value"`` for each indicator column."""
        names = [f"f{j}" for j in range(self.width)] if names is None else list(names)
        return names + [f"{names[j]}=={self.category_value(j, k)}"
                        for j, k in self.indicators.tolist()]

    def fold(self, values, axes):
        """``values`` whose ``axes`` run over the columns the trees see (and, past them,
        possibly a bias entry), with each indicator column's entries added to its
        column's: the result runs over X's columns (and the bias)."""
        m = self.indicators.shape[0]
        if m == 0:
            return values
        for axis in axes:
            values = np.moveaxis(values, axis, -1)
            n = values.shape[-1]
            P = np.zeros((n, n - m))
            parents = self.parents()
            P[np.arange(parents.shape[0]), parents] = 1.0
            P[parents.shape[0]:, self.width:] = np.eye(n - parents.shape[0])   # (the bias)
            values = np.moveaxis(values @ P, -1, axis)
        return values
