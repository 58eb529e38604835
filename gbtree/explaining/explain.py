"""Explaining predictions: SHAP values, SHAP interaction values and Saabas' path
attributions of a fitted model, and the model in the tree format of the ``shap``
package.

The estimators' ``predict(X, pred_contribs=True)`` (and ``pred_interactions``,
``approx_contribs``) and ``to_shap()`` call :func:`predict_explained` and
:func:`to_shap`; the kernels are in ``_treeshap.pyx``.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from . import _treeshap  # type: ignore[attr-defined]
from ..kernels._threads import call_threads
from ..data.binning import kernel_array
from ..data.validation import check_base_margin
from ..predicting.tree import csr_parts

_MODES = {"contribs": 0, "approx": 1, "interactions": 2}
# a row's SHAP values by a tree cost about as much as 300 walks down it (200 rows'
# contributions by 100 trees of 255 leaves: 47 ms; 250,000 rows' predictions: 0.2 s)
SHAP_COST = 256


def _check_flag(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def explain_mode(pred_contribs, approx_contribs, pred_interactions):
    """``"contribs"``, ``"approx"``, ``"interactions"``, or None (a plain prediction)
    for the flags of ``predict``; ValueError for combinations that mean nothing."""
    if pred_contribs is False and approx_contribs is False and pred_interactions is False:
        return None   # a plain prediction (one-row predict counts microseconds)
    pred_contribs = _check_flag("pred_contribs", pred_contribs)
    approx_contribs = _check_flag("approx_contribs", approx_contribs)
    pred_interactions = _check_flag("pred_interactions", pred_interactions)
    if pred_contribs and pred_interactions:
        raise ValueError("pred_contribs and pred_interactions are exclusive: "
                         "pred_interactions=True alone returns the interaction values, "
                         "whose rows sum to the contributions")
    if approx_contribs and not pred_contribs:
        raise ValueError("approx_contribs=True needs pred_contribs=True (Saabas' path "
                         "attributions are contributions; they have no interaction values)")
    if pred_interactions:
        return "interactions"
    if pred_contribs:
        return "approx" if approx_contribs else "contribs"
    return None


def _used_features(nodes, tree_ptr, n_features):
    """``(used_ptr, used)``: tree t splits on features ``used[used_ptr[t]:used_ptr[t + 1]]``."""
    n_trees = tree_ptr.shape[0] - 1
    tree_of = np.repeat(np.arange(n_trees, dtype=np.int64), np.diff(tree_ptr))
    inner = nodes["is_leaf"] == 0
    keys = np.unique(tree_of[inner] * n_features + nodes["feature"][inner])
    used = (keys % max(n_features, 1)).astype(np.int32)
    counts = np.bincount(keys // max(n_features, 1), minlength=n_trees)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), used


def shap_values(ensemble, X, mode="contribs", tree_range=None, n_threads=1, absent=0.0,
                base_margin=None):
    """Per-feature values of every row of X (float32/float64, dense or CSR whose
    absent entries have the value ``absent``) for the trees of ``tree_range``.

    Returns an array of shape (n_rows, n_outputs, n_features + 1) for ``mode``
    ``"contribs"`` (TreeSHAP) and ``"approx"`` (Saabas), (n_rows, n_outputs,
    n_features + 1, n_features + 1) for ``"interactions"``; the last feature
    index is the bias: ``base_score`` (or the row's ``base_margin``, shape
    (n_rows, n_outputs)) plus the trees' expected values, so that each row's
    values sum to its raw prediction.
    """
    ensemble._check_width(X)
    start, stop = (0, ensemble.n_trees) if tree_range is None else tree_range
    nodes, tree_ptr, tree_class = ensemble.tree_slice(start, stop)
    n_rows, m, k = X.shape[0], ensemble.n_features, ensemble.n_outputs
    shape = (n_rows, k, m + 1) + ((m + 1,) if mode == "interactions" else ())
    out = np.zeros(shape, dtype=np.float64)
    snodes = _treeshap.shap_nodes(nodes, tree_ptr)
    means = _treeshap.shap_means(snodes, tree_ptr)
    if base_margin is None:
        bias = ensemble.base_score.copy()
        np.add.at(bias, tree_class, means)
    else:   # the trees' means added in tree order, as predict adds their leaves
        bias = np.array(base_margin, dtype=np.float64)
        for t in range(tree_class.shape[0]):
            bias[:, tree_class[t]] += means[t]
    if mode == "interactions":
        out[:, :, m, m] = bias
    else:
        out[:, :, m] = bias
    if n_rows == 0 or tree_class.shape[0] == 0:
        return out
    used_ptr, used = _used_features(nodes, tree_ptr, m)
    args = (snodes, tree_ptr, tree_class, used_ptr, used, out.reshape(-1), k, n_threads)
    if sp.issparse(X):
        _treeshap.tree_shap_csr(_MODES[mode], *csr_parts(X), absent, *args)
    else:
        _treeshap.tree_shap(_MODES[mode], kernel_array(X), *args)
    return out


def predict_explained(est, X, iteration_range, mode, base_margin=None):
    """The values ``mode`` names for a fitted estimator, in ``predict``'s layout:
    without the output axis when the model has one output."""
    X = est._validate_predict_data(X)
    margin = check_base_margin(base_margin, X.shape[0], est._ensemble.n_outputs)
    out = shap_values(est._ensemble, X, mode, est._tree_range(iteration_range),
                      call_threads(est.n_jobs, X.shape[0], est._ensemble.n_trees,
                                   SHAP_COST), est._absent(), margin)
    encoder = getattr(est, "_cat_encoder", None)
    if encoder is not None:   # indicator columns' values added to their column's
        out = encoder.fold(out, (2, 3) if mode == "interactions" else (2,))
    return out[:, 0] if out.shape[1] == 1 else out


def model_input(est, X):
    """X as the trees of a fitted estimator see it: categorical columns replaced by
    their numeric codes, followed by any indicator columns (``max_cat_to_onehot``),
    float32/float64, dense or CSR. For explainers that take
    the model from :func:`to_shap` (``shap.TreeExplainer``)."""
    return est._validate_predict_data(X)


def to_shap(est, iteration_range=None):
    """The trees of a fitted estimator (those ``predict`` uses) as the dictionary
    ``shap.TreeExplainer`` accepts.

    Each tree lists, per node, its children, the child missing values go to,
    the split feature and threshold (``x <= threshold`` goes left), its value
    (the cover-weighted mean of its leaves; for a leaf, its value) and its cover
    (the sum of its leaves' hessian sums): the same fractions as
    ``predict(X, pred_contribs=True)``. ``values`` has one column per raw output;
    a tree fills only the column of its output. ``base_offset`` is
    ``base_score_``.
    """
    check_is_fitted(est, "_ensemble")
    ens = est._ensemble
    start, stop = est._tree_range(iteration_range)
    k = ens.n_outputs
    trees = []
    for t in range(start, stop):
        tree = ens.tree(t)
        means, covers = _treeshap.tree_stats(tree)
        leaf = tree["is_leaf"] == 1
        left = np.where(leaf, -1, tree["left"]).astype(np.int32)
        right = np.where(leaf, -1, tree["right"]).astype(np.int32)
        values = np.zeros((tree.shape[0], k))
        values[:, ens.tree_class[t]] = means
        trees.append({
            "children_left": left,
            "children_right": right,
            "children_default": np.where(tree["default_left"] == 1, left, right),
            "features": np.where(leaf, -1, tree["feature"]).astype(np.int32),
            "thresholds": np.where(leaf, -1.0, tree["threshold"]),
            "values": values,
            "node_sample_weight": covers,
        })
    base = ens.base_score.copy()
    return {"trees": trees, "base_offset": float(base[0]) if k == 1 else base,
            "tree_output": "raw_value", "input_dtype": np.float64,
            "internal_dtype": np.float64}
