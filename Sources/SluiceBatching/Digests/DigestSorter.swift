import SluiceInput
import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One unit of a run as the digest join sees it: its digest and a number the
/// caller chooses (its ordinal in the run's inputs, say).
package struct DigestEntry: Comparable, Sendable {
    package var digest: UnitDigest
    package var payload: UInt64

    package init(digest: UnitDigest, payload: UInt64) {
        self.digest = digest
        self.payload = payload
    }

    /// Word by word: through ``UnitDigest``'s own operators, calls into its
    /// module, the sorts of a first import spent 1.4% of its CPU comparing.
    package static func < (left: DigestEntry, right: DigestEntry) -> Bool {
        if left.digest.high != right.digest.high { return left.digest.high < right.digest.high }
        if left.digest.low != right.digest.low { return left.digest.low < right.digest.low }
        return left.payload < right.payload
    }
}

/// Sorts digest entries, each with bytes of its own (a unit's keys, or
/// none), by digest in bounded memory, for the join with the digests a store
/// keeps and for saving units in the store's order (docs/record-digests.md):
/// entries are held up to ``memoryBytes``, then sorted and spilled as one run
/// to a temporary file (unlinked at once); ``sorted()`` merges the runs. A
/// run holds each entry as its 16 digest bytes, 8 payload bytes, a varint
/// length and the bytes: 25 bytes an entry without bytes, so 2,000,000 units
/// make 50 MB of runs.
///
/// Memory: the entries held, then while merging a read buffer of
/// ``readBytes`` per run, for at most ``mergeWidth`` runs. Time: O(n log n)
/// in the entries.
package final class DigestSorter {
    /// The bytes of entries held before a spill.
    package let memoryBytes: Int
    /// The read buffer of each run while merging.
    static let readBytes = 64 << 10
    /// The most runs a merge reads at once (8 MiB of read buffers): past it,
    /// ``sorted()`` first merges the smallest runs into one, as often as it
    /// takes. Unbounded, 10 GB of events through standard input (20,000,000
    /// units in 850 runs of ``UnitSpill``'s 2 MB budget) held 54 MiB of
    /// buffers in the run's last merge and peaked at 85 MiB; 2,000,000 units
    /// make about 85 runs, which are merged as before.
    static let mergeWidth = 128
    /// The bytes of a run gathered before each write.
    private static let writeBytes = 1 << 20
    /// What an entry held costs, its bytes aside.
    private static let heldEntryBytes = MemoryLayout<(entry: DigestEntry, start: Int, count: Int)>.stride

    private let directory: String
    // Added to once a unit, from one thread: unchecked (ARCHITECTURE.md,
    // "Hot path"; checked, 6 M instructions of a 20,000-event first import).
    @exclusivity(unchecked) private var held: [(entry: DigestEntry, start: Int, count: Int)] = []
    @exclusivity(unchecked) private var heldBytes: [UInt8] = []
    private var file: Int32 = -1
    private var path = ""
    private var size: Int64 = 0
    private var runs: [Range<Int64>] = []

    /// A sorter spilling to `directory`, holding `memoryBytes` of entries.
    package init(directory: String, memoryBytes: Int = 8 << 20) {
        self.directory = directory
        self.memoryBytes = max(memoryBytes, 64)
    }

    deinit { if file >= 0 { close(file) } }

    /// The runs spilled so far.
    var spilledRuns: Int { runs.count }

    /// The memory the entries held take: their room, used or not.
    var heldMemory: Int { held.capacity * Self.heldEntryBytes + heldBytes.capacity }

    /// Entries added so far.
    @exclusivity(unchecked) package private(set) var count = 0

    /// Adds one entry with its `bytes`; spills the entries held when they
    /// reach the budget.
    package func add(_ entry: DigestEntry, bytes: some Collection<UInt8> = EmptyCollection()) throws(SpillError) {
        if held.count == held.capacity { grow() }
        let added = bytes.count
        held.append((entry, heldBytes.count, added))
        // Unspecialised, `+=` costs some 1,500 instructions even when empty.
        if added > 0 { heldBytes += bytes }
        count += 1
        if held.count * Self.heldEntryBytes + heldBytes.count >= memoryBytes { try spill() }
    }

    /// The entries in digest order (then payload order). Ends the adding,
    /// and lets go of the entries held: once spilled, a merge holds only its
    /// read buffers.
    package func sorted() throws(SpillError) -> SortedDigests {
        if runs.isEmpty {
            held.sort { $0.entry < $1.entry }
            defer { (held, heldBytes) = ([], []) }
            return SortedDigests(held: held, heldBytes: heldBytes)
        }
        try spill()
        (held, heldBytes) = ([], [])
        try narrowRuns()
        let descriptor = file
        file = -1
        return SortedDigests(file: descriptor, path: path, runs: runs)
    }

    /// Makes room for more entries, never for more than the budget holds: an
    /// array's own doubling took the held entries of an 8 MB budget to 10.5
    /// MB, and to 15.7 MB while the last doubling copied them (the next day's
    /// 2,000,000-event dump holds two such sorters at once).
    private func grow() {
        let budget = memoryBytes / Self.heldEntryBytes + 1
        held.reserveCapacity(min(budget, max(held.capacity * 2, 1024)))
    }

    private func spill() throws(SpillError) {
        guard !held.isEmpty else { return }
        if file < 0 {
            let created = UnlinkedFile(in: directory, prefix: "sluice-digests-")
            path = created.path
            guard created.descriptor >= 0 else {
                throw SpillError(path: path, action: "creating a digest run file", errno: created.error)
            }
            file = created.descriptor
        }
        held.sort { $0.entry < $1.entry }
        let start = size
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.writeBytes)
        for item in held {
            Self.append(item.entry, heldBytes[item.start..<item.start + item.count], to: &buffer)
            try writeWhenFull(&buffer)
        }
        try write(buffer)
        runs.append(start..<size)
        held.removeAll(keepingCapacity: true)
        heldBytes.removeAll(keepingCapacity: true)
    }

    /// Merges the smallest runs into one run at the end of the file until
    /// no more than ``mergeWidth`` are left. Each merge reads and writes the
    /// runs it takes once; the file keeps their bytes too, so that past the
    /// width it grows by about the bytes merged.
    private func narrowRuns() throws(SpillError) {
        while runs.count > Self.mergeWidth {
            runs.sort { $0.count < $1.count }
            let width = min(Self.mergeWidth, runs.count - Self.mergeWidth + 1)
            // The merge closes its descriptor when it goes; the sorter keeps its own.
            let descriptor = dup(file)
            guard descriptor >= 0 else { throw SpillError(path: path, action: "merging digest runs", errno: errno) }
            let merging = SortedDigests(file: descriptor, path: path, runs: Array(runs.prefix(width)))
            runs.removeFirst(width)
            let start = size
            var buffer: [UInt8] = []
            buffer.reserveCapacity(Self.writeBytes)
            while try merging.next({ entry, bytes in Self.append(entry, bytes, to: &buffer) }) != nil {
                try writeWhenFull(&buffer)
            }
            try write(buffer)
            runs.append(start..<size)
        }
    }

    /// Appends `entry` and its `bytes` as a run holds them.
    private static func append(_ entry: DigestEntry, _ bytes: some Collection<UInt8>, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: (entry.digest.high.bigEndian, entry.digest.low.bigEndian, entry.payload.bigEndian)) {
            buffer.append(contentsOf: $0)
        }
        RowCoding.appendVarint(UInt64(bytes.count), to: &buffer)
        buffer += bytes
    }

    /// Writes `buffer` to the run file and empties it once it holds
    /// ``writeBytes``.
    private func writeWhenFull(_ buffer: inout [UInt8]) throws(SpillError) {
        guard buffer.count >= Self.writeBytes else { return }
        try write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8]) throws(SpillError) {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { pwrite(file, $0.baseAddress! + done, $0.count - done, off_t(size)) }
            guard wrote > 0 else { throw SpillError(path: path, action: "writing a digest run", errno: errno) }
            done += wrote
            size += Int64(wrote)
        }
    }
}
