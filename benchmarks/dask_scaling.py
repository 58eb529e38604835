"""A model of ``gbtree.dask``'s time per tree, fitted on this machine and checked
against clusters of more worker processes than cores.

    python -m benchmarks dask-scaling [--rows 1000000] [--rounds 10] [--depth 8]
                                      [--workers-list 1,2,4,8] [--model-rows 100000000]
                                      [--model-workers 16,64,256] [--gbit 10]

Every fit runs in a child process of its own that starts a ``LocalCluster`` of W
single-threaded worker processes and fits a binary ``DaskGBTClassifier`` on
``higgs-like`` rows (depthwise trees of ``--depth``); the time per tree is the
boosting time over the trees (binning left out). The model of a tree's time:

    T(W, n) = r + c * n / W * max(1, W / cores)
                + X * (L + (W - 1) * o) + S / B

with ``r`` the client's call of a round, ``c`` the compute of a row (all its
levels), ``X`` the exchanges between workers per tree and ``S`` the bytes a
worker sends in them (both counted by the fit), ``L`` an exchange's latency,
``o`` the cost of each message a worker sends in it, ``B`` the bytes per second
between workers. ``r`` and ``c`` come from one-worker fits (``--rows`` / 4 and
``--rows`` rows), ``L``, ``o`` and ``B`` from small fits (``--calibration-rows``
rows, 16 and 256 bins, so that the bytes change and the rows do not count) on
each number of workers, by least squares. The check: fits of ``--rows`` rows on
each number of workers, measured against the model. Then the model's time per
tree at ``--model-workers`` workers on ``--model-rows`` rows, each worker on a
core of its own, on a network of ``--gbit`` Gb/s (``B``), with ``r``, ``c``,
``L`` and ``o`` of this machine and the exchanges and bytes the fit sends (two
exchanges a level from three workers on; the bytes of the level's histograms).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from run import fmt, int_list, log, markdown_table, positive_int

WORKLOADS = {
    "dask-scaling": dict(help="a model of gbtree.dask's time per tree, fitted here and "
                              "checked on LocalClusters of 1-8 workers; its predictions at "
                              "16-256 workers", dataset="higgs-like", rows=1_000_000,
                         test_rows=1_000, rounds=10, leaves=255, libs="gbtree"),
}


def add_arguments(p, name):
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


def _predict(p, workers, rows, exchanges, sent, cores):
    """The model's seconds per tree (see the module)."""
    compute = p["c"] * rows / workers * max(1.0, workers / cores)
    latency = exchanges * (p["L"] + (workers - 1) * p["o"])
    return p["r"] + compute + latency + sent / p["B"], compute, latency, sent / p["B"]


def run(name, args, bench):
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
    small, big = fit(args.rows // 4, 1, 256), fit(args.rows, 1, 256)
    c = (big["per_tree"] - small["per_tree"]) / (args.rows - args.rows // 4)
    r = small["per_tree"] - c * args.rows // 4
    # L, o, 1/B: small fits on every number of workers, 16 and 256 bins
    A, t = [], []
    for W in [w for w in args.workers_list if w > 1]:
        for bins in (16, 256):
            f = fit(args.calibration_rows, W, bins)
            compute = c * args.calibration_rows / W * max(1.0, W / cores)
            A.append([f["exchanges"], f["exchanges"] * (W - 1), f["sent"]])
            t.append(f["per_tree"] - r - compute)
    L, o, inv_b = np.linalg.lstsq(np.array(A), np.array(t), rcond=None)[0]
    p = dict(r=r, c=c, L=L, o=o, B=1.0 / inv_b if inv_b > 0 else float("inf"))
    # the check: --rows rows on each number of workers
    rows = []
    for W in args.workers_list:
        f = fit(args.rows, W, 256) if W > 1 else big
        pred = _predict(p, W, args.rows, f["exchanges"], f["sent"], cores)[0]
        rows.append([str(W), fmt(f["per_tree"], 3), fmt(pred, 3),
                     f"{100 * (pred - f['per_tree']) / f['per_tree']:+.0f} %",
                     fmt(f["exchanges"], 1), fmt(f["sent"] / 2 ** 20, 2), fmt(f["auc"], 4)])
    check = markdown_table(["workers", "measured s / tree", "model s / tree", "model error",
                            "exchanges / tree", "MiB sent by a worker / tree", "test AUC"],
                           rows)
    # the modelled clusters: the exchanges and bytes of a tree of depth D on 28 features
    E = 28 * 257 * 16                     # bytes of a node's histograms
    built = [1] + [2 ** (lvl - 1) for lvl in range(1, D)]   # histograms built per level
    net = dict(p, B=args.gbit * 1e9 / 8)
    model_rows = []
    for W in args.model_workers:
        if W <= 2:   # (one exchange a level: the root's and each level's)
            X, S = 1 + D, sum(built) * E * (W - 1)
        else:        # (two, but one at the last level, whose children are leaves)
            X, S = 2 * D + 1, sum(built) * E * (W - 1) / W
        total, compute, latency, transfer = _predict(net, W, args.model_rows, X, S, W)
        model_rows.append([str(W), f"{args.model_rows // W:,}", fmt(compute, 3),
                           fmt(latency, 3), fmt(transfer, 3), fmt(total, 3),
                           fmt(S / 2 ** 20, 1)])
    model = markdown_table(["workers", "rows a worker", "compute s", "messages s",
                            "bytes s", "s / tree", "MiB sent by a worker / tree"], model_rows)
    params = (f"fitted here: r = {r * 1e3:.1f} ms a round, c = {c * 1e9:.0f} ns a row a tree "
              f"(one thread, depth {D}), L = {L * 1e3:.2f} ms an exchange, o = {o * 1e3:.2f} ms "
              f"a message, B = {p['B'] / 2 ** 20:.0f} MiB/s between worker processes; "
              f"{cores} cores")
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
                sent=s["bytes_between_workers_per_tree"] / max(s["workers"], 1), auc=auc)


if __name__ == "__main__":
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from common import use_checkout_build
    use_checkout_build()
    sys.path[:] = [p for p in sys.path if p != here]
    print(json.dumps(_child(json.loads(sys.argv[1]))))
