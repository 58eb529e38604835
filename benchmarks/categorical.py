"""Categorical features: gbtree's ordered target statistics against the peers' own handling.

    python benchmarks/categorical.py [--task regression|binary|even] [--rows 200000]
                                     [--rounds 200] [--threads 2] [--json PATH]

The data (fixed seed): three categorical columns of 20, 2,000 and 50,000 distinct
values, each category with its own effect on the target (drawn from a normal
distribution, the largest column's effect the weakest), one interaction between
the small column and a numeric feature, and 8 numeric features of which 4 carry
signal. ``--rows`` training rows and half as many test rows; the test rows hold
categories the training rows never saw (the large column's rarest values).

``--task even``: a regression on one categorical column of 2,000 evenly spread
values (about 10 rows each at ``--rows 20000``), with an effect of variance 1
per category, plus one numeric feature and noise of variance 0.25.

Every library fits the same frame, at the same learning rate, rounds, threads and
L2, with trees of about the same size (63 leaves best-first; CatBoost's
symmetric trees: depth 6), each with its way of handling the categorical columns:

- ``gbtree``: ``categorical_features`` (the small column ordinal codes, the two
  others CatBoost's ordered target statistics, their prior weights estimated,
  ``cat_smooth="auto"``); ``gbtree cat_smooth=1`` / ``=10`` the same with a
  fixed prior weight; ``gbtree statistics only`` with ``max_cat_to_ordinal=0``
  (statistics for the small column too);
- ``gbtree codes``: the category codes read as numbers (what gbtree did before);
- ``gbtree + TargetEncoder``: scikit-learn's cross-fitted target encoding in front;
- ``catboost``: ``cat_features`` (its ordered statistics and combinations);
- ``lightgbm``: pandas ``category`` columns (its native many-vs-many splits);
- ``xgboost``: ``enable_categorical=True`` (partition splits);
- ``sklearn``: ``HistGradientBoosting*`` with native categories for the small
  column (it allows at most 255 categories) and TargetEncoder for the two others.

Each fit runs in a child process (fork): the table gives fit and predict
seconds, the child's peak RSS over what it held at its start, and the test
metric (RMSE, or AUC and log loss).
"""
import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)   # the checkout's in-place build of gbtree first

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


GBTREE_CATEGORICAL = ("gbtree", "gbtree cat_smooth=1", "gbtree cat_smooth=10",
                      "gbtree statistics only")


def _target_encoder(reg):
    from sklearn.model_selection import KFold
    from sklearn.preprocessing import TargetEncoder
    return TargetEncoder(target_type="continuous" if reg else "binary",
                         cv=KFold(5, shuffle=True, random_state=0))


def make_model(lib, task, a):
    """(estimator, function that turns the frame into what it fits on)."""
    reg = task != "binary"
    cat = CAT if task != "even" else CAT[:1]
    same = lambda df: df  # noqa: E731
    if lib.startswith("gbtree"):
        from gbtree import GBTClassifier, GBTRegressor
        est = (GBTRegressor if reg else GBTClassifier)(
            n_estimators=a.rounds, learning_rate=a.lr, grow_policy="lossguide", max_depth=0,
            max_leaves=63, reg_lambda=1.0, n_jobs=a.threads,
            categorical_features=cat if lib in GBTREE_CATEGORICAL else None,
            cat_smooth=float(lib.split("=")[1]) if "cat_smooth=" in lib else "auto",
            max_cat_to_ordinal=0 if lib == "gbtree statistics only" else 32)
        if lib in GBTREE_CATEGORICAL:
            return est, same
        if lib == "gbtree codes":
            return est, _codes
        from sklearn.compose import make_column_transformer
        from sklearn.pipeline import make_pipeline
        enc = make_column_transformer(
            (_target_encoder(reg), cat),
            remainder="passthrough")
        return make_pipeline(enc, est), _codes
    if lib == "catboost":
        import catboost
        cls = catboost.CatBoostRegressor if reg else catboost.CatBoostClassifier
        est = cls(iterations=a.rounds, learning_rate=a.lr, depth=6, l2_leaf_reg=1.0,
                  thread_count=a.threads, verbose=0, cat_features=cat, random_seed=0,
                  allow_writing_files=False)
        return est, lambda df: df.astype({c: np.int64 for c in cat})
    if lib == "lightgbm":
        import lightgbm as lgb
        cls = lgb.LGBMRegressor if reg else lgb.LGBMClassifier
        return cls(n_estimators=a.rounds, learning_rate=a.lr, num_leaves=63, max_depth=-1,
                   reg_lambda=1.0, n_jobs=a.threads, verbose=-1), same
    if lib == "xgboost":
        import xgboost as xgb
        cls = xgb.XGBRegressor if reg else xgb.XGBClassifier
        return cls(n_estimators=a.rounds, learning_rate=a.lr, tree_method="hist",
                   grow_policy="lossguide", max_leaves=63, max_depth=0, reg_lambda=1.0,
                   n_jobs=a.threads, enable_categorical=True, max_cat_to_onehot=1), same
    if lib == "sklearn":
        from sklearn.compose import make_column_transformer
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        from sklearn.pipeline import make_pipeline
        cls = HistGradientBoostingRegressor if reg else HistGradientBoostingClassifier
        enc = make_column_transformer(
            (_target_encoder(reg), cat[1:] if task != "even" else cat),
            remainder="passthrough", verbose_feature_names_out=False).set_output(
                transform="pandas")
        est = cls(max_iter=a.rounds, learning_rate=a.lr, max_leaf_nodes=63, max_depth=None,
                  l2_regularization=1.0, early_stopping=False,
                  categorical_features=["c0"] if task != "even" else None)
        return make_pipeline(enc, est), same
    raise ValueError(lib)


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run_one(lib, task, a, data, queue):
    try:
        os.environ["OMP_NUM_THREADS"] = str(a.threads)
        X, y, Xt, yt = data
        start_rss = _rss_kib()
        est, prep = make_model(lib, task, a)
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
            metric = {"rmse": float(np.sqrt(np.mean((pred - yt) ** 2)))}
        else:
            metric = {"auc": float(roc_auc_score(yt, pred)),
                      "logloss": float(log_loss(yt, np.clip(pred, 1e-15, 1 - 1e-15)))}
        queue.put(dict(lib=lib, fit_s=fit_s, predict_s=predict_s,
                       delta_rss_mib=(peak - start_rss) / 1024, **metric))
    except Exception as exc:   # noqa: BLE001 - reported in the table
        queue.put(dict(lib=lib, error=f"{type(exc).__name__}: {exc}"[:200]))


LIBS = ["gbtree", "gbtree cat_smooth=1", "gbtree cat_smooth=10", "gbtree statistics only",
        "gbtree codes",
        "gbtree + TargetEncoder", "catboost", "lightgbm", "xgboost", "sklearn"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=["regression", "binary", "even"], default="regression")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    data = make_even(a.rows) if a.task == "even" else make_data(a.rows, a.task)
    what = ("one categorical column of 2000 evenly spread values + 1 numeric"
            if a.task == "even" else f"categorical columns of "
            f"{', '.join(map(str, CARDINALITIES))} values + 8 numeric")
    print(f"{a.task}: {a.rows} train + {len(data[3])} test rows, {what}; {a.rounds} rounds, "
          f"lr {a.lr}, {a.threads} threads", flush=True)
    # imported here, before the children fork, so that their peak RSS is the fit's
    for module in ("gbtree", "sklearn.ensemble", "sklearn.preprocessing", "catboost",
                   "lightgbm", "xgboost"):
        try:
            __import__(module)
        except ImportError:
            pass
    ctx = mp.get_context("fork")
    results = []
    for lib in a.libs.split(","):
        queue = ctx.Queue()
        p = ctx.Process(target=run_one, args=(lib, a.task, a, data, queue))
        p.start()
        res = queue.get()
        p.join()
        results.append(res)
        print(f"  {lib}: {res}", flush=True)
    key = "auc" if a.task == "binary" else "rmse"
    base = next((r for r in results if r["lib"] == "gbtree" and "error" not in r), None)
    head = ["library", "fit s", "predict s", "Δ peak RSS MiB", key.upper()]
    if a.task == "binary":
        head.append("log loss")
    head.append("fit ÷ gbtree")
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in results:
        if "error" in r:
            print(f"| {r['lib']} | failed: {r['error']} |")
            continue
        cells = [r["lib"], f"{r['fit_s']:.2f}", f"{r['predict_s']:.3f}",
                 f"{r['delta_rss_mib']:.0f}", f"{r[key]:.4f}"]
        if a.task == "binary":
            cells.append(f"{r['logloss']:.4f}")
        cells.append(f"{r['fit_s'] / base['fit_s']:.2f}×" if base else "")
        print("| " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(args=vars(a), machine=platform.platform(), cpus=os.cpu_count(),
                           results=results), f, indent=1)


if __name__ == "__main__":
    main()
