"""Row sampling: how fit time shrinks with the sample (gbtree vs LightGBM).

    python benchmarks/sampling.py [--rows 500000] [--rounds 100] [--threads 2]

Fits the ``higgs-like`` data (benchmarks/datagen.py) with all rows, with
``subsample=0.5`` (LightGBM: ``bagging_fraction=0.5, bagging_freq=1``) and with
GOSS (top 20% + 10% of the rest; LightGBM: ``data_sample_strategy="goss"``),
255 leaves, lr 0.1, in this one process, and prints fit seconds, the ratio to the
full-data fit of the same library, the test AUC and its change.
"""
import argparse
import os
import sys
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from datagen import make_dataset

# like run.py: the checkout's in-place build of gbtree first
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--test-rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    X, y, Xte, yte = make_dataset("higgs-like", args.rows, args.test_rows, seed=0)

    from gbtree import GBTClassifier
    common = dict(n_estimators=args.rounds, learning_rate=0.1, grow_policy="lossguide",
                  max_depth=0, max_leaves=255, n_jobs=args.threads)
    runs = [("gbtree", "all rows", lambda: GBTClassifier(**common)),
            ("gbtree", "subsample 0.5", lambda: GBTClassifier(subsample=0.5, **common)),
            ("gbtree", "goss 0.2+0.1", lambda: GBTClassifier(sampling_method="goss", **common))]
    try:
        import lightgbm as lgb
        lcommon = dict(n_estimators=args.rounds, learning_rate=0.1, num_leaves=255, max_depth=-1,
                       min_child_samples=0, min_child_weight=1.0, reg_lambda=1.0, max_bin=255,
                       n_jobs=args.threads, verbose=-1)
        runs += [("lightgbm", "all rows", lambda: lgb.LGBMClassifier(**lcommon)),
                 ("lightgbm", "subsample 0.5", lambda: lgb.LGBMClassifier(
                     subsample=0.5, subsample_freq=1, **lcommon)),
                 ("lightgbm", "goss 0.2+0.1", lambda: lgb.LGBMClassifier(
                     data_sample_strategy="goss", top_rate=0.2, other_rate=0.1, **lcommon))]
    except ImportError:
        print("lightgbm not installed: gbtree only")

    base = {}
    print("| library | rows per tree | fit s | fit ÷ all rows | test AUC | Δ AUC vs all rows |")
    print("|---|---|---:|---:|---:|---:|")
    for lib, name, make in runs:
        t0 = time.perf_counter()
        model = make().fit(X, y)
        fit = time.perf_counter() - t0
        auc = roc_auc_score(yte, model.predict_proba(Xte)[:, 1])
        base.setdefault(lib, (fit, auc))
        print(f"| {lib} | {name} | {fit:.2f} | {fit / base[lib][0]:.2f}× | {auc:.4f} | "
              f"{auc - base[lib][1]:+.4f} |", flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
