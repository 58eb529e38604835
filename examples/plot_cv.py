"""
Cross-validation with early stopping
====================================

``gbtree.cv`` fits the classifier on five stratified folds of the breast cancer
data set that ships with scikit-learn and records the log loss after every round
on each fold's held-out rows. Training stops once the folds' mean loss has not
improved for 20 rounds; the table then ends at the best round, so its length is
the number of rounds to fit the final model with.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer

import gbtree

X, y = load_breast_cancer(return_X_y=True)
clf = gbtree.GBTClassifier(n_estimators=500, learning_rate=0.1, max_depth=3)
table = gbtree.cv(clf, X, y, nfold=5, early_stopping_rounds=20, seed=0)
print(f"best number of rounds: {len(table)}, held-out log loss there: "
      f"{table['test-logloss-mean'].iloc[-1]:.4f} +- {table['test-logloss-std'].iloc[-1]:.4f}")

# %%
# The mean over the folds, with a band of one standard deviation either side.
fig, ax = plt.subplots(figsize=(6, 4))
for data in ("train", "test"):
    mean, std = table[f"{data}-logloss-mean"], table[f"{data}-logloss-std"]
    ax.plot(table.index, mean, label=f"{data} rows")
    ax.fill_between(table.index, mean - std, mean + std, alpha=0.3)
ax.set_xlabel("round")
ax.set_ylabel("log loss")
ax.set_title("5-fold cross-validation of GBTClassifier")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# The final model: every row, the best number of rounds.
final = clf.set_params(n_estimators=len(table)).fit(X, y)
print(f"final model: {final.n_estimators_} trees")
