"""Model files: size, save time and load time of each library's own formats.

    python -m benchmarks model-files [--rows 1000000] [--test-rows 10000]
                                     [--rounds 100] [--leaves 255] [--threads 2]
                                     [--libs gbtree,xgboost,lightgbm]

The workload-1 model by default: each library fits ``higgs-like`` (1,000,000 x
28 float32, binary) at the settings of runners.py (100 rounds of 255-leaf
trees; the fit is not timed), then saves and loads it in each of its formats
(runners.py lists them): the fastest of ``--predict-repeats`` calls each, the
file cache warm. "Load" means a model ready to predict. The last column is how
far the loaded model's probabilities of the test rows are from the fitted
model's (0: bit for bit).
"""
from run import args_config, fmt, markdown_table, status_row

WORKLOADS = {
    "model-files": dict(help="the workload-1 model saved and loaded in each library's "
                             "formats: size and time", dataset="higgs-like", rows=1_000_000,
                        test_rows=10_000, rounds=100, leaves=255,
                        libs="gbtree,xgboost,lightgbm"),
}


def run(name, args, bench):
    cfg = args_config(args, "higgs-like")
    data = bench.data("higgs-like", args.rows, args.test_rows)
    results = bench.run_libs("model-files", cfg, data, rows=args.rows)
    files = [(r, f) for r in results if r["status"] == "ok" for f in r["files"]]
    ref = next((f for r, f in files if r["lib"] == "gbtree" and f["format"] == "binary"), {})
    headers = ["library", "format", "size MB", "save ms", "load ms", "size ÷ gbtree binary",
               "load ÷ gbtree binary", "largest change of a prediction after load"]
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append(status_row(r, len(headers)))
            continue
        for f in r["files"]:
            rows.append([r["lib"], f["format"], fmt(f["bytes"] / 1e6), fmt(f["save_seconds"] * 1e3, 1),
                         fmt(f["load_seconds"] * 1e3, 1),
                         fmt(f["bytes"] / ref["bytes"], 2, "×") if ref else "–",
                         fmt(f["load_seconds"] / ref["load_seconds"], 2, "×") if ref else "–",
                         f"{f['max_abs_diff']:.1e}" if f["max_abs_diff"] else "0"])
    header = (f"higgs-like, {args.rows:,} train rows; {cfg.rounds} rounds, {cfg.leaves} leaves, "
              f"{args.threads} thread(s); fastest of {args.predict_repeats} saves and loads, "
              f"file cache warm; Δ over {args.test_rows:,} test rows")
    return {"header": header, "table": markdown_table(headers, rows)}
