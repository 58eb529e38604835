"""Write the model files of this format version and the predictions they must give.

    python tests/models/make_models.py

Writes ``v<FORMAT_VERSION>/<name>.json`` and ``.gbt`` and ``v<N>/expected.json`` (the
rows to predict and every model's outputs on them). Files of earlier versions are
never rewritten: tests/test_model_files.py loads all of them.
"""
import json
import os

import numpy as np
import pandas as pd
import scipy.sparse as sp

from gbtree import GBTClassifier, GBTRanker, GBTRegressor
from gbtree.io.model_io import FORMAT_VERSION
from gbtree.io.values import Encoder

HERE = os.path.dirname(os.path.abspath(__file__))


def data():
    rng = np.random.RandomState(2024)
    X = rng.randn(120, 4)
    X[rng.rand(120, 4) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) - 0.5 * np.nan_to_num(X[:, 1]) + 0.3 * rng.randn(120)
    return rng, X, y


def models():
    """{name: (estimator fitted, rows to predict)}."""
    rng, X, y = data()
    small = dict(n_estimators=3, max_depth=2)
    pos = np.abs(y) + 0.1
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["color"] = rng.choice(["red", "green", "blue"], 120)
    df["shop"] = rng.randint(0, 20, 120)
    S = sp.random(120, 4, density=0.4, format="csr", random_state=1)
    qid = np.repeat(np.arange(12), 10)
    rel = rng.randint(0, 3, 120)
    out = {
        "regressor": (GBTRegressor(**small).fit(X, y), X),
        "classifier-binary": (GBTClassifier(**small).fit(X, np.where(y > 0, "yes", "no")), X),
        "classifier-multiclass": (GBTClassifier(**small).fit(X, np.digitize(y, [-0.5, 0.5])), X),
        "ranker-ndcg": (GBTRanker(**small).fit(X, rel, qid=qid), X),
        "ranker-pairwise": (GBTRanker(objective="rank:pairwise", **small).fit(X, rel, qid=qid), X),
        "ranker-map": (GBTRanker(objective="rank:map", **small).fit(X, rel, qid=qid), X),
        "categorical": (GBTRegressor(categorical_features=["color", "shop"], max_cat_to_ordinal=5,
                                     **small).fit(df, y), df),
        "sparse": (GBTRegressor(absent_as_missing=True, **small).fit(S, y), S),
        "early-stopping": (GBTClassifier(n_estimators=6, max_depth=2, early_stopping_rounds=2,
                                         validation_fraction=0.3).fit(X, y > 0), X),
    }
    for objective in ("absolute_error", "huber", "quantile", "poisson", "gamma", "tweedie"):
        out[f"regressor-{objective}"] = (GBTRegressor(objective=objective, **small).fit(X, pos), X)
    return out


def outputs(est, X):
    out = {"predict": est.predict(X), "apply": est.apply(X)}
    if hasattr(est, "predict_proba"):
        out["predict_proba"] = est.predict_proba(X)
    return out


def rows(X):
    """The rows as the document's values (a frame column by column, CSR by its arrays)."""
    enc = Encoder("json")
    if isinstance(X, pd.DataFrame):
        return {"frame": {c: enc(X[c].to_numpy(), c) for c in X.columns}}
    if sp.issparse(X):
        return {"csr": [enc(a, "X") for a in (X.data, X.indices, X.indptr)] + [list(X.shape)]}
    return {"array": enc(X, "X")}


def main():
    folder = os.path.join(HERE, f"v{FORMAT_VERSION}")
    os.makedirs(folder, exist_ok=True)
    expected, enc = {}, Encoder("json")
    for name, (est, X) in models().items():
        for suffix in (".json", ".gbt"):
            est.save_model(os.path.join(folder, name + suffix))
        expected[name] = {"rows": rows(X),
                          "outputs": {k: enc(v, k) for k, v in outputs(est, X).items()}}
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main()
