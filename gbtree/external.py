"""Training on data larger than memory: ``ExternalData``.

``GBTRegressor().fit(ExternalData(source))`` (and ``GBTClassifier``,
``GBTRanker``) reads the data in chunks, three times over:

1. a streaming pass for the bin edges: each column's finite values go into a
   weighted quantile sketch (``sketch.Sketch``, the XGBoost paper's mergeable
   summaries, error ``1 / (SKETCH_BINS * max_bin)``), from which the edges are
   cut as ``BinMapper.fit`` cuts them (exact when a column has at most
   ``2 * SKETCH_BINS * max_bin`` distinct values); the labels' sums (or classes)
   and the row count come too, and a ranker's query ids are checked to be sorted;
2. a pass that bins the chunks and writes them, in blocks of ``block_rows`` rows
   (uint8 bins by rows and by columns, labels, weights), as raw arrays in a
   cache folder of its own; sparse chunks (SciPy, when the first chunk is) are
   written as sparse blocks: each row's offset into the stored entries, the
   entries, and the copies by columns the partition reads (``SparseBinned``),
   so a block's size follows its stored entries, not its rows times columns;
3. boosting over the blocks (``gbtree.levelwise``): trees grown a level (or, for
   lossguide trees, a split) at a time, each reading the blocks where the level's
   nodes have rows once from disk (mapped, not copied), the next block read on a
   thread while the current one is worked on. In memory stay, per row, the
   raw scores and gradients (16 bytes for one output) and, while a tree grows,
   the row's index in its block (4 bytes); of the blocks, the one worked on and
   the one being read.

The cache folder is new for every fit (under ``cache_dir``, or each of its
folders in turn, or the system's temporary folder) and is removed when the fit
ends, whether it succeeds or not, unless ``keep_cache=True``; no fit ever reads
a cache it did not write.
"""
import concurrent.futures
import errno
import functools
import mmap
import numbers
import os
import shutil
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from ._binned_matrix import columns_of
from ._threads import effective_n_threads
from .binning import BinMapper, SparseBinned, canonical_csr, check_sparse_structure
from .categorical import frame_of_values, resolve_columns
from .grower_params import GrowerParams
from .queries import _check_group_weights
from .leaf_quantiles import SELECTED
from .levelwise import RowShard, boost
from .levelwise_fit import (CATEGORICAL, check_params, continued, fitted, flat_cuts,
                            make_objective, per_feature, prepare, summary_cuts)
from .sketch import Sketch
from .validation import check_base_margin, check_labels, class_factors

__all__ = ["ExternalData"]

# the sketch's error bound, in value bins: eps = 1 / (SKETCH_BINS * max_bin)
SKETCH_BINS = 2


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
        features; needs ``pyarrow``).
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
    """

    def __init__(self, source, cache_dir=None, keep_cache=False, block_rows=1_000_000,
                 label=None, weight=None, qid=None):
        if not (callable(source) or isinstance(source, (list, tuple))):
            raise TypeError(f"source must be a callable returning an iterator of chunks, or a "
                            f"list of files; got {type(source).__name__}")
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
        self.cache_paths_ = None

    def _cache_dirs(self):
        return list(self.cache_dir) if isinstance(self.cache_dir, (list, tuple)) else [
            self.cache_dir]

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
                yield self._read_file(item), self._file_features(item)

    def _file_features(self, item):
        """The feature columns of a Parquet file (None for .npy files)."""
        if isinstance(item, (dict, tuple, list)) or not os.fspath(item).endswith(".parquet"):
            return None
        import pyarrow.parquet as pq
        names = pq.read_schema(os.fspath(item)).names
        return [c for c in names if c not in (self.label, self.weight, self.qid)]

    def _read_file(self, item):
        if isinstance(item, dict):
            return {k: None if v is None else np.load(v, allow_pickle=False)
                    for k, v in item.items()}
        if isinstance(item, (tuple, list)):
            if not 2 <= len(item) <= 3:
                raise ValueError(f"a .npy item of source must be (X_path, y_path) or (X_path, "
                                 f"y_path, weight_path), got {item!r}")
            return tuple(np.load(path, allow_pickle=False) for path in item)
        path = os.fspath(item)
        if not path.endswith(".parquet"):
            raise ValueError(f"source files must be .npy tuples or .parquet files, got {path!r}")
        if self.label is None:
            raise ValueError("reading Parquet files needs label=, the name of the label column")
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ImportError("reading Parquet files needs pyarrow: pip install pyarrow") from exc
        table = pq.read_table(path)
        names = table.column_names
        for col in (self.label, self.weight, self.qid):
            if col is not None and col not in names:
                raise ValueError(f"{path}: no column {col!r} (columns: {names})")
        features = [c for c in names if c not in (self.label, self.weight, self.qid)]
        X = np.column_stack([table.column(c).to_numpy(zero_copy_only=False).astype(np.float64)
                             for c in features]) if features else np.empty((table.num_rows, 0))
        y = table.column(self.label).to_numpy(zero_copy_only=False)
        w, q = (None if col is None else table.column(col).to_numpy(zero_copy_only=False)
                for col in (self.weight, self.qid))
        return dict(X=X, y=y, sample_weight=w, qid=q)


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


class _DiskBlock:
    """A block of binned rows written to the cache as raw arrays: ``PREFIX.X`` (the
    bins, row by row, for the histograms), ``.C`` (the same bins column by column,
    for the partition), ``.y``, ``.w`` and the base margins ``.m`` (float64), and a
    ranker's ``.g`` (int64: the offsets of the block's queries, then their numbers
    among all queries).
    A sparse block (``sparse``: its ``SparseBinned`` without its arrays) has instead
    of ``.X`` and ``.C`` the arrays of ``_SPARSE_PARTS``: each row's offset into the
    entries, the entries, and the column-wise copies.
    Loading maps the bins (the operating system reads them, or finds them in its
    page cache: no copy); the maps go when the block is dropped."""

    def __init__(self, prefix, n_rows, n_features, weighted, n_groups=None, sparse=None,
                 y_width=0, margin_width=0):
        self.prefix, self.n_rows, self.n_features = prefix, n_rows, n_features
        self.weighted, self.n_groups = weighted, n_groups
        self.sparse, self.y_width, self.margin_width = sparse, y_width, margin_width

    def margin(self):
        """The block's base margins (rows, outputs), or None."""
        k = self.margin_width
        return _read(self.prefix + ".m", self.n_rows * k).reshape(-1, k) if k else None

    def load(self):
        return _LoadedBlock(self)


class _LoadedBlock:
    """A disk block's bins, mapped; its labels, weights and queries read when first
    asked for (the levels of a tree do not need them)."""

    def __init__(self, block):
        n, F = block.n_rows, block.n_features
        self.block, self.n_rows = block, n
        if block.sparse is not None:
            self.Xb = self.columns = _read_sparse(block.prefix, block.sparse)
            return
        self.Xb = _mapped(block.prefix + ".X", n * F).reshape(n, F)
        self.columns = _mapped(block.prefix + ".C", n * F).reshape(F, n)

    @functools.cached_property
    def y(self):
        width = self.block.y_width
        y = _read(self.block.prefix + ".y", self.n_rows * max(width, 1))
        return y.reshape(self.n_rows, width) if width else y

    @functools.cached_property
    def w(self):
        return _read(self.block.prefix + ".w", self.n_rows) if self.block.weighted else None

    @functools.cached_property
    def groups(self):
        k = self.block.n_groups
        if k is None:
            return None
        g = _read(self.block.prefix + ".g", 2 * k + 1, np.int64)
        return g[:k + 1], g[k + 1:]


# the arrays of a sparse block: (file suffix, attribute of SparseBinned)
_SPARSE_PARTS = ((".i", "indptr"), (".e", "entries"), (".cp", "col_ptr"), (".cr", "col_rows"),
                 (".cb", "col_bins"), (".di", "dense_index"), (".dc", "dense_cols"))


def _write_sparse(prefix, Xb):
    """Write a ``SparseBinned``'s arrays; returns what ``_read_sparse`` needs besides
    them (the object with empty arrays, their shapes and dtypes)."""
    shapes = {}
    for suffix, name in _SPARSE_PARTS:
        a = getattr(Xb, name)
        if a is not None:
            _write(prefix + suffix, a)
            shapes[name] = (a.shape, a.dtype)
    return dict(shapes=shapes, default_bin=Xb.default_bin, shape=Xb.shape,
                bin_offsets=Xb.bin_offsets)


def _read_sparse(prefix, info):
    """A sparse block's ``SparseBinned``, its arrays mapped (``_write_sparse``)."""
    arrays = {}
    for suffix, name in _SPARSE_PARTS:
        if name not in info["shapes"]:
            arrays[name] = None
            continue
        shape, dtype = info["shapes"][name]
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        arrays[name] = _mapped(prefix + suffix, size).view(dtype).reshape(shape)
    return SparseBinned(arrays["indptr"], arrays["entries"], default_bin=info["default_bin"],
                        shape=info["shape"], bin_offsets=info["bin_offsets"],
                        columns=tuple(arrays[name] for name in
                                      ("col_ptr", "col_rows", "col_bins", "dense_index",
                                       "dense_cols")))


def _mapped(path, size):
    """The bytes of a block's file, mapped read-only; the system is asked to read them
    ahead (a cold page cache is read while the trainer works on the block before)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size != size:
            raise OSError(errno.EIO, f"gbtree: the out-of-core block {path} is not {size} "
                                     f"bytes: the cache was changed during the fit")
        if size == 0:
            return np.empty(0, dtype=np.uint8)
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mm, "madvise") and hasattr(mmap, "MADV_WILLNEED"):
        mm.madvise(mmap.MADV_WILLNEED)
    return np.frombuffer(mm, dtype=np.uint8)


def _read(path, n, dtype=np.float64):
    out = np.fromfile(path, dtype=dtype)
    if out.shape[0] != n:
        raise OSError(errno.EIO, f"gbtree: the out-of-core block {path} holds {out.shape[0]} "
                                 f"values, expected {n}: the cache was changed during the fit")
    return out


def _write(path, array):
    with open(path, "wb") as f:
        f.write(memoryview(np.ascontiguousarray(array).reshape(-1)).cast("B"))


class _BlockWriter:
    """Gathers binned chunks into blocks of ``block_rows`` rows and writes them; a
    ranker's blocks end where a query does (a block holds whole queries)."""

    def __init__(self, folders, block_rows, n_features, weighted, y_width, n_threads):
        self.folders, self.block_rows, self.weighted = folders, block_rows, weighted
        self.y_width = y_width
        self.n_features, self.n_threads = n_features, n_threads
        self.pending, self.pending_rows = [], 0
        self.blocks = []
        self.n_groups = 0   # a ranker's queries written so far

    def add(self, Xb, y, w, q, m):
        self.pending.append((Xb, y, w, q, m))
        self.pending_rows += y.shape[0]
        while self.pending_rows >= self.block_rows:
            n = self._cut()
            if n is None:   # (the last query may go on in the next chunk)
                break
            self._write(n)

    def close(self):
        if self.pending_rows:
            self._write(self.pending_rows)
        return self.blocks

    def _cut(self):
        """Rows of the next block: ``block_rows``, or up to the end of the query that
        row ``block_rows`` is in (None: it has not ended yet)."""
        if self.pending[0][3] is None:
            return self.block_rows
        q = np.concatenate([p[3] for p in self.pending])
        ends = np.flatnonzero(q[self.block_rows:] != q[self.block_rows - 1])
        return self.block_rows + int(ends[0]) if ends.size else None

    def _write(self, n):
        sparse = isinstance(self.pending[0][0], SparseBinned)
        Xb = (SparseBinned.stack if sparse else np.concatenate)([p[0] for p in self.pending])
        y, w, q, m = (None if self.pending[0][k] is None else
                      np.concatenate([p[k] for p in self.pending]) for k in range(1, 5))
        # (the blocks go to the folders in turn: one folder per disk spreads the reads)
        prefix = os.path.join(self.folders[len(self.blocks) % len(self.folders)],
                              f"{len(self.blocks):06d}")
        layout = None
        if sparse:
            layout = _write_sparse(prefix, Xb.rows(0, n))
        else:
            _write(prefix + ".X", Xb[:n])
            _write(prefix + ".C", columns_of(Xb[:n], self.n_threads))
        _write(prefix + ".y", y[:n])
        if self.weighted:
            _write(prefix + ".w", w[:n])
        if m is not None:
            _write(prefix + ".m", m[:n])
        n_groups = None
        if q is not None:
            ptr = np.r_[0, np.flatnonzero(q[1:n] != q[:n - 1]) + 1, n].astype(np.int64)
            n_groups = ptr.shape[0] - 1
            _check_group_weights(None if w is None else w[:n], ptr, "sample_weight")
            _write(prefix + ".g", np.r_[ptr, self.n_groups + np.arange(n_groups)])
            self.n_groups += n_groups
        self.blocks.append(_DiskBlock(prefix, n, self.n_features, self.weighted, n_groups,
                                      layout, self.y_width,
                                      0 if m is None else m.shape[1]))
        rest = y.shape[0] - n
        self.pending = [(Xb.rows(n, y.shape[0]) if sparse else Xb[n:],)
                        + tuple(None if a is None else a[n:] for a in (y, w, q, m))] \
            if rest else []
        self.pending_rows = rest


def fit_external(estimator, local_class, data, eval_sets_of):
    """Fit ``estimator`` (a ``GBTRegressor``, ``GBTClassifier`` or ``GBTRanker``, of
    ``local_class``) on ``data`` (an ``ExternalData``) out of core;
    ``eval_sets_of(objective)`` gives the eval sets (in memory, checked against the
    fitted width). Returns the estimator."""
    classifier = local_class._kind == "classifier"
    ranker = local_class._kind == "ranker"
    what = f"{type(estimator).__name__}.fit on ExternalData"
    check_params(estimator, local_class, what, CATEGORICAL)
    params = estimator._boost_params()
    n_threads = effective_n_threads(estimator.n_jobs)
    t0 = time.perf_counter()
    rng = None
    if ranker:
        ranking, rng = estimator._seeded_objective()

        def objective_of(width):
            return ranking
    else:   # (a regressor's y of several columns: its targets, or aft's bounds)
        def objective_of(width):
            return None if classifier else make_objective(estimator, 0, what, width)
    absent_missing = bool(estimator.absent_as_missing)
    encoder, names = _categories_pass(data, estimator)
    encode = None if encoder is None else _encoding(encoder, estimator)
    cuts, n_features, n_rows, weighted, sparse, labels, objective, y_width, columns = \
        _sketch_pass(data, params.max_bin, objective_of, ranker, absent_missing, n_threads,
                     encode)
    if encoder is None and columns is not None and all(isinstance(c, str) for c in columns):
        names = columns
    mapper = BinMapper.from_cuts(*flat_cuts(cuts), absent_as_missing=absent_missing)
    classes = factors = None
    if classifier:
        classes = np.array(sorted(labels))
        if classes.shape[0] < 2:
            raise ValueError(f"y must contain at least two classes; got {classes.shape[0]}")
        objective = make_objective(estimator, classes.shape[0], what)
        sums, counts = np.array([labels[c] for c in classes.tolist()]).T
        # (class_weight: a factor per class, multiplied into each row's weight)
        factors = class_factors(estimator.class_weight, classes, counts)
        if factors is not None:
            sums = sums * factors
        # (the class codes, each weighted by its class's weight: the same sums)
        labels = objective.start_sums(np.arange(classes.shape[0], dtype=np.float64), sums)
        estimator._set_classes(classes)
    base = (objective.start_from_sums(labels) if objective.summable_start
            else np.zeros(objective.n_outputs))
    # (a warm start: the model's edges; its rounds go on)
    init, old_mapper, done = continued(estimator, objective, n_features, what, params)
    if init is not None:
        if params.n_estimators == 0:
            return estimator
        mapper = old_mapper
    prepare(estimator, n_features if encoder is None else encoder.width, encoder, names)
    per_feature(estimator, params, encoder)
    grower = GrowerParams.from_boost(params)
    eval_sets = eval_sets_of(objective)
    for ev in eval_sets:
        if encoder is not None:   # (the codes: the indicators too)
            ev.X = encoder.transform(ev.X)
    folders = []
    shard = RowShard()
    try:
        for d in data._cache_dirs():
            folders.append(_write_or_explain(
                lambda: tempfile.mkdtemp(prefix="gbtree-blocks-", dir=d), d))
        data.cache_paths_ = list(folders)
        blocks = _block_pass(data, folders, mapper, classes, factors, n_features, weighted,
                             y_width, objective.infinite_y, sparse, n_rows, n_threads, encode)
        t1 = time.perf_counter()
        # pass 3: boosting over the blocks
        margin = None
        if blocks and blocks[0].margin_width:   # (the rows' starting raw scores)
            margin = check_base_margin(np.concatenate([b.margin() for b in blocks]),
                                       n_rows, objective.n_outputs)
        shard.start(blocks, [b.n_rows for b in blocks], mapper, objective, base, n_threads,
                    grower, prefetch=True, init=init, margin=margin)
        if isinstance(objective, SELECTED) and init is None:
            base = shard.start_value()

        def call(method, *args):
            return [getattr(shard, method)(*args)]

        ensemble, n_rounds, state = boost(call, estimator, params, objective, base,
                                          n_features, n_rows, eval_sets, rng, init)
    finally:
        if hasattr(shard, "blocks"):
            shard.close()   # (the thread reading ahead lets go of its block)
        if not data.keep_cache:
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
    return fitted(estimator, ensemble, objective, mapper, n_rounds, state, eval_sets,
                  {"bin_seconds": t1 - t0, "boost_seconds": time.perf_counter() - t1,
                   "blocks": len(blocks)}, done)


def _categories_pass(data, estimator):
    """Pass 0, with ``categorical_features``: the encoder of the chunks' categorical
    columns (pandas DataFrames), fitted as an in-memory fit on all the rows fits it
    (``CategoricalEncoder.fit_seen``: every value they hold), and the column names
    (None: not all text); (None, None) without categorical columns. A warm start
    keeps the fitted model's encoder (the first chunk's columns checked)."""
    if estimator.categorical_features is None:
        return None, None
    if estimator._continues():
        # (a warm start: the fitted model's encoder, the columns checked)
        X = next(iter(data.features()), None)
        if X is None:
            raise ValueError("ExternalData has no rows")
        estimator._check_same_categorical(X)
        encoder = estimator._cat_encoder
        names = getattr(estimator, "feature_names_in_", None)
        return encoder, (None if encoder is None or names is None else list(names))
    import pandas as pd   # (the chunks are pandas DataFrames)
    meta = columns = None
    seen = []
    for i, X in enumerate(data.features()):
        if meta is None:
            if not hasattr(X, "iloc"):
                raise TypeError(f"categorical_features out of core needs chunks whose X is "
                                f"a pandas DataFrame, got {type(X).__name__} in chunk {i}")
            meta = X.iloc[:0]
            columns = resolve_columns(estimator.categorical_features, meta)
            if not columns:
                estimator._categorical_encoder(meta)   # (checks the other parameters)
                return None, None
            seen = [[] for _ in columns]
        for k, j in enumerate(columns):
            seen[k].append(np.asarray(X.iloc[:, j].dropna().unique()))
    if meta is None:
        raise ValueError("ExternalData has no rows")
    values = [pd.unique(np.concatenate(parts)) if parts else np.empty(0) for parts in seen]
    encoder = estimator._categorical_encoder(frame_of_values(meta, columns, values)).fit_seen()
    names = list(meta.columns) if all(isinstance(c, str) for c in meta.columns) else None
    return encoder, names


def _encoding(encoder, estimator):
    """``encode(X, i)``: chunk i's X (a DataFrame of the fitted columns) as the trees
    read it, its categorical columns made codes and indicator columns."""
    def encode(X, i):
        try:
            encoder.check_columns(X, estimator)
        except ValueError as exc:
            raise ValueError(f"chunk {i}: {exc}") from None
        return encoder.transform(np.asarray(encoder.codes(X), dtype=np.float64))
    return encode


def _sketch_pass(data, max_bin, objective_of, ranker, absent_missing, n_threads,
                 encode=None):
    """Pass 1: each column's bin edges (from its sketch), the number of features, of
    rows, whether the chunks are weighted, what the starting value needs: a
    classifier's (``objective_of`` gives None) weight and row count of each label,
    or the regressor's or ranker's ``objective.start_sums`` over all rows (each
    chunk's labels checked; a ranker's query ids too), the loss (``objective_of``
    of y's width: its columns, 0 for a 1-D y), y's width and the first chunk's column
    names (``ExternalData.chunks``' names). ``absent_missing``: the
    entries a sparse chunk does not store are missing (else 0). ``encode``: as
    ``ExternalData.chunks``'."""
    eps = 1.0 / (SKETCH_BINS * max_bin)
    sketches, n_features, n_rows, weighted, sparse = None, None, 0, None, None
    objective = labels = y_width = None
    last_qid = None
    pool = concurrent.futures.ThreadPoolExecutor(n_threads)
    pushing = []   # the last chunk's columns going into their sketches
    margins = None   # (whether the chunks have base margins, and how many columns)
    first_names = None
    for i, (X, y, w, q, m, names) in enumerate(_closing(data.chunks(encode), pool)):
        if i == 0:
            first_names = names
        width = None if m is None else m.shape[1]
        if margins is None:
            margins = width
        elif width != margins:
            raise ValueError(f"chunk {i} has base margins of {width} column(s); the first "
                             f"chunk had {margins}")
        if (q is not None) != ranker:
            raise ValueError(f"chunk {i} has no query ids: GBTRanker needs a qid in every "
                             f"chunk" if ranker else f"chunk {i} has query ids (qid): only "
                             f"GBTRanker takes them")
        if n_features is None:
            n_features, weighted, sparse = X.shape[1], w is not None, sp.issparse(X)
            sketches = [Sketch(eps) for _ in range(n_features)]
            y_width = y.shape[1] if y.ndim == 2 else 0
            objective = objective_of(y_width)
            if objective is None:
                labels = {}
            if y_width and (objective is None or ranker):
                raise ValueError(f"chunk {i}: y must be 1-D, got shape {y.shape}")
        if (y.shape[1] if y.ndim == 2 else 0) != y_width:
            raise ValueError(f"chunk {i}: y has shape {y.shape}; the first chunk's had "
                             f"{y_width or 1} column(s)")
        if X.shape[1] != n_features:
            raise ValueError(f"chunk {i} has {X.shape[1]} features; the first chunk had "
                             f"{n_features}")
        if (w is not None) != weighted:
            raise ValueError(f"chunk {i} {'has' if w is not None else 'lacks'} sample weights; "
                             f"every chunk must have them or none")
        if X.shape[0] == 0:
            continue
        if ranker:
            if np.any(q[1:] < q[:-1]) or (last_qid is not None and q[0] < last_qid):
                raise ValueError(f"chunk {i}: the query ids must be sorted over the whole "
                                 f"data (each query's rows together, in the order of the ids)")
            last_qid = q[-1]
        # (the columns on threads: sorting a column's chunk releases the GIL; this chunk
        # is read and transposed while the last one's columns are sketched)
        X = _layout(X, sparse)
        columns = (_sparse_columns(X, w, absent_missing) if sparse
                   else [(c, w) for c in _by_columns(X)])
        for done in pushing:
            done.result()
        push = _push_sparse if sparse else _push
        pushing = [pool.submit(push, sketches[f], *columns[f]) for f in range(n_features)]
        if objective is None:
            check_labels(y, f"chunk {i}: y", classes=True)
            values, codes = np.unique(y, return_inverse=True)
            sums = np.bincount(codes, weights=w, minlength=values.shape[0])
            counts = np.bincount(codes, minlength=values.shape[0])
            for label, s, c in zip(values.tolist(), sums, counts.tolist()):
                labels[label] = labels.get(label, 0.0) + np.array([s, c])
        else:
            yf = check_labels(y, f"chunk {i}: y", infinite=objective.infinite_y)
            try:
                objective.check_eval_target(yf)
            except ValueError as exc:
                raise ValueError(f"chunk {i}: {exc}") from None
            if objective.summable_start:   # (else a quantile: RowShard.start_value)
                sums = objective.start_sums(yf, w)
                labels = sums if labels is None else labels + sums
        n_rows += X.shape[0]
    for done in pushing:
        done.result()
    if n_rows == 0:
        raise ValueError("ExternalData has no rows")
    # (the levels merged unpruned: the finest summary the sketch has)
    cuts = [summary_cuts(s.summary(prune=False), max_bin) for s in sketches]
    return (cuts, n_features, n_rows, weighted, sparse, labels, objective, y_width,
            first_names)


def _block_pass(data, folders, mapper, classes, factors, n_features, weighted, y_width,
                infinite_y, sparse, n_rows, n_threads, encode=None):
    """Pass 2: the chunks binned and written in blocks to ``folders`` (sparse blocks
    when ``sparse``); returns the blocks. ``classes``: a classifier's labels (None: a
    regressor's numbers, ``y_width`` columns of them (0: one), infinite ones allowed
    with ``infinite_y``); ``factors``: each class's weight (class_weight), multiplied
    into the rows' weights, or None; ``encode``: as ``ExternalData.chunks``'."""
    writer = _BlockWriter(folders, data.block_rows, n_features,
                          weighted or factors is not None, y_width, n_threads)
    written = 0
    for i, (X, y, w, q, m, _) in enumerate(data.chunks(encode)):
        if (X.shape[1] != n_features or (w is not None) != weighted
                or (y.shape[1] if y.ndim == 2 else 0) != y_width):
            raise ValueError(f"chunk {i} differs from the first pass's: the source must "
                             f"give the same chunks every time it is called")
        if X.shape[0] == 0:
            continue
        code = (np.searchsorted(classes, y).astype(np.float64) if classes is not None
                else check_labels(y, f"chunk {i}: y", infinite=infinite_y))
        if classes is not None and not np.array_equal(
                classes[np.minimum(code.astype(np.intp), classes.shape[0] - 1)], y):
            raise ValueError(f"chunk {i} has labels the first pass did not see")
        if factors is not None:   # (as a local fit: sample_weight * the class's weight)
            cw = factors[code.astype(np.intp)]
            w = cw if w is None else w * cw
        _write_or_explain(writer.add, folders, mapper.transform(_layout(X, sparse), n_threads),
                          code, w, q, m)
        written += X.shape[0]
    if written != n_rows:
        raise ValueError(f"the second pass read {written} rows, the first {n_rows}: the "
                         f"source must give the same chunks every time it is called")
    return _write_or_explain(writer.close, folders)


def _closing(chunks, pool):
    """The chunks; ``pool`` shut down when they end or the reader stops."""
    try:
        yield from chunks
    finally:
        pool.shutdown()


def _by_columns(X, rows=8192):
    """X's columns as the rows of a C-ordered array: copied a block of ``rows`` rows at a
    time, which stays in the cache (a column read from a row-major X loads a cache line
    a value)."""
    out = np.empty((X.shape[1], X.shape[0]), dtype=X.dtype)
    for lo in range(0, X.shape[0], rows):
        out[:, lo:lo + rows] = X[lo:lo + rows].T
    return out


def _layout(X, sparse):
    """A chunk's X as the fit's blocks hold it: a canonical CSR matrix when ``sparse``
    (the first chunk was), else a C-ordered array."""
    if sparse:
        return X if sp.issparse(X) else canonical_csr(sp.csr_matrix(X))
    return np.ascontiguousarray(X.toarray()) if sp.issparse(X) else X


def _sparse_columns(X, w, absent_missing):
    """Per column of a CSR chunk, what its sketch takes: (its stored values, their
    weights or None, the weight of its absent entries, which are 0; none when
    ``absent_missing``: they are missing). The values are views of one column-major
    copy of the chunk."""
    Xc = X.tocsc()
    n = X.shape[0]
    total = float(n) if w is None else float(w.sum())
    out = []
    for f in range(X.shape[1]):
        part = slice(Xc.indptr[f], Xc.indptr[f + 1])
        values = Xc.data[part]
        weights = None if w is None else w[Xc.indices[part]]
        absent = 0 if absent_missing else n - values.shape[0]
        if w is not None and absent:
            absent = max(total - weights.sum(), 0.0)
        out.append((values, weights, absent))
    return out


def _push_sparse(sketch, values, weights, absent):
    """A chunk of a sparse column into its sketch: its stored values, and a 0.0 of the
    absent entries' weight."""
    _push(sketch, values, weights)
    if absent > 0:
        sketch.push(np.zeros(1), np.array([float(absent)]))


def _push(sketch, col, w):
    """A chunk of a column into its sketch (its finite values of weight > 0)."""
    keep = np.isfinite(col) if w is None else np.isfinite(col) & (w > 0)
    if keep.all():
        sketch.push(col, w)
    elif keep.any():
        sketch.push(col[keep], None if w is None else w[keep])


def _write_or_explain(write, where, *args):
    """``write(*args)``; a failure to write the cache (a full disk, say) raises an
    OSError that says so (``where``: the cache's folders)."""
    try:
        return write(*args)
    except OSError as exc:
        reason = "the disk is full" if exc.errno == errno.ENOSPC else str(exc)
        raise OSError(exc.errno, f"gbtree: could not write the out-of-core blocks to "
                                 f"{where}: {reason}") from exc
