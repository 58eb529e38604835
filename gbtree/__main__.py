"""Demo: ``python -m gbtree`` (or the ``gbtree-demo`` console script).

Cross-validates gbtree on data sets that ship inside scikit-learn (no download),
next to scikit-learn's HistGradientBoosting, twice: both at the same rounds,
learning rate, depth and threads, and each at its own defaults. Prints the folds'
mean and standard deviation of the held-out metric, and the mean fit seconds.
"""
import argparse
import sys

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate
from threadpoolctl import threadpool_limits

from . import GBTClassifier, GBTRegressor, __version__
from .kernels._openmp_helpers import openmp_enabled
from .kernels._threads import effective_n_threads

FOLDS = 5


def _tasks(n_estimators, n_jobs):
    """(name, loader, metric, scoring, depth, gbtree class, HGB class) of each data set."""
    return [
        ("breast_cancer (binary)", load_breast_cancer, "AUC", "roc_auc", 3,
         GBTClassifier, HistGradientBoostingClassifier),
        ("digits (10 classes)", load_digits, "accuracy", "accuracy", 3,
         GBTClassifier, HistGradientBoostingClassifier),
        ("diabetes (regression)", load_diabetes, "RMSE", "neg_root_mean_squared_error", 2,
         GBTRegressor, HistGradientBoostingRegressor),
    ]


def _pairs(depth, ours, hgb, n_estimators, n_jobs):
    """(label, gbtree estimator, HGB estimator): the same settings, then the defaults."""
    same = f"same settings (depth {depth}, {n_estimators} rounds, lr 0.1)"
    return [(same, ours(max_depth=depth, n_estimators=n_estimators, learning_rate=0.1,
                        n_jobs=n_jobs),
             hgb(max_depth=depth, max_leaf_nodes=None, max_iter=n_estimators,
                 learning_rate=0.1, early_stopping=False, random_state=0)),
            ("each library's defaults", ours(n_jobs=n_jobs), hgb(random_state=0))]


def _scores(model, X, y, scoring, folds):
    """(mean, standard deviation) of the held-out metric over the folds, mean fit s."""
    done = cross_validate(model, X, y, cv=folds, scoring=scoring)
    values = np.abs(done["test_score"])   # (scikit-learn negates RMSE)
    return values.mean(), values.std(), done["fit_time"].mean()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gbtree", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-estimators", type=int, default=100, help="boosting rounds (100)")
    parser.add_argument("--n-jobs", type=int, default=None, help="threads (default: all cores)")
    args = parser.parse_args(argv)
    if args.n_estimators < 1:
        parser.error(f"--n-estimators must be >= 1, got {args.n_estimators}")
    try:
        n_threads = effective_n_threads(args.n_jobs)
    except ValueError as exc:
        parser.error(f"--n-jobs: {exc}")
    # HistGradientBoosting takes its thread count from OpenMP: the same as gbtree's
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        _run(args, n_threads)
    return 0


def _run(args, n_threads):
    print(f"gbtree {__version__}  (OpenMP {'on' if openmp_enabled() else 'OFF'}, "
          f"{n_threads} thread{'s' if n_threads > 1 else ''}); {FOLDS}-fold cross-validation: "
          f"the held-out metric's mean +- standard deviation over the folds\n")
    # one untimed small fit: the first call pays one-time costs (thread pool, imports)
    X0, y0 = load_breast_cancer(return_X_y=True)
    GBTClassifier(n_estimators=5, n_jobs=args.n_jobs).fit(X0, y0).predict(X0)
    HistGradientBoostingClassifier(max_iter=5, early_stopping=False).fit(X0, y0).predict(X0)

    header = (f"{'':<47}{'gbtree':>17}{'sklearn HGB':>17}{'fit s: gbtree':>15}{'HGB':>8}")
    print(header)
    print("-" * len(header))
    for name, loader, metric, scoring, depth, ours, hgb in _tasks(args.n_estimators,
                                                                  args.n_jobs):
        X, y = loader(return_X_y=True)
        split = KFold if metric == "RMSE" else StratifiedKFold
        folds = split(FOLDS, shuffle=True, random_state=0)
        print(f"{name}, {metric} ({X.shape[0]} rows)")
        for label, a, b in _pairs(depth, ours, hgb, args.n_estimators, args.n_jobs):
            (ma, sa, fa), (mb, sb, fb) = (_scores(m, X, y, scoring, folds) for m in (a, b))
            print(f"  {label:<45}{ma:>9.4f} +-{sa:.4f}{mb:>9.4f} +-{sb:.4f}"
                  f"{fa:>15.3f}{fb:>8.3f}")
    print(f"\nHigher is better for AUC and accuracy, lower for RMSE. The data sets are small "
          f"(442 to 1,797 rows):\ndifferences within a standard deviation are the folds' "
          f"noise, not a lead. Fit seconds are the mean over\nthe folds, wall-clock on this "
          f"machine.")


if __name__ == "__main__":
    sys.exit(main())
