/* malloc-count.c: an LD_PRELOAD library that counts the allocations (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc) of the process it is loaded into and prints the count at exit,
 * on stderr. Two runs of `objects-bench commits` with different BENCH_COMMITS tell the
 * allocations of one commit apart from the process's start-up (the difference of the counts over
 * the difference of the commits); BENCH_ONLY=3 runs Cove's noSync commits alone:
 *
 *   cc -O2 -shared -fPIC -o /tmp/malloc-count.so malloc-count.c
 *   for n in 2000 4000; do
 *     BENCH_ONLY=3 BENCH_COMMITS=$n LD_PRELOAD=/tmp/malloc-count.so .build-bench/release/objects-bench commits >/dev/null
 *   done
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static unsigned long allocations;

void *malloc(size_t size) { allocations++; return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { allocations++; return __libc_calloc(count, size); }
void *realloc(void *p, size_t size) { allocations++; return __libc_realloc(p, size); }
void *aligned_alloc(size_t alignment, size_t size) { allocations++; return __libc_memalign(alignment, size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    allocations++;
    *out = __libc_memalign(alignment, size);
    return *out ? 0 : 12; /* ENOMEM */
}

__attribute__((destructor)) static void report(void) {
    char line[64];
    int n = snprintf(line, sizeof line, "allocations: %lu\n", allocations);
    if (n > 0) (void)!write(2, line, (size_t)n);
}
