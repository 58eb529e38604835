"""Random forests: gbtree's ``num_parallel_tree`` against the peers' forests.

    python -m benchmarks random-forest [--rows 200000] [--rounds 100] [--threads 2]
                                       [--libs gbtree,xgboost,lightgbm,sklearn]

The ``higgs-like`` data (datagen.py); every library grows ``--rounds`` trees of at
most ``--leaves`` leaves, each on 80 % of the rows and 80 % of the features (per
node), and averages them (runners.py maps ``Config.forest`` to each library's own
forest). The table is the core workloads' one: fit, binning and predict seconds,
memory and the test AUC.
"""
import dataclasses

from run import args_config, compare_table

WORKLOADS = {
    "random-forest": dict(help="random forests of 100 trees on higgs-like: fit time and AUC",
                          dataset="higgs-like", rows=200_000, test_rows=100_000, rounds=100,
                          leaves=255, libs="gbtree,xgboost,lightgbm,sklearn"),
}


def run(name, args, bench):
    cfg = dataclasses.replace(args_config(args, "higgs-like"), forest=True)
    data = bench.data("higgs-like", args.rows, args.test_rows)
    results = bench.run_libs("fit-predict", cfg, data, rows=args.rows)
    header = (f"higgs-like, {args.rows:,} train rows, {args.test_rows:,} test rows; random "
              f"forests of {cfg.rounds} trees of at most {cfg.leaves} leaves, 80 % of the rows "
              f"per tree and of the features per node, {cfg.threads} thread(s)")
    return {"header": header, "table": compare_table(results)}
