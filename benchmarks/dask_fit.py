"""Training on a Dask cluster: ``gbtree.dask`` against ``xgboost.dask`` and ``lightgbm.dask``.

    python -m benchmarks dask [--rows 2000000] [--rounds 100] [--depth 8]
                              [--partitions 8] [--workers 2]
                              [--libs gbtree,xgboost,lightgbm,gbtree-local,
                                      gbtree-float,lightgbm-quantized]

The ``higgs-like`` data (datagen.py) saved as .npy files; each library runs in a
child process of its own that starts a ``LocalCluster`` of ``--workers``
single-threaded worker processes, has the workers load the training rows from
the files in ``--partitions`` row blocks (persisted before the clock starts),
and fits a binary classifier of ``--rounds`` depthwise trees of depth
``--depth`` (gbtree and XGBoost ``max_depth``; LightGBM ``max_depth`` and
``num_leaves = 2**depth``), or with ``--lossguide`` best-first trees of
``--leaves`` leaves and no depth limit, learning rate, 256 bins, L2 1, min child
weight 1.
``gbtree-local`` is gbtree's own fit of the same rows in one process on
``--workers`` threads, for reference. gbtree trains on quantised gradients by
default, ``gbtree-float`` on float ones (``grad_quant_bins=None``);
``lightgbm-quantized`` on quantised ones (``use_quantized_grad`` with
``runners.QUANT_BINS`` levels, leaf values from the exact gradients). The table
gives the fit seconds, the
largest peak RSS of a worker over what it held before the fit, the test AUC, and
for gbtree.dask per tree: the client's calls to the workers, the exchanges
between the workers and the bytes they sent each other.
"""
import json
import subprocess
import sys
from pathlib import Path

WORKLOADS = {
    "dask": dict(help="fit on a LocalCluster of 2 single-threaded workers, 2M higgs-like rows "
                      "in 8 partitions: gbtree.dask against xgboost.dask and lightgbm.dask",
                 dataset="higgs-like", rows=2_000_000, test_rows=250_000, rounds=100,
                 leaves=255, libs="gbtree,xgboost,lightgbm,gbtree-local,gbtree-float,"
                                  "lightgbm-quantized"),
}
LIBS = ("gbtree", "xgboost", "lightgbm", "gbtree-local", "gbtree-float",
        "lightgbm-quantized")


def add_arguments(p, name):
    p.add_argument("--depth", type=int, default=8, help="tree depth (default 8)")
    p.add_argument("--lossguide", action="store_true",
                   help="best-first trees of --leaves leaves, no depth limit, instead")
    p.add_argument("--partitions", type=int, default=8, help="row blocks (default 8)")
    p.add_argument("--workers", type=int, default=2,
                   help="single-threaded worker processes (default 2)")


def _shape(lib, spec):
    """A library's tree parameters: depthwise trees of depth ``depth`` (LightGBM's with
    ``2**depth`` leaves), or with ``lossguide`` best-first trees of ``leaves`` leaves."""
    D, L = spec["depth"], spec["leaves"]
    lightgbm = lib.startswith("lightgbm")
    if spec["lossguide"]:
        return (dict(max_depth=-1, num_leaves=L) if lightgbm
                else dict(grow_policy="lossguide", max_leaves=L, max_depth=0))
    return dict(max_depth=D, num_leaves=2 ** D) if lightgbm else dict(max_depth=D)


def resolve_libs(text):
    """The libraries of ``--libs`` (``all``: every one), checked."""
    libs = list(LIBS) if text in (None, "all") else text.split(",")
    for lib in libs:
        if lib not in LIBS:
            raise SystemExit(f"dask: --libs takes {', '.join(LIBS)} or all, got {lib!r}")
    return libs


def run(name, args, bench):
    # (imported here: the cluster's worker processes import this file as their main
    # module, without the benchmarks folder on their path)
    from run import fmt, log, markdown_table
    from runners import QUANT_BINS

    data = bench.data("higgs-like", args.rows, args.test_rows)
    rows = []
    for lib in bench.libs:
        log(f"{lib}")
        spec = dict(lib=lib, data=data, rounds=args.rounds, depth=args.depth,
                    lossguide=args.lossguide, leaves=args.leaves,
                    partitions=args.partitions, workers=args.workers,
                    learning_rate=args.learning_rate, seed=args.seed, quant_bins=QUANT_BINS)
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), json.dumps(spec)],
                              capture_output=True, text=True, timeout=args.timeout)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            r = dict(lib=lib, status="error", error=(proc.stderr.strip().splitlines() or ["?"])[-1])
        else:
            r = dict(json.loads(lines[-1]), lib=lib, status="ok")
        bench.results.append(r)
        if r["status"] != "ok":
            rows.append([lib, f"error: {r['error']}", "", "", "", ""])
            continue
        rows.append([lib, fmt(r["fit_seconds"]), fmt(r["peak_worker_mib"], 0),
                     fmt(r["auc"], 4),
                     fmt(r["round_trips_per_tree"], 1) if "round_trips_per_tree" in r else "–",
                     fmt(r["exchanges_per_tree"], 1) if "exchanges_per_tree" in r else "–",
                     fmt(r["mib_between_workers"], 1) if "mib_between_workers" in r else "–"])
    table = markdown_table(["library", "fit s", "peak RSS of a worker MiB", "test AUC",
                            "client calls / tree", "exchanges between workers / tree",
                            "MiB sent between workers / tree"], rows)
    header = (f"higgs-like, {args.rows:,} train rows in {args.partitions} partitions, "
              f"{args.test_rows:,} test rows; LocalCluster of {args.workers} single-threaded "
              f"workers (gbtree-local: one process, {args.workers} threads); {args.rounds} "
              + (f"trees of {args.leaves} leaves (lossguide)" if args.lossguide
                 else f"trees of depth {args.depth}") + f", lr {args.learning_rate}")
    return {"header": header, "table": table}


# ---------------------------------------------------------------------------- the child
def _child(spec):
    import resource
    import time

    import numpy as np
    from sklearn.metrics import roc_auc_score

    lib, data = spec["lib"], spec["data"]
    R, lr = spec["rounds"], spec["learning_rate"]
    X_test, y_test = np.load(data["X_test"]), np.load(data["y_test"])
    if lib == "gbtree-local":
        from gbtree import GBTClassifier
        X, y = np.load(data["X_train"], mmap_mode="r"), np.load(data["y_train"])
        model = GBTClassifier(n_estimators=R, learning_rate=lr, n_jobs=spec["workers"],
                              random_state=spec["seed"], **_shape(lib, spec))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        model.fit(X, y)
        fit = time.perf_counter() - t
        peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        auc = roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])
        return dict(fit_seconds=fit, peak_worker_mib=peak, auc=auc, score=auc,
                    module_file=sys.modules["gbtree"].__file__)

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    n = np.load(data["y_train"], mmap_mode="r").shape[0]
    n_features = np.load(data["X_train"], mmap_mode="r").shape[1]
    bounds = np.linspace(0, n, spec["partitions"] + 1).astype(int)

    def load(path, lo, hi):
        a = np.load(path, mmap_mode="r")
        return np.array(a[lo:hi])

    with LocalCluster(n_workers=spec["workers"], threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        X = da.concatenate([da.from_delayed(dask.delayed(load)(data["X_train"], lo, hi),
                                            shape=(hi - lo, n_features), dtype=np.float32)
                            for lo, hi in zip(bounds[:-1], bounds[1:])])
        y = da.concatenate([da.from_delayed(dask.delayed(load)(data["y_train"], lo, hi),
                                            shape=(hi - lo,), dtype=np.float64)
                            for lo, hi in zip(bounds[:-1], bounds[1:])])
        X, y = client.persist([X, y])
        client.wait_for_workers(spec["workers"])
        wait([X, y])

        def maxrss():
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        before = client.run(maxrss)
        stats = {}
        if lib in ("gbtree", "gbtree-float"):
            from gbtree.dask import DaskGBTClassifier
            model = DaskGBTClassifier(n_estimators=R, learning_rate=lr,
                                      random_state=spec["seed"], **_shape(lib, spec))
            if lib == "gbtree-float":
                model.set_params(grad_quant_bins=None)
        elif lib == "xgboost":
            from xgboost.dask import DaskXGBClassifier
            model = DaskXGBClassifier(n_estimators=R, learning_rate=lr, **_shape(lib, spec),
                                      tree_method="hist", max_bin=256, reg_lambda=1.0,
                                      min_child_weight=1.0, n_jobs=1)
            model.client = client
        else:
            from lightgbm import DaskLGBMClassifier
            model = DaskLGBMClassifier(n_estimators=R, **_shape(lib, spec),
                                       learning_rate=lr, max_bin=255, reg_lambda=1.0,
                                       min_child_weight=1.0, min_child_samples=1,
                                       n_jobs=1, verbose=-1, client=client)
            if lib == "lightgbm-quantized":
                model.set_params(use_quantized_grad=True,
                                 num_grad_quant_bins=spec["quant_bins"],
                                 quant_train_renew_leaf=True)
        t = time.perf_counter()
        model.fit(X, y)
        fit = time.perf_counter() - t
        after = client.run(maxrss)
        peak = max(after[w] - before[w] for w in after) / 1024
        if lib in ("gbtree", "gbtree-float"):
            proba = model.to_local().predict_proba(X_test)[:, 1]
            s = model.fit_stats_
            stats = dict(round_trips_per_tree=s["round_trips_per_tree"],
                         exchanges_per_tree=s["exchanges_per_tree"],
                         mib_between_workers=s["bytes_between_workers_per_tree"] / 2 ** 20)
        elif lib == "xgboost":
            proba = model.get_booster().inplace_predict(X_test)
        else:
            proba = model.to_local().predict_proba(X_test)[:, 1]
        auc = roc_auc_score(y_test, proba)
        if lib.startswith("gbtree"):
            stats["module_file"] = sys.modules["gbtree"].__file__
        return dict(fit_seconds=fit, peak_worker_mib=peak, auc=auc, score=auc, **stats)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import run_dask_child
    run_dask_child(_child, "dask")
