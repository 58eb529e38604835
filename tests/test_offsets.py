"""base_margin: a per-row starting raw score (an offset) on fit, eval sets and predict."""
import numpy as np
import pytest

from gbtree import GBTClassifier, GBTRanker, GBTRegressor


def claims(seed, n):
    """Claim counts with a known rate per unit of exposure: y ~ Poisson(exposure * rate(x))."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    rate = np.exp(0.5 * X[:, 0] - 0.3 * X[:, 1] ** 2)
    exposure = rng.uniform(0.1, 5, size=n)
    return X, rng.poisson(rate * exposure).astype(float), rate, exposure


def poisson_deviance(y, mu):
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(y > 0, y * np.log(y / mu), 0.0)
    return 2 * np.mean(term - (y - mu))


PARAMS = dict(objective="poisson", n_estimators=150, learning_rate=0.05, max_depth=3)


def test_poisson_with_exposure_as_offset_recovers_the_rate():
    X, y, rate, exposure = claims(0, 20_000)
    offset = np.log(exposure)
    model = GBTRegressor(**PARAMS).fit(X, y, base_margin=offset)
    # per unit of exposure (offset 0) the model predicts the rate; with the offset, counts
    per_unit = model.predict(X, base_margin=np.zeros(len(y)))
    assert np.mean(np.abs(per_unit / rate - 1)) < 0.06
    np.testing.assert_allclose(model.predict(X, base_margin=offset), per_unit * exposure,
                               rtol=1e-12)
    # without the offset the same trees see the exposure as noise: far from the rate
    plain = GBTRegressor(**PARAMS).fit(X, y)
    assert np.mean(np.abs(plain.predict(X) / rate - 1)) > 0.3


def test_poisson_offset_matches_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y, rate, exposure = claims(1, 20_000)
    Xt, yt, rate_t, exposure_t = claims(2, 20_000)
    ours = GBTRegressor(**PARAMS).fit(X, y, base_margin=np.log(exposure))
    theirs = xgb.XGBRegressor(objective="count:poisson", n_estimators=150, learning_rate=0.05,
                              max_depth=3, tree_method="hist", max_bin=255).fit(
        X, y, base_margin=np.log(exposure))
    mu_ours = ours.predict(Xt, base_margin=np.log(exposure_t))
    mu_theirs = theirs.predict(Xt, base_margin=np.log(exposure_t))
    d_ours, d_theirs = poisson_deviance(yt, mu_ours), poisson_deviance(yt, mu_theirs)
    assert d_ours <= d_theirs * 1.01
    err_ours = np.mean(np.abs(mu_ours / (rate_t * exposure_t) - 1))
    err_theirs = np.mean(np.abs(mu_theirs / (rate_t * exposure_t) - 1))
    assert err_ours <= err_theirs * 1.1


@pytest.mark.parametrize("kind", ["regressor", "binary", "multiclass", "ranker"])
def test_the_starting_value_as_offset_gives_the_same_model(kind):
    # an offset equal to the fitted starting value on every row is the plain fit
    rng = np.random.RandomState(0)
    X = rng.normal(size=(600, 4))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2
    fit_kw = {}
    if kind == "regressor":
        est, y = GBTRegressor(n_estimators=8), signal
    elif kind == "binary":
        est, y = GBTClassifier(n_estimators=8), (signal > 0).astype(int)
    elif kind == "multiclass":
        est, y = GBTClassifier(n_estimators=8), np.digitize(signal, [-1, 0])
    else:
        est, y = GBTRanker(n_estimators=8), np.clip(np.round(signal + 1), 0, 3)
        fit_kw = dict(qid=np.repeat(np.arange(60), 10))
    plain = est.fit(X, y, **fit_kw)
    base = plain.base_score_ if hasattr(plain, "base_score_") else plain._ensemble.base_score
    margin = np.tile(np.asarray(base, dtype=float), (len(y), 1))
    margin = margin[:, 0] if margin.shape[1] == 1 else margin
    expected = plain.predict(X) if kind in ("regressor", "ranker") else plain.predict_proba(X)
    with_offset = type(est)(**est.get_params()).fit(X, y, base_margin=margin, **fit_kw)
    got = (with_offset.predict(X, base_margin=margin) if kind in ("regressor", "ranker")
           else with_offset.predict_proba(X, base_margin=margin))
    np.testing.assert_array_equal(got, expected)
    for a, b in zip(with_offset._ensemble.nodes.tolist(), plain._ensemble.nodes.tolist()):
        assert a == b


def test_eval_sets_validation_split_and_staged_predictions_use_the_offsets():
    X, y, _, exposure = claims(3, 4_000)
    Xv, yv, _, exposure_v = claims(4, 2_000)
    model = GBTRegressor(**PARAMS, eval_metric="rmse").fit(
        X, y, base_margin=np.log(exposure), eval_set=[(Xv, yv)],
        base_margin_eval_set=[np.log(exposure_v)])
    mu = model.predict(Xv, base_margin=np.log(exposure_v))
    recorded = model.evals_result_["validation_0"]["rmse"][-1]
    assert recorded == pytest.approx(np.sqrt(np.mean((yv - mu) ** 2)), rel=1e-9)
    stages = list(model.staged_predict(Xv, base_margin=np.log(exposure_v)))
    np.testing.assert_allclose(stages[-1], mu, rtol=1e-12)
    # the held-out rows of validation_fraction keep their own offsets: their recorded
    # error is that of the model on all rows, not that of rates read as counts
    held = GBTRegressor(**PARAMS, validation_fraction=0.2, eval_metric="rmse").fit(
        X, y, base_margin=np.log(exposure))
    everywhere = np.sqrt(np.mean((y - held.predict(X, base_margin=np.log(exposure))) ** 2))
    assert held.evals_result_["validation"]["rmse"][-1] == pytest.approx(everywhere, rel=0.15)
    as_rates = np.sqrt(np.mean((y - held.predict(X)) ** 2))
    assert as_rates > 1.3 * everywhere


def test_ranker_offsets_follow_their_rows_when_queries_are_sorted():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(400, 3))
    y = np.clip(np.round(X[:, 0] + 1), 0, 3)
    qid = rng.randint(0, 40, size=400)
    margin = rng.normal(size=400)
    shuffled = GBTRanker(n_estimators=5).fit(X, y, qid=qid, base_margin=margin)
    order = np.argsort(qid, kind="stable")
    ordered = GBTRanker(n_estimators=5).fit(X[order], y[order], qid=qid[order],
                                            base_margin=margin[order])
    np.testing.assert_array_equal(shuffled.predict(X, base_margin=margin),
                                  ordered.predict(X, base_margin=margin))


@pytest.mark.parametrize("kind", ["regressor", "multiclass"])
def test_contributions_with_an_offset_sum_to_the_raw_prediction(kind):
    rng = np.random.RandomState(2)
    X = rng.normal(size=(300, 4))
    if kind == "regressor":
        est, y = GBTRegressor(n_estimators=6), X[:, 0] * 2 + rng.normal(size=300)
        margin = rng.normal(size=300)
        raw = lambda m: est.predict(X, base_margin=m)   # noqa: E731
    else:
        est, y = GBTClassifier(n_estimators=6), rng.randint(0, 3, size=300)
        margin = rng.normal(size=(300, 3))
        raw = lambda m: est.decision_function(X, base_margin=m)   # noqa: E731
    est.fit(X, y, base_margin=margin)
    contribs = est.predict(X, base_margin=margin, pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=-1), raw(margin), rtol=1e-9, atol=1e-9)
    plain = est.predict(X, pred_contribs=True)
    # only the bias moves: by the offset less the starting value
    np.testing.assert_array_equal(contribs[..., :-1], plain[..., :-1])
    base = est._ensemble.base_score if kind != "regressor" else est._ensemble.base_score[0]
    np.testing.assert_allclose(contribs[..., -1] - plain[..., -1], margin - base, atol=1e-9)
    inter = est.predict(X, base_margin=margin, pred_interactions=True)
    np.testing.assert_allclose(inter.sum(axis=(-2, -1)), raw(margin), rtol=1e-9, atol=1e-9)


def test_bad_offsets_are_refused_with_their_name():
    rng = np.random.RandomState(3)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    with pytest.raises(ValueError, match=r"base_margin must have shape \(50,\)"):
        GBTRegressor(n_estimators=2).fit(X, y, base_margin=np.zeros(49))
    with pytest.raises(ValueError, match="base_margin contains NaN or infinity"):
        GBTRegressor(n_estimators=2).fit(X, y, base_margin=np.r_[np.nan, np.zeros(49)])
    with pytest.raises(ValueError, match="base_margin must hold numbers"):
        GBTRegressor(n_estimators=2).fit(X, y, base_margin=["a"] * 50)
    with pytest.raises(ValueError, match=r"base_margin must have shape \(50, 3\)"):
        GBTClassifier(n_estimators=2).fit(X, rng.randint(0, 3, 50), base_margin=np.zeros(50))
    with pytest.raises(ValueError, match="base_margin_eval_set is given without eval_set"):
        GBTRegressor(n_estimators=2).fit(X, y, base_margin_eval_set=[np.zeros(50)])
    with pytest.raises(ValueError, match="base_margin_eval_set has 2 entries but eval_set has 1"):
        GBTRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)],
                                         base_margin_eval_set=[np.zeros(50)] * 2)
    with pytest.raises(ValueError, match=r"base_margin_eval_set\[0\] must have shape \(50,\)"):
        GBTRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)],
                                         base_margin_eval_set=[np.zeros(3)])
    model = GBTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=r"base_margin must have shape \(50,\)"):
        model.predict(X, base_margin=np.zeros(10))
    with pytest.raises(ValueError, match=r"base_margin must have shape \(50,\)"):
        model.predict(X, base_margin=np.zeros(10), pred_contribs=True)
