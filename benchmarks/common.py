"""What every benchmark module shares: where things are, how a child process finds
gbtree, logging and the machine's description.

How a child finds gbtree: when this checkout holds a build of every compiled
extension (``python setup.py build_ext --inplace`` or ``pip install -e .``),
the repository root goes first on the child's ``PYTHONPATH``, so the checkout
is benchmarked. Otherwise nothing is added and the child imports whatever
gbtree Python finds on its own: the installed one (``pip install ".[bench]"``),
or one on the caller's ``PYTHONPATH``. The unbuilt source folder is never put
first, so it cannot hide an installed gbtree.
"""
import importlib.machinery
import os
import platform
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"


def checkout_is_built(root=REPO_ROOT):
    """True when every ``gbtree/**/*.pyx`` of the checkout has its compiled extension beside it."""
    sources = list((Path(root) / "gbtree").rglob("*.pyx"))
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    return bool(sources) and all(
        any(src.with_name(src.stem + suffix).exists() for suffix in suffixes) for src in sources)


def child_pythonpath():
    """``PYTHONPATH`` for a child process: the checkout first when it is built (see above)."""
    parts = [str(REPO_ROOT)] if checkout_is_built() else []
    parts += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(parts)


def child_env(threads):
    """Environment of a child process running one library at ``threads`` threads."""
    return dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=child_pythonpath())


def use_checkout_build():
    """The same rule in this process, for the scripts that import gbtree themselves:
    the checkout first when built, else the unbuilt source folder kept out of the way."""
    root = str(REPO_ROOT)
    while root in sys.path:
        sys.path.remove(root)
    if "" in sys.path and Path.cwd() == REPO_ROOT:
        sys.path.remove("")
    if checkout_is_built():
        sys.path.insert(0, root)


def run_dask_child(child, workload):
    """The main of a workload file run as a child process that starts a Dask cluster:
    ``child(spec)`` on the JSON spec of its argument, its result printed as JSON
    (``python -m benchmarks WORKLOAD`` starts it; ``--help`` says so). (The file's
    folder is taken off the path first: its modules would shadow packages dask
    imports, and the cluster's workers import the file as their main module
    without it.)"""
    import argparse
    import json
    parser = argparse.ArgumentParser(
        description=f"The child process of one library's run of the {workload!r} "
                    f"workload: run `python -m benchmarks {workload} --help` instead.")
    parser.add_argument("spec", help="the run's JSON spec (written by the benchmark)")
    spec = json.loads(parser.parse_args().spec)
    use_checkout_build()
    here = str(BENCH_DIR)
    sys.path[:] = [p for p in sys.path if p != here]
    print(json.dumps(child(spec)))


def log(message):
    print(message, file=sys.stderr, flush=True)


def machine_info():
    cpu = platform.processor()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), cpu)
    return {"nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(), "cpu": cpu,
            "simd": simd_flags(), "python": platform.python_version(),
            "platform": platform.platform()}


def simd_flags():
    """The widest vector instruction sets the CPU reports (AVX2, AVX-512F), for the tables."""
    if not os.path.exists("/proc/cpuinfo"):
        return None
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return ",".join(name for flag, name in (("avx2", "AVX2"), ("avx512f", "AVX-512"))
                    if flag in flags) or "none"
