"""Training on a Dask cluster: ``DaskGBTRegressor``, ``DaskGBTClassifier`` and
``DaskGBTRanker``, defined in ``gbtree.estimators.dask`` (which tells how the
rows, bins and histograms travel)."""
from .estimators.dask import DaskGBTClassifier, DaskGBTRanker, DaskGBTRegressor

__all__ = ["DaskGBTClassifier", "DaskGBTRanker", "DaskGBTRegressor"]
