/* syscall-time.c: an LD_PRELOAD library that times the calls a durable commit makes to the
 * kernel (fdatasync, fsync, pwrite, pwritev) in the process it is loaded into, and prints at exit,
 * on stderr, the count and mean time of each and, for every file flushed more than 100 times,
 * where its commits' time goes. A commit of a file is taken as its writes up to a flush of it;
 * its time splits into:
 *   - work:   from the return of the file's previous flush to the commit's first write, that is
 *             the engine's own work between two commits (everything but these calls; the gaps of
 *             more than 1 ms, where `objects-bench commits` turns to the other engine, are left out);
 *   - writes: from the first write to the flush;
 *   - flush:  the flush itself;
 * with the write calls and bytes per commit. The first WARMUP (env COMMIT_WARMUP, default 0)
 * commits of each file are left out of the phases, so that SQLite's first thousand, which grow
 * its WAL file, can be told from the rest.
 *
 *   cc -O2 -shared -fPIC -o /tmp/syscall-time.so syscall-time.c -ldl
 *   LD_PRELOAD=/tmp/syscall-time.so .build-bench/release/objects-bench commits
 *   BENCH_ONLY=1 LD_PRELOAD=/tmp/syscall-time.so .build-bench/release/objects-bench commits
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { SYNC, FSYNC, PWRITE, PWRITEV, CALLS };
static const char *names[CALLS] = { "fdatasync", "fsync", "pwrite", "pwritev" };
static double total_ns[CALLS];
static long count[CALLS];

/* Per file descriptor: the commit in progress and the sums over the commits counted. */
enum { FILES = 256 };
static struct {
    char path[PATH_MAX];
    double last_flush_end, first_write;
    long writes, bytes;          /* of the commit in progress */
    long flushes;                /* every flush of the file */
    long commits;                /* commits counted in the phases */
    double work, write_time, flush_time, write_calls, write_bytes;
} files[FILES];
static long warmup = -1;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *next(const char *name) { return dlsym(RTLD_NEXT, name); }

static void wrote(int fd, double start, long bytes) {
    if (fd < 0 || fd >= FILES) return;
    if (files[fd].writes == 0) files[fd].first_write = start;
    files[fd].writes++;
    files[fd].bytes += bytes;
}

static void flushed(int fd, double start, double end) {
    if (fd < 0 || fd >= FILES) return;
    if (warmup < 0) {
        const char *w = getenv("COMMIT_WARMUP");
        warmup = w ? atol(w) : 0;
    }
    double resumed = end;   /* where the next commit's work starts: after this bookkeeping's call */
    if (files[fd].flushes % 1024 == 0) {   /* the path again now and then: a closed descriptor's number is reused */
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, files[fd].path, sizeof files[fd].path - 1);
        files[fd].path[n > 0 ? n : 0] = 0;
        resumed = now_ns();
    }
    files[fd].flushes++;
    double work = files[fd].first_write - files[fd].last_flush_end;
    if (files[fd].writes > 0 && files[fd].last_flush_end > 0 && work < 1e6 && files[fd].flushes > warmup) {
        files[fd].commits++;
        files[fd].work += work;
        files[fd].write_time += start - files[fd].first_write;
        files[fd].flush_time += end - start;
        files[fd].write_calls += files[fd].writes;
        files[fd].write_bytes += files[fd].bytes;
    }
    files[fd].writes = 0;
    files[fd].bytes = 0;
    files[fd].last_flush_end = resumed;
}

static int timed_sync(int kind, const char *symbol, int (**real)(int), int fd) {
    if (!*real) *real = (int (*)(int))next(symbol);
    double start = now_ns();
    int result = (*real)(fd);
    double end = now_ns();
    total_ns[kind] += end - start;
    count[kind]++;
    flushed(fd, start, end);
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

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

static ssize_t timed_pwrite(pwrite_fn *real, const char *symbol, int fd, const void *buf, size_t n, off_t offset) {
    if (!*real) *real = (pwrite_fn)next(symbol);
    double start = now_ns();
    ssize_t result = (*real)(fd, buf, n, offset);
    total_ns[PWRITE] += now_ns() - start;
    count[PWRITE]++;
    wrote(fd, start, (long)n);
    return result;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
    static pwrite_fn real;
    return timed_pwrite(&real, "pwrite", fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) {
    static pwrite_fn real;
    return timed_pwrite(&real, "pwrite64", fd, buf, n, offset);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t offset) {
    static ssize_t (*real)(int, const struct iovec *, int, off_t);
    if (!real) real = (ssize_t (*)(int, const struct iovec *, int, off_t))next("pwritev");
    long bytes = 0;
    for (int i = 0; i < n; i++) bytes += (long)iov[i].iov_len;
    double start = now_ns();
    ssize_t result = real(fd, iov, n, offset);
    total_ns[PWRITEV] += now_ns() - start;
    count[PWRITEV]++;
    wrote(fd, start, bytes);
    return result;
}

__attribute__((destructor)) static void report(void) {
    for (int k = 0; k < CALLS; k++) {
        if (count[k] > 0) fprintf(stderr, "%s: %ld calls, %.2f us each\n", names[k], count[k], total_ns[k] / count[k] / 1000);
    }
    for (int fd = 0; fd < FILES; fd++) {
        long c = files[fd].commits;
        if (files[fd].flushes <= 100 || c == 0) continue;
        fprintf(stderr, "%s: %ld commits after %ld, per commit: work %.1f us, writes %.1f us, flush %.1f us"
                " (%.2f write calls, %.0f bytes)\n",
                files[fd].path, c, warmup, files[fd].work / c / 1000, files[fd].write_time / c / 1000,
                files[fd].flush_time / c / 1000, files[fd].write_calls / c, files[fd].write_bytes / c);
    }
}
