"""The Python examples of README.md and docs/*.md run as shown: each file's blocks in
order, in one namespace (a later block may use what an earlier one made), so the
docs stay true to the API."""
import pathlib
import re

import pytest
import sklearn

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"),
                      flags=re.S | re.M)


def test_the_docs_have_examples():
    # (guards the pattern above: a test that finds nothing would pass on anything)
    counts = {p.name: len(_blocks(p)) for p in FILES}
    assert counts["README.md"] >= 1 and counts["index.md"] >= 5 and counts["ranking.md"] >= 3


@pytest.mark.parametrize("path", [p for p in FILES if _blocks(p)], ids=lambda p: p.name)
def test_examples_run_as_shown(path, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pandas", reason="the examples use DataFrames (test extra)")
    matplotlib = pytest.importorskip("matplotlib", reason="the examples plot (test extra)")
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    with sklearn.config_context():   # an example may switch metadata routing on
        for i, code in enumerate(_blocks(path)):
            try:
                exec(compile(code, f"{path.name}, python block {i}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"{path.name}, python block {i} failed: {exc!r}\n{code}")
    import matplotlib.pyplot as plt
    plt.close("all")
