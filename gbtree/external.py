"""Training on data larger than memory: ``ExternalData``.

``GBTRegressor().fit(ExternalData(source))`` (and ``GBTClassifier``) reads the
data in chunks, three times over:

1. a streaming pass for the bin edges: each column's finite values go into a
   weighted quantile sketch (``sketch.Sketch``, the XGBoost paper's mergeable
   summaries, error ``1 / (SKETCH_BINS * max_bin)``), from which the edges are
   cut as ``BinMapper.fit`` cuts them (exact when a column has at most
   ``2 * SKETCH_BINS * max_bin`` distinct values); the labels' sums (or classes)
   and the row count come too;
2. a pass that bins the chunks and writes them, in blocks of ``block_rows`` rows
   (uint8 bins, labels, weights), as ``.npy`` files in a cache folder of its own;
3. boosting over the blocks (``gbtree.levelwise``): depthwise trees grown level
   by level, each level reading every block once from disk, the next block read
   on a thread while the current one is worked on. In memory stay, per row, the
   raw scores and gradients (16 bytes for one output) and, while a tree grows,
   the row's index in its block (4 bytes); of the blocks, the one worked on and
   the one being read.

The cache folder is new for every fit (under ``cache_dir``, or the system's
temporary folder) and is removed when the fit ends, whether it succeeds or not,
unless ``keep_cache=True``; no fit ever reads a cache it did not write.
"""
import concurrent.futures
import errno
import numbers
import os
import shutil
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from ._threads import effective_n_threads
from .binning import BinMapper
from .grower_params import GrowerParams
from .levelwise import (MemoryBlock, RowShard, boost, check_params, fitted, flat_cuts,
                        starting_point, summary_cuts)
from .sketch import Sketch

__all__ = ["ExternalData"]

# the sketch's error bound, in value bins: eps = 1 / (SKETCH_BINS * max_bin)
SKETCH_BINS = 2
PAGE_BYTES = 4096


class ExternalData:
    """Training data read in chunks, for a fit that does not hold it in memory.

    Parameters
    ----------
    source : callable or list
        A callable that returns a new iterator of chunks each time it is called
        (the fit reads the data three times): each chunk ``(X, y)`` or ``(X, y,
        sample_weight)``, X a 2-D array (NumPy, SciPy sparse: absent entries are
        0, or a DataFrame of numbers), y and sample_weight 1-D. Or a list of files:
        ``.npy`` tuples ``(X_path, y_path)`` or ``(X_path, y_path, weight_path)``,
        or Parquet files (``label`` names the label column, ``weight`` the weight
        column if any; the others are the features; needs ``pyarrow``).
    cache_dir : str, optional
        Where the fit writes its binned blocks (a new folder inside it); default:
        the system's temporary folder.
    keep_cache : bool, default=False
        Leave the blocks on disk after the fit (``cache_path_`` of the data says
        where); they are never read by another fit.
    block_rows : int, default=1_000_000
        Rows per block on disk: memory holds at most two blocks at a time
        (about ``2 * block_rows * (2 * n_features + 16)`` bytes).
    label, weight : str, optional
        The label and weight columns of Parquet files.
    """

    def __init__(self, source, cache_dir=None, keep_cache=False, block_rows=1_000_000,
                 label=None, weight=None):
        if not (callable(source) or isinstance(source, (list, tuple))):
            raise TypeError(f"source must be a callable returning an iterator of chunks, or a "
                            f"list of files; got {type(source).__name__}")
        if isinstance(source, (list, tuple)) and not source:
            raise ValueError("source is an empty list of files")
        if (isinstance(block_rows, (bool, np.bool_)) or not isinstance(block_rows, numbers.Integral)
                or block_rows < 1):
            raise ValueError(f"block_rows must be an integer >= 1, got {block_rows!r}")
        self.source = source
        self.cache_dir = cache_dir
        self.keep_cache = bool(keep_cache)
        self.block_rows = int(block_rows)
        self.label = label
        self.weight = weight
        self.cache_path_ = None

    # -- reading
    def chunks(self):
        """The chunks as ``(X, y, w)``: X a C-ordered float32 or float64 array, y and w
        float64 (w None when the data have no weights); errors name the chunk."""
        if callable(self.source):
            it = self.source()
            try:
                it = iter(it)
            except TypeError:
                raise TypeError(f"source() must return an iterator of chunks, got "
                                f"{type(it).__name__}") from None
        else:
            it = (self._read_file(item) for item in self.source)
        for i, chunk in enumerate(it):
            yield _checked_chunk(chunk, i)

    def _read_file(self, item):
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
        for col in (self.label, self.weight):
            if col is not None and col not in names:
                raise ValueError(f"{path}: no column {col!r} (columns: {names})")
        features = [c for c in names if c not in (self.label, self.weight)]
        X = np.column_stack([table.column(c).to_numpy(zero_copy_only=False).astype(np.float64)
                             for c in features]) if features else np.empty((table.num_rows, 0))
        y = table.column(self.label).to_numpy(zero_copy_only=False)
        w = (None if self.weight is None
             else table.column(self.weight).to_numpy(zero_copy_only=False))
        return (X, y) if w is None else (X, y, w)


def _checked_chunk(chunk, i):
    if not isinstance(chunk, (tuple, list)) or len(chunk) not in (2, 3):
        raise ValueError(f"chunk {i}: a chunk must be (X, y) or (X, y, sample_weight), got "
                         f"{type(chunk).__name__}")
    X, y = chunk[0], chunk[1]
    w = chunk[2] if len(chunk) == 3 else None
    if sp.issparse(X):
        X = X.toarray()
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"chunk {i}: X must be 2-D, got {X.ndim} dimensions")
    if X.dtype not in (np.float32, np.float64):
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"chunk {i}: X must hold numbers, got dtype {X.dtype}") from None
    X = np.ascontiguousarray(X)
    y = np.asarray(y).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"chunk {i}: y has {y.shape[0]} values for {X.shape[0]} rows")
    if w is not None:
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape[0] != X.shape[0]:
            raise ValueError(f"chunk {i}: sample_weight has {w.shape[0]} values for "
                             f"{X.shape[0]} rows")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"chunk {i}: sample_weight must be finite and >= 0")
    return X, y, w


class _DiskBlock:
    """A block of binned rows written to the cache: ``PREFIX.X.npy`` (the bins, row
    by row, for the histograms), ``.C.npy`` (the same bins column by column, for the
    partition), ``.y.npy``, ``.w.npy``. Loading maps the files (the operating system
    reads them, or finds them in its page cache) and touches every page, so that
    the prefetch thread, not the trainer, waits for the disk."""

    def __init__(self, prefix, n_rows, weighted, n_threads):
        self.prefix, self.n_rows, self.weighted, self.n_threads = prefix, n_rows, weighted, n_threads

    def load(self):
        Xb = np.load(self.prefix + ".X.npy", mmap_mode="r")
        C = np.load(self.prefix + ".C.npy", mmap_mode="r")
        y = np.load(self.prefix + ".y.npy")
        w = np.load(self.prefix + ".w.npy") if self.weighted else None
        for a in (Xb, C):
            if a.size:
                a.reshape(-1)[::PAGE_BYTES].max()
        return MemoryBlock(Xb, y, w, self.n_threads, columns=list(C))


class _BlockWriter:
    """Gathers binned chunks into blocks of ``block_rows`` rows and writes them."""

    def __init__(self, folder, block_rows, weighted, n_threads):
        self.folder, self.block_rows, self.weighted = folder, block_rows, weighted
        self.n_threads = n_threads
        self.pending, self.pending_rows = [], 0
        self.blocks = []

    def add(self, Xb, y, w):
        self.pending.append((Xb, y, w))
        self.pending_rows += y.shape[0]
        while self.pending_rows >= self.block_rows:
            self._write(self.block_rows)

    def close(self):
        if self.pending_rows:
            self._write(self.pending_rows)
        return self.blocks

    def _write(self, n):
        Xb = np.concatenate([p[0] for p in self.pending])
        y = np.concatenate([p[1] for p in self.pending])
        w = np.concatenate([p[2] for p in self.pending]) if self.weighted else None
        prefix = os.path.join(self.folder, f"{len(self.blocks):06d}")
        np.save(prefix + ".X.npy", Xb[:n])
        np.save(prefix + ".C.npy", np.ascontiguousarray(Xb[:n].T))
        np.save(prefix + ".y.npy", y[:n])
        if self.weighted:
            np.save(prefix + ".w.npy", w[:n])
        self.blocks.append(_DiskBlock(prefix, n, self.weighted, self.n_threads))
        rest = y.shape[0] - n
        self.pending = [(Xb[n:], y[n:], w[n:] if self.weighted else None)] if rest else []
        self.pending_rows = rest


def fit_external(estimator, local_class, data, classifier):
    """Fit ``estimator`` (a ``GBTRegressor`` or ``GBTClassifier``) on ``data`` (an
    ``ExternalData``) out of core; returns the estimator."""
    what = f"{type(estimator).__name__}.fit on ExternalData"
    check_params(estimator, local_class, what)
    params = estimator._boost_params()
    grower = GrowerParams.from_boost(params)
    n_threads = effective_n_threads(estimator.n_jobs)
    t0 = time.perf_counter()
    # pass 1: the sketches, the labels and the row count
    sketches, n_features, n_rows, weighted = None, None, 0, None
    label_w, label_sums = {}, np.zeros(2)
    eps = 1.0 / (SKETCH_BINS * params.max_bin)
    pool = concurrent.futures.ThreadPoolExecutor(n_threads)
    for i, (X, y, w) in enumerate(_closing(data.chunks(), pool)):
        if n_features is None:
            n_features, weighted = X.shape[1], w is not None
            sketches = [Sketch(eps) for _ in range(n_features)]
        if X.shape[1] != n_features:
            raise ValueError(f"chunk {i} has {X.shape[1]} features; the first chunk had "
                             f"{n_features}")
        if (w is not None) != weighted:
            raise ValueError(f"chunk {i} {'has' if w is not None else 'lacks'} sample weights; "
                             f"every chunk must have them or none")
        if X.shape[0] == 0:
            continue
        # (the columns on threads: sorting a column's chunk releases the GIL)
        list(pool.map(lambda f: _push(sketches[f], X[:, f], w), range(n_features)))
        if classifier:
            labels, codes = np.unique(y, return_inverse=True)
            sums = np.bincount(codes, weights=w, minlength=labels.shape[0])
            for label, s in zip(labels.tolist(), sums):
                label_w[label] = label_w.get(label, 0.0) + float(s)
        else:
            yf = _numeric_labels(y, i)
            label_sums += [np.dot(yf, w) if weighted else yf.sum(),
                           w.sum() if weighted else yf.shape[0]]
        n_rows += X.shape[0]
    if n_rows == 0:
        raise ValueError("ExternalData has no rows")
    cuts = [summary_cuts(s.summary(), params.max_bin) for s in sketches]
    mapper = BinMapper.from_cuts(*flat_cuts(cuts))
    if classifier:
        classes = np.array(sorted(label_w))
        if classes.shape[0] < 2:
            raise ValueError(f"y must contain at least two classes; got {classes.shape[0]}")
        sums = np.array([label_w[c] for c in classes.tolist()])
        objective, base = starting_point(classes.shape[0], sums)
    else:
        if not label_sums[1] > 0:
            raise ValueError("the sample weights sum to 0")
        objective, base = starting_point(0, label_sums)
    folder = tempfile.mkdtemp(prefix="gbtree-blocks-", dir=data.cache_dir)
    data.cache_path_ = folder
    try:
        # pass 2: the binned blocks
        writer = _BlockWriter(folder, data.block_rows, weighted, n_threads)
        written = 0
        for i, (X, y, w) in enumerate(data.chunks()):
            if X.shape[1] != n_features or (w is not None) != weighted:
                raise ValueError(f"chunk {i} differs from the first pass's: the source must "
                                 f"give the same chunks every time it is called")
            if X.shape[0] == 0:
                continue
            code = (np.searchsorted(classes, y).astype(np.float64) if classifier
                    else _numeric_labels(y, i))
            if classifier and not np.array_equal(classes[np.minimum(code.astype(np.intp),
                                                                    classes.shape[0] - 1)], y):
                raise ValueError(f"chunk {i} has labels the first pass did not see")
            _write_or_explain(writer.add, folder, mapper.transform(X, n_threads), code, w)
            written += X.shape[0]
        if written != n_rows:
            raise ValueError(f"the second pass read {written} rows, the first {n_rows}: the "
                             f"source must give the same chunks every time it is called")
        blocks = _write_or_explain(writer.close, folder)
        t1 = time.perf_counter()
        # pass 3: boosting over the blocks
        shard = RowShard()
        shard.start(blocks, [b.n_rows for b in blocks], mapper, objective, base, n_threads,
                    prefetch=True)

        def call(method, *args):
            return [getattr(shard, method)(*args)]

        ensemble = boost(call, estimator, params, grower, mapper, objective, base, n_features)
    finally:
        if not data.keep_cache:
            shutil.rmtree(folder, ignore_errors=True)
    fitted(estimator, ensemble, objective, mapper, n_features, params.n_estimators,
           {"bin_seconds": t1 - t0, "boost_seconds": time.perf_counter() - t1,
            "blocks": len(blocks)})
    if classifier:
        estimator.classes_ = classes
    return estimator


def _closing(chunks, pool):
    """The chunks; ``pool`` shut down when they end or the reader stops."""
    try:
        yield from chunks
    finally:
        pool.shutdown()


def _push(sketch, col, w):
    """A chunk of a column into its sketch (its finite values of weight > 0)."""
    keep = np.isfinite(col) if w is None else np.isfinite(col) & (w > 0)
    if keep.all():
        sketch.push(col, w)
    elif keep.any():
        sketch.push(col[keep], None if w is None else w[keep])


def _numeric_labels(y, i):
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"chunk {i}: y must hold numbers") from None
    if not np.all(np.isfinite(y)):
        raise ValueError(f"chunk {i}: y has NaN or infinite values")
    return y


def _write_or_explain(write, folder, *args):
    """``write(*args)``; a failure to write the cache (a full disk, say) raises an
    OSError that says so."""
    try:
        return write(*args)
    except OSError as exc:
        reason = "the disk is full" if exc.errno == errno.ENOSPC else str(exc)
        raise OSError(exc.errno, f"gbtree: could not write the out-of-core blocks to "
                                 f"{folder}: {reason}") from exc
