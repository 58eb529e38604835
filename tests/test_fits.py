"""Every kind of model is the one the code fitted when tests/fits/raw_scores.npz was
written: its raw scores on the test rows, bit for bit (tests/_fits.py lists the
kinds; the Dask fit is checked in test_dask.py)."""
import os

import numpy as np
import pytest

import _fits

EXPECTED = os.path.join(os.path.dirname(__file__), "fits", "raw_scores.npz")


@pytest.fixture(scope="module")
def data():
    return _fits.data()


def expected(name):
    with np.load(EXPECTED) as saved:
        return saved[name]


def test_every_kind_has_its_scores():
    with np.load(EXPECTED) as saved:
        assert sorted(saved.files) == sorted(list(_fits.KINDS) + ["dask"])


@pytest.mark.parametrize("name", list(_fits.KINDS))
def test_the_model_is_unchanged(name, data):
    got = _fits.raw_scores(*_fits.KINDS[name](data))
    want = expected(name)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (name, np.abs(got - want).max())
