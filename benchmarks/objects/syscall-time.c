/* syscall-time.c: an LD_PRELOAD library that times the calls a durable commit makes to the
 * kernel (fdatasync, fsync, pwrite, pwritev) in the process it is loaded into, and prints the
 * count and mean time of each at exit, on stderr. With `objects-bench commits` and BENCH_ONLY
 * (one engine per process) it tells how long each engine's flush takes apart from the rest of its
 * commit:
 *
 *   cc -O2 -shared -fPIC -o /tmp/syscall-time.so syscall-time.c -ldl
 *   BENCH_ONLY=1 LD_PRELOAD=/tmp/syscall-time.so .build-bench/release/objects-bench commits
 *   BENCH_ONLY=2 LD_PRELOAD=/tmp/syscall-time.so .build-bench/release/objects-bench commits
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { SYNC, FSYNC, PWRITE, PWRITEV, CALLS };
static const char *names[CALLS] = { "fdatasync", "fsync", "pwrite", "pwritev" };
static double total_ns[CALLS];
static long count[CALLS];

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *next(const char *name) { return dlsym(RTLD_NEXT, name); }

#define TIMED(kind, call)                 \
    do {                                  \
        double start = now_ns();          \
        result = call;                    \
        total_ns[kind] += now_ns() - start; \
        count[kind]++;                    \
    } while (0)

static int timed_sync(int kind, const char *symbol, int (**real)(int), int fd) {
    if (!*real) *real = (int (*)(int))next(symbol);
    int result;
    TIMED(kind, (*real)(fd));
    return result;
}

int fdatasync(int fd) {
    static int (*real)(int);
    return timed_sync(SYNC, "fdatasync", &real, fd);
}

int fsync(int fd) {
    static int (*real)(int);
    return timed_sync(FSYNC, "fsync", &real, fd);
}

static ssize_t timed_pwrite(const char *symbol, int fd, const void *buf, size_t n, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))next(symbol);
    ssize_t result;
    TIMED(PWRITE, real(fd, buf, n, offset));
    return result;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) { return timed_pwrite("pwrite", fd, buf, n, offset); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) { return timed_pwrite("pwrite64", fd, buf, n, offset); }

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t offset) {
    static ssize_t (*real)(int, const struct iovec *, int, off_t);
    if (!real) real = (ssize_t (*)(int, const struct iovec *, int, off_t))next("pwritev");
    ssize_t result;
    TIMED(PWRITEV, real(fd, iov, n, offset));
    return result;
}

__attribute__((destructor)) static void report(void) {
    for (int k = 0; k < CALLS; k++) {
        if (count[k] > 0) fprintf(stderr, "%s: %ld calls, %.2f us each\n", names[k], count[k], total_ns[k] / count[k] / 1000);
    }
}
