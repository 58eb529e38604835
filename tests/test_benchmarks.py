"""Every benchmark workload runs, at a tiny size, with gbtree and one peer.

Each workload goes through the one entry point (``benchmarks/run.py``, as
``python -m benchmarks`` does), with every library in its own child process;
the test reads the JSON it writes. Timings are not checked, only that the
runs finished and scored sensibly.
"""
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "benchmarks" / "run.py"
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import checkout_is_built  # noqa: E402

PEER = "lightgbm"
pytest.importorskip(PEER, reason="the benchmark smoke test compares gbtree with LightGBM "
                                 "(in the test extra)")
# the workloads LightGBM cannot run, and the peer they run with instead (test extra)
PEERS = {"multi-target": "xgboost", "split-finding": "xgboost", "symmetric": "catboost-symmetric",
         "dask": "xgboost", "external-memory": "xgboost", "external-memory-sparse": "xgboost"}

# workload -> the options that make it tiny (every run: --rounds 3 --threads 1)
TINY = {
    "dask": ["--rows", "4000", "--test-rows", "500", "--partitions", "4", "--depth", "3"],
    "higgs-like": ["--rows", "2000", "--test-rows", "500"],
    "regression-wide": ["--rows", "2000", "--test-rows", "500"],
    "higgs-like-quantized": ["--rows", "2000", "--test-rows", "500"],
    "regression-wide-quantized": ["--rows", "2000", "--test-rows", "500"],
    "quantized-accuracy": ["--rows", "3000", "--test-rows", "500", "--seeds", "2"],
    "multiclass": ["--rows", "3000", "--test-rows", "500", "--leaves", "7"],
    "rows": ["--rows-list", "2000", "--test-rows", "500"],
    "threads": ["--rows", "2000", "--test-rows", "500", "--threads-list", "1,2"],
    "predict-latency": ["--rows", "2000", "--test-rows", "500", "--calls", "20"],
    "predict": ["--rows", "2000", "--test-rows", "500"],
    "wide-sparse": ["--rows", "2000"],
    "onehot": ["--rows", "2000"],
    "categorical": ["--rows", "2000"],
    "ranking": ["--queries", "40", "--docs", "20"],
    "sampling": ["--rows", "2000", "--test-rows", "500"],
    "random-forest": ["--rows", "2000", "--test-rows", "500"],
    "multi-target": ["--rows", "2000", "--test-rows", "500"],
    "split-finding": ["--rows-list", "2000", "--test-rows", "500", "--depth", "3"],
    "symmetric": ["--rows", "2000", "--test-rows", "500", "--depth", "3", "--latency-rows", "2000",
                  "--calls", "20"],
    "out-of-core": ["--rows", "2000", "--test-rows", "500"],
    "external-memory": ["--rows", "3000", "--test-rows", "500", "--chunk-rows", "1000",
                        "--depth", "3"],
    "external-memory-sparse": ["--rows", "3000", "--test-rows", "500", "--chunk-rows", "1000",
                               "--depth", "3"],
    "shap": ["--rows", "2000", "--test-rows", "200", "--interaction-rows", "20"],
    "model-files": ["--rows", "2000", "--test-rows", "500"],
    "block-codecs": ["--rows", "3000", "--test-rows", "500", "--block-rows", "1000",
                     "--depth", "3"],
    "dask-scaling": ["--rows", "4000", "--test-rows", "500", "--workers-list", "1,3",
                     "--calibration-rows", "2000", "--depth", "3"],
}
# workloads that measure gbtree alone, with no peer: their table, not a library's
OWN = {"block-codecs": "| codec |", "dask-scaling": "| workers |",
       "quantized-accuracy": "| data set |"}


def bench(*args, cwd=ROOT, env=None, check=True):
    proc = subprocess.run([sys.executable, str(RUN), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit code {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """workload -> (finished process, its JSON path): every workload at its tiny size,
    as many at a time as there are cores (each is mostly one busy thread)."""
    folder = tmp_path_factory.mktemp("benchmarks")

    def one(workload):
        out = folder / f"{workload}.json"
        proc = bench(workload, *TINY[workload], "--rounds", "3", "--threads", "1",
                     "--libs", f"gbtree,{PEERS.get(workload, PEER)}", "--json", str(out),
                     check=False)
        return proc, out

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return dict(zip(TINY, pool.map(one, TINY)))


def test_every_workload_is_smoke_tested():
    assert sorted(bench("--list").stdout.split()) == sorted(TINY)


@pytest.mark.parametrize("workload", sorted(TINY))
def test_workload_runs_and_writes_json(workload, smoke_runs):
    proc, out = smoke_runs[workload]
    assert proc.returncode == 0, proc.stderr
    assert f"### {workload}" in proc.stdout
    run = json.loads(out.read_text())
    assert run["workload"] == workload
    if workload in OWN:
        assert run["table"].startswith(OWN[workload]) and run["table"] in proc.stdout
        if workload == "block-codecs":
            assert run["ratios"]["none"] == 1.0 and run["ratios"]["4-bit"] >= 1.0
        elif workload == "quantized-accuracy":     # every data set, both fits at every seed
            assert len(run["results"]) == run["table"].count("\n") - 1 >= 10
            for r in run["results"]:
                assert len(r["float"]) == len(r["quantized"]) == run["seeds"] == 2
                assert all(math.isfinite(v) for v in r["float"] + r["quantized"]), r
        else:
            assert all(f["per_tree"] > 0 and 0.5 < f["auc"] <= 1 for f in run["fits"].values())
            assert all(math.isfinite(v) for v in run["parameters"].values() if v != math.inf)
        return
    assert run["table"].startswith("| library |") or run["table"].startswith("| train rows |")
    assert run["table"] in proc.stdout
    results = run["results"]
    assert {r["lib"] for r in results} == {"gbtree", PEERS.get(workload, PEER)}
    for r in results:
        assert r["status"] == "ok", r
        assert math.isfinite(r["score"]), r
        if "fit_seconds" in r:
            assert r["fit_seconds"] > 0
    gbtree = next(r for r in results if r["lib"] == "gbtree")
    # the children import the checkout's build when there is one, never its unbuilt sources
    module = Path(gbtree["module_file"]).resolve()
    assert module.is_relative_to(ROOT / "gbtree") == checkout_is_built(ROOT)


def help_text(capsys, *args):
    """What ``--help`` prints, from the entry point's parser in this process."""
    import run
    with pytest.raises(SystemExit) as exc:
        run.main([*args, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("workload", sorted(TINY))
def test_help_lists_the_common_flags(workload, capsys):
    text = help_text(capsys, workload)
    assert text.startswith("usage:")
    for flag in ("--rows", "--rounds", "--threads", "--libs", "--repeat", "--json"):
        assert flag in text, (workload, flag)


def test_help_of_the_entry_point_and_tables(capsys):
    text = bench("--help").stdout
    assert all(workload in text for workload in TINY)
    assert "--results" in help_text(capsys, "tables")


SCRIPTS = sorted(path.name for path in (ROOT / "benchmarks").glob("*.py")
                 if 'if __name__ == "__main__":' in path.read_text())


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_answers_help(script):
    # (the Dask workloads' children and worker.py once failed with a JSONDecodeError)
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:")


@pytest.mark.parametrize("dataset", ["higgs-like", "regression-wide", "multiclass",
                                     "multi-target"])
def test_profile_fit_fits_every_data_set_it_offers(dataset):
    # (multi-target was offered and failed with a KeyError)
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "profile_fit.py"), dataset,
                           "3000", "3", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{dataset} rows=3000 rounds=3 threads=1 fit="), proc.stdout
    choices = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "profile_fit.py"),
                              "--help"], capture_output=True, text=True, timeout=120).stdout
    assert "{higgs-like,regression-wide,multiclass,multi-target}" in choices


@pytest.mark.parametrize("args, message", [
    (["no-such-workload"], "invalid choice: 'no-such-workload'"),
    (["higgs-like", "--libs", "gbtree,nosuchlib"], "unknown library 'nosuchlib'"),
    (["higgs-like", "--rows", "many"], "--rows"),
])
def test_bad_input_is_a_clear_error(args, message, tmp_path):
    proc = bench(*args, "--json", str(tmp_path / "x.json"), check=False)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_tables_regenerates_the_marked_tables(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    old = {"workload": "higgs-like", "started": "2026-01-01T00:00:00+00:00",
           "machine": {"cpu": "CPU A", "simd": "AVX2"}, "table": "| old |\n|---|", "header": "h"}
    new = dict(old, started="2026-01-02T00:00:00+00:00", table="| new |\n|---|")
    (results / "a.json").write_text(json.dumps(new))
    (results / "b.json").write_text(json.dumps(old))
    (results / "notes.json").write_text(json.dumps({"something": "else"}))
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n\n<!-- table: higgs-like -->\nstale\n<!-- end table -->\n\nmore\n")
    bench("tables", "--results", str(results), "--docs", str(doc))
    text = doc.read_text()
    assert "| new |" in text and "| old |" not in text and "stale" not in text
    assert text.startswith("intro\n\n<!-- table: higgs-like -->\n")
    assert text.endswith("<!-- end table -->\n\nmore\n")
    assert "a.json" in text and "CPU A" in text
    # a marker naming a workload without results is an error that names it
    doc.write_text("<!-- table: multiclass -->\n<!-- end table -->\n")
    proc = bench("tables", "--results", str(results), "--docs", str(doc), check=False)
    assert proc.returncode != 0 and "multiclass" in proc.stderr and "Traceback" not in proc.stderr


def test_children_use_gbtree_from_pythonpath_when_the_checkout_is_not_built(tmp_path):
    """A copy of the benchmarks in a folder without a build (a fresh clone): the
    children must import the gbtree that PYTHONPATH provides, not the copy's sources."""
    # the folder that holds the gbtree Python imports outside this checkout
    # (the installed one, or the in-place build named on PYTHONPATH)
    found = subprocess.run([sys.executable, "-c", "import gbtree; print(gbtree.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    if found.returncode != 0:
        pytest.skip("no built gbtree importable outside the source folder: "
                    + (found.stderr.strip().splitlines() or ["?"])[-1])
    package = Path(found.stdout.strip()).resolve().parent
    clone = tmp_path / "clone"
    (clone / "gbtree").mkdir(parents=True)
    (clone / "gbtree" / "__init__.py").write_text("raise ImportError('unbuilt sources')\n")
    (clone / "gbtree" / "_fake.pyx").write_text("")
    subprocess.run(["cp", "-r", str(ROOT / "benchmarks"), str(clone / "benchmarks")], check=True)
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "higgs-like", "--rows", "1000",
                           "--test-rows", "200", "--rounds", "2", "--threads", "1",
                           "--libs", "gbtree", "--json", str(out)],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(out.read_text())["results"]
    assert result["status"] == "ok", result
    assert Path(result["module_file"]).resolve().is_relative_to(package)


def test_a_run_of_ones_own_leaves_the_tracked_results_alone():
    # the documented command wrote over the tracked result the docs' tables read;
    # a run writes under results/local (ignored by git) unless --save or --json
    import run
    from common import RESULTS_DIR
    defaults = dict(name="higgs-like", help="binary")
    parser = run.build_parser({"higgs-like": (run, defaults)})
    path = run.output_path(parser.parse_args(["higgs-like"]), defaults)
    assert path == RESULTS_DIR / "local" / "higgs-like.json"
    assert run.output_path(parser.parse_args(["higgs-like", "--save"]), defaults) == \
        RESULTS_DIR / "higgs-like.json"
    assert run.output_path(parser.parse_args(["higgs-like", "--json", "x.json"]),
                           defaults) == Path("x.json")
    with pytest.raises(SystemExit, match="not both"):
        run.output_path(parser.parse_args(["higgs-like", "--json", "x.json", "--save"]),
                        defaults)
    ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT)
    assert ignored.returncode == 0
