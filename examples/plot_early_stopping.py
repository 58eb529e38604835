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
# eval set (named ``validation_0``, ``validation_1``, ... in ``eval_set`` order).
train_loss = clf.evals_result_["validation_0"]["logloss"]
val_loss = clf.evals_result_["validation_1"]["logloss"]

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(train_loss, label="training rows")
ax.plot(val_loss, label="validation set")
ax.axvline(clf.best_iteration_, color="grey", linestyle="--", label="best round")
ax.set_xlabel("round")
ax.set_ylabel("log loss")
ax.set_title("Learning curves of GBTClassifier")
ax.legend()
fig.tight_layout()
plt.show()
