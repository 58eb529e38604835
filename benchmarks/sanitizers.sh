#!/usr/bin/env bash
# The test suite on extensions built with AddressSanitizer and UndefinedBehaviorSanitizer
# (gcc or clang; Linux). The tracked files are copied to a temporary folder and built
# there in place, so the checkout's own build is untouched; the current Python
# environment must have the test extras (pip install ".[test]").
#   bash benchmarks/sanitizers.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$work"
cd "$work"
GBTREE_SANITIZE=address,undefined python setup.py -q build_ext --inplace -j 2
# Python itself is not instrumented: the ASan runtime is loaded first (with the C++
# runtime, whose exceptions it intercepts), leaks are not reported (the interpreter
# keeps objects until exit), and every finding aborts.
cxx="${CXX:-g++}"
export LD_PRELOAD="$($cxx -print-file-name=libasan.so) $($cxx -print-file-name=libstdc++.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export PYTHONPATH="$work"
# --capture=sys: a sanitizer's report (written to file descriptor 2) is not captured
# with the test's output, which is lost when the report ends the process
# The fuzz test's workers run under an address-space limit, which ASan's shadow memory
# exceeds at start (they abort before loading anything): that test runs unsanitized.
python -m pytest -q -p no:cacheprovider --capture=sys \
    --deselect tests/test_model_files.py::test_mutated_files_load_or_raise_value_error "$@"
