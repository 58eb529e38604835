"""Raw data larger than memory: fitting from a memory-mapped ``.npy`` file.

    python -m benchmarks out-of-core [--rows 4000000] [--rounds 20] [--threads 2]
                                     [--libs gbtree,lightgbm,xgboost]

Writes the ``higgs-like`` data (datagen.py, float32, 28 features) to a ``.npy``
file once, then fits each library in a fresh worker process, at the settings
of runners.py (255 leaves best-first, lr 0.1, ``--rounds`` rounds, the same
threads), on:

- ``in memory``: ``np.load(path)``, the whole array in the process's memory;
- ``memory-mapped``: ``np.load(path, mmap_mode="r")``, the file's pages read by
  the operating system when touched, kept as page cache it can drop.

A thread samples the process's ``/proc/self/status`` every 10 ms from before
the data are loaded to the end of the fit. The table gives the fit seconds, the
peak of anonymous memory (``RssAnon``: memory the process owns, which the
system cannot drop) over what the process held before loading the data, the
peak of file-backed memory (``RssFile``: the mapped file's pages), and the
test AUC on ``--test-rows`` rows held in memory.
"""
import os

from run import args_config, fmt, markdown_table

WORKLOADS = {
    "out-of-core": dict(help="higgs-like from a .npy file loaded or memory-mapped: fit time "
                             "and anonymous memory", dataset="higgs-like", rows=4_000_000,
                        test_rows=100_000, rounds=20, leaves=255,
                        libs="gbtree,lightgbm,xgboost", json_name="out-of-core"),
}
MODES = ("in memory", "memory-mapped")


def run(name, args, bench):
    cfg = args_config(args, "higgs-like")
    data = bench.data("higgs-like", args.rows, args.test_rows)
    size = os.path.getsize(data["X_train"]) / 2 ** 20
    by_mode = {}
    for mode in MODES:
        bench.spec = {"memory": True, "mmap": ["X_train"] if mode == "memory-mapped" else []}
        by_mode[mode] = bench.run_libs("fit-predict", cfg, data, rows=args.rows, data_mode=mode)
    bench.spec = {}
    rows = []
    for lib in bench.libs:
        for mode in MODES:
            r = next(r for r in by_mode[mode] if r["lib"] == lib)
            if r["status"] != "ok":
                rows.append([lib, mode, f"{r['status']}: {r['error']}", "", "", ""])
                continue
            rows.append([lib, mode, fmt(r["fit_seconds"]), fmt(r["anon_peak_mib"], 0),
                         fmt(r["file_peak_mib"], 0), fmt(r["score"], 4)])
    table = markdown_table(["library", "X", "fit s", "peak anonymous MiB",
                            "peak file-backed MiB", "test AUC"], rows)
    header = (f"{args.rows:,} x 28 float32 rows in a .npy file ({size:.0f} MiB), "
              f"{args.test_rows:,} test rows in memory; {cfg.rounds} rounds, {cfg.leaves} "
              f"leaves, {args.threads} thread(s)")
    return {"header": header, "table": table, "file_mib": size}
