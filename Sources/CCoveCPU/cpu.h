// Two machine instructions the storage engine uses and Swift has no spelling of: the cache
// prefetch hint, for scans, and the CRC32C instruction of SSE 4.2, for page checksums. Header
// only: each function is compiled into the Swift module that calls it.
#ifndef COVE_CPU_H
#define COVE_CPU_H

#include <stddef.h>
#include <stdint.h>

/// Starts loading the cache line holding `address` for reading, into every cache level.
/// A hint: it never faults and changes no result.
static inline void cove_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#if defined(__x86_64__)
#include <cpuid.h>

/// 1 when this processor has the CRC32C instruction (SSE 4.2), 0 otherwise.
static inline int cove_crc32c_available(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

/// Runs the CRC32C register `crc` (not inverted here) over `count` bytes at `bytes` with the
/// instruction; only to be called when cove_crc32c_available() said 1.
__attribute__((target("sse4.2")))
static inline uint32_t cove_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = crc;
    while (count >= 8) {
        uint64_t word;
        __builtin_memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p += 1;
        count -= 1;
    }
    return c32;
}
#else
static inline int cove_crc32c_available(void) { return 0; }
static inline uint32_t cove_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif

#endif
