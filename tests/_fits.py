"""A fit of every kind of model on small seeded data, and its raw scores on test rows:
tests/test_fits.py refits each and compares the scores bit for bit with the ones
tests/fits/make_fits.py wrote (``tests/fits/raw_scores.npz``), so that a change of
any model shows. A kind is a function of the data that returns (fitted estimator,
rows to score)."""
import numpy as np
import pandas as pd
import scipy.sparse as sp

from gbtree import ExternalData, GBTClassifier, GBTRanker, GBTRegressor

N, N_TEST, P = 1500, 300, 6
SMALL = dict(n_estimators=8, max_depth=4, learning_rate=0.3)


def data(seed=11):
    """Features with missing values, a regression target, class labels, relevance
    labels and query ids, survival times and a DataFrame with categorical columns."""
    rng = np.random.RandomState(seed)
    X = rng.randn(N + N_TEST, P)
    X[rng.rand(*X.shape) < 0.08] = np.nan
    Z = np.nan_to_num(X)
    y = Z[:, 0] * 1.5 + np.sin(2 * Z[:, 1]) + Z[:, 2] * Z[:, 3] + 0.4 * rng.randn(N + N_TEST)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(P)])
    frame["colour"] = rng.choice(["red", "green", "blue", "grey"], N + N_TEST)
    frame["shop"] = rng.randint(0, 60, N + N_TEST)
    frame["size"] = rng.choice(["S", "M", "L"], N + N_TEST)
    y_cat = y + frame["colour"].map({"red": 1.0, "green": -1.0, "blue": 0.5, "grey": 0.0})
    time = np.exp(0.3 * y + 0.2 * rng.randn(N + N_TEST))
    event = rng.rand(N + N_TEST) < 0.7
    return {"X": X, "y": y, "frame": frame, "y_cat": y_cat.to_numpy(),
            "classes": np.digitize(y, [-1.0, 1.0]), "binary": (y > 0.3).astype(int),
            "relevance": np.clip(np.round(y + 1.5), 0, 4), "qid": np.arange(N) // 25,
            "positive": np.abs(y) + 0.1, "cox": np.where(event, time, -time),
            "aft": np.c_[time, np.where(event, time, np.inf)],
            "margin": 0.3 * np.nan_to_num(X[:, 4]),
            "weight": rng.uniform(0.5, 2.0, N + N_TEST)}


def _regressor(**params):
    def fit(d):
        return GBTRegressor(**{**SMALL, **params}).fit(d["X"][:N], d["y"][:N]), d["X"][N:]
    return fit


def _on(target, Est=GBTRegressor, **params):
    def fit(d):
        return Est(**{**SMALL, **params}).fit(d["X"][:N], d[target][:N]), d["X"][N:]
    return fit


def _ranker(**params):
    def fit(d):
        model = GBTRanker(**{**SMALL, **params}).fit(d["X"][:N], d["relevance"][:N],
                                                     qid=d["qid"])
        return model, d["X"][N:]
    return fit


def _weighted_with_margins(d):
    model = GBTRegressor(**SMALL).fit(d["X"][:N], d["y"][:N], sample_weight=d["weight"][:N],
                                      base_margin=d["margin"][:N])
    return model, d["X"][N:]


def _warm_start(d):
    model = GBTClassifier(**SMALL, warm_start=True).fit(d["X"][:N], d["classes"][:N])
    model.set_params(n_estimators=14).fit(d["X"][:N], d["classes"][:N])
    return model, d["X"][N:]


def _sparse(absent_as_missing):
    def fit(d):
        S = sp.csr_matrix(np.where(np.abs(np.nan_to_num(d["X"])) < 0.7, 0.0,
                                   np.nan_to_num(d["X"])))
        model = GBTRegressor(**SMALL, absent_as_missing=absent_as_missing).fit(S[:N],
                                                                               d["y"][:N])
        return model, S[N:]
    return fit


def _categorical(**params):
    def fit(d):
        model = GBTRegressor(**SMALL, categorical_features=["colour", "shop", "size"],
                             **params).fit(d["frame"][:N], d["y_cat"][:N])
        return model, d["frame"][N:]
    return fit


def _out_of_core(Est, target, **params):
    def fit(d):
        X, y = d["X"][:N], d[target][:N]
        source = ExternalData(lambda: iter([(X[:700], y[:700]), (X[700:], y[700:])]),
                              block_rows=500)
        return Est(**{**SMALL, **params}).fit(source), d["X"][N:]
    return fit


KINDS = {
    "hist depthwise": _regressor(),
    "hist lossguide": _regressor(grow_policy="lossguide", max_depth=0, max_leaves=20),
    "float gradients": _regressor(grad_quant_bins=None),
    "float gradients lossguide": _on("classes", GBTClassifier, grad_quant_bins=None,
                                     grow_policy="lossguide", max_depth=0, max_leaves=20),
    "regularised": _regressor(reg_alpha=0.5, reg_lambda=3.0, gamma=0.2, max_delta_step=0.7,
                              min_child_weight=5.0),
    "binary": _on("binary", GBTClassifier),
    "multiclass": _on("classes", GBTClassifier),
    "ranker ndcg": _ranker(),
    "ranker pairwise": _ranker(objective="rank:pairwise"),
    "ranker map": _ranker(objective="rank:map"),
    "row and column sampling": _regressor(subsample=0.7, colsample_bytree=0.8,
                                          colsample_bylevel=0.8, colsample_bynode=0.7),
    "goss": _on("binary", GBTClassifier, sampling_method="goss"),
    "monotone and interaction constraints": _regressor(
        monotone_constraints=[1, 0, 0, 0, -1, 0], interaction_constraints=[[0, 1, 4], [2, 3]]),
    "quantised gradients": _on("binary", GBTClassifier, grad_quant_bins=16),
    "dart": _regressor(booster="dart", rate_drop=0.3),
    "forest": _regressor(num_parallel_tree=4, subsample=0.6, colsample_bynode=0.7,
                         learning_rate=1.0, n_estimators=1),
    "symmetric": _on("classes", GBTClassifier, grow_policy="symmetric"),
    "ordered boosting": _on("binary", GBTClassifier, boosting_type="ordered"),
    "vector leaves": _on("classes", GBTClassifier, multi_strategy="multi_output_tree"),
    "exact": _regressor(tree_method="exact"),
    "approx global": _regressor(tree_method="approx"),
    "approx local": _regressor(tree_method="approx", approx_proposal="local", sketch_eps=0.1),
    "absolute error": _on("y", objective="absolute_error"),
    "quantiles": _on("y", objective="quantile", quantile_alpha=[0.1, 0.5, 0.9]),
    "huber": _on("y", objective="huber"),
    "poisson": _on("positive", objective="poisson"),
    "gamma": _on("positive", objective="gamma"),
    "tweedie": _on("positive", objective="tweedie"),
    "cox": _on("cox", objective="cox"),
    "aft": _on("aft", objective="aft"),
    "weights and base margins": _weighted_with_margins,
    "warm start": _warm_start,
    "sparse, absent as zero": _sparse(False),
    "sparse, absent as missing": _sparse(True),
    "categorical codes and statistics": _categorical(max_cat_to_ordinal=8),
    "categorical indicators": _categorical(max_cat_to_onehot=4),
    "out of core": _out_of_core(GBTRegressor, "y"),
    "out of core lossguide": _out_of_core(GBTClassifier, "classes", grow_policy="lossguide",
                                          max_depth=0, max_leaves=12),
}


def raw_scores(model, X):
    """The model's raw scores of X: (rows, outputs), float64."""
    return model._raw_predict(X)


def dask_fit(d, client):
    """The ``dask`` kind: a ``DaskGBTRegressor`` on 2 workers, lossguide trees."""
    import dask.array as da
    from gbtree.dask import DaskGBTRegressor
    X, y = d["X"][:N], d["y"][:N]
    model = DaskGBTRegressor(**{**SMALL, "max_depth": 0}, grow_policy="lossguide",
                             max_leaves=16, client=client, timeout=120)
    model.fit(da.from_array(X, chunks=(400, -1)), da.from_array(y, chunks=400))
    return model.to_local(), d["X"][N:]
