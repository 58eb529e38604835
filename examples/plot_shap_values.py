"""
Feature importance and SHAP values
==================================

A regressor on the diabetes data set that ships with scikit-learn, read as a
pandas DataFrame so that the plots name the columns. ``plot_importance`` draws
the features' importances from the splits of the trees; ``predict(X,
pred_contribs=True)`` gives each prediction's exact SHAP values (path-dependent
TreeSHAP): how much each feature moves that prediction away from the model's
expected value.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes

from gbtree import GBTRegressor, plot_importance

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = GBTRegressor(n_estimators=100, learning_rate=0.1, max_depth=3).fit(X, y)

# %%
# Importances: the total gain of each feature's splits, and the number of them.
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
plot_importance(model, importance_type="total_gain", ax=axes[0], show_values=False,
                title="Total gain of its splits")
plot_importance(model, importance_type="weight", ax=axes[1], title="Splits per feature")
fig.tight_layout()

# %%
# SHAP values: one column per feature, then the bias (the expected value). Each
# row sums to the prediction.
contribs = model.predict(X, pred_contribs=True)
shap_values, bias = contribs[:, :-1], contribs[:, -1]
print("shape:", contribs.shape)
print("rows sum to the predictions:", np.allclose(contribs.sum(axis=1), model.predict(X)))
print(f"expected value: {bias[0]:.1f}, mean target: {y.mean():.1f}")

# %%
# The mean absolute SHAP value ranks the features by their effect on the
# predictions; a feature's SHAP values against its values show the shape of that
# effect (here the body-mass index, ``bmi``).
mean_abs = np.abs(shap_values).mean(axis=0)
order = np.argsort(mean_abs)
column = list(X.columns).index("bmi")

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
axes[0].barh(np.asarray(X.columns)[order], mean_abs[order])
axes[0].set_xlabel("mean |SHAP value|")
axes[0].set_title("Effect on the predictions")
axes[1].scatter(X["bmi"], shap_values[:, column], s=8, c=X["s5"], cmap="viridis")
axes[1].axhline(0, color="grey", linewidth=0.8)
axes[1].set_xlabel("bmi (colour: s5)")
axes[1].set_ylabel("SHAP value of bmi")
axes[1].set_title("Effect of bmi on each prediction")
fig.tight_layout()
plt.show()
