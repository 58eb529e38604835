#!/usr/bin/env python
"""Model files: size, save time and load time of gbtree's two encodings against
XGBoost's JSON and UBJSON and LightGBM's text model, for the same workload.

    python benchmarks/model_files.py [--rows N] [--rounds R] [--leaves L]
                                     [--repeats K] [--threads T] [--json PATH]

The workload-1 model by default: ``higgs-like`` (1,000,000 x 28 float32, binary),
100 rounds of 255-leaf trees, fitted with ``runners.py``'s settings for each
library. Every file is saved and loaded ``--repeats`` times (the median is
reported, the file cache warm); a loaded model must predict the test rows as the
fitted one did (gbtree: bit for bit; the others: within 1e-6, XGBoost's and
LightGBM's own promise). Load means "a model ready to predict":
``gbtree.load_model``, ``xgb.Booster(model_file=...)``,
``lgb.Booster(model_file=...)``.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from datagen import make_dataset  # noqa: E402
from runners import Config, GbtreeRunner, LightGBMRunner, XGBoostRunner  # noqa: E402


def _timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=255)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", default=os.path.join(HERE, "results", "model-files.json"))
    args = ap.parse_args()
    cfg = Config("binary", rounds=args.rounds, leaves=args.leaves, threads=args.threads)
    X, y, X_test, _ = make_dataset("higgs-like", args.rows, 10_000)
    folder = tempfile.mkdtemp(prefix="gbtree-model-files-")
    rows = []

    import gbtree
    est, _ = GbtreeRunner().fit(cfg, X, y)
    want = est.predict_proba(X_test)
    for suffix, label in ((".json", "gbtree JSON"), (".gbt", "gbtree binary")):
        path = os.path.join(folder, "model" + suffix)
        save, _ = _timed(lambda: est.save_model(path), args.repeats)
        load, again = _timed(lambda: gbtree.load_model(path), args.repeats)
        assert np.array_equal(again.predict_proba(X_test), want), label
        rows.append((label, os.path.getsize(path), save, load))

    import xgboost as xgb
    booster, _ = XGBoostRunner().fit(cfg, X, y)
    want = booster.inplace_predict(X_test)
    for suffix, label in ((".json", "XGBoost JSON"), (".ubj", "XGBoost UBJSON")):
        path = os.path.join(folder, "xgb" + suffix)
        save, _ = _timed(lambda: booster.save_model(path), args.repeats)
        load, again = _timed(lambda: xgb.Booster(model_file=path), args.repeats)
        np.testing.assert_allclose(again.inplace_predict(X_test), want, rtol=1e-6, atol=1e-6)
        rows.append((label, os.path.getsize(path), save, load))

    import lightgbm as lgb
    booster, _ = LightGBMRunner().fit(cfg, X, y)
    want = booster.predict(X_test)
    path = os.path.join(folder, "lgb.txt")
    save, _ = _timed(lambda: booster.save_model(path), args.repeats)
    load, again = _timed(lambda: lgb.Booster(model_file=path), args.repeats)
    np.testing.assert_allclose(again.predict(X_test), want, rtol=1e-6, atol=1e-6)
    rows.append(("LightGBM text", os.path.getsize(path), save, load))

    ubj = next(r for r in rows if r[0] == "XGBoost UBJSON")
    cpu = _cpu()
    print(f"higgs-like {args.rows} x 28, {args.rounds} rounds x {args.leaves} leaves; {cpu}; "
          f"median of {args.repeats}\n")
    print("| file | size (MB) | size / XGBoost UBJSON | save (ms) | load (ms) | "
          "load / XGBoost UBJSON |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, size, save, load in rows:
        print(f"| {label} | {size / 1e6:.2f} | {size / ubj[1]:.2f} | {save * 1e3:.1f} | "
              f"{load * 1e3:.1f} | {load / ubj[3]:.2f} |")
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "cpu": cpu, "cpus": os.cpu_count(), "rows": args.rows, "rounds": args.rounds,
              "leaves": args.leaves, "repeats": args.repeats,
              "versions": {"gbtree": gbtree.__version__, "xgboost": xgb.__version__,
                           "lightgbm": lgb.__version__},
              "files": [{"file": label, "bytes": size, "save_seconds": save,
                         "load_seconds": load} for label, size, save, load in rows]}
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
