import Foundation
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching
@testable import SluiceRecords

/// The key-ordered apply's sorter: runs spilled, compacted and merged.
@Suite struct KeyOrderSorterTests {
    let schema = TableSchema(
        name: "A", columns: [ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "text", type: .string)],
        keyColumns: [0])

    /// A group of one batch of `ids`, each row's text naming its group and position.
    func group(_ ids: [Int64], number: Int, columns: Int = 2) -> BatchGroup {
        var rows = RowArena(columnCount: columns)
        for (index, id) in ids.enumerated() {
            rows.beginRow(ordinal: index + 1)
            rows.set(0, .integer(id))
            rows.set(1, rows.text(Array("g\(number)r\(index)".utf8)))
            if columns > 2 { rows.set(2, .real(Double(id) / 2)) }
        }
        var wide = schema
        if columns > 2 { wide.columns.append(ColumnSchema(name: "half", type: .double)) }
        return BatchGroup(
            batches: [Batch(entity: 0, schema: wide, rows: rows)],
            checkpoint: Checkpoint(input: "in", records: ids.count * number, bytes: 0), rawBytes: 0, records: 0)
    }

    @Test func manySpillsAndCompactionsGiveKeyOrderWithTheLastOccurrence() throws {
        var options = SortOptions()
        options.memoryBytes = 2_000
        options.fanIn = 3
        let sorter = KeyOrderSorter(directory: TestPaths.temporaryDirectory().path, options: options)
        var generator = SplitMix(seed: 7)
        var expected: [Int64: String] = [:]
        for number in 1...60 {
            let ids = (0..<25).map { _ in Int64(generator.next() % 400) - 200 }
            for (index, id) in ids.enumerated() { expected[id] = "g\(number)r\(index)" }
            try sorter.add(group(ids, number: number, columns: number > 30 ? 3 : 2))
        }
        #expect(sorter.spilledRows > 0)
        #expect(sorter.checkpoints == [Checkpoint(input: "in", records: 25 * 60, bytes: 0)])
        let chunks = try #require(try sorter.chunks(of: "A", rows: 7))
        var seen: [(Int64, String, Int)] = []
        var widths: Set<Int> = []
        while let batch = try chunks.next() {
            widths.insert(batch.rows.columnCount)
            #expect(batch.schema.columns.count == 3)
            for row in 0..<batch.rows.rowCount {
                guard case .integer(let id) = batch.rows[row, 0] else {
                    Issue.record("key lost")
                    continue
                }
                let text = batch.rows.withText(batch.rows[row, 1]) { String(decoding: $0, as: UTF8.self) }
                seen.append((id, text, batch.rows.ordinals[row]))
            }
        }
        #expect(widths == [3])
        // Each key's rows, oldest first, all in one batch: the last wins there.
        var last: [Int64: String] = [:]
        for (id, text, _) in seen { last[id] = text }
        #expect(last == expected)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.0 < $1.0 || ($0.0 == $1.0 && $0.2 < $1.2) })
    }

    @Test func batchesBuiltInRecycledArenasMatchFreshOnesAndReuseTheirStorage() throws {
        var options = SortOptions()
        options.memoryBytes = 2_000
        func sorted() throws -> KeyOrderedChunks {
            let sorter = KeyOrderSorter(directory: TestPaths.temporaryDirectory().path, options: options)
            var generator = SplitMix(seed: 11)
            for number in 1...20 {
                try sorter.add(group((0..<25).map { _ in Int64(generator.next() % 300) }, number: number, columns: 3))
            }
            return try #require(try sorter.chunks(of: "A", rows: 7))
        }
        func contents(_ rows: RowArena) -> [String] {
            (0..<rows.rowCount).map { row in
                (0..<rows.columnCount).map { column -> String in
                    switch rows[row, column] {
                    case .text, .blob: return rows.withText(rows[row, column]) { String(decoding: $0, as: UTF8.self) }
                    case let cell: return "\(cell)"
                    }
                }.joined(separator: "|") + "#\(rows.ordinals[row])"
            }
        }
        let fresh = try sorted()
        var expected: [[String]] = []
        while let batch = try fresh.next() { expected.append(contents(batch.rows)) }

        let recycled = try sorted()
        let pool = ArenaPool(capacity: 2)
        // The first arena has the wrong width: it is replaced, not reused.
        pool.give(RowArena(columnCount: 1))
        var got: [[String]] = []
        var storage: Set<UInt> = []
        while let batch = try recycled.next(reusing: pool.take() ?? RowArena(columnCount: 0)) {
            #expect(batch.rows.columnCount == 3)
            got.append(contents(batch.rows))
            storage.insert(batch.rows.cells.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
            pool.give(batch.rows)
        }
        #expect(got == expected)
        #expect(expected.count > 12)
        // Batches filled the arena the previous one left; it is only
        // replaced when a batch outgrows it (a key's rows stay together).
        #expect(storage.count < expected.count / 4)
    }

    @Test func anArenaPoolKeepsAtMostItsCapacity() {
        let pool = ArenaPool(capacity: 2)
        for width in 1...3 { pool.give(RowArena(columnCount: width)) }
        #expect(pool.take()?.columnCount == 2)
        #expect(pool.take()?.columnCount == 1)
        #expect(pool.take() == nil)
    }

    @Test func integerKeysSortAsTheGeneralOrderDoes() {
        var generator = SplitMix(seed: 11)
        var rows = RowArena(columnCount: 1)
        var keys: [Int64] = []
        for ordinal in 1...2_000 {
            let key = Int64(generator.next() % 300) - 150
            keys.append(key)
            rows.beginRow(ordinal: ordinal)
            rows.set(0, .integer(key))
        }
        // Integer keys: ties keep arrival order, and in replace mode one row
        // per key keeps each key's last row.
        func sorted(_ rows: RowArena, onePerKey: Bool) -> [Int] {
            var rows = rows
            return KeyOrderSorter.sortedRows(&rows, keys: [0], onePerKey: onePerKey, combining: false)
        }
        let byKey = keys.indices.sorted { keys[$0] != keys[$1] ? keys[$0] < keys[$1] : $0 < $1 }
        #expect(sorted(rows, onePerKey: false) == byKey)
        let lastOfEach = byKey.indices.filter { $0 == byKey.count - 1 || keys[byKey[$0]] != keys[byKey[$0 + 1]] }.map {
            byKey[$0]
        }
        #expect(sorted(rows, onePerKey: true) == lastOfEach)
        // One real key sends the whole table through the general comparison,
        // which orders numbers by value across both kinds.
        rows.beginRow(ordinal: 2_001)
        rows.set(0, .real(-0.5))
        let mixed = sorted(rows, onePerKey: true)
        let value: (Int) -> Double = { row in
            if case .integer(let key) = rows[row, 0] { return Double(key) }
            return -0.5
        }
        #expect(mixed.count == lastOfEach.count + 1)
        #expect(zip(mixed, mixed.dropFirst()).allSatisfy { value($0) < value($1) })
        #expect(mixed.contains(2_000))
    }

    @Test func keysNeverStraddleTwoBatches() throws {
        var options = SortOptions()
        options.memoryBytes = 500
        let sorter = KeyOrderSorter(directory: TestPaths.temporaryDirectory().path, options: options)
        var link = LinkSchema(
            name: "A_tags", sourceTable: "A", sourceColumns: [ColumnSchema(name: "A_id", type: .integer)],
            sourceKeys: ["id"],
            targetColumn: ColumnSchema(name: "target_key", type: .string), targetTable: "T", targetKey: "name",
            ordered: true, rule: .replace, missing: .dangling)
        link.ordered = true
        for number in 1...20 {
            var rows = RowArena(columnCount: link.columnCount)
            for source in [3, 1, 2] {
                for position in 0..<4 {
                    rows.beginRow(ordinal: source)
                    rows.set(0, .integer(Int64(source)))
                    rows.set(1, rows.text(Array("t\(number)".utf8)))
                    rows.set(2, .integer(Int64(position)))
                }
            }
            try sorter.add(
                BatchGroup(
                    batches: [Batch(entity: 0, schema: schema, rows: rows, link: link)],
                    checkpoint: Checkpoint(input: "in", records: number, bytes: 0), rawBytes: 0, records: 0))
        }
        #expect(sorter.applyOrder == ["A_tags"])
        let chunks = try #require(try sorter.chunks(of: "A_tags", rows: 5))
        var sizes: [Int] = []
        var sources: [Int64] = []
        while let batch = try chunks.next() {
            sizes.append(batch.rows.rowCount)
            #expect(batch.link?.name == "A_tags")
            let keys = (0..<batch.rows.rowCount).map { batch.rows[$0, 0] }
            #expect(keys.allSatisfy { $0 == keys[0] }, "a source's link rows were split or mixed: \(keys)")
            if case .integer(let source) = batch.rows[0, 0] { sources.append(source) }
        }
        // Link rows are never deduplicated: 20 groups × 4 positions per source.
        #expect(sizes == [80, 80, 80])
        #expect(sources == [1, 2, 3])
    }

    @Test func referencedTablesComeFirstAndLinksLast() throws {
        let sorter = KeyOrderSorter(directory: TestPaths.temporaryDirectory().path, options: SortOptions())
        var event = schema
        event.name = "Event"
        event.references = [Reference(column: 1, name: "actor", targetTable: "Actor", targetKey: "id", missing: .stub)]
        var actor = schema
        actor.name = "Actor"
        let link = LinkSchema(
            name: "Event_tags", sourceTable: "Event", sourceColumns: [ColumnSchema(name: "Event_id", type: .integer)],
            sourceKeys: ["id"], targetColumn: ColumnSchema(name: "target_key", type: .string), targetTable: "Tag",
            targetKey: "name", ordered: false, rule: .replace, missing: .stub)
        func rows(_ count: Int) -> RowArena {
            var arena = RowArena(columnCount: count)
            arena.beginRow(ordinal: 1)
            arena.set(0, .integer(1))
            return arena
        }
        try sorter.add(
            BatchGroup(
                batches: [
                    Batch(entity: 1, schema: event, rows: rows(2), link: link),
                    Batch(entity: 1, schema: event, rows: rows(2)),
                    Batch(entity: 0, schema: actor, rows: rows(2)),
                ],
                checkpoint: Checkpoint(input: "in", records: 1, bytes: 0), rawBytes: 0, records: 0))
        #expect(sorter.applyOrder == ["Actor", "Event", "Event_tags"])
    }

    @Test func aMissingRunDirectoryIsAClearError() throws {
        var options = SortOptions()
        options.memoryBytes = 1
        let sorter = KeyOrderSorter(directory: "/nonexistent/sluice-runs", options: options)
        #expect {
            try sorter.add(group([1, 2, 3], number: 1))
        } throws: { error in
            "\(error)".contains("/nonexistent/sluice-runs/sluice-run-")
                && "\(error)".contains("No such file or directory")
        }
    }

    @Test func everyKindOfCellSurvivesARun() throws {
        var options = SortOptions()
        options.memoryBytes = 1
        let sorter = KeyOrderSorter(directory: TestPaths.temporaryDirectory().path, options: options)
        let table = TableSchema(
            name: "K", columns: (0..<7).map { ColumnSchema(name: "c\($0)", type: .string) }, keyColumns: [])
        var rows = RowArena(columnCount: 7)
        let big = [UInt8](repeating: 0xAB, count: 200_000)
        let values: [[Cell]] = [
            [.integer(.min), .integer(.max), .integer(-1), .real(-0.0), .real(.infinity), .null, .absent],
            [.integer(0), .real(1e-300), .absent, .null, .integer(1 << 40), .integer(-(1 << 40)), .real(3.25)],
        ]
        for (index, row) in values.enumerated() {
            rows.beginRow(ordinal: index + 1)
            for (column, cell) in row.enumerated() { rows.set(column, cell) }
        }
        rows.beginRow(ordinal: 3)
        rows.set(0, rows.text(Array("héllo".utf8)))
        rows.set(1, rows.text([]))
        rows.set(2, rows.blob([0, 1, 2, 255]))
        rows.set(3, rows.blob(big))
        try sorter.add(
            BatchGroup(
                batches: [Batch(entity: 0, schema: table, rows: rows)],
                checkpoint: Checkpoint(input: "in", records: 3, bytes: 0), rawBytes: 0, records: 0))
        let chunks = try #require(try sorter.chunks(of: "K", rows: 100))
        let batch = try #require(try chunks.next())
        #expect(try chunks.next() == nil)
        #expect(batch.rows.rowCount == 3)
        for row in 0..<2 {
            #expect((0..<7).map { batch.rows[row, $0] } == values[row])
        }
        let out = batch.rows
        #expect(out.withText(out[2, 0]) { Array($0) } == Array("héllo".utf8))
        #expect(out[2, 1] == .text(offset: out[2, 1].offset, length: 0))
        guard case .blob = out[2, 2], case .blob = out[2, 3] else {
            Issue.record("blobs became text")
            return
        }
        #expect(out.withText(out[2, 2]) { Array($0) } == [0, 1, 2, 255])
        #expect(out.withText(out[2, 3]) { Array($0) } == big)
        #expect(out.ordinals.map { $0 & ((1 << 40) - 1) } == [1, 2, 3])
    }
}

extension Cell {
    /// The offset of a text or blob cell (0 for others).
    var offset: Int32 {
        switch self {
        case .text(let offset, _), .blob(let offset, _): return offset
        default: return 0
        }
    }
}
