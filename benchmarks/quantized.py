"""Quantised gradients: workloads 1 and 2 fit on quantised gradients and on float
ones, by gbtree (its default, and ``grad_quant_bins=None``) and by LightGBM
(``use_quantized_grad``, and its default); and the test metric of both on every
data set of the benchmarks and the shipped data, over several seeds.

    python -m benchmarks higgs-like-quantized [--repeat 3]
    python -m benchmarks regression-wide-quantized [--repeat 3]
    python -m benchmarks quantized-accuracy [--seeds 5] [--rows N]

The data and settings of the ``higgs-like`` and ``regression-wide`` workloads;
quantised gradients have ``runners.QUANT_BINS`` levels, and the leaf values
come from the exact gradients (gbtree always, LightGBM with
``quant_train_renew_leaf``). The table is the core workloads' one, so the fit
time and the test score of each variant sit side by side.
"""
import dataclasses
import statistics
import time

import numpy as np

from common import REPO_ROOT, use_checkout_build
from run import WORKLOADS as CORE_WORKLOADS
from run import fmt, log, markdown_table, positive_int, threads_text, workload_compare
from runners import QUANT_BINS, Config

SHIPPED = REPO_ROOT / "tests" / "data"

LIBS = "gbtree,gbtree-float,lightgbm,lightgbm-quantized"

WORKLOADS = {
    f"{name}-quantized": dict(CORE_WORKLOADS[name], libs=LIBS,
                              help=f"{name} on float and on quantised gradients "
                                   f"(gbtree and LightGBM)")
    for name in ("higgs-like", "regression-wide")
}


def run(name, args, bench):
    if name == "quantized-accuracy":
        return run_accuracy(args, bench)
    settings = dict(WORKLOADS[name])
    settings.update({key: getattr(args, key) for key in ("rows", "test_rows", "rounds", "leaves")
                     if getattr(args, key, None) is not None})
    header, table = workload_compare(bench, settings, args)
    return {"header": header, "table": table, "settings": settings}


# ---------------------------------------------------------------------------- accuracy
# ``quantized-accuracy``: the test metric of float and of quantised gradients on
# every benchmark data set and on the shipped data, over several seeds (another
# draw of the generated data, or other folds of the shipped data, and another
# rounding of the gradients), paired seed by seed.
ACCURACY_HELP = ("test metric of float and quantised gradients on every benchmark data set "
                 "and tests/data, paired over seeds")
WORKLOADS["quantized-accuracy"] = {"help": ACCURACY_HELP, "libs": "gbtree"}
HIGHER_IS_BETTER = {"auc": True, "ndcg@10": True, "rmse": False, "mlogloss": False}
METRIC_NAMES = {"auc": "AUC", "ndcg@10": "NDCG@10", "rmse": "RMSE", "mlogloss": "log loss"}


def add_arguments(p, name):
    if name == "quantized-accuracy":
        p.add_argument("--seeds", type=positive_int, default=5,
                       help="seeds per data set, 0 .. N-1 (default 5)")


def _generated(kind, rows, test_rows, leaves, rounds=100):
    """A benchmark data set of datagen.py at its workload's size and settings."""
    def splits(args, seed):
        from datagen import CLASSES, N_TARGETS, TASKS, make_dataset
        X, y, X_test, y_test = make_dataset(kind, args.rows or rows,
                                            args.test_rows or test_rows, seed)
        cfg = Config(task=TASKS[kind], rounds=args.rounds or rounds,
                     leaves=args.leaves or leaves, n_classes=CLASSES.get(kind, 2),
                     n_targets=N_TARGETS if kind == "multi-target" else 1)
        yield cfg, None, (X, y, None, None), (X_test, y_test, None)
    return splits


def _categorical(task):
    """The ``categorical`` workload's frame (its gbtree settings)."""
    def splits(args, seed):
        from categorical import make_data, make_model
        X, y, X_test, y_test = make_data(args.rows or 200_000, task, seed)
        cfg = Config(task=task, rounds=args.rounds or 200, leaves=args.leaves or 63)
        yield cfg, lambda cfg: make_model("gbtree", task, cfg)[0], (X, y, None, None), \
            (X_test, y_test, None)
    return splits


def _mslr_like(args, seed):
    """The ``ranking`` workload's synthetic queries, 2,000 of 100 documents."""
    from ranking import make_mslr_like
    docs = 100
    queries = max(2, (args.rows or 200_000) // docs)
    X, y, qid = make_mslr_like(queries, docs, seed=seed)
    n = int(0.8 * queries) * docs
    cfg = Config(task="ranking", rounds=args.rounds or 100, leaves=args.leaves or 31,
                 min_child_weight=1e-3)
    yield cfg, None, (X[:n], y[:n], qid[:n], None), (X[n:], y[n:], qid[n:])


def _binary_train(weighted):
    """tests/data/binary.train (LightGBM's binary example): 5 folds shuffled by the seed."""
    def splits(args, seed):
        from sklearn.model_selection import StratifiedKFold
        data = np.loadtxt(SHIPPED / "binary.train")
        X, y = data[:, 1:], data[:, 0]
        w = np.loadtxt(SHIPPED / "binary.train.weight") if weighted else None
        cfg = Config(task="binary", rounds=args.rounds or 200, learning_rate=0.05,
                     leaves=args.leaves or 31)
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
            yield cfg, None, (X[tr], y[tr], None, None if w is None else w[tr]), \
                (X[te], y[te], None)
    return splits


def _rank_train(args, seed):
    """tests/data/rank.train (LightGBM's lambdarank example): 5 folds of its queries,
    shuffled by the seed."""
    from ranking import load_real
    from sklearn.model_selection import GroupKFold
    X, y, qid = load_real()
    order = np.random.RandomState(seed).permutation(qid.max() + 1)
    cfg = Config(task="ranking", rounds=args.rounds or 100, leaves=args.leaves or 31,
                 min_child_weight=1e-3)
    for tr, te in GroupKFold(5).split(X, y, order[qid]):
        yield cfg, None, (X[tr], y[tr], qid[tr], None), (X[te], y[te], qid[te])


ACCURACY_SETS = {
    "higgs-like": _generated("higgs-like", 1_000_000, 250_000, 255),
    "regression-wide": _generated("regression-wide", 500_000, 100_000, 255),
    "multiclass": _generated("multiclass", 200_000, 50_000, 63),
    "multi-target": _generated("multi-target", 200_000, 50_000, 255),
    "categorical regression": _categorical("regression"),
    "categorical binary": _categorical("binary"),
    "MS-LTR-like ranking": _mslr_like,
    "tests/data/binary.train": _binary_train(False),
    "tests/data/binary.train, weighted": _binary_train(True),
    "tests/data/rank.train": _rank_train,
}


def run_accuracy(args, bench):
    use_checkout_build()
    from runners import GbtreeRunner, estimator_scores, quality
    runner = GbtreeRunner()
    rows = []
    for name, splits in ACCURACY_SETS.items():
        log(name)
        scores = {0: [], QUANT_BINS: []}      # levels -> the seeds' test metrics
        seconds = {0: [], QUANT_BINS: []}
        for seed in range(args.seeds):
            fold_scores = {levels: [] for levels in scores}
            fold_seconds = {levels: 0.0 for levels in scores}
            for cfg, make, (X, y, qid, w), (X_test, y_test, qid_test) in splits(args, seed):
                cfg = dataclasses.replace(cfg, threads=args.threads, seed=seed,
                                          max_bin=args.max_bin)
                shape = f"{len(y):,} x {X.shape[1]}"
                fit_args = dict(runner.fit_group(cfg, qid))
                if w is not None:
                    fit_args["sample_weight"] = w
                for levels in scores:
                    est = (make or runner.estimator)(cfg).set_params(
                        grad_quant_bins=levels or None)
                    t0 = time.perf_counter()
                    est.fit(X, y, **fit_args)
                    fold_seconds[levels] += time.perf_counter() - t0
                    metric, value = quality(cfg, y_test, estimator_scores(cfg, est, X_test),
                                            qid=qid_test)
                    fold_scores[levels].append(value)
            for levels, values in scores.items():
                values.append(float(np.mean(fold_scores[levels])))
                seconds[levels].append(fold_seconds[levels])
        exact, quantised = np.array(scores[0]), np.array(scores[QUANT_BINS])
        diff = quantised - exact
        sign = 1 if HIGHER_IS_BETTER[metric] else -1
        error = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
        bench.results.append({"lib": "gbtree", "status": "ok", "data_set": name, "metric": metric,
                              "float": scores[0], "quantized": scores[QUANT_BINS],
                              "fit_seconds_float": seconds[0],
                              "fit_seconds_quantized": seconds[QUANT_BINS]})
        rows.append([name, shape, METRIC_NAMES[metric], fmt(exact.mean(), 4),
                     fmt(quantised.mean(), 4),
                     f"{diff.mean():+.5f} ± {error:.5f}",
                     f"{int((sign * diff >= 0).sum())} of {diff.size}",
                     fmt(statistics.median(np.divide(seconds[QUANT_BINS], seconds[0])), 2, "×")])
    header = (f"gbtree on float gradients and with `grad_quant_bins={QUANT_BINS}`, seeds 0 to "
              f"{args.seeds - 1} (the data drawn anew, or the folds shuffled, and the "
              f"gradients rounded anew), {threads_text(args.threads)}; each data set at its "
              f"workload's settings")
    table = markdown_table(["data set", "train rows x features", "metric", "float",
                            f"grad_quant_bins={QUANT_BINS}",
                            "quantised − float: mean ± s.e.", "quantised as good or better",
                            "fit ÷ float"], rows)
    return {"header": header, "table": table, "seeds": args.seeds}
