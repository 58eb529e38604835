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
        assert "model-format.schema.json" in names and "py.typed" in names   # (PEP 561)
        assert any(n.startswith("_predictor.") and n.endswith((".so", ".pyd")) for n in names)
        # and the licence, beside the metadata
        assert any(f.name == "LICENSE" and ".dist-info" in f.parts[0] for f in dist.files)


def test_the_metadata_names_the_licence_and_the_platforms():
    meta = metadata.metadata("gbtree")
    assert meta["License-Expression"] == "BSD-3-Clause"
    classifiers = meta.get_all("Classifier")
    for wanted in ("Operating System :: POSIX :: Linux", "Operating System :: MacOS",
                   "Operating System :: Microsoft :: Windows",
                   "Programming Language :: Python :: 3.13"):
        assert wanted in classifiers


# the package's folders, each importing only those after it (the top-level modules,
# gbtree.sklearn, gbtree.dask, gbtree.callback and the package itself, are the faces)
LAYERS = ["estimators", "explaining", "io", "distributed", "boosting", "growing", "predicting",
          "data", "kernels"]


def _imports_within(package_dir):
    """{module: modules of the package it imports (at any depth of its code)}, read
    from the sources: ``.py`` files with ``ast``, Cython files by their import lines.
    Modules are named by their dotted path under the package ("" is the package)."""
    import ast
    import re
    from pathlib import Path
    root = Path(package_dir)
    paths = {}
    for p in root.rglob("*"):
        if p.suffix in (".py", ".pyx"):
            parts = p.relative_to(root).with_suffix("").parts
            paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for name, path in paths.items():
        here = list(path.relative_to(root).parent.parts)
        found = set()

        def add(level, module, names):
            target = here[:len(here) - level + 1] + (module.split(".") if module else [])
            for n in names:   # (from a package import its modules)
                if ".".join(target + [n]) in paths:
                    found.add(".".join(target + [n]))
            if module:   # (not "from .. import __version__": the version, read when called)
                found.add(".".join(target))

        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and node.level >= 1:
                    add(node.level, node.module, [a.name for a in node.names])
        else:
            for dots, module, names in re.findall(r"^\s*from (\.+)([\w.]*) c?import ([\w, ]+)",
                                                  text, re.M):
                add(len(dots), module, [n.split()[0] for n in names.split(",") if n.strip()])
        graph[name] = {m for m in found if m in paths and m != name}
    return graph


def _package_imports():
    import os
    return _imports_within(os.path.join(os.path.dirname(__file__), "..", "gbtree"))


def test_the_imports_point_one_way():
    # no module imports, at any depth of its code, one that imports it back
    graph = _package_imports()
    state, stack, circles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                circles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert len(graph) > 40 and any(graph.values())
    assert circles == []


def test_each_layer_imports_only_the_layers_below_it():
    graph = _package_imports()
    layer = {m: m.split(".")[0] for m in graph if "." in m or m in LAYERS}
    assert set(layer.values()) == set(LAYERS)
    upward = sorted((a, b) for a, targets in graph.items() for b in targets
                    if a in layer and b in layer and LAYERS.index(layer[b]) < LAYERS.index(layer[a]))
    assert upward == []
    # the faces import the layers; no layer imports a face
    faces = {m for m in graph if m not in layer}
    assert faces == {"", "__main__", "sklearn", "dask", "callback"}
    assert sorted((a, b) for a in layer for b in graph[a] if b in faces) == []
