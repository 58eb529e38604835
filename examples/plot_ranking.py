"""
Learning to rank
================

``GBTRanker`` learns to order the documents of each query by relevance
(LambdaMART, ``objective="rank:ndcg"``). The data here is drawn by the script:
200 queries of 10 documents with 5 features each, and a relevance label from 0
to 4 that depends on the first two features. The rows of a query are named by
``qid``, in any order.
"""

import matplotlib.pyplot as plt
import numpy as np

from gbtree import GBTRanker, ndcg_at_k

rng = np.random.default_rng(0)
qid = np.repeat(np.arange(200), 10)
X = rng.normal(size=(qid.size, 5))
y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=qid.size))
            + 1, 0, 4).astype(int)
train = qid < 150
X_train, y_train, qid_train = X[train], y[train], qid[train]
X_test, y_test, qid_test = X[~train], y[~train], qid[~train]

# %%
# Eval sets need their query ids too (``eval_qid``); the default metric of a
# ranker is the mean NDCG@10 over the queries.
ranker = GBTRanker(n_estimators=100, learning_rate=0.1, max_depth=4)
ranker.fit(X_train, y_train, qid=qid_train,
           eval_set=[(X_train, y_train), (X_test, y_test)], eval_qid=[qid_train, qid_test])

print(f"test NDCG@10, GBTRanker: {ranker.score(X_test, y_test, qid=qid_test):.3f}")
print(f"test NDCG@10, ranked by the first feature alone: "
      f"{ndcg_at_k(y_test, X_test[:, 0], qid=qid_test, k=10):.3f}")

# %%
# NDCG@10 of the training and test queries after each round.
history = ranker.evals_result_
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(history["validation_0"]["ndcg@10"], label="training queries")
ax.plot(history["validation_1"]["ndcg@10"], label="test queries")
ax.set_xlabel("round")
ax.set_ylabel("mean NDCG@10")
ax.set_title("GBTRanker (rank:ndcg)")
ax.legend()
fig.tight_layout()
plt.show()
