"""Raw data larger than memory: fitting from a memory-mapped ``.npy`` file.

    python benchmarks/out_of_core.py [--rows 4000000] [--rounds 20] [--threads 2]
                                     [--dir /tmp/gbtree-ooc] [--json PATH]

Writes the ``higgs-like`` data (benchmarks/datagen.py, float32, 28 features) to
``--dir/X.npy`` once, then fits each library in a fresh process (255 leaves
best-first, lr 0.1, ``--rounds`` rounds, the same threads) on:

- ``in memory``: ``np.load(path)``, the whole array in the process's memory;
- ``memory-mapped``: ``np.load(path, mmap_mode="r")``, the file's pages read by
  the operating system when touched, kept as page cache it can drop.

A thread samples the process's ``/proc/self/status`` every 10 ms during the fit
(data loading included). The table gives the fit seconds, the peak of
anonymous memory (``RssAnon``: memory the process owns, which the system cannot
drop) over what the process held before loading the data, the peak of
file-backed memory (``RssFile``: the mapped file's pages), and the test AUC on
100,000 rows held in memory.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIBS = ["gbtree", "lightgbm", "xgboost"]
MODES = ["in memory", "memory-mapped"]


def _status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024   # MiB
    return out


def child(lib, mode, args):
    """One fit in this process; prints a JSON line."""
    sys.path.insert(0, ROOT)   # the checkout's in-place build of gbtree first
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if lib == "gbtree":
        from gbtree import GBTClassifier
    elif lib == "lightgbm":
        import lightgbm
    else:
        import xgboost
    from sklearn.metrics import roc_auc_score
    y = np.load(os.path.join(args.dir, "y.npy"))
    X_test = np.load(os.path.join(args.dir, "X_test.npy"))
    y_test = np.load(os.path.join(args.dir, "y_test.npy"))
    base = _status()
    peak = dict(base)
    done = threading.Event()

    def sample():
        while not done.is_set():
            for k, v in _status().items():
                peak[k] = max(peak[k], v)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    t0 = time.perf_counter()
    X = np.load(os.path.join(args.dir, "X.npy"), mmap_mode="r" if mode == "memory-mapped" else None)
    if lib == "gbtree":
        model = GBTClassifier(n_estimators=args.rounds, learning_rate=0.1, grow_policy="lossguide",
                              max_depth=0, max_leaves=255, n_jobs=args.threads).fit(X, y)
    elif lib == "lightgbm":
        model = lightgbm.LGBMClassifier(n_estimators=args.rounds, learning_rate=0.1, num_leaves=255,
                                        max_depth=-1, min_child_samples=0, min_child_weight=1.0,
                                        reg_lambda=1.0, max_bin=255, n_jobs=args.threads,
                                        verbose=-1).fit(X, y)
    else:
        model = xgboost.XGBClassifier(n_estimators=args.rounds, learning_rate=0.1,
                                      tree_method="hist", grow_policy="lossguide", max_leaves=255,
                                      max_depth=0, max_bin=256, reg_lambda=1.0,
                                      n_jobs=args.threads).fit(X, y)
    fit_s = time.perf_counter() - t0
    done.set()
    sampler.join()
    auc = roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])
    print(json.dumps(dict(lib=lib, mode=mode, fit_s=fit_s, auc=float(auc),
                          anon_mib=peak["RssAnon"] - base["RssAnon"],
                          file_mib=peak["RssFile"] - base["RssFile"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/gbtree-ooc")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", nargs=2, metavar=("LIB", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child, args)
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "X.npy")
    shape = np.load(path, mmap_mode="r").shape if os.path.exists(path) else None
    if shape != (args.rows, 28):
        sys.path.insert(0, HERE)
        from datagen import make_dataset
        X, y, X_test, y_test = make_dataset("higgs-like", args.rows, 100_000, seed=0)
        np.save(path, np.ascontiguousarray(X, dtype=np.float32))
        for name, a in (("y", y), ("X_test", X_test), ("y_test", y_test)):
            np.save(os.path.join(args.dir, f"{name}.npy"), a)
        del X
    size = os.path.getsize(path) / 2 ** 20
    print(f"{args.rows} x 28 float32 rows in {path} ({size:.0f} MiB), {args.rounds} rounds, "
          f"{args.threads} threads", flush=True)
    results = []
    for lib in args.libs.split(","):
        for mode in MODES:
            proc = subprocess.run([sys.executable, __file__, "--child", lib, mode,
                                   "--dir", args.dir, "--rounds", str(args.rounds),
                                   "--threads", str(args.threads)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                results.append(dict(lib=lib, mode=mode, error=proc.stderr.strip()[-300:]))
            else:
                results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"  {results[-1]}", flush=True)
    print("\n| library | X | fit s | peak anonymous MiB | peak file-backed MiB | test AUC |")
    print("|---|---|---:|---:|---:|---:|")
    for r in results:
        if "error" in r:
            print(f"| {r['lib']} | {r['mode']} | failed: {r['error'][-120:]} | | | |")
        else:
            print(f"| {r['lib']} | {r['mode']} | {r['fit_s']:.2f} | {r['anon_mib']:.0f} | "
                  f"{r['file_mib']:.0f} | {r['auc']:.4f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(args={k: v for k, v in vars(args).items() if k != "child"},
                           file_mib=size, results=results), f, indent=1)


if __name__ == "__main__":
    main()
