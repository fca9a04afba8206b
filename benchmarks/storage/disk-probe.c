// What the disk under a benchmark charges for the two things Cove's commit layout was tuned for,
// with no database involved:
//   flush   - writing k pages and one meta page, then fdatasync: the k pages in one run of
//             consecutive pages, or scattered over the file (the old interleaved layout);
//   folios  - one-page pwrites into a file first written in pieces of 4 KiB, 64 KiB, 256 KiB or
//             1 MiB (the larger the pieces, the larger the page-cache folios later writes meet);
//   turns   - what one durable commit writes, nine patterns taken in turns (one commit of each,
//             in a new order every round) so that all meet the same moments of the machine
//             (medians and means): Cove's (two pages, then a meta page at page 0 or 1: two
//             places on the disk), three pages in one run, two pages in one run, SQLite's WAL
//             frame (4,120 bytes at the next frame of a WAL that wraps), Cove's again on a file
//             mapped read-only, shared as Cove's readers map it, then private; a random update's
//             three pages at random places of a 4 MiB file and a meta page (three places and
//             the slot); and a commit log in a file of its own: the meta and three pages
//             appended in one write and that file flushed, the three pages then written at
//             random places of the data file unflushed, which every 256th commit flushes
//             before the log starts over (its cost in that commit, so in the mean); and the
//             same log for an append's commit: the meta and two pages appended, the two pages
//             then written as one run of the data file;
//   memory  - first writes into 32 MiB of fresh anonymous memory, in 4 KiB pages or asked for
//             transparent huge pages (MADV_HUGEPAGE), and a second write over it: what a write
//             transaction's new pages cost before they hold anything (PageBuffers.swift).
// Build and run (a few seconds):
//   cc -O2 -o disk-probe disk-probe.c && ./disk-probe [directory]
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned long long next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int open_file(const char *path, long bytes) {
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || posix_fallocate(fd, 0, bytes) != 0) {
        perror(path);
        exit(1);
    }
    return fd;
}

static void write_all(int fd, const char *buffer, long bytes, long offset) {
    if (pwrite(fd, buffer, bytes, offset) != bytes) {
        perror("pwrite");
        exit(1);
    }
}

// Per commit: k pages (one run, or each at a random page of the first `span` pages), a meta
// page at page 0 or 1, fdatasync.
static double flush(const char *path, int k, int scattered, long span, int commits, const char *buffer) {
    int fd = open_file(path, (span + 2 * k + 2) * PAGE);
    for (long p = 0; p < span + 2 * k + 2; p += 64) write_all(fd, buffer, 64 * PAGE, p * PAGE);
    fdatasync(fd);
    double start = now_us();
    for (int i = 0; i < commits; i++) {
        if (scattered) {
            for (int j = 0; j < k; j++) write_all(fd, buffer, PAGE, (2 + (long)(next_random() % span)) * PAGE);
        } else {
            write_all(fd, buffer, (long)k * PAGE, (2 + (long)(next_random() % (span - k))) * PAGE);
        }
        write_all(fd, buffer, PAGE, (long)(i & 1) * PAGE);
        fdatasync(fd);
    }
    double per = (now_us() - start) / commits;
    close(fd);
    unlink(path);
    return per;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { TURN_PATTERNS = 9, TURN_FILE_PAGES = 1024, LOG_COMMITS = 256 };
static const char *turn_names[TURN_PATTERNS] = {
    "2 pages + meta page at page 0 or 1 (two places)",
    "3 pages in one run",
    "2 pages in one run",
    "a WAL frame of 4,120 bytes",
    "the first, the file mapped MAP_SHARED read-only (as Cove maps it)",
    "the first, the file mapped MAP_PRIVATE read-only",
    "3 pages at random places + meta page (a random update's pages)",
    "a commit log: meta + 3 pages appended to a file of its own; data file every 256",
    "the commit log, an append: meta + 2 pages appended; 2 pages in one run of the data file",
};

// The data file of the commit-log pattern (its log is the pattern's own file).
static int log_data_fd = -1;

// One commit of pattern `kind` on `fd` (commit number `i`), fdatasync included; microseconds.
static double turn(int kind, int fd, int i, const char *buffer) {
    long run = (100 + (i & 1) * 10) * (long)PAGE;   // two places used in turn, as copy-on-write does
    double start = now_us();
    switch (kind) {
    case 0:
    case 4:
    case 5:
        write_all(fd, buffer, 2 * PAGE, run);
        write_all(fd, buffer, PAGE, (long)(i & 1) * PAGE);
        break;
    case 1: write_all(fd, buffer, 3 * PAGE, run); break;
    case 2: write_all(fd, buffer, 2 * PAGE, run); break;
    case 3: write_all(fd, buffer, 4120, 32 + (long)(i % 500) * 4120); break;
    case 6:
        for (int j = 0; j < 3; j++) write_all(fd, buffer, PAGE, (2 + (long)(next_random() % (TURN_FILE_PAGES - 2))) * PAGE);
        write_all(fd, buffer, PAGE, (long)(i & 1) * PAGE);
        break;
    case 7:
    case 8:
        // The log of each pattern is its own file; the data file is shared.
        write_all(fd, buffer, (kind == 7 ? 4 : 3) * PAGE, (long)(i % LOG_COMMITS) * 4 * PAGE);
        fdatasync(fd);
        if (kind == 7) {
            for (int j = 0; j < 3; j++) write_all(log_data_fd, buffer, PAGE, (2 + (long)(next_random() % (TURN_FILE_PAGES - 2))) * PAGE);
        } else {
            write_all(log_data_fd, buffer, 2 * PAGE, run);
        }
        if (i % LOG_COMMITS == LOG_COMMITS - 1) fdatasync(log_data_fd);
        return now_us() - start;
    }
    fdatasync(fd);
    return now_us() - start;
}

// The medians and means of `commits` commits of each pattern, taken in turns.
static void turns(const char *path, int commits, const char *buffer, double *median, double *mean) {
    int fd[TURN_PATTERNS];
    char name[4200];
    for (int k = 0; k <= TURN_PATTERNS; k++) {
        snprintf(name, sizeof name, "%s.%d", path, k);
        int f = open_file(name, (long)TURN_FILE_PAGES * PAGE);
        for (long p = 0; p < TURN_FILE_PAGES; p += 64) write_all(f, buffer, 64 * PAGE, p * PAGE);
        fdatasync(f);
        unlink(name);
        if (k < TURN_PATTERNS) fd[k] = f; else log_data_fd = f;
    }
    // The mapped patterns' files, mapped for the whole run with every page faulted in.
    void *maps[2];
    volatile char sink = 0;
    for (int m = 0; m < 2; m++) {
        maps[m] = mmap(NULL, (long)TURN_FILE_PAGES * PAGE, PROT_READ, m == 0 ? MAP_SHARED : MAP_PRIVATE, fd[4 + m], 0);
        if (maps[m] == MAP_FAILED) { perror("mmap"); exit(1); }
        for (long p = 0; p < TURN_FILE_PAGES; p++) sink += ((const char *)maps[m])[p * PAGE];
    }
    (void)sink;
    double *t = malloc(sizeof(double) * TURN_PATTERNS * commits);
    int order[TURN_PATTERNS];
    for (int k = 0; k < TURN_PATTERNS; k++) order[k] = k;
    for (int i = 0; i < commits; i++) {
        // A new order every round, so that no pattern always follows the same one.
        for (int k = TURN_PATTERNS - 1; k > 0; k--) {
            int r = (int)(next_random() % (unsigned long long)(k + 1)), x = order[k];
            order[k] = order[r];
            order[r] = x;
        }
        for (int j = 0; j < TURN_PATTERNS; j++) {
            int k = order[j];
            t[k * commits + i] = turn(k, fd[k], i, buffer);
        }
    }
    for (int k = 0; k < TURN_PATTERNS; k++) {
        mean[k] = 0;
        for (int i = 0; i < commits; i++) mean[k] += t[k * commits + i] / commits;
        qsort(t + k * commits, commits, sizeof(double), by_value);
        median[k] = t[k * commits + commits / 2];
    }
    for (int m = 0; m < 2; m++) munmap(maps[m], (long)TURN_FILE_PAGES * PAGE);
    for (int k = 0; k < TURN_PATTERNS; k++) close(fd[k]);
    close(log_data_fd);
    free(t);
}

// One-page writes at random places of a 64 MiB file first written in pieces of `piece` bytes.
static double folios(const char *path, long piece, int writes, const char *buffer) {
    long bytes = 64L << 20;
    int fd = open_file(path, bytes);
    for (long off = 0; off < bytes; off += piece) write_all(fd, buffer, piece, off);
    double start = now_us();
    for (int i = 0; i < writes; i++) write_all(fd, buffer, PAGE, (long)(next_random() % (bytes / PAGE)) * PAGE);
    double per = (now_us() - start) / writes;
    close(fd);
    unlink(path);
    return per;
}

// Milliseconds to write `bytes` of fresh anonymous memory the first time (huge: asked for
// transparent huge pages), and the second time into `again`.
static double fault_in(long bytes, int huge, double *again) {
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);
    double t0 = now_us();
    memset(p, 1, bytes);
    double t1 = now_us();
    memset(p, 2, bytes);
    *again = (now_us() - t1) / 1e3;
    munmap(p, bytes);
    return (t1 - t0) / 1e3;
}

int main(int argc, char **argv) {
    char path[4096];
    snprintf(path, sizeof path, "%s/disk-probe.%d", argc > 1 ? argv[1] : ".", (int)getpid());
    char *buffer = aligned_alloc(PAGE, 1 << 20);
    memset(buffer, 0x5A, 1 << 20);
    printf("| Probe | One run | Scattered |\n|---|--:|--:|\n");
    int sizes[] = {1, 6, 120};
    for (int i = 0; i < 3; i++) {
        int k = sizes[i], commits = k > 10 ? 300 : 2000;
        printf("| %d page%s + meta page, fdatasync, over 6 MiB (per commit) | %.1f µs |", k, k > 1 ? "s" : "",
               flush(path, k, 0, 1500, commits, buffer));
        if (k > 1) printf(" %.1f µs |\n", flush(path, k, 1, 1500, commits, buffer));
        else printf(" – |\n");
    }
    double median[TURN_PATTERNS], mean[TURN_PATTERNS];
    turns(path, 1536, buffer, median, mean);
    printf("\n| One commit's writes and fdatasync, nine patterns in turns | Median | Mean |\n|---|--:|--:|\n");
    for (int k = 0; k < TURN_PATTERNS; k++) printf("| %s | %.1f µs | %.1f µs |\n", turn_names[k], median[k], mean[k]);
    printf("\n| File first written in pieces of | One-page pwrite after (per write) |\n|---|--:|\n");
    long pieces[] = {4096, 65536, 262144, 1 << 20};
    for (int i = 0; i < 4; i++) {
        printf("| %ld KiB | %.2f µs |\n", pieces[i] / 1024, folios(path, pieces[i], 20000, buffer));
    }
    printf("\n| 32 MiB of fresh anonymous memory | First write | Second write |\n|---|--:|--:|\n");
    for (int huge = 0; huge < 2; huge++) {
        double best = 1e30, again = 0;
        for (int i = 0; i < 3; i++) {
            double a, t = fault_in(32L << 20, huge, &a);
            if (t < best) { best = t; again = a; }
        }
        printf("| %s | %.1f ms | %.1f ms |\n", huge ? "MADV_HUGEPAGE" : "4 KiB pages", best, again);
    }
    free(buffer);
    return 0;
}
