import os
from pathlib import Path

import numpy as np
import pytest

# ../shared/data beside the project root (CI clones the project with shared/ next to it).
DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def data_file(name):
    """Path of a shared real data set, or skip the test with the reason."""
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"real data set {path} not found (the ../shared/data folder is absent)")
    return path


@pytest.fixture
def rng():
    return np.random.RandomState(42)


def pytest_report_header(config):
    from gbtree._openmp_helpers import openmp_enabled, omp_max_threads
    from gbtree._predictor import simd_level
    return [f"gbtree: OpenMP enabled={openmp_enabled()}, omp_get_max_threads={omp_max_threads()}, "
            f"cpu_count={os.cpu_count()}, "
            f"vector tree walk={('none', 'AVX2', 'AVX-512')[simd_level()]}"]
