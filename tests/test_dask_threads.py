"""gbtree.dask on a LocalCluster of three workers in threads (no other client in the
process: the actors of a cluster of threads are reached through the process's
client): beyond two workers the histograms are reduce-scattered."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="gbtree.dask needs the dask extra")
distributed = pytest.importorskip("distributed", reason="gbtree.dask needs the dask extra")

from gbtree import GBTClassifier, GBTRegressor  # noqa: E402
from gbtree.dask import DaskGBTClassifier, DaskGBTRegressor  # noqa: E402
from _levelwise import (CONSTRAINTS, assert_constrained, assert_same_trees,  # noqa: E402
                        integer_data)


@pytest.mark.parametrize("n_workers", [3, 4, 5])
def test_more_workers_reduce_scatter_the_histograms_and_grow_the_local_trees(n_workers):
    # beyond two workers each scans a range of the features: the histograms are
    # reduce-scattered, then the candidate splits gathered (two exchanges a level);
    # a cluster of threads, whose actors share their proxies
    X, y = integer_data(seed=2)
    # float gradients (the exchanges counted below); dist_q quantises them
    params = dict(n_estimators=6, max_depth=4, colsample_bynode=0.6, random_state=3,
                  grad_quant_bins=None)
    quantised = dict(params, grad_quant_bins=8)
    labels = np.where(y > np.median(y), "a", np.where(y > np.quantile(y, 0.2), "b", "c"))
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        dX = da.from_array(X, chunks=(300, -1))
        dist = DaskGBTRegressor(client=c, timeout=60, **params).fit(
            dX, da.from_array(y, chunks=300))
        dist_c = DaskGBTClassifier(client=c, timeout=60, **params).fit(
            dX, da.from_array(labels, chunks=300))
        # (each worker scans its range of the features under the constraints)
        dist_m = DaskGBTRegressor(client=c, timeout=60, **params, **CONSTRAINTS).fit(
            dX, da.from_array(y, chunks=300))
        # (a symmetric level's candidates gathered over the butterfly)
        dist_s = DaskGBTRegressor(client=c, timeout=60, grow_policy="symmetric",
                                  **params).fit(dX, da.from_array(y, chunks=300))
        # (each child's histograms of the three classes reduce-scattered together)
        dist_v = DaskGBTClassifier(client=c, timeout=60, multi_strategy="multi_output_tree",
                                   **params).fit(dX, da.from_array(labels, chunks=300))
        # (the leaves' quantiles selected over the butterfly)
        dist_a = DaskGBTRegressor(client=c, timeout=60, objective="absolute_error",
                                  **params).fit(dX, da.from_array(y, chunks=300))
        # (packed integer histograms reduce-scattered, the steps and leaf sums summed)
        dist_q = DaskGBTRegressor(client=c, timeout=60, **quantised).fit(
            dX, da.from_array(y, chunks=300))
    stats = dist.fit_stats_
    assert stats["workers"] == n_workers
    levels = dist.to_local()._ensemble.nodes["depth"].max()   # (the deepest tree's)
    assert 2 * 2 <= stats["exchanges_per_tree"] <= 2 * (1 + levels)
    # the first worker: log2(P) messages an exchange in the butterfly of P = 2 or 4
    # workers, one more to a worker folded into it
    paired = 1 << (n_workers.bit_length() - 1)
    steps = (paired.bit_length() - 1) + (n_workers > paired)
    assert stats["messages_per_tree"] == steps * stats["exchanges_per_tree"]
    assert_same_trees(dist.to_local(), GBTRegressor(**params).fit(X, y))
    assert_same_trees(dist_c.to_local(), GBTClassifier(**params).fit(X, labels))
    assert_same_trees(dist_m.to_local(), GBTRegressor(**params, **CONSTRAINTS).fit(X, y))
    assert_constrained(dist_m.to_local(), X)
    assert_same_trees(dist_q.to_local(), GBTRegressor(**quantised).fit(X, y))
    assert_same_trees(dist_v.to_local(), GBTClassifier(multi_strategy="multi_output_tree",
                                                       **params).fit(X, labels))
    assert_same_trees(dist_s.to_local(),
                      GBTRegressor(grow_policy="symmetric", **params).fit(X, y))
    assert_same_trees(dist_a.to_local(),
                      GBTRegressor(objective="absolute_error", **params).fit(X, y))
