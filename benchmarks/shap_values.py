"""SHAP values: the time to explain rows of a workload-1-sized model.

    python -m benchmarks shap [--rows 200000] [--test-rows 10000]
                              [--interaction-rows 50] [--rounds 100] [--leaves 255]
                              [--threads 2] [--libs gbtree,xgboost,lightgbm]

Each library fits the ``higgs-like`` training rows (28 float32 features) at the
settings of runners.py (the fit is not timed), then computes its exact
path-dependent TreeSHAP values of the ``--test-rows`` test rows and, where it
has them, the SHAP interaction values of the first ``--interaction-rows`` of
them (few by default: XGBoost takes hours for 10,000 rows). Each time is the
fastest of ``--predict-repeats`` calls, in a fresh worker process per library.
The values are not compared here, the trees of the libraries differ (the tests
compare values on identical trees).
"""
from run import args_config, fmt, markdown_table, positive_int, ratio, status_row

WORKLOADS = {
    "shap": dict(help="higgs-like model of 100 x 255 leaves: SHAP values and interaction "
                      "values", dataset="higgs-like", rows=200_000, test_rows=10_000,
                 rounds=100, leaves=255, libs="gbtree,xgboost,lightgbm"),
}


def add_arguments(p, name):
    p.add_argument("--interaction-rows", type=positive_int, default=50,
                   help="rows (the first test rows) of the interaction values (default 50)")


def run(name, args, bench):
    cfg = args_config(args, "higgs-like")
    data = bench.data("higgs-like", args.rows, args.test_rows)
    bench.spec = {"interaction_rows": min(args.interaction_rows, args.test_rows)}
    results = bench.run_libs("shap", cfg, data, rows=args.rows)
    bench.spec = {}
    ref = next((r for r in results if r["lib"] == "gbtree" and r["status"] == "ok"), {})
    headers = ["library", "version", "SHAP values s", "÷ gbtree", "interaction values s",
               "÷ gbtree", "test AUC"]
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append(status_row(r, len(headers)))
            continue
        c, i = r.get("contribs_seconds"), r.get("interactions_seconds")
        rows.append([r["lib"], r["version"], fmt(c, 3), ratio(c, ref.get("contribs_seconds")),
                     fmt(i, 3), ratio(i, ref.get("interactions_seconds")), fmt(r["score"], 4)])
    header = (f"higgs-like, {args.rows:,} train rows; {cfg.rounds} rounds, {cfg.leaves} leaves, "
              f"{args.threads} thread(s); SHAP values of {args.test_rows:,} test rows, "
              f"interaction values of {min(args.interaction_rows, args.test_rows):,}; fastest of "
              f"{args.predict_repeats} calls; – where a library has none")
    return {"header": header, "table": markdown_table(headers, rows)}
