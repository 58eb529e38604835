"""The documentation site builds without a warning: the Markdown guide, the API
reference from the docstrings (so a docstring that breaks the build fails here) and
the examples gallery, whose scripts run against the installed gbtree."""
import importlib.util
import pathlib
import subprocess
import sys

import gbtree

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the docs extra; the test extra includes it
DOCS_MODULES = ["sphinx", "myst_parser", "numpydoc", "sphinx_gallery",
                "pydata_sphinx_theme", "matplotlib", "pandas"]


def test_the_estimators_have_their_docstrings():
    # (a class docstring joined with "+" is an expression, and the class would have none)
    for est in (gbtree.GBTRegressor, gbtree.GBTClassifier, gbtree.GBTRanker):
        assert est.__doc__ is not None and "n_estimators : int" in est.__doc__, est.__name__


def test_the_docs_build_without_warnings(tmp_path):
    missing = [m for m in DOCS_MODULES if importlib.util.find_spec(m) is None]
    assert not missing, (f"building the docs needs {missing}: pip install '.[docs]' "
                         f"(or '.[test]', which includes it)")
    out = tmp_path / "html"
    # run outside the checkout: from its root Python would import the unbuilt source
    # folder gbtree/ instead of the installed package
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stderr[-6000:]}"

    api = (out / "api.html").read_text(encoding="utf-8")
    for name in ("GBTRegressor", "GBTClassifier", "GBTRanker", "load_model", "ndcg_at_k",
                 "make_ndcg_scorer", "plot_importance", "plot_tree"):
        assert f'id="gbtree.{name}"' in api, name
    # the estimators' shared parameters block and inherited methods are documented
    assert "early_stopping_rounds" in api and 'id="gbtree.GBTRanker.save_model"' in api
    for page in ("index", "parameters", "objectives", "explain", "ranking", "model-format",
                 "design", "benchmarks"):
        assert (out / f"{page}.html").is_file(), page
    # every example ran and drew at least one figure
    examples = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 3
    for name in examples:
        assert (out / "auto_examples" / f"{name}.html").is_file(), name
        assert (out / "_images" / f"sphx_glr_{name}_001.png").is_file(), name


def test_the_docs_speak_of_the_software():
    # the pages tell users about gbtree and its measurements, not how it was made
    import re
    made = re.compile(r"\b(other|previous|earlier|last|this|every|helper|benchmark)"
                      r" sessions?\b|\bsessions'|\bsession's|\bhelper runs?\b", re.I)
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md",
             *sorted((ROOT / "docs").glob("*.md"))]
    found = [(page.name, m.group(0)) for page in pages
             for m in made.finditer(page.read_text(encoding="utf-8"))]
    assert found == []


def test_the_design_page_names_every_module():
    # docs/design.md's map of the code: every folder and every source file of the
    # package has a line
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    package = ROOT / "gbtree"
    folders = sorted(p.parent.name + "/" for p in package.glob("*/__init__.py"))
    sources = [p for p in sorted(package.rglob("*"))
               if p.suffix in (".py", ".pyx", ".pxd", ".h", ".json") and p.name != "__init__.py"
               or p == package / "__init__.py"]
    # (a .pxd declares what other kernels cimport of the .pyx beside it: named with it)
    named = [p.name for p in sources
             if p.name in text or (p.suffix == ".pxd" and f"{p.stem}.pyx" in text)
             or f"{p.stem}.pxd/.pyx" in text]
    assert len(sources) > 50 and len(folders) >= 8
    assert sorted(set(p.name for p in sources) - set(named)) == []
    assert [f for f in folders if f not in text] == []
