"""Sphinx configuration of gbtree's documentation site.

Build it with ``pip install ".[docs]"`` and ``sphinx-build -W -b html docs docs/_build/html``
from the repository root. The user guide is the Markdown pages of this folder (read by
myst-parser), the API reference comes from the docstrings (autodoc and numpydoc), and
the gallery runs the scripts of ``examples/`` (sphinx-gallery).
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Document the gbtree that Python imports (the installed package). Only a checkout
# built in place without an install needs the repository root on the path: adding
# it always would shadow an installed gbtree with an unbuilt source folder.
try:
    import gbtree
except ImportError:
    sys.path.insert(0, str(ROOT))
    import gbtree

project = "gbtree"
author = "the gbtree developers"
copyright = "the gbtree developers"
version = release = gbtree.__version__

# index.md is the user guide (as on GitHub); contents.rst holds the site's tables of contents
root_doc = "contents"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx_gallery.gen_gallery",
]

# ---------------------------------------------------------------- Markdown pages
# GitHub-style ids for headings, so that links such as ``index.md#sparse-matrices``
# resolve on the site as on GitHub
myst_heading_anchors = 4

# ---------------------------------------------------------------- API reference
autodoc_member_order = "bysource"
autosummary_generate = False        # the API page lists its objects itself
numpydoc_show_class_members = False  # the methods are documented by autodoc's :members:


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out the members the estimators inherit from scikit-learn (get_params,
    score, set_fit_request, ...): scikit-learn documents them, and their docstrings
    link into its user guide, which is not part of this site."""
    func = getattr(obj, "fget", obj)   # a property's getter
    if str(getattr(func, "__module__", "")).startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)


# ---------------------------------------------------------------- examples gallery
sphinx_gallery_conf = {
    "examples_dirs": "../examples",     # the scripts, at the repository's top level
    "gallery_dirs": "auto_examples",    # their pages, generated here at each build
    # run every example at every build, so that a build (and the test that makes
    # one) checks the examples against the gbtree being documented
    "run_stale_examples": True,
}

# ---------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"gbtree {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_show_sourcelink = False
