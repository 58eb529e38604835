"""Sparse input: gbtree, XGBoost and LightGBM fitted on SciPy CSR matrices.

    python -m benchmarks {wide-sparse,onehot} [--rows N] [--rounds R] [--threads T]
                         [--libs gbtree,xgboost,lightgbm] [--json PATH]

Workloads (binary targets; ``--rows`` counts all rows, ``--test-fraction``
(0.2) of them are held out):

``wide-sparse``  1,000,000 x 20,000 CSR of density 0.1 % (about 20 stored
                 values a row, distinct columns drawn with Zipf-like column
                 popularity, as in text), values positive and continuous
                 (tf-idf-like: lognormal term weight x the column's idf); the
                 label comes from a hidden sparse model on 300 of the columns
                 (presence, value and threshold effects, pairwise interactions)
                 with Bernoulli label noise plus 3 % flipped labels.
``onehot``       1,000,000 rows: 20 categorical columns (cardinalities 10..300,
                 1,995 levels in all, Zipf-like level frequencies) one-hot
                 encoded, plus 8 dense float columns appended as CSR columns
                 (2,003 columns, 28 stored values a row); the label depends on
                 category effects, nonlinear dense effects and interactions.

Each library gets the CSR matrix as it is, never densified: gbtree
``fit(X_csr, y)`` / ``predict_proba(X_csr)``; XGBoost ``QuantileDMatrix(X_csr)``
+ ``xgb.train`` / ``inplace_predict(X_csr)`` (XGBoost treats the entries a CSR
matrix does not store as missing, not as 0); LightGBM ``lgb.Dataset(X_csr)`` +
``lgb.train`` / ``predict(X_csr)`` (LightGBM treats them as 0). A library that
raises ``TypeError`` on sparse input (gbtree until its sparse support lands) is
shown as ``unsupported``. Parameters are those of ``runners.py`` (31 leaves,
best-first, no depth limit, 255 value bins, learning rate 0.1, L2 1, min
hessian 1), and every (library, workload) runs in a fresh ``worker.py`` child,
exactly as for ``run.py``; the data are generated once from ``--seed`` and
saved to a temporary directory (X as uncompressed ``.npz`` CSR, y as ``.npy``).
"""
import functools
import time

import numpy as np
import scipy.sparse as sp

import datagen
from common import log
from run import by_lib, fmt, markdown_table, ratio, status_row, threads_text
from runners import Config

WORKLOADS = {
    "wide-sparse": dict(help="sparse input: 1M x 20,000 CSR, density 0.1 %%", rows=1_000_000,
                        rounds=100, leaves=31, libs="gbtree,xgboost,lightgbm",
                        json_name="sparse-wide-sparse"),
    "onehot": dict(help="sparse input: 1M rows, 1,995 one-hot columns + 8 dense, CSR",
                   rows=1_000_000, rounds=100, leaves=31, libs="gbtree,xgboost,lightgbm",
                   json_name="sparse-onehot"),
}
MIB = 2.0 ** 20
BUDGET_EXTRA_MIB = 500          # wide-sparse memory budget: 2 x training CSR + 500 MiB


# ---------------------------------------------------------------------------- wide-sparse
WIDE_COLUMNS = 20_000
WIDE_NNZ_PER_ROW = 20           # density 0.1 %
WIDE_INFORMATIVE = 300
WIDE_PAIRS = 120


@functools.cache
def _wide_model(seed):
    """Column popularity and the hidden model, fixed by the seed (not by the size)."""
    rng = np.random.default_rng([seed, 4, 1])
    rank = np.arange(WIDE_COLUMNS)
    p_rank = 1.0 / (rank + 20.0) ** 1.05               # Zipf-like popularity by rank
    p_rank /= p_rank.sum()
    column_of_rank = rng.permutation(WIDE_COLUMNS)     # popular columns spread over the index range
    p = np.empty(WIDE_COLUMNS)
    p[column_of_rank] = p_rank
    cdf = np.cumsum(p_rank)
    cdf[-1] = 1.0
    idf = np.log(1.0 / (WIDE_NNZ_PER_ROW * p)).astype(np.float32)  # log(rows / rows with it)
    # Informative columns: drawn with weight popularity ** 0.85, so mostly common
    # and mid-frequency columns but some rare ones too (~3.9 of them a row).
    w = p_rank ** 0.85
    info_ranks = rng.choice(WIDE_COLUMNS, WIDE_INFORMATIVE, replace=False, p=w / w.sum())
    info_cols = column_of_rank[np.sort(info_ranks)]    # most popular first
    kind = rng.integers(0, 3, WIDE_INFORMATIVE)        # 0 presence, 1 log value, 2 value threshold
    weight = rng.normal(0.0, 1.4, WIDE_INFORMATIVE)
    threshold = rng.uniform(0.7, 1.6, WIDE_INFORMATIVE)
    # Interactions between pairs of the 80 most popular informative columns.
    top = min(80, WIDE_INFORMATIVE)
    pairs = np.array([rng.choice(top, 2, replace=False) for _ in range(WIDE_PAIRS)])
    pair_weight = rng.normal(0.0, 2.1, WIDE_PAIRS)
    return dict(cdf=cdf, column_of_rank=column_of_rank, idf=idf, info_cols=info_cols, kind=kind,
                weight=weight, threshold=threshold, pairs=pairs, pair_weight=pair_weight)


def _wide_block(rng, n, model):
    """One block: (CSR float32 (n, 20,000), y int8 (n,), true logit (n,))."""
    # Draw ~20 columns a row with replacement, then drop repeats within a row;
    # 20.3 draws on average leave 20 distinct columns.
    k = 1 + rng.poisson(WIDE_NNZ_PER_ROW - 0.7, n)
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = model["column_of_rank"][np.searchsorted(model["cdf"], rng.random(rows.size))]
    keys = np.unique(rows * WIDE_COLUMNS + cols)       # sorted: by row, then column
    rows, cols = keys // WIDE_COLUMNS, (keys % WIDE_COLUMNS).astype(np.int32)
    tf = rng.lognormal(0.0, 0.5, keys.size).astype(np.float32)
    data = tf * model["idf"][cols]
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    X = sp.csr_matrix((data, cols, indptr), shape=(n, WIDE_COLUMNS))

    # Hidden model, on the term weight tf = value / idf of the informative columns.
    T = X[:, model["info_cols"]].tocsc()
    T.data /= model["idf"][model["info_cols"]][np.repeat(np.arange(T.shape[1]), np.diff(T.indptr))]
    present = (T != 0).astype(np.float64)
    logtf = T.copy()
    logtf.data = np.log(logtf.data)
    above = T.copy()
    above.data = (above.data > np.repeat(model["threshold"], np.diff(T.indptr))).astype(np.float64)
    kind, w = model["kind"], model["weight"]
    logit = (present @ (1.2 * w * (kind == 0))
             + logtf @ (2.0 * w * (kind == 1)) + present @ (0.3 * w * (kind == 1))
             + above @ (1.8 * w * (kind == 2)) - present @ (0.4 * w * (kind == 2)))
    present = present.tocsc()
    a, b = model["pairs"].T
    both = present[:, a].multiply(present[:, b])
    logit = logit + both @ model["pair_weight"] - 0.3
    y = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    y ^= rng.random(n) < 0.03                          # label noise on top of the Bernoulli draw
    return X, y.astype(np.int8), logit


# ---------------------------------------------------------------------------- onehot
ONEHOT_CARDINALITIES = (10, 12, 15, 18, 22, 27, 33, 40, 48, 58, 70, 84, 100, 120, 145, 175,
                        210, 250, 270, 288)            # 1,995 levels
ONEHOT_DENSE = 8


@functools.cache
def _onehot_model(seed):
    rng = np.random.default_rng([seed, 4, 2])
    levels = []
    for c, card in enumerate(ONEHOT_CARDINALITIES):
        p = 1.0 / (np.arange(card) + 1.0) ** 1.1         # Zipf-like level frequencies
        p = rng.permutation(p / p.sum())
        cdf = np.cumsum(p)
        cdf[-1] = 1.0
        # Level effects of scale 0.6 and 0.3; columns 2, 5, 8, ... are pure noise.
        scale = 0.6 if c % 3 == 0 else (0.3 if c % 3 == 1 else 0.0)
        levels.append(dict(cdf=cdf, effect=rng.normal(0.0, scale, card),
                           sign=rng.choice([-1.0, 1.0], card)))
    offsets = np.concatenate([[0], np.cumsum(ONEHOT_CARDINALITIES)])
    pair_effect = rng.normal(0.0, 0.8, (ONEHOT_CARDINALITIES[4], ONEHOT_CARDINALITIES[7]))
    return dict(levels=levels, offsets=offsets, pair_effect=pair_effect)


def _onehot_block(rng, n, model):
    """One block: (CSR float32 (n, 2,003), y int8 (n,), true logit (n,))."""
    cats = np.column_stack([np.searchsorted(lv["cdf"], rng.random(n)) for lv in model["levels"]])
    d = np.column_stack([
        rng.normal(0.0, 1.0, n), rng.normal(0.0, 1.0, n), rng.uniform(0.0, 1.0, n),
        rng.lognormal(0.0, 1.0, n), rng.normal(0.0, 1.0, n), rng.exponential(1.0, n),
        rng.normal(0.0, 1.0, n), rng.uniform(-1.0, 1.0, n)])     # the last one is noise
    lv = model["levels"]
    logit = sum(lv[c]["effect"][cats[:, c]] for c in range(len(lv)))
    logit = logit + (1.0 * np.sin(2.0 * d[:, 0]) + 0.8 * (d[:, 1] > 0.5)
                     + 3.0 * (d[:, 2] - 0.5) ** 2 - 0.5 * np.log(d[:, 3]) ** 2 * (d[:, 3] > 1)
                     + 0.6 * lv[1]["sign"][cats[:, 1]] * d[:, 4]          # category x dense
                     + 0.5 * d[:, 0] * d[:, 6]                            # dense x dense
                     + 0.4 * np.minimum(d[:, 5], 3.0) * (cats[:, 3] < 5)
                     + model["pair_effect"][cats[:, 4], cats[:, 7]]        # category x category
                     - 0.5)
    y = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    n_cat, n_cols = len(lv), model["offsets"][-1]
    per_row = n_cat + ONEHOT_DENSE
    indices = np.empty((n, per_row), dtype=np.int32)
    indices[:, :n_cat] = cats + model["offsets"][:-1]
    indices[:, n_cat:] = n_cols + np.arange(ONEHOT_DENSE)
    data = np.ones((n, per_row), dtype=np.float32)
    data[:, n_cat:] = d
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int32)
    X = sp.csr_matrix((data.ravel(), indices.ravel(), indptr), shape=(n, n_cols + ONEHOT_DENSE))
    return X, y.astype(np.int8), logit


GENERATORS = {"wide-sparse": (_wide_block, _wide_model, 1),
              "onehot": (_onehot_block, _onehot_model, 2)}


def _stack(blocks):
    """Row-wise concatenation of CSR blocks, without SciPy's index-dtype promotion."""
    data = np.concatenate([b.data for b in blocks])
    indices = np.concatenate([b.indices for b in blocks])
    index_dtype = np.int32 if data.size < 2 ** 31 else np.int64
    indptr = [np.zeros(1, dtype=index_dtype)]
    for b in blocks:
        indptr.append(b.indptr[1:].astype(index_dtype) + indptr[-1][-1])
    return sp.csr_matrix((data, indices.astype(index_dtype, copy=False), np.concatenate(indptr)),
                         shape=(sum(b.shape[0] for b in blocks), blocks[0].shape[1]))


def make_rows(kind, n, split, seed=0):
    """``(X CSR float32, y int8, true logit)`` of ``n`` rows of one split, in blocks
    of ``datagen.BLOCK_ROWS`` rows, each from its own seed (see datagen.py): the
    first N rows do not depend on how many are asked for."""
    block, make_model, salt = GENERATORS[kind]
    model = make_model(seed)
    parts = []
    for rng, m in datagen.block_rngs(n, split, seed, salt=(4, salt)):
        X, y, logit = block(rng, datagen.BLOCK_ROWS, model)
        parts.append((X[:m], y[:m], logit[:m]))
    Xs, ys, logits = zip(*parts)
    return _stack(Xs), np.concatenate(ys), np.concatenate(logits)


def split_rows(rows, test_fraction):
    n_test = round(rows * test_fraction)
    return rows - n_test, n_test


def csr_mib(X):
    return (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / MIB


# ---------------------------------------------------------------------------- running
def sparse_data(bench, kind, n_train, n_test, seed):
    """(paths, facts) of one sparse data set saved in ``bench``'s folder: X with
    ``scipy.sparse.save_npz``, y as ``.npy``."""
    folder = bench.tmpdir / f"{kind}-{n_train}-{n_test}-{seed}"
    paths = {name: str(folder / f"{name}.{'npz' if name.startswith('X') else 'npy'}")
             for name in ("X_train", "y_train", "X_test", "y_test")}
    log(f"generating {kind}: {n_train:,} train + {n_test:,} test rows (seed {seed})")
    folder.mkdir()
    t0 = time.perf_counter()
    info = {}
    for split, n in (("train", n_train), ("test", n_test)):
        X, y, logit = make_rows(kind, n, split, seed=seed)
        sp.save_npz(paths[f"X_{split}"], X, compressed=False)
        np.save(paths[f"y_{split}"], y)
        info[split] = dict(rows=X.shape[0], columns=X.shape[1], nnz=int(X.nnz),
                           density=X.nnz / (X.shape[0] * X.shape[1]),
                           csr_mib=csr_mib(X), positive_rate=float(y.mean()))
        if split == "test":
            from sklearn.metrics import roc_auc_score
            info["test"]["bayes_auc"] = float(roc_auc_score(y, logit))
        del X
    info["generate_seconds"] = time.perf_counter() - t0
    log(f"  generated in {info['generate_seconds']:.1f} s: train CSR "
        f"{info['train']['nnz']:,} stored values, {info['train']['csr_mib']:.0f} MiB; "
        f"test AUC of the true logit {info['test']['bayes_auc']:.4f}")
    return paths, info


def sparse_table(results, budget_csr_mib=None):
    """One row per library; with ``budget_csr_mib``, the memory budget columns too."""
    ref = by_lib(results).get("gbtree", {})
    headers = ["library", "version", "fit s", "fit CPU s", "bin s", "predict s", "peak RSS MiB",
               "Δ RSS MiB"]
    if budget_csr_mib is not None:
        budget = 2 * budget_csr_mib + BUDGET_EXTRA_MIB
        headers += ["train CSR MiB", "budget MiB", "peak ÷ budget"]
    headers += ["test AUC", "fit ÷ gbtree", "predict ÷ gbtree"]
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append(status_row(r, len(headers)))
            continue
        row = [r["lib"], r["version"], fmt(r["fit_seconds"]), fmt(r.get("fit_cpu_seconds")),
               fmt(r["bin_seconds"]),
               fmt(r["predict_seconds"], 3), fmt(r["peak_rss_mib"], 0),
               fmt(r["peak_rss_mib"] - r["base_rss_mib"], 0)]
        if budget_csr_mib is not None:
            row += [fmt(budget_csr_mib, 0), fmt(budget, 0), fmt(r["peak_rss_mib"] / budget, 2)]
        row += [fmt(r["score"], 4), ratio(r["fit_seconds"], ref.get("fit_seconds")),
                ratio(r["predict_seconds"], ref.get("predict_seconds"))]
        rows.append(row)
    return markdown_table(headers, rows)


def add_arguments(p, name):
    p.add_argument("--test-fraction", type=float, default=0.2,
                   help="share of --rows held out for testing (default 0.2); --rows counts "
                        "train + test rows here, --test-rows is not used")


def run(name, args, bench):
    n_train, n_test = split_rows(args.rows, args.test_fraction)
    cfg = Config(task="binary", rounds=args.rounds, learning_rate=args.learning_rate,
                 leaves=args.leaves, max_bin=args.max_bin, threads=args.threads, seed=args.seed)
    data, info = sparse_data(bench, name, n_train, n_test, args.seed)
    bench.run_libs("fit-predict", cfg, data, rows=n_train)
    train, test = info["train"], info["test"]
    csr = train["csr_mib"] if name == "wide-sparse" else None
    table = sparse_table(bench.results, budget_csr_mib=csr)
    header = (f"{name}: {n_train:,} train + {n_test:,} test rows x {train['columns']:,} "
              f"columns, CSR float32 with {train['nnz'] / n_train:.1f} stored values a row "
              f"(density {100 * train['density']:.3f} %), train CSR {train['csr_mib']:.0f} MiB, "
              f"test CSR {test['csr_mib']:.0f} MiB; positive rate {train['positive_rate']:.3f}, "
              f"test AUC of the true logit {test['bayes_auc']:.4f}; {cfg.rounds} rounds, "
              f"{cfg.leaves} leaves, lr {cfg.learning_rate}, {cfg.max_bin} bins, "
              f"{threads_text(cfg.threads)}; data generated in {info['generate_seconds']:.0f} s")
    if csr is not None:
        header += (f"; budget = 2 x train CSR + {BUDGET_EXTRA_MIB} MiB, compared with the peak RSS "
                   f"(which also holds the test CSR)")
    return {"header": header, "table": table, "train_rows": n_train, "test_rows": n_test,
            "data": info, "budget_mib": None if csr is None else 2 * csr + BUDGET_EXTRA_MIB}
