"""Training out of core: data read in chunks from files, the binned rows on disk.

    python -m benchmarks external-memory [--rows 20000000] [--chunk-rows 1000000]
                                         [--rounds 20] [--depth 8] [--threads 2]
                                         [--libs gbtree,xgboost]

Writes the ``higgs-like`` training rows (datagen.py, float32, 28 features) as
``.npy`` chunk files of ``--chunk-rows`` rows (X and y apart), then fits each
library in a fresh worker process, depthwise trees of ``--depth`` levels, lr 0.1
and the other settings of runners.py:

- ``in memory``: the rows loaded into one array, the usual fit;
- ``out of core``: gbtree's ``ExternalData`` over the chunk files (the binned
  blocks written to the system's temporary folder), XGBoost's
  ``ExtMemQuantileDMatrix`` over an iterator of the same files.

A thread samples ``/proc/self/status`` every 10 ms from before the data are read
to the end of the fit. The table gives the fit seconds (reading the files
included), the peak RSS of the process (``VmHWM``: interpreter, library and
data included), the peak of anonymous memory over what the process held before
reading the data, and the test AUC on ``--test-rows`` rows held in memory. The
page cache is warm: the chunk files were just written, and the blocks are read
back right after they are written.
"""
import dataclasses

import numpy as np

from run import args_config, fmt, log, markdown_table, positive_int

WORKLOADS = {
    "external-memory": dict(help="higgs-like from chunk files, trained in memory and out of core "
                                 "(gbtree ExternalData, XGBoost ExtMemQuantileDMatrix): time "
                                 "and peak memory", dataset="higgs-like", rows=20_000_000,
                            test_rows=100_000, rounds=20, leaves=255, libs="gbtree,xgboost"),
}
MODES = ("in memory", "out of core")


def add_arguments(p, name):
    p.add_argument("--depth", type=int, default=8, help="levels of each tree (default 8)")
    p.add_argument("--chunk-rows", type=positive_int, default=1_000_000,
                   help="rows per chunk file (default 1,000,000)")


def run(name, args, bench):
    cfg = dataclasses.replace(args_config(args, "higgs-like"), depth=args.depth)
    data = bench.data("higgs-like", args.rows, args.test_rows)
    X = np.load(data["X_train"], mmap_mode="r")
    y = np.load(data["y_train"], mmap_mode="r")
    files = []
    for i, lo in enumerate(range(0, X.shape[0], args.chunk_rows)):
        part = slice(lo, lo + args.chunk_rows)
        saved = bench.save(f"external-{args.rows}-{args.chunk_rows}-{i}",
                           {"X": np.asarray(X[part]), "y": np.asarray(y[part])})
        files.append([saved["X"], saved["y"]])
    log(f"{len(files)} chunk files of {args.chunk_rows:,} rows")
    test = {key: data[key] for key in ("X_test", "y_test")}   # (out of core: no X in memory)
    by_mode = {}
    for mode in MODES:
        outside = mode == "out of core"
        bench.spec = {"memory": True, "files": files if outside else None}
        by_mode[mode] = bench.run_libs("external" if outside else "fit-predict", cfg,
                                       test if outside else data, rows=args.rows, data_mode=mode)
    bench.spec = {}
    rows = []
    for lib in bench.libs:
        ref = next(r for r in by_mode["in memory"] if r["lib"] == lib)
        for mode in MODES:
            r = next(r for r in by_mode[mode] if r["lib"] == lib)
            if r["status"] != "ok":
                rows.append([lib, mode, f"{r['status']}: {r['error']}", "", "", "", ""])
                continue
            rows.append([lib, mode, fmt(r["fit_seconds"]), fmt(r["peak_rss_mib"], 0),
                         fmt(r["anon_peak_mib"], 0), fmt(r["score"], 4),
                         fmt(r["fit_seconds"] / ref["fit_seconds"], 2, "×")
                         if ref["status"] == "ok" else "–"])
    table = markdown_table(["library", "data", "fit s", "peak RSS MiB", "peak anonymous MiB",
                            "test AUC", "fit ÷ in memory"], rows)
    header = (f"{args.rows:,} x 28 float32 higgs-like rows in {len(files)} chunk files, "
              f"{args.test_rows:,} test rows in memory; {cfg.rounds} rounds of depth "
              f"{cfg.depth}, {args.threads} thread(s)")
    return {"header": header, "table": table}
