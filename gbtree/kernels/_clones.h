/* GBT_CLONES: GCC on x86-64 with glibc compiles a function so marked twice more,
   for AVX-512 and AVX2, and picks the clone once per process (an ifunc, which musl
   lacks): 8 or 4 doubles a vector instead of SSE2's 2. The arithmetic is the same
   IEEE operations in every clone (no contraction into FMA: ISO C++ mode), so are
   the results. */
#ifndef GBT_CLONES_H
#define GBT_CLONES_H
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define GBT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GBT_CLONES
#endif
#endif
