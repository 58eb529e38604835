#!/usr/bin/env python
"""The XGBoost paper's figure on split-finding accuracy: test AUC against rounds
for exact greedy splits, global proposals with ``sketch_eps`` 0.3 and 0.05 and
local proposals with 0.3.

    python benchmarks/split_accuracy.py [--rows 1000000] [--test-rows 250000]
                                        [--rounds 100] [--depth 6] [--threads 2]
                                        [--plot docs/split_finding_auc.png]

On the ``higgs-like`` data (datagen.py); prints the AUC every 10 rounds and the
fit seconds of each method, and draws the curves into ``--plot``.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen  # noqa: E402
from common import machine_info  # noqa: E402

from gbtree import GBTClassifier  # noqa: E402

METHODS = {
    "exact greedy": dict(tree_method="exact"),
    "global, eps 0.3": dict(tree_method="approx", sketch_eps=0.3),
    "global, eps 0.05": dict(tree_method="approx", sketch_eps=0.05),
    "local, eps 0.3": dict(tree_method="approx", sketch_eps=0.3, approx_proposal="local"),
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--test-rows", type=int, default=250_000)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--plot", help="draw the curves into this PNG")
    args = p.parse_args(argv)
    X, y, Xt, yt = datagen.make_dataset("higgs-like", args.rows, args.test_rows)
    curves, seconds = {}, {}
    for name, kw in METHODS.items():
        model = GBTClassifier(n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.1,
                              n_jobs=args.threads, eval_metric="auc", **kw)
        t0 = time.perf_counter()
        model.fit(X, y, eval_set=[(Xt, yt)])
        seconds[name] = time.perf_counter() - t0     # (the eval set's AUC included)
        curves[name] = model.evals_result_["validation_0"]["auc"]
        print(f"{name}: {seconds[name]:.1f} s", file=sys.stderr)
    info = machine_info()
    print(f"higgs-like, {args.rows:,} train rows, {args.test_rows:,} test rows; trees of "
          f"depth {args.depth}, lr 0.1, {args.threads} thread(s); {info['cpu']} "
          f"({info['simd']})\n")
    marks = list(range(10, args.rounds + 1, 10))
    print("| method | " + " | ".join(f"AUC @{r}" for r in marks) + " | fit s |")
    print("|---|" + "---:|" * (len(marks) + 1))
    for name, auc in curves.items():
        print(f"| {name} | " + " | ".join(f"{auc[r - 1]:.4f}" for r in marks)
              + f" | {seconds[name]:.1f} |")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for name, auc in curves.items():
            ax.plot(range(1, len(auc) + 1), auc, label=name)
        ax.set_xlabel("rounds")
        ax.set_ylabel("test AUC")
        ax.set_title(f"higgs-like, {args.rows:,} rows: split finding")
        ax.set_ylim(min(min(a[9:]) for a in curves.values()) - 0.005,
                    max(max(a) for a in curves.values()) + 0.003)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"\nwrote {args.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
