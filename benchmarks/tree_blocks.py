"""How the two-thread speed-up changes over a fit, block of trees by block.

    python benchmarks/tree_blocks.py [--rows 1000000] [--rounds 100] [--block 10]
                                     [--repeat 2] [--threads 1,2]

Fits gbtree on the ``higgs-like`` workload (the settings of ``run.py``, from
``runners.py``) at each thread count, alternated (1 2, 2 1, ...), in this one
process, and times every round with a callback (its gradients and its tree;
binning is left out). For each block of rounds it prints the median seconds
(over the fits) at each thread count, the
speed-up, and what the trees of that block look like (the model is the same at
any thread count):

* ``large splits``: splits of nodes of ``AHEAD_MAX_ROWS`` (65,536) rows or
  more, which every thread works on together;
* ``small-split rows``: rows in the other splits (millions per tree), which
  are expanded ahead, each on one thread;
* ``chain``: the share of splits whose node is a child of the split made just
  before. Such a node can only be expanded once its parent is, so while it is,
  a second thread has only nodes whose turn may never come.

This is a diagnostic for one machine at a time, not a comparison: quote the
ratios, and run nothing else meanwhile.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import use_checkout_build  # noqa: E402

use_checkout_build()
from datagen import TASKS, make_dataset  # noqa: E402
from runners import Config, GbtreeRunner  # noqa: E402

from gbtree.callback import Callback  # noqa: E402
from gbtree.growing.grower_params import GrowerParams  # noqa: E402

#: smaller nodes are expanded ahead
LARGE_ROWS = GrowerParams().ahead_max_rows


class RoundTimer(Callback):
    """Seconds of each round, from its start to its trees added."""

    def __init__(self):
        self.seconds = []

    def before_iteration(self, state):
        self._t0 = time.perf_counter()
        return False

    def after_iteration(self, state):
        self.seconds.append(time.perf_counter() - self._t0)
        return False


def tree_shape(model, n_rounds):
    """Per tree: (large splits, rows in small splits, chain share)."""
    df = model.trees_to_dataframe()
    out = []
    for t in range(n_rounds):
        nd = df[df["tree"] == t].set_index("node").sort_index()
        inner = nd[nd["is_leaf"] == 0]
        # children get their ids when their parent is split: split order = left id order
        inner = inner.sort_values("left")
        parent = {}
        for node, row in inner.iterrows():
            parent[row["left"]] = node
            parent[row["right"]] = node
        order = list(inner.index)
        chain = [parent.get(b) == a for a, b in zip(order, order[1:])]
        counts = inner["count"].to_numpy()
        out.append((int((counts >= LARGE_ROWS).sum()), float(counts[counts < LARGE_ROWS].sum()),
                    float(np.mean(chain)) if chain else 0.0))
    return np.array(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--block", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    X, y, _, _ = make_dataset("higgs-like", args.rows, 1000, 0)
    seconds = {t: [] for t in threads}
    model = None
    for rep in range(args.repeat):
        for t in (threads if rep % 2 == 0 else threads[::-1]):
            cfg = Config(task=TASKS["higgs-like"], rounds=args.rounds, threads=t)
            timer = RoundTimer()
            est = GbtreeRunner().estimator(cfg).set_params(callbacks=[timer])
            t0 = time.perf_counter()
            est.fit(X, y)
            print(f"repeat {rep + 1}, {t} thread(s): fit {time.perf_counter() - t0:.2f} s",
                  flush=True)
            seconds[t].append(np.array(timer.seconds))
            model = est
    shape = tree_shape(model, args.rounds)
    med = {t: np.median(np.array(seconds[t]), axis=0) for t in threads}
    base = threads[0]
    head = " | ".join(f"{t} thr s" for t in threads)
    ups = " | ".join(f"{base}→{t}" for t in threads[1:])
    print(f"\n| rounds | {head} | {ups} | large splits / tree "
          f"| small-split rows / tree (M) | chain |")
    print("|---" + "|---:" * (len(threads) * 2 + 2) + "|")
    blocks = list(range(0, args.rounds, args.block)) + [None]
    for lo in blocks:
        sl = slice(0, args.rounds) if lo is None else slice(lo, min(lo + args.block, args.rounds))
        label = "all" if lo is None else f"{sl.start}–{sl.stop - 1}"
        secs = {t: med[t][sl].sum() for t in threads}
        s = shape[sl]
        cells = " | ".join(f"{secs[t]:.3f}" for t in threads)
        up = " | ".join(f"{secs[base] / secs[t]:.2f}×" for t in threads[1:])
        print(f"| {label} | {cells} | {up} | {s[:, 0].mean():.1f} | {s[:, 1].mean() / 1e6:.2f} "
              f"| {s[:, 2].mean():.2f} |")
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, nproc {os.cpu_count()}, "
          f"medians of {args.repeat} fits per thread count")


if __name__ == "__main__":
    main()
