"""An estimator's fit on data larger than memory (``ExternalData``).

``GBTRegressor().fit(ExternalData(source))`` (and ``GBTClassifier``,
``GBTRanker``) reads the data in chunks, three times over:

1. a streaming pass for the bin edges (``blocks.sketch_pass``): each column's
   finite values go into a weighted quantile sketch (``sketch.Sketch``, the
   XGBoost paper's mergeable summaries, error ``1 / (SKETCH_BINS * max_bin)``),
   from which the edges are cut as ``BinMapper.fit`` cuts them (exact when a
   column has at most ``2 * SKETCH_BINS * max_bin`` distinct values); the
   labels' sums (or classes) and the row count come too, and a ranker's query
   ids are checked to be sorted;
2. a pass that bins the chunks and writes them (``blocks.block_pass``), in
   blocks of ``block_rows`` rows (uint8 bins by rows and by columns, labels,
   weights), as raw arrays in a cache folder of its own; sparse chunks (SciPy,
   when the first chunk is) are written as sparse blocks: each row's offset into
   the stored entries, the entries, and the copies by columns the partition
   reads (``SparseBinned``), so a block's size follows its stored entries, not
   its rows times columns;
3. boosting over the blocks (``gbtree.distributed.levelwise``): trees grown a
   level (or, for lossguide trees, a split) at a time, each reading the blocks
   where the level's nodes have rows once from disk (mapped, not copied), the
   next block read on a thread while the current one is worked on. In memory
   stay, per row, the raw scores and gradients (16 bytes for one output) and,
   while a tree grows, the row's index in its block (4 bytes); of the blocks,
   the one worked on and the one being read.

The cache folder is new for every fit (under ``cache_dir``, or each of its
folders in turn, or the system's temporary folder) and is removed when the fit
ends, whether it succeeds or not, unless ``keep_cache=True``; no fit ever reads
a cache it did not write.
"""
import shutil
import tempfile
import time

import numpy as np

from ..data.binning import BinMapper, flat_cuts
from ..data.categorical import frame_of_values, resolve_columns
from ..data.validation import check_base_margin, class_factors
from ..distributed.blocks import block_pass, sketch_pass, write_or_explain
from ..distributed.leaf_quantiles import SELECTED
from ..distributed.levelwise import boost
from ..distributed.row_shard import RowShard
from ..boosting.logs import LOGGER
from ..kernels._threads import effective_n_threads
from .levelwise_fit import (CATEGORICAL, GOSS, check_params, continued, fitted, make_objective,
                            prepare, round_settings)


def fit_external(estimator, local_class, data, eval_sets_of):
    """Fit ``estimator`` (a ``GBTRegressor``, ``GBTClassifier`` or ``GBTRanker``, of
    ``local_class``) on ``data`` (an ``ExternalData``) out of core;
    ``eval_sets_of(objective)`` gives the eval sets (in memory, checked against the
    fitted width). Returns the estimator."""
    classifier = local_class._kind == "classifier"
    ranker = local_class._kind == "ranker"
    fit_name = f"{type(estimator).__name__}.fit on ExternalData"
    check_params(estimator, local_class, fit_name, CATEGORICAL | GOSS)
    params = estimator._boost_params()
    n_threads = effective_n_threads(estimator.n_jobs)
    t0 = time.perf_counter()
    rng = ranking = None
    if ranker:
        ranking, rng = estimator._seeded_objective()

    def objective_of(width):   # (a regressor's y of several columns: its targets, or aft's)
        return ranking if ranker or classifier else make_objective(estimator, 0, fit_name, width)
    absent_missing = bool(estimator.absent_as_missing)
    encoder, names = _categories_pass(data, estimator)
    encode = None if encoder is None else _encoding(encoder, estimator)
    cuts, n_features, n_rows, weighted, sparse, labels, objective, y_width, columns = \
        sketch_pass(data, params.max_bin, objective_of, ranker, absent_missing, n_threads,
                     encode)
    if params.verbosity >= 1:
        LOGGER.info(f"[gbtree] pass 1 of 3, bin edges: {n_rows} rows of {n_features} "
                    f"features read, {time.perf_counter() - t0:.3f}s")
    if encoder is None and columns is not None and all(isinstance(c, str) for c in columns):
        names = columns
    mapper = BinMapper.from_cuts(*flat_cuts(cuts), absent_as_missing=absent_missing)
    classes = factors = None
    if classifier:
        classes = np.array(sorted(labels))
        if classes.shape[0] < 2:
            raise ValueError(f"y must contain at least two classes; got {classes.shape[0]}")
        objective = make_objective(estimator, classes.shape[0], fit_name)
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
    init, old_mapper, done = continued(estimator, objective, n_features, fit_name, params)
    if init is not None:
        if params.n_estimators == 0:
            return estimator
        mapper = old_mapper
    eval_sets, grower_params = prepare(estimator, params, n_features, encoder, names,
                                       lambda: eval_sets_of(objective))
    folders = []
    shard = RowShard()
    try:
        for d in (data.cache_dir if isinstance(data.cache_dir, (list, tuple))
                  else [data.cache_dir]):
            folders.append(write_or_explain(
                lambda: tempfile.mkdtemp(prefix="gbtree-blocks-", dir=d), d))
        data.cache_paths_ = list(folders)
        blocks = block_pass(data, folders, mapper, classes, factors, n_features, weighted,
                             y_width, objective.infinite_y, sparse, n_rows, n_threads, encode)
        t1 = time.perf_counter()
        if params.verbosity >= 1:
            LOGGER.info(f"[gbtree] pass 2 of 3, binned blocks: {len(blocks)} written, "
                        f"{t1 - t0:.3f}s; pass 3: boosting")
        # pass 3: boosting over the blocks
        margin = None
        if blocks and blocks[0].margin_width:   # (the rows' starting raw scores)
            margin = check_base_margin(np.concatenate([b.margin() for b in blocks]),
                                       n_rows, objective.n_outputs)
        shard.start(blocks, [b.n_rows for b in blocks], mapper, objective, base, n_threads,
                    grower_params, prefetch=True, init=init, margin=margin)
        if isinstance(objective, SELECTED) and init is None:
            base = shard.start_value()

        def call(method, *args):
            return [getattr(shard, method)(*args)]

        ensemble, n_rounds, state = boost(call, params, objective, base, n_features, n_rows,
                                          eval_sets=eval_sets, init=init,
                                          **round_settings(estimator, objective, rng))
    finally:
        if hasattr(shard, "blocks"):
            shard.close()   # (the thread reading ahead lets go of its block)
        if not data.keep_cache:
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
    return fitted(estimator, ensemble, objective, mapper, n_rounds, state,
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
