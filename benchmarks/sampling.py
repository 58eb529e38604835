"""Row sampling: how fit time shrinks with the sample.

    python -m benchmarks sampling [--rows 500000] [--rounds 100] [--threads 2]
                                  [--libs gbtree,lightgbm]

Fits the ``higgs-like`` data (datagen.py) with all rows, with ``subsample=0.5``
and with GOSS (top 20 % of the rows by |gradient| + 10 % of the rest), at the
settings of runners.py (which maps both to each library's own parameters),
every fit in a fresh worker process. The table gives fit seconds, the ratio to
the full-data fit of the same library, the test AUC and its change. A library
without one of the methods (XGBoost has no GOSS) shows it as ``unsupported``.
"""
import dataclasses

from run import args_config, fmt, markdown_table

WORKLOADS = {
    "sampling": dict(help="higgs-like with all rows, subsample 0.5 and GOSS: fit time and AUC",
                     dataset="higgs-like", rows=500_000, test_rows=200_000, rounds=100,
                     leaves=255, libs="gbtree,lightgbm"),
}
METHODS = {"all rows": {}, "subsample 0.5": {"subsample": 0.5}, "goss 0.2+0.1": {"goss": True}}


def run(name, args, bench):
    base = args_config(args, "higgs-like")
    cfgs = [dataclasses.replace(base, **change) for change in METHODS.values()]
    data = bench.data("higgs-like", args.rows, args.test_rows)
    results = bench.run_grid("fit-predict", cfgs, data, rows=args.rows)
    n_libs = len(bench.libs)
    rows, full = [], {}
    for i, method in enumerate(METHODS):
        for r in results[i * n_libs:(i + 1) * n_libs]:
            r["sampling"] = method
            if r["status"] != "ok":
                rows.append([r["lib"], method, f"{r['status']}: {r['error']}", "", "", ""])
                continue
            ref = full.setdefault(r["lib"], r)
            rows.append([r["lib"], method, fmt(r["fit_seconds"]),
                         fmt(r["fit_seconds"] / ref["fit_seconds"], 2, "×"), fmt(r["score"], 4),
                         f"{r['score'] - ref['score']:+.4f}"])
    rows.sort(key=lambda row: bench.libs.index(row[0]))      # library by library
    table = markdown_table(["library", "rows per tree", "fit s", "fit ÷ all rows", "test AUC",
                            "Δ AUC vs all rows"], rows)
    header = (f"higgs-like, {args.rows:,} train rows, {args.test_rows:,} test rows; "
              f"{args.rounds} rounds, {args.leaves} leaves, lr {args.learning_rate}, "
              f"{args.threads} thread(s)")
    return {"header": header, "table": table}
