"""Thin shims over the OpenMP runtime so that everything builds without it."""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int gbt_omp_max_threads(void) { return omp_get_max_threads(); }
    static int gbt_openmp_enabled(void) { return 1; }
    #else
    static int gbt_omp_max_threads(void) { return 1; }
    static int gbt_openmp_enabled(void) { return 0; }
    #endif
    """
    int gbt_omp_max_threads() nogil
    int gbt_openmp_enabled() nogil


def omp_max_threads():
    """``omp_get_max_threads()``: honours OMP_NUM_THREADS and threadpoolctl limits."""
    return gbt_omp_max_threads()


def openmp_enabled():
    """Whether the extension modules were compiled with OpenMP."""
    return bool(gbt_openmp_enabled())
