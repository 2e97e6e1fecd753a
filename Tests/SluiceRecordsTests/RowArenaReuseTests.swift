import Testing

@testable @_spi(Machinery) import SluiceRecords

/// A ``RowArena`` keeps its buffers' length when emptied and writes rows
/// through pointers into room it made (``RowArena/appendRow(ordinal:byteCapacity:_:)``):
/// a row written after ``RowArena/removeAll()`` sees none of the rows before
/// it, and a writer never writes past its room.
@Suite struct RowArenaReuseTests {
    /// An arena of 4 columns holding 600 rows of every column set (more
    /// than a buffer's least growth), then emptied.
    func emptied() -> RowArena {
        var arena = RowArena(columnCount: 4)
        for row in 0..<600 {
            arena.beginRow(ordinal: row)
            for column in 0..<4 { arena.set(column, arena.text(Array("row \(row) column \(column)".utf8))) }
        }
        arena.removeAll()
        return arena
    }

    @Test func rowsAfterRemoveAllSeeNoneOfTheRowsBefore() {
        let fresh = RowArena(columnCount: 4)
        var narrow = RowArena(columnCount: 2)
        narrow.beginRow(ordinal: 9)
        narrow.set(1, narrow.text(Array("kept".utf8)))
        var reused = emptied()
        #expect(reused.rowCount == 0 && reused.byteCount == 0 && reused.byteSize == fresh.byteSize)

        reused.beginRow(ordinal: 1)
        reused.set(2, .integer(7))
        reused.append(row: 0, of: narrow, ordinal: 2)
        let decoded = reused.appendRow(ordinal: 3, byteCapacity: 5) { row in
            guard let cell = row.copy(UnsafeRawBufferPointer(start: nil, count: 0), text: false) else { return false }
            row.set(3, cell)
            return true
        }

        #expect(decoded && reused.rowCount == 3 && reused.ordinals == [1, 2, 3])
        #expect(reused[0, 0] == .absent && reused[0, 1] == .absent && reused[0, 3] == .absent)
        #expect(reused[0, 2] == .integer(7))
        #expect(reused[1, 0] == .absent && reused[1, 2] == .absent && reused[1, 3] == .absent)
        #expect(reused.withText(reused[1, 1]) { Array($0) } == Array("kept".utf8))
        #expect((0..<3).allSatisfy { reused[2, $0] == .absent } && reused[2, 3] == .blob(offset: 4, length: 0))
        // The writer's room that its row did not use is not the rows'.
        #expect(reused.byteCount == 4)
    }

    @Test func aWriterRefusesBytesBeyondItsRoom() {
        var arena = emptied()
        let text = Array("twelve bytes".utf8)
        var refused: [Bool] = []
        let written = arena.appendRow(ordinal: 5, byteCapacity: 20) { row in
            text.withUnsafeBytes { span in
                refused.append(row.copy(span, text: true) == nil)
                refused.append(row.copy(span, text: true) == nil)
                refused.append(row.spilled(text: true, at: 1, length: 300) == nil)
                refused.append(row.spilled(text: true, at: 1, length: 300) == nil)
            }
            return true
        }
        // 12 bytes fit, 12 more do not; an 8-byte place fits, another not.
        #expect(written && refused == [false, true, false, true] && arena.byteCount == 20)
    }
}
