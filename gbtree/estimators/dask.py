"""Training on a Dask cluster: ``DaskGBTRegressor``, ``DaskGBTClassifier`` and
``DaskGBTRanker``.

The rows stay on the workers that hold them. Each worker that holds partitions of
the training data gets one ``dask_shards.Shard`` (a Dask actor) holding those rows: their
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
import inspect
import numbers
import time

import numpy as np

# (first: without the dask extra, its ImportError says how to install it)
from ..distributed.dask_shards import (SUMMARY_ENTRIES_PER_BIN, aligned, checked_labels,
                                       gathered, merged_cuts, regroup, row_blocks,
                                       start_shards, wait_all)

import dask
import dask.array as da
import pandas as pd
import dask.dataframe as dd
from distributed import default_client

from ..boosting.logs import LOGGER
from ..data.binning import SKETCH_SUBSAMPLE, BinMapper, flat_cuts
from ..data.categorical import frame_of_values, resolve_columns
from ..data.validation import class_factors
from ..distributed.leaf_quantiles import SELECTED
from ..distributed.levelwise import boost
from ..distributed.shard_exchange import feature_ranges, sum_in_order
from .levelwise_fit import (CATEGORICAL, check_params, continued, fitted, local_params,
                            make_objective, prepare, round_settings)
from .sklearn import GBTClassifier, GBTRanker, GBTRegressor

__all__ = ["DaskGBTRegressor", "DaskGBTClassifier", "DaskGBTRanker"]


def _encoded(client, X, model, timeout, continuing=False):
    """(X, its categorical columns' encoder, its column names): with
    ``categorical_features``, X (a dask DataFrame) with the columns encoded as a local
    fit on its rows encodes them (the codes of the categories its rows hold, and
    indicator columns), each partition where it lives; else (X, None, None).
    ``continuing`` (a warm start): with the fitted model's encoder."""
    if model.categorical_features is None:
        return X, None, None
    if not isinstance(X, dd.DataFrame):
        raise TypeError(f"categorical_features needs a dask DataFrame X, got "
                        f"{type(X).__name__}")
    meta = X._meta
    if continuing:   # (its columns checked, as a local warm start checks them)
        model._check_same_categorical(meta)
        encoder = model._cat_encoder
        if encoder is None:
            return X, None, None
    else:
        columns = resolve_columns(model.categorical_features, meta)
        if not columns:
            model._categorical_encoder(meta)   # (checks the other parameters)
            return X, None, None
        values = [X.iloc[:, j].dropna().unique() for j in columns]
        try:
            values = [np.asarray(v) for v in
                      [f.result(timeout=timeout) for f in client.compute(values)]]
        except TimeoutError:
            raise TimeoutError(f"gbtree.dask: the categories were not computed within "
                               f"{timeout} s") from None
        encoder = model._categorical_encoder(
            frame_of_values(meta, columns, values)).fit_seen()
    width = encoder.width + encoder.indicators.shape[0]

    def encode(part):
        codes = np.asarray(encoder.codes(part), dtype=np.float64)
        return pd.DataFrame(encoder.transform(codes), index=part.index)

    names = list(meta.columns) if all(isinstance(c, str) for c in meta.columns) else None
    return (X.map_partitions(encode, meta=pd.DataFrame(
        {k: pd.Series(dtype=np.float64) for k in range(width)})), encoder, names)


# what ``wait_all`` names when a shard's call fails
_CALLS = {"grow": "growing a round's trees", "finish": "ending the fit"}


class _DaskMixin:
    """Fit on the workers; predict where the partitions live; ``to_local``."""

    def _fit_distributed(self, X, y, sample_weight, eval_args, classes=None, qid=None,
                         base_margin=None):
        """Fit the local estimator's model on the workers; ``eval_args``: what
        ``_client_eval_sets`` takes; ``classes``: a classifier's; ``qid``: a ranker's
        query ids; ``base_margin``: the rows' starting raw scores."""
        fit_name = type(self).__name__
        local_class = self._local_class()
        check_params(self, local_class, fit_name, CATEGORICAL)
        if not isinstance(self.timeout, numbers.Real) or not self.timeout > 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {self.timeout!r}")
        client = self.client if self.client is not None else default_client()
        if (hasattr(self, "_local") and isinstance(self.warm_start, (bool, np.bool_))
                and self.warm_start):   # (the model to continue)
            model = self._local.set_params(**local_params(self, local_class))
        else:
            model = local_class(**local_params(self, local_class))
        X, encoder, names = _encoded(client, X, model, self.timeout,
                                     model._continues())
        # (a dask array of known row chunks: its rows are counted; its blocks' shapes
        # are checked by the shards that hold them)
        X = row_blocks(X, shapes_checked=False)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
        params = model._boost_params()
        rng = None
        if qid is not None:
            objective, rng = model._seeded_objective()
        else:   # (a regressor's y of several columns: its targets, or aft's bounds)
            if y.ndim == 2 and y.shape[1] == 1:   # (a column vector: one target)
                y = row_blocks(y, name="y")[:, 0]
            objective = make_objective(model, 0 if classes is None else classes.shape[0], fit_name,
                                       y.shape[1] if y.ndim == 2 else 0)
        y = checked_labels(row_blocks(y, name="y"), infinite=objective.infinite_y)
        if classes is not None:
            model._set_classes(classes)
        # (a warm start: the model's edges; its rounds go on)
        init, mapper, done = continued(model, objective, X.shape[1], fit_name, params)
        if init is not None and params.n_estimators == 0:
            return self
        # (eval sets are validation-sized: the client holds and evaluates them)
        eval_sets, grower_params = prepare(
            model, params, X.shape[1], encoder, names,
            lambda: self._client_eval_sets(model, client, objective, *eval_args))
        shards, data = start_shards(client, X, y, sample_weight, self.n_jobs, self.timeout, qid,
                               base_margin)
        if not shards:
            raise ValueError("X has no partitions on the cluster's workers")
        T = self.timeout
        t0 = time.perf_counter()
        if qid is not None:
            regroup(shards, T)
        if init is None:
            # bin edges from the merged summaries (as a local fit, the edges of a sample
            # of about SKETCH_SUBSAMPLE rows: each row drawn at its place)
            fraction = min(1.0, SKETCH_SUBSAMPLE / max(X.shape[0], 1))
            seed = int(model._rng().randint(0, 2 ** 31 - 1)) if fraction < 1.0 else 0
            summaries = wait_all([s.summaries(SUMMARY_ENTRIES_PER_BIN * params.max_bin,
                                               fraction, seed) for s in shards], T,
                                  "the column summaries")
            mapper = BinMapper.from_cuts(*flat_cuts(merged_cuts(summaries, params.max_bin)),
                                         absent_as_missing=bool(model.absent_as_missing))
        # the starting value (a quantile of y: selected by the shards once connected)
        sums = wait_all([s.start_sums(objective) for s in shards], T, "the label sums")
        selected = isinstance(objective, SELECTED) and init is None
        base = (np.zeros(objective.n_outputs) if not objective.summable_start
                else objective.start_from_sums(sum_in_order(sums)))
        sizes = wait_all([s.start(mapper, objective, base, grower_params, init) for s in shards],
                          T, "binning the rows")
        n_rows = sum(sizes)
        if len(shards) > 1:
            ranges = feature_ranges(mapper.bin_offsets_, len(shards))
            wait_all([s.connect(shards, i, ranges, T) for i, s in enumerate(shards)], T,
                      "connecting the shards")
        del data   # (the shards hold their rows: the partitions' results may go)
        if n_rows == 0:
            raise ValueError("X has no rows")
        if selected:
            base = wait_all([s.start_value() for s in shards], T, "the starting value")[0]
        t1 = time.perf_counter()
        if params.verbosity >= 1:
            LOGGER.info(f"[gbtree] {n_rows} rows binned on {len(shards)} worker(s), "
                        f"{t1 - t0:.3f}s; boosting")
        traffic = {"round_trips": 0, "bytes_received": 0}

        def call(method, *args):   # (the traffic per tree: the last call is once per fit)
            try:
                return wait_all([getattr(s, method)(*args) for s in shards], T,
                                 _CALLS[method], traffic if method != "finish" else None)
            except Exception:
                for s in shards:   # (the others may be waiting for the one that failed)
                    try:
                        s.abandon()
                    except Exception:   # (its worker is gone)
                        pass
                raise

        ensemble, n_rounds, state = boost(call, params, objective, base, X.shape[1], n_rows,
                                          eval_sets=eval_sets, init=init,
                                          **round_settings(model, objective, rng))
        fitted(model, ensemble, objective, mapper, n_rounds, state,
               {"bin_seconds": t1 - t0, "boost_seconds": time.perf_counter() - t1}, done)
        trees = max(n_rounds * objective.n_outputs, 1)
        sent = wait_all([s.traffic() for s in shards], T, "the traffic counts")
        self.fit_stats_ = {"workers": len(shards), "rows_per_worker": sizes,
                           "trees": n_rounds * objective.n_outputs,
                           "round_trips_per_tree": traffic["round_trips"] / trees,
                           "bytes_received_per_tree": traffic["bytes_received"] / trees,
                           "exchanges_per_tree": sent[0][0] / trees,
                           "messages_per_tree": sent[0][1] / trees,
                           "bytes_between_workers_per_tree": sum(b for _, _, b in sent) / trees}
        self._local = model
        for name in ("n_features_in_", "n_estimators_", "best_iteration_", "evals_result_",
                     "best_score_"):
            if hasattr(model, name):
                setattr(self, name, getattr(model, name))
            elif hasattr(self, name):
                delattr(self, name)
        return self

    def _client_eval_sets(self, model, client, objective, eval_set, sample_weight_eval_set,
                          base_margin_eval_set=None):
        """The eval sets, gathered to the client and checked by ``model``."""
        return model._checked_eval_sets(
            gathered(client, eval_set, self.timeout, "eval_set"),
            gathered(client, sample_weight_eval_set, self.timeout, "sample_weight_eval_set"),
            objective, gathered(client, base_margin_eval_set, self.timeout,
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
                X = row_blocks(X)
                lengths, parts = list(X.chunks[0]), X.to_delayed().ravel()
            margins = ([None] * len(parts) if base_margin is None else
                       aligned(base_margin, "base_margin", tuple(lengths)).to_delayed().ravel())
            return da.concatenate([
                da.from_delayed(dask.delayed(block)(part, margin),
                                shape=(n, n_columns) if n_columns else (n,), dtype=dtype)
                for part, margin, n in zip(parts, margins, lengths)])
        X = row_blocks(X)
        if n_columns:
            return X.map_blocks(block, dtype=dtype, chunks=(X.chunks[0], (n_columns,)))
        return X.map_blocks(block, dtype=dtype, drop_axis=1)


def _with_dask_signature(cls, local_class):
    """``cls.__init__`` (the local estimator's, then ``client`` and ``timeout``), its
    signature (the local estimator's parameters, then those two: scikit-learn's
    get_params and clone read it) and ``cls._local_class()`` (``local_class``)."""
    def __init__(self, client=None, timeout=600.0, **params):
        local_class.__init__(self, **params)
        self.client = client
        self.timeout = timeout

    sig = inspect.signature(local_class.__init__)
    extra = [inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None),
             inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=600.0)]
    __init__.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
    __init__.__qualname__ = f"{cls.__name__}.__init__"
    cls.__init__ = __init__
    cls._local_class = staticmethod(lambda: local_class)
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

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            base_margin=None, base_margin_eval_set=None):
        """Fit on ``X``, the labels ``y`` and ``sample_weight`` (dask collections);
        eval sets and base margins as ``DaskGBTRegressor.fit``'s."""
        y = checked_labels(row_blocks(y, name="y"), classes=True)
        classes = np.asarray(da.unique(y).compute())
        if classes.shape[0] < 2:
            raise ValueError(f"y must contain at least two classes; got {classes.shape[0]}")
        codes = y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.float64),
                             dtype=np.float64)
        if self.class_weight is not None:   # (multiplied into sample_weight, as locally)
            counts = da.bincount(codes.astype(np.intp), minlength=classes.shape[0]).compute()
            factors = class_factors(self.class_weight, classes, counts)
            cw = codes.map_blocks(lambda b: factors[b.astype(np.intp)], dtype=np.float64)
            sample_weight = cw if sample_weight is None else row_blocks(sample_weight, name="sample_weight") * cw
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

    def fit(self, X, y, *, qid, sample_weight=None, eval_set=None, eval_qid=None,
            eval_group=None, sample_weight_eval_set=None):
        """Fit on ``X``, the relevance labels ``y``, the query id of every row ``qid``
        and ``sample_weight`` (equal within a query; dask collections, partitioned as
        X or not); eval sets as ``GBTRanker.fit``'s (gathered to the client)."""
        return self._fit_distributed(X, y, sample_weight,
                                     (eval_set, eval_group, eval_qid, sample_weight_eval_set),
                                     qid=qid)

    def _client_eval_sets(self, model, client, objective, eval_set, eval_group, eval_qid,
                          sample_weight_eval_set):
        return model._ranking_eval_sets(
            gathered(client, eval_set, self.timeout, "eval_set"), eval_group,
            gathered(client, eval_qid, self.timeout, "eval_qid"),
            gathered(client, sample_weight_eval_set, self.timeout, "sample_weight_eval_set"),
            objective, None)

    def predict(self, X):
        """Ranking scores as a dask array, computed where the partitions of X live."""
        return self._map_rows(X, "predict", np.float64, 0)


_with_dask_signature(DaskGBTRegressor, GBTRegressor)
_with_dask_signature(DaskGBTRanker, GBTRanker)
_with_dask_signature(DaskGBTClassifier, GBTClassifier)
