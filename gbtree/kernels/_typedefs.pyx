"""NumPy twins of the C types declared in _typedefs.pxd."""
import numpy as np

X_BINNED_DTYPE = np.uint8
G_H_DTYPE = np.float32

cdef node_struct _dummy_node

# Taking the dtype from a typed memoryview guarantees that the NumPy layout is
# the C layout (field offsets, padding, itemsize).
NODE_DTYPE = np.asarray(<node_struct[:1]>(&_dummy_node)).dtype
assert NODE_DTYPE.itemsize == sizeof(node_struct) == 56
# (a struct of two doubles would come out as complex128 by the trick above)
HIST_DTYPE = np.dtype([("sum_g", np.float64), ("sum_h", np.float64)])
assert HIST_DTYPE.itemsize == sizeof(hist_entry)
