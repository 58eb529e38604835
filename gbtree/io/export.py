"""Fitted models for other tools: ONNX (``to_onnx``) and Treelite (``to_treelite``).

Both describe the trees the estimator predicts with (rounds up to
``best_iteration_``) and its transform; what they cannot represent is refused
with a ValueError, never exported as a different model.
"""
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..boosting import objectives as _obj
from ..boosting import ranking, survival

# the objectives' transforms of the raw scores, by class (Quantile is an AbsoluteError)
_TRANSFORMS = (
    ((_obj.SquaredError, _obj.AbsoluteError, _obj.Huber, ranking.Ranking), "identity"),
    ((_obj.Poisson, _obj.Gamma, _obj.Tweedie, survival.Cox, survival.AFT), "exp"),
    (_obj.Logistic, "logistic"), (_obj.Softmax, "softmax"))


def _transform(est):
    """"identity", "exp", "logistic" or "softmax": the objective's transform."""
    obj = est._objective
    if isinstance(obj, _obj.Custom):
        return obj.link
    for classes, transform in _TRANSFORMS:
        if isinstance(obj, classes):
            return transform
    raise ValueError(f"objective {type(obj).__name__}: no known transform to export")


def _numeric_categories(est, j):
    """The sorted float64 values of categorical column j and their codes, or
    ValueError for categories that a float input cannot hold (text, objects)."""
    cats = est._cat_encoder.categories[j]
    if isinstance(cats, np.ndarray):
        return cats, np.arange(cats.shape[0])
    keys = list(cats)
    if not all(isinstance(k, numbers.Real) and not isinstance(k, (bool, np.bool_))
               for k in keys):
        name = est._cat_encoder._label(j)
        raise ValueError(f"{name}: its categories are not all numbers, and the exported "
                         f"model's input is a float matrix; encode the column as numbers "
                         f"before fitting to export the model")
    return np.array(keys, dtype=np.float64), np.array([cats[k] for k in keys])


def _category_values(est, j):
    """(keys, values, default) mapping column j's values to what the trees read:
    the code (ordinal columns) or the target statistic; ``default`` for an unseen
    value. Missing values stay missing (handled apart)."""
    enc = est._cat_encoder
    keys, codes = _numeric_categories(est, j)
    if j in enc.ordinal:
        values = np.where(enc.observed[j][codes], codes, np.nan).astype(np.float64)
        return keys, values, np.nan
    return keys, enc.tables[j][codes].astype(np.float64), float(enc.prior)


def _feature_values(est, f):
    """(column of X, keys, values, default) of feature f of the trees, a categorical
    column or an indicator column (``max_cat_to_onehot``): ``_category_values`` of the
    column, or 1 for the indicator's category and 0 for any other or an unseen one."""
    enc = est._cat_encoder
    if f < enc.width:
        return (f,) + _category_values(est, f)
    j, k = enc.indicators[f - enc.width].tolist()
    keys, codes = _numeric_categories(est, j)
    return j, keys, (codes == k).astype(np.float64), 0.0


# ---------------------------------------------------------------------- ONNX
def _onnx():
    try:
        import onnx
    except ImportError as exc:
        raise ImportError("to_onnx needs the onnx package: pip install gbtree[onnx]") from exc
    return onnx


def to_onnx(est):
    """The estimator as an ``onnx.ModelProto`` on the ONNX-ML operators (see
    ``_GBTModel.to_onnx``)."""
    onnx = _onnx()
    from onnx import TensorProto, helper
    graph_nodes, inits, outputs, width = _graph(est, ML_OPSET)
    graph = helper.make_graph(
        graph_nodes, f"gbtree_{type(est).__name__}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, width])],
        outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="gbtree", opset_imports=[
        helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


# the opsets to_onnx's models import; the trees need ai.onnx.ml 3, LabelEncoder's
# float64 tensors (categorical columns) 4
OPSET, ML_OPSET = 18, 4


def _graph(est, ml_opset):
    """(nodes, initializers, outputs, the width of X) of the estimator's ONNX graph:
    input ``X`` (float32), outputs ``variable`` or ``label`` and ``probabilities``.
    Below ``ai.onnx.ml`` 4 a categorical column is mapped by standard operators
    (each value against every category) instead of a LabelEncoder."""
    _onnx()
    from onnx import TensorProto, helper, numpy_helper
    check_is_fitted(est, "_ensemble")
    transform = _transform(est)
    # the trees predict uses
    nodes, tree_ptr, tree_class = est._ensemble.tree_slice(*est._tree_range(None))
    n_features, K = est._ensemble.n_features, est._ensemble.n_outputs
    encoder = getattr(est, "_cat_encoder", None)
    width = n_features if encoder is None else encoder.width   # (X's; then indicators)
    graph_nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    # X as float64 (exact), the categorical columns mapped as the estimator maps them
    graph_nodes.append(helper.make_node("Cast", ["X"], ["X64"], to=TensorProto.DOUBLE))
    features = "X64"
    if encoder is not None:
        pieces = []
        for j in range(n_features):
            col = f"col{j}"
            source = int(encoder.parents()[j])
            graph_nodes.append(helper.make_node(
                "Slice", ["X64", const(f"start{j}", [source]), const(f"end{j}", [source + 1]),
                          const(f"axis{j}", [1])], [col]))
            if j in encoder.columns or j >= width:
                _, keys, values, default = _feature_values(est, j)
                if ml_opset >= 4:
                    graph_nodes.append(helper.make_node(
                        "LabelEncoder", [col], [f"mapped{j}"], domain="ai.onnx.ml",
                        keys_tensor=numpy_helper.from_array(keys, f"keys{j}"),
                        values_tensor=numpy_helper.from_array(values, f"values{j}"),
                        default_tensor=numpy_helper.from_array(np.array([default]),
                                                               f"default{j}")))
                else:   # (the category equal to the value, if any: its value, else default)
                    graph_nodes += [
                        helper.make_node("Equal", [col, const(f"keys{j}", keys[None, :])],
                                         [f"eq{j}"]),
                        helper.make_node("Cast", [f"eq{j}"], [f"eqi{j}"], to=TensorProto.INT32),
                        helper.make_node("ArgMax", [f"eqi{j}"], [f"at{j}"], axis=1, keepdims=0),
                        helper.make_node("ReduceMax", [f"eqi{j}", const(f"ax{j}", [1])],
                                         [f"hit{j}"], keepdims=1),
                        helper.make_node("Gather", [const(f"values{j}", values), f"at{j}"],
                                         [f"val{j}"]),
                        helper.make_node("Unsqueeze", [f"val{j}", const(f"ax1{j}", [1])],
                                         [f"valc{j}"]),
                        helper.make_node("Cast", [f"hit{j}"], [f"found{j}"],
                                         to=TensorProto.BOOL),
                        helper.make_node("Where", [f"found{j}", f"valc{j}",
                                                   const(f"default{j}", np.array([default]))],
                                         [f"mapped{j}"])]
                graph_nodes += [
                    helper.make_node("IsNaN", [col], [f"nan{j}"]),
                    helper.make_node("Where", [f"nan{j}", col, f"mapped{j}"], [f"enc{j}"])]
                col = f"enc{j}"
            pieces.append(col)
        graph_nodes.append(helper.make_node("Concat", pieces, ["Xenc"], axis=1))
        features = "Xenc"

    split = nodes["is_leaf"] == 0
    tree_ids = np.repeat(np.arange(tree_ptr.shape[0] - 1), np.diff(tree_ptr))
    node_ids = np.arange(nodes.shape[0]) - tree_ptr[tree_ids]
    leaves = ~split
    attrs = dict(
        nodes_treeids=tree_ids.tolist(), nodes_nodeids=node_ids.tolist(),
        nodes_featureids=np.where(split, nodes["feature"], 0).tolist(),
        nodes_values_as_tensor=numpy_helper.from_array(
            np.where(split, nodes["threshold"], 0.0), "thresholds"),
        nodes_modes=["BRANCH_LEQ" if s else "LEAF" for s in split],
        nodes_truenodeids=np.where(split, nodes["left"], 0).tolist(),
        nodes_falsenodeids=np.where(split, nodes["right"], 0).tolist(),
        nodes_missing_value_tracks_true=np.where(split, nodes["default_left"], 0).tolist(),
        target_treeids=tree_ids[leaves].tolist(), target_nodeids=node_ids[leaves].tolist(),
        target_ids=tree_class[tree_ids[leaves]].tolist(),
        target_weights_as_tensor=numpy_helper.from_array(nodes["value"][leaves], "weights"),
        base_values_as_tensor=numpy_helper.from_array(est._ensemble.base_score, "base"),
        n_targets=K, aggregate_function="SUM", post_transform="NONE")
    graph_nodes.append(helper.make_node("TreeEnsembleRegressor", [features], ["raw"],
                                        domain="ai.onnx.ml", **attrs))
    outputs = []
    if transform in ("logistic", "softmax"):
        if transform == "logistic":
            graph_nodes += [helper.make_node("Sigmoid", ["raw"], ["p1"]),
                            helper.make_node("Sub", [const("one", np.ones(1, np.float32)), "p1"],
                                             ["p0"]),
                            helper.make_node("Concat", ["p0", "p1"], ["probabilities"], axis=1)]
        else:
            graph_nodes.append(helper.make_node("Softmax", ["raw"], ["probabilities"], axis=1))
        classes = est.classes_
        graph_nodes.append(helper.make_node("ArgMax", ["probabilities"], ["code"], axis=1,
                                            keepdims=0))
        if classes.dtype.kind in "iub":
            label_type, labels = TensorProto.INT64, classes.astype(np.int64)
        elif classes.dtype.kind in "UO" and all(isinstance(c, str) for c in classes):
            label_type, labels = TensorProto.STRING, np.array(classes.tolist(), dtype=object)
        else:
            raise ValueError(f"classes_ of dtype {classes.dtype}: ONNX labels are integers "
                             f"or text")
        graph_nodes.append(helper.make_node("Gather", [const("classes", labels), "code"],
                                            ["label"], axis=0))
        outputs = [helper.make_tensor_value_info("label", label_type, [None]),
                   helper.make_tensor_value_info("probabilities", TensorProto.FLOAT,
                                                 [None, len(classes)])]
    else:
        graph_nodes.append(helper.make_node("Exp" if transform == "exp" else "Identity",
                                            ["raw"], ["variable"]))
        outputs = [helper.make_tensor_value_info("variable", TensorProto.FLOAT, [None, 1])]
    return graph_nodes, inits, outputs, width


def skl2onnx_convert(scope, operator, container):
    """skl2onnx's converter of an estimator: ``_graph``'s nodes added to the
    container, its names made unique in the scope, ``X`` and the outputs the
    operator's variables."""
    from onnx import TensorProto, helper
    ml_opset = 3   # (skl2onnx's converters stay at ai.onnx.ml 3)
    nodes, inits, outputs, _ = _graph(operator.raw_operator, ml_opset)
    prefix = scope.get_unique_variable_name("gbtree")
    names = {"X": operator.inputs[0].full_name}
    names.update(zip([o.name for o in outputs], [v.full_name for v in operator.outputs]))

    def name(n):
        return names.get(n, f"{prefix}_{n}") if n else n
    for t in inits:
        copy = TensorProto()
        copy.CopyFrom(t)
        copy.name = name(t.name)
        container.initializers.append(copy)
    for node in nodes:
        ml = node.domain == "ai.onnx.ml"
        container.add_node(node.op_type, [name(i) for i in node.input],
                           [name(o) for o in node.output], op_domain=node.domain,
                           op_version=ml_opset if ml else OPSET,
                           name=scope.get_unique_operator_name(node.op_type),
                           **{a.name: helper.get_attribute_value(a) for a in node.attribute})


# ---------------------------------------------------------------------- Treelite
def _treelite_categories(est, f):
    """``_feature_values`` of feature f, whose column's categories must be the
    integers 0 .. 2**31 - 1 that Treelite's categorical tests match."""
    j, keys, values, default = _feature_values(est, f)
    if not np.all((keys >= 0) & (keys < 2 ** 31) & (keys == np.floor(keys))):
        raise ValueError(f"{est._cat_encoder._label(j)}: Treelite matches categories that "
                         f"are integers >= 0; this column has other values (use to_onnx)")
    return j, keys, values, default


_TREELITE_POSTPROCESSOR = {"identity": "identity", "exp": "exponential",
                           "logistic": "sigmoid", "softmax": "softmax"}


def to_treelite(est):
    """The estimator as a ``treelite.Model`` (see ``_GBTModel.to_treelite``)."""
    try:
        import treelite
        from treelite.model_builder import (Metadata, ModelBuilder, PostProcessorFunc,
                                            TreeAnnotation)
    except ImportError as exc:
        raise ImportError("to_treelite needs the treelite package: pip install "
                          "gbtree[treelite]") from exc
    check_is_fitted(est, "_ensemble")
    encoder = getattr(est, "_cat_encoder", None)
    categorical = {} if encoder is None else {
        f: _treelite_categories(est, f)
        for f in encoder.columns + list(range(encoder.width, est._ensemble.n_features))}
    transform = _transform(est)
    # the trees predict uses
    nodes, tree_ptr, tree_class = est._ensemble.tree_slice(*est._tree_range(None))
    K = est._ensemble.n_outputs
    n_trees = tree_ptr.shape[0] - 1
    task = {"logistic": "kBinaryClf", "softmax": "kMultiClf"}.get(
        transform, "kLearningToRank" if isinstance(est._objective, ranking.Ranking) else "kRegressor")
    builder = ModelBuilder(
        threshold_type="float64", leaf_output_type="float64",
        metadata=Metadata(num_feature=est.n_features_in_, task_type=task,
                          average_tree_output=False, num_target=1, num_class=[K],
                          leaf_vector_shape=(1, 1)),
        tree_annotation=TreeAnnotation(num_tree=n_trees, target_id=[0] * n_trees,
                                       class_id=tree_class.tolist() if K > 1 else [0] * n_trees),
        postprocessor=PostProcessorFunc(name=_TREELITE_POSTPROCESSOR[transform]),
        base_scores=est._ensemble.base_score.tolist())
    for t in range(n_trees):
        builder.start_tree()
        for k in range(tree_ptr[t + 1] - tree_ptr[t]):
            node = nodes[tree_ptr[t] + k]
            builder.start_node(k)
            if node["is_leaf"]:
                builder.leaf(float(node["value"]))
            elif int(node["feature"]) in categorical:
                # the categories on each side; a value not listed goes where unseen ones go
                column, keys, values, default = categorical[int(node["feature"])]
                to_left = np.where(np.isnan(values), bool(node["default_left"]),
                                   values <= node["threshold"])
                unseen_left = (bool(node["default_left"]) if np.isnan(default)
                               else bool(default <= node["threshold"]))
                listed = keys[to_left != unseen_left]
                builder.categorical_test(column,
                                         default_left=bool(node["default_left"]),
                                         category_list=listed.astype(np.int64).tolist(),
                                         category_list_right_child=unseen_left,
                                         left_child_key=int(node["left"]),
                                         right_child_key=int(node["right"]))
            else:
                builder.numerical_test(int(node["feature"]), float(node["threshold"]),
                                       default_left=bool(node["default_left"]), opname="<=",
                                       left_child_key=int(node["left"]),
                                       right_child_key=int(node["right"]))
            builder.end_node()
        builder.end_tree()
    model = builder.commit()
    assert isinstance(model, treelite.Model)
    return model
