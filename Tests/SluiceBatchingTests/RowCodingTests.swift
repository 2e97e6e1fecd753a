import Foundation
@_spi(Machinery) import SluiceRecords
import Testing

@testable import SluiceBatching

/// The byte form of rows and cells (``RowCoding``), byte for byte: run files
/// and the unit keys a store keeps (``UnitKeys``) hold it, so a change of an
/// encoder must not change a byte of it.
@Suite struct RowCodingTests {
    /// A row of every kind of cell, a spilled one among them, after a row
    /// of other text (so that the cells' offsets are not zero).
    func rows() -> RowArena {
        var rows = RowArena(columnCount: 10)
        rows.beginRow(ordinal: 1)
        rows.set(0, rows.text(Array("skipped".utf8)))
        rows.beginRow(ordinal: 300)
        rows.markDeletion()
        rows.set(0, .integer(-2))
        rows.set(1, .integer(200))
        rows.set(2, .null)
        rows.set(3, .real(1.5))
        rows.set(4, rows.text(Array("hé".utf8)))
        rows.set(5, rows.blob([0, 255]))
        rows.set(6, rows.text([]))
        rows.set(
            7, rows.spilled(text: true, at: 0x0102, length: 300, in: ValueSpill(directory: NSTemporaryDirectory())))
        rows.set(9, rows.text([UInt8](repeating: 0x61, count: 130)))
        return rows
    }

    /// The cells of row 1 of ``rows()`` as ``RowCoding`` encodes them.
    let cells: [UInt8] = {
        let integers: [UInt8] = [2, 3, 2, 0x90, 0x03]
        let real: [UInt8] = [3, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F]
        let texts: [UInt8] = [4, 3, 0x68, 0xC3, 0xA9, 5, 2, 0, 255, 4, 0]
        let spilled: [UInt8] = [6, 0xAC, 0x02, 0x02, 0x01, 0, 0, 0, 0, 0, 0]
        let long: [UInt8] = [4, 0x82, 0x01] + [UInt8](repeating: 0x61, count: 130)
        return integers + [1] + real + texts + spilled + [0] + long
    }()

    @Test func aRowIsEncodedByteForByte() {
        let rows = rows()
        var out: [UInt8] = [9]
        RowCoding.append(row: 1, of: rows, ordinal: 300, to: &out)
        // length, ordinal 300, 10 cells and a deletion, the cells.
        let body: [UInt8] = [0xAC, 0x02, 21] + cells
        #expect(out == [9, UInt8(body.count - 128) | 0x80, 1] + body)
    }

    @Test func eachCellIsEncodedByteForByte() {
        let rows = rows()
        var out: [UInt8] = []
        rows.bytes.withUnsafeBufferPointer { text in
            for column in 0..<10 { RowCoding.appendCell(rows[1, column], text, to: &out) }
        }
        #expect(out == cells)
    }

    @Test func anEncodedRowDecodesToItsCells() {
        let rows = rows()
        var out: [UInt8] = []
        RowCoding.append(row: 1, of: rows, ordinal: 300, to: &out)
        var decoded = RowArena(columnCount: 10)
        decoded.adopt(rows.spill)
        let body = out.withUnsafeBytes { raw in
            var position = 0
            _ = RowCoding.readVarint(raw, &position)
            return Array(raw[position...])
        }
        #expect(body.withUnsafeBytes { RowCoding.decode($0, into: &decoded) })
        #expect(decoded.isDeletion(0) && decoded.ordinals == [300])
        for column in 0..<10 {
            var one: [UInt8] = []
            var other: [UInt8] = []
            rows.bytes.withUnsafeBufferPointer { RowCoding.appendCell(rows[1, column], $0, to: &one) }
            decoded.bytes.withUnsafeBufferPointer { RowCoding.appendCell(decoded[0, column], $0, to: &other) }
            #expect(one == other)
        }
    }
}
