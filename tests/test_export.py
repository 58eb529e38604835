"""ONNX and Treelite exports, checked against onnxruntime and Treelite's GTIL."""
import numpy as np
import pandas as pd
import pytest

from gbtree import GBTClassifier, GBTRanker, GBTRegressor

onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")
treelite = pytest.importorskip("treelite", reason="treelite is in the test extra")


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(1000, 5)
    X[rng.rand(1000, 5) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + 0.3 * rng.randn(1000)
    return X, y


@pytest.fixture(scope="module")
def models(data):
    X, y = data
    small = dict(n_estimators=25, max_depth=4)
    qid = np.repeat(np.arange(100), 10)
    return {
        "regressor": GBTRegressor(**small).fit(X, y),
        "poisson": GBTRegressor(objective="poisson", **small).fit(X, np.exp(y / 3)),
        "quantile": GBTRegressor(objective="quantile", quantile_alpha=0.8, **small).fit(X, y),
        "binary": GBTClassifier(**small).fit(X, np.where(y > 0, "yes", "no")),
        "multiclass": GBTClassifier(**small).fit(X, np.digitize(y, [-1, 0, 1])),
        "early-stopped": GBTClassifier(n_estimators=60, max_depth=4, early_stopping_rounds=3,
                                       validation_fraction=0.3).fit(X, y > 0),
        "ranker": GBTRanker(**small).fit(X, np.clip(np.digitize(y, [-1, 0, 1]), 0, 3), qid=qid),
    }


def _onnx_run(est, X):
    session = onnxruntime.InferenceSession(est.to_onnx().SerializeToString())
    assert [i.name for i in session.get_inputs()] == ["X"]
    return session.run(None, {"X": np.asarray(X, dtype=np.float32)})


def _check_onnx(est, X):
    X32 = np.asarray(X, dtype=np.float32)
    out = _onnx_run(est, X32)
    if hasattr(est, "predict_proba"):
        label, proba = out
        np.testing.assert_allclose(proba, est.predict_proba(X32), rtol=0, atol=1e-5)
        sure = np.abs(np.diff(np.sort(est.predict_proba(X32), axis=1)[:, -2:])).ravel() > 1e-5
        np.testing.assert_array_equal(label[sure], est.predict(X32)[sure])
    else:
        want = est.predict(X32)
        np.testing.assert_allclose(out[0][:, 0], want, rtol=1e-5, atol=1e-5)


def test_onnx_matches_onnxruntime_with_missing_values(data, models):
    X, _ = data
    for name, est in models.items():
        _check_onnx(est, X)


def test_exports_with_categorical_columns(data):
    X, y = data
    rng = np.random.RandomState(1)
    few = rng.randint(0, 5, X.shape[0]).astype(float)      # ordinal codes
    many = rng.randint(0, 80, X.shape[0]).astype(float)    # target statistics
    many[rng.rand(X.shape[0]) < 0.05] = np.nan
    Xc = np.column_stack([X, few, many])
    yc = y + (few == 2) + np.nan_to_num(many) / 40
    test = Xc[:400].copy()
    test[:30, 5] = 17.0          # values never seen in training
    test[30:60, 6] = 1000.0
    test[60:90, 5] = np.nan
    for est in (GBTRegressor(n_estimators=25, categorical_features=[5, 6], max_cat_to_ordinal=8),
                GBTClassifier(n_estimators=25, categorical_features=[5, 6], max_cat_to_ordinal=8)):
        est.fit(Xc, yc if isinstance(est, GBTRegressor) else yc > 0.5)
        assert est._cat_encoder.ordinal == [5] and est._cat_encoder.statistics_columns() == [6]
        # the 5-value column's indicator columns are features of the trees, and split
        assert est._cat_encoder.indicators[:, 0].tolist() == [5] * 5
        assert np.any(est._ensemble.nodes["feature"][est._ensemble.nodes["is_leaf"] == 0] >= 7)
        _check_onnx(est, test)
        raw = treelite.gtil.predict(est.to_treelite(), test, pred_margin=True)
        np.testing.assert_allclose(raw.ravel(), est._raw_predict(test).ravel(), rtol=1e-12,
                                   atol=1e-12)
    # integer categories of a DataFrame column
    df = pd.DataFrame(X, columns=list("abcde")).assign(shop=rng.randint(0, 30, X.shape[0]))
    est = GBTRegressor(n_estimators=20, categorical_features=["shop"]).fit(df, y)
    with pytest.warns(UserWarning, match="feature names"):
        _check_onnx(est, df.to_numpy(dtype=np.float32))


def test_exporters_refuse_what_they_cannot_represent(data):
    X, y = data
    df = pd.DataFrame(X, columns=list("abcde"))
    df["color"] = np.random.RandomState(0).choice(["red", "blue"], X.shape[0])
    est = GBTRegressor(n_estimators=5, categorical_features=["color"]).fit(df, y)
    with pytest.raises(ValueError, match="categories are not all numbers"):
        est.to_onnx()
    with pytest.raises(ValueError, match="categories are not all numbers"):
        est.to_treelite()
    halves = np.where(y > 0, 0.5, 1.5)
    est = GBTRegressor(n_estimators=3, categorical_features=[0]).fit(
        np.column_stack([halves, X[:, 1:]]), y)
    with pytest.raises(ValueError, match="integers >= 0"):
        est.to_treelite()
    floats = GBTClassifier(n_estimators=3).fit(X, np.where(y > 0, 1.0, 2.0))
    with pytest.raises(ValueError, match="ONNX labels are integers or text"):
        floats.to_onnx()


def test_treelite_matches_gtil(data, models):
    X, _ = data
    for name, est in models.items():
        got = treelite.gtil.predict(est.to_treelite(), X)
        if hasattr(est, "predict_proba"):
            want = est.predict_proba(X)
            want = want[:, 1:] if want.shape[1] == 2 else want
        else:
            want = est.predict(X)[:, None]
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-7, atol=1e-7,
                                   err_msg=name)
        raw = treelite.gtil.predict(est.to_treelite(), X, pred_margin=True)
        want_raw = est._raw_predict(X)
        np.testing.assert_allclose(raw.reshape(want_raw.shape), want_raw, rtol=1e-12,
                                   atol=1e-12, err_msg=name)


# ---------------------------------------------------------------- skl2onnx pipelines

@pytest.mark.parametrize("kind", ["regressor", "poisson", "binary", "multiclass", "ranker",
                                  "categorical"])
def test_skl2onnx_converts_pipelines_that_hold_an_estimator(data, models, kind):
    # registered with skl2onnx, an estimator converts inside a pipeline: onnxruntime
    # matches predict_proba within 1e-5 and predict relatively
    skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx is in the test extra")
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    import gbtree
    gbtree.register_skl2onnx()
    X, y = data
    X = X.astype(np.float32)
    if kind == "categorical":   # codes, and a column of target statistics (many values)
        rng = np.random.RandomState(3)
        X = X.copy()
        X[:, 3], X[:, 4] = rng.randint(0, 6, X.shape[0]), rng.randint(0, 80, X.shape[0])
        X[::11, 4] = np.nan
        est = GBTClassifier(n_estimators=25, max_depth=4, categorical_features=[3, 4])
        target = (X[:, 3] % 2 == 0) ^ (np.nan_to_num(X[:, 0]) > 0)
        pipe = Pipeline([("same", FunctionTransformer()), ("gbt", est)]).fit(X, target)
    else:
        est = clone(models[kind])
        pipe = Pipeline([("scale", StandardScaler()), ("gbt", est)])
        fit = {"gbt__qid": np.repeat(np.arange(100), 10)} if kind == "ranker" else {}
        target = {"binary": np.where(y > 0, "yes", "no"),
                  "multiclass": np.digitize(y, [-1, 0, 1]), "poisson": np.exp(y / 3),
                  "ranker": np.clip(np.digitize(y, [-1, 0, 1]), 0, 3)}.get(kind, y)
        pipe.fit(X, target, **fit)
    classifier = hasattr(pipe, "predict_proba")
    options = {id(pipe[-1]): {"zipmap": False}} if classifier else None
    onx = skl2onnx.to_onnx(pipe, X[:1], options=options)
    session = onnxruntime.InferenceSession(onx.SerializeToString())
    out = session.run(None, {session.get_inputs()[0].name: X})
    if classifier:
        np.testing.assert_allclose(out[1], pipe.predict_proba(X), rtol=0, atol=1e-5)
        np.testing.assert_array_equal(out[0], pipe.predict(X))
        # skl2onnx's default ZipMap: a dict of class probabilities per row
        zipped = onnxruntime.InferenceSession(skl2onnx.to_onnx(pipe, X[:1]).SerializeToString())
        first = zipped.run(None, {zipped.get_inputs()[0].name: X[:1]})[1][0]
        assert sorted(first) == sorted(pipe.classes_.tolist())
    else:
        np.testing.assert_allclose(out[0][:, 0], pipe.predict(X), rtol=1e-5, atol=1e-5)
