"""Inspecting a fitted model: get_score / feature_importances_, apply,
trees_to_dataframe, the text dump, plot_importance, plot_metric and plot_tree."""
import re
import sys

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris, make_classification

from gbtree import GBTClassifier, GBTRegressor, plot_importance, plot_metric, plot_tree
from gbtree.predicting.tree import IMPORTANCE_TYPES

TYPES = list(IMPORTANCE_TYPES)


# ---------------------------------------------------------------- a tree computed by hand
def _tiny():
    """Two binary features, y = -3, -1, 1, 3 for (x0, x1) = 00, 01, 10, 11, each twice."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 2, dtype=np.float64)
    y = np.array([-3, -1, 1, 3] * 2, dtype=np.float64)
    return X, y


# Squared error, F0 = mean(y) = 0, so g_i = -y_i and h_i = 1; lambda = 1 and
# S(G, H) = G^2 / (H + 1), gain = S(G_L, H_L) + S(G_R, H_R) - S(G, H) (docs/design.md).
# Root (G = 0, H = 8): on x0, G_L = 3+3+1+1 = 8, G_R = -8: gain = 2 * 64/5 = 25.6;
#   on x1, G_L = 3+3-1-1 = 4, G_R = -4: gain = 2 * 16/5 = 6.4, so the root splits x0.
# Left child (x0 = 0; G = 8, H = 4): on x1, G_L = 6, H_L = 2 and G_R = 2, H_R = 2:
#   gain = 36/3 + 4/3 - 64/5 = 8/15 (x0 is constant there). The right child is the
#   mirror image: gain 8/15 on x1. Covers (hessian sums): root 8, children 4, leaves 2.
HAND_ONE_TREE = {
    "weight": {"f0": 1, "f1": 2},
    "total_gain": {"f0": 25.6, "f1": 16 / 15},
    "gain": {"f0": 25.6, "f1": 8 / 15},
    "total_cover": {"f0": 8, "f1": 8},
    "cover": {"f0": 8, "f1": 4},
}
# Leaf weights -G / (H + 1): 00 -> -6/3 = -2, 01 -> -2/3, 10 -> 2/3, 11 -> 2; times eta = 0.5.
HAND_LEAVES = {(0, 0): -1.0, (0, 1): -1 / 3, (1, 0): 1 / 3, (1, 1): 1.0}
# Round 2: the raw predictions are the leaves above, so g = pred - y is 2, 2/3, -2/3, -2
# (each row twice). Root: on x0, G_L = 2 * (2 + 2/3) = 16/3: gain = 2 * (256/9)/5 = 512/45
# (x1 gives 2 * (64/9)/5 = 128/45). Left child (G = 16/3, H = 4): on x1, G_L = 4, G_R = 4/3:
# gain = 16/3 + (16/9)/3 - (256/9)/5 = 32/135; the right child mirrors it.
HAND_TWO_TREES = {
    "weight": {"f0": 2, "f1": 4},
    "total_gain": {"f0": 25.6 + 512 / 45, "f1": 16 / 15 + 64 / 135},
    "gain": {"f0": (25.6 + 512 / 45) / 2, "f1": (16 / 15 + 64 / 135) / 4},
    "total_cover": {"f0": 16, "f1": 16},
    "cover": {"f0": 8, "f1": 4},
}


def _tiny_model(n_estimators=1, **params):
    """The tree above: its sums are of the float gradients (grad_quant_bins=None)."""
    X, y = _tiny()
    return GBTRegressor(n_estimators=n_estimators, max_depth=2, learning_rate=0.5,
                        grad_quant_bins=None, **params).fit(X, y)


def _assert_scores(got, expected, rel=1e-12):
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, rel=rel), name


@pytest.mark.parametrize("importance_type", TYPES)
def test_get_score_matches_the_hand_computed_tree(importance_type):
    model = _tiny_model()
    assert model.predict(_tiny()[0][:4]) == pytest.approx(list(HAND_LEAVES.values()))
    _assert_scores(model.get_score(importance_type), HAND_ONE_TREE[importance_type])


@pytest.mark.parametrize("importance_type", TYPES)
def test_get_score_sums_over_trees_by_hand(importance_type):
    # round 2's gradients (2/3, ...) are rounded to float32, the engine's gradient type
    _assert_scores(_tiny_model(2).get_score(importance_type), HAND_TWO_TREES[importance_type],
                   rel=1e-6)


def test_get_score_default_is_weight_and_unused_features_are_left_out():
    X, y = _tiny()
    X = np.column_stack([X, np.zeros(len(y)), np.arange(len(y)) % 2])  # f2 constant, f3 = f1
    model = GBTRegressor(n_estimators=1, max_depth=2, learning_rate=0.5).fit(X, y)
    # f3 equals f1 column for column: the tie goes to the lower index, so f3 never splits
    assert model.get_score() == {"f0": 1.0, "f1": 2.0}
    assert model.feature_importances_[2:].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("importance_type", TYPES)
def test_feature_importances_normalise_the_chosen_type(importance_type):
    model = _tiny_model(2, importance_type=importance_type)
    expected = np.array([HAND_TWO_TREES[importance_type]["f0"],
                         HAND_TWO_TREES[importance_type]["f1"]], dtype=np.float64)
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum(), rtol=1e-6)
    assert model.feature_importances_.sum() == pytest.approx(1.0)


def test_importance_type_default_is_total_gain():
    model = _tiny_model()
    assert model.importance_type == "total_gain"
    np.testing.assert_allclose(model.feature_importances_, [25.6 / (25.6 + 16 / 15),
                                                            (16 / 15) / (25.6 + 16 / 15)])


@pytest.mark.parametrize("bad", ["split", "Gain", None, 3])
def test_bad_importance_type_is_rejected_at_fit_naming_itself(bad):
    X, y = _tiny()
    with pytest.raises(ValueError, match="importance_type"):
        GBTRegressor(n_estimators=1, importance_type=bad).fit(X, y)
    with pytest.raises(ValueError, match="importance_type"):
        _tiny_model().get_score(bad)


def test_importance_type_does_not_change_the_model():
    X, y = load_diabetes(return_X_y=True)
    models = [GBTRegressor(n_estimators=5, importance_type=t).fit(X, y) for t in TYPES]
    for other in models[1:]:
        assert other._ensemble.nodes.tobytes() == models[0]._ensemble.nodes.tobytes()


def test_importance_type_can_change_after_fit():
    model = _tiny_model()
    model.set_params(importance_type="weight")
    np.testing.assert_allclose(model.feature_importances_, [1 / 3, 2 / 3])


# ---------------------------------------------------------------- XGBoost as the oracle
@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
@pytest.mark.parametrize("classification", [False, True], ids=["regression", "binary"])
def test_get_score_matches_xgboost_on_prebinned_data(policy, classification):
    xgb = pytest.importorskip("xgboost")
    from test_compare_peers import FLOAT, POLICIES, _prebinned, _xgb_model

    X, y = _prebinned(seed=3, classification=classification)
    params = dict(n_estimators=5, learning_rate=0.3, **POLICIES[policy])
    Est, XEst = (GBTClassifier, xgb.XGBClassifier) if classification else (GBTRegressor, xgb.XGBRegressor)
    ours = Est(**params, **FLOAT).fit(X, y)
    theirs = _xgb_model(XEst, params, float(ours._ensemble.base_score[0]), classification).fit(X, y)
    for importance_type in TYPES:
        a = ours.get_score(importance_type)
        b = theirs.get_booster().get_score(importance_type=importance_type)
        assert set(a) == set(b), importance_type
        for name in b:   # XGBoost keeps gains and covers in float32
            assert a[name] == pytest.approx(b[name], rel=1e-4), (importance_type, name)


# ---------------------------------------------------------------- apply
@pytest.fixture(scope="module")
def fitted_models():
    Xr, yr = load_diabetes(return_X_y=True)
    Xb, yb = make_classification(400, 6, n_informative=4, random_state=0)
    Xb[::7, 2] = np.nan
    Xm, ym = load_iris(return_X_y=True)
    return {
        "regression": (GBTRegressor(n_estimators=20, max_depth=3).fit(Xr, yr), Xr),
        "binary": (GBTClassifier(n_estimators=20, max_depth=4).fit(Xb, yb), Xb),
        "multiclass": (GBTClassifier(n_estimators=10, max_depth=3,
                                     grow_policy="lossguide", max_leaves=6).fit(Xm, ym), Xm),
    }


def _raw(model, X):
    if isinstance(model, GBTRegressor):
        return model.predict(X)[:, None]
    raw = model.decision_function(X)
    return raw[:, None] if raw.ndim == 1 else raw


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_apply_leaves_sum_to_the_raw_prediction(fitted_models, kind):
    model, X = fitted_models[kind]
    leaves = model.apply(X)
    ens = model._ensemble
    assert leaves.shape == (X.shape[0], model.n_trees_)
    raw = np.tile(ens.base_score, (X.shape[0], 1))
    for t in range(model.n_trees_):
        tree = ens.tree(t)
        assert tree["is_leaf"][leaves[:, t]].all()
        raw[:, ens.tree_class[t]] += tree["value"][leaves[:, t]]
    np.testing.assert_allclose(raw, _raw(model, X), rtol=1e-12, atol=1e-12)


def test_apply_rejects_bad_input(fitted_models):
    model, X = fitted_models["regression"]
    with pytest.raises(ValueError, match="features"):
        model.apply(X[:, :3])


# ---------------------------------------------------------------- trees_to_dataframe
@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_trees_to_dataframe_matches_the_node_arrays(fitted_models, kind):
    pytest.importorskip("pandas")
    model, X = fitted_models[kind]
    df = model.trees_to_dataframe()
    nodes, ens = model._ensemble.nodes, model._ensemble
    assert len(df) == nodes.shape[0]
    assert df["tree"].nunique() == model.n_trees_
    assert (df.groupby("tree").size().to_numpy() == np.diff(ens.tree_ptr)).all()
    leaf = nodes["is_leaf"] == 1
    assert (df["is_leaf"].to_numpy() == leaf).all()
    np.testing.assert_array_equal(df["value"], nodes["value"])
    np.testing.assert_array_equal(df["cover"], nodes["cover"])
    np.testing.assert_array_equal(df["gain"][~leaf], nodes["gain"][~leaf])
    np.testing.assert_array_equal(df["threshold"][~leaf], nodes["threshold"][~leaf])
    assert df["threshold"][leaf].isna().all() and df["feature"][leaf].isna().all()
    assert (df["left"][leaf] == -1).all() and (df["right"][leaf] == -1).all()
    assert (df["feature"][~leaf].to_numpy() == [f"f{f}" for f in nodes["feature"][~leaf]]).all()
    missing = np.where(nodes["default_left"][~leaf] == 1, "left", "right")
    assert (df["missing"][~leaf].to_numpy() == missing).all()
    # node ids are positions within the tree, children point inside the same tree
    for t, sub in df.groupby("tree"):
        assert sub["node"].tolist() == list(range(len(sub)))
        splits = sub[~sub["is_leaf"]]
        assert splits["left"].between(1, len(sub) - 1).all()
        assert splits["right"].between(1, len(sub) - 1).all()
    # a node's cover is the sum of its children's; the split counts agree with get_score
    for t, sub in df.groupby("tree"):
        sub = sub.set_index("node")
        splits = sub[~sub["is_leaf"]]
        np.testing.assert_allclose(
            splits["cover"], sub.loc[splits["left"], "cover"].to_numpy()
            + sub.loc[splits["right"], "cover"].to_numpy(), rtol=1e-9)
    counts = df[~df["is_leaf"]].groupby("feature").size().to_dict()
    assert counts == {k: int(v) for k, v in model.get_score("weight").items()}
    if kind == "multiclass":
        assert (df["class"].to_numpy() == model.classes_[ens.tree_class[df["tree"]]]).all()
    else:
        assert "class" not in df.columns


def test_trees_to_dataframe_of_the_hand_computed_tree():
    pytest.importorskip("pandas")
    df = _tiny_model().trees_to_dataframe()
    assert df["feature"].tolist()[:3] == ["f0", "f1", "f1"]
    assert df["gain"].tolist() == pytest.approx([25.6, 8 / 15, 8 / 15, 0, 0, 0, 0])
    assert df["cover"].tolist() == [8, 4, 4, 2, 2, 2, 2]
    assert df["threshold"].tolist()[:3] == [0.5, 0.5, 0.5]
    assert sorted(df["value"][df["is_leaf"]]) == pytest.approx(sorted(HAND_LEAVES.values()))


def test_trees_to_dataframe_without_pandas_says_so(monkeypatch):
    model = _tiny_model()
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        model.trees_to_dataframe()


# ---------------------------------------------------------------- text dump
_SPLIT = re.compile(r"^(\t*)(\d+):\[(.+)<=(\S+)\] yes=(\d+),no=(\d+),missing=(\d+)"
                    r"(?: gain=(\S+) cover=(\S+))?$")
_LEAF = re.compile(r"^(\t*)(\d+):leaf=(\S+)(?: cover=(\S+))?$")


def _parse(dump):
    """{node id: ("split", feature, threshold, yes, no, missing) or ("leaf", value)}"""
    tree = {}
    for line in dump.rstrip("\n").split("\n"):
        m = _SPLIT.match(line)
        if m:
            tree[int(m[2])] = ("split", m[3], float(m[4]), int(m[5]), int(m[6]), int(m[7]))
            continue
        m = _LEAF.match(line)
        assert m, line
        tree[int(m[2])] = ("leaf", float(m[3]))
    return tree


def _predict_from_dump(trees, X, names, base, tree_class):
    raw = np.tile(base, (X.shape[0], 1))
    col = {name: j for j, name in enumerate(names)}
    for t, tree in enumerate(trees):
        for i in range(X.shape[0]):
            node = tree[0]
            while node[0] == "split":
                x = X[i, col[node[1]]]
                nxt = node[5] if np.isnan(x) else (node[3] if x <= node[2] else node[4])
                node = tree[nxt]
            raw[i, tree_class[t]] += node[1]
    return raw


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_dump_parses_back_into_the_same_predictions(fitted_models, kind):
    model, X = fitted_models[kind]
    dumps = model.get_dump()
    assert len(dumps) == model.n_trees_ and all(dumps)
    trees = [_parse(d) for d in dumps]
    for t, tree in enumerate(trees):
        assert len(tree) == model._ensemble.tree(t).shape[0]
    names = [f"f{j}" for j in range(X.shape[1])]
    ens = model._ensemble
    got = _predict_from_dump(trees, X[:60], names, ens.base_score, ens.tree_class)
    np.testing.assert_allclose(got, _raw(model, X[:60]), rtol=1e-12, atol=1e-12)


def test_dump_of_the_hand_computed_tree():
    (dump,) = _tiny_model().get_dump()
    assert dump.split("\n")[0] == "0:[f0<=0.5] yes=1,no=2,missing=1 gain=25.6 cover=8"
    assert "\t\t3:leaf=-1.0 cover=2" in dump.split("\n")
    (plain,) = _tiny_model().get_dump(with_stats=False)
    assert plain.split("\n")[:2] == ["0:[f0<=0.5] yes=1,no=2,missing=1",
                                     "\t1:[f1<=0.5] yes=3,no=4,missing=3"]


def test_dump_model_writes_every_tree(tmp_path, fitted_models):
    model, _ = fitted_models["binary"]
    path = tmp_path / "model.txt"
    text = model.dump_model(path)
    assert path.read_text() == text
    assert text.count("booster[") == model.n_trees_
    assert text == "".join(f"booster[{t}]:\n{d}" for t, d in enumerate(model.get_dump()))


def test_a_model_without_splits(plt):
    X = np.arange(20, dtype=np.float64).reshape(10, 2)
    model = GBTRegressor(n_estimators=2).fit(X, np.full(10, 3.0))   # constant y: no split
    assert model.get_score() == {} and model.feature_importances_.tolist() == [0.0, 0.0]
    for importance_type in TYPES:   # gain and cover divided an int64 zero array: a TypeError
        assert model.get_score(importance_type=importance_type) == {}
        model.set_params(importance_type=importance_type)
        assert model.feature_importances_.tolist() == [0.0, 0.0]
    assert [_parse(d) for d in model.get_dump()] == [{0: ("leaf", 0.0)}] * 2
    assert (model.apply(X) == 0).all()
    assert len(model.trees_to_dataframe()) == 2
    assert len(_boxes(plot_tree(model, 1))) == 1
    with pytest.raises(ValueError, match="no tree of the model has a split"):
        plot_importance(model)


# ---------------------------------------------------------------- feature names
def test_dataframe_feature_names_in_every_view():
    pd = pytest.importorskip("pandas")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GBTRegressor(n_estimators=10, max_depth=3).fit(X, y)
    score = model.get_score("total_gain")
    assert set(score) <= set(X.columns) and "bmi" in score
    np.testing.assert_allclose(
        [score.get(c, 0.0) for c in X.columns],
        model._ensemble.feature_importances("total_gain"))
    df = model.trees_to_dataframe()
    assert set(df["feature"].dropna()) <= set(X.columns)
    assert any(line.startswith("0:[") and "<=" in line
               and line[3:line.index("<=")] in X.columns for line in model.get_dump()[0].split("\n"))
    assert model.apply(X).shape == (len(X), 10)
    ax = plot_importance(model)
    assert {t.get_text() for t in ax.get_yticklabels()} == set(score)
    assert isinstance(X, pd.DataFrame)


# ---------------------------------------------------------------- plots
@pytest.fixture
def plt():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt
    yield plt
    plt.close("all")


def _boxes(ax):
    return [t for t in ax.texts if (t.get_gid() or "").startswith("node ")]


def _edges(ax):
    return [line for line in ax.lines if (line.get_gid() or "").startswith("edge ")]


@pytest.mark.parametrize("importance_type", TYPES)
def test_plot_importance_draws_one_bar_per_used_feature(plt, fitted_models, importance_type):
    model, _ = fitted_models["regression"]
    score = model.get_score(importance_type)
    ax = plot_importance(model, importance_type=importance_type)
    assert len(ax.patches) == len(score)
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths == pytest.approx(sorted(score.values()))
    assert ax.get_xlabel() == importance_type
    # largest on top
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == max(score, key=score.get)


def test_plot_importance_options(plt, fitted_models):
    model, _ = fitted_models["regression"]
    fig, ax = plt.subplots()
    out = plot_importance(model, max_num_features=3, ax=ax)
    assert out is ax and len(ax.patches) == 3
    total_gain = model.get_score("total_gain")   # the model's importance_type by default
    top3 = sorted(total_gain.values())[-3:]
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx(top3)
    ax2 = plot_importance({"a": 1.0, "b": 3.0})
    assert [t.get_text() for t in ax2.get_yticklabels()] == ["a", "b"]
    with pytest.raises(ValueError, match="max_num_features"):
        plot_importance(model, max_num_features=0)
    with pytest.raises(ValueError, match="importance_type"):
        plot_importance(model, importance_type="split")
    with pytest.raises(ValueError, match="no tree of the model has a split"):
        plot_importance({})


@pytest.mark.parametrize("kind,tree_index", [("regression", 0), ("binary", 7), ("multiclass", 5)])
def test_plot_tree_draws_a_box_per_node_and_an_edge_per_link(plt, fitted_models, kind, tree_index):
    model, _ = fitted_models[kind]
    ax = plot_tree(model, tree_index=tree_index)
    tree = model._ensemble.tree(tree_index)
    assert len(_boxes(ax)) == tree.shape[0]
    assert len(_edges(ax)) == tree.shape[0] - 1
    n_leaves = int(tree["is_leaf"].sum())
    assert sum(t.get_text().startswith("leaf=") for t in _boxes(ax)) == n_leaves
    if kind == "multiclass":
        assert f"class {model.classes_[tree_index % 3]}" in ax.get_title()


def test_plot_tree_of_the_hand_computed_tree(plt):
    fig, ax = plt.subplots()
    assert plot_tree(_tiny_model(), ax=ax, with_stats=True) is ax
    texts = [t.get_text() for t in _boxes(ax)]
    assert texts[0] == "f0 <= 0.5\ngain=25.6\ncover=8"
    assert "leaf=-1\ncover=2" in texts
    # leaves are laid out left to right in pre-order, parents centred above
    xy = {t.get_gid(): t.get_position() for t in _boxes(ax)}
    assert [xy[f"node {k}"][0] for k in (3, 4, 5, 6)] == [0, 1, 2, 3]
    assert xy["node 0"] == (1.5, 0) and xy["node 1"] == (0.5, -1)
    edge_labels = [t.get_text() for t in ax.texts if t.get_gid() is None]
    assert edge_labels.count("yes, missing") == 3 and edge_labels.count("no") == 3


def test_plot_tree_rejects_bad_tree_index(plt, fitted_models):
    model, _ = fitted_models["regression"]
    for bad in (-1, model.n_trees_, 1.5):
        with pytest.raises(ValueError, match="tree_index"):
            plot_tree(model, tree_index=bad)
    for bad in (-1, 0, 2.5, True):   # -1 was a format error that named nothing
        with pytest.raises(ValueError, match="precision must be an integer >= 1"):
            plot_tree(model, precision=bad)


def test_plot_metric_draws_each_eval_set_and_the_best_round(plt, rng):
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    model = GBTClassifier(n_estimators=60, learning_rate=0.3, eval_metric=["logloss", "error"],
                          early_stopping_rounds=5).fit(
        X[:300], y[:300], eval_set=[(X[:300], y[:300]), (X[300:], y[300:])])
    ax = plot_metric(model)
    curves = [line for line in ax.lines if line.get_label().startswith("validation_")]
    assert [c.get_label() for c in curves] == ["validation_0", "validation_1"]
    for c in curves:   # the first metric by default, one point a round
        np.testing.assert_array_equal(c.get_ydata(),
                                      model.evals_result_[c.get_label()]["logloss"])
        np.testing.assert_array_equal(c.get_xdata(), np.arange(model.n_estimators_))
    best = [line for line in ax.lines if line.get_label().startswith("best round")]
    assert len(best) == 1 and best[0].get_xdata()[0] == model.best_iteration_
    assert ax.get_ylabel() == "logloss"
    fig, ax2 = plt.subplots()
    assert plot_metric(model.evals_result_, metric="error", dataset_names=["validation_1"],
                       ax=ax2) is ax2
    assert [line.get_label() for line in ax2.lines] == ["validation_1"]
    np.testing.assert_array_equal(ax2.lines[0].get_ydata(),
                                  model.evals_result_["validation_1"]["error"])
    with pytest.raises(ValueError, match="has no metric 'auc'"):
        plot_metric(model, metric="auc")
    with pytest.raises(ValueError, match="dataset_names must be among"):
        plot_metric(model, dataset_names=["train"])
    with pytest.raises(ValueError, match="fit it with eval_set"):
        plot_metric(GBTClassifier(n_estimators=3).fit(X, y))
    with pytest.raises(ValueError, match="evals_result must map"):
        plot_metric({"validation_0": [0.5, 0.4]})


def test_plots_without_matplotlib_say_so(monkeypatch):
    model = _tiny_model()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_importance(model)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_tree(model)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_metric({"validation_0": {"rmse": [1.0, 0.5]}})


def test_plots_need_a_fitted_model():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        plot_tree(GBTRegressor())
    with pytest.raises(NotFittedError):
        GBTRegressor().get_score()
    with pytest.raises(TypeError, match="model"):
        plot_importance([1, 2])


def test_dump_model_writes_paths_only(tmp_path):
    # an int is a file descriptor to open(), which closed it (fout=1: stdout)
    model = GBTRegressor(n_estimators=2).fit(np.arange(20.0).reshape(10, 2), np.arange(10.0))
    with pytest.raises(TypeError, match="fout must be a path"):
        model.dump_model(fout=1)
    text = model.dump_model(fout=tmp_path / "model.txt")
    assert (tmp_path / "model.txt").read_text() == text
