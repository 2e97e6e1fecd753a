// The allocator settings the CLI makes; glibc's mallopt is not imported
// into Swift's Glibc module.
#if __has_include(<malloc.h>) && defined(__linux__)
#include <malloc.h>

/// Fixes glibc's mmap threshold at `bytes`. Left alone, glibc raises it to
/// the size of each large block freed (up to 32 MiB), so later buffers of
/// that size come from the heap and stay there after they are freed. Returns
/// 1 on success. O(1).
static inline int sluice_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

/// Lets glibc's threads share at most `count` malloc arenas. Left alone,
/// each thread that allocates gets an arena of its own (up to eight per
/// core), each keeping the memory freed into it. Returns 1 on success. O(1).
static inline int sluice_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}
#else
static inline int sluice_fix_mmap_threshold(int bytes) {
    (void)bytes;
    return 0;
}

static inline int sluice_limit_malloc_arenas(int count) {
    (void)count;
    return 0;
}
#endif
