"""Categorical features: gbtree's ordered target statistics against the peers' own handling.

    python -m benchmarks categorical [--task regression|binary|even] [--rows 200000]
                                     [--rounds 200] [--threads 2] [--data-seed 0]
                                     [--json PATH]

The data (``--data-seed``, 0 by default): three categorical columns of 20, 2,000 and 50,000 distinct
values, each category with its own effect on the target (drawn from a normal
distribution, the largest column's effect the weakest), one interaction between
the small column and a numeric feature, and 8 numeric features of which 4 carry
signal. ``--rows`` training rows and half as many test rows; the test rows hold
categories the training rows never saw (the large column's rarest values).

``--task even``: a regression on one categorical column of 2,000 evenly spread
values (about 10 rows each at ``--rows 20000``), with an effect of variance 1
per category, plus one numeric feature and noise of variance 0.25.

Every library fits the same frame at the settings of runners.py (learning
rate, rounds, threads, L2, bins, leaf constraints) with trees of about the same
size (63 leaves best-first; CatBoost's symmetric trees: depth 6), each with its
way of handling the categorical columns (set here, on top of runners.py's
estimator):

- ``gbtree``: ``categorical_features`` (the small column ordinal codes and one
  indicator column per category, the two others CatBoost's ordered target
  statistics, their prior weights estimated, ``cat_smooth="auto"``);
  ``gbtree-no-indicators`` the same without the indicator columns
  (``max_cat_to_onehot=0``); ``gbtree-smooth1`` / ``gbtree-smooth10`` the same with
  a fixed prior weight; ``gbtree-statistics`` with ``max_cat_to_ordinal=0``
  (statistics for the small column too);
- ``gbtree-symmetric`` / ``gbtree-ordered``: ``categorical_features`` with
  symmetric trees of depth 6, and with ordered boosting too;
- ``gbtree-codes``: the category codes read as numbers;
- ``gbtree-target-encoder``: scikit-learn's cross-fitted target encoding in front;
- ``catboost``: ``cat_features`` (its ordered statistics and combinations);
  ``catboost-ordered`` the same with ``boosting_type="Ordered"``;
- ``lightgbm``: pandas ``category`` columns (its native many-vs-many splits);
- ``xgboost``: ``enable_categorical=True`` (partition splits);
- ``sklearn``: ``HistGradientBoosting*`` with native categories for the small
  column (it allows at most 255 categories) and TargetEncoder for the two others.

Each fit runs in its own child process, forked from the one that made the
data (so the frame is not saved and loaded): the table gives fit and predict
seconds, the child's peak RSS over what it held at its start, and the test
metric (RMSE, or AUC and log loss). ``--libs`` takes these names, or ``all``
(the default).
"""
import multiprocessing as mp
import resource
import time

import numpy as np

from common import use_checkout_build
from run import markdown_table
from runners import RUNNERS, Config

WORKLOADS = {
    "categorical": dict(help="categorical columns of 20, 2,000 and 50,000 values: gbtree's "
                             "categorical_features against the peers' own handling",
                        rows=200_000, rounds=200, leaves=63, libs="all"),
}

CARDINALITIES = (20, 2_000, 50_000)
EFFECT_SCALE = (1.0, 0.8, 0.5)


def make_data(rows, task, seed=0):
    """(train frame, y, test frame, y) with pandas ``category`` columns c0..c2."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    n = rows + rows // 2
    frame = {}
    signal = np.zeros(n)
    x = rng.normal(size=(n, 8)).astype(np.float32)
    for k, (card, scale) in enumerate(zip(CARDINALITIES, EFFECT_SCALE)):
        # Zipf-like frequencies: a few common categories and a long tail
        p = 1.0 / np.arange(1, card + 1) ** 0.8
        codes = rng.choice(card, size=n, p=p / p.sum())
        effect = rng.normal(0, scale, card)
        signal += effect[codes]
        if k == 0:
            signal += np.where(codes % 2 == 0, 1.0, -1.0) * x[:, 0]
        frame[f"c{k}"] = codes
    signal += x[:, 1] + np.sin(2 * x[:, 2]) + 0.5 * x[:, 3] ** 2
    for j in range(8):
        frame[f"x{j}"] = x[:, j]
    if task == "regression":
        y = signal + rng.normal(0, 1.0, n)
    else:
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(signal - signal.mean())))).astype(int)
    df = pd.DataFrame(frame)
    for k, card in enumerate(CARDINALITIES):
        df[f"c{k}"] = pd.Categorical(df[f"c{k}"], categories=np.arange(card))
    return df.iloc[:rows], y[:rows], df.iloc[rows:].reset_index(drop=True), y[rows:]


CAT = [f"c{k}" for k in range(len(CARDINALITIES))]


def make_even(rows, seed=0):
    """``--task even``: (train frame, y, test frame, y) with one column c0."""
    import pandas as pd
    effect = np.random.default_rng(99).normal(0, 1, 2000)

    def part(n, seed):
        rng = np.random.default_rng(seed)
        codes = rng.integers(0, 2000, n)
        x = rng.normal(size=n).astype(np.float32)
        y = effect[codes] + 0.5 * x + rng.normal(0, 0.5, n)
        return pd.DataFrame({"c0": pd.Categorical(codes, categories=np.arange(2000)),
                             "x0": x}), y

    (X, y), (Xt, yt) = part(rows, seed), part(rows, seed + 1)
    return X, y, Xt, yt


def _codes(df):
    out = df.copy()
    for c in [c for c in CAT if c in df.columns]:
        out[c] = out[c].cat.codes.astype(np.float32)
    return out


# gbtree variants with categorical_features: name -> its categorical settings
SYMMETRIC = {"grow_policy": "symmetric", "max_depth": 6, "max_leaves": 0}
GBTREE_CATEGORICAL = {"gbtree": {}, "gbtree-no-indicators": {"max_cat_to_onehot": 0},
                      "gbtree-smooth1": {"cat_smooth": 1.0},
                      "gbtree-smooth10": {"cat_smooth": 10.0},
                      "gbtree-statistics": {"max_cat_to_ordinal": 0},
                      "gbtree-symmetric": SYMMETRIC,
                      "gbtree-ordered": {**SYMMETRIC, "boosting_type": "ordered"}}
LABELS = {"gbtree": "gbtree",
          "gbtree-no-indicators": "gbtree without indicator columns (`max_cat_to_onehot=0`)",
          "gbtree-smooth1": "gbtree, `cat_smooth=1`",
          "gbtree-smooth10": "gbtree, `cat_smooth=10`",
          "gbtree-statistics": "gbtree, statistics only (`max_cat_to_ordinal=0`)",
          "gbtree-symmetric": "gbtree, symmetric trees of depth 6",
          "gbtree-ordered": "gbtree, symmetric trees, `boosting_type=\"ordered\"`",
          "gbtree-codes": "gbtree on the codes as numbers",
          "gbtree-target-encoder": "gbtree behind scikit-learn's `TargetEncoder`",
          "catboost": "CatBoost (`cat_features`)",
          "catboost-ordered": "CatBoost (`cat_features`, `boosting_type=\"Ordered\"`)",
          "lightgbm": "LightGBM (pandas `category`)",
          "xgboost": "XGBoost (`enable_categorical`)",
          "sklearn": "scikit-learn HGB (native for the 20 values, `TargetEncoder` for the others)"}
# the runner of runners.py each name starts from
RUNNER_OF = {"catboost": "catboost-symmetric", "catboost-ordered": "catboost-symmetric",
             "lightgbm": "lightgbm", "xgboost": "xgboost",
             "sklearn": "sklearn"}


def _target_encoder(reg):
    from sklearn.model_selection import KFold
    from sklearn.preprocessing import TargetEncoder
    return TargetEncoder(target_type="continuous" if reg else "binary",
                         cv=KFold(5, shuffle=True, random_state=0))


def make_model(lib, task, cfg):
    """(estimator, function that turns the frame into what it fits on): runners.py's
    estimator for the library with its categorical handling set on top."""
    reg = task != "binary"
    cat = CAT if task != "even" else CAT[:1]
    same = lambda df: df  # noqa: E731
    est = RUNNERS[RUNNER_OF.get(lib, "gbtree")].estimator(cfg)
    if lib in GBTREE_CATEGORICAL:
        return est.set_params(categorical_features=cat, **GBTREE_CATEGORICAL[lib]), same
    if lib == "gbtree-codes":
        return est, _codes
    if lib == "gbtree-target-encoder":
        from sklearn.compose import make_column_transformer
        from sklearn.pipeline import make_pipeline
        enc = make_column_transformer((_target_encoder(reg), cat), remainder="passthrough")
        return make_pipeline(enc, est), _codes
    if lib in ("catboost", "catboost-ordered"):   # symmetric trees of depth 6: 64 leaves
        est.set_params(depth=6, cat_features=cat,
                       boosting_type="Ordered" if lib == "catboost-ordered" else "Plain")
        return est, lambda df: df.astype({c: np.int64 for c in cat})
    if lib == "lightgbm":       # pandas category columns are LightGBM's categorical ones
        return est, same
    if lib == "xgboost":
        return est.set_params(enable_categorical=True, max_cat_to_onehot=1), same
    if lib == "sklearn":
        from sklearn.compose import make_column_transformer
        from sklearn.pipeline import make_pipeline
        enc = make_column_transformer(
            (_target_encoder(reg), cat[1:] if task != "even" else cat),
            remainder="passthrough", verbose_feature_names_out=False).set_output(
                transform="pandas")
        est.set_params(categorical_features=["c0"] if task != "even" else None)
        return make_pipeline(enc, est), same
    raise ValueError(lib)


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run_one(lib, task, cfg, data, queue):
    try:
        X, y, Xt, yt = data
        start_rss = _rss_kib()
        est, prep = make_model(lib, task, cfg)
        t0 = time.perf_counter()
        Xf = prep(X)
        est.fit(Xf, y)
        fit_s = time.perf_counter() - t0
        Xtf = prep(Xt)
        t0 = time.perf_counter()
        if task != "binary":
            pred = est.predict(Xtf)
        else:
            pred = est.predict_proba(Xtf)[:, 1]
        predict_s = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB on Linux
        from sklearn.metrics import log_loss, roc_auc_score
        if task != "binary":
            metric = {"metric": "rmse", "score": float(np.sqrt(np.mean((pred - yt) ** 2)))}
        else:
            metric = {"metric": "auc", "score": float(roc_auc_score(yt, pred)),
                      "logloss": float(log_loss(yt, np.clip(pred, 1e-15, 1 - 1e-15)))}
        runner = RUNNERS[RUNNER_OF.get(lib, "gbtree")]
        module = __import__(runner.module)
        queue.put(dict(lib=lib, status="ok", fit_seconds=fit_s, predict_seconds=predict_s,
                       delta_rss_mib=(peak - start_rss) / 1024, version=runner.load(),
                       module_file=module.__file__, **metric))
    except Exception as exc:   # noqa: BLE001 - reported in the table
        queue.put(dict(lib=lib, status="failed", error=f"{type(exc).__name__}: {exc}"[:200]))


def resolve_libs(text):
    """--libs: names of LABELS, comma-separated, or "all"."""
    names = list(LABELS) if text == "all" else [s.strip() for s in text.split(",") if s.strip()]
    unknown = [name for name in names if name not in LABELS]
    if unknown:
        raise SystemExit(f"unknown library {unknown[0]!r} for the categorical workload; "
                         f"known: {', '.join(LABELS)} (or all)")
    return names


def add_arguments(p, name):
    p.add_argument("--task", choices=["regression", "binary", "even"], default="regression",
                   help="regression (default) or binary on three categorical columns, or even: "
                        "one column of 2,000 evenly spread values")
    p.add_argument("--data-seed", type=int, default=0,
                   help="the seed of the data (default 0); other seeds draw other data of "
                        "the same kind, to see the spread of the test metric")


def run(name, args, bench):
    use_checkout_build()
    cfg = Config(task="binary" if args.task == "binary" else "regression", rounds=args.rounds,
                 learning_rate=args.learning_rate, leaves=args.leaves, max_bin=args.max_bin,
                 threads=args.threads, seed=args.seed)
    data = (make_even(args.rows, args.data_seed) if args.task == "even"
            else make_data(args.rows, args.task, args.data_seed))
    what = ("one categorical column of 2000 evenly spread values + 1 numeric"
            if args.task == "even" else f"categorical columns of "
            f"{', '.join(map(str, CARDINALITIES))} values + 8 numeric")
    # imported here, before the children fork, so that their peak RSS is the fit's
    for module in ("gbtree", "sklearn.ensemble", "sklearn.preprocessing", "catboost",
                   "lightgbm", "xgboost"):
        try:
            __import__(module)
        except ImportError:
            pass
    ctx = mp.get_context("fork")
    for lib in bench.libs:
        queue = ctx.Queue()
        p = ctx.Process(target=run_one, args=(lib, args.task, cfg, data, queue))
        p.start()
        res = queue.get()
        p.join()
        bench.results.append(res)
    binary = args.task == "binary"
    base = next((r for r in bench.results if r["lib"] == "gbtree" and r["status"] == "ok"), None)
    head = ["library", "fit s", "predict s", "Δ peak RSS MiB",
            "test AUC" if binary else "test RMSE"] + (["log loss"] if binary else []) \
        + ["fit ÷ gbtree"]
    rows = []
    for r in bench.results:
        if r["status"] != "ok":
            rows.append([LABELS[r["lib"]], f"failed: {r['error']}"] + [""] * (len(head) - 2))
            continue
        cells = [LABELS[r["lib"]], f"{r['fit_seconds']:.2f}", f"{r['predict_seconds']:.3f}",
                 f"{r['delta_rss_mib']:.0f}", f"{r['score']:.4f}"]
        if binary:
            cells.append(f"{r['logloss']:.4f}")
        cells.append(f"{r['fit_seconds'] / base['fit_seconds']:.2f}×" if base else "–")
        rows.append(cells)
    header = (f"{args.task}: {args.rows:,} train + {len(data[3]):,} test rows, {what}; "
              f"{cfg.rounds} rounds, lr {cfg.learning_rate}, {cfg.leaves} leaves, "
              f"{cfg.threads} threads")
    return {"header": header, "table": markdown_table(head, rows), "task": args.task}
