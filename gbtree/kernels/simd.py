"""The vector instruction sets gbtree's kernels may use: ``GBTREE_SIMD`` (read
once, at import) caps them, so that every kernel can be tested and measured on a
machine that has a better one."""
import os

SIMD_NAMES = ("none", "avx2", "avx512")


def simd_cap():
    """The level GBTREE_SIMD asks for, an index of SIMD_NAMES (unset: no cap)."""
    value = os.environ.get("GBTREE_SIMD", "").strip().lower()
    if value == "":
        return len(SIMD_NAMES) - 1
    if value not in SIMD_NAMES:
        raise ValueError(f"GBTREE_SIMD must be one of {', '.join(SIMD_NAMES)}, got "
                         f"{os.environ['GBTREE_SIMD']!r}")
    return SIMD_NAMES.index(value)
