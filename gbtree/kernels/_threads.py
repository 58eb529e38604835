"""Turn a user's ``n_jobs`` into the number of OpenMP threads for the kernels, and
the threads of a fit into fewer while other processes hold the cores."""
import functools
import numbers
import os
import time
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


# ---------------------------------------------------------------- cores other processes hold
# OpenMP threads spin at the end of a parallel region until every thread of the
# region is there (GNU libgomp: up to about 300,000 pauses before they sleep). When
# other processes keep the cores busy, a thread waits for its partner's next time
# slice, and each short region of a tree costs milliseconds: on 2 cores beside 2
# busy processes, fits on 2 threads took 6 to 50 times as long as on 1. The models
# are the same at any thread count, so a fit takes fewer threads while other
# processes hold the cores, and more again when they let go.

def _read_proc(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def runnable_elsewhere():
    """Threads of other processes runnable on the machine right now (Linux: the count
    of runnable tasks of /proc/loadavg, less this process's: its OpenMP threads may
    still spin after a parallel region), or None where that is not known."""
    running = _running()
    if running is None:
        return None
    if running <= 1:   # (the calling thread alone: no need to look at the others)
        return 0
    own = _own_running()
    # (the fewer of two counts around the look at this process's threads: one that
    # stopped spinning meanwhile is not counted as another process's)
    return max(0, min(running, _running() or running) - own)


def _running():
    """Linux's count of the machine's runnable tasks now (/proc/loadavg), or None."""
    text = _read_proc("/proc/loadavg")
    try:
        return int(text.split()[3].split(b"/")[0])
    except (AttributeError, IndexError, ValueError):
        return None


def _own_running():
    """This process's threads that are running or runnable (the caller among them)."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tasks:
        text = _read_proc(f"/proc/self/task/{tid}/stat")
        # (the state follows the command name, which is in parentheses)
        if text is not None and text[text.rfind(b")") + 2:text.rfind(b")") + 3] == b"R":
            count += 1
    return max(count, 1)


def _host_cpus():
    return os.cpu_count() or 1


def available_threads(limit):
    """``limit``, or fewer when other processes are running on the cores now: at most
    the machine's CPUs less the threads runnable elsewhere, at least 1 (``limit``
    itself where that cannot be read)."""
    if limit <= 1:
        return limit
    others = runnable_elsewhere()
    if others is None:
        return limit
    return max(1, min(limit, _host_cpus() - others))


# calls with fewer rows run in the calling thread (the predictor's FEW_ROWS)
FEW_ROWS = 16
# A call's one parallel region outlasts the time slices a thread waits for a busy
# core from this many row-trees walked: beside 2 busy programs on 2 cores, 2 threads
# predicted 250,000 rows by 100 trees (25M) in 0.73 x 1 thread's time, 20,000 rows
# (2M) in 1.15 x.
LONG_CALL = 2 ** 23


def call_threads(n_jobs, n_rows, n_trees=1, cost=1):
    """The threads of one call that walks ``n_rows`` rows down ``n_trees`` trees, each
    walk ``cost`` times a prediction's (predict, apply, SHAP values):
    ``effective_n_threads(n_jobs)``, fewer while other processes hold the cores
    (``available_threads``) unless the call is long (``LONG_CALL``); not looked at
    for the few rows the kernels walk in the calling thread."""
    n = effective_n_threads(n_jobs)
    if n_rows < FEW_ROWS or n_rows * n_trees * cost >= LONG_CALL:
        return n
    return available_threads(n)


def _run_delay():
    """Seconds the calling thread has waited for a CPU while runnable (Linux's
    schedstat), or None."""
    text = _read_proc("/proc/thread-self/schedstat")
    try:
        return int(text.split()[1]) * 1e-9
    except (AttributeError, IndexError, ValueError):
        return None


class ThreadBudget:
    """The threads of one fit, round by round: ``n`` for the next round, at most
    ``limit`` (the resolved ``n_jobs``). It starts at ``available_threads(limit)``;
    ``round_done()`` after each round looks, at most every ``WINDOW`` seconds, at
    how the last rounds ran: when the calling thread waited for a CPU at least
    ``CONTENDED`` of the time (others took the cores: its partners wait for time
    slices), ``n`` drops by one; when, on fewer than ``limit`` threads, the
    machine has a CPU free (``runnable_elsewhere``) at two looks in a row, ``n``
    grows by one (while there is none, it looks at twice as many windows' ends
    each time, up to 64). Without Linux's counts it compares the process's CPU
    time with ``n`` busy threads instead, and tries one more thread after twice
    as many looks each time that failed."""

    WINDOW = 0.005
    CONTENDED = 0.1

    def __init__(self, limit):
        self.limit = limit
        self.n = available_threads(limit)
        self._free_looks = 0
        # (looks for a free CPU, or tries of one more thread, twice as far apart after
        # each that finds none: few looks while other processes keep the cores)
        self._backoff, self._until_probe = 1, 1
        self._begin()

    def _begin(self):
        self._t0 = time.perf_counter()
        self._delay0 = _run_delay() if self.n > 1 else None
        self._cpu0 = time.process_time() if self.n > 1 and self._delay0 is None else None

    def round_done(self):
        """The threads of the next round (after a round on ``n``)."""
        if self.limit <= 1:
            return self.n
        wall = time.perf_counter() - self._t0
        if wall < self.WINDOW:
            return self.n
        if self.n > 1 and self._contended(wall):
            self.n -= 1
            self._free_looks = 0
        elif self.n < self.limit and self._room():
            self.n += 1
        self._begin()
        return self.n

    def _contended(self, wall):
        if self._delay0 is not None:
            delay = _run_delay()
            return delay is not None and delay - self._delay0 >= self.CONTENDED * wall
        if self._cpu0 is not None:   # (spinning threads count as busy: a share under 1)
            busy = (time.process_time() - self._cpu0) / (self.n * wall)
            return busy < 1.0 - 2 * self.CONTENDED
        return False

    def _room(self):
        self._until_probe -= 1
        if self._until_probe > 0:
            return False
        others = runnable_elsewhere()
        if others is None:   # (try one more thread, less and less often)
            self._backoff = min(2 * self._backoff, 1024)
            self._until_probe = self._backoff
            return True
        if _host_cpus() - others - self.n >= 1:
            self._free_looks += 1
            self._until_probe = 1
        else:
            self._free_looks = 0
            self._backoff = min(2 * self._backoff, 64)
            self._until_probe = self._backoff
        if self._free_looks >= 2:
            self._free_looks, self._backoff = 0, 1
            return True
        return False
