"""What a fitted estimator gives of its trees: importances by feature name, the leaf of
each row, the node table, text dumps, the dictionary ``shap`` reads, and its model
file and exports. Thin wrappers: tree.py walks the trees, explain.py makes the SHAP
dictionary, model_io.py and export.py write the files."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from sklearn.utils.validation import check_is_fitted

from . import explain
from ..io import model_io
from ..kernels._threads import call_threads
from ..data.validation import ArrayLike

if TYPE_CHECKING:
    import numpy as np
    import onnx
    import pandas as pd
    import treelite
    from typing_extensions import Self


class ModelAccess:
    """The inspection and model-file methods of the estimators (mixed into them)."""

    # what the methods read of the estimator they are mixed into
    _ensemble: Any
    _absent: Any
    _output_names: Any
    _validate_predict_data: Any
    n_jobs: Any

    # ------------------------------------------------------------------ inspecting the model
    # Thin wrappers over TreeEnsemble (tree.py), which walks the trees.
    def _inspect_names(self):
        """Names of the features the trees split on: X's (None: "f0", "f1", ...), and
        any indicator columns' ("name==value")."""
        check_is_fitted(self, "_ensemble")
        names = getattr(self, "feature_names_in_", None)
        encoder = getattr(self, "_cat_encoder", None)
        if encoder is not None and encoder.indicators.shape[0]:
            return encoder.feature_names(None if names is None else list(names))
        return names

    def get_score(self, importance_type: str = "weight") -> dict[str, float]:
        """Importance per feature, as XGBoost's ``Booster.get_score``.

        Parameters
        ----------
        importance_type : {"weight", "gain", "cover", "total_gain", "total_cover"}, \
                default="weight"
            ``weight``: number of splits on the feature; ``total_gain``: sum of
            their gains; ``gain``: average gain; ``total_cover``: sum of the
            hessian sums of the nodes they split; ``cover``: average of those.

        Returns
        -------
        dict
            ``{feature name: importance}``, names from ``feature_names_in_`` (fit
            on a DataFrame) or else ``"f0"``, ``"f1"``, ...; features no split
            uses are left out. Not normalised.
        """
        names = self._inspect_names()   # checks that the model is fitted
        return self._ensemble.get_score(importance_type, names)

    def apply(self, X: ArrayLike) -> np.ndarray:
        """Leaf reached by each row in each tree.

        Returns
        -------
        ndarray of shape (n_samples, ``n_trees_``), int32
            Column t is the id, within tree t, of the leaf the row reaches (the
            ``node`` of ``trees_to_dataframe()``, the number before ``:`` in
            ``get_dump()``). Trees are in fitting order: for K >= 3 classes,
            tree ``t`` belongs to class ``classes_[t % K]`` and to round
            ``t // (K * num_parallel_tree)``.
        """
        X = self._validate_predict_data(X)
        n_threads = call_threads(self.n_jobs, X.shape[0], self._ensemble.n_trees)
        return self._ensemble.apply(X, n_threads, absent=self._absent())

    def to_shap(self, iteration_range=None):
        """The trees as the dictionary ``shap.TreeExplainer`` accepts:
        ``shap.TreeExplainer(est.to_shap())``; with categorical columns, explain
        ``gbtree.explaining.explain.model_input(est, X)``. See ``docs/explain.md``.

        ``predict`` explains too: ``pred_contribs=True`` gives exact SHAP values
        (path-dependent TreeSHAP) of the raw score, shape (n_samples,
        n_features + 1), or (n_samples, n_classes, n_features + 1) for 3+
        classes; the last column is the bias (``base_score_`` plus the trees'
        expected values) and each row sums to its raw score. With
        ``approx_contribs=True``: Saabas' path attributions instead.
        ``pred_interactions=True``: SHAP interaction values, shape (n_samples,
        [n_classes,] n_features + 1, n_features + 1), whose rows sum to the SHAP
        values. A categorical column has one value; missing values follow each
        split's default direction, as in ``predict``.
        """
        return explain.to_shap(self, iteration_range)

    def trees_to_dataframe(self) -> pd.DataFrame:
        """One row per node of every tree, as a pandas DataFrame (needs pandas).

        Columns: ``tree``, ``node`` (id within the tree, as in ``apply``),
        ``depth``, ``feature`` (name; missing for leaves), ``threshold`` (rows
        with ``x <= threshold`` go to ``left``), ``missing`` (``"left"`` or
        ``"right"``: where a missing value goes), ``left``, ``right`` (child
        ids, -1 for leaves), ``gain`` (0 for leaves), ``cover`` (hessian sum of
        the training rows), ``count`` (training rows), ``value`` (learning rate
        x node weight: the leaf value for leaves), ``is_leaf``, and for K >= 3
        classes ``class`` (the label of the class the tree scores).
        """
        names = self._inspect_names()
        return self._ensemble.to_dataframe(names, self._output_names())

    def get_dump(self, with_stats: bool = True) -> list[str]:
        """The trees as text, one string per tree, in XGBoost's text-dump format::

            0:[f2<=0.5] yes=1,no=2,missing=1 gain=25.6 cover=8
            \\t1:leaf=-0.5 cover=4

        One line per node in pre-order, indented by depth; ``yes`` is the child
        of ``x <= threshold``. ``with_stats=False`` leaves out gain and cover.
        """
        names = self._inspect_names()   # checks that the model is fitted
        return self._ensemble.dump(names, with_stats)

    def dump_model(self, fout: str | os.PathLike | None = None,
                   with_stats: bool = True) -> str:
        """All trees as one text (``booster[t]:`` before each tree's dump); also
        written to the path ``fout`` when given."""
        text = "".join(f"booster[{t}]:\n{tree}" for t, tree in
                       enumerate(self.get_dump(with_stats)))
        if fout is not None:
            if not isinstance(fout, (str, os.PathLike)):
                # (an int is a file descriptor to open(), which closes it afterwards)
                raise TypeError(f"fout must be a path (str or os.PathLike), got "
                                f"{type(fout).__name__}")
            with open(fout, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    # ------------------------------------------------------------------ model files
    # The format and its checks are in model_io.py (docs/model-format.md).
    def save_model(self, fname: str | os.PathLike | BinaryIO | TextIO,
                   format: str | None = None) -> None:
        """Save the fitted model to ``fname``, a path or a file object: ``format``
        "json" (exact, diffable) or "binary" (compact); by default JSON for a path
        ending in ``.json``, else binary. Both load back exactly (``load_model``)."""
        model_io.save_model(self, fname, format)

    def save_raw(self, format: str = "binary") -> bytes:
        """The model file's bytes (``format`` "binary" or "json"), without a file:
        ``gbtree.load_model`` takes them back."""
        return model_io.model_bytes(self, format)

    def load_model(self, fname: str | os.PathLike | BinaryIO | bytes) -> Self:
        """Replace this estimator by the model saved in ``fname`` (a path, a file
        object or the file's bytes; of this class); returns self.
        ``gbtree.load_model(fname)`` returns a new estimator."""
        return model_io.load_model(fname, into=self)

    def to_onnx(self) -> onnx.ModelProto:
        """The model as an ``onnx.ModelProto`` on the ONNX-ML tree ensemble operators
        (needs ``gbtree[onnx]``): input ``X`` (float32, n_features columns, NaN for
        missing), outputs ``variable`` (regressors, rankers) or ``label`` and
        ``probabilities`` (classifiers). docs/model-format.md has an example."""
        from ..io.export import to_onnx
        return to_onnx(self)

    def to_treelite(self) -> treelite.Model:
        """The model as a ``treelite.Model`` (needs ``gbtree[treelite]``)."""
        from ..io.export import to_treelite
        return to_treelite(self)
