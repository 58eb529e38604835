/* Cross-core cache-line round trip, for reading benchmark noise.
 *
 * Two OpenMP threads hand one cache line back and forth N times; prints the
 * mean round trip in ns. On the shared 2-vCPU VM of docs/benchmarks.md it is
 * either about 60 ns (both vCPUs on one die) or about 350 ns (different dies),
 * and two-thread fit times follow it. run.py compiles this with the C compiler
 * when one is available and records the value next to every run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <omp.h>

static _Atomic long flag __attribute__((aligned(64)));

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 500000;
    long warm = n / 5;   /* untimed: both threads running, caches and clocks settled */
    int team = 0;
    double t0 = 0.0, t1 = 0.0;
    atomic_store(&flag, 0);
    #pragma omp parallel num_threads(2)
    {
        long me = omp_get_thread_num(), i;
        #pragma omp single
        team = omp_get_num_threads();
        if (team == 2) {
            for (i = 0; i < warm + n; i++) {
                long want = 2 * i + me;
                if (i == warm && me == 0)
                    t0 = omp_get_wtime();
                while (atomic_load_explicit(&flag, memory_order_acquire) != want)
                    ;
                atomic_store_explicit(&flag, want + 1, memory_order_release);
            }
            if (me == 0)
                t1 = omp_get_wtime();
        }
    }
    if (team != 2) {
        printf("nan\n");   /* one thread only: nothing to measure */
        return 0;
    }
    printf("%.1f\n", (t1 - t0) / n * 1e9);
    return 0;
}
