#if canImport(Glibc)
import Glibc
#endif
import SluiceRecords

/// One table's sorted runs, one after another in a temporary file. The file
/// is unlinked as soon as it is created, so it disappears with the process
/// whatever happens; only the descriptor keeps it.
final class RunFile {
    /// The file's name when created (for messages; it is already unlinked).
    let path: String
    /// Each run's byte range in the file, oldest first.
    private(set) var runs: [Range<Int64>] = []
    private let descriptor: Int32
    @exclusivity(unchecked) private var size: Int64 = 0
    private var runStart: Int64 = 0
    @exclusivity(unchecked) private var pending: [UInt8] = []
    private static let flushBytes = 1 << 20

    /// Creates the file in `directory`. O(1).
    init(directory: String) throws(SpillError) {
        var template = Array((directory + "/sluice-run-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let name = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard descriptor >= 0 else { throw SpillError(path: name, action: "creating a sort run file", errno: errno) }
        unlink(name)
        self.descriptor = descriptor
        path = name
        pending.reserveCapacity(Self.flushBytes + 4096)
    }

    deinit { close(descriptor) }

    /// Appends one row to the run being written. O(row), a write per MiB.
    func append(row: Int, of rows: RowArena, ordinal: Int) throws(SpillError) {
        RowCoding.append(row: row, of: rows, ordinal: ordinal, to: &pending)
        if pending.count >= Self.flushBytes { try flush() }
    }

    /// Ends the run being written; the next row starts a new one.
    func endRun() throws(SpillError) {
        try flush()
        if size > runStart { runs.append(runStart..<size) }
        runStart = size
    }

    /// Frees the write buffer: no run will be written any more (runs are
    /// only read from now on). O(1).
    func endWriting() { pending = [] }

    /// Forgets the runs at `indices` (merged into a newer one); their bytes
    /// stay in the file until it is closed. O(runs).
    func dropRuns(_ indices: Set<Int>) {
        runs = runs.indices.filter { !indices.contains($0) }.map { runs[$0] }
    }

    /// A reader of run `index` decoding rows of `columnCount` cells through
    /// a buffer of `bufferBytes`.
    func reader(_ index: Int, columnCount: Int, bufferBytes: Int) -> RunReader {
        RunReader(descriptor: descriptor, path: path, range: runs[index], columnCount: columnCount, bufferBytes: bufferBytes)
    }

    private func flush() throws(SpillError) {
        var written = 0
        while written < pending.count {
            let count = pending.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + written, $0.count - written, off_t(size) + off_t(written))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SpillError(path: path, action: "writing a sort run", errno: errno)
            }
            written += count
        }
        size += Int64(written)
        pending.removeAll(keepingCapacity: true)
    }
}

/// Reads one run's rows in order, one at a time, through a fixed buffer
/// (grown only for a row larger than it).
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
final class RunReader {
    /// The current row (row 0), valid after ``next()`` returned true.
    @exclusivity(unchecked) private(set) var current: RowArena
    private let descriptor: Int32
    private let path: String
    @exclusivity(unchecked) private var offset: Int64
    private let end: Int64
    @exclusivity(unchecked) private var buffer: [UInt8]
    @exclusivity(unchecked) private var start = 0
    @exclusivity(unchecked) private var filled = 0

    init(descriptor: Int32, path: String, range: Range<Int64>, columnCount: Int, bufferBytes: Int) {
        self.descriptor = descriptor
        self.path = path
        offset = range.lowerBound
        end = range.upperBound
        current = RowArena(columnCount: columnCount)
        buffer = [UInt8](repeating: 0, count: max(4096, bufferBytes))
    }

    /// Decodes the next row into ``current``; false at the end of the run.
    /// O(row), a read per buffer's worth.
    func next() throws(SpillError) -> Bool {
        current.removeAll()
        guard try available(1) else { return false }
        guard try available(min(10, remaining)) else { throw corrupt() }
        var position = start
        let length = buffer.withUnsafeBytes { RowCoding.readVarint(UnsafeRawBufferPointer(rebasing: $0[..<filled]), &position) }
        let header = position - start
        guard let length, try available(header + Int(length)) else { throw corrupt() }
        let bodyStart = start + header
        let bodyEnd = bodyStart + Int(length)
        let decoded = buffer.withUnsafeBytes { raw in
            RowCoding.decode(UnsafeRawBufferPointer(rebasing: raw[bodyStart..<bodyEnd]), into: &current)
        }
        guard decoded else { throw corrupt() }
        start = bodyEnd
        return true
    }

    /// Bytes of the run not yet consumed.
    private var remaining: Int { filled - start + Int(end - offset) }

    /// Makes `count` bytes available from `start`, reading more (and growing
    /// the buffer for a large row); false when the run has fewer left.
    private func available(_ count: Int) throws(SpillError) -> Bool {
        if filled - start >= count { return true }
        if count > remaining { return false }
        if start > 0 {
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: filled - start)
            }
            filled -= start
            start = 0
        }
        if count > buffer.count { buffer.append(contentsOf: repeatElement(0, count: count - buffer.count)) }
        while filled < count {
            let want = min(buffer.count - filled, Int(end - offset))
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, want, off_t(offset)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                throw got < 0
                    ? SpillError(path: path, action: "reading a sort run", errno: errno)
                    : SpillError(path: path, action: "reading a sort run", message: "the file ended early")
            }
            filled += got
            offset += Int64(got)
        }
        return true
    }

    private func corrupt() -> SpillError {
        SpillError(path: path, action: "reading a sort run", message: "malformed row at byte \(offset - Int64(filled - start))")
    }
}
