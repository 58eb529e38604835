"""booster="dart": dropped trees, their rescaling, and accuracy against XGBoost's DART."""
import numpy as np
import pytest

from conftest import data_file
from gbtree import GBTClassifier, GBTRegressor


def regression(seed, n=2000):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    return X, X[:, 0] - 2 * X[:, 1] ** 2 + np.sin(3 * X[:, 2]) + 0.3 * rng.normal(size=n)


def test_dart_without_drops_is_plain_boosting():
    X, y = regression(0)
    plain = GBTRegressor(n_estimators=20, subsample=0.8).fit(X, y)
    dart = GBTRegressor(n_estimators=20, subsample=0.8, booster="dart", rate_drop=0.0).fit(X, y)
    assert dart._ensemble.nodes.tobytes() == plain._ensemble.nodes.tobytes()
    skipped = GBTRegressor(n_estimators=20, subsample=0.8, booster="dart", rate_drop=0.5,
                           skip_drop=1.0).fit(X, y)
    assert skipped._ensemble.nodes.tobytes() == plain._ensemble.nodes.tobytes()


@pytest.mark.parametrize("normalize_type, scale", [("tree", lambda lr: 1 / (1 + lr)),
                                                   ("forest", lambda lr: 1 / (1 + lr))])
def test_a_dropped_round_scales_the_dropped_and_the_new_tree(normalize_type, scale):
    # two rounds, the second drops the first tree: it is grown on the same gradients as
    # the first (both start from F0; float sums, which no round rounds its own way), and
    # both end up scaled by 1 / (1 + lr)
    X, y = regression(1, 500)
    lr = 0.3
    plain = GBTRegressor(n_estimators=1, learning_rate=lr, max_depth=3,
                         grad_quant_bins=None).fit(X, y)
    dart = GBTRegressor(n_estimators=2, learning_rate=lr, max_depth=3, booster="dart",
                        one_drop=True, normalize_type=normalize_type,
                        grad_quant_bins=None).fit(X, y)
    first = plain._ensemble.tree(0)["value"]
    for t in range(2):
        np.testing.assert_allclose(dart._ensemble.tree(t)["value"], first * scale(lr),
                                   rtol=1e-12)
    np.testing.assert_allclose(dart.predict(X) - dart._ensemble.base_score[0],
                               2 * scale(lr) * (plain.predict(X) - plain._ensemble.base_score[0]),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("normalize_type", ["tree", "forest"])
def test_normalize_types_weigh_two_dropped_trees_as_xgboost_does(normalize_type):
    # rate_drop=1 drops every earlier tree: each round grows the same tree T from F0;
    # round 1 drops 1 tree (both types: all scaled by 1/(1+lr)), round 2 drops 2
    X, y = regression(5, 500)
    lr = 0.3
    T = GBTRegressor(n_estimators=1, learning_rate=lr, max_depth=3).fit(X, y)._ensemble.tree(0)
    dart = GBTRegressor(n_estimators=3, learning_rate=lr, max_depth=3, booster="dart",
                        rate_drop=1.0, normalize_type=normalize_type).fit(X, y)
    a = 1 / (1 + lr)
    if normalize_type == "tree":
        expected = [a * 2 / (2 + lr), a * 2 / (2 + lr), 1 / (2 + lr)]
    else:
        expected = [a * a, a * a, a]
    for t in range(3):
        np.testing.assert_allclose(dart._ensemble.tree(t)["value"], T["value"] * expected[t],
                                   rtol=1e-12)


@pytest.mark.parametrize("sample_type", ["uniform", "weighted"])
@pytest.mark.parametrize("kind", ["regressor", "multiclass"])
def test_eval_sets_follow_the_rescaled_trees(sample_type, kind):
    X, y = regression(2)
    Xv, yv = regression(3, 500)
    if kind == "regressor":
        est, metric = GBTRegressor, "rmse"
        score = lambda m: np.sqrt(np.mean((yv - m.predict(Xv)) ** 2))  # noqa: E731
    else:
        y, yv = np.digitize(y, [-2, 0]), np.digitize(yv, [-2, 0])
        est, metric = GBTClassifier, "mlogloss"
        score = lambda m: -np.mean(np.log(m.predict_proba(Xv)[np.arange(len(yv)), yv]))  # noqa
    model = est(n_estimators=30, booster="dart", rate_drop=0.3, sample_type=sample_type,
                subsample=0.7, eval_metric=metric).fit(X, y, eval_set=[(Xv, yv)])
    assert model.evals_result_["validation_0"][metric][-1] == pytest.approx(score(model),
                                                                            rel=1e-9)
    plain = est(n_estimators=30, subsample=0.7).fit(X, y)
    assert model._ensemble.nodes.tobytes() != plain._ensemble.nodes.tobytes()


def test_dart_matches_xgboost_on_held_out_rows():
    xgb = pytest.importorskip("xgboost")
    from sklearn.metrics import log_loss, roc_auc_score
    data = np.loadtxt(data_file("binary.train"))
    X, y = data[:, 1:], data[:, 0]
    Xtr, Xte, ytr, yte = X[:5000], X[5000:], y[:5000], y[5000:]
    params = dict(n_estimators=150, learning_rate=0.1, max_depth=5, rate_drop=0.1,
                  skip_drop=0.5)
    ours = GBTClassifier(booster="dart", random_state=0, **params).fit(Xtr, ytr)
    theirs = xgb.XGBClassifier(booster="dart", tree_method="hist", random_state=0,
                               **params).fit(Xtr, ytr)
    p, q = ours.predict_proba(Xte)[:, 1], theirs.predict_proba(Xte)[:, 1]
    assert roc_auc_score(yte, p) >= roc_auc_score(yte, q) - 0.01
    assert log_loss(yte, p) <= log_loss(yte, q) * 1.02


def test_dart_parameters_are_checked():
    X, y = regression(4, 200)
    for params, message in [(dict(booster="gblinear"), "booster must be 'gbtree' or 'dart'"),
                            (dict(rate_drop=1.5), "rate_drop must be <= 1"),
                            (dict(skip_drop=-0.1), "skip_drop must be >= 0"),
                            (dict(normalize_type="sum"), "normalize_type must be"),
                            (dict(sample_type="random"), "sample_type must be"),
                            (dict(booster="dart", early_stopping_rounds=5),
                             "early_stopping_rounds cannot be used with booster='dart'")]:
        with pytest.raises(ValueError, match=message):
            GBTRegressor(n_estimators=2, **params).fit(X, y, eval_set=[(X, y)])
    with pytest.raises(TypeError, match="one_drop must be a bool"):
        GBTRegressor(one_drop=1).fit(X, y)
