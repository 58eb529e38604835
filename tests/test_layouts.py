"""Every public entry point on every memory layout and input type: the same result as on
a clean C-ordered float64 copy of the same values, or a clear error.

Arrays are drawn in C and Fortran order, reversed, sliced, unaligned, with strides that
are not a whole number of items, as views of record fields, read-only and memory-mapped,
in every numeric dtype; frames as pandas (plain, nullable, sparse, Arrow-backed) and
polars (NaN or null as missing)."""
import mmap
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from numpy.lib import recfunctions as rfn

from gbtree import GBTClassifier, GBTRanker, GBTRegressor

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]
ARRAY_LAYOUTS = ["C", "F", "reversed rows", "reversed columns", "sliced", "unaligned",
                 "partial-item stride", "partial-item stride, reversed", "record fields",
                 "read-only", "memory-mapped", "anonymous mmap, reversed"]
FRAME_LAYOUTS = ["pandas", "pandas nullable", "pandas sparse 0", "pandas sparse NaN",
                 "pandas arrow", "polars", "polars null"]


def _values(seed, n, p, dtype, with_nan):
    """Small whole numbers and halves (exact in every dtype drawn), NaN where allowed."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        X = rng.integers(0, 2, size=(n, p)).astype(np.float64)
    elif dtype in INTS:
        X = rng.integers(0, 100, size=(n, p)).astype(np.float64)
    else:
        X = rng.integers(-40, 40, size=(n, p)) / 2.0
        if with_nan:
            X[rng.random((n, p)) < 0.15] = np.nan
    return X


def _strided(a, row_bytes, reverse=False):
    """``a`` copied into a buffer whose rows are ``row_bytes`` apart (any number)."""
    n, p = a.shape
    buf = mmap.mmap(-1, max(n * row_bytes + a.itemsize * p, 1))
    out = np.ndarray((n, p), a.dtype, buf, strides=(row_bytes, a.itemsize))
    out[...] = a[::-1] if reverse else a
    return out[::-1] if reverse else out


def _array_layout(X, dtype, layout, tmpdir):
    a = X.astype(dtype)
    n, p = a.shape
    size = a.itemsize
    if layout == "C":
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "reversed rows":
        return np.ascontiguousarray(a[::-1])[::-1]
    if layout == "reversed columns":
        return np.ascontiguousarray(a[:, ::-1])[:, ::-1]
    if layout == "sliced":
        big = np.zeros((2 * n, 3 * p), dtype=a.dtype)
        big[::2, 1::3] = a
        return big[::2, 1::3]
    if layout == "unaligned":
        buf = np.zeros(a.nbytes + 1, dtype=np.uint8)
        out = np.ndarray(a.shape, a.dtype, buf, offset=1)
        out[...] = a
        return out
    if layout == "partial-item stride":
        return _strided(a, p * size + 3 + size // 2)
    if layout == "partial-item stride, reversed":
        return _strided(a, p * size + 4 + size // 2, reverse=True)
    if layout == "anonymous mmap, reversed":
        return _strided(a, p * size, reverse=True)
    if layout == "record fields":
        rec = np.zeros(n, dtype=[(f"f{j}", a.dtype) for j in range(p)] + [("tag", "i4")])
        for j in range(p):
            rec[f"f{j}"] = a[:, j]
        return rfn.structured_to_unstructured(rec[[f"f{j}" for j in range(p)]])
    if layout == "read-only":
        out = a.copy()
        out.flags.writeable = False
        return out
    if layout == "memory-mapped":
        path = f"{tmpdir}/X.npy"
        np.save(path, a)
        return np.load(path, mmap_mode="r")
    raise AssertionError(layout)


def _frame_layout(X, dtype, layout):
    a = X.astype(dtype)
    names = [f"c{j}" for j in range(a.shape[1])]
    missing = np.isnan(X)
    if layout == "pandas":
        return pd.DataFrame(a, columns=names)
    if layout == "pandas nullable":
        kind = "Float64" if dtype in FLOATS else ("boolean" if dtype == "bool" else "Int64")
        cols = {}
        for j, name in enumerate(names):
            col = pd.array(a[:, j].tolist(), dtype=kind if kind != "Float64" else "Float64")
            col[missing[:, j]] = pd.NA
            cols[name] = col
        return pd.DataFrame(cols)
    if layout.startswith("pandas sparse"):
        if layout.endswith("NaN") and dtype not in FLOATS:
            a = a.astype(np.float64)   # (NaN is no value of an integer or bool column)
        fill = np.nan if layout.endswith("NaN") else a.dtype.type(0)
        return pd.DataFrame(a, columns=names).astype(pd.SparseDtype(a.dtype, fill))
    if layout == "pandas arrow":
        df = pd.DataFrame({name: pd.array(np.where(missing[:, j], None, a[:, j]).tolist(),
                                          dtype=pd.ArrowDtype(pa.from_numpy_dtype(a.dtype)))
                           for j, name in enumerate(names)})
        return df
    if layout == "polars":
        return pl.DataFrame({name: a[:, j] for j, name in enumerate(names)})
    if layout == "polars null":
        return pl.DataFrame({name: pl.Series(name, a[:, j]) for j, name in
                             enumerate(names)}).with_columns(
            [pl.when(pl.Series(missing[:, j])).then(None).otherwise(pl.col(name)).alias(name)
             for j, name in enumerate(names)])
    raise AssertionError(layout)


def _targets(kind, X, seed):
    rng = np.random.default_rng(seed + 1)
    score = np.nan_to_num(X, nan=3.0) @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0])
    if kind == "regressor":
        return score
    if kind == "classifier":
        return np.where(score > np.median(score), "yes", "no")
    return np.digitize(score, np.quantile(score, [0.5, 0.8])).astype(np.float64)


def _estimator(kind, **params):
    params = {"n_estimators": 6, "max_depth": 3, "min_child_weight": 0.0, "n_jobs": 1, **params}
    return {"regressor": GBTRegressor, "classifier": GBTClassifier,
            "ranker": GBTRanker}[kind](**params)


def _fit(kind, X, y, **kwargs):
    if kind == "ranker":
        kwargs["qid"] = np.arange(len(y)) // 5
    return kwargs


def _outputs(model, X, kind):
    """What every public entry point that reads X gives for it."""
    out = {"predict": model.predict(X), "apply": model.apply(X),
           "staged": np.array(list(model.staged_predict(X))),
           "first row": model.predict(X[:1] if isinstance(X, np.ndarray) else X.head(1)),
           "contributions": model.predict(X, pred_contribs=True),
           "approximate contributions": model.predict(X, pred_contribs=True,
                                                      approx_contribs=True),
           "interactions": model.predict(X, pred_interactions=True)}
    if kind == "classifier":
        out["proba"] = model.predict_proba(X)
        out["decision"] = model.decision_function(X)
        out["staged proba"] = np.array(list(model.staged_predict_proba(X)))
    return out


def _same(got, want):
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def _check_entry_points(kind, X, Xv, seed):
    y = _targets(kind, X, seed)
    clean = np.ascontiguousarray(X, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # feature names present at one of fit / predict
        base = _estimator(kind).fit(clean, y, **_fit(kind, clean, y))
        drawn = _estimator(kind).fit(Xv, y, **_fit(kind, Xv, y))
        want = _outputs(base, clean, kind)
        _same(_outputs(drawn, Xv, kind), want)     # fit on the layout
        _same(_outputs(base, Xv, kind), want)      # predict on the layout
        # an eval set in the layout: early stopping sees the same scores
        stop = dict(n_estimators=25, early_stopping_rounds=3)
        evals = {}
        for name, data in (("clean", clean), ("drawn", Xv)):
            extra = _fit(kind, data, y)
            if kind == "ranker":
                extra["eval_qid"] = [extra["qid"]]
            m = _estimator(kind, **stop).fit(clean, y, eval_set=[(data, y)], **extra)
            evals[name] = (m.best_iteration_, m.evals_result_)
        assert evals["drawn"] == evals["clean"]


# (the same draws on every run: each draw fits several models, so the suite runs few)
LAYOUT_SETTINGS = settings(max_examples=10, deadline=None, derandomize=True,
                           suppress_health_check=[HealthCheck.function_scoped_fixture])


# float32 and float64 (the types the kernels read in place) drawn half the time
DTYPES = st.one_of(st.sampled_from(["float32", "float64"]), st.sampled_from(FLOATS + INTS))
KINDS = st.sampled_from(["regressor", "classifier", "ranker"])


@pytest.mark.parametrize("layout", ARRAY_LAYOUTS)
@LAYOUT_SETTINGS
@given(seed=st.integers(0, 2 ** 16), n=st.integers(12, 40), p=st.integers(1, 4),
       dtype=DTYPES, kind=KINDS)
def test_every_array_layout_gives_the_clean_copys_results(layout, seed, n, p, dtype, kind):
    X = _values(seed, n, p, dtype, with_nan=True)
    with tempfile.TemporaryDirectory() as tmpdir:
        Xv = _array_layout(X, dtype, layout, tmpdir)
        np.testing.assert_array_equal(Xv.astype(np.float64), X)   # the same values
        _check_entry_points(kind, X, Xv, seed)
        del Xv   # (the memory map closes before its folder goes)


@pytest.mark.parametrize("layout", FRAME_LAYOUTS)
@LAYOUT_SETTINGS
@given(seed=st.integers(0, 2 ** 16), n=st.integers(12, 40), p=st.integers(1, 4),
       dtype=DTYPES, kind=KINDS)
def test_every_frame_type_gives_the_clean_copys_results(layout, seed, n, p, dtype, kind):
    X = _values(seed, n, p, dtype, with_nan=True)
    _check_entry_points(kind, X, _frame_layout(X, dtype, layout), seed)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 16), layout=st.sampled_from(ARRAY_LAYOUTS[:-2]),
       dtype=st.sampled_from(["float32", "float64", "int32", "uint8"]))
def test_labels_and_weights_in_any_layout(seed, layout, dtype):
    # y and sample_weight as strided, reversed, unaligned or record views
    X = _values(seed, 30, 2, "float64", with_nan=False)
    y = np.round(_targets("regressor", X, seed))
    w = np.arange(1, 31, dtype=np.float64) % 4 + 1
    yv, wv = (_array_layout(v[:, None], dtype, layout, None)[:, 0] for v in (y - y.min(), w))
    want = _estimator("regressor").fit(X, y - y.min(), sample_weight=w).predict(X)
    got = _estimator("regressor").fit(X, yv, sample_weight=wv).predict(X)
    np.testing.assert_array_equal(got, want)


def test_a_frame_of_sparse_columns_with_any_fill_value():
    # fill value 0 goes to scipy.sparse; NaN (mostly missing) and other fill values
    # cannot, and a frame of them was once refused with an AttributeError
    X = _values(3, 40, 2, "float64", with_nan=True)
    y = _targets("regressor", X, 3)
    want = _estimator("regressor").fit(X, y).predict(X)
    for fill in (0.0, np.nan, 1.0):
        frame = pd.DataFrame(X, columns=["a", "b"]).astype(pd.SparseDtype("float64", fill))
        model = _estimator("regressor").fit(frame, y)
        np.testing.assert_array_equal(model.predict(frame), want)
        assert list(model.feature_names_in_) == ["a", "b"]


def test_kernels_refuse_strides_that_are_not_whole_items():
    # the estimators copy such arrays first; the kernels themselves never misread one
    from gbtree.predicting import _predictor
    from gbtree.explaining import _treeshap
    from gbtree.data.binning import kernel_array
    X = _values(4, 50, 3, "float64", with_nan=True)
    odd = _strided(X, 3 * 8 + 4)
    model = _estimator("regressor").fit(X, _targets("regressor", X, 4))
    forest = model._ensemble._traversal()
    compact, tree_ptr, tree_class = forest.compact, forest.tree_ptr, forest.tree_class
    out = np.zeros((50, 1))
    with pytest.raises(ValueError, match="not whole multiples of its item size"):
        _predictor.predict_raw(odd, compact, tree_ptr, tree_class, out, 1)
    with pytest.raises(ValueError, match="not whole multiples of its item size"):
        _predictor.apply_raw(odd, model._ensemble.nodes, tree_ptr, np.zeros((50, 6), np.int32), 1)
    with pytest.raises(ValueError, match="not whole multiples of its item size"):
        _treeshap.tree_shap(0, odd, _treeshap.shap_nodes(model._ensemble.nodes, tree_ptr),
                            tree_ptr, tree_class, np.zeros(7, np.int64), np.zeros(0, np.int32),
                            np.zeros(50 * 4), 1, 1)
    copy = kernel_array(odd)
    assert copy is not odd and copy.flags.c_contiguous
    np.testing.assert_array_equal(copy, X)
    assert kernel_array(X) is X and kernel_array(X[::-1]).base is X   # no copy when whole
    for layout in ("unaligned", "record fields"):   # contiguous or not, an odd address
        moved = kernel_array(_array_layout(X, "float64", layout, None))
        assert moved.flags.aligned and moved.flags.c_contiguous
        np.testing.assert_array_equal(moved, X)
        column = kernel_array(_array_layout(X[:, :1], "float64", layout, None)[:, 0])
        assert column.flags.aligned and column.flags.c_contiguous   # (y, sample_weight)
        np.testing.assert_array_equal(column, X[:, 0])
