"""What the installed package says of itself and what its wheel holds."""
from importlib import metadata

import gbtree


def test_one_version_number():
    # the package metadata reads gbtree.__version__ (pyproject.toml: dynamic version)
    assert metadata.version("gbtree") == gbtree.__version__


def test_the_wheel_holds_no_kernel_sources_or_test_references():
    # the files of an install from a wheel are listed in its RECORD; an editable
    # install lists none of the package's files, a source checkout has no RECORD
    dist = metadata.distribution("gbtree")
    installed = dist.read_text("RECORD") is not None
    files = [f for f in dist.files or [] if f.parts[0] == "gbtree"] if installed else []
    sources = [str(f) for f in files
               if f.suffix in (".pyx", ".pxd", ".h", ".cpp") or f.name == "_reference.py"]
    assert sources == []
    if files:       # installed from a wheel: the extensions and the schema are there
        names = {f.name for f in files}
        assert "model-format.schema.json" in names
        assert any(n.startswith("_predictor.") and n.endswith((".so", ".pyd")) for n in names)
