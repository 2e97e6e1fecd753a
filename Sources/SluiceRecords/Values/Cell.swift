// Cell and RowArena are the hottest types that cross modules (the batcher,
// the sorter and the store read every cell). They are `@_spi(Machinery)
// public` rather than `package`: Swift's default cross-module optimisation
// inlines public code only, and with `package` the 20,000-event import ran
// 2,894 M instructions against 2,769 M (callgrind, +4.5%); a user's code
// still does not see them without `@_spi(Machinery) import SluiceRecords`.
/// One value of a row, typed for the store. Text lives in the ``RowArena``'s
/// byte buffer, so a cell never allocates.
@_spi(Machinery) public enum Cell: Equatable, Sendable {
    /// The source did not mention the field: an update leaves the stored value
    /// alone and an insert takes the column's default.
    case absent
    /// An explicit null.
    case null
    /// A 64-bit integer (also booleans, as 0 and 1).
    case integer(Int64)
    /// A double.
    case real(Double)
    /// UTF-8 text at `offset` in the arena's bytes.
    case text(offset: Int32, length: Int32)
    /// Bytes at `offset` in the arena's bytes, stored as a BLOB.
    case blob(offset: Int32, length: Int32)
    /// UTF-8 text of `length` bytes in the arena's ``ValueSpill``, whose
    /// offset in that file is the 8 bytes at `descriptor` in the arena's
    /// bytes (``RowArena/spilledOffset(_:)``). Never a key or a link.
    case spilledText(descriptor: Int32, length: Int32)
    /// Bytes of `length` in the arena's ``ValueSpill``, stored as a BLOB;
    /// placed as ``spilledText(descriptor:length:)`` is.
    case spilledBlob(descriptor: Int32, length: Int32)
}

/// Rows of one table, stored flat: `columnCount` cells per row (in a slot of
/// `rowStride` cells, which a widening arena grows by doubling), text bytes
/// in one shared buffer. Appending a row allocates only when the buffers
/// grow.
@_spi(Machinery) public struct RowArena: Sendable {
    /// The cells, row after row.
    @_spi(Machinery) public private(set) var cells: [Cell] = []
    /// The bytes the `.text` cells point into.
    @_spi(Machinery) public private(set) var bytes: [UInt8] = []
    /// Cells per row.
    @_spi(Machinery) public private(set) var columnCount: Int
    /// Cells between the starts of two rows: `columnCount`, or more once
    /// ``widen(to:)`` has doubled it (a zero-config table meeting one new
    /// member per record copied every row per member: 1,600 members took
    /// 4.9 s, cubic in the members).
    @usableFromInline internal private(set) var rowStride: Int
    /// Each row's record ordinal in its input (for last-wins and messages).
    @_spi(Machinery) public private(set) var ordinals: [Int] = []
    /// The rows that delete their key instead of writing it (a change
    /// file's deletions): only their key cells count. Empty in most runs.
    @_spi(Machinery) public private(set) var deletions: Set<Int> = []
    /// The side file the spilled cells' values are in; nil until the arena
    /// holds one (set by ``spilled(text:at:length:in:)``, carried by the
    /// copies of rows and cells).
    @_spi(Machinery) public private(set) var spill: ValueSpill?

    /// An empty arena of `columnCount` columns.
    @_spi(Machinery) public init(columnCount: Int) {
        self.columnCount = columnCount
        rowStride = columnCount
    }

    /// The number of complete rows.
    @inlinable @_spi(Machinery) public var rowCount: Int { ordinals.count }

    /// Approximate memory held, in bytes: what batches are bounded by.
    @_spi(Machinery) public var byteSize: Int {
        bytes.count + cells.count * MemoryLayout<Cell>.stride + ordinals.count * 8
    }

    /// Starts a new row of absent cells for record `ordinal`. O(columns).
    @_spi(Machinery) public mutating func beginRow(ordinal: Int) {
        // One append per cell: appending a `repeatElement` sequence went
        // through the generic sequence path, 340 instructions a row (and a
        // buffer of absent cells appended at once cost 20% more than this).
        for _ in 0..<rowStride { cells.append(.absent) }
        ordinals.append(ordinal)
    }

    /// Makes the row being built a deletion of its key.
    @_spi(Machinery) public mutating func markDeletion() { deletions.insert(rowCount - 1) }

    /// Whether row `row` deletes its key. O(1).
    @inlinable @_spi(Machinery) public func isDeletion(_ row: Int) -> Bool {
        !deletions.isEmpty && deletions.contains(row)
    }

    /// Sets `column` of the row being built.
    @_spi(Machinery) public mutating func set(_ column: Int, _ cell: Cell) {
        cells[cells.count - rowStride + column] = cell
    }

    /// Sets `column` of the complete row `row`.
    @_spi(Machinery) public mutating func set(row: Int, _ column: Int, _ cell: Cell) {
        cells[row * rowStride + column] = cell
    }

    /// Copies `text` into the arena and returns its cell. O(text).
    @_spi(Machinery) public mutating func text(_ text: some Collection<UInt8>) -> Cell {
        let offset = Int32(bytes.count)
        bytes.append(contentsOf: text)
        return .text(offset: offset, length: Int32(bytes.count) - offset)
    }

    /// Copies the bytes in `span` into the arena and returns a `.blob` cell. O(bytes).
    @_spi(Machinery) public mutating func blob(_ span: UnsafeRawBufferPointer) -> Cell {
        let offset = Int32(bytes.count)
        bytes.append(contentsOf: span)
        return .blob(offset: offset, length: Int32(span.count))
    }

    /// Copies `bytes` into the arena and returns a `.blob` cell. O(bytes).
    @_spi(Machinery) public mutating func blob(_ data: some Collection<UInt8>) -> Cell {
        let offset = Int32(bytes.count)
        bytes.append(contentsOf: data)
        return .blob(offset: offset, length: Int32(bytes.count) - offset)
    }

    /// `cell` of `other` as a cell of this arena, copying its bytes. O(bytes).
    @_spi(Machinery) public mutating func copy(_ cell: Cell, from other: RowArena) -> Cell {
        switch cell {
        case .text(let offset, let length), .blob(let offset, let length):
            let start = Int32(bytes.count)
            other.bytes.withUnsafeBufferPointer { bytes.append(contentsOf: $0[Int(offset)..<Int(offset + length)]) }
            if case .text = cell { return .text(offset: start, length: length) }
            return .blob(offset: start, length: length)
        case .spilledText(let descriptor, let length), .spilledBlob(let descriptor, let length):
            if spill == nil { spill = other.spill }
            let start = Int32(bytes.count)
            other.bytes.withUnsafeBufferPointer { bytes.append(contentsOf: $0[Int(descriptor)..<Int(descriptor) + 8]) }
            if case .spilledText = cell { return .spilledText(descriptor: start, length: length) }
            return .spilledBlob(descriptor: start, length: length)
        default: return cell
        }
    }

    /// Copies the text in `span` into the arena and returns its cell. O(text).
    @_spi(Machinery) public mutating func text(_ span: UnsafeRawBufferPointer) -> Cell {
        let offset = Int32(bytes.count)
        bytes.append(contentsOf: span)
        return .text(offset: offset, length: Int32(span.count))
    }

    /// Appends row `row` of `other` (whose columns may be fewer: the rest
    /// are absent) as record `ordinal`, copying its text (a spilled value's
    /// place, not its bytes). O(columns + bytes),
    /// no allocation once the buffers have grown.
    @_spi(Machinery) public mutating func append(row: Int, of other: RowArena, ordinal: Int) {
        other.bytes.withUnsafeBufferPointer { source in
            for column in 0..<other.columnCount {
                switch other[row, column] {
                case .text(let offset, let length):
                    cells.append(.text(offset: Int32(bytes.count), length: length))
                    bytes.append(contentsOf: source[Int(offset)..<Int(offset + length)])
                case .blob(let offset, let length):
                    cells.append(.blob(offset: Int32(bytes.count), length: length))
                    bytes.append(contentsOf: source[Int(offset)..<Int(offset + length)])
                case .spilledText(let descriptor, let length):
                    cells.append(.spilledText(descriptor: Int32(bytes.count), length: length))
                    bytes.append(contentsOf: source[Int(descriptor)..<Int(descriptor) + 8])
                    if spill == nil { spill = other.spill }
                case .spilledBlob(let descriptor, let length):
                    cells.append(.spilledBlob(descriptor: Int32(bytes.count), length: length))
                    bytes.append(contentsOf: source[Int(descriptor)..<Int(descriptor) + 8])
                    if spill == nil { spill = other.spill }
                case let cell: cells.append(cell)
                }
            }
        }
        if rowStride > other.columnCount {
            cells.append(contentsOf: repeatElement(.absent, count: rowStride - other.columnCount))
        }
        ordinals.append(ordinal)
        if other.isDeletion(row) { deletions.insert(rowCount - 1) }
    }

    /// Drops the row being built (its text bytes stay until ``removeAll()``).
    @_spi(Machinery) public mutating func abandonRow() {
        cells.removeLast(rowStride)
        ordinals.removeLast()
        deletions.remove(rowCount)
    }

    /// Adds columns, absent in every existing row. O(cells) when the row
    /// stride doubles to make room, O(1) otherwise.
    @_spi(Machinery) public mutating func widen(to newCount: Int) {
        guard newCount > columnCount else { return }
        defer { columnCount = newCount }
        // Cells past `columnCount` in each slot are absent already.
        guard newCount > rowStride else { return }
        let stride = max(newCount, rowStride * 2)
        var wider: [Cell] = []
        wider.reserveCapacity(rowCount * stride)
        for row in 0..<rowCount {
            wider.append(contentsOf: cells[(row * rowStride)..<((row + 1) * rowStride)])
            wider.append(contentsOf: repeatElement(.absent, count: stride - rowStride))
        }
        cells = wider
        rowStride = stride
    }

    /// The cell at `row`, `column`.
    @inlinable @_spi(Machinery) public subscript(row: Int, column: Int) -> Cell {
        cells[row * rowStride + column]
    }

    /// A spilled cell for the `length` bytes at `fileOffset` in `spill`,
    /// text or a blob; the arena keeps `spill` for its readers. O(1).
    @_spi(Machinery) public mutating func spilled(text: Bool, at fileOffset: Int64, length: Int, in spill: ValueSpill)
        -> Cell
    {
        self.spill = spill
        let descriptor = Int32(bytes.count)
        withUnsafeBytes(of: fileOffset.littleEndian) { bytes.append(contentsOf: $0) }
        return text
            ? .spilledText(descriptor: descriptor, length: Int32(length))
            : .spilledBlob(descriptor: descriptor, length: Int32(length))
    }

    /// Where the value of the spilled cell whose descriptor is at
    /// `descriptor` starts in ``spill``. O(1).
    @_spi(Machinery) public func spilledOffset(_ descriptor: Int32) -> Int64 {
        var raw: Int64 = 0
        withUnsafeMutableBytes(of: &raw) { target in
            bytes.withUnsafeBytes {
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(descriptor)..<Int(descriptor) + 8]))
            }
        }
        return Int64(littleEndian: raw)
    }

    /// The value of a spilled cell read back whole from ``spill``; nil for
    /// another cell or when it cannot be read. O(value): for the few readers
    /// that need the bytes at once (stores bind from ``ValueSpill`` instead).
    @_spi(Machinery) public func spilledBytes(_ cell: Cell) -> [UInt8]? {
        let descriptor: Int32
        let length: Int32
        switch cell {
        case .spilledText(let start, let count), .spilledBlob(let start, let count):
            (descriptor, length) = (start, count)
        default: return nil
        }
        guard let spill else { return nil }
        var failure: String?
        let value = [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            failure = spill.read(from: spilledOffset(descriptor), into: UnsafeMutableRawBufferPointer(buffer))
            count = failure == nil ? Int(length) : 0
        }
        return failure == nil ? value : nil
    }

    /// Takes `spill` as the side file of the spilled cells a reader decodes
    /// into this arena (the sort's merge). O(1).
    @_spi(Machinery) public mutating func adopt(_ spill: ValueSpill?) {
        if self.spill == nil { self.spill = spill }
    }

    /// The bytes of a `.text` or `.blob` cell, valid inside `body` only
    /// (empty for any other cell; a spilled value is read from ``spill``).
    @_spi(Machinery) public func withText<R>(_ cell: Cell, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows
        -> R
    {
        let offset: Int32
        let length: Int32
        switch cell {
        case .text(let start, let count), .blob(let start, let count): (offset, length) = (start, count)
        default: return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
        return try bytes.withUnsafeBufferPointer {
            try body(UnsafeBufferPointer(rebasing: $0[Int(offset)..<Int(offset + length)]))
        }
    }

    /// Empties the arena, keeping its capacity for the next batch.
    @_spi(Machinery) public mutating func removeAll() {
        cells.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        ordinals.removeAll(keepingCapacity: true)
        deletions.removeAll()
    }
}
