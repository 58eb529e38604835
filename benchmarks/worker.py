"""Run one library on one data set in this (fresh) process; run.py starts it.

    python worker.py SPEC.json RESULT.json

The spec's mode is one of ``MODES``: fit and predict (timed), one-row latency,
SHAP values (``shap``), model files (``model-files``), prediction of float32
and float64 rows (``input-types``) or a fit on chunk files read out of core
(``external``). Order of work: import
the library, load the data (``.npy`` arrays, or SciPy
CSR matrices saved as ``.npz``; the keys listed in the spec's ``mmap`` are
memory-mapped instead of read), note the peak RSS so far
(``base_rss_mib``), then time the fit and the predictions and note the peak
RSS again. Peak RSS is this process's high-water mark of resident memory
(``peak_rss_mib``), so it includes the interpreter, the imported library and the
data, and nothing of other processes. A ``TypeError``
from a library given sparse input is recorded as status ``unsupported``, not
as a crash, and so is a setting the library does not have (``Unsupported``).
With ``"memory": true`` in the spec, a thread samples ``/proc/self/status``
every 10 ms from before the data are loaded to the end of the fit: the peaks
of anonymous and file-backed memory over the start.
"""
import importlib
import json
import os
import resource
import tempfile
import threading
import time

import numpy as np

from runners import RUNNERS, Config, Unsupported, estimator_scores, load, quality


def peak_rss_mib():
    """This process's peak resident memory, MiB: ``VmHWM`` of ``/proc/self/status``
    on Linux (``ru_maxrss`` there keeps the parent's peak across fork and exec, so a
    child would report at least the size of the process that started it), else
    ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0   # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def is_sparse(value):
    return hasattr(value, "tocsr")          # any SciPy sparse matrix or array


def memory_mib():
    """This process's anonymous and file-backed resident memory now, MiB (Linux)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024
    return out


class MemorySampler:
    """Peaks of ``memory_mib()`` over its value at the start, sampled every 10 ms."""

    def __init__(self):
        self.base = memory_mib()
        self.peak = dict(self.base)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._done.is_set():
            for key, value in memory_mib().items():
                self.peak[key] = max(self.peak[key], value)
            time.sleep(0.01)

    def stop(self):
        self._done.set()
        self._thread.join()
        return {"anon_peak_mib": self.peak["RssAnon"] - self.base["RssAnon"],
                "file_peak_mib": self.peak["RssFile"] - self.base["RssFile"]}


def fit_predict(runner, cfg, data, spec):
    """Time fit (with binning) and predict on the test rows; score the predictions."""
    with runner.threads(cfg):
        t0, c0 = time.perf_counter(), time.process_time()
        model, bin_seconds = runner.fit(cfg, data["X_train"], data["y_train"],
                                        qid=data.get("qid_train"))
        fit_seconds = time.perf_counter() - t0
        fit_cpu_seconds = time.process_time() - c0      # all threads of this process
        fit_rss = peak_rss_mib()
        memory = spec["sampler"].stop() if spec.get("sampler") else {}
        predict_times = []
        for _ in range(spec.get("predict_repeats", 3)):
            t0 = time.perf_counter()
            scores = runner.predict(cfg, model, data["X_test"])
            predict_times.append(time.perf_counter() - t0)
    metric, value = quality(cfg, data["y_test"], scores, qid=data.get("qid_test"))
    return {"fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
            "bin_seconds": bin_seconds,
            "predict_seconds": min(predict_times), "predict_seconds_all": predict_times,
            "fit_peak_rss_mib": fit_rss, "metric": metric, "score": value, **memory}


def latency(runner, cfg, data, spec):
    """Median/percentile wall time of ``estimator.predict(one_row)`` over many calls."""
    X_test = data["X_test"]
    with runner.threads(cfg):
        model = runner.estimator(cfg).fit(data["X_train"], data["y_train"])
        scores = estimator_scores(cfg, model, X_test)
        rows = [X_test[i:i + 1] for i in range(min(len(X_test), 1000))]
        for i in range(spec.get("latency_warmup", 50)):
            model.predict(rows[i % len(rows)])
        calls = spec.get("latency_calls", 2000)
        times_ns = np.empty(calls, dtype=np.int64)
        for i in range(calls):
            row = rows[i % len(rows)]
            t0 = time.perf_counter_ns()
            model.predict(row)
            times_ns[i] = time.perf_counter_ns() - t0
    us = times_ns / 1000.0
    metric, value = quality(cfg, data["y_test"], scores)
    return {"latency_us_median": float(np.median(us)), "latency_us_p90": float(np.percentile(us, 90)),
            "latency_us_p99": float(np.percentile(us, 99)), "latency_us_min": float(us.min()),
            "latency_calls": calls, "metric": metric, "score": value}


def input_types(runner, cfg, data, spec):
    """Fit (not timed), then time the predictions of the test rows given as float32
    and as float64 rows (C order), alternating, the fastest of ``predict_repeats``
    calls each; for gbtree, the vector level its walks ran at."""
    X_test = data["X_test"]
    inputs = {kind: np.ascontiguousarray(X_test, dtype=kind) for kind in ("float32", "float64")}
    times = {kind: [] for kind in inputs}
    with runner.threads(cfg):
        model, _ = runner.fit(cfg, data["X_train"], data["y_train"])
        for _ in range(spec.get("predict_repeats", 3)):
            for kind, X in inputs.items():
                t0 = time.perf_counter()
                scores = runner.predict(cfg, model, X)
                times[kind].append(time.perf_counter() - t0)
    metric, value = quality(cfg, data["y_test"], scores)
    out = {f"predict_{kind}_seconds": min(t) for kind, t in times.items()}
    if runner.module == "gbtree":
        from gbtree.kernels.simd import SIMD_NAMES
        from gbtree.predicting._predictor import simd_level
        out["simd"] = SIMD_NAMES[simd_level()]
    return dict(out, metric=metric, score=value)


def external(runner, cfg, data, spec):
    """Time a fit on the chunk files of ``spec["files"]`` ([X_path, y_path] each) read
    by the library's out-of-core mode, then score the test rows (held in memory)."""
    with runner.threads(cfg):
        t0, c0 = time.perf_counter(), time.process_time()
        model = runner.fit_external(cfg, spec["files"])
        fit_seconds = time.perf_counter() - t0
        fit_cpu_seconds = time.process_time() - c0
        fit_rss = peak_rss_mib()
        memory = spec["sampler"].stop() if spec.get("sampler") else {}
        scores = runner.predict(cfg, model, data["X_test"])
    metric, value = quality(cfg, data["y_test"], scores)
    return {"fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
            "fit_peak_rss_mib": fit_rss, "metric": metric, "score": value, **memory}


def best_seconds(call, calls):
    """The fastest of ``calls`` calls, and the last call's result."""
    best = np.inf
    for _ in range(calls):
        t0 = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t0)
    return best, out


def explain(runner, cfg, data, spec):
    """Fit (not timed), then time the SHAP values of the test rows and the
    interaction values of the first ``interaction_rows`` of them (None for a
    library without them); the fastest of ``predict_repeats`` calls each."""
    X_test, calls = data["X_test"], spec.get("predict_repeats", 3)
    out = {}
    with runner.threads(cfg):
        model, _ = runner.fit(cfg, data["X_train"], data["y_train"])
        scores = runner.predict(cfg, model, X_test)
        for key, method, rows in (("contribs", runner.contribs, X_test),
                                  ("interactions", runner.interactions,
                                   X_test[:spec["interaction_rows"]])):
            given = runner.explain_input(cfg, rows)
            try:
                seconds, values = best_seconds(lambda: method(cfg, model, given), calls)
            except Unsupported:
                out[f"{key}_seconds"] = None
                continue
            out[f"{key}_seconds"] = seconds
            out[f"{key}_rows"] = len(rows)
            out[f"{key}_output_mib"] = np.asarray(values).nbytes / 2 ** 20
    metric, value = quality(cfg, data["y_test"], scores)
    return dict(out, metric=metric, score=value)


def model_files(runner, cfg, data, spec):
    """Fit (not timed), then for each of the library's file formats: save and load
    (the fastest of ``predict_repeats`` calls each; "load" gives a model ready to
    predict), the file's size, and how far the loaded model's predictions of the
    test rows are from the fitted one's."""
    if not runner.FORMATS:
        raise Unsupported(f"{runner.name}: no model file format")
    X_test, calls = data["X_test"], spec.get("predict_repeats", 3)
    files = []
    with runner.threads(cfg), tempfile.TemporaryDirectory() as folder:
        model, _ = runner.fit(cfg, data["X_train"], data["y_train"])
        want = runner.predict(cfg, model, X_test)
        for name, suffix in runner.FORMATS.items():
            path = os.path.join(folder, "model" + suffix)
            save, _ = best_seconds(lambda: runner.save_model(model, path), calls)
            load, again = best_seconds(lambda: runner.load_model(cfg, path), calls)
            got = runner.predict(cfg, again, X_test)
            files.append({"format": name, "bytes": os.path.getsize(path),
                          "save_seconds": save, "load_seconds": load,
                          "max_abs_diff": float(np.max(np.abs(got - want)))})
    metric, value = quality(cfg, data["y_test"], want)
    return {"files": files, "metric": metric, "score": value}


MODES = {"fit-predict": fit_predict, "latency": latency, "shap": explain,
         "model-files": model_files, "input-types": input_types, "external": external}


def main(spec_path, result_path):
    with open(spec_path) as f:
        spec = json.load(f)
    runner = RUNNERS[spec["lib"]]
    cfg = Config(**spec["config"])
    version = runner.load()
    module_file = getattr(importlib.import_module(runner.module), "__file__", None)
    if spec.get("memory"):
        spec["sampler"] = MemorySampler()
    mmap = set(spec.get("mmap", ()))
    data = {key: load(path, key in mmap) for key, path in spec["data"].items()}
    base_rss = peak_rss_mib()
    try:
        result = dict(MODES[spec["mode"]](runner, cfg, data, spec), status="ok")
    except Unsupported as exc:          # a setting the library does not have
        result = {"status": "unsupported", "error": str(exc)}
    except TypeError as exc:
        if not any(is_sparse(value) for value in data.values()):
            raise
        # The library refuses sparse input: a result of its own, not a crash.
        result = {"status": "unsupported", "error": f"TypeError: {exc}"}
    result.update(lib=runner.name, version=str(version), module_file=module_file,
                  base_rss_mib=base_rss, peak_rss_mib=peak_rss_mib())
    with open(result_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(
        description="Run one library on one data set in this process (benchmarks/run.py "
                    "starts it: run `python -m benchmarks --help` instead).")
    parser.add_argument("spec_path", help="the run's JSON spec")
    parser.add_argument("result_path", help="where the result is written as JSON")
    args = parser.parse_args()
    main(args.spec_path, args.result_path)
