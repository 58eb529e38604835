"""Write the raw scores of every kind of fit (tests/_fits.py) on its test rows.

    python tests/fits/make_fits.py

Writes ``raw_scores.npz`` beside this file; tests/test_fits.py and
tests/test_dask.py refit each kind and compare with it bit for bit. Rewrite it
only in a commit that changes models on purpose (and says why).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import _fits  # noqa: E402


def main():
    import distributed
    d = _fits.data()
    scores = {name: _fits.raw_scores(*fit(d)) for name, fit in _fits.KINDS.items()}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        scores["dask"] = _fits.raw_scores(*_fits.dask_fit(d, client))
    np.savez_compressed(os.path.join(HERE, "raw_scores.npz"), **scores)


if __name__ == "__main__":
    main()
