"""Training on a Dask cluster: ``DaskGBTRegressor`` and ``DaskGBTClassifier``.

The rows stay on the workers that hold them. Each worker that holds partitions of
the training data gets one ``_Shard`` (a Dask actor) holding those rows: their
bins, raw scores, gradients and, while a tree grows, each node's rows. Only
summaries travel, in Dask's own messages (no tracker, sockets or MPI beside it):

- the bin edges: each shard summarises its columns (the weighted quantile
  summaries of ``sketch.Summary``, pruned to ``8 * max_bin`` entries), the
  client merges them in shard order and cuts them as ``BinMapper.fit`` cuts a
  column (an exact merge when no shard holds more distinct values than that:
  then the edges are those of a local fit on the same rows);
- the starting value: each shard's label sums;
- each tree, level by level: the client scans the histograms of the level's
  nodes for their best splits (the scan of every other grower); one call to
  every shard applies the level's splits to its rows and returns the histograms
  of the smaller child of each split (by hessian sum), summed by the client in
  shard order, so the model never depends on timing or on which worker answers
  first; the larger child's histogram is its parent's minus the smaller one's;
- the leaf values, added to the shards' raw scores with the next round's first call.

So a tree of depth d costs d + 1 round trips to every shard (the root's
histograms come with the round's gradients). Every wait is bounded by
``timeout``: a worker that dies or a partition that cannot be computed ends the
fit with an error, never a hang.

What a fit supports: dense ``dask.array`` input (and ``dask.dataframe`` of
numbers) with ``sample_weight``, depthwise trees (``max_depth``), the
regularisation and column sampling parameters, squared error (regressor) and
log loss (classifier, binary or multiclass). Other parameters of the local
estimators are refused with a clear error. ``to_local()`` returns the fitted
local estimator, which saves, loads and explains like any other.
"""
import inspect
import numbers
import time

import numpy as np

try:
    import dask.array as da
    import dask.dataframe as dd
    from distributed import default_client, wait
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError("gbtree.dask needs dask and distributed: pip install 'gbtree[dask]'") from exc

from . import objectives as _obj
from ._binned_matrix import columns_of
from ._column_sampler import ColumnSampler
from ._histogram import output_histograms
from ._splitting import find_best_split_outputs, partition_column, py_leaf_weight
from ._threads import effective_n_threads
from ._typedefs import G_H_DTYPE, NODE_DTYPE
from .binning import BinMapper, _weighted_cuts
from .grower_params import GrowerParams
from .sketch import Summary
from .sklearn import GBTClassifier, GBTRegressor
from .tree import TreeEnsemble

__all__ = ["DaskGBTRegressor", "DaskGBTClassifier"]

# entries a shard's summary of a column keeps, per value bin
SUMMARY_ENTRIES_PER_BIN = 8


class _Shard:
    """One worker's training rows and what a fit keeps of them (a Dask actor)."""

    def __init__(self, X_parts, y_parts, w_parts, n_jobs):
        X = np.concatenate(X_parts) if X_parts else np.empty((0, 0))
        self.X = X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)
        self.y = np.concatenate(y_parts).astype(np.float64) if y_parts else np.empty(0)
        self.w = (None if w_parts is None or not w_parts
                  else np.concatenate(w_parts).astype(np.float64))
        self.n_threads = effective_n_threads(n_jobs)   # this worker's cores
        self.n_rows = self.y.shape[0]

    def summaries(self, b):
        """Per column, the summary of its values (NaN skipped), at most ``b + 1`` entries."""
        out = []
        for f in range(self.X.shape[1]):
            col = self.X[:, f]
            keep = np.isfinite(col)   # (the edges are those of the finite values)
            out.append(Summary.from_data(col[keep], None if self.w is None else self.w[keep])
                       .prune(b))
        return out

    def label_sums(self, n_classes):
        """What the starting value needs: the weight of each class (classifier), or
        (sum of w * y, sum of w) (regressor)."""
        w = np.ones(self.n_rows) if self.w is None else self.w
        if n_classes:
            return np.bincount(self.y.astype(np.intp), weights=w, minlength=n_classes)
        return np.array([np.dot(w, self.y), w.sum()])

    def start(self, mapper, objective, base_score):
        """Bin the rows; every raw score starts at ``base_score``."""
        self.mapper = mapper
        self.objective = objective
        self.Xb = mapper.transform(self.X, self.n_threads) if self.n_rows else np.empty(
            (0, self.X.shape[1]), dtype=np.uint8)
        self.columns = columns_of(self.Xb, self.n_threads)
        self.X = None   # (the bins are all a fit reads from now on)
        self.bin_offsets = np.ascontiguousarray(mapper.bin_offsets_, dtype=np.intc)
        self.n_bins = np.ascontiguousarray(mapper.n_bins_, dtype=np.intc)
        K = base_score.shape[0]
        self.raw = np.tile(base_score, (self.n_rows, 1))
        self.pairs = np.empty((K, self.n_rows, 2), dtype=G_H_DTYPE)
        self.rows = {}
        return self.n_rows

    def _add_leaves(self, leaves):
        """Add each tree's leaf values to the raw scores of the leaves' rows:
        ``leaves`` holds (output, {node: value}) per tree of the last round."""
        for k, (output, values) in enumerate(leaves):
            for node, value in values.items():
                r = self.rows[(k, node)]
                self.raw[r, output] += value
        self.rows = {}

    def _histogram(self, k, rows):
        E = int(self.bin_offsets[-1])
        out = np.empty((1, E, 2))
        totals = np.empty((1, 2))
        if self.n_rows:
            output_histograms(self.Xb, rows, self.pairs[k:k + 1], self.bin_offsets, None,
                              out, totals, self.n_threads)
        else:
            out[:] = 0.0
            totals[:] = 0.0
        return out[0], totals[0]

    def round(self, leaves, trees):
        """Finish the last round (its leaves), compute the gradients of the raw scores
        and return the root histogram, sums and row count of each of the round's
        ``trees`` (one per output: tree t fits output t)."""
        self._add_leaves(leaves)
        if self.n_rows:
            self.objective.gradient(self.y, self.raw, self.w, self.pairs[:, :, 0],
                                    self.pairs[:, :, 1], self.n_threads)
        out = []
        for t in range(trees):
            rows = np.arange(self.n_rows, dtype=np.uint32)
            self.rows[(t, 0)] = rows
            hist, sums = self._histogram(t, rows)
            out.append((hist, sums, self.n_rows))
        return out

    def level(self, t, splits):
        """Apply a level's splits of tree ``t``: ``splits`` holds (node, feature, bin,
        default_left, left, right, build) per split, ``build`` the child whose
        histogram to return (-1: none). Returns the children's row counts (left, right
        of each split in order) and the built histograms in one array (one message
        moves faster than many), in the order of their splits."""
        counts = np.empty(2 * len(splits), dtype=np.int64)
        n_built = sum(1 for s in splits if s[6] >= 0)
        built = np.empty((n_built, int(self.bin_offsets[-1]), 2))
        j = 0
        for k, (node, f, b, default_left, left, right, build) in enumerate(splits):
            rows = self.rows.pop((t, node))
            n_left = partition_column(self.columns[f], rows, b, int(self.n_bins[f]),
                                      default_left, self.n_threads) if rows.size else 0
            self.rows[(t, left)], self.rows[(t, right)] = rows[:n_left], rows[n_left:]
            counts[2 * k], counts[2 * k + 1] = n_left, rows.size - n_left
            if build >= 0:
                built[j] = self._histogram(t, self.rows[(t, build)])[0]
                j += 1
        return counts, built

    def finish(self, leaves):
        """Add the last round's leaves."""
        self._add_leaves(leaves)


def _wait_all(futures, timeout, what, traffic=None):
    """The results of the actors' futures, in order; an error naming ``what`` when
    one fails or does not answer within ``timeout`` seconds. ``traffic`` (a dict)
    counts the round trips and the bytes of the NumPy arrays received."""
    out = []
    if traffic is not None:
        traffic["round_trips"] += 1
    for fut in futures:
        try:
            out.append(fut.result(timeout=timeout))
            if traffic is not None:
                traffic["bytes_received"] += _array_bytes(out[-1])
        except TimeoutError:
            raise TimeoutError(f"gbtree.dask: a worker did not answer within {timeout} s "
                               f"({what}); it may have died. The fit is abandoned.") from None
        except Exception as exc:
            raise RuntimeError(f"gbtree.dask: {what} failed on a worker: {exc!r}") from exc
    return out


def _array_bytes(obj):
    """Bytes of the NumPy arrays in ``obj`` (nested tuples, lists and dicts)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_array_bytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_array_bytes(x) for x in obj.values())
    return 0


def _row_blocks(A, rows_chunks=None):
    """A Dask array of the rows of ``A`` (a dask array or dataframe), one column
    chunk, row chunks ``rows_chunks`` if given."""
    if isinstance(A, (dd.DataFrame, dd.Series)):
        A = A.to_dask_array(lengths=True)
    if not isinstance(A, da.Array):
        raise TypeError(f"gbtree.dask takes dask.array or dask.dataframe input, got "
                        f"{type(A).__name__}")
    if rows_chunks is not None:
        A = A.rechunk({0: rows_chunks})
    if A.ndim == 2:
        A = A.rechunk({1: -1})
    return A


def _shards(client, X, y, w, n_jobs, timeout):
    """One ``_Shard`` actor per worker holding partitions of (X, y, w), in the
    order of the workers' addresses; the data's futures (kept until the fit ends)."""
    X = _row_blocks(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
    y = _row_blocks(y)
    w = None if w is None else _row_blocks(w)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or (w is not None and w.shape != y.shape):
        raise ValueError(f"y (and sample_weight) must have one value per row of X: X has "
                         f"{X.shape[0]} rows, y shape {y.shape}"
                         + ("" if w is None else f", sample_weight shape {w.shape}"))
    y = _row_blocks(y, X.chunks[0])
    w = None if w is None else _row_blocks(w, X.chunks[0])
    parts = [X.to_delayed().ravel(), y.to_delayed().ravel()] + (
        [w.to_delayed().ravel()] if w is not None else [])
    futures = [client.compute(list(p)) for p in parts]
    try:
        wait([f for p in futures for f in p], timeout=timeout)
    except TimeoutError:
        raise TimeoutError(f"gbtree.dask: the partitions of the data were not computed "
                           f"within {timeout} s") from None
    for f in (f for p in futures for f in p):
        if f.status == "error":
            raise RuntimeError(f"gbtree.dask: a partition of the data could not be computed: "
                               f"{f.exception()!r}")
    who = client.who_has([f for p in futures for f in p])
    by_worker = {}
    for i, fx in enumerate(futures[0]):
        holder = sorted(who[fx.key])[0]
        by_worker.setdefault(holder, []).append(i)
    shards = []
    for worker in sorted(by_worker):
        idx = by_worker[worker]
        pick = [[p[i] for i in idx] for p in futures]
        actor = client.submit(_Shard, pick[0], pick[1], pick[2] if w is not None else None,
                              n_jobs, workers=[worker], actor=True, allow_other_workers=False,
                              pure=False)
        shards.append(actor)
    return _wait_all(shards, timeout, "starting the shards"), futures


def _cuts(summaries_per_shard, max_bin):
    """Per feature, the edges ``BinMapper.fit`` would cut from the merged summaries."""
    n_features = len(summaries_per_shard[0]) if summaries_per_shard else 0
    cuts = []
    for f in range(n_features):
        s = summaries_per_shard[0][f]
        for other in summaries_per_shard[1:]:
            s = s.merge(other[f])
        cuts.append(_weighted_cuts(s.values, s.w, max_bin - 1) if len(s) else np.empty(0))
    return cuts


# the parameters a distributed fit takes, besides client and timeout
_SUPPORTED = {"objective", "n_estimators", "learning_rate", "max_depth", "max_bin",
              "min_child_weight", "reg_lambda", "reg_alpha", "gamma", "max_delta_step",
              "colsample_bytree", "colsample_bylevel", "colsample_bynode", "n_jobs",
              "random_state", "verbosity", "importance_type", "log_period"}


class _DaskMixin:
    """Fit on the workers; predict where the partitions live; ``to_local``."""

    def _check_supported(self):
        defaults = self._local_class()().get_params()
        for name, value in self._local_params().items():
            if name in _SUPPORTED:
                continue
            default = defaults[name]
            same = value is default or (not isinstance(value, (list, dict, np.ndarray))
                                        and value == default)
            if not same:
                raise ValueError(f"{type(self).__name__} does not support {name}={value!r} "
                                 f"yet: leave it at its default ({default!r}) or fit the "
                                 f"local estimator")
        expected = "log_loss" if self._local_class() is GBTClassifier else "squared_error"
        if not (isinstance(self.objective, str) and self.objective == expected):
            raise ValueError(f"{type(self).__name__} supports objective={expected!r} only "
                             f"yet, got {self.objective!r}")
        if self.max_depth is None or not 1 <= self.max_depth <= 32:
            raise ValueError(f"{type(self).__name__} grows depthwise trees: max_depth must "
                             f"be in 1..32, got {self.max_depth!r}")
        if not isinstance(self.timeout, numbers.Real) or not self.timeout > 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {self.timeout!r}")

    def _local_params(self):
        names = inspect.signature(self._local_class().__init__).parameters
        return {k: getattr(self, k) for k in names if k != "self"}

    def _fit_distributed(self, X, y, sample_weight, n_classes):
        self._check_supported()
        client = self.client if self.client is not None else default_client()
        local = self._local_class()(**self._local_params())
        params = local._boost_params()
        grower = GrowerParams.from_boost(params)
        shards, data = _shards(client, X, y, sample_weight, self.n_jobs, self.timeout)
        if not shards:
            raise ValueError("X has no partitions on the cluster's workers")
        T = self.timeout
        t0 = time.perf_counter()
        # bin edges from the merged summaries
        summaries = _wait_all([s.summaries(SUMMARY_ENTRIES_PER_BIN * params.max_bin)
                               for s in shards], T, "the column summaries")
        mapper = BinMapper.from_cuts(*_flat(_cuts(summaries, params.max_bin)))
        # the starting value
        sums = _in_order(_wait_all([s.label_sums(n_classes) for s in shards], T,
                                   "the label sums"))
        if n_classes > 2:
            objective = _obj.Softmax(n_classes)
            base = objective.init_raw(np.arange(n_classes, dtype=np.float64), sums)
        elif n_classes == 2:
            objective = _obj.Logistic()
            base = objective.init_raw(np.array([sums[1] / sums.sum()]), None)
        else:
            objective = _obj.SquaredError()
            base = objective.init_raw(np.array([sums[0] / sums[1]]), None)
        n_rows = sum(_wait_all([s.start(mapper, objective, base) for s in shards], T,
                               "binning the rows"))
        del data   # (the shards hold their rows: the partitions' results may go)
        if n_rows == 0:
            raise ValueError("X has no rows")
        t1 = time.perf_counter()
        ensemble = TreeEnsemble(X.shape[1], base)
        K = objective.n_outputs
        rng = local._rng()
        seed = int(rng.randint(0, 2 ** 31 - 1))
        traffic = {"round_trips": 0, "bytes_received": 0}
        builder = _TreeBuilder(shards, mapper, grower, T, traffic)
        leaves = []
        for it in range(params.n_estimators):
            roots = _wait_all([s.round(leaves, K) for s in shards], T, "the round's gradients",
                              traffic)
            leaves = []
            for k in range(K):
                seeds = np.random.default_rng([seed, it]).integers(0, 2 ** 63, size=K)
                nodes, values = builder.grow(k, [r[k] for r in roots], params.learning_rate,
                                             int(seeds[k]))
                ensemble.add_tree(nodes, k)
                leaves.append((k, values))
        _wait_all([s.finish(leaves) for s in shards], T, "the last round's leaves")
        ensemble._flush()
        local.is_categorical_ = None
        local._cat_encoder = None
        local._ensemble = ensemble
        local._objective = objective
        local._bin_mapper = mapper
        local.n_features_in_ = X.shape[1]
        local.n_estimators_ = params.n_estimators
        local.best_iteration_ = params.n_estimators - 1
        local.fit_info_ = {"bin_seconds": t1 - t0, "boost_seconds": time.perf_counter() - t1}
        trees = max(params.n_estimators * K, 1)
        self.fit_stats_ = {"workers": len(shards), "trees": params.n_estimators * K,
                           "round_trips_per_tree": traffic["round_trips"] / trees,
                           "bytes_received_per_tree": traffic["bytes_received"] / trees}
        return local

    def to_local(self):
        """The fitted model as the local estimator (``GBTRegressor`` or
        ``GBTClassifier``): it predicts, saves, loads and explains like any other."""
        if not hasattr(self, "_local"):
            raise AttributeError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self._local

    def _map_rows(self, X, method, dtype, n_columns):
        """``method`` of the local model on each partition of X, where it lives."""
        model = self.to_local()
        X = _row_blocks(X)

        def block(part):
            if part.shape[0] == 0:   # (an empty partition: the local model refuses no rows)
                return np.empty((0, n_columns) if n_columns else 0, dtype=dtype)
            return getattr(model, method)(part)

        if n_columns:
            return X.map_blocks(block, dtype=dtype, chunks=(X.chunks[0], (n_columns,)))
        return X.map_blocks(block, dtype=dtype, drop_axis=1)


class _TreeBuilder:
    """Grows one depthwise tree on the shards' histograms, level by level."""

    def __init__(self, shards, mapper, params, timeout, traffic):
        self.shards = shards
        self.traffic = traffic
        self.p = params
        self.timeout = timeout
        self.n_bins = np.ascontiguousarray(mapper.n_bins_, dtype=np.intc)
        self.bin_offsets = np.ascontiguousarray(mapper.bin_offsets_, dtype=np.intc)
        self.thresholds = mapper.bin_thresholds()
        self.n_features = self.n_bins.shape[0]

    def _scan(self, hist, sums, count, depth, mask):
        p = self.p
        if depth >= p.max_depth or count < 2:
            return None
        return find_best_split_outputs(hist[None], self.n_bins, self.bin_offsets, sums[None],
                                       p.reg_lambda, p.reg_alpha, p.min_child_weight,
                                       p.max_delta_step, p.gamma, mask, 1)

    def grow(self, t, roots, learning_rate, seed):
        """Tree ``t`` of the round from the shards' root histograms; returns its nodes
        (NODE_DTYPE) and its leaves' values by node id."""
        p = self.p
        columns = ColumnSampler(self.n_features, p)
        columns.begin(seed)
        hist = _in_order([r[0] for r in roots])
        sums = _in_order([r[1] for r in roots])
        # per node: sums (2,), count, depth, histogram, split
        nodes = [dict(sums=sums, count=int(sum(r[2] for r in roots)), depth=0, hist=hist)]
        nodes[0]["split"] = self._scan(hist, sums, nodes[0]["count"], 0, columns.mask(0, 0))
        level = [0]
        children = {}
        while level:
            splits, built = [], []
            for i in level:
                s = nodes[i]["split"]
                if s is None:
                    continue
                gain, f, b, default_left, left_sums, _ = s
                left, right = len(nodes), len(nodes) + 1
                depth = nodes[i]["depth"] + 1
                sums_l, sums_r = left_sums[0], nodes[i]["sums"] - left_sums[0]
                nodes += [dict(sums=sums_l, depth=depth), dict(sums=sums_r, depth=depth)]
                children[i] = (left, right)
                # the child of the smaller hessian sum is built, the other derived
                build = -1
                if depth < p.max_depth:
                    build = left if sums_l[1] <= sums_r[1] else right
                splits.append((i, int(f), int(b), bool(default_left), left, right, build))
                built.append(build)
            if not splits:
                break
            answers = _wait_all([s.level(t, splits) for s in self.shards], self.timeout,
                                "a level of a tree", self.traffic)
            counts, built = _in_order([a[0] for a in answers]), _in_order([a[1] for a in answers])
            nxt = []
            j = 0
            for k, (i, f, b, default_left, left, right, build) in enumerate(splits):
                nodes[left]["count"], nodes[right]["count"] = int(counts[2 * k]), int(counts[2 * k + 1])
                if build >= 0:
                    small = built[j]
                    j += 1
                    other = right if build == left else left
                    nodes[build]["hist"] = small
                    nodes[other]["hist"] = nodes[i]["hist"] - small
                nodes[i]["hist"] = None
                for c in (left, right):
                    node = nodes[c]
                    node["split"] = (self._scan(node["hist"], node["sums"], node["count"],
                                                node["depth"], columns.mask(c, node["depth"]))
                                     if node.get("hist") is not None else None)
                    if node["split"] is not None:
                        nxt.append(c)
                    else:
                        node["hist"] = None
            level = nxt
        return self._emit(nodes, children, learning_rate)

    def _emit(self, nodes, children, learning_rate):
        p = self.p
        out = np.zeros(len(nodes), dtype=NODE_DTYPE)
        values = {}
        for i, node in enumerate(nodes):
            g, h = node["sums"]
            rec = out[i]
            rec["value"] = learning_rate * py_leaf_weight(g, h, p.reg_lambda, p.reg_alpha,
                                                          p.min_child_weight, p.max_delta_step)
            rec["cover"] = h
            rec["count"] = node["count"]
            rec["depth"] = node["depth"]
            if i in children:
                gain, f, b, default_left, _, _ = node["split"]
                rec["feature"] = f
                rec["bin_threshold"] = b
                rec["threshold"] = self.thresholds[self.bin_offsets[f] + b]
                rec["default_left"] = default_left
                rec["gain"] = gain
                rec["left"], rec["right"] = children[i]
                rec["is_leaf"] = 0
            else:
                rec["feature"] = rec["left"] = rec["right"] = -1
                rec["is_leaf"] = 1
                values[i] = float(rec["value"])
        return out, values


def _in_order(arrays):
    """The sum of the shards' arrays, added in shard order (the model must not depend
    on which worker answers first)."""
    total = np.array(arrays[0], dtype=arrays[0].dtype, copy=True)
    for a in arrays[1:]:
        total += a
    return total


def _flat(cuts):
    ptr = np.zeros(len(cuts) + 1, dtype=np.int64)
    np.cumsum([c.size for c in cuts], out=ptr[1:])
    return (np.concatenate(cuts) if cuts else np.empty(0)), ptr


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

    After ``fit``, ``fit_stats_`` holds the number of workers and trees, and the
    round trips to the workers and the bytes of the arrays they sent per tree.
    """

    def __init__(self, client=None, timeout=600.0, **params):
        GBTRegressor.__init__(self, **params)
        self.client = client
        self.timeout = timeout

    @staticmethod
    def _local_class():
        return GBTRegressor

    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (dask array or dataframe of numbers), ``y`` and ``sample_weight``
        (dask arrays or series); the data stay where they are."""
        self._local = self._fit_distributed(X, y, sample_weight, 0)
        self.n_features_in_ = self._local.n_features_in_
        return self

    def predict(self, X):
        """Predictions as a dask array, computed where the partitions of X live."""
        return self._map_rows(X, "predict", np.float64, 0)


class DaskGBTClassifier(_DaskMixin, GBTClassifier):
    """``GBTClassifier`` trained on a Dask cluster, the rows staying on the workers
    (binary or multiclass log loss). Parameters as ``DaskGBTRegressor``'s."""

    def __init__(self, client=None, timeout=600.0, **params):
        GBTClassifier.__init__(self, **params)
        self.client = client
        self.timeout = timeout

    @staticmethod
    def _local_class():
        return GBTClassifier

    def fit(self, X, y, sample_weight=None):
        """Fit on ``X``, the labels ``y`` and ``sample_weight`` (dask collections)."""
        y = _row_blocks(y)
        classes = np.asarray(da.unique(y).compute())
        if classes.shape[0] < 2:
            raise ValueError(f"y must contain at least two classes; got {classes.shape[0]}")
        codes = y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.float64),
                             dtype=np.float64)
        self._local = self._fit_distributed(X, codes, sample_weight, classes.shape[0])
        self._local.classes_ = classes
        self.classes_ = classes
        self.n_features_in_ = self._local.n_features_in_
        return self

    def predict(self, X):
        """Labels as a dask array, computed where the partitions of X live."""
        return self._map_rows(X, "predict", self.classes_.dtype, 0)

    def predict_proba(self, X):
        """Class probabilities as a dask array (n_rows, n_classes)."""
        return self._map_rows(X, "predict_proba", np.float64, self.classes_.shape[0])


_with_dask_signature(DaskGBTRegressor, GBTRegressor)
_with_dask_signature(DaskGBTClassifier, GBTClassifier)
