"""
Early stopping and learning curves
==================================

A classifier on the breast cancer data set that ships with scikit-learn. The
log loss is recorded on the training rows and on a validation set after every
round (``eval_set``); training stops once the validation loss has not improved
for 20 rounds (``early_stopping_rounds``), and predictions use the best round
(``best_iteration_``).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from gbtree import GBTClassifier

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(X_train, y_train, random_state=0)

# %%
# Early stopping watches the last metric on the last eval set: the validation set.
clf = GBTClassifier(n_estimators=300, learning_rate=0.1, max_depth=3,
                    eval_metric="logloss", early_stopping_rounds=20)
clf.fit(X_train, y_train, eval_set=[(X_train, y_train), (X_val, y_val)])

print(f"rounds built: {clf.n_estimators_}, best round: {clf.best_iteration_}, "
      f"validation log loss there: {clf.best_score_:.4f}")
print(f"test accuracy (rounds 0..{clf.best_iteration_}): {clf.score(X_test, y_test):.3f}")

# %%
# The learning curves: ``evals_result_`` holds one value per round for every
# eval set (named ``validation_0``, ``validation_1``, ... in ``eval_set`` order);
# ``plot_metric`` draws them and marks the best round.
import gbtree

ax = gbtree.plot_metric(clf, title="Learning curves of GBTClassifier", ylabel="log loss")
ax.figure.tight_layout()
plt.show()
