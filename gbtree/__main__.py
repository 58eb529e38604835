"""Demo: ``python -m gbtree`` (or the ``gbtree-demo`` console script).

Trains gbtree on data sets that ship inside scikit-learn (no download), next to
scikit-learn's HistGradientBoosting with the same rounds, learning rate, leaves
and threads, and prints the held-out metric and the fit / predict times of both.
"""
import argparse
import sys
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import accuracy_score, mean_squared_error, roc_auc_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from . import GBTClassifier, GBTRegressor, __version__
from .kernels._openmp_helpers import openmp_enabled
from .kernels._threads import effective_n_threads


def _auc(model, X, y):
    return roc_auc_score(y, model.predict_proba(X)[:, 1])


def _accuracy(model, X, y):
    return accuracy_score(y, model.predict(X))


def _rmse(model, X, y):
    return float(np.sqrt(mean_squared_error(y, model.predict(X))))


def _tasks(n_estimators, n_jobs):
    common = dict(n_estimators=n_estimators, learning_rate=0.1)
    hgb_common = dict(max_iter=n_estimators, learning_rate=0.1, early_stopping=False,
                      random_state=0)
    return [
        ("breast_cancer (binary)", load_breast_cancer, "AUC", _auc,
         GBTClassifier(max_depth=3, n_jobs=n_jobs, **common),
         HistGradientBoostingClassifier(max_depth=3, max_leaf_nodes=None, **hgb_common)),
        ("digits (10 classes)", load_digits, "accuracy", _accuracy,
         GBTClassifier(max_depth=3, n_jobs=n_jobs, **common),
         HistGradientBoostingClassifier(max_depth=3, max_leaf_nodes=None, **hgb_common)),
        ("diabetes (regression)", load_diabetes, "RMSE", _rmse,
         GBTRegressor(max_depth=2, n_jobs=n_jobs, **common),
         HistGradientBoostingRegressor(max_depth=2, max_leaf_nodes=None, **hgb_common)),
    ]


def _timed(model, X_train, y_train, X_test, y_test, metric):
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.predict(X_test)
    predict_s = time.perf_counter() - t0
    return metric(model, X_test, y_test), fit_s, predict_s


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
          f"{n_threads} thread{'s' if n_threads > 1 else ''}, {args.n_estimators} rounds, "
          f"lr 0.1, 25% held out)\n")
    # one untimed small fit: the first call pays one-time costs (thread pool, imports)
    X0, y0 = load_breast_cancer(return_X_y=True)
    GBTClassifier(n_estimators=5, n_jobs=args.n_jobs).fit(X0, y0).predict(X0)
    HistGradientBoostingClassifier(max_iter=5, early_stopping=False).fit(X0, y0).predict(X0)

    header = (f"{'data set':<24}{'metric':<10}{'gbtree':>9}{'sklearn HGB':>13}"
              f"{'gbtree fit s':>14}{'HGB fit s':>11}{'gbtree pred s':>15}{'HGB pred s':>12}")
    print(header)
    print("-" * len(header))
    for name, loader, metric_name, metric, ours, hgb in _tasks(args.n_estimators, args.n_jobs):
        X, y = loader(return_X_y=True)
        stratify = None if metric_name == "RMSE" else y
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.25, random_state=0, stratify=stratify)
        m_ours, fit_ours, pred_ours = _timed(ours, X_train, y_train, X_test, y_test, metric)
        m_hgb, fit_hgb, pred_hgb = _timed(hgb, X_train, y_train, X_test, y_test, metric)
        print(f"{name:<24}{metric_name:<10}{m_ours:>9.4f}{m_hgb:>13.4f}"
              f"{fit_ours:>14.3f}{fit_hgb:>11.3f}{pred_ours:>15.4f}{pred_hgb:>12.4f}")
    print("\nHigher is better for AUC and accuracy, lower for RMSE. Times are wall-clock "
          "seconds on this machine.")


if __name__ == "__main__":
    sys.exit(main())
