"""Fit and predict gbtree once on a benchmark data set, for profilers.

    perf record -o perf.data python benchmarks/profile_fit.py higgs-like 500000 100 1
    perf report -i perf.data --no-children --sort dso,symbol
    python -m cProfile -s cumtime benchmarks/profile_fit.py multiclass 200000 100 2

Arguments: data set, train rows, rounds, threads (defaults higgs-like 500000
100 2). The estimator settings are runners.py's (with the workload's leaves);
prints fit / binning / predict seconds and a hash of the test predictions
(equal hashes = identical model).
"""
import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import use_checkout_build  # noqa: E402
from datagen import CLASSES, N_TARGETS, TASKS, make_dataset  # noqa: E402
from runners import Config, GbtreeRunner, estimator_scores  # noqa: E402

LEAVES = {"higgs-like": 255, "regression-wide": 255, "multiclass": 63, "multi-target": 255}
TEST_ROWS = {"higgs-like": 250_000, "regression-wide": 100_000, "multiclass": 50_000,
             "multi-target": 50_000}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", nargs="?", default="higgs-like", choices=list(TEST_ROWS))
    p.add_argument("rows", nargs="?", type=int, default=500_000, help="train rows (500000)")
    p.add_argument("rounds", nargs="?", type=int, default=100, help="boosting rounds (100)")
    p.add_argument("threads", nargs="?", type=int, default=2, help="threads (2)")
    p.add_argument("--leaves", type=int,
                   help="leaves per tree (default: the workload's, 255 or 63 for multiclass)")
    a = p.parse_args(argv)
    use_checkout_build()
    X, y, X_test, _ = make_dataset(a.dataset, a.rows, TEST_ROWS[a.dataset], 0)
    cfg = Config(task=TASKS[a.dataset], rounds=a.rounds, threads=a.threads,
                 leaves=a.leaves or LEAVES[a.dataset], n_classes=CLASSES.get(a.dataset, 2),
                 n_targets=N_TARGETS if a.dataset == "multi-target" else 1)
    t0 = time.perf_counter()
    model, bin_s = GbtreeRunner().fit(cfg, X, y)
    t1 = time.perf_counter()
    scores = estimator_scores(cfg, model, X_test)
    t2 = time.perf_counter()
    print(f"{a.dataset} rows={a.rows} rounds={a.rounds} threads={a.threads} fit={t1 - t0:.2f}s "
          f"bin={bin_s:.2f}s predict={t2 - t1:.3f}s "
          f"hash={hashlib.sha1(scores.tobytes()).hexdigest()[:12]}")


if __name__ == "__main__":
    main()
