"""The scikit-learn estimators: their parameters and checks, and their fits in memory, out of core and on Dask."""
