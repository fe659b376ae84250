/*
 * libomp_team_leak.c - reproducer of the LeakSanitizer report suppressed by
 * tests/fuzz/lsan.supp (docs/reliability.md, finding 4); no pixsum code.
 * Not part of the test suite: it shows a property of LLVM's OpenMP runtime.
 *
 *   clang -O1 -g -fopenmp -fsanitize=address libomp_team_leak.c -o leak
 *   ASAN_OPTIONS=detect_leaks=1 ./leak 2000 16   # LLVM 14: 22 objects of 1,440 bytes
 *   ASAN_OPTIONS=detect_leaks=1 ./leak 8000 16   # the same 22: bounded, not per region
 *   ASAN_OPTIONS=detect_leaks=1 ./leak 2000 4    # teams within 1..4 threads: no report
 *
 * Parallel regions whose team size varies over 1..N threads make libomp create
 * worker threads whose descriptors it never frees; with N above the core count
 * LeakSanitizer reports them at exit, all allocated at libomp.so.5+0x22fe8.
 * The same program built with gcc -fopenmp (libgomp) reports nothing.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int regions = argc > 1 ? atoi(argv[1]) : 2000;
    int max_threads = argc > 2 ? atoi(argv[2]) : 16;
    long sum = 0;
    unsigned x = 1;
    for (int r = 0; r < regions; r++) {
        x = x * 1103515245u + 12345u;
        int n = 1 + (int)((x >> 16) % (unsigned)max_threads);
#pragma omp parallel for reduction(+ : sum) num_threads(n)
        for (int i = 0; i < 100; i++)
            sum += i;
    }
    printf("%ld\n", sum);
    return 0;
}
