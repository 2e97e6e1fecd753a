extension RowArena {
    /// Appends a row of absent cells for record `ordinal` with room for
    /// `byteCapacity` bytes of its text, lets `body` set its cells through
    /// a ``RowWriter``, and returns what `body` returns (the row stays
    /// either way). O(columns + bytes), with one check of room and of each
    /// buffer's uniqueness a row instead of one a cell; inlined with `body`
    /// into its caller (the merge's decode of a row, a `beginRow`, `set` and
    /// `text` call a cell before, ran 80 M instructions of a 20,000-event
    /// first import).
    @inlinable @_spi(Machinery) public mutating func appendRow(
        ordinal: Int, byteCapacity: Int, _ body: (inout RowWriter) -> Bool
    ) -> Bool {
        reserve(cells: rowStride, bytes: byteCapacity)
        let (start, stride, byteStart) = (cellCount, rowStride, usedBytes)
        var used = 0
        let result = cellBuffer.withUnsafeMutableBufferPointer { cells in
            byteBuffer.withUnsafeMutableBytes { bytes in
                let row = UnsafeMutableBufferPointer(rebasing: cells[start..<start + stride])
                row.update(repeating: .absent)
                var writer = RowWriter(
                    cells: row,
                    bytes: UnsafeMutableRawBufferPointer(rebasing: bytes[byteStart..<byteStart + byteCapacity]),
                    base: byteStart)
                defer { used = writer.used }
                return body(&writer)
            }
        }
        cellCount += stride
        usedBytes += used
        rowOrdinals.append(ordinal)
        return result
    }
}

/// The cells and the room for bytes of the row that
/// ``RowArena/appendRow(ordinal:byteCapacity:_:)`` appends, written through
/// pointers. Valid only inside that call.
@_spi(Machinery) @frozen public struct RowWriter {
    /// The row's cells, `rowStride` of them.
    @usableFromInline let cells: UnsafeMutableBufferPointer<Cell>
    /// The room for the row's bytes.
    @usableFromInline let bytes: UnsafeMutableRawBufferPointer
    /// Where `bytes` starts in the arena's bytes.
    @usableFromInline let base: Int
    /// How many of `bytes` are written.
    @usableFromInline var used = 0

    @inlinable init(cells: UnsafeMutableBufferPointer<Cell>, bytes: UnsafeMutableRawBufferPointer, base: Int) {
        self.cells = cells
        self.bytes = bytes
        self.base = base
    }

    /// Sets `column`, which is less than the arena's `columnCount`. O(1).
    @inlinable @_spi(Machinery) public func set(_ column: Int, _ cell: Cell) { cells[column] = cell }

    /// Copies `span` into the row's room and returns its `.text` cell, or
    /// its `.blob` cell unless `text`; nil when the room is too small.
    /// O(bytes).
    @inlinable @_spi(Machinery) public mutating func copy(_ span: UnsafeRawBufferPointer, text: Bool) -> Cell? {
        guard let offset = place(span) else { return nil }
        return text
            ? .text(offset: offset, length: Int32(span.count)) : .blob(offset: offset, length: Int32(span.count))
    }

    /// A spilled cell (text, or a blob unless `text`) for the `length`
    /// bytes at `fileOffset` in the arena's ``RowArena/spill``, which the
    /// arena holds already; nil when the row's room is too small. O(1).
    @inlinable @_spi(Machinery) public mutating func spilled(text: Bool, at fileOffset: Int64, length: Int) -> Cell? {
        let placed = withUnsafeBytes(of: fileOffset.littleEndian) { place($0) }
        guard let descriptor = placed else { return nil }
        return text
            ? .spilledText(descriptor: descriptor, length: Int32(length))
            : .spilledBlob(descriptor: descriptor, length: Int32(length))
    }

    /// Copies `span` after the bytes written and returns its offset in the
    /// arena's bytes; nil when it does not fit in the room.
    @inlinable @inline(__always) mutating func place(_ span: UnsafeRawBufferPointer) -> Int32? {
        guard span.count <= bytes.count - used else { return nil }
        if let source = span.baseAddress, span.count > 0 {
            (bytes.baseAddress! + used).copyMemory(from: source, byteCount: span.count)
        }
        defer { used += span.count }
        return Int32(base + used)
    }
}
