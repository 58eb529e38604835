"""Grow one tree like ``_serial_grower.SerialGrower``, expanding small nodes ahead
of their turn on several threads.

With two threads or more, open nodes of fewer than ``ahead_max_rows`` rows are
expanded ahead, each on one thread: the nodes are still split in the serial
order, the next best ones are queued, and every thread takes the next
expansion from the queue as soon as it is free (partition, the children's
histograms, their best splits); an expanded node waits until the order picks
it, and the thread that finishes the expansion of the node whose turn it is
makes the split and picks the next (see ``_phase``). Larger nodes are expanded
one at a time with every thread on each step, by the serial loop. A thread that
has nothing to expand adds the values of the leaves that are final by then to
the raw scores of their rows (``_early_update``). The tree is the same either
way, at any thread count.

Expanding ahead needs nodes whose splits depend on no node id, bound or level:
with column sampling, interaction or monotone constraints the serial loop grows
the tree alone.
"""
from cython.parallel cimport parallel, threadid
from libc.stdlib cimport malloc, free
from libcpp.vector cimport vector

from ..kernels._typedefs cimport IDX_C, hist_entry
from ..kernels._histogram cimport hist_plan, make_plan
from ..kernels._splitting cimport split_info
from ..kernels._partition cimport add_to_rows
from ._serial_grower cimport SerialGrower, node_state, expansion, n_rows_of


# A lock for the queue of expansions (OpenMP's; none without OpenMP, where one
# thread does everything), and a pause and a yield for the threads that wait on it.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    typedef omp_lock_t gbt_lock_t;
    static void gbt_lock_init(gbt_lock_t* l) { omp_init_lock(l); }
    static void gbt_lock_destroy(gbt_lock_t* l) { omp_destroy_lock(l); }
    static void gbt_lock(gbt_lock_t* l) { omp_set_lock(l); }
    static void gbt_unlock(gbt_lock_t* l) { omp_unset_lock(l); }
    #else
    typedef int gbt_lock_t;
    static void gbt_lock_init(gbt_lock_t* l) { (void)l; }
    static void gbt_lock_destroy(gbt_lock_t* l) { (void)l; }
    static void gbt_lock(gbt_lock_t* l) { (void)l; }
    static void gbt_unlock(gbt_lock_t* l) { (void)l; }
    #endif
    #if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
    #include <immintrin.h>
    #define GBT_PAUSE() _mm_pause()
    #else
    #define GBT_PAUSE() ((void)0)
    #endif
    #ifdef _WIN32
    #include <windows.h>
    #define GBT_YIELD() ((void)SwitchToThread())
    #else
    #include <sched.h>
    #define GBT_YIELD() ((void)sched_yield())
    #endif
    """
    ctypedef struct gbt_lock_t:
        pass
    void gbt_lock_init(gbt_lock_t* l) noexcept nogil
    void gbt_lock_destroy(gbt_lock_t* l) noexcept nogil
    void gbt_lock(gbt_lock_t* l) noexcept nogil
    void gbt_unlock(gbt_lock_t* l) noexcept nogil
    void GBT_PAUSE() noexcept nogil
    void GBT_YIELD() noexcept nogil


cdef enum:
    # Expansions queued or running at once: ``ahead_tasks_per_thread`` per thread,
    # at most MAX_AHEAD_TASKS (which also bounds those waiting for their turn);
    # threads with their own buffers: at most MAX_AHEAD_THREADS.
    MAX_AHEAD_TASKS = 16
    MAX_AHEAD_THREADS = 8
    # an expansion's status (see TreeGrower._work)
    FREE = 0
    QUEUED = 1
    RUNNING = 2
    DONE = 3
    FINISHED = 4
    # Pauses between two looks at an empty queue.
    IDLE_PAUSES = 32


cdef inline void free_entry(expansion* e) noexcept nogil:
    e.parent = -1
    e.status = FREE


cdef class TreeGrower(SerialGrower):
    """``SerialGrower``, expanding small nodes ahead on several threads (same
    parameters; ``GrowerParams.expand_ahead`` and ``ahead_lifo`` are read here)."""
    # engine options: expand small nodes ahead (those of fewer rows than
    # ``ahead_max_rows``, larger ones take every thread each); the queue's last
    # expansion first (tests: the node whose turn it is then waits behind nodes
    # expanded ahead)
    cdef bint expand_ahead, ahead_lifo
    cdef readonly Py_ssize_t ahead_max_rows
    cdef readonly int ahead_tasks_per_thread
    # threads with buffers, their scratch beyond thread 0's, the expansions
    cdef int ahead_threads
    cdef char* task_scratch
    cdef Py_ssize_t task_scratch_bytes
    cdef vector[expansion] ahead
    cdef int ahead_extra              # slots held by waiting expansions beyond their parents'
    cdef int n_workers, max_tasks     # the current tree's threads and expansions in flight
    # the queue (entries of ``ahead``, in the order they are to run), under ``lock``
    cdef gbt_lock_t lock
    cdef bint lock_ready
    cdef int queue[MAX_AHEAD_TASKS]
    cdef int n_queued
    cdef int n_in_flight              # queued or running
    cdef bint queue_closed            # no phase runs (or it is ending)
    cdef vector[int]* phase_nodes     # the phase's open nodes
    cdef int* phase_leaves            # ... its leaf count
    cdef double phase_lr              # ... its learning rate
    cdef int turn                     # the open node to be split next (queued or expanded), or -1
    cdef int advance_tid              # the thread in ``_advance``
    cdef int phase_commits            # splits committed by the last expand-ahead phase
    cdef bint phase_error             # ... which could not allocate a buffer
    cdef public Py_ssize_t n_ahead_expanded, n_ahead_undone
    # Final leaves whose raw scores a waiting thread may update before the tree is
    # done (``_early_update``): the raw scores of the tree's output (stride
    # ``raw_stride``; NULL: none), the leaves, and the next one to take.
    cdef double* raw_ptr
    cdef Py_ssize_t raw_stride
    cdef vector[int] final_leaves
    cdef int next_final

    def __cinit__(self, X_binned, const int[::1] n_bins,
                  const int[::1] bin_offsets, const double[::1] bin_thresholds,
                  params, int n_threads, default_bin=None):
        self.expand_ahead = params.expand_ahead
        self.ahead_lifo = params.ahead_lifo
        self.ahead_max_rows = params.ahead_max_rows
        self.ahead_tasks_per_thread = params.ahead_tasks_per_thread
        if self.ahead_max_rows < 1 or self.ahead_tasks_per_thread < 1:
            raise ValueError(f"ahead_max_rows and ahead_tasks_per_thread must be >= 1, got "
                             f"{params.ahead_max_rows} and {params.ahead_tasks_per_thread}")
        gbt_lock_init(&self.lock)
        self.lock_ready = True
        self._ensure_tasks()
        self.ahead.resize(MAX_AHEAD_TASKS)

    def __dealloc__(self):
        if self.lock_ready:
            gbt_lock_destroy(&self.lock)
        free(self.task_scratch)

    def _ensure_tasks(self):
        """Per-thread buffers for expanding nodes ahead on min(n_threads,
        MAX_AHEAD_THREADS) threads (a thread works on one node at a time)."""
        cdef int threads = max(1, min(self.n_threads, MAX_AHEAD_THREADS))
        cdef hist_plan plan = make_plan(self.ahead_max_rows - 1, self.n_features, self.X.n_entries,
                                        self.max_chunks, 1)
        cdef Py_ssize_t scratch_bytes = plan.n_chunks * self.X.n_entries * self.pool.entry_bytes
        cdef split_info* per_feature
        cdef char* task_scratch
        if threads <= self.ahead_threads and scratch_bytes <= self.task_scratch_bytes:
            return
        per_feature = <split_info*>malloc(max(threads, 2) * max(self.n_features, 1)
                                          * sizeof(split_info))
        task_scratch = NULL
        if threads > 1:
            task_scratch = <char*>malloc((threads - 1) * scratch_bytes)
        if per_feature == NULL or (threads > 1 and task_scratch == NULL):
            free(per_feature)
            free(task_scratch)
            raise MemoryError()
        free(self.per_feature)
        free(self.task_scratch)
        self.per_feature = per_feature
        self.task_scratch = task_scratch
        self.task_scratch_bytes = scratch_bytes
        self.partition.ensure_threads(threads)
        self.ahead_threads = threads

    # ------------------------------------------------------------ the serial loop's hooks

    cdef int _prepare_tree(self, double[:, ::1] raw, int output) except -1:
        cdef int k
        self._ensure_tasks()   # n_threads may have changed
        # a waiting thread may update final leaves' raw scores during the tree
        # (renewing their values first when quantised gradients chose the splits)
        self.raw_ptr = NULL
        if self.n_threads > 1 and raw.shape[0] > 0:
            self.raw_ptr = &raw[0, output]
            self.raw_stride = raw.shape[1]
        self.final_leaves.clear()
        self.next_final = 0
        self.ahead_extra = 0
        for k in range(<int>self.ahead.size()):
            free_entry(&self.ahead[k])
        self.n_queued = 0
        self.n_in_flight = 0
        self.queue_closed = True
        self.n_workers = min(self.n_threads, self.ahead_threads)
        self.max_tasks = min(self.ahead_tasks_per_thread * self.n_workers, MAX_AHEAD_TASKS)
        # (on one thread, expanding ahead would only reorder the work)
        if (not self.expand_ahead or self.n_workers < 2 or self.sampler.active
                or self.interactions.n_groups > 0 or self.monotone.directions() != NULL):
            self.max_tasks = 1
        return 0

    cdef int _split_ahead(self, int pick, vector[int]& open_nodes, int* n_leaves,
                          double learning_rate) noexcept nogil:
        """Commit ``open_nodes[pick]`` if it was expanded ahead; else, when it is
        small and another small node is open, run a phase that expands small nodes
        ahead on every thread and commits them in turn."""
        cdef int p = open_nodes[pick], k, tid
        if self.states[p].ahead >= 0:
            # expanded ahead: its turn has come
            open_nodes.erase(open_nodes.begin() + pick)
            self._take_turn(p, learning_rate, n_leaves, open_nodes)
            return 1
        if not (self.max_tasks > 1 and self._may_go_ahead(&self.states[p])
                and self._partner(open_nodes, p)):
            return 0
        # the states and buffers get room to grow without moving while it runs
        if self.states.capacity() - self.states.size() < 64:
            self.states.reserve(2 * self.states.capacity() + 64)
        self.pool.make_room(2 * MAX_AHEAD_TASKS)
        self.phase_commits = 0
        self.phase_error = False
        self.queue_closed = False
        self.turn = -1
        self.phase_nodes = &open_nodes
        self.phase_leaves = n_leaves
        self.phase_lr = learning_rate
        with parallel(num_threads=self.n_workers):
            tid = threadid()
            self._phase(tid)
        self.phase_nodes = NULL
        self.phase_leaves = NULL
        for k in range(<int>self.ahead.size()):
            if self.ahead[k].status == DONE:
                self._finish(&self.ahead[k])
        if self.phase_error:
            return -1
        # (no commit: no free entry; the picked node, still open, is split serially)
        return 1 if self.phase_commits > 0 else 0

    cdef int _slots_in_use(self) noexcept nogil:
        # slots held by expanded-ahead nodes count as their parents' one
        return self.pool.held() - self.ahead_extra

    cdef void _final_leaf(self, int node) noexcept nogil:
        # its raw scores may be updated early (``_early_update``)
        if self.raw_ptr != NULL:
            self.final_leaves.push_back(node)

    cdef void _close(self, int node) noexcept nogil:
        """An open node stays a leaf: free its histogram, or undo its expansion ahead
        (free the children's histograms; merge its rows back in increasing order)."""
        cdef node_state* st = &self.states[node]
        cdef expansion* e
        if st.ahead >= 0 and not self.queue_closed:
            # in a phase (in ``_advance``, holding the lock): wait until its
            # expansion is done, or drop it if it has not started
            self._settle(&self.ahead[st.ahead], self.advance_tid)
        if st.ahead < 0:
            SerialGrower._close(self, node)
            return
        self.pool.release(st.slot)
        st.slot = -1
        e = &self.ahead[st.ahead]
        self.pool.release(e.child[0].slot)
        self.pool.release(e.child[1].slot)
        self.ahead_extra -= e.extra
        self.n_ahead_undone += 1
        self.partition.merge(st.lo, st.hi, e.left_in)
        free_entry(e)
        st.ahead = -1
        self._final_leaf(node)

    cdef bint _early_update(self) noexcept nogil:
        """Add a final leaf's value to the raw scores of its rows, on a thread that
        has nothing to run (holding the lock on entry and on return, not while it
        adds); False when no leaf is left. Each row is in one leaf and gets one
        addition a tree, so the scores do not depend on when it is made;
        ``_update_raw`` skips the leaves done here. With quantised gradients the
        leaf is renewed first (``_leaf_sums``, as ``_update_raw`` would)."""
        cdef int k
        cdef node_state st
        cdef double v
        cdef hist_entry sums
        cdef const IDX_C* rows = &self.partition.rows[0]
        cdef double* raw = self.raw_ptr
        cdef Py_ssize_t stride = self.raw_stride
        if raw == NULL or self.next_final >= <int>self.final_leaves.size():
            return False
        k = self.final_leaves[self.next_final]
        self.next_final += 1
        self.states[k].raw_done = True
        # (read under the lock: ``nodes`` and ``states`` may move when a split is committed)
        st = self.states[k]
        if self.quantizer.levels > 0:
            gbt_unlock(&self.lock)
            sums = self._leaf_sums(&st)
            gbt_lock(&self.lock)
            self._renew_node(k, sums.sum_g, sums.sum_h, self.phase_lr)
        v = self.nodes[k].value
        gbt_unlock(&self.lock)
        add_to_rows(raw, stride, rows, st.lo[0], st.hi[0], v)
        add_to_rows(raw, stride, rows, st.lo[1], st.hi[1], v)
        gbt_lock(&self.lock)
        return True

    cdef inline bint _may_go_ahead(self, const node_state* st) noexcept nogil:
        """Whether an open node may be expanded ahead: not yet, and small."""
        return st.ahead < 0 and n_rows_of(st) < self.ahead_max_rows

    cdef int _free_ahead(self) noexcept nogil:
        """A free entry of ``self.ahead``, or -1."""
        cdef int i
        for i in range(<int>self.ahead.size()):
            if self.ahead[i].parent < 0:
                return i
        return -1

    cdef bint _partner(self, const vector[int]& open_nodes, int p) noexcept nogil:
        """Whether an open node other than ``p`` may be expanded ahead."""
        cdef int k
        for k in range(<int>open_nodes.size()):
            if open_nodes[k] != p and self._may_go_ahead(&self.states[open_nodes[k]]):
                return True
        return False

    # ------------------------------------------------------------ expanding ahead
    #
    # In a phase, the tree, the open nodes, the buffers' bookkeeping, the queue
    # and the expansions' entries are shared under ``self.lock``: every thread
    # holds it except while it runs an expansion or waits; under it, a thread
    # makes the splits whose turn has come (``_advance``), and any thread that
    # finds the queue empty refills it (``_feed``). A queued expansion
    # holds its parent's histogram and its spares; the thread that runs it, not
    # holding the lock, writes only its entry's children, its parent's rows,
    # buffer rows and slot, and its own buffers. Nothing may move what a running
    # expansion reads: ``states`` and the pool's slots grow within their reserved
    # capacity (checked before each commit and each queued expansion).

    cdef int _queue(self, int node, bint front) noexcept nogil:
        """Queue the expansion of the open node ``node`` with the spare buffers it
        may take (``front``: it is the one needed next), under the lock. Returns
        1 when queued, 0 when there is no free entry or a new buffer would move
        the pool's slots, -1 when a buffer cannot be allocated."""
        cdef int k = self._free_ahead()
        cdef expansion* e
        if k < 0 or self.pool.room() < 2:
            return 0
        e = &self.ahead[k]
        e.parent = node
        e.n_leaves = -1   # not known yet: checked at the commit
        e.had_slot = self.states[node].slot >= 0
        e.release = -1
        if self._acquire_spares(e, False) < 0:
            return -1
        e.extra = (e.spare[0] >= 0) + (e.spare[1] >= 0)
        self.ahead_extra += e.extra
        self.states[node].ahead = k
        if front:
            self._push_front(k)
        else:
            self.queue[self.n_queued] = k
            self.n_queued += 1
        self.n_in_flight += 1
        e.status = QUEUED
        return 1

    cdef int _feed(self) noexcept nogil:
        """Queue the next best open nodes that may be expanded ahead while fewer than
        ``max_tasks`` expansions are in flight and two more buffers fit the
        histogram memory budget (under the lock). Returns how many were queued;
        sets ``phase_error`` when a buffer cannot be allocated."""
        cdef int pick, r, n = 0
        while not self.phase_error and not self.queue_closed:
            if (self.n_in_flight >= self.max_tasks
                    or self.pool.held() + 2 > self.pool.max_slots):
                break
            pick = self._pick(self.phase_nodes[0], self.ahead_max_rows)
            if pick < 0:
                break
            r = self._queue(self.phase_nodes[0][pick], False)
            if r <= 0:
                self.phase_error = r < 0
                break
            self.n_ahead_expanded += 1
            n += 1
        return n

    cdef inline void _push_front(self, int k) noexcept nogil:
        """Queue entry ``k`` first (under the lock)."""
        cdef int i
        for i in range(self.n_queued, 0, -1):
            self.queue[i] = self.queue[i - 1]
        self.queue[0] = k
        self.n_queued += 1

    cdef void _unqueue_entry(self, int k) noexcept nogil:
        """Take entry ``k`` of ``self.ahead`` out of the queue (under the lock)."""
        cdef int i
        for i in range(self.n_queued):
            if self.queue[i] == k:
                self._unqueue(i)
                return

    cdef inline void _unqueue(self, int at) noexcept nogil:
        """Remove position ``at`` of the queue (under the lock)."""
        cdef int i
        self.n_queued -= 1
        for i in range(at, self.n_queued):
            self.queue[i] = self.queue[i + 1]

    cdef void _cancel(self, expansion* e) noexcept nogil:
        """Drop a queued expansion that never ran (under the lock)."""
        self._release_spares(e)
        self.ahead_extra -= e.extra
        self.states[e.parent].ahead = -1
        self.n_ahead_expanded -= 1
        self.n_in_flight -= 1
        free_entry(e)

    cdef expansion* _run_next(self, int tid) noexcept nogil:
        """Run the first queued expansion (the last with ``ahead_lifo``) on thread
        ``tid`` (holding the lock on entry and on return, not while it runs);
        returns it."""
        cdef int at = self.n_queued - 1 if self.ahead_lifo else 0
        cdef expansion* e = &self.ahead[self.queue[at]]
        self._unqueue(at)
        e.status = RUNNING
        gbt_unlock(&self.lock)
        # (expanded on this thread alone, with its buffers)
        self._expand_rows(e, tid, 1)
        self._expand_hist(e, &e.child[0], &e.child[1], -1, -1,
                          self.scratch if tid == 0 else <hist_entry*>(
                              self.task_scratch + (tid - 1) * self.task_scratch_bytes),
                          self.per_feature + tid * self.n_features, 1, tid)
        gbt_lock(&self.lock)
        e.status = DONE
        self.n_in_flight -= 1
        return e

    cdef inline void _pause(self) noexcept nogil:
        """Let go of the lock a moment (nothing to run), and of the core: with more
        threads than free cores, the thread a waiting one waits for may need it."""
        cdef int i
        gbt_unlock(&self.lock)
        for i in range(IDLE_PAUSES):
            GBT_PAUSE()
        GBT_YIELD()
        gbt_lock(&self.lock)

    cdef void _work(self, int tid) noexcept nogil:
        """Run queued expansions on thread ``tid`` until the phase is closed and the
        queue empty (holding the lock on entry and on return). The thread that
        finishes the expansion of the node whose turn it is moves the phase on
        (``_advance``); a thread that finds the queue empty refills it, or else
        adds a final leaf's raw scores (``_early_update``), before it waits."""
        cdef expansion* e
        while True:
            if self.n_queued > 0 or self._feed() > 0:
                e = self._run_next(tid)
                if e.parent == self.turn:
                    self._advance(tid)
            elif self.queue_closed:
                break
            elif not self._early_update():
                self._pause()

    cdef void _settle(self, expansion* e, int tid) noexcept nogil:
        """Drop the expansion ``e`` if it is still queued, else wait until it is
        done, running queued ones meanwhile, and finish it (under the lock)."""
        if e.status == QUEUED:
            self._unqueue_entry(<int>(e - &self.ahead[0]))
            self._cancel(e)
            return
        while e.status == RUNNING:
            if self.n_queued > 0:
                self._run_next(tid)
            else:
                self._pause()
        if e.status == DONE:
            self._finish(e)

    cdef void _finish(self, expansion* e) noexcept nogil:
        """A done expansion gives back the buffers it did not use; while it waits
        for its turn, its children's count beyond its parent's one."""
        cdef int kept = (e.child[0].slot >= 0) + (e.child[1].slot >= 0)
        self._release_spares(e)
        self.ahead_extra += kept - e.had_slot - e.extra
        e.extra = kept - e.had_slot
        e.status = FINISHED

    cdef void _take_turn(self, int p, double learning_rate, int* n_leaves,
                         vector[int]& open_nodes) noexcept nogil:
        """Commit the open node ``p``, expanded ahead and finished (its turn has
        come; it is no longer in ``open_nodes``)."""
        cdef expansion* e = &self.ahead[self.states[p].ahead]
        cdef int left, right
        self.ahead_extra -= e.extra
        self.states[p].ahead = -1
        self._commit(e, learning_rate, &left, &right)
        free_entry(e)
        n_leaves[0] += 1
        self._open_children(left, right, n_leaves[0], open_nodes)
        self._drop_hopeless(open_nodes, n_leaves[0])

    cdef void _close_phase(self) noexcept nogil:
        """End the phase (under the lock): drop what is still queued; the threads
        leave when their expansions are done."""
        cdef int i
        for i in range(self.n_queued):
            self._cancel(&self.ahead[self.queue[i]])
        self.n_queued = 0
        self.turn = -1
        self.queue_closed = True

    cdef void _advance(self, int tid) noexcept nogil:
        """Move the phase on, on thread ``tid`` (under the lock): while the node
        whose turn it is has been expanded, commit it and pick the next one in the
        sequential order; queue the picked node's expansion first (unless it is
        under way) and the next best ones behind it. The phase is closed at a
        large node, at a small one with nothing to expand beside it, at the leaf
        budget, or where a buffer would move. Commits are counted in
        ``phase_commits``; ``phase_error``: a buffer could not be allocated."""
        cdef vector[int]* open_nodes = self.phase_nodes
        cdef expansion* e
        cdef node_state* st
        cdef int pick, p, k, r
        self.advance_tid = tid
        while not self.queue_closed:
            if self.phase_error:
                self._close_phase()
                break
            if self.turn >= 0:
                e = &self.ahead[self.states[self.turn].ahead]
                if e.status == QUEUED or e.status == RUNNING:
                    break    # the thread that runs it comes back here
                if e.status == DONE:
                    self._finish(e)
                p = self.turn
                # (-1 while the commit may let go of the lock, in ``_close``: no
                # other thread comes in here meanwhile)
                self.turn = -1
                for k in range(<int>open_nodes.size()):
                    if open_nodes[0][k] == p:
                        open_nodes.erase(open_nodes.begin() + k)
                        break
                self._take_turn(p, self.phase_lr, self.phase_leaves, open_nodes[0])
                self.phase_commits += 1
            if (open_nodes.size() == 0
                    or (self.max_leaves > 0 and self.phase_leaves[0] >= self.max_leaves)
                    # a commit would move the states running expansions read
                    or self.states.capacity() - self.states.size() < 2):
                self._close_phase()
                break
            pick = self._pick(open_nodes[0], 0)
            p = open_nodes[0][pick]
            st = &self.states[p]
            if st.ahead < 0:
                if not self._may_go_ahead(st) or (
                        self.n_in_flight == 0 and not self._partner(open_nodes[0], p)):
                    self._close_phase()
                    break
                r = self._queue(p, True)
                if r <= 0:
                    self.phase_error = r < 0
                    self._close_phase()
                    break
            elif self.ahead[st.ahead].status == QUEUED:
                # queued behind others: to the front
                self._unqueue_entry(st.ahead)
                self._push_front(st.ahead)
            self.turn = p
            self._feed()

    cdef void _phase(self, int tid) noexcept nogil:
        """One thread of an expand-ahead phase: thread 0 picks the first node
        (``_advance``), then every thread runs queued expansions (``_work``)."""
        gbt_lock(&self.lock)
        if tid == 0:
            self._advance(0)
        self._work(tid)
        gbt_unlock(&self.lock)
