"""Prediction on CSR input (canonical: sorted indices, no duplicates; int64
``indptr``, int32 ``indices``), never densified: each thread owns a scratch block
of ``rows x n_features`` values filled with the value of an absent entry,
scatters a block of rows' stored entries into it, runs the dense walks on the
block (_predictor.pxd), then puts back only the entries it touched. Results are
bit for bit those of the dense kernels on the dense equivalent (same trees, same
order of additions)."""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

from ..kernels._typedefs cimport X_BINNED_C, node_struct
from ._predictor cimport (ROW_BLOCK, compact_node, _add_tree, _leaf_binned, _leaf_raw,
                          _n_workers, _packed_section, _walk_kind, machine_simd_level)


cdef enum:
    # Bytes of one thread's scratch block: small enough to stay in L2 while the
    # trees walk it; wide data gets fewer rows per block (at least one).
    SCRATCH_BYTES = 1 << 20


cdef Py_ssize_t _block_rows(Py_ssize_t n_rows, Py_ssize_t n_features,
                            Py_ssize_t itemsize) noexcept nogil:
    cdef Py_ssize_t rows = SCRATCH_BYTES // (max(n_features, 1) * itemsize)
    return max(1, min(rows, ROW_BLOCK, n_rows))


ctypedef fused scatter_t:      # raw values (float32, float64) or bins (uint8)
    float
    double
    X_BINNED_C


cdef int _scatter(const scatter_t* values, const int32_t* indices, const int64_t* indptr,
                  Py_ssize_t nnz, Py_ssize_t row, Py_ssize_t n_features,
                  scatter_t* dst) noexcept nogil:
    """Write the stored entries of one row into its dense scratch row.

    Returns 1 (and writes nothing out of bounds) when ``indptr``/``indices``
    do not describe a CSR row of width ``n_features``."""
    cdef int64_t k, lo = indptr[row], hi = indptr[row + 1]
    cdef int bad = 0
    if lo < 0 or hi < lo or hi > nnz:
        return 1
    for k in range(lo, hi):
        if <size_t>indices[k] < <size_t>n_features:
            dst[indices[k]] = values[k]
        else:
            bad = 1
    return bad


cdef inline void _restore(const int32_t* indices, const int64_t* indptr, Py_ssize_t nnz,
                          Py_ssize_t row, Py_ssize_t n_features, scatter_t* dst,
                          const scatter_t* fill, Py_ssize_t step) noexcept nogil:
    """Put back the absent value of the entries ``_scatter`` wrote: ``fill[f * step]``
    for feature f (raw values: one value, step 0; bins: each feature's default bin,
    step 1)."""
    cdef int64_t k, lo = indptr[row], hi = indptr[row + 1]
    if lo < 0 or hi < lo or hi > nnz:
        return
    for k in range(lo, hi):
        if <size_t>indices[k] < <size_t>n_features:
            dst[indices[k]] = fill[indices[k] * step]


cdef int _raw_csr_worker(const floating* data, const int32_t* indices,
                         const int64_t* indptr, Py_ssize_t nnz, Py_ssize_t n_features,
                         floating absent, const compact_node* compact, const uint64_t* packed,
                         int level, const node_struct* nodes, int32_t* leaves,
                         const int64_t* tree_ptr, const int32_t* tree_class,
                         Py_ssize_t n_trees, double* out, Py_ssize_t n_out,
                         floating* scratch, Py_ssize_t block_rows,
                         Py_ssize_t row_lo, Py_ssize_t row_hi) noexcept nogil:
    """Rows row_lo..row_hi-1, in blocks of block_rows, through one scratch block: with
    ``leaves``, each row's leaf index in each tree of ``nodes`` (``leaves[i * n_trees +
    t]``), else the leaf values of the trees of ``compact`` added to ``out``."""
    cdef Py_ssize_t lo, hi, i, t
    cdef int bad = 0
    lo = row_lo
    while lo < row_hi:
        hi = min(lo + block_rows, row_hi)
        for i in range(lo, hi):
            bad |= _scatter(data, indices, indptr, nnz, i, n_features,
                                scratch + (i - lo) * n_features)
        if leaves != NULL:
            for i in range(lo, hi):
                for t in range(n_trees):
                    leaves[i * n_trees + t] = _leaf_raw(
                        nodes + tree_ptr[t], <const floating*>scratch + (i - lo) * n_features, 1)
        else:
            for t in range(n_trees):
                _add_tree(compact + tree_ptr[t], packed + tree_ptr[t], <const floating*>scratch,
                          0, hi - lo, n_features, 1, out + lo * n_out + tree_class[t], n_out,
                          level)
        for i in range(lo, hi):
            _restore(indices, indptr, nnz, i, n_features, scratch + (i - lo) * n_features,
                     &absent, 0)
        lo = hi
    return bad


cdef int _binned_csr_worker(const X_BINNED_C* bins, const int32_t* indices,
                            const int64_t* indptr, Py_ssize_t nnz, Py_ssize_t n_features,
                            const X_BINNED_C* default_bin, const int* missing_bin,
                            const node_struct* nodes, const int64_t* tree_ptr,
                            const int32_t* tree_class, Py_ssize_t n_trees,
                            const uint32_t* rows, Py_ssize_t n_csr_rows,
                            double* out, Py_ssize_t n_out, X_BINNED_C* scratch,
                            Py_ssize_t block_rows, Py_ssize_t j_lo,
                            Py_ssize_t j_hi) noexcept nogil:
    """Binned traversal of rows j_lo..j_hi-1; these are CSR rows ``rows[j]`` when
    ``rows`` is given (their results go to out row ``rows[j]``), else rows j."""
    cdef Py_ssize_t lo, hi, j, t, r
    cdef const node_struct* tree
    cdef int bad = 0
    lo = j_lo
    while lo < j_hi:
        hi = min(lo + block_rows, j_hi)
        for j in range(lo, hi):
            r = rows[j] if rows != NULL else j
            if r >= n_csr_rows:
                bad = 1
                continue
            bad |= _scatter(bins, indices, indptr, nnz, r, n_features,
                                   scratch + (j - lo) * n_features)
        for t in range(n_trees):
            tree = nodes + tree_ptr[t]
            for j in range(lo, hi):
                r = rows[j] if rows != NULL else j
                if r < n_csr_rows:
                    out[r * n_out + tree_class[t]] += tree[_leaf_binned(
                        tree, scratch + (j - lo) * n_features, missing_bin)].value
        for j in range(lo, hi):
            r = rows[j] if rows != NULL else j
            if r < n_csr_rows:
                _restore(indices, indptr, nnz, r, n_features,
                         scratch + (j - lo) * n_features, default_bin, 1)
        lo = hi
    return bad


cdef _check_csr(Py_ssize_t indptr_len, Py_ssize_t n_indices, Py_ssize_t n_values,
                Py_ssize_t n_rows, Py_ssize_t n_features):
    """Cheap sanity of the CSR arrays (shapes only; entries are checked as read)."""
    if indptr_len != n_rows + 1:
        raise ValueError(f"indptr has {indptr_len} entries for {n_rows} rows "
                         f"(expected {n_rows + 1})")
    if n_indices != n_values:
        raise ValueError(f"indices has {n_indices} entries but data has {n_values}")
    if n_features < 0:
        raise ValueError(f"n_features must be >= 0, got {n_features}")


cdef _check_node_features(const node_struct* nodes, Py_ssize_t n_nodes,
                          Py_ssize_t n_features):
    cdef Py_ssize_t k
    for k in range(n_nodes):
        if not nodes[k].is_leaf and not (0 <= nodes[k].feature < n_features):
            raise ValueError(f"the trees split on feature {nodes[k].feature} but the "
                             f"matrix has {n_features} features")


cdef _bad_csr():
    raise ValueError("the CSR matrix is malformed: indptr is not non-decreasing within "
                     "bounds, or a column index (or row) is out of range")


cdef _raw_csr(const floating[::1] data, const int32_t[::1] indices,
              const int64_t[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_features,
              double absent, const compact_node* compact, const uint64_t* packed, int level,
              const node_struct* nodes, int32_t* leaves, const int64_t* tree_ptr,
              const int32_t* tree_class, Py_ssize_t n_trees, double* out, Py_ssize_t n_out,
              int n_threads):
    """Shared tail of ``predict_raw_csr`` and ``apply_raw_csr`` (see
    ``_raw_csr_worker``; arguments checked, at least one row and one tree): the rows
    in blocks, each worker through a scratch block of its own."""
    cdef Py_ssize_t nnz = data.shape[0], block_rows, n_blocks, w, size
    cdef int n_workers, bad = 0
    cdef floating* scratch_p
    cdef floating absent_f = <floating>absent
    block_rows = _block_rows(n_rows, n_features, sizeof(floating))
    n_blocks = (n_rows + block_rows - 1) // block_rows
    n_workers = _n_workers(n_threads, n_blocks)
    size = block_rows * n_features
    scratch = np.full(max(n_workers * size, 1), absent,
                      dtype=np.float32 if floating is float else np.float64)
    cdef floating[::1] scratch_v = scratch
    scratch_p = &scratch_v[0]
    for w in prange(n_workers, schedule='static', num_threads=n_workers, nogil=True):
        bad += _raw_csr_worker(
            &data[0] if nnz > 0 else NULL, &indices[0] if nnz > 0 else NULL, &indptr[0],
            nnz, n_features, absent_f, compact, packed, level, nodes, leaves, tree_ptr,
            tree_class, n_trees, out, n_out, scratch_p + w * size, block_rows,
            min(n_blocks * w // n_workers * block_rows, n_rows),
            min(n_blocks * (w + 1) // n_workers * block_rows, n_rows))
    if bad:
        _bad_csr()


def predict_raw_csr(const floating[::1] data, const int32_t[::1] indices,
                    const int64_t[::1] indptr, Py_ssize_t n_features, double absent,
                    const unsigned char[::1] compact, const int64_t[::1] tree_ptr,
                    const int32_t[::1] tree_class, double[:, ::1] out, int n_threads,
                    int simd=-1):
    """``predict_raw`` on a CSR matrix whose absent entries have the value ``absent``
    (0.0, or NaN for missing); ``out`` has one row per CSR row. ``simd`` as in
    ``predict_raw``."""
    cdef Py_ssize_t n_rows = out.shape[0], n_trees = tree_ptr.shape[0] - 1, k
    cdef const compact_node* nodes
    cdef int level
    _check_csr(indptr.shape[0], indices.shape[0], data.shape[0], n_rows, n_features)
    if n_rows == 0 or n_trees == 0:
        return
    nodes = <const compact_node*>&compact[0]
    for k in range(tree_ptr[0], tree_ptr[n_trees]):
        if nodes[k].left >= 0 and (nodes[k].feature & 0x7fffffff) >= n_features:
            raise ValueError(f"the trees split on feature {nodes[k].feature & 0x7fffffff} "
                             f"but the matrix has {n_features} features")
    for k in range(n_trees):
        if not (0 <= tree_class[k] < out.shape[1]):
            raise ValueError(f"tree {k} feeds output {tree_class[k]}; out has {out.shape[1]}")
    if n_rows * n_trees < 4096:
        n_threads = 1
    level = _walk_kind(machine_simd_level(), simd, n_features, n_features, 1, &tree_ptr[0],
                       n_trees, <const floating*>NULL)
    _raw_csr(data, indices, indptr, n_rows, n_features, absent, nodes,
             _packed_section(compact), level, NULL, NULL, &tree_ptr[0], &tree_class[0],
             n_trees, &out[0, 0], out.shape[1], n_threads)


def apply_raw_csr(const floating[::1] data, const int32_t[::1] indices,
                  const int64_t[::1] indptr, Py_ssize_t n_features, double absent,
                  const node_struct[::1] nodes, const int64_t[::1] tree_ptr,
                  int32_t[:, ::1] out, int n_threads):
    """``apply_raw`` on a CSR matrix whose absent entries have the value ``absent``."""
    cdef Py_ssize_t n_rows = out.shape[0], n_trees = tree_ptr.shape[0] - 1
    _check_csr(indptr.shape[0], indices.shape[0], data.shape[0], n_rows, n_features)
    if out.shape[1] != n_trees:
        raise ValueError(f"out has {out.shape[1]} columns for {n_trees} trees")
    if n_rows == 0 or n_trees == 0:
        return
    _check_node_features(&nodes[tree_ptr[0]], tree_ptr[n_trees] - tree_ptr[0], n_features)
    _raw_csr(data, indices, indptr, n_rows, n_features, absent, NULL, NULL, 0, &nodes[0],
             &out[0, 0], &tree_ptr[0], NULL, n_trees, NULL, 0, n_threads)


def predict_binned_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                       const uint8_t[::1] bins, const uint8_t[::1] default_bin,
                       const int[::1] missing_bin, const node_struct[::1] nodes,
                       const int64_t[::1] tree_ptr, const int32_t[::1] tree_class,
                       const uint32_t[::1] rows, double[:, ::1] out, int n_threads):
    """``predict_binned`` on a binned matrix stored as CSR: the entries whose bin is
    the feature's ``default_bin`` are not stored."""
    cdef Py_ssize_t n_csr_rows = indptr.shape[0] - 1, n_trees = tree_ptr.shape[0] - 1
    cdef Py_ssize_t n_jobs = n_csr_rows if rows is None else rows.shape[0]
    cdef const uint32_t* listed = NULL
    cdef Py_ssize_t nnz = bins.shape[0], n_features = default_bin.shape[0]
    cdef Py_ssize_t block_rows, n_blocks, w, size
    cdef int n_workers, bad = 0
    cdef X_BINNED_C* scratch_p
    if n_csr_rows < 0:
        raise ValueError("indptr must have at least one entry")
    if indices.shape[0] != nnz:
        raise ValueError(f"indices has {indices.shape[0]} entries but bins has {nnz}")
    if missing_bin.shape[0] != n_features:
        raise ValueError(f"missing_bin has {missing_bin.shape[0]} entries, "
                         f"default_bin has {n_features}")
    if out.shape[0] < n_csr_rows:
        raise ValueError(f"out has {out.shape[0]} rows for {n_csr_rows} CSR rows")
    if n_jobs == 0 or n_trees == 0:
        return
    if nodes.shape[0] == 0:
        raise ValueError("the trees have no nodes")
    if n_jobs * n_trees < 4096:
        n_threads = 1
    if rows is not None:
        listed = &rows[0]
    _check_node_features(&nodes[tree_ptr[0]], tree_ptr[n_trees] - tree_ptr[0], n_features)
    for w in range(n_trees):
        if not (0 <= tree_class[w] < out.shape[1]):
            raise ValueError(f"tree {w} feeds output {tree_class[w]}; out has {out.shape[1]}")
    block_rows = _block_rows(n_jobs, n_features, sizeof(X_BINNED_C))
    n_blocks = (n_jobs + block_rows - 1) // block_rows
    n_workers = _n_workers(n_threads, n_blocks)
    size = block_rows * n_features
    scratch = np.tile(np.asarray(default_bin), n_workers * block_rows) if size > 0 \
        else np.zeros(1, dtype=np.uint8)
    cdef X_BINNED_C[::1] scratch_v = scratch
    scratch_p = &scratch_v[0]
    for w in prange(n_workers, schedule='static', num_threads=n_workers, nogil=True):
        bad += _binned_csr_worker(
            &bins[0] if nnz > 0 else NULL, &indices[0] if nnz > 0 else NULL, &indptr[0],
            nnz, n_features, &default_bin[0] if n_features > 0 else NULL,
            &missing_bin[0] if n_features > 0 else NULL, &nodes[0], &tree_ptr[0],
            &tree_class[0], n_trees, listed, n_csr_rows, &out[0, 0], out.shape[1],
            scratch_p + w * size, block_rows,
            min(n_blocks * w // n_workers * block_rows, n_jobs),
            min(n_blocks * (w + 1) // n_workers * block_rows, n_jobs))
    if bad:
        _bad_csr()
