"""Every parameter of every estimator given values nobody means: the fit either works
or raises TypeError / ValueError naming the parameter (never another error, never
a fit that does not end)."""
import numpy as np
import pytest

from gbtree import GBTClassifier, GBTRanker, GBTRegressor

# (each a value of some wrong kind: containers, arrays, numbers beyond any range, text)
ODD = [["x"], {"a": 1}, np.array([1, 2]), [[]], 10 ** 20, -10 ** 20, float("nan"),
       float("inf"), "nonsense", b"x", object(), -1, 0, 1.5, True, None, -10 ** 9]

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
y = X[:, 0] + rng.normal(size=60)
FITS = {
    GBTRegressor: lambda m: m.fit(X, y),
    GBTClassifier: lambda m: m.fit(X, y > 0),
    GBTRanker: lambda m: m.fit(X, np.clip(np.round(y), 0, 3), qid=np.arange(60) // 10),
}
CASES = [(Est, name) for Est in FITS for name in sorted(Est().get_params())]


@pytest.mark.parametrize("Est, name", CASES, ids=[f"{E.__name__}-{n}" for E, n in CASES])
def test_odd_values_of_a_parameter_fit_or_name_it(Est, name):
    for value in ODD:
        model = Est(n_estimators=3, max_depth=3).set_params(**{name: value})
        try:
            FITS[Est](model)
        except (TypeError, ValueError) as exc:
            assert name in str(exc), (value, exc)


@pytest.mark.parametrize("params, match", [
    (dict(n_estimators=10 ** 20), r"n_estimators must be <= 2147483647"),
    (dict(n_jobs=-10 ** 9), r"n_jobs must be .* at least -"),
    (dict(interaction_constraints=[[]]), r"interaction_constraints\[0\] is empty"),
    (dict(interaction_constraints=[[0, True]]), r"interaction_constraints: True is not"),
    (dict(aft_loss_distribution=["x"]), r"aft_loss_distribution must be 'normal', "),
    (dict(grow_policy=np.array(["depthwise"])), r"grow_policy must be 'depthwise'"),
    (dict(learning_rate=10 ** 400), r"learning_rate must be finite"),
])
def test_values_that_cannot_be_meant_are_refused(params, match):
    # (they hung, were accepted silently, or failed with errors that did not name them)
    with pytest.raises(ValueError, match=match):
        GBTRegressor(**{"n_estimators": 3, **params}).fit(X, y)


@pytest.mark.parametrize("Est", list(FITS))
def test_the_shared_parameters_are_in_each_signature_and_unknown_names_refused(Est):
    # the shared parameters are written once (params.SHARED_DEFAULTS): each estimator's
    # signature shows them after its own, with their defaults, and stores them
    import inspect
    from gbtree.estimators.params import SHARED_DEFAULTS
    parameters = inspect.signature(Est.__init__).parameters
    shown = {n: p.default for n, p in parameters.items() if n in SHARED_DEFAULTS}
    assert shown == SHARED_DEFAULTS
    assert list(parameters)[-len(SHARED_DEFAULTS):] == list(SHARED_DEFAULTS)
    assert all(p.kind == p.KEYWORD_ONLY for n, p in parameters.items() if n != "self")
    assert Est(max_depth=3, gamma=0.5).get_params()["gamma"] == 0.5
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_estimator'"):
        Est(n_estimator=3)
