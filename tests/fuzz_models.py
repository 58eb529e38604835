"""Mutated model files and a worker that loads them (shared by tests/test_model_files.py
and benchmarks/fuzz_model_files.py).

``python fuzz_models.py DIR`` loads every file in DIR (sorted), predicts with each
model that loads, and prints one JSON line per file: ``{"file", "outcome"}`` where
outcome is "loaded", "ValueError", "loaded a broken model" (see ``_sound``) or the name
of any other exception. A crash or a hang shows as a missing line: the caller knows
the file from the last line printed.
"""
import copy
import io
import json
import os
import random
import shutil
import sys
import zipfile

import numpy as np

HUGE = [10 ** 12, -(10 ** 12), 2 ** 31, -(2 ** 31) - 1, 2 ** 63, 2 ** 64, 10 ** 30, 1e308,
        -1, -2, 0, 1e-300, "inf", "nan", 255, 65536]


def fitted_models(n_estimators=4):
    """Small fitted models of every kind: {name: (estimator, X to predict)}."""
    import pandas as pd
    import scipy.sparse as sp
    from gbtree import GBTClassifier, GBTRanker, GBTRegressor
    rng = np.random.RandomState(0)
    X = rng.randn(200, 4)
    X[rng.rand(200, 4) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) + 0.3 * rng.randn(200)
    small = dict(n_estimators=n_estimators, max_depth=3)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["color"] = rng.choice(["red", "green", "blue"], 200)
    df["shop"] = rng.randint(0, 40, 200)
    S = sp.random(200, 4, density=0.4, format="csr", random_state=0)
    return {
        "regressor": (GBTRegressor(**small).fit(X, y), X),
        "binary": (GBTClassifier(**small).fit(X, y > 0), X),
        "multiclass": (GBTClassifier(**small).fit(X, np.digitize(y, [-0.5, 0.5])), X),
        "ranker": (GBTRanker(**small).fit(X, rng.randint(0, 3, 200),
                                          qid=np.repeat(np.arange(20), 10)), X),
        "categorical": (GBTRegressor(categorical_features=["color", "shop"],
                                     max_cat_to_ordinal=8, **small).fit(df, y), df),
        "sparse": (GBTRegressor(absent_as_missing=True, **small).fit(S, y), S),
    }


# ---------------------------------------------------------------------- mutations
def _paths(node, prefix=()):
    """Every (container path, key) of a JSON document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for k, v in items:
        yield prefix + (k,)
        if isinstance(v, (dict, list)) and (not isinstance(v, list) or len(v) < 50):
            yield from _paths(v, prefix + (k,))
        elif isinstance(v, list):   # long arrays: a few of their entries
            for i in random.sample(range(len(v)), 3):
                yield prefix + (k, i)


def _at(doc, path):
    for k in path[:-1]:
        doc = doc[k]
    return doc, path[-1]


def _mutate_trees(doc, rng):
    """A node's value, cover, gain or threshold made huge, tiny or not finite, or a
    tree moved to another output (``doc`` in place)."""
    ensemble = doc.get("ensemble") if isinstance(doc.get("ensemble"), dict) else None
    try:
        nodes = ensemble["nodes"]
        classes = ensemble["tree_class"]["$array"]["data"]
    except (KeyError, TypeError):
        return False
    if rng.random() < 0.3 and classes:
        i = rng.randrange(len(classes))
        classes[i] = rng.choice([0, 1, 2, classes[i] + 1, classes[-1]])
        return True
    data = nodes[rng.choice(["value", "value", "cover", "gain", "threshold"])]["$array"]["data"]
    k = rng.randrange(len(data))
    data[k] = rng.choice(["inf", "-inf", "nan", 1e308, -1e308, 1e300, 1e200, 1e-300, -1.0, 0.0])
    return True


def mutate_document(doc, rng):
    """One structural change of a parsed document (in place; returned): a field deleted
    or duplicated, a value of another type, a huge or negative number, or a tree's
    numbers (``_mutate_trees``)."""
    random.seed(rng.random())
    if rng.random() < 0.25 and _mutate_trees(doc, rng):
        return doc
    paths = list(_paths(doc))
    parent, key = _at(doc, rng.choice(paths))
    op = rng.choice(["delete", "duplicate", "type", "number", "number"])
    if op == "delete":
        del parent[key]
    elif op == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[key + "_copy" if rng.random() < 0.3 else rng.choice(list(parent))] = \
                copy.deepcopy(parent[key])
    elif op == "type":
        parent[key] = rng.choice([None, True, "x", [], {}, [1, 2], {"$array": {}}, 1.5,
                                  {"$dict": [[1, 2]]}, {"$float": "nan"}])
    else:
        parent[key] = rng.choice(HUGE)
    return doc


def _flip(data, rng, n_bits):
    data = bytearray(data)
    for _ in range(n_bits):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    return bytes(data)


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def mutate(data, rng):
    """A mutated copy of a model file's bytes (JSON or binary)."""
    binary = data[:4] == b"PK\x03\x04"
    op = rng.choice(["flip", "flip", "truncate", "document", "document", "document",
                     "member"] if binary else ["flip", "truncate", "document", "document"])
    if op == "flip":
        return _flip(data, rng, rng.choice([1, 1, 2, 8]))
    if op == "truncate":
        return data[:rng.randrange(len(data))]
    if not binary:
        return json.dumps(mutate_document(json.loads(data), rng)).encode()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    if op == "document":
        members["model.json"] = json.dumps(mutate_document(json.loads(members["model.json"]),
                                                           rng)).encode()
    else:
        name = rng.choice(sorted(members))
        members[name] = rng.choice([_flip(members[name], rng, 4), members[name][:-8],
                                    members[name] + b"\0" * 8, b"\xff" * len(members[name])])
    return _zip(members)


def campaign(base, n_mutations, folder, seed=0, batch=500, timeout=600, progress=None,
             workers=2):
    """Write ``n_mutations`` mutations of the files ``base`` ({name: bytes}) in batches
    to ``folder`` and load each batch in a subprocess (``workers`` at a time, the next
    batch written meanwhile). Returns (counts by outcome, failures): a failure is a
    crash, a hang, or an exception other than ValueError. ``progress(counts,
    failures)`` is called after every batch."""
    import subprocess
    import tempfile
    import time
    rng = random.Random(seed)
    names = sorted(base)
    counts, failures = {}, []
    running = []   # (process, batch folder, size, output file, start time)

    def finish(proc, batch_dir, size, out_path, started):
        try:
            proc.wait(timeout=max(1.0, timeout - (time.monotonic() - started)))
            code = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = "timeout"
        with open(out_path) as f:
            lines = f.read().splitlines()
        seen = set()
        for line in lines:
            rec = json.loads(line)
            if "file" in rec:
                seen.add(rec["file"])
                kind = rec["outcome"] if rec["outcome"] in ("loaded", "ValueError") else "other"
                counts[kind] = counts.get(kind, 0) + 1
                if kind == "other":
                    failures.append((rec["file"], rec["outcome"]))
        if len(seen) < size:   # the worker died or hung on the file it started last
            started_files = [json.loads(x)["start"] for x in lines if '"start"' in x]
            failures.append((started_files[-1] if started_files else None,
                             f"worker exit {code}"))
            counts["crash_or_hang"] = counts.get("crash_or_hang", 0) + 1
            # the rest of the batch is not run: its files are not counted
        shutil.rmtree(batch_dir, ignore_errors=True)
        os.remove(out_path)
        if progress is not None:
            progress(counts, failures)

    done = 0
    while done < n_mutations or running:
        if done < n_mutations:
            size = min(batch, n_mutations - done)
            batch_dir = tempfile.mkdtemp(dir=folder)
            for i in range(size):
                src = names[(done + i) % len(names)]
                with open(os.path.join(batch_dir, f"{done + i:07d}-{src}"), "wb") as f:
                    f.write(mutate(base[src], rng))
            out_path = batch_dir + ".out"
            with open(out_path, "w") as out:
                proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), batch_dir],
                                        stdout=out, stderr=subprocess.DEVNULL)
            running.append((proc, batch_dir, size, out_path, time.monotonic()))
            done += size
        if len(running) >= workers or (done >= n_mutations and running):
            finish(*running.pop(0))
    return counts, failures


# ---------------------------------------------------------------------- the worker
def _limit_memory(gib):
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    except (ImportError, ValueError, OSError):
        pass


def _sound(est, X):
    """What a model that loads must be: finite raw scores, trees that go round the
    outputs in order, and SHAP values that add up to the raw scores (within float64
    rounding of the model's scale: its base scores and largest leaf values summed)."""
    ens = est._ensemble
    if not np.array_equal(ens.tree_class, np.arange(ens.n_trees) % ens.n_outputs):
        return False
    raw = est._raw_predict(X)
    contribs = est.predict(X, pred_contribs=True).reshape(raw.shape + (-1,))
    nodes = ens.nodes
    leaf_values = np.where(nodes["is_leaf"] == 1, np.abs(nodes["value"]), 0.0)
    scale = np.abs(ens.base_score).sum() + np.maximum.reduceat(leaf_values,
                                                               ens.tree_ptr[:-1]).sum()
    return bool(np.all(np.isfinite(raw)) and np.all(np.isfinite(contribs))
                and np.allclose(contribs.sum(axis=-1), raw, rtol=0, atol=1e-9 * scale))


def load_all(folder):
    import warnings
    import gbtree
    warnings.simplefilter("ignore")   # (X without the fitted feature names: expected here)
    for name in sorted(os.listdir(folder)):
        print(json.dumps({"start": name}), flush=True)
        try:
            est = gbtree.load_model(os.path.join(folder, name))
            X = np.random.RandomState(0).randn(16, est.n_features_in_)
            X[::3, ::2] = np.nan
            est.predict(X)
            est.apply(X)
            if hasattr(est, "predict_proba"):
                est.predict_proba(X)
            est.get_dump()
            outcome = "loaded" if _sound(est, X) else "loaded a broken model"
        except ValueError:
            outcome = "ValueError"
        except Exception as exc:  # reported to the caller, which fails on it
            outcome = f"{type(exc).__name__}: {str(exc)[:200]}"
        print(json.dumps({"file": name, "outcome": outcome}), flush=True)


if __name__ == "__main__":
    _limit_memory(int(os.environ.get("GBTREE_FUZZ_GIB", "4")))
    load_all(sys.argv[1])
