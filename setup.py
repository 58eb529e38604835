"""Build script: cythonizes every ``gbtree/**/*.pyx`` with -O3 and OpenMP.

When the compiler cannot build an OpenMP program the extensions are built
without it (the ``prange`` loops then run serially) and a warning is printed.
``GBTREE_SANITIZE=address,undefined`` builds them with those sanitizers instead
of -O3 (``benchmarks/sanitizers.sh`` runs the test suite on such a build).
"""
import glob
import os
import shutil
import sys
import tempfile
import textwrap
import warnings

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

OPENMP_TEST = textwrap.dedent(
    """
    #include <omp.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        return n > 0 ? 0 : 1;
    }
    """
)


def _openmp_candidates(compiler):
    """(compile_args, link_args) to try in turn: GCC and LLVM clang take -fopenmp;
    Apple's clang needs -Xpreprocessor and the libomp runtime (Homebrew's, or the
    folder named by LIBOMP_PREFIX); MSVC takes /openmp."""
    if compiler.compiler_type == "msvc":
        return [(["/openmp"], [])]
    candidates = [(["-fopenmp"], ["-fopenmp"])]
    if sys.platform == "darwin":
        prefixes = [os.environ.get("LIBOMP_PREFIX"), "/opt/homebrew/opt/libomp",
                    "/usr/local/opt/libomp"]
        for prefix in filter(None, prefixes):
            candidates.append((["-Xpreprocessor", "-fopenmp", f"-I{prefix}/include"],
                               [f"-L{prefix}/lib", "-lomp", f"-Wl,-rpath,{prefix}/lib"]))
    return candidates


def _openmp_flags(compiler):
    """Return (compile_args, link_args) for OpenMP, or ([], []) if unsupported."""
    if os.environ.get("GBTREE_NO_OPENMP"):
        return [], []
    if compiler.compiler_type == "msvc":
        return _openmp_candidates(compiler)[0]
    for cflags, lflags in _openmp_candidates(compiler):
        tmp = tempfile.mkdtemp()
        try:
            src = os.path.join(tmp, "omp_test.c")
            with open(src, "w") as f:
                f.write(OPENMP_TEST)
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
            compiler.link_executable(objs, os.path.join(tmp, "omp_test"), extra_postargs=lflags)
            return cflags, lflags
        except Exception:  # any compiler or linker failure: try the next, or no OpenMP
            continue
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return [], []


def _sanitizer_flags(compiler):
    """Flags for GBTREE_SANITIZE (for example ``address,undefined``): the extensions
    built with those sanitizers, every finding fatal (benchmarks/sanitizers.sh)."""
    sanitize = os.environ.get("GBTREE_SANITIZE")
    if not sanitize:
        return []
    if compiler.compiler_type == "msvc":
        raise RuntimeError("GBTREE_SANITIZE needs gcc or clang")
    return [f"-fsanitize={sanitize}", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:   # pip gives no -j: compile the modules side by side
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        cflags, lflags = _openmp_flags(self.compiler)
        if not cflags:
            warnings.warn(
                "gbtree: the C compiler has no OpenMP support; building the "
                "kernels serially (n_jobs will have no effect)."
            )
            print("WARNING: gbtree built without OpenMP", file=sys.stderr)
        opt = (["/O2", "/std:c++17"] if self.compiler.compiler_type == "msvc"
               else ["-O3", "-std=c++17"])
        sanitize = _sanitizer_flags(self.compiler)
        if sanitize:
            opt = ["-O1", "-g", "-std=c++17"]
        for ext in self.extensions:
            ext.extra_compile_args = opt + cflags + sanitize
            ext.extra_link_args = lflags + sanitize
        super().build_extensions()


extensions = [
    Extension(
        os.path.splitext(path)[0].replace(os.sep, "."),
        [path],
        include_dirs=[np.get_include()],
        language="c++",
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in sorted(glob.glob(os.path.join("gbtree", "**", "*.pyx"), recursive=True))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "nonecheck": False,
        },
    ),
    cmdclass={"build_ext": BuildExt},
)
