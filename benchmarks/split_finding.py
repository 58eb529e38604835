"""Split finding on sorted column blocks: gbtree's ``tree_method="exact"`` and
``"approx"`` against XGBoost's.

    python -m benchmarks split-finding [--rows-list 100000,1000000] [--rounds 20]
                                       [--depth 6] [--threads 2] [--libs gbtree,xgboost]

The ``higgs-like`` data (datagen.py) at each training size; every library grows
``--rounds`` depthwise trees of depth ``--depth`` with exact greedy splits, and
with the approximate algorithm (candidates between hessian-weighted quantiles
proposed per tree: gbtree ``sketch_eps=1/255``, XGBoost ``max_bin=255``), both
on a ``DMatrix`` for XGBoost; gbtree's histogram trees of the same depth for
reference. The table gives fit seconds (sorting or sketching included), the
test AUC and the fit time over XGBoost's with the same method.
"""
import dataclasses

from run import args_config, fmt, int_list, log, markdown_table

WORKLOADS = {
    "split-finding": dict(help="exact and approx split finding against XGBoost's, at 100k "
                               "and 1M rows", dataset="higgs-like", rows=1_000_000,
                          test_rows=100_000, rounds=20, leaves=255, libs="gbtree,xgboost"),
}
METHODS = ("exact", "approx", "hist")


def add_arguments(p, name):
    p.add_argument("--rows-list", type=int_list,
                   help="training sizes (default 100000,1000000)")
    p.add_argument("--depth", type=int, default=6, help="tree depth (default 6)")


def run(name, args, bench):
    rows_list = args.rows_list or [100_000, 1_000_000]
    base = dataclasses.replace(args_config(args, "higgs-like"), depth=args.depth)
    rows = []
    for n in rows_list:
        log(f"rows = {n:,}")
        data = bench.data("higgs-like", n, args.test_rows)
        cfgs = [dataclasses.replace(base, tree_method=m) for m in METHODS]
        results = bench.run_grid("fit-predict", cfgs, data, rows=n)
        n_libs = len(bench.libs)
        for i, method in enumerate(METHODS):
            group = results[i * n_libs:(i + 1) * n_libs]
            ref = next((r for r in group if r["lib"] == "xgboost" and r["status"] == "ok"),
                       None)
            for r in group:
                r["tree_method"] = method
                if method == "hist" and r["lib"] != "gbtree":
                    continue            # (the reference row: gbtree's own histograms)
                if r["status"] != "ok":
                    rows.append([f"{n:,}", r["lib"], method, f"{r['status']}: {r['error']}",
                                 "", ""])
                    continue
                rows.append([f"{n:,}", r["lib"], method, fmt(r["fit_seconds"]),
                             fmt(r["score"], 4),
                             fmt(r["fit_seconds"] / ref["fit_seconds"], 2, "×")
                             if ref and method != "hist" else "–"])
    table = markdown_table(["train rows", "library", "tree_method", "fit s", "test AUC",
                            "fit ÷ XGBoost's"], rows)
    header = (f"higgs-like, {args.test_rows:,} test rows; {args.rounds} rounds of depth "
              f"{args.depth}, lr {args.learning_rate}, {args.threads} thread(s)")
    return {"header": header, "table": table}
