@_spi(Machinery) import SluiceRecords

/// The byte form of one row in a run file:
/// `varint(length) varint(ordinal) varint(cells << 1 | deletes) cell…`, each cell a tag byte
/// (0 absent, 1 null, 2 integer, 3 real, 4 text, 5 blob, 6 spilled text,
/// 7 spilled blob) then its value: a zigzag varint, 8 little-endian bytes,
/// a varint length and the bytes, or (spilled) a varint length and the
/// value's 8-byte little-endian offset in the arena's ``ValueSpill``.
enum RowCoding {
    /// Appends row `row` of `rows`, as record `ordinal`, to `out`.
    /// O(columns + text), no allocation once `out` has grown: `out` grows
    /// once by the row's length, then every byte is stored through a pointer
    /// (appending byte by byte checked the array's uniqueness and capacity
    /// at each: 110 M instructions of a 20,000-event first import).
    static func append(row: Int, of rows: RowArena, ordinal: Int, to out: inout [UInt8]) {
        let header = UInt64(rows.columnCount) << 1 | (rows.isDeletion(row) ? 1 : 0)
        var length = varintSize(UInt64(ordinal)) + varintSize(header)
        for column in 0..<rows.columnCount { length += cellSize(rows[row, column]) }
        var at = grow(&out, by: varintSize(UInt64(length)) + length)
        rows.bytes.withUnsafeBufferPointer { text in
            out.withUnsafeMutableBufferPointer { target in
                let base = target.baseAddress!
                storeVarint(UInt64(length), base, &at)
                storeVarint(UInt64(ordinal), base, &at)
                storeVarint(header, base, &at)
                for column in 0..<rows.columnCount { storeCell(rows[row, column], text, base, &at) }
            }
        }
    }

    /// Appends one cell in the encoding above: its tag byte, then its value
    /// (text and blob bytes read from `text`, the arena's bytes).
    static func appendCell(_ cell: Cell, _ text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var at = grow(&out, by: cellSize(cell))
        out.withUnsafeMutableBufferPointer { storeCell(cell, text, $0.baseAddress!, &at) }
    }

    /// Lengthens `out` by `count` bytes (zeros, overwritten by the caller)
    /// and returns where they start. Amortised O(count), the array growing
    /// geometrically: the zeros are copied from ``zeros`` (136 instructions
    /// a call of 20 to 220 bytes, callgrind, against 280 appending a
    /// `repeatElement`), a row over its 4 KiB in several copies.
    @inline(__always)
    private static func grow(_ out: inout [UInt8], by count: Int) -> Int {
        let start = out.count
        var left = count
        zeros.withUnsafeBufferPointer { zeros in
            while left > 0 {
                let piece = min(left, zeros.count)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: zeros[0..<piece]))
                left -= piece
            }
        }
        return start
    }

    /// What ``grow(_:by:)`` lengthens an array with.
    private static let zeros = [UInt8](repeating: 0, count: 4096)

    /// Stores `cell` as ``appendCell(_:_:to:)`` encodes it at `at` in
    /// `base`, which has room for its ``cellSize(_:)`` bytes; advances `at`.
    @inline(__always)
    private static func storeCell(
        _ cell: Cell, _ text: UnsafeBufferPointer<UInt8>, _ base: UnsafeMutablePointer<UInt8>, _ at: inout Int
    ) {
        switch cell {
        case .absent: storeByte(0, base, &at)
        case .null: storeByte(1, base, &at)
        case .integer(let value):
            storeByte(2, base, &at)
            storeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), base, &at)
        case .real(let value):
            storeByte(3, base, &at)
            UnsafeMutableRawPointer(base + at).storeBytes(of: value.bitPattern.littleEndian, as: UInt64.self)
            at += 8
        case .text(let offset, let count), .blob(let offset, let count):
            if case .text = cell { storeByte(4, base, &at) } else { storeByte(5, base, &at) }
            storeVarint(UInt64(count), base, &at)
            storeBytes(text, from: Int(offset), count: Int(count), base, &at)
        case .spilledText(let descriptor, let count), .spilledBlob(let descriptor, let count):
            if case .spilledText = cell { storeByte(6, base, &at) } else { storeByte(7, base, &at) }
            storeVarint(UInt64(count), base, &at)
            storeBytes(text, from: Int(descriptor), count: 8, base, &at)
        }
    }

    @inline(__always)
    private static func storeByte(_ byte: UInt8, _ base: UnsafeMutablePointer<UInt8>, _ at: inout Int) {
        base[at] = byte
        at += 1
    }

    @inline(__always)
    private static func storeVarint(_ value: UInt64, _ base: UnsafeMutablePointer<UInt8>, _ at: inout Int) {
        var value = value
        while value >= 0x80 {
            storeByte(UInt8(truncatingIfNeeded: value) | 0x80, base, &at)
            value >>= 7
        }
        storeByte(UInt8(value), base, &at)
    }

    /// Copies `count` bytes of `text` from `start` (within it: a debug
    /// build checks, as the slice it replaces did) to `at`.
    @inline(__always)
    private static func storeBytes(
        _ text: UnsafeBufferPointer<UInt8>, from start: Int, count: Int, _ base: UnsafeMutablePointer<UInt8>,
        _ at: inout Int
    ) {
        let source = UnsafeBufferPointer(rebasing: text[start..<start + count])
        if let from = source.baseAddress, count > 0 { (base + at).update(from: from, count: count) }
        at += count
    }

    /// Whether `left` and `right`, cells of rows whose text is `text`, have
    /// the same encoding (``appendCell(_:_:to:)``), compared in place.
    static func encodeAlike(_ left: Cell, _ right: Cell, _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        switch (left, right) {
        case (.text(let one, let count), .text(let other, let otherCount)),
            (.blob(let one, let count), .blob(let other, let otherCount)):
            return count == otherCount
                && text[Int(one)..<Int(one + count)].elementsEqual(text[Int(other)..<Int(other + count)])
        case (.spilledText(let one, let count), .spilledText(let other, let otherCount)),
            (.spilledBlob(let one, let count), .spilledBlob(let other, let otherCount)):
            return count == otherCount
                && text[Int(one)..<Int(one) + 8].elementsEqual(text[Int(other)..<Int(other) + 8])
        case (.real(let one), .real(let other)): return one.bitPattern == other.bitPattern
        default: return left == right
        }
    }

    /// Decodes one row body (after its length) into `rows`; cells beyond the
    /// encoded ones are absent. Returns false when the bytes are malformed.
    /// O(body): the row is written through ``RowArena/appendRow(ordinal:byteCapacity:_:)``
    /// with room for the body's length, which its text and spilled places
    /// cannot exceed.
    static func decode(_ body: UnsafeRawBufferPointer, into rows: inout RowArena) -> Bool {
        var position = 0
        guard let ordinal = readVarint(body, &position), let header = readVarint(body, &position),
            Int(header >> 1) <= rows.columnCount
        else { return false }
        let count = Int(header >> 1)
        let spill = rows.spill
        let decoded = rows.appendRow(ordinal: Int(ordinal), byteCapacity: body.count) { row in
            for column in 0..<count {
                guard position < body.count else { return false }
                let tag = body[position]
                position += 1
                switch tag {
                case 0: break
                case 1: row.set(column, .null)
                case 2:
                    guard let raw = readVarint(body, &position) else { return false }
                    row.set(column, .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)))
                case 3:
                    guard position + 8 <= body.count else { return false }
                    let bits = body.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                    row.set(column, .real(Double(bitPattern: UInt64(littleEndian: bits))))
                    position += 8
                case 4, 5:
                    guard let length = readVarint(body, &position), length <= body.count - position,
                        let cell = row.copy(
                            UnsafeRawBufferPointer(rebasing: body[position..<position + Int(length)]), text: tag == 4)
                    else { return false }
                    row.set(column, cell)
                    position += Int(length)
                case 6, 7:
                    guard let length = readVarint(body, &position), position + 8 <= body.count, spill != nil,
                        let cell = row.spilled(
                            text: tag == 6,
                            at: Int64(littleEndian: body.loadUnaligned(fromByteOffset: position, as: Int64.self)),
                            length: Int(length))
                    else { return false }
                    row.set(column, cell)
                    position += 8
                default: return false
                }
            }
            return position == body.count
        }
        if header & 1 == 1 { rows.markDeletion() }
        return decoded
    }

    /// Reads a varint at `position`, advancing it; nil when it runs past the
    /// end or past 10 bytes. Always inlined: a call from the decode's row
    /// writer, three a row, cost 17 M instructions of a 20,000-event first
    /// import.
    @inline(__always)
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count && shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    private static func varintSize(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    private static func cellSize(_ cell: Cell) -> Int {
        switch cell {
        case .absent, .null: return 1
        case .integer(let value): return 1 + varintSize(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        case .real: return 9
        case .text(_, let count), .blob(_, let count): return 1 + varintSize(UInt64(count)) + Int(count)
        case .spilledText(_, let count), .spilledBlob(_, let count): return 1 + varintSize(UInt64(count)) + 8
        }
    }
}
