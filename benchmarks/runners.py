"""The one place that says how each library is fitted, timed and predicted.

Every runner maps the same :class:`Config` to its library's parameters:

==================  ==========================================================
learning rate       ``learning_rate`` everywhere
rounds              ``n_estimators`` / ``num_boost_round`` / ``max_iter`` / ``iterations``
tree size           best-first (leaf-wise) growth to ``leaves`` leaves, no depth
                    limit (CatBoost's symmetric variant: ``depth=8``, 256 leaves;
                    its Lossguide variant: ``depth=16``, CatBoost's maximum)
bins                ``max_bin`` value bins + one for missing values: gbtree
                    ``max_bin=max_bin+1``, XGBoost/LightGBM ``max_bin``, sklearn
                    ``max_bins``, CatBoost ``border_count=max_bin-1`` borders
leaf constraints    min hessian sum 1 (XGBoost ``min_child_weight``, LightGBM
                    ``min_sum_hessian_in_leaf``; sklearn and CatBoost have no such
                    knob), at least 1 row per leaf, L2 penalty ``reg_lambda``
no randomness       no row or column subsampling, no early stopping; CatBoost:
                    ``bootstrap_type="No"``, ``random_strength=0``
row sampling        (when asked for) ``subsample``: gbtree/XGBoost ``subsample``,
                    LightGBM ``bagging_fraction`` + ``bagging_freq=1``, sklearn none;
                    ``goss``: gbtree ``sampling_method="goss"``, LightGBM
                    ``data_sample_strategy="goss"``, both at top 20 % + 10 % of the rest
tasks               binary (P(y=1)), regression, multiclass (softmax, one tree per
                    class and round; XGBoost ``multi:softprob``, LightGBM
                    ``multiclass``), ranking (LambdaMART NDCG: gbtree ``GBTRanker``,
                    LightGBM ``lambdarank`` with ``lambdarank_truncation_level``,
                    XGBoost ``rank:ndcg`` with ``topk`` pairs per document)
threads             ``threads`` passed to every library's own parameter; sklearn
                    additionally runs under ``threadpool_limits``
SHAP values         exact path-dependent TreeSHAP: gbtree ``predict(pred_contribs=True)``
                    and ``pred_interactions``, XGBoost ``Booster.predict`` on a
                    ``DMatrix`` (made before the clock), LightGBM ``pred_contrib``
                    (no interactions), CatBoost ``get_feature_importance`` of type
                    ``ShapValues`` / ``ShapInteractionValues`` on a ``Pool``
tree shape          (``depth`` > 0) depthwise trees of that depth: gbtree and XGBoost
                    ``max_depth``, others refuse
split finding       (``tree_method="exact"``) exact greedy splits: gbtree and XGBoost
                    ``tree_method="exact"``; (``"approx"``) candidates between
                    hessian-weighted quantiles proposed per tree: gbtree's
                    default (``max_bin`` - 1 parts), XGBoost ``max_bin`` (both on a ``DMatrix``:
                    they sketch every tree, XGBoost's exact method takes no
                    ``QuantileDMatrix``), others refuse
several targets     (``n_targets`` > 1, regression) one tree per target and round, or
                    (``vector_leaves``) one tree a round whose leaves hold a vector:
                    gbtree and XGBoost ``multi_strategy="multi_output_tree"``, CatBoost
                    ``loss_function="MultiRMSE"`` (vector leaves only); LightGBM and
                    sklearn have neither
random forests      (``forest``) ``rounds`` trees averaged, each on 80 % of the rows and
                    80 % of the features per node, L2 penalty 1e-5: gbtree
                    ``num_parallel_tree=rounds`` in one round at learning rate 1, XGBoost
                    the same, LightGBM ``boosting="rf"`` (bagging 0.8 every tree,
                    ``feature_fraction_bynode=0.8``), sklearn ``RandomForest*`` with
                    ``max_samples=0.8``, ``max_features=0.8``, ``max_leaf_nodes=leaves``
                    (exact splits, no bins, no hessian knob); CatBoost has none
model files         gbtree JSON and binary (``save_model``, ``gbtree.load_model``),
                    XGBoost JSON and UBJSON (``xgb.Booster(model_file=...)``),
                    LightGBM text (``lgb.Booster(model_file=...)``), CatBoost cbm
                    and JSON; sklearn has only pickle and is left out
==================  ==========================================================
"""
import contextlib
import importlib
import importlib.util
import os
import re
import time
from dataclasses import asdict, dataclass

import numpy as np

# Levels of quantised gradients: gbtree's default (grad_quant_bins="auto") and the
# lightgbm-quantized variant.
QUANT_BINS = 64
# GOSS: the share of rows with the largest |gradient| kept, and of the rest drawn.
GOSS_TOP, GOSS_OTHER = 0.2, 0.1
# random forests (Config.forest): the share of rows per tree and of features per node
# (XGBoost's XGBRF defaults), and its L2 penalty
RF_ROWS, RF_COLS, RF_LAMBDA = 0.8, 0.8, 1e-5


class Unsupported(Exception):
    """A setting the library does not have; the run is reported as ``unsupported``."""


def load(path, mmap=False):
    """An ``.npy`` array (memory-mapped read-only with ``mmap``), or a SciPy CSR
    matrix saved with ``scipy.sparse.save_npz``."""
    if path.endswith(".npz"):
        import scipy.sparse
        return scipy.sparse.load_npz(path)
    return np.load(path, mmap_mode="r" if mmap else None)


@dataclass(frozen=True)
class Config:
    task: str                      # "binary", "regression", "multiclass" or "ranking"
    rounds: int = 100
    learning_rate: float = 0.1
    leaves: int = 255
    max_bin: int = 255             # value bins, not counting the missing-value bin
    threads: int = 2
    seed: int = 0
    min_child_weight: float = 1.0  # minimum hessian sum in a leaf
    reg_lambda: float = 1.0        # L2 penalty on leaf values
    n_classes: int = 2             # multiclass: number of classes
    subsample: float = 1.0         # share of rows per tree (uniform sampling)
    goss: bool = False             # gradient-based one-side sampling, top 20 % + 10 %
    truncation: int = 30           # ranking: documents per query that pairs start from
    forest: bool = False           # a random forest of ``rounds`` trees (RF_ROWS, RF_COLS)
    depth: int = 0                 # > 0: depthwise trees of this depth instead of ``leaves``
    tree_method: str = "hist"      # or "exact", "approx" (gbtree, XGBoost)
    n_targets: int = 1             # regression: the columns of y
    vector_leaves: bool = False    # several targets: one tree a round whose leaves hold a vector
    symmetric: bool = False        # symmetric (oblivious) trees of ``depth`` levels

    @property
    def binary(self):
        return self.task == "binary"

    @property
    def classifier(self):
        return self.task in ("binary", "multiclass")

    def as_dict(self):
        return asdict(self)


class Runner:
    """Base class: subclasses implement :meth:`estimator`, and override
    :meth:`fit` / :meth:`predict` when the native API gives a separate binning
    time or is what the library's own scikit-learn wrapper uses anyway."""

    name = ""            # key used on the command line
    module = ""          # import name, to check it is installed
    notes = ""           # parameter differences worth knowing, shown in the README

    def is_installed(self):
        return importlib.util.find_spec(self.module) is not None

    def load(self):
        """Import the library (outside any timed region); return its version."""
        mod = importlib.import_module(self.module)
        return getattr(mod, "__version__", "?")

    def threads(self, cfg):
        """Context manager every fit/predict runs in."""
        return contextlib.nullcontext()

    def estimator(self, cfg):
        """A scikit-learn-API estimator with the equivalent parameters."""
        raise NotImplementedError

    def fit(self, cfg, X, y, qid=None):
        """Fit (``qid``: the query of each row, ranking only); return
        ``(model, bin_seconds or None)``."""
        return self.estimator(cfg).fit(X, y, **self.fit_group(cfg, qid)), None

    def fit_group(self, cfg, qid):
        """The keyword arguments of ``estimator.fit`` that say which rows form a query."""
        return {} if qid is None else {"group": group_sizes(qid)}

    def predict(self, cfg, model, X):
        """Predict with what :meth:`fit` returned: P(y=1) for binary, the probabilities
        (n, classes) for multiclass, values for regression and ranking."""
        return estimator_scores(cfg, model, X)

    # -- explanations (workload "shap")
    def explain_input(self, cfg, X):
        """What :meth:`contribs` and :meth:`interactions` take for the rows ``X``
        (made before their clocks start)."""
        return X

    def contribs(self, cfg, model, data):
        """Exact (path-dependent) TreeSHAP values of what :meth:`fit` returned."""
        raise Unsupported(f"{self.name}: no SHAP values")

    def interactions(self, cfg, model, data):
        """SHAP interaction values."""
        raise Unsupported(f"{self.name}: no SHAP interaction values")

    # -- out of core (workload "external-memory")
    def fit_external(self, cfg, files):
        """A model fitted on the chunk files ``files`` ([X_path, y_path] each, ``.npy``;
        X an ``.npz`` CSR matrix for sparse data) by the library's out-of-core mode."""
        raise Unsupported(f"{self.name}: no out-of-core training")

    # -- model files (workload "model-files")
    FORMATS = {}    # name of an encoding -> file suffix

    def save_model(self, model, path):
        raise Unsupported(f"{self.name}: no model file format")

    def load_model(self, cfg, path):
        """A model that :meth:`predict` takes, read from ``path``."""
        raise Unsupported(f"{self.name}: no model file format")


def group_sizes(qid):
    """Sizes of the runs of equal ``qid`` (rows of a query are contiguous)."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.diff(np.r_[starts, len(qid)])


def estimator_scores(cfg, estimator, X):
    """P(y=1) (binary), the class probabilities (multiclass) or predictions
    (regression, ranking) of a scikit-learn-API estimator."""
    if cfg.binary:
        return estimator.predict_proba(X)[:, 1]
    return estimator.predict_proba(X) if cfg.classifier else estimator.predict(X)


class GbtreeRunner(Runner):
    name, module = "gbtree", "gbtree"

    def estimator(self, cfg):
        from gbtree import GBTClassifier, GBTRanker, GBTRegressor
        extra = {}
        if cfg.task == "ranking":
            cls = GBTRanker
            extra = dict(objective="rank:ndcg", lambdarank_truncation_level=cfg.truncation)
        else:
            cls = GBTClassifier if cfg.classifier else GBTRegressor
        if cfg.goss:
            extra.update(sampling_method="goss", top_rate=GOSS_TOP, other_rate=GOSS_OTHER)
        if cfg.vector_leaves:
            extra.update(multi_strategy="multi_output_tree")
        shape = dict(n_estimators=cfg.rounds, learning_rate=cfg.learning_rate,
                     subsample=cfg.subsample, reg_lambda=cfg.reg_lambda)
        if cfg.forest:
            shape = dict(n_estimators=1, num_parallel_tree=cfg.rounds, learning_rate=1.0,
                         subsample=RF_ROWS, colsample_bynode=RF_COLS, reg_lambda=RF_LAMBDA)
        tree = (dict(max_depth=cfg.depth, max_leaves=0,
                     grow_policy="symmetric" if cfg.symmetric else "depthwise") if cfg.depth
                else dict(max_depth=0, max_leaves=cfg.leaves, grow_policy="lossguide"))
        return cls(**tree, tree_method=cfg.tree_method, max_bin=cfg.max_bin + 1,
                   min_child_weight=cfg.min_child_weight, n_jobs=cfg.threads,
                   random_state=cfg.seed, **shape, **extra)

    def fit(self, cfg, X, y, qid=None):
        model = self.estimator(cfg).fit(X, y, **self.fit_group(cfg, qid))
        return model, model.fit_info_["bin_seconds"]

    def contribs(self, cfg, model, data):
        return model.predict(data, pred_contribs=True)

    def interactions(self, cfg, model, data):
        return model.predict(data, pred_interactions=True)

    def fit_external(self, cfg, files):
        from gbtree import ExternalData
        if files[0][0].endswith(".npz"):   # (CSR chunks: a source that loads them)
            source = lambda: ((load(X), load(y)) for X, y in files)  # noqa: E731
            return self.estimator(cfg).fit(ExternalData(source))
        return self.estimator(cfg).fit(ExternalData([tuple(f) for f in files]))

    FORMATS = {"JSON": ".json", "binary": ".gbt"}

    def save_model(self, model, path):
        model.save_model(path)

    def load_model(self, cfg, path):
        import gbtree
        return gbtree.load_model(path)


class GbtreeFloatRunner(GbtreeRunner):
    name = "gbtree-float"
    notes = ("`grad_quant_bins=None`: float gradients (the default, \"auto\", quantises them to "
             f"{QUANT_BINS} levels and takes leaf values from the exact ones)")

    def estimator(self, cfg):
        return super().estimator(cfg).set_params(grad_quant_bins=None)


class GbtreeSimdRunner(GbtreeRunner):
    """gbtree with its tree walk capped at one level (``GBTREE_SIMD``, set before the
    import: every runner loads in a fresh process)."""

    def __init__(self, level):
        self.level = level
        self.name = f"gbtree-{level}"
        self.notes = f"`GBTREE_SIMD={level}`: the tree walks of that level at most"

    def load(self):
        os.environ["GBTREE_SIMD"] = self.level
        return super().load()


class XGBoostRunner(Runner):
    name, module = "xgboost", "xgboost"
    notes = "fit = `QuantileDMatrix` (timed as binning) + `xgb.train`; predict = `inplace_predict`"

    OBJECTIVES = {"binary": "binary:logistic", "regression": "reg:squarederror",
                  "multiclass": "multi:softprob", "ranking": "rank:ndcg"}

    def _params(self, cfg):
        # Names accepted both by xgb.train and by the XGBModel constructor.
        if cfg.goss:
            raise Unsupported("XGBoost has no gradient-based one-side sampling (GOSS)")
        if cfg.symmetric:
            raise Unsupported("XGBoost has no symmetric trees")
        tree = (dict(grow_policy="depthwise", max_depth=cfg.depth) if cfg.depth
                else dict(grow_policy="lossguide", max_leaves=cfg.leaves, max_depth=0))
        params = dict(tree_method=cfg.tree_method, **tree, max_bin=cfg.max_bin,
                      learning_rate=cfg.learning_rate,
                      min_child_weight=cfg.min_child_weight, reg_lambda=cfg.reg_lambda,
                      subsample=cfg.subsample, colsample_bytree=1.0,
                      objective=self.OBJECTIVES[cfg.task])
        if cfg.task == "multiclass":
            params["num_class"] = cfg.n_classes
        if cfg.vector_leaves:
            params["multi_strategy"] = "multi_output_tree"
        if cfg.task == "ranking":
            params.update(lambdarank_pair_method="topk",
                          lambdarank_num_pair_per_sample=cfg.truncation)
        if cfg.forest:
            params.update(num_parallel_tree=cfg.rounds, learning_rate=1.0, subsample=RF_ROWS,
                          colsample_bynode=RF_COLS, reg_lambda=RF_LAMBDA)
        return params

    def estimator(self, cfg):
        import xgboost as xgb
        cls = {"ranking": xgb.XGBRanker}.get(
            cfg.task, xgb.XGBClassifier if cfg.classifier else xgb.XGBRegressor)
        params = self._params(cfg)
        if cfg.classifier:          # the wrapper chooses the objective from the labels
            params.pop("objective")
            params.pop("num_class", None)
        return cls(n_estimators=1 if cfg.forest else cfg.rounds, n_jobs=cfg.threads,
                   random_state=cfg.seed, **params)

    def fit(self, cfg, X, y, qid=None):
        import xgboost as xgb
        t0 = time.perf_counter()
        if cfg.tree_method in ("exact", "approx"):
            dtrain = xgb.DMatrix(X, label=y, nthread=cfg.threads, qid=qid)
        else:
            dtrain = xgb.QuantileDMatrix(X, label=y, max_bin=cfg.max_bin, nthread=cfg.threads,
                                         qid=qid)
        bin_seconds = time.perf_counter() - t0
        params = dict(self._params(cfg), nthread=cfg.threads, seed=cfg.seed)
        return xgb.train(params, dtrain, num_boost_round=1 if cfg.forest else cfg.rounds), \
            bin_seconds

    def predict(self, cfg, model, X):
        return model.inplace_predict(X)

    def fit_external(self, cfg, files):
        import xgboost as xgb

        class Files(xgb.DataIter):
            def __init__(self):
                self.i = 0
                super().__init__(cache_prefix=None)

            def next(self, input_data):
                if self.i == len(files):
                    return False
                input_data(data=load(files[self.i][0]), label=load(files[self.i][1]))
                self.i += 1
                return True

            def reset(self):
                self.i = 0

        dtrain = xgb.ExtMemQuantileDMatrix(Files(), max_bin=cfg.max_bin, nthread=cfg.threads)
        params = dict(self._params(cfg), nthread=cfg.threads, seed=cfg.seed)
        return xgb.train(params, dtrain, num_boost_round=cfg.rounds)

    def explain_input(self, cfg, X):
        import xgboost as xgb
        return xgb.DMatrix(X, nthread=cfg.threads)

    def contribs(self, cfg, model, data):
        return model.predict(data, pred_contribs=True)

    def interactions(self, cfg, model, data):
        return model.predict(data, pred_interactions=True)

    FORMATS = {"JSON": ".json", "UBJSON": ".ubj"}

    def save_model(self, model, path):
        model.save_model(path)

    def load_model(self, cfg, path):
        import xgboost as xgb
        return xgb.Booster(params={"nthread": cfg.threads}, model_file=path)


class LightGBMRunner(Runner):
    name, module = "lightgbm", "lightgbm"
    notes = ("fit = `lgb.Dataset(...).construct()` (timed as binning) + `lgb.train`; "
             "LightGBM picks row- or column-wise histograms itself (that test is in the fit time)")

    def _params(self, cfg):
        if cfg.n_targets > 1:
            raise Unsupported("LightGBM fits one target at a time")
        if cfg.depth or cfg.tree_method != "hist":
            raise Unsupported("LightGBM grows leaf-wise on histograms only")
        # scikit-learn spellings, which lgb.train also accepts as aliases:
        # min_child_samples = min_data_in_leaf, min_child_weight =
        # min_sum_hessian_in_leaf, reg_lambda = lambda_l2, n_jobs = num_threads.
        return dict(num_leaves=cfg.leaves, max_depth=-1, learning_rate=cfg.learning_rate,
                    max_bin=cfg.max_bin, min_child_samples=1,
                    min_child_weight=cfg.min_child_weight,
                    reg_lambda=RF_LAMBDA if cfg.forest else cfg.reg_lambda,
                    colsample_bytree=1.0, n_jobs=cfg.threads,
                    random_state=cfg.seed, verbose=-1, **self._sampling(cfg))

    def _sampling(self, cfg):
        if cfg.forest:
            return dict(boosting_type="rf", subsample=RF_ROWS, subsample_freq=1,
                        feature_fraction_bynode=RF_COLS)
        if cfg.goss:
            return dict(data_sample_strategy="goss", top_rate=GOSS_TOP, other_rate=GOSS_OTHER)
        if cfg.subsample < 1.0:
            return dict(subsample=cfg.subsample, subsample_freq=1)   # bagging_fraction/_freq
        return dict(subsample=1.0)

    OBJECTIVES = {"binary": "binary", "regression": "regression", "multiclass": "multiclass",
                  "ranking": "lambdarank"}

    def _objective(self, cfg):
        params = dict(objective=self.OBJECTIVES[cfg.task])
        if cfg.task == "multiclass":
            params["num_class"] = cfg.n_classes
        if cfg.task == "ranking":
            params["lambdarank_truncation_level"] = cfg.truncation
        return params

    def estimator(self, cfg):
        import lightgbm as lgb
        cls = {"ranking": lgb.LGBMRanker}.get(
            cfg.task, lgb.LGBMClassifier if cfg.classifier else lgb.LGBMRegressor)
        extra = {} if cfg.classifier else self._objective(cfg)
        return cls(n_estimators=cfg.rounds, **self._params(cfg), **extra)

    def fit(self, cfg, X, y, qid=None):
        import lightgbm as lgb
        params = dict(self._params(cfg), **self._objective(cfg))
        t0 = time.perf_counter()
        group = None if qid is None else group_sizes(qid)
        dtrain = lgb.Dataset(X, label=y, group=group, params=params).construct()
        bin_seconds = time.perf_counter() - t0
        return lgb.train(params, dtrain, num_boost_round=cfg.rounds), bin_seconds

    def predict(self, cfg, model, X):
        return model.predict(X, num_threads=cfg.threads)

    def contribs(self, cfg, model, data):
        return model.predict(data, pred_contrib=True, num_threads=cfg.threads)

    FORMATS = {"text": ".txt"}

    def save_model(self, model, path):
        model.save_model(path)

    def load_model(self, cfg, path):
        import lightgbm as lgb
        return lgb.Booster(model_file=path)


class LightGBMQuantizedRunner(LightGBMRunner):
    name = "lightgbm-quantized"
    notes = (f"`use_quantized_grad=True`, `num_grad_quant_bins={QUANT_BINS}`, "
             "`quant_train_renew_leaf=True` (leaf values from the exact gradients, as gbtree)")

    def _params(self, cfg):
        return dict(super()._params(cfg), use_quantized_grad=True,
                    num_grad_quant_bins=QUANT_BINS, quant_train_renew_leaf=True)


class SklearnRunner(Runner):
    name, module = "sklearn", "sklearn"
    notes = ("`HistGradientBoosting*`; no minimum-hessian knob (min_samples_leaf=1 only); "
             "binning seconds parsed from its `verbose=1` output; converts X to float64")

    _BINNING = re.compile(r"Binning [\d.]+ GB of training data: ([\d.]+) s")

    def threads(self, cfg):
        from threadpoolctl import threadpool_limits
        return threadpool_limits(limits=cfg.threads, user_api="openmp")

    def estimator(self, cfg, verbose=0):
        from sklearn.ensemble import (HistGradientBoostingClassifier,
                                      HistGradientBoostingRegressor, RandomForestClassifier,
                                      RandomForestRegressor)
        if cfg.forest and cfg.task != "ranking":
            cls = RandomForestClassifier if cfg.classifier else RandomForestRegressor
            return cls(n_estimators=cfg.rounds, max_leaf_nodes=cfg.leaves, max_samples=RF_ROWS,
                       max_features=RF_COLS, n_jobs=cfg.threads, random_state=cfg.seed)
        if (cfg.task == "ranking" or cfg.goss or cfg.subsample < 1.0 or cfg.n_targets > 1
                or cfg.depth or cfg.tree_method != "hist"):
            raise Unsupported("scikit-learn's HistGradientBoosting has no ranking objective, "
                              "no row sampling, one target at a time, leaf-wise histogram "
                              "trees only")
        cls = HistGradientBoostingClassifier if cfg.classifier else HistGradientBoostingRegressor
        return cls(max_iter=cfg.rounds, learning_rate=cfg.learning_rate,
                   max_leaf_nodes=cfg.leaves, max_depth=None, max_bins=cfg.max_bin,
                   min_samples_leaf=1, l2_regularization=cfg.reg_lambda, early_stopping=False,
                   random_state=cfg.seed, verbose=verbose)

    def fit(self, cfg, X, y, qid=None):
        import io
        if cfg.forest:
            return self.estimator(cfg).fit(X, y), None
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            model = self.estimator(cfg, verbose=1).fit(X, y)
        match = self._BINNING.search(log.getvalue())
        return model, float(match.group(1)) if match else None


class CatBoostRunner(Runner):
    module = "catboost"
    notes = ("fit = `Pool` + `Pool.quantize` (timed as binning) + `fit`; one Newton step per "
             "leaf (`leaf_estimation_iterations=1`) like the others; its default `Cosine` "
             "split score and `GreedyLogSum` borders are kept")

    def __init__(self, lossguide):
        self.lossguide = lossguide
        self.name = "catboost-lossguide" if lossguide else "catboost-symmetric"

    def estimator(self, cfg):
        import catboost
        symmetric_depth = cfg.symmetric and not self.lossguide
        if (cfg.task == "ranking" or cfg.goss or cfg.subsample < 1.0 or cfg.forest
                or (cfg.depth and not symmetric_depth) or cfg.tree_method != "hist"):
            raise Unsupported("the CatBoost runners cover binary, multiclass and regression "
                              "without row sampling, on their own tree shapes")
        cls = catboost.CatBoostClassifier if cfg.classifier else catboost.CatBoostRegressor
        extra = {}
        if cfg.n_targets > 1:
            if not cfg.vector_leaves:
                raise Unsupported("CatBoost's trees for several targets (MultiRMSE) always "
                                  "hold a vector")
            extra = dict(loss_function="MultiRMSE")
        if self.lossguide:
            shape = dict(grow_policy="Lossguide", max_leaves=cfg.leaves, depth=16)
        else:
            shape = dict(grow_policy="SymmetricTree", depth=cfg.depth or 8)
        return cls(iterations=cfg.rounds, learning_rate=cfg.learning_rate,
                   border_count=cfg.max_bin - 1, l2_leaf_reg=cfg.reg_lambda, min_data_in_leaf=1,
                   bootstrap_type="No", random_strength=0, leaf_estimation_iterations=1,
                   thread_count=cfg.threads, random_seed=cfg.seed, verbose=False,
                   allow_writing_files=False, **shape, **extra)

    def fit(self, cfg, X, y, qid=None):
        import catboost
        estimator = self.estimator(cfg)
        t0 = time.perf_counter()
        pool = catboost.Pool(X, label=y, thread_count=cfg.threads)
        pool.quantize(border_count=cfg.max_bin - 1)
        bin_seconds = time.perf_counter() - t0
        return estimator.fit(pool), bin_seconds

    def predict(self, cfg, model, X):
        if cfg.classifier:
            proba = model.predict(X, prediction_type="Probability", thread_count=cfg.threads)
            return proba[:, 1] if cfg.binary else proba
        return model.predict(X, thread_count=cfg.threads)

    def explain_input(self, cfg, X):
        import catboost
        return catboost.Pool(X, thread_count=cfg.threads)

    def contribs(self, cfg, model, data):
        return model.get_feature_importance(data, type="ShapValues", thread_count=cfg.threads)

    def interactions(self, cfg, model, data):
        return model.get_feature_importance(data, type="ShapInteractionValues",
                                            thread_count=cfg.threads)

    FORMATS = {"cbm": ".cbm", "JSON": ".json"}

    def save_model(self, model, path):
        model.save_model(path, format=path.rsplit(".", 1)[1])

    def load_model(self, cfg, path):
        import catboost
        return catboost.CatBoost().load_model(path, format=path.rsplit(".", 1)[1])


RUNNERS = {r.name: r for r in (GbtreeRunner(), GbtreeFloatRunner(), GbtreeSimdRunner("none"),
                               GbtreeSimdRunner("avx2"), GbtreeSimdRunner("avx512"), XGBoostRunner(),
                               LightGBMRunner(), LightGBMQuantizedRunner(), SklearnRunner(),
                               CatBoostRunner(lossguide=False), CatBoostRunner(lossguide=True))}
# Names on the command line that stand for several runners.
GROUPS = {"catboost": ["catboost-symmetric", "catboost-lossguide"]}
DEFAULT_LIBS = "gbtree,xgboost,lightgbm,sklearn,catboost"


def resolve(libs):
    """Comma-separated names (and groups) -> list of runner names, in order, no repeats."""
    names = []
    for item in filter(None, (s.strip() for s in libs.split(","))):
        for name in GROUPS.get(item, [item]):
            if name not in RUNNERS:
                known = ", ".join(list(RUNNERS) + list(GROUPS))
                raise SystemExit(f"unknown library {name!r}; known: {known}")
            if name not in names:
                names.append(name)
    return names


def quality(cfg, y_true, scores, qid=None):
    """(metric name, value): test AUC for binary, multiclass log loss, RMSE for
    regression, NDCG@10 (gbtree's ``ndcg_at_k``, the same for every library) for ranking."""
    if cfg.binary:
        from sklearn.metrics import roc_auc_score
        return "auc", float(roc_auc_score(y_true, scores))
    if cfg.task == "multiclass":
        from sklearn.metrics import log_loss
        return "mlogloss", float(log_loss(y_true, scores, labels=np.arange(cfg.n_classes)))
    if cfg.task == "ranking":
        from gbtree import ndcg_at_k
        return "ndcg@10", float(ndcg_at_k(y_true, scores, qid=qid, k=10))
    return "rmse", float(np.sqrt(np.mean((np.asarray(y_true, np.float64) - scores) ** 2)))
