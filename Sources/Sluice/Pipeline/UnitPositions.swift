import SluiceBatching
import SluiceInput
@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where each unit of a run's inputs lies, as the hash pass of a run that
/// skips found them (``SkipPlan``): its first byte, line and column, and the
/// offset past its last byte, so that the probe and the parse read only the
/// selected units' bytes from a file (``UnitPositions+Selected``) instead of
/// reading and scanning the whole input twice more. Kept for inputs whose
/// units need no context (JSON Lines, top-level values), in an unlinked file
/// in the sort directory, each unit as four varints relative to the one
/// before it (the gap since its end, its length, the lines since its start,
/// its column less one): about 5 bytes a unit of the events (10 MB at
/// 2,000,000 units), written once and read in order by the probe and by
/// the parse. Kept too for XML in UTF-8 whose units all have one context
/// (``UnitPositions+XML``), held once an input.
///
/// Memory: one buffer of ``bufferBytes``, and one more while a reader reads.
final class UnitPositions {
    /// A unit's place: its start's offset, line and column, and its end.
    struct Place {
        var start: Int64
        var end: Int64
        var line: Int
        var column: Int
    }

    /// The bytes buffered before each write, and read by each `pread(2)`.
    static let bufferBytes = 64 << 10

    private let descriptor: Int32
    private let path: String
    /// The places encoded and not yet written, `buffered` bytes of `buffer`.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: UnitPositions.bufferBytes, alignment: 8)
    private var buffered = 0
    private var written: Int64 = 0
    /// The file's range of each input's places, by input; nil for an input
    /// whose places were not kept.
    private var ranges: [Int: (bytes: Range<Int64>, units: Int)] = [:]
    /// The input being recorded, where its places begin, its units, and the
    /// last place (the next is encoded relative to it).
    private var input: Int?
    private var inputStart: Int64 = 0
    private var units = 0
    private var last = Place(start: 0, end: 0, line: 1, column: 1)
    /// The start of the unit being read.
    private var pending: UnitBoundary?
    /// XML: the context of the input being recorded's units, whether one
    /// of them had another (its places are then forgotten), and each kept
    /// input's (``UnitPositions+XML``).
    var context: [UInt8]?
    var contextRefused = false
    var contexts: [Int: [UInt8]] = [:]

    /// A file of places in `directory`.
    init(directory: String) throws(SpillError) {
        let file = UnlinkedFile(in: directory, prefix: "sluice-places-")
        guard file.descriptor >= 0 else {
            throw SpillError(path: file.path, action: "keeping the units' places", errno: file.error)
        }
        descriptor = file.descriptor
        path = file.path
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// Starts recording the places of input `index`.
    func begin(input index: Int) {
        input = index
        inputStart = written + Int64(buffered)
        units = 0
        last = Place(start: 0, end: 0, line: 1, column: 1)
        pending = nil
        context = nil
        contextRefused = false
    }

    /// Notes the start of a unit of the input being recorded.
    func started(_ boundary: UnitBoundary) { pending = boundary }

    /// Records the unit started last, which ends at `end`.
    func ended(at end: Int64) throws(SpillError) {
        guard let start = pending else { return }
        pending = nil
        let place = Place(start: start.byteOffset, end: end, line: start.line, column: start.column)
        // Encoded through a local index: the buffer's count is written once a unit, not once a byte.
        var at = buffered
        Self.put(UInt64(place.start - last.end), buffer, &at)
        Self.put(UInt64(place.end - place.start), buffer, &at)
        Self.put(UInt64(place.line - last.line), buffer, &at)
        Self.put(UInt64(place.column - 1), buffer, &at)
        buffered = at
        last = place
        units += 1
        // Four varints of at most 10 bytes each fit in what is left.
        if buffered > Self.bufferBytes - 40 { try flush() }
    }

    /// Ends the input being recorded: its places are kept when `complete`
    /// (every unit ended) and its units' contexts allow, else forgotten.
    func end(complete: Bool) throws(SpillError) {
        guard let index = input else { return }
        input = nil
        try flush()
        guard complete && !contextRefused else { return }
        ranges[index] = (inputStart..<written, units)
        contexts[index] = context
    }

    /// Whether the places of input `index` were kept.
    func has(input index: Int) -> Bool { ranges[index] != nil }

    /// Calls `body` with the ordinal and place of each unit of input
    /// `index`, in order. One sequential read of its places.
    func forEach(input index: Int, _ body: (Int, Place) throws(ImportError) -> Void) throws(ImportError) {
        guard let range = ranges[index], range.units > 0 else { return }
        var cursor = Cursor(descriptor: descriptor, path: path, bytes: range.bytes)
        defer { cursor.block.deallocate() }
        var place = Place(start: 0, end: 0, line: 1, column: 1)
        for ordinal in 1...range.units {
            place.start = try place.end + Int64(cursor.next())
            place.end = try place.start + Int64(cursor.next())
            place.line += try Int(cursor.next())
            place.column = try Int(cursor.next()) + 1
            try body(ordinal, place)
        }
    }

    /// Reads the varints of a range of the file, a block at a time.
    private struct Cursor {
        let descriptor: Int32
        let path: String
        var bytes: Range<Int64>
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: UnitPositions.bufferBytes, alignment: 8)
        var at = 0
        var count = 0

        init(descriptor: Int32, path: String, bytes: Range<Int64>) {
            self.descriptor = descriptor
            self.path = path
            self.bytes = bytes
        }

        mutating func next() throws(ImportError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                if at == count { try refill() }
                let byte = block[at]
                at += 1
                value |= UInt64(byte & 0x7f) << shift
                shift += 7
                if byte < 0x80 { return value }
            }
        }

        private mutating func refill() throws(ImportError) {
            let want = Int(min(Int64(block.count), bytes.upperBound - bytes.lowerBound))
            while true {
                let read = want > 0 ? pread(descriptor, block.baseAddress!, want, off_t(bytes.lowerBound)) : 0
                if read < 0 && errno == EINTR { continue }
                guard read > 0 else {
                    throw .spill(
                        SpillError(path: path, action: "reading the units' places", errno: read < 0 ? errno : EIO))
                }
                bytes = bytes.lowerBound + Int64(read)..<bytes.upperBound
                (at, count) = (0, read)
                return
            }
        }
    }

    /// Writes `value` as a varint at `at` in `buffer`, moving `at` past it.
    @inline(__always)
    private static func put(_ value: UInt64, _ buffer: UnsafeMutableRawBufferPointer, _ at: inout Int) {
        var value = value
        while value >= 0x80 {
            buffer[at] = UInt8(value & 0x7f) | 0x80
            at += 1
            value >>= 7
        }
        buffer[at] = UInt8(value)
        at += 1
    }

    private func flush() throws(SpillError) {
        var done = 0
        while done < buffered {
            let wrote = pwrite(descriptor, buffer.baseAddress! + done, buffered - done, off_t(written))
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { throw SpillError(path: path, action: "keeping the units' places", errno: errno) }
            done += wrote
            written += Int64(wrote)
        }
        buffered = 0
    }
}
