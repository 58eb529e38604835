"""gbtree: gradient-boosted trees with Cython/OpenMP histogram kernels and a scikit-learn API."""
try:
    from .kernels._typedefs import NODE_DTYPE as _NODE_DTYPE  # noqa: F401  (is the build there?)
except ImportError as exc:  # pragma: no cover - only in an unbuilt source checkout
    import os as _os

    raise ImportError(
        f"gbtree's compiled extensions are missing from {_os.path.dirname(__file__)}: this is "
        "the unbuilt source folder (Python imports it first when run from the repository "
        "root). Build it in place with `pip install -e .`, or run from another directory "
        "to use the installed gbtree."
    ) from exc

from .data.external import ExternalData
from .io.model_io import load_model
from .explaining.plotting import plot_importance, plot_metric, plot_tree
from .boosting.metrics import ndcg_at_k
from .estimators.scorers import make_ndcg_scorer
from .estimators.cv import cv
from .estimators.onnx_pipelines import register_skl2onnx
from .sklearn import GBTClassifier, GBTRanker, GBTRegressor

__version__ = "0.1.0"
__all__ = ["ExternalData", "GBTClassifier", "GBTRanker", "GBTRegressor", "cv", "load_model",
           "make_ndcg_scorer",
           "ndcg_at_k", "plot_importance", "plot_metric", "plot_tree", "register_skl2onnx",
           "__version__"]
