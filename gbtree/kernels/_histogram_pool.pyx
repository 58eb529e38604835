"""The histograms of a tree's open nodes: buffers taken and given back by slot
number, allocated on first use and kept for the next trees. A grower keeps the
histograms of its open nodes while fewer than ``max_slots`` are held (the memory
budget); past it, a node builds both its children's histograms instead of
deriving one by subtraction."""
from libc.stdlib cimport malloc, free


# Slots a pool allows at least, whatever its memory budget: a parent and its two children.
cdef int MIN_SLOTS = 3


cdef class HistogramPool:
    """Histogram buffers of ``n_entries`` entries of ``entry_bytes`` bytes."""

    def __cinit__(self, Py_ssize_t n_entries, Py_ssize_t entry_bytes, memory_bytes):
        self.n_entries = n_entries
        self.entry_bytes = entry_bytes
        self.max_slots = max(MIN_SLOTS, <Py_ssize_t>memory_bytes // max(n_entries * entry_bytes, 1))

    def __dealloc__(self):
        cdef size_t i
        for i in range(self.slots.size()):
            free(self.slots[i])

    cdef int acquire(self) noexcept nogil:
        """A free slot, or -1 when a buffer cannot be allocated."""
        cdef int s
        cdef hist_entry* buf
        if self.free_slots.size() > 0:
            s = self.free_slots.back()
            self.free_slots.pop_back()
            return s
        buf = <hist_entry*>malloc(self.n_entries * self.entry_bytes)
        if buf == NULL:
            return -1
        self.slots.push_back(buf)
        return <int>self.slots.size() - 1

    cdef void release(self, int s) noexcept nogil:
        """Give slot ``s`` back (nothing when -1)."""
        if s >= 0:
            self.free_slots.push_back(s)

    cdef int held(self) noexcept nogil:
        return <int>(self.slots.size() - self.free_slots.size())

    cdef Py_ssize_t room(self) noexcept nogil:
        """Slots that can be taken without moving ``slots`` (which threads may be reading)."""
        return <Py_ssize_t>self.free_slots.size() + <Py_ssize_t>(
            self.slots.capacity() - self.slots.size())

    cdef void make_room(self, Py_ssize_t n) noexcept nogil:
        """At least ``n`` new slots can be allocated without moving ``slots``."""
        if <Py_ssize_t>(self.slots.capacity() - self.slots.size()) < n:
            self.slots.reserve(self.slots.size() + 2 * n)

    @property
    def n_buffers(self):
        """How many buffers the pool has allocated: the most held at once."""
        return self.slots.size()
