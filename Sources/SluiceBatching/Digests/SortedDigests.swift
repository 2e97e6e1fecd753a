import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``DigestSorter``'s entries in order, each with its bytes: those it
/// held, or its runs merged with one read buffer each. Closes the run file
/// when it goes.
///
/// Cost per entry of a merge: O(log runs) comparisons of entries kept side
/// by side (``currents``), no allocation unless the caller asks for the
/// bytes (``next()``; ``nextEntry()`` reads past them). With each run's
/// state in an array of structs copied per entry and the bytes copied into
/// an array whether used or not, the merge was 13.5% of the samples of the
/// next day's 2,000,000-event run (docs/nightly-sync.md, "On a quiet
/// machine, after session 19's changes").
package final class SortedDigests {
    private var held: [(entry: DigestEntry, start: Int, count: Int)] = []
    private var heldBytes: [UInt8] = []
    private var heldNext = 0
    private let file: Int32
    private let path: String
    private var readers: [DigestRunReader] = []
    // Read and written once an entry, from one thread: unchecked
    // (ARCHITECTURE.md, "Hot path").
    /// Each run's current entry, nil once it ended.
    @exclusivity(unchecked) private var currents: [DigestEntry?] = []
    /// Run indices ordered as a binary min-heap by their current entry.
    @exclusivity(unchecked) private var heap: [Int] = []
    private var started = false

    init(held: [(entry: DigestEntry, start: Int, count: Int)], heldBytes: [UInt8]) {
        self.held = held
        self.heldBytes = heldBytes
        file = -1
        path = ""
    }

    init(file: Int32, path: String, runs: [Range<Int64>]) {
        self.file = file
        self.path = path
        readers = runs.map { DigestRunReader(file: file, path: path, range: $0) }
        currents = Array(repeating: nil, count: runs.count)
    }

    deinit { if file >= 0 { close(file) } }

    /// The next entry and a copy of its bytes, nil after the last.
    package func next() throws(SpillError) -> (entry: DigestEntry, bytes: [UInt8])? {
        try next { entry, bytes in (entry, Array(bytes)) }
    }

    /// The next entry without its bytes, nil after the last.
    package func nextEntry() throws(SpillError) -> DigestEntry? {
        try next { entry, _ in entry }
    }

    /// The runs the merge reads, none for entries held.
    var runCount: Int { readers.count }

    /// Hands the next entry and its bytes (valid during the call) to `read`;
    /// nil after the last. O(log runs).
    @inline(__always)
    func next<Value>(_ read: (DigestEntry, UnsafeRawBufferPointer) -> Value) throws(SpillError) -> Value? {
        if file < 0 {
            guard heldNext < held.count else { return nil }
            let item = held[heldNext]
            heldNext += 1
            return heldBytes.withUnsafeBytes {
                read(item.entry, UnsafeRawBufferPointer(rebasing: $0[item.start..<item.start + item.count]))
            }
        }
        if !started { try start() }
        guard let top = heap.first, let entry = currents[top] else { return nil }
        let reader = readers[top]
        let value = read(entry, reader.bytes)
        currents[top] = try reader.advance()
        if currents[top] == nil {
            heap[0] = heap[heap.count - 1]
            heap.removeLast()
        }
        if !heap.isEmpty { siftDown(0) }
        return value
    }

    /// Reads each run's first entry and orders the runs.
    private func start() throws(SpillError) {
        started = true
        for run in readers.indices {
            currents[run] = try readers[run].advance()
            if currents[run] != nil { push(run) }
        }
    }

    private func less(_ left: Int, _ right: Int) -> Bool {
        guard let a = currents[heap[left]], let b = currents[heap[right]] else { return false }
        return a < b
    }

    private func push(_ run: Int) {
        heap.append(run)
        var child = heap.count - 1
        while child > 0, less(child, (child - 1) / 2) {
            heap.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let (left, right) = (2 * parent + 1, 2 * parent + 2)
            if left < heap.count && less(left, smallest) { smallest = left }
            if right < heap.count && less(right, smallest) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// One run of a ``DigestSorter``'s file being merged: what is left of it in
/// the file, a read buffer of at least ``DigestSorter/readBytes`` (larger
/// only for an entry whose bytes do not fit), and where the current entry's
/// bytes lie in it.
private final class DigestRunReader {
    private let file: Int32
    private let path: String
    private var range: Range<Int64>
    private var buffer: UnsafeMutableRawBufferPointer
    /// The bytes read and not yet used: `position..<filled`.
    private var position = 0
    private var filled = 0
    private var bytesStart = 0
    private var bytesCount = 0

    init(file: Int32, path: String, range: Range<Int64>) {
        self.file = file
        self.path = path
        self.range = range
        buffer = .allocate(byteCount: DigestSorter.readBytes, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// The current entry's bytes, valid until the next ``advance()``.
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[bytesStart..<bytesStart + bytesCount])
    }

    /// Moves to the next entry of the run and returns it, nil after its last.
    func advance() throws(SpillError) -> DigestEntry? {
        // The fixed part and the longest varint, then the entry's bytes.
        guard try fill(24 + 10) else { return nil }
        guard filled - position >= 24 else { throw ended }
        let raw = UnsafeRawBufferPointer(buffer)
        let digest = UnitDigest(bytes: UnsafeRawBufferPointer(rebasing: raw[position..<position + 16]))
        let payload = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: position + 16, as: UInt64.self))
        var after = position + 24
        let length = Int(RowCoding.readVarint(UnsafeRawBufferPointer(rebasing: raw[..<filled]), &after) ?? 0)
        position = after
        guard try fill(length) || length == 0 else { throw ended }
        guard filled - position >= length else { throw ended }
        bytesStart = position
        bytesCount = length
        position += length
        return DigestEntry(digest: digest, payload: payload)
    }

    private var ended: SpillError {
        SpillError(path: path, action: "reading a digest run", message: "a run ends inside an entry")
    }

    /// Makes at least `wanted` bytes ready at ``position`` (or what is left
    /// of the run, when less): the bytes not yet used move to the buffer's
    /// start and the rest is read. False when none are ready.
    private func fill(_ wanted: Int) throws(SpillError) -> Bool {
        let ready = filled - position
        let left = range.upperBound - range.lowerBound
        guard ready < wanted && left > 0 else { return ready > 0 }
        if wanted > buffer.count {
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: wanted, alignment: 8)
            larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[position..<filled]))
            buffer.deallocate()
            buffer = larger
        } else if ready > 0 {
            memmove(buffer.baseAddress!, buffer.baseAddress! + position, ready)
        }
        (position, filled) = (0, ready)
        let count = Int(min(Int64(buffer.count - ready), left))
        var done = 0
        while done < count {
            let got = pread(
                file, buffer.baseAddress! + ready + done, count - done, off_t(range.lowerBound) + off_t(done))
            guard got > 0 else { throw SpillError(path: path, action: "reading a digest run", errno: errno) }
            done += got
        }
        filled = ready + count
        range = range.lowerBound + Int64(count)..<range.upperBound
        return true
    }
}
