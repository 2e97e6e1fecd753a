@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Row arenas handed back by the thread that consumed their batches, for
/// the thread that fills the next ones: a filled arena keeps its capacity,
/// so reusing it saves growing a fresh one row by row (and, for buffers
/// past glibc's mmap threshold, mapping and faulting in new pages).
///
/// Memory: at most ``capacity`` arenas of at most ``maxBytes`` each (an
/// arena that held a larger batch, one of a few huge rows, is let go).
/// Thread-safe; O(1) per call.
package final class ArenaPool: @unchecked Sendable {
    private var arenas: [RowArena] = []
    private let capacity: Int
    private let maxBytes: Int
    private var mutex = pthread_mutex_t()

    /// A pool keeping at most `capacity` arenas of at most `maxBytes`.
    package init(capacity: Int, maxBytes: Int = .max) {
        self.capacity = capacity
        self.maxBytes = maxBytes
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Keeps `arena` for reuse, or drops it when the pool is full.
    package func give(_ arena: consuming RowArena) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if arenas.count < capacity && arena.byteSize <= maxBytes { arenas.append(arena) }
    }

    /// An arena given back earlier, or nil when none is waiting.
    package func take() -> RowArena? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return arenas.popLast()
    }
}
