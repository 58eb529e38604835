"""Fit and predict gbtree once on a benchmark workload, for profilers.

    perf record -o perf.data python benchmarks/profile_fit.py higgs-like 500000 100 1
    perf report -i perf.data --no-children --sort dso,symbol

Arguments: workload, train rows, rounds, threads (defaults higgs-like 500000
100 2). Same estimator settings as runners.py; prints fit / binning / predict
seconds and a hash of the test predictions (equal hashes = identical model).
"""
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from datagen import TASKS, make_dataset  # noqa: E402
from runners import Config, GbtreeRunner, estimator_scores  # noqa: E402

kind = sys.argv[1] if len(sys.argv) > 1 else "higgs-like"
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 500_000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 100
threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
X, y, X_test, _ = make_dataset(kind, rows, 250_000 if kind == "higgs-like" else 100_000, 0)
cfg = Config(task=TASKS[kind], rounds=rounds, threads=threads)
t0 = time.perf_counter()
model, bin_s = GbtreeRunner().fit(cfg, X, y)
t1 = time.perf_counter()
scores = estimator_scores(cfg, model, X_test)
t2 = time.perf_counter()
print(f"{kind} rows={rows} rounds={rounds} threads={threads} fit={t1 - t0:.2f}s "
      f"bin={bin_s:.2f}s predict={t2 - t1:.3f}s "
      f"hash={hashlib.sha1(scores.tobytes()).hexdigest()[:12]}")
