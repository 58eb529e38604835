"""The Cython/OpenMP kernels every layer above calls, and the threads they take."""
