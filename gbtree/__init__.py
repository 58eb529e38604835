"""gbtree: gradient-boosted trees with Cython/OpenMP histogram kernels and a scikit-learn API."""
from .sklearn import GBTClassifier, GBTRegressor

__version__ = "0.1.0"
__all__ = ["GBTClassifier", "GBTRegressor", "__version__"]
