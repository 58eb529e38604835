"""``gbtree.cv``: k-fold cross-validation of an estimator's rounds, with early stopping
on the folds' mean metric (what ``xgb.cv``, ``lgb.cv`` and ``catboost.cv`` give)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import _safe_indexing

from ..boosting.metrics import eval_metrics
from ..data.validation import ArrayLike


def cv(estimator: Any, X: ArrayLike, y: ArrayLike, *, nfold: int = 5, folds: Any = None,
       stratified: bool | None = None, qid: ArrayLike = None, sample_weight: ArrayLike = None,
       early_stopping_rounds: int | None = None, shuffle: bool = True, seed: int = 0,
       eval_train: bool = True, as_pandas: bool = True) -> Any:
    """Cross-validate ``estimator``'s rounds: the mean and standard deviation over the
    folds of each ``eval_metric`` after every round.

    Parameters
    ----------
    estimator : GBTRegressor, GBTClassifier or GBTRanker
        Its parameters (``n_estimators`` the most rounds, ``eval_metric`` the
        metrics); each fold fits a clone. Its own ``early_stopping_rounds`` and
        ``validation_fraction`` are not used.
    X, y : the data (any input ``fit`` takes but ``ExternalData``).
    nfold : int, default=5
        The number of folds, when ``folds`` is None.
    folds : scikit-learn splitter or iterable of (train, test) row indices, default=None
        The folds (a splitter is given a ranker's ``qid`` as its groups); None: ``StratifiedKFold`` for classifiers (unless
        ``stratified=False``), ``KFold`` for regressors, and for rankers the
        queries shuffled and dealt into ``nfold`` parts (a query's rows stay together).
    stratified : bool, default=None
        Stratify a classifier's folds by class (None: True).
    qid : array-like, default=None
        A ranker's query ids (rows of a query together, as ``fit`` takes them).
    sample_weight : array-like, default=None
        Row weights, for the fits and the metrics.
    early_stopping_rounds : int, default=None
        Stop when the folds' mean of the last metric on their held-out rows has not
        improved for this many rounds; the table then ends at the best round.
    shuffle, seed : the rows are shuffled with ``seed`` before they are dealt into
        folds (``folds=None``).
    eval_train : bool, default=True
        Also report the metrics on each fold's training rows.
    as_pandas : bool, default=True
        Return a pandas DataFrame when pandas is installed, else a dict of lists.

    Returns
    -------
    DataFrame or dict
        One row per round, columns ``test-{metric}-mean``, ``test-{metric}-std``
        (and ``train-...`` with ``eval_train``), as ``xgb.cv`` names them: the
        standard deviation over the folds (``ddof=0``). With early stopping its
        length is the best number of rounds.
    """
    from .sklearn import GBTRanker
    ranker = isinstance(estimator, GBTRanker)
    if ranker == (qid is None):
        raise ValueError("qid is needed for a GBTRanker, and only for one")
    if early_stopping_rounds is not None and (
            isinstance(early_stopping_rounds, bool)
            or not isinstance(early_stopping_rounds, numbers.Integral)
            or early_stopping_rounds < 1):
        raise ValueError(f"early_stopping_rounds must be None or an integer >= 1, got "
                         f"{early_stopping_rounds!r}")
    y = np.asarray(y)
    qid = None if qid is None else np.asarray(qid)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    splits = _folds(estimator, X, y, qid, nfold, folds, stratified, shuffle, seed)
    n_rounds = int(estimator.get_params()["n_estimators"])
    models = [clone(estimator).set_params(warm_start=True, early_stopping_rounds=None,
                                          validation_fraction=0.0) for _ in splits]
    # the folds' fits go on together, early_stopping_rounds rounds at a time (a warm
    # start continues a fit exactly): the rounds past the stop are dropped
    sets = ["train", "test"] if eval_train else ["test"]   # validation_0, validation_1
    done, stop = 0, None
    while done < n_rounds and stop is None:
        done = min(n_rounds, done + (early_stopping_rounds or n_rounds))
        for model, (train, test) in zip(models, splits):
            model.set_params(n_estimators=done)
            _fit_fold(model, X, y, qid, w, [train, test] if eval_train else [test], train)
        results = [list(m.evals_result_.values()) for m in models]
        names = list(results[0][-1])
        if early_stopping_rounds is not None:
            last = eval_metrics(estimator.eval_metric, models[0]._objective)[-1]
            means = np.mean([r[-1][names[-1]] for r in results], axis=0)
            stop = _stop(means, early_stopping_rounds, last.greater_is_better)
    table = {}
    for i, data in enumerate(sets):
        for name in names:
            values = np.array([r[i][name][:stop] for r in results])
            table[f"{data}-{name}-mean"] = values.mean(axis=0).tolist()
            table[f"{data}-{name}-std"] = values.std(axis=0).tolist()
    if as_pandas:
        try:
            import pandas as pd
        except ImportError:
            return table
        return pd.DataFrame(table)
    return table


def _fit_fold(model, X, y, qid, w, parts, train):
    """Fit ``model`` on the rows ``train``, every metric after each round on each of
    the row sets ``parts``."""
    eval_set = [(_safe_indexing(X, rows), y[rows]) for rows in parts]
    kw = {}
    if w is not None:
        kw.update(sample_weight=w[train], sample_weight_eval_set=[w[rows] for rows in parts])
    if qid is not None:
        kw.update(qid=qid[train], eval_qid=[qid[rows] for rows in parts])
    model.fit(_safe_indexing(X, train), y[train], eval_set=eval_set, **kw)


def _stop(means, rounds, greater_is_better):
    """The number of rounds to keep: the best round's, when early stopping (the
    estimator's rule: the first best, no strict improvement for ``rounds`` rounds)
    has stopped by the last of ``means``; else None."""
    if np.isnan(means).any():
        raise ValueError("early stopping: the folds' mean metric is NaN in a round (is it "
                         "defined on every fold? an AUC needs both classes)")
    sign = 1.0 if greater_is_better else -1.0
    best = 0
    for r in range(means.shape[0]):
        if sign * (means[r] - means[best]) > 0:
            best = r
        if r - best >= rounds:
            return best + 1
    return None


def _folds(estimator, X, y, qid, nfold, folds, stratified, shuffle, seed):
    """The (train, test) row indices of each fold."""
    n = y.shape[0]
    if folds is not None:
        splits = list(folds if not hasattr(folds, "split") else
                      folds.split(X, y) if qid is None else folds.split(X, y, groups=qid))
        if not splits:
            raise ValueError("folds holds no (train, test) pair")
        return [(np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp))
                for a, b in splits]
    if isinstance(nfold, bool) or not isinstance(nfold, numbers.Integral) or nfold < 2:
        raise ValueError(f"nfold must be an integer >= 2, got {nfold!r}")
    random_state = seed if shuffle else None
    if qid is not None:   # whole queries, shuffled and dealt into nfold parts
        queries = np.unique(qid)
        if queries.shape[0] < nfold:
            raise ValueError(f"nfold={nfold} folds need at least as many queries, got "
                             f"{queries.shape[0]}")
        if shuffle:
            queries = np.random.RandomState(seed).permutation(queries)
        part = dict(zip(queries.tolist(), np.arange(queries.shape[0]) % nfold))
        of_row = np.array([part[q] for q in qid.tolist()])
        return [(np.flatnonzero(of_row != k), np.flatnonzero(of_row == k))
                for k in range(nfold)]
    if (stratified is None or stratified) and is_classifier(estimator):
        splitter = StratifiedKFold(nfold, shuffle=shuffle, random_state=random_state)
    else:
        splitter = KFold(nfold, shuffle=shuffle, random_state=random_state)
    return list(splitter.split(np.zeros((n, 1)), y))
