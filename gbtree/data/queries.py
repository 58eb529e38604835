"""Query groups of a ranking task: rows in query order and the queries' offsets,
from query ids (``qid``) or query sizes (``group``)."""
import numpy as np

from .validation import _is_missing


def query_groups(n_rows, group=None, qid=None, where="fit"):
    """Rows in query order and the query offsets, from ``qid`` or ``group``.

    Returns ``(order, group_ptr)``: ``order`` (None when the rows are already
    in order) is the stable sort of the rows by ``qid``, so each query's rows
    keep their relative order; ``group_ptr`` holds the ``n_groups + 1`` row
    offsets of the queries in that order (queries sorted by id). With
    ``group`` (query sizes in row order) the rows are taken as they are.
    """
    if (group is None) == (qid is None):
        raise ValueError(f"{where}: pass exactly one of qid (a query id per row) or group (the "
                         f"query sizes, in row order); got "
                         f"{'neither' if group is None else 'both'}")
    if group is not None:
        sizes = np.asarray(group)
        if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iuf":
            raise ValueError(f"{where}: group must be a non-empty 1-D list of query sizes")
        if np.any(~np.isfinite(sizes)) or np.any(sizes != np.round(sizes)) or np.any(sizes < 1):
            raise ValueError(f"{where}: group sizes must be positive integers")
        if np.any(sizes > n_rows):
            # (checked before the cast: a size beyond intp wrapped around, and the sum too)
            raise ValueError(f"{where}: group sizes sum to more than the {n_rows} rows (one "
                             f"size is {sizes.max()})")
        sizes = sizes.astype(np.intp)
        if sizes.sum() != n_rows:
            raise ValueError(f"{where}: group sizes sum to {int(sizes.sum())} but there are "
                             f"{n_rows} rows")
        return None, np.r_[0, np.cumsum(sizes)].astype(np.intp)
    qid = np.asarray(qid)
    if qid.ndim != 1 or qid.shape[0] != n_rows:
        raise ValueError(f"{where}: qid must be 1-D with one query id per row ({n_rows} rows), "
                         f"got shape {qid.shape}")
    if np.any(_is_missing(qid)):
        raise ValueError(f"{where}: qid contains NaN or None")
    try:
        _, codes = np.unique(qid, return_inverse=True)
    except TypeError:
        raise ValueError(f"{where}: qid values must be mutually comparable (all numbers or "
                         f"all strings)") from None
    codes = codes.reshape(-1)
    order = np.argsort(codes, kind="stable")
    if np.all(np.diff(codes) >= 0):
        order = None
    counts = np.bincount(codes)
    return order, np.r_[0, np.cumsum(counts)].astype(np.intp)


def _take(a, order):
    return a if (a is None or order is None) else a[order]


def _check_group_weights(w, group_ptr, where):
    """Per-row weights that must be constant within each query; returns them."""
    if w is None:
        return None
    first = np.repeat(w[group_ptr[:-1]], np.diff(group_ptr))
    if not np.array_equal(first, w):
        raise ValueError(f"{where}: sample_weight must be the same for every row of a query "
                         f"(it weights the query)")
    return w


def _pop_qid_column(X, column, where, required=True):
    """(X without the column, its values) for a DataFrame X and a column name."""
    if not hasattr(X, "columns") or not hasattr(X, "drop"):
        raise ValueError(f"{where}: qid={column!r} names a column, but X is not a DataFrame")
    if column not in X.columns:
        if not required:
            return X, None
        raise ValueError(f"{where}: qid={column!r} is not a column of X")
    if X.shape[1] == 1:
        raise ValueError(f"{where}: X has no column besides its query ids {column!r}: no "
                         f"feature to rank by")
    # (a selection, not drop: pandas' and polars' drop take different arguments)
    return X[[c for c in X.columns if c != column]], np.asarray(X[column])
