@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching
@testable import SluiceStore

/// ``ImportStore/markSeen(_:of:)``: the keys of units a run skipped count as
/// seen, in both stores, so that the sweep keeps their rows.
@Suite struct SkippedKeysSeenTests {
    /// Rows 1…20 stored; a run writes 11…15 and marks the even keys up to
    /// 10 seen (its skipped units' keys): the sweep deletes the other ten.
    func sweepKeepsTheKeysMarkedSeen(_ store: any ImportStore) throws -> Int {
        var swept = schema
        swept.deleteMissing = true
        try store.prepare([swept], links: [])
        let run = try store.beginRun(inputs: ["t"], options: "{}", resumeCommand: nil)
        _ = try store.apply(group((1...20).map { (Int64($0), "r\($0)", nil) }, schema: swept))
        try store.startTrackingSeenKeys([swept], resuming: false)
        _ = try store.apply(group((11...15).map { (Int64($0), "r\($0)", nil) }, schema: swept))
        var keys = RowArena(columnCount: swept.columns.count)
        for key in stride(from: 2, through: 10, by: 2) {
            var encoded: [UInt8] = []
            RowCoding.appendCell(.integer(Int64(key)), UnsafeBufferPointer(start: nil, count: 0), to: &encoded)
            #expect(UnitKeys.appendKeyRow(encoded, columns: swept.keyColumns, to: &keys))
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
