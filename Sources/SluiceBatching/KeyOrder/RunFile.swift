import SluiceInput
@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One table's sorted runs, one after another in a temporary file, as
/// compressed blocks of rows (``RunCodec``). The file is unlinked as soon as
/// it is created, so it disappears with the process whatever happens; only
/// the descriptor keeps it.
final class RunFile {
    /// The file's name when created (for messages; it is already unlinked).
    let path: String
    /// Each run's byte range in the file, oldest first.
    private(set) var runs: [Range<Int64>] = []
    private let descriptor: Int32
    private let codec: RunCodec
    @exclusivity(unchecked) private var size: Int64 = 0
    private var runStart: Int64 = 0
    /// Encoded rows of the block being filled.
    @exclusivity(unchecked) private var block: [UInt8] = []
    /// Compressed blocks waiting to be written, one `pwrite(2)` each
    /// ``flushBytes``: every table's file keeps its buffer while the input
    /// is read, so 1 MiB each had held 4 MiB for the events' four tables;
    /// 256 KiB holds 1 MiB for four times the system calls (about 10,000
    /// for 2.5 GB of runs).
    @exclusivity(unchecked) private var pending: [UInt8] = []
    private static let flushBytes = 256 << 10
    /// The side file of the spilled cells its rows carry (their offsets in
    /// it, not their bytes, are in the runs); the readers decode into it.
    private var spill: ValueSpill?

    /// Creates the file in `directory`, compressing with `codec`. O(1).
    init(directory: String, codec: RunCodec) throws(SpillError) {
        let file = UnlinkedFile(in: directory, prefix: "sluice-run-")
        guard file.descriptor >= 0 else {
            throw SpillError(path: file.path, action: "creating a sort run file", errno: file.error)
        }
        descriptor = file.descriptor
        self.codec = codec
        path = file.path
        block.reserveCapacity(RunCodec.blockBytes + 4096)
        pending.reserveCapacity(Self.flushBytes + RunCodec.blockBytes)
    }

    deinit { close(descriptor) }

    /// Appends one row to the run being written. O(row), a compression per
    /// block and a write per MiB of compressed blocks.
    func append(row: Int, of rows: RowArena, ordinal: Int) throws(SpillError) {
        if spill == nil { spill = rows.spill }
        RowCoding.append(row: row, of: rows, ordinal: ordinal, to: &block)
        if block.count >= RunCodec.blockBytes { try endBlock() }
    }

    /// Ends the run being written; the next row starts a new one.
    func endRun() throws(SpillError) {
        try endBlock()
        try flush()
        if size > runStart { runs.append(runStart..<size) }
        runStart = size
    }

    /// Frees the write buffers: no run will be written any more (runs are
    /// only read from now on). O(1).
    func endWriting() {
        block = []
        pending = []
    }

    /// Forgets the runs at `indices` (merged into a newer one); their bytes
    /// stay in the file until it is closed. O(runs).
    func dropRuns(_ indices: Set<Int>) {
        runs = runs.indices.filter { !indices.contains($0) }.map { runs[$0] }
    }

    /// A reader of run `index` decoding rows of `columnCount` cells through
    /// a buffer of `bufferBytes`, decompressing with `codec`.
    func reader(_ index: Int, columnCount: Int, bufferBytes: Int, codec: RunCodec) -> RunReader {
        RunReader(
            descriptor: descriptor, path: path, range: runs[index], columnCount: columnCount, bufferBytes: bufferBytes,
            codec: codec, spill: spill)
    }

    private func endBlock() throws(SpillError) {
        guard !block.isEmpty else { return }
        if let failure = codec.compress(block, into: &pending) {
            throw SpillError(path: path, action: "compressing a sort run", message: failure)
        }
        block.removeAll(keepingCapacity: true)
        if pending.count >= Self.flushBytes { try flush() }
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

/// Reads one run's rows in order, one at a time: compressed blocks through a
/// fixed read buffer (grown only for a block larger than it), each block
/// decompressed whole into a second buffer of about ``RunCodec/blockBytes``.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
final class RunReader {
    /// The current row (row 0), valid after ``next()`` returned true.
    @exclusivity(unchecked) private(set) var current: RowArena
    private let descriptor: Int32
    private let path: String
    private let codec: RunCodec
    @exclusivity(unchecked) private var offset: Int64
    private let end: Int64
    /// Compressed bytes read from the file, `start..<filled` not yet used.
    @exclusivity(unchecked) private var buffer: [UInt8]
    @exclusivity(unchecked) private var start = 0
    @exclusivity(unchecked) private var filled = 0
    /// The decompressed block, `position..<blockCount` not yet decoded.
    @exclusivity(unchecked) private var block: [UInt8] = []
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var blockCount = 0

    init(
        descriptor: Int32, path: String, range: Range<Int64>, columnCount: Int, bufferBytes: Int, codec: RunCodec,
        spill: ValueSpill?
    ) {
        self.descriptor = descriptor
        self.path = path
        self.codec = codec
        offset = range.lowerBound
        end = range.upperBound
        current = RowArena(columnCount: columnCount)
        current.adopt(spill)
        buffer = [UInt8](repeating: 0, count: max(4096, bufferBytes))
    }

    /// Decodes the next row into ``current``; false at the end of the run.
    /// O(row), a decompression per block and a read per buffer's worth.
    func next() throws(SpillError) -> Bool {
        current.removeAll()
        if position == blockCount {
            guard try nextBlock() else { return false }
        }
        var cursor = position
        let decoded = block.withUnsafeBytes { raw -> Bool in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[..<blockCount])
            guard let length = RowCoding.readVarint(bytes, &cursor), Int(length) <= blockCount - cursor else {
                return false
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + Int(length))])
            cursor += Int(length)
            return RowCoding.decode(body, into: &current)
        }
        guard decoded else { throw corrupt("a malformed row") }
        position = cursor
        return true
    }

    /// Decompresses the next block; false at the end of the run.
    private func nextBlock() throws(SpillError) -> Bool {
        guard try available(1) else { return false }
        guard try available(min(20, remaining)) else { throw corrupt("a cut block header") }
        var cursor = start
        let header = buffer.withUnsafeBytes { raw -> (raw: UInt64, compressed: UInt64)? in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[..<filled])
            guard let rawCount = RowCoding.readVarint(bytes, &cursor),
                let compressed = RowCoding.readVarint(bytes, &cursor)
            else { return nil }
            return (rawCount, compressed)
        }
        guard let header, header.raw > 0, header.raw <= 1 << 31, header.compressed <= 1 << 31 else {
            throw corrupt("a malformed block header")
        }
        let headerBytes = cursor - start
        guard try available(headerBytes + Int(header.compressed)) else { throw corrupt("a cut block") }
        let frameStart = start + headerBytes
        let failure = buffer.withUnsafeBytes { raw in
            codec.decompress(
                UnsafeRawBufferPointer(rebasing: raw[frameStart..<(frameStart + Int(header.compressed))]),
                rawCount: Int(header.raw),
                into: &block)
        }
        if let failure { throw corrupt(failure) }
        start = frameStart + Int(header.compressed)
        position = 0
        blockCount = Int(header.raw)
        return true
    }

    /// Bytes of the run not yet consumed.
    private var remaining: Int { filled - start + Int(end - offset) }

    /// Makes `count` bytes available from `start`, reading more (and growing
    /// the buffer for a large block); false when the run has fewer left.
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

    private func corrupt(_ what: String) -> SpillError {
        SpillError(
            path: path, action: "reading a sort run", message: "\(what) at byte \(offset - Int64(filled - start))")
    }
}
