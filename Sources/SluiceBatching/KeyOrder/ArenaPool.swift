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

    /// An arena of `columnCount` columns given back earlier, emptied
    /// (``RowArena/reuse(columnCount:)``), or nil when none is waiting: an
    /// arena of another table's shape would hold its buffers' length for
    /// this one's rows while that table's next arena grew anew. O(pool).
    package func take(columnCount: Int) -> RowArena? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard let index = arenas.lastIndex(where: { $0.columnCount == columnCount }) else { return nil }
        var arena = arenas.remove(at: index)
        arena.reuse(columnCount: columnCount)
        return arena
    }

    /// Lets every arena go.
    package func removeAll() {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        arenas = []
    }

    /// Keeps the arenas of `group`'s batches, whose rows its consumer is
    /// done with.
    package func give(rowsOf group: consuming BatchGroup) {
        while let batch = group.batches.popLast() { give(batch.rows) }
    }
}
