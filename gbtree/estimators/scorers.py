"""scikit-learn scorers of gbtree's ranking metric."""
from ..boosting.metrics import ndcg_at_k
from ..data.validation import _check_number


class _ColumnNDCGScorer:
    """``scorer(ranker, X, y)``: the mean NDCG@k of the queries named by the
    query-id column of a DataFrame X (a ranker fitted with ``qid="column"``)."""

    def __init__(self, k, exp_gain):
        self.k, self.exp_gain = k, exp_gain

    def __call__(self, estimator, X, y_true, sample_weight=None):
        if getattr(estimator, "qid_column_", None) is None or not hasattr(X, "columns"):
            raise ValueError(
                "make_ndcg_scorer: the scored rows need query ids: enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)) and pass qid, or fit "
                "the ranker on a DataFrame with qid='<name of its query-id column>'")
        X, qid = estimator._split_qid_column(X, None, "make_ndcg_scorer")
        return ndcg_at_k(y_true, estimator.predict(X), qid=qid, sample_weight=sample_weight,
                         k=self.k, exp_gain=self.exp_gain)

    def __repr__(self):
        return f"make_ndcg_scorer(k={self.k}, exp_gain={self.exp_gain})"


def make_ndcg_scorer(k=10, exp_gain=True):
    """A scikit-learn scorer of the mean NDCG@k over queries (``scoring=`` in
    ``GridSearchCV``, ``cross_val_score``...).

    It needs the query ids of the scored rows. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``, before this call)
    the scorer requests ``qid`` (and ``group``, ``sample_weight``) already, so
    ``GridSearchCV(..., scoring=make_ndcg_scorer(5)).fit(X, y, groups=qid, qid=qid)``
    routes them. Without routing it reads them from the query-id column of a
    DataFrame X, for a ranker fitted with ``qid="<column name>"``.
    """
    from sklearn import get_config
    from sklearn.metrics import make_scorer

    _check_number("k", k, "int", 1)
    if not get_config().get("enable_metadata_routing", False):
        return _ColumnNDCGScorer(k, exp_gain)
    scorer = make_scorer(ndcg_at_k, greater_is_better=True, k=k, exp_gain=exp_gain)
    return scorer.set_score_request(qid=True, group=True, sample_weight=True)
