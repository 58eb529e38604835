"""Plots of a fitted model: feature importances, learning curves and one tree, with
matplotlib only.

matplotlib is an optional dependency: it is imported when a function is called,
and its absence raises an ImportError that says how to install it.
"""
import numbers

import numpy as np


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("gbtree's plotting functions need matplotlib, an optional "
                          "dependency: pip install matplotlib") from exc
    return plt


def _fitted_ensemble(model):
    from sklearn.utils.validation import check_is_fitted

    if not hasattr(model, "get_score") or not hasattr(model, "get_dump"):
        raise TypeError(f"model must be a fitted GBTRegressor or GBTClassifier, "
                        f"got {type(model).__name__}")
    check_is_fitted(model, "_ensemble")
    return model._ensemble


def plot_importance(model, importance_type=None, max_num_features=None, ax=None, *,
                    title="Feature importance", xlabel=None, show_values=True, height=0.6,
                    **bar_kwargs):
    """Horizontal bar chart of the features' importances, largest on top.

    Parameters
    ----------
    model : fitted GBTRegressor or GBTClassifier, or dict
        The model, or a ``{feature name: importance}`` dict such as ``get_score``
        returns.
    importance_type : {"weight", "gain", "cover", "total_gain", "total_cover"}, default=None
        What to plot (see ``get_score``). None means the model's own
        ``importance_type`` (``"total_gain"`` unless set), the quantity its
        ``feature_importances_`` normalises; the bars show the raw values.
    max_num_features : int, default=None
        Plot only this many features, the most important ones; None plots all
        features used by a split (unused features have no bar).
    ax : matplotlib Axes, default=None
        Where to draw; None makes a new figure.
    title, xlabel : str
        Axes labels (``xlabel`` defaults to the importance type).
    show_values : bool, default=True
        Write each bar's value at its end.
    height : float, default=0.6
        Bar height.
    **bar_kwargs
        Passed to ``ax.barh``.

    Returns
    -------
    matplotlib Axes
    """
    if isinstance(model, dict):
        scores = {str(k): float(v) for k, v in model.items()}
        importance_type = importance_type or "importance"
    else:
        _fitted_ensemble(model)
        if importance_type is None:
            importance_type = model.importance_type
        scores = model.get_score(importance_type)   # (checks importance_type)
    if not scores:
        raise ValueError("no feature importances to plot: no tree of the model has a split")
    if max_num_features is not None and (
            isinstance(max_num_features, bool)
            or not isinstance(max_num_features, (int, np.integer)) or max_num_features < 1):
        raise ValueError(f"max_num_features must be None or an int >= 1, "
                         f"got {max_num_features!r}")
    # largest first, ties by name (stable), then keep the top ones; barh draws bottom-up
    items = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:max_num_features]
    items.reverse()
    labels = [k for k, _ in items]
    values = np.array([v for _, v in items])

    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, max(2.0, 0.35 * len(items) + 1.2)))
    ylocs = np.arange(len(items))
    ax.barh(ylocs, values, height=height, align="center", **bar_kwargs)
    if show_values:
        for y, v in zip(ylocs, values):
            ax.text(v, y, f" {v:.4g}", va="center")
        ax.set_xlim(0, values.max() * 1.15 if values.max() > 0 else 1)
    ax.set_yticks(ylocs)
    ax.set_yticklabels(labels)
    ax.set_ylim(-1, len(items))
    if title:
        ax.set_title(title)
    ax.set_xlabel(xlabel if xlabel is not None else importance_type)
    ax.set_ylabel("feature")
    return ax



def plot_metric(model, metric=None, dataset_names=None, ax=None, *,
                title="Metric during training", xlabel="Round", ylabel=None, grid=True,
                **plot_kwargs):
    """Learning curves: a metric after every round on each eval set.

    Parameters
    ----------
    model : fitted estimator, or dict
        A model fit with ``eval_set`` (its ``evals_result_``), or such a dict:
        ``{eval set name: {metric name: [value per round]}}``, as XGBoost's and
        LightGBM's ``evals_result``.
    metric : str, default=None
        The metric to plot; None: the first the eval sets have.
    dataset_names : list of str, default=None
        The eval sets to plot (``"validation_0"``, ...); None: all.
    ax : matplotlib Axes, default=None
        Where to draw; None makes a new figure.
    title, xlabel, ylabel : str
        Axes labels (``ylabel`` defaults to the metric's name).
    grid : bool, default=True
        Draw a grid.
    **plot_kwargs
        Passed to ``ax.plot``.

    The model's best round (``best_iteration_``, with early stopping) is marked
    by a dashed line.

    Returns
    -------
    matplotlib Axes
    """
    if isinstance(model, dict):
        results, best = model, None
    else:
        from sklearn.utils.validation import check_is_fitted
        check_is_fitted(model, "_ensemble")
        results = getattr(model, "evals_result_", None)
        if not results:
            raise ValueError("the model has no evals_result_: fit it with eval_set to "
                             "record a metric after every round")
        best = getattr(model, "best_iteration_", None)
    if not results or not all(isinstance(v, dict) for v in results.values()):
        raise ValueError("evals_result must map each eval set's name to "
                         "{metric name: values}")
    names = list(results) if dataset_names is None else list(dataset_names)
    missing = [name for name in names if name not in results]
    if missing or not names:
        raise ValueError(f"dataset_names must be among the eval sets {list(results)}, "
                         f"got {dataset_names!r}")
    metrics = list(results[names[0]])
    metric = metrics[0] if metric is None and metrics else metric
    for name in names:
        if metric not in results[name]:
            raise ValueError(f"eval set {name!r} has no metric {metric!r}; it has "
                             f"{list(results[name])}")
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in names:
        values = np.asarray(results[name][metric], dtype=float)
        ax.plot(np.arange(values.shape[0]), values, label=name, **plot_kwargs)
    if best is not None:
        ax.axvline(best, color="grey", linestyle="--", linewidth=1,
                   label=f"best round ({best})")
    ax.legend()
    if title:
        ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(metric if ylabel is None else ylabel)
    ax.grid(grid)
    return ax

def _tree_layout(ensemble, t):
    """(x, y) of every node of tree t: leaves one unit apart in pre-order,
    a split centred over its two children, y = -depth."""
    tree = ensemble.tree(t)
    order = ensemble.walk(t)
    x = np.zeros(tree.shape[0])
    y = np.zeros(tree.shape[0])
    n_leaves = 0
    for node, depth in order:
        y[node] = -depth
        if tree["is_leaf"][node]:
            x[node] = n_leaves
            n_leaves += 1
    for node, _ in reversed(order):   # children come after their parent in pre-order
        if not tree["is_leaf"][node]:
            x[node] = 0.5 * (x[tree["left"][node]] + x[tree["right"][node]])
    return x, y, n_leaves


def plot_tree(model, tree_index=0, ax=None, *, with_stats=False, precision=4, fontsize=9):
    """Draw one tree: a box per node, an edge per parent-child link.

    A split's box reads ``feature <= threshold``; its left edge is marked
    ``yes`` (rows with ``x <= threshold``) and the edge missing values follow
    is marked ``missing``. A leaf's box shows its value (learning rate
    included). Drawn with matplotlib alone (no graphviz). The node boxes are
    texts with gid ``"node <id>"``, the edges lines with gid ``"edge <parent>-<child>"``.

    Parameters
    ----------
    model : fitted GBTRegressor or GBTClassifier
    tree_index : int, default=0
        Which tree, in fitting order (for K >= 3 classes tree ``t`` is round
        ``t // K``, class ``classes_[t % K]``).
    ax : matplotlib Axes, default=None
        Where to draw; None makes a new figure sized to the tree.
    with_stats : bool, default=False
        Also write gain and cover in split boxes, cover in leaf boxes.
    precision : int, default=4
        Significant digits of the numbers shown.
    fontsize : float, default=9

    Returns
    -------
    matplotlib Axes
    """
    ensemble = _fitted_ensemble(model)
    if (isinstance(tree_index, bool) or not isinstance(tree_index, (int, np.integer))
            or not 0 <= tree_index < ensemble.n_trees):
        raise ValueError(f"tree_index must be an int in [0, {ensemble.n_trees}), "
                         f"got {tree_index!r}")
    tree_index = int(tree_index)
    plt = _pyplot()
    names = ensemble.feature_names(model._inspect_names())
    tree = ensemble.tree(tree_index)
    x, y, n_leaves = _tree_layout(ensemble, tree_index)
    depth = int(-y.min())
    if ax is None:
        _, ax = plt.subplots(figsize=(min(40.0, max(4.0, 1.5 * n_leaves)),
                                      max(2.5, 1.3 * (depth + 1))))

    if isinstance(precision, bool) or not isinstance(precision, numbers.Integral) or precision < 1:
        raise ValueError(f"precision must be an integer >= 1, got {precision!r}")
    p = int(precision)
    for node in range(tree.shape[0]):
        rec = tree[node]
        if rec["is_leaf"]:
            label = f"leaf={rec['value']:.{p}g}"
            if with_stats:
                label += f"\ncover={rec['cover']:.{p}g}"
            style = dict(boxstyle="round,pad=0.3", fc="#e8f1e4", ec="#4a7f3b")
        else:
            label = f"{names[rec['feature']]} <= {rec['threshold']:.{p}g}"
            if with_stats:
                label += f"\ngain={rec['gain']:.{p}g}\ncover={rec['cover']:.{p}g}"
            style = dict(boxstyle="square,pad=0.3", fc="#e4ecf7", ec="#35608f")
            for child, word in ((rec["left"], "yes"), (rec["right"], "no")):
                goes_missing = (child == rec["left"]) == bool(rec["default_left"])
                ax.plot([x[node], x[child]], [y[node], y[child]], color="0.45", lw=1, zorder=1,
                        gid=f"edge {node}-{child}")
                ax.text(0.5 * (x[node] + x[child]), 0.5 * (y[node] + y[child]),
                        word + (", missing" if goes_missing else ""), ha="center", va="center",
                        fontsize=fontsize * 0.85, color="0.3", zorder=2,
                        backgroundcolor="white")
        ax.text(x[node], y[node], label, ha="center", va="center", fontsize=fontsize,
                bbox=style, zorder=3, gid=f"node {node}")
    ax.set_xlim(-0.7, n_leaves - 0.3)
    ax.set_ylim(-depth - 0.5, 0.5)
    ax.set_axis_off()
    title = f"tree {tree_index}"
    if ensemble.n_outputs > 1:
        labels = getattr(model, "classes_", np.arange(ensemble.n_outputs))
        title += f" (class {labels[ensemble.tree_class[tree_index]]})"
    ax.set_title(title)
    return ax
