"""A Parquet file several times larger than the memory a fit may use, fitted out of
core under that limit.

    python benchmarks/parquet_memory.py [--rows 20000000] [--limit-mib 768]
                                        [--rounds 10] [--threads 2] [--keep PATH]

Writes the ``higgs-like`` training rows (datagen.py: 28 float32 features and the
label) to a Parquet file a block of rows at a time (the rows are never all in
memory), then fits ``GBTClassifier`` on ``ExternalData(path, label="label")`` in a
child process put in a new memory cgroup limited to ``--limit-mib`` (Linux, cgroup
v1 or v2, as root): the limit covers what the process owns and its page cache
together, and a fit that needs more is killed. Prints the rows' size in memory,
the file's, the limit, the fit's seconds, the cgroup's peak usage and the AUC on
100,000 test rows. ``--keep PATH`` reuses (or keeps) the Parquet file there.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datagen import HIGGS_FEATURES, _higgs_block, block_rngs  # noqa: E402

CHILD = r"""
import json, sys, time
cgroup_procs = sys.argv[1]
with open(cgroup_procs, "w") as f:   # this process into the limited cgroup, first
    f.write(str(__import__("os").getpid()))
path, rounds, threads = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, sys.argv[5])
import numpy as np
from sklearn.metrics import roc_auc_score
from datagen import _rows
from gbtree import ExternalData, GBTClassifier
t = time.perf_counter()
model = GBTClassifier(n_estimators=rounds, max_depth=8, n_jobs=threads).fit(
    ExternalData(path, label="label", block_rows=500_000))
fit = time.perf_counter() - t
X_test, y_test, _ = _rows("higgs-like", 100_000, "test", 0)
print(json.dumps({"fit_s": fit, "auc": roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])}))
"""


def write_parquet(path, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = pa.schema([(name, pa.float32()) for name in HIGGS_FEATURES]
                       + [("label", pa.int8())])
    with pq.ParquetWriter(path, schema) as writer:
        for rng, m in block_rngs(rows, "train", 0):
            X, y, _ = _higgs_block(rng, 100_000)
            columns = [pa.array(X[:m, j]) for j in range(X.shape[1])] + [pa.array(y[:m])]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))


def memory_cgroup(limit):
    """(the cgroup's folder, its procs file, a function giving its peak usage) of a new
    memory cgroup limited to ``limit`` bytes."""
    name = f"gbtree-parquet-{os.getpid()}"
    v1 = Path("/sys/fs/cgroup/memory")
    if v1.is_dir():
        folder = v1 / name
        folder.mkdir()
        (folder / "memory.limit_in_bytes").write_text(str(limit))
        return folder, folder / "cgroup.procs", \
            lambda: int((folder / "memory.max_usage_in_bytes").read_text())
    folder = Path("/sys/fs/cgroup") / name
    folder.mkdir()
    (folder / "memory.max").write_text(str(limit))
    return folder, folder / "cgroup.procs", lambda: int((folder / "memory.peak").read_text())


def cpu_name():
    """The CPU's model name, family and model (Linux), else the machine's type."""
    try:
        fields = dict(line.split(":", 1) for line in Path("/proc/cpuinfo").read_text()
                      .splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        return (f"{fields['model name']} (family {fields['cpu family']} model "
                f"{fields['model']})")
    except (OSError, KeyError, ValueError):
        return platform.machine()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20_000_000)
    p.add_argument("--limit-mib", type=int, default=768)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--keep", type=Path, help="the Parquet file: reused if there, else kept")
    a = p.parse_args(argv)
    work = Path(tempfile.mkdtemp())
    path = a.keep or work / "higgs.parquet"
    if not path.exists():
        t = time.perf_counter()
        write_parquet(path, a.rows)
        print(f"wrote {path} in {time.perf_counter() - t:.1f} s")
    data_mib = a.rows * (len(HIGGS_FEATURES) * 4 + 1) / 2 ** 20
    file_mib = path.stat().st_size / 2 ** 20
    limit = a.limit_mib * 2 ** 20
    folder, procs, peak = memory_cgroup(limit)
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(procs), str(path),
                               str(a.rounds), str(a.threads), str(Path(__file__).parent)],
                              capture_output=True, text=True)
        used = peak()
    finally:
        folder.rmdir()
        if not a.keep:
            path.unlink(missing_ok=True)
            work.rmdir()
    if done.returncode != 0:
        print(done.stderr[-2000:])
        print(f"the fit failed (exit {done.returncode}) under {a.limit_mib} MiB")
        return 1
    out = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores")
    print(f"{a.rows:,} rows x {len(HIGGS_FEATURES)} float32 features: {data_mib:,.0f} MiB "
          f"in memory, a {file_mib:,.0f} MiB Parquet file")
    print(f"memory limit {a.limit_mib} MiB (the rows are {data_mib / a.limit_mib:.1f} times "
          f"it); peak use {used / 2 ** 20:,.0f} MiB (the process and its page cache)")
    print(f"fit: {a.rounds} rounds of depth 8 on {a.threads} threads in {out['fit_s']:.1f} s, "
          f"test AUC {out['auc']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
