// Cell and RowArena are the hottest types that cross modules (the batcher,
// the sorter and the store read every cell). They are `@_spi(Machinery)
// public` rather than `package`: Swift's default cross-module optimisation
// inlines public code only, and with `package` the 20,000-event import ran
// 2,894 M instructions against 2,769 M (callgrind, +4.5%); a user's code
// still does not see them without `@_spi(Machinery) import SluiceRecords`.
/// Rows of one table, stored flat: `columnCount` cells per row (in a slot of
/// `rowStride` cells, which a widening arena grows by doubling), text bytes
/// in one shared buffer. Appending a row allocates only when the buffers
/// grow. The two buffers keep their length when the arena is emptied and
/// grow ahead of the rows (``reserve(cells:bytes:)``), so that a row is
/// written through pointers after one check of room
/// (``append(row:of:ordinal:)``, ``appendRow(ordinal:byteCapacity:_:)``):
/// `Array`'s appends, one a cell and one a text, checked the buffer's
/// uniqueness and capacity at each (docs/performance.md, "Rows through
/// pointers").
@_spi(Machinery) public struct RowArena: Sendable {
    /// The cells, row after row: the first ``rowCount`` × `rowStride` are
    /// the rows', the rest absent cells or those of rows emptied, room for
    /// rows to come.
    @usableFromInline internal var cellBuffer: [Cell] = []
    /// The bytes the `.text` cells point into: the first `usedBytes` are
    /// the rows', the rest room for rows to come.
    @usableFromInline internal var byteBuffer: [UInt8] = []
    /// The rows' cells: the first `cellCount` of `cellBuffer`.
    @usableFromInline internal var cellCount = 0
    /// The rows' bytes: the first `usedBytes` of `byteBuffer`.
    @usableFromInline internal var usedBytes = 0
    /// Each row's record ordinal, in row order.
    @usableFromInline internal var rowOrdinals: [Int] = []
    /// Cells per row.
    @_spi(Machinery) public private(set) var columnCount: Int
    /// Cells between the starts of two rows: `columnCount`, or more once
    /// ``widen(to:)`` has doubled it (a zero-config table meeting one new
    /// member per record copied every row per member: 1,600 members took
    /// 4.9 s, cubic in the members).
    @usableFromInline internal private(set) var rowStride: Int
    /// The rows that delete their key instead of writing it (a change
    /// file's deletions): only their key cells count. Empty in most runs.
    @usableFromInline internal var deletedRows: Set<Int> = []
    /// The side file the spilled cells' values are in; nil until the arena
    /// holds one (set by ``spilled(text:at:length:in:)``, carried by the
    /// copies of rows and cells).
    @_spi(Machinery) public internal(set) var spill: ValueSpill?

    /// An empty arena of `columnCount` columns.
    @_spi(Machinery) public init(columnCount: Int) {
        self.columnCount = columnCount
        rowStride = columnCount
    }

    /// The cells, row after row (`rowStride` a row), then room for rows to
    /// come: read a cell through the subscript.
    @inlinable @_spi(Machinery) public var cells: [Cell] { cellBuffer }
    /// The bytes the `.text` cells point into (the first ``byteCount``),
    /// then room for rows to come.
    @inlinable @_spi(Machinery) public var bytes: [UInt8] { byteBuffer }
    /// How many of ``bytes`` the rows hold.
    @inlinable @_spi(Machinery) public var byteCount: Int { usedBytes }
    /// Each row's record ordinal in its input (for last-wins and messages).
    @inlinable @_spi(Machinery) public var ordinals: [Int] { rowOrdinals }
    /// The rows that delete their key instead of writing it (a change
    /// file's deletions): only their key cells count. Empty in most runs.
    @inlinable @_spi(Machinery) public var deletions: Set<Int> { deletedRows }

    /// The number of complete rows.
    @inlinable @_spi(Machinery) public var rowCount: Int { rowOrdinals.count }

    /// Approximate memory held, in bytes: what batches are bounded by (the
    /// rows', not the room kept for more).
    @inlinable @_spi(Machinery) public var byteSize: Int {
        usedBytes + cellCount * MemoryLayout<Cell>.stride + rowOrdinals.count * 8
    }

    /// The least a buffer grows by, in elements (a page's worth of bytes,
    /// 4 KiB of cells; not measured against other values); it grows by an
    /// eighth of its length at least, so that a buffer filled row by row
    /// grows O(log n) times, and no more than an eighth of it is filler the
    /// rows may never use: the filler is written, so it is resident, unlike
    /// the capacity `Array` doubles to, and the sorter's arenas are most of
    /// the store side's peak (200,000 events, one thread: 45.9 MiB against
    /// 44.6 with `Array`'s appends).
    private static let minimumGrowth = 256
    /// Absent cells, copied in to lengthen `cellBuffer`: appending a
    /// `repeatElement` went through the generic sequence path, 51 M
    /// instructions of a 20,000-event first import for its 3,800 growths.
    private static let absentCells = [Cell](repeating: .absent, count: 1024)
    /// Zero bytes, copied in to lengthen `byteBuffer`.
    private static let zeroBytes = [UInt8](repeating: 0, count: 4096)

    /// Makes room for `cells` more cells and `bytes` more bytes after the
    /// rows. O(1) when there is room (inlined: a call a row cost 13 M
    /// instructions of a 20,000-event first import), O(buffer) when a
    /// buffer grows.
    @inlinable mutating func reserve(cells newCells: Int, bytes newBytes: Int) {
        if cellCount + newCells > cellBuffer.count || usedBytes + newBytes > byteBuffer.count {
            grow(cells: newCells, bytes: newBytes)
        }
    }

    /// Lengthens the buffers that lack room for `cells` more cells and
    /// `bytes` more bytes. O(buffer).
    @usableFromInline mutating func grow(cells newCells: Int, bytes newBytes: Int) {
        if cellCount + newCells > cellBuffer.count {
            Self.lengthen(&cellBuffer, by: cellCount + newCells - cellBuffer.count, from: Self.absentCells)
        }
        if usedBytes + newBytes > byteBuffer.count {
            Self.lengthen(&byteBuffer, by: usedBytes + newBytes - byteBuffer.count, from: Self.zeroBytes)
        }
    }

    /// Lengthens `buffer` by `count` elements at least (by the growth
    /// above), copies of `filler`'s. O(growth).
    private static func lengthen<Element>(_ buffer: inout [Element], by count: Int, from filler: [Element]) {
        var left = max(count, buffer.count / 8, minimumGrowth)
        filler.withUnsafeBufferPointer { filler in
            while left > 0 {
                let piece = min(left, filler.count)
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: filler[0..<piece]))
                left -= piece
            }
        }
    }

    /// Starts a new row of absent cells for record `ordinal`. O(columns).
    @_spi(Machinery) public mutating func beginRow(ordinal: Int) {
        reserve(cells: rowStride, bytes: 0)
        let start = cellCount
        cellBuffer.withUnsafeMutableBufferPointer {
            UnsafeMutableBufferPointer(rebasing: $0[start..<start + rowStride]).update(repeating: .absent)
        }
        cellCount += rowStride
        rowOrdinals.append(ordinal)
    }

    /// Makes the row being built a deletion of its key.
    @_spi(Machinery) public mutating func markDeletion() { deletedRows.insert(rowCount - 1) }

    /// Whether row `row` deletes its key. O(1).
    @inlinable @_spi(Machinery) public func isDeletion(_ row: Int) -> Bool {
        !deletedRows.isEmpty && deletedRows.contains(row)
    }

    /// Sets `column` of the row being built.
    @_spi(Machinery) public mutating func set(_ column: Int, _ cell: Cell) {
        cellBuffer[cellCount - rowStride + column] = cell
    }

    /// Sets `column` of the complete row `row`.
    @_spi(Machinery) public mutating func set(row: Int, _ column: Int, _ cell: Cell) {
        cellBuffer[row * rowStride + column] = cell
    }

    /// Copies `count` bytes from `source` after the rows' bytes, making
    /// room, and returns where they start. O(count).
    mutating func store(_ source: UnsafeRawPointer?, count: Int) -> Int32 {
        reserve(cells: 0, bytes: count)
        let start = usedBytes
        if let source, count > 0 {
            byteBuffer.withUnsafeMutableBytes { ($0.baseAddress! + start).copyMemory(from: source, byteCount: count) }
        }
        usedBytes += count
        return Int32(start)
    }

    /// Copies `text` after the rows' bytes, making room, and returns where
    /// it starts. O(text).
    private mutating func store(_ text: some Collection<UInt8>) -> Int32 {
        let count = text.count
        reserve(cells: 0, bytes: count)
        let start = usedBytes
        byteBuffer.withUnsafeMutableBufferPointer {
            _ = UnsafeMutableBufferPointer(rebasing: $0[start..<start + count]).update(from: text)
        }
        usedBytes += count
        return Int32(start)
    }

    /// Copies `text` into the arena and returns its cell. O(text).
    @_spi(Machinery) public mutating func text(_ text: some Collection<UInt8>) -> Cell {
        let offset = store(text)
        return .text(offset: offset, length: Int32(usedBytes) - offset)
    }

    /// Copies the text in `span` into the arena and returns its cell. O(text).
    @_spi(Machinery) public mutating func text(_ span: UnsafeRawBufferPointer) -> Cell {
        .text(offset: store(span.baseAddress, count: span.count), length: Int32(span.count))
    }

    /// Copies the bytes in `span` into the arena and returns a `.blob` cell. O(bytes).
    @_spi(Machinery) public mutating func blob(_ span: UnsafeRawBufferPointer) -> Cell {
        .blob(offset: store(span.baseAddress, count: span.count), length: Int32(span.count))
    }

    /// Copies `bytes` into the arena and returns a `.blob` cell. O(bytes).
    @_spi(Machinery) public mutating func blob(_ data: some Collection<UInt8>) -> Cell {
        let offset = store(data)
        return .blob(offset: offset, length: Int32(usedBytes) - offset)
    }

    /// Drops the row being built (its text bytes stay until ``removeAll()``).
    @_spi(Machinery) public mutating func abandonRow() {
        cellCount -= rowStride
        rowOrdinals.removeLast()
        deletedRows.remove(rowCount)
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
            wider.append(contentsOf: cellBuffer[(row * rowStride)..<((row + 1) * rowStride)])
            wider.append(contentsOf: repeatElement(.absent, count: stride - rowStride))
        }
        cellBuffer = wider
        cellCount = wider.count
        rowStride = stride
    }

    /// The cell at `row`, `column`.
    @inlinable @_spi(Machinery) public subscript(row: Int, column: Int) -> Cell {
        cellBuffer[row * rowStride + column]
    }

    /// A spilled cell for the `length` bytes at `fileOffset` in `spill`,
    /// text or a blob; the arena keeps `spill` for its readers. O(1).
    @_spi(Machinery) public mutating func spilled(text: Bool, at fileOffset: Int64, length: Int, in spill: ValueSpill)
        -> Cell
    {
        self.spill = spill
        let descriptor = withUnsafeBytes(of: fileOffset.littleEndian) { store($0.baseAddress, count: 8) }
        return text
            ? .spilledText(descriptor: descriptor, length: Int32(length))
            : .spilledBlob(descriptor: descriptor, length: Int32(length))
    }

    /// Where the value of the spilled cell whose descriptor is at
    /// `descriptor` starts in ``spill``. O(1).
    @_spi(Machinery) public func spilledOffset(_ descriptor: Int32) -> Int64 {
        var raw: Int64 = 0
        withUnsafeMutableBytes(of: &raw) { target in
            byteBuffer.withUnsafeBytes {
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
        return try byteBuffer.withUnsafeBufferPointer {
            try body(UnsafeBufferPointer(rebasing: $0[Int(offset)..<Int(offset + length)]))
        }
    }

    /// Empties the arena and makes it `columnCount` columns wide, keeping
    /// its buffers for the rows of another table (``beginRow(ordinal:)``
    /// writes every cell of a row's slot). O(1).
    @_spi(Machinery) public mutating func reuse(columnCount newCount: Int) {
        removeAll()
        columnCount = newCount
        rowStride = newCount
        spill = nil
    }

    /// Empties the arena, keeping its buffers for the next batch. O(1)
    /// (each `Array.removeAll(keepingCapacity:)` cost about 100
    /// instructions, and the merge's reader empties its arena at every row).
    @_spi(Machinery) public mutating func removeAll() {
        cellCount = 0
        usedBytes = 0
        rowOrdinals.removeAll(keepingCapacity: true)
        if !deletedRows.isEmpty { deletedRows.removeAll() }
    }
}
