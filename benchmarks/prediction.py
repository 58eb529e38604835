"""Prediction of many rows, float32 and float64, on every tree walk of this CPU.

    python -m benchmarks predict [--rows 1000000] [--test-rows 250000] [--rounds 100]
                                 [--leaves 255] [--threads 2]
                                 [--libs gbtree,gbtree-none,xgboost,lightgbm]

The workload-1 model: each library fits ``higgs-like`` (1,000,000 x 28 float32,
binary) at the settings of runners.py (the fit is not timed), then predicts the
test rows given as float32 and as float64 C-ordered arrays, alternating, the
fastest of ``--predict-repeats`` calls each. ``gbtree`` takes the best walk the CPU
has; ``gbtree-none``, ``gbtree-avx2`` and ``gbtree-avx512`` cap it
(``GBTREE_SIMD``, never above what the CPU has: the "vector level" column says
which ran).
"""
from run import args_config, fmt, markdown_table, status_row

WORKLOADS = {
    "predict": dict(help="the workload-1 model predicting float32 and float64 rows, on each "
                         "tree walk of this CPU", dataset="higgs-like", rows=1_000_000,
                    test_rows=250_000, rounds=100, leaves=255,
                    libs="gbtree,gbtree-none,xgboost,lightgbm"),
}


def run(name, args, bench):
    cfg = args_config(args, "higgs-like")
    data = bench.data("higgs-like", args.rows, args.test_rows)
    results = bench.run_libs("input-types", cfg, data, rows=args.rows)
    ref = next((r for r in results if r["lib"] == "xgboost" and r["status"] == "ok"), None)
    headers = ["library", "vector level", "float32 rows s", "float64 rows s", "float32 ÷ XGBoost",
               "float64 ÷ XGBoost", "test AUC"]
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append(status_row(r, len(headers)))
            continue
        ratios = [fmt(r[f"predict_{k}_seconds"] / ref[f"predict_{k}_seconds"], 2, "×")
                  if ref else "–" for k in ("float32", "float64")]
        rows.append([r["lib"], r.get("simd", "–"), fmt(r["predict_float32_seconds"], 3),
                     fmt(r["predict_float64_seconds"], 3), *ratios, fmt(r["score"], 4)])
    header = (f"higgs-like, {args.rows:,} train rows, {args.test_rows:,} test rows; "
              f"{cfg.rounds} rounds, {cfg.leaves} leaves, {args.threads} thread(s); fastest of "
              f"{args.predict_repeats} calls each")
    return {"header": header, "table": markdown_table(headers, rows)}
