"""gbtree.dask on a LocalCluster of two worker processes: the distributed fit grows
the local fit's trees (same rows, same bin edges), whatever the partitions."""
import os
import signal
import threading
import time

import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array", reason="gbtree.dask needs the dask extra")
dd = pytest.importorskip("dask.dataframe", reason="gbtree.dask needs the dask extra")
distributed = pytest.importorskip("distributed", reason="gbtree.dask needs the dask extra")

from gbtree import GBTClassifier, GBTRanker, GBTRegressor  # noqa: E402
from gbtree.dask import DaskGBTClassifier, DaskGBTRanker, DaskGBTRegressor  # noqa: E402
from _levelwise import (CONSTRAINTS, assert_constrained,  # noqa: E402
                        assert_saves_loads_and_explains, assert_same_trees, integer_data)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("chunks", [1000, (1200, 300, 1500), (0, 2000, 0, 1000)])
def test_the_regressor_grows_the_local_trees(client, chunks):
    X, y = integer_data()
    dX, dy = da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,))
    params = dict(n_estimators=15, max_depth=4, learning_rate=0.3, reg_lambda=2.0,
                  min_child_weight=3.0, gamma=0.1)
    dist = DaskGBTRegressor(**params).fit(dX, dy)
    local = GBTRegressor(**params).fit(X, y)
    assert_same_trees(dist.to_local(), local)
    # one call from the client per round; between two workers, two exchanges for the
    # root and each level (histograms, then candidate splits)
    stats = dist.fit_stats_
    assert stats["trees"] == 15 and 1 <= stats["workers"] <= 2
    assert sum(stats["rows_per_worker"]) == X.shape[0]
    assert len(stats["rows_per_worker"]) == stats["workers"]
    assert stats["round_trips_per_tree"] == 1
    assert stats["bytes_received_per_tree"] > 0
    if stats["workers"] == 2:
        assert 2 <= stats["exchanges_per_tree"] <= 2 * (1 + 4)
        assert stats["bytes_between_workers_per_tree"] > 0
    pred = dist.predict(dX)
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), local.predict(X), rtol=0, atol=1e-6)


def test_feature_ranges_share_the_bins_out():
    from gbtree.distributed.shard_exchange import feature_ranges
    offsets = np.r_[0, np.cumsum([257, 3, 257, 257, 41, 257])]
    assert feature_ranges(offsets, 1) == [(0, 6)]
    assert feature_ranges(offsets, 2) == [(0, 6), (0, 6)]      # both scan every feature
    for n, paired in ((3, 2), (4, 4), (6, 4), (9, 8)):
        # consecutive ranges for the largest power of two of the shards, none for the others
        ranges = feature_ranges(offsets, n)
        assert len(ranges) == n and ranges[0][0] == 0 and ranges[paired - 1][1] == 6
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        assert all(lo <= hi for lo, hi in ranges)
        assert ranges[paired:] == [(6, 6)] * (n - paired)
        if paired <= 4:
            assert all(hi > lo for lo, hi in ranges[:paired])


def test_the_edges_of_a_sample_of_the_rows(client, monkeypatch):
    # beyond SKETCH_SUBSAMPLE rows each worker summarises its share of that many, drawn
    # from the seed: integer features keep their edges, and two fits are alike
    import gbtree.estimators.dask
    monkeypatch.setattr(gbtree.estimators.dask, "SKETCH_SUBSAMPLE", 1200)
    X, y = integer_data(seed=5)
    X[:, 4] = np.random.default_rng(6).normal(size=X.shape[0])   # (a continuous column)
    # (persisted: both fits find each partition on the same worker, whose share of
    # the sample it holds)
    dX, dy = client.persist([da.from_array(X, chunks=(1000, -1)), da.from_array(y, chunks=1000)])
    distributed.wait([dX, dy])
    params = dict(n_estimators=4, max_depth=3, max_bin=64)
    a = DaskGBTRegressor(**params).fit(dX, dy).to_local()
    b = DaskGBTRegressor(**params).fit(dX, dy).to_local()
    local = GBTRegressor(**params).fit(X, y)
    cuts, ptr = a._bin_mapper.cuts_, a._bin_mapper.cut_ptr_
    np.testing.assert_array_equal(cuts[:ptr[4]], local._bin_mapper.cuts_[:ptr[4]])
    assert not np.array_equal(cuts[ptr[4]:], local._bin_mapper.cuts_[ptr[4]:])
    np.testing.assert_array_equal(cuts, b._bin_mapper.cuts_)
    np.testing.assert_array_equal(a._ensemble.nodes, b._ensemble.nodes)
    # a row is in the sample by its draw at its place: other partitions, the same
    # sample (the exact summaries of the integer columns give the same edges)
    c = DaskGBTRegressor(**params).fit(da.from_array(X, chunks=((200, 2500, 300), -1)),
                                       da.from_array(y, chunks=((200, 2500, 300),))).to_local()
    np.testing.assert_array_equal(c._bin_mapper.cuts_[:ptr[4]], cuts[:ptr[4]])


def test_sample_weight_and_a_float32_dataframe(client):
    X, y = integer_data(seed=1)
    w = np.random.default_rng(2).uniform(0.2, 3.0, size=y.shape[0])
    frame = dd.from_pandas(__import__("pandas").DataFrame(X.astype(np.float32)), npartitions=3)
    dy = dd.from_pandas(__import__("pandas").Series(y), npartitions=3)
    dw = dd.from_pandas(__import__("pandas").Series(w), npartitions=3)
    dist = DaskGBTRegressor(n_estimators=10, max_depth=3).fit(frame, dy, sample_weight=dw)
    local = GBTRegressor(n_estimators=10, max_depth=3).fit(X.astype(np.float32), y,
                                                          sample_weight=w)
    assert_same_trees(dist.to_local(), local)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_classifier_grows_the_local_trees(client, n_classes):
    X, y = integer_data(seed=3)
    labels = np.array(["low", "mid", "high"])[:n_classes]
    yc = labels[np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))]
    dX, dy = da.from_array(X, chunks=(700, -1)), da.from_array(yc, chunks=700)
    dist = DaskGBTClassifier(n_estimators=8, max_depth=3).fit(dX, dy)
    local = GBTClassifier(n_estimators=8, max_depth=3).fit(X, yc)
    np.testing.assert_array_equal(dist.classes_, local.classes_)
    assert_same_trees(dist.to_local(), local)
    np.testing.assert_allclose(dist.predict_proba(dX).compute(), local.predict_proba(X),
                               rtol=0, atol=1e-6)
    np.testing.assert_array_equal(dist.predict(dX).compute(), local.predict(X))


def _pseudo_huber(y, raw):
    d = raw - y
    s = np.sqrt(1.0 + d * d)
    return d / s, 1.0 / s ** 3


@pytest.mark.parametrize("objective", ["poisson", "tweedie", _pseudo_huber])
def test_other_losses_grow_the_local_trees(client, objective):
    X, y = integer_data(seed=4)
    y = (np.random.default_rng(5).poisson(np.exp(y / 4)).astype(np.float64)
         if objective == "poisson" else np.exp(y / 4) if objective == "tweedie" else y)
    params = dict(n_estimators=8, max_depth=3, objective=objective)
    dist = DaskGBTRegressor(**params).fit(da.from_array(X, chunks=(800, -1)),
                                          da.from_array(y, chunks=800))
    local = GBTRegressor(**params).fit(X, y)
    assert_same_trees(dist.to_local(), local)


@pytest.mark.parametrize("params", [
    dict(objective="quantile", quantile_alpha=[0.1, 0.5, 0.8], subsample=0.7),
    dict(objective="huber", huber_delta=0.5),
])
def test_losses_of_quantiles_grow_the_local_trees(client, params):
    # the starting value and each leaf's value are weighted quantiles (Huber: also a
    # root search) selected by the workers together, eight exchanges a selection
    X, y = integer_data(seed=15)
    w = np.random.default_rng(4).uniform(0.2, 3.0, size=y.shape[0])
    params = dict(n_estimators=6, max_depth=3, **params)
    rows = (500, 1300, 200, 1000)
    dist = DaskGBTRegressor(**params).fit(da.from_array(X, chunks=(rows, -1)),
                                          da.from_array(y, chunks=(rows,)),
                                          sample_weight=da.from_array(w, chunks=(rows,)))
    local = GBTRegressor(**params).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(dist.to_local()._ensemble.base_score,
                               local._ensemble.base_score, rtol=1e-12)
    assert_same_trees(dist.to_local(), local)


@pytest.mark.parametrize("objective", ["squared_error", "aft", "aft-logistic"])
def test_a_y_of_several_columns_grows_the_local_trees(client, objective):
    # several targets (predictions of one column each) or aft's bounds (inf for a
    # right-censored row)
    X, y = integer_data(seed=16)
    rng = np.random.default_rng(2)
    lower = np.exp(y / 5)
    Y = (np.c_[y, 2 * y + rng.normal(size=y.shape[0]), -y] if objective == "squared_error"
         else np.c_[lower, np.where(rng.random(y.shape[0]) < 0.3, np.inf, 1.5 * lower)])
    params = dict(n_estimators=5, max_depth=3, objective=objective)
    if objective == "aft-logistic":
        params.update(objective="aft", aft_loss_distribution="logistic",
                      aft_loss_distribution_scale=1.7)
    rows = (500, 1300, 200, 1000)
    dX = da.from_array(X, chunks=(rows, -1))
    dist = DaskGBTRegressor(**params).fit(dX, da.from_array(Y, chunks=(rows, -1)),
                                          eval_set=[(X[:200], Y[:200])])
    local = GBTRegressor(**params).fit(X, Y, eval_set=[(X[:200], Y[:200])])
    assert_same_trees(dist.to_local(), local)
    predicted = dist.predict(dX).compute()
    assert predicted.shape == local.predict(X).shape
    np.testing.assert_allclose(predicted, local.predict(X), rtol=0, atol=1e-9)
    metric = local._objective.default_metric
    np.testing.assert_allclose(dist.evals_result_["validation_0"][metric],
                               local.evals_result_["validation_0"][metric], rtol=1e-12)


@pytest.mark.parametrize("kind", ["regressor", "median", "classifier"])
def test_base_margins_grow_the_local_trees(client, kind):
    # each row starts at its margin (one per class of a multiclass model; a median's
    # starting value is selected all the same), eval sets and predictions too
    X, y = integer_data(seed=17)
    rng = np.random.default_rng(5)
    rows = (500, 1300, 200, 1000)
    if kind != "classifier":
        target, margin = y, rng.normal(size=y.shape[0])
        dist_class, local_class, chunks = DaskGBTRegressor, GBTRegressor, (rows,)
    else:
        target = np.digitize(y, np.quantile(y, [0.3, 0.7]))
        margin = rng.normal(size=(y.shape[0], 3))
        dist_class, local_class, chunks = DaskGBTClassifier, GBTClassifier, (rows, -1)
    params = dict(n_estimators=5, max_depth=3,
                  objective="absolute_error" if kind == "median" else None)
    params = {k: v for k, v in params.items() if v is not None}
    ev = dict(eval_set=[(X[:300], target[:300])], base_margin_eval_set=[margin[:300]])
    dX, dm = da.from_array(X, chunks=(rows, -1)), da.from_array(margin, chunks=chunks)
    dist = dist_class(**params).fit(dX, da.from_array(target, chunks=(rows,)),
                                    base_margin=dm, **ev)
    local = local_class(**params).fit(X, target, base_margin=margin, **ev)
    assert_same_trees(dist.to_local(), local)
    metric = local._objective.default_metric
    np.testing.assert_allclose(dist.evals_result_["validation_0"][metric],
                               local.evals_result_["validation_0"][metric], rtol=1e-12)
    method = "predict_proba" if kind == "classifier" else "predict"
    np.testing.assert_allclose(getattr(dist, method)(dX, base_margin=dm).compute(),
                               getattr(local, method)(X, base_margin=margin), atol=1e-9)
    # (the margins count: without them the model predicts otherwise)
    assert not np.allclose(getattr(dist, method)(dX).compute(),
                           getattr(local, method)(X, base_margin=margin))
    with pytest.raises(ValueError, match="base_margin must have one row per row of X"):
        dist.predict(dX, base_margin=dm[:100])


def test_eval_sets_and_early_stopping_as_locally(client):
    X, y = integer_data(n=3600, seed=6)
    Xt, yt, Xv, yv = X[:3000], y[:3000], X[3000:], y[3000:]
    params = dict(n_estimators=200, max_depth=4, learning_rate=0.8, early_stopping_rounds=5,
                  eval_metric=["mae", "rmse"])
    w = np.random.default_rng(7).uniform(0.5, 2.0, size=yv.shape[0])
    dist = DaskGBTRegressor(**params).fit(
        da.from_array(Xt, chunks=(1000, -1)), da.from_array(yt, chunks=1000),
        eval_set=[(da.from_array(Xv, chunks=(250, -1)), da.from_array(yv, chunks=250))],
        sample_weight_eval_set=[da.from_array(w, chunks=250)])
    local = GBTRegressor(**params).fit(Xt, yt, eval_set=[(Xv, yv)], sample_weight_eval_set=[w])
    assert dist.n_estimators_ < 200 and dist.n_estimators_ == local.n_estimators_
    assert dist.best_iteration_ == local.best_iteration_
    for metric in ("mae", "rmse"):
        np.testing.assert_allclose(dist.evals_result_["validation_0"][metric],
                                   local.evals_result_["validation_0"][metric], rtol=1e-9)
    assert_same_trees(dist.to_local(), local)
    np.testing.assert_allclose(dist.predict(da.from_array(Xv, chunks=250)).compute(),
                               local.predict(Xv), rtol=1e-9)


def test_progress_and_verbosity_on_the_client(client, caplog):
    # the rounds run on the client's loop: the progress lines and the log are the client's
    from gbtree.callback import Progress
    X, y = integer_data(n=1500, seed=3)
    DaskGBTRegressor(n_estimators=3, max_depth=3, verbosity=1,
                     callbacks=[Progress(interval=1e-9, bar=False)]).fit(
        da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500))
    lines = [r.getMessage() for r in caplog.records if r.name == "gbtree"]
    assert lines[0].startswith("[gbtree] 1500 rows binned on")
    assert [ln.split()[1] for ln in lines if " rounds (" in ln] == ["1/3", "2/3", "3/3"]


@pytest.mark.parametrize("n_pair", [None, 2])
def test_the_ranker_grows_the_local_trees(client, n_pair):
    # query ids in any order: every query's rows are spread over the partitions of both
    # workers and gathered on one; pair sampling draws as in the local fit
    X, y = integer_data(seed=8)
    rng = np.random.default_rng(9)
    qid = rng.integers(0, 150, size=y.shape[0])
    rel = np.clip(np.round(y - y.min()), 0, 4)
    w = rng.uniform(0.5, 2.0, size=150)[qid]     # a weight per query
    Xv, rv, qv = X[:600], rel[:600], rng.integers(0, 30, size=600)
    params = dict(n_estimators=6, max_depth=3, lambdarank_num_pair_per_sample=n_pair,
                  eval_metric=["ndcg@5", "map@5"])
    dist = DaskGBTRanker(**params).fit(
        da.from_array(X, chunks=(700, -1)), da.from_array(rel, chunks=700),
        qid=da.from_array(qid, chunks=700), sample_weight=da.from_array(w, chunks=700),
        eval_set=[(da.from_array(Xv, chunks=(200, -1)), rv)], eval_qid=[qv])
    local = GBTRanker(**params).fit(X, rel, qid=qid, sample_weight=w, eval_set=[(Xv, rv)],
                                    eval_qid=[qv])
    assert_same_trees(dist.to_local(), local)
    for metric in ("ndcg@5", "map@5"):
        np.testing.assert_allclose(dist.evals_result_["validation_0"][metric],
                                   local.evals_result_["validation_0"][metric], rtol=1e-9)
    np.testing.assert_allclose(dist.predict(da.from_array(X, chunks=(900, -1))).compute(),
                               local.predict(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("kind", ["regressor", "classifier", "ranker"])
def test_row_sampling_and_feature_weights_grow_the_local_trees(client, kind):
    # each row draws its number of the round as in the local fit, wherever it lives:
    # uneven partitions spread over both workers, a ranker's queries moved and sorted
    X, y = integer_data(seed=12)
    params = dict(n_estimators=8, max_depth=3, subsample=0.4, colsample_bynode=0.6,
                  feature_weights=[1.0, 0.0, 3.0, 1.0, 1.0])
    dX = da.from_array(X, chunks=((500, 1300, 200, 1000), -1))
    if kind == "ranker":
        qid = np.random.default_rng(3).integers(0, 120, size=y.shape[0])
        rel = np.clip(np.round(y - y.min()), 0, 4)
        dist = DaskGBTRanker(**params).fit(dX, da.from_array(rel, chunks=dX.chunks[0]),
                                           qid=da.from_array(qid, chunks=dX.chunks[0]))
        local = GBTRanker(**params).fit(X, rel, qid=qid)
    else:
        target = y if kind == "regressor" else (y > np.median(y)).astype(int)
        dist_class, local_class = ((DaskGBTRegressor, GBTRegressor) if kind == "regressor"
                                   else (DaskGBTClassifier, GBTClassifier))
        dist = dist_class(**params).fit(dX, da.from_array(target, chunks=dX.chunks[0]))
        local = local_class(**params).fit(X, target)
    assert_same_trees(dist.to_local(), local)
    nodes = local._ensemble.nodes
    assert nodes["count"][nodes["depth"] == 0].max() < 0.5 * X.shape[0]   # (a sample)
    assert not np.any(nodes["feature"] == 1)                              # (weight 0)


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_quantised_gradients_grow_the_local_trees(client, kind):
    # the steps come from the largest gradients over both workers, each row rounds at
    # its place in the data; the histograms sent are packed integers, half the bytes
    X, y = integer_data(seed=13)
    target = y if kind == "regressor" else np.digitize(y, np.quantile(y, [0.3, 0.7]))
    dist_class, local_class = ((DaskGBTRegressor, GBTRegressor) if kind == "regressor"
                               else (DaskGBTClassifier, GBTClassifier))
    params = dict(n_estimators=6, max_depth=4, subsample=0.8)
    dX = da.from_array(X, chunks=((500, 1300, 200, 1000), -1))
    dy = da.from_array(target, chunks=dX.chunks[0])
    dist = dist_class(grad_quant_bins=8, **params).fit(dX, dy)
    assert_same_trees(dist.to_local(), local_class(grad_quant_bins=8, **params).fit(X, target))
    if kind == "regressor":
        floats = dist_class(grad_quant_bins=None, **params).fit(dX, dy)
        ratio = (dist.fit_stats_["bytes_between_workers_per_tree"]
                 / floats.fit_stats_["bytes_between_workers_per_tree"])
        assert 0.45 < ratio < 0.6


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_warm_start_continues_the_model(client, kind):
    # the workers start from the fitted model's scores with its edges, and its rounds
    # go on: the local warm start's trees and histories
    X, y = integer_data(seed=14)
    target = y if kind == "regressor" else (y > np.median(y)).astype(int)
    dist_class, local_class = ((DaskGBTRegressor, GBTRegressor) if kind == "regressor"
                               else (DaskGBTClassifier, GBTClassifier))
    params = dict(n_estimators=3, max_depth=4, subsample=0.8, warm_start=True)
    dX = da.from_array(X, chunks=((500, 1300, 200, 1000), -1))
    dy = da.from_array(target, chunks=dX.chunks[0])
    dist, local = dist_class(**params), local_class(**params)
    dist.fit(dX, dy, eval_set=[(X[:300], target[:300])])
    local.fit(X, target, eval_set=[(X[:300], target[:300])])
    mapper = dist.to_local()._bin_mapper
    dist.set_params(n_estimators=7).fit(dX, dy, eval_set=[(X[:300], target[:300])])
    local.set_params(n_estimators=7).fit(X, target, eval_set=[(X[:300], target[:300])])
    assert dist.n_estimators_ == 7 and dist.to_local()._bin_mapper is mapper
    assert_same_trees(dist.to_local(), local)
    metric = local._objective.default_metric
    np.testing.assert_allclose(dist.evals_result_["validation_0"][metric],
                               local.evals_result_["validation_0"][metric], rtol=1e-9)
    assert len(dist.evals_result_["validation_0"][metric]) == 7
    with pytest.raises(ValueError, match="X has 4 features, but the model to continue has 5"):
        dist.set_params(n_estimators=9).fit(dX[:, :4], dy)


def _same_regressors(params, seed, rows=(500, 1300, 200, 1000)):
    """(the local model of a DaskGBTRegressor, a GBTRegressor, X): both fitted with
    ``params`` on ``integer_data(seed=seed)`` (the Dask fit's partitions of ``rows``
    rows each), which grew the same trees."""
    X, y = integer_data(seed=seed)
    dist = DaskGBTRegressor(**params).fit(da.from_array(X, chunks=(rows, -1)),
                                          da.from_array(y, chunks=(rows,)))
    local = GBTRegressor(**params).fit(X, y)
    assert_same_trees(dist.to_local(), local)
    return dist.to_local(), local, X


@pytest.mark.parametrize("tree", [dict(max_depth=6, max_leaves=11),
                                  dict(grow_policy="lossguide", max_depth=0, max_leaves=13)])
def test_leaf_budgets_and_lossguide_trees_grow_the_local_trees(client, tree):
    # lossguide: one split of a tree at a time, the open node of the largest gain
    _, local, _ = _same_regressors(dict(n_estimators=6, learning_rate=0.3, **tree), seed=7)
    assert (local._ensemble.nodes["is_leaf"] == 1).sum() == tree["max_leaves"] * 6


def test_symmetric_trees_grow_the_local_trees(client):
    # one split a level for every node, the best summed gain over the level's nodes
    _, local, _ = _same_regressors(dict(n_estimators=6, max_depth=5, grow_policy="symmetric",
                                        subsample=0.8, colsample_bylevel=0.7), seed=8)
    tree = local._ensemble.tree(0)
    assert len(tree) == 2 ** (tree["depth"].max() + 1) - 1
    inner = tree[tree["is_leaf"] == 0]
    assert all(len(set(inner["feature"][inner["depth"] == d])) == 1
               for d in np.unique(inner["depth"]))


def test_vector_leaves_grow_the_local_trees(client):
    # one structure for the three classes, each leaf a value per class
    X, y = integer_data(seed=18)
    labels = np.digitize(y, np.quantile(y, [0.3, 0.7]))
    params = dict(n_estimators=5, max_depth=4, multi_strategy="multi_output_tree",
                  subsample=0.8)
    rows = (500, 1300, 200, 1000)
    dist = DaskGBTClassifier(**params).fit(da.from_array(X, chunks=(rows, -1)),
                                           da.from_array(labels, chunks=(rows,)))
    local = GBTClassifier(**params).fit(X, labels)
    assert_same_trees(dist.to_local(), local)
    assert dist.fit_stats_["trees"] == 15


def test_forests_grow_the_local_trees(client):
    _, local, _ = _same_regressors(dict(n_estimators=3, max_depth=4, num_parallel_tree=3,
                                        subsample=0.8, colsample_bynode=0.7), seed=9)
    assert local._ensemble.n_trees == 9


def test_class_weight_grows_the_local_trees(client):
    X, y = integer_data(seed=12)
    labels = np.digitize(y, np.quantile(y, [0.6, 0.9]))
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=y.shape[0])
    params = dict(n_estimators=5, max_depth=3, class_weight="balanced")
    dist = DaskGBTClassifier(**params).fit(
        da.from_array(X, chunks=(700, -1)), da.from_array(labels, chunks=700),
        sample_weight=da.from_array(w, chunks=500))
    local = GBTClassifier(**params).fit(X, labels, sample_weight=w)
    assert_same_trees(dist.to_local(), local)


def test_dart_grows_the_local_trees(client):
    _same_regressors(dict(n_estimators=6, max_depth=3, booster="dart", rate_drop=0.4,
                          subsample=0.8), seed=10)


def test_constraints_grow_the_local_trees(client):
    model, _, X = _same_regressors(dict(n_estimators=8, max_depth=5, **CONSTRAINTS), seed=6)
    assert_constrained(model, X)


def test_the_rankers_queries_are_checked(client):
    X, y = integer_data(n=600)
    qid = np.repeat(np.arange(60), 10)
    rel = np.clip(np.round(y - y.min()), 0, 4)
    w = np.ones(600)
    w[5] = 2.0     # a query with two weights
    dX, dr = da.from_array(X, chunks=(250, -1)), da.from_array(rel, chunks=250)
    with pytest.raises(ValueError, match="sample_weight must be the same for every row"):
        DaskGBTRanker(n_estimators=2).fit(dX, dr, qid=da.from_array(qid, chunks=250),
                                          sample_weight=da.from_array(w, chunks=250))
    with pytest.raises(ValueError, match="one query id per row"):
        DaskGBTRanker(n_estimators=2).fit(dX, dr, qid=da.from_array(qid[:500], chunks=250))
    with pytest.raises(ValueError, match="needs non-negative integer relevance"):
        DaskGBTRanker(n_estimators=2).fit(dX, dr - 1.5, qid=da.from_array(qid, chunks=250))


def _categorical_frame(n=3000, seed=11):
    import pandas as pd
    X, y = integer_data(n=n, seed=seed)
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "grey", "teal"], size=n)
    size = rng.integers(0, 3, size=n)
    y = y + np.where(colour == "teal", 2.0, 0.0) - np.where(size == 1, 1.5, 0.0)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2],
                          "colour": pd.Categorical(colour), "size": size})
    frame.loc[rng.random(n) < 0.05, "colour"] = None     # (missing categories)
    return frame, y


@pytest.mark.parametrize("spec", ["from_dtype", ["colour", "size"]])
def test_categorical_columns_of_a_dataframe_grow_the_local_trees(client, spec):
    # codes and indicator columns, as the local fit encodes the same rows
    frame, y = _categorical_frame()
    params = dict(n_estimators=8, max_depth=4, categorical_features=spec)
    dframe = dd.from_pandas(frame, npartitions=4)
    dist = DaskGBTRegressor(**params).fit(dframe, dd.from_pandas(__import__("pandas").Series(y),
                                                                   npartitions=4),
                                          eval_set=[(dframe.partitions[0], y[:750])])
    local = GBTRegressor(**params).fit(frame, y, eval_set=[(frame.iloc[:750], y[:750])])
    assert_same_trees(dist.to_local(), local)
    assert dist.to_local()._ensemble.n_features > frame.shape[1]     # (indicator columns)
    np.testing.assert_allclose(dist.evals_result_["validation_0"]["rmse"],
                               local.evals_result_["validation_0"]["rmse"], rtol=1e-9)
    np.testing.assert_allclose(dist.predict(dframe).compute(), local.predict(frame),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(dist.to_local().predict(frame.iloc[:100], pred_contribs=True),
                               local.predict(frame.iloc[:100], pred_contribs=True), atol=1e-9)


def test_warm_start_keeps_the_categorical_encoder(client):
    # the continued fit encodes the partitions with the fitted model's encoder
    frame, y = _categorical_frame()
    params = dict(n_estimators=3, max_depth=4, categorical_features="from_dtype",
                  warm_start=True)
    dframe = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(__import__("pandas").Series(y), npartitions=4)
    dist, local = DaskGBTRegressor(**params), GBTRegressor(**params)
    dist.fit(dframe, dy)
    local.fit(frame, y)
    encoder = dist.to_local()._cat_encoder
    dist.set_params(n_estimators=6).fit(dframe, dy)
    local.set_params(n_estimators=6).fit(frame, y)
    assert dist.to_local()._cat_encoder is encoder and dist.n_estimators_ == 6
    assert_same_trees(dist.to_local(), local)
    with pytest.raises(ValueError, match="feature names should match"):
        dist.set_params(n_estimators=8).fit(dframe.drop(columns="size"), dy)


def test_categorical_columns_that_need_target_statistics_are_refused(client):
    frame, y = _categorical_frame()
    dframe = dd.from_pandas(frame, npartitions=2)
    dy = dd.from_pandas(__import__("pandas").Series(y), npartitions=2)
    with pytest.raises(ValueError, match="target statistics, which a distributed fit"):
        DaskGBTRegressor(categorical_features=["colour"], max_cat_to_ordinal=3).fit(dframe, dy)
    with pytest.raises(TypeError, match="categorical_features needs a dask DataFrame"):
        DaskGBTRegressor(categorical_features=[0]).fit(da.from_array(frame[["a", "b"]].to_numpy(),
                                                                     chunks=1000),
                                                       da.from_array(y, chunks=1000))


def test_the_local_model_saves_loads_and_explains(client, tmp_path):
    X, y = integer_data(seed=4)
    dist = DaskGBTRegressor(n_estimators=5, max_depth=3).fit(da.from_array(X, chunks=800),
                                                             da.from_array(y, chunks=800))
    model = dist.to_local()
    assert type(model) is GBTRegressor
    assert_saves_loads_and_explains(model, X, tmp_path)


def test_column_sampling_draws_the_same_features_on_every_worker(client):
    X, y = integer_data(seed=5, p=8)
    dX, dy = da.from_array(X, chunks=600), da.from_array(y, chunks=600)
    a = DaskGBTRegressor(n_estimators=6, max_depth=3, colsample_bynode=0.5).fit(dX, dy)
    b = DaskGBTRegressor(n_estimators=6, max_depth=3, colsample_bynode=0.5).fit(
        da.from_array(X, chunks=1500), da.from_array(y, chunks=1500))
    np.testing.assert_array_equal(a.to_local()._ensemble.nodes["feature"],
                                  b.to_local()._ensemble.nodes["feature"])
    full = DaskGBTRegressor(n_estimators=6, max_depth=3).fit(dX, dy)
    assert not np.array_equal(a.to_local()._ensemble.nodes["feature"],
                              full.to_local()._ensemble.nodes["feature"])


def test_parameters_are_scikit_learns(client):
    m = DaskGBTRegressor(n_estimators=7, timeout=30.0)
    params = m.get_params()
    assert params["n_estimators"] == 7 and params["timeout"] == 30.0 and params["client"] is None
    assert clone(m).get_params() == params
    with pytest.raises(AttributeError, match="not fitted"):
        m.to_local()


@pytest.mark.parametrize("bad, match", [
    (dict(sampling_method="goss"), "does not support sampling_method='goss'"),
    (dict(tree_method="approx"), "does not support tree_method='approx'"),
    (dict(max_depth=0), "max_depth must be in 1..32, or 0 with max_leaves set"),
    (dict(objective="cox"), "does not support objective='cox' yet"),
    (dict(timeout=0), "timeout must be"),
])
def test_what_is_not_supported_is_refused(client, bad, match):
    X, y = integer_data(n=200)
    with pytest.raises(ValueError, match=match):
        DaskGBTRegressor(n_estimators=2, **bad).fit(da.from_array(X, chunks=100),
                                                    da.from_array(y, chunks=100))


def test_bad_input_gets_a_clear_error(client):
    X, y = integer_data(n=200)
    with pytest.raises(TypeError, match="dask.array or dask.dataframe"):
        DaskGBTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="one value per row"):
        DaskGBTRegressor(n_estimators=2).fit(da.from_array(X, chunks=100),
                                             da.from_array(y[:150], chunks=100))


def test_a_worker_killed_mid_fit_ends_the_fit_with_an_error():
    X, y = integer_data(n=20000, p=10)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        dX, dy = da.from_array(X, chunks=5000), da.from_array(y, chunks=5000)
        pids = c.run(os.getpid)
        victim = sorted(pids)[-1]
        result = {}

        def fit():
            try:
                DaskGBTRegressor(n_estimators=100000, max_depth=6, timeout=8).fit(dX, dy)
            except Exception as exc:   # what the user sees
                result["error"] = exc

        thread = threading.Thread(target=fit)
        start = time.monotonic()
        thread.start()
        time.sleep(3.0)
        os.kill(pids[victim], signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive(), "the fit hangs after a worker died"
        assert time.monotonic() - start < 60
        assert isinstance(result.get("error"), (RuntimeError, TimeoutError))
        assert "gbtree.dask" in str(result["error"])
        # the client and the cluster still work
        assert c.submit(sum, [1, 2]).result(timeout=30) == 3


class _EndsAsTheWaitDoes:
    """An actor's future whose first timed wait times out just as it finishes."""

    def __init__(self, value):
        self.value, self.waited = value, False

    def result(self, timeout=None):
        if timeout is not None and not self.waited:
            self.waited = True
            raise TimeoutError("timed out")
        if isinstance(self.value, Exception):
            raise self.value
        return self.value

    def done(self):
        return self.waited


def test_a_result_that_comes_as_a_wait_ends_is_taken():
    from gbtree.distributed.dask_shards import wait_all
    assert wait_all([_EndsAsTheWaitDoes(1), _EndsAsTheWaitDoes(2)], 5, "a test") == [1, 2]
    with pytest.raises(ValueError, match="a test failed on a worker: bad rows"):
        wait_all([_EndsAsTheWaitDoes(ValueError("bad rows"))], 5, "a test")


def _fails_late(y, raw):
    # a loss that fails on the worker holding row 0 after the first round
    if np.any(y == _MARK) and np.ptp(raw) > 0:
        raise ArithmeticError("a loss that fails on one worker")
    return raw - y, np.ones_like(y)


_MARK = 1234.5


def test_a_worker_that_fails_ends_the_fit_at_once(client):
    # the other worker waits for its part of a tree: the client reports the failure
    # as soon as it happens, not after the timeout
    X, y = integer_data()
    y[0] = _MARK
    model = DaskGBTRegressor(n_estimators=5, max_depth=3, objective=_fails_late, timeout=120)
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="a loss that fails on one worker"):
        model.fit(da.from_array(X, chunks=(700, -1)), da.from_array(y, chunks=700))
    # the cluster works on: the other worker's wait was abandoned
    again = DaskGBTRegressor(n_estimators=2, max_depth=2).fit(
        da.from_array(X, chunks=(700, -1)), da.from_array(y, chunks=700))
    assert again.to_local().n_estimators_ == 2
    assert time.perf_counter() - t0 < 60


def _broken_block(block):
    raise OSError("the disk holding this partition is gone")


def test_a_partition_that_cannot_be_computed_ends_the_fit_with_an_error(client):
    X, y = integer_data(n=400)
    dX = da.from_array(X, chunks=100)
    broken = dX.map_blocks(lambda b, block_info=None: _broken_block(b)
                           if block_info[0]["chunk-location"][0] == 2 else b, dtype=float)
    with pytest.raises(RuntimeError, match="gbtree.dask: a partition of the data could not be "
                                           "computed.*disk holding this partition"):
        DaskGBTRegressor(n_estimators=2, timeout=30).fit(broken, da.from_array(y, chunks=100))
    # the client still works
    assert client.submit(sum, [1, 2]).result(timeout=30) == 3


def test_the_shards_hold_the_partitions_where_they_are(client):
    # a fit's shards take X's partitions themselves (no task of their own in between,
    # which the scheduler could place on another worker): a persisted array's
    # partitions stay where they were, and two fits of it place its rows alike
    from gbtree.distributed.dask_shards import start_shards
    X, y = integer_data(n=3000)
    dX, dy = client.persist([da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500)])
    distributed.wait([dX, dy])
    where = client.who_has(distributed.futures_of(dX))
    shards, data = start_shards(client, dX, dy, None, 1, 60)
    assert [f.key for f in data[0]] == [d.key for d in dX.to_delayed().ravel()]
    assert dict(client.who_has(data[0])) == dict(where)
    assert len(shards) == len({w for holders in where.values() for w in holders})


def _wider(block):
    return np.c_[block, block[:, :1]]


@pytest.mark.parametrize("change, match", [
    ("wider", r"partition 1 of X has shape \(100, 6\); the array declares \(100, 5\)"),
    ("missing", r"partition 1 of X lacks \['c'\]"),
    ("reordered", r"partition 1 of X has its columns in another order"),
    ("extra", r"partition 1 of X has columns X does not: \['z'\]"),
])
def test_a_partition_unlike_the_others_is_named(client, change, match):
    # (they failed with "all the input array dimensions ... must match" on a worker, or
    # FuturesCancelledError ... lost dependencies)
    import dask
    import pandas as pd
    X, y = integer_data(n=300)
    dy = da.from_array(y, chunks=100)
    parts = [X[:100], X[100:200], X[200:]]
    if change == "wider":
        blocks = [da.from_array(parts[0]),
                  da.from_delayed(dask.delayed(_wider)(parts[1]), shape=(100, 5), dtype=float),
                  da.from_array(parts[2])]
        dX = da.concatenate(blocks)
    else:
        frames = [pd.DataFrame(p, columns=list("abcde"), index=range(100 * i, 100 * i + 100))
                  for i, p in enumerate(parts)]
        frames[1] = {"missing": frames[1].drop(columns="c"),
                     "reordered": frames[1][list("edcba")],
                     "extra": frames[1].assign(z=0.0)}[change]
        dX = dd.from_delayed([dask.delayed(lambda f: f)(f) for f in frames],
                             meta=frames[0].iloc[:0], verify_meta=False)
    with pytest.raises(ValueError, match=match):
        DaskGBTRegressor(n_estimators=2, timeout=60).fit(dX, dy)


@pytest.mark.parametrize("Est, bad, match", [
    (DaskGBTRegressor, np.nan, "partition 1 of y contains NaN"),
    (DaskGBTRegressor, np.inf, "partition 1 of y contains infinity"),
    (DaskGBTClassifier, np.nan, "partition 1 of y contains NaN"),
    (DaskGBTClassifier, np.inf, "partition 1 of y contains infinity"),
])
def test_labels_a_local_fit_refuses_are_refused_in_any_partition(client, Est, bad, match):
    # (the regressor fitted and predicted non-finite values; the classifier made NaN a class)
    X, y = integer_data(n=300)
    y = (y > np.median(y)).astype(np.float64)
    y[150] = bad
    with pytest.raises(ValueError, match=match):
        Est(n_estimators=2, timeout=60).fit(da.from_array(X, chunks=(100, -1)),
                                            da.from_array(y, chunks=100))
    local = Est._local_class()
    with pytest.raises(ValueError, match=match.replace("partition 1 of ", "")):
        local(n_estimators=2).fit(X, y)


def test_labels_too_large_for_the_gradients_are_refused_as_locally(client, tmp_path):
    # labels of 1e300 were fitted to one constant prediction on Dask
    from gbtree import ExternalData
    X, y = integer_data(n=300)
    y = y * 1e300
    match = "round 0 are inf or NaN: y or sample_weight is too large for their float32"
    with pytest.raises(ValueError, match=match):
        GBTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=match):
        GBTRegressor(n_estimators=2).fit(ExternalData(lambda: iter([(X, y)]),
                                                      cache_dir=tmp_path))
    with pytest.raises(ValueError, match=match):
        DaskGBTRegressor(n_estimators=2, timeout=60).fit(da.from_array(X, chunks=(100, -1)),
                                                         da.from_array(y, chunks=100))


def test_prediction_reads_partitions_of_any_layout(client):
    # a partition whose rows are not a whole number of items apart (predict, probabilities)
    X, y = integer_data(n=300)
    buf = np.zeros(300 * 43 + 8, dtype=np.uint8)
    odd = np.ndarray(X.shape, np.float64, buffer=buf, offset=1, strides=(43, 8))
    odd[...] = X
    model = DaskGBTClassifier(n_estimators=5, timeout=60).fit(
        da.from_array(X, chunks=(100, -1)), da.from_array(y > np.median(y), chunks=100))
    local = model.to_local()
    for method in ("predict", "predict_proba"):
        got = getattr(model, method)(da.from_array(odd, chunks=(100, -1))).compute()
        np.testing.assert_array_equal(got, getattr(local, method)(X))


def test_the_dask_model_is_unchanged(client):
    # the scores tests/fits/make_fits.py wrote (as tests/test_fits.py for local fits)
    import _fits
    got = _fits.raw_scores(*_fits.dask_fit(_fits.data(), client))
    with np.load(os.path.join(os.path.dirname(__file__), "fits", "raw_scores.npz")) as saved:
        want = saved["dask"]
    assert got.tobytes() == want.tobytes(), np.abs(got - want).max()
