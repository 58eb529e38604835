"""Training on a Dask cluster: ``DaskGBTRegressor``, ``DaskGBTClassifier`` and
``DaskGBTRanker``.

The rows stay on the workers that hold them. Each worker that holds partitions of
the training data gets one ``_Shard`` (a Dask actor) holding those rows: their
bins, raw scores, gradients and, while a tree grows, each node's rows. Only
summaries travel, in Dask's own messages (actor calls; no tracker, sockets or
MPI beside them), and the trees grow as ``gbtree.distributed.levelwise`` grows them (shared
with out-of-core fits):

- the bin edges: each shard summarises its columns (the weighted quantile
  summaries of ``sketch.Summary``, pruned to ``8 * max_bin`` entries) over its
  rows of a sample of about ``SKETCH_SUBSAMPLE`` rows in all (all rows below
  that, as a local fit; a row is in the sample by its draw at its place in the
  data, whichever worker holds it), the client merges them in shard order and
  cuts them as ``BinMapper.fit`` cuts a column (an exact merge when no shard
  holds more distinct values than that: then the edges are those of a local fit
  on the same rows, and do not depend on which worker holds which partition);
- the starting value: each shard's label sums;
- each round, one call to every shard: the shards grow the round's trees
  together, level by level, each sending the others their features' part of
  its histograms (summed by each in shard order, so the model never depends on
  timing or on which worker answers first) and its best splits; every shard
  grows the same trees and returns them.

So per tree level a worker sends about one set of histograms in all, whatever
the number of workers, and the client is not in the loop. Every wait is
bounded by ``timeout``: a worker that dies or a partition that cannot be
computed ends the fit with an error, never a hang.

What a fit supports: dense ``dask.array`` input and
``dask.dataframe`` with ``sample_weight``, the parameters of the level-wise
trainer (``levelwise_fit.SUPPORTED``), the losses of ``levelwise_fit.OBJECTIVES``,
the ranking losses
(``DaskGBTRanker``: each query's rows gathered on one worker), the categorical
columns of a ``dask.dataframe`` that a local fit gives codes and indicator
columns (``_encoded``), eval sets with ``eval_metric``,
``early_stopping_rounds`` and ``callbacks`` (the eval sets are gathered to the
client, which evaluates them after every round). Other parameters of the local
estimators are refused with a clear error.
``to_local()`` returns the fitted local estimator, which saves, loads and
explains like any other.
"""
import copy
import inspect
import numbers
import time

import numpy as np

try:
    import dask
    import dask.array as da
    import pandas as pd
    from dask.base import is_dask_collection
    import dask.dataframe as dd
    from distributed import default_client, wait
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError("gbtree.dask needs dask and distributed: pip install 'gbtree[dask]'") from exc

from ..kernels._threads import effective_n_threads
from ..data.binning import SKETCH_SUBSAMPLE, BinMapper, flat_cuts, summary_cuts
from ..growing.grower_params import GrowerParams
from ..data.categorical import frame_of_values, resolve_columns
from ..distributed.leaf_quantiles import SELECTED
from ..distributed.levelwise import MemoryBlock, RowShard, boost, place_draws, runs
from .levelwise_fit import (CATEGORICAL, check_params, continued, fitted, local_params,
                            make_objective, per_feature, prepare)
from ..data.queries import _check_group_weights
from ..distributed.shard_exchange import feature_ranges, message_bytes, sum_in_order
from ..data.validation import check_labels, class_factors
from ..data.sketch import Summary
from .sklearn import GBTClassifier, GBTRanker, GBTRegressor
from ..data.validation import check_base_margin

__all__ = ["DaskGBTRegressor", "DaskGBTClassifier", "DaskGBTRanker"]

# entries a shard's summary of a column keeps, per value bin
SUMMARY_ENTRIES_PER_BIN = 8
# how often, while waiting for one worker, the client looks whether another failed
POLL_SECONDS = 0.1


class _Shard(RowShard):
    """One worker's training rows and what a fit keeps of them (a Dask actor)."""

    def __init__(self, X_parts, y_parts, w_parts, n_jobs, starts, q_parts=None,
                 m_parts=None):
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

    def give(self, qids):
        """The rows of the queries ``qids`` (X, y, w, query ids, places), removed here."""
        out = np.isin(self.q, qids)
        rows = tuple(None if a is None else a[out] for a in (self.X, self.y, self.w, self.q,
                                                              self.pos))
        keep = ~out
        self.X, self.y, self.q, self.pos = self.X[keep], self.y[keep], self.q[keep], self.pos[keep]
        self.w = None if self.w is None else self.w[keep]
        return rows

    def take(self, rows):
        """Add rows given by another shard (``give``'s answer)."""
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

    def start(self, mapper, objective, base_score, grower, init=None):
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
                              self.n_threads, grower, places=places, init=init,
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


def _wait_all(futures, timeout, what, traffic=None):
    """The results of the actors' futures, in order; an error naming ``what`` when
    one fails or they do not all answer within ``timeout`` seconds. The first
    failure ends the wait (a worker that fails while the others wait for its part
    of a tree is reported at once, not after their timeout). ``traffic`` (a dict)
    counts the round trips and the bytes of the NumPy arrays received."""
    try:
        out = _results(futures, time.monotonic() + timeout)
    except _Late:
        raise TimeoutError(f"gbtree.dask: a worker did not answer within {timeout} s "
                           f"({what}); it may have died. The fit is abandoned.") from None
    except (ValueError, TypeError) as exc:   # (the data's fault: the same kind of error)
        raise type(exc)(f"gbtree.dask: {what} failed on a worker: {exc}") from exc
    except Exception as exc:
        raise RuntimeError(f"gbtree.dask: {what} failed on a worker: {exc!r}") from exc
    if traffic is not None:
        traffic["round_trips"] += 1
        traffic["bytes_received"] += sum(message_bytes(x) for x in out)
    return out


class _Late(Exception):
    """Futures that did not all finish in time."""


def _results(futures, deadline):
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


def _row_blocks(A, rows_chunks=None, name="X"):
    """A Dask array of the rows of ``A`` (a dask array or dataframe, called ``name``
    in errors), one column chunk, row chunks ``rows_chunks`` if given. Each
    partition is checked against what the collection says of it (a DataFrame's
    columns, an array's chunk shape) where it is computed: an error names the
    partition and what differs."""
    if isinstance(A, dd.DataFrame):
        A = A.map_partitions(_same_columns, list(A.columns), name, meta=A._meta)
    if isinstance(A, (dd.DataFrame, dd.Series)):
        A = A.to_dask_array(lengths=True)
    if not isinstance(A, da.Array):
        raise TypeError(f"gbtree.dask takes dask.array or dask.dataframe input, got "
                        f"{type(A).__name__}")
    A = A.map_blocks(_declared_shape, name, dtype=A.dtype)
    if rows_chunks is not None:
        A = A.rechunk({0: rows_chunks})
    if A.ndim == 2:
        A = A.rechunk({1: -1})
    return A


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
    want = tuple(block_info[None]["chunk-shape"])
    if block.shape != want:
        i = block_info[None]["chunk-location"][0]
        raise ValueError(f"partition {i} of {name} has shape {block.shape}; the array "
                         f"declares {want} for it (every partition of {name} must have "
                         f"{name}'s columns: {want[1:] or 'one value a row'})")
    return block


def _checked_labels(y, classes=False, infinite=False):
    """The labels ``y`` (a dask array), each partition checked where it is computed
    (``validation.check_labels``, as a local fit checks them)."""
    return y.map_blocks(_labels_of_block, classes, infinite, dtype=y.dtype)


def _labels_of_block(block, classes, infinite, block_info=None):
    i = block_info[None]["chunk-location"][0]
    check_labels(block, f"partition {i} of y", classes, infinite)
    return block


def _shards(client, X, y, w, n_jobs, timeout, qid=None, margin=None):
    """One ``_Shard`` actor per worker holding partitions of (X, y, w) (and a ranker's
    query ids ``qid``, or the rows' base margins ``margin``), in the order of the
    workers' addresses; the data's futures (kept until the fit ends)."""
    X = _row_blocks(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
    y = _row_blocks(y, name="y")
    w = None if w is None else _row_blocks(w, name="sample_weight")
    if (y.ndim not in (1, 2) or y.shape[0] != X.shape[0]
            or (w is not None and w.shape != y.shape[:1])):
        raise ValueError(f"y (and sample_weight) must have one value per row of X: X has "
                         f"{X.shape[0]} rows, y shape {y.shape}"
                         + ("" if w is None else f", sample_weight shape {w.shape}"))
    y = _row_blocks(y, X.chunks[0], "y")
    w = None if w is None else _row_blocks(w, X.chunks[0], "sample_weight")
    if qid is not None:
        qid = _row_blocks(qid, name="qid")
        if qid.ndim != 1 or qid.shape[0] != X.shape[0]:
            raise ValueError(f"qid must have one query id per row of X: X has {X.shape[0]} "
                             f"rows, qid shape {qid.shape}")
        qid = _row_blocks(qid, X.chunks[0], "qid")
    if margin is not None:
        margin = _row_blocks(margin, name="base_margin")
        if margin.shape[0] != X.shape[0]:
            raise ValueError(f"base_margin must have one row per row of X: X has "
                             f"{X.shape[0]} rows, base_margin shape {margin.shape}")
        margin = _row_blocks(margin, X.chunks[0], "base_margin")
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
        more = iter(pick[2:])
        w_parts = next(more) if w is not None else None
        q_parts = next(more) if qid is not None else None
        m_parts = next(more) if margin is not None else None
        actor = client.submit(_Shard, pick[0], pick[1], w_parts, n_jobs,
                              [starts[i] for i in idx], q_parts, m_parts, workers=[worker],
                              actor=True, allow_other_workers=False, pure=False)
        shards.append(actor)
    return _wait_all(shards, timeout, "starting the shards"), futures


def _regroup(shards, timeout):
    """Each query's rows onto one shard (the first, in shard order, that holds some of
    them: rows of a query split between partitions of different workers move, through
    the client), each shard's rows sorted by query."""
    found = _wait_all([s.query_ids() for s in shards], timeout, "the query ids")
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
                rows = _wait_all([shards[i].give(move)], timeout, "moving a query's rows")[0]
                _wait_all([shards[j].take(rows)], timeout, "moving a query's rows")
    _wait_all([s.group(all_ids, firsts) for s in shards], timeout,
              "grouping the rows by query")


def _encoded(client, X, local, timeout, continuing=False):
    """(X, its categorical columns' encoder, its column names): with
    ``categorical_features``, X (a dask DataFrame) with the columns encoded as a local
    fit on its rows encodes them (the codes of the categories its rows hold, and
    indicator columns), each partition where it lives; else (X, None, None).
    ``continuing`` (a warm start): with the fitted model's encoder."""
    if local.categorical_features is None:
        return X, None, None
    if not isinstance(X, dd.DataFrame):
        raise TypeError(f"categorical_features needs a dask DataFrame X, got "
                        f"{type(X).__name__}")
    meta = X._meta
    if continuing:   # (its columns checked, as a local warm start checks them)
        local._check_same_categorical(meta)
        encoder = local._cat_encoder
        if encoder is None:
            return X, None, None
    else:
        columns = resolve_columns(local.categorical_features, meta)
        if not columns:
            local._categorical_encoder(meta)   # (checks the other parameters)
            return X, None, None
        values = [X.iloc[:, j].dropna().unique() for j in columns]
        try:
            values = [np.asarray(v) for v in
                      [f.result(timeout=timeout) for f in client.compute(values)]]
        except TimeoutError:
            raise TimeoutError(f"gbtree.dask: the categories were not computed within "
                               f"{timeout} s") from None
        encoder = local._categorical_encoder(
            frame_of_values(meta, columns, values)).fit_seen()
    width = encoder.width + encoder.indicators.shape[0]

    def encode(part):
        codes = np.asarray(encoder.codes(part), dtype=np.float64)
        return pd.DataFrame(encoder.transform(codes), index=part.index)

    names = list(meta.columns) if all(isinstance(c, str) for c in meta.columns) else None
    return (X.map_partitions(encode, meta=pd.DataFrame(
        {k: pd.Series(dtype=np.float64) for k in range(width)})), encoder, names)


def _gathered(client, entries, timeout, name):
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


def _cuts(summaries_per_shard, max_bin):
    """Per feature, the edges ``BinMapper.fit`` would cut from the merged summaries."""
    n_features = len(summaries_per_shard[0]) if summaries_per_shard else 0
    cuts = []
    for f in range(n_features):
        s = summaries_per_shard[0][f]
        for other in summaries_per_shard[1:]:
            s = s.merge(other[f])
        cuts.append(summary_cuts(s, max_bin))
    return cuts


# what ``_wait_all`` names when a shard's call fails
_CALLS = {"grow": "growing a round's trees", "finish": "ending the fit"}


class _DaskMixin:
    """Fit on the workers; predict where the partitions live; ``to_local``."""

    def _check_supported(self):
        check_params(self, self._local_class(), type(self).__name__, CATEGORICAL)
        if not isinstance(self.timeout, numbers.Real) or not self.timeout > 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {self.timeout!r}")

    def _fit_distributed(self, X, y, sample_weight, eval_args, classes=None, qid=None,
                         base_margin=None):
        """Fit the local estimator's model on the workers; ``eval_args``: what
        ``_client_eval_sets`` takes; ``classes``: a classifier's; ``qid``: a ranker's
        query ids; ``base_margin``: the rows' starting raw scores."""
        self._check_supported()
        what = type(self).__name__
        client = self.client if self.client is not None else default_client()
        local_class = self._local_class()
        if (hasattr(self, "_local") and isinstance(self.warm_start, (bool, np.bool_))
                and self.warm_start):   # (the model to continue)
            local = self._local.set_params(**local_params(self, local_class))
        else:
            local = local_class(**local_params(self, local_class))
        X, encoder, names = _encoded(client, X, local, self.timeout,
                                     local._continues())
        X = _row_blocks(X)   # (a dask array of known row chunks: its rows are counted)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
        params = local._boost_params()
        rng = None
        if qid is not None:
            objective, rng = local._seeded_objective()
        else:   # (a regressor's y of several columns: its targets, or aft's bounds)
            if y.ndim == 2 and y.shape[1] == 1:   # (a column vector: one target)
                y = _row_blocks(y, name="y")[:, 0]
            objective = make_objective(local, 0 if classes is None else classes.shape[0], what,
                                       y.shape[1] if y.ndim == 2 else 0)
        y = _checked_labels(_row_blocks(y, name="y"), infinite=objective.infinite_y)
        if classes is not None:
            local._set_classes(classes)
        # (a warm start: the model's edges; its rounds go on)
        init, mapper, done = continued(local, objective, X.shape[1], what, params)
        if init is not None and params.n_estimators == 0:
            return self
        prepare(local, X.shape[1] if encoder is None else encoder.width, encoder, names)
        per_feature(local, params, encoder)
        grower = GrowerParams.from_boost(params)
        # (eval sets are validation-sized: the client holds and evaluates them)
        eval_sets = self._client_eval_sets(local, client, objective, *eval_args)
        for ev in eval_sets:
            if encoder is not None:   # (the codes: the statistics and indicators too)
                ev.X = encoder.transform(ev.X)
        shards, data = _shards(client, X, y, sample_weight, self.n_jobs, self.timeout, qid,
                               base_margin)
        if not shards:
            raise ValueError("X has no partitions on the cluster's workers")
        T = self.timeout
        t0 = time.perf_counter()
        if qid is not None:
            _regroup(shards, T)
        if init is None:
            # bin edges from the merged summaries (as a local fit, the edges of a sample
            # of about SKETCH_SUBSAMPLE rows: each row drawn at its place)
            fraction = min(1.0, SKETCH_SUBSAMPLE / max(X.shape[0], 1))
            seed = int(local._rng().randint(0, 2 ** 31 - 1)) if fraction < 1.0 else 0
            summaries = _wait_all([s.summaries(SUMMARY_ENTRIES_PER_BIN * params.max_bin,
                                               fraction, seed) for s in shards], T,
                                  "the column summaries")
            mapper = BinMapper.from_cuts(*flat_cuts(_cuts(summaries, params.max_bin)),
                                         absent_as_missing=bool(local.absent_as_missing))
        # the starting value (a quantile of y: selected by the shards once connected)
        sums = _wait_all([s.start_sums(objective) for s in shards], T, "the label sums")
        selected = isinstance(objective, SELECTED) and init is None
        base = (np.zeros(objective.n_outputs) if not objective.summable_start
                else objective.start_from_sums(sum_in_order(sums)))
        sizes = _wait_all([s.start(mapper, objective, base, grower, init) for s in shards],
                          T, "binning the rows")
        n_rows = sum(sizes)
        if len(shards) > 1:
            ranges = feature_ranges(mapper.bin_offsets_, len(shards))
            _wait_all([s.connect(shards, i, ranges, T) for i, s in enumerate(shards)], T,
                      "connecting the shards")
        del data   # (the shards hold their rows: the partitions' results may go)
        if n_rows == 0:
            raise ValueError("X has no rows")
        if selected:
            base = _wait_all([s.start_value() for s in shards], T, "the starting value")[0]
        t1 = time.perf_counter()
        traffic = {"round_trips": 0, "bytes_received": 0}

        def call(method, *args):   # (the traffic per tree: the last call is once per fit)
            try:
                return _wait_all([getattr(s, method)(*args) for s in shards], T,
                                 _CALLS[method], traffic if method != "finish" else None)
            except Exception:
                for s in shards:   # (the others may be waiting for the one that failed)
                    try:
                        s.abandon()
                    except Exception:   # (its worker is gone)
                        pass
                raise

        ensemble, n_rounds, state = boost(call, local, params, objective, base, X.shape[1],
                                          n_rows, eval_sets, rng, init)
        fitted(local, ensemble, objective, mapper, n_rounds, state, eval_sets,
               {"bin_seconds": t1 - t0, "boost_seconds": time.perf_counter() - t1}, done)
        trees = max(n_rounds * objective.n_outputs, 1)
        sent = _wait_all([s.traffic() for s in shards], T, "the traffic counts")
        self.fit_stats_ = {"workers": len(shards), "rows_per_worker": sizes,
                           "trees": n_rounds * objective.n_outputs,
                           "round_trips_per_tree": traffic["round_trips"] / trees,
                           "bytes_received_per_tree": traffic["bytes_received"] / trees,
                           "exchanges_per_tree": sent[0][0] / trees,
                           "messages_per_tree": sent[0][1] / trees,
                           "bytes_between_workers_per_tree": sum(b for _, _, b in sent) / trees}
        self._local = local
        for name in ("n_features_in_", "n_estimators_", "best_iteration_", "evals_result_",
                     "best_score_"):
            if hasattr(local, name):
                setattr(self, name, getattr(local, name))
            elif hasattr(self, name):
                delattr(self, name)
        return self

    def _client_eval_sets(self, local, client, objective, eval_set, sample_weight_eval_set,
                          base_margin_eval_set=None):
        """The eval sets, gathered to the client and checked by ``local``."""
        return local._checked_eval_sets(
            _gathered(client, eval_set, self.timeout, "eval_set"),
            _gathered(client, sample_weight_eval_set, self.timeout, "sample_weight_eval_set"),
            objective, _gathered(client, base_margin_eval_set, self.timeout,
                                 "base_margin_eval_set"))

    def to_local(self):
        """The fitted model as the local estimator (``GBTRegressor`` or
        ``GBTClassifier``): it predicts, saves, loads and explains like any other."""
        if not hasattr(self, "_local"):
            raise AttributeError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self._local

    def _map_rows(self, X, method, dtype, n_columns, base_margin=None):
        """``method`` of the local model on each partition of X, where it lives (a
        DataFrame's partitions as pandas frames: their columns keep their types),
        with the rows' ``base_margin`` if given (a dask array of X's rows)."""
        model = self.to_local()

        def block(part, margin=None):
            if part.shape[0] == 0:   # (an empty partition: the local model refuses no rows)
                return np.empty((0, n_columns) if n_columns else 0, dtype=dtype)
            if margin is None:
                return getattr(model, method)(part)
            return getattr(model, method)(part, base_margin=margin)

        if isinstance(X, dd.DataFrame) or base_margin is not None:
            if isinstance(X, dd.DataFrame):
                lengths = X.map_partitions(len).compute().tolist()
                parts = X.to_delayed()
            else:
                X = _row_blocks(X)
                lengths, parts = list(X.chunks[0]), X.to_delayed().ravel()
            margins = [None] * len(parts)
            if base_margin is not None:
                base_margin = _row_blocks(base_margin, name="base_margin")
                if base_margin.shape[0] != sum(lengths):
                    raise ValueError(f"base_margin must have one row per row of X: X has "
                                     f"{sum(lengths)} rows, base_margin shape "
                                     f"{base_margin.shape}")
                margins = _row_blocks(base_margin, tuple(lengths), "base_margin").to_delayed().ravel()
            return da.concatenate([
                da.from_delayed(dask.delayed(block)(part, margin),
                                shape=(n, n_columns) if n_columns else (n,), dtype=dtype)
                for part, margin, n in zip(parts, margins, lengths)])
        X = _row_blocks(X)
        if n_columns:
            return X.map_blocks(block, dtype=dtype, chunks=(X.chunks[0], (n_columns,)))
        return X.map_blocks(block, dtype=dtype, drop_axis=1)


def _with_dask_signature(cls, local):
    """``cls.__init__``'s signature: the local estimator's parameters, then
    ``client`` and ``timeout`` (scikit-learn's get_params and clone read it)."""
    sig = inspect.signature(local.__init__)
    extra = [inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None),
             inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=600.0)]
    cls.__init__.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
    return cls


class DaskGBTRegressor(_DaskMixin, GBTRegressor):
    """``GBTRegressor`` trained on a Dask cluster, the rows staying on the workers.

    Takes the parameters of ``GBTRegressor`` that a distributed fit supports (see
    the module ``gbtree.dask``; the others must stay at their defaults), plus
    ``client`` (a ``distributed.Client``; default: the current one) and
    ``timeout`` (seconds any wait on a worker may take, 600 by default).

    After ``fit``, ``fit_stats_`` holds the number of workers, the rows each holds
    (the slowest sets the pace: Dask placed the partitions), the number of trees,
    and per tree: the client's round trips to the workers and the bytes of the arrays they
    sent it, the exchanges between the workers (reduce-scatters and gathers), the
    messages the first worker sent in them and the bytes of the arrays all the
    workers sent each other.
    """
    __module__ = "gbtree.dask"   # pickles and docs name the public module

    def __init__(self, client=None, timeout=600.0, **params):
        GBTRegressor.__init__(self, **params)
        self.client = client
        self.timeout = timeout

    @staticmethod
    def _local_class():
        return GBTRegressor

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            base_margin=None, base_margin_eval_set=None):
        """Fit on ``X`` (dask array or dataframe of numbers), ``y`` and ``sample_weight``
        (dask arrays or series); the data stay where they are. ``eval_set``: (X, y)
        pairs (dask collections or arrays, validation-sized: the client gathers them
        and evaluates them after every round, as a local fit does), with
        ``sample_weight_eval_set``; ``evals_result_``, ``early_stopping_rounds`` and
        ``best_iteration_`` work as in ``GBTRegressor``. ``base_margin`` (a dask
        array of one value per row, or one per output) and
        ``base_margin_eval_set``: the rows' starting raw scores, as in
        ``GBTRegressor.fit``."""
        return self._fit_distributed(
            X, y, sample_weight, (eval_set, sample_weight_eval_set, base_margin_eval_set),
            base_margin=base_margin)

    def predict(self, X, base_margin=None):
        """Predictions as a dask array, computed where the partitions of X live (from
        the rows' ``base_margin``, a dask array, if given)."""
        model = self.to_local()
        outputs = model._ensemble.n_outputs
        return self._map_rows(X, "predict", np.float64,
                              outputs if model._objective.task == "multi-output" else 0,
                              base_margin)


class DaskGBTClassifier(_DaskMixin, GBTClassifier):
    """``GBTClassifier`` trained on a Dask cluster, the rows staying on the workers
    (binary or multiclass log loss). Parameters as ``DaskGBTRegressor``'s."""
    __module__ = "gbtree.dask"   # pickles and docs name the public module

    def __init__(self, client=None, timeout=600.0, **params):
        GBTClassifier.__init__(self, **params)
        self.client = client
        self.timeout = timeout

    @staticmethod
    def _local_class():
        return GBTClassifier

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            base_margin=None, base_margin_eval_set=None):
        """Fit on ``X``, the labels ``y`` and ``sample_weight`` (dask collections);
        eval sets and base margins as ``DaskGBTRegressor.fit``'s."""
        y = _checked_labels(_row_blocks(y, name="y"), classes=True)
        classes = np.asarray(da.unique(y).compute())
        if classes.shape[0] < 2:
            raise ValueError(f"y must contain at least two classes; got {classes.shape[0]}")
        codes = y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.float64),
                             dtype=np.float64)
        if self.class_weight is not None:   # (multiplied into sample_weight, as locally)
            counts = da.bincount(codes.astype(np.intp), minlength=classes.shape[0]).compute()
            factors = class_factors(self.class_weight, classes, counts)
            cw = codes.map_blocks(lambda b: factors[b.astype(np.intp)], dtype=np.float64)
            sample_weight = cw if sample_weight is None else _row_blocks(sample_weight, name="sample_weight") * cw
        self._fit_distributed(X, codes, sample_weight,
                              (eval_set, sample_weight_eval_set, base_margin_eval_set),
                              classes, base_margin=base_margin)
        self.classes_ = classes
        return self

    def predict(self, X, base_margin=None):
        """Labels as a dask array, computed where the partitions of X live."""
        return self._map_rows(X, "predict", self.classes_.dtype, 0, base_margin)

    def predict_proba(self, X, base_margin=None):
        """Class probabilities as a dask array (n_rows, n_classes)."""
        return self._map_rows(X, "predict_proba", np.float64, self.classes_.shape[0],
                              base_margin)


class DaskGBTRanker(_DaskMixin, GBTRanker):
    """``GBTRanker`` trained on a Dask cluster, the rows staying on the workers; each
    query's rows are gathered on one worker (rows of a query split between the
    partitions of different workers move there). Parameters as
    ``DaskGBTRegressor``'s."""
    __module__ = "gbtree.dask"   # pickles and docs name the public module

    def __init__(self, client=None, timeout=600.0, **params):
        GBTRanker.__init__(self, **params)
        self.client = client
        self.timeout = timeout

    @staticmethod
    def _local_class():
        return GBTRanker

    def fit(self, X, y, *, qid, sample_weight=None, eval_set=None, eval_qid=None,
            eval_group=None, sample_weight_eval_set=None):
        """Fit on ``X``, the relevance labels ``y``, the query id of every row ``qid``
        and ``sample_weight`` (equal within a query; dask collections, partitioned as
        X or not); eval sets as ``GBTRanker.fit``'s (gathered to the client)."""
        return self._fit_distributed(X, y, sample_weight,
                                     (eval_set, eval_group, eval_qid, sample_weight_eval_set),
                                     qid=qid)

    def _client_eval_sets(self, local, client, objective, eval_set, eval_group, eval_qid,
                          sample_weight_eval_set):
        gather = {name: _gathered(client, value, self.timeout, name) for name, value in
                  (("eval_set", eval_set), ("eval_qid", eval_qid),
                   ("sample_weight_eval_set", sample_weight_eval_set))}
        return local._ranking_eval_sets(gather["eval_set"], eval_group, gather["eval_qid"],
                                        gather["sample_weight_eval_set"], objective, None)

    def predict(self, X):
        """Ranking scores as a dask array, computed where the partitions of X live."""
        return self._map_rows(X, "predict", np.float64, 0)


_with_dask_signature(DaskGBTRegressor, GBTRegressor)
_with_dask_signature(DaskGBTRanker, GBTRanker)
_with_dask_signature(DaskGBTClassifier, GBTClassifier)
