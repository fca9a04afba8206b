// Cache prefetch hints for the storage engine's scans: Swift has no spelling of the
// instruction, so this header gives it one. A hint never faults and changes no result.
#ifndef COVE_PREFETCH_H
#define COVE_PREFETCH_H

/// Starts loading the cache line holding `address` for reading, into every cache level.
static inline void cove_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
