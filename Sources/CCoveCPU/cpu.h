// Two machine instructions the storage engine uses and Swift has no spelling of: the cache
// prefetch hint, for scans, and the CRC32C instruction of SSE 4.2, for page checksums (three
// streams interleaved for whole pages). Header
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
/// The bytes each of the three streams of cove_crc32c_update_3way() runs over per round (a
/// multiple of 8): three of them fill a 4 KiB page but for its 4-byte checksum field.
#define COVE_CRC32C_BLOCK 1360

/// `crc` advanced over COVE_CRC32C_BLOCK zero bytes, by `table` (4 x 256 entries: the register
/// after the zeros for each value of each of its bytes). The register update is linear, so a
/// register can be moved past a block this way and combined with the block's own CRC by XOR.
static inline uint32_t cove_crc32c_shift(uint32_t crc, const uint32_t *table) {
    return table[crc & 0xff] ^ table[256 + ((crc >> 8) & 0xff)]
        ^ table[512 + ((crc >> 16) & 0xff)] ^ table[768 + (crc >> 24)];
}

/// As cove_crc32c_update(), but three instruction streams at once over consecutive blocks of
/// COVE_CRC32C_BLOCK bytes (the instruction's latency is three times its throughput), the
/// registers joined by cove_crc32c_shift(); what is left over runs as one stream.
__attribute__((target("sse4.2")))
static inline uint32_t cove_crc32c_update_3way(uint32_t crc, const void *bytes, size_t count,
                                               const uint32_t *shift_table) {
    const unsigned char *p = (const unsigned char *)bytes;
    while (count >= 3 * COVE_CRC32C_BLOCK) {
        uint64_t a = crc, b = 0, c = 0;
        for (size_t i = 0; i < COVE_CRC32C_BLOCK; i += 8) {
            uint64_t wa, wb, wc;
            __builtin_memcpy(&wa, p + i, 8);
            __builtin_memcpy(&wb, p + COVE_CRC32C_BLOCK + i, 8);
            __builtin_memcpy(&wc, p + 2 * COVE_CRC32C_BLOCK + i, 8);
            a = __builtin_ia32_crc32di(a, wa);
            b = __builtin_ia32_crc32di(b, wb);
            c = __builtin_ia32_crc32di(c, wc);
        }
        crc = cove_crc32c_shift(cove_crc32c_shift((uint32_t)a, shift_table) ^ (uint32_t)b, shift_table) ^ (uint32_t)c;
        p += 3 * COVE_CRC32C_BLOCK;
        count -= 3 * COVE_CRC32C_BLOCK;
    }
    return cove_crc32c_update(crc, p, count);
}
#else
// Without the instruction: cove_crc32c_available() says 0, so the storage uses its tables and
// never calls the two update functions, which exist only so that the module builds.
#define COVE_CRC32C_BLOCK 1360
static inline uint32_t cove_crc32c_update_3way(uint32_t crc, const void *bytes, size_t count,
                                               const uint32_t *shift_table) {
    (void)bytes;
    (void)count;
    (void)shift_table;
    return crc;
}
static inline int cove_crc32c_available(void) { return 0; }
static inline uint32_t cove_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif

#endif
