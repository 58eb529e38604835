#!/usr/bin/env python
"""The exact method's cache-aware buffer: one tree's growth against the buffer size.

    python benchmarks/exact_buffer.py [--rows 1000000] [--depth 6] [--threads 2]
                                      [--buffers 1,8,32,64,256] [--repeat 3]

Grows a depth-``--depth`` tree of ``tree_method="exact"`` on the ``higgs-like``
rows (the first round's logistic gradients) with each buffer size in turn,
``--repeat`` times interleaved, and prints the best time of each: the walks
gather the positions and gradients of that many entries before using them,
and prefetch the next ones (1: one entry at a time, no gather).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen  # noqa: E402
from common import machine_info  # noqa: E402

from gbtree.growing.exact import ExactGrower  # noqa: E402
from gbtree.growing.grower_params import GrowerParams  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--buffers", default="1,8,32,64,256")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    X, y, _, _ = datagen.make_dataset("higgs-like", args.rows, 10)
    pairs = np.empty((1, len(y), 2), dtype=np.float32)   # (the gradients of one output)
    pairs[0, :, 0], pairs[0, :, 1] = 0.5 - y, 0.25
    params = GrowerParams(max_depth=args.depth)
    buffers = [int(b) for b in args.buffers.split(",")]
    growers = {b: ExactGrower(X, params, args.threads, buffer=b) for b in buffers}
    best, trees = {b: np.inf for b in buffers}, {}
    for _ in range(args.repeat):
        for b in buffers:
            raw = np.zeros((len(y), 1))
            t0 = time.perf_counter()
            trees[b] = growers[b].grow(pairs, 0.1, raw, 0)[0]
            best[b] = min(best[b], time.perf_counter() - t0)
    assert all(np.array_equal(trees[b], trees[buffers[0]]) for b in buffers)
    print(f"higgs-like, {args.rows:,} rows, one tree of depth {args.depth}, {args.threads} "
          f"thread(s), best of {args.repeat}\n")
    print("| buffer (entries) | tree s | ÷ buffer 1 |")
    print("|---:|---:|---:|")
    for b in buffers:
        print(f"| {b} | {best[b]:.3f} | {best[b] / best[buffers[0]]:.2f}× |")
    info = machine_info()
    print(f"\n{info['cpu']} ({info['simd']}), nproc {info['nproc']}")


if __name__ == "__main__":
    main()
