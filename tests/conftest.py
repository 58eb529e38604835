import os
from pathlib import Path

import numpy as np
import pytest

# Small real data sets kept with the tests (tests/data/README.md: origin and licence).
DATA_DIR = Path(__file__).resolve().parent / "data"


def data_file(name):
    """Path of a real data set kept in tests/data."""
    return DATA_DIR / name


@pytest.fixture
def rng():
    return np.random.RandomState(42)


@pytest.fixture(scope="module")
def noisy_regression():
    """(X_train, X_test, y_train, y_test): a noisy non-linear regression."""
    from sklearn.model_selection import train_test_split
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(3000, 5))
    y = np.sin(3 * X[:, 0]) + X[:, 1] + rng.normal(scale=1.0, size=3000)
    return train_test_split(X, y, random_state=0)


def pytest_report_header(config):
    from gbtree.kernels._openmp_helpers import openmp_enabled, omp_max_threads
    from gbtree.predicting._predictor import simd_level
    return [f"gbtree: OpenMP enabled={openmp_enabled()}, omp_get_max_threads={omp_max_threads()}, "
            f"cpu_count={os.cpu_count()}, "
            f"vector tree walk={('none', 'AVX2', 'AVX-512')[simd_level()]}"]
