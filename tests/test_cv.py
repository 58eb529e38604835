"""gbtree.cv: the folds' per-round metrics, as a loop of fit calls gives them."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

import gbtree
from gbtree import GBTClassifier, GBTRanker, GBTRegressor


def _loop(estimator, X, y, splits, eval_train=True, **fit):
    """The table cv gives, from one fit per fold (no early stopping)."""
    results = []
    for train, test in splits:
        parts = [train, test] if eval_train else [test]
        kw = {}
        if "sample_weight" in fit:
            w = fit["sample_weight"]
            kw = dict(sample_weight=w[train], sample_weight_eval_set=[w[p] for p in parts])
        if "qid" in fit:
            q = fit["qid"]
            kw.update(qid=q[train], eval_qid=[q[p] for p in parts])
        model = clone(estimator).fit(X[train], y[train],
                                     eval_set=[(X[p], y[p]) for p in parts], **kw)
        results.append(list(model.evals_result_.values()))
    table = {}
    for i, data in enumerate(["train", "test"] if eval_train else ["test"]):
        for name in results[0][i]:
            values = np.array([r[i][name] for r in results])
            table[f"{data}-{name}-mean"] = values.mean(axis=0).tolist()
            table[f"{data}-{name}-std"] = values.std(axis=0).tolist()
    return table


@pytest.fixture
def binary(rng):
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] - X[:, 1] + rng.normal(size=600) > 0).astype(int)
    return X, y


def test_a_classifier_is_cross_validated_on_stratified_folds(binary, rng):
    X, y = binary
    w = rng.uniform(0.5, 2.0, size=y.shape[0])
    est = GBTClassifier(n_estimators=15, max_depth=3, eval_metric=["error", "logloss"])
    got = gbtree.cv(est, X, y, nfold=4, seed=3, sample_weight=w, as_pandas=False)
    splits = StratifiedKFold(4, shuffle=True, random_state=3).split(X, y)
    assert got == _loop(est, X, y, list(splits), sample_weight=w)
    assert list(got) == ["train-error-mean", "train-error-std", "train-logloss-mean",
                         "train-logloss-std", "test-error-mean", "test-error-std",
                         "test-logloss-mean", "test-logloss-std"]
    assert len(got["test-logloss-mean"]) == 15
    # unstratified on request; the same numbers from the splitter passed as folds
    plain = gbtree.cv(est, X, y, nfold=4, seed=3, stratified=False, eval_train=False,
                      as_pandas=False)
    assert plain == _loop(est, X, y, list(KFold(4, shuffle=True, random_state=3).split(X)),
                          eval_train=False)
    assert plain == gbtree.cv(est, X, y, folds=KFold(4, shuffle=True, random_state=3),
                              eval_train=False, as_pandas=False)


def test_early_stopping_watches_the_folds_mean_and_ends_at_the_best_round(binary):
    X, y = binary
    est = GBTClassifier(n_estimators=120, learning_rate=0.5, max_depth=4)
    full = gbtree.cv(est, X, y, nfold=3, as_pandas=False)
    stopped = gbtree.cv(est, X, y, nfold=3, early_stopping_rounds=7, as_pandas=False)
    means = np.array(full["test-logloss-mean"])
    best = int(np.argmin(means[:len(stopped["test-logloss-mean"]) + 7]))
    # the first round that is the best of every round until 7 rounds after it
    assert len(stopped["test-logloss-mean"]) == best + 1 < 120
    assert np.all(means[best + 1:best + 8] >= means[best])
    for column, values in stopped.items():
        assert values == full[column][:best + 1]


def test_a_regressor_and_a_dataframe(rng):
    pd = pytest.importorskip("pandas")
    X = rng.normal(size=(300, 3))
    y = X[:, 0] * 2 + rng.normal(size=300)
    est = GBTRegressor(n_estimators=10, max_depth=2)
    got = gbtree.cv(est, X, y, nfold=3, shuffle=False)
    assert isinstance(got, pd.DataFrame) and len(got) == 10
    want = _loop(est, X, y, list(KFold(3).split(X)))
    assert got.to_dict("list") == want


def test_a_ranker_keeps_each_query_in_one_fold(rng):
    qid = np.repeat(np.arange(40), 10)
    X = rng.normal(size=(400, 4))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=400)), 0, 3)
    est = GBTRanker(n_estimators=8, eval_metric="ndcg@5")
    got = gbtree.cv(est, X, y, qid=qid, folds=GroupKFold(4), as_pandas=False)
    splits = list(GroupKFold(4).split(X, y, groups=qid))
    assert got == _loop(est, X, y, splits, qid=qid)
    dealt = gbtree.cv(est, X, y, qid=qid, nfold=4, as_pandas=False)
    assert len(dealt["test-ndcg@5-mean"]) == 8 and "train-ndcg@5-std" in dealt


def test_what_cv_refuses(binary):
    X, y = binary
    est = GBTClassifier(n_estimators=3)
    with pytest.raises(ValueError, match="qid is needed for a GBTRanker, and only for one"):
        gbtree.cv(est, X, y, qid=np.zeros(y.shape[0]))
    with pytest.raises(ValueError, match="qid is needed"):
        gbtree.cv(GBTRanker(n_estimators=3), X, y)
    with pytest.raises(ValueError, match="nfold must be an integer >= 2"):
        gbtree.cv(est, X, y, nfold=1)
    with pytest.raises(ValueError, match="early_stopping_rounds must be None or an integer"):
        gbtree.cv(est, X, y, early_stopping_rounds=0)
    with pytest.raises(ValueError, match="folds holds no"):
        gbtree.cv(est, X, y, folds=[])
