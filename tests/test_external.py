"""Out-of-core training (``gbtree.ExternalData``): the fit grows the in-memory fit's
trees (same rows, same bin edges) whatever the chunks and blocks, and leaves no
cache behind."""
import errno
import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from gbtree import ExternalData, GBTClassifier, GBTRanker, GBTRegressor
from gbtree.distributed import blocks
from _levelwise import (CONSTRAINTS, assert_constrained, assert_saves_loads_and_explains,
                        assert_same_trees, integer_data)


def _chunked(X, y, w=None, sizes=(500,), kind=np.asarray):
    """A source giving X, y (and w) in chunks of ``sizes`` (cycled) rows, X through
    ``kind`` (an array, a sparse matrix, a DataFrame)."""
    def source():
        i, k = 0, 0
        while i < X.shape[0]:
            n = sizes[k % len(sizes)]
            part = slice(i, i + n)
            yield (kind(X[part]), y[part]) if w is None else (kind(X[part]), y[part], w[part])
            i, k = i + n, k + 1
    return source


N = 2000   # rows of the data of most tests
PARAMS = dict(n_estimators=12, max_depth=4, learning_rate=0.3, reg_lambda=2.0,
              min_child_weight=3.0, gamma=0.1)


@pytest.mark.parametrize("sizes, block_rows", [((500,), 1_000_000), ((1,), 700),
                                               ((333, 1, 0, 900), 256)])
def test_the_regressor_grows_the_in_memory_trees(tmp_path, sizes, block_rows):
    # chunks of one row, uneven and empty chunks, blocks that cut across chunks
    X, y = integer_data(N)
    n = 300 if sizes == (1,) else X.shape[0]
    X, y = X[:n], y[:n]
    data = ExternalData(_chunked(X, y, sizes=sizes), cache_dir=tmp_path, block_rows=block_rows)
    ext = GBTRegressor(**PARAMS).fit(data)
    mem = GBTRegressor(**PARAMS).fit(X, y)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=0, atol=1e-6)
    assert ext.fit_info_["blocks"] == -(-n // block_rows)
    assert os.listdir(tmp_path) == []      # the cache is gone


@pytest.mark.parametrize("kind", ["sparse", "frame", "float32"])
def test_sparse_frame_and_float32_chunks_with_weights(tmp_path, kind):
    X, y = integer_data(N, seed=1)
    w = np.random.default_rng(2).uniform(0.2, 3.0, size=y.shape[0])
    if kind == "sparse":
        X = np.nan_to_num(X)          # a CSR chunk's absent entries are 0
        wrap, Xm = sp.csr_matrix, X
    elif kind == "frame":
        wrap, Xm = pd.DataFrame, X
    else:
        X = X.astype(np.float32)
        wrap, Xm = np.asarray, X
    data = ExternalData(_chunked(X, y, w, sizes=(450,), kind=wrap), cache_dir=tmp_path)
    ext = GBTRegressor(n_estimators=8, max_depth=3).fit(data)
    mem = GBTRegressor(n_estimators=8, max_depth=3).fit(Xm, y, sample_weight=w)
    assert_same_trees(ext, mem)


def _sparse_data(n, p, seed, values):
    """A CSR matrix of n x p with about 5 % of its entries stored (``values``: "integer"
    or "continuous"), column 0 stored in most rows, 3 % of the stored entries NaN; and
    a regression target."""
    rng = np.random.default_rng(seed)
    draw = ((lambda k: rng.integers(1, 30, size=k).astype(float)) if values == "integer"
            else (lambda k: rng.normal(size=k)))
    X = sp.random(n, p, density=0.05, random_state=seed, format="csc", data_rvs=draw).tolil()
    X[:, 0] = rng.integers(0, 5, size=(n, 1)).astype(float)
    X = X.tocsr()
    X.data[rng.random(X.nnz) < 0.03] = np.nan
    A = np.nan_to_num(X.toarray())
    return X, A[:, 0] + 0.1 * A[:, 1] - 0.2 * A[:, 2] + rng.normal(size=n)


@pytest.mark.parametrize("p, values, extra", [
    (40, "integer", {}),
    (40, "integer", dict(absent_as_missing=True)),   # (the absent entries are missing)
    # over 65,536 histogram entries: no column-wise copies (each row's entry is found
    # among its entries), and row sampling (the rows left out walk the sparse bins)
    (600, "continuous", dict(subsample=0.7)),
])
def test_sparse_chunks_are_written_as_sparse_blocks(tmp_path, p, values, extra):
    X, y = _sparse_data(3000, p, seed=1, values=values)

    def source():   # (a dense chunk among them; blocks cut across chunks)
        for i in range(0, 3000, 700):
            yield (X[i:i + 700] if i != 1400 else X[i:i + 700].toarray()), y[i:i + 700]

    params = dict(n_estimators=6, max_depth=4, learning_rate=0.3, eval_metric="rmse", **extra)
    data = ExternalData(source, cache_dir=tmp_path, keep_cache=True, block_rows=1000)
    Xv, yv = _sparse_data(500, p, seed=2, values=values)   # (absent entries are 0 there too)
    ext = GBTRegressor(**params).fit(data, eval_set=[(Xv, yv)])
    mem = GBTRegressor(**params).fit(X, y, eval_set=[(Xv, yv)])
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.evals_result_["validation_0"]["rmse"],
                               mem.evals_result_["validation_0"]["rmse"], rtol=1e-9)
    files = [os.path.join(data.cache_paths_[0], f) for f in os.listdir(data.cache_paths_[0])]
    suffixes = {os.path.splitext(f)[1] for f in files}
    assert ".X" not in suffixes and ".i" in suffixes and ".e" in suffixes
    assert (".cp" in suffixes) == (mem._bin_mapper.bin_offsets_[-1] <= 2 ** 16)
    # the bins take about the stored entries' bytes, not two bytes a row and column
    binned = sum(os.path.getsize(f) for f in files if not f.endswith((".y", ".w")))
    assert binned < 0.5 * 2 * X.shape[0] * X.shape[1]


@pytest.mark.parametrize("class_weight", ["balanced", {"low": 2.0, "high": 0.5}])
def test_class_weight_grows_the_in_memory_trees(tmp_path, class_weight):
    # each class's weight (from the first pass's class counts for "balanced")
    # multiplied into the rows' weights, as an in-memory fit multiplies them
    X, y = integer_data(N, seed=12)
    labels = np.array(["low", "mid", "high"])[np.digitize(y, np.quantile(y, [0.6, 0.9]))]
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=N)
    params = dict(PARAMS, class_weight=class_weight)
    ext = GBTClassifier(**params).fit(ExternalData(_chunked(X, labels, w, sizes=(700,)),
                                                   cache_dir=tmp_path, block_rows=800))
    mem = GBTClassifier(**params).fit(X, labels, sample_weight=w)
    assert_same_trees(ext, mem)
    plain = GBTClassifier(**PARAMS).fit(X, labels, sample_weight=w)
    assert not np.allclose(plain.predict_proba(X), mem.predict_proba(X))
    with pytest.raises(ValueError, match="every row weight 0"):
        GBTClassifier(max_depth=2, class_weight={"low": 0, "mid": 0, "high": 0}).fit(
            ExternalData(_chunked(X, labels)))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_classifier_grows_the_in_memory_trees(tmp_path, n_classes):
    X, y = integer_data(N, seed=3)
    labels = np.array(["low", "mid", "high"])[:n_classes]
    yc = labels[np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))]
    data = ExternalData(_chunked(X, yc, sizes=(700,)), cache_dir=tmp_path, block_rows=800)
    ext = GBTClassifier(n_estimators=8, max_depth=3).fit(data)
    mem = GBTClassifier(n_estimators=8, max_depth=3).fit(X, yc)
    np.testing.assert_array_equal(ext.classes_, mem.classes_)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict_proba(X), mem.predict_proba(X), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(ext.predict(X), mem.predict(X))


def _pseudo_huber(y, raw):
    d = raw - y
    s = np.sqrt(1.0 + d * d)
    return d / s, 1.0 / s ** 3


@pytest.mark.parametrize("objective", ["poisson", "gamma", "tweedie", _pseudo_huber])
def test_other_losses_grow_the_in_memory_trees(tmp_path, objective):
    # losses whose starting value adds up over chunks; a positive target for the log links
    X, y = integer_data(N, seed=4)
    y = np.exp(y / 4) if objective in ("gamma", "tweedie") else y
    if objective == "poisson":
        y = np.random.default_rng(5).poisson(np.exp(y / 4)).astype(np.float64)
    params = dict(PARAMS, objective=objective, tweedie_variance_power=1.3)
    ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, y, sizes=(300, 700)),
                                                  cache_dir=tmp_path, block_rows=900))
    mem = GBTRegressor(**params).fit(X, y)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=1e-9)


@pytest.mark.parametrize("params", [
    dict(objective="absolute_error"),
    dict(objective="quantile", quantile_alpha=0.8, subsample=0.6),
    dict(objective="quantile", quantile_alpha=[0.2, 0.5, 0.9]),
    dict(objective="huber", huber_delta=0.7, num_parallel_tree=2, subsample=0.7),
])
@pytest.mark.parametrize("weighted", [False, True])
def test_losses_of_quantiles_grow_the_in_memory_trees(tmp_path, params, weighted):
    # the starting value (a weighted quantile of y, or Huber's location) and each
    # leaf's value (a quantile of its rows' residuals) are selected over all blocks
    X, y = integer_data(N, seed=10)
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=N) if weighted else None
    params = dict(PARAMS, **params)
    ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, y, w, sizes=(333, 1, 900)),
                                                  cache_dir=tmp_path, block_rows=256))
    mem = GBTRegressor(**params).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ext._ensemble.base_score, mem._ensemble.base_score,
                               rtol=1e-12)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=0, atol=1e-9)


def _two_column_targets(X, y, seed):
    """Three targets of ``integer_data``, and aft's (lower, upper) bounds on a time
    (a third of the rows right-censored: upper bound inf)."""
    rng = np.random.default_rng(seed)
    targets = np.c_[y, 2 * y + rng.normal(size=y.shape[0]), -y]
    lower = np.exp(y / 5)
    bounds = np.c_[lower, np.where(rng.random(y.shape[0]) < 0.3, np.inf, 1.5 * lower)]
    return targets, bounds


AFT_LOGISTIC = dict(objective="aft", aft_loss_distribution="logistic",
                    aft_loss_distribution_scale=1.7)


@pytest.mark.parametrize("kind", ["targets", "aft", "aft-logistic"])
def test_a_y_of_several_columns_grows_the_in_memory_trees(tmp_path, kind):
    # chunks of 2-D y: several targets (squared error, a tree per target) or aft's
    # bounds (inf for a censored row), eval sets alike
    X, y = integer_data(N, seed=3)
    targets, bounds = _two_column_targets(X, y, 0)
    Y, params = ((targets, PARAMS) if kind == "targets" else
                 (bounds, dict(PARAMS, objective="aft")) if kind == "aft" else
                 (bounds, dict(PARAMS, **AFT_LOGISTIC)))
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=N)
    ev = dict(eval_set=[(X[:200], Y[:200])])
    ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, Y, w, sizes=(333, 1, 900)),
                                                  cache_dir=tmp_path, block_rows=256), **ev)
    mem = GBTRegressor(**params).fit(X, Y, sample_weight=w, **ev)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=0, atol=1e-9)
    metric = mem._objective.default_metric
    np.testing.assert_allclose(ext.evals_result_["validation_0"][metric],
                               mem.evals_result_["validation_0"][metric], rtol=1e-12)
    assert ext.predict(X).shape == ((N, 3) if kind == "targets" else (N,))
    with pytest.raises(ValueError, match=f"the first chunk's had {Y.shape[1]} column"):
        GBTRegressor(**params).fit(ExternalData(lambda: iter([(X[:10], Y[:10]),
                                                               (X[10:20], y[10:20])])))
    with pytest.raises(ValueError, match="y must be 1-D"):
        GBTClassifier().fit(ExternalData(_chunked(X, np.c_[y > 0, y > 1].astype(int))))


@pytest.mark.parametrize("kind, params", [
    ("targets", dict(grow_policy="lossguide", max_depth=0, max_leaves=9)),
    ("classes", dict(subsample=0.7, colsample_bynode=0.6, num_parallel_tree=2)),
    ("quantiles", dict(objective="quantile", quantile_alpha=[0.2, 0.8])),
])
def test_vector_leaves_grow_the_in_memory_trees(tmp_path, kind, params):
    # multi_strategy="multi_output_tree": one structure for every output, the split
    # of the largest gain summed over the outputs, a value per output in each leaf
    X, y = integer_data(N, seed=13)
    target = {"targets": _two_column_targets(X, y, 1)[0],
              "classes": np.digitize(y, np.quantile(y, [0.3, 0.7])), "quantiles": y}[kind]
    model = GBTClassifier if kind == "classes" else GBTRegressor
    params = dict(PARAMS, multi_strategy="multi_output_tree", **params)
    ext = model(**params).fit(ExternalData(_chunked(X, target, sizes=(333, 1, 900)),
                                           cache_dir=tmp_path, block_rows=256))
    mem = model(**params).fit(X, target)
    assert_same_trees(ext, mem)
    ens = ext._ensemble
    K = ens.n_outputs
    for r in range(ens.n_trees // K):   # (the K trees of a round share their structure)
        trees = [ens.tree(r * K + k) for k in range(K)]
        assert all(np.array_equal(t["feature"], trees[0]["feature"]) for t in trees)
        assert not np.array_equal(trees[0]["value"], trees[-1]["value"])


@pytest.mark.parametrize("kind", ["regressor", "median", "classifier"])
def test_base_margins_grow_the_in_memory_trees(tmp_path, kind):
    # dict chunks with "base_margin": each row starts at its margin (one per class of
    # a multiclass model), the eval sets at theirs
    X, y = integer_data(N, seed=12)
    rng = np.random.default_rng(6)
    if kind == "classifier":
        target, margin, model = (np.digitize(y, np.quantile(y, [0.3, 0.7])),
                                 rng.normal(size=(N, 3)), GBTClassifier)
    else:
        target, margin, model = y, rng.normal(size=N), GBTRegressor
    params = dict(PARAMS, objective="absolute_error") if kind == "median" else PARAMS
    ev = dict(eval_set=[(X[:300], target[:300])], base_margin_eval_set=[margin[:300]])
    data = ExternalData(lambda: iter([dict(X=X[i:i + 333], y=target[i:i + 333],
                                           base_margin=margin[i:i + 333])
                                      for i in range(0, N, 333)]),
                        cache_dir=tmp_path, block_rows=256)
    ext = model(**params).fit(data, **ev)
    mem = model(**params).fit(X, target, base_margin=margin, **ev)
    assert_same_trees(ext, mem)
    metric = mem._objective.default_metric
    np.testing.assert_allclose(ext.evals_result_["validation_0"][metric],
                               mem.evals_result_["validation_0"][metric], rtol=1e-12)
    with pytest.raises(ValueError, match="chunk 1 has base margins of 2 column"):
        model(**params).fit(ExternalData(lambda: iter([
            dict(X=X[:10], y=target[:10], base_margin=margin[:10]),
            dict(X=X[10:20], y=target[10:20], base_margin=np.zeros((10, 2)))])))
    with pytest.raises(ValueError, match="base_margin must have shape"):
        GBTRegressor(**PARAMS).fit(ExternalData(lambda: iter([
            dict(X=X[:10], y=y[:10], base_margin=np.zeros((10, 2)))])))


@pytest.mark.parametrize("spec", ["from_dtype", ["colour", "size"]])
def test_categorical_columns_grow_the_in_memory_trees(tmp_path, spec):
    # DataFrame chunks: a first pass finds every category, each chunk is encoded as
    # the in-memory fit encodes the same rows (codes and indicator columns)
    from test_dask import _categorical_frame
    frame, y = _categorical_frame()
    params = dict(PARAMS, categorical_features=spec)
    data = ExternalData(lambda: iter([(frame.iloc[i:i + 700], y[i:i + 700])
                                      for i in range(0, len(y), 700)]),
                        cache_dir=tmp_path, block_rows=512)
    ext = GBTRegressor(**params).fit(data, eval_set=[(frame.iloc[:500], y[:500])])
    mem = GBTRegressor(**params).fit(frame, y, eval_set=[(frame.iloc[:500], y[:500])])
    assert_same_trees(ext, mem)
    assert ext._ensemble.n_features > frame.shape[1]     # (indicator columns)
    np.testing.assert_allclose(ext.evals_result_["validation_0"]["rmse"],
                               mem.evals_result_["validation_0"]["rmse"], rtol=1e-12)
    np.testing.assert_allclose(ext.predict(frame), mem.predict(frame), rtol=0, atol=1e-9)
    assert list(ext.feature_names_in_) == list(frame.columns)
    with pytest.raises(TypeError, match="needs chunks whose X is a pandas DataFrame"):
        GBTRegressor(**params).fit(ExternalData(_chunked(np.zeros((10, 5)), y[:10])))
    wide = frame.assign(colour=frame["colour"].cat.add_categories([f"c{k}" for k in range(40)]))
    wide.loc[:39, "colour"] = [f"c{k}" for k in range(40)]
    with pytest.raises(ValueError, match="target statistics"):
        GBTRegressor(**params).fit(ExternalData(lambda: iter([(wide, y)])))


def test_warm_start_keeps_the_categorical_encoder(tmp_path):
    from test_dask import _categorical_frame
    frame, y = _categorical_frame()
    params = dict(PARAMS, n_estimators=3, categorical_features="from_dtype", warm_start=True)
    data = ExternalData(lambda: iter([(frame.iloc[i:i + 700], y[i:i + 700])
                                      for i in range(0, len(y), 700)]), cache_dir=tmp_path)
    ext, mem = GBTRegressor(**params).fit(data), GBTRegressor(**params).fit(frame, y)
    encoder = ext._cat_encoder
    ext.set_params(n_estimators=6).fit(data)
    mem.set_params(n_estimators=6).fit(frame, y)
    assert ext._cat_encoder is encoder and ext.n_estimators_ == 6
    assert_same_trees(ext, mem)


def _rankers(folder, X, y, params):
    """GBTRankers of ``params`` fitted out of core (dict chunks of 300 rows, blocks of
    256 in ``folder``) and in memory on queries of 20 rows of ``X`` and relevance
    labels from ``y``: (out of core, in memory, the labels, the query ids)."""
    n = X.shape[0]
    qid = np.repeat(np.arange(n // 20), 20)
    rel = np.clip(np.round(y - y.min()), 0, 4)
    ext = GBTRanker(**params).fit(ExternalData(
        lambda: iter([dict(X=X[i:i + 300], y=rel[i:i + 300], qid=qid[i:i + 300])
                      for i in range(0, n, 300)]), cache_dir=folder, block_rows=256))
    return ext, GBTRanker(**params).fit(X, rel, qid=qid), rel, qid


@pytest.mark.parametrize("kind", ["regressor", "classifier", "ranker"])
def test_row_sampling_and_feature_weights_grow_the_in_memory_trees(tmp_path, kind):
    # each row draws its number of the round as in memory, whatever block it is in;
    # the rows left out get the trees when their block is next read
    X, y = integer_data(N, seed=4)
    params = dict(PARAMS, subsample=0.4, colsample_bynode=0.6,
                  feature_weights=[1.0, 0.0, 3.0, 1.0, 1.0])
    if kind == "ranker":
        ext, mem, rel, qid = _rankers(tmp_path, X, y, params)
    else:
        target = y if kind == "regressor" else (y > np.median(y)).astype(int)
        model = GBTRegressor if kind == "regressor" else GBTClassifier
        ext = model(**params).fit(ExternalData(_chunked(X, target, sizes=(333, 1, 900)),
                                               cache_dir=tmp_path, block_rows=256))
        mem = model(**params).fit(X, target)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=0, atol=1e-9)
    nodes = mem._ensemble.nodes
    assert nodes["count"][nodes["depth"] == 0].max() < 0.5 * N   # (a sample)
    assert not np.any(nodes["feature"] == 1)                     # (weight 0)


@pytest.mark.parametrize("kind", ["regressor", "classifier", "ranker"])
def test_quantised_gradients_grow_the_in_memory_trees(tmp_path, kind):
    # the steps come from every row's gradients, each row rounds as it does in memory
    # whatever block it is in, and the leaves get the exact gradients' sums
    X, y = integer_data(N, seed=8)
    params = dict(PARAMS, grad_quant_bins=6, subsample=0.7)
    if kind == "ranker":
        ext, mem, rel, qid = _rankers(tmp_path, X, y, params)
        plain = GBTRanker(**PARAMS).fit(X, rel, qid=qid)
    else:
        target = y if kind == "regressor" else np.digitize(y, np.quantile(y, [0.3, 0.7]))
        model = GBTRegressor if kind == "regressor" else GBTClassifier
        ext = model(**params).fit(ExternalData(_chunked(X, target, sizes=(333, 1, 900)),
                                               cache_dir=tmp_path, block_rows=256))
        mem = model(**params).fit(X, target)
        plain = model(**PARAMS).fit(X, target)
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=0, atol=1e-9)
    # (the rounded gradients chose other splits than the exact ones)
    assert mem._ensemble.nodes.shape != plain._ensemble.nodes.shape or not np.array_equal(
        mem._ensemble.nodes["bin_threshold"], plain._ensemble.nodes["bin_threshold"])


@pytest.mark.parametrize("kind", ["classifier", "ranker"])
def test_warm_start_continues_the_model(tmp_path, kind):
    # the rows start from the fitted model's scores, its edges are kept and its
    # rounds go on: the trees and histories of the in-memory warm start, which
    # are those of one long fit
    X, y = integer_data(N, seed=9)
    params = dict(PARAMS, n_estimators=4, subsample=0.8, warm_start=True)
    Xv = X[:300]
    if kind == "ranker":
        qid = np.repeat(np.arange(N // 20), 20)
        target = np.clip(np.round(y - y.min()), 0, 4)
        model, fit = GBTRanker, dict(qid=qid)
        eval_kw = dict(eval_set=[(Xv, target[:300])], eval_qid=[qid[:300]])
        data = ExternalData(lambda: iter([dict(X=X[i:i + 300], y=target[i:i + 300],
                                               qid=qid[i:i + 300]) for i in range(0, N, 300)]),
                            cache_dir=tmp_path, block_rows=256)
    else:
        target = np.digitize(y, np.quantile(y, [0.3, 0.7]))
        model, fit = GBTClassifier, {}
        eval_kw = dict(eval_set=[(Xv, target[:300])])
        data = ExternalData(_chunked(X, target, sizes=(333, 900)), cache_dir=tmp_path,
                            block_rows=256)
    ext, mem = model(**params), model(**params)
    ext.fit(data, **eval_kw)
    mem.fit(X, target, **fit, **eval_kw)
    ext.set_params(n_estimators=9).fit(data, **eval_kw)
    mem.set_params(n_estimators=9).fit(X, target, **fit, **eval_kw)
    assert ext.n_estimators_ == 9
    assert_same_trees(ext, mem)
    assert_same_trees(ext, model(**dict(params, n_estimators=9, warm_start=False)).fit(
        X, target, **fit, **eval_kw))
    np.testing.assert_allclose(ext.evals_result_["validation_0"][ext._objective.default_metric],
                               mem.evals_result_["validation_0"][mem._objective.default_metric],
                               rtol=1e-9)
    assert len(ext.evals_result_["validation_0"][ext._objective.default_metric]) == 9
    if kind == "classifier":
        bad = ExternalData(_chunked(X, np.minimum(target, 1)))
        with pytest.raises(ValueError, match="continues the fitted model, whose classes"):
            ext.set_params(n_estimators=12).fit(bad)


@pytest.mark.parametrize("tree", [
    dict(max_depth=6, max_leaves=11),                                   # a leaf budget
    dict(grow_policy="lossguide", max_depth=0, max_leaves=13),          # best gain first
    dict(grow_policy="lossguide", max_depth=5, max_leaves=20, colsample_bylevel=0.7,
         subsample=0.8),
])
def test_leaf_budgets_and_lossguide_trees_grow_the_in_memory_trees(tmp_path, tree):
    X, y = integer_data(3000, seed=7)
    params = dict(PARAMS, **tree)
    ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, y, sizes=(333, 1, 900)),
                                                  cache_dir=tmp_path, block_rows=256))
    mem = GBTRegressor(**params).fit(X, y)
    assert_same_trees(ext, mem)
    leaves = mem._ensemble.nodes["is_leaf"] == 1
    assert leaves.sum() == tree["max_leaves"] * mem._ensemble.n_trees


@pytest.mark.parametrize("tree", [
    dict(max_leaves=31),
    dict(max_leaves=20, max_depth=5, colsample_bylevel=0.7, subsample=0.8),
    dict(max_leaves=31, objective="absolute_error", monotone_constraints=[1, -1, 0, 0, 0]),
    dict(max_leaves=31, grad_quant_bins=16),
])
def test_lossguide_splits_ahead_in_fewer_passes_and_grows_the_same_trees(tmp_path, monkeypatch,
                                                                          tree):
    # each pass over the blocks also splits the next open nodes under spare ids (those
    # the order never reaches are merged back): the trees of one split a pass
    import dataclasses
    from gbtree.growing.grower_params import GrowerParams
    from gbtree.growing.row_blocks import RowBlocks
    X, y = integer_data(3000, seed=7)
    params = dict(PARAMS, grow_policy="lossguide", **dict(dict(max_depth=0), **tree))
    mem = GBTRegressor(**params).fit(X, y)
    make, level = GrowerParams.from_boost.__func__, RowBlocks._level
    passes = {}
    for ahead in (1, 8):
        monkeypatch.setattr(GrowerParams, "from_boost", classmethod(
            lambda cls, p, ahead=ahead: dataclasses.replace(make(cls, p), split_ahead=ahead)))
        calls = []
        monkeypatch.setattr(RowBlocks, "_level", lambda self, t, splits: (
            calls.append(len(splits)), level(self, t, splits))[1])
        ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, y, sizes=(333, 1, 900)),
                                                      cache_dir=tmp_path, block_rows=256))
        assert_same_trees(ext, mem)
        passes[ahead] = len(calls)
        assert max(calls) == (1 if ahead == 1 else 8)
    assert passes[1] == np.sum(mem._ensemble.nodes["is_leaf"] == 0)   # (a pass a split)
    assert passes[8] < passes[1] / 2


@pytest.mark.parametrize("kind, params", [
    ("regressor", dict(max_depth=5, subsample=0.7, colsample_bylevel=0.6)),
    ("classifier", dict(max_depth=5, subsample=0.7, colsample_bylevel=0.6)),
    ("regressor", dict(interaction_constraints=[[0, 2], [1, 3, 4]],
                       objective="absolute_error")),
])
def test_symmetric_trees_grow_the_in_memory_trees(tmp_path, kind, params):
    # every node of a level split alike, by the best summed gain over the level's
    # nodes, whose histograms are built or derived as the in-memory fit does
    X, y = integer_data(N, seed=11)
    params = dict(PARAMS, grow_policy="symmetric", **params)
    target = y if kind == "regressor" else np.digitize(y, np.quantile(y, [0.3, 0.7]))
    model = GBTRegressor if kind == "regressor" else GBTClassifier
    ext = model(**params).fit(ExternalData(_chunked(X, target, sizes=(333, 1, 900)),
                                           cache_dir=tmp_path, block_rows=256))
    mem = model(**params).fit(X, target)
    assert_same_trees(ext, mem)
    for tree in _trees_of(mem):   # (complete to its depth, one split per level)
        assert len(tree) == 2 ** (tree["depth"].max() + 1) - 1
        inner = tree[tree["is_leaf"] == 0]
        for d in np.unique(inner["depth"]):
            assert len(set(inner["feature"][inner["depth"] == d])) == 1
    assert max(t["depth"].max() for t in _trees_of(mem)) == params.get("max_depth", 4)


def _trees_of(model):
    ens = model._ensemble
    return [ens.tree(t) for t in range(ens.n_trees)]


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_forests_grow_the_in_memory_trees(tmp_path, kind):
    # num_parallel_tree: each of a round's sets of trees on rows and columns of its own;
    # the rows get the trees in the in-memory fit's order (their samples overlap)
    X, y = integer_data(N, seed=9)
    params = dict(PARAMS, n_estimators=4, num_parallel_tree=3, subsample=0.8,
                  colsample_bynode=0.7)
    target = y if kind == "regressor" else np.digitize(y, np.quantile(y, [0.3, 0.7]))
    model = GBTRegressor if kind == "regressor" else GBTClassifier
    ext = model(**params).fit(ExternalData(_chunked(X, target, sizes=(333, 900)),
                                           cache_dir=tmp_path, block_rows=256))
    mem = model(**params).fit(X, target)
    assert_same_trees(ext, mem)
    assert mem._ensemble.n_trees == 4 * 3 * (1 if kind == "regressor" else 3)
    np.testing.assert_allclose(ext.predict(X) if kind == "regressor" else
                               ext.predict_proba(X),
                               mem.predict(X) if kind == "regressor" else mem.predict_proba(X),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("dart", [
    dict(rate_drop=0.3),
    dict(rate_drop=0.5, skip_drop=0.3, normalize_type="forest", sample_type="weighted",
         subsample=0.7),
    dict(rate_drop=0.4, one_drop=True, num_parallel_tree=2, subsample=0.8),
])
def test_dart_grows_the_in_memory_trees(tmp_path, dart):
    # the dropped trees leave the raw scores for the round's gradients and come back
    # scaled, every row's score set anew when its block is next read; the eval set's
    # scores follow
    X, y = integer_data(N, seed=10)
    Xv, yv = integer_data(400, seed=11)
    params = dict(PARAMS, booster="dart", eval_metric="rmse", **dart)
    ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, y, sizes=(333, 900)),
                                                  cache_dir=tmp_path, block_rows=256),
                                     eval_set=[(Xv, yv)])
    mem = GBTRegressor(**params).fit(X, y, eval_set=[(Xv, yv)])
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.evals_result_["validation_0"]["rmse"],
                               mem.evals_result_["validation_0"]["rmse"], rtol=1e-9)
    plain = GBTRegressor(**dict(params, booster="gbtree")).fit(X, y)
    assert not np.allclose(plain.predict(X), mem.predict(X))   # (trees were dropped)


@pytest.mark.parametrize("objective", ["squared_error", "absolute_error", "huber"])
def test_constraints_grow_the_in_memory_trees(tmp_path, objective):
    # (refit leaves stay within their own bounds of the monotone constraints)
    X, y = integer_data(N, seed=6)
    params = dict(PARAMS, max_depth=5, objective=objective, **CONSTRAINTS)
    ext = GBTRegressor(**params).fit(ExternalData(_chunked(X, y, sizes=(333, 1, 900)),
                                                  cache_dir=tmp_path, block_rows=256))
    mem = GBTRegressor(**params).fit(X, y)
    assert_same_trees(ext, mem)
    assert_constrained(ext, X)


def test_a_chunk_outside_the_losss_domain_is_named(tmp_path):
    X, y = integer_data(N)
    y = np.abs(y)
    y[1500] = -1.0
    with pytest.raises(ValueError, match="chunk 3: objective='poisson' needs y >= 0"):
        GBTRegressor(objective="poisson").fit(ExternalData(_chunked(X, y), cache_dir=tmp_path))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_eval_sets_and_early_stopping_as_in_memory(tmp_path, kind):
    X, y = integer_data(N + 600, seed=6)
    if kind == "classifier":
        y = np.where(y > np.median(y), "yes", "no")
        model = GBTClassifier
    else:
        model = GBTRegressor
    Xt, yt, Xv, yv = X[:N], y[:N], X[N:], y[N:]
    w = np.random.default_rng(7).uniform(0.5, 2.0, size=yv.shape[0])
    # a high learning rate: the validation loss turns up and early stopping ends the fit
    params = dict(PARAMS, n_estimators=200, learning_rate=0.8, early_stopping_rounds=5,
                  eval_metric=["rmse" if kind == "regressor" else "auc", "mae"
                               if kind == "regressor" else "logloss"])
    sets = dict(eval_set=[(Xv[:300], yv[:300]), (Xv, yv)],
                sample_weight_eval_set=[None, w])
    ext = model(**params).fit(ExternalData(_chunked(Xt, yt), cache_dir=tmp_path), **sets)
    mem = model(**params).fit(Xt, yt, **sets)
    assert ext.n_estimators_ < 200 and ext.n_estimators_ == mem.n_estimators_
    assert ext.best_iteration_ == mem.best_iteration_
    assert ext.best_score_ == pytest.approx(mem.best_score_, rel=1e-9)
    assert ext.evals_result_.keys() == mem.evals_result_.keys()
    for name, metrics in mem.evals_result_.items():
        for metric, values in metrics.items():
            np.testing.assert_allclose(ext.evals_result_[name][metric], values, rtol=1e-9)
    assert_same_trees(ext, mem)
    # predictions stop at the best round
    np.testing.assert_allclose(ext.predict(Xv) if kind == "regressor"
                               else ext.predict_proba(Xv)[:, 1],
                               mem.predict(Xv) if kind == "regressor"
                               else mem.predict_proba(Xv)[:, 1], rtol=1e-9)


def test_bad_eval_sets_are_refused(tmp_path):
    X, y = integer_data(N)
    data = ExternalData(_chunked(X, y), cache_dir=tmp_path)
    with pytest.raises(ValueError, match="eval_set\\[0\\].*5 features"):
        GBTRegressor(n_estimators=2).fit(data, eval_set=[(X[:, :3], y)])
    with pytest.raises(ValueError, match="eval_set\\[0\\]: y has labels not seen"):
        GBTClassifier(n_estimators=2).fit(
            ExternalData(_chunked(X, np.where(y > 0, "a", "b")), cache_dir=tmp_path),
            eval_set=[(X, np.full(y.shape[0], "c"))])
    with pytest.raises(ValueError, match="sample_weight and base_margin must be None"):
        GBTRegressor(n_estimators=2).fit(data, base_margin=np.zeros(N))
    with pytest.raises(ValueError, match="base_margin_eval_set is given without eval_set"):
        GBTRegressor(n_estimators=2).fit(data, base_margin_eval_set=[np.zeros(N)])
    assert os.listdir(tmp_path) == []


def test_npy_files_and_parquet(tmp_path):
    X, y = integer_data(N, seed=4)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=y.shape[0])
    files = []
    for i, part in enumerate((slice(0, 900), slice(900, 2000))):
        paths = [tmp_path / f"{name}{i}.npy" for name in ("X", "y", "w")]
        for path, a in zip(paths, (X[part], y[part], w[part])):
            np.save(path, a)
        files.append(tuple(paths))
    cache = tmp_path / "cache"
    cache.mkdir()
    ext = GBTRegressor(n_estimators=6, max_depth=3).fit(ExternalData(files, cache_dir=cache))
    mem = GBTRegressor(n_estimators=6, max_depth=3).fit(X, y, sample_weight=w)
    assert_same_trees(ext, mem)
    pytest.importorskip("pyarrow", reason="Parquet files need pyarrow (dask's dataframes "
                                          "bring it in the test extra)")
    parquet = []
    for i, part in enumerate((slice(0, 1200), slice(1200, 2000))):
        frame = pd.DataFrame(X[part], columns=[f"f{j}" for j in range(X.shape[1])])
        frame["target"], frame["w"] = y[part], w[part]
        frame.to_parquet(tmp_path / f"part{i}.parquet")
        parquet.append(tmp_path / f"part{i}.parquet")
    ext = GBTRegressor(n_estimators=6, max_depth=3).fit(
        ExternalData(parquet, cache_dir=cache, label="target", weight="w"))
    assert_same_trees(ext, mem)
    assert os.listdir(cache) == []


def _ranking_data(n=N, seed=8, n_queries=120):
    X, y = integer_data(n, seed=seed)
    rng = np.random.default_rng(seed)
    qid = np.sort(rng.integers(0, n_queries, size=n)) * 3 + 7   # sorted, not 0..n-1
    rel = np.clip(np.round(y - y.min()), 0, 4)
    w = rng.uniform(0.5, 2.0, size=qid.max() + 1)[qid]          # a weight per query
    return X, rel, qid, w


@pytest.mark.parametrize("n_pair, sizes, block_rows", [(None, (500,), 1_000_000),
                                                        (2, (37, 1, 250), 90)])
def test_the_ranker_grows_the_in_memory_trees(tmp_path, n_pair, sizes, block_rows):
    # blocks end where a query does: queries cut across chunks and over block_rows rows
    X, rel, qid, w = _ranking_data()
    Xv, rv, qv, _ = _ranking_data(400, seed=9, n_queries=20)

    def source():
        i, k = 0, 0
        while i < X.shape[0]:
            part = slice(i, i + sizes[k % len(sizes)])
            yield dict(X=X[part], y=rel[part], qid=qid[part], sample_weight=w[part])
            i, k = part.stop, k + 1

    params = dict(PARAMS, lambdarank_num_pair_per_sample=n_pair, eval_metric="ndcg@5")
    ext = GBTRanker(**params).fit(ExternalData(source, cache_dir=tmp_path,
                                               block_rows=block_rows),
                                  eval_set=[(Xv, rv)], eval_qid=[qv])
    mem = GBTRanker(**params).fit(X, rel, qid=qid, sample_weight=w, eval_set=[(Xv, rv)],
                                  eval_qid=[qv])
    assert_same_trees(ext, mem)
    np.testing.assert_allclose(ext.evals_result_["validation_0"]["ndcg@5"],
                               mem.evals_result_["validation_0"]["ndcg@5"], rtol=1e-9)
    np.testing.assert_allclose(ext.predict(X), mem.predict(X), rtol=0, atol=1e-9)
    if block_rows < N:
        assert ext.fit_info_["blocks"] > 5
    assert os.listdir(tmp_path) == []


def test_ranking_files_and_bad_query_ids(tmp_path):
    X, rel, qid, w = _ranking_data()
    files = []
    for i, part in enumerate((slice(0, 800), slice(800, N))):
        paths = {}
        for name, a in (("X", X), ("y", rel), ("qid", qid)):
            paths[name] = tmp_path / f"{name}{i}.npy"
            np.save(paths[name], a[part])
        files.append(paths)
    cache = tmp_path / "cache"
    cache.mkdir()
    ext = GBTRanker(n_estimators=4, max_depth=3).fit(ExternalData(files, cache_dir=cache))
    assert_same_trees(ext, GBTRanker(n_estimators=4, max_depth=3).fit(X, rel, qid=qid))

    def chunks(q, weights=None, ranker_keys=True):
        def source():
            for part in (slice(0, 1000), slice(1000, N)):
                chunk = dict(X=X[part], y=rel[part])
                if ranker_keys:
                    chunk["qid"] = q[part]
                if weights is not None:
                    chunk["sample_weight"] = weights[part]
                yield chunk
        return ExternalData(source, cache_dir=cache)

    with pytest.raises(ValueError, match="chunk 0: the query ids must be sorted"):
        GBTRanker(n_estimators=2).fit(chunks(qid[::-1]))
    with pytest.raises(ValueError, match="chunk 1: the query ids must be sorted"):
        GBTRanker(n_estimators=2).fit(chunks(np.r_[qid[:1000], qid[:1000]]))
    uneven = w.copy()
    uneven[np.flatnonzero(qid == qid[500])[-1]] *= 2
    with pytest.raises(ValueError, match="sample_weight must be the same for every row"):
        GBTRanker(n_estimators=2).fit(chunks(qid, uneven))
    with pytest.raises(ValueError, match="chunk 0 has no query ids: GBTRanker needs"):
        GBTRanker(n_estimators=2).fit(chunks(qid, ranker_keys=False))
    with pytest.raises(ValueError, match="only GBTRanker takes them"):
        GBTRegressor(n_estimators=2).fit(chunks(qid))
    with pytest.raises(ValueError, match="query ids and weights come from the data"):
        GBTRanker(n_estimators=2).fit(chunks(qid), qid=qid)
    with pytest.raises(ValueError, match="a dict chunk has the keys"):
        GBTRanker(n_estimators=2).fit(ExternalData(lambda: iter([dict(X=X, y=rel, q=qid)])))
    assert os.listdir(cache) == []


def test_the_model_saves_loads_and_explains(tmp_path):
    X, y = integer_data(N, seed=6)
    model = GBTRegressor(n_estimators=5, max_depth=3).fit(
        ExternalData(_chunked(X, y), cache_dir=tmp_path))
    assert_saves_loads_and_explains(model, X, tmp_path)


def test_keep_cache_leaves_the_blocks(tmp_path):
    X, y = integer_data(N, seed=7)
    data = ExternalData(_chunked(X, y), cache_dir=tmp_path, keep_cache=True, block_rows=600)
    GBTRegressor(n_estimators=2, max_depth=2).fit(data)
    [path] = data.cache_paths_
    assert os.path.dirname(path) == str(tmp_path)
    assert len([f for f in os.listdir(path) if f.endswith(".X")]) == 4
    # a second fit writes a folder of its own
    GBTRegressor(n_estimators=2, max_depth=2).fit(data)
    assert data.cache_paths_ != [path] and len(os.listdir(tmp_path)) == 2


def test_blocks_spread_over_several_cache_folders(tmp_path):
    X, y = integer_data(N, seed=10)
    disks = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    for d in disks:
        d.mkdir()
    data = ExternalData(_chunked(X, y), cache_dir=disks, keep_cache=True, block_rows=400)
    ext = GBTRegressor(**PARAMS).fit(data)
    # five blocks over three folders in turn: 2, 2, 1
    assert [len([f for f in os.listdir(p) if f.endswith(".X")])
            for p in data.cache_paths_] == [2, 2, 1]
    assert_same_trees(ext, GBTRegressor(**PARAMS).fit(X, y))
    with pytest.raises(ValueError, match="empty list"):
        ExternalData(_chunked(X, y), cache_dir=[])
    with pytest.raises(OSError, match="could not write the out-of-core blocks"):
        GBTRegressor(max_depth=2).fit(ExternalData(_chunked(X, y),
                                                   cache_dir=tmp_path / "missing"))


def test_a_source_that_fails_half_way_leaves_no_cache(tmp_path):
    X, y = integer_data(N, seed=8)
    calls = []

    def source():
        calls.append(1)
        yield X[:1000], y[:1000]
        if len(calls) == 2:        # the second pass (binning) fails
            raise OSError("the network share went away")
        yield X[1000:], y[1000:]

    with pytest.raises(OSError, match="network share"):
        GBTRegressor(n_estimators=2, max_depth=2).fit(ExternalData(source, cache_dir=tmp_path))
    assert os.listdir(tmp_path) == []


def test_a_full_disk_is_a_clear_error(tmp_path, monkeypatch):
    X, y = integer_data(N, seed=9)

    def full(path, array):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(blocks, "_write", full)
    with pytest.raises(OSError, match="could not write the out-of-core blocks .* disk is full"):
        GBTRegressor(n_estimators=2, max_depth=2).fit(
            ExternalData(_chunked(X, y), cache_dir=tmp_path))
    assert os.listdir(tmp_path) == []


def test_bad_sources_and_parameters():
    X, y = integer_data(200)
    with pytest.raises(TypeError, match="source must be a callable"):
        ExternalData(42)
    with pytest.raises(ValueError, match="block_rows"):
        ExternalData(_chunked(X, y), block_rows=0)
    with pytest.raises(ValueError, match="chunk 1 has 3 features"):
        GBTRegressor(max_depth=2).fit(ExternalData(lambda: iter([(X, y), (X[:, :3], y)])))
    with pytest.raises(ValueError, match="chunk 0: y has 199 values for 200 rows"):
        GBTRegressor(max_depth=2).fit(ExternalData(lambda: iter([(X, y[:-1])])))
    with pytest.raises(ValueError, match="no rows"):
        GBTRegressor(max_depth=2).fit(ExternalData(lambda: iter([])))
    with pytest.raises(ValueError, match="weights and base margins come from the data"):
        GBTRegressor(max_depth=2).fit(ExternalData(_chunked(X, y)), y)
    with pytest.raises(ValueError, match="does not support validation_fraction=0.2"):
        GBTRegressor(max_depth=2, validation_fraction=0.2).fit(ExternalData(_chunked(X, y)))
    bad = sp.csr_matrix(X[:10])
    bad.indices[0] = X.shape[1] + 5   # (a column index outside the matrix)
    with pytest.raises(ValueError, match="chunk 0: X is a malformed CSR sparse matrix"):
        GBTRegressor(max_depth=2).fit(ExternalData(lambda: iter([(bad, y[:10])])))
    with pytest.raises(ValueError, match="does not support tree_method='exact'"):
        GBTRegressor(max_depth=2, tree_method="exact").fit(ExternalData(_chunked(X, y)))
    with pytest.raises(ValueError, match="or 0 with max_leaves set"):
        GBTRegressor(max_depth=0).fit(ExternalData(_chunked(X, y)))
    with pytest.raises(ValueError, match="does not support objective='cox' yet"):
        GBTRegressor(max_depth=2, objective="cox").fit(ExternalData(_chunked(X, y)))
    # a source whose second pass differs from its first
    passes = []

    def shifting():
        passes.append(1)
        return iter([(X[:100 * len(passes)], y[:100 * len(passes)])])

    with pytest.raises(ValueError, match="the same chunks every time"):
        GBTRegressor(max_depth=2).fit(ExternalData(shifting))


@pytest.mark.parametrize("Est, bad, match", [
    (GBTRegressor, np.nan, "chunk 1: y contains NaN"),
    (GBTRegressor, np.inf, "chunk 1: y contains infinity"),
    (GBTClassifier, np.nan, "chunk 1: y contains NaN"),
    (GBTClassifier, -np.inf, "chunk 1: y contains infinity"),
    (GBTClassifier, None, "chunk 1: y contains NaN"),
])
def test_labels_the_in_memory_fit_refuses_are_refused_in_any_chunk(tmp_path, Est, bad, match):
    # (an inf label once became the class "inf"; NaN a KeyError)
    X, y = integer_data(N)
    y = (y > np.median(y)).astype(object if bad is None else np.float64)
    y[1500] = bad
    with pytest.raises(ValueError, match=match):
        Est(n_estimators=2).fit(ExternalData(_chunked(X, y, sizes=(1000,)), cache_dir=tmp_path))
    with pytest.raises(ValueError, match=match.replace("chunk 1: ", "")):
        Est(n_estimators=2).fit(X, y)
    assert os.listdir(tmp_path) == []


def test_frame_chunks_are_read_by_their_columns_names(tmp_path):
    # a chunk whose columns come in another order was read by position
    X, y = integer_data(N)
    names = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)

    def source(order):
        return lambda: iter([(frame[:1000], y[:1000]), (frame[1000:][order], y[1000:])])

    with pytest.raises(ValueError, match=r"chunk 1: X has the columns \['f1', 'f0'.*the first "
                                         r"chunk \['f0', 'f1'"):
        GBTRegressor(n_estimators=2).fit(ExternalData(source(names[1::-1] + names[2:]),
                                                      cache_dir=tmp_path))
    ext = GBTRegressor(**PARAMS).fit(ExternalData(source(names), cache_dir=tmp_path))
    mem = GBTRegressor(**PARAMS).fit(frame, y)
    assert_same_trees(ext, mem)
    assert list(ext.feature_names_in_) == names
    np.testing.assert_array_equal(ext.predict(frame), mem.predict(frame))
    pytest.importorskip("pyarrow", reason="Parquet files need pyarrow (dask's dataframes "
                                          "bring it in the test extra)")
    files = []
    for i, part in enumerate((slice(0, 1000), slice(1000, N))):
        chunk = frame[part].assign(target=y[part])
        files.append(tmp_path / f"part{i}.parquet")
        (chunk if i == 0 else chunk[names[::-1] + ["target"]]).to_parquet(files[-1])
    with pytest.raises(ValueError, match=r"chunk 1: X has the columns \['f4'"):
        GBTRegressor(n_estimators=2).fit(ExternalData(files, cache_dir=tmp_path, label="target"))


def test_progress_lines_out_of_core(tmp_path, caplog):
    from gbtree.callback import Progress
    X, y = integer_data(N)
    GBTRegressor(**dict(PARAMS, n_estimators=3),
                 callbacks=[Progress(interval=1e-9, bar=False)]).fit(
        ExternalData(_chunked(X, y), cache_dir=tmp_path))
    lines = [r.getMessage() for r in caplog.records if r.name == "gbtree"]
    assert [ln.split()[1] for ln in lines] == ["1/3", "2/3", "3/3"]


def test_verbosity_logs_the_rounds_as_in_memory(tmp_path, caplog):
    # the level-wise rounds run the in-memory fit's loop: its log, without the
    # training loss (held in parts); the passes over the chunks are logged before
    X, y = integer_data(N)
    Xv, yv = integer_data(300, seed=5)
    params = dict(PARAMS, verbosity=1, log_period=5)

    def logged():
        lines = [r.getMessage() for r in caplog.records if r.name == "gbtree"]
        caplog.clear()
        return lines
    GBTRegressor(**params).fit(ExternalData(_chunked(X, y), cache_dir=tmp_path),
                               eval_set=[(Xv, yv)])
    lines = logged()
    assert lines[0].startswith(f"[gbtree] pass 1 of 3, bin edges: {N} rows of")
    assert lines[1].startswith("[gbtree] pass 2 of 3, binned blocks:")
    ext = [ln for ln in lines if " round " in ln]
    GBTRegressor(**params).fit(X, y, eval_set=[(Xv, yv)])
    mem = [ln for ln in logged() if " round " in ln]

    def shown(lines):
        return [[w for w in ln.split() if not w.startswith(("train-", "elapsed="))]
                for ln in lines]
    assert [ln.split()[2] for ln in ext] == ["1/12", "5/12", "10/12", "12/12"]
    assert shown(ext) == shown(mem)
    assert all("validation_0-rmse=" in ln for ln in ext)


GOSS = dict(sampling_method="goss", top_rate=0.3, other_rate=0.2)


@pytest.mark.parametrize("task, extra", [
    ("regressor", {}), ("regressor", dict(grow_policy="lossguide", max_leaves=9, max_depth=0)),
    ("regressor", dict(grad_quant_bins=16)), ("regressor", dict(objective="quantile")),
    ("regressor", dict(booster="dart", rate_drop=0.3)),
    ("regressor", dict(grow_policy="symmetric")), ("multiclass", {}),
    ("multiclass", dict(multi_strategy="multi_output_tree")), ("sparse", {}), ("ranker", {})])
def test_goss_grows_the_in_memory_trees(tmp_path, task, extra):
    # GOSS out of core: the rows of the largest gradients of all rows, the rest drawn
    # from one generator, as in memory (the draws before the trees' seeds)
    X, y = integer_data(N, seed=4)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=N)
    params = dict(PARAMS, **GOSS, **extra)
    if task == "ranker":
        ext, mem, rel, qid = _rankers(tmp_path, X, y, params)
        assert_same_trees(ext, mem)
        plain = GBTRanker(**PARAMS).fit(X, rel, qid=qid)
        assert not np.allclose(plain.predict(X), mem.predict(X))
        return
    kind, Model = np.asarray, GBTRegressor
    if task == "multiclass":
        y, Model = np.digitize(y, np.quantile(y, [0.3, 0.6])), GBTClassifier
    if task == "sparse":
        X, kind = np.nan_to_num(X), sp.csr_matrix
    ext = Model(**params).fit(ExternalData(_chunked(X, y, w, sizes=(333, 1, 900), kind=kind),
                                           cache_dir=tmp_path, block_rows=512))
    mem = Model(**params).fit(kind(X), y, sample_weight=w)
    assert_same_trees(ext, mem)
    plain = Model(**dict(PARAMS, **extra)).fit(kind(X), y, sample_weight=w)
    assert not np.allclose(plain.predict(kind(X)), mem.predict(kind(X)))   # (GOSS drew rows)


def test_goss_out_of_core_refuses_forests(tmp_path):
    X, y = integer_data(300)
    with pytest.raises(ValueError, match="sampling_method='goss' with num_parallel_tree=2"):
        GBTRegressor(**GOSS, num_parallel_tree=2).fit(ExternalData(_chunked(X, y)))


def _parquet_parts(tmp_path, X, y, w, cuts, dtype=np.float64):
    files = []
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        frame = pd.DataFrame(X[a:b].astype(dtype), columns=[f"f{j}" for j in range(X.shape[1])])
        frame["target"], frame["w"] = y[a:b], w[a:b]
        files.append(tmp_path / f"part{i}.parquet")
        frame.to_parquet(files[-1], row_group_size=300)
    return files


def test_parquet_folders_urls_and_record_batches(tmp_path):
    # a folder, one file, a URL (fsspec's memory filesystem): the same model as in
    # memory, every file read in record batches of batch_rows rows
    pytest.importorskip("pyarrow", reason="Parquet files need pyarrow")
    fsspec = pytest.importorskip("fsspec", reason="URLs need fsspec")
    X, y = integer_data(N, seed=4)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=y.shape[0])
    folder = tmp_path / "parts"
    folder.mkdir()
    _parquet_parts(folder, X, y, w, [0, 1200, 2000])
    mem = GBTRegressor(n_estimators=6, max_depth=3).fit(X, y, sample_weight=w)
    data = ExternalData(str(folder), cache_dir=tmp_path, label="target", weight="w",
                        batch_rows=250)
    assert [c[0].shape[0] for c in data.chunks()] == [250] * 4 + [200] + [250] * 3 + [50]
    assert_same_trees(GBTRegressor(n_estimators=6, max_depth=3).fit(data), mem)
    fs = fsspec.filesystem("memory")
    for f in sorted(folder.iterdir()):
        fs.pipe(f"/parts/{f.name}", f.read_bytes())
    for source in ("memory://parts", ["memory://parts/part0.parquet",
                                      "memory://parts/part1.parquet"]):
        data = ExternalData(source, cache_dir=tmp_path, label="target", weight="w")
        assert_same_trees(GBTRegressor(n_estimators=6, max_depth=3).fit(data), mem)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="a folder without .parquet files"):
        GBTRegressor(n_estimators=2).fit(ExternalData(str(tmp_path / "empty"), label="target"))
    with pytest.raises(ValueError, match="batch_rows must be an integer >= 1"):
        ExternalData(str(folder), label="target", batch_rows=0)


def test_a_parquet_file_is_never_read_whole(tmp_path):
    # float32 columns stay float32, and a pass over the file holds one batch of rows
    # at a time: the arrays NumPy allocates stay far below the file's rows as one array
    pytest.importorskip("pyarrow", reason="Parquet files need pyarrow")
    import tracemalloc
    rng = np.random.default_rng(0)
    n, d = 200_000, 20
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = X[:, 0] + X[:, 1] ** 2
    [path] = _parquet_parts(tmp_path, X, y, np.ones(n), [0, n], dtype=np.float32)
    data = ExternalData(path, cache_dir=tmp_path, label="target", weight="w",
                        batch_rows=10_000, block_rows=20_000)
    tracemalloc.start()
    try:
        rows = sum(c[0].shape[0] for c in data.chunks() if c[0].dtype == np.float32)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows == n
    assert peak < X.nbytes / 5, (peak, X.nbytes)   # (a batch is 1/20 of it)
    # the rows read are the file's: about the in-memory model (edges from a sketch)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(d)])
    ext = GBTRegressor(n_estimators=3, max_depth=4).fit(data)
    mem = GBTRegressor(n_estimators=3, max_depth=4).fit(frame, y)
    assert ext.score(frame, y) == pytest.approx(mem.score(frame, y), abs=0.005)
