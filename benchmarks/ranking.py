"""Learning to rank: gbtree's GBTRanker against LightGBM lambdarank and XGBoost rank:ndcg.

Two workloads, every library at the same settings (learning rate, rounds,
best-first trees of ``--leaves`` leaves without a depth limit, L2 ``reg_lambda``,
minimum hessian sum per leaf, truncation level / pairs per document, threads):

``real``       GroupKFold 5-fold mean NDCG@10 on ../shared/data/rank.train
               (LightGBM's lambdarank example: 3,005 documents, 201 queries,
               300 features, labels 0-4), folds split by query.
``synthetic``  an MS-LTR-like set (default 10,000 queries x 100 documents x 137
               float32 features, graded labels 0-4 in MSLR-WEB's proportions);
               80 % of the queries train, 20 % are held out; fit time and
               held-out NDCG@10.

NDCG@10 is computed for every library by ``gbtree.ndcg_at_k`` (gain 2^y - 1, a
query without relevant documents scores 1, tied scores share positions).

    python benchmarks/ranking.py real [--rounds 100] [--threads 1]
    python benchmarks/ranking.py synthetic [--queries 10000] [--docs 100] [--threads 2]
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gbtree import GBTRanker, ndcg_at_k  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


# ---------------------------------------------------------------- the three libraries
def fit_gbtree(X, y, group, a):
    model = GBTRanker(objective="rank:ndcg", n_estimators=a.rounds, learning_rate=a.lr,
                      grow_policy="lossguide", max_depth=0, max_leaves=a.leaves,
                      reg_lambda=a.reg_lambda, min_child_weight=a.min_child_weight,
                      lambdarank_truncation_level=a.truncation, max_bin=a.max_bin + 1,
                      n_jobs=a.threads)
    t = time.perf_counter()
    model.fit(X, y, group=group)
    return model.predict, time.perf_counter() - t


def fit_lightgbm(X, y, group, a, min_data_in_leaf=1):
    import lightgbm as lgb
    model = lgb.LGBMRanker(objective="lambdarank", n_estimators=a.rounds, learning_rate=a.lr,
                           num_leaves=a.leaves, max_depth=-1, reg_lambda=a.reg_lambda,
                           min_child_weight=a.min_child_weight, min_child_samples=min_data_in_leaf,
                           lambdarank_truncation_level=a.truncation, max_bin=a.max_bin,
                           n_jobs=a.threads, verbose=-1, subsample=1.0, colsample_bytree=1.0)
    t = time.perf_counter()
    model.fit(X, y, group=group)
    return model.predict, time.perf_counter() - t


def fit_xgboost(X, y, group, a):
    import xgboost as xgb
    qid = np.repeat(np.arange(len(group)), group)
    model = xgb.XGBRanker(objective="rank:ndcg", n_estimators=a.rounds, learning_rate=a.lr,
                          tree_method="hist", grow_policy="lossguide", max_depth=0,
                          max_leaves=a.leaves, reg_lambda=a.reg_lambda,
                          min_child_weight=a.min_child_weight, max_bin=a.max_bin,
                          lambdarank_pair_method="topk",
                          lambdarank_num_pair_per_sample=a.truncation, n_jobs=a.threads)
    t = time.perf_counter()
    model.fit(X, y, qid=qid)
    return model.predict, time.perf_counter() - t


LIBS = {"gbtree": fit_gbtree, "lightgbm": fit_lightgbm, "xgboost": fit_xgboost}


# ---------------------------------------------------------------- data
def load_real():
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(DATA / "rank.train"))
    group = np.loadtxt(DATA / "rank.train.query", dtype=np.intp)
    return np.asarray(X.todense(), dtype=np.float64), y, group


def make_mslr_like(n_queries, n_docs, n_features=137, seed=0):
    """Queries of ``n_docs`` documents; labels 0-4 from a nonlinear latent score.

    The label shares follow MSLR-WEB (about 52/32/13/2/1 % for 0..4). Features:
    a few informative ones (monotone, interacting, query-relative), the rest
    noise, some heavy-tailed and quantised like counts.
    """
    rng = np.random.RandomState(seed)
    n = n_queries * n_docs
    X = rng.randn(n, n_features).astype(np.float32)
    X[:, 100:120] = np.floor(np.exp(X[:, 100:120]) * 3)          # count-like
    query_shift = np.repeat(rng.randn(n_queries, 5), n_docs, axis=0)
    X[:, :5] += query_shift.astype(np.float32)                   # query-level offsets
    q = np.repeat(np.arange(n_queries), n_docs)
    rel_feat = X[:, :5] - query_shift                            # query-relative signal
    latent = (1.0 * rel_feat[:, 0] + 0.7 * np.tanh(rel_feat[:, 1]) * rel_feat[:, 2]
              + 0.5 * (rel_feat[:, 3] > 0.5) + 0.3 * np.sin(2 * rel_feat[:, 4])
              + 0.2 * np.log1p(X[:, 100]) + 0.6 * rng.randn(n))
    cuts = np.quantile(latent, [0.52, 0.84, 0.97, 0.99])
    y = np.searchsorted(cuts, latent).astype(np.float64)
    return X, y, q


# ---------------------------------------------------------------- workloads
def run_real(a):
    from sklearn.model_selection import GroupKFold
    X, y, group = load_real()
    qid = np.repeat(np.arange(len(group)), group)
    rows = {}
    variants = [(name, fn) for name, fn in LIBS.items() if name in a.libs]
    if "lightgbm" in a.libs:
        variants.append(("lightgbm (min_data_in_leaf=20, its default)",
                         lambda X, y, g, a: fit_lightgbm(X, y, g, a, min_data_in_leaf=20)))
    for name, fn in variants:
        scores, seconds = [], 0.0
        for tr, te in GroupKFold(n_splits=5).split(X, y, qid):
            gtr = np.bincount(qid[tr])[np.unique(qid[tr])]
            predict, s = fn(X[tr], y[tr], gtr, a)
            seconds += s
            scores.append(ndcg_at_k(y[te], predict(X[te]), qid=qid[te], k=10))
        rows[name] = (np.mean(scores), np.std(scores), seconds)
    print(f"\nrank.train, GroupKFold(5), {a.rounds} rounds, lr {a.lr}, {a.leaves} leaves, "
          f"lambda {a.reg_lambda}, min_child_weight {a.min_child_weight}, truncation "
          f"{a.truncation}, {a.threads} thread(s)\n")
    print("| library | mean NDCG@10 | std over folds | fit seconds (5 folds) |")
    print("|---|---|---|---|")
    for name, (m, s, t) in rows.items():
        print(f"| {name} | {m:.4f} | {s:.4f} | {t:.2f} |")


def run_synthetic(a):
    X, y, q = make_mslr_like(a.queries, a.docs, seed=a.seed)
    n_train = int(0.8 * a.queries) * a.docs
    Xtr, ytr, Xte, yte, qte = X[:n_train], y[:n_train], X[n_train:], y[n_train:], q[n_train:]
    gtr = np.full(n_train // a.docs, a.docs)
    print(f"\nsynthetic MS-LTR-like: {a.queries} queries x {a.docs} docs x {X.shape[1]} "
          f"features ({n_train:,} train rows), {a.rounds} rounds, lr {a.lr}, {a.leaves} leaves, "
          f"truncation {a.truncation}, {a.threads} thread(s); label shares "
          f"{np.round(np.bincount(y.astype(int)) / y.size, 3).tolist()}\n")
    print("| library | fit seconds | held-out NDCG@10 |")
    print("|---|---|---|")
    for name in a.libs:
        predict, seconds = LIBS[name](Xtr, ytr, gtr, a)
        score = ndcg_at_k(yte, predict(Xte), qid=qte, k=10)
        print(f"| {name} | {seconds:.2f} | {score:.4f} |", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", choices=["real", "synthetic"])
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--leaves", type=int, default=31)
    p.add_argument("--reg-lambda", type=float, default=1.0)
    p.add_argument("--min-child-weight", type=float, default=1e-3)
    p.add_argument("--truncation", type=int, default=30)
    p.add_argument("--max-bin", type=int, default=255, help="value bins (plus one for missing)")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--libs", default="gbtree,lightgbm,xgboost")
    a = p.parse_args(argv)
    a.libs = a.libs.split(",")
    (run_real if a.workload == "real" else run_synthetic)(a)


if __name__ == "__main__":
    main()
