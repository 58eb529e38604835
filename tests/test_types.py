"""The package and the gallery's examples pass mypy (pyproject.toml's settings)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_package_and_the_examples():
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    done = subprocess.run([sys.executable, "-m", "mypy", "gbtree", "examples"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    assert "Success" in done.stdout
