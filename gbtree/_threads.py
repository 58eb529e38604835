"""Turn a user's ``n_jobs`` into the number of OpenMP threads for the kernels."""
import functools
import numbers
import os
import warnings

from joblib import cpu_count

from ._openmp_helpers import omp_max_threads, openmp_enabled


@functools.lru_cache(maxsize=1)
def _cpu_count():
    # joblib reads the affinity mask and cgroup files: ~50 us, too slow per predict call.
    # It is treated as fixed for the life of the process.
    return cpu_count()


def max_threads():
    """The most threads ``n_jobs`` may ask for: 4 a core, at least 256."""
    return max(256, 4 * _cpu_count())


# OpenMP (GNU libgomp and others) keeps its thread pool across fork(), but only the
# forking thread lives on in the child: a parallel region there waits for threads that
# do not exist. A child forked after gbtree ran threads therefore runs on one.
_threads_started = False
_forked_after_threads = False
_fork_warned = False


def _after_fork_in_child():
    global _forked_after_threads
    _forked_after_threads = _forked_after_threads or _threads_started


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _one_thread_after_fork(n):
    """``n``, or 1 in a process forked after gbtree ran threads (with a warning once)."""
    global _threads_started, _fork_warned
    if n <= 1:
        return n
    if _forked_after_threads:
        if not _fork_warned:
            warnings.warn("gbtree: this process was forked after gbtree had run OpenMP "
                          "threads, which cannot start again in a forked child; gbtree runs "
                          "on one thread here. Start worker processes with the 'spawn' or "
                          "'forkserver' method to keep every thread.", RuntimeWarning,
                          stacklevel=3)
            _fork_warned = True
        return 1
    _threads_started = True
    return n


def effective_n_threads(n_jobs):
    """Resolve ``n_jobs`` once per ``fit``/``predict``.

    ``None`` and ``-1`` mean every core this process may use: the smaller of
    the CPU count (``joblib.cpu_count``: affinity mask and cgroup quota) and
    ``omp_get_max_threads()`` (which follows ``OMP_NUM_THREADS`` and
    ``threadpoolctl.threadpool_limits``; joblib workers set it so nested
    parallelism does not oversubscribe). ``-2`` means all but one, and so on.
    A positive value is used as given, up to ``max_threads()``: beyond that
    OpenMP cannot start the threads (an abort or a crash, not an error).
    """
    if type(n_jobs) is int and 0 < n_jobs <= 256:   # the common case, without the ABC check
        return _one_thread_after_fork(n_jobs) if openmp_enabled() else 1
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0
    ):
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if not openmp_enabled():
        return 1
    if n_jobs is not None and not -max_threads() <= n_jobs <= max_threads():
        raise ValueError(f"n_jobs must be at most {max_threads()} (4 threads per core, at "
                         f"least 256) and at least -{max_threads()} (all cores but "
                         f"-n_jobs - 1), got {n_jobs!r}")
    if n_jobs is not None and n_jobs > 0:
        return _one_thread_after_fork(int(n_jobs))
    available = max(1, min(_cpu_count(), omp_max_threads()))
    if n_jobs is None:
        return _one_thread_after_fork(available)
    return _one_thread_after_fork(max(1, available + 1 + int(n_jobs)))
