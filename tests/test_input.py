"""Input types: pandas (names, nullable dtypes), pyarrow, polars; no copy of float input;
missing values and infinities."""
import numpy as np
import pytest

from gbtree import GBTClassifier, GBTRanker, GBTRegressor
from gbtree.boosting import booster


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    X[rng.rand(n) < 0.15, 2] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 2], nan=2.0) + rng.normal(scale=0.1, size=n)
    return X, y


def test_pandas_names_and_nullable_dtypes_are_missing_values():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    ints = np.round(X[:, 1] * 3)
    df = pd.DataFrame({
        "a": X[:, 0],
        "b": pd.array([None if np.isnan(v) else int(v) for v in np.where(X[:, 2] > 1, np.nan, ints)],
                      dtype="Int64"),
        "c": pd.array([None if np.isnan(v) else v for v in X[:, 2]], dtype="Float64"),
    })
    as_float = np.column_stack([X[:, 0], np.where(X[:, 2] > 1, np.nan, ints), X[:, 2]])
    model = GBTRegressor(n_estimators=10).fit(df, y)
    plain = GBTRegressor(n_estimators=10).fit(as_float, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(model.predict(df), plain.predict(as_float))
    with pytest.raises(ValueError, match="same order"):
        model.predict(df[["c", "a", "b"]])
    with pytest.raises(ValueError, match="(?s)unseen at fit time.*- z"):
        model.predict(df.rename(columns={"b": "z"}))
    boolean = pd.DataFrame({"flag": pd.array([True, None, False] * 100, dtype="boolean"),
                            "x": X[:, 0]})
    numeric = np.column_stack([np.tile([1.0, np.nan, 0.0], 100), X[:, 0]])
    np.testing.assert_array_equal(GBTRegressor(n_estimators=5).fit(boolean, y).predict(boolean),
                                  GBTRegressor(n_estimators=5).fit(numeric, y).predict(numeric))


def test_text_columns_of_a_data_frame_are_named_in_the_error():
    # pandas categorical and object columns are not encoded by gbtree: the error says
    # which columns to encode (numbers, booleans and nullable numbers are fine)
    pd = pytest.importorskip("pandas")
    X, y = _data(n=60)
    df = pd.DataFrame({"a": X[:, 0], "flag": X[:, 1] > 0,
                       "n": pd.array(np.arange(60), dtype="Int64"),
                       "color": pd.Categorical(np.where(X[:, 1] > 0, "red", "green")),
                       "city": np.where(X[:, 0] > 0, "Oslo", "Rome").astype(object)})
    with pytest.raises(ValueError, match=r"^X must hold numbers \(columns 'color', 'city'\); "
                                         r"name text or categorical columns in categorical_features, "
                                         r"or encode them first: "):
        GBTRegressor(n_estimators=2).fit(df, y)
    # a categorical of numbers converts: not named
    with pytest.raises(ValueError, match=r"^X must hold numbers \(column 'city'\)"):
        GBTRegressor(n_estimators=2).fit(
            df[["a", "city"]].assign(level=pd.Categorical(np.arange(60) % 3)), y)
    model = GBTRegressor(n_estimators=2).fit(df[["a", "flag", "n"]], y)
    with pytest.raises(ValueError, match=r"^X must hold numbers \(column 'a'\)"):
        model.predict(df[["a", "flag", "n"]].astype({"a": object}).assign(a="x"))


@pytest.mark.parametrize("dtype", [str, object])
def test_text_targets_of_a_regressor_or_ranker_name_y(dtype):
    # a text y was numpy's bare "could not convert" (str), or the X message (object)
    X, _ = _data(n=20)
    y = np.array(["a"] * 20, dtype=dtype)
    with pytest.raises(ValueError, match=r"^y must hold numbers: could not convert"):
        GBTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=r"^y must hold numbers: could not convert"):
        GBTRanker(n_estimators=2).fit(X, y, group=[20])


@pytest.mark.parametrize("library", ["pyarrow", "polars"])
def test_arrow_and_polars_frames(library):
    lib = pytest.importorskip(library)
    X, y = _data()
    cols = {name: [None if np.isnan(v) else float(v) for v in X[:, j]]
            for j, name in enumerate(["a", "b", "c"])}
    frame = lib.table(cols) if library == "pyarrow" else lib.DataFrame(cols)
    model = GBTRegressor(n_estimators=10).fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(model.predict(frame),
                                  GBTRegressor(n_estimators=10).fit(X, y).predict(X))


@pytest.fixture
def engine_input(monkeypatch):
    """What ``booster.train`` is given: ``seen["X"]`` after a fit."""
    seen = {}
    real_train = booster.train

    def spy(X_engine, *args, **kwargs):
        seen["X"] = X_engine
        return real_train(X_engine, *args, **kwargs)

    monkeypatch.setattr(booster, "train", spy)
    return seen


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_float_input_reaches_the_engine_without_a_copy(engine_input, dtype, order):
    X, y = _data()
    X = np.asarray(X, dtype=dtype, order=order)
    model = GBTRegressor(n_estimators=3).fit(X, y)
    assert engine_input["X"] is X or np.shares_memory(engine_input["X"], X)
    ints = np.round(np.nan_to_num(X) * 10).astype(np.int64)
    np.testing.assert_array_equal(GBTRegressor(n_estimators=3).fit(ints, y).predict(ints),
                                  GBTRegressor(n_estimators=3).fit(ints.astype(float), y).predict(ints))
    assert model.predict(X).shape == (len(y),)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_memory_mapped_file_is_read_in_place(engine_input, tmp_path, order):
    # data larger than memory: the engine bins the mapped file itself, no copy in memory
    # (docs/index.md, "Data larger than memory"); with more rows than the bin-edge sample
    X, y = _data(n=250_000)
    X = np.asarray(X, dtype=np.float32, order=order)
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    assert isinstance(mapped, np.memmap) and np.array_equal(mapped, X, equal_nan=True)
    params = dict(n_estimators=3, max_depth=3)
    model = GBTRegressor(**params).fit(mapped, y)
    assert np.shares_memory(engine_input["X"], mapped)
    np.testing.assert_array_equal(model.predict(mapped[:1000]),
                                  GBTRegressor(**params).fit(X, y).predict(X[:1000]))


def test_infinities_are_ordinary_extreme_values():
    rng = np.random.RandomState(0)
    x = rng.uniform(0, 1, size=400)
    y = (x > 0.5).astype(int)
    x[:20], y[:20] = np.inf, 1     # beyond every value: with the large ones
    x[20:40], y[20:40] = -np.inf, 0
    model = GBTClassifier(n_estimators=20, max_depth=2).fit(x[:, None], y)
    proba = model.predict_proba(np.array([[np.inf], [-np.inf], [0.9], [0.1]]))[:, 1]
    assert proba[0] > 0.9 and proba[1] < 0.1
    assert proba[0] == pytest.approx(proba[2], abs=0.05) and proba[1] == pytest.approx(proba[3], abs=0.05)


def test_nan_at_predict_time_follows_the_heavier_child():
    # no missing value at training: a NaN then goes where most training weight went
    x = np.r_[np.zeros(70), np.ones(30)]
    y = np.r_[np.zeros(70), np.ones(30) * 10]
    model = GBTRegressor(n_estimators=1, max_depth=1, learning_rate=1.0).fit(x[:, None], y)
    nan, zero, one = model.predict(np.array([[np.nan], [0.0], [1.0]]))
    assert nan == zero != one
    # the heavier side is the right one now
    model = GBTRegressor(n_estimators=1, max_depth=1, learning_rate=1.0).fit(1 - x[:, None], y)
    nan, zero, one = model.predict(np.array([[np.nan], [0.0], [1.0]]))
    assert nan == one != zero


def test_a_datetime_column_names_x():
    # numpy's DTypePromotionError (a TypeError) named no argument
    pd = pytest.importorskip("pandas")
    X, y = _data(n=20)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(a=pd.date_range("2020", periods=20))
    with pytest.raises(TypeError, match="^X: "):
        GBTRegressor(n_estimators=2).fit(df, y)
