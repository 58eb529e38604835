"""The passes of an out-of-core fit over an ``ExternalData``'s chunks, and the
blocks they leave on disk: ``sketch_pass`` (the bin edges, from a weighted
quantile sketch of each column), ``block_pass`` (the chunks binned and written in
blocks of ``block_rows`` rows, dense or sparse, as raw arrays) and the blocks read
back, mapped, by the level-wise fit (``row_shard.RowShard``).
"""
import concurrent.futures
import errno
import functools
import mmap
import os

import numpy as np
import scipy.sparse as sp

from ..data.binning import SparseBinned, canonical_csr, summary_cuts
from ..data.queries import _check_group_weights
from ..data.sketch import Sketch
from ..data.validation import check_labels
from ..kernels._binned_matrix import columns_of

# the sketch's error bound, in value bins: eps = 1 / (SKETCH_BINS * max_bin)
SKETCH_BINS = 2


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


def sketch_pass(data, max_bin, objective_of, ranker, absent_missing, n_threads,
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


def block_pass(data, folders, mapper, classes, factors, n_features, weighted, y_width,
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
        write_or_explain(writer.add, folders, mapper.transform(_layout(X, sparse), n_threads),
                          code, w, q, m)
        written += X.shape[0]
    if written != n_rows:
        raise ValueError(f"the second pass read {written} rows, the first {n_rows}: the "
                         f"source must give the same chunks every time it is called")
    return write_or_explain(writer.close, folders)


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


def write_or_explain(write, where, *args):
    """``write(*args)``; a failure to write the cache (a full disk, say) raises an
    OSError that says so (``where``: the cache's folders)."""
    try:
        return write(*args)
    except OSError as exc:
        reason = "the disk is full" if exc.errno == errno.ENOSPC else str(exc)
        raise OSError(exc.errno, f"gbtree: could not write the out-of-core blocks to "
                                 f"{where}: {reason}") from exc
