"""
Saving and loading a model
==========================

A fitted estimator saves to a file with ``save_model``: JSON for a ``.json``
suffix, a compact binary encoding (a zip file) for any other. ``gbtree.load_model``
reads either back into a fitted estimator that predicts exactly the same
values. The file is checked when it is loaded, and holds no pickled code.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import gbtree
from gbtree import GBTClassifier

digits = load_digits()
X_train, X_test, y_train, y_test = train_test_split(
    digits.data, digits.target, random_state=0)
clf = GBTClassifier(n_estimators=20, learning_rate=0.3, max_depth=3).fit(X_train, y_train)

# %%
# Save the model in both encodings, then load each back.
with tempfile.TemporaryDirectory() as folder:
    for name in ("digits.json", "digits.gbt"):
        path = Path(folder) / name
        clf.save_model(path)
        loaded = gbtree.load_model(path)
        same = np.array_equal(loaded.predict_proba(X_test), clf.predict_proba(X_test))
        print(f"{name}: {path.stat().st_size / 1024:.0f} KiB, {type(loaded).__name__}, "
              f"{loaded.n_trees_} trees, same probabilities: {same}")

print(f"test accuracy of the loaded model: {loaded.score(X_test, y_test):.3f}")

# %%
# The loaded model classifies the test digits as the original does.
predicted = loaded.predict(X_test[:10])
fig, axes = plt.subplots(2, 5, figsize=(7, 3.4))
for ax, image, label, truth in zip(axes.ravel(), X_test[:10], predicted, y_test[:10]):
    ax.imshow(image.reshape(8, 8), cmap="gray_r")
    ax.set_title(f"predicted {label}" + ("" if label == truth else f" ({truth})"),
                 fontsize=9)
    ax.set_axis_off()
fig.tight_layout()

# %%
# Everything the trees hold survives the round trip: tree 0 of the loaded model
# (round 0, class 0) with its gains and covers.
fig, ax = plt.subplots(figsize=(10, 4.5))
gbtree.plot_tree(loaded, tree_index=0, ax=ax, with_stats=True, fontsize=7)
plt.show()
