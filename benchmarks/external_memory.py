"""Training out of core: data read in chunks from files, the binned rows on disk.

    python -m benchmarks external-memory [--rows 20000000] [--chunk-rows 1000000]
                                         [--rounds 20] [--depth 8] [--threads 2]
                                         [--libs gbtree,xgboost] [--goss]
    python -m benchmarks external-memory-sparse [--rows 4000000] ...

Writes the ``higgs-like`` training rows (datagen.py, float32, 28 features) as
``.npy`` chunk files of ``--chunk-rows`` rows (X and y apart); or, for
``external-memory-sparse``, the ``onehot`` rows of sparse_input.py (CSR, 2,003
columns, 28 stored values a row: 16 GiB as a dense binned matrix) as ``.npz``
chunk files; then fits each library in a fresh worker process, depthwise trees of
``--depth`` levels, lr 0.1 and the other settings of runners.py:

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
import scipy.sparse as sp

from run import args_config, fmt, log, markdown_table, positive_int
from sparse_input import sparse_data

WORKLOADS = {
    "external-memory": dict(help="higgs-like from chunk files, trained in memory and out of core "
                                 "(gbtree ExternalData, XGBoost ExtMemQuantileDMatrix): time "
                                 "and peak memory", dataset="higgs-like", rows=20_000_000,
                            test_rows=100_000, rounds=20, leaves=255, libs="gbtree,xgboost"),
    "external-memory-sparse": dict(help="one-hot CSR rows from chunk files, trained in memory "
                                        "and out of core (sparse blocks): time and peak memory",
                                   dataset="onehot", rows=4_000_000, test_rows=100_000,
                                   rounds=20, leaves=255, libs="gbtree,xgboost"),
}
MODES = ("in memory", "out of core")


def _chunk_file(bench, key, X, y):
    """[X path, y path] of one chunk saved under ``key``: ``.npy`` files, X as an
    uncompressed ``.npz`` when it is a CSR matrix."""
    if not sp.issparse(X):
        saved = bench.save(key, {"X": np.asarray(X), "y": y})
        return [saved["X"], saved["y"]]
    folder = bench.tmpdir / key
    folder.mkdir(exist_ok=True)
    sp.save_npz(folder / "X.npz", X.tocsr(), compressed=False)
    np.save(folder / "y.npy", y)
    return [str(folder / "X.npz"), str(folder / "y.npy")]


def add_arguments(p, name):
    p.add_argument("--depth", type=int, default=8, help="levels of each tree (default 8)")
    p.add_argument("--chunk-rows", type=positive_int, default=1_000_000,
                   help="rows per chunk file (default 1,000,000)")
    p.add_argument("--goss", action="store_true",
                   help="GOSS in every fit (top 20 %% of the rows + 10 %% of the rest): "
                        "XGBoost has none, LightGBM none out of core")


def run(name, args, bench):
    sparse = name == "external-memory-sparse"
    cfg = dataclasses.replace(args_config(args, "higgs-like"), depth=args.depth,
                              goss=args.goss)
    if sparse:
        data, _ = sparse_data(bench, "onehot", args.rows, args.test_rows, args.seed)
        X, y = sp.load_npz(data["X_train"]), np.load(data["y_train"])
    else:
        data = bench.data("higgs-like", args.rows, args.test_rows)
        X = np.load(data["X_train"], mmap_mode="r")
        y = np.load(data["y_train"], mmap_mode="r")
    files = []
    for i, lo in enumerate(range(0, X.shape[0], args.chunk_rows)):
        part = slice(lo, lo + args.chunk_rows)
        files.append(_chunk_file(bench, f"external-{name}-{args.rows}-{args.chunk_rows}-{i}",
                                 X[part], np.asarray(y[part])))
    del X, y
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
    what = ("one-hot CSR rows (2,003 columns, 28 stored values a row)" if sparse
            else "x 28 float32 higgs-like rows")
    header = (f"{args.rows:,} {what} in {len(files)} chunk files, "
              f"{args.test_rows:,} test rows in memory; {cfg.rounds} rounds of depth "
              f"{cfg.depth}, {args.threads} thread(s)" + ("; GOSS (top 20 % + 10 % of the "
                                                          "rest)" if args.goss else ""))
    return {"header": header, "table": table}
