"""Several trees grown at once, one on each thread of an OpenMP team (``run_in_lanes``).

Each thread, a lane, holds a grower of its own and takes the next tree not taken
until none is left; the GIL is taken for each tree's Python call and released by
the grower while it grows. The threads are the team of the fit's other parallel
regions, so none waits on a thread of another team."""
from cython.parallel cimport parallel, threadid

from ..kernels._typedefs cimport gbt_take


def run_in_lanes(grow_one, list lanes, Py_ssize_t n_tasks):
    """``[grow_one(lane, k) for k in range(n_tasks)]``, with ``len(lanes)`` threads
    at once: thread j calls ``grow_one(lanes[j], k)`` for the next k not taken. The
    results are in the order of k, whichever lane made them; the first exception
    raised is raised here, once every thread has stopped."""
    cdef int n_lanes = len(lanes), lane = 0
    cdef long long ticket = 0, k = 0
    cdef long long* next_task = &ticket
    results = [None] * n_tasks
    if n_lanes < 1:
        raise ValueError("run_in_lanes needs at least one lane")
    if n_lanes == 1 or n_tasks < 2:
        for k in range(n_tasks):
            results[k] = grow_one(lanes[0], k)
        return results
    with nogil, parallel(num_threads=n_lanes):
        lane = threadid()
        k = gbt_take(next_task)
        while k < n_tasks:
            with gil:
                results[k] = grow_one(lanes[lane], k)
            k = gbt_take(next_task)
    return results
