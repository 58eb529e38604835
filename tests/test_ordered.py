"""Ordered boosting: boosting_type="ordered"."""
from pathlib import Path

import numpy as np
import pytest

from gbtree import GBTClassifier, GBTRanker, GBTRegressor
from gbtree.kernels._typedefs import NODE_DTYPE
from gbtree.growing.grower_params import GrowerParams
from gbtree.boosting.objectives import Logistic, SquaredError
from gbtree.growing.ordered import OrderedBoosting
from _reference import gradient_pairs

ORDERED = dict(boosting_type="ordered")


def data(seed, n=600):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * rng.normal(size=n)
    return X, y


class _FixedSplits:
    """A grower whose trees split the rows by given masks (one a tree, in turn)."""

    def __init__(self, masks):
        self.masks, self.t, self.last = masks, 0, None

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        left = self.masks[self.t % len(self.masks)]
        self.t += 1
        nodes = np.zeros(3, dtype=NODE_DTYPE)
        nodes["is_leaf"] = [0, 1, 1]
        nodes["left"], nodes["right"] = [1, -1, -1], [2, -1, -1]
        nodes["feature"] = [0, -1, -1]
        rows = np.concatenate([np.flatnonzero(left), np.flatnonzero(~left)]).astype(np.uint32)
        n_left = int(left.sum())
        self.last = (rows, np.array([0, 0, n_left]), np.array([left.size, n_left, left.size]))
        return [nodes]

    def leaf_rows(self):
        return self.last


@pytest.mark.parametrize("objective", [SquaredError(), Logistic()])
def test_no_row_reads_a_model_that_has_seen_it(objective):
    # two fits whose labels differ at one row, on the same tree structures: the score
    # every row's gradient is taken from is the same in both, the changed row's
    # included, in every order and after every tree
    rng = np.random.RandomState(0)
    n = 300
    y = rng.randint(0, 2, size=n).astype(np.float64)
    masks = [rng.rand(n) < 0.5 for _ in range(5)]
    changed = 137
    y2 = y.copy()
    y2[changed] = 1 - y2[changed] if isinstance(objective, Logistic) else y2[changed] + 50.0
    runs = []
    for labels in (y, y2):
        start = np.full(n, 0.1)
        ob = OrderedBoosting(_FixedSplits(masks), objective, labels, None, start,
                             GrowerParams(reg_lambda=1.0, min_child_weight=0.0), 3, seed=7,
                             n_threads=1)
        raw = np.tile(start[:, None], (1, 1))
        seen = []
        for t in range(8):
            pairs = np.empty((1, n, 2), dtype=np.float32)
            objective.gradient(labels, raw, None, pairs[:, :, 0], pairs[:, :, 1], 1)
            ob.grow(pairs, 0.5, raw, 0, None, seed=t)
            seen.append([ob.ordered_scores(r) for r in range(3)])
        runs.append((seen, raw.copy(), ob))
    (a, raw_a, ob), (b, raw_b, _) = runs
    for scores_a, scores_b in zip(a, b):
        for r in range(3):
            np.testing.assert_array_equal(scores_a[r][changed], scores_b[r][changed])
            # rows before the changed one in the order read models without it too
            pos = np.argsort(ob.orders[r])
            before = ob.orders[r][:pos[changed] + 1]
            np.testing.assert_array_equal(scores_a[r][before], scores_b[r][before])
    # while the model being built saw the row: its score moved
    assert raw_a[changed, 0] != raw_b[changed, 0]


def test_supporting_models_are_boosted_on_their_prefixes():
    # with one tree of one leaf, prefix k's model is the starting score plus a Newton
    # step on its first 2**k rows
    n = 40
    rng = np.random.RandomState(1)
    y = rng.normal(size=n)
    everything = np.ones(n, dtype=bool)
    ob = OrderedBoosting(_FixedSplits([everything]), SquaredError(), y, None, np.zeros(n),
                         GrowerParams(reg_lambda=2.0, min_child_weight=0.0), 1, seed=3,
                         n_threads=1)
    raw = np.zeros((n, 1))
    ob.grow(gradient_pairs(raw[:, 0] - y, np.ones(n)), 1.0, raw, 0)
    order = ob.orders[0]
    for k, scores in enumerate(ob.supporting[0]):
        prefix = y[order[:2 ** k]]
        # two leaves, every row in the left one; the Newton step of its rows
        np.testing.assert_allclose(scores, prefix.sum() / (prefix.size + 2.0), rtol=1e-6)
    # the model itself: every row
    np.testing.assert_allclose(raw[:, 0], y.sum() / (n + 2.0), rtol=1e-6)


def test_ordered_boosting_changes_the_trees_and_keeps_the_api():
    X, y = data(2)
    kw = dict(n_estimators=30, max_depth=4, learning_rate=0.2)
    plain = GBTRegressor(**kw).fit(X, y)
    ordered = GBTRegressor(**kw, **ORDERED).fit(X, y)
    assert not np.array_equal(plain.predict(X), ordered.predict(X))
    # the same model at any thread count and again with the same seed
    again = GBTRegressor(**kw, **ORDERED, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), ordered.predict(X))
    other = GBTRegressor(**kw, **ORDERED, random_state=5).fit(X, y)
    assert not np.array_equal(other.predict(X), ordered.predict(X))
    # leaf values and covers are the model's own: a tree's covers are the rows' hessians
    nodes = ordered._ensemble.tree(0)
    assert nodes["cover"][0] == pytest.approx(len(y))
    # with every grow policy and tree method, with weights and eval sets
    w = np.random.RandomState(3).uniform(0.5, 2, size=len(y))
    for extra in (dict(grow_policy="symmetric"), dict(grow_policy="lossguide", max_leaves=8),
                  dict(tree_method="exact"), dict(tree_method="approx")):
        m = GBTRegressor(n_estimators=5, **ORDERED, **extra).fit(X, y, sample_weight=w,
                                                                eval_set=[(X, y)])
        assert np.isfinite(m.predict(X)).all()
    clf = GBTClassifier(n_estimators=20, **ORDERED).fit(X, y > 0)
    assert clf.score(X, y > 0) > 0.7


@pytest.mark.parametrize("params, match", [
    (dict(subsample=0.5), "subsample < 1"),
    (dict(sampling_method="goss"), "goss"),
    (dict(booster="dart"), "dart"),
    (dict(num_parallel_tree=2), "num_parallel_tree"),
    (dict(monotone_constraints=[1, 0, 0, 0]), "monotone_constraints"),
    (dict(objective="absolute_error"), "without leaf refits"),
    (dict(boosting_type="Ordered"), "boosting_type must be"),
    (dict(permutation_count=0), "permutation_count"),
])
def test_refuses_what_it_does_not_support(params, match):
    X, y = data(4, n=100)
    with pytest.raises(ValueError, match=match):
        GBTRegressor(n_estimators=2, **{**ORDERED, **params}).fit(X, y)


def test_refuses_several_outputs_rankers_and_continuing():
    X, y = data(5, n=120)
    with pytest.raises(ValueError, match="one output"):
        GBTClassifier(n_estimators=2, **ORDERED).fit(X, np.digitize(y, [-1, 1]))
    with pytest.raises(ValueError, match="one output"):
        GBTRanker(n_estimators=2, **ORDERED).fit(X, np.clip(np.round(y), 0, 3),
                                                 qid=np.repeat(np.arange(12), 10))
    m = GBTRegressor(n_estimators=2, warm_start=True, **ORDERED).fit(X, y)
    with pytest.raises(ValueError, match="cannot continue"):
        m.set_params(n_estimators=4).fit(X, y)


def test_as_accurate_as_catboosts_ordered_boosting_on_small_real_data():
    catboost = pytest.importorskip("catboost")
    from sklearn.metrics import roc_auc_score
    table = np.loadtxt(Path(__file__).parent / "data" / "binary.train")
    X, y = table[:, 1:], table[:, 0]
    train, test = slice(0, 2000), slice(5000, None)
    ours = GBTClassifier(grow_policy="symmetric", max_depth=6, n_estimators=200,
                         learning_rate=0.05, n_jobs=2, **ORDERED).fit(X[train], y[train])
    theirs = catboost.CatBoostClassifier(depth=6, iterations=200, learning_rate=0.05,
                                         boosting_type="Ordered", thread_count=2, random_seed=0,
                                         verbose=False, allow_writing_files=False)
    theirs.fit(X[train], y[train])
    auc = [roc_auc_score(y[test], m.predict_proba(X[test])[:, 1]) for m in (ours, theirs)]
    assert auc[0] > auc[1] - 0.015, auc
