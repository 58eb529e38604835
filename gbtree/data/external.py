"""Data larger than memory: ``ExternalData``, a source read in chunks (a callable
returning an iterable of chunks, a list of chunks, Parquet or ``.npz`` files),
each chunk checked as the in-memory ``fit`` checks its arguments. An estimator's
``fit`` on it (``estimators/external_fit.py``) reads the chunks a few times over.
"""
import numbers
import os
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp

from .binning import canonical_csr, check_sparse_structure

__all__ = ["ExternalData"]


class ExternalData:
    """Training data read in chunks, for a fit that does not hold it in memory.

    Parameters
    ----------
    source : callable or list
        A callable that returns a new iterator of chunks each time it is called
        (the fit reads the data three times): each chunk ``(X, y)`` or ``(X, y,
        sample_weight)``, or a dict with the keys ``"X"``, ``"y"`` and optionally
        ``"sample_weight"``, ``"base_margin"`` (the rows' starting raw scores, as
        ``fit``'s ``base_margin``) and ``"qid"`` (a ranker's query ids: sorted over the
        whole data, as XGBoost asks, so that each query's rows come together); X a
        2-D array (NumPy, SciPy sparse: absent entries are 0, or a DataFrame of
        numbers), the others 1-D but a regressor's y, which may be 2-D: several
        targets (squared error) or ``objective="aft"``'s bounds, the same columns
        in every chunk. Or a list of files: ``.npy`` tuples ``(X_path,
        y_path)`` or ``(X_path, y_path, weight_path)`` or dicts of paths with the
        keys above, or Parquet files (``label`` names the label column, ``weight``
        the weight column if any, ``qid`` the query ids; the others are the
        features; needs ``pyarrow``). Or a path: a Parquet file, or a folder of them
        (its ``.parquet`` files in name order); a path or file of the list may be a
        URL that fsspec opens (``s3://``, ``gs://``, ... where fsspec and the
        filesystem's package are installed). Parquet files are read in record
        batches of ``batch_rows`` rows, never whole.
    cache_dir : str or list of str, optional
        Where the fit writes its binned blocks (a new folder inside it); a list
        (one folder per disk, say) spreads the blocks over them in turn. Default:
        the system's temporary folder.
    keep_cache : bool, default=False
        Leave the blocks on disk after the fit (``cache_paths_`` of the data says
        where); they are never read by another fit.
    block_rows : int, default=1_000_000
        Rows per block on disk: memory holds at most two blocks at a time
        (about ``2 * block_rows * (2 * n_features + 16)`` bytes; for sparse chunks,
        about 7 bytes per stored entry instead of ``2 * n_features`` per row).
    label, weight, qid : str, optional
        The label, weight and query-id columns of Parquet files.
    batch_rows : int, default=65_536
        Rows per chunk read from a Parquet file.
    """

    def __init__(self, source, cache_dir=None, keep_cache=False, block_rows=1_000_000,
                 label=None, weight=None, qid=None, batch_rows=65_536):
        if isinstance(source, (str, os.PathLike)):
            source = [source]
        if not (callable(source) or isinstance(source, (list, tuple))):
            raise TypeError(f"source must be a callable returning an iterator of chunks, a "
                            f"list of files or a path; got {type(source).__name__}")
        if (isinstance(batch_rows, (bool, np.bool_)) or not isinstance(batch_rows, numbers.Integral)
                or batch_rows < 1):
            raise ValueError(f"batch_rows must be an integer >= 1, got {batch_rows!r}")
        if isinstance(source, (list, tuple)) and not source:
            raise ValueError("source is an empty list of files")
        if (isinstance(block_rows, (bool, np.bool_)) or not isinstance(block_rows, numbers.Integral)
                or block_rows < 1):
            raise ValueError(f"block_rows must be an integer >= 1, got {block_rows!r}")
        if isinstance(cache_dir, (list, tuple)) and not cache_dir:
            raise ValueError("cache_dir is an empty list of folders")
        self.source = source
        self.cache_dir = cache_dir
        self.keep_cache = bool(keep_cache)
        self.block_rows = int(block_rows)
        self.label = label
        self.weight = weight
        self.qid = qid
        self.batch_rows = int(batch_rows)
        self.cache_paths_ = None

    # -- reading
    def chunks(self, encode=None):
        """The chunks as ``(X, y, w, qid, margin, names)``: X a C-ordered float32 or float64
        array (or a canonical CSR matrix of them; ``encode(X, i)`` first makes chunk
        i's X numbers, if given), y and w float64 (w None when the data have no
        weights, qid when they have no query ids, margin when they have no base
        margins: else float64 (rows, outputs)), names the names of X's columns (a
        DataFrame's, a Parquet file's features; None: an array), which every chunk
        that has them shares with the first; errors name the chunk."""
        first = None
        for i, (chunk, names) in enumerate(self._items()):
            if i == 0:
                first = names
            elif names != first and names is not None:
                raise ValueError(f"chunk {i}: X has the columns {names}, the first chunk "
                                 f"{first}: the columns are read by position, so every "
                                 f"chunk must have the first chunk's columns in its order")
            yield _checked_chunk(chunk, i, encode) + (names,)

    def features(self):
        """Each chunk's X as the source gives it."""
        for chunk, _ in self._items():
            yield _features_of(chunk)

    def _items(self):
        """The chunks as the source gives them, each with the names of its columns
        (None: an array)."""
        if callable(self.source):
            it = self.source()
            try:
                it = iter(it)
            except TypeError:
                raise TypeError(f"source() must return an iterator of chunks, got "
                                f"{type(it).__name__}") from None
            for chunk in it:
                yield chunk, _column_names(_features_of(chunk))
        else:
            for item in self.source:
                if isinstance(item, (dict, tuple, list)):
                    yield _read_npy(item), None
                    continue
                paths = _parquet_paths(os.fspath(item))
                if not paths:
                    raise ValueError(f"{os.fspath(item)}: a folder without .parquet files")
                for path in paths:
                    yield from self._parquet_chunks(path)

    def _parquet_chunks(self, path):
        """A Parquet file's record batches as chunks, each with its feature names."""
        if self.label is None:
            raise ValueError("reading Parquet files needs label=, the name of the label column")
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ImportError("reading Parquet files needs pyarrow: pip install pyarrow") from exc
        with (_fsspec(path).open(path, "rb") if _remote(path) else nullcontext(path)) as f:
            # (a local file by its path: Arrow's own reader; pre_buffer would cache every
            # row group read so far, the whole file by the end)
            pf = pq.ParquetFile(f, pre_buffer=False)
            names = pf.schema_arrow.names
            for col in (self.label, self.weight, self.qid):
                if col is not None and col not in names:
                    raise ValueError(f"{path}: no column {col!r} (columns: {names})")
            features = [c for c in names if c not in (self.label, self.weight, self.qid)]
            # float32 columns stay float32 (half the memory); any other kind is float64
            kinds = {str(pf.schema_arrow.field(c).type) for c in features}
            dtype = np.float32 if kinds == {"float"} else np.float64
            for batch in pf.iter_batches(batch_size=self.batch_rows):
                def column(c):
                    return batch.column(c).to_numpy(zero_copy_only=False)
                X = np.empty((batch.num_rows, len(features)), dtype=dtype)
                for j, c in enumerate(features):
                    X[:, j] = column(c)
                w, q = (None if c is None else column(c) for c in (self.weight, self.qid))
                yield dict(X=X, y=column(self.label), sample_weight=w, qid=q), features


def _read_npy(item):
    """A chunk of ``.npy`` files: a dict of paths or an (X, y[, weight]) tuple."""
    if isinstance(item, dict):
        return {k: None if v is None else np.load(v, allow_pickle=False)
                for k, v in item.items()}
    if not 2 <= len(item) <= 3:
        raise ValueError(f"a .npy item of source must be (X_path, y_path) or (X_path, "
                         f"y_path, weight_path), got {item!r}")
    return tuple(np.load(path, allow_pickle=False) for path in item)


def _remote(path):
    return "://" in path


def _fsspec(path):
    try:
        import fsspec
    except ImportError as exc:
        raise ImportError(f"{path}: a URL needs fsspec (and the filesystem's package): "
                          f"pip install fsspec") from exc
    return fsspec


def _parquet_paths(path):
    """The Parquet files of ``path``: itself, or a folder's ``.parquet`` files in name
    order (local, or a URL fsspec opens)."""
    if _remote(path):
        fs, inner = _fsspec(path).core.url_to_fs(path)
        if not fs.isdir(inner):
            files = [path]
        else:
            files = [fs.unstrip_protocol(p) for p in sorted(fs.ls(inner, detail=False))
                     if p.endswith(".parquet")]
    elif os.path.isdir(path):
        files = [os.path.join(path, f) for f in sorted(os.listdir(path))
                 if f.endswith(".parquet")]
    else:
        files = [path]
    for f in files:
        if not f.endswith(".parquet"):
            raise ValueError(f"source files must be .npy tuples or .parquet files, got {f!r}")
    return files


_CHUNK_KEYS = ("X", "y", "sample_weight", "qid", "base_margin")


def _features_of(chunk):
    """A chunk's X (None when it is no chunk: ``_checked_chunk`` says so)."""
    if isinstance(chunk, dict):
        return chunk.get("X")
    return chunk[0] if isinstance(chunk, (tuple, list)) and chunk else None


def _column_names(X):
    """A DataFrame's column names as a list (None for anything else)."""
    columns = getattr(X, "columns", None)
    return None if columns is None or sp.issparse(X) else list(columns)


def _checked_chunk(chunk, i, encode=None):
    if isinstance(chunk, dict):
        unknown = sorted(set(chunk) - set(_CHUNK_KEYS), key=str)
        if unknown or "X" not in chunk or "y" not in chunk:
            raise ValueError(f"chunk {i}: a dict chunk has the keys 'X', 'y' and optionally "
                             f"'sample_weight', 'qid' and 'base_margin', got "
                             f"{sorted(chunk, key=str)}")
        X, y, w, q, m = (chunk.get(k) for k in _CHUNK_KEYS)
    elif isinstance(chunk, (tuple, list)) and len(chunk) in (2, 3):
        X, y = chunk[0], chunk[1]
        w, q, m = (chunk[2] if len(chunk) == 3 else None), None, None
    else:
        raise ValueError(f"chunk {i}: a chunk must be (X, y), (X, y, sample_weight) or a "
                         f"dict, got {type(chunk).__name__}")
    if encode is not None:
        X = encode(X, i)
    if sp.issparse(X):
        check_sparse_structure(X, f"chunk {i}: X")   # (the kernels trust its indices)
    else:
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"chunk {i}: X must be 2-D, got {X.ndim} dimensions")
    if X.dtype not in (np.float32, np.float64):
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"chunk {i}: X must hold numbers, got dtype {X.dtype}") from None
    X = canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:   # (a column vector: one target)
        y = y[:, 0]
    if y.ndim not in (1, 2):
        raise ValueError(f"chunk {i}: y must be 1-D, or 2-D for several targets; got "
                         f"{y.ndim} dimensions")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"chunk {i}: y has {y.shape[0]} values for {X.shape[0]} rows")
    if w is not None:
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape[0] != X.shape[0]:
            raise ValueError(f"chunk {i}: sample_weight has {w.shape[0]} values for "
                             f"{X.shape[0]} rows")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"chunk {i}: sample_weight must be finite and >= 0")
    if q is not None:
        q = np.asarray(q).ravel()
        if q.shape[0] != X.shape[0]:
            raise ValueError(f"chunk {i}: qid has {q.shape[0]} values for {X.shape[0]} rows")
        if q.dtype.kind not in "iuf" or (q.dtype.kind == "f" and not np.all(np.isfinite(q))):
            raise ValueError(f"chunk {i}: qid must hold finite numbers")
    if m is not None:
        try:
            m = np.asarray(m, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"chunk {i}: base_margin must hold numbers") from None
        m = m.reshape(-1, 1) if m.ndim == 1 else m
        if m.ndim != 2 or m.shape[0] != X.shape[0]:
            raise ValueError(f"chunk {i}: base_margin must have one row per row of X, got "
                             f"shape {m.shape} for {X.shape[0]} rows")
    return X, y, w, q, m
