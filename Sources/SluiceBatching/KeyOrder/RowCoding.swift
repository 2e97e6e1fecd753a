@_spi(Machinery) import SluiceRecords

/// The byte form of one row in a run file:
/// `varint(length) varint(ordinal) varint(cells << 1 | deletes) cell…`, each cell a tag byte
/// (0 absent, 1 null, 2 integer, 3 real, 4 text, 5 blob, 6 spilled text,
/// 7 spilled blob) then its value: a zigzag varint, 8 little-endian bytes,
/// a varint length and the bytes, or (spilled) a varint length and the
/// value's 8-byte little-endian offset in the arena's ``ValueSpill``.
enum RowCoding {
    /// Appends row `row` of `rows`, as record `ordinal`, to `out`.
    /// O(columns + text), no allocation once `out` has grown.
    static func append(row: Int, of rows: RowArena, ordinal: Int, to out: inout [UInt8]) {
        let header = UInt64(rows.columnCount) << 1 | (rows.isDeletion(row) ? 1 : 0)
        var length = varintSize(UInt64(ordinal)) + varintSize(header)
        for column in 0..<rows.columnCount { length += cellSize(rows[row, column]) }
        appendVarint(UInt64(length), to: &out)
        appendVarint(UInt64(ordinal), to: &out)
        appendVarint(header, to: &out)
        rows.bytes.withUnsafeBufferPointer { text in
            for column in 0..<rows.columnCount { appendCell(rows[row, column], text, to: &out) }
        }
    }

    /// Appends one cell in the encoding above: its tag byte, then its value
    /// (text and blob bytes read from `text`, the arena's bytes).
    static func appendCell(_ cell: Cell, _ text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        switch cell {
        case .absent: out.append(0)
        case .null: out.append(1)
        case .integer(let value):
            out.append(2)
            appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &out)
        case .real(let value):
            out.append(3)
            withUnsafeBytes(of: value.bitPattern.littleEndian) { out.append(contentsOf: $0) }
        case .text(let offset, let count), .blob(let offset, let count):
            if case .text = cell { out.append(4) } else { out.append(5) }
            appendVarint(UInt64(count), to: &out)
            out.append(contentsOf: text[Int(offset)..<Int(offset + count)])
        case .spilledText(let descriptor, let count), .spilledBlob(let descriptor, let count):
            if case .spilledText = cell { out.append(6) } else { out.append(7) }
            appendVarint(UInt64(count), to: &out)
            out.append(contentsOf: text[Int(descriptor)..<Int(descriptor) + 8])
        }
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
    static func decode(_ body: UnsafeRawBufferPointer, into rows: inout RowArena) -> Bool {
        var position = 0
        guard let ordinal = readVarint(body, &position), let header = readVarint(body, &position),
            Int(header >> 1) <= rows.columnCount
        else { return false }
        let count = header >> 1
        rows.beginRow(ordinal: Int(ordinal))
        if header & 1 == 1 { rows.markDeletion() }
        for column in 0..<Int(count) {
            guard position < body.count else { return false }
            let tag = body[position]
            position += 1
            switch tag {
            case 0: break
            case 1: rows.set(column, .null)
            case 2:
                guard let raw = readVarint(body, &position) else { return false }
                rows.set(column, .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)))
            case 3:
                guard position + 8 <= body.count else { return false }
                var bits: UInt64 = 0
                withUnsafeMutableBytes(of: &bits) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: body[position..<position + 8]))
                }
                rows.set(column, .real(Double(bitPattern: UInt64(littleEndian: bits))))
                position += 8
            case 4, 5:
                guard let length = readVarint(body, &position), position + Int(length) <= body.count else {
                    return false
                }
                let bytes = UnsafeRawBufferPointer(rebasing: body[position..<position + Int(length)])
                rows.set(column, tag == 4 ? rows.text(bytes) : rows.blob(bytes))
                position += Int(length)
            case 6, 7:
                guard let length = readVarint(body, &position), position + 8 <= body.count, let spill = rows.spill
                else { return false }
                var raw: Int64 = 0
                withUnsafeMutableBytes(of: &raw) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: body[position..<position + 8]))
                }
                rows.set(
                    column, rows.spilled(text: tag == 6, at: Int64(littleEndian: raw), length: Int(length), in: spill))
                position += 8
            default: return false
            }
        }
        return position == body.count
    }

    /// Reads a varint at `position`, advancing it; nil when it runs past the
    /// end or past 10 bytes.
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
