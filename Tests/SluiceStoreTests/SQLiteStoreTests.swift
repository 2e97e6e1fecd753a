import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

@Suite struct SQLiteStoreTests {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path

    @Test func insertsUpdatesAndLeavesUnchangedRowsAlone() throws {
        let store = try SQLiteStore(path: path)
        try store.prepare([schema])
        let first = try store.apply(group([(3, "c", 1), (1, "a", nil), (2, "b", 2)]))
        #expect(first[0] == counts(inserted: 3))
        let second = try store.apply(group([(1, "a", nil), (2, "B", 2), (4, "d", 4), (3, "c", 1)]))
        #expect(second[0] == counts(inserted: 1, updated: 1, unchanged: 2))
        let reader = StoreReader(path)
        #expect(
            reader.rows("SELECT id, name, n FROM T ORDER BY id") == [
                ["1", "a", "7"], ["2", "B", "2"], ["3", "c", "1"], ["4", "d", "4"],
            ])
        #expect(reader.value("SELECT records FROM _sluice_checkpoints WHERE input = 'in'") == "4")
    }

    @Test func lastOccurrenceOfAKeyWins() throws {
        let store = try SQLiteStore(path: path)
        try store.prepare([schema])
        let applied = try store.apply(group([(1, "first", 1), (2, "x", 2), (1, "last", 9)]))
        #expect(applied[0] == counts(inserted: 2))
        #expect(StoreReader(path).rows("SELECT name, n FROM T WHERE id = 1") == [["last", "9"]])
    }

    @Test func absentFieldsLeaveStoredValuesAndNullClearsThem() throws {
        let store = try SQLiteStore(path: path)
        try store.prepare([schema])
        _ = try store.apply(group([(1, "a", 5)]))
        #expect(try store.apply(group([(1, nil, 5)]))[0] == counts(unchanged: 1))
        var arena = RowArena(columnCount: 3)
        arena.beginRow(ordinal: 1)
        arena.set(0, .integer(1))
        arena.set(2, .null)
        let cleared = BatchGroup(
            batches: [Batch(entity: 0, schema: schema, rows: arena)],
            checkpoint: Checkpoint(input: "in", records: 1, bytes: 0), rawBytes: 0, records: 1)
        #expect(try store.apply(cleared)[0] == counts(updated: 1))
        #expect(StoreReader(path).rows("SELECT name, n FROM T") == [["a", nil]])
    }

    @Test func textKeysAndManyRowsUseFewLookups() throws {
        let textSchema = TableSchema(
            name: "E", columns: [ColumnSchema(name: "id", type: .string), ColumnSchema(name: "v", type: .integer)],
            keyColumns: [0])
        var options = StoreOptions()
        options.lookupKeys = 100
        let store = try SQLiteStore(path: path, options: options)
        try store.prepare([textSchema])
        func textGroup(_ count: Int, value: Int64) -> BatchGroup {
            var arena = RowArena(columnCount: 2)
            for index in (0..<count).reversed() {
                arena.beginRow(ordinal: count - index)
                arena.set(0, arena.text(Array("key-\(index)".utf8)))
                arena.set(1, .integer(index % 10 == 0 ? value : 0))
            }
            return BatchGroup(
                batches: [Batch(entity: 0, schema: textSchema, rows: arena)],
                checkpoint: Checkpoint(input: "in", records: count, bytes: 0), rawBytes: 0, records: count)
        }
        #expect(try store.apply(textGroup(1_000, value: 1))[0] == counts(inserted: 1_000))
        #expect(try store.apply(textGroup(1_000, value: 2))[0] == counts(updated: 100, unchanged: 900))
        #expect(StoreReader(path).count("E") == 1_000)
    }

    @Test func keysAfterTheGreatestStoredOneAreNewAndTheGreatestIsLookedUp() throws {
        let store = try SQLiteStore(path: path)
        try store.prepare([schema])
        #expect(try store.apply(group([(2, "b", 2), (1, "a", 1)]))[0] == counts(inserted: 2))
        #expect(try store.apply(group([(4, "d", 4), (3, "c", 3)]))[0] == counts(inserted: 2))
        #expect(try store.apply(group([(5, "e", 5), (4, "d", 4)]))[0] == counts(inserted: 1, unchanged: 1))
        #expect(try store.apply(group([(6, "f", 6), (1, "A", 1)]))[0] == counts(inserted: 1, updated: 1))
        #expect(
            StoreReader(path).rows("SELECT id, name FROM T ORDER BY id")
                == [["1", "A"], ["2", "b"], ["3", "c"], ["4", "d"], ["5", "e"], ["6", "f"]])
    }

    @Test func compositeTextKeysAfterTheGreatestStoredOneAreNew() throws {
        let pairs = TableSchema(
            name: "P",
            columns: [
                ColumnSchema(name: "a", type: .string), ColumnSchema(name: "b", type: .integer),
                ColumnSchema(name: "v", type: .integer),
            ],
            keyColumns: [0, 1])
        let store = try SQLiteStore(path: path)
        try store.prepare([pairs])
        func pairGroup(_ rows: [(String, Int64, Int64)]) -> BatchGroup {
            var arena = RowArena(columnCount: 3)
            for (ordinal, row) in rows.enumerated() {
                arena.beginRow(ordinal: ordinal + 1)
                arena.set(0, arena.text(Array(row.0.utf8)))
                arena.set(1, .integer(row.1))
                arena.set(2, .integer(row.2))
            }
            return BatchGroup(
                batches: [Batch(entity: 0, schema: pairs, rows: arena)], checkpoint: nil, rawBytes: 0,
                records: rows.count)
        }
        #expect(try store.apply(pairGroup([("b", 1, 0), ("a", 9, 0)]))[0] == counts(inserted: 2))
        // ("b", 2) follows ("b", 1); "ba" follows "b".
        #expect(try store.apply(pairGroup([("ba", 0, 0), ("b", 2, 0)]))[0] == counts(inserted: 2))
        // ("b", 1) precedes the greatest stored key, so the batch is looked up.
        #expect(try store.apply(pairGroup([("c", 0, 0), ("b", 1, 5)]))[0] == counts(inserted: 1, updated: 1))
        #expect(
            StoreReader(path).rows("SELECT a, b, v FROM P ORDER BY a, b")
                == [["a", "9", "0"], ["b", "1", "5"], ["b", "2", "0"], ["ba", "0", "0"], ["c", "0", "0"]])
    }

    @Test func reopenedStoreAddsNewColumns() throws {
        do {
            let store = try SQLiteStore(path: path)
            try store.prepare([schema])
            _ = try store.apply(group([(1, "a", 1)]))
        }
        var wider = schema
        wider.columns.append(ColumnSchema(name: "extra", type: .string))
        let store = try SQLiteStore(path: path)
        try store.prepare([wider])
        #expect(
            StoreReader(path).rows("SELECT name FROM pragma_table_info('T')").compactMap { $0[0] } == [
                "id", "name", "n", "extra",
            ])
    }

    @Test func aNewStoreTakesThePageSizeAndAnExistingOneKeepsItsOwn() throws {
        do {
            var options = StoreOptions()
            options.pageSize = 8_192
            let store = try SQLiteStore(path: path, options: options)
            try store.prepare([schema])
            _ = try store.apply(group([(1, "a", 1)]))
        }
        #expect(StoreReader(path).value("PRAGMA page_size") == "8192")
        var options = StoreOptions()
        options.pageSize = 1_024
        let store = try SQLiteStore(path: path, options: options)
        _ = try store.apply(group([(2, "b", 2)]))
        #expect(StoreReader(path).value("PRAGMA page_size") == "8192")
        #expect(StoreReader(path).count("T") == 2)
        #expect(StoreOptions().pageSize == 4_096)
    }

    @Test func unwritableStoreIsAnError() {
        #expect(throws: StoreError.self) { try SQLiteStore(path: "/nonexistent-dir/x.sqlite") }
    }
}
