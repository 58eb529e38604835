#!/usr/bin/env python
"""Mutated model files, loaded in batches in subprocesses: the outcome counts.

    python benchmarks/fuzz_model_files.py [--mutations N] [--seed S] [--batch B]
                                          [--json PATH]

Saves small models of every kind (regressor, binary and multiclass classifier,
ranker, categorical columns, sparse-trained) in both encodings, mutates them
(``tests/fuzz_models.py``: bit flips, truncation, deleted and duplicated fields,
values of other types, huge, negative and non-finite numbers, trees moved to
other outputs, damaged zip members) and loads each mutation in a worker process
with a 4 GiB address-space limit and a timeout per batch; every model that loads
also predicts, applies and dumps, and must be sound (finite raw scores, trees in
the outputs' order, SHAP values that add up to the raw scores). A mutation passes
when it loads a sound model or raises ValueError; anything else (a broken model,
another exception, a crash, a hang) is listed with its file.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import fuzz_models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutations", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--json", help="output file (default benchmarks/results/local/"
                                   "fuzz-model-files.json, which git ignores)")
    ap.add_argument("--save", action="store_true",
                    help="write benchmarks/results/fuzz-model-files.json, the tracked result")
    args = ap.parse_args()
    if args.json is None:
        args.json = os.path.join(HERE, "results", *(() if args.save else ("local",)),
                                 "fuzz-model-files.json")
    folder = tempfile.mkdtemp(prefix="gbtree-fuzz-")
    base = {}
    for kind, (est, _) in fuzz_models.fitted_models().items():
        for suffix in (".json", ".gbt"):
            path = os.path.join(folder, kind + suffix)
            est.save_model(path)
            with open(path, "rb") as f:
                base[kind + suffix] = f.read()
    t0 = time.perf_counter()

    def write(counts, failures):   # after every batch: a stopped run keeps its counts
        result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds"),
                  "machine": platform.processor() or platform.machine(),
                  "cpus": os.cpu_count(), "mutations_asked": args.mutations,
                  "mutations_run": sum(counts.values()), "seed": args.seed,
                  "seconds": round(time.perf_counter() - t0, 1), "counts": counts,
                  "failures": failures[:200], "n_failures": len(failures),
                  "base_files": {k: len(v) for k, v in base.items()}}
        os.makedirs(os.path.dirname(args.json), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
        return result

    counts, failures = fuzz_models.campaign(base, args.mutations, folder, seed=args.seed,
                                            batch=args.batch, timeout=1800, progress=write)
    print(json.dumps(write(counts, failures), indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
