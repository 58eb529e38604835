"""Several targets: one tree per target and round, or one tree whose leaves hold a vector.

    python -m benchmarks multi-target [--rows 200000] [--rounds 100] [--threads 2]
                                      [--libs gbtree,xgboost,catboost]

The ``multi-target`` data (datagen.py: 4 targets sharing most of their structure)
fitted twice by each library that can: with one tree per target and round, and
with trees whose leaves hold a vector of the 4 values (gbtree and XGBoost
``multi_strategy="multi_output_tree"``, CatBoost ``MultiRMSE``, whose trees always
hold a vector). The table gives fit and predict seconds, the test RMSE over all
targets, and the fit time over gbtree's with the same kind of trees.
"""
import dataclasses

from run import args_config, fmt, markdown_table

WORKLOADS = {
    "multi-target": dict(help="4 targets: a tree per target or vector leaves, fit time and RMSE",
                         dataset="multi-target", rows=200_000, test_rows=50_000, rounds=100,
                         leaves=255, libs="gbtree,xgboost,catboost"),
}
KINDS = {"one tree per target": {}, "vector leaves": {"vector_leaves": True}}


def run(name, args, bench):
    base = dataclasses.replace(args_config(args, "multi-target"), n_targets=4)
    cfgs = [dataclasses.replace(base, **change) for change in KINDS.values()]
    data = bench.data("multi-target", args.rows, args.test_rows)
    results = bench.run_grid("fit-predict", cfgs, data, rows=args.rows)
    n_libs = len(bench.libs)
    rows = []
    for i, kind in enumerate(KINDS):
        group = results[i * n_libs:(i + 1) * n_libs]
        ref = next((r for r in group if r["lib"] == "gbtree" and r["status"] == "ok"), None)
        for r in group:
            r["trees"] = kind
            if r["status"] != "ok":
                rows.append([r["lib"], kind, f"{r['status']}: {r['error']}", "", "", ""])
                continue
            rows.append([r["lib"], kind, fmt(r["fit_seconds"]), fmt(r["predict_seconds"], 3),
                         fmt(r["score"], 4),
                         fmt(r["fit_seconds"] / ref["fit_seconds"], 2, "×") if ref else "–"])
    rows.sort(key=lambda row: bench.libs.index(row[0]))      # library by library
    table = markdown_table(["library", "trees", "fit s", "predict s", "test RMSE",
                            "fit ÷ gbtree"], rows)
    header = (f"multi-target (4 targets), {args.rows:,} train rows, {args.test_rows:,} test "
              f"rows; {args.rounds} rounds, {args.leaves} leaves, lr {args.learning_rate}, "
              f"{args.threads} thread(s)")
    return {"header": header, "table": table}
