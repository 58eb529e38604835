"""Symmetric (oblivious) trees: gbtree's ``grow_policy="symmetric"`` against CatBoost's.

    python -m benchmarks symmetric [--rows 1000000] [--test-rows 250000] [--rounds 100]
                                   [--depth 8] [--latency-rows 100000] [--calls 2000]
                                   [--threads 2] [--libs gbtree,catboost-symmetric]

The workload-1 data (``higgs-like``, datagen.py), trees of ``--depth`` levels with
one split per level in both libraries (CatBoost's ``SymmetricTree``, its default),
the same rounds, learning rate, bins and L2 penalty (runners.py has CatBoost's other
settings). The first table gives fit seconds, predict seconds of the test rows (the
fastest of ``--predict-repeats`` calls) and the test AUC; the second the latency of
single-row ``predict`` calls of a model of the same shape fitted on ``--latency-rows``
rows.
"""
import dataclasses

from run import args_config, fmt, latency_table, log, markdown_table, positive_int

WORKLOADS = {
    "symmetric": dict(help="symmetric trees of depth 8 on higgs-like against CatBoost's: fit, "
                           "predict and one-row latency", dataset="higgs-like", rows=1_000_000,
                      test_rows=250_000, rounds=100, leaves=255, libs="gbtree,catboost-symmetric"),
}


def add_arguments(p, name):
    p.add_argument("--depth", type=int, default=8, help="levels of each tree (default 8)")
    p.add_argument("--latency-rows", type=positive_int, default=100_000,
                   help="training rows of the latency model (default 100,000)")
    p.add_argument("--calls", type=positive_int, default=2000,
                   help="timed one-row calls (default 2000)")


def run(name, args, bench):
    cfg = dataclasses.replace(args_config(args, "higgs-like"), depth=args.depth, symmetric=True)
    data = bench.data("higgs-like", args.rows, args.test_rows)
    results = bench.run_grid("fit-predict", [cfg], data, rows=args.rows)
    ref = next((r for r in results if r["lib"] == "gbtree" and r["status"] == "ok"), None)
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append([r["lib"], f"{r['status']}: {r['error']}", "", "", "", ""])
            continue
        rows.append([r["lib"], fmt(r["fit_seconds"]), fmt(r["predict_seconds"], 3),
                     fmt(r["score"], 4),
                     fmt(r["fit_seconds"] / ref["fit_seconds"], 2, "×") if ref else "–",
                     fmt(r["predict_seconds"] / ref["predict_seconds"], 2, "×") if ref else "–"])
    table = markdown_table(["library", "fit s", "predict s", "test AUC", "fit ÷ gbtree",
                            "predict ÷ gbtree"], rows)
    log(f"latency: {args.latency_rows:,} training rows")
    small = bench.data("higgs-like", args.latency_rows, 10_000)
    latency = bench.run_libs("latency", cfg, small, rows=args.latency_rows)
    header = (f"higgs-like, {args.rows:,} train rows, {args.test_rows:,} test rows; "
              f"{args.rounds} symmetric trees of depth {args.depth}, lr {args.learning_rate}, "
              f"{args.threads} thread(s); one-row latency of the same shape fitted on "
              f"{args.latency_rows:,} rows, {args.calls} calls")
    return {"header": header, "table": table + "\n\n" + latency_table(latency),
            "latency": latency}
