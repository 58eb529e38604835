"""A model of ``gbtree.dask``'s time per tree, fitted on this machine and checked
against clusters of more worker processes than cores.

    python -m benchmarks dask-scaling [--rows 1000000] [--rounds 10] [--depth 8]
                                      [--workers-list 1,2,4,8] [--model-rows 100000000]
                                      [--model-workers 16,64,256] [--gbit 10]

Every fit runs in a child process of its own that starts a ``LocalCluster`` of W
single-threaded worker processes and fits a binary ``DaskGBTClassifier`` on
``higgs-like`` rows (depthwise trees of ``--depth``); the time per tree is the
boosting time over the trees (binning left out). The model of a tree's time on W
workers holding n rows in all, on a machine of ``cores`` cores:

    T = r + s * (c * n / W  +  M * m  +  S / B)  [+ S / network]

``r``: the client's call of a round; ``s = max(1, W / cores)``: more workers
than cores share them, so every worker's own time stretches; ``c``: a row's
compute (all the levels of a tree, one thread); ``M``: the messages a worker
sends one after the other per tree (each waits for its partner's: the steps of
the reduce-scatters and gathers) and ``S``: the bytes it sends (both counted by
the fit); ``m``: a message step's cost; ``B``: a worker's bytes per second of
sending (serialising and copying, on its core). ``r`` and ``c`` come from
one-worker fits of ``--rows`` / 4 and ``--rows`` rows; ``m`` and ``B`` (>= 0)
from small fits (``--calibration-rows`` rows, 16 and 256 bins: the bytes change,
the compute does not count) on each number of workers, by least squares. The
check: fits of ``--rows`` rows on each number of workers against the model. Then
the model at ``--model-workers`` workers on ``--model-rows`` rows, a core per
worker (s = 1), the network's ``S / network`` added at ``--gbit`` Gb/s, with this
machine's constants and the messages and bytes of a tree of ``--depth`` levels
on 28 features of 256 bins (a power of two P of the workers in the butterfly:
log2(P) steps a reduce-scatter or gather, one more for a worker folded in; about
one set of the level's histograms sent a level).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

# (``run``'s helpers are imported in the functions: the cluster's worker processes
# import this file as their main module, without the benchmarks folder on their path)
WORKLOADS = {
    "dask-scaling": dict(help="a model of gbtree.dask's time per tree, fitted here and "
                              "checked on LocalClusters of 1-8 workers; its predictions at "
                              "16-256 workers", dataset="higgs-like", rows=1_000_000,
                         test_rows=1_000, rounds=10, leaves=255, libs="gbtree"),
}


def add_arguments(p, name):
    from run import int_list, positive_int
    p.add_argument("--depth", type=int, default=8, help="tree depth (default 8)")
    p.add_argument("--workers-list", type=int_list, default=[1, 2, 4, 8],
                   help="worker processes of the fits (default 1,2,4,8)")
    p.add_argument("--calibration-rows", type=positive_int, default=20_000,
                   help="rows of the small fits that measure the exchanges (default 20,000)")
    p.add_argument("--model-rows", type=positive_int, default=100_000_000,
                   help="rows of the modelled clusters (default 100,000,000)")
    p.add_argument("--model-workers", type=int_list, default=[16, 64, 256],
                   help="workers of the modelled clusters (default 16,64,256)")
    p.add_argument("--gbit", type=float, default=10.0,
                   help="the modelled network's Gb/s (default 10)")


def _fit(data, rows, workers, rounds, depth, max_bin, seed, timeout):
    """One fit in a child process: its time per tree and traffic."""
    spec = dict(data=data, rows=rows, workers=workers, rounds=rounds, depth=depth,
                max_bin=max_bin, seed=seed)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), json.dumps(spec)],
                          capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the fit on {workers} workers failed: "
                           f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(lines[-1])


def _predict(p, workers, rows, messages, sent, cores, network=None):
    """The model's seconds per tree, and its compute, messages and bytes parts (see
    the module); ``network``: the network's bytes per second (None: none, the
    workers of one machine)."""
    share = max(1.0, workers / cores)    # (more workers than cores share them)
    compute = share * p["c"] * rows / workers
    steps = share * messages * p["m"]
    transfer = share * sent / p["B"] + (0.0 if network is None else sent / network)
    return p["r"] + compute + steps + transfer, compute, steps, transfer


def _tree_traffic(workers, depth, node_bytes):
    """The messages the first worker sends one after the other per tree, and the
    bytes it sends (a full tree of ``depth`` levels, histograms of ``node_bytes``)."""
    built = 1 + sum(2 ** (level - 1) for level in range(1, depth))   # root, then levels
    if workers == 2:   # (one exchange of everything a level)
        return 1 + depth, built * node_bytes
    paired = 1 << (workers.bit_length() - 1)
    per_exchange = (paired.bit_length() - 1) + (workers > paired)
    # reduce-scatters: the root's and each level's; gathers: all but the last level's
    return (1 + depth + depth) * per_exchange, built * node_bytes * (paired - 1) / paired


def run(name, args, bench):
    from run import fmt, log, markdown_table
    data = bench.data("higgs-like", args.rows, args.test_rows)
    cores = os.cpu_count()
    R, D = args.rounds, args.depth
    results = {}

    def fit(rows, workers, max_bin):
        key = f"{rows}/{workers}/{max_bin}"
        log(f"{workers} workers, {rows:,} rows, {max_bin} bins")
        results[key] = _fit(data, rows, workers, R, D, max_bin, args.seed, args.timeout)
        return results[key]

    # r and c: one worker (no exchanges), two sizes
    n_small = args.rows // 4
    small, big = fit(n_small, 1, 256), fit(args.rows, 1, 256)
    c = max(0.0, (big["per_tree"] - small["per_tree"]) / (args.rows - n_small))
    r = small["per_tree"] - c * n_small
    # m, 1/B (>= 0): small fits on every number of workers, 16 and 256 bins
    A, t = [], []
    for W in [w for w in args.workers_list if w > 1]:
        share = max(1.0, W / cores)
        for bins in (16, 256):
            f = fit(args.calibration_rows, W, bins)
            A.append([share * f["messages"], share * f["sent"]])
            t.append(f["per_tree"] - r - share * c * args.calibration_rows / W)
    m, inv_b = nnls(np.array(A), np.array(t))[0]
    p = dict(r=r, c=c, m=m, B=1.0 / inv_b if inv_b > 0 else float("inf"))
    # the check: --rows rows on each number of workers
    rows = []
    for W in args.workers_list:
        f = fit(args.rows, W, 256) if W > 1 else big
        pred = _predict(p, W, args.rows, f["messages"], f["sent"], cores)[0]
        rows.append([str(W), fmt(f["per_tree"], 3), fmt(pred, 3),
                     f"{100 * (pred - f['per_tree']) / f['per_tree']:+.0f} %",
                     fmt(f["exchanges"], 1), fmt(f["messages"], 1),
                     fmt(f["sent"] / 2 ** 20, 2), fmt(f["auc"], 4)])
    check = markdown_table(["workers", "measured s / tree", "model s / tree", "model error",
                            "exchanges / tree", "messages of a worker / tree",
                            "MiB sent by a worker / tree", "test AUC"], rows)
    # the modelled clusters
    model_rows = []
    for W in args.model_workers:
        M, S = _tree_traffic(W, D, 28 * 257 * 16)
        total, compute, steps, transfer = _predict(p, W, args.model_rows, M, S, W,
                                                   args.gbit * 1e9 / 8)
        model_rows.append([str(W), f"{args.model_rows // W:,}", fmt(compute, 3),
                           fmt(steps, 3), fmt(transfer, 3), fmt(total, 3), str(M),
                           fmt(S / 2 ** 20, 1)])
    model = markdown_table(["workers", "rows a worker", "compute s", "messages s",
                            "bytes s", "s / tree", "messages of a worker / tree",
                            "MiB sent by a worker / tree"], model_rows)
    params = (f"fitted here: r = {r * 1e3:.1f} ms a round, c = {c * 1e9:.0f} ns a row a tree "
              f"(one thread, depth {D}), m = {m * 1e3:.2f} ms a message step, "
              f"B = {p['B'] / 2 ** 20:.0f} MiB/s sent by a worker; {cores} cores")
    header = (f"higgs-like, {args.rows:,} rows, {R} trees of depth {D}, LocalClusters of "
              f"single-threaded workers on {cores} cores; {params}. Modelled: "
              f"{args.model_rows:,} rows, a core a worker, {args.gbit:g} Gb/s")
    table = check + "\n\n" + model
    return {"header": header, "table": table, "parameters": p, "fits": results}


# ---------------------------------------------------------------------------- the child
def _child(spec):
    import time

    import dask.array as da
    from distributed import Client, LocalCluster, wait
    from sklearn.metrics import roc_auc_score

    data, n, W = spec["data"], spec["rows"], spec["workers"]
    X = np.array(np.load(data["X_train"], mmap_mode="r")[:n])
    y = np.array(np.load(data["y_train"], mmap_mode="r")[:n])
    from gbtree.dask import DaskGBTClassifier
    with LocalCluster(n_workers=W, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        parts = -(-n // (2 * W))
        dX = da.from_array(X, chunks=(parts, -1))
        dy = da.from_array(y, chunks=parts)
        dX, dy = client.persist([dX, dy])
        client.wait_for_workers(W)
        wait([dX, dy])
        model = DaskGBTClassifier(n_estimators=spec["rounds"], max_depth=spec["depth"],
                                  max_bin=spec["max_bin"], random_state=spec["seed"])
        t = time.perf_counter()
        model.fit(dX, dy)
        fit = time.perf_counter() - t
    local = model.to_local()
    s = model.fit_stats_
    X_test, y_test = np.load(data["X_test"]), np.load(data["y_test"])
    auc = roc_auc_score(y_test, local.predict_proba(X_test)[:, 1])
    return dict(fit_seconds=fit, per_tree=local.fit_info_["boost_seconds"] / s["trees"],
                workers=s["workers"], exchanges=s["exchanges_per_tree"],
                messages=s["messages_per_tree"],
                sent=s["bytes_between_workers_per_tree"] / max(s["workers"], 1), auc=auc)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import run_dask_child
    run_dask_child(_child, "dask-scaling")
