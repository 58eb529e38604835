"""Model files (save_model / load_model), the checks on loading, and pickles."""
import io
import json
import os
import pickle
import sys
import zipfile

import numpy as np
import pytest

import gbtree
from gbtree import GBTClassifier, GBTRanker, GBTRegressor
from gbtree.predicting.tree import TreeEnsemble

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_models  # noqa: E402

KINDS = ["regressor", "binary", "multiclass", "ranker", "categorical", "sparse"]


@pytest.fixture(scope="module")
def models():
    return fuzz_models.fitted_models()


def _same(a, b, where):
    """a and b are equal, down to the bits of every float (NaN included)."""
    assert type(a) is type(b), where
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype.kind in "fc" or a.dtype.names:
            assert a.tobytes() == b.tobytes(), where
        else:
            assert np.array_equal(a, b), where
    elif isinstance(a, dict):
        assert sorted(map(str, a)) == sorted(map(str, b)), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert np.array(a).tobytes() == np.array(b).tobytes(), where
    elif isinstance(a, TreeEnsemble):   # (without the traversal copy, a cache)
        _same(a.__getstate__(), b.__getstate__(), where)
    elif isinstance(a, np.random.RandomState):
        _same(a.get_state(), b.get_state(), where)
    elif hasattr(a, "__dict__") and not callable(a):
        _same(vars(a), vars(b), where)
    else:
        assert a == b, where


def _outputs(est, X):
    out = {"predict": est.predict(X), "apply": est.apply(X), "dump": est.get_dump(),
           "importances": [est._ensemble.feature_importances(t) for t in
                           ("weight", "gain", "cover", "total_gain", "total_cover")],
           "score": est.get_score("gain")}
    if hasattr(est, "predict_proba"):
        out["proba"] = est.predict_proba(X)
        out["decision"] = est.decision_function(X)
    return out


@pytest.mark.parametrize("suffix", [".json", ".gbt"])
@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_is_exact(models, kind, suffix, tmp_path):
    est, X = models[kind]
    path = tmp_path / f"model{suffix}"
    est.save_model(path)
    again = gbtree.load_model(path)
    assert type(again) is type(est)
    _same(vars(est), vars(again), "vars")
    _same(_outputs(est, X), _outputs(again, X), "outputs")
    # load_model on an estimator replaces it by the saved one
    other = type(est)(n_estimators=1).load_model(path)
    _same(vars(est), vars(other), "vars")
    # the encoding is the one the suffix names, whatever the reader sees
    assert (path.read_bytes()[:2] == b"PK") == (suffix != ".json")


@pytest.mark.parametrize("format", ["json", "binary"])
@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_through_bytes_and_file_objects(models, kind, format, tmp_path):
    est, X = models[kind]
    path = tmp_path / ("model.json" if format == "json" else "model.gbt")
    est.save_model(path)
    raw = est.save_raw(format)
    assert raw == path.read_bytes()   # the file's bytes, whatever holds them
    buffer = io.BytesIO()
    est.save_model(buffer, format=format)
    assert buffer.getvalue() == raw
    for source in (raw, bytearray(raw), memoryview(raw), io.BytesIO(raw)):
        again = gbtree.load_model(source)
        _same(vars(est), vars(again), "vars")
        _same(_outputs(est, X), _outputs(again, X), "outputs")
    other = type(est)(n_estimators=1).load_model(raw)
    _same(vars(est), vars(other), "vars")
    if format == "json":   # a text file object takes the JSON encoding
        text = io.StringIO()
        est.save_model(text, format="json")
        assert text.getvalue().encode("utf-8") == raw
        _same(vars(est), vars(gbtree.load_model(io.StringIO(text.getvalue()))), "vars")
    # any suffix takes the format asked for
    named = tmp_path / "model.bin"
    est.save_model(named, format=format)
    assert named.read_bytes() == raw


def test_a_model_saves_to_the_same_bytes_at_any_time(models, monkeypatch):
    # the binary file's members carry no time of saving: two saves seconds apart
    # (here, a clock moved on by a day) write the same bytes
    import time
    est, _ = models["binary"]
    first = est.save_raw("binary")
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 86_400.0)
    assert est.save_raw("binary") == first


def test_split_columns_hold_the_splits_and_binary_members_are_stored(models, tmp_path):
    from gbtree.io.model_io import SPLIT_FIELDS
    est, _ = models["multiclass"]
    nodes = est._ensemble.nodes
    split = nodes["is_leaf"] == 0
    assert 0 < split.sum() < len(nodes)
    est.save_model(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    for field in nodes.dtype.names:
        want = nodes[field][split] if field in SPLIT_FIELDS else nodes[field]
        np.testing.assert_array_equal(_node_field(doc, field), want)
    with zipfile.ZipFile(io.BytesIO(est.save_raw())) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}


def test_a_document_with_every_column_for_every_node_loads_as_version_2(models, tmp_path):
    est, X = models["categorical"]
    path = tmp_path / "m.json"
    est.save_model(path)
    nodes = est._ensemble.nodes

    def every_node(doc):   # (the layout of versions 1 and 2; leaves' entries not read)
        doc["format_version"] = 2
        for field in nodes.dtype.names:
            full = nodes[field].copy()
            if field in ("threshold", "gain"):
                full[nodes["is_leaf"] == 1] = 7.0
            doc["ensemble"]["nodes"][field]["$array"].update(
                dtype=full.dtype.str, shape=[len(full)], data=full.tolist())
    _edit(path, every_node)
    again = gbtree.load_model(path)
    _same(vars(est), vars(again), "vars")
    _same(_outputs(est, X), _outputs(again, X), "outputs")


def test_what_save_and_load_refuse(models, tmp_path):
    est, _ = models["regressor"]
    with pytest.raises(ValueError, match="format must be 'binary' or 'json', got 'ubj'"):
        est.save_raw("ubj")
    with pytest.raises(ValueError, match="format must be"):
        est.save_model(tmp_path / "m.json", format="text")
    with pytest.raises(TypeError, match="binary mode"):
        est.save_model(io.StringIO(), format="binary")
    for bad in (3, None, ["model.json"]):
        with pytest.raises(TypeError, match="a path, a file object or"):
            est.save_model(bad)
        with pytest.raises(TypeError, match="a path, a file object or"):
            gbtree.load_model(bad)
    # the bytes of a damaged file are checked as the file is
    raw = bytearray(est.save_raw())
    raw[len(raw) // 2] ^= 0xFF
    with pytest.raises(ValueError, match="invalid model"):
        gbtree.load_model(bytes(raw))
    with pytest.raises(ValueError, match="invalid model"):
        gbtree.load_model(b"not a model")
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        GBTRegressor().save_raw()


@pytest.mark.parametrize("kind", KINDS)
def test_pickle_goes_through_the_model_document(models, kind):
    est, X = models[kind]
    state = est.__getstate__()
    assert set(state) == {"_gbtree_model"}
    again = pickle.loads(pickle.dumps(est))
    _same(vars(est), vars(again), "vars")
    # what the document does not hold (scikit-learn's routing requests) is pickled beside it
    import sklearn
    with sklearn.config_context(enable_metadata_routing=True):
        routed = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(est)).set_fit_request(
            sample_weight=True)))
        assert routed.get_metadata_routing().fit.requests["sample_weight"] is True
    _same(_outputs(est, X), _outputs(again, X), "outputs")


def test_non_finite_floats_keep_their_bits(models, tmp_path):
    from gbtree.io.values import Decoder, Encoder
    est, X = models["regressor"]
    est = pickle.loads(pickle.dumps(est))
    nodes = est._ensemble.nodes
    split = np.flatnonzero(nodes["is_leaf"] == 0)
    for k, value in zip(split, [np.inf, -np.inf, -0.0]):   # (+-inf: splits off the missing)
        nodes["threshold"][k] = value
    est._ensemble._forest = None
    for suffix in (".json", ".gbt"):
        est.save_model(tmp_path / f"m{suffix}")
        again = gbtree.load_model(tmp_path / f"m{suffix}")
        assert again._ensemble.nodes.tobytes() == nodes.tobytes()
        np.testing.assert_array_equal(again.predict(X), est.predict(X))
    text = (tmp_path / "m.json").read_text()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert '"-inf"' in text
    # NaN's payload too (a model's histories may hold NaN: an out-of-bag loss of no rows)
    odd_nan = np.array([0x7FF8000000000123], dtype=np.uint64).view(np.float64)[0]
    values = np.array([np.inf, -np.inf, np.nan, -np.nan, odd_nan, -0.0])
    text = json.dumps(Encoder("json")(values, "x"))
    assert '"nan:0x7ff8000000000123"' in text
    decoded = Decoder("json", limit=1 << 20)(json.loads(text), "x")
    assert decoded.tobytes() == values.tobytes()


def _continue(est, X, y, **fit):
    return est.set_params(warm_start=True, n_estimators=est.n_estimators + 3).fit(X, y, **fit)


@pytest.mark.parametrize("suffix", [".json", ".gbt"])
def test_warm_start_from_a_loaded_model_grows_the_same_trees(tmp_path, suffix):
    import pandas as pd
    rng = np.random.RandomState(1)
    X = pd.DataFrame(rng.randn(300, 3), columns=["a", "b", "c"])
    X["city"] = rng.choice(["x", "y", "z", "w"], 300)
    y = X["a"].to_numpy() + rng.randn(300)
    qid = np.repeat(np.arange(30), 10)
    for est, fit in [
        (GBTRegressor(n_estimators=4, categorical_features=["city"], max_cat_to_ordinal=2,
                      subsample=0.7, eval_metric="mae"), {"eval_set": [(X, y)]}),
        (GBTRanker(n_estimators=4, lambdarank_num_pair_per_sample=2, categorical_features=[3]),
         {"qid": qid}),
        (GBTClassifier(n_estimators=4, colsample_bynode=0.5, categorical_features=[3]),
         {}),
    ]:
        target = (rng.randint(0, 3, 300) if isinstance(est, GBTRanker) else
                  np.digitize(y, [-1, 1]) if isinstance(est, GBTClassifier) else y)
        est.fit(X, target, **fit)
        est.save_model(tmp_path / f"m{suffix}")
        loaded = gbtree.load_model(tmp_path / f"m{suffix}")
        _continue(est, X, target, **fit)
        _continue(loaded, X, target, **fit)
        _same(vars(est)["_ensemble"], vars(loaded)["_ensemble"], "trees")
        _same(getattr(est, "evals_result_", None), getattr(loaded, "evals_result_", None),
              "evals_result_")


def _squared_loss(y_true, raw):
    return raw - y_true, np.ones_like(raw)


def test_what_a_file_cannot_hold(models, tmp_path):
    rng = np.random.RandomState(0)
    X, y = rng.randn(100, 3), rng.randn(100)
    custom = GBTRegressor(n_estimators=2, objective=_squared_loss).fit(X, y)
    with pytest.raises(ValueError, match="custom objective"):
        custom.save_model(tmp_path / "m.json")
    # (a pickle keeps the function)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(custom)).predict(X), custom.predict(X))
    # training hooks are not data: left out, and named in the file
    from gbtree.callback import EarlyStopping
    est = GBTRegressor(n_estimators=2, callbacks=[EarlyStopping(2)]).fit(X, y, eval_set=[(X, y)])
    est.save_model(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["unsaved_params"] == ["callbacks"]
    assert gbtree.load_model(tmp_path / "m.json").callbacks is None
    with pytest.raises(ValueError, match="holds a GBTRegressor, not a GBTClassifier"):
        GBTClassifier().load_model(tmp_path / "m.json")
    with pytest.raises(Exception, match="not fitted"):
        GBTRegressor().save_model(tmp_path / "unfitted.json")


# ---------------------------------------------------------------------- loading is checked
def _edit(path, change):
    """Apply ``change`` to the document of the JSON model file at ``path``."""
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _node_field(doc, field):
    return doc["ensemble"]["nodes"][field]["$array"]["data"]


def _append(doc, field, value):
    array = doc["ensemble"]["nodes"][field]["$array"]
    array["data"].append(value)
    array["shape"] = [len(array["data"])]


def _tree_size(doc, t):
    ptr = doc["ensemble"]["tree_ptr"]["$array"]["data"]
    return ptr[t + 1] - ptr[t]


@pytest.mark.parametrize("change,field", [
    (lambda d: _node_field(d, "feature").__setitem__(0, 99), "ensemble.nodes.feature"),
    (lambda d: _node_field(d, "left").__setitem__(0, 0), "ensemble.nodes.left"),
    (lambda d: _node_field(d, "right").__setitem__(0, 10 ** 6), "ensemble.nodes.right"),
    (lambda d: _node_field(d, "value").__setitem__(
        _node_field(d, "is_leaf").index(1), "nan"), "ensemble.nodes.value"),
    (lambda d: _node_field(d, "value").__setitem__(
        _node_field(d, "is_leaf").index(1), 1e308), "ensemble.nodes.value"),
    (lambda d: _node_field(d, "value").__setitem__(0, "inf"), "ensemble.nodes.value"),
    (lambda d: _node_field(d, "cover").__setitem__(
        _node_field(d, "is_leaf").index(1), "inf"), "ensemble.nodes.cover"),
    (lambda d: _node_field(d, "cover").__setitem__(3, -1.0), "ensemble.nodes.cover"),
    (lambda d: [_node_field(d, "cover").__setitem__(k, 1e308) for k, leaf in
                enumerate(_node_field(d, "is_leaf")[:_tree_size(d, 0)]) if leaf],
     "ensemble.nodes.cover"),
    (lambda d: _node_field(d, "gain").__setitem__(0, "nan"), "ensemble.nodes.gain"),
    (lambda d: _node_field(d, "threshold").__setitem__(0, "nan"), "ensemble.nodes.threshold"),
    (lambda d: d["ensemble"]["tree_class"]["$array"]["data"].__setitem__(0, 3),
     "ensemble.tree_class"),
    (lambda d: d["ensemble"]["tree_class"]["$array"]["data"].__setitem__(0, 1),
     "ensemble.tree_class"),
    (lambda d: d["ensemble"]["tree_class"]["$array"]["data"].__setitem__(0, 2),
     "ensemble.tree_class"),
    (lambda d: d["ensemble"]["tree_ptr"]["$array"]["data"].__setitem__(1, 0),
     "ensemble.tree_ptr"),
    (lambda d: d["ensemble"].pop("base_score"), "ensemble.base_score"),
    (lambda d: d["ensemble"]["nodes"]["depth"]["$array"].__setitem__("dtype", "<f8"),
     "ensemble.nodes.depth"),
    (lambda d: d["ensemble"]["nodes"]["count"]["$array"]["data"].append(1),
     "ensemble.nodes.count"),
    (lambda d: _append(d, "gain", 1.0), "ensemble.nodes.gain"),
    (lambda d: _append(d, "depth", 1), "ensemble.nodes.depth"),
    (lambda d: _node_field(d, "is_leaf").__setitem__(0, 2), "ensemble.nodes.is_leaf"),
    (lambda d: _node_field(d, "is_leaf").__setitem__(0, 1), "ensemble.nodes.threshold"),
    (lambda d: d["attributes"].__setitem__("n_estimators_", 7), "attributes.n_estimators_"),
    (lambda d: d["attributes"].__setitem__("classes_", d["attributes"]["n_features_in_"]),
     "attributes.classes_"),
    (lambda d: d["bins"]["cut_ptr_"]["$array"]["data"].__setitem__(1, 10 ** 6),
     "bins.cut_ptr_"),
    (lambda d: d["objective"]["state"].__setitem__("n_outputs", 2),
     "objective.state.n_outputs"),
    (lambda d: d["params"].__setitem__("max_depth", -1), "params"),
    (lambda d: d["params"].__setitem__("colour", 1), "params.colour"),
    (lambda d: d.__setitem__("estimator", "os.system"), "estimator"),
])
def test_a_bad_file_names_the_field(models, tmp_path, change, field):
    est, _ = models["multiclass"]
    path = tmp_path / "m.json"
    est.save_model(path)
    _edit(path, change)
    with pytest.raises(ValueError, match=f"invalid model: {field.replace('.', '[.]')}"):
        gbtree.load_model(path)


def _indicators(doc):
    return doc["categorical"]["indicators"]["$array"]


@pytest.mark.parametrize("change", [
    lambda d: _indicators(d)["data"].__setitem__(1, 99),            # no such category
    lambda d: _indicators(d)["data"].__setitem__(0, 0),             # not a categorical column
    lambda d: _indicators(d)["data"].__setitem__(slice(2, 4), _indicators(d)["data"][:2]),
    lambda d: _indicators(d).__setitem__("shape", [_indicators(d)["shape"][0] * 2, 1]),
    lambda d: d["categorical"].__setitem__("max_onehot", 2),        # too few to have them
])
def test_bad_indicator_columns_are_refused(models, tmp_path, change):
    est, _ = models["categorical"]
    assert est._cat_encoder.indicators.shape[0] > 2
    path = tmp_path / "m.json"
    est.save_model(path)
    _edit(path, change)
    with pytest.raises(ValueError, match="invalid model: categorical[.]indicators"):
        gbtree.load_model(path)
    # a version 1 file has no indicators, and its trees no features past X's
    est.save_model(path)
    _edit(path, lambda d: [d["categorical"].pop(k) for k in ("indicators", "max_onehot")])
    with pytest.raises(ValueError, match="invalid model: categorical[.]indicators: expected "
                                         "shape"):
        gbtree.load_model(path)


def test_a_ranker_objective_of_another_type_is_refused(models, tmp_path):
    est, _ = models["ranker"]
    est.save_model(tmp_path / "m.json")
    _edit(tmp_path / "m.json", lambda d: d["objective"]["state"].__setitem__("kind", [1, 2]))
    with pytest.raises(ValueError, match="invalid model: objective[.]state[.]kind"):
        gbtree.load_model(tmp_path / "m.json")


def test_newer_format_versions_and_other_files_are_named(models, tmp_path):
    est, _ = models["regressor"]
    path = tmp_path / "m.json"
    est.save_model(path)
    _edit(path, lambda d: d.__setitem__("format_version", 99))
    with pytest.raises(ValueError, match="format version 99, newer than this gbtree reads"):
        gbtree.load_model(path)
    path.write_text('{"format": "xgboost"}')
    with pytest.raises(ValueError, match="not a gbtree model"):
        gbtree.load_model(path)
    path.write_bytes(b"\x80\x04K\x01.")   # a pickle is not a model file
    with pytest.raises(ValueError, match="not a gbtree model file"):
        gbtree.load_model(path)


def test_sizes_are_bounded_by_the_file(models, tmp_path):
    est, _ = models["regressor"]
    for suffix in (".json", ".gbt"):
        path = tmp_path / f"m{suffix}"
        est.save_model(path)
        if suffix == ".json":
            _edit(path, lambda d: d["ensemble"]["nodes"]["value"]["$array"].__setitem__(
                "shape", [10 ** 12]))
        else:
            with zipfile.ZipFile(path) as zf:
                members = {n: zf.read(n) for n in zf.namelist()}
            doc = json.loads(members["model.json"])
            doc["ensemble"]["nodes"]["value"]["$array"]["shape"] = [10 ** 12]
            members["model.json"] = json.dumps(doc).encode()
            path.write_bytes(fuzz_models._zip(members))
        with pytest.raises(ValueError, match="ensemble.nodes.value: claims 1000000000000 values"):
            gbtree.load_model(path)


# ---------------------------------------------------------------------- pickles are checked
def test_a_changed_byte_in_a_pickled_multiclass_model_is_refused(models):
    est, X = models["multiclass"]
    blob = pickle.dumps(est)
    ens = est._ensemble
    for array, new_first, field in [(ens.tree_class, 7, "ensemble.tree_class"),
                                    (ens.nodes["feature"][ens.nodes["is_leaf"] == 0], 99,
                                     "ensemble.nodes.feature")]:
        at = blob.find(array.tobytes())
        assert at > 0 and blob.count(array.tobytes()) == 1
        bad = bytearray(blob)
        bad[at] = new_first     # (the first entry is >= 0 and < 128: its low byte)
        with pytest.raises(ValueError, match=field):
            pickle.loads(bytes(bad))


def _ensemble_state(nodes_spec):
    """The pickled state of a one-tree ensemble with nodes (left, right, depth)."""
    ens = TreeEnsemble(2, [0.0])
    from gbtree.kernels._typedefs import NODE_DTYPE
    nodes = np.zeros(len(nodes_spec), dtype=NODE_DTYPE)
    for k, (left, right, depth) in enumerate(nodes_spec):
        nodes[k]["left"], nodes[k]["right"], nodes[k]["depth"] = left, right, depth
        nodes[k]["is_leaf"] = left < 0
    ens.add_tree(nodes, 0)
    return ens, ens.__getstate__()


@pytest.mark.parametrize("spec,match", [
    ([(0, 1, 0), (-1, -1, 1)], "child 0 is not another node"),             # root its own child
    ([(1, 2, 0), (1, 3, 1), (-1, -1, 1), (-1, -1, 2)], "the child of 2 nodes"),
    # a cycle apart from the root: every node has one parent, 3 and 4 are never reached
    ([(1, 2, 0), (-1, -1, 1), (-1, -1, 1), (4, 3, 2), (-1, -1, 3)], "not reached"),
    ([(1, 2, 0), (-1, -1, 1), (-1, -1, 5)], "ensemble.nodes.depth"),
])
def test_an_ensemble_that_is_not_a_tree_is_refused(spec, match):
    ens, state = _ensemble_state(spec)
    blob = pickle.dumps(ens)
    with pytest.raises(ValueError, match=match):
        pickle.loads(blob)
    with pytest.raises(ValueError, match=match):
        TreeEnsemble.from_arrays(state["n_features"], state["base_score"], state["_nodes"],
                                 state["_tree_ptr"], state["_tree_class"])


def test_a_valid_hand_built_ensemble_predicts():
    ens, _ = _ensemble_state([(1, 2, 0), (-1, -1, 1), (-1, -1, 1)])
    again = pickle.loads(pickle.dumps(ens))
    assert again.predict_raw(np.zeros((3, 2))).shape == (3, 1)


def _verdicts(nodes, tree_ptr, n_features):
    """(the kernel's verdict, the NumPy twin's) on whether the trees are valid."""
    from gbtree.predicting import _predictor
    from gbtree.predicting.tree import _tree_errors

    def bad(field, msg):
        return ValueError(f"{field}: {msg}")
    try:
        _tree_errors(n_features, nodes, tree_ptr, bad)
        reference = True
    except ValueError:
        reference = False
    return _predictor.trees_are_valid(nodes, tree_ptr, n_features), reference


def test_the_tree_check_agrees_with_its_numpy_twin(models):
    # fitted ensembles, then each with one field of one node changed to a value
    # that is often invalid (a child out of its tree or shared, a wrong depth, a
    # flag of 2, a feature out of range, a non-finite leaf value)
    rng = np.random.default_rng(0)
    fields = {"left": [-1, 0, 1, 2, 3, 5, 2 ** 31 - 1], "right": [-1, 0, 1, 2, 4, 7],
              "depth": [-1, 0, 1, 2, 3, 2 ** 31 - 1], "is_leaf": [0, 1, 2],
              "default_left": [0, 1, 2, 255], "feature": [-1, 0, 1, 3, 4, 2 ** 31 - 1],
              "value": [0.0, np.inf, -np.inf, np.nan]}
    counts = {True: 0, False: 0}
    for kind, (est, _) in models.items():
        ens = est._ensemble
        nodes, tree_ptr, n_features = ens.nodes, ens.tree_ptr, ens.n_features
        assert _verdicts(nodes, tree_ptr, n_features) == (True, True), kind
        for _ in range(300):
            changed = nodes.copy()
            field = rng.choice(list(fields))
            k = rng.integers(len(nodes))
            changed[field][k] = rng.choice(fields[field])
            kernel, reference = _verdicts(changed, tree_ptr, n_features)
            assert kernel == reference, (kind, field, k, changed[k])
            counts[kernel] += 1
    assert min(counts.values()) > 100, counts     # both verdicts were tried often


# ---------------------------------------------------------------------- mutated files
def test_mutated_files_load_or_raise_value_error(models, tmp_path):
    """Bit flips, truncations, deleted / duplicated fields, other types, huge and negative
    numbers, in files of every kind and both encodings, loaded in subprocesses (with a
    memory limit and a timeout): no crash, no hang, nothing but ValueError."""
    base = {}
    for kind, (est, _) in models.items():
        for suffix in (".json", ".gbt"):
            est.save_model(tmp_path / f"{kind}{suffix}")
            base[f"{kind}{suffix}"] = (tmp_path / f"{kind}{suffix}").read_bytes()
    counts, failures = fuzz_models.campaign(base, 240, tmp_path, seed=0,
                                            batch=120, timeout=240)
    assert failures == []
    assert counts.get("ValueError", 0) > 120 and sum(counts.values()) == 240


# ---------------------------------------------------------------------- files of every version
MODELS_DIR = os.path.join(os.path.dirname(__file__), "models")
SAVED = [(version, name) for version in sorted(os.listdir(MODELS_DIR)) if version[0] == "v"
         for name in json.load(open(os.path.join(MODELS_DIR, version, "expected.json")))]


def _rows(spec):
    import pandas as pd
    import scipy.sparse as sp
    from gbtree.io.values import Decoder
    dec = Decoder("json", limit=1 << 30)
    if "frame" in spec:
        return pd.DataFrame({c: dec(v, c) for c, v in spec["frame"].items()})
    if "csr" in spec:
        data, indices, indptr = (dec(a, "X") for a in spec["csr"][:3])
        return sp.csr_matrix((data, indices, indptr), shape=tuple(spec["csr"][3]))
    return dec(spec["array"], "X")


@pytest.mark.parametrize("version,name", SAVED)
@pytest.mark.parametrize("suffix", [".json", ".gbt"])
def test_files_of_every_format_version_load_and_predict_as_written(version, name, suffix):
    from gbtree.io.values import Decoder
    with open(os.path.join(MODELS_DIR, version, "expected.json")) as f:
        expected = json.load(f)[name]
    est = gbtree.load_model(os.path.join(MODELS_DIR, version, name + suffix))
    if version == "v1":   # (before indicator columns: a model without them)
        assert est.max_cat_to_onehot == 0
    X = _rows(expected["rows"])
    dec = Decoder("json", limit=1 << 30)
    for method, want in expected["outputs"].items():
        got, want = getattr(est, method)(X), dec(want, method)
        assert got.dtype == want.dtype
        if got.dtype.kind == "f":   # (the same sums; exp and softmax may differ in the last bit)
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
        else:
            np.testing.assert_array_equal(got, want)


def test_json_files_follow_the_schema_that_ships(models, tmp_path):
    import importlib.resources
    import jsonschema
    schema = json.loads(importlib.resources.files("gbtree").joinpath(
        "model-format.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for kind, (est, _) in models.items():
        est.save_model(tmp_path / "m.json")
        validator.validate(json.loads((tmp_path / "m.json").read_text()))
        est.save_model(tmp_path / "m.gbt")
        with zipfile.ZipFile(tmp_path / "m.gbt") as zf:
            validator.validate(json.loads(zf.read("model.json")))
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["ensemble"]["nodes"]["value"]["$array"]["dtype"] = "<i4"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)
