"""Draw the images of docs/index.md ("Inspecting a fitted model") and docs/explain.md.

    python docs/make_plots.py        # writes docs/plot_importance.png, docs/plot_tree.png,
                                     # docs/plot_shap.png (needs shap)

Uses the diabetes data set that ships with scikit-learn (as a DataFrame, so the
plots show the column names).
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402

from gbtree import GBTRegressor, plot_importance, plot_tree  # noqa: E402

HERE = Path(__file__).resolve().parent


def main():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GBTRegressor(n_estimators=100, learning_rate=0.1, max_depth=3).fit(X, y)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_importance(model, importance_type="weight", ax=axes[0], title="Splits per feature")
    plot_importance(model, importance_type="gain", ax=axes[1], title="Average gain of its splits")
    fig.tight_layout()
    fig.savefig(HERE / "plot_importance.png", dpi=80)

    ax = plot_tree(model, tree_index=0, with_stats=True)
    ax.figure.savefig(HERE / "plot_tree.png", dpi=80, bbox_inches="tight")
    print(model.get_dump()[0])
    plot_shap(X, y)


def plot_shap(X, y):
    """docs/explain.md: SHAP values of every row, beeswarm and mean |value| side by side."""
    import shap

    model = GBTRegressor(n_estimators=200, learning_rate=0.05, max_depth=3).fit(X, y)
    explanation = shap.TreeExplainer(model.to_shap(), feature_names=list(X.columns))(X)
    fig = plt.figure(figsize=(12, 4.5))
    ax = fig.add_subplot(1, 2, 1)
    shap.plots.beeswarm(explanation, show=False, plot_size=None, ax=ax)
    ax.set_title("SHAP value of each row and feature")
    ax = fig.add_subplot(1, 2, 2)
    shap.plots.bar(explanation, show=False, ax=ax)
    ax.set_title("Mean |SHAP value|")
    fig.tight_layout()
    fig.savefig(HERE / "plot_shap.png", dpi=80)


if __name__ == "__main__":
    main()
