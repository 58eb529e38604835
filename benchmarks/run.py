#!/usr/bin/env python
"""Benchmark gbtree against XGBoost, LightGBM, scikit-learn and CatBoost.

    python benchmarks/run.py WORKLOAD [--rows N] [--rounds R] [--threads T]
                             [--libs gbtree,xgboost,...] [--repeat N] [--json PATH]
    python -m benchmarks WORKLOAD ...            (the same, from the repository root)
    python benchmarks/run.py --list              (the workloads' names)
    python benchmarks/run.py tables              (the docs' tables from the latest results)

Every workload is registered in ``MODULES`` (see benchmarks/README.md, "Adding a
workload"). Every (library, setting) runs in a fresh child process (worker.py)
so that its peak RSS is its own; the data are generated once per size from the
seed, saved in a temporary directory and loaded by each child. A Markdown table
goes to stdout, the full results to JSON.
"""
import argparse
import contextlib
import datetime
import importlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import datagen
from common import BENCH_DIR, RESULTS_DIR, child_env, log, machine_info
from runners import DEFAULT_LIBS, RUNNERS, Config, resolve

# Modules holding workloads, in the order of --list and --help. Each has
# WORKLOADS (name -> defaults, with "help"), add_arguments(parser, name) and
# run(name, args, bench) -> {"header": ..., "table": ..., any more JSON fields}.
MODULES = ("run", "quantized", "sparse_input", "categorical", "ranking", "sampling",
           "random_forest", "multi_target", "split_finding", "symmetric", "out_of_core",
           "shap_values", "model_files", "dask_fit", "prediction", "external_memory",
           "block_codecs", "dask_scaling")

# The core workloads (this module). Defaults of the shared options; the command
# line overrides any of them.
WORKLOADS = {
    "higgs-like": dict(help="binary, 1M x 28 HIGGS-like features (workload 1)",
                       dataset="higgs-like", rows=1_000_000, test_rows=250_000, rounds=100,
                       leaves=255),
    "regression-wide": dict(help="regression, 500k x 90 correlated features (workload 2)",
                            dataset="regression-wide", rows=500_000, test_rows=100_000,
                            rounds=100, leaves=255),
    "multiclass": dict(help="10 classes, 200k x 28 HIGGS-like features, 63 leaves",
                       dataset="multiclass", rows=200_000, test_rows=50_000, rounds=100,
                       leaves=63, libs="gbtree,xgboost,lightgbm"),
    "threads": dict(help="higgs-like at 1 and 2 threads: the speed-up, on idle cores or "
                         "beside busy programs (--busy-list), at several sizes (--rows-list)",
                    dataset="higgs-like", rows=1_000_000, test_rows=250_000, rounds=100,
                    leaves=255, threads_list=[1, 2], libs="gbtree,xgboost,lightgbm"),
    "rows": dict(help="higgs-like fit time against training rows",
                 dataset="higgs-like", rows_list=[100_000, 250_000, 500_000, 1_000_000,
                                                  2_000_000, 4_000_000],
                 test_rows=250_000, rounds=100, leaves=255),
    "predict-latency": dict(help="one-row predict latency of a 100 x 31-leaf model",
                            dataset="higgs-like", rows=100_000, test_rows=10_000, rounds=100,
                            leaves=31),
}


# ---------------------------------------------------------------------------- running
@contextlib.contextmanager
def busy_loops(n):
    """``n`` other programs on the machine while the block runs: processes that
    each keep one core busy (a Python loop), stopped when it ends."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


class Bench:
    """Generates and caches data sets, runs workers, collects their results."""

    def __init__(self, args, tmpdir, libs):
        self.args = args
        self.tmpdir = Path(tmpdir)
        self.libs = libs
        self.results = []
        self.busy = args.busy   # busy loops beside every timed process
        self.spec = {}          # more for every worker's spec (e.g. "mmap": keys of data)
        self._xcore = None      # path of the compiled xcore.c, or False

    def cross_core_ns(self):
        """Cache-line round trip between two threads now (``xcore.c``), in ns; None
        when no C compiler with OpenMP is at hand. Two-thread times on a VM follow it."""
        if self._xcore is None:
            exe = self.tmpdir / "xcore"
            cc = os.environ.get("CC", "cc")
            try:
                subprocess.run([cc, "-O2", "-fopenmp", str(BENCH_DIR / "xcore.c"), "-o", str(exe)],
                               check=True, capture_output=True, timeout=60)
                self._xcore = exe
            except (OSError, subprocess.SubprocessError):
                self._xcore = False
        if not self._xcore:
            return None
        try:
            out = subprocess.run([str(self._xcore)], capture_output=True, text=True, timeout=30,
                                 env=dict(os.environ, OMP_NUM_THREADS="2"), check=True).stdout
            value = float(out)
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        return None if value != value else value   # nan: one thread only

    def data(self, kind, rows, test_rows):
        """Paths of the .npy files of one data set, generating it on first use."""
        folder = self.tmpdir / f"{kind}-{rows}-{test_rows}-{self.args.seed}"
        names = ("X_train", "y_train", "X_test", "y_test")
        if not folder.exists():
            log(f"generating {kind}: {rows:,} train + {test_rows:,} test rows (seed {self.args.seed})")
            folder.mkdir()
            arrays = datagen.make_dataset(kind, rows, test_rows, seed=self.args.seed)
            for name, array in zip(names, arrays):
                np.save(folder / f"{name}.npy", array)
        return {name: str(folder / f"{name}.npy") for name in names}

    def save(self, key, arrays):
        """Paths of ``arrays`` (name -> NumPy array) saved once as ``.npy`` under ``key``."""
        folder = self.tmpdir / key
        if not folder.exists():
            folder.mkdir()
            for name, array in arrays.items():
                np.save(folder / f"{name}.npy", array)
        return {name: str(folder / f"{name}.npy") for name in arrays}

    def run_one(self, lib, mode, cfg, data):
        """One fresh worker process; returns its result dict (or why it has none)."""
        runner = RUNNERS[lib]
        if not runner.is_installed():
            return {"lib": lib, "status": "skipped", "error": f"{runner.module} not installed"}
        with busy_loops(self.busy):
            result = self._run_worker(lib, mode, cfg, data)
        if cfg.threads >= 2 and result["status"] == "ok":
            result["xcore_ns"] = self.cross_core_ns()   # measured right after the run
        return result

    def run_together(self, lib, mode, cfg, data, copies):
        """``copies`` fresh workers of the same run at the same time (one process
        each): how fast the machine runs independent copies side by side."""
        if not RUNNERS[lib].is_installed():
            return [{"lib": lib, "status": "skipped", "error": f"{RUNNERS[lib].module} not installed"}]
        with busy_loops(self.busy), ThreadPoolExecutor(copies) as pool:   # each thread waits on its child
            return list(pool.map(lambda _: self._run_worker(lib, mode, cfg, data), range(copies)))

    def _run_worker(self, lib, mode, cfg, data):
        spec = dict(self.spec, lib=lib, mode=mode, config=cfg.as_dict(), data=data,
                    predict_repeats=self.args.predict_repeats,
                    latency_calls=getattr(self.args, "calls", 0))
        with tempfile.TemporaryDirectory(dir=self.tmpdir) as work:
            spec_path, result_path = Path(work, "spec.json"), Path(work, "result.json")
            spec_path.write_text(json.dumps(spec))
            env = child_env(cfg.threads)
            cmd = [sys.executable, str(BENCH_DIR / "worker.py"), str(spec_path), str(result_path)]
            try:
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                      timeout=self.args.timeout)
            except subprocess.TimeoutExpired:
                return {"lib": lib, "status": "failed", "error": f"timeout after {self.args.timeout} s"}
            if proc.returncode != 0 or not result_path.exists():
                tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
                return {"lib": lib, "status": "failed",
                        "error": f"exit code {proc.returncode}: {tail}"}
            return json.loads(result_path.read_text())

    def run_libs(self, mode, cfg, data, **tags):
        """Run every library ``--repeat`` times (interleaved), aggregate, record, return."""
        return self.run_grid(mode, [cfg], data, **tags)

    def run_grid(self, mode, cfgs, data, together=0, **tags):
        """``run_libs`` over several configs, interleaved: repeat by repeat, config by
        config, library by library, every other repeat in the reverse order (A B, then
        B A). A drift of the shared host's speed then falls on every config alike
        instead of on whichever ran last, and no config always runs first. Results
        config by config. With ``together`` >= 2, every repeat also runs that many
        copies of the first config at once (``run_together``), as one more step of
        the order; the first config's result keeps them in ``together``."""
        runs = {(i, lib): [] for i in range(len(cfgs)) for lib in self.libs}
        order = [(i, lib) for i in range(len(cfgs)) for lib in self.libs]
        if together >= 2:
            order += [(-1, lib) for lib in self.libs]
            runs.update({(-1, lib): [] for lib in self.libs})
        for repeat in range(self.args.repeat):
            shown = None
            for i, lib in order if repeat % 2 == 0 else order[::-1]:
                cfg = cfgs[max(i, 0)]
                if (len(cfgs) > 1 or i < 0) and shown != i:
                    log(f"repeat {repeat + 1} of {self.args.repeat}, "
                        + (f"{together} x {threads_text(cfg.threads)} at once" if i < 0
                           else threads_text(cfg.threads)))
                    shown = i
                if i < 0:
                    copies = self.run_together(lib, mode, cfg, data, together)
                    for result in copies:
                        log(f"  {lib:<18} {describe(result)}")
                    runs[i, lib].append(copies)
                    continue
                result = self.run_one(lib, mode, cfg, data)
                log(f"  {lib:<18} {describe(result)}")
                runs[i, lib].append(result)
        results = []
        for i, cfg in enumerate(cfgs):
            for lib in self.libs:
                result = dict(aggregate(runs[i, lib]), threads=cfg.threads, rounds=cfg.rounds,
                              leaves=cfg.leaves, **tags)
                if i == 0 and together >= 2:
                    result["together"] = [[{k: r.get(k) for k in ("status", "fit_seconds")}
                                           for r in copies] for copies in runs[-1, lib]]
                results.append(result)
                self.results.append(result)
        return results


TIME_KEYS = ("fit_seconds", "fit_cpu_seconds", "bin_seconds", "predict_seconds",
             "predict_float32_seconds", "predict_float64_seconds", "latency_us_median", "latency_us_p90", "latency_us_p99", "latency_us_min")
RSS_KEYS = ("base_rss_mib", "fit_peak_rss_mib", "peak_rss_mib")


def aggregate(runs):
    """Median of the times and maximum of the peak RSS over the repeats of one library."""
    ok = [r for r in runs if r["status"] == "ok"]
    if not ok:
        return runs[0]
    out = dict(ok[0])
    for key in TIME_KEYS:
        values = [r[key] for r in ok if r.get(key) is not None]
        if values:
            out[key] = statistics.median(values)
    for key in RSS_KEYS:
        if key in out:
            out[key] = max(r[key] for r in ok)
    if len(runs) > 1:
        out["repeats"] = [{k: r.get(k) for k in ("status", "xcore_ns") + TIME_KEYS if k in r}
                          for r in runs]
    return out


def describe(result):
    if result["status"] != "ok":
        return f"{result['status']}: {result['error']}"
    xcore = (f", cross-core {result['xcore_ns']:.0f} ns" if result.get("xcore_ns") is not None
             else "")
    if "fit_seconds" in result and "predict_seconds" not in result:
        return (f"fit {result['fit_seconds']:.2f} s, {result['metric']} {result['score']:.4f}, "
                f"peak RSS {result['peak_rss_mib']:.0f} MiB")
    if "fit_seconds" in result:
        return (f"fit {result['fit_seconds']:.2f} s, predict {result['predict_seconds']:.3f} s, "
                f"{result['metric']} {result['score']:.4f}, peak RSS {result['peak_rss_mib']:.0f} MiB"
                + xcore)
    if "files" in result:
        return ", ".join(f"{f['format']} {f['bytes'] / 1e6:.2f} MB, save {f['save_seconds']:.3f} s, "
                         f"load {f['load_seconds']:.3f} s" for f in result["files"])
    if "contribs_seconds" in result:
        return ", ".join(f"{key} {result[f'{key}_seconds']:.3f} s" for key in
                         ("contribs", "interactions") if result[f"{key}_seconds"] is not None)
    if "predict_float32_seconds" in result:
        return (f"predict float32 rows {result['predict_float32_seconds']:.3f} s, float64 rows "
                f"{result['predict_float64_seconds']:.3f} s, {result['metric']} "
                f"{result['score']:.4f}")
    return f"median {result['latency_us_median']:.1f} us, {result['metric']} {result['score']:.4f}"


# ---------------------------------------------------------------------------- tables
def fmt(value, digits=2, suffix=""):
    return "–" if value is None else f"{value:.{digits}f}{suffix}"


def ratio(value, reference):
    if value is None or not reference:
        return "–"
    return f"{value / reference:.2f}×"


def markdown_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def by_lib(results):
    return {r["lib"]: r for r in results}


def status_row(r, width):
    return [r["lib"], f"{r['status']}: {r['error']}"] + [""] * (width - 2)


def compare_table(results):
    """One row per library: times, memory, quality, ratios to gbtree."""
    ref = by_lib(results).get("gbtree", {})
    metric = next((r["metric"].upper() for r in results if r["status"] == "ok"), "score")
    headers = ["library", "version", "fit s", "bin s", "predict s", "peak RSS MiB",
               "Δ RSS MiB", f"test {metric}", "fit ÷ gbtree", "predict ÷ gbtree"]
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append(status_row(r, len(headers)))
            continue
        rows.append([r["lib"], r["version"], fmt(r["fit_seconds"]), fmt(r["bin_seconds"]),
                     fmt(r["predict_seconds"], 3), fmt(r["peak_rss_mib"], 0),
                     fmt(r["peak_rss_mib"] - r["base_rss_mib"], 0), fmt(r["score"], 4),
                     ratio(r["fit_seconds"], ref.get("fit_seconds")),
                     ratio(r["predict_seconds"], ref.get("predict_seconds"))])
    return markdown_table(headers, rows)


def threads_table(results, threads_list, together=0, cases=()):
    """One row per library (and per case: ``cases`` names the keys, such as the rows
    and the busy loops, whose values make the rows' first columns): fit/predict
    seconds at each thread count and the speed-ups (with ``together``: also the
    machine's ceiling for the last thread count, see ``together_ceiling``)."""
    names = {"rows": "train rows", "busy": "busy programs"}
    if cases:
        return _cases_table(results, threads_list, together, cases, names)
    t0, rest = threads_list[0], threads_list[1:]
    headers = (["library"] + [f"fit s ({t} thr)" for t in threads_list]
               + [f"fit speed-up {t0}→{t}" for t in rest]
               + ([f"{together} x {t0}-thread fits at once: throughput",
                   "fit speed-up ÷ throughput"] if together else [])
               + [f"predict s ({t} thr)" for t in threads_list]
               + [f"predict speed-up {t0}→{t}" for t in rest]
               + [f"test metric ({' / '.join(map(str, threads_list))} thr)"])
    per_threads = {t: by_lib([r for r in results if r["threads"] == t]) for t in threads_list}
    rows = []
    for lib in dict.fromkeys(r["lib"] for r in results):
        runs = [per_threads[t][lib] for t in threads_list]
        bad = next((r for r in runs if r["status"] != "ok"), None)
        if bad:
            rows.append(status_row(bad, len(headers)))
            continue
        row = [lib]
        for key, digits in (("fit_seconds", 3), ("predict_seconds", 3)):
            row += [fmt(r[key], digits) for r in runs]
            row += [speed_up(runs[0], r, key) for r in runs[1:]]
            if key == "fit_seconds" and together:
                row += together_ceiling(runs[0], runs[-1])
        row.append(runs[0]["metric"].upper() + " " + " / ".join(f"{r['score']:.4f}" for r in runs))
        rows.append(row)
    return markdown_table(headers, rows)


def _cases_table(results, threads_list, together, cases, names):
    """``threads_table`` for results of several cases, their keys' values first."""
    seen = dict.fromkeys(tuple(r.get(key) for key in cases) for r in results)
    tables = [threads_table([r for r in results if tuple(r.get(k) for k in cases) == case],
                            threads_list, together).splitlines() for case in seen]
    header, rule = tables[0][:2]
    lines = ["| " + " | ".join(names.get(k, k) for k in cases) + " " + header,
             "|" + "---:|" * len(cases) + rule[1:]]
    for case, table in zip(seen, tables):
        cells = " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in case)
        lines += [f"| {cells} {line}" for line in table[2:]]
    return "\n".join(lines)


def speed_up(base, other, key):
    """``base``'s time over ``other``'s: the median over the repeats of the ratio of
    the runs made next to each other, with their range (the medians' ratio when
    there is one run each)."""
    pairs = [(a.get(key), b.get(key)) for a, b in
             zip(base.get("repeats", []), other.get("repeats", []))]
    ratios = [a / b for a, b in pairs if a and b]
    if len(ratios) < 2:
        return fmt(base[key] / other[key], 2, "×")
    return (f"{statistics.median(ratios):.2f}× "
            f"({min(ratios):.2f}–{max(ratios):.2f})")


def together_ceiling(base, other):
    """[throughput, share] for one library. Throughput: the sum, over the fits run
    side by side in separate processes (``base["together"]``), of time alone ÷
    its time (2.0 when two copies each ran as fast as one alone): what the
    machine gives to independent copies of the work, the ceiling of a speed-up.
    Share: the speed-up ``base`` → ``other`` over that throughput. Both per
    repeat (against the repeat's run alone), median and range."""
    alone = [r.get("fit_seconds") for r in base.get("repeats", [base])]
    sped = [r.get("fit_seconds") for r in other.get("repeats", [other])]
    ceilings, shares = [], []
    for a, b, copies in zip(alone, sped, base.get("together", [])):
        times = [c["fit_seconds"] for c in copies if c.get("status") == "ok"]
        if not a or not b or not times or len(times) < len(copies):
            continue
        ceilings.append(sum(a / t for t in times))
        shares.append(a / b / ceilings[-1])
    if not ceilings:
        return ["–", "–"]
    return [f"{statistics.median(v):.2f}{unit} ({min(v):.2f}–{max(v):.2f})"
            for v, unit in ((ceilings, "×"), (shares, ""))]


def rows_table(results, rows_list):
    """One row per data size: each library's fit seconds (and ratio to gbtree)."""
    libs = list(dict.fromkeys(r["lib"] for r in results))
    headers = ["train rows"] + [f"{lib} fit s" for lib in libs]
    rows = []
    for n in rows_list:
        at_n = by_lib([r for r in results if r["rows"] == n])
        ref = at_n.get("gbtree", {}).get("fit_seconds")
        cells = [f"{n:,}"]
        for lib in libs:
            r = at_n[lib]
            if r["status"] != "ok":
                cells.append(r["status"])
            elif lib == "gbtree" or not ref:
                cells.append(fmt(r["fit_seconds"]))
            else:
                cells.append(f"{r['fit_seconds']:.2f} ({ratio(r['fit_seconds'], ref)})")
        rows.append(cells)
    return markdown_table(headers, rows)


def latency_table(results):
    ref = by_lib(results).get("gbtree", {})
    headers = ["library", "version", "median µs", "p90 µs", "p99 µs", "median ÷ gbtree",
               "test metric"]
    rows = []
    for r in results:
        if r["status"] != "ok":
            rows.append(status_row(r, len(headers)))
            continue
        rows.append([r["lib"], r["version"], fmt(r["latency_us_median"], 1),
                     fmt(r["latency_us_p90"], 1), fmt(r["latency_us_p99"], 1),
                     ratio(r["latency_us_median"], ref.get("latency_us_median")),
                     f"{r['metric'].upper()} {r['score']:.4f}"])
    return markdown_table(headers, rows)


def plot_rows(results, rows_list, path, title):
    """Log-log plot of fit seconds against training rows, one line per library."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullLocator

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for lib in dict.fromkeys(r["lib"] for r in results):
        points = sorted((r["rows"], r["fit_seconds"]) for r in results
                        if r["lib"] == lib and r["status"] == "ok")
        if points:
            ax.plot(*zip(*points), marker="o", label=lib,
                    linewidth=2.5 if lib == "gbtree" else 1.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(rows_list, [f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k" for n in rows_list])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("training rows")
    ax.set_ylabel("fit seconds (incl. binning)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------- workloads
def make_config(settings, args, threads):
    task = datagen.TASKS[settings["dataset"]]
    return Config(task=task, rounds=settings["rounds"], learning_rate=args.learning_rate,
                  leaves=settings["leaves"], max_bin=args.max_bin, threads=threads, seed=args.seed,
                  n_classes=datagen.CLASSES.get(settings["dataset"], 2))


def args_config(args, dataset):
    """The Config of this run's shared options (already resolved) on ``dataset``."""
    return make_config(dict(dataset=dataset, rounds=args.rounds, leaves=args.leaves), args,
                       args.threads)


def threads_text(n):
    return f"{n} thread" + ("" if n == 1 else "s")


def describe_data(settings, rows):
    return f"{settings['dataset']}, {rows:,} train rows, {settings['test_rows']:,} test rows"


def workload_compare(bench, settings, args):
    cfg = make_config(settings, args, args.threads)
    data = bench.data(settings["dataset"], settings["rows"], settings["test_rows"])
    results = bench.run_libs("fit-predict", cfg, data, rows=settings["rows"])
    header = (f"{describe_data(settings, settings['rows'])}; {cfg.rounds} rounds, "
              f"{cfg.leaves} leaves, lr {cfg.learning_rate}, {cfg.max_bin} bins, "
              f"{threads_text(cfg.threads)}")
    if cfg.task == "multiclass":
        header = header.replace(", ", f" ({cfg.n_classes} classes), ", 1)
    return header, compare_table(results)


def workload_threads(bench, settings, args):
    cfgs = [make_config(settings, args, threads) for threads in settings["threads_list"]]
    # the ceiling: as many one-thread fits at once as the last thread count has threads
    together = settings["threads_list"][-1] // settings["threads_list"][0] if args.together else 0
    rows_list = settings.get("rows_list") or [settings["rows"]]
    busy_list = args.busy_list or [args.busy]
    results = []
    for rows in rows_list:
        data = bench.data(settings["dataset"], rows, settings["test_rows"])
        for busy in busy_list:
            log(f"{rows:,} rows, {busy} busy program{'s' * (busy != 1)}")
            bench.busy = busy
            results += bench.run_grid("fit-predict", cfgs, data, together=together, rows=rows,
                                      busy=busy)
    cases = [key for key, values in (("rows", rows_list), ("busy", busy_list))
             if len(values) > 1]
    data_text = (describe_data(settings, rows_list[0]) if len(rows_list) == 1 else
                 f"{settings['dataset']}, {settings['test_rows']:,} test rows")
    header = (f"{data_text}; {settings['rounds']} rounds, "
              f"{settings['leaves']} leaves; speed-up = time at "
              f"{threads_text(settings['threads_list'][0])} ÷ time at more, the median "
              f"over the repeats (each run next to its partner) and their range")
    if len(busy_list) > 1:
        header += ("; busy programs: that many other processes each keeping a core busy "
                   "beside every run")
    if together:
        header += (f"; throughput = {together} fits at "
                   f"{threads_text(settings['threads_list'][0])} in separate processes at "
                   f"once: the sum of (time alone ÷ time together), what the machine gives "
                   f"to independent work")
    return header, threads_table(results, settings["threads_list"], together, cases)


def workload_rows(bench, settings, args):
    cfg = make_config(settings, args, args.threads)
    results = []
    for rows in settings["rows_list"]:
        log(f"rows = {rows:,}")
        results += bench.run_libs("fit-predict", cfg, bench.data(settings["dataset"], rows,
                                                                  settings["test_rows"]), rows=rows)
    header = (f"{settings['dataset']}, {settings['test_rows']:,} test rows; {cfg.rounds} rounds, "
              f"{cfg.leaves} leaves, {threads_text(cfg.threads)}; cells: fit s (÷ gbtree)")
    if args.plot:
        plot_rows(results, settings["rows_list"], args.plot,
                  f"{settings['dataset']}: fit time vs rows ({cfg.rounds} rounds, "
                  f"{cfg.leaves} leaves, {threads_text(cfg.threads)})")
        log(f"wrote {args.plot}")
    return header, rows_table(results, settings["rows_list"])


def workload_latency(bench, settings, args):
    cfg = make_config(settings, args, args.threads)
    data = bench.data(settings["dataset"], settings["rows"], settings["test_rows"])
    results = bench.run_libs("latency", cfg, data, rows=settings["rows"])
    header = (f"single-row `predict` through the scikit-learn API, {cfg.rounds} trees x "
              f"{cfg.leaves} leaves trained on {settings['rows']:,} {settings['dataset']} rows; "
              f"{args.calls} calls, {threads_text(cfg.threads)}")
    return header, latency_table(results)


CORE = {"higgs-like": workload_compare, "regression-wide": workload_compare,
        "multiclass": workload_compare, "threads": workload_threads, "rows": workload_rows,
        "predict-latency": workload_latency}


def add_arguments(p, name):
    """The core workloads' own options."""
    if name == "threads":
        p.add_argument("--threads-list", type=int_list, help="thread counts (default 1,2)")
        p.add_argument("--together", action="store_true",
                       help="every repeat also runs copies of the fewest-threads fit at once, "
                            "in separate processes (the machine's ceiling for the speed-up)")
        p.add_argument("--rows-list", type=int_list,
                       help="training sizes, one table row each (default: --rows)")
        p.add_argument("--busy-list", type=lambda text: [int(v) for v in text.split(",")],
                       help="busy programs beside the runs, one table row each, such as "
                            "0,1,2 (default: --busy)")
    if name == "rows":
        p.add_argument("--rows-list", type=int_list,
                       help="training sizes (default 1e5,2.5e5,5e5,1e6,2e6,4e6)")
        p.add_argument("--plot", help="also draw the plot into this PNG (the docs' one: every "
                                      "library, --plot docs/benchmark_rows.png)")
    if name == "predict-latency":
        p.add_argument("--calls", type=positive_int, default=2000,
                       help="timed calls (default 2000)")


def run(name, args, bench):
    settings = dict(WORKLOADS[name])
    settings.update({key: getattr(args, key) for key in
                     ("rows", "test_rows", "rounds", "leaves", "threads_list", "rows_list")
                     if getattr(args, key, None) is not None})
    header, table = CORE[name](bench, settings, args)
    return {"header": header, "table": table, "settings": settings}


# ---------------------------------------------------------------------------- main
def non_negative_int(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_int(text):
    value = int(float(text))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def int_list(text):
    try:
        values = [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected numbers >= 1, got {text!r}")
    return values


def add_common_arguments(p, defaults):
    """The options every workload has; ``defaults`` are the workload's."""
    def default(key, fallback=None):
        value = defaults.get(key, fallback)
        return "" if value is None else f" (default {value:,})" if isinstance(value, int) \
            else f" (default {value})"
    p.add_argument("--rows", type=positive_int, help="training rows" + default("rows"))
    p.add_argument("--test-rows", type=positive_int, help="test rows" + default("test_rows"))
    p.add_argument("--rounds", type=positive_int, help="boosting rounds" + default("rounds"))
    p.add_argument("--leaves", type=positive_int, help="leaves per tree" + default("leaves"))
    p.add_argument("--threads", type=positive_int, default=defaults.get("threads", 2),
                   help="threads for every library" + default("threads", 2))
    p.add_argument("--libs", default=defaults.get("libs", DEFAULT_LIBS),
                   help="comma-separated libraries" + default("libs", DEFAULT_LIBS)
                   + "; 'catboost' = catboost-symmetric,catboost-lossguide")
    p.add_argument("--repeat", type=positive_int, default=1,
                   help="fresh runs per library, interleaved; times reported as medians")
    name = defaults.get("json_name", defaults["name"])
    p.add_argument("--json", help=f"output file (default benchmarks/results/local/{name}.json, "
                                  f"which git ignores)")
    p.add_argument("--save", action="store_true",
                   help=f"write benchmarks/results/{name}.json, the result the docs' tables "
                        f"are made from (python -m benchmarks tables)")
    p.add_argument("--learning-rate", type=float, default=0.1, help="(default 0.1)")
    p.add_argument("--max-bin", type=positive_int, default=255,
                   help="value bins per feature, not counting the missing-value bin (default 255)")
    p.add_argument("--seed", type=int, default=0, help="data and model seed (default 0)")
    p.add_argument("--predict-repeats", type=positive_int, default=3,
                   help="predictions of the test set per run; the fastest is reported")
    p.add_argument("--busy", type=non_negative_int, default=0, metavar="N",
                   help="run N busy loops (one core each) beside every timed process: "
                        "a machine shared with other programs (default 0)")
    p.add_argument("--timeout", type=float, default=3600,
                   help="seconds per child process (default 3600)")


def output_path(args, defaults):
    """Where a run's JSON goes: ``--json``; with ``--save`` the results the docs'
    tables are made from; else a folder git ignores (a run of one's own leaves
    the tracked results alone)."""
    name = f"{defaults.get('json_name', args.workload)}.json"
    if args.json and args.save:
        raise SystemExit("give --json or --save, not both")
    return (Path(args.json) if args.json else RESULTS_DIR / name if args.save
            else RESULTS_DIR / "local" / name)


def registry():
    """workload name -> (module, its defaults), in the order of ``MODULES``."""
    out = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, defaults in module.WORKLOADS.items():
            out[name] = (module, dict(defaults, name=name))
    return out


def build_parser(workloads):
    p = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
        epilog="`python -m benchmarks WORKLOAD --help` lists a workload's options.")
    p.add_argument("--list", action="store_true", help="print the workloads' names and exit")
    sub = p.add_subparsers(dest="workload", metavar="WORKLOAD")
    for name, (module, defaults) in workloads.items():
        w = sub.add_parser(name, help=defaults["help"], description=defaults["help"])
        add_common_arguments(w, defaults)
        if hasattr(module, "add_arguments"):     # options of its own
            module.add_arguments(w, name)
    import tables
    tables.add_arguments(sub.add_parser("tables", help=tables.__doc__.splitlines()[0],
                                        description=tables.__doc__.splitlines()[0]))
    return p


def main(argv=None):
    workloads = registry()
    parser = build_parser(workloads)
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(workloads))
        return
    if args.workload is None:
        parser.error("name a workload (--list shows them)")
    if args.workload == "tables":
        import tables
        return tables.run(args)
    module, defaults = workloads[args.workload]
    for key in ("rows", "test_rows", "rounds", "leaves"):
        if getattr(args, key) is None and key in defaults:
            setattr(args, key, defaults[key])
    # an unknown name stops here, before any data are made
    libs = getattr(module, "resolve_libs", resolve)(args.libs)
    started = datetime.datetime.now().astimezone()
    with tempfile.TemporaryDirectory(prefix="gbtree-bench-") as tmpdir:
        bench = Bench(args, tmpdir, libs)
        report = module.run(args.workload, args, bench)
    header = report.pop("header")
    if args.busy:
        header += (f"; beside every run, {args.busy} other program{'s' * (args.busy > 1)} "
                   f"keeping a core busy (`--busy {args.busy}`)")
    finished = datetime.datetime.now().astimezone()
    info = machine_info()
    program = ("-m benchmarks" if Path(sys.argv[0]).name == "__main__.py"
               else shlex.quote(sys.argv[0]))
    command = f"python {program} " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(f"### {args.workload}\n\n{header}\n\n{report['table']}\n\n"
          f"{started:%Y-%m-%d %H:%M %Z}, nproc {info['nproc']}, {info['cpu']} ({info['simd']})")
    out = output_path(args, defaults)
    out.parent.mkdir(parents=True, exist_ok=True)
    options = {k: v for k, v in vars(args).items()
               if k not in ("list", "workload", "json", "save")}
    out.write_text(json.dumps(dict({
        "workload": args.workload, "command": command, "started": started.isoformat(),
        "finished": finished.isoformat(), "machine": info, "options": options,
        "learning_rate": args.learning_rate, "max_bin": args.max_bin, "seed": args.seed,
        "busy": args.busy, "header": header}, **report, results=bench.results),
        indent=2) + "\n")
    log(f"wrote {out}")


if __name__ == "__main__":
    sys.path.insert(0, str(BENCH_DIR))
    # run as the module ``run``, the one the workload modules import
    sys.exit(importlib.import_module("run").main())
