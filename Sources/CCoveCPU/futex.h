// The futex system call, which Swift cannot reach through glibc's variadic syscall(): the
// writer lock waits on a word of the shared lock file with it. Header only, like cpu.h.
#ifndef COVE_FUTEX_H
#define COVE_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/// Sleeps while the 32-bit word at `address` (in memory shared between processes) holds
/// `expected`, at most `timeout_ns` nanoseconds. Returns 0 when woken, otherwise the errno:
/// EAGAIN (the word did not hold `expected`), ETIMEDOUT or EINTR.
static inline int cove_futex_wait(uint32_t *address, uint32_t expected, int64_t timeout_ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(timeout_ns / 1000000000);
    ts.tv_nsec = (long)(timeout_ns % 1000000000);
    long rc = syscall(SYS_futex, address, FUTEX_WAIT, expected, &ts, NULL, 0);
    return rc == 0 ? 0 : errno;
}

/// Wakes every process sleeping on the word at `address`.
static inline void cove_futex_wake_all(uint32_t *address) {
    syscall(SYS_futex, address, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

#endif
