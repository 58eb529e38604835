"""Model files: a fitted estimator as one document, written as JSON or as a zip of
raw arrays, and read back with every field checked (docs/model-format.md).

The document is a dict of plain values. Arrays are ``{"$array": {"dtype", "shape",
"data"}}`` in JSON (floats written with ``repr``, non-finite ones as strings, so
every value reads back to the same bits) and ``{"$array": {"dtype", "shape",
"member"}}`` in the binary encoding, whose zip member holds the raw little-endian
bytes (stored; deflated before format version 3). The split columns of the nodes
hold the splits' entries only, and integer node fields are written in the narrowest
integer type that holds them and widened on loading. Pickles carry the same document
with Python values in place (pickle keeps them), and are restored through the same
checks.
"""
from __future__ import annotations

import io
import json
import numbers
import os
import re
import struct
import zipfile
import zlib
from typing import Any, BinaryIO, TextIO

import numpy as np

from ..boosting import objectives as _obj
from ..boosting import ranking, survival
from ..growing._nodes import node_records
from ..kernels._threads import effective_n_threads
from ..kernels._ranking import KINDS as RANKING_KINDS
from ..kernels._typedefs import NODE_DTYPE
from ..predicting.tree import TreeEnsemble
from .values import Decoder, Encoder, Unsaved, bad

FORMAT = "gbtree-model"
FORMAT_VERSION = 3
HEADER_MEMBER = "model.json"
# a deflated member (files before version 3) expands at most ~1032 times (zlib's
# limit); beyond that it lies
_DEFLATE_RATIO = 1100
# the estimator classes a document may name, by name (sklearn.py registers them)
ESTIMATORS: dict[str, type] = {}


def estimator_class(cls):
    """Register ``cls`` as the class of the documents that name it (a decorator)."""
    ESTIMATORS[cls.__name__] = cls
    return cls

# the objectives a file may name, by class name, each with a maker of a default instance
# giving their fields' types (a class itself when it needs no arguments)
_OBJECTIVES = {
    **{cls.__name__: cls for cls in (
        _obj.SquaredError, _obj.AbsoluteError, _obj.Quantile, _obj.Huber, _obj.Poisson,
        _obj.Gamma, _obj.Tweedie, _obj.Logistic, _obj.MultiQuantile, _obj.MultiSquaredError,
        survival.Cox, survival.AFT)},
    "Softmax": lambda: _obj.Softmax(3), "Ranking": lambda: ranking.Ranking(np.zeros(1)),
    "Custom": lambda: _obj.Custom(None),
}
# the fitted model's parts, each a section of the document
_ENSEMBLE_ATTRS = ("_ensemble", "_objective", "_bin_mapper", "_cat_encoder")
# the node columns that hold the split nodes' entries only (in node order) from format
# version 3 on: a leaf's are the node writer's constants
SPLIT_FIELDS = ("threshold", "gain", "feature", "left", "right", "bin_threshold", "default_left")


# ---------------------------------------------------------------------- estimator -> document
def _fitted_attributes(est):
    return {k: v for k, v in vars(est).items()
            if k.endswith("_") and not k.startswith("__") or k in _ENSEMBLE_ATTRS}


def to_document(est, mode):
    """The fitted estimator as a document (see the module); ``mode`` as ``Encoder``.
    Returns ``(document, encoder)``: a binary file's arrays are in ``encoder.members``."""
    from .. import __version__
    enc = Encoder(mode)
    params, unsaved = {}, []
    for name, value in est.get_params(deep=False).items():
        try:
            params[name] = enc(value, f"params.{name}")
        except Unsaved:
            if name == "objective":
                raise ValueError("a model with a custom objective (a Python function) cannot "
                                 "be saved in a model file: its loss is code. Pickle it "
                                 "instead (and load pickles from trusted sources only)") from None
            params[name] = None
            unsaved.append(name)
    ens = est._ensemble
    objective = est._objective
    mapper = est._bin_mapper
    encoder = getattr(est, "_cat_encoder", None)
    nodes = ens.nodes
    split = nodes["is_leaf"] == 0
    state = {k: v for k, v in objective.state().items() if k != "func"}
    if mode == "pickle" and "func" in vars(objective):
        state["func"] = objective.func
    attrs = {k: v for k, v in _fitted_attributes(est).items() if k not in _ENSEMBLE_ATTRS}
    narrow = (lambda a: a) if mode == "pickle" else _narrow
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "gbtree_version": __version__,
        "estimator": next(c.__name__ for c in type(est).__mro__   # (a user's subclass: ours)
                          if ESTIMATORS.get(c.__name__) is c),
        "params": params,
        "unsaved_params": unsaved,
        "objective": {"class": type(objective).__name__,
                      "state": {k: enc(v, f"objective.state.{k}") for k, v in state.items()}},
        "ensemble": {
            "n_features": ens.n_features,
            "base_score": enc(ens.base_score, "ensemble.base_score"),
            "tree_ptr": enc(narrow(ens.tree_ptr), "ensemble.tree_ptr"),
            "tree_class": enc(narrow(ens.tree_class), "ensemble.tree_class"),
            "nodes": {f: enc(narrow(np.ascontiguousarray(
                nodes[f][split] if f in SPLIT_FIELDS else nodes[f])), f"ensemble.nodes.{f}")
                for f in NODE_DTYPE.names},
        },
        "bins": {k: enc(v, f"bins.{k}") for k, v in vars(mapper).items()
                 if k not in ("n_bins_", "bin_offsets_")},
        "categorical": None if encoder is None else {
            k: enc(v, f"categorical.{k}") for k, v in vars(encoder).items()},
        "attributes": {k: enc(v, f"attributes.{k}") for k, v in attrs.items()},
    }
    return doc, enc


def _narrow(a):
    """An integer array in the narrowest integer type that holds its values (the
    loader widens it back): feature and child indices take a byte or two."""
    if a.dtype.kind not in "iu" or a.size == 0:
        return a
    lo, hi = a.min(), a.max()
    for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            return a.astype(t) if np.dtype(t).itemsize < a.dtype.itemsize else a
    return a


def _widen(value, field, dtype):
    """A 1-D integer array as ``dtype``, its values in that type's range."""
    if not (isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.ndim == 1):
        raise bad(field, "expected a 1-D integer array")
    info = np.iinfo(dtype)
    if value.size and (value.min() < info.min or value.max() > info.max):
        raise bad(field, f"values outside the range of {np.dtype(dtype)}")
    return value.astype(dtype, copy=False)


# ---------------------------------------------------------------------- document -> estimator
def _get(section, key, field, kind=None):
    if not isinstance(section, dict) or key not in section:
        raise bad(field, "missing")
    value = section[key]
    if kind is not None and not _is(value, kind):
        raise bad(field, f"expected {kind}, got {type(value).__name__}")
    return value


_BOOLS = (bool, np.bool_)
# the kinds of plain values a field may have: (the types that are one, the types that
# are not although they pass: bools are neither ints nor reals)
_KINDS = {"int": (numbers.Integral, _BOOLS), "real": (numbers.Real, _BOOLS),
          "str": (str, ()), "bool": (_BOOLS, ()), "dict": (dict, ()), "list": (list, ())}


def _is(value, kind):
    types, refused = _KINDS[kind]
    return isinstance(value, types) and not isinstance(value, refused)


def _array(value, field, dtype, ndim=1, size=None):
    if not isinstance(value, np.ndarray) or value.dtype != np.dtype(dtype) or value.ndim != ndim:
        got = (f"{value.dtype} array of {value.ndim} dimensions" if isinstance(value, np.ndarray)
               else type(value).__name__)
        raise bad(field, f"expected a {ndim}-D {np.dtype(dtype)} array, got {got}")
    if size is not None and value.shape[0] != size:
        raise bad(field, f"expected {size} entries, got {value.shape[0]}")
    return value


def check_header(doc):
    """The document's format, version and estimator class (ValueError if not ours)."""
    if not isinstance(doc, dict):
        raise bad("document", f"expected an object, got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise bad("format", f"expected {FORMAT!r}: this is not a gbtree model")
    version = _get(doc, "format_version", "format_version", "int")
    if version > FORMAT_VERSION:
        raise ValueError(f"this model file has format version {version}, newer than this "
                         f"gbtree reads (up to {FORMAT_VERSION}): upgrade gbtree to load it")
    if version < 1:
        raise bad("format_version", f"{version} is not a format version")
    name = _get(doc, "estimator", "estimator", "str")
    if name not in ESTIMATORS:
        raise bad("estimator", f"{name[:40]!r} is not one of {tuple(ESTIMATORS)}")
    return name


def from_document(doc, dec, into=None):
    """The fitted estimator a document describes (``into``: that estimator, which must
    be of the class the document names). Every field is checked before use."""
    name = check_header(doc)
    cls = ESTIMATORS[name]
    version = doc["format_version"]
    if into is not None and not isinstance(into, cls):
        raise ValueError(f"the model file holds a {name}, not a {type(into).__name__}: load "
                         f"it with gbtree.load_model")
    est = (cls if into is None else type(into)).__new__(cls if into is None else type(into))
    est.__dict__.update(vars(cls()))   # the defaults of parameters the document lacks
    params = _get(doc, "params", "params", "dict")
    known = type(est)._get_param_names()
    for key, value in params.items():
        if key not in known:
            raise bad(f"params.{str(key)[:40]}", "not a parameter of " + name)
        setattr(est, key, dec(value, f"params.{key}"))
    if "max_cat_to_onehot" not in params:   # (a file from before the parameter: no indicators)
        est.max_cat_to_onehot = 0
    unsaved = _get(doc, "unsaved_params", "unsaved_params", "list")
    if not all(isinstance(k, str) and k in known for k in unsaved):
        raise bad("unsaved_params", "must list parameter names")
    try:
        est._boost_params()
        effective_n_threads(est.n_jobs)
    except (TypeError, ValueError) as exc:
        raise bad("params", str(exc)) from None

    ens = _ensemble(_get(doc, "ensemble", "ensemble", "dict"), dec, version)
    n_features, K = ens.n_features, ens.n_outputs
    est._ensemble = ens
    est._objective = _objective(_get(doc, "objective", "objective", "dict"), dec, K, name)
    est._bin_mapper = _bins(_get(doc, "bins", "bins", "dict"), dec, n_features)
    est._cat_encoder = _categorical(_get(doc, "categorical", "categorical"), dec, n_features)
    attrs = _get(doc, "attributes", "attributes", "dict")
    for key, value in attrs.items():
        setattr(est, str(key), _attribute(str(key), dec(value, f"attributes.{key}")))
    _check_attributes(est, name)
    if into is not None:
        into.__dict__.clear()
        into.__dict__.update(est.__dict__)
        return into
    return est


def _ensemble(sec, dec, version):
    n_features = _get(sec, "n_features", "ensemble.n_features", "int")
    arrays = {k: dec(_get(sec, k, f"ensemble.{k}"), f"ensemble.{k}")
              for k in ("base_score", "tree_ptr", "tree_class")}
    return TreeEnsemble.from_arrays(
        n_features, arrays["base_score"],
        _nodes(_get(sec, "nodes", "ensemble.nodes", "dict"), dec, version),
        _widen(arrays["tree_ptr"], "ensemble.tree_ptr", np.int64),
        _widen(arrays["tree_class"], "ensemble.tree_class", np.int32))


def _nodes(fields, dec, version):
    """The node records of the document's columns, built by the node writer (before
    version 3 the split columns hold an entry for every node; the leaves' are not read)."""
    if set(fields) != set(NODE_DTYPE.names):
        raise bad("ensemble.nodes", f"expected the fields {NODE_DTYPE.names}")
    columns = {}
    for f in NODE_DTYPE.names:
        dtype, field = NODE_DTYPE.fields[f][0], f"ensemble.nodes.{f}"
        col = dec(fields[f], field)
        columns[f] = _widen(col, field, dtype) if dtype.kind in "iu" else \
            _array(col, field, dtype)
    is_leaf = columns["is_leaf"]
    if np.any(is_leaf > 1):
        raise bad("ensemble.nodes.is_leaf", "expected 0 or 1")
    split = np.flatnonzero(is_leaf == 0)
    n_nodes, n_split = is_leaf.shape[0], split.shape[0]
    for f in NODE_DTYPE.names:
        size, whose = (n_split, "split") if f in SPLIT_FIELDS and version >= 3 else (n_nodes, "node")
        if columns[f].shape[0] != size:
            raise bad(f"ensemble.nodes.{f}", f"expected {size} entries (one per {whose}), got "
                                             f"{columns[f].shape[0]}")
    if version < 3:
        columns.update({f: columns[f][split] for f in SPLIT_FIELDS})
    return node_records(columns["value"], columns["cover"], columns["count"], columns["depth"],
                        split, **{f: columns[f] for f in SPLIT_FIELDS})


def _objective(sec, dec, n_outputs, estimator):
    cls_name = _get(sec, "class", "objective.class", "str")
    if cls_name not in _OBJECTIVES:
        raise bad("objective.class", f"{cls_name[:40]!r} is not a gbtree objective")
    if cls_name == "Custom" and dec.mode != "pickle":
        raise bad("objective.class", "a custom objective is code, not part of a model file")
    expected = {"GBTRegressor": ("SquaredError", "AbsoluteError", "Quantile", "Huber",
                                 "Poisson", "Gamma", "Tweedie", "Cox", "MultiQuantile",
                                 "MultiSquaredError", "AFT", "Custom"),
                "GBTClassifier": ("Logistic", "Softmax", "Custom"),
                "GBTRanker": ("Ranking",)}[estimator]
    if cls_name not in expected:
        raise bad("objective.class", f"{cls_name} is not an objective of a {estimator}")
    state = _get(sec, "state", "objective.state", "dict")
    kind = state.get("kind")
    if cls_name == "Ranking" and isinstance(kind, str) and kind in RANKING_KINDS:
        default = ranking.Ranking(np.zeros(1), kind=state["kind"])   # (map's own metric)
    else:
        default = _OBJECTIVES[cls_name]()
    obj = type(default).__new__(type(default))
    fields = default.state()
    if set(state) != set(fields):
        raise bad("objective.state", f"expected the fields {sorted(fields)}, got "
                                      f"{sorted(map(str, state))[:20]}")
    for key, value in state.items():
        value = dec(value, f"objective.state.{key}")
        ref = fields[key]
        if isinstance(ref, tuple):   # a tuple of numbers (MultiQuantile's alphas)
            if not (isinstance(value, (list, tuple)) and 0 < len(value) <= 1000
                    and all(_is(x, "real") for x in value)):
                raise bad(f"objective.state.{key}", "expected a list of numbers")
            setattr(obj, key, tuple(float(x) for x in value))
            continue
        same = (type(value) is type(ref) or value is None or ref is None
                or (isinstance(ref, float) and _is(value, "real"))
                or callable(ref) or key == "func")
        if not same or isinstance(value, (dict, list, np.ndarray)):
            raise bad(f"objective.state.{key}", f"expected a {type(ref).__name__}")
        setattr(obj, key, value)
    if "group_ptr" in vars(default):
        obj.group_ptr = None
    if cls_name == "MultiQuantile" and not (
            len(obj.alphas) == obj.n_outputs >= 2 and all(0 < a < 1 for a in obj.alphas)
            and all(a < b for a, b in zip(obj.alphas, obj.alphas[1:]))):
        raise bad("objective.state.alphas", "expected increasing numbers in (0, 1), one per "
                                             "output")
    if cls_name == "AFT" and not (obj.distribution in survival.AFT_DISTRIBUTIONS
                                  and np.isfinite(obj.sigma) and obj.sigma > 0):
        raise bad("objective.state", "expected a known distribution and sigma > 0")
    if not all(_is(x, "real") for x in getattr(obj, "_kernel_args", ())):
        raise bad("objective.state._kernel_args", "expected numbers")
    if obj.n_outputs != n_outputs or (cls_name in ("Softmax", "MultiSquaredError")
                                      and n_outputs < (3 if cls_name == "Softmax" else 2)):
        raise bad("objective.state.n_outputs", f"{obj.n_outputs} outputs, the trees have "
                                                f"{n_outputs}")
    return obj


def _bins(sec, dec, n_features):
    from ..data.binning import BinMapper
    expected = {"max_bin", "subsample", "random_state", "absent_as_missing", "cuts_",
                "cut_ptr_"}
    if set(sec) != expected:
        raise bad("bins", f"expected the fields {sorted(expected)}")
    v = {k: dec(sec[k], f"bins.{k}") for k in expected}
    for k, kind in (("max_bin", "int"), ("subsample", "int"), ("absent_as_missing", "bool")):
        if not _is(v[k], kind):
            raise bad(f"bins.{k}", f"expected {kind}")
    if not 2 <= v["max_bin"] <= 256:
        raise bad("bins.max_bin", f"{v['max_bin']} outside [2, 256]")
    cuts = _array(v["cuts_"], "bins.cuts_", np.float64)
    ptr = _array(v["cut_ptr_"], "bins.cut_ptr_", np.int32, size=n_features + 1)
    lengths = np.diff(ptr)
    if ptr[0] != 0 or ptr[-1] != cuts.shape[0] or np.any(lengths < 0):
        raise bad("bins.cut_ptr_", "must run from 0 to the number of cuts, non-decreasing")
    if np.any(lengths > v["max_bin"] - 1):
        raise bad("bins.cut_ptr_", f"a feature has more than max_bin - 1 = "
                                    f"{v['max_bin'] - 1} edges")
    inner = np.ones(cuts.shape[0], dtype=bool)
    inner[ptr[:-1][lengths > 0]] = False     # the first edge of each feature
    if not np.all(np.isfinite(cuts)) or np.any((np.diff(cuts) <= 0) & inner[1:]):
        raise bad("bins.cuts_", "each feature's edges must be finite and increasing")
    if not (v["random_state"] is None or _is(v["random_state"], "int")
            or isinstance(v["random_state"], np.random.RandomState)):
        raise bad("bins.random_state", "expected None, an int or a random generator")
    mapper = BinMapper.__new__(BinMapper)
    mapper.max_bin, mapper.subsample = v["max_bin"], v["subsample"]
    mapper.random_state, mapper.absent_as_missing = v["random_state"], v["absent_as_missing"]
    # n_bins_ and bin_offsets_ follow from the cuts, as BinMapper._set_cuts computes them
    mapper.cut_ptr_, mapper.cuts_ = ptr, cuts
    mapper.n_bins_ = (lengths + 1).astype(np.int32)
    mapper.bin_offsets_ = np.zeros(n_features + 1, dtype=np.int32)
    np.cumsum(mapper.n_bins_ + 1, out=mapper.bin_offsets_[1:])
    return mapper


def _categorical(sec, dec, n_features):
    if sec is None:
        return None
    from ..data.categorical import CategoricalEncoder
    fields = ("columns", "smooth", "max_ordinal", "width", "names", "categories", "ordinal",
              "prior", "seed", "observed", "tables", "smooths")
    # (files of format version 1 have no indicator columns: these two are version 2's)
    added = ("max_onehot", "indicators")
    if not isinstance(sec, dict) or set(sec) not in (set(fields), set(fields + added)):
        raise bad("categorical", f"expected the fields {fields + added}")
    v = {k: dec(sec[k], f"categorical.{k}") for k in fields + added if k in sec}
    v.setdefault("max_onehot", 0)
    v.setdefault("indicators", np.zeros((0, 2), dtype=np.int64))
    width = v["width"]
    if not _is(width, "int") or not 0 <= width <= n_features:
        raise bad("categorical.width", f"expected at most {n_features}")
    columns = v["columns"]
    if not (isinstance(columns, list) and columns and all(_is(j, "int") for j in columns)
            and columns == sorted(set(columns)) and 0 <= columns[0]
            and columns[-1] < width):
        raise bad("categorical.columns", f"expected distinct sorted feature indices in "
                                          f"[0, {width})")
    names = v["names"]
    if names is not None and not (isinstance(names, list) and len(names) == width
                                  and all(isinstance(s, str) for s in names)):
        raise bad("categorical.names", f"expected None or {width} names")
    if not (v["smooth"] == "auto" or _is(v["smooth"], "real")):
        raise bad("categorical.smooth", "expected 'auto' or a number")
    for k, kind in (("seed", "int"), ("prior", "real"), ("max_onehot", "int")):
        if not _is(v[k], kind):
            raise bad(f"categorical.{k}", f"expected {kind}")
    cats = v["categories"]
    if not isinstance(cats, dict) or set(cats) != set(columns):
        raise bad("categorical.categories", "expected one entry per categorical column")
    sizes = {}
    for j, c in cats.items():
        field = f"categorical.categories[{j}]"
        if isinstance(c, np.ndarray):
            _array(c, field, np.float64)
            if np.any(np.isnan(c)) or np.any(np.diff(c) <= 0):
                raise bad(field, "numeric categories must be sorted, distinct, not NaN")
        elif isinstance(c, dict):
            if not all(_is(x, "int") for x in c.values()) or set(c.values()) != set(
                    range(len(c))):
                raise bad(field, "codes must be 0, 1, ... once each")
        else:
            raise bad(field, "expected an array or a dict")
        sizes[j] = len(c)
    ordinal = v["ordinal"]
    if not _is(v["max_ordinal"], "int") or ordinal != [
            j for j in columns if sizes[j] <= v["max_ordinal"]]:
        raise bad("categorical.ordinal", "does not follow from the categories and "
                                          "max_ordinal")
    stats = [j for j in columns if j not in ordinal]
    for k, keys, dtype, per in (("observed", ordinal, np.bool_, True),
                                ("tables", stats, np.float64, True),
                                ("smooths", stats, None, False)):
        d = v[k]
        if not isinstance(d, dict) or set(d) != set(keys):
            raise bad(f"categorical.{k}", f"expected entries for the columns {keys}")
        for j, x in d.items():
            if per:
                _array(x, f"categorical.{k}[{j}]", dtype, size=sizes[j])
            elif not _is(x, "real"):
                raise bad(f"categorical.{k}[{j}]", "expected a number")
    enc = CategoricalEncoder.__new__(CategoricalEncoder)
    enc.__dict__.update(v)
    ind = v["indicators"]
    _array(ind, "categorical.indicators", np.int64, ndim=2)
    if ind.shape != (n_features - width, 2):
        raise bad("categorical.indicators", f"expected shape ({n_features - width}, 2): one "
                                             f"row per feature past the {width} columns of X")
    onehot = enc.onehot_columns()
    if not all(j in onehot and 0 <= k < sizes[j] for j, k in ind.tolist()) or np.any(
            np.diff(ind[:, 0] * (1 + max(sizes.values())) + ind[:, 1]) <= 0):
        raise bad("categorical.indicators", "expected distinct (column, code) pairs in order, "
                                             "of columns of 3 to max_onehot categories")
    return enc


# the fitted attributes an estimator may hold besides the model parts: their checks
def _opt(kind):
    return lambda x: x is None or _is(x, kind)


def _real_array(x):
    return isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim == 1


def _history(x):
    return isinstance(x, dict) and all(
        isinstance(d, dict) and all(isinstance(m, list) and all(_is(s, "real") for s in m)
                                    for m in d.values()) for d in x.values())


_ATTRIBUTES = {
    "n_features_in_": lambda x: _is(x, "int"),
    "feature_names_in_": lambda x: isinstance(x, np.ndarray) and x.ndim == 1 and all(
        isinstance(s, str) for s in x.tolist()),
    "classes_": lambda x: isinstance(x, np.ndarray) and x.ndim == 1,
    "is_categorical_": lambda x: x is None or (isinstance(x, np.ndarray) and x.dtype == bool
                                               and x.ndim == 1),
    "fit_info_": lambda x: isinstance(x, dict) and all(_is(s, "real") for s in x.values()),
    "n_estimators_": lambda x: _is(x, "int") and x >= 0,
    "best_iteration_": lambda x: _is(x, "int"),
    "evals_result_": _history,
    "best_score_": _opt("real"),
    "oob_improvement_": _real_array,
    "oob_scores_": _real_array,
    "oob_score_": lambda x: _is(x, "real"),
    "qid_column_": _opt("str"),
}


def _attribute(key, value):
    check = _ATTRIBUTES.get(key)
    if check is None:
        raise bad(f"attributes.{key[:40]}", "not an attribute of a fitted gbtree model")
    if not check(value):
        raise bad(f"attributes.{key}", f"unexpected value of type {type(value).__name__}")
    return value


def _check_attributes(est, name):
    """The fitted attributes agree with each other and with the trees."""
    ens = est._ensemble
    for key in ("n_features_in_", "n_estimators_", "best_iteration_", "fit_info_",
                "is_categorical_"):
        if not hasattr(est, key):
            raise bad(f"attributes.{key}", "missing")
    # (the trees' features: X's columns, then any indicator columns)
    width = ens.n_features if est._cat_encoder is None else est._cat_encoder.width
    if est.n_features_in_ != width:
        raise bad("attributes.n_features_in_", f"{est.n_features_in_}, the model has "
                                                f"{width} features")
    names = getattr(est, "feature_names_in_", None)
    if names is not None and names.shape[0] != width:
        raise bad("attributes.feature_names_in_", f"expected {width} names")
    layout = np.arange(ens.n_trees) % ens.n_outputs
    if not np.array_equal(ens.tree_class, layout):
        t = int(np.flatnonzero(ens.tree_class != layout)[0])
        raise bad("ensemble.tree_class", f"tree {t} adds to output {ens.tree_class[t]}; the "
                                          f"trees of a model go round its {ens.n_outputs} "
                                          f"outputs in order (tree t adds to output t % "
                                          f"{ens.n_outputs})")
    per_round = ens.n_outputs * est.num_parallel_tree
    if est.n_estimators_ * per_round != ens.n_trees:
        raise bad("attributes.n_estimators_", f"{est.n_estimators_} rounds of "
                                               f"{per_round} trees, the model has "
                                               f"{ens.n_trees}")
    if not 0 <= est.best_iteration_ < max(est.n_estimators_, 1):
        raise bad("attributes.best_iteration_", f"{est.best_iteration_} outside "
                                                 f"[0, {est.n_estimators_})")
    flags = est.is_categorical_
    if (flags is None) != (est._cat_encoder is None) or flags is not None and (
            flags.shape[0] != width
            or list(np.flatnonzero(flags)) != est._cat_encoder.columns):
        raise bad("attributes.is_categorical_", "does not match the categorical columns")
    if name == "GBTClassifier":
        classes = getattr(est, "classes_", None)
        if classes is None or classes.shape[0] != max(ens.n_outputs, 2) or (
                ens.n_outputs == 2):
            raise bad("attributes.classes_", f"expected {max(ens.n_outputs, 2)} classes for "
                                              f"{ens.n_outputs} outputs")
    elif hasattr(est, "classes_"):
        raise bad("attributes.classes_", f"a {name} has no classes")
    if name != "GBTRanker" and hasattr(est, "qid_column_"):
        raise bad("attributes.qid_column_", "only a ranker has it")


# ---------------------------------------------------------------------- files
def save_model(est: Any, fname: str | os.PathLike | BinaryIO | TextIO,
               format: str | None = None) -> None:
    """Write the fitted ``est`` to ``fname``, a path or a file object: ``format``
    "json" (exact, diffable JSON) or "binary" (a zip: ``model.json`` and the arrays'
    raw bytes); by default JSON for a path ending in ``.json``, else binary."""
    target = fname if hasattr(fname, "write") else _path(fname)
    if format is None:
        format = ("json" if isinstance(target, str) and target.lower().endswith(".json")
                  else "binary")
    data = model_bytes(est, format)
    if isinstance(target, str):
        with open(target, "wb") as f:
            f.write(data)
    elif isinstance(target, io.TextIOBase):
        if format != "json":
            raise TypeError("the binary encoding needs a file object opened in binary "
                            "mode; a text one takes format='json'")
        target.write(data.decode("utf-8"))
    else:
        target.write(data)


def model_bytes(est, format="binary"):
    """The bytes ``save_model`` writes for ``format`` ("binary" or "json")."""
    from sklearn.utils.validation import check_is_fitted
    if format not in ("binary", "json"):
        raise ValueError(f"format must be 'binary' or 'json', got {format!r}")
    check_is_fitted(est, "_ensemble")
    binary = format == "binary"
    try:
        doc, enc = to_document(est, format)
    except Unsaved as exc:   # (only the parameters may hold code; they are left out)
        raise ValueError(f"cannot save the model: {exc}") from None
    header = json.dumps(doc, allow_nan=False, separators=(",", ":")) if binary else \
        _readable_json(doc)
    if not binary:
        return header.encode("utf-8")
    # (stored, not deflated: inflating took most of a load; every member dated
    # 1980-01-01, so that a model's file is the same bytes whenever it is saved)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(_member(HEADER_MEMBER), header)
        for name, a in enc.members.items():
            zf.writestr(_member(name), a.tobytes())
    return out.getvalue()


def _member(name):
    """A stored member of a binary model file, without the time of the save."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    return info


def _path(fname):
    """``fname`` as a path string, or a TypeError naming what a model file can be."""
    try:
        path = os.fspath(fname)
    except TypeError:
        path = None
    if not isinstance(path, str):
        raise TypeError(f"a model file is a path, a file object or (to load) bytes, got "
                        f"{type(fname).__name__}")
    return path


def _readable_json(doc):
    """JSON indented by field, each array's shape and values on one line (diffable,
    compact)."""
    arrays, token = [], os.urandom(8).hex()   # (no value of the document holds the token)

    def hide(node):
        if isinstance(node, dict):
            if "$array" in node and isinstance(node["$array"], dict):
                spec = dict(node["$array"])
                for key in ("shape", "data"):
                    arrays.append(json.dumps(spec[key], allow_nan=False, separators=(",", ":")))
                    spec[key] = f"{token}:{len(arrays) - 1}"
                return {"$array": spec}
            return {k: hide(v) for k, v in node.items()}
        return [hide(v) for v in node] if isinstance(node, list) else node

    text = json.dumps(hide(doc), allow_nan=False, indent=1)
    return re.sub(f'"{token}:(\\d+)"', lambda m: arrays[int(m.group(1))], text)


def read_document(source):
    """``(document, decoder)`` of a model file: a path, a file object or the file's
    bytes; its encoding told by its first bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        data = source.read()
        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    else:
        with open(_path(source), "rb") as f:
            data = f.read()
    if data[:4] == b"PK\x03\x04":
        return _read_binary(data)
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:   # (not JSON, or a number too long)
        raise ValueError(f"invalid model: not a gbtree model file (neither JSON nor the "
                         f"binary encoding): {str(exc)[:200]}") from None
    return doc, Decoder("json", limit=8 * len(data) + 8)


def _no_constant(name):
    raise bad("document", f"{name} is not JSON; non-finite numbers are strings in a model "
                           f"file")


def _read_binary(data):
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > 4096 or len({i.filename for i in infos}) != len(infos):
                raise bad("document", "unexpected zip members")
            members = {}
            for info in infos:
                # deflate expands at most ~1032 times: a larger claim is a lie (or a bomb)
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or \
                        info.file_size > _DEFLATE_RATIO * info.compress_size + 64:
                    raise bad(info.filename[:40], "members must be stored or deflated, "
                                                   "their sizes within the file's")
                with zf.open(info) as f:
                    members[info.filename] = f.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
            RuntimeError, struct.error, UnicodeDecodeError, OverflowError, ValueError) as exc:
        if str(exc).startswith("invalid model"):
            raise
        raise ValueError(f"invalid model: the binary file is damaged: {str(exc)[:200]}") from None
    header = members.pop(HEADER_MEMBER, None)
    if header is None:
        raise bad(HEADER_MEMBER, "missing from the binary file")
    try:
        doc = json.loads(header.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:   # (not JSON, or a number too long)
        raise bad(HEADER_MEMBER, f"not JSON: {str(exc)[:200]}") from None
    return doc, Decoder("binary", members, limit=_DEFLATE_RATIO * len(data) + 64)


def load_model(fname: str | os.PathLike | BinaryIO | bytes, into: Any = None) -> Any:
    """The fitted estimator saved in ``fname`` (see ``save_model``): a path, a file
    object or the file's bytes, in either encoding; ``into``: load it into that
    estimator (of the same class) instead of a new one."""
    doc, dec = read_document(fname)
    return from_document(doc, dec, into)


# ---------------------------------------------------------------------- pickles
PICKLE_KEY = "_gbtree_model"


def pickle_state(est, base_state):
    """The pickled state of an estimator: its document when fitted, beside what the
    document does not hold (scikit-learn's metadata requests and output settings)."""
    if "_ensemble" not in vars(est):
        return base_state
    doc, _ = to_document(est, "pickle")
    held = set(doc["params"]) | set(_fitted_attributes(est))
    return {PICKLE_KEY: doc, **{k: v for k, v in base_state.items() if k not in held}}


def restore_pickle_state(est, state, base_setstate):
    if isinstance(state, dict) and PICKLE_KEY in state:
        from_document(state[PICKLE_KEY], Decoder("pickle"), into=est)
        base_setstate({k: v for k, v in state.items() if k != PICKLE_KEY})
    else:
        base_setstate(state)
