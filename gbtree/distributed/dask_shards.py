"""The Dask side of a fit on a cluster (``gbtree.dask``): each worker's ``Shard``
(a Dask actor over ``row_shard.RowShard``) holding its partitions' rows, how the
shards start and find each other, the rows regrouped by query, summaries
gathered and merged into bin edges, and every wait on a worker bounded by a
timeout (``wait_all``): a worker that dies or a partition that cannot be computed
ends the fit with an error naming it, never a hang."""
import copy
import functools
import time

import numpy as np

try:
    import dask.array as da
    import dask.dataframe as dd
    from dask.base import is_dask_collection
    from distributed import wait
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(f"gbtree.dask needs dask, distributed and dask.dataframe (pandas, "
                      f"pyarrow): pip install 'gbtree[dask]' ({exc})") from exc

from ..data.binning import summary_cuts
from ..data.queries import _check_group_weights
from ..data.sketch import Summary
from ..data.validation import check_base_margin, check_labels
from ..kernels._threads import effective_n_threads
from ..growing.row_blocks import MemoryBlock
from .row_shard import RowShard, place_draws, runs
from .shard_exchange import message_bytes


# entries a shard's summary of a column keeps, per value bin
SUMMARY_ENTRIES_PER_BIN = 8


# how often, while waiting for one worker, the client looks whether another failed
POLL_SECONDS = 0.1


class Shard(RowShard):
    """One worker's training rows and what a fit keeps of them (a Dask actor)."""

    def __init__(self, X_parts, y_parts, w_parts, n_jobs, starts, q_parts=None,
                 m_parts=None, declared=()):
        # (each X part of the shape its array declares: ``declared``, (index, shape))
        for part, (i, shape) in zip(X_parts, declared):
            check_declared_shape(part, shape, i, "X")
        X = np.concatenate(X_parts) if X_parts else np.empty((0, 0))
        # (the rows' base margins: their starting raw scores, or None)
        self.m = None if m_parts is None else np.concatenate(m_parts)
        self.X = X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)
        self.y = np.concatenate(y_parts).astype(np.float64) if y_parts else np.empty(0)
        self.w = (None if w_parts is None or not w_parts
                  else np.concatenate(w_parts).astype(np.float64))
        self.n_threads = effective_n_threads(n_jobs)   # this worker's cores
        # the rows' places in the data (partitions start at ``starts``), which draw a
        # row sample and order each query's rows as a local fit does; a ranker's
        # rows' query ids
        self.pos = (np.concatenate([start + np.arange(len(part), dtype=np.int64)
                                    for start, part in zip(starts, y_parts)])
                    if y_parts else np.empty(0, dtype=np.int64))
        self.q = None if q_parts is None else np.concatenate(q_parts)
        self.groups = None

    def query_ids(self):
        """The ids of the queries with rows here, and their rows here."""
        return np.unique(self.q, return_counts=True)

    def hand_over(self, qids):
        """The rows of the queries ``qids`` (X, y, w, query ids, places), removed here."""
        out = np.isin(self.q, qids)
        rows = tuple(None if a is None else a[out] for a in (self.X, self.y, self.w, self.q,
                                                              self.pos))
        keep = ~out
        self.X, self.y, self.q, self.pos = self.X[keep], self.y[keep], self.q[keep], self.pos[keep]
        self.w = None if self.w is None else self.w[keep]
        return rows

    def receive(self, rows):
        """Add rows another shard handed over (``hand_over``'s answer)."""
        X, y, w, q, pos = rows
        self.X = np.concatenate([self.X, X.astype(self.X.dtype)])
        self.y, self.q, self.pos = (np.concatenate([self.y, y]), np.concatenate([self.q, q]),
                                    np.concatenate([self.pos, pos]))
        self.w = None if self.w is None else np.concatenate([self.w, w])

    def group(self, all_ids, firsts):
        """Sort the rows by query (each query's rows in the data's order); ``all_ids``:
        the sorted ids of every query of the data, whose places number the queries, and
        ``firsts`` the place of each one's first row in the data sorted by query (a
        local fit's order: the rows' places from now on)."""
        order = np.lexsort((self.pos, self.q))
        self.X, self.y, self.q = self.X[order], self.y[order], self.q[order]
        self.w = None if self.w is None else self.w[order]
        ids, starts = np.unique(self.q, return_index=True)
        ptr = np.r_[starts, self.q.shape[0]].astype(np.intp)
        _check_group_weights(self.w, ptr, "sample_weight")
        numbers = np.searchsorted(all_ids, ids).astype(np.int64)
        self.groups = (ptr, numbers)
        self.pos = (np.repeat(firsts[numbers] - ptr[:-1], np.diff(ptr))
                    + np.arange(self.q.shape[0], dtype=np.int64))
        self.q = None

    def summaries(self, b, fraction, seed):
        """Per column, the summary of its values (NaN skipped), at most ``b + 1``
        entries, over the rows whose draw at their place in the data (from ``seed``)
        is below ``fraction`` (all of them when it is 1): the rows of the sample are
        the same whichever worker holds them."""
        X, w = self.X, self.w
        n = X.shape[0]
        if fraction < 1.0 and n:
            take = place_draws(seed, runs(self.pos), 0, n) < fraction
            X, w = X[take], None if w is None else w[take]
        out = []
        for f in range(X.shape[1]):
            col = X[:, f]
            keep = np.isfinite(col)   # (the edges are those of the finite values)
            out.append(Summary.from_data(col[keep], None if w is None else w[keep]).prune(b))
        return out

    def start_sums(self, objective):
        """``objective.start_sums`` of this worker's rows (their labels checked), None
        for a loss whose starting value the shards select together (``start_value``)."""
        objective.check_eval_target(self.y)
        return objective.start_sums(self.y, self.w) if objective.summable_start else None

    def start(self, mapper, objective, base_score, grower_params, init=None):
        """Bin the rows (one block in memory); every raw score starts at ``base_score``
        (or the scores of ``init``, the ensemble a warm start continues)."""
        n_rows = self.y.shape[0]
        Xb = mapper.transform(self.X, self.n_threads) if n_rows else np.empty(
            (0, self.X.shape[1]), dtype=np.uint8)
        block = MemoryBlock(Xb, self.y, self.w, self.n_threads, groups=self.groups)
        places = runs(self.pos)
        self.X = self.y = self.w = self.pos = None   # (the block holds what a fit reads)
        margin = (None if self.m is None
                  else check_base_margin(self.m, n_rows, objective.n_outputs))
        self.m = None
        return RowShard.start(self, [block], [n_rows], mapper, objective, base_score,
                              self.n_threads, grower_params, places=places, init=init,
                              margin=margin)

    def connect(self, peers, index, features, timeout):
        # (proxies of this shard's own: in a cluster of threads the actors share the
        # client's proxies, which bind to the worker that first uses them)
        RowShard.connect(self, None if peers is None else [copy.copy(p) for p in peers],
                         index, features, timeout)

    async def deliver(self, key, sender, message):
        """Another shard's message of an exchange (run on the worker's event loop,
        while this shard's own call waits for it)."""
        self._receive(key, sender, message)

    async def abandon(self):
        """The fit failed elsewhere: a call waiting for another shard ends now (and
        frees the worker's thread)."""
        self._abandon()

    def _send(self, j, key, message):
        return self.peers[j].deliver(key, self.index, message)

    def _sent(self, sending):
        for fut in sending:
            fut.result(timeout=self.timeout)

    def traffic(self):
        """The exchanges with the other shards, and the messages and bytes this shard
        sent them."""
        return self._calls, self.messages, self.bytes_sent


def wait_all(futures, timeout, step, traffic=None):
    """The results of the actors' futures, in order; an error naming ``step`` when
    one fails or they do not all answer within ``timeout`` seconds. The first
    failure ends the wait (a worker that fails while the others wait for its part
    of a tree is reported at once, not after their timeout). ``traffic`` (a dict)
    counts the round trips and the bytes of the NumPy arrays received."""
    try:
        out = results(futures, time.monotonic() + timeout)
    except _Late:
        raise TimeoutError(f"gbtree.dask: a worker did not answer within {timeout} s "
                           f"({step}); it may have died. The fit is abandoned.") from None
    except (ValueError, TypeError) as exc:   # (the data's fault: the same kind of error)
        raise type(exc)(f"gbtree.dask: {step} failed on a worker: {exc}") from exc
    except Exception as exc:
        raise RuntimeError(f"gbtree.dask: {step} failed on a worker: {exc!r}") from exc
    if traffic is not None:
        traffic["round_trips"] += 1
        traffic["bytes_received"] += sum(message_bytes(x) for x in out)
    return out


class _Late(Exception):
    """Futures that did not all finish in time."""


def results(futures, deadline):
    """The futures' results, in order, raising the first error any of them raises
    (``_Late`` at ``deadline``, a ``time.monotonic()``)."""
    out = [None] * len(futures)
    left = list(range(len(futures)))
    while left:
        i = left[0]
        try:
            out[i] = futures[i].result(
                timeout=max(1e-3, min(POLL_SECONDS, deadline - time.monotonic())))
            left.pop(0)
            continue
        except TimeoutError:
            if futures[i].done():
                # (it ended as the wait did: its result, or the worker's own error)
                out[i] = futures[i].result()
                left.pop(0)
                continue
            if time.monotonic() >= deadline:
                raise _Late() from None
        for j in left[1:]:
            if futures[j].done():
                out[j] = futures[j].result()
                left.remove(j)
    return out


def row_blocks(A, rows_chunks=None, name="X", shapes_checked=True):
    """A Dask array of the rows of ``A`` (a dask array or dataframe, called ``name``
    in errors), one column chunk, row chunks ``rows_chunks`` if given. Each
    partition is checked against what the collection says of it (a DataFrame's
    columns, an array's chunk shape) where it is computed: an error names the
    partition and what differs. With ``shapes_checked=False`` an array's blocks
    are left as they are (no task of their own: the shards of a fit hold them on
    the workers that hold them, and check their shapes there)."""
    if isinstance(A, dd.DataFrame):
        A = A.map_partitions(_same_columns, list(A.columns), name, meta=A._meta)
    if isinstance(A, (dd.DataFrame, dd.Series)):
        A = A.to_dask_array(lengths=True)
    if not isinstance(A, da.Array):
        raise TypeError(f"gbtree.dask takes dask.array or dask.dataframe input, got "
                        f"{type(A).__name__}")
    if shapes_checked:
        A = A.map_blocks(_declared_shape, name, dtype=A.dtype)
    if rows_chunks is not None:
        A = A.rechunk({0: rows_chunks})
    if A.ndim == 2:
        A = A.rechunk({1: -1})
    return A


def aligned(A, name, rows_chunks, unit="row", one_d=False):
    """``A`` (called ``name``) as ``row_blocks`` gives it, in the row chunks
    ``rows_chunks`` of X; a ValueError unless it has one ``unit`` per row of X (and,
    with ``one_d``, one dimension)."""
    A = row_blocks(A, name=name)
    n_rows = sum(rows_chunks)
    if A.shape[0] != n_rows or (one_d and A.ndim != 1):
        raise ValueError(f"{name} must have one {unit} per row of X: X has {n_rows} rows, "
                         f"{name} shape {A.shape}")
    return row_blocks(A, rows_chunks, name)


def _same_columns(part, columns, name, partition_info=None):
    """A DataFrame partition with the collection's ``columns``, in their order."""
    if list(part.columns) != columns:
        i = "?" if partition_info is None else partition_info["number"]
        missing = [c for c in columns if c not in part.columns]
        extra = [c for c in part.columns if c not in columns]
        what = (f"lacks {missing}" if missing else f"has columns {name} does not: {extra}"
                if extra else "has its columns in another order")
        raise ValueError(f"partition {i} of {name} {what}: every partition must have the "
                         f"columns {columns} (the DataFrame's), in that order; it has "
                         f"{list(part.columns)}")
    return part


def _declared_shape(block, name, block_info=None):
    """A block of the shape its array declares for it."""
    check_declared_shape(block, tuple(block_info[None]["chunk-shape"]),
                         block_info[None]["chunk-location"][0], name)
    return block


def check_declared_shape(block, want, i, name):
    """Partition ``i`` of ``name`` has the shape ``want`` its array declares for it."""
    if block.shape != tuple(want):
        want = tuple(want)
        raise ValueError(f"partition {i} of {name} has shape {block.shape}; the array "
                         f"declares {want} for it (every partition of {name} must have "
                         f"{name}'s columns: {want[1:] or 'one value a row'})")


def checked_labels(y, classes=False, infinite=False):
    """The labels ``y`` (a dask array), each partition checked where it is computed
    (``validation.check_labels``, as a local fit checks them)."""
    return y.map_blocks(_labels_of_block, classes, infinite, dtype=y.dtype)


def _labels_of_block(block, classes, infinite, block_info=None):
    i = block_info[None]["chunk-location"][0]
    check_labels(block, f"partition {i} of y", classes, infinite)
    return block


def start_shards(client, X, y, w, n_jobs, timeout, qid=None, margin=None):
    """One ``Shard`` actor per worker holding partitions of (X, y, w) (and a ranker's
    query ids ``qid``, or the rows' base margins ``margin``), in the order of the
    workers' addresses; the data's futures (kept until the fit ends). ``X``: a 2-D
    dask array of one column chunk (``row_blocks(X, shapes_checked=False)``: its
    blocks' shapes are checked by the shards), ``y`` a dask array."""
    w = None if w is None else row_blocks(w, name="sample_weight")
    if (y.ndim not in (1, 2) or y.shape[0] != X.shape[0]
            or (w is not None and w.shape != y.shape[:1])):
        raise ValueError(f"y (and sample_weight) must have one value per row of X: X has "
                         f"{X.shape[0]} rows, y shape {y.shape}"
                         + ("" if w is None else f", sample_weight shape {w.shape}"))
    y = row_blocks(y, X.chunks[0], "y")
    w = None if w is None else row_blocks(w, X.chunks[0], "sample_weight")
    qid = None if qid is None else aligned(qid, "qid", X.chunks[0], "query id", one_d=True)
    margin = None if margin is None else aligned(margin, "base_margin", X.chunks[0])
    parts = [X.to_delayed().ravel(), y.to_delayed().ravel()] + [
        a.to_delayed().ravel() for a in (w, qid, margin) if a is not None]
    starts = np.r_[0, np.cumsum(X.chunks[0])].tolist()
    futures = [client.compute(list(p)) for p in parts]
    try:
        wait([f for p in futures for f in p], timeout=timeout)
    except TimeoutError:
        raise TimeoutError(f"gbtree.dask: the partitions of the data were not computed "
                           f"within {timeout} s") from None
    for f in (f for p in futures for f in p):
        if f.status == "error":
            exc = f.exception()
            if isinstance(exc, (ValueError, TypeError)):   # (the data's fault)
                raise type(exc)(f"gbtree.dask: {exc}") from exc
            raise RuntimeError(f"gbtree.dask: a partition of the data could not be computed: "
                               f"{exc!r}")
    who = client.who_has([f for p in futures for f in p])
    by_worker = {}
    for i, fx in enumerate(futures[0]):
        holder = sorted(who[fx.key])[0]
        by_worker.setdefault(holder, []).append(i)
    shards = []
    for worker in sorted(by_worker):
        idx = by_worker[worker]
        pick = [[p[i] for i in idx] for p in futures]
        rest = iter(pick[2:])
        w_parts = next(rest) if w is not None else None
        q_parts = next(rest) if qid is not None else None
        m_parts = next(rest) if margin is not None else None
        declared = [(i, (X.chunks[0][i], X.shape[1])) for i in idx]
        actor = client.submit(Shard, pick[0], pick[1], w_parts, n_jobs,
                              [starts[i] for i in idx], q_parts, m_parts, declared,
                              workers=[worker], actor=True, allow_other_workers=False,
                              pure=False)
        shards.append(actor)
    return wait_all(shards, timeout, "starting the shards"), futures


def regroup(shards, timeout):
    """Each query's rows onto one shard (the first, in shard order, that holds some of
    them: rows of a query split between partitions of different workers move, through
    the client), each shard's rows sorted by query."""
    found = wait_all([s.query_ids() for s in shards], timeout, "the query ids")
    held = np.concatenate([ids for ids, _ in found])
    shard_of = np.repeat(np.arange(len(shards)), [len(ids) for ids, _ in found])
    all_ids, first, inverse = np.unique(held, return_index=True, return_inverse=True)
    # (where each query starts in the data sorted by query)
    sizes = np.bincount(inverse, weights=np.concatenate([n for _, n in found]),
                        minlength=all_ids.shape[0]).astype(np.int64)
    firsts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
    owner = shard_of[first][inverse]
    for i in range(len(shards)):
        for j in range(len(shards)):
            move = held[(shard_of == i) & (owner == j)] if i != j else held[:0]
            if move.size:
                rows = wait_all([shards[i].hand_over(move)], timeout, "moving a query's rows")[0]
                wait_all([shards[j].receive(rows)], timeout, "moving a query's rows")
    wait_all([s.group(all_ids, firsts) for s in shards], timeout,
              "grouping the rows by query")


def gathered(client, entries, timeout, name):
    """A list of eval-set entries (dask collections, arrays, None, or pairs of them),
    each collection computed to the client (an array, or a pandas frame)."""
    if entries is None:
        return None
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"{name} must be a list, got {type(entries).__name__}")

    def local(v):
        if isinstance(v, (list, tuple)):
            return type(v)(local(x) for x in v)
        if not is_dask_collection(v):
            return v
        try:   # (a dask array's block as NumPy, a dask DataFrame's as pandas)
            return client.compute(v).result(timeout=timeout)
        except TimeoutError:
            raise TimeoutError(f"gbtree.dask: {name} was not computed within {timeout} s") \
                from None

    return [local(v) for v in entries]


def merged_cuts(summaries_per_shard, max_bin):
    """Per feature, the edges ``BinMapper.fit`` would cut from the merged summaries."""
    n_features = len(summaries_per_shard[0]) if summaries_per_shard else 0
    return [summary_cuts(functools.reduce(Summary.merge, [s[f] for s in summaries_per_shard]),
                         max_bin) for f in range(n_features)]
