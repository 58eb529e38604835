"""SHAP values: time to explain rows of a workload-1-sized model, gbtree against
XGBoost's ``pred_contribs`` / ``pred_interactions`` and LightGBM's ``pred_contrib``.

    python benchmarks/shap_values.py [--rows 200000] [--explain-rows 10000]
                              [--interaction-rows 10000] [--memory-rows 1000]
                              [--rounds 100] [--leaves 255]
                              [--threads 2] [--repeats 3] [--json PATH]

Each library fits the ``higgs-like`` training rows (28 float32 features) with the
parameters of ``runners.py`` (best-first trees of ``--leaves`` leaves, ``--rounds``
rounds; the fit is not timed), then explains ``--explain-rows`` test rows: the
SHAP values (each library's exact path-dependent TreeSHAP) and, for gbtree and
XGBoost, the SHAP interaction values of ``--interaction-rows`` rows. Every time
is the best of ``--repeats`` calls at ``--threads`` threads (the libraries take
turns within each repeat); XGBoost's ``DMatrix``
is built before its clock starts. gbtree's peak of NumPy allocations during a
separate call on ``--memory-rows`` rows (tracemalloc) is reported beside the
size of its output. The values of
the three libraries are not compared: their trees differ (the tests compare
values on identical trees).
"""
import argparse
import json
import os
import sys
import time
import tracemalloc

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)        # the checkout's in-place build of gbtree first
sys.path.insert(1, BENCH_DIR)

from datagen import make_dataset                                       # noqa: E402
from run import machine_info                                           # noqa: E402
from runners import Config, GbtreeRunner, LightGBMRunner, XGBoostRunner  # noqa: E402


def seconds(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def peak_bytes(call):
    """Peak of the memory NumPy and Python allocate during ``call()``, over what was
    allocated at its start."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    out = call()
    peak = tracemalloc.get_traced_memory()[1] - start
    tracemalloc.stop()
    return peak, out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=200_000, help="training rows")
    p.add_argument("--explain-rows", type=int, default=10_000)
    p.add_argument("--interaction-rows", type=int, default=10_000)
    p.add_argument("--memory-rows", type=int, default=1_000,
                   help="rows of the (separate) memory measurement")
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--leaves", type=int, default=255)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=os.path.join(BENCH_DIR, "results", "shap.json"))
    args = p.parse_args(argv)
    cfg = Config(task="binary", rounds=args.rounds, leaves=args.leaves, threads=args.threads)
    X, y, X_test, _ = make_dataset("higgs-like", args.rows, max(args.explain_rows,
                                                                args.interaction_rows))
    Xc, Xi = X_test[:args.explain_rows], X_test[:args.interaction_rows]
    results = {}

    import lightgbm as lgb
    import xgboost as xgb
    print("fitting gbtree, xgboost, lightgbm", file=sys.stderr)
    est, _ = GbtreeRunner().fit(cfg, X, y)
    booster, _ = XGBoostRunner().fit(cfg, X, y)
    lgb_model, _ = LightGBMRunner().fit(cfg, X, y)
    dc, di = xgb.DMatrix(Xc, nthread=args.threads), xgb.DMatrix(Xi, nthread=args.threads)
    calls = {
        ("gbtree", "contribs_s"): lambda: est.predict(Xc, pred_contribs=True),
        ("xgboost", "contribs_s"): lambda: booster.predict(dc, pred_contribs=True),
        ("lightgbm", "contribs_s"): lambda: lgb_model.predict(Xc, pred_contrib=True,
                                                              num_threads=args.threads),
        ("gbtree", "interactions_s"): lambda: est.predict(Xi, pred_interactions=True),
        ("xgboost", "interactions_s"): lambda: booster.predict(di, pred_interactions=True),
    }
    results = {"gbtree": {}, "xgboost": {"version": xgb.__version__},
               "lightgbm": {"version": lgb.__version__}}
    # the libraries take turns in every repeat, so that a change of the machine's
    # load between repeats touches them alike
    for r in range(args.repeats):
        for (lib, key), call in calls.items():
            print(f"repeat {r}: {lib} {key}", file=sys.stderr)
            results[lib][key] = min(results[lib].get(key, np.inf), seconds(call))
    results["gbtree"].update(
        leaves_per_tree=float(np.mean([(est._ensemble.tree(t)["is_leaf"] == 1).sum()
                                       for t in range(est.n_trees_)])),
        max_depth=int(est._ensemble.nodes["depth"].max()))
    Xm = X_test[:args.memory_rows]
    peak, out = peak_bytes(lambda: est.predict(Xm, pred_contribs=True))
    results["gbtree"].update(contribs_peak_mb=peak / 1e6, contribs_output_mb=out.nbytes / 1e6)
    peak, out = peak_bytes(lambda: est.predict(Xm[:args.interaction_rows],
                                               pred_interactions=True))
    results["gbtree"].update(interactions_peak_mb=peak / 1e6,
                             interactions_output_mb=out.nbytes / 1e6)

    g, xg, lg = results["gbtree"], results["xgboost"], results["lightgbm"]
    fastest_peer = min(xg["contribs_s"], lg["contribs_s"])
    rows = [
        ("SHAP values", f"{args.explain_rows:,}", g["contribs_s"], xg["contribs_s"],
         lg["contribs_s"], g["contribs_s"] / fastest_peer, "fastest peer"),
        ("interaction values", f"{args.interaction_rows:,}", g["interactions_s"],
         xg["interactions_s"], None, g["interactions_s"] / xg["interactions_s"], "XGBoost"),
    ]
    machine = machine_info()
    print(f"\n{args.rounds} trees x {args.leaves} leaves (gbtree: mean "
          f"{g['leaves_per_tree']:.0f} leaves, max depth {g['max_depth']}), 28 features, "
          f"fitted on {args.rows:,} higgs-like rows; {args.threads} threads, best of "
          f"{args.repeats}; {machine['cpu']} ({machine['nproc']} cores)\n")
    print("| values | rows | gbtree s | XGBoost s | LightGBM s | gbtree / peer |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, n, a, b, c, r, peer in rows:
        print(f"| {name} | {n} | {a:.3f} | {b:.3f} | {'-' if c is None else f'{c:.3f}'} "
              f"| {r:.2f} x {peer} |")
    print(f"\ngbtree peak allocation: SHAP values of {args.memory_rows:,} rows "
          f"{g['contribs_peak_mb']:.2f} MB for an output of {g['contribs_output_mb']:.2f} MB; "
          f"interaction values of {min(args.memory_rows, args.interaction_rows):,} rows "
          f"{g['interactions_peak_mb']:.2f} MB for {g['interactions_output_mb']:.2f} MB")
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"args": vars(args), "machine": machine, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
