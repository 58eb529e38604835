"""The scikit-learn estimators' public module (``from gbtree.sklearn import
GBTRegressor``) and the import path their pickles name; they are defined in
``gbtree.estimators``."""
from .estimators.sklearn import GBTClassifier, GBTRanker, GBTRegressor

__all__ = ["GBTClassifier", "GBTRanker", "GBTRegressor"]
