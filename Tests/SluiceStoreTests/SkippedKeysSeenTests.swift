@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching
@testable import SluiceStore

/// ``ImportStore/markSeen(_:of:)``: the keys of units a run skipped count as
/// seen, in both stores, so that the sweep keeps their rows. The keys come
/// as rows of the key columns alone (``SkippedKeys`` holds no more), here of
/// a table whose key is its last column.
@Suite struct SkippedKeysSeenTests {
    /// A text column, then the integer key.
    let keyedLast = TableSchema(
        name: "T", columns: [ColumnSchema(name: "name", type: .string), ColumnSchema(name: "id", type: .integer)],
        keyColumns: [1])

    /// A group writing `ids` to ``keyedLast``.
    func rows(_ ids: ClosedRange<Int>, _ schema: TableSchema) -> BatchGroup {
        var arena = RowArena(columnCount: 2)
        for id in ids {
            arena.beginRow(ordinal: id)
            arena.set(0, arena.text(Array("r\(id)".utf8)))
            arena.set(1, .integer(Int64(id)))
        }
        return BatchGroup(
            batches: [Batch(entity: 0, schema: schema, rows: arena)],
            checkpoint: Checkpoint(input: "t", records: ids.count, bytes: 0), rawBytes: 0, records: ids.count)
    }

    /// Rows 1…20 stored; a run writes 11…15 and marks the even keys up to
    /// 10 seen (its skipped units' keys): the sweep deletes the other ten.
    func sweepKeepsTheKeysMarkedSeen(_ store: any ImportStore) throws -> Int {
        var swept = keyedLast
        swept.deleteMissing = true
        try store.prepare([swept], links: [])
        let run = try store.beginRun(inputs: ["t"], options: "{}", resumeCommand: nil)
        _ = try store.apply(rows(1...20, swept))
        try store.startTrackingSeenKeys([swept], resuming: false)
        _ = try store.apply(rows(11...15, swept))
        var keys = RowArena(columnCount: swept.keyColumns.count)
        for key in stride(from: 2, through: 10, by: 2) {
            var encoded: [UInt8] = []
            RowCoding.appendCell(.integer(Int64(key)), UnsafeBufferPointer(start: nil, count: 0), to: &encoded)
            #expect(UnitKeys.appendKeyRow(encoded, columns: [0], to: &keys))
        }
        try store.markSeen(keys, of: swept)
        #expect(try store.missingRows(swept) == MissingRows(missing: 10, stored: 20))
        let deleted = try store.deleteMissing(swept, links: [])
        try store.stopTrackingSeenKeys(run: run)
        return deleted
    }

    @Test func sqlite() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("seen.sqlite").path
        #expect(try sweepKeepsTheKeysMarkedSeen(try SQLiteStore(path: path)) == 10)
        let kept = StoreReader(path).rows("SELECT id FROM T ORDER BY id").map { $0[0] ?? "" }
        #expect(kept == ["2", "4", "6", "8", "10", "11", "12", "13", "14", "15"])
    }

    @Test(.enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started"))
    func postgres() throws {
        let database = try PostgresTestServer.require().newDatabase()
        #expect(try sweepKeepsTheKeysMarkedSeen(try PostgresStore(conninfo: database)) == 10)
        let kept = try PostgresConnection(database).strings("SELECT id FROM \"T\" ORDER BY id", "reading")
        #expect(kept == ["2", "4", "6", "8", "10", "11", "12", "13", "14", "15"])
    }
}
