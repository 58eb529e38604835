"""gbtree's estimators in skl2onnx's registry: pipelines that hold them convert to
ONNX with ``skl2onnx.to_onnx`` (the graph is ``io/export``'s)."""
from ..io.export import skl2onnx_convert
from .sklearn import GBTClassifier, GBTRanker, GBTRegressor


def register_skl2onnx():
    """Register the estimators with skl2onnx (their converter, shape calculator and
    the default parsers), so that ``skl2onnx.to_onnx`` converts pipelines that hold
    them. A classifier takes skl2onnx's ``zipmap`` and ``nocl`` options."""
    try:
        from skl2onnx import update_registered_converter
        from skl2onnx.common.shape_calculator import (
            calculate_linear_classifier_output_shapes, calculate_linear_regressor_output_shapes)
    except ImportError as exc:
        raise ImportError("register_skl2onnx needs skl2onnx: pip install skl2onnx") from exc
    for cls, shapes, options in (
            (GBTRegressor, calculate_linear_regressor_output_shapes, None),
            (GBTRanker, calculate_linear_regressor_output_shapes, None),
            (GBTClassifier, calculate_linear_classifier_output_shapes,
             {"zipmap": [True, False, "columns"], "nocl": [True, False]})):
        update_registered_converter(cls, f"Gbtree{cls.__name__}", shapes, skl2onnx_convert,
                                    options=options)
