"""The README's first command ends with the demo (``gbtree-demo`` / ``python -m gbtree``):
it must run and print sane held-out metrics for its three bundled data sets."""
import importlib.metadata
import re

import pytest

from gbtree.__main__ import main


def test_demo_prints_sane_rows_per_data_set(capsys):
    assert main(["--n-estimators", "20", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    rows, current = {}, None
    for line in out.splitlines():
        named = re.match(r"^(\w+) \(", line)
        if named:
            current = named.group(1)
        elif line.startswith("  ") and current:
            # gbtree's and HGB's mean +- standard deviation, then the fit seconds
            pairs = re.findall(r"(\d+\.\d+) \+-(\d+\.\d+)", line)
            times = line.split()[-2:]
            assert len(pairs) == 2, line
            values = [float(v) for pair in pairs for v in pair] + [float(t) for t in times]
            rows.setdefault(current, []).append(values)
    assert set(rows) == {"breast_cancer", "digits", "diabetes"}, out
    assert all(len(r) == 2 for r in rows.values())   # same settings, then the defaults
    for same, defaults in rows.values():
        assert same[1] >= 0 and defaults[1] >= 0 and same[4] > 0 and same[5] > 0
    assert rows["breast_cancer"][0][0] > 0.95     # AUC
    assert rows["digits"][0][0] > 0.85            # accuracy over 10 classes
    assert rows["diabetes"][0][0] < 70            # RMSE (the target's standard deviation is 77)
    assert "5-fold cross-validation" in out


def test_the_demo_gives_scikit_learn_the_same_threads(monkeypatch, capsys):
    # --n-jobs 1 must hold for the HistGradientBoosting beside gbtree too (it takes
    # its threads from OpenMP's limit)
    from threadpoolctl import threadpool_info
    import gbtree.__main__ as demo

    def openmp_threads():
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "openmp"}

    if max(openmp_threads(), default=1) < 2:
        pytest.skip("OpenMP has one thread here: a limit of 1 would not show")
    seen = {}
    for cls in (demo.HistGradientBoostingClassifier, demo.HistGradientBoostingRegressor):
        def fit(self, X, y, _original=cls.fit, _name=cls.__name__, **kw):
            seen.setdefault(_name, set()).update(openmp_threads())
            return _original(self, X, y, **kw)
        monkeypatch.setattr(cls, "fit", fit)
    assert main(["--n-estimators", "2", "--n-jobs", "1"]) == 0
    assert seen == {"HistGradientBoostingClassifier": {1}, "HistGradientBoostingRegressor": {1}}


def test_the_demo_is_installed_as_a_console_script():
    try:
        importlib.metadata.distribution("gbtree")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("gbtree is imported from a source checkout, not installed: no entry points")
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert any(ep.name == "gbtree-demo" and ep.value == "gbtree.__main__:main" for ep in scripts)


@pytest.mark.parametrize("argv,message", [
    (["--n-estimators", "0"], "--n-estimators must be >= 1, got 0"),
    (["--n-jobs", "0"], "--n-jobs: n_jobs must be a non-zero integer"),
    (["--n-jobs", "100000"], "--n-jobs: n_jobs must be at most"),
])
def test_the_demo_refuses_bad_arguments_with_its_usage(argv, message, capsys):
    # a traceback (or, for 100000 threads, a crash) before
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
