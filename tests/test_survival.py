"""objective="cox": the gradient against the partial likelihood, the concordance index
against scikit-survival's, and the model against XGBoost's on real survival data."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gbtree import GBTRegressor, load_model
from gbtree.boosting.metrics import concordance_index
from gbtree.boosting.survival import cox_gradient, cox_nloglik


def reference_cox(y, f, w):
    """Loss, gradient and hessian of the weighted Breslow partial likelihood, one
    event at a time (O(n**2))."""
    t, d, e = np.abs(y), y > 0, np.exp(f)
    loss, grad, hess = 0.0, np.zeros_like(f), np.zeros_like(f)
    for k in np.flatnonzero(d):
        risk = t >= t[k]
        D = np.sum(w[risk] * e[risk])
        loss -= w[k] * (f[k] - np.log(D))
        p = np.where(risk, w * e / D, 0.0)
        grad += w[k] * p
        hess += w[k] * (p - p ** 2)
        grad[k] -= w[k]
    return loss, grad, hess


def survival_labels(rs, n, n_times):
    """Times with ties (n_times distinct values), a third of the rows censored."""
    t = rs.randint(1, n_times + 1, size=n).astype(float)
    censored = rs.rand(n) < 0.33
    censored[rs.randint(n)] = False          # at least one event
    return np.where(censored, -t, t)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 60), n_times=st.integers(1, 30),
       weighted=st.booleans())
def test_cox_gradient_matches_the_partial_likelihood(seed, n, n_times, weighted):
    rs = np.random.RandomState(seed)
    y = survival_labels(rs, n, n_times)
    f = rs.normal(scale=2, size=n)
    w = rs.uniform(0.1, 3, size=n) if weighted else np.ones(n)
    loss, grad, hess = reference_cox(y, f, w)
    g, h = cox_gradient(y, f, w if weighted else None)
    np.testing.assert_allclose(g, grad, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h, hess, rtol=1e-9, atol=1e-12)
    events = np.sum(w[y > 0])
    assert cox_nloglik(y, f, w if weighted else None) == pytest.approx(loss / events, rel=1e-9)
    # the likelihood does not change when every score moves alike
    assert cox_nloglik(y, f + 30.0, w) == pytest.approx(cox_nloglik(y, f, w), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 80), n_times=st.integers(1, 20),
       n_scores=st.integers(1, 20))
def test_concordance_index_matches_scikit_survival(seed, n, n_times, n_scores):
    sksurv_metrics = pytest.importorskip("sksurv.metrics")
    rs = np.random.RandomState(seed)
    y = survival_labels(rs, n, n_times)
    score = rs.randint(0, n_scores, size=n).astype(float)   # ties in the scores too
    from sksurv.exceptions import NoComparablePairException
    try:
        with np.errstate(invalid="ignore"):
            expected = sksurv_metrics.concordance_index_censored(y > 0, np.abs(y), score)[0]
    except NoComparablePairException:
        expected = np.nan
    if np.isnan(expected):   # no comparable pair: scikit-survival refuses or gives 0 / 0
        expected = 0.5
    assert concordance_index(y, score) == pytest.approx(expected, abs=1e-12)
    # weights count pairs: integer weights equal repeated rows
    reps = rs.randint(1, 4, size=n)
    assert concordance_index(y, score, reps.astype(float)) == pytest.approx(
        concordance_index(np.repeat(y, reps), np.repeat(score, reps)), abs=1e-12)


def _real(name):
    datasets = pytest.importorskip("sksurv.datasets")
    X, y = getattr(datasets, name)()
    event, time = (y[y.dtype.names[0]], y[y.dtype.names[1]])
    import pandas as pd
    X = pd.get_dummies(X, drop_first=True).astype(float).to_numpy()
    return X, np.where(event, time, -time)


@pytest.mark.parametrize("name", ["load_whas500", "load_gbsg2", "load_veterans_lung_cancer"])
def test_cox_concordance_on_real_data_is_within_noise_of_xgboost(name):
    xgb = pytest.importorskip("xgboost")
    from sklearn.model_selection import KFold
    X, y = _real(name)
    params = dict(n_estimators=100, learning_rate=0.05, max_depth=3, min_child_weight=1.0,
                  reg_lambda=1.0)
    ours, theirs = [], []
    for train, test in KFold(5, shuffle=True, random_state=0).split(X):
        m = GBTRegressor(objective="cox", **params).fit(X[train], y[train])
        ours.append(concordance_index(y[test], m.predict(X[test])))
        x = xgb.XGBRegressor(objective="survival:cox", tree_method="hist", **params).fit(
            X[train], y[train])
        theirs.append(concordance_index(y[test], x.predict(X[test])))
    # within one standard error of the folds' differences of XGBoost's mean, or better
    diff = np.array(ours) - np.array(theirs)
    assert diff.mean() >= -max(0.01, diff.std(ddof=1) / np.sqrt(len(diff)))
    assert np.mean(ours) > 0.6


def test_cox_model_predicts_hazard_ratios_saves_and_refuses_bad_labels(tmp_path):
    rs = np.random.RandomState(0)
    X = rs.normal(size=(400, 3))
    hazard = np.exp(X[:, 0])
    t = rs.exponential(1 / hazard)
    c = rs.exponential(2.0, size=400)
    y = np.where(t <= c, t, -c)
    m = GBTRegressor(objective="cox", n_estimators=30, eval_metric=["cox-nloglik", "concordance"]
                     ).fit(X, y, eval_set=[(X, y)])
    np.testing.assert_allclose(m.predict(X), np.exp(m.decision_function(X)
                                                    if hasattr(m, "decision_function")
                                                    else m._raw_predict(X)[:, 0]))
    curve = m.evals_result_["validation_0"]
    assert curve["cox-nloglik"][-1] < curve["cox-nloglik"][0]
    assert curve["concordance"][-1] == pytest.approx(concordance_index(y, m.predict(X)))
    assert concordance_index(y, m.predict(X)) > 0.65
    m.save_model(tmp_path / "cox.json")
    np.testing.assert_array_equal(load_model(tmp_path / "cox.json").predict(X), m.predict(X))
    with pytest.raises(ValueError, match="needs finite y != 0"):
        GBTRegressor(objective="cox").fit(X, np.where(y > 0, y, 0.0))
    with pytest.raises(ValueError, match="at least one event"):
        GBTRegressor(objective="cox").fit(X, -np.abs(y))
    with pytest.raises(ValueError, match="eval_metric 'rmse' does not apply"):
        GBTRegressor(objective="cox", eval_metric="rmse").fit(X, y)


# ---------------------------------------------------------------------------
# objective="aft": accelerated failure time on interval labels

from gbtree.boosting.survival import aft_gradient, aft_nloglik  # noqa: E402


def interval_labels(rs, n):
    """Observed times, right-, left- and interval-censored rows, a quarter each."""
    t = rs.uniform(0.2, 6, n)
    kind = rs.randint(0, 4, n)
    lower = np.where(kind == 2, 0.0, t)
    upper = np.where(kind == 1, np.inf, np.where(kind == 3, t * rs.uniform(1.1, 3, n), t))
    return np.column_stack([lower, upper])


@pytest.mark.parametrize("distribution", ["normal", "logistic", "extreme"])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_aft_loss_is_the_likelihood_and_its_gradient_its_derivative(distribution, sigma):
    from scipy import stats
    dist = {"normal": stats.norm, "logistic": stats.logistic, "extreme": stats.gumbel_l}[distribution]
    rs = np.random.RandomState(0)
    y = interval_labels(rs, 400)
    f = rs.normal(size=400)
    exact = y[:, 0] == y[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        z_lo, z_up = (np.log(y[:, 0]) - f) / sigma, (np.log(y[:, 1]) - f) / sigma
        # (the interval's probability from the tail where it is not a difference near 1)
        mass = np.where(z_lo > 0, dist.sf(z_lo) - dist.sf(z_up), dist.cdf(z_up) - dist.cdf(z_lo))
        expected = np.where(exact, -(dist.logpdf(z_lo) - np.log(sigma * y[:, 0])),
                            -np.log(mass))
    got = aft_nloglik(y, f, distribution, sigma)
    finite = np.isfinite(expected)   # (an interval of probability below 1e-300 costs 690.8)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-8)
    assert np.all(np.isfinite(got)) and np.all(got[~finite] > 690)
    g, h = aft_gradient(y, f, distribution, sigma)
    eps = 1e-5
    g_num = (aft_nloglik(y, f + eps, distribution, sigma)
             - aft_nloglik(y, f - eps, distribution, sigma)) / (2 * eps)
    gp, _ = aft_gradient(y, f + eps, distribution, sigma)
    gm, _ = aft_gradient(y, f - eps, distribution, sigma)
    inside = (np.abs(gp) < 14.9) & (np.abs(gm) < 14.9) & (np.abs(g) < 14.9)   # not clipped
    assert inside.mean() > 0.5
    np.testing.assert_allclose(g[inside], g_num[inside], rtol=1e-5, atol=1e-6)
    h_num = (gp - gm) / (2 * eps)
    unclipped = inside & (h > 1e-15) & (h < 14.9)
    np.testing.assert_allclose(h[unclipped], h_num[unclipped], rtol=1e-4, atol=1e-6)
    assert np.all((h >= 1e-16) & (h <= 15)) and np.all(np.abs(g) <= 15)


def censored_times(seed, n):
    rs = np.random.RandomState(seed)
    X = rs.normal(size=(n, 4))
    T = np.exp(1 + X[:, 0] - 0.5 * X[:, 1] ** 2 + 0.5 * rs.normal(size=n))
    C = np.exp(1.5 + rs.normal(size=n))
    return X, np.column_stack([np.minimum(T, C), np.where(T <= C, T, np.inf)])


@pytest.mark.parametrize("distribution", ["normal", "logistic", "extreme"])
def test_aft_matches_xgboost(distribution):
    xgb = pytest.importorskip("xgboost")
    X, y = censored_times(0, 4000)
    Xt, yt = censored_times(1, 4000)
    params = dict(aft_loss_distribution=distribution, aft_loss_distribution_scale=0.8)
    ours = GBTRegressor(objective="aft", n_estimators=100, learning_rate=0.05, max_depth=3,
                        eval_metric="aft-nloglik", **params).fit(X, y, eval_set=[(Xt, yt)])
    d, dt = xgb.DMatrix(X), xgb.DMatrix(Xt)
    for m, labels in ((d, y), (dt, yt)):
        m.set_float_info("label_lower_bound", labels[:, 0])
        m.set_float_info("label_upper_bound", labels[:, 1])
    record = {}
    theirs = xgb.train(dict(objective="survival:aft", eta=0.05, max_depth=3, tree_method="hist",
                            eval_metric="aft-nloglik", **params), d, 100, evals=[(dt, "test")],
                       evals_result=record, verbose_eval=False)
    assert ours.evals_result_["validation_0"]["aft-nloglik"][-1] <= \
        record["test"]["aft-nloglik"][-1] * 1.01
    y_event = np.where(np.isfinite(yt[:, 1]), yt[:, 0], -yt[:, 0])
    # a longer predicted time is a lower risk
    assert concordance_index(y_event, -ours.predict(Xt)) >= \
        concordance_index(y_event, -theirs.predict(dt)) - 0.005


def test_aft_on_real_data_files_and_refusals(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y_event = _real("load_whas500")
    y = np.column_stack([np.abs(y_event), np.where(y_event > 0, y_event, np.inf)])
    from sklearn.model_selection import KFold
    ours, theirs = [], []
    for train, test in KFold(5, shuffle=True, random_state=0).split(X):
        m = GBTRegressor(objective="aft", n_estimators=100, learning_rate=0.05,
                         max_depth=3).fit(X[train], y[train])
        ours.append(concordance_index(y_event[test], -m.predict(X[test])))
        d = xgb.DMatrix(X[train])
        d.set_float_info("label_lower_bound", y[train, 0])
        d.set_float_info("label_upper_bound", y[train, 1])
        b = xgb.train(dict(objective="survival:aft", eta=0.05, max_depth=3, tree_method="hist"),
                      d, 100)
        theirs.append(concordance_index(y_event[test], -b.predict(xgb.DMatrix(X[test]))))
    diff = np.array(ours) - np.array(theirs)
    assert diff.mean() >= -max(0.01, diff.std(ddof=1) / np.sqrt(len(diff)))
    m.save_model(tmp_path / "aft.json")
    np.testing.assert_array_equal(load_model(tmp_path / "aft.json").predict(X), m.predict(X))
    with pytest.raises(ValueError, match=r"needs y of shape \(n_samples, 2\)"):
        GBTRegressor(objective="aft").fit(X, y[:, 0])
    with pytest.raises(ValueError, match="0 <= lower <= upper"):
        GBTRegressor(objective="aft").fit(X, y[:, ::-1])
    with pytest.raises(ValueError, match="aft_loss_distribution must be .normal., .logistic. or .extreme."):
        GBTRegressor(objective="aft", aft_loss_distribution="weibull").fit(X, y)
    with pytest.raises(ValueError, match="aft_loss_distribution_scale must be > 0"):
        GBTRegressor(objective="aft", aft_loss_distribution_scale=0.0).fit(X, y)
