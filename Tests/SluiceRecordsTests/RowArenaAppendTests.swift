import Foundation
import Testing

@testable @_spi(Machinery) import SluiceRecords

/// ``RowArena/append(row:of:ordinal:)``: a row copied from another arena
/// keeps every cell, its bytes copied after the arena's own.
@Suite struct RowArenaAppendTests {
    @Test func aRowCopiedKeepsEveryCellAndItsBytes() {
        let spill = ValueSpill(directory: NSTemporaryDirectory())
        var source = RowArena(columnCount: 7)
        source.beginRow(ordinal: 1)
        source.set(0, source.text(Array("first row".utf8)))
        source.beginRow(ordinal: 2)
        source.markDeletion()
        source.set(5, source.text(Array("written first".utf8)))
        source.set(0, .integer(7))
        source.set(1, source.blob([1, 2, 3]))
        source.set(2, source.spilled(text: false, at: 1 << 33, length: 99, in: spill))
        source.set(3, .real(-2.5))
        source.set(4, source.text([]))
        source.set(6, .null)
        var target = RowArena(columnCount: 9)
        target.beginRow(ordinal: 5)
        target.set(8, target.text(Array("own".utf8)))
        target.append(row: 1, of: source, ordinal: 42)
        target.append(row: 0, of: source, ordinal: 43)

        #expect(target.rowCount == 3 && target.ordinals == [5, 42, 43])
        #expect(target.isDeletion(1) && !target.isDeletion(2))
        #expect(target.spill === spill)
        #expect(target.withText(target[0, 8]) { Array($0) } == Array("own".utf8))
        #expect(target[1, 0] == .integer(7) && target[1, 3] == .real(-2.5) && target[1, 6] == .null)
        #expect(target[1, 7] == .absent && target[1, 8] == .absent)
        #expect(target.withText(target[1, 1]) { Array($0) } == [1, 2, 3])
        #expect(target.withText(target[1, 4]) { Array($0) }.isEmpty)
        #expect(target.withText(target[1, 5]) { Array($0) } == Array("written first".utf8))
        guard case .blob = target[1, 1], case .spilledBlob(_, let length) = target[1, 2] else {
            Issue.record("a cell changed its kind")
            return
        }
        #expect(length == 99 && target.spilledOffset(descriptorOf: target[1, 2]) == 1 << 33)
        #expect(target.withText(target[2, 0]) { Array($0) } == Array("first row".utf8))
        #expect((1..<9).allSatisfy { target[2, $0] == .absent })
        // The bytes copied follow the arena's own, a cell's after the one before.
        #expect(target.byteCount == 3 + 13 + 3 + 8 + 9)
    }
}

extension RowArena {
    fileprivate func spilledOffset(descriptorOf cell: Cell) -> Int64? {
        guard case .spilledBlob(let descriptor, _) = cell else { return nil }
        return spilledOffset(descriptor)
    }
}
