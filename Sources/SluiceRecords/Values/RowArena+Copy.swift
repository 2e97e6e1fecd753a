extension RowArena {
    /// Appends row `row` of `other` (whose columns may be fewer: the rest
    /// are absent) as record `ordinal`, copying its text (a spilled value's
    /// place, not its bytes). O(columns + bytes), no allocation once the
    /// buffers have grown: the row's bytes are counted, room is made once,
    /// then every cell and byte is stored through a pointer (a cell and a
    /// text appended to `Array`s at a time, the sorter's copies and the
    /// merge's ran 119 M instructions of a 20,000-event first import).
    @_spi(Machinery) public mutating func append(row: Int, of other: RowArena, ordinal: Int) {
        let first = row * other.rowStride
        let width = other.columnCount
        var needed = 0
        other.cellBuffer.withUnsafeBufferPointer { source in
            for column in first..<first + width { needed += source[column].placedBytes }
        }
        reserve(cells: rowStride, bytes: needed)
        let (start, stride, byteStart) = (cellCount, rowStride, usedBytes)
        var spilled = false
        cellBuffer.withUnsafeMutableBufferPointer { target in
            byteBuffer.withUnsafeMutableBytes { text in
                other.cellBuffer.withUnsafeBufferPointer { source in
                    other.byteBuffer.withUnsafeBytes { sourceText in
                        var at = byteStart
                        for column in 0..<width {
                            let cell = source[first + column]
                            let (from, count): (Int32, Int)
                            switch cell {
                            case .text(let offset, let length):
                                target[start + column] = .text(offset: Int32(at), length: length)
                                (from, count) = (offset, Int(length))
                            case .blob(let offset, let length):
                                target[start + column] = .blob(offset: Int32(at), length: length)
                                (from, count) = (offset, Int(length))
                            case .spilledText(let descriptor, let length):
                                target[start + column] = .spilledText(descriptor: Int32(at), length: length)
                                (from, count) = (descriptor, 8)
                                spilled = true
                            case .spilledBlob(let descriptor, let length):
                                target[start + column] = .spilledBlob(descriptor: Int32(at), length: length)
                                (from, count) = (descriptor, 8)
                                spilled = true
                            default:
                                target[start + column] = cell
                                continue
                            }
                            if count > 0 {
                                (text.baseAddress! + at).copyMemory(
                                    from: sourceText.baseAddress! + Int(from), byteCount: count)
                            }
                            at += count
                        }
                        for column in width..<stride { target[start + column] = .absent }
                    }
                }
            }
        }
        if spilled && spill == nil { spill = other.spill }
        cellCount += stride
        usedBytes += needed
        rowOrdinals.append(ordinal)
        if other.isDeletion(row) { deletedRows.insert(rowCount - 1) }
    }

    /// `cell` of `other` as a cell of this arena, copying its bytes. O(bytes).
    @_spi(Machinery) public mutating func copy(_ cell: Cell, from other: RowArena) -> Cell {
        let from: Int32
        switch cell {
        case .text(let offset, _), .blob(let offset, _): from = offset
        case .spilledText(let descriptor, _), .spilledBlob(let descriptor, _):
            if spill == nil { spill = other.spill }
            from = descriptor
        default: return cell
        }
        let start = other.byteBuffer.withUnsafeBytes {
            store($0.baseAddress.map { $0 + Int(from) }, count: cell.placedBytes)
        }
        return cell.moved(to: start)
    }
}

extension Cell {
    /// The bytes the cell has in its arena: a text's or a blob's, a spilled
    /// value's 8-byte place; none for any other cell.
    var placedBytes: Int {
        switch self {
        case .text(_, let length), .blob(_, let length): return Int(length)
        case .spilledText, .spilledBlob: return 8
        default: return 0
        }
    }

    /// This text, blob or spilled cell with its bytes at `offset` (a
    /// spilled cell's descriptor); any other cell as it is.
    func moved(to offset: Int32) -> Cell {
        switch self {
        case .text(_, let length): return .text(offset: offset, length: length)
        case .blob(_, let length): return .blob(offset: offset, length: length)
        case .spilledText(_, let length): return .spilledText(descriptor: offset, length: length)
        case .spilledBlob(_, let length): return .spilledBlob(descriptor: offset, length: length)
        default: return self
        }
    }
}
