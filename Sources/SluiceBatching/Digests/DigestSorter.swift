import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One unit of a run as the digest join sees it: its digest and a number the
/// caller chooses (its ordinal in the run's inputs).
package struct DigestEntry: Comparable, Sendable {
    package var digest: UnitDigest
    package var payload: UInt64

    package init(digest: UnitDigest, payload: UInt64) {
        self.digest = digest
        self.payload = payload
    }

    package static func < (left: DigestEntry, right: DigestEntry) -> Bool {
        left.digest != right.digest ? left.digest < right.digest : left.payload < right.payload
    }

    /// The bytes of one entry in a run file.
    static let stride = 24
}

/// Sorts a run's digest entries by digest in bounded memory, for the join
/// with the digests a store keeps (docs/record-digests.md): entries are held
/// up to ``memoryBytes``, then sorted and spilled as one run to a temporary
/// file (unlinked at once); ``sorted()`` merges the runs. Fixed-width
/// entries, so no encoding: 24 bytes each, 2,000,000 units make 48 MB of runs.
///
/// Memory: the entries held, then while merging a read buffer of
/// ``readBytes`` per run. Time: O(n log n) in the entries.
package final class DigestSorter {
    /// The entries held before a spill (24 bytes each).
    package let memoryBytes: Int
    /// The read buffer of each run while merging.
    static let readBytes = 64 << 10

    private let directory: String
    private var held: [DigestEntry] = []
    private var file: Int32 = -1
    private var path = ""
    private var size: Int64 = 0
    private var runs: [Range<Int64>] = []

    /// A sorter spilling to `directory`, holding `memoryBytes` of entries.
    package init(directory: String, memoryBytes: Int = 8 << 20) {
        self.directory = directory
        self.memoryBytes = max(memoryBytes, DigestEntry.stride * 2)
    }

    deinit { if file >= 0 { close(file) } }

    /// Entries added so far.
    package private(set) var count = 0

    /// Adds one entry; spills the entries held when they reach the budget.
    package func add(_ entry: DigestEntry) throws(SpillError) {
        held.append(entry)
        count += 1
        if held.count * DigestEntry.stride >= memoryBytes { try spill() }
    }

    /// The entries in digest order (then payload order). Ends the adding.
    package func sorted() throws(SpillError) -> SortedDigests {
        held.sort()
        if runs.isEmpty { return SortedDigests(held: held, file: -1, path: path, runs: []) }
        try spill()
        let descriptor = file
        file = -1
        return SortedDigests(held: [], file: descriptor, path: path, runs: runs)
    }

    private func spill() throws(SpillError) {
        guard !held.isEmpty else { return }
        if file < 0 {
            var template = Array((directory + "/sluice-digests-" + String(repeating: "X", count: 6)).utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            guard descriptor >= 0 else {
                throw SpillError(path: path, action: "creating a digest run file", errno: errno)
            }
            unlink(path)
            file = descriptor
        }
        held.sort()
        let start = size
        var buffer = [UInt8]()
        buffer.reserveCapacity(min(held.count, 1 << 16) * DigestEntry.stride)
        for (index, entry) in held.enumerated() {
            DigestEntry.append(entry, to: &buffer)
            if buffer.count >= 1 << 20 || index == held.count - 1 {
                try write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        runs.append(start..<size)
        held.removeAll(keepingCapacity: true)
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

extension DigestEntry {
    static func append(_ entry: DigestEntry, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: (entry.digest.high.bigEndian, entry.digest.low.bigEndian, entry.payload.bigEndian)) {
            buffer.append(contentsOf: $0)
        }
    }

    init(at offset: Int, of bytes: UnsafeRawBufferPointer) {
        let digest = UnitDigest(bytes: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 16]))
        self.init(
            digest: digest,
            payload: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)))
    }
}
