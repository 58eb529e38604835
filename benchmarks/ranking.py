"""Learning to rank: gbtree's GBTRanker against LightGBM lambdarank and XGBoost rank:ndcg.

    python -m benchmarks ranking [--data synthetic|real] [--rows 1000000] [--docs 100]
                                 [--rounds 100] [--threads 2] [--libs gbtree,lightgbm,xgboost]

Every library at the settings of runners.py (learning rate, rounds, best-first
trees of ``--leaves`` leaves without a depth limit, L2, minimum hessian sum per
leaf ``--min-child-weight``, truncation level / pairs per document, threads),
every fit in a fresh worker process:

``--data synthetic``  an MS-LTR-like set (by default 10,000 queries x 100
                      documents x 137 float32 features, graded labels 0-4 in
                      MSLR-WEB's proportions); 80 % of the queries train, 20 %
                      are held out; fit time and held-out NDCG@10.
``--data real``       GroupKFold 5-fold NDCG@10 on tests/data/rank.train
                      (LightGBM's lambdarank example: 3,005 documents, 201
                      queries, 300 features, labels 0-4), folds split by query;
                      the mean and spread over the folds, fit seconds summed.

NDCG@10 is computed for every library by ``gbtree.ndcg_at_k`` (gain 2^y - 1, a
query without relevant documents scores 1, tied scores share positions).
"""
import dataclasses
import statistics

import numpy as np

from common import REPO_ROOT
from run import fmt, markdown_table
from runners import Config

DATA = REPO_ROOT / "tests" / "data"

WORKLOADS = {
    "ranking": dict(help="learning to rank (LambdaMART NDCG): synthetic MS-LTR-like or the "
                         "real rank.train", rows=1_000_000, rounds=100, leaves=31,
                    libs="gbtree,lightgbm,xgboost"),
}


def add_arguments(p, name):
    p.add_argument("--data", choices=["synthetic", "real"], default="synthetic",
                   help="synthetic MS-LTR-like set (default) or tests/data/rank.train")
    p.add_argument("--docs", type=int, default=100, help="synthetic: documents per query")
    p.add_argument("--queries", type=int,
                   help="synthetic: queries in all (default --rows / --docs)")
    p.add_argument("--truncation", type=int, default=30,
                   help="documents per query that pairs start from (default 30)")
    p.add_argument("--min-child-weight", type=float, default=1e-3,
                   help="minimum hessian sum per leaf (default 1e-3)")


def load_real():
    from sklearn.datasets import load_svmlight_file
    path = DATA / "rank.train"
    if not path.exists():
        raise SystemExit(f"--data real needs {path}, which the repository holds")
    X, y = load_svmlight_file(str(path))
    group = np.loadtxt(DATA / "rank.train.query", dtype=np.intp)
    return np.asarray(X.todense(), dtype=np.float64), y, np.repeat(np.arange(len(group)), group)


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


def run(name, args, bench):
    cfg = Config(task="ranking", rounds=args.rounds, learning_rate=args.learning_rate,
                 leaves=args.leaves, max_bin=args.max_bin, threads=args.threads, seed=args.seed,
                 min_child_weight=args.min_child_weight, truncation=args.truncation)
    return (run_real if args.data == "real" else run_synthetic)(args, bench, cfg)


def run_synthetic(args, bench, cfg):
    queries = args.queries or max(2, args.rows // args.docs)
    X, y, q = make_mslr_like(queries, args.docs, seed=args.seed)
    n_train = max(1, int(0.8 * queries)) * args.docs
    data = bench.save(f"ranking-{queries}-{args.docs}-{args.seed}", dict(
        X_train=X[:n_train], y_train=y[:n_train], qid_train=q[:n_train],
        X_test=X[n_train:], y_test=y[n_train:], qid_test=q[n_train:]))
    results = bench.run_libs("fit-predict", cfg, data, rows=n_train)
    rows = [[r["lib"], f"{r['status']}: {r['error']}", ""] if r["status"] != "ok" else
            [r["lib"], fmt(r["fit_seconds"]), fmt(r["score"], 4)] for r in results]
    header = (f"synthetic MS-LTR-like: {queries:,} queries x {args.docs} docs x {X.shape[1]} "
              f"features ({n_train:,} train rows), {cfg.rounds} rounds, lr {cfg.learning_rate}, "
              f"{cfg.leaves} leaves, truncation {cfg.truncation}, {cfg.threads} thread(s); "
              f"label shares {np.round(np.bincount(y.astype(int)) / y.size, 3).tolist()}")
    return {"header": header, "data": "synthetic",
            "table": markdown_table(["library", "fit seconds", "held-out NDCG@10"], rows)}


def run_real(args, bench, cfg):
    from sklearn.model_selection import GroupKFold
    X, y, qid = load_real()
    folds = {lib: [] for lib in bench.libs}
    for k, (tr, te) in enumerate(GroupKFold(n_splits=5).split(X, y, qid)):
        data = bench.save(f"rank-train-fold{k}", dict(
            X_train=X[tr], y_train=y[tr], qid_train=qid[tr],
            X_test=X[te], y_test=y[te], qid_test=qid[te]))
        for r in bench.run_libs("fit-predict", dataclasses.replace(cfg), data, fold=k):
            folds[r["lib"]].append(r)
    rows = []
    for lib, runs in folds.items():
        bad = next((r for r in runs if r["status"] != "ok"), None)
        if bad:
            rows.append([lib, f"{bad['status']}: {bad['error']}", "", ""])
            continue
        scores = [r["score"] for r in runs]
        rows.append([lib, fmt(statistics.mean(scores), 4), fmt(float(np.std(scores)), 4),
                     fmt(sum(r["fit_seconds"] for r in runs))])
    header = (f"rank.train, GroupKFold(5), {cfg.rounds} rounds, lr {cfg.learning_rate}, "
              f"{cfg.leaves} leaves, lambda {cfg.reg_lambda}, min_child_weight "
              f"{cfg.min_child_weight}, truncation {cfg.truncation}, {cfg.threads} thread(s)")
    return {"header": header, "data": "real", "table": markdown_table(
        ["library", "mean NDCG@10", "std over folds", "fit seconds (5 folds)"], rows)}
